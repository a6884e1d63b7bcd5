"""Normalisation: each CPython's bytecode -> one version-blind instruction model.

Everything after this layer sees the same opnames with the same stack semantics, which are
CPython 3.11's with the version quirks removed:

- no CACHE, PRECALL, NOP, RESUME, EXTENDED_ARG, prologue (MAKE_CELL, COPY_FREE_VARS,
  RETURN_GENERATOR + its POP_TOP, GEN_START), TO_BOOL or NOT_TAKEN instructions;
- jumps are absolute: ``target`` is the offset of an instruction in the original code, and is
  always the offset of a kept instruction (dropped instructions forward to the next kept one);
  ``JUMP`` is every unconditional jump; conditional jumps are ``POP_JUMP_IF_FALSE/TRUE/NONE/
  NOT_NONE`` and ``JUMP_IF_FALSE_OR_POP/JUMP_IF_TRUE_OR_POP`` (value-position and/or);
- ``LOAD_GLOBAL`` / ``LOAD_ATTR`` never push NULL themselves: a separate ``PUSH_NULL`` is emitted
  (method loads become ``LOAD_ATTR`` + ``PUSH_NULL``); ``CALL`` (argval = argc) pops its arguments
  then ``slots`` (1 or 2) callable slots, NULL slots being ignored; ``CALL_KW`` pops a tuple of
  keyword names first (3.11's KW_NAMES becomes LOAD_CONST + CALL_KW);
- ``BINARY_OP`` carries the operator symbol in ``argval`` ('+', '+=', ...);
- ``FOR_ITER`` pops the iterator when exhausted and jumps to ``target`` (3.11 semantics);
- ``YIELD_FROM`` / ``AWAIT`` replace a whole SEND loop: pop the iterable, push the result;
  ``ASYNC_FOR_ITER`` is FOR_ITER for ``async for`` (target: after the loop);
- ``FORMAT_VALUE`` argval = (conversion char or None, has_spec); ``MAKE_FUNCTION`` argval = flags.
"""

from __future__ import annotations

import bisect
import contextlib
import contextvars
import dis
import functools
import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from depyf.decompiler.errors import DecompilationError


@dataclass
class Instr:
    """One normalised instruction. ``offset`` is the original instruction's offset."""

    opname: str
    offset: int
    arg: int | None = None
    argval: object = None
    target: int | None = None
    lineno: int | None = None
    slots: int = 2
    extra: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        tgt = f" ->{self.target}" if self.target is not None else ""
        return f"<{self.offset} {self.opname} {self.argval!r}{tgt}>"


@dataclass(frozen=True)
class ExceptionEntry:
    """A protected range [start, end) of offsets handled at ``target`` with stack ``depth``."""

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


def protection_key(entry: ExceptionEntry | None) -> tuple[int, int] | None:
    """What protects code covered by ``entry``: its handler and stack depth. The compiler splits one
    try body's range around what protects itself (a ``with`` body inside): the pieces are one
    protection."""
    return None if entry is None else (entry.target, entry.depth)


POP_JUMPS = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"})
CONDITIONAL_JUMPS = POP_JUMPS | {"JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"}
# A ``for`` loop's header: the next item, or a jump past the loop once the iterator is exhausted.
FOR_ITERS = frozenset({"FOR_ITER", "ASYNC_FOR_ITER"})
JUMPS = CONDITIONAL_JUMPS | {"JUMP"} | FOR_ITERS
TERMINATORS = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP"})
# Stores and deletes of a plain name (a local, a cell, a global, a class or module body's name).
NAME_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"})
NAME_DELETES = frozenset({"DELETE_FAST", "DELETE_NAME", "DELETE_DEREF", "DELETE_GLOBAL"})


class Comprehension(NamedTuple):
    """A list, set or dict comprehension as the model has it (3.11's): a code object of its own."""

    name: str   # the code object's ``co_name``
    kind: str   # what it builds: "list", "set" or "dict"
    build: str  # the instruction that starts it with the empty container (argval 0)


