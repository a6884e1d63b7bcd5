"""``for`` and ``while`` loops (with their else clauses)."""

from __future__ import annotations

import ast

from depyf.decompiler import values as v
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.expressions import negate
from depyf.decompiler.instructions import CONDITIONAL_JUMPS, FOR_ITERS, POP_JUMPS, features
from depyf.decompiler.structure.conditions import _continues_chain
from depyf.decompiler.structure.model import (
    TRY_NODES,
    UNREAD,
    Context,
    Loop,
    Sentinel,
    WhileTest,
    exits_recorded,
    forget_exits,
)


class LoopBuilder:
    """Loop statements at their headers."""

    def try_loop(self, pos: int, ctx: Context, stack: list, out: list) -> int | Sentinel | None:
        """The loop statement whose header is at ``pos``: where control goes next, or ``UNREAD``
        where no loop starts there."""
        ins = self.instrs[pos]
        inverted = self.while_tests.get(pos)
        if ctx.loop is not None and pos == ctx.loop.header:
            if ctx.loop.wraps_while and inverted is not None:
                return self.while_loop(pos, ctx, stack, out, inverted)
            return UNREAD
        if ctx.loop is not None and pos == ctx.loop.body_start:
            bottom = min((p for p in ctx.loop.continues if p != ctx.loop.header), default=ctx.loop.back)
            inner = [x for x in self.back_edge_targets.get(pos, []) if not (bottom <= x <= ctx.loop.back)]
            nested_while = inverted is not None and inverted.body_start != pos \
                and self.cfg.block_of[inverted.back] in ctx.loop.blocks
            if nested_while:
                # a ``continue`` of that inner ``while`` jumps to its test, here, too
                inner = [x for x in inner if not (inverted.body_start <= x <= inverted.back)]
            if not inner:
                if nested_while:
                    # the body starts with a ``while`` of its own: its test is where the enclosing
                    # loop's rounds begin (``while a: while b: ...``)
                    return self.while_loop(pos, ctx, stack, out, inverted)
                return UNREAD
            return self.while_loop(pos, ctx, stack, out, None, sources=inner)
        if ins.opname in FOR_ITERS:
            return self.for_loop(pos, ctx, stack, out)
        if inverted is not None:
            # jumps back to the test from after the loop's bottom: an enclosing ``while True``
            # whose body starts with this loop (its ``continue`` and the inner one's are the same jump)
            outer = [x for x in self.back_edge_targets.get(pos, []) if x > inverted.back
                     and not self.in_clause_of_try_within(x, inverted.body_start, inverted.back)]
            if outer:
                return self.while_loop(pos, ctx, stack, out, None, sources=outer, wraps_while=True)
            return self.while_loop(pos, ctx, stack, out, inverted)
        if pos in self.back_edge_targets:
            return self.while_loop(pos, ctx, stack, out, None)
        return UNREAD

    def in_clause_of_try_within(self, x: int, lo: int, hi: int) -> bool:
        """Whether ``x`` is in an except clause of a try statement protecting code in ``[lo, hi]``
        (``handlers_laid_out_last`` puts the clauses after the loop's bottom: their jump back to the test
        at the top is that loop's ``continue``, not an enclosing loop's next round). The jump itself
        follows the clause's POP_EXCEPT, outside the handlers: what precedes its block is inside."""
        if not features().handlers_laid_out_last:
            return False
        block = self.cfg.blocks[self.cfg.block_of[x]]
        chain = set(self.cfg.handler_chain(x))
        if self.instrs[block.start].opname == "POP_EXCEPT":
            for b in block.preds:
                chain.update(self.cfg.handler_chain(self.cfg.blocks[b].end - 1))
        for k in range(lo, hi + 1):
            h = self.cfg.handler_at[k]
            hp = self.cfg.pos(h.target) if h is not None else None
            if hp is not None and self.is_try_handler(h.target) and self.cfg.handler_at[hp] is not None \
                    and self.cfg.handler_at[hp].target in chain:
                return True
        return False

    def break_target(self, found: set[int], exit_pos, pos):
        """The single place breaks land (the largest of the resolved positions)."""
        finals = {self.follow_trivial(p, backward=True) for p in found} - {None}
        if len(finals) > 1:
            # (a jump to the enclosing loop's next round, beside a break that jumps there too)
            finals = {q if self.final_place(q) not in finals else self.final_place(q) for q in finals}
        if exit_pos is not None and len(finals) > 1:
            # a copy of the loop's test at the bottom leaves the loop where the test does (into
            # the else clause); the breaks land elsewhere
            finals.discard(self.follow_trivial(exit_pos, backward=True))
        return self.single(
            self.one_return_copy(finals, exit_pos), pos, "breaks leave the loop to different places"
        )

    def for_loop(self, pos, ctx, stack, out):
        ins = self.instrs[pos]
        exit_pos = self.cfg.pos(ins.target)
        sources = self.back_edge_targets.get(pos, [])
        blocks = self.loop_blocks(pos, sources) if sources else frozenset({self.cfg.block_of[pos]})
        breaks = self.exits_of(blocks, pos, exit_pos, ctx)
        iterator = stack[-1] if stack else None
        if isinstance(iterator, ast.Name) and iterator.id == ".0":
            iterator = stack[-1] = v.Iterator(iterator)
        if not isinstance(iterator, v.Iterator):
            raise self.error(pos, "for loop without an iterator")
        if self.yields_each_item(pos, exit_pos):
            # ``(*row for row in rows)``: every item of ``row`` is yielded as it comes
            stack.pop()
            out.append(ast.Expr(ast.Yield(ast.Starred(iterator.iterable, ast.Load()))))
            return exit_pos
        break_target = self.break_target(breaks, exit_pos, pos)
        loop = Loop(pos, frozenset({pos}), frozenset({exit_pos} | breaks), blocks,
                    after=break_target if break_target is not None else exit_pos, iterator=iterator,
                    depth=len(stack))
        hole = v.Hole()
        body_stack = stack + [hole]
        # where the body's breaks land is a break inside it, though the enclosing code stops
        # there too (``...; break`` falls into an exit right after the loop where it needs no jump)
        body = self.emit(pos + 1, Context(ctx.stops - loop.breaks, loop, ctx.layers), body_stack)
        if hole.target is None:
            raise self.error(pos, "for loop target not found")
        stack.pop()
        if loop.left_region and break_target is None:
            # its break fell into the exit of the protected code around it (no jump says where
            # breaks land): the else clause is the code from the loop's exit to there
            orelse, after = self.emit(exit_pos, ctx, list(stack)), None
        else:
            orelse, after = self.loop_else(exit_pos, break_target, ctx, stack)
        node_type = ast.AsyncFor if iterator.is_async or ins.opname == "ASYNC_FOR_ITER" else ast.For
        out.append(node_type(hole.target, iterator.iterable, strip_continue(body) or [ast.Pass()], orelse))
        return after

    def loop_else(self, exit_pos: int | None, break_target: int | None, ctx: Context,
                  stack: list) -> tuple[list, int | None]:
        """A loop's else clause (the code between its exit and where breaks land) and where
        control goes after the statement: nowhere when the breaks land on the enclosing loop's
        next round (its body ends with this loop)."""
        if break_target is None or break_target == exit_pos:
            return [], exit_pos
        if exit_pos in ctx.next_rounds and exit_pos == ctx.loop.header:
            # the loop's exit is the enclosing loop's next round, its breaks land elsewhere:
            # the else clause is ``continue`` (a jump straight to the enclosing FOR_ITER)
            return [self.continue_stmt(exit_pos, ctx)], break_target
        mark = exits_recorded(ctx.layers)
        orelse = self.emit(exit_pos, ctx.with_stops(break_target), list(stack))
        if self.left_through is not None and not self.breaks_leave_alike(break_target, mark, ctx, stack):
            # the loop's exit leaves the protected region, where no statement after the loop
            # runs, and its breaks land on other code: that code would run after the exit too
            # (a ``return`` in the region's loop, through its own finally copy, is no ``break``)
            raise self.error(exit_pos, "the loop's exit leaves its region, its breaks land elsewhere")
        if break_target in ctx.next_rounds:
            return strip_continue(orelse), None
        return orelse, break_target

    def breaks_leave_alike(self, break_target: int, mark: list[int], ctx: Context, stack: list) -> bool:
        """Where the loop's else clause left the innermost protected region by its normal exit
        (recording exits since ``mark``): do its breaks, landing on ``break_target``, leave it
        the same way, to the same places? (Leaving there is only looked at: what it records is
        forgotten.)"""
        layer = ctx.layers[-1]
        places = set(layer.normal_exits[mark[-1]:])
        if self.covered(break_target, layer):
            return False
        trial = exits_recorded(ctx.layers)
        try:
            alike = self.leave_region(break_target, ctx, list(stack), []) \
                and set(layer.normal_exits[trial[-1]:]) == places
        except DecompilationError:
            alike = False
        forget_exits(ctx.layers, trial)
        return alike

    def yields_each_item(self, pos: int, exit_pos: int | None) -> bool:
        """``FOR_ITER; YIELD_VALUE; POP_TOP; JUMP back``: a generator expression's starred element."""
        ops = [(ins.opname, self.cfg.pos(ins.target) if ins.target is not None else None)
               for ins in self.instrs[pos + 1:pos + 4]]
        return self.code.co_name == "<genexpr>" and exit_pos == pos + 4 \
            and ops == [("YIELD_VALUE", None), ("POP_TOP", None), ("JUMP", pos)]

    def while_loop(self, pos, ctx, stack, out, inverted, sources=None, wraps_while=False):
        if inverted is not None:
            test_end, body_start, exit_pos = inverted.test_end, inverted.body_start, inverted.exit_pos
            bottom, back = inverted.bottom, inverted.back
            sources = self.back_edge_targets.get(body_start, []) \
                + [x for x in self.back_edge_targets.get(pos, []) if x <= back]
            blocks = self.loop_blocks(pos, sources) | self.loop_blocks(body_start, sources)
            breaks = self.exits_of(blocks, pos, exit_pos, ctx)
            break_target = self.break_target(breaks, exit_pos, pos)
            loop = Loop(
                pos,
                frozenset({pos, bottom}),
                frozenset({exit_pos} | breaks),
                blocks,
                body_start,
                back,
                after=break_target if break_target is not None else exit_pos,
            )
            # the test itself, evaluated once at the top
            test_stack = list(stack)
            scratch: list = []
            cond = self.loop_test(pos, test_end, body_start, exit_pos, test_stack, scratch, ctx)
            # (in the body, reaching where the enclosing statement ends is a ``break`` when the loop
            # exits there too)
            body_stops = (ctx.stops - loop.breaks) | {bottom}
            body = self.emit(body_start, Context(body_stops, loop, ctx.layers), list(stack))
            if break_target in self._values_meeting_after_loops:
                # the jumps there were values meeting after the loop (``return a if b else c``,
                # its return laid out there), no ``break``: those land elsewhere, if any
                break_target = self.break_target(breaks - self._values_meeting_after_loops, exit_pos, pos) \
                    if breaks_out(body) else None
            orelse, after = self.loop_else(exit_pos, break_target, ctx, stack)
            out.append(ast.While(cond, strip_continue(body) or [ast.Pass()], orelse))
            return None if after in ctx.next_rounds else after
        sources = sources or self.back_edge_targets[pos]
        blocks = self.loop_blocks(pos, sources)
        with_else = (
            self.while_else_without_copy(pos, sources, blocks, ctx, stack, out) if not wraps_while else UNREAD
        )
        if with_else is not UNREAD:
            return with_else
        breaks = self.exits_of(blocks, pos, None, ctx)
        try:
            break_target = self.break_target(breaks, None, pos)
        except DecompilationError:
            # the body's last statements, laid out after the test's exit, run into that exit: a
            # top-tested loop whose body ends in ``break``/``return`` (so no copy of the test)
            read = self.while_else_without_copy(pos, sources, blocks, ctx, stack, out, with_else=False) \
                if not wraps_while else UNREAD
            if read is UNREAD:
                raise
            return read
        try:
            body = self.while_true_body(pos, breaks, break_target, blocks, ctx, stack, wraps_while)
        except DecompilationError as first:
            # read again with the code laid out between the body and the except clauses of a try
            # in it as the code after the loop (``handlers_laid_out_last``), where the clauses' breaks go
            again = self.exits_of(blocks, pos, None, ctx, code_after_body=True)
            if again == breaks:
                raise
            try:
                break_target = self.break_target(again, None, pos)
                body = self.while_true_body(pos, again, break_target, blocks, ctx, stack, wraps_while)
            except DecompilationError:
                raise first from None
        out.append(ast.While(ast.Constant(True), strip_continue(body) or [ast.Pass()], []))
        return None if break_target in ctx.next_rounds else break_target

    def while_true_body(self, pos, breaks, break_target, blocks, ctx, stack, wraps_while) -> list:
        loop = Loop(
            pos, frozenset({pos}), frozenset(breaks), blocks, after=break_target, wraps_while=wraps_while
        )
        return self.emit_loop_body_from_header(pos, loop, ctx, stack)

    def while_else_without_copy(
        self, pos, sources, blocks, ctx, stack, out, with_else: bool = True
    ) -> int | Sentinel | None:
        """``while c: ... else: ...`` whose body never runs off its end, so the compiler made no copy
        of the test at the bottom: the test at ``pos`` leaves the loop for the else clause, breaks
        land after it. (Where both go to one place, ``while True:`` with ``if not c: break``
        reads the same and is kept.) Returns where control goes next, or ``UNREAD`` where the loop
        is no such statement."""
        if pos in self._else_trials:
            return UNREAD
        found = self.header_test(pos, blocks)
        if found is None:
            return UNREAD
        test_end, body_start, exit_pos = found
        test_block = self.cfg.block_of[test_end]
        try:
            target = self.break_target(self.exits_of(blocks, pos, exit_pos, ctx), exit_pos, pos)
        except DecompilationError:
            return UNREAD
        if with_else and target is not None and (self.same_place(target, exit_pos) or any(
                self.cfg.block_of[exit_pos] in self.cfg.blocks[b].succs for b in blocks if b > test_block)):
            return UNREAD   # (nor where the body enters the exit's code itself: ``if not a or b: raise``)
        trial_out: list = []
        trial_stack = list(stack)
        self._else_trials.add(pos)
        try:
            after = self.while_loop(pos, ctx, trial_stack, trial_out,
                                   WhileTest(test_end, body_start, exit_pos, pos, max(sources)))
        except DecompilationError:
            return UNREAD
        finally:
            self._else_trials.discard(pos)
        for stmt in trial_out:
            out.append(stmt)
        stack[:] = trial_stack
        return after

    def header_test(self, pos: int, blocks: frozenset[int]) -> tuple[int, int, int] | None:
        """(last test, body start, exit) of a while test at the loop header ``pos``: the blocks on
        the while statement's line that only test, with one way into the loop's other blocks and
        one way out of the loop."""
        line = self.instrs[pos].lineno
        tests, todo = set(), [self.cfg.block_of[pos]]
        while todo:
            b = todo.pop()
            if b in tests:
                continue
            block = self.cfg.blocks[b]
            code = self.instrs[block.start:block.end]
            # (a chained comparison's exit drops its kept operand, ``POP_TOP`` or ``SWAP; POP_TOP``
            # under the value it leaves, and falls into the next test)
            drops = all(ins.opname in ("POP_TOP", "SWAP", "NOP") for ins in code) and len(block.succs) == 1
            if b not in blocks or any(ins.lineno != line for ins in code) \
                    or code[-1].opname not in CONDITIONAL_JUMPS and code[-1].opname != "JUMP" and not drops \
                    or any(ins.opname.startswith("STORE") or ins.opname in CONDITIONAL_JUMPS
                           for ins in code[:-1]):
                continue
            tests.add(b)
            todo.extend(block.succs)
        if self.cfg.block_of[pos] not in tests:
            return None
        outcomes = {s for b in tests for s in self.cfg.blocks[b].succs if s not in tests}
        inside = [self.cfg.blocks[s].start for s in outcomes if s in blocks]
        outside = {self.final_place(self.cfg.blocks[s].start) for s in outcomes if s not in blocks}
        if len(inside) != 1 or len(outside) != 1:
            return None
        exit_pos = min(self.cfg.blocks[s].start for s in outcomes if s not in blocks)
        test_end = max(self.cfg.blocks[b].end for b in tests) - 1
        return test_end, inside[0], exit_pos

    def emit_loop_body_from_header(self, pos, loop, ctx, stack):
        # (as in the other loops: reaching where the enclosing statement ends is a ``break`` when
        # the loop's breaks land there)
        return self.emit(pos, Context(ctx.stops - loop.breaks, loop, ctx.layers), list(stack))

    def loop_test(self, pos, test_end, body_start, exit_pos, stack, scratch, ctx):
        """The condition under which a while loop's test enters the body."""
        consumed: set[int] = set()
        end, stop = self.run_test(pos, stack, scratch, consumed, ctx, test_end)
        if scratch or stop.ins is None or stop.ins.opname not in POP_JUMPS:
            raise self.error(pos, "while test with statements")
        t, f = self.branches(end - 1)
        cond = stop.condition
        if _continues_chain(cond, stack):
            cond, t, f = self.resolve_chain(cond, t, f, stack, ctx, consumed)
        cond, t, f, _ = self.compound(cond, t, f, consumed, stack,
                                      Context(ctx.stops | {body_start, exit_pos}, ctx.loop, ctx.layers),
                                      keep=(body_start, exit_pos))
        same = self.same_place
        if same(t, body_start) and same(f, exit_pos):
            return cond
        if same(f, body_start) and same(t, exit_pos):
            return negate(cond)
        raise self.error(pos, "unrecognised while-loop test")


