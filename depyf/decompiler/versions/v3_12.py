"""CPython 3.12 -> the shared instruction model (see ``depyf.decompiler.instructions``).

3.12 differs from 3.11 in ways this module undoes:

- ``LOAD_ATTR`` with the low oparg bit is a method load (3.11's ``LOAD_METHOD``): LOAD_ATTR + PUSH_NULL.
- ``LOAD_SUPER_ATTR`` replaces ``super()`` + ``LOAD_ATTR``: the implicit ``__class__``/``self`` loads
  of zero-argument ``super()`` are removed and an explicit call is emitted.
- ``RETURN_CONST`` -> LOAD_CONST + RETURN_VALUE; ``BINARY_SLICE``/``STORE_SLICE`` -> BUILD_SLICE 2 +
  BINARY_SUBSCR/STORE_SUBSCR.
- ``FOR_ITER`` jumps to ``END_FOR`` (which pops the iterator): END_FOR is dropped and the loop
  exit is the instruction after it.
- ``and``/``or`` in value position is ``COPY 1; POP_JUMP_IF_X; POP_TOP``: folded into 3.11's
  ``JUMP_IF_X_OR_POP``.
- conditional jumps only go forward: ``POP_JUMP_IF_X L; JUMP_BACKWARD T; L:`` becomes 3.11's
  backward ``POP_JUMP_IF_NOT_X T``.
- await / yield from loops end in ``END_SEND`` and have ``CLEANUP_THROW`` handlers: the loop folds
  into AWAIT / YIELD_FROM / ASYNC_FOR_ITER as for 3.11, and the handlers and their table entries go.
- Generators and coroutines are wrapped in a handler turning StopIteration into RuntimeError
  (``CALL_INTRINSIC_1 INTRINSIC_STOPITERATION_ERROR; RERAISE 1``): dropped with its entries.
- class bodies that need their namespace in a cell (type parameters; 3.14 annotations) start with
  ``LOAD_LOCALS; STORE_DEREF __classdict__``: dropped, the compiler makes it again.
- PEP 709 inlined list/set/dict comprehensions (``LOAD_FAST_AND_CLEAR`` ... ``END_FOR`` and the
  restoring stores) are turned back into 3.11's shape: a synthetic ``<listcomp>``/``<setcomp>``/
  ``<dictcomp>`` code object, ``LOAD_CONST code; MAKE_FUNCTION 0; SWAP 2; CALL 0``. The synthetic
  code's own instructions are ``BUILD_X 0; LOAD_FAST .0; FOR_ITER ...; RETURN_VALUE``, exactly what
  3.11 compiles a comprehension into; ``normalize`` returns them when asked for that code object.

Later versions (3.13, 3.14, 3.15) subclass :class:`Translator` and override the hooks.
"""

from __future__ import annotations

import dis
import types
from collections import OrderedDict

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.instructions import (
    ExceptionEntry,
    Instr,
    async_for_entries_to_outer,
    chain_operand_copies,
    hoist_break_tails,
    raw_exception_entries,
    raw_instructions,
)

# Dropped everywhere: no effect on the values the decompiler reconstructs.
DROP = frozenset({"CACHE", "NOP", "RESUME", "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS"})
JUMPS = {
    "JUMP_FORWARD": "JUMP", "JUMP_BACKWARD": "JUMP", "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
    "POP_JUMP_IF_FALSE": "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_NONE": "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
}
# Same name and stack effect as in the shared model; argval as ``dis`` gives it.
SAME = frozenset({
    "POP_TOP", "PUSH_NULL", "COPY", "SWAP", "RETURN_VALUE", "LOAD_CONST", "LOAD_FAST", "STORE_FAST",
    "DELETE_FAST", "LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE",
    "LOAD_NAME", "STORE_NAME", "DELETE_NAME", "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_ATTR",
    "DELETE_ATTR", "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "UNARY_NEGATIVE", "UNARY_NOT",
    "UNARY_INVERT", "IS_OP", "CONTAINS_OP", "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET",
    "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_STRING", "BUILD_SLICE", "LIST_APPEND", "SET_ADD", "MAP_ADD",
    "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "UNPACK_SEQUENCE", "UNPACK_EX", "GET_ITER",
    "GET_LEN", "MATCH_CLASS", "MATCH_MAPPING", "MATCH_SEQUENCE", "MATCH_KEYS", "LOAD_BUILD_CLASS",
    "SETUP_ANNOTATIONS", "IMPORT_NAME", "IMPORT_FROM", "LOAD_ASSERTION_ERROR", "RAISE_VARARGS",
    "RERAISE", "PUSH_EXC_INFO", "POP_EXCEPT", "CHECK_EXC_MATCH", "CHECK_EG_MATCH", "WITH_EXCEPT_START",
    "BEFORE_WITH", "BEFORE_ASYNC_WITH", "GET_AITER", "YIELD_VALUE", "GET_YIELD_FROM_ITER", "GET_AWAITABLE",
    "GET_ANEXT", "END_ASYNC_FOR", "LOAD_LOCALS", "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS",
})
# Translated by a method of Translator (``op_<NAME>``).
SPECIAL = frozenset({
    "LOAD_GLOBAL", "LOAD_ATTR", "LOAD_SUPER_ATTR", "KW_NAMES", "CALL", "CALL_FUNCTION_EX", "BINARY_OP",
    "FORMAT_VALUE", "RETURN_CONST", "BINARY_SLICE", "STORE_SLICE", "FOR_ITER", "END_FOR", "SEND",
    "END_SEND", "CLEANUP_THROW", "RETURN_GENERATOR", "MAKE_FUNCTION", "COMPARE_OP", "CALL_INTRINSIC_1",
    "CALL_INTRINSIC_2", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_CHECK", "YIELD_VALUE", "STORE_DEREF",
})
HANDLED = frozenset(DROP | set(JUMPS) | SAME | SPECIAL)

