"""Folding chains of conditional jumps into one ``and``/``or`` condition (and conditional
expressions used as conditions)."""

from __future__ import annotations

import ast
import bisect
import dataclasses
import functools

from depyf.decompiler.expressions import bool_op, negate, negated_operand
from depyf.decompiler.instructions import CONDITIONAL_JUMPS
from depyf.decompiler.layout.jumps import follow_jumps
from depyf.decompiler.structure.model import Context, ExitKind

COMPOUND_CALLS_PER_BLOCK = 64   # condition searches allowed per basic block (beyond a fixed 16,384)
_PASSING_ON = frozenset({"JUMP", "POP_TOP", "SWAP"})    # the code of blocks the search lands past
_HOLE = ast.Name("<the condition so far>", ast.Load())    # where a search's first operand goes
_ASKED = object()       # a fold searched once (see _compound)


def _filled(template: ast.expr, cond: ast.expr) -> ast.expr:
    """``template`` with ``cond`` in place of ``_HOLE``, which is always a first operand (of an
    and/or, or the test of a conditional expression): the nodes on the way to it are made anew
    (the template is shared), and an and/or given one of its own kind takes its values, as
    ``bool_op`` would have."""
    path = []
    node = template
    while node is not _HOLE:
        path.append(node)
        node = node.values[0] if isinstance(node, ast.BoolOp) else node.test
    for parent in reversed(path):
        if isinstance(parent, ast.BoolOp):
            same_kind = isinstance(cond, ast.BoolOp) and type(cond.op) is type(parent.op)
            cond = ast.BoolOp(parent.op, [*(cond.values if same_kind else [cond]), *parent.values[1:]])
        else:
            cond = ast.IfExp(cond, parent.body, parent.orelse)
    return cond


class Kept:
    """The places ``compound`` leaves alone: where the outcomes of the enclosing tests go.

    ``places`` are the positions, ``landings`` those and where each of their lone jumps leads (a
    search landing there is an outcome of an enclosing test too). ``order`` holds (landing, place)
    pairs sorted, so the places that matter to a region (``from_place``) are found without looking
    through those of the tests before it: a chain of n tests keeps n places at its end."""

    __slots__ = ("places", "landings", "order", "unplaced")

    def __init__(self, places: frozenset, landings: frozenset, order: list, unplaced: bool) -> None:
        self.places, self.landings, self.order, self.unplaced = places, landings, order, unplaced

    @classmethod
    def of(cls, places, past_jump) -> Kept:
        return cls(frozenset(), frozenset(), [], False).extended(places, past_jump)

    def extended(self, places, past_jump) -> Kept:
        order = list(self.order)
        unplaced = self.unplaced
        new = set()
        for p in places:
            if p in self.places or p in new:
                continue
            new.add(p)
            if p is None:
                unplaced = True
            else:
                bisect.insort(order, (past_jump(p), p))
        landings = {past_jump(p) for p in new} | new
        return Kept(self.places | new, self.landings | landings, order, unplaced)

    def __contains__(self, p) -> bool:
        return p in self.places

    def from_place(self, start: int) -> frozenset:
        """The places that are no position, or lead to ``start`` or later (a lone jump leads forward)."""
        found = frozenset(p for _, p in self.order[bisect.bisect_left(self.order, (start,)):])
        return found | {None} if self.unplaced else found


