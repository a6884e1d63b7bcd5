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

import dis
import functools
import sys
import types
from dataclasses import dataclass, field

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


POP_JUMPS = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"})
CONDITIONAL_JUMPS = POP_JUMPS | {"JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"}
JUMPS = CONDITIONAL_JUMPS | {"JUMP", "FOR_ITER", "ASYNC_FOR_ITER"}
TERMINATORS = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP"})


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
    return _version_module().normalize(code)


# Opcodes with a name that still cannot run: inline cache entries where an instruction should be,
# placeholders, and 3.12+'s executor hook (only in specialised code).
_NOT_RUNNABLE = frozenset({"CACHE", "RESERVED", "ENTER_EXECUTOR"})


def check_opcodes(code: types.CodeType) -> None:
    """Refuse bytecode with an opcode the running CPython does not define.

    CPython stops with ``SystemError: unknown opcode`` there; ``dis`` shows such a byte as a cache
    entry (3.11, 3.12) or an unnamed ``<n>`` instruction that later steps would silently skip."""
    raw = code.co_code
    caches = getattr(dis, "_inline_cache_entries", None)
    i = 0
    while i < len(raw):
        op = raw[i]
        name = dis.opname[op]
        if name.startswith("<") or name in _NOT_RUNNABLE:
            # (3.11+ read ``co_code`` back through a table that turns unknown opcodes into 0)
            op = getattr(code, "_co_code_adaptive", raw)[i]
            raise DecompilationError(f"unknown opcode {op} for CPython {sys.version_info[0]}.{sys.version_info[1]}",
                                     qualname=getattr(code, "co_qualname", code.co_name), offset=i,
                                     opname=f"<{op}>")
        if isinstance(caches, (list, tuple)):
            i += 2 * caches[op]
        elif hasattr(caches, "get"):        # a mapping by name (3.13+; 3.15: a frozendict)
            i += 2 * caches.get(name, 0)
        i += 2


# 3.13+: conditional jumps take exact bools (TO_BOOL, dropped by normalisation, converts first), so
# a block of jumps alone cannot raise; before, a jump calls ``__bool__`` itself.
JUMPS_CANNOT_RAISE = sys.version_info >= (3, 13)


@functools.cache
def copies_loop_tests() -> bool:
    """Does the running compiler copy a ``while`` loop's test to the bottom of its body?

    3.10 to 3.13 do (the end of the body runs the copy; only a written ``continue`` jumps back to
    the test at the top), 3.14 does not. Asked of the compiler itself rather than kept per version."""
    probe = compile("while a:\n    b()\n", "<probe>", "exec")
    return sum(ins.argval == "a" for ins in dis.get_instructions(probe)) > 1


def handled_opnames() -> frozenset[str]:
    """Raw opnames of the running CPython that the normalisation layer accepts."""
    return frozenset(_version_module().HANDLED)


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


def chain_operand_copies(out: list[Instr], k: int, end: int, key) -> dict[int, tuple[int, int]]:
    """Copies of a chained comparison's last comparison and of the returning code after it, made in
    the branches of a conditional expression that computes the last operand
    (``return a < b <= (c if x else d)``): 3.10 and 3.12+ copy a small returning block into each
    path that jumps to it, so the branches no longer meet before the comparison as in 3.11.

    ``k`` is a failing test of the chain (JUMP_IF_FALSE_OR_POP) and ``end`` the return that ends the
    code reached by falling through to the chain's exit (the original, or the copy kept). A return
    between ``k`` and ``end`` is not in the source (the chain is one expression): it ends a copy of
    the code before ``end``, equal by ``key``, which becomes a jump to that code. A copy is at most
    8 straight-line instructions; neither it nor the code it copies reaches back past a place a
    jump lands on, and the copied code does not start where a conditional jump from before the
    copy lands (the start of the other branch, when both branches compute the same value).
    Returns ``{first: (last, target offset)}`` for each copy, which the caller replaces by a jump.
    """
    landing: dict[int, list[int]] = {}  # offset -> positions of the jumps that land there
    for j, ins in enumerate(out):
        if ins.target is not None:
            landing.setdefault(ins.target, []).append(j)
    found: dict[int, tuple[int, int]] = {}
    for r in range(k + 1, end):
        if out[r].opname != "RETURN_VALUE":
            continue
        n = 0   # out[r - n + 1:r + 1] copies out[end - n + 1:end + 1]
        while n < 8 and r - n > k and end - n > r and key(out[r - n]) == key(out[end - n]) \
                and out[r - n].target is None and out[end - n].target is None:
            if n and (out[r - n + 1].offset in landing or out[end - n + 1].offset in landing):
                break   # both start at most where a jump lands (where the branches meet)
            if any(j < r and out[j].opname in POP_JUMPS for j in landing.get(out[end - n].offset, ())):
                break   # the start of the other branch
            n += 1
        at = end - n + 1
        if n >= 2 and any(out[x].opname in ("COMPARE_OP", "IS_OP", "CONTAINS_OP") for x in range(at, end)):
            found[r - n + 1] = (r, out[at].offset)
    return found