CONVERSIONS = {0: None, 1: "s", 2: "r", 3: "a"}
_INVERTED = {"POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE", "POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE",
             "POP_JUMP_IF_NONE": "POP_JUMP_IF_NOT_NONE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NONE"}
_OR_POP = {"POP_JUMP_IF_FALSE": "JUMP_IF_FALSE_OR_POP", "POP_JUMP_IF_TRUE": "JUMP_IF_TRUE_OR_POP"}
_COMPREHENSION_NAMES = {"BUILD_LIST": "<listcomp>", "BUILD_SET": "<setcomp>", "BUILD_MAP": "<dictcomp>"}
_CO_FLAGS_KEPT = 0x0001 | 0x0002 | 0x0010  # OPTIMIZED, NEWLOCALS, NESTED

_TEMPLATE = compile("lambda: None", "<comprehension>", "eval").co_consts[0]
# Synthetic comprehension code objects -> their normalised instructions (bounded, most recent kept).
_SYNTHETIC: OrderedDict[int, tuple[types.CodeType, list[Instr], list[ExceptionEntry]]] = OrderedDict()
_SYNTHETIC_LIMIT = 4096


def synthetic_instructions(code: types.CodeType) -> tuple[list[Instr], list[ExceptionEntry]] | None:
    """The instructions of a synthetic comprehension code object made by a translator, if it is one."""
    entry = _SYNTHETIC.get(id(code))
    if entry is None or entry[0] is not code:
        return None
    return [_copy(i) for i in entry[1]], list(entry[2])


def _remember(code: types.CodeType, instrs: list[Instr], table: list[ExceptionEntry]) -> None:
    _SYNTHETIC[id(code)] = (code, instrs, table)
    while len(_SYNTHETIC) > _SYNTHETIC_LIMIT:
        _SYNTHETIC.popitem(last=False)


def _tests_truth_next(raw: list, k: int) -> bool:
    """Does the instruction after ``raw[k]`` (a TO_BOOL) only test its truth (a jump or ``not``)?

    Only then is TO_BOOL invisible; elsewhere it converts a value (3.13+ compiles ``not not x``
    to a lone TO_BOOL). An EXTENDED_ARG between them (a long jump) belongs to the jump.
    """
    k += 1
    while k < len(raw) and raw[k].opname == "EXTENDED_ARG":
        k += 1
    nxt = raw[k].opname if k < len(raw) else None
    return nxt in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "UNARY_NOT")


def _copy(ins: Instr) -> Instr:
    return Instr(
        ins.opname, ins.offset, ins.arg, ins.argval, ins.target, ins.lineno, ins.slots, dict(ins.extra)
    )


