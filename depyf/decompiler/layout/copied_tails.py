"""Layout passes shared by the version modules of compilers that copy small return tails into each
path that reaches them (``Features.copies_return_tails``: 3.10, 3.12 and later): the copies become
jumps to one block again, as 3.11 lays the code out.

``chain_operand_copies`` finds the copies a chained comparison's conditional last operand gets;
``hoist_break_tails`` puts back the code after a ``while True`` loop that only its breaks' copies
keep.
"""

from __future__ import annotations

import bisect
import itertools

from depyf.decompiler.instructions import COPIED_BLOCK_LIMIT, FOR_ITERS, POP_JUMPS, Instr, copy_key


def chain_operand_copies(out: list[Instr], k: int, end: int, key) -> dict[int, tuple[int, int]]:
    """Copies of a chained comparison's last comparison and of the returning code after it, made in
    the branches of a conditional expression that computes the last operand
    (``return a < b <= (c if x else d)``): 3.10 and 3.12+ copy a small returning block into each
    path that jumps to it, so the branches no longer meet before the comparison as in 3.11.

    ``k`` is a failing test of the chain (JUMP_IF_FALSE_OR_POP) and ``end`` the return that ends the
    code reached by falling through to the chain's exit (the original, or the copy kept). A return
    between ``k`` and ``end`` is not in the source (the chain is one expression): it ends a copy of
    the code before ``end``, equal by ``key``, which becomes a jump to that code. A copy is at most
    ``COPIED_BLOCK_LIMIT`` straight-line instructions; neither it nor the code it copies reaches
    back past a place a jump lands on, and the copied code does not start where a conditional jump
    from before the copy lands (the start of the other branch, when both branches compute the same
    value).
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
        while n < COPIED_BLOCK_LIMIT and r - n > k and end - n > r and key(out[r - n]) == key(out[end - n]) \
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
    index = _LayoutIndex(out)
    for e in range(len(out) - 1, -1, -1):
        back = out[e]
        if back.opname != "JUMP" or back.target is None or back.target > back.offset \
                or (e + 1 < len(out) and out[e + 1].offset == back.offset + 1):
            continue
        h = index.first_at_or_after(back.target, e)
        if _goes_on_after_its_with(out, h, e):
            continue
        if out[h].opname in FOR_ITERS or index.furthest_target(h, e) > back.offset:
            continue    # the loop has an exit: the code after it is there
        targets = index.targets()
        tails: list[tuple[int, int]] = []
        for r in index.returns_between(h, e):
            s = _tail_after_exit_copy(out, h, r, exits, targets)
            if s is None or not 1 <= r - s <= 6 or _inside_inner_loop(out, h, e, r):
                continue
            if fits(s, r, back) and (
                    out[s].opname.startswith(("LOAD_", "DELETE_")) and out[s].opname != "DELETE_ATTR"
                    or out[s].opname.startswith("BUILD_") and out[s].argval == 0):
                tails.append((s, r))
        groups: dict[tuple, list[tuple[int, int]]] = {}
        for s, r in tails:
            key = tuple((*copy_key(ins), ins.lineno) for ins in out[s:r + 1])
            groups.setdefault(key, []).append((s, r))
        if len(groups) > 1:     # a constant is returned after the finally body: ``return 3`` in the try
            groups = {key: found for key, found in groups.items()
                      if [op for op, *_ in key] != ["LOAD_CONST", "RETURN_VALUE"]}
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
        index = _LayoutIndex(out)


class _LayoutIndex:
    """Facts about ``out`` that each loop's question would otherwise scan the code for, computed
    once (``hoist_break_tails`` makes a new one after each change): so code with many backward
    jumps (3.12+'s handlers, laid out last, jump back) costs near-linear time, not quadratic."""

    def __init__(self, out: list[Instr]):
        self.out = out
        self.offsets = [ins.offset for ins in out]
        self.ascending = all(a <= b for a, b in itertools.pairwise(self.offsets))
        self.returns = [k for k, ins in enumerate(out) if ins.opname == "RETURN_VALUE"]
        self._targets: set | None = None
        self._furthest: list[list[int]] | None = None

    def first_at_or_after(self, offset: int, default: int) -> int:
        """The first position whose offset is ``offset`` or later (``default``: none is)."""
        if not self.ascending:
            return next((k for k, ins in enumerate(self.out) if ins.offset >= offset), default)
        k = bisect.bisect_left(self.offsets, offset)
        return k if k < len(self.out) else default

    def returns_between(self, h: int, e: int) -> list[int]:
        """The positions of the returns from ``h`` up to ``e`` (not included)."""
        return self.returns[bisect.bisect_left(self.returns, h):bisect.bisect_left(self.returns, e)]

    def targets(self) -> set:
        if self._targets is None:
            self._targets = {ins.target for ins in self.out if ins.target is not None}
        return self._targets

    def furthest_target(self, h: int, e: int) -> int:
        """The furthest offset a jump from ``h`` to ``e`` (included) lands on (-1: none jumps):
        a table of the maxima of runs of 2**j instructions answers in two looks."""
        if e - h < 32:
            return max((ins.target for ins in self.out[h:e + 1] if ins.target is not None), default=-1)
        if self._furthest is None:
            level = [-1 if ins.target is None else ins.target for ins in self.out]
            self._furthest = [level]
            width = 1
            while 2 * width <= len(self.out):
                level = [max(level[k], level[k + width]) for k in range(len(level) - width)]
                self._furthest.append(level)
                width *= 2
        j = (e - h + 1).bit_length() - 1
        level = self._furthest[j]
        return max(level[h], level[e - (1 << j) + 1])


def _goes_on_after_its_with(out: list[Instr], h: int, e: int) -> bool:
    """Is the jump back at ``e`` (to ``h``) a with statement's handler going on after its
    ``__exit__`` suppressed an exception (POP_EXCEPT, the with's values popped), to code after the
    with that 3.12+ lay out before the handler? That closes no loop. A jump back to before the
    with (no BEFORE_WITH between ``h`` and ``e``) may: the with ends a ``while True`` body."""
    k = e - 1
    while k > 0 and out[k].opname == "POP_TOP":
        k -= 1
    if e - k < 3 or out[k].opname != "POP_EXCEPT":
        return False
    return not any(ins.opname in ("BEFORE_WITH", "BEFORE_ASYNC_WITH") for ins in out[h:e])


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
        while (
            q < len(out)
            and out[q].target is None
            and out[q].opname not in _NO_FALL
            and out[q].opname not in ("PUSH_EXC_INFO", "POP_EXCEPT", "WITH_EXCEPT_START", "CHECK_EXC_MATCH")
        ):
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
                                           or ins.opname in FOR_ITERS
                                           and ins.offset < at < ins.target)
               for ins in out[h + 1:e])
