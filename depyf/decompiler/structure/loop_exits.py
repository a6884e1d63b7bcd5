"""Where jumps out of a loop are ``break``: the loop's exits, without the body's own code
laid out after it."""

from __future__ import annotations

from depyf.decompiler.instructions import CONDITIONAL_JUMPS, FOR_ITERS, POP_JUMPS
from depyf.decompiler.structure.model import ENDS_FUNCTION, Context


class LoopExits:
    """The places a loop's breaks go to."""

    def exits_of(self, blocks: frozenset[int], header: int, exit_pos: int | None, ctx: Context,
                 code_after_body: bool = False) -> set[int]:
        """Positions where a jump out of the loop is ``break`` (and where those breaks land).

        Code laid out inside the loop's range counts as the loop's (inline code ending in break or
        continue), except a place where the enclosing statement ends (``ctx.stops``): with
        ``handlers_laid_out_last`` the code after a try statement comes before its handlers, so such a
        place can sit inside the range, and a jump from the loop straight to it can only be ``break``.
        Likewise a jump to the next round of the enclosing loop (``ctx.next_rounds``): ``continue``
        binds to the innermost loop, so it is a ``break`` threaded through the end of the enclosing
        loop's body.

        With ``code_after_body`` (a ``while True`` loop read again when the reading above fails),
        code laid out between the loop's body and the except clauses of a try in it is not the
        loop's either: with ``handlers_laid_out_last`` the code after the loop can sit there, and
        the clauses' ``break``s go to it (see ``after_clause_left``).
        """
        # (where a finally body's loop's breaks land, its end, ends the enclosing statement too)
        stops, outer_next = ctx.stops | self.threaded_finally_ends, ctx.next_rounds
        last = max(self.cfg.blocks[b].end for b in blocks)
        if exit_pos is not None and exit_pos > header:
            last = max(last, exit_pos)  # the loop's code is laid out before its exit
        found: set[int] = set()
        # the except clauses of a try inside the loop run under their handler's cleanup handler:
        # a jump to a later clause stays in the loop, wherever that clause is laid out
        clauses = set()
        handlers = last         # where the first of their handlers is laid out
        for b in blocks:
            h = self.cfg.blocks[b].handler
            hp = self.cfg.pos(h.target) if h is not None else None
            if hp is not None and self.cfg.block_of[hp] in blocks and self.is_try_handler(h.target) \
                    and self.cfg.handler_at[hp] is not None:
                clauses.add(self.cfg.handler_at[hp].target)
                handlers = min(handlers, hp)

        def in_clauses(t: int) -> bool:
            if any(x in clauses for x in self.cfg.handler_chain(t)):
                return True
            # a clause's way out (``POP_EXCEPT``, then its ``return``, or the code its ``break``
            # goes on with) lies outside the cleanup handler's range: it is the clause's when
            # only the clauses enter it (they are in the loop when one of them is ``continue``
            # to the loop's test at the top, the body's own way back)
            if self.instrs[t].opname != "POP_EXCEPT" or not self.cfg.is_leader(t):
                return False
            preds = self.cfg.blocks[self.cfg.block_of[t]].preds
            return bool(preds) and all(
                any(x in clauses for x in self.cfg.handler_chain(self.cfg.blocks[b].end - 1)) for b in preds)

        code_after_body = code_after_body and exit_pos is None
        body_end = max((self.cfg.blocks[b].end for b in blocks if self.cfg.blocks[b].start < handlers),
                       default=last) if code_after_body else handlers

        # the code the loop's exit runs into (its else clause, then what follows the loop) can be
        # laid out inside the loop's range: before a copy of the test at the bottom and the
        # except clauses of a try in the body. A jump there from the loop is a ``break``.
        # (normal flow only: the handlers of code there can be a try's in the loop)
        past_exit = self.cfg.reach([self.cfg.block_of[exit_pos]], lambda b: b not in blocks, raising=False) \
            if exit_pos is not None and header < exit_pos < last else set()

        def after_loop(t: int) -> bool:
            return t >= last or (body_end <= t < handlers and self.cfg.block_of[t] not in blocks) \
                or self.cfg.block_of[t] in past_exit or beyond_exit(t)

        # the loop's first code laid out after its exit: a loop whose test is at the top may lay
        # its exit (``if c: return``) out before the body, and the body's own code that leaves
        # (a ``return`` in a nested ``for``) is not beyond the exit
        loop_after_exit = last
        if exit_pos is not None:
            starts = (self.cfg.blocks[b].start for b in blocks)
            loop_after_exit = min((s for s in starts if s > exit_pos), default=last)

        def beyond_exit(t: int) -> bool:
            # laid out after the loop's exit (its else clause) and before the except clauses of a
            # try in the body: none of the loop's own code lies there
            return exit_pos is not None and header < exit_pos < t < min(handlers, loop_after_exit) \
                and handlers < last \
                and self.cfg.block_of[t] not in blocks and self.cfg.block_of[exit_pos] not in blocks

        # the loop inside a protected region: code after the region (its finally copy, the code
        # after the try statement) is protected by the handlers outside it alone (the region's
        # handler is, by its cleanup handler). ``handlers_laid_out_last`` puts the except clauses of a
        # try in the loop's body after that code, and a jump there from the loop can only be ``break``
        # (``try: while True: ... break ... finally: ...``)
        chain = self.cfg.handler_chain(header)
        region = ctx.layers[-1].target if ctx.layers else None
        outside = chain[chain.index(region) + 1:] if region in chain else None

        def leaves_region(t: int) -> bool:
            around = self.cfg.handler_chain(t)
            return outside is not None and len(around) <= len(outside) \
                and around == outside[len(outside) - len(around):]

        def ends_enclosing(t: int) -> bool:
            return t != header and self.cfg.block_of[t] not in blocks \
                and (t in stops or self.follow_trivial(t, backward=True) in stops)

        exit_code: set[int] | None = None     # (found on first use: few loops need it)

        def exit_leaves_without(t: int) -> bool:
            # does the code the loop's exit runs into (its else clause, then what follows the
            # loop) leave the region, never running into ``t``? Then code at ``t`` cannot be what
            # follows the loop (an ``else: raise`` that stays in the region leaves the code only
            # the breaks reach to be that)
            nonlocal exit_code
            if exit_code is None:
                exit_code = self.cfg.reach([self.cfg.block_of[exit_pos]], lambda b: b not in blocks,
                                           raising=False)
            layer = ctx.layers[-1] if ctx.layers else None
            return layer is not None and self.cfg.block_of[t] not in exit_code \
                and any(not self.covered(self.cfg.blocks[b].start, layer) for b in exit_code)

        # jumps anywhere in the loop's layout range that land after it (inline code ending in break)
        from_loop = self.reached_within(blocks, header, last, exit_pos)
        for k in range(header, last):
            ins = self.instrs[k]
            if (ins.opname == "JUMP" or ins.opname in POP_JUMPS) and ins.target is not None \
                    and self.cfg.block_of[k] in from_loop and not after_loop(k):
                t = self.cfg.pos(ins.target)
                if code_after_body and t is not None and k > 0 and ins.opname == "JUMP" \
                        and self.after_clause_left(k - 1, t):
                    found.add(t)
                    continue
                leaving = t is not None and region in self.cfg.handler_chain(k) and leaves_region(t)
                if leaving and exit_pos is not None and self.returns_a_constant(t, ctx.layers) \
                        and not self.same_place(t, exit_pos) and exit_leaves_without(t):
                    continue    # ``return <constant>`` in the region, which leaves it before the load
                if t is None or t == exit_pos \
                        or (header <= t and not after_loop(t) and not (ends_enclosing(t) or leaving)):
                    continue
                if exit_pos in outer_next and self.final_place(t) == exit_pos:
                    continue            # the loop's exit is the enclosing loop's next round
                if t < header and t in outer_next:
                    found.add(t)
                    continue
                if t < header and t in self.back_edge_targets:  # an enclosing loop's next round
                    continue
                final = self.follow_trivial(t, backward=True)
                if self.reraises_unthreaded(final) or in_clauses(t) or (final is not None and header <= final
                                                             and not after_loop(final)
                                                             and final != exit_pos and not leaving):
                    continue
                found.add(t)
                if final is not None:
                    found.add(final)
        for b in blocks:
            for s in self.cfg.blocks[b].succs:
                if s in blocks:
                    continue
                p = self.cfg.blocks[s].start
                if code_after_body and self.after_clause_left(p, p + 1):
                    found.add(p + 1)
                    continue
                if p == exit_pos or p == header \
                        or (header < p and not after_loop(p) and not ends_enclosing(p)):
                    continue
                if exit_pos in outer_next and self.final_place(p) == exit_pos:
                    continue
                final = self.follow_trivial(p, backward=True)
                if self.reraises_unthreaded(final) or in_clauses(p):
                    continue
                if final is not None and (after_loop(final) or final == exit_pos or final in stops):
                    found.add(p)
                    found.add(final)
        own_cleanups = set()    # those of the try statements in the loop (clauses ending in break too)
        # (a try whose body starts at the loop's header is in the loop when it leaves out a jump
        # back to the header: ``while True: try: ...`` with nothing before the try)
        backs = self.back_edge_targets.get(header, [])
        around = [t for t in chain if all(t in self.cfg.handler_chain(k) for k in backs)]
        for b in blocks:
            h = self.cfg.blocks[b].handler
            hp = self.cfg.pos(h.target) if h is not None else None
            if hp is not None and h.target not in around and self.is_try_handler(h.target) \
                    and self.cfg.handler_at[hp] is not None:
                own_cleanups.add(self.cfg.handler_at[hp].target)
        if own_cleanups and outer_next:
            # ``break`` in an except clause of a try in the loop, threaded through the end
            # of the enclosing loop's body to its next round: the clause leaves its handler's
            # cleanup range (POP_EXCEPT, the iterator popped) and jumps there
            for index, block in enumerate(self.cfg.blocks):
                if index in blocks or not own_cleanups & set(self.cfg.handler_chain(block.start)):
                    continue
                for s in block.succs:
                    after = self.cfg.blocks[s]
                    jump = self.instrs[after.end - 1]
                    if s not in blocks and not own_cleanups & set(self.cfg.handler_chain(after.start)) \
                            and jump.opname == "JUMP":
                        t = self.cfg.pos(jump.target)
                        if t is not None and t < header and t in outer_next:
                            found.add(t)
        found = self.without_body_returns_of_for(found, blocks, header)
        found = self.without_dead_ends(self.without_inline_exits(found), blocks, exit_pos, header)
        return found | self.clause_breaks(blocks, header, clauses) if clauses else found

    def after_clause_left(self, p: int, q: int) -> bool:
        """Does ``p`` leave an except clause (``POP_EXCEPT``) for code at ``q`` that ends the
        function, computing its value only then? Such code is what follows a ``while True`` loop
        (it never goes back to the loop), reached by a ``break`` in the clause; with
        ``handlers_laid_out_last`` it can be laid out inside the loop's range. (A clause's own
        ``return x`` computes ``x`` before it leaves; a constant is loaded after leaving either
        way, and reads as the clause's ``return``.)"""
        if self.instrs[p].opname != "POP_EXCEPT" or q >= len(self.instrs) \
                or self.instrs[q].opname == "LOAD_CONST":
            return False
        tail = self.straight_to_end(q)
        return tail is not None and self.instrs[tail[-1]].opname == "RETURN_VALUE"

    def without_body_returns_of_for(self, found: set[int], blocks: frozenset[int], header: int) -> set[int]:
        """Drop code that ends the function and that a ``for`` loop's body enters by a test
        alone: a ``break`` pops the iterator before it jumps, so code entered with the iterator
        still on the stack is the body's (``if c: return a`` laid out after the except clauses
        laid out at the end of the function)."""
        if self.instrs[header].opname not in FOR_ITERS:
            return found
        dropped = set()
        for p in found:
            if not self.cfg.is_leader(p):
                continue
            preds = self.cfg.blocks[self.cfg.block_of[p]].preds
            if preds and all(b in blocks and self.instrs[self.cfg.blocks[b].end - 1].opname in POP_JUMPS
                             for b in preds) and self.dead_end({p}, set(blocks)) is not None:
                dropped.add(p)
        return found - dropped

    def reached_within(self, blocks: frozenset[int], header: int, last: int,
                       exit_pos: int | None) -> set[int]:
        """The blocks laid out in ``[header, last)`` that the loop reaches (by jumps or by raising),
        not through its exit.

        Other code can lie in that range: ``handlers_laid_out_last`` puts every except clause at the end
        of the function, so an earlier loop's clauses can sit between this loop's blocks, and the code
        after the loop before them (its jump to the enclosing loop's next round is no ``break``)."""
        exit_block = self.cfg.block_of[exit_pos] if exit_pos is not None else None
        return self.cfg.reach(blocks, lambda b: b in blocks or b != exit_block
                              and header <= self.cfg.blocks[b].start < last)

    def without_dead_ends(self, found: set[int], blocks: frozenset[int], exit_pos: int | None,
                          header: int) -> set[int]:
        """When jumps leave the loop for several places, drop those that start code only the loop
        reaches and that ends the function (``while a: if c: continue; return b``, the return laid
        out after the loop's last block): that code is the loop body's own, not a ``break``.

        So too where the loop's exit lies before the loop (the code after it was laid out
        earlier and the test jumps back to it): code laid out after the loop's last block is
        not what the loop runs into, and no else clause could skip it on its way to the exit."""
        finals = {self.follow_trivial(p, backward=True) for p in found} - {None}
        if exit_pos is not None and exit_pos < header and finals and exit_pos not in finals \
                and self.dead_end(found, set(blocks)) is not None:
            return set()
        if len(finals) < 2:
            return found
        # the place breaks land: the loop's exit, else the latest place, unless that place is
        # itself a dead end and the others are not (``while True:`` ending in a raise, laid out
        # after it, whose breaks go on with the enclosing loop)
        candidates = [exit_pos] if exit_pos in finals else sorted(finals, reverse=True)
        fallback = None
        for keep in candidates:
            others = {p for p in found if self.follow_trivial(p, backward=True) != keep}
            if self.dead_end(others, set(blocks)) is not None:
                return found - others   # (together: the branches of an if inside the loop meet there)
            inside, dead = set(blocks), set()
            changed = True
            while changed:     # a dead end may be entered through another (a jump to the return)
                changed = False
                for p in others - dead:
                    block = self.cfg.block_of[p] if self.cfg.is_leader(p) else None
                    if block is not None and block in inside and block not in blocks:
                        dead.add(p)     # (taken in by a dead end found before: the way into it)
                        changed = True
                        continue
                    region = self.dead_end({p}, inside, breaks_to=keep)
                    if region is not None:
                        dead.add(p)
                        inside |= region
                        changed = True
            if dead == others:
                return found - dead
            if fallback is None:
                fallback = found - dead
        return fallback

    def dead_end(self, starts: set[int], loop_blocks: set[int],
                 breaks_to: int | None = None) -> set[int] | None:
        """The blocks of the code at ``starts`` if it ends the function (return or raise) without
        joining other code and only ``loop_blocks`` enter it, else None. With ``breaks_to`` (where
        the loop's breaks land) a jump there ends the code too: a ``break`` of the body's own."""
        region: set[int] = set()
        if breaks_to is not None and not self.cfg.is_leader(breaks_to):
            breaks_to = None
        away = self.cfg.block_of[breaks_to] if breaks_to is not None else None
        for p in starts:
            if not self.cfg.is_leader(p):
                return None
            region.add(self.cfg.block_of[p])

        def breaks_away(s: int) -> bool:
            """Does block ``s`` go where the loop's breaks land (a ``break`` of the body's own)?"""
            return away is not None and (s == away or self.follow_trivial(self.cfg.blocks[s].start,
                                                                          backward=True) == breaks_to)

        todo = list(region)
        while todo:
            b = todo.pop()
            if len(region) > 64:
                return None
            for s in self.cfg.blocks[b].succs:
                if s in loop_blocks:
                    return None
                if breaks_away(s):
                    continue
                if s not in region:
                    region.add(s)
                    todo.append(s)
        grown = True
        while grown:    # take in the little blocks on the way from the loop (a chain's POP_TOP; JUMP;
            grown = False   # jumps to jumps: where those come from is checked below, once all are in)
            for b in list(region):
                for pred in self.cfg.blocks[b].preds:
                    block = self.cfg.blocks[pred]
                    if pred not in region and pred not in loop_blocks \
                            and all(s in region or breaks_away(s) for s in block.succs) \
                            and block.preds and (set(block.preds) <= region | loop_blocks
                                                 or self._popping_jump(block.start) is not None):
                        region.add(pred)
                        grown = True
                if len(region) > 64:
                    return None
        region |= _parted_ways_into(self.cfg.blocks, region, loop_blocks, breaks_away)
        region |= self._tests_on_the_way(region, loop_blocks, breaks_away)
        if len(region) > 64:
            return None
        entered_inside = all(pred in region or pred in loop_blocks
                             for b in region for pred in self.cfg.blocks[b].preds)
        return region if entered_inside else None

    def _tests_on_the_way(self, region: set[int], loop_blocks: set[int], breaks_away) -> set[int]:
        """Blocks outside the loop from which control only goes into ``region``, where the loop's
        breaks land or into code that ends the function at once, entered only from the loop, the
        region or each other: the body's tests on the way to code that ends the function (``if a:
        if b: break`` whose other way falls into a return laid out after the loop's last block; a
        chained comparison's exit that pops its operand and returns). The loop itself is the code
        that reaches its back edge: those tests never do, yet they are its body's."""
        blocks = self.cfg.blocks
        ways: set[int] = set()
        closing: dict[int, frozenset[int] | None] = {}

        def ending(s: int) -> frozenset[int] | None:
            """The blocks of the code from ``s`` when it only ends the function (a few blocks
            that return or raise, joining nothing else), else None."""
            if s not in closing:
                closing[s] = _ends_alone(blocks, s, loop_blocks | region)
            return closing[s]

        def leads_in(b: int) -> bool:
            """Is ``b`` a test whose every way goes into the region, the ways found, where the
            breaks land or into code that ends the function, or straight code that goes on to
            such a test? (Straight code that runs into the region or where the breaks land is a
            break's own: its ``POP_EXCEPT``, a finally body's copy.)"""
            if self.instrs[blocks[b].end - 1].opname not in CONDITIONAL_JUMPS:
                return all(s in ways for s in blocks[b].succs) and bool(blocks[b].succs)
            return all(s in region or s in ways or breaks_away(s) or ending(s) is not None
                       for s in blocks[b].succs)

        grown = True
        while grown:
            grown = False
            for b in list(region | ways):
                for pred in blocks[b].preds:
                    if pred not in region and pred not in ways and pred not in loop_blocks and leads_in(pred):
                        ways.add(pred)
                        grown = True
            if len(ways) + len(region) > 64:
                return set()
        ends = {e for b in ways for s in blocks[b].succs
                if s not in region and s not in ways and not breaks_away(s) for e in ending(s)}
        pruned = True
        while pruned:   # a way entered from elsewhere is no body's test, nor what only leads to it
            pruned = False
            for b in list(ways | ends):
                if b in ways and not leads_in(b) or not all(p in region or p in ways or p in ends
                                                            or p in loop_blocks for p in blocks[b].preds):
                    ways.discard(b)
                    ends.discard(b)
                    pruned = True
        return ways | ends

    def without_inline_exits(self, found: set[int]) -> set[int]:
        """Drop exits whose code runs straight into another exit: the tail of an ``if`` that ends in
        ``break`` laid out after the loop (without ``copies_loop_tests`` the test is not at the bottom, so the
        last body statement can fall into the code after the loop)."""
        def runs_into(p: int, q: int) -> bool:
            if not p < q <= p + 64 or self.cfg.handler_at[p] != self.cfg.handler_at[q]:
                return False
            return all(ins.target is None and ins.opname not in ENDS_FUNCTION
                       and ins.opname != "RERAISE" and ins.opname not in FOR_ITERS
                       and self.cfg.handler_at[p + k] == self.cfg.handler_at[p]
                       for k, ins in enumerate(self.instrs[p:q]))
        return {p for p in found if not any(runs_into(p, q) for q in found)}