_NO_FALL = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP"})


def hoist_break_tails(out: list[Instr], fits, made) -> None:
    """Put back the code after a ``while True`` loop that 3.10 and 3.12+ only keep as copies in
    its breaks.

    A ``break`` jumps to the code after the loop; where that is a small block ending in a return,
    the compiler copies it into the break, and when nothing else reaches it (the loop has no other
    exit) the block after the loop is gone. A break that leaves an except clause, a try/finally or
    a with runs POP_EXCEPT, the finally body or the with's exit first, then the copy: as source
    that is only ``break`` (``return x`` there reads ``x`` before leaving, so what follows is the
    return alone). Such copies (straight-line code of at least two instructions that starts with
    a load or a delete of a name and ends in a return, right after a copy of a region's exit,
    outside loops nested in this one, and ``fits(first, return, back jump)``) in a loop that is no
    for loop and has no other exit, all alike, become jumps to one copy placed after the loop's
    closing jump (or after the last handler that jumps back into the loop, as 3.12+ lays out a
    with's handler) at the odd offset after it, which is 3.11's layout; ``made(new, copied, back
    jump)`` is told of each instruction of that copy. ``return 3`` in a try/finally loads its
    constant after the finally body: where copies differ, those that only return a constant stay
    (one other kind of copy must remain).
    """
    exits = _region_exit_copies(out)
    for e in range(len(out) - 1, -1, -1):
        back = out[e]
        if back.opname != "JUMP" or back.target is None or back.target > back.offset \
                or (e + 1 < len(out) and out[e + 1].offset == back.offset + 1):
            continue
        h = next((k for k, ins in enumerate(out) if ins.offset >= back.target), e)
        if out[h].opname in ("FOR_ITER", "ASYNC_FOR_ITER") \
                or any(ins.target is not None and ins.target > back.offset for ins in out[h:e + 1]):
            continue    # the loop has an exit: the code after it is there
        targets = {ins.target for ins in out if ins.target is not None}
        tails: list[tuple[int, int]] = []
        for r in range(h, e):
            if out[r].opname != "RETURN_VALUE" or _inside_inner_loop(out, h, e, r):
                continue
            s = _tail_after_exit_copy(out, h, r, exits, targets)
            if s is not None and 1 <= r - s <= 6 and fits(s, r, back) and (
                    out[s].opname.startswith(("LOAD_", "DELETE_")) and out[s].opname != "DELETE_ATTR"
                    or out[s].opname.startswith("BUILD_") and out[s].argval == 0):
                tails.append((s, r))
        groups: dict[tuple, list[tuple[int, int]]] = {}
        for s, r in tails:
            key = tuple((ins.opname, repr(ins.argval), ins.lineno) for ins in out[s:r + 1])
            groups.setdefault(key, []).append((s, r))
        if len(groups) > 1:     # a constant is returned after the finally body: ``return 3`` in the try
            groups = {key: found for key, found in groups.items()
                      if [op for op, _, _ in key] != ["LOAD_CONST", "RETURN_VALUE"]}
        if len(groups) != 1:
            continue
        tails = next(iter(groups.values()))
        # past the handlers laid out after the closing jump that jump back into the loop (3.12+
        # puts a with's handler there): the loop ends with the last of them
        last = max([q for q in range(e + 1, len(out)) if out[q].opname == "JUMP" and out[q].target is not None
                    and out[h].offset <= out[q].target <= back.offset] + [e])
        if last + 1 < len(out) and out[last + 1].offset == out[last].offset + 1:
            continue
        offset = out[last].offset + 1
        s0, r0 = tails[0]
        block = [Instr(ins.opname, offset, ins.arg, ins.argval, None, ins.lineno, ins.slots, dict(ins.extra))
                 for ins in out[s0:r0 + 1]]
        for new, old in zip(block, out[s0:r0 + 1], strict=True):
            made(new, old, back)
        out[last + 1:last + 1] = block
        for s, r in reversed(tails):
            jump = Instr("JUMP", out[s].offset, None, None, offset, out[s].lineno)
            made(jump, out[s], out[s])
            out[s:r + 1] = [jump]