class Translator:
    """Translates one code object's raw instructions into the shared model.

    Subclasses for later versions override the class attributes and ``op_<NAME>`` methods.
    """

    HANDLED = HANDLED
    DROP = DROP
    JUMPS = JUMPS
    SAME = SAME
    # What follows END_FOR at a loop exit and also belongs to it (3.13: POP_TOP, 3.14: POP_ITER).
    END_FOR_TAIL: frozenset[str] = frozenset()
    # Opnames dropped before pattern matching (3.13+: TO_BOOL, 3.14+: NOT_TAKEN).
    INVISIBLE: frozenset[str] = frozenset()
    # True where LOAD_GLOBAL pushes its NULL after the global (3.13+), False where before (3.12).
    NULL_AFTER_GLOBAL = False

    def __init__(self, code: types.CodeType):
        self.code = code
        self.qualname = getattr(code, "co_qualname", code.co_name)
        all_raw = list(raw_instructions(code))
        self.all_offsets = [r.offset for r in all_raw]
        self.end_offset = all_raw[-1].offset + 2 if all_raw else 0
        self.dropped: set[int] = set()
        self.raw = []
        for k, ins in enumerate(all_raw):
            if ins.opname not in self.HANDLED and ins.opname not in self.INVISIBLE:
                raise DecompilationError(f"unsupported opcode {ins.opname}", qualname=self.qualname,
                                         offset=ins.offset, opname=ins.opname)
            if ins.opname == "TO_BOOL" and not _tests_truth_next(all_raw, k):
                self.raw.append(ins)        # a value converted to bool: ``not not x``
            elif ins.opname in self.DROP or ins.opname in self.INVISIBLE:
                self.dropped.add(ins.offset)
            else:
                self.raw.append(ins)
        self.pos = {ins.offset: k for k, ins in enumerate(self.raw)}
        self.jump_targets = {
            ins.argval for ins in all_raw if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs
        }
        self.table = [ExceptionEntry(e.start, e.end, e.target, e.depth, e.lasti)
                      for e in raw_exception_entries(code)]
        self.dead_handlers: set[int] = set()  # handler targets whose entries are removed
        self.async_for_handlers: set[int] = set()  # END_ASYNC_FOR targets (folded into ASYNC_FOR_ITER)
        self.kw_names: tuple | None = None
        self._find_dead_handlers()

    # -- driver --------------------------------------------------------------------------
    def normalize(self) -> tuple[list[Instr], list[ExceptionEntry]]:
        out = self.translate(0, len(self.raw))
        share_chain_value_copies(out)
        share_duplicated_returns(out)
        hoist_break_tails(out, lambda first, last, back: all(   # the loop's handler protects the copy
            self.handler_of(ins.offset) == self.handler_of(back.offset) for ins in out[first:last + 1]),
            lambda new, old, back: None)
        return out, self.remap(out, self.table)

    def handler_of(self, offset: int) -> int | None:
        """The handler that protects the raw instruction at ``offset`` (None: none)."""
        return next((e.target for e in self.table if e.start <= offset < e.end), None)

    def translate(self, start: int, end: int) -> list[Instr]:
        """Translate ``raw[start:end]`` into a new instruction list."""
        out: list[Instr] = []
        i = start
        while i < end:
            ins = self.raw[i]
            if ins.offset in self.dropped:
                i += 1
                continue
            ins = self.adjust(ins)
            name = ins.opname
            handler = getattr(self, "op_" + name, None)
            if handler is not None:
                i = handler(i, ins, out)
                continue
            if name in self.JUMPS:
                i = self.jump(i, ins, out)
                continue
            if name in self.SAME:
                self.emit(out, ins, name, ins.argval)
                i += 1
                continue
            raise DecompilationError(f"no translation for {name}", qualname=self.qualname, offset=ins.offset,
                                     opname=name)
        return out

    def adjust(self, ins: dis.Instruction) -> dis.Instruction:
        """Hook: rewrite a raw instruction before translation (3.15 fixes stack depths here)."""
        return ins

    def emit(self, out: list[Instr], ins: dis.Instruction, opname: str, argval: object = None,
             target: int | None = None, *, arg: int | None = -1, slots: int = 2, **extra: object) -> Instr:
        line = ins.positions.lineno if ins.positions else None
        new = Instr(
            opname, ins.offset, ins.arg if arg == -1 else arg, argval, target, line, slots, dict(extra)
        )
        out.append(new)
        return new

    def drop(self, *instructions: dis.Instruction) -> None:
        self.dropped.update(i.offset for i in instructions)

    def error(self, ins: dis.Instruction, message: str) -> DecompilationError:
        return DecompilationError(message, qualname=self.qualname, offset=ins.offset, opname=ins.opname)

    def at(self, k: int) -> dis.Instruction | None:
        return self.raw[k] if 0 <= k < len(self.raw) else None

    def index(self, offset: int) -> int:
        return self.pos[offset]

    # -- handlers that disappear -----------------------------------------------------------
    def _find_dead_handlers(self) -> None:
        """CLEANUP_THROW handlers, the StopIteration wrapper and comprehension cleanups."""
        for target in {e.target for e in self.table}:
            k = self.pos.get(target)
            if k is None:
                continue
            ins = self.raw[k]
            if ins.opname == "CLEANUP_THROW":
                self.dead_handlers.add(target)
                self.drop(ins)
                nxt = self.at(k + 1)
                if nxt is not None and nxt.opname in self.JUMPS and self.JUMPS[nxt.opname] == "JUMP":
                    self.drop(nxt)
            elif (
                ins.opname == "CALL_INTRINSIC_1"
                and self.intrinsic_name(ins) == "INTRINSIC_STOPITERATION_ERROR"
            ):
                self.dead_handlers.add(target)
                self.drop(ins)
                nxt = self.at(k + 1)
                if nxt is not None and nxt.opname == "RERAISE":
                    self.drop(nxt)

    def _drop_comprehension_cleanup(self, target: int) -> None:
        """``SWAP 2; POP_TOP; (SWAP n; STORE_FAST x)...; RERAISE 0`` restoring shadowed names."""
        k = self.pos.get(target)
        if k is None:
            return
        self.dead_handlers.add(target)
        while k < len(self.raw):
            ins = self.raw[k]
            self.drop(ins)
            if ins.opname == "RERAISE":
                return
            if ins.opname not in ("SWAP", "POP_TOP", "STORE_FAST"):
                raise self.error(ins, "unexpected instruction in a comprehension's cleanup handler")
            k += 1

    # -- jumps and loops -------------------------------------------------------------------
    def jump(self, i: int, ins: dis.Instruction, out: list[Instr]) -> int:
        name = self.JUMPS[ins.opname]
        if name in _OR_POP and out and out[-1].opname == "COPY" and out[-1].argval == 1:
            nxt = self.at(i + 1)
            landing = self.at(self.pos.get(ins.argval, -1))
            after_landing = self.at(self.pos.get(ins.argval, -2) + 1)
            unthreaded = self._unthreaded(name, ins.argval)
            if nxt is not None and nxt.opname == "POP_TOP" and nxt.offset not in self.dropped \
                    and landing is not None and landing.opname == "POP_TOP" and after_landing is not None \
                    and unthreaded == ins.argval:
                # COPY 1; POP_JUMP_IF_X L; POP_TOP with L: POP_TOP (3.14 `a and b or c`: a false `a`
                # goes straight to `c`): the value is dropped on both paths, so this is
                # POP_JUMP_IF_X to the instruction after L's POP_TOP.
                out.pop()
                self.drop(nxt)
                self.emit(out, ins, name, target=after_landing.offset)
                return i + 2
            if nxt is not None and nxt.opname == "POP_TOP" and nxt.offset not in self.dropped:
                # COPY 1; POP_JUMP_IF_X L; POP_TOP  ==  JUMP_IF_X_OR_POP L
                copy = out.pop()
                out.append(Instr(_OR_POP[name], copy.offset, None, None, unthreaded, copy.lineno))
                self.drop(ins, nxt)
                return i + 2
        folded = self._inverted_backward_jump(i, ins, name)
        if folded is not None:
            self.emit(out, ins, folded[0], target=folded[1])
            return i + 2
        if ins.opname == "JUMP_BACKWARD_NO_INTERRUPT":
            # not a loop's back edge: a jump to code the compiler placed earlier (the code after
            # a try statement, jumped to from its handlers)
            self.emit(out, ins, name, target=ins.argval, no_interrupt=True)
        else:
            self.emit(out, ins, name, target=ins.argval)
        return i + 1

    def _unthreaded(self, name: str, target: int) -> int:
        """Where a value-keeping ``COPY 1; POP_JUMP_IF_X`` jump goes before the compiler threaded it.

        In ``(a or b) and c`` a true ``a`` is the ``or``'s value and is tested by the ``and``'s own
        ``COPY 1; POP_JUMP_IF_FALSE``, which cannot jump; 3.14 jumps past that test, to its
        ``POP_TOP``. The model's jump goes to the test, as the source reads: recompiling the source
        gives the threaded jump back.
        """
        k = self.pos.get(target)
        if k is None or k < 2:
            return target
        test, copy = self.at(k - 1), self.at(k - 2)
        opposite = {"POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE", "POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE"}.get(
            name
        )
        if self.raw[k].opname == "POP_TOP" \
                and test.opname == opposite and test.offset not in self.dropped \
                and copy.opname == "COPY" and copy.argval == 1 and copy.offset not in self.dropped:
            return copy.offset
        return target

    def _inverted_backward_jump(self, i: int, ins: dis.Instruction, name: str) -> tuple[str, int] | None:
        """``POP_JUMP_IF_X L; JUMP_BACKWARD T; L:`` -> ``POP_JUMP_IF_NOT_X T``.

        3.12+ conditional jumps only go forward, so a jump back to a loop's head under a condition
        is compiled as the inverted condition over a JUMP_BACKWARD; 3.11 jumped back directly. The
        JUMP_BACKWARD is folded only when nothing else jumps to it.
        """
        inverse = _INVERTED.get(name)
        nxt, after = self.at(i + 1), self.at(i + 2)
        if inverse is None or nxt is None or after is None or nxt.offset in self.dropped:
            return None
        # L is the next kept instruction (a dropped NOP may sit between: 3.13 keeps one as a target)
        if self.JUMPS.get(nxt.opname) != "JUMP" or nxt.argval >= nxt.offset \
                or not nxt.offset < ins.argval <= after.offset:
            return None
        if nxt.offset in self.jump_targets:
            return None
        self.drop(nxt)
        return inverse, nxt.argval

    def op_FOR_ITER(self, i, ins, out):
        self.emit(out, ins, "FOR_ITER", target=self.loop_exit(ins))
        return i + 1

    def loop_exit(self, for_iter: dis.Instruction) -> int:
        """Offset after the END_FOR (and its tail) that ``for_iter`` jumps to; drops them."""
        k = self.pos.get(for_iter.argval)
        if k is None:
            return for_iter.argval
        end_for = self.raw[k]
        if end_for.opname != "END_FOR":
            return for_iter.argval
        self.drop(end_for)
        tail = self.at(k + 1)
        if tail is not None and tail.opname in self.END_FOR_TAIL:
            self.drop(tail)
            k += 1
        after = self.at(k + 1)
        return after.offset if after is not None else self.end_offset

    def op_END_FOR(self, i, ins, out):
        raise self.error(ins, "END_FOR that no FOR_ITER exits through")

    # -- loads, calls ----------------------------------------------------------------------
    def op_LOAD_GLOBAL(self, i, ins, out):
        push_null = bool(ins.arg & 1)
        if push_null and not self.NULL_AFTER_GLOBAL:
            self.emit(out, ins, "PUSH_NULL")
        self.emit(out, ins, "LOAD_GLOBAL", ins.argval)
        if push_null and self.NULL_AFTER_GLOBAL:
            self.emit(out, ins, "PUSH_NULL")
        return i + 1

    def op_LOAD_ATTR(self, i, ins, out):
        self.emit(out, ins, "LOAD_ATTR", ins.argval)
        if ins.arg & 1:
            self.emit(out, ins, "PUSH_NULL")
        return i + 1

    def op_LOAD_SUPER_ATTR(self, i, ins, out):
        """``super`` ``__class__`` ``self`` LOAD_SUPER_ATTR -> ``super()`` (or ``super(a, b)``)
        + LOAD_ATTR."""
        two_args = bool(ins.arg & 2)
        if not two_args:
            # Zero-argument super(): the compiler loaded __class__ and the first argument itself.
            if len(out) < 3 or out[-1].opname not in ("LOAD_FAST", "LOAD_DEREF") \
                    or out[-2].opname not in ("LOAD_DEREF", "LOAD_FAST"):
                raise self.error(ins, "zero-argument super() without its implicit loads")
            self.dropped.add(out.pop().offset)
            self.dropped.add(out.pop().offset)
        self.emit(out, ins, "CALL", 2 if two_args else 0, slots=1)
        self.emit(out, ins, "LOAD_ATTR", ins.argval)
        if ins.arg & 1:
            self.emit(out, ins, "PUSH_NULL")
        return i + 1

    def op_KW_NAMES(self, i, ins, out):
        self.kw_names = self.code.co_consts[ins.arg]
        self.drop(ins)
        return i + 1

    def op_CALL(self, i, ins, out):
        if self.kw_names is not None:
            self.emit(out, ins, "LOAD_CONST", self.kw_names)
            self.emit(out, ins, "CALL_KW", ins.arg)
            self.kw_names = None
        else:
            self.emit(out, ins, "CALL", ins.arg)
        return i + 1

    def op_CALL_FUNCTION_EX(self, i, ins, out):
        self.emit(out, ins, "CALL_FUNCTION_EX", bool(ins.arg & 1))
        return i + 1

    def op_MAKE_FUNCTION(self, i, ins, out):
        self.emit(out, ins, "MAKE_FUNCTION", ins.arg or 0)
        return i + 1

    # -- operators -------------------------------------------------------------------------
    def op_BINARY_OP(self, i, ins, out):
        self.emit(out, ins, "BINARY_OP", dis._nb_ops[ins.arg][1])
        return i + 1

    def op_COMPARE_OP(self, i, ins, out):
        self.emit(out, ins, "COMPARE_OP", dis.cmp_op[ins.arg >> self.COMPARE_SHIFT])
        return i + 1

    COMPARE_SHIFT = 4

    def op_BINARY_SLICE(self, i, ins, out):
        self.emit(out, ins, "BUILD_SLICE", 2, arg=2)
        self.emit(out, ins, "BINARY_SUBSCR")
        return i + 1

    def op_STORE_SLICE(self, i, ins, out):
        self.emit(out, ins, "BUILD_SLICE", 2, arg=2)
        self.emit(out, ins, "STORE_SUBSCR")
        return i + 1

    def op_RETURN_CONST(self, i, ins, out):
        self.emit(out, ins, "LOAD_CONST", ins.argval)
        self.emit(out, ins, "RETURN_VALUE")
        return i + 1

    def op_FORMAT_VALUE(self, i, ins, out):
        self.emit(out, ins, "FORMAT_VALUE", (CONVERSIONS[ins.arg & 3], bool(ins.arg & 4)))
        return i + 1

    def intrinsic_name(self, ins: dis.Instruction) -> str:
        descs = dis._intrinsic_1_descs if ins.opname == "CALL_INTRINSIC_1" else dis._intrinsic_2_descs
        return descs[ins.arg]

    def op_CALL_INTRINSIC_1(self, i, ins, out):
        name = self.intrinsic_name(ins)
        if name == "INTRINSIC_ASYNC_GEN_WRAP":
            self.drop(ins)  # 3.11's ASYNC_GEN_WRAP before an async generator's yield: dropped as there
        elif (
            name == "INTRINSIC_TYPEALIAS" and out and out[-1].opname == "BUILD_TUPLE" and out[-1].argval == 3
        ):
            # ``type X[...] = v``: the model pops (name, type params or None, lazy value) itself
            out.pop()
            self.emit(out, ins, "TYPE_ALIAS")
        elif name == "INTRINSIC_PREP_RERAISE_STAR":
            # 3.11's opcode of the same meaning, after the LIST_APPEND 1 that op_LIST_APPEND
            # removed from every path into it
            self.emit(out, ins, "LIST_APPEND", 1, arg=1)
            self.emit(out, ins, "PREP_RERAISE_STAR")
        else:
            self.emit(out, ins, "CALL_INTRINSIC_1", name)
        return i + 1

    op_CALL_INTRINSIC_2 = op_CALL_INTRINSIC_1

    def is_prep_reraise_star(self, ins: dis.Instruction | None) -> bool:
        return ins is not None and ins.opname == "CALL_INTRINSIC_2" \
            and self.intrinsic_name(ins) == "INTRINSIC_PREP_RERAISE_STAR"

    def op_LIST_APPEND(self, i, ins, out):
        """``LIST_APPEND 1`` ending ``except*`` clauses: one copy, just before PREP_RERAISE_STAR.

        The compiler puts it at the join before PREP_RERAISE_STAR; 3.13 copies that small block
        into the paths that jump there (``LIST_APPEND 1; JUMP prep``). Every copy is dropped and
        ``op_CALL_INTRINSIC_1`` emits the single LIST_APPEND 1 at the join, as 3.11 has it.
        """
        if ins.arg == 1:
            nxt = self.at(i + 1)
            if nxt is not None and self.JUMPS.get(nxt.opname) == "JUMP" and nxt.argval > nxt.offset:
                k = self.pos.get(nxt.argval)
                nxt = self.raw[k] if k is not None else None
            if self.is_prep_reraise_star(nxt):
                self.drop(ins)
                return i + 1
        self.emit(out, ins, "LIST_APPEND", ins.argval)
        return i + 1

    def op_PUSH_EXC_INFO(self, i, ins, out):
        """``except*`` clauses start ``BUILD_LIST 0; COPY 2``: 3.11's ``COPY 1; BUILD_LIST 0; SWAP 2``.

        Both leave the original group, an empty list (what the clauses raise) and the unmatched rest.
        """
        self.emit(out, ins, "PUSH_EXC_INFO")
        build, copy = self.at(i + 1), self.at(i + 2)
        if build is not None and copy is not None and build.opname == "BUILD_LIST" and build.arg == 0 \
                and copy.opname == "COPY" and copy.arg == 2 \
                and build.offset not in self.dropped and copy.offset not in self.dropped:
            self.emit(out, build, "COPY", 1, arg=1)
            self.emit(out, build, "BUILD_LIST", 0)
            self.emit(out, copy, "SWAP", 2)
            return i + 3
        return i + 1

    def op_STORE_DEREF(self, i, ins, out):
        """``LOAD_LOCALS; STORE_DEREF __classdict__``: the compiler's own cell for a class namespace."""
        if ins.argval == "__classdict__" and out and out[-1].opname == "LOAD_LOCALS":
            self.dropped.add(out.pop().offset)
            self.drop(ins)
            return i + 1
        self.emit(out, ins, "STORE_DEREF", ins.argval)
        return i + 1

    def op_YIELD_VALUE(self, i, ins, out):
        self.emit(out, ins, "YIELD_VALUE")  # the oparg (stack depth) means nothing to the model
        return i + 1

    def op_RETURN_GENERATOR(self, i, ins, out):
        self.drop(ins)
        nxt = self.at(i + 1)
        if nxt is not None and nxt.opname == "POP_TOP":
            self.drop(nxt)
            return i + 2
        return i + 1

    # -- await, yield from, async for ------------------------------------------------------
    def op_SEND(self, i, ins, out):
        """The await or yield-from loop:
        ``GETTER; LOAD_CONST None; SEND L; YIELD_VALUE; RESUME; JUMP_BACKWARD_NO_INTERRUPT; L: END_SEND``."""
        if len(out) < 2 or out[-1].opname != "LOAD_CONST" or out[-1].argval is not None:
            raise self.error(ins, "SEND outside an await/yield-from loop")
        self.dropped.add(out.pop().offset)
        getter = out[-1]
        k = i
        while k < len(self.raw) and self.raw[k].offset < ins.argval:
            self.drop(self.raw[k])
            k += 1
        end_send = self.at(k)
        if end_send is None or end_send.opname != "END_SEND":
            raise self.error(ins, "SEND loop without END_SEND")
        self.drop(end_send)
        if getter.opname == "GET_YIELD_FROM_ITER":
            getter.opname = "YIELD_FROM"
        elif getter.opname == "GET_AWAITABLE":
            getter.opname = "AWAIT"
        elif getter.opname == "GET_ANEXT":
            self._async_for(getter)
        else:
            raise self.error(ins, f"SEND after {getter.opname}")
        return k + 1

    def _async_for(self, getter: Instr) -> None:
        handler = next((e.target for e in self.table if e.start <= getter.offset < e.end), None)
        k = self.pos.get(handler) if handler is not None else None
        if k is None or self.raw[k].opname != "END_ASYNC_FOR":
            raise DecompilationError("async for without END_ASYNC_FOR", qualname=self.qualname,
                                     offset=getter.offset, opname="GET_ANEXT")
        getter.opname = "ASYNC_FOR_ITER"
        after = self.at(k + 1)
        getter.target = after.offset if after is not None else self.end_offset
        if (
            after is not None
            and after.opname in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT")
            and after.offset not in self.jump_targets
        ):
            # 3.12+ lays END_ASYNC_FOR out after the function's end, followed by a jump back to
            # the code after the loop: the loop exits there (inside an enclosing with or try body)
            getter.target = after.argval
            self.drop(after)
        getter.extra["end_async_for"] = handler
        self.dead_handlers.add(handler)
        self.async_for_handlers.add(handler)
        self.drop(self.raw[k])

    def op_END_SEND(self, i, ins, out):
        raise self.error(ins, "END_SEND outside an await/yield-from loop")

    def op_CLEANUP_THROW(self, i, ins, out):
        raise self.error(ins, "CLEANUP_THROW outside an await/yield-from handler")

    def op_LOAD_FAST_CHECK(self, i, ins, out):
        # the compiler's choice (the name may be unbound here); in source both are a plain name,
        # and the copies of a finally body differ only in it
        self.emit(out, ins, "LOAD_FAST", ins.argval)
        return i + 1

    # -- PEP 709 inlined comprehensions ----------------------------------------------------
    def op_LOAD_FAST_AND_CLEAR(self, i, ins, out):
        """``LOAD_FAST_AND_CLEAR x..; SWAP n; BUILD_X 0; SWAP 2; FOR_ITER..END_FOR; restores``."""
        k = i
        hidden: list[dis.Instruction] = []
        while self.raw[k].opname == "LOAD_FAST_AND_CLEAR":
            hidden.append(self.raw[k])
            k += 1
        swap, build = self.at(k), self.at(k + 1)
        if swap is None or swap.opname != "SWAP" or swap.arg != len(hidden) + 1 \
                or build is None or build.opname not in _COMPREHENSION_NAMES or build.arg != 0:
            raise self.error(ins, "LOAD_FAST_AND_CLEAR outside an inlined comprehension")
        first_loop = self.comprehension_loop_start(k + 2)
        loop_end, body_end = self.comprehension_loop_end(first_loop)
        for e in self.table:
            if (
                build.offset <= e.start < self.raw[loop_end - 1].offset
                and e.target not in self.dead_handlers
                and self.raw[self.index(e.target)].opname != "END_ASYNC_FOR"
            ):
                self._drop_comprehension_cleanup(e.target)
        synthetic = self.synthetic_comprehension(
            build, self.raw[k + 2], hidden, first_loop, loop_end, body_end
        )
        self.drop(*hidden, swap, build)
        self.emit_comprehension_call(out, ins, synthetic)
        # The saved values of the hidden names sit under the result, in the order SWAP n+1 left them.
        saved: list[str | None] = [None, *(h.argval for h in hidden)]
        saved[0], saved[-1] = saved[-1], saved[0]
        return self.comprehension_epilogue(body_end, [*saved[:-1], None], out)

    def emit_comprehension_call(
        self, out: list[Instr], ins: dis.Instruction, synthetic: types.CodeType
    ) -> None:
        """The iterator is on the stack: call the synthetic comprehension on it, as 3.11 does."""
        getter = self._comprehension_getter
        if getter is not None and not (out and out[-1].opname == getter):
            self.emit(out, ins, getter)  # 3.15: the iterable was not made an iterator yet
        self.emit(out, ins, "LOAD_CONST", synthetic)
        self.emit(out, ins, "MAKE_FUNCTION", 0, arg=0)
        self.emit(out, ins, "SWAP", 2, arg=2)
        self.emit(out, ins, "CALL", 0, arg=0)

    def comprehension_loop_end(self, first_loop: int) -> tuple[int, int]:
        """``(end of the loop's instructions, index after its exit cleanup)`` (exclusive indices)."""
        loop = self.raw[first_loop]
        if loop.opname == "FOR_ITER":
            end_for = self.index(loop.argval)
            tail = self.at(end_for + 1)
            return end_for, end_for + 1 + (1 if tail is not None and tail.opname in self.END_FOR_TAIL else 0)
        if loop.opname == "GET_ANEXT":
            handler = next((e.target for e in self.table if e.start <= loop.offset < e.end), None)
            k = self.pos.get(handler) if handler is not None else None
            if k is not None and self.raw[k].opname == "END_ASYNC_FOR":
                return k + 1, k + 1
        raise self.error(loop, "inlined comprehension without a loop")

    def comprehension_loop_start(self, k: int) -> int:
        """Index of the outermost loop after ``BUILD_X 0; SWAP 2``.

        3.13.1+ and 3.15 call GET_ITER (GET_AITER) again there (3.15 only there): it is dropped and
        ``emit_comprehension_call`` makes sure the caller has one.
        """
        swap = self.at(k)
        if swap is None or swap.opname != "SWAP" or swap.arg != 2:
            raise self.error(self.raw[k - 1], "inlined comprehension without its SWAP")
        self.drop(swap)
        getter = self.at(k + 1)
        self._comprehension_getter = None
        if getter is not None and getter.opname in ("GET_ITER", "GET_AITER"):
            self.drop(getter)
            self._comprehension_getter = getter.opname
            return k + 2
        return k + 1

    def synthetic_comprehension(self, build, anchor, hidden, first_loop, loop_end, body_end):
        """A code object standing for the comprehension; its instructions are kept in ``_SYNTHETIC``."""
        body: list[Instr] = []
        self.emit(body, build, build.opname, 0, arg=0)
        # At the offset of the (dropped) instruction after BUILD_X: jumps back to the loop must
        # land on FOR_ITER, not on this load.
        self.emit(body, anchor, "LOAD_FAST", ".0", arg=0, synthetic=True)
        body.extend(self.translate(first_loop, loop_end))
        exit_offset = self.raw[body_end].offset if body_end < len(self.raw) else self.end_offset
        body.append(Instr("RETURN_VALUE", exit_offset, None, None, None, body[-1].lineno if body else None))
        for k in range(loop_end, body_end):
            self.drop(self.raw[k])
        name = _COMPREHENSION_NAMES[build.opname]
        varnames = (".0",) + tuple(dict.fromkeys(h.argval for h in hidden))
        lineno = (
            build.positions.lineno if build.positions and build.positions.lineno else self.code.co_firstlineno
        )
        replacements = {
            "co_name": name,
            "co_argcount": 1,
            "co_posonlyargcount": 0,
            "co_kwonlyargcount": 0,
            "co_flags": (self.code.co_flags & _CO_FLAGS_KEPT) | 0x0010 | 0x0003,
            "co_varnames": varnames,
            "co_nlocals": len(varnames),
            "co_filename": self.code.co_filename,
            "co_firstlineno": lineno,
        }
        if hasattr(self.code, "co_qualname"):
            replacements["co_qualname"] = f"{self.qualname}.{name}"
        # The template's bytecode never touches a local, so any co_varnames is valid for it.
        synthetic = _TEMPLATE.replace(**replacements)
        _remember(
            synthetic, self.retarget(body, [self.raw[k].offset for k in range(first_loop, body_end)]), []
        )
        return synthetic

    def comprehension_epilogue(self, k: int, tail: list[str | None], out: list[Instr]) -> int:
        """Drop the stores restoring the shadowed names; keep what consumes the result.

        After the loop the stack ends ``saved_1 .. saved_n result``; the compiler restores with
        ``SWAP n+1; STORE_FAST x_n .. x_1`` but may have moved a store of the result first.
        """
        tail = list(tail)  # names of the saved values, bottom first; None marks the result
        while any(x is not None for x in tail):
            ins = self.at(k)
            if ins is None:
                raise DecompilationError("inlined comprehension without its restores", qualname=self.qualname)
            k += 1
            if ins.opname in self.JUMPS and self.JUMPS[ins.opname] == "JUMP" and ins.argval > ins.offset:
                self.drop(ins)  # over the cleanup handler placed between loop and restores
                k = self.index(ins.argval)
                continue
            self.drop(ins)
            for opname, argval in self.micro_ops(ins):
                if not any(x is not None for x in tail):
                    self.emit(out, ins, opname, argval)  # e.g. the load half of STORE_FAST_LOAD_FAST
                elif opname == "SWAP" and argval <= len(tail):
                    tail[-1], tail[-argval] = tail[-argval], tail[-1]
                elif opname == "STORE_FAST" and tail[-1] is not None:
                    if tail[-1] != argval:
                        raise self.error(ins, "inlined comprehension restores the wrong name")
                    tail.pop()
                elif tail[-1] is None and opname in ("STORE_FAST", "POP_TOP"):
                    tail.pop()
                    self.emit(out, ins, opname, argval)
                else:
                    raise self.error(ins, "unexpected instruction while restoring a comprehension's names")
        return k

    def micro_ops(self, ins: dis.Instruction) -> list[tuple[str, object]]:
        """``(opname, argval)`` steps of one raw instruction (superinstructions give several)."""
        return [(ins.opname, ins.argval)]

    # -- offsets and the exception table ---------------------------------------------------
    def retarget(self, instrs: list[Instr], offsets: list[int]) -> list[Instr]:
        """Point every jump of ``instrs`` at a kept instruction (dropped ones forward to the next)."""
        kept = sorted({ins.offset for ins in instrs})
        forward: dict[int, int] = {}
        j = 0
        for off in sorted(set(offsets) | set(kept)):
            while j < len(kept) and kept[j] < off:
                j += 1
            if j < len(kept):
                forward[off] = kept[j]
        end = max(kept) + 2 if kept else 0
        for ins in instrs:
            if ins.target is not None:
                ins.target = forward.get(ins.target, end if ins.target not in kept else ins.target)
        return instrs

    def remap(self, out: list[Instr], table: list[ExceptionEntry]) -> list[ExceptionEntry]:
        self.retarget(out, self.all_offsets)
        kept = sorted({ins.offset for ins in out})
        forward: dict[int, int] = {}
        j = 0
        for off in sorted(set(self.all_offsets) | {self.end_offset}):
            while j < len(kept) and kept[j] < off:
                j += 1
            forward[off] = kept[j] if j < len(kept) else self.end_offset
        table = async_for_entries_to_outer(table, self.async_for_handlers)
        entries = []
        for e in table:
            if e.target in self.dead_handlers or e.target in self.dropped:
                continue
            start, end = forward.get(e.start, self.end_offset), forward.get(e.end, self.end_offset)
            target = forward.get(e.target)
            if target is None or target == self.end_offset or start >= end:
                continue
            last = entries[-1] if entries else None
            if last is not None and (last.target, last.depth, last.lasti) == (target, e.depth, e.lasti) \
                    and (last.end == start or self._inner_jumps_only(out, last.start, last.end, start, end)):
                # split by a drop, or by jumps that stay inside the range
                entries[-1] = ExceptionEntry(last.start, end, target, e.depth, e.lasti)
            else:
                entries.append(ExceptionEntry(start, end, target, e.depth, e.lasti))
        return entries


    @staticmethod
    def _inner_jumps_only(out: list[Instr], start: int, gap: int, resume: int, end: int) -> bool:
        """Is ``[gap, resume)`` only jumps whose targets lie in ``[start, end)``?

        Such jumps cannot raise; 3.13 leaves some (a loop's ``POP_JUMP_IF_X; JUMP_BACKWARD``) out of
        the exception range around them, which would cut the protected region in two.
        """
        inside = [ins for ins in out if gap <= ins.offset < resume]
        return bool(inside) and all(
            ins.opname in ("JUMP", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE",
                           "POP_JUMP_IF_NOT_NONE") and ins.target is not None and start <= ins.target < end
            for ins in inside)


