"""``if`` statements: a conditional jump whose branches meet again, or leave the region."""

from __future__ import annotations

import ast
import copy

from depyf.decompiler.cleanup import terminates
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.executor import replace_everywhere, replace_in
from depyf.decompiler.expressions import negate
from depyf.decompiler.instructions import features
from depyf.decompiler.structure.conditions import _continues_chain
from depyf.decompiler.structure.model import (
    UNREAD,
    BranchesEndApart,
    BranchWay,
    Context,
)
from depyf.decompiler.structure.value_flows import kept_values

# the most lines a loop body's last ``if`` keeps nested where it is also the code of ``if not c:
# continue`` and what follows (``Features.conditional_jumps_go_forward``)
_SHORT_ROUND_END_LINES = 3


class IfBuilder:
    """The statement of a conditional jump: ``if``/``else``, or an exit (break, continue, return)."""

    def conditional(self, i: int, cond, ctx: Context, stack: list, out: list) -> int | None:
        t, f = self.branches(i)
        self.executor.assign_pending_walrus(cond, stack, out)
        chained = unread_chain = None
        members = {self.cfg.block_of[i]}
        if _continues_chain(cond, stack):
            # ``a <= f(x) <= b``: the middle operand is shared with the next test by design; read
            # the chain before naming shared values (naming it would evaluate f(x) before a)
            saved = list(stack)
            try:
                chained = self.resolve_chain(cond, t, f, stack, ctx, members)
            except DecompilationError as exc:
                stack[:] = saved
                members = {self.cfg.block_of[i]}
                unread_chain = exc
        if chained is not None:
            cond, t, f = chained
        else:
            if unread_chain is not None and _evaluated_later(cond.left):
                # its left operand was computed before the shared middle one: name it first
                name = self.executor.new_temp()
                out.append(ast.Assign([ast.Name(name, ast.Store())], cond.left))
                cond.left = ast.Name(name, ast.Load())
            holder = ast.Expr(cond)
            self.executor.name_repeated_parts(holder, stack, out)
            cond = holder.value
            if _continues_chain(cond, stack):
                # the middle operand was not named apart: the same chain resolve_chain could not read
                raise unread_chain or self.error(i, "unrecognised chained comparison")
        cond, t, f, _ = self.compound(cond, t, f, members, stack, ctx)
        # even a plain ``if a:`` runs code (``a.__bool__``): values computed before it stay before it
        pending = [x for x in stack if _evaluated_later(x)]
        if pending:
            out = _SpillBeforeIf(out, pending, stack, self.executor)
        rt, rf = self.resolve_exit(t, ctx, stack), self.resolve_exit(f, ctx, stack)
        if rt.way is BranchWay.ON and rf.way is BranchWay.STMT and self.ends_round(f, t, ctx):
            return self._if_to_round_end(cond, t, f, ctx, stack, out)
        if rf.way is BranchWay.ON and rt.way is BranchWay.STMT and self.ends_round(t, f, ctx):
            return self._if_to_round_end(negate(cond), f, t, ctx, stack, out)
        if rt.way is BranchWay.ON and rf.way is BranchWay.STMT and self.guards_round_end(f, t, ctx):
            out.append(ast.If(cond, self.emit(t, ctx, list(stack)) or [ast.Pass()], []))
            return None
        join = None
        if rt.way is BranchWay.ON and self.meets_its_exit(t, f, rf, ctx) \
                or rf.way is BranchWay.ON and self.meets_its_exit(f, t, rt, ctx):
            # (``if c: body`` ending a try body, whose normal exit copies the finally body and
            # returns; ``if c: return x`` before a ``continue``)
            join = t if rt.way is not BranchWay.ON else f
        elif rt.way is not BranchWay.ON or rf.way is not BranchWay.ON:
            try:
                return self.conditional_exit(cond, t, f, rt, rf, ctx, stack, out)
            except BranchesEndApart as apart:
                # (one branch goes to where the enclosing statement ends, the other's code ends
                # there too and elsewhere: the test of a loop that never loops, as below)
                if {rt.way, rf.way} != {BranchWay.END, BranchWay.ON}:
                    raise
                end = rf.place if rf.way is BranchWay.END else rt.place
                return self._once_loop_or_raise(apart, end, i, cond, t, f, ctx, stack, out)
        if join is None:
            join = self.join_of(t, f, ctx)
        if join is None:
            join = self.join_past_ended_branch(t, f, ctx)
        if join is None and ctx.loop is not None:
            join = self.join_at_body_end(t, f, ctx.loop)
        if join is None and ctx.loop is not None:
            join = self.value_join_after_loop(t, f, ctx, stack)
        if join is None:
            value = self.value_before_copied_tails(t, f, ctx, stack)
            if value is not None:
                then, other, join = value
                stack.append(ast.IfExp(*in_layout_order(cond, self.executor.value(then, self.instrs[i]),
                                                        self.executor.value(other, self.instrs[i]), t, f)))
                return join
            join = self.join_by_dominators(i, t, f, ctx.loop)
        if join is not None and ctx.loop is not None and join in ctx.loop.breaks:
            # the values of a conditional expression meeting after the loop (``while c: return
            # a if b else d`` inside a try: the return runs the finally body, laid out apart)
            values = self.one_value_each(((t, join), (f, join)), ctx, stack, past_loop=True)
            if values is not None:
                self._values_meeting_after_loops.add(join)
                stack.append(self.conditional_value(cond, self.executor.value(values[0], self.instrs[i]),
                                                    self.executor.value(values[1], self.instrs[i]),
                                                    stack, False))
                return join
        inner = ctx.with_stops(join)
        s_then, s_else = list(stack), list(stack)
        shared = None
        if join is not None and self._goes_on_into(t, f, join):
            shared = self.shared_operand_key(f, inner, stack)
            self._shared_operands[shared] = None    # wanted: value_bool_op keeps what it reads
        reused = False
        try:
            then = self.emit(t, inner, s_then)
            ends, left = [self.ended_at], [self.left_through]
            reused = shared is not None and self.read_shared_operand(f, inner, s_else)
            other = [] if reused else self.emit(f, inner, s_else)
            ends.append(join if reused else self.ended_at)
            left.append(None if reused else self.left_through)
            for k in (0, 1):
                # (one branch left the region where the other goes on in it)
                self._not_left_alone(t, ends[1 - k], self._left_through(left[k], ends[1 - k], ctx))
                # (one branch fell off where an enclosing statement ends, not where they meet;
                # without a join, the two ends are compared once)
                if join is not None or k == 0:
                    self._end_together(t, ends[k], join if join is not None else ends[1])
        except BranchesEndApart as apart:
            # (where the branches meet; without a join, where the false branch starts: the code
            # after a loop whose body always returns, breaks or raises)
            end = join if join is not None else f
            return self._once_loop_or_raise(apart, end, i, cond, t, f, ctx, stack, out, join is None)
        finally:
            if shared:
                self._shared_operands.pop(shared, None)
        if len(s_then) == len(stack) + 1 and len(s_else) == len(stack) + 1 and not then and not other \
                and join is not None:
            then_value = self.executor.value(s_then[-1], self.instrs[i])
            else_value = self.executor.value(s_else[-1], self.instrs[i])
            if reused:      # (``then`` holds the value read once for both: see conditional_value)
                stack.append(self.conditional_value(cond, then_value, else_value, stack, reused))
            else:
                stack.append(ast.IfExp(*in_layout_order(cond, then_value, else_value, t, f)))
            return join
        if reused:      # (the value read once serves one branch only)
            s_else[-1] = copy.deepcopy(s_else[-1], kept_values(stack))
        # a branch that never goes on (``break``, ``return``): what it left on the stack is never
        # used (a ``return`` in a ``for`` loop pops the iterator the other branch still holds)
        stacks_differ = len(s_then) != len(s_else)
        then_ends, other_ends = terminates(then, through_try=True), terminates(other, through_try=True)
        then_leaves, other_leaves = stacks_differ and then_ends, stacks_differ and other_ends
        both_leave = then_leaves and other_leaves
        if then_ends != other_ends and join is not None and join in ends:
            if then_ends:
                s_then = list(s_else)
            else:
                s_else = list(s_then)
        if len(s_then) != len(s_else) and join is not None and then and other and not both_leave:
            if ctx.layers and not self.covered(join, ctx.layers[-1]):
                # the branches meet only outside the protected code they are in (the paths that
                # raise leave the enclosing loop, so its join passes them by): each leaves it
                # on its own way, as where they never meet
                out.append(ast.If(cond, then, other))
                return None
            raise self.error(i, "branches leave different stacks")
        # the branches meet only outside the protected code they are in, and neither falls into
        # that place: each left the code on its own way (a normal exit, ``break``)
        apart = join is not None and (both_leave or join not in ends and ctx.layers
                                      and not self.covered(join, ctx.layers[-1]))
        if join is not None and not apart:
            _settle_branch_stacks(stack, s_then, then, s_else, other, pending,
                                  lambda: self.error(i, "branches leave different values on the stack"))
            keep = s_then if len(s_then) >= len(s_else) else s_else
            stack[:] = keep if then else (s_else if other else keep)
        if other and t is not None and f is not None and f < t:
            # the branch laid out first is the one the test falls into: the source's ``if`` body
            # (``if not c: raise E`` before the code it guards, as written)
            cond, then, other = negate(cond), other, then
        out.append(ast.If(cond, then or [ast.Pass()], other))
        if join is None:
            return _common_stop(ends, (then_ends, other_ends))
        return None if apart else join

    def ends_round(self, pos: int | None, body: int | None, ctx: Context) -> bool:
        """Does a jump to ``pos`` only end the loop body, where the code at ``body`` (laid out
        before it) runs to anyway? Then the test guards ``body`` (``if c: body`` as the body's
        last statement), not a ``continue``: ``pos`` is the jump back laid out last in the loop,
        or the bottom copy of a while loop's test, and nothing the walk stops at lies between."""
        loop = ctx.loop
        if loop is None or pos is None or body is None or body >= pos or not self.cfg.is_leader(pos):
            return False
        if any(body < stop < pos for stop in ctx.stops):
            return False    # (``body`` ends where an enclosing statement does: the jump skips more)
        block_of = self.cfg.block_of
        if any(self._reaches(block_of[body], block_of[stop], avoiding=block_of[pos]) for stop in ctx.stops
               if pos < stop < len(self.instrs) and self.in_loop_body(block_of[stop], loop)):
            # (``body`` jumps past it, to where an enclosing statement of the loop body ends:
            # code of the body that never goes back)
            return False
        if loop.back is not None and pos in loop.continues and pos != loop.header:
            return pos <= loop.back
        block = self.cfg.block_at(pos)
        ins = self.instrs[pos]
        if block.end - block.start != 1 or ins.opname != "JUMP" or self.cfg.pos(ins.target) != loop.header:
            return False
        after = pos + 1
        if after >= len(self.instrs) or self.cfg.block_of[after] not in loop.blocks:
            return True
        # a jump back that ``body`` runs into as well: the end of the branch of an enclosing
        # statement that the test ends (``if a: (if c: body) else: ...`` ending the loop body)
        return self.join_of(body, pos, ctx) == pos

    def guards_round_end(self, pos: int | None, body: int | None, ctx: Context) -> bool:
        """Where no conditional jump goes backwards, is a test that jumps back to the loop's
        header from before ``body``, which runs to the end of the loop body, ``if c: body``?
        It is also the code of ``if not c: continue`` then ``body``: a short ``body`` (a few
        lines) reads as the ``if``, as earlier CPythons lay it out; a long one stays a guard
        clause, whose ``continue`` keeps the rest unnested. (Asked only where the test jumps back
        when false: where it jumps back when true, ``if c: continue`` reads without a ``not``.)"""
        loop = ctx.loop
        if loop is None or pos != loop.header or body is None or body < pos \
                or not features().conditional_jumps_go_forward:
            return False
        last = max(self.cfg.blocks[b].end for b in loop.blocks) - 1
        jump = self.instrs[last]
        if body >= last or jump.opname != "JUMP" or self.cfg.pos(jump.target) != pos:
            return False
        if any(body < stop <= last for stop in ctx.stops):
            return False
        block_of = self.cfg.block_of
        if any(self._reaches(block_of[body], block_of[stop], avoiding=block_of[pos]) for stop in ctx.stops
               if last < stop < len(self.instrs) and self.in_loop_body(block_of[stop], loop)):
            # (``body`` runs on to where an enclosing statement ends: code after it that never goes back)
            return False
        return len({ins.lineno for ins in self.instrs[body:last]} - {None}) <= _SHORT_ROUND_END_LINES

    def _if_to_round_end(self, cond, body: int, end: int, ctx: Context, stack: list, out: list) -> int:
        """``if cond: <body>`` as the last statement of a loop body that ends at ``end``."""
        out.append(ast.If(cond, self.emit(body, ctx.with_stops(end), list(stack)) or [ast.Pass()], []))
        return end

    def _goes_on_into(self, t: int, f: int, join: int) -> bool:
        """Does the branch at ``t`` end, just before ``f``, in a value-keeping test (``a or``, ``a
        and``) that jumps to ``join`` and otherwise goes on into ``f``'s code?"""
        last = self.instrs[f - 1] if t < f else None
        return last is not None and last.opname in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP") \
            and self.cfg.pos(last.target) == join

    def _once_loop_or_raise(self, apart: BranchesEndApart, end: int | None, i: int, cond, t: int, f: int,
                            ctx: Context, stack: list, out: list, no_join: bool = False) -> int | None:
        """The test at ``i`` read as a loop that never loops, whose breaks go to ``end``, when one
        of the places ``apart`` found its inner branches ending at is ``end``; else ``apart``.
        With ``no_join`` (the test's branches never meet: ``end`` is where it goes when false),
        also where an inner branch went through ``end``'s code on its way out of the protected
        region (a ``break`` to the code after the loop, which leaves it by its normal exit), or
        where the code at ``end`` runs into one of the places (the loop's else clause)."""
        places = sorted(p for p in apart.places if p is not None)
        if end is not None and no_join and not any(self.same_place(end, p) for p in places):
            # a loop with an else clause: its breaks land where the else clause runs into, or,
            # where the clause never runs off its end, right after its code
            into = next((q for p in places for q in [self._where_it_runs_into(end, p)] if q is not None),
                        None)
            if into is None:
                into = self._place_right_after(end, places, t)
            end = into if into is not None else end
        if end is None or not (any(self.same_place(end, p) for p in places)
                               or no_join and end in (apart.left_through or ())):
            raise apart
        after = self.once_loop(i, cond, t, f, end, ctx, stack, out)
        if after is UNREAD:
            raise apart
        return after

    def _place_right_after(self, start: int, places: list[int], body: int) -> int | None:
        """The first of ``places`` (in layout order) laid out after the code at ``start`` that a
        jump enters (as a ``break`` does), when every block between is reached only through
        ``start``'s block, is code of the loop body at ``body`` or is reached only by raising
        (except clauses, which some compilers lay out after the code they protect): the code
        right after a loop's else clause that returns or raises, where the loop's breaks land."""
        cfg = self.cfg
        first = cfg.block_of[start]
        landings = (self.final_place(p) for p in places)
        later = sorted(q for q in landings if q is not None and q > start and self._entered_by_a_jump(q))
        if not later:
            return None
        stop = cfg.block_of[later[0]]
        idom = self._dominators()
        loop_code = cfg.reach([cfg.block_of[body]], keep=lambda b: b not in (first, stop))
        without_raising = cfg.reach([0], raising=False)
        if all(self._dominates(first, b, idom) or b in loop_code or b not in without_raising
               for b in range(first, stop)):
            return later[0]
        return None

    def _entered_by_a_jump(self, pos: int) -> bool:
        """Does a block start at ``pos`` that an unconditional jump enters?"""
        cfg = self.cfg
        return cfg.is_leader(pos) and any(
            last.opname == "JUMP" and cfg.pos(last.target) == pos
            for last in (self.instrs[cfg.blocks[b].end - 1] for b in cfg.blocks[cfg.block_of[pos]].preds))

    def _where_it_runs_into(self, start: int, p: int) -> int | None:
        """Where the code at ``start`` runs into ``p`` (``p`` itself) or into a copy of the
        returning code at ``p`` (the position of that copy); None when it does neither."""
        if self.join_within(start, p, None) == p:
            return p
        k = start
        for _ in range(64):     # (straight code, up to its return)
            if k is None or k >= len(self.instrs):
                return None
            if self.same_place(k, p):
                return k
            ins = self.instrs[k]
            if ins.opname == "JUMP":
                k = self.cfg.pos(ins.target)
            elif ins.target is not None or ins.opname in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                return None
            else:
                k += 1
        return None

    def _not_left_alone(self, t: int, place: int | None, left: frozenset[int] | None) -> None:
        """One branch of a test left the protected region by its normal exit (``left``: the block
        starts it went through, from ``_left_through``) while the other goes on at ``place``
        inside the region: no ``if`` says it. Raise for the enclosing statement to read (a loop
        that never loops, whose ``break`` is that way out)."""
        if left is not None:
            error = self.error(t, "one branch leaves the protected region, the other goes on in it")
            raise BranchesEndApart(error.reason, (place,), left_through=left, qualname=error.qualname,
                                   offset=error.offset, opname=error.opname)

    def _end_together(self, t: int, one: int | None, other: int | None) -> None:
        """Both branches of a test fall off their code at the stops ``one`` and ``other``: where
        those are two places (``if c: ... (jump to the end of an enclosing if) ...``), no ``if``
        says it. Raise for the enclosing statement to read (a loop that never loops)."""
        if one is None or other is None or self.same_place(one, other):
            return
        error = self.error(t, "the branches end in different places")
        raise BranchesEndApart(error.reason, (one, other), qualname=error.qualname,
                               offset=error.offset, opname=error.opname)

    def _left_through(self, through: frozenset[int] | None, place: int | None,
                      ctx: Context) -> frozenset[int] | None:
        """``through`` (a branch's ``left_through``) where its sibling goes on at ``place``
        inside the protected region the branch left; else None."""
        if through is None or place is None or not ctx.layers or not self.covered(place, ctx.layers[-1]):
            return None
        return through


