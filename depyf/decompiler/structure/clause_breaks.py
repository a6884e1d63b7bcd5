"""Breaks out of a loop from the except clauses of a try statement in its body, found where the
code after the loop is only reached by them (the loop's else clause returns)."""

from __future__ import annotations

import functools

from depyf.decompiler.instructions import FOR_ITERS

# what ends the way out of an except clause that returns a value loaded before it: popping the
# iterators of for loops and the saved exception, a constant's load
_CLEANING_UP = frozenset({"POP_TOP", "SWAP", "POP_EXCEPT", "LOAD_CONST"})


class ClauseBreaks:
    """``clause_breaks``: the places the except clauses of a try in a loop break to."""

    def clause_breaks(self, blocks: frozenset[int], header: int, clauses: set[int]) -> set[int]:
        """Where except clauses of a try in the loop ``break`` to, told by the graph alone.

        Every way out of one try statement's clauses (``POP_EXCEPT``, then on) goes where the
        statement goes on, but for ``break`` and ``continue``. So where one of them goes on in
        the loop's code (not to its next round: a ``continue``) and another leaves the loop for
        code that only ways out of those clauses enter, that code is what follows the loop, not
        the clause's own (which runs before the ``POP_EXCEPT``): ``while c: try: ... except E: if
        b: break ... else: return x`` whose code after the loop only the ``break`` reaches, or a
        copy of it inlined into the clause when it is small. Only for a try statement right in
        the loop's body: inside another region there, the way out runs that region's exit (a
        finally body's copy) before it leaves the loop."""
        ways: dict[int, list[tuple[int, int]]] = {}     # cleanup -> (way out's block, place)
        around = self.cfg.handler_chain(header)
        iterator = self.instrs[header].opname in FOR_ITERS     # (a break pops it)
        for k in self._pop_excepts:
            if self.cfg.handler_chain(k) == around:
                cleanup = self._clause_left_at(k, clauses)
                if cleanup is not None:
                    place = self._past_name_cleanup(k + 1, iterator)
                    if place is not None:
                        ways.setdefault(cleanup, []).append((self.cfg.block_of[k], place))
        found: set[int] = set()
        for out in ways.values():
            if not any(self.cfg.block_of[p] in blocks and p not in self.back_edge_targets for _, p in out):
                continue
            leaving = {b for b, _ in out} | {self.cfg.block_of[p - 1] for _, p in out
                                              if self.instrs[p - 1].opname == "JUMP"}
            for _, p in out:
                block = self.cfg.blocks[self.cfg.block_of[p]]
                if block.index in blocks or not self.ends_by_a_computed_value(p):
                    continue
                if block.start == p and not set(block.preds) <= leaving:
                    continue
                found.add(p)
        return found

    @functools.cached_property
    def _pop_excepts(self) -> list[int]:
        return [k for k, ins in enumerate(self.instrs) if k > 0 and ins.opname == "POP_EXCEPT"]

    def _clause_left_at(self, k: int, clauses: set[int]) -> int | None:
        """The cleanup handler (one of ``clauses``) of the except clause that the ``POP_EXCEPT``
        at ``k`` leaves: the code before it runs under that handler, the ``POP_EXCEPT`` not."""
        if self.cfg.is_leader(k):
            befores = [self.cfg.blocks[b].end - 1 for b in self.cfg.blocks[self.cfg.block_of[k]].preds]
        else:
            befores = [k - 1]
        # (a clause binding a name runs under a handler that unbinds it, inside the cleanup's)
        inner = {next((h for h in self.cfg.handler_chain(b) if h in clauses), None) for b in befores}
        if len(inner) != 1:
            return None
        cleanup = inner.pop()
        return cleanup if cleanup in clauses and cleanup not in self.cfg.handler_chain(k) else None

    def _past_name_cleanup(self, p: int, iterator: bool) -> int | None:
        """Where the way out of an except clause from ``p`` (after its ``POP_EXCEPT``) goes on:
        past the unbinding of the name bound by ``as``, the pop of the loop's ``iterator`` (a
        ``break`` of a for loop) and one jump."""
        instrs = self.instrs
        p = self.past_name_unbinding(p)
        if iterator and p < len(instrs) and instrs[p].opname == "POP_TOP":
            p += 1
        if p < len(instrs) and instrs[p].opname == "JUMP":
            return self.cfg.pos(instrs[p].target)
        return p if p < len(instrs) else None

    def ends_by_a_computed_value(self, p: int) -> bool:
        """Unless the code at ``p`` is straight code that returns a value loaded before it (a
        ``return`` of an except clause, whose value is loaded before the ``POP_EXCEPT``: what
        follows only cleans up) or a constant, which reads as the clause's own either way; copies
        of it elsewhere are left to the copied-tail rules."""
        tail = self.straight_to_end(p)
        if tail is None:
            return True
        if self.instrs[tail[-1]].opname != "RETURN_VALUE":
            return False
        producers = [self.instrs[k].opname for k in tail[:-1] if self.instrs[k].opname != "NOP"]
        if not producers or producers[-1] in _CLEANING_UP or producers[-1].startswith(("STORE_", "DELETE_")):
            return False
        return not self.return_copies(p)
