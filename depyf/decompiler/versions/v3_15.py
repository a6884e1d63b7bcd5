"""CPython 3.15 -> the shared instruction model (see ``depyf.decompiler.instructions``).

On top of 3.14 (:mod:`depyf.decompiler.versions.v3_14`), 3.15's "virtual iterators": ``GET_ITER``
(now with an oparg) leaves two stack slots, the iterator and an extra slot (an index or NULL),
and every loop keeps both until ``END_FOR; POP_ITER``. The model has one slot per iterator, so
this module runs a small stack analysis that knows where the extra slots are and:

- rewrites depth operands that reach across them (``SWAP``, ``COPY``, ``LIST_APPEND``, ``SET_ADD``,
  ``MAP_ADD``) and the exception table's depths;
- drops the ``POP_TOP`` that pops an extra slot (``break`` and ``return`` inside loops);
- ``GET_ITER 0`` is GET_ITER; other opargs (``yield from``) are GET_YIELD_FROM_ITER;
- generator expressions now receive the iterable, not an iterator: the caller gets a GET_ITER
  before its ``CALL 0`` and the genexpr's own ``LOAD_FAST .0; GET_ITER`` loses the GET_ITER;
- inlined comprehensions call GET_ITER (GET_AITER) after ``BUILD_X 0; SWAP 2``: the caller gets it;
- ``PUSH_NULL; FOR_ITER`` (iterating a generator the compiler made, as in the inlined ``list(genexpr)``)
  is an extra slot too, and dropped;
- SEND loops have a NULL under the sent value (``PUSH_NULL; LOAD_CONST None; SEND``): dropped.
"""

from __future__ import annotations

import bisect
import dis
import types

from depyf.decompiler.instructions import ExceptionEntry, Instr
from depyf.decompiler.versions import v3_12, v3_14

HANDLED = v3_14.HANDLED - {"GET_YIELD_FROM_ITER"}

EXTRA = "X"  # the iterator's extra slot
GENEXPR = "G"  # a generator-expression function waiting for its iterable
ASYNC_GENEXPR = "A"  # the same for an asynchronous generator expression
_CO_ASYNC_GENERATOR = 0x200
VALUE = "."
_NO_FALLTHROUGH = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
                             "JUMP_BACKWARD_NO_INTERRUPT"})
_DEPTH_OPERANDS = {"SWAP": 0, "COPY": 0, "LIST_APPEND": 1, "SET_ADD": 1, "MAP_ADD": 2}


