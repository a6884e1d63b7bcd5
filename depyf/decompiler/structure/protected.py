"""``try`` and ``with`` statements: the regions the exception table protects."""

from __future__ import annotations

import ast
import copy
import functools

from depyf.decompiler import values as v
from depyf.decompiler.cleanup import terminates
from depyf.decompiler.instructions import FOR_ITERS, POP_JUMPS, features
from depyf.decompiler.pseudo_statements import ReraiseStmt
from depyf.decompiler.structure.model import (
    NO_HANDLER,
    TRY_NODES,
    UNREAD,
    BranchesEndApart,
    Context,
    Layer,
    RegionKind,
    Sentinel,
    TryStar,
)


class TryBuilder:
    """Where protected regions start, and the try/with statement each one is."""

    def covered(self, pos: int, layer: Layer) -> bool:
        return layer.target in self.cfg.handler_chain(pos)

    def test_left_out(self, pos: int, layer: Layer) -> bool:
        """A lone conditional jump between two covered instructions: with ``jumps_cannot_raise``,
        jumps may lie out of the handler's range, so this test inside a ``with`` or ``try`` body
        is still the body's, not a way out of it."""
        block = self.cfg.block_at(pos)
        return features().jumps_cannot_raise and block.start == pos and block.end == pos + 1 \
            and self.instrs[pos].opname in POP_JUMPS and 0 < pos < len(self.instrs) - 1 \
            and self.covered(pos - 1, layer) and self.covered(pos + 1, layer)

    def active_targets(self, ctx: Context) -> set[int]:
        return {layer.target for layer in ctx.layers}

    def try_candidate(self, pos: int, ctx: Context) -> int | None:
        """The outermost handler that starts protecting code at ``pos`` in this context."""
        active = self.active_targets(ctx)
        outer = None
        for t in self.cfg.handler_chain(pos):
            if t in active:
                break
            if self.is_try_handler(t):
                outer = t
        return outer

    def try_start(self, pos: int, ctx: Context, stack: list, out: list) -> int | Sentinel | None:
        """The try or with statement whose protected code starts at ``pos``: where control goes
        next, or ``UNREAD`` where none starts there."""
        chain = self.cfg.handler_chain(pos)
        active = self.active_targets(ctx)
        candidates = [t for t in chain if t not in active and self.is_try_handler(t)]
        if not candidates:
            return UNREAD
        # the outermost new handler starts first; inner ones start inside its body
        for t in chain:
            if t in active:
                break
        outer = None
        for t in chain:
            if t in active:
                break
            if t in candidates:
                outer = t
        if outer is None:
            return UNREAD
        return self.emit_protected(pos, outer, ctx, stack, out)

    def is_try_handler(self, target: int) -> bool:
        p = self.cfg.pos(target)
        return p is not None and self.instrs[p].opname == "PUSH_EXC_INFO"

    def handler_kind(self, target: int) -> RegionKind:
        p = self.cfg.pos(target)
        nxt = self.instrs[p + 1] if p + 1 < len(self.instrs) else None
        if nxt is not None and nxt.opname == "WITH_EXCEPT_START":
            return RegionKind.WITH
        if self.is_except_handler(p):
            return RegionKind.TRY
        return RegionKind.FINALLY

    def is_except_handler(self, p: int) -> bool:
        """PUSH_EXC_INFO at ``p`` starts except clauses: a bare ``except:`` (POP_TOP of the
        exception), or a type test that normal flow reaches without leaving the handler's own
        cleanup range.

        The clauses' type expressions may branch, call and store (``except (A if c else B)``,
        ``except tuple(types)``), so the test is looked for along the flow, not at a fixed
        distance. A finally body reaches no type test that way: those of a try statement
        inside it are entered by raising, under another cleanup handler.
        """
        if self.instrs[p + 1].opname == "POP_TOP":
            return True
        cleanup = self.cfg.handler_at[p]
        blocks = self.cfg.blocks
        seen: set[int] = set()
        work = [self.cfg.block_of[p]]
        while work:
            index = work.pop()
            if index in seen or blocks[index].handler != cleanup:
                continue
            seen.add(index)
            b = blocks[index]
            if any(ins.opname in ("CHECK_EXC_MATCH", "CHECK_EG_MATCH") for ins in self.instrs[b.start:b.end]):
                return True
            work.extend(b.succs)
        return False

    def emit_protected(self, pos: int, target: int, ctx: Context, stack: list, out: list):
        kind = self.handler_kind(target)
        layer = Layer(kind, target)
        if kind is RegionKind.FINALLY:
            layer.finally_ops = self.finally_ops(target)
        entry_stack = list(stack)
        body_ctx = Context(frozenset(), ctx.loop, ctx.layers + (layer,))
        body_stack = list(stack)
        body = self.emit(pos, body_ctx, body_stack)
        continuation = self.body_continuation(layer, ctx) if kind is RegionKind.TRY else None
        if continuation is not None:
            # read again, the returning blocks other than ``continuation`` as the body's own
            layer = Layer(kind, target, continuation=continuation)
            body_ctx = Context(frozenset(), ctx.loop, ctx.layers + (layer,))
            body_stack = list(stack)
            body = self.emit(pos, body_ctx, body_stack)
        after = self.one_exit(self.one_return_copy(layer.normal_exits), pos,
                              "try body leaves at different places", ctx)
        if kind is RegionKind.WITH:
            suppressed = self.with_suppressed_exit(target)
            if after is None:
                after = suppressed
            if len(stack) < 2 or not isinstance(stack[-1], v.WithEnter):
                raise self.error(pos, "with body without a context manager")
            enter = stack[-1]
            items = [ast.withitem(enter.manager, enter.target)]
            node = (ast.AsyncWith if enter.is_async else ast.With)(items, body or [ast.Pass()])
            out.append(node)
            del stack[-2:]
            return after
        hpos = self.cfg.pos(target)
        handler_stack = entry_stack[: self.entry_depth(pos, target)] + [v.ExcValue()]
        if kind is RegionKind.FINALLY:
            fin_layer = Layer(
                RegionKind.HANDLER,
                self.cfg.handler_at[hpos].target if self.cfg.handler_at[hpos] else NO_HANDLER,
            )
            fin_ctx = Context(frozenset(), ctx.loop, ctx.layers + (fin_layer,))
            final = strip_reraise(self.emit(hpos, fin_ctx, handler_stack))
            node = ast.Try(body or [ast.Pass()], [], [], final or [ast.Pass()])
            if len(node.body) == 1 and isinstance(node.body[0], TRY_NODES) and not node.body[0].finalbody:
                inner = node.body[0]
                node = type(inner)(inner.body, inner.handlers, inner.orelse, node.finalbody)
            out.append(node)
            return after
        # except clauses
        cleanup = self.cfg.handler_at[hpos]
        h_layer = Layer(RegionKind.HANDLER, cleanup.target if cleanup else NO_HANDLER, continuation=after)
        try_type = ast.Try
        if self.is_except_star_handler(hpos):
            try_type = TryStar
            handlers, h_after = self.except_star_clauses(hpos, h_layer, ctx, handler_stack[:-1])
        else:
            h_ctx = Context(frozenset(), ctx.loop, ctx.layers + (h_layer,))
            h_stmts = self.emit(hpos, h_ctx, list(handler_stack))
            continuation = self.clause_continuation(h_layer, ctx)
            if continuation is not None:
                # read again, the returning blocks other than ``continuation`` as the clauses' own
                h_layer = Layer(RegionKind.HANDLER, h_layer.target, continuation=continuation)
                h_ctx = Context(frozenset(), ctx.loop, ctx.layers + (h_layer,))
                h_stmts = self.emit(hpos, h_ctx, list(handler_stack))
            handlers = self.except_clauses(h_stmts, pos)
            h_after = self.one_exit(self.one_return_copy(h_layer.normal_exits, after), pos,
                                    "except clauses continue at different places", ctx)
        orelse: list = []
        if after is not None and h_after is None and try_type is ast.Try:
            orelse = self.else_before_the_loop_goes_on(after, handlers, ctx, entry_stack)
            if not orelse:
                orelse = self.else_laid_out_before_the_clauses(after, hpos, handlers, ctx, entry_stack)
            if orelse:
                after = None    # (the else clause never goes on: nothing after the statement runs)
        if after is not None and h_after is not None and after != h_after and try_type is ast.Try \
                and self.clauses_end_the_function(after, h_after, handlers, ctx, entry_stack):
            h_after = after
        if after is not None and h_after is not None and after != h_after:
            # the else clause ends where the except clauses go on, or at its own copy of that
            # place when it is a copied return tail
            orelse = self.emit(
                after, ctx.with_stops(h_after, *self.return_copies(h_after)), list(entry_stack)
            )
            after = h_after
        elif after is None:
            after = h_after
        out.append(try_type(body or [ast.Pass()], handlers, orelse, []))
        return after

    def else_before_the_loop_goes_on(self, after: int, handlers: list, ctx: Context,
                                     entry_stack: list) -> list:
        """The else clause of a try statement that ends a loop's body, when every except clause
        runs off its end into the loop's next round (the test's copy at the bottom, not a written
        ``continue``) and the code where the try body goes on never gets there (it returns,
        raises or breaks): ``while c: try: ... except E: pass else: return x``. Read without it,
        the clauses would end in a ``continue`` that jumps to the test at the top. Each clause's
        last ``continue`` goes; [] when the statement is no such one."""
        if ctx.loop is None or not handlers or not all(
            handler.body and isinstance(handler.body[-1], ast.Continue)
            and not getattr(handler.body[-1], "to_top", False)
            for handler in handlers
        ):
            return []
        loop = ctx.loop
        if not (features().copies_loop_tests and loop.back is not None
                and self.instrs[loop.header].opname not in FOR_ITERS):
            return []   # (only a while loop whose test is copied to the bottom tells them apart)
        if any(self.same_place(after, b) or any(self.same_return_block(after, q)
                                                for q in self.straight_to_end(self.final_place(b)) or ())
               for b in loop.breaks):
            return []   # (the body goes on with a ``break``: the compiler copied the code after the loop)
        orelse = self.emit(after, ctx, list(entry_stack))
        if not terminates(orelse):
            return []
        for handler in handlers:
            handler.body = handler.body[:-1] or [ast.Pass()]
        return orelse

    def else_laid_out_before_the_clauses(self, after: int, hpos: int, handlers: list, ctx: Context,
                                          entry_stack: list) -> list:
        """The else clause of a try statement whose except clauses never go on (they return,
        raise, or end the round of the for loop around: ``continue``), when the code where the
        try body goes on is laid out before them and ends the same ways: ``try: ... except E:
        return a else: return b``. (The same code written after the statement is laid out after
        the clauses.) [] when the statement has none."""
        cfg = self.cfg
        if features().handlers_laid_out_last or not after < hpos or not cfg.is_leader(after) \
                or after in ctx.stops:
            return []   # (where the clauses are laid out last, the code after the statement
            # lies before them too: the layout does not tell the two spellings apart)
        first, clauses = cfg.block_of[after], cfg.block_of[hpos]
        if any(after < s < hpos for s in ctx.stops):
            return []
        loop = ctx.loop
        next_round = {cfg.block_of[loop.header]} if loop is not None and handlers \
            and self.instrs[loop.header].opname in FOR_ITERS \
            and all(h.body and isinstance(h.body[-1], ast.Continue) for h in handlers) else set()
        inside = cfg.reach([first], keep=lambda b: first <= b < clauses, raising=False)
        for b in inside:
            block = cfg.blocks[b]
            if any(s not in inside and s not in next_round for s in block.succs):
                return []   # (it goes on past them: written after the statement, or leaves a loop)
            if b != first and any(p not in inside for p in block.preds):
                return []   # (other code jumps into it: not the else clause alone)
        orelse = self.emit(after, ctx, list(entry_stack))
        return orelse if terminates(orelse) else []

    def one_exit(self, places: set, pos: int, message: str, ctx: Context) -> int | None:
        """The one place the code of a try statement goes on at. Two places are an error that an
        enclosing ``if`` may read as a ``while`` whose body runs once (one of them is where that
        ``if`` ends: the ``break`` of ``while c: try: ... except E: break ... return x``). The
        error names each place and, where the code there is a copy of the finally bodies of
        try statements around this one, the place after those copies too (the ``break`` leaves
        them all)."""
        if len(places) == 2 and None not in places:
            error = self.error(pos, message)
            beyond = {self.past_finally_copies(p, ctx) for p in places} - set(places) - {None}
            raise BranchesEndApart(error.reason, (*sorted(places), *sorted(beyond)),
                                   qualname=error.qualname, offset=error.offset, opname=error.opname)
        return self.single(places, pos, message)

    def past_finally_copies(self, p: int, ctx: Context) -> int | None:
        """Where code at ``p`` goes on after the copies it starts with of the finally bodies of
        the regions being read, innermost first (``p`` itself where it starts with none). The
        copies are walked along their control flow beside the handlers' (``walk_finally_copy``),
        which says where they differ."""
        for layer in reversed(ctx.layers):
            if layer.kind is not RegionKind.FINALLY or layer.finally_ops is None:
                break
            after = self.walk_finally_copy(layer.finally_ops, p)
            if after is None:
                break
            p = after
        return p

    def clauses_end_the_function(self, after: int, h_after: int, handlers: list, ctx: Context,
                                 entry_stack: list) -> bool:
        """Where the except clauses go on is code that ends the function and that only they reach
        (a ``break`` whose loop has no other exit: the compiler copies the code after the loop
        into the clause). Then it is the clauses' own last statements: the try statement goes on
        where its body does. Appended to each clause that runs off its end. (Not for ``except*``,
        whose clauses cannot return.)"""
        if self.straight_to_end(h_after) is None:
            return False
        if after not in ctx.stops and self.return_copies(h_after):
            return False    # the try body's way may run a copy of it: read as the else clause
        if self.cfg.is_leader(h_after):
            blocks = self.cfg.blocks
            # (each way in leaves an except clause)
            if not all(any(ins.opname == "POP_EXCEPT" for ins in self.instrs[blocks[b].start:blocks[b].end])
                       for b in blocks[self.cfg.block_of[h_after]].preds):
                return False
        tail = self.emit(h_after, ctx, list(entry_stack))
        if not terminates(tail):
            return False
        for handler in handlers:
            if not terminates(handler.body):
                kept = [stmt for stmt in handler.body if not isinstance(stmt, ast.Pass)]
                handler.body = [*kept, *copy.deepcopy(tail)]
        return True

    def with_suppressed_exit(self, target: int) -> int | None:
        """Where a with statement goes on after ``__exit__`` suppressed an exception: past its
        cleanup, pops around one ``POP_EXCEPT`` (the next one is an enclosing except clause's
        way out: ``except E as e: with cm: raise``)."""
        p = self.cfg.pos(target)
        for k in range(p, min(p + 8, len(self.instrs))):
            ins = self.instrs[k]
            if ins.opname == "POP_JUMP_IF_TRUE":
                q = self.cfg.pos(ins.target)
                popped_exception = False
                while q is not None and q < len(self.instrs):
                    opname = self.instrs[q].opname
                    if opname == "POP_EXCEPT" and not popped_exception:
                        popped_exception = True
                    elif opname != "POP_TOP":
                        break
                    q += 1
                return self.follow_jumps(q)
        return None

    def entry_depth(self, pos: int, target: int) -> int:
        entries = self._entries_by_target.get(target, ())
        for e in entries:
            if e.start <= self.instrs[pos].offset < e.end:
                return e.depth
        return entries[0].depth if entries else 0

    @functools.cached_property
    def _entries_by_target(self) -> dict[int, list]:
        """The exception entries of each handler, in table order (one scan, not one per try)."""
        found: dict[int, list] = {}
        for e in self.cfg.entries:
            found.setdefault(e.target, []).append(e)
        return found


def strip_reraise(body: list) -> list:
    """Drop the RERAISE that ends every path of a finally body (at the end of its last statement's
    branches too: an if's, a nested try's else or body, its except clauses)."""
    if body and isinstance(body[-1], ReraiseStmt):
        body = body[:-1]    # (what runs before it ends there too: ``try: ... else: <reraise>``)
    last = body[-1] if body else None
    if isinstance(last, ast.If):
        last.body = strip_reraise(last.body) or [ast.Pass()]
        last.orelse = strip_reraise(last.orelse)
    elif isinstance(last, TRY_NODES) and not last.finalbody:
        if last.orelse:
            last.orelse = strip_reraise(last.orelse)
        else:
            last.body = strip_reraise(last.body) or [ast.Pass()]
        for handler in last.handlers:
            handler.body = strip_reraise(handler.body) or [ast.Pass()]
    return body