_VALUE_JUMPS = ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP")
_LEAVES = ("JUMP", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE",
           "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "FOR_ITER", "SEND")


def share_chain_value_copies(out: list[Instr]) -> None:
    """``return a < b <= (c if x else d)``: 3.12+ copy the last comparison and the returning code
    after the chain into each branch of the conditional expression and the returning code into
    the path that falls through to the chain's exit (``SWAP 2; POP_TOP``). As in 3.11, the
    fall-through copy becomes a jump to the code after the exit and each branch's copy a jump to
    the comparison reached by falling through (``chain_operand_copies``)."""
    index_of = {ins.offset: k for k, ins in enumerate(out)}
    replace: dict[int, tuple[int, int]] = {}
    for k, ins in enumerate(out):
        if ins.opname != "JUMP_IF_FALSE_OR_POP" or k < 3 or out[k - 1].opname not in _COMPARES \
                or [x.opname for x in out[k - 3:k - 1]] != ["SWAP", "COPY"]:
            continue
        t = index_of.get(ins.target)
        if t is None or t <= k or t + 2 >= len(out) or out[t].opname != "SWAP" or out[t].argval != 2 \
                or out[t + 1].opname != "POP_TOP":
            continue
        m = next(
            (n for n in range(1, 9) if t + 2 + n <= len(out) and out[t + 1 + n].opname == "RETURN_VALUE"),
            None,
        )
        tail = out[t + 2:t + 2 + m] if m is not None else []
        if not tail or any(x.target is not None or x.opname in _LEAVES for x in tail[:-1]) or t - m <= k \
                or out[t - m - 1].opname not in _COMPARES \
                or [_key(x) for x in out[t - m:t]] != [_key(x) for x in tail] \
                or any(x.target is not None for x in out[t - m:t]):
            continue
        targeted = {x.target for x in out if x.target is not None}
        if any(x.offset in targeted for x in out[t - m:t]) or any(x.offset in targeted for x in tail[1:]):
            continue
        replace.update(chain_operand_copies(out, k, t - 1, _key))
        replace[t - m] = (t - 1, out[t + 2].offset)
    for a in sorted(replace, reverse=True):
        last, target = replace[a]
        out[a:last + 1] = [Instr("JUMP", out[a].offset, None, None, target, out[a].lineno, out[a].slots)]


def _key(ins: Instr) -> tuple:
    return ins.opname, repr(ins.argval)


_COMPARES = frozenset({"COMPARE_OP", "IS_OP", "CONTAINS_OP"})


def share_duplicated_returns(out: list[Instr]) -> None:
    """``return a < b < c`` (and ``return x and y`` shapes): 3.12+ copy the ``RETURN_VALUE`` of the
    join into the path that fell through, 3.11 jumped to one shared ``RETURN_VALUE``. That copy
    becomes a jump to the target's ``RETURN_VALUE`` again, so the value-position and/or (or chained
    comparison) ends at its join as in 3.11."""
    index_of = {ins.offset: k for k, ins in enumerate(out)}
    targeted = {ins.target for ins in out if ins.target is not None}
    for k, ins in enumerate(out):
        if ins.opname not in _VALUE_JUMPS or ins.target not in index_of:
            continue
        t = index_of[ins.target]
        tail = out[t:t + 3]
        if (
            len(tail) >= 3
            and tail[0].opname == "SWAP"
            and tail[0].argval == 2
            and tail[1].opname == "POP_TOP"
        ):
            join = t + 2          # a chained comparison's exit pops the middle operand first
        else:
            join = t
        if join >= len(out) or out[join].opname != "RETURN_VALUE":
            continue
        r = k + 1
        while r < t and out[r].opname not in _LEAVES and not (out[r].opname in _VALUE_JUMPS
                                                              and out[r].target != ins.target):
            if out[r].offset in targeted and out[r].offset != ins.target:
                break
            r += 1
        if r < t and out[r].opname == "RETURN_VALUE" and out[r].offset not in targeted:
            copy = out[r]
            out[r] = Instr("JUMP", copy.offset, None, None, out[join].offset, copy.lineno, copy.slots)


def normalize(code: types.CodeType) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and exception table of ``code`` (compiled by CPython 3.12)."""
    synthetic = synthetic_instructions(code)
    if synthetic is not None:
        return synthetic
    return Translator(code).normalize()