def breaks_out(body: list) -> bool:
    """Does a ``break`` in ``body`` leave the loop whose body it is (not one of a loop inside)?"""
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Break):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            todo.extend(node.orelse)    # (a ``break`` in its else clause is the enclosing loop's)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.expr)):
            todo.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.expr))
    return False


def strip_continue(body: list) -> list:
    """Drop ``continue`` statements that end a loop body (directly or at the end of an if), but
    not one that jumps to a while loop's test at the top (``Structurer.continue_stmt``): without
    it, the end of the body would run the bottom copy of the test instead."""
    if not body:
        return body
    last = body[-1]
    if isinstance(last, ast.Continue) and not getattr(last, "to_top", False):
        return strip_continue(body[:-1])
    if isinstance(last, ast.Break) and len(body) > 1 and _continues_alone(body[-2]):
        # ``if c: ...; continue`` then ``break`` ending the body: the if's else clause breaks
        guard = body[-2]
        guard.body, guard.orelse = strip_continue(guard.body) or [ast.Pass()], [last]
        return body[:-1]
    if isinstance(last, ast.If):
        last.body = strip_continue(last.body) or [ast.Pass()]
        last.orelse = strip_continue(last.orelse)
    if isinstance(last, TRY_NODES):
        if not last.orelse:
            last.body = strip_continue(last.body) or [ast.Pass()]
        for handler in last.handlers:
            handler.body = strip_continue(handler.body) or [ast.Pass()]
        last.orelse = strip_continue(last.orelse)
    if isinstance(last, (ast.With, ast.AsyncWith)):
        last.body = strip_continue(last.body) or [ast.Pass()]
    if isinstance(last, ast.Match):
        for case in last.cases:
            case.body = strip_continue(case.body) or [ast.Pass()]
    return body


def _continues_alone(node: ast.stmt) -> bool:
    """An ``if`` without an else clause whose body ends with a ``continue`` to the body's end."""
    return isinstance(node, ast.If) and not node.orelse and bool(node.body) \
        and isinstance(node.body[-1], ast.Continue) and not getattr(node.body[-1], "to_top", False)
