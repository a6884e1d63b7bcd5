"""Graph analyses of one code object (loop heads, dominators, joins) and navigation through
unconditional jumps."""

from __future__ import annotations

from depyf.decompiler.dominators import EXIT, PostDominators, common_post_dominator, post_dominators
from depyf.decompiler.instructions import FOR_ITERS, features, protection_key
from depyf.decompiler.layout.jumps import follow_jumps
from depyf.decompiler.structure.model import Context, Loop


class GraphAnalysis:
    """Back edges, natural loops, post-dominator joins; where jumps lead."""

    def _back_edge_targets(self) -> dict[int, list[int]]:
        """Position of every loop head -> positions of the jumps back to it.

        A backward jump is a loop's back edge when its target dominates it; ``handlers_laid_out_last``
        also means jumps back to code placed earlier (the code after a try statement, jumped to from
        its handlers).
        """
        found: dict[int, list[int]] = {}
        idom = None
        for i, ins in enumerate(self.instrs):
            if ins.target is not None and ins.opname not in FOR_ITERS \
                    and not ins.extra.get("no_interrupt"):
                t = self.cfg.pos(ins.target)
                if t is not None and t <= i and self.cfg.block_of[i] in self.cfg.reachable:
                    if idom is None:
                        idom = self._dominators()
                    if self._dominates(self.cfg.block_of[t], self.cfg.block_of[i], idom):
                        found.setdefault(t, []).append(i)
        return found

    def _dominators(self) -> dict[int, int]:
        """Immediate dominator of every block (exception edges count): post-dominators of the
        reversed graph, whose exit is the entry block. Computed once (back edges and joins)."""
        if self._idom is not None:
            return self._idom
        blocks = self.cfg.blocks
        nodes = {b.index for b in blocks}
        preds = {b.index: list(b.preds) + list(b.exc_preds) for b in blocks}
        if blocks:
            preds[0].append(EXIT)  # the entry is entered from outside (the reversed graph's exit)
        self._idom = post_dominators(nodes, preds)
        return self._idom

    @staticmethod
    def _dominates(a: int, b: int, idom: dict[int, int]) -> bool:
        if isinstance(idom, PostDominators):
            enter, leave = idom.times()     # a constant-time ancestor test in the tree
            if a in enter and b in enter:
                return enter[a] <= enter[b] and leave[b] <= leave[a]
        for _ in range(len(idom) + 2):
            if b == a:
                return True
            if b is EXIT:
                return False
            b = idom.get(b, EXIT)
        return False

    def loop_blocks(self, header: int, sources: list[int]) -> frozenset[int]:
        """Blocks of the natural loop: those reaching a back-edge source without the header."""
        hb = self.cfg.block_of[header]
        body = {hb}
        work = [self.cfg.block_of[s] for s in sources]
        while work:
            b = work.pop()
            if b in body:
                continue
            body.add(b)
            work.extend(self.cfg.blocks[b].preds)
            work.extend(self.cfg.blocks[b].exc_preds)
        return frozenset(body)

    def ipdom(self, loop: Loop | None) -> dict[int, int]:
        key = _loop_key(loop) if loop else None
        if key not in self._pdoms:
            blocks = self.cfg.blocks
            if loop is None:
                nodes = {b.index for b in blocks}
                succs = {b.index: list(b.succs) for b in blocks}
            else:
                nodes, starts, tails = self._loop_parts(loop)
                entries = starts | {self.cfg.block_of[p] for p in loop.continues if self.cfg.is_leader(p)}
                succs = {
                    n: [] if n in tails else [x for x in blocks[n].succs if x in nodes and x not in entries]
                    for n in nodes
                }
            self._pdoms[key] = post_dominators(nodes, succs)
        return self._pdoms[key]

    def _loop_parts(self, loop: Loop) -> tuple[set[int], set[int], set[int]]:
        """The blocks of ``loop`` without its header's; those where a round starts (the header's, and
        a folded test's first body block); those a round ends in midway (a copied test inside)."""
        block_of = self.cfg.block_of
        starts = {block_of[loop.header]}
        if loop.body_start is not None:
            starts.add(block_of[loop.body_start])
        nodes = set(loop.blocks) - {block_of[loop.header]}
        tails = {block_of[p] for p in loop.continues if not self.cfg.is_leader(p)}
        return nodes, starts, tails

    def join_at_body_end(self, a: int, b: int, loop: Loop) -> int | None:
        """Where paths from ``a`` and ``b`` meet on their way to the end of ``loop``'s body, the paths
        that leave it sooner (``continue``, ``break``, ``return``, ``raise``) left out: in
        ``if x: (if y: continue); z()`` the code after the ``if`` is where both branches go on,
        though the ``continue`` never gets there. None where either cannot reach the body's end.
        The body ends at the last block (in the code's order) that goes back to the loop's start."""
        key = _loop_key(loop)
        if key not in self._body_end_pdoms:
            self._body_end_pdoms[key] = self._body_end_post_dominators(loop)
        ipdom = self._body_end_pdoms[key]
        ba, bb = self.cfg.block_of[a], self.cfg.block_of[b]
        if ba not in loop.blocks and bb not in loop.blocks:
            # neither goes back to the loop's start (``...; break`` ends the body): every path
            # from them leaves the loop, and they meet where the whole code says
            return self.join_within(a, b, None)
        if ba not in ipdom or bb not in ipdom:
            return None
        j = common_post_dominator(ba, bb, ipdom)
        return None if j is EXIT else self.cfg.blocks[j].start

    def _body_end_post_dominators(self, loop: Loop) -> dict[int, int]:
        """Post-dominators of the blocks of ``loop`` that reach the end of its body, with that end
        as their only exit."""
        blocks = self.cfg.blocks
        nodes, starts, tails = self._loop_parts(loop)
        going_back = tails | {n for n in nodes if any(x in starts for x in blocks[n].succs)}
        if not going_back:
            return {}
        end = max(going_back, key=lambda n: blocks[n].start)
        preds: dict[int, list[int]] = {n: [] for n in nodes}
        for n in nodes:
            if n not in tails:
                for x in blocks[n].succs:
                    if x in nodes and x not in starts:
                        preds[x].append(n)
        reaching, work = {end}, [end]
        while work:
            for p in preds[work.pop()]:
                if p not in reaching:
                    reaching.add(p)
                    work.append(p)
        kept = {n: [] if n == end else [x for x in blocks[n].succs if x in reaching and x not in starts]
                for n in reaching}
        return post_dominators(reaching, kept)

    def join_by_dominators(self, test: int, a: int, b: int, loop: Loop | None) -> int | None:
        """Where the branches at ``a`` and ``b`` of the conditional jump at ``test`` meet when paths
        of both leave sooner (``return``, ``raise``), so that nothing but the exit post-dominates
        them: the first block, in the code's order, that more than one way enters, whose
        immediate dominator is the test's block, that both branches reach, in the same protected
        code, or where a try statement inside it starts, and in the same loop's body (None: the
        whole code)."""
        if self._dominator_children is None:
            children: dict[int, list[int]] = {}
            for block, parent in self._dominators().items():
                if block is not EXIT and parent is not EXIT:
                    children.setdefault(parent, []).append(block)
            self._dominator_children = children
        blocks = self.cfg.blocks
        # (a meeting place in the same protected code)
        home = protection_key(blocks[self.cfg.block_of[test]].handler)
        merges = sorted((m for m in self._dominator_children.get(self.cfg.block_of[test], [])
                         if len(set(blocks[m].preds)) > 1 and self.in_loop_body(m, loop)
                         and (protection_key(blocks[m].handler) == home or self._try_starts_at(m, test))),
                        key=lambda m: blocks[m].start)
        for m in merges:
            if self._reaches(self.cfg.block_of[a], m) and self._reaches(self.cfg.block_of[b], m):
                return blocks[m].start
        return None

    def in_loop_body(self, block: int, loop: Loop | None) -> bool:
        """Is ``block`` code of ``loop``'s body: one of the loop's blocks, or code of the body that
        never goes back (``if p: break`` then ``return 4``), which is not where the loop's breaks
        and exit go, nor a copy of that code (a compiler that copies return tails copies a
        returning tail after the loop into each ``break``), nor reached going forward from there?
        (None: every block.)"""
        if loop is None or block in loop.blocks:
            return True
        places = [p for p in (*loop.breaks, loop.after) if p is not None and p < len(self.instrs)]
        exits = {self.cfg.block_of[p] for p in places}
        start = self.cfg.blocks[block].start
        return block not in exits and not any(self.same_place(start, p) for p in places) \
            and not any(self._reaches(e, block) for e in exits)

    def _try_starts_at(self, block: int, test: int) -> bool:
        """Does a try statement start at ``block``, inside the code that protects ``test``? Its
        protection is entered there: every way in comes from outside it."""
        inner, outer = self.cfg.handler_chain(self.cfg.blocks[block].start), self.cfg.handler_chain(test)
        if len(inner) <= len(outer) or inner[len(inner) - len(outer):] != outer:
            return False
        mine = protection_key(self.cfg.blocks[block].handler)
        return all(protection_key(self.cfg.blocks[p].handler) != mine for p in self.cfg.blocks[block].preds)

    def _reaches(self, start: int, goal: int, limit: int = 4096, avoiding: int | None = None) -> bool:
        """Is block ``goal`` reachable from block ``start`` by forward jumps and fall-through (not
        through block ``avoiding``)?"""
        blocks = self.cfg.blocks
        seen, work = {start, avoiding}, [start]
        while work and len(seen) < limit:
            n = work.pop()
            if n == goal:
                return True
            for x in blocks[n].succs:
                if x not in seen and blocks[x].start > blocks[n].start:
                    seen.add(x)
                    work.append(x)
        return False

    def join_of(self, a: int, b: int, ctx: Context) -> int | None:
        return self.join_within(a, b, ctx.loop)

    def join_within(self, a: int, b: int, loop: Loop | None) -> int | None:
        """Where paths from ``a`` and ``b`` meet, among ``loop``'s blocks (the whole code: None)."""
        ipdom = self.ipdom(loop)
        ba, bb = self.cfg.block_of[a], self.cfg.block_of[b]
        if ba not in ipdom or bb not in ipdom:
            return None
        j = common_post_dominator(ba, bb, ipdom)
        return None if j is EXIT else self.cfg.blocks[j].start

    def reraises(self, p: int | None) -> bool:
        """Does the block at ``p`` only re-raise the exception being handled?

        ``RERAISE`` (no except clause matched) or, ending ``except*`` clauses, ``SWAP 2; POP_EXCEPT;
        RERAISE 0`` (what they left unhandled).
        """
        if p is None or p >= len(self.instrs):
            return False
        ops = self.instrs[p:self.cfg.block_at(p).end]
        return bool(ops) and ops[-1].opname == "RERAISE" \
            and all(o.opname in ("SWAP", "POP_EXCEPT") for o in ops[:-1])

    def reraises_unthreaded(self, p: int | None) -> bool:
        """``reraises``, except at the end of a finally body whose copies in it became jumps to it
        (``thread_copied_reraises``): there the code before it ends."""
        return self.reraises(p) and p not in self.threaded_finally_ends

    def follow_trivial(self, p: int | None, backward: bool = False) -> int | None:
        """Follow blocks made only of POP_TOP and a forward JUMP; the position finally reached.

        With ``backward``, also backward jumps that are no loop's jump back to its head (with
        ``handlers_laid_out_last`` the code after a try statement comes before its handler, which jumps
        back to it; that code may be a loop's head, which the handler does not belong to).
        """
        backward = backward and features().handlers_laid_out_last
        back = (lambda t, j: not self.jumps_back_to_its_loop(j, t)) if backward else False
        return follow_jumps(self.instrs, self.cfg.pos, p, back=back, jump_at=self._popping_jump)

    def jumps_back_to_its_loop(self, j: int, t: int) -> bool:
        """Is the jump at ``j`` to ``t`` a loop's jump back to its head (a round's end or a
        ``continue``)? A jump back to a loop's head from outside the loop is none: with
        ``handlers_laid_out_last`` an except clause lies after the loop that follows its try
        statement, and jumps back to it."""
        return j in self.back_edge_targets.get(t, ())

    def _popping_jump(self, p: int) -> int | None:
        """The JUMP that ends the block at ``p`` when all before it in the block is POP_TOP or
        POP_EXCEPT."""
        block = self.cfg.block_at(p)
        ops = self.instrs[block.start:block.end]
        if ops and ops[-1].opname == "JUMP" and all(o.opname in ("POP_TOP", "POP_EXCEPT") for o in ops[:-1]):
            return block.end - 1
        return None

    def final_place(self, p: int | None) -> int | None:
        """Where control ends up from ``p`` through unconditional jumps (either direction)."""
        return follow_jumps(self.instrs, self.cfg.pos, p, back=True, steps=None)

    def follow_jumps(self, p: int | None) -> int | None:
        """Follow blocks that are a single forward JUMP."""
        return follow_jumps(self.instrs, self.cfg.pos, p)

    def follow_any_jumps(self, p: int | None) -> int | None:
        """Past unconditional jumps, forward or back; None where that is no instruction."""
        p = follow_jumps(self.instrs, self.cfg.pos, p, back=True)
        return p if p is not None and p < len(self.instrs) else None

    def same_place(self, a: int | None, b: int | None) -> bool:
        """Do jumps to ``a`` and to ``b`` run the same code?

        The same position through unconditional jumps, or two copies of one small block that
        returns (compilers copy ``return None`` and the like into each path that reaches it).
        """
        if a == b:
            return True
        a, b = self.final_place(a), self.final_place(b)
        return a == b or (a is not None and b is not None and self.same_return_block(a, b))

    def single(self, items: set, pos, message):
        if len(items) > 1:
            raise self.error(pos, message)
        return next(iter(items), None)


def _loop_key(loop: Loop) -> tuple:
    """What a loop's post-dominators depend on. Loops can share a header: a ``while True`` whose
    body starts with a ``while`` whose test is copied to its bottom starts its rounds at that test."""
    return loop.header, loop.body_start, loop.blocks, loop.continues