def _region_exit_copies(out: list[Instr]) -> list[list[tuple]]:
    """What a path leaving a region runs before going on: an except clause's POP_EXCEPT, each
    straight-line finally body (between a handler's PUSH_EXC_INFO and its ``RERAISE 0``) and a
    with's exit call."""
    found = [[("POP_EXCEPT", "None")],
             [("LOAD_CONST", "None")] * 3 + [("CALL", "2"), ("POP_TOP", "None")],
             [("LOAD_CONST", "None")] * 3 + [("CALL", "2"), ("AWAIT", "None"), ("POP_TOP", "None")]]
    for p, ins in enumerate(out):
        if ins.opname != "PUSH_EXC_INFO":
            continue
        q = p + 1
        while q < len(out) and out[q].target is None and out[q].opname not in _NO_FALL \
                and out[q].opname not in ("PUSH_EXC_INFO", "POP_EXCEPT", "WITH_EXCEPT_START", "CHECK_EXC_MATCH"):
            q += 1
        if q > p + 1 and q < len(out) and out[q].opname == "RERAISE" and out[q].argval == 0:
            found.append([(x.opname, repr(x.argval)) for x in out[p + 1:q]])
    return found


def _tail_after_exit_copy(out: list[Instr], h: int, r: int, exits: list[list[tuple]],
                          targets: set) -> int | None:
    """Where the code ending in the return at ``r`` starts right after a copy of a region's exit
    (``_region_exit_copies``), the latest such place; None when there is none."""
    p = r
    while p > h and out[p - 1].target is None and out[p - 1].opname not in _NO_FALL \
            and out[p].offset not in targets:
        p -= 1
    keys = [(x.opname, repr(x.argval)) for x in out[p:r + 1]]
    for s in range(r, p, -1):
        if any(out[x].offset in targets for x in range(s + 1, r + 1)):
            break
        if any(len(body) <= s - p and keys[s - p - len(body):s - p] == body for body in exits):
            if keys[s - p - 1][0] == "POP_EXCEPT" and s + 3 <= r and out[s].opname == "LOAD_CONST" \
                    and out[s].argval is None and out[s + 1].opname.startswith("STORE_") \
                    and out[s + 2].opname.startswith("DELETE_") and out[s + 1].argval == out[s + 2].argval:
                return s + 3    # after the cleanup of ``except E as name``
            return s
    return None


def _inside_inner_loop(out: list[Instr], h: int, e: int, r: int) -> bool:
    """Is ``r`` inside a loop nested in the loop from ``h`` to ``e``?"""
    at, head = out[r].offset, out[h].offset
    return any(ins.target is not None and (ins.opname == "JUMP" and head < ins.target <= at < ins.offset
                                           or ins.opname in ("FOR_ITER", "ASYNC_FOR_ITER")
                                           and ins.offset < at < ins.target)
               for ins in out[h + 1:e])


# Import the running version's module with the decompiler rather than during the first
# decompilation (inside torch.compile, that would count as compile time).
try:
    _version_module()
except DecompilationError:  # pragma: no cover - an unsupported CPython fails when used, not on import
    pass