COMPREHENSIONS = (Comprehension("<listcomp>", "list", "BUILD_LIST"),
                  Comprehension("<setcomp>", "set", "BUILD_SET"),
                  Comprehension("<dictcomp>", "dict", "BUILD_MAP"))
# a comprehension's code object name -> what it builds
COMPREHENSION_KINDS = {c.name: c.kind for c in COMPREHENSIONS}


# The longest piece of code, in model instructions, taken for a copy the compiler made of a small
# block (a returning block copied into each path to it, the copies of a chained comparison's last
# operand): the structuring and the layout passes look no further.
COPIED_BLOCK_LIMIT = 8


# CPython's MAX_COPY_SIZE (3.10 to 3.15): a block that ends the function and has at most this many
# instructions is copied into each jump to it; a longer one is jumped to.
COPIED_RETURN_LIMIT = 4

# Instructions the compiler fuses from two after copying blocks (so a copy counts them as two)
_FUSED_PAIRS = frozenset({"LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST",
                          "LOAD_FAST_BORROW_LOAD_FAST_BORROW"})
# Entries of the instruction stream that are no instructions of the compiler's blocks
_NOT_COUNTED = frozenset({"CACHE", "EXTENDED_ARG", "NOT_TAKEN", "PRECALL"})


def compiler_size(code: types.CodeType, first: int, last: int) -> int:
    """How many instructions the compiler's block had for the bytecode from offset ``first`` to
    offset ``last`` (both included), as it counts them when deciding what to copy: before fusing
    pairs of loads and stores, without caches, argument prefixes and 3.11's PRECALL (which comes
    with its CALL)."""
    offsets, sizes = _compiler_sizes(code)
    return sizes[bisect.bisect_right(offsets, last)] - sizes[bisect.bisect_left(offsets, first)]


@functools.lru_cache(maxsize=64)
def _compiler_sizes(code: types.CodeType) -> tuple[list[int], list[int]]:
    """The offsets of ``code``'s instructions, and the compiler's count of those before each."""
    offsets, sizes = [], [0]
    for ins in raw_instructions(code):
        offsets.append(ins.offset)
        counted = 0 if ins.opname in _NOT_COUNTED else 2 if ins.opname in _FUSED_PAIRS else 1
        sizes.append(sizes[-1] + counted)
    return offsets, sizes


def copy_key(ins: Instr) -> tuple:
    """What all copies of one instruction share, so what makes two pieces of code copies of one
    (the compiler copies small tails into each path that reaches them): the operation, its value
    (by repr: ``0 == False``, but they are different constants) and where it jumps (a jump's raw
    argument is relative to where it lies, its target is not). Code objects compare by content:
    two copies of a test holding a comprehension load two equal ones (3.12+ inlines the
    comprehension, and each copy is read back into a code object of its own)."""
    value = ins.argval
    return ins.opname, value if isinstance(value, types.CodeType) else repr(value), ins.target


@dataclass(frozen=True)
class Features:
    """How one CPython's compiler lays out structured code: each flag names a quirk that the layout
    of its bytecode shows and that reading it back must undo. Each version module exports its
    ``FEATURES``; the structuring asks ``features().<flag>``, never the version."""

    # Small blocks that end the function (``return x`` after a try statement or a loop) are copied
    # into each path that reaches them instead of being jumped to.
    copies_return_tails: bool
    # A ``while`` loop's test is copied to the bottom of its body: the end of the body runs the copy,
    # only a written ``continue`` jumps back to the test at the top.
    copies_loop_tests: bool
    # Except clauses are moved after the code that follows the try statement (to the end of the
    # function), which they jump back to.
    handlers_laid_out_last: bool
    # Conditional jumps take exact bools (a ``TO_BOOL`` converts first), so a block of jumps alone
    # raises nothing and may lie outside its handler's range.
    jumps_cannot_raise: bool
    # A test of an ``and``/``or`` operand whose value is used jumps past the next test of that
    # value instead of onto it (``(a or (b and c)) and d``: a false ``b`` goes straight to the
    # end; see ``layout.value_tests``).
    threads_value_tests: bool = False
    # No conditional jump goes backwards: ``if c: body`` ending a loop body jumps forward over a
    # copy of the jump back, the very code of ``if not c: continue`` followed by ``body``.
    conditional_jumps_go_forward: bool = False


