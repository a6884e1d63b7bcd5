"""CPython 3.13 -> the shared instruction model (see ``depyf.decompiler.instructions``).

On top of 3.12 (:mod:`depyf.decompiler.versions.v3_12`):

- ``TO_BOOL`` before conditional jumps and ``not`` is dropped (the model's jumps test truthiness);
  a lone one (``not not x``) becomes two ``UNARY_NOT``.
- ``LOAD_FAST_LOAD_FAST``, ``STORE_FAST_LOAD_FAST``, ``STORE_FAST_STORE_FAST`` are split in two.
- ``LOAD_CLOSURE`` is gone: ``LOAD_FAST`` of a cell or free variable's slot pushes the cell
  itself (values are read with ``LOAD_DEREF``), so it becomes the model's ``LOAD_CLOSURE``
  (unless an inlined comprehension also keeps plain values in that slot). Dynamo
  passes such cells to resume functions; read as a value they would be the cell's contents.
- ``CALL_KW`` takes the keyword names from the stack, as the model's CALL_KW does.
- ``MAKE_FUNCTION`` has no flags; ``SET_FUNCTION_ATTRIBUTE`` attaches defaults, annotations, closure.
- f-strings: ``CONVERT_VALUE`` (argval 's'/'r'/'a'), ``FORMAT_SIMPLE`` / ``FORMAT_WITH_SPEC`` become
  ``FORMAT_VALUE`` with no conversion (the executor merges a preceding CONVERT_VALUE).
- ``LOAD_GLOBAL`` pushes its NULL after the global; ``COMPARE_OP`` keeps the operator in oparg >> 5.
- a loop exit is ``END_FOR; POP_TOP``.
- class bodies store ``__firstlineno__``, ``__static_attributes__`` and ``__classdictcell__``: those
  stores are dropped, since the compiler adds them again to recompiled source.
"""

from __future__ import annotations

import functools
import types

from depyf.decompiler.instructions import ExceptionEntry, Features, Instr
from depyf.decompiler.versions import v3_12
from depyf.decompiler.versions.v3_12 import CONVERSIONS

_CLASS_BODY_NAMES = frozenset({"__firstlineno__", "__static_attributes__", "__classdictcell__"})
SPECIAL = frozenset({
    "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST", "CALL_KW",
    "SET_FUNCTION_ATTRIBUTE", "CONVERT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "LOAD_FAST",
})
REMOVED = frozenset({"KW_NAMES", "FORMAT_VALUE"})
INVISIBLE = frozenset({"TO_BOOL"})
HANDLED = frozenset((v3_12.HANDLED - REMOVED) | SPECIAL | INVISIBLE)
FEATURES = Features(copies_return_tails=True, copies_loop_tests=True, handlers_laid_out_last=True,
                    jumps_cannot_raise=True,
                    conditional_jumps_go_forward=True)