class CompoundConditions:
    """``compound``: the condition blocks that only the test so far reaches, folded into it."""

    def entered_from(self, block: int, members: set[int]) -> set[int] | None:
        """The blocks through which ``members`` enter ``block``, when nothing else does: members
        themselves and lone jumps only they reach (``(c if c else 2) or d``: the compiler threads
        the constant's branch through a jump to the next test). None when other code enters."""
        through: set[int] = set()
        for pred in self.cfg.blocks[block].preds:
            if pred in members:
                continue
            b = self.cfg.blocks[pred]
            if b.end != b.start + 1 or self.instrs[b.start].opname != "JUMP" or not set(b.preds) <= members:
                return None
            through.add(pred)
        return through

    def past_lone_jump(self, p: int | None, consumed: set[int] | None = None) -> int | None:
        """Where the block at ``p`` jumps when it is a lone forward ``JUMP`` (added to ``consumed``)."""
        if p is None or not self.cfg.is_leader(p) or self.cfg.block_at(p).end != p + 1 \
                or self.instrs[p].opname != "JUMP":
            return p
        target = self.cfg.pos(self.instrs[p].target)
        if target is None or target <= p:
            return p
        if consumed is not None:
            consumed.add(self.cfg.block_of[p])
        return target

    def _past_jump(self, p: int | None) -> int | None:
        """``past_lone_jump(p)``, remembered per position (it reads only the graph)."""
        memo = self._past_jumps
        if p not in memo:
            memo[p] = self.past_lone_jump(p)
        return memo[p]

    def compound(self, cond, t, f, members: set[int], stack: list, ctx: Context, keep=()):
        """Fold the condition blocks that only ``members`` reach into (cond, true, false, members).

        ``keep``: the places the outcomes of enclosing tests go to (a ``Kept``, built from a tuple
        of positions on the first call and extended by the calls it makes).

        The calls it makes grow ``members`` in place and take back what they added when their fold
        is not used (``_grow_members``): a copy per level held the set of every level at once, which
        in one ``or`` of n tests is n sets of up to n blocks. So the first call takes a copy.

        The fold does not depend on ``cond``, which only becomes its first operand: each call
        searches with ``_HOLE`` in its place (``_search``) and fills it in (``_filled``)."""
        top = not isinstance(keep, Kept)
        if top:
            keep = Kept.of(keep, self._past_jump)
            members = set(members)
            outer, self._folded = self._folded, {}
        try:
            template, t, f, members = self._compound(t, f, members, stack, ctx, keep)
        finally:
            if top:
                self._folded = outer
        return _filled(template, cond), t, f, members

    def _compound(self, t, f, members: set[int], stack: list, ctx: Context, keep: Kept):
        """``compound`` of the hole, answers remembered by ``_compound_key``. One that folds nothing
        is kept for the whole code object: an ``elif`` chain asks the same question once per
        branch, each time about every test after it. One that folds is kept, for one search from a
        test (``_folded``), once it is asked again: an attempt that is not used is made again in
        another way (``x if a else (y if b else ...)`` is tried as ``a or ...`` and then as a
        conditional expression), and searching again made the search exponential in the depth of
        nested conditional expressions. (Asked once, as each level of one long ``or`` is, nothing
        is kept: the blocks each level added would be n sets of up to n blocks.)"""
        self.compound_calls += 1
        if self.compound_calls > COMPOUND_CALLS_PER_BLOCK * len(self.cfg.blocks) + 16_384:
            raise self.error(t, "condition too complex (search limit reached)")
        tests = self._test_starts
        if not any(x in tests or self._past_jump(x) in tests for x in (t, f)):
            return _HOLE, t, f, members     # (no test to fold starts there: most ``if``s)
        key = self._compound_key(t, f, members, stack, ctx, keep)
        if key in self._unfolded:
            return _HOLE, t, f, members
        known = self._folded.get(key)
        if known is not None and known is not _ASKED:
            template, t, f, added = known
            self._grow_members(members, added)
            return template, t, f, members
        mark = len(self._members_added)
        template, t2, f2, out = self._search(t, f, members, stack, ctx, keep)
        if template is _HOLE:
            self._unfolded.add(key)
        elif known is _ASKED:
            self._folded[key] = (template, t2, f2, self._added_since(mark, members, out))
        else:
            self._folded[key] = _ASKED
        return template, t2, f2, out

    def _added_since(self, mark: int, members: set[int], out: set[int]) -> frozenset[int]:
        """The blocks a search from ``members`` (as they were at ``mark``) added to give ``out``:
        those grown in place are logged since ``mark``; ``out`` may be another set."""
        logged = {b for s, b in self._members_added[mark:] if s is members}
        if out is members:
            return frozenset(logged)
        return frozenset(out - members) | frozenset(logged & out)

    def _search(self, t, f, members: set[int], stack: list, ctx: Context, keep: Kept):
        """The folds from the test whose outcomes go to ``t`` and ``f`` (its condition ``_HOLE``)."""
        cond = _HOLE
        for _ in range(len(self.cfg.blocks) + 1):
            merged = False
            if t == f and t not in keep and self.classify(t, ctx) is ExitKind.GOTO:
                # both edges of the test go to the next test (the compiler folded ``A and <falsy
                # constant> or B``): A is only truth-tested, so this is ``(A and False) or B``
                pc = self.pure_condition(t, stack, members, ctx)
                if (
                    pc is not None
                    and pc.block not in members
                    and set(self.cfg.blocks[pc.block].preds) <= members
                ):
                    self._grow_members(members, (pc.block,))    # (its fold is always used)
                    cx, t2, f2, sub = self.compound(pc.cond, pc.true, pc.false, members, stack, ctx,
                                                    keep=keep)
                    cond = bool_op(ast.Or, bool_op(ast.And, cond, ast.Constant(False)), cx)
                    t, f, members = t2, f2, sub
                    continue
            for side in ("t", "f"):
                x = t if side == "t" else f
                other = f if side == "t" else t
                if x in keep or self.classify(x, ctx) is not ExitKind.GOTO:
                    continue
                x = self._past_jump(x)
                if x in keep.landings:
                    continue        # (an outcome of an enclosing test lands there too)
                pc = self.pure_condition(x, stack, members, ctx)
                through = (
                    self.entered_from(pc.block, members)
                    if pc is not None and pc.block not in members
                    else None
                )
                if through is None:
                    continue
                pc = dataclasses.replace(pc, consumed=pc.consumed | through)
                mark = self._grow_members(members, pc.consumed)
                cx, t2, f2, sub_members = self.compound(
                    pc.cond,
                    pc.true,
                    pc.false,
                    members,
                    stack,
                    ctx,
                    keep=keep.extended((other,), self._past_jump),
                )
                same = self.same_place
                if same(t2, f2) and not same(t2, other):
                    # both outcomes of the inner test go on alike (``a and (x if b else 3)``: the
                    # constant's branch joins the other): it is only evaluated
                    if side == "t":
                        cond, t, f = (
                            bool_op(ast.And, cond, bool_op(ast.Or, cx, ast.Constant(True))),
                            t2,
                            other,
                        )
                    else:
                        cond, t, f = (
                            bool_op(ast.Or, cond, bool_op(ast.And, cx, ast.Constant(False))),
                            other,
                            f2,
                        )
                elif side == "t" and same(f2, other):
                    cond, t, f = bool_op(ast.And, cond, cx), t2, other
                elif side == "t" and same(t2, other):
                    cond, t, f = bool_op(ast.And, cond, negated_operand(cx)), f2, other
                elif side == "f" and same(t2, other):
                    cond, t, f = bool_op(ast.Or, cond, cx), other, f2
                elif side == "f" and same(f2, other):
                    cond, t, f = bool_op(ast.Or, cond, negated_operand(cx)), other, t2
                else:
                    self._shrink_members(mark)
                    continue
                members = sub_members
                merged = True
                break
            if not merged:
                folded = self.conditional_condition(cond, t, f, members, stack, ctx, keep)
                if folded is None:
                    break
                cond, t, f, members = folded
        return cond, t, f, members

    def _grow_members(self, members: set[int], blocks) -> int:
        """Add ``blocks`` to ``members`` in place, each one it lacked logged; the mark to take back
        to (``_shrink_members``), which also takes back what the calls made since added."""
        mark = len(self._members_added)
        for b in blocks:
            if b not in members:
                members.add(b)
                self._members_added.append((members, b))
        return mark

    def _shrink_members(self, mark: int) -> None:
        """Take back every block added in place since ``mark``: each set is as it was then."""
        added = self._members_added
        while len(added) > mark:
            members, b = added.pop()
            members.discard(b)

    def _compound_key(self, t, f, members: set[int], stack: list, ctx: Context, keep) -> tuple:
        """What ``compound``'s choices depend on: the two targets, the stack's values, the context's
        loop and layers, and of ``members``, ``keep`` and the stops only what lies in the region
        the search can read (blocks from ``_region_low`` of either target on; other blocks are
        neither tested, nor predecessors of tested blocks or lone jumps, nor targets). Unless one
        handler covers the code, the handlers of all members count too (``same_protection``)."""
        low = self._region_low
        n = len(self.instrs)
        lo = min((low[self.cfg.block_of[p]] for p in (t, f) if p is not None and 0 <= p < n), default=0)

        # a place lies in the region when it is no instruction or its block is ``lo`` or later:
        # blocks are runs of positions in order, so when it is at or past the start of ``lo``
        start = self.cfg.blocks[lo].start if self.cfg.blocks else 0
        values = (tuple(stack), ctx.loop, ctx.layers)
        self._pinned.append(values)      # ids below stay those of live objects
        handlers = None if self._one_handler else frozenset(self._block_handlers[m] for m in members)
        kept = keep.from_place(start)
        return (t, f, tuple(map(id, values[0])), id(ctx.loop), tuple(map(id, ctx.layers)), handlers,
                self._members_from(members, lo), kept,
                frozenset(p for p in ctx.stops if p is None or p < 0 or p >= start))

    def _members_from(self, members: set[int], lo: int) -> frozenset[int]:
        """The blocks of ``members`` numbered ``lo`` or more, looking through the smaller of the
        set and the blocks from ``lo`` on: in one long ``or``, the members are the tests before
        and the region is the tests after, and each level looked through all of the former."""
        later = range(lo, len(self.cfg.blocks))
        if len(later) < len(members):
            return frozenset(members.intersection(later))
        return frozenset(m for m in members if m >= lo)

    def _lone_jump(self, block) -> bool:
        return block.end == block.start + 1 and self.instrs[block.start].opname == "JUMP"

    def _looked_at_low(self, block) -> int:
        """The smallest block index whose membership ``compound`` may ask about when it reads
        ``block``: the block itself and, for a test or a lone jump, its predecessors and theirs
        through lone jumps (``entered_from``, ``conditional_condition``)."""
        low = block.index
        if self._lone_jump(block) or self.instrs[block.end - 1].opname in CONDITIONAL_JUMPS:
            for p in block.preds:
                low = min(low, p)
                if self._lone_jump(self.cfg.blocks[p]):
                    low = min(low, *self.cfg.blocks[p].preds, p)
        return low

    def _lands_on_successors(self, block) -> bool:
        """Can the search land on (test, or ask about the predecessors of) a successor of ``block``?
        Only the outcomes of a test and where the blocks that only pass control on lead (lone jumps,
        a chained comparison's exits ``SWAP 2; POP_TOP`` and trampolines ``POP_TOP; JUMP``) are
        landed on; other code is only read through, as a value inside a test (``4 * (a if c else b)
        > 0``), whose predecessors nothing asks about. A branch of a conditional expression
        (``LOAD_CONST 3; JUMP``) is no such block: the code after the expression, entered from every
        branch, does not widen the region of each of its tests."""
        if self.instrs[block.end - 1].opname in CONDITIONAL_JUMPS:
            return True
        return block.end - block.start <= 2 and all(
            ins.opname in _PASSING_ON for ins in self.instrs[block.start : block.end]
        )

    @functools.cached_property
    def _test_starts(self) -> frozenset[int]:
        """The starts of the blocks that end in a conditional jump: only these are folded
        (``pure_condition`` reads no other block)."""
        return frozenset(b.start for b in self.cfg.blocks
                         if b.end > b.start and self.instrs[b.end - 1].opname in CONDITIONAL_JUMPS)

    @functools.cached_property
    def _region_low(self) -> list[int]:
        """For each block, the smallest block index among what ``compound`` may look at from
        there: the blocks it reaches by normal flow (itself included) and, of the blocks it may land
        on (itself and the successors of the blocks in ``_lands_on_successors``), what the search
        asks about there (``_looked_at_low``: their predecessors too). Code after the branches of
        an ``elif`` chain is reached through its bodies, never landed on: its many predecessors
        (every body) do not widen the region of each test. Strongly connected components first
        (iterative Tarjan), whose successors are finished before them."""
        blocks = self.cfg.blocks
        looked = [self._looked_at_low(b) for b in blocks]
        own = [
            min([b.index] + [looked[s] for s in b.succs]) if self._lands_on_successors(b) else b.index
            for b in blocks
        ]
        low_link, order, on_stack, comp_of = {}, {}, set(), {}
        stack: list[int] = []
        result = list(own)
        counter = 0
        for root in range(len(blocks)):
            if root in order:
                continue
            work = [(root, 0)]
            while work:
                b, i = work.pop()
                if i == 0:
                    order[b] = low_link[b] = counter
                    counter += 1
                    stack.append(b)
                    on_stack.add(b)
                succs = blocks[b].succs
                if i < len(succs):
                    work.append((b, i + 1))
                    s = succs[i]
                    if s not in order:
                        work.append((s, 0))
                    elif s in on_stack:
                        low_link[b] = min(low_link[b], order[s])
                    continue
                for s in succs:
                    if s in on_stack and comp_of.get(s) is None:
                        low_link[b] = min(low_link[b], low_link[s])
                if low_link[b] == order[b]:
                    members = []
                    while True:
                        x = stack.pop()
                        on_stack.discard(x)
                        comp_of[x] = b
                        members.append(x)
                        if x == b:
                            break
                    value = min(own[x] for x in members)
                    for x in members:
                        for s in blocks[x].succs:
                            if comp_of.get(s) is not None and comp_of[s] != b:
                                value = min(value, result[s])
                    for x in members:
                        result[x] = value
        return [min(r, low) for r, low in zip(result, looked, strict=True)]

    def conditional_condition(self, cond, t, f, members: set[int], stack: list, ctx: Context, keep=()):
        """``(a if cond else b)`` as a condition: both branches test and jump to the same two places.

        Returns (condition, true, false, members) or None. A branch's place is compared through
        unconditional jumps (the compiler jumps from one branch's test to the other's target).
        """
        if (
            t in keep
            or f in keep
            or t == f
            or self.classify(t, ctx) is not ExitKind.GOTO
            or self.classify(f, ctx) is not ExitKind.GOTO
        ):
            return None
        sides = []
        taken = set(members)
        for x in (t, f):
            # a branch may reach its test through a lone jump (``x if (c or a) else y``: ``c``'s
            # true edge jumps to the test ``a`` leads to as well)
            y = self.past_lone_jump(x)
            through = {self.cfg.block_of[x]} if y != x else set()
            if through and not set(self.cfg.block_at(x).preds) <= set(members):
                return None
            pc = self.pure_condition(y, stack, members)
            if (
                pc is None
                or pc.block in taken
                or not set(self.cfg.blocks[pc.block].preds) <= set(members) | through
            ):
                return None
            # each branch folds only the tests that it alone (with the test before) reaches: a
            # test both reach comes after the conditional expression. It keeps the other branch's
            # start; its own is no outcome of its tests (a jump back to it would be a loop's), and
            # left out, the search is the one ``compound`` made trying this branch as an and/or
            sub = self.compound(pc.cond, pc.true, pc.false, set(members) | pc.consumed | through, stack, ctx,
                                keep=keep.extended((f if x == t else t,), self._past_jump))
            folded = set(sub[3])    # (the members: its blocks)
            if taken & folded - set(members):
                return None
            taken |= folded
            sides.append(sub)
        (ca, ta, fa, _), (cb, tb, fb, _) = sides
        same = self.same_place
        if same(ta, tb) and same(fa, fb):
            other = cb
        elif same(ta, fb) and same(fa, tb):
            other = negate(cb)
        else:
            return None

        def lone_jump(x: int) -> int | None:
            """A block of one JUMP that only the blocks taken reach (it is taken too)."""
            if self.instrs[x].opname != "JUMP" or not self.cfg.is_leader(x) \
                    or self.cfg.block_at(x).end != x + 1 or self.cfg.block_of[x] in taken \
                    or not set(self.cfg.block_at(x).preds) <= taken:
                return None
            taken.add(self.cfg.block_of[x])
            return x

        for x in (ta, fa, tb, fb):  # the jumps from one branch's test to the other's targets
            follow_jumps(self.instrs, self.cfg.pos, x, back=True, steps=None, jump_at=lone_jump)
        return ast.IfExp(cond, ca, other), self.final_place(ta), self.final_place(fa), taken
