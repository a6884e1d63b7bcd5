"""The branches of a test that leave where the test is: ``continue``, ``break``, a ``return``
out of a protected region (through its finally body's copy), or the end of the region, and the
``if`` statements whose branches are such exits."""

from __future__ import annotations

import ast

from depyf.decompiler.expressions import negate
from depyf.decompiler.instructions import FOR_ITERS, TERMINATORS, copy_key, features
from depyf.decompiler.structure.model import (
    ENDS_FUNCTION,
    LEFT_REGION,
    BranchExit,
    BranchWay,
    Context,
    ExitKind,
)


class BranchExits:
    """Reading the branches of a conditional jump that leave the statement it tests for."""

    def continue_stmt(self, target: int | None, ctx: Context) -> ast.Continue:
        """``continue``. One that jumps to a while loop's test at the top is marked ``to_top``: the
        compiler goes there only for a written ``continue`` (the end of the body runs the test's copy
        at the bottom), so cleanup must not fold it into an ``if`` around the rest of the body."""
        node = ast.Continue()
        loop = ctx.loop
        if target is not None and target < len(self.instrs) and self.instrs[target].opname == "JUMP":
            target = self.cfg.pos(self.instrs[target].target)   # (``continue`` is a jump back)
        node.to_top = loop is not None and target == loop.header and features().copies_loop_tests \
            and loop.back is not None \
            and self.instrs[loop.header].opname not in FOR_ITERS
        return node

    def resolve_exit(self, pos, ctx, stack) -> BranchExit:
        """ON, END at ``pos`` for the region's end (None: a protected region's normal exit), or
        STMT with [break/continue/return]."""
        kind = self.classify(pos, ctx)
        if kind is ExitKind.GOTO:
            return BranchExit(BranchWay.ON)
        if kind is ExitKind.STOP:
            return BranchExit(BranchWay.END, pos)
        if kind is ExitKind.CONTINUE:
            return BranchExit(BranchWay.STMT, stmts=[self.continue_stmt(pos, ctx)])
        if kind is ExitKind.BREAK:
            return BranchExit(BranchWay.STMT, stmts=[ast.Break()])
        body: list = []
        normal = self.leave_region(pos, ctx, list(stack), body)
        return BranchExit(BranchWay.END) if normal else BranchExit(BranchWay.STMT, stmts=body)

    def conditional_exit(self, cond, t, f, rt, rf, ctx, stack, out):
        """A conditional jump one or both of whose branches leave the current region."""
        stmt, end, on = BranchWay.STMT, BranchWay.END, BranchWay.ON
        if rt.way is stmt and rf.way is on:
            out.append(ast.If(cond, rt.stmts, []))
            return f
        if rf.way is stmt and rt.way is on:
            out.append(ast.If(negate(cond), rf.stmts, []))
            return t
        if rt.way is end and rf.way is on:
            body = self.emit(f, ctx, list(stack))
            self._not_left_alone(t, rt.place, self._left_through(self.left_through, rt.place, ctx))
            self._end_together(t, rt.place, self.ended_at)
            out.append(ast.If(negate(cond), body or [ast.Pass()], []))
            return rt.place
        if rf.way is end and rt.way is on:
            body = self.emit(t, ctx, list(stack))
            self._not_left_alone(t, rf.place, self._left_through(self.left_through, rf.place, ctx))
            self._end_together(t, rf.place, self.ended_at)
            out.append(ast.If(cond, body or [ast.Pass()], []))
            return rf.place
        if rt.way is end and rf.way is end:
            self._end_together(t, rt.place, rf.place)
        then = rt.stmts if rt.way is stmt else []
        other = rf.stmts if rf.way is stmt else []
        out.append(ast.If(cond, then or [ast.Pass()], other))   # (even empty: the test runs code)
        place = rt.place if rt.way is end else rf.place if rf.way is end else None
        if place is None and end in (rt.way, rf.way):
            return LEFT_REGION  # (a branch left by the region's normal exit: code after it never runs)
        return place

    def meets_its_exit(self, body: int | None, exit_pos: int | None, way: BranchExit, ctx: Context) -> bool:
        """Do the branches of a test meet where one of them leaves by a statement (``way``: a
        ``continue``, a ``break``, a ``return`` out of a protected region), because the code of
        the other, at ``body``, laid out right before ``exit_pos``, runs into that place, or ends
        on its own (one block that returns or raises)? Then the test reads as ``if c: body``
        before what leaves, as the source is laid out, not as ``if not c: leave`` then ``body``."""
        if way.way is not BranchWay.STMT or body is None or exit_pos is None or not body < exit_pos \
                or not way.stmts:
            return False
        cfg = self.cfg
        if not cfg.is_leader(body) or not cfg.is_leader(exit_pos):
            return False
        if self._ends_alone(body, ctx):
            return True
        first, last = cfg.block_of[body], cfg.block_of[exit_pos]
        before = last - 1
        if isinstance(way.stmts[0], ast.Break) and len(way.stmts) == 1:
            return self._goes_round_before(first, last, ctx)
        if isinstance(way.stmts[0], (ast.Break, ast.Continue)):
            return False
        if before < first or before not in cfg.blocks[last].preds:
            return False
        if self.instrs[cfg.blocks[before].end - 1].opname in TERMINATORS:
            return False
        return before in cfg.reach([first], keep=lambda b: first <= b < last)

    def join_past_ended_branch(self, t: int | None, f: int | None, ctx: Context) -> int | None:
        """Where the branches of a test meet when the one laid out second ends alone (a ``raise``
        or ``return``: ``_ends_alone``) and the code right after it is entered only from the
        first, laid out before it: the first jumped over the second to the code after the ``if``
        statement (``if c: body`` / ``else: raise E`` / ``return x``). Read with no join, the code
        after it would be the first branch's, which compiles with no jump (``if c: body; return
        x``)."""
        if t is None or f is None or t == f:
            return None
        first, second = sorted((t, f))
        cfg = self.cfg
        if not cfg.is_leader(first) or not self._ends_alone(second, ctx):
            return None
        tail = self.straight_to_end(second)
        after = tail[-1] + 1
        if after >= len(self.instrs) or not cfg.is_leader(after) or after in ctx.stops \
                or self.classify(after, ctx) is not ExitKind.GOTO or self._copy_of_code_at(tail, after):
            return None
        low, high = cfg.block_of[first], cfg.block_of[second]
        block = cfg.block_at(after)
        if block.exc_preds or not block.preds or not all(low <= p < high for p in block.preds):
            return None
        return after

    def _goes_round_before(self, first: int, last: int, ctx: Context) -> bool:
        """Does the code of blocks ``first`` up to ``last`` end, right before ``last``, with the
        jump back of the loop (a ``continue``), which it reaches from ``first``? Then a ``break``
        at ``last`` is the statement after ``if c: body; continue`` (heapq's _siftdown), as laid
        out, not ``if not c: break`` before the body."""
        loop, cfg = ctx.loop, self.cfg
        before = last - 1
        if loop is None or before < first:
            return False
        block = cfg.blocks[before]
        jump = self.instrs[block.end - 1]
        if jump.opname != "JUMP" or cfg.pos(jump.target) not in loop.continues \
                or block.end - block.start == 1 and before == first:
            return False    # (a body that only goes round is ``if c: continue``, read as before)
        chain = cfg.handler_chain(cfg.blocks[first].start)
        if any(cfg.handler_chain(cfg.blocks[b].start) != chain for b in range(first, last)):
            return False    # (a try statement in the body: its ``continue`` would lie inside it)
        return before in cfg.reach([first], keep=lambda b: first <= b < last)

    def _copy_of_code_at(self, tail: list[int], pos: int) -> bool:
        """Does the code at ``tail`` end with the code at ``pos``, straight-line code that ends the
        function? The compiler copies a return into the paths that reach it (the implicit
        ``return None`` takes the line of each path): both branches go on to that code, and
        compile alike read so."""
        end = pos
        while end < len(self.instrs) and end - pos < len(tail) and self.instrs[end].target is None \
                and self.instrs[end].opname not in ENDS_FUNCTION:
            end += 1
        if end >= len(self.instrs) or self.instrs[end].opname not in ENDS_FUNCTION \
                or end - pos >= len(tail):
            return False
        ends = tail[len(tail) - (end + 1 - pos):]
        return all(copy_key(self.instrs[a]) == copy_key(self.instrs[b])
                   for a, b in zip(ends, range(pos, end + 1), strict=True))

    def _ends_alone(self, pos: int, ctx: Context) -> bool:
        """Is the code at ``pos`` straight-line code that ends the function (``straight_to_end``:
        a ``return`` or ``raise``), which only the test enters (no jump, no handler) and where no
        stop of the walk lies?"""
        cfg = self.cfg
        tail = self.straight_to_end(pos) if cfg.is_leader(pos) else None
        if tail is None:
            return False
        block = cfg.block_at(pos)
        if len(block.preds) != 1 or block.exc_preds:
            return False
        return not any(pos <= s <= tail[-1] for s in ctx.stops)