class Translator(v3_12.Translator):
    HANDLED = HANDLED
    INVISIBLE = INVISIBLE
    END_FOR_TAIL = frozenset({"POP_TOP"})
    NULL_AFTER_GLOBAL = True
    COMPARE_SHIFT = 5

    def op_TO_BOOL(self, i, ins, out):
        # kept only where it converts a value (``not not x``); before a truth test it is dropped
        self.emit(out, ins, "UNARY_NOT")
        self.emit(out, ins, "UNARY_NOT")
        return i + 1

    def load_local(self, out, ins, name, arg):
        """``LOAD_FAST`` of slot ``arg``: the cell itself where the slot always holds a cell."""
        cell = (
            name in self.code.co_cellvars or name in self.code.co_freevars
        ) and name not in self.plain_slots
        self.emit(out, ins, "LOAD_CLOSURE" if cell else "LOAD_FAST", name, arg=arg)

    @functools.cached_property
    def plain_slots(self) -> frozenset[str]:
        """Names whose slot also holds plain values somewhere: an inlined comprehension may hide a
        cell variable and use its slot for a plain loop variable (``LOAD_FAST_AND_CLEAR``,
        ``STORE_FAST``). There a ``LOAD_FAST`` may be a value; the closure it builds needs no
        cell from the model, so those loads stay ``LOAD_FAST``."""
        names: set[str] = set()
        for ins in self.raw:
            if ins.opname in ("STORE_FAST", "LOAD_FAST_AND_CLEAR", "DELETE_FAST"):
                names.add(ins.argval)
            elif ins.opname == "STORE_FAST_STORE_FAST":
                names.update(ins.argval)
            elif ins.opname == "STORE_FAST_LOAD_FAST":
                names.add(ins.argval[0])
        return frozenset(names)

    def op_LOAD_FAST(self, i, ins, out):
        self.load_local(out, ins, ins.argval, ins.arg)
        return i + 1

    def op_LOAD_FAST_LOAD_FAST(self, i, ins, out):
        first, second = ins.argval
        self.load_local(out, ins, first, ins.arg >> 4)
        self.load_local(out, ins, second, ins.arg & 15)
        return i + 1

    def op_STORE_FAST_LOAD_FAST(self, i, ins, out):
        stored, loaded = ins.argval
        self.emit(out, ins, "STORE_FAST", stored, arg=ins.arg >> 4)
        self.load_local(out, ins, loaded, ins.arg & 15)
        return i + 1

    def op_STORE_FAST_STORE_FAST(self, i, ins, out):
        first, second = ins.argval
        self.emit(out, ins, "STORE_FAST", first, arg=ins.arg >> 4)
        self.emit(out, ins, "STORE_FAST", second, arg=ins.arg & 15)
        return i + 1

    def op_CALL_KW(self, i, ins, out):
        self.emit(out, ins, "CALL_KW", ins.arg)
        return i + 1

    def op_SET_FUNCTION_ATTRIBUTE(self, i, ins, out):
        self.emit(out, ins, "SET_FUNCTION_ATTRIBUTE", ins.arg)
        return i + 1

    def op_CONVERT_VALUE(self, i, ins, out):
        self.emit(out, ins, "CONVERT_VALUE", CONVERSIONS[ins.arg])
        return i + 1

    def op_FORMAT_SIMPLE(self, i, ins, out):
        if out and out[-1].opname == "CONVERT_VALUE":
            # CONVERT_VALUE c; FORMAT_SIMPLE  ==  3.11's FORMAT_VALUE with conversion c
            convert = out[-1]
            convert.opname, convert.argval = "FORMAT_VALUE", (convert.argval, False)
            self.drop(ins)
            return i + 1
        self.emit(out, ins, "FORMAT_VALUE", (None, False))
        return i + 1

    def op_STORE_NAME(self, i, ins, out):
        """Class bodies store ``__firstlineno__`` and ``__static_attributes__`` themselves: dropped."""
        if ins.argval in _CLASS_BODY_NAMES and self.code.co_name != "<module>" and out \
                and (out[-1].opname == "LOAD_CONST" or out[-1].argval == "__classdict__"):
            self.dropped.add(out.pop().offset)
            self.drop(ins)
            return i + 1
        self.emit(out, ins, "STORE_NAME", ins.argval)
        return i + 1

    def op_FORMAT_WITH_SPEC(self, i, ins, out):
        self.emit(out, ins, "FORMAT_VALUE", (None, True))
        return i + 1

    def micro_ops(self, ins):
        if ins.opname == "STORE_FAST_STORE_FAST":
            return [("STORE_FAST", ins.argval[0]), ("STORE_FAST", ins.argval[1])]
        if ins.opname == "STORE_FAST_LOAD_FAST":
            return [("STORE_FAST", ins.argval[0]), ("LOAD_FAST", ins.argval[1])]
        return super().micro_ops(ins)


def normalize(code: types.CodeType,
              features: Features = FEATURES) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and exception table of ``code`` (compiled by CPython 3.13), laid
    out by the passes that ``features`` (the compiler's, ``FEATURES``) call for."""
    synthetic = v3_12.synthetic_instructions(code)
    if synthetic is not None:
        return synthetic
    return Translator(code, features).normalize()
