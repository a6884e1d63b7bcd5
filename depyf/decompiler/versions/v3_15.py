"""CPython 3.15 -> the shared instruction model (see ``depyf.decompiler.instructions``).

On top of 3.14 (:mod:`depyf.decompiler.versions.v3_14`), 3.15's "virtual iterators": ``GET_ITER``
(now with an oparg) leaves two stack slots, the iterator and an extra slot (an index or NULL),
and every loop keeps both until ``END_FOR; POP_ITER``. The model has one slot per iterator: the
second one is an extra slot for 3.14's stack analysis (see :mod:`depyf.decompiler.versions.v3_14`),
which rewrites depth operands and exception depths across it and drops the ``POP_TOP`` popping it
(``break`` and ``return`` inside loops). Besides:

- ``GET_ITER 0`` is GET_ITER; other opargs (``yield from``) are GET_YIELD_FROM_ITER;
- generator expressions now receive the iterable, not an iterator: the caller gets a GET_ITER
  before its ``CALL 0`` and the genexpr's own ``LOAD_FAST .0; GET_ITER`` loses the GET_ITER;
- inlined comprehensions call GET_ITER (GET_AITER) after ``BUILD_X 0; SWAP 2``: the caller gets it;
- ``PUSH_NULL; FOR_ITER`` (iterating a generator the compiler made, as in the inlined ``list(genexpr)``)
  is an extra slot too, and dropped;
- SEND loops have a NULL under the sent value (``PUSH_NULL; LOAD_CONST None; SEND``): dropped;
- PEP 810 ``lazy import`` sets the low bit of IMPORT_NAME's oparg: kept as ``extra['lazy']``;
- PEP 798 unpacking in comprehensions (``[*x for x in xs]``) puts LIST_EXTEND/SET_UPDATE/DICT_UPDATE in
  the comprehension body (their depth operands are rewritten like LIST_APPEND's).
"""

from __future__ import annotations

import dis
import types

from depyf.decompiler.instructions import ExceptionEntry, Features, Instr
from depyf.decompiler.versions import v3_12, v3_14
from depyf.decompiler.versions.v3_14 import EXTRA, VALUE

HANDLED = v3_14.HANDLED - {"GET_YIELD_FROM_ITER"}
FEATURES = v3_14.FEATURES

GENEXPR = "G"  # a generator-expression function waiting for its iterable
ASYNC_GENEXPR = "A"  # the same for an asynchronous generator expression
_CO_ASYNC_GENERATOR = 0x200


class Translator(v3_14.Translator):
    HANDLED = HANDLED

    def effect(self, k: int, ins: dis.Instruction, stack: tuple[str, ...], *, jump: bool) -> tuple[str, ...]:
        name = ins.opname
        if name == "GET_ITER":
            return stack[:-1] + (VALUE, EXTRA)
        if self._iterator_null(k):
            return stack + (EXTRA,)
        if name == "MAKE_FUNCTION" and k > 0 and self.raw[k - 1].opname == "LOAD_CONST" \
                and isinstance(self.raw[k - 1].argval, types.CodeType) \
                and self.raw[k - 1].argval.co_name == "<genexpr>":
            is_async = self.raw[k - 1].argval.co_flags & _CO_ASYNC_GENERATOR
            return stack[:-1] + (ASYNC_GENEXPR if is_async else GENEXPR,)
        if name == "SET_FUNCTION_ATTRIBUTE":
            return stack[:-2] + stack[-1:]  # pops the attribute below the function, keeps the function
        after = super().effect(k, ins, stack, jump=jump)
        if len(after) < len(stack) and after and after[-1] in (GENEXPR, ASYNC_GENEXPR):
            after = after[:-1] + (VALUE,)  # the genexpr function was called: its result is a value
        return after

    def _iterator_null(self, k: int) -> bool:
        """``PUSH_NULL; FOR_ITER``: the extra slot of an iterator that needed no GET_ITER."""
        nxt = self.at(k + 1)
        return self.raw[k].opname == "PUSH_NULL" and nxt is not None and nxt.opname == "FOR_ITER"

    def op_PUSH_NULL(self, i, ins, out):
        if self._iterator_null(i):
            self.drop(ins)
        else:
            self.emit(out, ins, "PUSH_NULL")
        return i + 1

    def op_GET_ITER(self, i, ins, out):
        if ins.arg:
            self.emit(out, ins, "GET_YIELD_FROM_ITER")
        elif out and out[-1].opname == "LOAD_FAST" and out[-1].argval == ".0":
            self.drop(ins)  # a genexpr's argument is already an iterator in the model
        else:
            self.emit(out, ins, "GET_ITER")
        return i + 1

    def op_GET_AITER(self, i, ins, out):
        if out and out[-1].opname == "LOAD_FAST" and out[-1].argval == ".0":
            self.drop(ins)  # an async genexpr's argument is already an async iterator in the model
        else:
            self.emit(out, ins, "GET_AITER")
        return i + 1

    def op_CALL(self, i, ins, out):
        stack = self.kinds.get(ins.offset, ())
        if ins.arg == 0 and stack[-2:-1] == (GENEXPR,):
            self.emit(out, ins, "GET_ITER")  # genexprs take an iterator in the model
        elif ins.arg == 0 and stack[-2:-1] == (ASYNC_GENEXPR,):
            self.emit(out, ins, "GET_AITER")
        return super().op_CALL(i, ins, out)

    def op_SEND(self, i, ins, out):
        if len(out) >= 2 and out[-1].opname == "LOAD_CONST" and out[-2].opname == "PUSH_NULL":
            self.dropped.add(out.pop(-2).offset)
        return super().op_SEND(i, ins, out)

    def op_IMPORT_NAME(self, i, ins, out):
        """PEP 810: the low oparg bit marks ``lazy import``; the model keeps it as ``extra['lazy']``."""
        self.emit(out, ins, "IMPORT_NAME", ins.argval, lazy=bool(ins.arg & 1))
        return i + 1


def normalize(code: types.CodeType,
              features: Features = FEATURES) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and exception table of ``code`` (compiled by CPython 3.15), laid
    out by the passes that ``features`` (the compiler's, ``FEATURES``) call for."""
    synthetic = v3_12.synthetic_instructions(code)
    if synthetic is not None:
        return synthetic
    return Translator(code, features).normalize()
