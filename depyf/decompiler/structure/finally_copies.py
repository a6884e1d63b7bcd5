"""``finally`` bodies: the handler's copy, and the inline copies on each way out of the try
statement, which are skipped."""

from __future__ import annotations

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.instructions import Instr, copy_key
from depyf.decompiler.layout.jumps import follow_jumps
from depyf.decompiler.structure.model import ENDS_FUNCTION, Layer, RegionKind

_CONSTANT_RETURN = frozenset({"NOP", "LOAD_CONST", "RETURN_VALUE"})   # (what ``return 1`` is made of)
_BREAK_POPS = frozenset({"NOP", "POP_TOP"})     # (what a ``break`` runs before its jump)


class FinallyCopies:
    """Finding and skipping the inline copies of a finally body."""

    def finally_ops(self, target: int) -> tuple[int, int]:
        """(first, last) positions of a finally handler's body: after PUSH_EXC_INFO up to its RERAISE 0
        (up to the end of the handler where the body ends in ``return``)."""
        span = self.finally_span(target)
        if span is None:
            raise self.error(self.cfg.pos(target), "finally handler without RERAISE")
        return span

    def finally_span(self, target: int) -> tuple[int, int] | None:
        """``finally_ops``, or None for a handler that neither re-raises nor returns."""
        p = self.cfg.pos(target)
        cleanup = self.cfg.handler_at[p]
        limit = self._handler_end(p)
        last = None
        for k in range(p + 1, limit):
            ins = self.instrs[k]
            if ins.opname == "RERAISE" and ins.argval == 0 \
                    and _target_of(self.cfg.handler_at[k]) == _target_of(cleanup):
                last = k    # (not an except clause's in the body, which runs under its own cleanup)
        if last is None and limit > p + 1 and self.instrs[limit - 1].opname in ENDS_FUNCTION:
            # ``return`` at the end of the finally body: it never goes on to re-raise
            last = limit
        return None if last is None else (p + 1, last)

    def thread_copied_reraises(self) -> bool:
        """Turn each copy of a finally handler's last ``RERAISE`` inside a loop of its body into a
        jump to it; True where one was turned (the caller builds the graph again).

        Why: the compiler copies that one-instruction tail into a ``break`` that lands on it
        (``finally: for x in xs: if x: break`` then ``else: ...``), where the inline copy of the
        body jumps. As a jump, the ``break`` reads like every other loop exit. The copy re-raises
        under the same handler: whatever lies on the stack below, unwinding drops it, so the two
        do the same. The last ``RERAISE`` is then a place a loop's ``break`` lands on
        (``threaded_finally_ends``); so it is where the compiler left such a ``break`` a jump to it
        (``finally: while True: try: ... else: break``, nothing after the loop)."""
        self.threaded_finally_ends: set[int] = set()
        turned = False
        if not any(ins.opname == "RERAISE" for ins in self.instrs):
            return False
        for entry in self.cfg.entries:
            p = self.cfg.pos(entry.target)
            if p is None or not self.is_try_handler(entry.target) \
                    or self.handler_kind(entry.target) is not RegionKind.FINALLY:
                continue
            span = self.finally_span(entry.target)
            if span is None:
                continue
            first, last = span
            if last >= len(self.instrs) or self.instrs[last].opname != "RERAISE":
                continue
            final = self.instrs[last]
            if self._laid_out_in_a_loop(p, last, self._handler_end(p)):
                # the body ends in a loop whose only way out is a ``break`` (``while True``): the
                # compiler put the end there, as that break
                self.threaded_finally_ends.add(last)
            for k in range(first, last):
                ins = self.instrs[k]
                if ins.opname == "JUMP" and ins.target == final.offset:
                    if self._laid_out_in_a_loop(first, k, last):
                        self.threaded_finally_ends.add(last)
                elif ins.opname == "RERAISE" and ins.argval == final.argval \
                        and self.cfg.handler_at[k] == self.cfg.handler_at[last] \
                        and self._inside_a_loop_of(first, k, last):
                    if not turned:
                        self.instrs = list(self.instrs)   # (the normalised list is shared: read once)
                    self.instrs[k] = Instr("JUMP", ins.offset, None, None, final.offset, ins.lineno,
                                           ins.slots)
                    self.threaded_finally_ends.add(last)
                    turned = True
        return turned

    def _inside_a_loop_of(self, first: int, k: int, last: int) -> bool:
        """Is the code that leads to ``k`` on a cycle of the code from ``first`` to ``last`` (a
        loop of that code)? Elsewhere a copied ``RERAISE`` ends a branch of an ``if``, which
        reads as it stands. So does code after a loop that ends in a copy (``for ...`` then
        ``h()``, where the loop's own exit leads): only a copy alone in its block, after at most
        the ``break``'s pops, is where a ``break`` lands."""
        lo, hi = self.cfg.block_of[first], self.cfg.block_of[last]
        blocks = self.cfg.blocks
        block = blocks[self.cfg.block_of[k]]
        if any(self.instrs[j].opname not in _BREAK_POPS for j in range(block.start, k)):
            return False
        return any(pred in self.cfg.reach(blocks[pred].succs, keep=lambda b: lo <= b <= hi, raising=False)
                   for pred in block.preds)

    def _handler_end(self, p: int) -> int:
        """Where the code of the handler at ``p`` ends: its cleanup handler, or the code's end."""
        cleanup = self.cfg.handler_at[p]
        limit = self.cfg.pos(cleanup.target) if cleanup is not None else None
        return limit if limit is not None and limit > p else len(self.instrs)

    def _laid_out_in_a_loop(self, first: int, k: int, last: int) -> bool:
        """Is ``k`` laid out inside a loop of the code from ``first`` to ``last``: between a jump
        back and where it goes? (A jump from there to the end of that code leaves the loop: a
        ``break``. The way round can be an except clause's, which the graph's edges leave out.)"""
        for ins in self.instrs[k + 1:last]:
            back_to = self.cfg.pos(ins.target) if ins.opname == "JUMP" and ins.target is not None else None
            if back_to is not None and first <= back_to <= k:
                return True
        return False

    def returns_a_constant(self, p: int, layers: tuple[Layer, ...]) -> bool:
        """Does the code at ``p`` only return a constant, after the way out of each enclosing
        protected region (a finally body's copy, a with's exit call, an except clause's
        ``POP_EXCEPT``)? A ``return 1`` in the region leaves it before it loads the constant, so
        it lies outside the region like the code after the statement. Where the loop's own exit
        goes elsewhere it is no ``break``: read as one, that exit would run the return too.
        (Nothing of it can raise but the ways out, which a ``return`` in the region runs first
        as well, innermost first.)"""
        tail = self.straight_to_end(p)
        if tail is None:
            return False
        k, end = tail[0], tail[-1]
        for layer in reversed(layers):
            while k <= end and self.instrs[k].opname == "NOP":
                k += 1
            if layer.kind is RegionKind.TRY:
                continue        # (leaving a try body with except clauses runs nothing)
            if layer.kind is RegionKind.FINALLY and layer.finally_ops is None:
                break
            try:
                after = self.skip_exit(layer, k, [])
            except DecompilationError:
                break
            if after is None or not k < after <= end:
                break
            k = after
        return all(self.instrs[j].opname in _CONSTANT_RETURN for j in range(k, end + 1))

    def skip_finally_copy(self, span: tuple[int, int], p: int) -> int | None:
        """Skip the inline copy of a finally body starting at ``p``; returns the position after it
        (None where the body ends in its own ``return``: the try statement goes on nowhere).

        The copy is compared with the handler's instruction by instruction in layout order, and
        where that fails, along both copies' control flow (``walk_finally_copy``).
        """
        try:
            return self.skip_finally_copy_in_layout(span, p)
        except DecompilationError:
            walked = self.walk_finally_copy(span, p)
            if walked is None:
                raise
            return walked

    def skip_finally_copy_in_layout(self, span: tuple[int, int], p: int) -> int | None:
        """``skip_finally_copy`` for copies laid out alike.

        The handler's copy may hold extra exception bookkeeping (POP_TOP of the exception,
        POP_EXCEPT) before a break/continue/return; those are skipped on the handler side.
        """
        h, last = span
        k = p
        cont = None
        # the copy may be shared by several exits, which jump to it (as a compiler with a block
        # stack lays it out)
        if h < last and self.instrs[h].opname != "JUMP":
            k = follow_jumps(self.instrs, self.cfg.pos, k, steps=None)
        joins = None    # where the inline copy goes on when a test in the body skips to its end
        returned = False    # the copy's straight path ended in the body's own ``return``
        while h < last:
            if k >= len(self.instrs):
                raise self.error(p, "finally body copy not found on exit")
            a, b = self.instrs[h], self.instrs[k]
            if a.opname == b.opname and (a.target is not None or copy_key(a) == copy_key(b)):
                if a.target is not None and self.cfg.pos(a.target) == last and b.target is not None:
                    joins = self.cfg.pos(b.target)
                h += 1
                k += 1
                continue
            if a.opname == "RERAISE" and h + 1 == last and joins is not None and k == joins:
                # the final RERAISE copied to the end of an if in the body (a copied tail); the inline copy
                # falls through to where its test's other branch jumps
                cont = k
                h += 1
                continue
            if a.opname == "RERAISE" and b.opname == "LOAD_CONST" and k + 1 < len(self.instrs) \
                    and self.instrs[k + 1].opname == "RETURN_VALUE":
                # the path ends the function: the compiler copied the final return into it
                cont = k
                h += 1
                k += 2
                continue
            if a.opname == "RERAISE" and b.opname == "RETURN_VALUE":
                cont = k
                h += 1
                k += 1
                continue
            if a.opname == "RERAISE" and b.opname == "JUMP":
                # a path through the finally body: re-raise in the handler, go on inline
                cont = self.cfg.pos(b.target)
                h += 1
                k += 1
                continue
            if a.opname in ("POP_TOP", "POP_EXCEPT"):
                h += 1
                continue
            ends, inline_ends = _top_return(self.instrs, h), _top_return(self.instrs, k)
            if ends is not None and inline_ends is not None:
                # both return the value on top (``return`` in the finally body); the handler has
                # more to pop below it
                h, k = ends + 1, inline_ends + 1
                returned = True
                continue
            if cont is not None:
                # the copy's straight path ended where the statement goes on (or in the return
                # after it, which the compiler copied in); the rest of the handler's body is
                # reached by branches, and the copy holds those in its own places
                return cont
            raise self.error(p, "finally body copy not found on exit")
        if cont is None and joins is not None and k > p and self.instrs[k - 1].opname == "RETURN_VALUE":
            # the body ends with an if whose branch leaves (break, return): the copy goes on where
            # its test's other branch jumps
            return joins
        if returned and cont is None and joins is None:
            return None     # the finally body returns: the try statement goes on nowhere
        return k if cont is None else cont

    def walk_finally_copy(self, span: tuple[int, int], p: int) -> int | None:
        """Where the inline copy of a finally body at ``p`` goes on, found by walking it and the
        handler's copy side by side along their control flow (not their layout).

        The two copies can be laid out differently: in the inline one, a loop's except clauses
        sit at the end of the function and its test is copied to the bottom; in the handler they
        may not be. Each pair of positions compares one instruction; branches, and except
        clauses inside the body, pair their targets. Where the handler's copy ends (its final
        RERAISE), the inline copy goes on: that must be one place. None when the copies differ.
        """
        first = span[0]
        # the handler's own cleanup protects its start (PUSH_EXC_INFO): the body's first
        # instruction may already be inside a try statement of the body
        own_cleanup = _target_of(self.cfg.handler_at[first - 1])
        ins = self.instrs
        exits: set[int] = set()
        seen: set[tuple[int, int]] = set()
        work = [(first, p)]
        while work:
            h, k = work.pop()
            h, k = self.follow_any_jumps(h), self.follow_any_jumps(k)
            if h is None or k is None or len(seen) > 4 * len(ins):
                return None     # (a bounded walk: the copies can only be so much longer than the code)
            if (h, k) in seen:
                continue
            seen.add((h, k))
            a, b = ins[h], ins[k]
            if a.opname == "RERAISE" and a.argval == 0 and _target_of(self.cfg.handler_at[h]) == own_cleanup:
                exits.add(k)      # the end of the finally body
                continue
            if copy_key(a) != copy_key(b) and not (a.target is not None and a.opname == b.opname):
                if _opposite_tests(a.opname, b.opname):
                    # one copy laid out with its test inverted: the branches pair crosswise
                    work.append((self.cfg.pos(a.target), k + 1))
                    work.append((h + 1, self.cfg.pos(b.target)))
                    continue
                if _top_return(ins, h) is not None and _top_return(ins, k) is not None:
                    continue    # both return the value on top, below which the handler has more to pop
                if a.opname in ("POP_TOP", "POP_EXCEPT"):
                    work.append((h + 1, k))     # the handler's own bookkeeping before leaving
                    continue
                return None
            handler = self.cfg.handler_at[h]
            if handler is not None and handler.target != own_cleanup:
                # inside an except clause or try of the body: its handler is the copy's too
                other = self.cfg.handler_at[k]
                if other is None:
                    return None
                work.append((self.cfg.pos(handler.target), self.cfg.pos(other.target)))
            if a.opname in ENDS_FUNCTION or a.opname == "RERAISE":
                continue
            if a.target is not None:
                work.append((self.cfg.pos(a.target), self.cfg.pos(b.target)))
            work.append((h + 1, k + 1))
        places = self.one_return_copy(sorted(exits))
        return next(iter(places)) if len(places) == 1 else None


