"""Reading one condition: its straight-line code, value-position and/or inside it, chained
comparisons, and conditional expressions that compute one of its values."""

from __future__ import annotations

import ast
import functools

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.expressions import bool_op
from depyf.decompiler.instructions import CONDITIONAL_JUMPS, POP_JUMPS, features, protection_key
from depyf.decompiler.structure.model import Context, PureCondition

_SMALL_VALUE = 32    # instructions a conditional expression inside a test may span (bounds trial reads)


class ConditionReader:
    """The test of one conditional jump, with the and/or, chains and values folded into it."""

    def branches(self, i: int) -> tuple[int | None, int | None]:
        """(position when the condition is true, position when false) of the jump at ``i``."""
        ins = self.instrs[i]
        target = self.cfg.pos(ins.target)
        fall = i + 1 if i + 1 < len(self.instrs) else None
        if ins.opname in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE"):
            # POP_JUMP_IF_NONE's condition was rewritten to ``x is None``: jump when true
            return (fall, target) if ins.opname == "POP_JUMP_IF_FALSE" else (target, fall)
        return target, fall

    def pure_condition(self, pos: int, stack: list, members: set[int] | None = None,
                       ctx: Context | None = None):
        """If the block at ``pos`` only computes a condition and jumps, its ``PureCondition``.

        With ``members`` (the blocks of the condition so far) the block must be protected by the
        same exception handler as they are: a test inside a ``try`` body is never folded into a
        condition outside it (its exceptions would escape the handler)."""
        if pos is None or not self.cfg.is_leader(pos):
            return None
        block = self.cfg.block_at(pos)
        if block.exc_preds or pos in self.back_edge_targets or pos in self.while_tests:
            return None
        if members is not None and not self.same_protection(pos, members):
            return None
        if self.instrs[block.end - 1].opname not in CONDITIONAL_JUMPS:
            return None  # (cheap test first: condition networks can be long)
        last = self.instrs[block.end - 1]
        if last.opname.startswith("JUMP_IF"):
            # a value-position and/or: only inside a condition, whose test follows where it joins
            joined = self.cfg.pos(last.target)
            if self.is_chain_exit(joined):
                joined += 2  # (a chained comparison's value: its exit pops the middle operand first)
            if (
                joined is None
                or joined >= len(self.instrs)
                or self.instrs[self.cfg.block_at(joined).end - 1].opname not in CONDITIONAL_JUMPS
            ):
                return None
        trial = list(stack)
        scratch: list = []
        consumed: set[int] = set()
        try:
            end, stop = self.run_test(pos, trial, scratch, consumed, ctx, pos + _SMALL_VALUE)
        except DecompilationError:
            return None
        if scratch or stop.ins is None or stop.ins.opname not in POP_JUMPS:
            return None
        t, f = self.branches(end - 1)
        cond = stop.condition
        if len(trial) == len(stack) + 1:
            try:
                cond, t, f = self.resolve_chain(cond, t, f, trial, ctx, consumed=consumed)
            except DecompilationError:
                return None
        if len(trial) != len(stack) or any(a is not b for a, b in zip(trial, stack, strict=False)):
            return None
        return PureCondition(cond, t, f, block.index, consumed)

    def same_protection(self, pos: int, members: set[int]) -> bool:
        """Is ``pos`` covered by the same exception handler as the start of every block in ``members``?"""
        keys = self._block_handlers
        here = self._handler_key(pos)
        if self._one_handler or all(keys[m] == here for m in members):
            return True
        # a block of jumps alone raises nothing (``jumps_cannot_raise``): it may lie out of its
        # handler's range
        block = self.cfg.block_at(pos)
        return (
            features().jumps_cannot_raise
            and block.start == pos
            and all(
                ins.opname in POP_JUMPS or ins.opname == "JUMP"
                for ins in self.instrs[block.start : block.end]
            )
        )

    def _handler_key(self, p: int) -> tuple | None:
        return protection_key(self.cfg.handler_at[p] if p < len(self.instrs) else None)

    @functools.cached_property
    def _block_handlers(self) -> list[tuple | None]:
        """The handler key of each block's start (what ``same_protection`` compares)."""
        return [self._handler_key(b.start) for b in self.cfg.blocks]

    @functools.cached_property
    def _one_handler(self) -> bool:
        """Does one handler (or none) protect every instruction? Then any two places share it."""
        entries = {id(entry): entry for entry in self.cfg.handler_at[:len(self.instrs)]}
        return len({protection_key(entry) for entry in entries.values()}) <= 1

    def run_condition(self, pos: int, stack: list, out: list, consumed: set, limit: int | None = None,
                      ctx: Context | None = None):
        """Run the straight-line code of a condition from ``pos`` to its conditional jump.

        Value-position ``and``/``or`` inside it (``JUMP_IF_X_OR_POP``) are folded into the value
        they compute, across the blocks they split the code into (collected in ``consumed``, each
        entered only from the condition's own code). With ``limit``, stops there (an operand's end).
        With ``ctx``, conditional expressions inside their right operands are folded too
        (``a < b <= (c if x else d)`` as a value).
        """
        first = pos
        while True:
            block = self.cfg.block_at(pos)
            if pos != first and (block.exc_preds or pos in self.back_edge_targets or pos in self.while_tests
                                 or not set(block.preds) <= consumed
                                 or not self.same_protection(pos, {self.cfg.block_of[first]})):
                raise self.error(pos, "condition code entered from elsewhere")
            consumed.add(block.index)
            if len(consumed) > 32:  # bounded: tried at every block of long condition networks
                raise self.error(pos, "condition with too many value-position and/or")
            if limit is not None and pos > limit:
                # a chained comparison inside the operand took its exit's jump past the
                # operand's end (``a == b == c == 1`` read from its second test on)
                raise self.error(pos, "condition runs past its operand")
            end_at = block.end if limit is None else min(block.end, limit)
            end, stop = self.executor.run(pos, end_at, stack, out)
            if stop.ins is None:
                if limit is not None and end == limit:
                    return end, stop
                if end >= len(self.instrs):
                    raise self.error(pos, "condition runs past the last instruction")
                pos = end
                continue
            if stop.ins.opname not in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
                return end, stop
            target = self.cfg.pos(stop.ins.target)
            if target is None or target <= end or (limit is not None and target > limit):
                raise self.error(end - 1, "unrecognised and/or in a condition")
            left = stack.pop()
            depth = len(stack)
            if self.is_chain_exit(target) and _continues_chain(left, stack):
                # a chained comparison's value (``-(a < b <= c)``): its exit pops the middle operand
                middle = stack[-1]
                end2, stop2 = self.run_operand(end, target, stack, out, consumed, ctx)
                if (
                    stop2.ins is None
                    or stop2.ins.opname != "JUMP"
                    or self.cfg.pos(stop2.ins.target) != target + 2
                    or len(stack) != depth
                    or out
                ):
                    raise self.error(end - 1, "unrecognised chained comparison")
                stack.append(self.merge_compare(left, stack.pop(), middle, end - 1))
                consumed.add(self.cfg.block_of[target])
                pos = target + 2
                continue
            end2, stop2 = self.run_operand(end, target, stack, out, consumed, ctx)
            if stop2.ins is not None or end2 != target or len(stack) != depth + 1 or out:
                raise self.error(end - 1, "unrecognised and/or in a condition")
            right = stack.pop()
            op = ast.And if stop.ins.opname == "JUMP_IF_FALSE_OR_POP" else ast.Or
            stack.append(
                bool_op(op, self.executor.value(left, stop.ins), self.executor.value(right, stop.ins))
            )
            pos = target

    def run_operand(self, pos: int, limit: int, stack: list, out: list, consumed: set, ctx: Context | None):
        """``run_condition`` up to ``limit`` (the right operand of a value-position and/or or
        chained comparison), folding the conditional expressions inside it when ``ctx`` is known."""
        for _ in range(16):
            end, stop = self.run_condition(pos, stack, out, consumed, limit=limit, ctx=ctx)
            if ctx is None or out or stop.ins is None or stop.ins.opname not in POP_JUMPS:
                return end, stop
            trial, taken = list(stack), set(consumed)
            join = self.value_ternary(end - 1, stop.condition, ctx, trial, taken)
            if join is None or join > limit:
                return end, stop
            stack[:] = trial
            consumed |= taken
            pos = join
        return end, stop

    def is_chain_exit(self, p: int | None) -> bool:
        """``SWAP 2; POP_TOP`` at ``p``, where a chained comparison's failing test leaves its value."""
        return p is not None and p + 1 < len(self.instrs) and self.instrs[p].opname == "SWAP" \
            and self.instrs[p].argval == 2 and self.instrs[p + 1].opname == "POP_TOP" \
            and self.cfg.block_at(p).end == p + 2

    def trampoline(self, p):
        """X for a block ``POP_TOP; JUMP X`` or ``POP_TOP`` falling into X (a chained comparison's exit)."""
        if p is None or p >= len(self.instrs) or self.instrs[p].opname != "POP_TOP":
            return None
        block = self.cfg.block_at(p)
        if block.end == p + 1 or all(ins.opname == "POP_TOP" for ins in self.instrs[p + 1:block.end]) \
                and self.instrs[block.end - 1].target is None:
            return p + 1   # (the POP_TOPs after it are the code it goes on with: a loop's iterator)
        if block.end == p + 2 and self.instrs[p + 1].opname == "JUMP":
            return self.cfg.pos(self.instrs[p + 1].target)
        end = self.copied_block_end(p + 1)
        if end is not None and end >= block.end and all(
            self.cfg.blocks[self.cfg.block_of[x]].preds == [self.cfg.block_of[x - 1]]
            for x in range(block.end, end) if self.cfg.is_leader(x)
        ):
            # the return block after the chain, copied into its exit (split into blocks only where
            # the protecting handler changes: a compiler may leave the return itself unprotected)
            return p + 1
        return None

    def same_pops(self, p: int | None, q: int | None) -> bool:
        """Do ``p`` and ``q`` pop the same values and go on at the same place, one through a jump
        (``POP_TOP; JUMP X``) and one falling into it (``POP_TOP`` before X)? A shared return
        tail and the way into it from a chain's exit (a tail that pops the loop's iterator)."""
        def popped_then(x: int | None) -> tuple[int, int | None]:
            pops = 0
            for _ in range(8):
                if x is None or x >= len(self.instrs):
                    break
                op = self.instrs[x].opname
                if op == "JUMP":
                    x = self.cfg.pos(self.instrs[x].target)
                elif op == "POP_TOP":
                    pops, x = pops + 1, x + 1
                else:
                    break
            return pops, x
        return p is not None and q is not None and popped_then(p) == popped_then(q)

    def chain_operand(self, t: int, stack: list, ctx: Context | None, consumed: set[int]):
        """Run the next test of a chained comparison from ``t`` to its conditional jump, folding a
        conditional expression, an ``and``/``or`` or a chain that computes its right operand
        (``a < b <= (c if x else d)``, ``a < b <= (c < d <= e)``)."""
        trial = list(stack)
        scratch: list = []
        pos = t
        for _ in range(8):
            end, stop = self.run_condition(pos, trial, scratch, consumed, ctx=ctx)
            cond = stop.condition
            if scratch or stop.ins is None or ctx is None or isinstance(cond, ast.Compare) \
                    or not stop.ins.opname.startswith("POP_JUMP"):
                return end, stop, trial, scratch
            join = self.value_ternary(end - 1, cond, ctx, trial, consumed)
            if join is None:
                raise self.error(t, "unrecognised chained comparison")
            pos = join
        raise self.error(t, "unrecognised chained comparison")

    def run_test(self, pos: int, stack: list, out: list, consumed: set[int], ctx: Context | None,
                 limit: int) -> tuple:
        """``run_condition``, folding conditional expressions that compute a value of the test
        (``4 * (a if c else b)``) when their branches meet by ``limit``."""
        for _ in range(16):
            end, stop = self.run_condition(pos, stack, out, consumed, ctx=ctx)
            if ctx is None or out or stop.ins is None or stop.ins.opname not in POP_JUMPS:
                break
            t, f = self.branches(end - 1)
            join = self.value_join(t, f, ctx)
            if join is None or join > limit:
                break           # a test of the condition itself, not inside a value
            pos = self.value_ternary(end - 1, stop.condition, ctx, stack, consumed)
            if pos is None:
                break
        return end, stop

    def value_join(self, t: int | None, f: int | None, ctx: Context) -> int | None:
        """Where the branches of a test inside a value meet: among the enclosing loop's blocks,
        else in the whole code (a loop whose body never goes back, ``for x in xs: ... return``,
        has no blocks of its own to meet in)."""
        if t is None or f is None:
            return None
        join = self.join_of(t, f, ctx)
        if join is None and ctx.loop is not None:
            join = self.join_within(t, f, None)
        return join

    def value_ternary(self, i: int, cond, ctx: Context, stack: list, consumed: set[int]) -> int | None:
        """Fold the test at ``i`` into a conditional expression on ``stack`` when its branches only
        compute one value each and meet (``while -(b if a else c):``); where they meet, or None.
        Only a local diamond is read: both branches lie before the join and jump nowhere else."""
        t, f = self.branches(i)
        join = self.value_join(t, f, ctx)
        if join is None or not (i < t < join and i < f < join):
            return None
        for ins in self.instrs[i + 1:join]:
            target = self.cfg.pos(ins.target) if ins.target is not None else None
            if ins.target is not None and not (target is not None and i < target <= join):
                return None
        values = self.one_value_each(((t, join), (f, join)), ctx, stack)
        if values is None:
            return None
        then, other = (self.executor.value(x, self.instrs[i]) for x in values)
        stack.append(self.conditional_value(cond, then, other, stack, self._goes_on_into(t, f, join)))
        consumed.update(self.cfg.block_of[p] for p in range(i + 1, join))
        return join

    def resolve_chain(self, cond, t, f, stack, ctx: Context | None = None, consumed: set[int] | None = None):
        """``a < b < c`` as a condition: the middle operand stays on the stack between tests.

        Failing tests jump to a trampoline that pops the middle operand; the tests are merged into
        one ``Compare`` whose true/false targets are those of the last test. The blocks read go
        into ``consumed``; a target that only jumps on (the chain's code laid out before its
        trampoline) is followed.
        """
        consumed = set() if consumed is None else consumed
        if not _continues_chain(cond, stack):
            return cond, t, f
        for _ in range(64):
            if not _continues_chain(cond, stack):
                break
            middle = stack[-1]
            exit_pos = self.trampoline(f)
            if exit_pos is None:
                raise self.error(None, "unrecognised chained comparison")
            consumed.add(self.cfg.block_of[f])
            end, stop, trial, scratch = self.chain_operand(t, stack, ctx, consumed)
            cond2 = stop.condition
            if scratch or stop.ins is None or not isinstance(cond2, ast.Compare) or cond2.left is not middle:
                raise self.error(t, "unrecognised chained comparison")
            t2, f2 = self.branches(end - 1)
            if stop.ins.opname in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE") and f2 != f \
                    and not self.same_place(f2, exit_pos) and len(cond2.ops) == 1:
                # ``a is b is None``: the last test fused into a jump taken when it fails, which
                # reads as the opposite operator; the chain's test is the one that goes on
                op = ast.IsNot() if isinstance(cond2.ops[0], ast.Is) else ast.Is()
                cond2 = ast.Compare(cond2.left, [op], cond2.comparators)
                t2, f2 = f2, t2
            combined = ast.Compare(cond.left, cond.ops + cond2.ops, cond.comparators + cond2.comparators)
            if f2 == f:
                cond, t = combined, t2          # the chain goes on: same trampoline
            elif self.same_place(f2, exit_pos) or self.same_pops(f2, exit_pos) \
                    or self.same_exit_copy(f2, exit_pos):
                # the exit itself, unless it starts inside a block (a copied return after POP_TOP)
                at_block_start = self.cfg.block_at(exit_pos).start == exit_pos
                cond, t, f = combined, t2, exit_pos if at_block_start else f2
            else:
                raise self.error(t, "unrecognised chained comparison")
            if trial and trial[-1] is middle:
                trial.pop()
            elif len(trial) >= 2 and trial[-2] is middle:
                del trial[-2]
            stack[:] = trial
        return cond, self.past_lone_jump(t, consumed), self.past_lone_jump(f, consumed)

    def merge_compare(self, left, right, middle, i):
        if isinstance(left, ast.Compare) and isinstance(right, ast.Compare) and right.left is middle:
            return ast.Compare(left.left, left.ops + right.ops, left.comparators + right.comparators)
        if isinstance(left, ast.Compare) and isinstance(right, ast.BoolOp):
            return ast.BoolOp(ast.And(), [left, right])
        raise self.error(i, "unrecognised chained comparison")


def _continues_chain(cond, stack: list) -> bool:
    """A comparison whose right operand stays on the stack: the next test of ``a < b < c`` uses it."""
    return isinstance(cond, ast.Compare) and bool(stack) and stack[-1] is cond.comparators[-1]
