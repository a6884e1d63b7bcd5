"""CPython 3.14 -> the shared instruction model (see ``depyf.decompiler.instructions``).

On top of 3.13 (:mod:`depyf.decompiler.versions.v3_13`):

- ``NOT_TAKEN`` (branch monitoring) is dropped; ``POP_ITER`` ends loops (``END_FOR; POP_ITER``) and
  is a POP_TOP elsewhere (``break``/``return`` out of a loop).
- ``LOAD_FAST_BORROW`` (and ``LOAD_FAST_BORROW_LOAD_FAST_BORROW``) are LOAD_FAST; ``LOAD_SMALL_INT``
  is LOAD_CONST; ``LOAD_COMMON_CONSTANT`` is LOAD_ASSERTION_ERROR or a builtin's LOAD_GLOBAL.
- ``BINARY_OP`` with the subscript oparg is BINARY_SUBSCR.
- ``with``: ``COPY 1; LOAD_SPECIAL __exit__; SWAP 2; SWAP 3; LOAD_SPECIAL __enter__; CALL 0`` leaves
  ``exit, self, value`` where 3.11's BEFORE_WITH leaves ``exit, value``: it becomes BEFORE_WITH
  (BEFORE_ASYNC_WITH for ``__aexit__``) and the ``self`` slot is an *extra slot*: a small stack
  analysis (:meth:`Translator.stack_kinds`) knows where extra slots are and rewrites what reaches
  across them: ``SWAP``/``COPY``/``LIST_APPEND``/``SET_ADD``/``MAP_ADD`` depths and exception-table
  depths shrink, a ``SWAP 2`` that only moves an extra slot and a ``POP_TOP`` that pops one are
  dropped, and the exit call ``CALL 3`` on ``exit, self, None x3`` becomes 3.11's ``CALL 2``.
  3.15 adds the virtual iterators' extra slots to the same analysis.
- ``CALL_FUNCTION_EX`` always has a kwargs slot: a PUSH_NULL right before it means no kwargs.
- ``all()``/``any()``/``tuple()`` (3.15: ``list()``) of a generator expression are compiled twice: an
  inline loop guarded by ``is`` the builtin, and the ordinary call; only the call is kept.
- A module's ``__conditional_annotations__.add(k)`` after an annotated statement is ANNOTATION_MARK k
  (render turns the marks and the module's ``__annotate__`` back into ``name: annotation``).
- ``BUILD_TEMPLATE`` / ``BUILD_INTERPOLATION`` (PEP 750 template strings) pass through unchanged:
  argval of BUILD_INTERPOLATION is ``(conversion char or None, has_spec)``.
"""

from __future__ import annotations

import bisect
import dis
import types

from depyf.decompiler.instructions import ExceptionEntry, Features, Instr
from depyf.decompiler.versions import v3_12, v3_13
from depyf.decompiler.versions.v3_12 import CONVERSIONS

SPECIAL = frozenset({
    "LOAD_FAST_BORROW", "LOAD_FAST_BORROW_LOAD_FAST_BORROW", "LOAD_SMALL_INT", "LOAD_COMMON_CONSTANT",
    "POP_ITER", "LOAD_SPECIAL", "BUILD_TEMPLATE", "BUILD_INTERPOLATION",
})
REMOVED = frozenset(
    {
        "RETURN_CONST",
        "BUILD_CONST_KEY_MAP",
        "BINARY_SUBSCR",
        "BEFORE_WITH",
        "BEFORE_ASYNC_WITH",
        "LOAD_ASSERTION_ERROR",
    }
)
INVISIBLE = frozenset({"TO_BOOL", "NOT_TAKEN"})
HANDLED = frozenset((v3_13.HANDLED - REMOVED) | SPECIAL | INVISIBLE)
FEATURES = Features(copies_return_tails=True, copies_loop_tests=False, handlers_laid_out_last=True,
                    jumps_cannot_raise=True,
                    threads_value_tests=True,
                    conditional_jumps_go_forward=True)

_SUBSCRIPT = "[]"
EXTRA = "X"  # a slot the model does not have (3.14: a with's ``self``; 3.15 adds iterators' slots)
VALUE = "."
_NO_FALLTHROUGH = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
                             "JUMP_BACKWARD_NO_INTERRUPT"})
# opname -> values popped before the depth operand is counted
_DEPTH_OPERANDS = {"LIST_APPEND": 1, "SET_ADD": 1, "MAP_ADD": 2, "LIST_EXTEND": 1, "SET_UPDATE": 1,
                   "DICT_UPDATE": 1, "DICT_MERGE": 1}