def _target_of(entry) -> int | None:
    """Which handler an exception-table entry sends to (one handler's range may be split)."""
    return entry.target if entry is not None else None


def _opposite_tests(a: str, b: str) -> bool:
    """Are ``a`` and ``b`` conditional jumps on opposite outcomes of one test?"""
    if not (a.startswith("POP_JUMP") and b.startswith("POP_JUMP")):
        return False
    a = a.replace("_FORWARD", "").replace("_BACKWARD", "")
    b = b.replace("_FORWARD", "").replace("_BACKWARD", "")
    flipped = {"TRUE": "FALSE", "FALSE": "TRUE", "NONE": "NOT_NONE", "NOT_NONE": "NONE"}
    test = a.split("_IF_")[1]
    return b == a.split("_IF_")[0] + "_IF_" + flipped.get(test, "")


def _top_return(instrs: list, p: int) -> int | None:
    """Where the code at ``p`` returns the value on top of the stack, popping only values below
    it on the way (``SWAP 2`` then ``POP_TOP`` or ``POP_EXCEPT``, any number of times); None
    where it does something else."""
    while p + 1 < len(instrs) and instrs[p].opname == "SWAP" and instrs[p].argval == 2 \
            and instrs[p + 1].opname in ("POP_TOP", "POP_EXCEPT"):
        p += 2
    return p if p < len(instrs) and instrs[p].opname == "RETURN_VALUE" else None
