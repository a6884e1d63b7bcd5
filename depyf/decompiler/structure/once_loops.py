"""``while`` loops whose body never reaches its end: laid out as an ``if``, read back as a loop."""

from __future__ import annotations

import ast

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.expressions import negate
from depyf.decompiler.structure.model import UNREAD, Context, Loop, Sentinel, exits_recorded, forget_exits


class OnceLoops:
    """``while c: ... break ... return``: the body never goes back to the test, so the compiler
    makes no jump back and the loop looks like ``if c:``. Its ``break`` is then a jump from inside
    the ``if`` body to the code after it, which no ``if`` can say (``IfBuilder`` finds the
    branches of an inner test ending in different places). Read as the loop instead: the jumps to
    the end are ``break``, and a body that does fall into the end ends with one."""

    def once_loop(self, i: int, cond: ast.expr, t: int, f: int, join: int, ctx: Context,
                  stack: list, out: list) -> int | Sentinel | None:
        """Read the test at ``i`` (true: ``t``, false: ``f``, both meeting at ``join``) as a
        ``while`` that runs its body at most once; where control goes next, or ``UNREAD`` when it
        does not read so."""
        if t is None or join is None:
            return UNREAD
        if f is not None and self.same_place(t, join):     # (the test jumps into the body when false)
            cond, t, f = negate(cond), f, t
        # (where the test goes when false, and the places a jump reaches it from: the breaks)
        ends = frozenset({join} | {s for s in ctx.stops if self.same_place(s, join)})
        body_blocks = self._blocks_before(t, ends, ctx.stops)
        if body_blocks is None:
            return UNREAD
        if ctx.loop is not None:
            outer = ctx.loop.continues | ctx.loop.breaks
            if any(self.cfg.blocks[s].start in outer for b in body_blocks for s in self.cfg.blocks[b].succs):
                return UNREAD    # (the enclosing loop's ``continue`` or ``break`` would be the new loop's)
        loop = Loop(i, frozenset(), ends, frozenset(body_blocks | {self.cfg.block_of[i]}), after=join)
        mark = exits_recorded(ctx.layers)
        try:
            body = self.emit(t, Context(ctx.stops - ends, loop, ctx.layers), list(stack))
            if exits_recorded(ctx.layers) != mark:
                # a way through it falls into the protected region's exit: no loop body can
                raise self.error(t, "a loop body that leaves its region by the region's exit")
            other = [] if self.same_place(f, join) else self.emit(f, ctx.with_stops(join), list(stack))
        except DecompilationError:
            forget_exits(ctx.layers, mark)  # (the trial's exits are not the statement's)
            return UNREAD
        out.append(ast.While(cond, body or [ast.Break()], other))
        return join

    def _blocks_before(self, start: int, ends: frozenset, stops: frozenset) -> set[int] | None:
        """The blocks reached from ``start`` before any of ``ends``; None when one of them goes
        on to another of the ``stops`` (where an enclosing statement ends: the loop's body would
        fall off its end there, and run again) or back to code before ``start``."""
        blocks = self.cfg.blocks
        first = self.cfg.block_of[start]
        last = {self.cfg.block_of[e] for e in ends}
        seen = self.cfg.reach([first], keep=lambda b: b == first or b not in last, raising=False)
        if any(blocks[b].start < start or blocks[b].start in stops - ends for b in seen if b != first):
            return None
        return seen
