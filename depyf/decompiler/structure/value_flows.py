"""Control flow in expression position: conditional expressions and value-position and/or
whose paths meet, or run copies of the code after them."""

from __future__ import annotations

import ast
import copy
import dataclasses

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.executor import replace_in
from depyf.decompiler.expressions import bool_op
from depyf.decompiler.instructions import COPIED_RETURN_LIMIT, compiler_size, copy_key
from depyf.decompiler.structure.conditions import _continues_chain
from depyf.decompiler.structure.model import ENDS_FUNCTION, Context, Loop, exits_recorded, forget_exits


class ValueFlows:
    """Values computed by branching code (``a if c else b``, ``a and b``, ``a < b < c``)."""

    def value_before_copied_tails(self, t: int, f: int, ctx: Context, stack: list) -> tuple | None:
        """A conditional expression whose branches never meet: the small returning code after it
        was copied into both (``return s[:m.start() if m else None].strip()``).

        Each branch is straight-line code ending the function; the longest common tail that
        leaves each branch pushing exactly one value (and running no statement) is the code after
        the expression. Returns (then value, else value, where the else branch's copy of the tail
        starts), or None."""
        a, b = self.straight_to_end(t), self.straight_to_end(f)
        if a is None or b is None:
            return None
        common = 0
        # a copy keeps the line of the code it copies: equal code on other lines was written twice
        # (``if n: return f(a), 0`` / ``else: return g(a), 0`` is no ``(f if n else g)(a)``)
        while common < min(len(a), len(b)) and copy_key(self.instrs[a[-1 - common]]) \
                == copy_key(self.instrs[b[-1 - common]]) \
                and self.instrs[a[-1 - common]].lineno == self.instrs[b[-1 - common]].lineno:
            common += 1
        for n in range(min(common, len(a) - 1, len(b) - 1), 0, -1):
            if _ends_statement(self.instrs[b[-n]]):
                continue
            if compiler_size(self.code, self.instrs[b[-n]].offset, self.instrs[b[-1]].offset) \
                    > COPIED_RETURN_LIMIT:
                continue    # a tail this long the compiler jumps to: two copies were written twice
            values = self.one_value_each(((t, a[-n]), (f, b[-n])), ctx, stack)
            if values is not None and all(isinstance(x, ast.expr) for x in values):
                return values[0], values[1], b[-n]
        return None

    def value_join_after_loop(self, t: int, f: int, ctx: Context, stack: list) -> int | None:
        """Where the two values of a conditional expression inside a loop meet when that is past the
        loop's own blocks (``return -(a if b else c)`` in a loop body): a join of the whole function
        at which both branches have pushed one value and run no statement."""
        join = self.join_within(t, f, None)
        if join is None or self._reaches_loop_control((t, f), join, ctx.loop) \
                or self.one_value_each(((t, join), (f, join)), ctx, stack) is None:
            return None
        return join

    def _reaches_loop_control(self, starts: tuple, join: int, loop: Loop) -> bool:
        """Does normal flow from ``starts`` reach a place of ``loop``'s ``continue`` or ``break``
        before ``join``, or is ``join`` where the loop goes round again? Code that does is no value
        (a value neither repeats nor leaves its loop, and the loop is also entered without it):
        reading it as one, each ``if`` of n nested ones in a loop read the ifs inside it twice."""
        if join in loop.continues:
            return True
        stop = self.cfg.block_of[join]
        control = self._loop_control_blocks(loop) - {stop}
        work = [self.cfg.block_of[p] for p in starts]
        seen = set()
        while work:
            b = work.pop()
            if b in seen or b == stop:
                continue
            if b in control:
                return True
            seen.add(b)
            work.extend(self.cfg.blocks[b].succs)
        return False

    def _loop_control_blocks(self, loop: Loop) -> frozenset[int]:
        """The blocks that start at a place of ``loop``'s ``continue`` or ``break``."""
        key = id(loop)
        found = self._loop_controls.get(key)
        if found is None or found[0] is not loop:
            places = (p for p in loop.continues | loop.breaks if p is not None and self.cfg.is_leader(p))
            found = self._loop_controls[key] = (loop, frozenset(self.cfg.block_of[p] for p in places))
        return found[1]

    def one_value_each(self, branches: tuple, ctx: Context, stack: list,
                       past_loop: bool = False) -> list | None:
        """The value each branch pushes from its start to its stop (``branches``: (start, stop)
        pairs), when each only pushes one value (runs no statement, leaves the stack below as
        it was); else None. With ``past_loop`` a stop where the enclosing loop's breaks land
        ends a branch too (see ``_values_meet_at``)."""
        values = []
        shared = None
        mark = exits_recorded(ctx.layers)
        if len(branches) == 2 and branches[0][1] == branches[1][1] \
                and self._goes_on_into(branches[0][0], branches[1][0], branches[0][1]):
            shared = self.shared_operand_key(branches[1][0], ctx.with_stops(branches[1][1]), stack)
            self._shared_operands[shared] = None    # wanted: value_bool_op keeps what it reads
        try:
            for start, stop in branches:
                trial = list(stack)
                region = _values_meet_at(ctx, stop) if past_loop else ctx.with_stops(stop)
                if shared and values and self.read_shared_operand(start, region, trial):
                    values.append(trial[-1])
                    continue
                try:
                    if self.emit(start, region, trial) or len(trial) != len(stack) + 1 \
                            or any(x is not y for x, y in zip(trial, stack, strict=False)):
                        forget_exits(ctx.layers, mark)
                        return None
                except DecompilationError:
                    forget_exits(ctx.layers, mark)
                    return None
                values.append(trial[-1])
        finally:
            if shared:
                self._shared_operands.pop(shared, None)
        return values

    def value_bool_op(self, i, ins, ctx, stack, out) -> int | None:
        """``a and b`` / ``a or b`` (and chained comparisons) in value position."""
        target = self.cfg.pos(ins.target)
        left = stack.pop()
        is_and = ins.opname == "JUMP_IF_FALSE_OR_POP"
        tail = self.instrs[target:target + 2] if target is not None else []
        # a chain's exit pops the middle operand kept under the result (SWAP 2; POP_TOP); the
        # same pair also pops a for loop's iterator before ``return a or b``
        chained = len(tail) == 2 and tail[0].opname == "SWAP" and tail[0].argval == 2 \
            and tail[1].opname == "POP_TOP" and _continues_chain(left, stack)
        if chained:
            end = target + 2
            region = ctx.with_stops(target, end, self.copied_tail(i + 1, target, end))
            right_stack = list(stack)
            stmts = self.emit(i + 1, region, right_stack)
            if stmts and self.chain_in_copied_tails(i + 1, target, end, stmts, left, stack[-1]):
                out.extend(stmts)
                stack.pop()
                return None
            if stmts or len(right_stack) != len(stack):
                raise self.error(i, "unrecognised chained comparison")
            right = right_stack[-1]
            middle = stack.pop()
            stack.append(self.merge_compare(left, right, middle, i))
            return end
        right_stack = list(stack)
        region = ctx.with_stops(target)
        key = self.shared_operand_key(i + 1, region, stack)
        wanted = key in self._shared_operands
        state = self.executor.state() if wanted else None
        stmts = self.emit(i + 1, region, right_stack)
        if wanted and not stmts and len(right_stack) == len(stack) + 1 \
                and all(x is y for x, y in zip(right_stack, stack, strict=False)) \
                and self.executor.state() == state:
            self._shared_operands[key] = (right_stack[-1], list(stack))
        if stmts or len(right_stack) != len(stack) + 1:
            raise self.error(i, "value-position and/or with statements inside")
        right = self.executor.value(right_stack[-1], ins)
        stack.append(bool_op(ast.And if is_and else ast.Or, self.executor.value(left, ins), right))
        return target

    def shared_operand_key(self, start: int, ctx: Context, stack: list) -> tuple:
        """Names a read of the value that starts at ``start``: ``c and a or r`` tests ``c`` with a
        jump to ``r``, and ``a``'s value-keeping test goes on into the same ``r``. Read once for
        each branch, a chain of n such groups was read 2 ** n times."""
        return (start, ctx.stops, id(ctx.loop), tuple(map(id, ctx.layers)), tuple(map(id, stack)))

    def read_shared_operand(self, start: int, ctx: Context, stack: list) -> bool:
        """Push the value read from ``start`` when the other branch already read it as a
        ``value_bool_op`` operand over the same stack, with no effect on the executor's state (no
        statements, temporaries or pending stores): that very value (``conditional_value`` then
        uses it once)."""
        found = self._shared_operands.get(self.shared_operand_key(start, ctx, stack))
        if not isinstance(found, tuple) or not isinstance(found[0], ast.expr):
            return False
        stack.append(found[0])
        return True

    def conditional_value(self, cond: ast.expr, then: ast.expr, other: ast.expr, stack: list,
                          shared: bool) -> ast.expr:
        """``then if cond else other``. Where ``other`` was read once for both branches
        (``read_shared_operand``), ``then`` is ``a or other`` with that very value: written as
        the compiler read it, ``cond and a or other``, so that it occurs once in the tree."""
        # (``bool_op`` flattened ``a or other`` when ``other`` is an ``or`` itself)
        tail = other.values if isinstance(other, ast.BoolOp) and isinstance(other.op, ast.Or) else [other]
        if shared and isinstance(then, ast.BoolOp) and isinstance(then.op, ast.Or) \
                and len(then.values) > len(tail) \
                and (then.values[-1] is other or all(
                    a is b for a, b in zip(then.values[-len(tail):], tail, strict=True))):
            head = then.values[:-1] if then.values[-1] is other else then.values[:-len(tail)]
            left = head[0] if len(head) == 1 else ast.BoolOp(ast.Or(), head)
            return bool_op(ast.Or, bool_op(ast.And, cond, left), other)   # (flat: no depth per group)
        if shared and any(node is other for node in ast.walk(then)):
            other = copy.deepcopy(other, kept_values(stack))  # a tree, not a graph: each place its own node
        return ast.IfExp(cond, then, other)

    def chain_in_copied_tails(self, start: int, stop: int, end: int, stmts: list, left, middle) -> bool:
        """The last comparison of a chain in value position whose right operand is a conditional
        expression, the compiler having copied the comparison and the returning code after the chain into
        both of its branches: ``stmts`` (read from ``start``) is that one returning statement, with
        the comparison of ``middle``; merged here with ``left`` into the whole chain.

        Each return between ``start`` and ``stop`` must end a copy of ``COMPARE_OP`` and of the
        code at ``end`` (where the chain's failing test goes on), so both ways run that code."""
        tail_end = self.copied_block_end(end)
        if tail_end is None or len(stmts) != 1 or not isinstance(stmts[0], ast.Return):
            return False
        n = tail_end - end
        returns = [k for k in range(start, stop) if self.instrs[k].opname in ENDS_FUNCTION]
        if len(returns) < 2 or any(k - n < start or self.instrs[k - n].opname != "COMPARE_OP"
                                   or not self.repeats(k - n + 1, end, n) for k in returns):
            return False
        found = [node for node in ast.walk(stmts[0]) if isinstance(node, ast.Compare) and node.left is middle]
        if len(found) != 1 or not isinstance(left, ast.Compare):
            return False
        replace_in(stmts[0], found[0], self.merge_compare(left, found[0], middle, start))
        return True


def kept_values(stack: list) -> dict:
    """A ``copy.deepcopy`` memo that keeps the stack's values themselves (a copied value that
    uses one still refers to that same value)."""
    return {id(x): x for x in stack}


def _ends_statement(ins) -> bool:
    """Does ``ins`` use the value before it as a whole statement (``x = v``, ``v``, ``return v``)?
    Branches that each end so read as an if statement, as written, not as one conditional value."""
    return ins.opname.startswith("STORE_") or ins.opname in ("POP_TOP", "RETURN_VALUE")


def _values_meet_at(ctx: Context, stop: int) -> Context:
    """The context to read a branch that pushes a value in, up to ``stop`` where the values meet:
    a jump there ends the branch, even where it would leave the loop (``while c: return a if b
    else d``: the return after the loop is laid out outside it), as a ``break`` carries no value."""
    region = ctx.with_stops(stop)
    if ctx.loop is not None and stop in ctx.loop.breaks:
        region = Context(region.stops, dataclasses.replace(ctx.loop, breaks=ctx.loop.breaks - {stop}),
                         region.layers)
    return region
