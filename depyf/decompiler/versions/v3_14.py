"""CPython 3.14 -> the shared instruction model (see ``depyf.decompiler.instructions``).

On top of 3.13 (:mod:`depyf.decompiler.versions.v3_13`):

- ``NOT_TAKEN`` (branch monitoring) is dropped; ``POP_ITER`` ends loops (``END_FOR; POP_ITER``) and
  is a POP_TOP elsewhere (``break``/``return`` out of a loop).
- ``LOAD_FAST_BORROW`` (and ``LOAD_FAST_BORROW_LOAD_FAST_BORROW``) are LOAD_FAST; ``LOAD_SMALL_INT``
  is LOAD_CONST; ``LOAD_COMMON_CONSTANT`` is LOAD_ASSERTION_ERROR or a builtin's LOAD_GLOBAL.
- ``BINARY_OP`` with the subscript oparg is BINARY_SUBSCR.
- ``with``: ``COPY 1; LOAD_SPECIAL __exit__; SWAP 2; SWAP 3; LOAD_SPECIAL __enter__; CALL 0`` leaves
  ``exit, self, value``; it becomes ``BEFORE_WITH; PUSH_NULL; SWAP 2`` (``exit, NULL, value``) so
  that every later stack position and handler depth stays as compiled. The exit call
  ``LOAD_CONST None x3; CALL 3`` then finds (WithExit, NULL) as its callable slots.
  ``__aenter__``/``__aexit__`` give BEFORE_ASYNC_WITH.
- ``CALL_FUNCTION_EX`` always has a kwargs slot: a PUSH_NULL right before it means no kwargs.
- ``BUILD_TEMPLATE`` / ``BUILD_INTERPOLATION`` (PEP 750 template strings) pass through unchanged:
  argval of BUILD_INTERPOLATION is ``(conversion char or None, has_spec)``.
"""

from __future__ import annotations

import dis
import types

from depyf.decompiler.instructions import ExceptionEntry, Instr
from depyf.decompiler.versions import v3_12, v3_13
from depyf.decompiler.versions.v3_12 import CONVERSIONS

SPECIAL = frozenset({
    "LOAD_FAST_BORROW", "LOAD_FAST_BORROW_LOAD_FAST_BORROW", "LOAD_SMALL_INT", "LOAD_COMMON_CONSTANT",
    "POP_ITER", "LOAD_SPECIAL", "BUILD_TEMPLATE", "BUILD_INTERPOLATION",
})
REMOVED = frozenset({"RETURN_CONST", "BUILD_CONST_KEY_MAP", "BINARY_SUBSCR", "BEFORE_WITH", "BEFORE_ASYNC_WITH",
                     "LOAD_ASSERTION_ERROR"})
INVISIBLE = frozenset({"TO_BOOL", "NOT_TAKEN"})
HANDLED = frozenset((v3_13.HANDLED - REMOVED) | SPECIAL | INVISIBLE)

_SUBSCRIPT = "[]"
_WITH_PATTERN = ("COPY", "LOAD_SPECIAL", "SWAP", "SWAP", "LOAD_SPECIAL", "CALL")


class Translator(v3_13.Translator):
    HANDLED = HANDLED
    INVISIBLE = INVISIBLE
    END_FOR_TAIL = frozenset({"POP_ITER"})

    def op_LOAD_FAST_BORROW(self, i, ins, out):
        self.emit(out, ins, "LOAD_FAST", ins.argval)
        return i + 1

    def op_LOAD_FAST_BORROW_LOAD_FAST_BORROW(self, i, ins, out):
        return self.op_LOAD_FAST_LOAD_FAST(i, ins, out)

    def op_LOAD_SMALL_INT(self, i, ins, out):
        self.emit(out, ins, "LOAD_CONST", ins.arg)
        return i + 1

    def op_LOAD_COMMON_CONSTANT(self, i, ins, out):
        value = dis._common_constants[ins.arg]
        if value is AssertionError:
            self.emit(out, ins, "LOAD_ASSERTION_ERROR")
        elif isinstance(value, (type, types.BuiltinFunctionType)):
            self.emit(out, ins, "LOAD_GLOBAL", value.__name__)  # builtins: tuple, all, any, ...
        else:
            self.emit(out, ins, "LOAD_CONST", value)  # 3.15 loads None this way
        return i + 1

    def op_POP_ITER(self, i, ins, out):
        self.emit(out, ins, "POP_TOP")
        return i + 1

    def op_BINARY_OP(self, i, ins, out):
        symbol = dis._nb_ops[ins.arg][1]
        if symbol == _SUBSCRIPT:
            self.emit(out, ins, "BINARY_SUBSCR")
        else:
            self.emit(out, ins, "BINARY_OP", symbol)
        return i + 1

    def op_CALL_FUNCTION_EX(self, i, ins, out):
        if out and out[-1].opname == "PUSH_NULL":
            self.dropped.add(out.pop().offset)  # the empty kwargs slot
            self.emit(out, ins, "CALL_FUNCTION_EX", False)
        else:
            self.emit(out, ins, "CALL_FUNCTION_EX", True)
        return i + 1

    def op_LOAD_SPECIAL(self, i, ins, out):
        raise self.error(ins, "LOAD_SPECIAL outside a with statement's entry")

    def op_COPY(self, i, ins, out):
        window = [self.at(i + k) for k in range(len(_WITH_PATTERN))]
        if ins.arg == 1 and all(w is not None and w.opname == name for w, name in zip(window, _WITH_PATTERN, strict=True)) \
                and window[2].arg == 2 and window[3].arg == 3 and window[5].arg == 0:
            exit_name = window[1].argval
            self.drop(*window)
            self.emit(out, ins, "BEFORE_ASYNC_WITH" if exit_name == "__aexit__" else "BEFORE_WITH")
            self.emit(out, ins, "PUSH_NULL")
            self.emit(out, ins, "SWAP", 2, arg=2)
            return i + len(_WITH_PATTERN)
        self.emit(out, ins, "COPY", ins.argval)
        return i + 1

    def op_BUILD_INTERPOLATION(self, i, ins, out):
        self.emit(out, ins, "BUILD_INTERPOLATION", (CONVERSIONS[(ins.arg >> 2) & 3], bool(ins.arg & 1)))
        return i + 1

    def op_BUILD_TEMPLATE(self, i, ins, out):
        self.emit(out, ins, "BUILD_TEMPLATE")
        return i + 1


def normalize(code: types.CodeType) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and exception table of ``code`` (compiled by CPython 3.14)."""
    synthetic = v3_12.synthetic_instructions(code)
    if synthetic is not None:
        return synthetic
    return Translator(code).normalize()