def _evaluated_later(item) -> bool:
    """A value computed by code before a condition but still only an expression on the stack."""
    return isinstance(item, ast.expr) and not isinstance(item, (ast.Name, ast.Constant))


def _settle_branch_stacks(stack: list, s_then: list, then: list, s_else: list, other: list, pending: list,
                          error) -> None:
    """Both branches of an ``if`` go on to the same code with the values that were on the stack
    before it: each entry must be the same value on both ways.

    A branch that named a pending value (``__stack_1 = {}`` before mutating it) leaves that name
    on its stack, defined only on its way. The value is named before the ``if`` anyway
    (``_SpillBeforeIf``, and the branch's assignment then reads that name), so the original value
    is kept in both stacks. Any other difference is refused rather than one side picked.
    """
    for k in range(min(len(stack), len(s_then), len(s_else))):
        a, b = s_then[k], s_else[k]
        if a is b or (isinstance(a, ast.Name) and isinstance(b, ast.Name) and a.id == b.id):
            continue
        original = stack[k]
        named_before = any(x is original for x in pending)
        for body, side in ((then, s_then), (other, s_else)):
            if side[k] is original:
                continue
            if named_before and _assigns_value(body, side[k], original):
                side[k] = original
                continue
            raise error()


def _assigns_value(body: list, name, value) -> bool:
    """Does ``body`` assign exactly the object ``value`` to the name ``name``?"""
    if not isinstance(name, ast.Name):
        return False
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign) and node.value is value and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name.id:
                return True
    return False


