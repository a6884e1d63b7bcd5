"""A ``break``'s copy of the returning code after its loop, made a jump to that code again.

A ``break`` jumps to the code after the loop (after its ``else`` clause). Where that code is a small
block ending in a return, 3.10 and 3.12+ copy it into the break (``Features.copies_return_tails``);
when the loop also has an exit (its test, its iterator running out), the block stays after the loop
too, where the exit runs into it. 3.11 keeps the jump, and so the control flow recovery reads the
copy as a ``break``. Read as a ``return`` in the loop, the copy is wrong where the break leaves a
protected region: the return's value would be computed under a handler that does not protect it.

``copied_tails.hoist_break_tails`` undoes the same copies in loops with no exit, where the code
after the loop is gone and only its copies are left.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable

from depyf.decompiler.instructions import COPIED_BLOCK_LIMIT, FOR_ITERS, Instr, copy_key
from depyf.decompiler.layout.copied_tails import _NO_FALL

# how many returns after a loop are looked at for the original (an else clause can return first)
_ORIGINALS_LOOKED_AT = 8


def share_break_tail_copies(
    out: list[Instr],
    same_place: Callable[[Instr, Instr], bool],
    closes_loop: Callable[[int], bool],
    made: Callable[[Instr, Instr], None],
) -> None:
    """Replace each copy, in a loop, of the returning code after that loop by a jump to it.

    Only code that runs without an exception counts (3.12+ lay except clauses out last, and a
    ``continue`` in one jumps back from there). The loops are the ranges from a place jumped back
    to up to the last jump back there (``closes_loop(position)`` says that jump closes a loop),
    innermost first; a return in a loop belongs to it, not to the loops around it.

    A copy is the end of a straight run of code that ends in that return and that starts where
    its line starts; the original is the first code after the loop that ends in a return with the
    same instructions and lines (``instructions.copy_key``), placed alike (``same_place``: the same
    handlers, and for 3.10 the same stack depth), also starting where its line starts. Both hold at
    least two instructions and at most ``COPIED_BLOCK_LIMIT``, and return a value they compute.
    A copy entered from code of a ``while`` loop's test line (3.10 and 3.12+ copy the test to the
    bottom of the loop) is where the test fails: the loop's exit, not a break.

    Same instructions, lines and handlers: the jump runs what the copy ran. ``made(jump,
    copy_start)`` is told of each jump made.
    """
    returns = [k for k, ins in enumerate(out) if ins.opname == "RETURN_VALUE"]
    if len(returns) < 2:
        return
    offsets = [ins.offset for ins in out]
    if any(a > b for a, b in itertools.pairwise(offsets)):
        return      # (offsets only go up in the code this reads)
    entered_from = _jumps_into(out, offsets)
    normal = _runs_without_exceptions(out, offsets)
    returns = [r for r in returns if normal[r]]
    last_back: dict[int, int] = {}
    for e, ins in enumerate(out):
        if ins.target is not None and ins.target <= ins.offset and normal[e] and closes_loop(e):
            last_back[ins.target] = e
    loops = sorted(((bisect.bisect_left(offsets, t), e) for t, e in last_back.items()),
                   key=lambda loop: loop[1] - loop[0])
    seen: set[int] = set()
    replace: dict[int, tuple[int, int]] = {}    # copy start -> (its return, the original's offset)
    for h, e in loops:
        after = bisect.bisect_right(returns, e)
        originals = returns[after:after + _ORIGINALS_LOOKED_AT]
        test_line = out[e].lineno if out[h].opname not in FOR_ITERS else None
        for r in returns[bisect.bisect_left(returns, h):bisect.bisect_left(returns, e)]:
            if r in seen:
                continue
            seen.add(r)
            p = r
            while p > h and out[p - 1].target is None and out[p - 1].opname not in _NO_FALL \
                    and not entered_from.get(p):
                p -= 1
            for q in originals:
                n = _common_tail(out, p, r, q, e, same_place)
                s, t = r - n + 1, q - n + 1
                if n >= 2 and _starts_block(out, s, p, entered_from) \
                        and _starts_block(out, t, e + 1, entered_from) \
                        and _returns_its_own_value(out[s:r + 1]):
                    if test_line is None or test_line not in _lines_entering(out, s, p, entered_from):
                        replace[s] = (r, out[t].offset)
                    break
    for s in sorted(replace, reverse=True):
        r, target = replace[s]
        jump = Instr("JUMP", out[s].offset, None, None, target, out[s].lineno)
        made(jump, out[s])
        out[s:r + 1] = [jump]


def _jumps_into(out: list[Instr], offsets: list[int]) -> dict[int, list[int]]:
    """position -> the positions of the jumps that land there."""
    found: dict[int, list[int]] = {}
    for k, ins in enumerate(out):
        if ins.target is not None:
            t = bisect.bisect_left(offsets, ins.target)
            if t < len(out) and offsets[t] == ins.target:
                found.setdefault(t, []).append(k)
    return found


def _runs_without_exceptions(out: list[Instr], offsets: list[int]) -> list[bool]:
    """For each position: does the code reach it from its start without raising?"""
    reached = [False] * len(out)
    work = [0] if out else []
    while work:
        k = work.pop()
        if k >= len(out) or reached[k]:
            continue
        reached[k] = True
        ins = out[k]
        if ins.opname not in _NO_FALL:
            work.append(k + 1)
        if ins.target is not None:
            work.append(bisect.bisect_left(offsets, ins.target))
    return reached


def _lines_entering(out: list[Instr], s: int, p: int, entered_from: dict[int, list[int]]) -> set:
    """The lines of the code that runs right before ``s`` (in the straight run from ``p``)."""
    if s > p:
        return {out[s - 1].lineno}
    lines = {out[k].lineno for k in entered_from.get(s, [])}
    if s > 0 and out[s - 1].opname not in _NO_FALL:
        lines.add(out[s - 1].lineno)
    return lines


def _common_tail(out: list[Instr], p: int, r: int, q: int, e: int,
                 same_place: Callable[[Instr, Instr], bool]) -> int:
    """How many instructions the code up to ``r`` (from ``p`` on) and the code up to ``q`` (after
    ``e``) end alike in: the same operation, value, line and place, no jumps."""
    n = 0
    while n < COPIED_BLOCK_LIMIT and r - n >= p and q - n > e:
        a, b = out[r - n], out[q - n]
        if a.target is not None or b.target is not None or a.lineno != b.lineno \
                or copy_key(a) != copy_key(b) or not same_place(a, b):
            break
        n += 1
    return n


# what an instruction of a copied block does to the stack (``CALL n`` pops its callable, the
# NULL or self beside it and its n arguments)
_PUSHES = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_CONST", "LOAD_GLOBAL", "LOAD_DEREF",
                     "LOAD_NAME", "PUSH_NULL"})
_KEEPS = frozenset({"LOAD_ATTR", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "DELETE_FAST",
                    "DELETE_NAME", "DELETE_GLOBAL", "DELETE_DEREF"})
_POPS = frozenset({"BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "BINARY_SUBSCR", "POP_TOP",
                   "STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"})
# how a block that reads nothing from the stack under it can start
_STARTS = _PUSHES | {"DELETE_FAST", "DELETE_NAME", "DELETE_GLOBAL", "DELETE_DEREF"}


def _returns_its_own_value(block: list[Instr]) -> bool:
    """Does ``block`` return a value it computes, never reading one from under it? (A finally
    body's copy before a ``return`` returns the value computed before it.) Blocks of other
    instructions are not taken."""
    depth = 0
    for ins in block[:-1]:
        name = ins.opname
        if name in _PUSHES:
            depth += 1
        elif name in _POPS:
            depth -= 1
        elif name == "CALL" and isinstance(ins.argval, int):
            depth -= ins.argval + 1
        elif name in ("BUILD_LIST", "BUILD_TUPLE", "BUILD_SET") and isinstance(ins.argval, int):
            depth += 1 - ins.argval
        elif name not in _KEEPS:
            return False
        if depth < 0:
            return False
    return block[-1].opname == "RETURN_VALUE" and depth == 1


def _starts_block(out: list[Instr], s: int, first: int, entered_from: dict[int, list[int]]) -> bool:
    """Does a block that reads nothing from under it start at ``s``: where straight code starts
    (``first``, or a place a jump lands on), or after code of another line?"""
    ins = out[s]
    if ins.opname not in _STARTS and not (ins.opname.startswith("BUILD_") and ins.argval == 0):
        return False
    if s == first or entered_from.get(s):
        return True
    before = out[s - 1]
    return before.target is not None or before.opname in _NO_FALL or before.lineno != ins.lineno
