"""Copies of a chained comparison's code and of returns that compilers copying return tails
(``Features.copies_return_tails``) make in value-position and/or and chained comparisons, laid
out as 3.12 and later do; each becomes a jump again, as 3.11 lays the code out."""

from __future__ import annotations

import bisect
from collections.abc import Callable

from depyf.decompiler.instructions import COPIED_BLOCK_LIMIT, Instr, copy_key
from depyf.decompiler.layout.copied_tails import chain_operand_copies

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
            (n for n in range(1, COPIED_BLOCK_LIMIT + 1)
             if t + 2 + n <= len(out) and out[t + 1 + n].opname == "RETURN_VALUE"),
            None,
        )
        tail = out[t + 2:t + 2 + m] if m is not None else []
        if not tail or any(x.target is not None or x.opname in _LEAVES for x in tail[:-1]) or t - m <= k \
                or out[t - m - 1].opname not in _COMPARES \
                or [copy_key(x) for x in out[t - m:t]] != [copy_key(x) for x in tail] \
                or any(x.target is not None for x in out[t - m:t]):
            continue
        targeted = {x.target for x in out if x.target is not None}
        if any(x.offset in targeted for x in out[t - m:t]) or any(x.offset in targeted for x in tail[1:]):
            continue
        replace.update(chain_operand_copies(out, k, t - 1, copy_key))
        replace[t - m] = (t - 1, out[t + 2].offset)
    for a in sorted(replace, reverse=True):
        last, target = replace[a]
        out[a:last + 1] = [Instr("JUMP", out[a].offset, None, None, target, out[a].lineno, out[a].slots)]


_COMPARES = frozenset({"COMPARE_OP", "IS_OP", "CONTAINS_OP"})


def share_duplicated_returns(out: list[Instr]) -> None:
    """``return a < b < c`` (and ``return x and y`` shapes): 3.12+ copy the ``RETURN_VALUE`` of the
    join into the path that fell through, 3.11 jumped to one shared ``RETURN_VALUE``. That copy
    becomes a jump to the target's ``RETURN_VALUE`` again, so the value-position and/or (or chained
    comparison) ends at its join as in 3.11."""
    index_of = {ins.offset: k for k, ins in enumerate(out)}
    targeted = {ins.target for ins in out if ins.target is not None}
    ends = _ends_of_straight_runs(out, targeted)
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
        r = min(t, ends[k])
        if join == t + 2 and r >= k + 3 and [copy_key(x) for x in out[r - 2:r]] == \
                [copy_key(x) for x in tail[:2]]:
            continue    # the whole tail is copied (``return`` popping a loop's iterator): see below
        if r < t and out[r].opname == "RETURN_VALUE" and out[r].offset not in targeted:
            copy = out[r]
            out[r] = Instr("JUMP", copy.offset, None, None, out[join].offset, copy.lineno, copy.slots)


def _ends_of_straight_runs(out: list[Instr], targeted: set[int]) -> dict[int, int]:
    """For each value-keeping test ``k`` of an and/or chain, where the code falling through from
    it stops: the first instruction after it that leaves (``_LEAVES``), that a jump enters, or that
    is a test jumping elsewhere than ``k`` does (where the chain ends: its tests all jump to one
    join). Two backward passes, so a chain of n tests costs n steps, not n squared."""
    stop_at = [len(out)] * (len(out) + 1)     # the first place from r on that stops every run
    for r in range(len(out) - 1, -1, -1):
        stop_at[r] = r if out[r].opname in _LEAVES or out[r].offset in targeted else stop_at[r + 1]
    tests = [k for k, x in enumerate(out) if x.opname in _VALUE_JUMPS]
    ends: dict[int, int] = {}
    other_target = len(out)     # the next test after this one that jumps elsewhere than it
    for i in range(len(tests) - 1, -1, -1):
        k = tests[i]
        if i + 1 < len(tests) and out[tests[i + 1]].target != out[k].target:
            other_target = tests[i + 1]
        ends[k] = min(stop_at[k + 1], other_target)
    return ends


def share_value_tail_copies(out: list[Instr], same_protection: Callable[[Instr, Instr], bool],
                            placed: Callable[[Instr, Instr], None] | None = None) -> None:
    """``x = a and (b if c else d)``, ``return a or (b if c else d)``: the statement's code after
    the value (``STORE_FAST x; LOAD_FAST x; RETURN_VALUE``) ends the function, so a compiler that
    copies return tails copies it into the branch of the right operand that fell through to it;
    the value-keeping test still jumps to the original. Each such copy becomes a jump to the
    original again: the same straight-line code, under the same handlers, run on the same stack.
    (``same_protection(copy, original)``: are the two instructions under the same handler?
    ``placed(jump, first)``: the new jump takes the place of the copy's first instruction.)"""
    index_of = {ins.offset: k for k, ins in enumerate(out)}
    targeted = {ins.target for ins in out if ins.target is not None}
    keys = [copy_key(x) for x in out]
    where_key: dict[tuple, list[int]] = {}     # each key's places, in the code's order
    for k, key in enumerate(keys):
        where_key.setdefault(key, []).append(k)
    copies_of: dict[int, list[int]] = {}       # tail start -> where code equal to the tail starts
    replace: dict[int, tuple[int, int]] = {}
    for k, ins in enumerate(out):
        t = index_of.get(ins.target) if ins.opname in _VALUE_JUMPS else None
        if t is None or t <= k:
            continue
        m = next((n for n in range(1, COPIED_BLOCK_LIMIT + 1)
                  if t + n <= len(out) and out[t + n - 1].opname == "RETURN_VALUE"), None)
        if m is None:
            continue
        tail = out[t:t + m]
        if any(x.target is not None or x.opname in _LEAVES for x in tail[:-1]) \
                or any(x.offset in targeted for x in tail[1:]):
            continue
        if t not in copies_of:
            copies_of[t] = [r for r in where_key[keys[t]] if keys[r:r + m] == keys[t:t + m]]
        # the copies between the jump and the tail, taken in the code's order, none overlapping
        # the one taken before it
        free = k + 1
        for r in copies_of[t][bisect.bisect_left(copies_of[t], free):]:
            if r + m > t:
                break
            if r >= free and r not in replace and not any(x.offset in targeted for x in out[r + 1:r + m]) \
                    and all(same_protection(a, b) for a, b in zip(out[r:r + m], tail, strict=True)):
                replace[r] = (r + m - 1, out[t].offset)
                free = r + m
    for a in sorted(replace, reverse=True):
        last, target = replace[a]
        jump = Instr("JUMP", out[a].offset, None, None, target, out[a].lineno, out[a].slots)
        if placed is not None:
            placed(jump, out[a])
        out[a:last + 1] = [jump]