def features() -> Features:
    """The layout features of the running CPython's compiler."""
    return _version_module().FEATURES


@functools.cache
def _version_module():
    major, minor = sys.version_info[:2]
    name = f"depyf.decompiler.versions.v{major}_{minor}"
    try:
        import importlib

        return importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - depends on the running interpreter
        raise DecompilationError(f"CPython {major}.{minor} is not supported yet ({exc})") from None


def normalize(code: types.CodeType) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and exception table of ``code`` for the running CPython."""
    check_opcodes(code)
    instrs, entries = _version_module().normalize(code)
    from depyf.decompiler.layout.uncovered_jumps import cover_uncovered_jumps  # (imports this module)
    return instrs, cover_uncovered_jumps(instrs, entries)


# While a decompilation runs (``reading_once``): id(code) -> (code, its instructions, its exception
# table). The code is held so that its id is not reused while the entry lives.
_read: contextvars.ContextVar[dict | None] = contextvars.ContextVar("depyf_read_instructions", default=None)


@contextlib.contextmanager
def reading_once():
    """Within the block, each code object's bytecode is read by ``dis`` once (the normalisation
    and the flow check both read the original code and its nested code)."""
    if _read.get() is not None:
        yield
        return
    token = _read.set({})
    try:
        yield
    finally:
        _read.reset(token)


def _read_once(code: types.CodeType, what: str, read):
    cache = _read.get()
    if cache is None:
        return read(code)
    key = (id(code), what)
    hit = cache.get(key)
    if hit is not None and hit[0] is code:
        return hit[1]
    found = read(code)
    cache[key] = (code, found)
    return found


def raw_instructions(code: types.CodeType) -> tuple[dis.Instruction, ...]:
    """``dis.get_instructions(code)``, read once per code object inside ``reading_once``."""
    return _read_once(code, "instructions", _read_3_10 if sys.version_info[:2] == (3, 10) else _read_by_dis)


def _read_by_dis(code: types.CodeType) -> tuple[dis.Instruction, ...]:
    return tuple(dis.get_instructions(code))


def _read_3_10(code: types.CodeType) -> tuple[dis.Instruction, ...]:
    """``dis.get_instructions(code)`` of CPython 3.10, the same instructions, with the jump targets
    kept in a set: 3.10's ``dis`` keeps them in a list and looks every offset up in it, twice, which
    is quadratic in code with many jumps (most of the reading of an ``elif`` chain of 10,000
    branches went there)."""
    raw = code.co_code
    opargs = list(dis._unpack_opargs(raw))
    labels = set()
    for offset, op, arg in opargs:
        if arg is not None and op in dis.hasjrel:
            labels.add(offset + 2 + arg * 2)
        elif arg is not None and op in dis.hasjabs:
            labels.add(arg * 2)
    linestarts = dict(dis.findlinestarts(code))
    cells = code.co_cellvars + code.co_freevars
    out = []
    for offset, op, arg in opargs:
        argval, argrepr = None, ""
        if arg is not None:
            argval = arg
            if op in dis.hasconst:
                argval, argrepr = dis._get_const_info(arg, code.co_consts)
            elif op in dis.hasname:
                argval, argrepr = dis._get_name_info(arg, code.co_names)
            elif op in dis.hasjabs:
                argval = arg * 2
                argrepr = "to " + repr(argval)
            elif op in dis.hasjrel:
                argval = offset + 2 + arg * 2
                argrepr = "to " + repr(argval)
            elif op in dis.haslocal:
                argval, argrepr = dis._get_name_info(arg, code.co_varnames)
            elif op in dis.hascompare:
                argval = argrepr = dis.cmp_op[arg]
            elif op in dis.hasfree:
                argval, argrepr = dis._get_name_info(arg, cells)
            elif op == dis.FORMAT_VALUE:
                converted, argrepr = dis.FORMAT_VALUE_CONVERTERS[arg & 0x3]
                argval = (converted, bool(arg & 0x4))
                if argval[1]:
                    argrepr += ", with format" if argrepr else "with format"
            elif op == dis.MAKE_FUNCTION:
                argrepr = ", ".join(s for i, s in enumerate(dis.MAKE_FUNCTION_FLAGS) if arg & (1 << i))
        out.append(dis.Instruction(dis.opname[op], op, arg, argval, argrepr, offset, linestarts.get(offset),
                                   offset in labels))
    return tuple(out)


def _exception_table(code: types.CodeType) -> tuple:
    if sys.version_info < (3, 11):
        return ()
    parse = getattr(dis, "_parse_exception_table", None)   # what dis.Bytecode reads it with
    return tuple(parse(code) if parse is not None else dis.Bytecode(code).exception_entries)


def raw_exception_entries(code: types.CodeType) -> tuple:
    """``dis.Bytecode(code).exception_entries`` (3.11+; empty before), read once inside ``reading_once``."""
    return _read_once(code, "table", _exception_table)


class LeanInstruction(NamedTuple):
    """The fields of ``dis.Instruction`` the 3.11 normalisation and the flow check read
    (``lineno``: ``positions.lineno``)."""

    opname: str
    opcode: int
    arg: int | None
    argval: object
    argrepr: str
    offset: int
    lineno: int | None


def flow_instructions(code: types.CodeType) -> Sequence[LeanInstruction] | Sequence[dis.Instruction]:
    """``code``'s instructions with the fields the flow check reads: ``lean_instructions`` on
    CPython 3.11, ``raw_instructions`` (the same fields, and more) on the other versions."""
    if _LEAN_READER:
        return lean_instructions(code)
    return raw_instructions(code)


def lean_instructions(code: types.CodeType) -> list[LeanInstruction]:
    """CPython 3.11 only: ``code``'s instructions read straight from ``co_code``, once per code
    object inside ``reading_once``. The values are dis's (checked over the corpus and the stdlib
    modules by the tests), except that a constant's ``argrepr`` is left empty: ``dis`` spends much
    of its time on positions, line starts, jump labels and constants' reprs."""
    return _read_once(code, "lean", _read_3_11)