_EXIT_NAMES = frozenset({"__exit__", "__aexit__"})
_WITH_PATTERN = ("COPY", "LOAD_SPECIAL", "SWAP", "SWAP", "LOAD_SPECIAL", "CALL")


class Translator(v3_13.Translator):
    HANDLED = HANDLED
    INVISIBLE = INVISIBLE
    END_FOR_TAIL = frozenset({"POP_ITER"})

    def __init__(self, code: types.CodeType, features: Features):
        super().__init__(code, features)
        self.raw_offsets = [ins.offset for ins in self.raw]
        self.kinds = self.stack_kinds()

    # -- the stack analysis ----------------------------------------------------------------
    def stack_kinds(self) -> dict[int, tuple[str, ...]]:
        """For each visible instruction, the kinds of the stack slots before it (bottom first).

        Kinds are VALUE, EXTRA, or markers later versions add; only net stack effects are used,
        which is enough because extra slots are only ever touched by the instructions that make
        and drop them, and by depth operands.
        """
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
                        work.append((target, self.effect(k, ins, stack, jump=True)))
                if name in _NO_FALLTHROUGH:
                    break
                stack = self.effect(k, ins, stack, jump=False)
                k += 1
        return states

    def _visible_at_or_after(self, offset: int) -> int | None:
        """Index of the first visible instruction at or after ``offset`` (jumps may land on a NOP)."""
        k = bisect.bisect_left(self.raw_offsets, offset)
        return k if k < len(self.raw) else None

    def effect(self, k: int, ins: dis.Instruction, stack: tuple[str, ...], *, jump: bool) -> tuple[str, ...]:
        """The stack kinds after ``raw[k]``."""
        name = ins.opname
        if name == "LOAD_SPECIAL" and _special_name(ins) in _EXIT_NAMES:
            return stack[:-1] + (VALUE, EXTRA)  # the bound __exit__ and its self (extra)
        if name == "SWAP":
            swapped = list(stack)
            swapped[-1], swapped[-ins.arg] = swapped[-ins.arg], swapped[-1]
            return tuple(swapped)
        if name == "COPY":
            return stack + (stack[-ins.arg],)
        arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
        effect = dis.stack_effect(ins.opcode, arg, jump=jump)
        if effect >= 0:
            return stack + (VALUE,) * effect
        return stack[:len(stack) + effect]

    def _extras(self, offset: int, top: int, popped: int = 0) -> int:
        """Extra slots among the ``top`` slots left after popping ``popped`` before ``offset``."""
        stack = self.kinds.get(offset, ())
        if popped:
            stack = stack[:-popped]
        return stack[-top:].count(EXTRA) if top else 0

    # -- translation -----------------------------------------------------------------------
    def extras_at(self, offset: int) -> tuple[str, ...]:
        return self.kinds.get(offset, ())

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
            self.drop(ins)  # an extra slot (a with's self, a 3.15 iterator's index)
        else:
            self.emit(out, ins, "POP_TOP")
        return i + 1

    def op_SWAP(self, i, ins, out):
        stack = self.kinds.get(ins.offset, ())
        n = ins.arg
        if EXTRA in (stack[-1:] + stack[-n:-n + 1]):
            if n == 2:
                self.drop(ins)  # moves an extra slot past one value: nothing in the model
                return i + 1
            raise self.error(ins, "SWAP of an extra stack slot across several values")
        self.emit(out, ins, "SWAP", n - stack[-n:].count(EXTRA))
        return i + 1

    def op_CALL(self, i, ins, out):
        """``exit, self, None, None, None; CALL 3`` (a with's exit) -> 3.11's ``CALL 2``."""
        stack = self.kinds.get(ins.offset, ())
        if len(stack) >= ins.arg + 2 and stack[-(ins.arg + 1)] == EXTRA:
            self.emit(out, ins, "CALL", ins.arg - 1)
            return i + 1
        return super().op_CALL(i, ins, out)

    def remap(self, out: list[Instr], table: list[ExceptionEntry]) -> list[ExceptionEntry]:
        fixed = []
        for e in table:
            first = self._visible_at_or_after(e.start)
            stack = self.kinds.get(self.raw[first].offset, ()) if first is not None else ()
            fixed.append(
                ExceptionEntry(e.start, e.end, e.target, e.depth - stack[: e.depth].count(EXTRA), e.lasti)
            )
        return super().remap(out, fixed)

    def op_LOAD_NAME(self, i, ins, out):
        """``__conditional_annotations__.add(k)`` after a module's annotated statement (``LOAD_NAME;
        LOAD_SMALL_INT k; SET_ADD 1; POP_TOP``) -> ANNOTATION_MARK k."""
        nxt = [self.at(i + d) for d in (1, 2, 3)]
        if ins.argval == "__conditional_annotations__" and self.code.co_name == "<module>" \
                and None not in nxt and nxt[0].opname in ("LOAD_SMALL_INT", "LOAD_CONST") \
                and isinstance(nxt[0].argval, int) and nxt[1].opname == "SET_ADD" and nxt[1].arg == 1 \
                and nxt[2].opname == "POP_TOP" \
                and not any(x.offset in self.jump_targets for x in nxt):
            self.emit(out, ins, "ANNOTATION_MARK", nxt[0].argval)
            self.drop(*nxt)
            return i + 4
        self.emit(out, ins, "LOAD_NAME", ins.argval)
        return i + 1

    def op_LOAD_FAST_BORROW(self, i, ins, out):
        self.load_local(out, ins, ins.argval, ins.arg)
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
        fallback = self._inlined_builtin_call(i, ins)
        if fallback is not None:
            for k in range(i, fallback):
                self.drop(self.raw[k])
            return fallback
        window = [self.at(i + k) for k in range(len(_WITH_PATTERN))]
        if (
            ins.arg == 1
            and all(w is not None and w.opname == name for w, name in zip(window, _WITH_PATTERN, strict=True))
            and window[2].arg == 2
            and window[3].arg == 3
            and window[5].arg == 0
        ):
            exit_name = _special_name(window[1])
            self.drop(*window)
            self.emit(out, ins, "BEFORE_ASYNC_WITH" if exit_name == "__aexit__" else "BEFORE_WITH")
            return i + len(_WITH_PATTERN)
        stack = self.kinds.get(ins.offset, ())
        if stack[-ins.arg:-ins.arg + 1] == (EXTRA,):
            raise self.error(ins, "COPY of an extra stack slot")
        self.emit(out, ins, "COPY", ins.arg - stack[-ins.arg:].count(EXTRA))
        return i + 1

    def _inlined_builtin_call(self, i: int, ins: dis.Instruction) -> int | None:
        """``all(genexpr)`` (also any, tuple; 3.15 list) is compiled as
        ``LOAD_GLOBAL all; COPY 1; LOAD_COMMON_CONSTANT all; IS_OP 0; POP_JUMP_IF_FALSE L; <inline loop>;
        JUMP end; L: PUSH_NULL; <genexpr call>; CALL 1; end:``. The inline loop is an optimisation of
        the call at ``L``, which is the source: returns L's index so that only the call is kept."""
        window = [self.at(i + k) for k in range(4)]
        if ins.arg != 1 or any(w is None for w in window):
            return None
        _, const, is_op, jump = window
        if const.opname != "LOAD_COMMON_CONSTANT" or is_op.opname != "IS_OP" or is_op.arg != 0 \
                or jump.opname != "POP_JUMP_IF_FALSE":
            return None
        if not isinstance(dis._common_constants[const.arg], types.BuiltinFunctionType | type):
            return None
        fallback = self.pos.get(jump.argval)
        if fallback is None or self.raw[fallback].opname != "PUSH_NULL":
            return None
        return fallback

    def op_BUILD_INTERPOLATION(self, i, ins, out):
        self.emit(out, ins, "BUILD_INTERPOLATION", (CONVERSIONS[(ins.arg >> 2) & 3], bool(ins.arg & 1)))
        return i + 1

    def op_BUILD_TEMPLATE(self, i, ins, out):
        self.emit(out, ins, "BUILD_TEMPLATE")
        return i + 1


def _special_name(ins: dis.Instruction) -> str:
    """The dunder a LOAD_SPECIAL loads (``dis`` gives the oparg as argval)."""
    return dis._special_method_names[ins.arg]


def normalize(code: types.CodeType,
              features: Features = FEATURES) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and exception table of ``code`` (compiled by CPython 3.14), laid
    out by the passes that ``features`` (the compiler's, ``FEATURES``) call for."""
    synthetic = v3_12.synthetic_instructions(code)
    if synthetic is not None:
        return synthetic
    return Translator(code, features).normalize()