def _parted_ways_into(blocks: list, region: set[int], loop_blocks: set[int], breaks_away) -> set[int]:
    """Code that one block of the loop enters at one place and whose every way runs into
    ``region`` (or where the loop's breaks land): an if's branch whose ways part and meet again
    on the way to code that ends the function (a chained comparison's value stored before a
    ``return``). Taking in a block only once every way into it is known never gets past the
    place such ways meet; a single way in from the loop keeps out the code the loop's own exit
    runs into (an else clause before the code after the loop)."""
    taken: set[int] = set()
    for b in loop_blocks:
        for start in blocks[b].succs:
            if start in loop_blocks or start in region or start in taken or breaks_away(start) \
                    or set(blocks[start].preds) != {b}:
                continue
            ways, todo = {start}, [start]
            while todo and len(ways) <= 64:
                succs = blocks[todo.pop()].succs
                if not succs or any(s in loop_blocks for s in succs):
                    ways = set()    # (code that ends or goes back into the loop by itself)
                    break
                for s in succs:
                    if s not in ways and s not in region and not breaks_away(s):
                        ways.add(s)
                        todo.append(s)
            if ways and len(ways) <= 64 and all(set(blocks[w].preds) <= ways for w in ways - {start}) \
                    and any(s in region for w in ways for s in blocks[w].succs):
                taken |= ways
    return taken


def _ends_alone(blocks: list, start: int, joined: set[int], limit: int = 8) -> frozenset[int] | None:
    """The blocks of the code from ``start`` when it returns or raises after at most ``limit``
    blocks without running into ``joined``, else None."""
    found, todo = {start}, [start]
    while todo:
        for t in blocks[todo.pop()].succs:
            if t in joined:
                return None
            if t not in found:
                found.add(t)
                todo.append(t)
                if len(found) > limit:
                    return None
    return frozenset(found)