class _SpillBeforeIf:
    """Where one conditional appends its statement: when that is an ``if`` statement (rather than a
    conditional expression), values the bytecode computed before the test are evaluated first,
    into temporaries, so the test does not run before them. Only ``append`` is offered."""

    def __init__(self, out: list, pending: list, stack: list, executor) -> None:
        self.out, self.pending, self.stack, self.executor = out, pending, stack, executor

    def append(self, node) -> None:
        if isinstance(node, ast.If):
            for item in self.pending:
                name = self.executor.new_temp()
                self.out.append(ast.Assign([ast.Name(name, ast.Store())], item))
                swap = ast.Name(name, ast.Load())
                if isinstance(item, ast.JoinedStr):
                    # f-string parts were merged into the f-string built after the test
                    _replace_parts(node, item.values, ast.FormattedValue(swap, -1, None))
                replace_in(node, item, swap)
                replace_everywhere(self.stack, item, swap)
            self.pending = []
        self.out.append(node)


def _replace_parts(tree: ast.AST, parts: list, new: ast.expr) -> None:
    """Replace the run of f-string ``parts`` (by identity) in any ``JoinedStr`` of ``tree`` by ``new``."""
    if not parts:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            values = node.values
            for k in range(len(values) - len(parts) + 1):
                if all(values[k + j] is parts[j] for j in range(len(parts))):
                    values[k:k + len(parts)] = [new]
                    break


def in_layout_order(cond: ast.expr, then: ast.expr, other: ast.expr, t: int | None, f: int | None
                    ) -> tuple[ast.expr, ast.expr, ast.expr]:
    """The test and branches of ``then if cond else other`` (``t``, ``f``: where each branch's
    code starts), written so that the branch laid out first is the body: the compiler lays out
    ``a if c else b`` as ``c``, then ``a``, then ``b``. Read from a jump taken when the test is
    true (``x if c is not None else y`` jumps on ``None``), the condition comes out negated and
    the branches swapped; written back that way it would compile to the opposite layout."""
    if t is not None and f is not None and f < t:
        return negate(cond), other, then
    return cond, then, other


def _common_stop(ends: list, terminated: tuple[bool, bool]) -> int | None:
    """Where an ``if`` whose branches do not meet falls off as a whole: the stop that each branch
    that goes on fell into (the other returns or raises), so the walk around it knows where it
    ended; None when they fell off at different places or neither goes on."""
    fell = {end for end in ends if end is not None}
    if len(fell) != 1 or not all(end is not None or done for end, done in zip(ends, terminated, strict=True)):
        return None
    return fell.pop()
