"""The walk: ``Structurer.emit`` runs straight-line code through the executor and dispatches
each control instruction to the builder of its construct (the mixins it composes)."""

from __future__ import annotations

import ast

from depyf.decompiler.cfg import ControlFlowGraph
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.executor import Executor, Stop
from depyf.decompiler.instructions import FOR_ITERS
from depyf.decompiler.pseudo_statements import ReraiseStmt
from depyf.decompiler.structure.branch_exits import BranchExits
from depyf.decompiler.structure.clause_breaks import ClauseBreaks
from depyf.decompiler.structure.compound import CompoundConditions
from depyf.decompiler.structure.conditions import ConditionReader
from depyf.decompiler.structure.copies import CopiedCode
from depyf.decompiler.structure.excepts import ExceptClauses
from depyf.decompiler.structure.finally_copies import FinallyCopies
from depyf.decompiler.structure.graph import GraphAnalysis
from depyf.decompiler.structure.ifs import IfBuilder
from depyf.decompiler.structure.loop_exits import LoopExits
from depyf.decompiler.structure.loops import LoopBuilder
from depyf.decompiler.structure.match import MatchBuilder
from depyf.decompiler.structure.model import (
    LEFT_REGION,
    UNREAD,
    Context,
    ExitKind,
    Sentinel,
    exits_recorded,
    forget_exits,
)
from depyf.decompiler.structure.once_loops import OnceLoops
from depyf.decompiler.structure.protected import TryBuilder
from depyf.decompiler.structure.regions import RegionExits
from depyf.decompiler.structure.value_flows import ValueFlows
from depyf.decompiler.structure.while_tests import WhileTests

MAX_STEPS = 200_000