_LEAN_READER = sys.version_info[:2] == (3, 11)
if _LEAN_READER:
    # per opcode: its name, the opcode dis reads it as (specialised -> base), the inline cache
    # entries after it, and how its argument becomes ``argval``
    _OPNAMES = [dis._all_opname[op] for op in range(256)]
    _DEOPT = [dis._deoptop(op) for op in range(256)]
    _CACHES = [dis._inline_cache_entries[_DEOPT[op]] for op in range(256)]
    (_PLAIN, _CONST, _NAME, _GLOBAL, _JUMP_ABS, _JUMP_FORWARD, _JUMP_BACKWARD, _LOCAL, _COMPARE,
     _FORMAT, _MAKE_FUNCTION, _BINARY_OP) = range(12)

    def _kind(op: int) -> int:
        if op in dis.hasconst:
            return _CONST
        if op in dis.hasname:
            return _GLOBAL if op == dis.opmap["LOAD_GLOBAL"] else _NAME
        if op in dis.hasjabs:
            return _JUMP_ABS
        if op in dis.hasjrel:
            return _JUMP_BACKWARD if "JUMP_BACKWARD" in dis.opname[op] else _JUMP_FORWARD
        if op in dis.haslocal or op in dis.hasfree:
            return _LOCAL
        if op in dis.hascompare:
            return _COMPARE
        return {dis.opmap["FORMAT_VALUE"]: _FORMAT, dis.opmap["MAKE_FUNCTION"]: _MAKE_FUNCTION,
                dis.opmap["BINARY_OP"]: _BINARY_OP}.get(op, _PLAIN)

    _KINDS = [_kind(_DEOPT[op]) for op in range(256)]
    _LOAD_CONST = dis.opmap["LOAD_CONST"]
    _EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
    _INT_OVERFLOW = 2 ** 31


