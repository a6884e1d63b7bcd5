"""Leaving protected regions: their exit sequences, and the statement (return, break,
continue) or normal exit the way out is."""

from __future__ import annotations

import ast

from depyf.decompiler import values as v
from depyf.decompiler.instructions import FOR_ITERS, NAME_DELETES, NAME_STORES, features
from depyf.decompiler.structure.model import NO_CONTINUATION, Context, ExitKind, Layer, RegionKind, Sentinel


class RegionExits:
    """Exits of the protected regions being emitted."""

    def leave_region(self, pos: int, ctx: Context, stack: list, out: list) -> bool:
        """Control leaves the innermost protected region at ``pos``: skip its exit sequence(s).

        Returns True for the region's normal exit (recorded in the layer), False when the exit
        became a statement (return, break, continue) appended to ``out``.
        """
        first = ctx.layers[-1]
        first_exit = self.skip_exit(first, pos, stack)
        p = self.leave_enclosing(first_exit, ctx.layers, stack)
        kind = self.final_kind(p, ctx)
        continuation = self.continuation_place(first, ctx.layers)
        dest = self.follow_jumps(p)
        goes_on = continuation not in (None, NO_CONTINUATION) \
            and (dest == continuation or self.same_return_block(dest, continuation))
        if kind is ExitKind.RETURN and goes_on:
            # a copy of the code after the try statement (a copied return tail), falling on from the clause
            first.normal_exits.append(first.continuation)
            return True
        if kind is None:
            exit_to = self.follow_jumps(first_exit)
            if features().handlers_laid_out_last and exit_to is not None and exit_to < len(self.instrs) \
                    and self.instrs[exit_to].opname == "JUMP":
                back = self.cfg.pos(self.instrs[exit_to].target)
                if (
                    back is not None
                    and back < exit_to
                    and not self.jumps_back_to_its_loop(exit_to, back)
                ):
                    # to code laid out before the handler (``handlers_laid_out_last``), unless the
                    # jump is a loop's jump back (a ``continue``): a loop right after the try
                    # statement has its head there, outside the handler. (A jump that skips the
                    # interrupt check is never a loop's jump back, even to a loop's header: without
                    # ``copies_loop_tests``, a while loop right after the try body starts with its test.)
                    exit_to = self.follow_jumps(back)
            if continuation is None or dest is None or self.final_kind(dest, ctx) is not ExitKind.RETURN:
                first.normal_exits.append(exit_to)
                return True
            if goes_on:
                first.normal_exits.append(first.continuation if p != first_exit else exit_to)
                return True
            # a jump to a return other than where the try statement goes on: the clause's own
            # (a compiler that copies return tails copies a clause's returns into each path to them;
            # the version module shares the copies)
            p, kind = dest, ExitKind.RETURN
        if kind is ExitKind.RETURN:
            q = p
            while q is not None and q + 1 < len(self.instrs) and self.instrs[q].opname == "POP_TOP":
                q += 1
            if q is None or self.instrs[q].opname != "LOAD_CONST":
                q = p           # (iterators are popped before a constant is loaded and returned)
            node = ast.Return(self.return_value(q, stack))
            node.source_line = self.instrs[p].lineno if p is not None else None
            if any(layer.kind in (RegionKind.FINALLY, RegionKind.WITH) for layer in ctx.layers):
                # the RETURN follows a copy of a finally body or of a with's exit, whose line it
                # takes: returns of different statements share it (``if c: return x`` and the
                # implicit ``return None`` at the end are no ``return x if c else None``)
                node.after_exit_copy = True
            out.append(node)
        elif kind is ExitKind.BREAK:
            out.append(ast.Break())
        elif kind is ExitKind.CONTINUE:
            out.append(self.continue_stmt(p, ctx))
        return False

    def body_continuation(self, layer: Layer, ctx: Context) -> int | None:
        """Where a try body that seems to go on at several places goes on, when all of them but
        one are blocks that return without computing anything (``return <constant>``): a compiler
        with a block stack puts a constant return after the body's POP_BLOCK, outside the handler's
        range, and the version module makes its copies jumps to one. Those are the body's own
        returns; None when the exits need no second reading."""
        places = self.one_return_copy(layer.normal_exits)
        if len(places) < 2 or None in places:
            return None
        rest = [p for p in places if self.final_kind(p, ctx) is not ExitKind.RETURN]
        return rest[0] if len(rest) == 1 else None

    def clause_continuation(self, h_layer: Layer, ctx: Context) -> int | Sentinel | None:
        """Where except clauses that seem to go on at several places go on, when the try body
        never does (no ``continuation`` known) and all of those places but one (or all) return.

        Returns the one that does not return, ``NO_CONTINUATION`` when all do, or None when
        the clauses' exits need no second reading.
        """
        if h_layer.continuation is not None:
            return None
        places = self.one_return_copy(h_layer.normal_exits)
        if len(places) < 2 or None in places:
            return None
        rest = [p for p in places if self.final_kind(p, ctx) is not ExitKind.RETURN]
        if len(rest) > 1:
            return None
        return rest[0] if rest else NO_CONTINUATION

    def leave_enclosing(self, p: int | None, layers: tuple, stack: list) -> int | None:
        """Past the exit sequences of the regions around the innermost that ``p`` (just after
        the innermost's exit sequence) leaves too."""
        k = len(layers) - 1
        while p is not None and k > 0:
            # a value returned from inside for loops between the two regions pops their
            # iterators from under it first
            while (
                p + 2 < len(self.instrs)
                and self.instrs[p].opname == "SWAP"
                and self.instrs[p].argval == 2
                and self.instrs[p + 1].opname == "POP_TOP"
            ):
                p += 2
            if layers[k - 1].kind is RegionKind.HANDLER and p + 1 < len(self.instrs) \
                    and self.instrs[p].opname == "SWAP" and self.instrs[p].argval == 2 \
                    and self.instrs[p + 1].opname == "POP_EXCEPT":
                # a value returned through nested except clauses: each pops its saved exception
                # from under the value, still inside the enclosing clause's cleanup region
                p += 1
            elif self.covered(p, layers[k - 1]):
                break
            k -= 1
            p = self.skip_exit(layers[k], p, stack)
        return p

    def continuation_place(self, layer: Layer, layers: tuple) -> int | Sentinel | None:
        """Where control lands when the except clauses of ``layer`` go on after their try
        statement: their continuation, past the exits of the regions it leaves too.

        None when unknown (not except clauses, or their try body never went on), and
        ``NO_CONTINUATION`` when the try statement cannot go on, as its body never does and
        its clauses only seem to (see ``clause_continuation``).
        """
        c = layer.continuation      # (None but for except clauses)
        if c is None or c is NO_CONTINUATION:
            return c
        return self.follow_jumps(self.leave_enclosing(c, layers, []))

    def final_kind(self, p, ctx) -> ExitKind | None:
        """What the code at ``p``, reached on leaving a region, does: RETURN, BREAK or CONTINUE
        (None: none of those, the region's normal exit)."""
        if p is None or p >= len(self.instrs):
            return None
        # a return from inside for loops first pops their iterators: SWAP 2; POP_TOP
        # ... and leaving except handlers pops their saved exception state: SWAP 2; POP_EXCEPT
        while p + 2 < len(self.instrs) and self.instrs[p].opname == "SWAP" and self.instrs[p].argval == 2 \
                and self.instrs[p + 1].opname in ("POP_TOP", "POP_EXCEPT"):
            p += 2
        if ctx.loop is not None and p in ctx.loop.continues:
            return ExitKind.CONTINUE
        if ctx.loop is not None and p in ctx.loop.breaks:
            return ExitKind.BREAK
        if ctx.loop is not None and self.same_return_block(p, ctx.loop.after):
            return ExitKind.BREAK
        ins = self.instrs[p]
        if ins.opname == "RETURN_VALUE":
            return ExitKind.RETURN
        if (
            ins.opname == "LOAD_CONST"
            and p + 1 < len(self.instrs)
            and self.instrs[p + 1].opname == "RETURN_VALUE"
        ):
            return ExitKind.RETURN
        pops = 0
        while ins.opname == "POP_TOP" and p + 1 < len(self.instrs):
            p += 1
            pops += 1
            ins = self.instrs[p]
        if pops == 1 and ctx.loop is not None and self.instrs[ctx.loop.header].opname in FOR_ITERS:
            # pops the iterator, then runs (a copy of) the code after the loop, or jumps to a copy
            # another way out shares (copies of a return tail are shared by the version module)
            landing = self.cfg.pos(ins.target) if ins.opname == "JUMP" else p
            if any(q in ctx.loop.breaks or self.same_return_block(q, ctx.loop.after)
                   for q in (p, landing) if q is not None):
                return ExitKind.BREAK
        if pops and ins.opname == "LOAD_CONST" and p + 1 < len(self.instrs) \
                and self.instrs[p + 1].opname == "RETURN_VALUE":
            return ExitKind.RETURN  # ``return <constant>`` inside for loops: their iterators popped first
        if ins.opname == "JUMP" and ctx.loop is not None:
            t = self.cfg.pos(ins.target)
            if t in ctx.loop.continues:
                return ExitKind.CONTINUE
            if t in ctx.loop.breaks:
                return ExitKind.BREAK
        return None

    def return_value(self, p, stack):
        ins = self.instrs[p]
        if ins.opname == "LOAD_CONST":
            return self.executor_value_const(ins)
        for item in reversed(stack):
            if isinstance(item, (ast.expr, v.FunctionValue)):   # (a lambda: a function not yet stored)
                return self.executor.value(item, ins)
        raise self.error(p, "return value not found")

    def executor_value_const(self, ins):
        scratch: list = []
        self.executor.op_LOAD_CONST(ins, scratch, [])
        return scratch[0]

    def skip_exit(self, layer: Layer, p: int | None, stack: list) -> int | None:
        if p is None:
            return None
        ins = self.instrs
        if layer.kind is RegionKind.FINALLY:
            return self.skip_finally_copy(layer.finally_ops, p)
        if layer.kind is RegionKind.WITH:
            # (the exit code may be reached through jumps: a layout that shares one copy of it)
            k = self.follow_jumps(p)
            if k is None:
                raise self.error(p, "with exit call not found")
            limit = k + 8
            while k < len(ins) and k < limit:
                if ins[k].opname == "CALL" and ins[k].argval == 2:
                    k += 1
                    if k < len(ins) and ins[k].opname == "AWAIT":
                        k += 1
                    if k < len(ins) and ins[k].opname == "POP_TOP":
                        k += 1
                    return k
                k += 1
            raise self.error(p, "with exit call not found")
        if layer.kind is RegionKind.HANDLER:
            k = p
            if features().jumps_cannot_raise and k < len(ins) and ins[k].opname == "JUMP":
                # (a jump of the clause to its exit, left out of the handler's range: a jump
                # cannot raise)
                t = self.follow_jumps(k)
                if t is not None and t < len(ins) and ins[t].opname == "POP_EXCEPT":
                    k = t
            if k + 1 < len(ins) and ins[k].opname == "POP_TOP" and ins[k + 1].opname == "POP_EXCEPT":
                k += 1
            if k < len(ins) and ins[k].opname == "POP_EXCEPT":
                k += 1
            return self.past_name_unbinding(k)
        return p

    def past_name_unbinding(self, p: int) -> int:
        """Past the ``LOAD_CONST None; STORE x; DELETE x`` that unbinds the name an ``except ...
        as x`` clause bound, where the code at ``p`` starts with it (else ``p``)."""
        ins = self.instrs
        if p + 2 < len(ins) and ins[p].opname == "LOAD_CONST" and ins[p].argval is None \
                and ins[p + 1].opname in NAME_STORES and ins[p + 2].opname in NAME_DELETES \
                and ins[p + 1].argval == ins[p + 2].argval:
            return p + 3
        return p