class Translator(v3_14.Translator):
    HANDLED = HANDLED

    def __init__(self, code: types.CodeType):
        super().__init__(code)
        self.raw_offsets = [ins.offset for ins in self.raw]
        self.kinds = self._stack_kinds()

    # -- the stack analysis ----------------------------------------------------------------
    def _stack_kinds(self) -> dict[int, tuple[str, ...]]:
        """For each visible instruction, the kinds of the stack slots before it (bottom first)."""
        states: dict[int, tuple[str, ...]] = {}
        work = [(0, ())]
        while work:
            k, stack = work.pop()
            while 0 <= k < len(self.raw):
                ins = self.raw[k]
                if ins.offset in states:
                    break
                states[ins.offset] = stack
                for e in self.table:
                    if e.start <= ins.offset < e.end:
                        handler = self.pos.get(e.target)
                        if handler is not None and e.target not in states and len(stack) >= e.depth:
                            work.append((handler, stack[:e.depth] + (VALUE,) * (1 + e.lasti)))
                name = ins.opname
                if ins.argval is not None and name in self.JUMPS or name in ("FOR_ITER", "SEND"):
                    target = self._visible_at_or_after(ins.argval)
                    if target is not None:
                        work.append((target, self._effect(k, ins, stack, jump=True)))
                if name in _NO_FALLTHROUGH:
                    break
                stack = self._effect(k, ins, stack, jump=False)
                k += 1
        return states

    def _visible_at_or_after(self, offset: int) -> int | None:
        """Index of the first visible instruction at or after ``offset`` (jumps may land on a NOP)."""
        k = bisect.bisect_left(self.raw_offsets, offset)
        return k if k < len(self.raw) else None

    def _effect(self, k: int, ins: dis.Instruction, stack: tuple[str, ...], *, jump: bool) -> tuple[str, ...]:
        name = ins.opname
        if name == "GET_ITER":
            return stack[:-1] + (VALUE, EXTRA)
        if self._iterator_null(k):
            return stack + (EXTRA,)
        if name == "SWAP":
            swapped = list(stack)
            swapped[-1], swapped[-ins.arg] = swapped[-ins.arg], swapped[-1]
            return tuple(swapped)
        if name == "COPY":
            return stack + (stack[-ins.arg],)
        if name == "MAKE_FUNCTION" and k > 0 and self.raw[k - 1].opname == "LOAD_CONST" \
                and isinstance(self.raw[k - 1].argval, types.CodeType) \
                and self.raw[k - 1].argval.co_name == "<genexpr>":
            is_async = self.raw[k - 1].argval.co_flags & _CO_ASYNC_GENERATOR
            return stack[:-1] + (ASYNC_GENEXPR if is_async else GENEXPR,)
        arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
        effect = dis.stack_effect(ins.opcode, arg, jump=jump)
        if effect >= 0:
            return stack + (VALUE,) * effect
        rest = stack[:len(stack) + effect]
        if rest and rest[-1] in (GENEXPR, ASYNC_GENEXPR):  # consumed and replaced by the call's result
            rest = rest[:-1] + (VALUE,)
        return rest

    def _extras(self, offset: int, top: int, popped: int = 0) -> int:
        """Extra slots among the ``top`` slots left after popping ``popped`` before ``offset``."""
        stack = self.kinds.get(offset, ())
        if popped:
            stack = stack[:-popped]
        return stack[-top:].count(EXTRA) if top else 0

    # -- translation -----------------------------------------------------------------------
    def adjust(self, ins: dis.Instruction) -> dis.Instruction:
        popped = _DEPTH_OPERANDS.get(ins.opname)
        if popped is None:
            return ins
        extras = self._extras(ins.offset, ins.arg, popped)
        if not extras:
            return ins
        return ins._replace(arg=ins.arg - extras, argval=ins.arg - extras)

    def op_POP_TOP(self, i, ins, out):
        if self.kinds.get(ins.offset, (VALUE,))[-1:] == (EXTRA,):
            self.drop(ins)  # the iterator's extra slot, popped on the way out of a loop
        else:
            self.emit(out, ins, "POP_TOP")
        return i + 1

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

    def comprehension_loop_start(self, k: int) -> int:
        """``BUILD_X 0; SWAP 2; GET_ITER 0; FOR_ITER``: the caller does the GET_ITER."""
        swap, get_iter = self.at(k), self.at(k + 1)
        if swap is None or swap.opname != "SWAP" or swap.arg != 2 or get_iter is None \
                or get_iter.opname not in ("GET_ITER", "GET_AITER"):
            raise self.error(self.raw[k - 1], "inlined comprehension without SWAP 2; GET_ITER")
        self.drop(swap, get_iter)
        self._comprehension_getter = get_iter.opname
        return k + 2

    def emit_comprehension_call(self, out, ins, synthetic):
        self.emit(out, ins, self._comprehension_getter)
        super().emit_comprehension_call(out, ins, synthetic)

    def remap(self, out: list[Instr], table: list[ExceptionEntry]) -> list[ExceptionEntry]:
        fixed = []
        for e in table:
            first = next((r.offset for r in self.raw if r.offset >= e.start), None)
            extras = self.kinds.get(first, ())[:e.depth].count(EXTRA) if first is not None else 0
            fixed.append(ExceptionEntry(e.start, e.end, e.target, e.depth - extras, e.lasti))
        return super().remap(out, fixed)


def normalize(code: types.CodeType) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and exception table of ``code`` (compiled by CPython 3.15)."""
    synthetic = v3_12.synthetic_instructions(code)
    if synthetic is not None:
        return synthetic
    return Translator(code).normalize()