def _read_3_11(code: types.CodeType) -> list[LeanInstruction]:
    """``dis._get_instructions_bytes`` of CPython 3.11 without what no reader here reads."""
    raw = code.co_code
    lines = [position[0] for position in code.co_positions()]   # one per code unit
    units = len(lines)
    consts, names, varname = code.co_consts, code.co_names, code._varname_from_oparg
    out = []
    append = out.append
    make = tuple.__new__     # (what the named tuple's own __new__ calls, without a Python call)
    extended = 0
    offset, end = 0, len(raw)
    while offset < end:
        op = raw[offset]
        deop = _DEOPT[op]
        argval, argrepr = None, ""
        if deop >= dis.HAVE_ARGUMENT:
            arg = raw[offset + 1] | extended
            extended = (arg << 8) if deop == _EXTENDED_ARG else 0
            if extended >= _INT_OVERFLOW:
                extended -= 2 * _INT_OVERFLOW
            kind = _KINDS[op]
            if kind == _PLAIN:
                argval = arg
            elif kind == _CONST:
                argval = consts[arg] if deop == _LOAD_CONST else dis.UNKNOWN   # (argrepr left empty)
            elif kind == _NAME:
                argval = argrepr = names[arg]
            elif kind == _GLOBAL:
                argval = argrepr = names[arg // 2]
                if arg & 1 and argrepr:
                    argrepr = "NULL + " + argrepr
            elif kind == _LOCAL:
                argval = argrepr = varname(arg)
            elif kind == _JUMP_FORWARD or kind == _JUMP_BACKWARD or kind == _JUMP_ABS:
                argval = arg * 2 if kind == _JUMP_ABS else \
                    offset + 2 + (-arg if kind == _JUMP_BACKWARD else arg) * 2
                argrepr = "to " + repr(argval)
            elif kind == _COMPARE:
                argval = argrepr = dis.cmp_op[arg]
            elif kind == _FORMAT:
                argval, argrepr = dis.FORMAT_VALUE_CONVERTERS[arg & 0x3]
                argval = (argval, bool(arg & 0x4))
                if argval[1]:
                    argrepr = (argrepr + ", " if argrepr else "") + "with format"
            elif kind == _MAKE_FUNCTION:
                argval = arg
                argrepr = ", ".join(s for i, s in enumerate(dis.MAKE_FUNCTION_FLAGS) if arg & (1 << i))
            else:   # BINARY_OP
                argval = arg
                argrepr = dis._nb_ops[arg][1]
        else:
            arg = None
            extended = 0
        append(make(LeanInstruction, (_OPNAMES[op], op, arg, argval, argrepr, offset,
                                      lines[offset // 2] if offset // 2 < units else None)))
        offset += 2 + 2 * _CACHES[op]
    return out


# Opcodes with a name that still cannot run: inline cache entries where an instruction should be,
# placeholders, and 3.12+'s executor hook (only in specialised code).
_NOT_RUNNABLE = frozenset({"CACHE", "RESERVED", "ENTER_EXECUTOR"})


def check_opcodes(code: types.CodeType) -> None:
    """Refuse bytecode with an opcode the running CPython does not define.

    CPython stops with ``SystemError: unknown opcode`` there; ``dis`` shows such a byte as a cache
    entry (3.11, 3.12) or an unnamed ``<n>`` instruction that later steps would silently skip."""
    raw = code.co_code
    unknown, steps = _opcode_steps()
    i = 0
    end = len(raw)
    while i < end:
        op = raw[i]
        if unknown[op]:
            # (3.11+ read ``co_code`` back through a table that turns unknown opcodes into 0)
            op = getattr(code, "_co_code_adaptive", raw)[i]
            raise DecompilationError(
                f"unknown opcode {op} for CPython {sys.version_info[0]}.{sys.version_info[1]}",
                qualname=getattr(code, "co_qualname", code.co_name),
                offset=i,
                opname=f"<{op}>",
            )
        i += steps[op]


@functools.cache
def _opcode_steps() -> tuple[list[bool], list[int]]:
    """Per opcode: whether the running CPython cannot run it, and the bytes from it to the next
    instruction (its inline cache entries included)."""
    caches = getattr(dis, "_inline_cache_entries", None)
    unknown, steps = [], []
    for op in range(256):
        name = dis.opname[op]
        unknown.append(name.startswith("<") or name in _NOT_RUNNABLE)
        step = 2
        if isinstance(caches, (list, tuple)):
            step += 2 * caches[op] if op < len(caches) else 0
        elif hasattr(caches, "get"):        # a mapping by name (3.13+; 3.15: a frozendict)
            step += 2 * caches.get(name, 0)
        steps.append(step)
    return unknown, steps


def handled_opnames() -> frozenset[str]:
    """Raw opnames of the running CPython that the normalisation layer accepts."""
    return frozenset(_version_module().HANDLED)


def extended_arg_landings(raw: Sequence) -> dict[int, int]:
    """Offset of each ``EXTENDED_ARG`` -> offset of the instruction it extends.

    The compiler points a jump at the first code unit of its target, which is the target's
    ``EXTENDED_ARG`` prefix when its argument needs one (a jump back over a long loop body). The
    model drops the prefix and gives the instruction its whole argument, so a jump there lands on
    the instruction: passes that ask "does anything jump to this instruction" must see it so."""
    landings: dict[int, int] = {}
    pending: list[int] = []
    for ins in raw:
        if ins.opname == "EXTENDED_ARG":
            pending.append(ins.offset)
            continue
        for offset in pending:
            landings[offset] = ins.offset
        pending.clear()
    return landings


def forward_offsets(instrs: list[Instr], dropped: list[int], all_offsets: list[int]) -> dict[int, int]:
    """Map every original offset to the offset of the first kept instruction at or after it.

    Used to retarget jumps that land on dropped instructions.
    """
    kept = sorted({i.offset for i in instrs})
    mapping: dict[int, int] = {}
    j = 0
    for off in sorted(all_offsets):
        while j < len(kept) and kept[j] < off:
            j += 1
        if j < len(kept):
            mapping[off] = kept[j]
    return mapping



def async_for_entries_to_outer(table: list[ExceptionEntry], async_handlers: set[int]) -> list[ExceptionEntry]:
    """Give the ranges an ``END_ASYNC_FOR`` handler protected (the loop's ``__anext__`` await) to
    the handler around that ``END_ASYNC_FOR``, or drop them when there is none.

    The model folds that handler into ASYNC_FOR_ITER, which stops the loop; any other exception
    END_ASYNC_FOR re-raises, into the enclosing handler. Without this an ``async for`` inside a
    ``with`` or ``try`` body would cut the body's protected range in two.
    """
    def outer_of(offset: int, seen: set[int]) -> ExceptionEntry | None:
        around = next((o for o in table if o.start <= offset < o.end), None)
        if around is not None and around.target in async_handlers and around.target not in seen:
            return outer_of(around.target, seen | {around.target})
        return around if around is None or around.target not in async_handlers else None

    entries = []
    for e in table:
        if e.target not in async_handlers:
            entries.append(e)
            continue
        outer = outer_of(e.target, {e.target})
        if outer is not None:
            entries.append(ExceptionEntry(e.start, e.end, outer.target, outer.depth, outer.lasti))
    return entries


# Import the running version's module with the decompiler rather than during the first
# decompilation (inside torch.compile, that would count as compile time).
try:
    _version_module()
except DecompilationError:  # pragma: no cover - an unsupported CPython fails when used, not on import
    pass