class Structurer(
    GraphAnalysis, CopiedCode, ConditionReader, CompoundConditions, IfBuilder, BranchExits, ValueFlows,
    LoopBuilder, LoopExits, ClauseBreaks, WhileTests, MatchBuilder, TryBuilder, ExceptClauses, FinallyCopies,
    RegionExits, OnceLoops,
):
    """Recovers the statements of one code object."""

    def __init__(self, code, instrs, entries, nested):
        self.code = code
        self.instrs = instrs
        self.cfg = ControlFlowGraph(instrs, entries)
        if self.thread_copied_reraises():
            self.cfg = ControlFlowGraph(self.instrs, entries)
        self.executor = Executor(code, self.instrs, nested)
        self.qualname = getattr(code, "co_qualname", code.co_name)
        self.steps = 0
        self.compound_calls = 0
        self._pdoms: dict[tuple | None, dict[int, int]] = {}
        self._body_end_pdoms: dict[tuple, dict[int, int]] = {}
        self._idom: dict[int, int] | None = None
        self._dominator_children: dict[int, list[int]] | None = None
        self._unfolded: set[tuple] = set()     # compound calls that fold nothing (see compound)
        self._folded: dict[tuple, object] = {}  # and those that fold, in one search (see compound)
        self._members_added: list = []         # (set, block) grown in place by compound, to take back
        self._pinned: list = []
        self._past_jumps: dict = {}            # position -> past_lone_jump (see compound)
        self._else_trials: set[int] = set()    # loops being read as while/else (see while_else_without_copy)
        self._shared_operands: dict[tuple, object] = {}   # see ValueFlows.shared_operand_key
        self._loop_controls: dict[int, tuple] = {}   # id(loop) -> (loop, its continue/break blocks)
        self._values_meeting_after_loops: set[int] = set()   # see IfBuilder.conditional
        self.ended_at: int | None = None      # the stop where the last ``emit`` fell off its code
        self.left_through: frozenset[int] | None = None   # see ``emit``
        self.back_edge_targets = self._back_edge_targets()
        self.while_tests = self.find_while_tests()
        self.matches = self.find_matches()

    def body(self) -> list[ast.stmt]:
        return self.emit(0, Context(), [])

    def error(self, pos: int | None, message: str) -> DecompilationError:
        ins = self.instrs[pos] if pos is not None and pos < len(self.instrs) else None
        return DecompilationError(message, qualname=self.qualname, offset=ins.offset if ins else None,
                                  opname=ins.opname if ins else None)

    def tick(self, pos):
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise self.error(pos, "control flow too complex (step limit reached)")

    def emit(self, pos: int | None, ctx: Context, stack: list) -> list[ast.stmt]:
        """Statements from ``pos`` until a stop, an exit of the region, or a terminator.

        Records where the code fell off (``ended_at``: the stop reached, or None) and, where it
        ended in the region's normal exit, the block starts it went through after ``pos``
        (``left_through``, else None)."""
        out: list[ast.stmt] = []
        n = len(self.instrs)
        visited: set[int] = set()
        start, left = pos, False
        while pos is not None and pos < n:
            self.tick(pos)
            if pos in ctx.stops:
                break
            if pos in self.while_tests and not self.cfg.is_leader(pos):
                loop_next = self.try_loop(pos, ctx, stack, out)
                if loop_next is not UNREAD:
                    pos = loop_next
                    continue
            if self.cfg.is_leader(pos):
                if pos in visited:
                    raise self.error(pos, "irreducible control flow")
                visited.add(pos)
                if (
                    ctx.layers
                    and not self.covered(pos, ctx.layers[-1])
                    and not self.test_left_out(pos, ctx.layers[-1])
                ):
                    ins = self.instrs[pos]
                    if ins.opname == "JUMP" and self.cfg.pos(ins.target) in ctx.stops:
                        pos = self.cfg.pos(ins.target)   # (no exit yet: the enclosing code ends there)
                    else:
                        left = self.leave_region_or_loop(pos, ctx, stack, out)
                    break
                if ctx.loop is not None and pos in ctx.loop.continues and pos != ctx.loop.header:
                    break
                if ctx.loop is not None and pos in ctx.loop.breaks and pos != ctx.loop.header:
                    out.append(ast.Break())     # the body falls into the code after the loop
                    break
                candidate = self.try_candidate(pos, ctx)
                sources = self.back_edge_targets.get(pos, [])
                loop_first = candidate is not None \
                    and not (ctx.loop is not None and pos in (ctx.loop.header, ctx.loop.body_start)) \
                    and any(candidate not in self.cfg.handler_chain(s) for s in sources)
                if not loop_first:
                    started = self.try_start(pos, ctx, stack, out)
                    if started is not UNREAD:
                        pos = started
                        continue
                loop_next = self.try_loop(pos, ctx, stack, out)
                if loop_next is not UNREAD:
                    pos = loop_next
                    continue
            if pos in self.matches:
                pos = self.match_statement(pos, ctx, stack, out)
                continue
            limit = self.cfg.block_at(pos).end
            for s in ctx.stops:
                if pos < s < limit:
                    limit = s
            for s in self.while_tests:
                if pos < s < limit:
                    limit = s
            for s in self.matches:
                if pos < s < limit:
                    limit = s
            end, stop = self.executor.run(pos, limit, stack, out)
            if stop.ins is None:
                pos = end
                continue
            pos = self.control(end - 1, stop, ctx, stack, out)
            if pos is LEFT_REGION:
                pos, left = None, True
        if pos is not None and pos >= n:
            raise self.error(n - 1, "control runs past the last instruction")
        self.ended_at = pos if pos in ctx.stops else None
        self.left_through = frozenset(visited - {start}) if left else None
        return out

    def leave_region_or_loop(self, pos: int, ctx: Context, stack: list, out: list) -> bool:
        """Leave the innermost protected region at ``pos``; True where that is the region's
        normal exit (no statement says it). From a for loop inside it whose body has popped its
        iterator (and nothing else), that normal exit is a ``break`` that fell into the region's
        exit (``for x in xs: ...; break`` ending an except clause or a with body), and the
        statement after the loop leaves the region."""
        loop = ctx.loop
        popped = loop is not None and loop.iterator is not None \
            and self.covered(loop.header, ctx.layers[-1]) \
            and len(stack) == loop.depth - 1 and not any(item is loop.iterator for item in stack)
        if not popped:
            return self.leave_region(pos, ctx, stack, out)
        mark = exits_recorded(ctx.layers)
        statements: list = []
        if self.leave_region(pos, ctx, stack, statements):
            forget_exits(ctx.layers, mark)
            loop.left_region = True
            out.append(ast.Break())
        else:
            out.extend(statements)
        return False

    def reraise_copied_after_loop(self, i: int, ctx: Context) -> bool:
        """Is the ``RERAISE`` at ``i`` the compiler's copy of the one right after the loop being
        read, where its ``break`` would jump (``for x in xs: ...; break`` ending a finally body's
        handler copy)? The same instruction under the same handlers; a for loop's break pops its
        iterator just before."""
        loop = ctx.loop
        after = loop.after if loop is not None else None
        if after is None or after == i or after >= len(self.instrs):
            return False
        ins, last = self.instrs[i], self.instrs[after]
        if last.opname != "RERAISE" or last.argval != ins.argval:
            return False
        if self.instrs[loop.header].opname in FOR_ITERS and self.instrs[i - 1].opname != "POP_TOP":
            return False
        return self.cfg.handler_chain(i) == self.cfg.handler_chain(after)

    def classify(self, target: int | None, ctx: Context) -> ExitKind:
        """What a jump to ``target`` means here: STOP, CONTINUE, BREAK, LEAVE or GOTO."""
        if target is None:
            return ExitKind.GOTO
        if ctx.loop is not None:
            if target in ctx.loop.continues:
                return ExitKind.CONTINUE
            if target in ctx.loop.breaks:
                return ExitKind.BREAK
        if target not in ctx.stops and self.cfg.is_leader(target):
            block = self.cfg.block_at(target)
            only = self.instrs[block.start]
            if block.end - block.start == 1 and only.opname == "JUMP":
                inner = self.classify(self.cfg.pos(only.target), ctx) if self.cfg.pos(only.target) != target \
                    else ExitKind.GOTO
                if inner in (ExitKind.CONTINUE, ExitKind.BREAK, ExitKind.STOP):
                    return inner
        if ctx.loop is not None:
            if target in ctx.loop.continues:
                return ExitKind.CONTINUE
            if target in ctx.loop.breaks:
                return ExitKind.BREAK
        if target in ctx.stops:
            return ExitKind.STOP
        if ctx.layers and not self.covered(target, ctx.layers[-1]):
            return ExitKind.LEAVE
        return ExitKind.GOTO

    def stop_reached(self, target: int, ctx: Context) -> int:
        """The stop that a jump to ``target`` reaches, through blocks that only jump on."""
        seen = set()
        while target not in ctx.stops and target not in seen and self.instrs[target].opname == "JUMP":
            seen.add(target)
            target = self.cfg.pos(self.instrs[target].target)
        return target

    def control(self, i: int, stop: Stop, ctx: Context, stack: list, out: list) -> int | Sentinel | None:
        """Read the instruction that ends straight-line code: where the code goes on, None where
        it does not (a statement ends it), or ``LEFT_REGION`` for a jump that left the protected
        region by its normal exit."""
        ins = stop.ins
        op = ins.opname
        if op == "RETURN_VALUE" or op == "RAISE_VARARGS":
            return None
        if op == "RERAISE":
            out.append(ast.Break() if self.reraise_copied_after_loop(i, ctx) else ReraiseStmt())
            return None
        if op == "JUMP":
            target = self.cfg.pos(ins.target)
            kind = self.classify(target, ctx)
            if kind is ExitKind.CONTINUE:
                out.append(self.continue_stmt(target, ctx))
                return None
            if kind is ExitKind.BREAK:
                out.append(ast.Break())
                return None
            if kind is ExitKind.STOP:
                return self.stop_reached(target, ctx)
            if kind is ExitKind.LEAVE:
                return LEFT_REGION if self.leave_region(target, ctx, stack, out) else None
            if target is not None and target <= i and not self.cfg.is_leader(target):
                raise self.error(i, "backward jump into a block")
            return target
        if op in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
            return self.value_bool_op(i, ins, ctx, stack, out)
        if op in FOR_ITERS:
            raise self.error(i, "FOR_ITER outside a loop header")
        return self.conditional(i, stop.condition, ctx, stack, out)
