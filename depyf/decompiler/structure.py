"""Control-flow recovery: blocks and exception ranges -> nested ast statements.

``Structurer.emit`` walks the code from a position, letting the executor turn straight-line
instructions into statements, and decides at each control instruction what statement it is:

- loops: FOR_ITER headers, and targets of backward jumps (``while``); 3.11+ duplicates a
  ``while`` test at the bottom of the loop, which is recognised and folded back;
- conditionals: chains of conditional jumps are folded into ``and``/``or`` conditions, the join
  is the nearest common post-dominator of both branches inside the enclosing loop;
- ``try``/``with``: the exception table tells which blocks each handler protects. Leaving a
  protected region goes through an exit sequence (a ``finally`` body copy, a with's
  ``__exit__`` call, POP_EXCEPT) that is skipped; what follows is a return, break, continue or
  the normal exit.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

from depyf.decompiler import values as v
from depyf.decompiler.cfg import ControlFlowGraph
from depyf.decompiler.dominators import EXIT, common_post_dominator, post_dominators
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.executor import (
    ExceptAsStmt,
    Executor,
    ReraiseStmt,
    Stop,
    replace_everywhere,
    replace_in,
)
from depyf.decompiler.expressions import bool_op, negate
from depyf.decompiler.instructions import CONDITIONAL_JUMPS, JUMPS_CANNOT_RAISE, POP_JUMPS, copies_loop_tests
from depyf.decompiler.patterns import MatchRead, NoMatch, PatternReader

MAX_STEPS = 200_000
COMPOUND_CALLS_PER_BLOCK = 64   # condition searches allowed per basic block (beyond a fixed 16,384)
TryStar = getattr(ast, "TryStar", ast.Try)  # ``try``/``except*`` (CPython 3.11+)
TRY_NODES = (ast.Try, TryStar)
# Instructions that may make up a small block 3.12+ copies into each path that reaches it: no
# jumps and nothing touching the exception state, so two equal copies run the same way.
STRAIGHT_OPS = frozenset({
    "LOAD_FAST", "LOAD_CONST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_CLASSDEREF",
    "LOAD_FROM_DICT_OR_DEREF", "LOAD_LOCALS", "STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL",
    "DELETE_FAST", "DELETE_NAME", "DELETE_DEREF", "DELETE_GLOBAL", "PUSH_NULL", "CALL", "CALL_KW",
    "BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP", "BUILD_TUPLE", "BUILD_LIST", "POP_TOP", "RETURN_VALUE",
    "LOAD_ASSERTION_ERROR", "RAISE_VARARGS", "POP_EXCEPT", "UNARY_NOT", "UNARY_NEGATIVE", "UNARY_INVERT",
    "UNARY_POSITIVE", "IS_OP", "CONTAINS_OP", "BUILD_SET", "BUILD_MAP", "BUILD_SLICE", "BUILD_STRING",
    "BINARY_SLICE", "FORMAT_VALUE", "STORE_ATTR", "STORE_SUBSCR",
})
ENDS_FUNCTION = frozenset({"RETURN_VALUE", "RAISE_VARARGS"})
# Instructions a while test's copies are widened over (see ``Structurer.widen_copied_test``).
TEST_OPS = frozenset({
    "LOAD_FAST", "LOAD_CONST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "PUSH_NULL",
    "COMPARE_OP", "IS_OP", "CONTAINS_OP", "UNARY_NOT", "UNARY_NEGATIVE", "JUMP",
})


@dataclass
class Loop:
    header: int                      # position of FOR_ITER or of the loop test
    continues: frozenset[int]        # positions a jump to which is ``continue``
    breaks: frozenset[int]           # positions a jump to which is ``break``
    blocks: frozenset[int]           # block indices of the loop (for post-dominators)
    body_start: int | None = None    # first body position of a while loop with a folded test
    back: int | None = None          # the bottom test's jump back to body_start
    after: int | None = None         # where ``break`` goes (after the loop and its else clause)
    wraps_while: bool = False        # a ``while True`` whose body starts with a while loop at its header


NO_CONTINUATION = -1   # Layer.continuation of except clauses whose try statement never goes on


@dataclass
class Layer:
    """A protected region being emitted: leaving it goes through ``kind``'s exit sequence."""

    kind: str                        # "try", "finally", "with", "handler"
    target: int                      # handler offset whose coverage defines the region
    finally_ops: list | None = None  # for "finally": the (opname, argval) of the finally body
    normal_exits: list = field(default_factory=list)
    continuation: int | None = None  # for except clauses (and try bodies): where the try statement goes on


@dataclass(frozen=True)
class Context:
    stops: frozenset[int] = frozenset()
    loop: Loop | None = None
    layers: tuple = ()

    @property
    def next_rounds(self) -> frozenset[int]:
        """Where the enclosing loop's ``continue`` jumps (nothing outside loops)."""
        return self.loop.continues if self.loop is not None else frozenset()

    def with_stops(self, *extra: int | None) -> Context:
        return Context(self.stops | {x for x in extra if x is not None}, self.loop, self.layers)


class Structurer:
    """Recovers the statements of one code object."""

    def __init__(self, code, instrs, entries, nested):
        self.code = code
        self.instrs = instrs
        self.cfg = ControlFlowGraph(instrs, entries)
        self.executor = Executor(code, instrs, nested)
        self.qualname = getattr(code, "co_qualname", code.co_name)
        self.steps = 0
        self.compound_calls = 0
        self._pdoms: dict[int | None, dict[int, int]] = {}
        self._unfolded: set[tuple] = set()     # compound calls that fold nothing (see compound)
        self._pinned: list = []
        self._else_trials: set[int] = set()    # loops being read as while/else (see while_else_without_copy)
        self.back_edge_targets = self._back_edge_targets()
        self.while_tests = self.find_while_tests()
        self.matches = self.find_matches()

    # -- entry -------------------------------------------------------------------------
    def body(self) -> list[ast.stmt]:
        return self.emit(0, Context(), [])

    def error(self, pos: int | None, message: str) -> DecompilationError:
        ins = self.instrs[pos] if pos is not None and pos < len(self.instrs) else None
        return DecompilationError(message, qualname=self.qualname, offset=ins.offset if ins else None,
                                  opname=ins.opname if ins else None)

    # -- analyses ----------------------------------------------------------------------
    def _back_edge_targets(self) -> dict[int, list[int]]:
        """Position of every loop head -> positions of the jumps back to it.

        A backward jump is a loop's back edge when its target dominates it; 3.12+ also jumps back
        to code it placed earlier (the code after a try statement, jumped to from its handlers).
        """
        found: dict[int, list[int]] = {}
        idom = None
        for i, ins in enumerate(self.instrs):
            if ins.target is not None and ins.opname not in ("FOR_ITER", "ASYNC_FOR_ITER") \
                    and not ins.extra.get("no_interrupt"):
                t = self.cfg.pos(ins.target)
                if t is not None and t <= i and self.cfg.block_of[i] in self.cfg.reachable:
                    if idom is None:
                        idom = self._dominators()
                    if self._dominates(self.cfg.block_of[t], self.cfg.block_of[i], idom):
                        found.setdefault(t, []).append(i)
        return found

    def _dominators(self) -> dict[int, int]:
        """Immediate dominator of every block (exception edges count): post-dominators of the
        reversed graph, whose exit is the entry block."""
        blocks = self.cfg.blocks
        nodes = {b.index for b in blocks}
        preds = {b.index: list(b.preds) + list(b.exc_preds) for b in blocks}
        if blocks:
            preds[0].append(-2)  # the entry is entered from outside (a node not in ``nodes``: EXIT)
        return post_dominators(nodes, preds)

    @staticmethod
    def _dominates(a: int, b: int, idom: dict[int, int]) -> bool:
        for _ in range(len(idom) + 2):
            if b == a:
                return True
            if b == EXIT:
                return False
            b = idom.get(b, EXIT)
        return False

    def loop_blocks(self, header: int, sources: list[int]) -> frozenset[int]:
        """Blocks of the natural loop: those reaching a back-edge source without the header."""
        hb = self.cfg.block_of[header]
        body = {hb}
        work = [self.cfg.block_of[s] for s in sources]
        while work:
            b = work.pop()
            if b in body:
                continue
            body.add(b)
            work.extend(self.cfg.blocks[b].preds)
            work.extend(self.cfg.blocks[b].exc_preds)
        return frozenset(body)

    def ipdom(self, loop: Loop | None) -> dict[int, int]:
        key = loop.header if loop else None
        if key not in self._pdoms:
            blocks = self.cfg.blocks
            if loop is None:
                nodes = {b.index for b in blocks}
                succs = {b.index: list(b.succs) for b in blocks}
            else:
                nodes = set(loop.blocks) - {self.cfg.block_of[loop.header]}
                entries = {self.cfg.block_of[p] for p in loop.continues if self.cfg.is_leader(p)}
                entries.add(self.cfg.block_of[loop.header])
                if loop.body_start is not None:
                    entries.add(self.cfg.block_of[loop.body_start])
                tails = {self.cfg.block_of[p] for p in loop.continues if not self.cfg.is_leader(p)}
                succs = {n: [] if n in tails else [x for x in blocks[n].succs if x in nodes and x not in entries]
                         for n in nodes}
            self._pdoms[key] = post_dominators(nodes, succs)
        return self._pdoms[key]

    def join_of(self, a: int, b: int, ctx: Context) -> int | None:
        return self.join_within(a, b, ctx.loop)

    def join_within(self, a: int, b: int, loop: Loop | None) -> int | None:
        """Where paths from ``a`` and ``b`` meet, among ``loop``'s blocks (the whole code: None)."""
        ipdom = self.ipdom(loop)
        ba, bb = self.cfg.block_of[a], self.cfg.block_of[b]
        if ba not in ipdom or bb not in ipdom:
            return None
        j = common_post_dominator(ba, bb, ipdom)
        return None if j == EXIT else self.cfg.blocks[j].start

    # -- the walk ----------------------------------------------------------------------
    def tick(self, pos):
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise self.error(pos, "control flow too complex (step limit reached)")

    def emit(self, pos: int | None, ctx: Context, stack: list) -> list[ast.stmt]:
        """Statements from ``pos`` until a stop, an exit of the region, or a terminator."""
        out: list[ast.stmt] = []
        n = len(self.instrs)
        visited: set[int] = set()
        while pos is not None and pos < n:
            self.tick(pos)
            if pos in ctx.stops:
                break
            if pos in self.while_tests and not self.cfg.is_leader(pos):
                loop_next = self.try_loop(pos, ctx, stack, out)
                if loop_next is not False:
                    pos = loop_next
                    continue
            if self.cfg.is_leader(pos):
                if pos in visited:
                    raise self.error(pos, "irreducible control flow")
                visited.add(pos)
                if ctx.layers and not self.covered(pos, ctx.layers[-1]) and not self.test_left_out(pos, ctx.layers[-1]):
                    if not (self.instrs[pos].opname == "JUMP" and self.cfg.pos(self.instrs[pos].target) in ctx.stops):
                        self.leave_region(pos, ctx, stack, out)
                    break           # (a jump to where the enclosing expression ends is no exit yet)
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
                    if started is not False:
                        pos = started
                        continue
                loop_next = self.try_loop(pos, ctx, stack, out)
                if loop_next is not False:
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
        if pos is not None and pos >= n:
            raise self.error(n - 1, "control runs past the last instruction")
        return out

    # -- jumps -------------------------------------------------------------------------
    def classify(self, target: int | None, ctx: Context) -> str:
        """What a jump to ``target`` means here: 'stop', 'continue', 'break' or 'goto'."""
        if target is None:
            return "goto"
        if ctx.loop is not None:
            if target in ctx.loop.continues:
                return "continue"
            if target in ctx.loop.breaks:
                return "break"
        if target not in ctx.stops and self.cfg.is_leader(target):
            block = self.cfg.block_at(target)
            only = self.instrs[block.start]
            if block.end - block.start == 1 and only.opname == "JUMP":
                inner = self.classify(self.cfg.pos(only.target), ctx) if self.cfg.pos(only.target) != target \
                    else "goto"
                if inner in ("continue", "break", "stop"):
                    return inner
        if ctx.loop is not None:
            if target in ctx.loop.continues:
                return "continue"
            if target in ctx.loop.breaks:
                return "break"
        if target in ctx.stops:
            return "stop"
        if ctx.layers and not self.covered(target, ctx.layers[-1]):
            return "leave"
        return "goto"

    def control(self, i: int, stop: Stop, ctx: Context, stack: list, out: list) -> int | None:
        ins = stop.ins
        op = ins.opname
        if op == "RETURN_VALUE" or op == "RAISE_VARARGS":
            return None
        if op == "RERAISE":
            out.append(ReraiseStmt())
            return None
        if op == "JUMP":
            target = self.cfg.pos(ins.target)
            kind = self.classify(target, ctx)
            if kind == "continue":
                out.append(self.continue_stmt(target, ctx))
                return None
            if kind == "break":
                out.append(ast.Break())
                return None
            if kind == "stop":
                return None
            if kind == "leave":
                self.leave_region(target, ctx, stack, out)
                return None
            if target is not None and target <= i and not self.cfg.is_leader(target):
                raise self.error(i, "backward jump into a block")
            return target
        if op in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
            return self.value_bool_op(i, ins, ctx, stack, out)
        if op in ("FOR_ITER", "ASYNC_FOR_ITER"):
            raise self.error(i, "FOR_ITER outside a loop header")
        return self.conditional(i, stop.condition, ctx, stack, out)

    # -- conditionals ------------------------------------------------------------------
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
        """If the block at ``pos`` only computes a condition and jumps, return (cond, true, false, block).

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
                joined += 2     # (a chained comparison's value: its exit pops the middle operand first)
            if joined is None or joined >= len(self.instrs) or self.instrs[self.cfg.block_at(joined).end - 1].opname not in CONDITIONAL_JUMPS:
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
                cond, t, f = self.resolve_chain(cond, t, f, trial, consumed=consumed)
            except DecompilationError:
                return None
        if len(trial) != len(stack) or any(a is not b for a, b in zip(trial, stack, strict=False)):
            return None
        return cond, t, f, block.index, consumed

    def same_protection(self, pos: int, members: set[int]) -> bool:
        """Is ``pos`` covered by the same exception handler as the start of every block in ``members``?"""
        keys = self._block_handlers
        here = self._handler_key(pos)
        if self._one_handler or all(keys[m] == here for m in members):
            return True
        # a block of jumps alone raises nothing (3.13+): 3.13 may leave one out of its handler's range
        block = self.cfg.block_at(pos)
        return JUMPS_CANNOT_RAISE and block.start == pos and all(ins.opname in POP_JUMPS or ins.opname == "JUMP"
                                          for ins in self.instrs[block.start:block.end])

    def _handler_key(self, p: int) -> tuple | None:
        entry = self.cfg.handler_at[p] if p < len(self.instrs) else None
        return None if entry is None else (entry.target, entry.depth)

    @functools.cached_property
    def _block_handlers(self) -> list[tuple | None]:
        """The handler key of each block's start (what ``same_protection`` compares)."""
        return [self._handler_key(b.start) for b in self.cfg.blocks]

    @functools.cached_property
    def _one_handler(self) -> bool:
        """Does one handler (or none) protect every instruction? Then any two places share it."""
        return len({self._handler_key(p) for p in range(len(self.instrs))}) <= 1

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
                if stop2.ins is None or stop2.ins.opname != "JUMP" or self.cfg.pos(stop2.ins.target) != target + 2 \
                        or len(stack) != depth or out:
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
            stack.append(bool_op(op, self.executor.value(left, stop.ins), self.executor.value(right, stop.ins)))
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
        if block.end == p + 1:
            return p + 1
        if block.end == p + 2 and self.instrs[p + 1].opname == "JUMP":
            return self.cfg.pos(self.instrs[p + 1].target)
        if self.is_return_copy(p + 1, block.end):
            return p + 1        # 3.12+ copied the small return block after the chain into its exit
        return None

    def is_return_copy(self, p: int, end: int) -> bool:
        """Is ``p`` up to ``end`` straight-line code ending in a return or raise (a block 3.12+ copies)?"""
        return self.copied_block_end(p) == end

    def copied_block_end(self, p: int, *, or_jump: bool = False) -> int | None:
        """Where the small block at ``p`` that the compilers copy ends (just after its return or
        raise, or with ``or_jump`` its unconditional jump): at most 8 straight-line instructions.
        3.10 and 3.12+ copy such returning blocks into each path that reaches them; 3.10 copies
        exit sequences too. None when ``p`` starts no such block."""
        for k in range(p, min(p + 8, len(self.instrs))):
            ins = self.instrs[k]
            if or_jump and ins.opname == "JUMP":
                return k + 1
            if ins.target is not None or ins.opname not in STRAIGHT_OPS:
                return None
            if ins.opname in ENDS_FUNCTION:
                return k + 1
        return None

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
            join = self.join_of(t, f, ctx) if t is not None and f is not None else None
            if join is None or join > limit:
                break           # a test of the condition itself, not inside a value
            pos = self.value_ternary(end - 1, stop.condition, ctx, stack, consumed)
            if pos is None:
                break
        return end, stop

    def value_ternary(self, i: int, cond, ctx: Context, stack: list, consumed: set[int]) -> int | None:
        """Fold the test at ``i`` into a conditional expression on ``stack`` when its branches only
        compute one value each and meet (``while -(b if a else c):``); where they meet, or None.
        Only a local diamond is read: both branches lie before the join and jump nowhere else."""
        t, f = self.branches(i)
        join = self.join_of(t, f, ctx) if t is not None and f is not None else None
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
        stack.append(ast.IfExp(cond, then, other))
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
            elif self.same_place(f2, exit_pos):
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

    def entered_from(self, block: int, members: set[int]) -> set[int] | None:
        """The blocks through which ``members`` enter ``block``, when nothing else does: members
        themselves and lone jumps only they reach (``(c if c else 2) or d``: the compiler threads
        the constant's branch through a jump to the next test). None when other code enters."""
        through: set[int] = set()
        for pred in self.cfg.blocks[block].preds:
            if pred in members:
                continue
            b = self.cfg.blocks[pred]
            if b.end != b.start + 1 or self.instrs[b.start].opname != "JUMP" or not set(b.preds) <= members:
                return None
            through.add(pred)
        return through

    def past_lone_jump(self, p: int | None, consumed: set[int] | None = None) -> int | None:
        """Where the block at ``p`` jumps when it is a lone forward ``JUMP`` (added to ``consumed``)."""
        if p is None or not self.cfg.is_leader(p) or self.cfg.block_at(p).end != p + 1 \
                or self.instrs[p].opname != "JUMP":
            return p
        target = self.cfg.pos(self.instrs[p].target)
        if target is None or target <= p:
            return p
        if consumed is not None:
            consumed.add(self.cfg.block_of[p])
        return target

    def compound(self, cond, t, f, members: set[int], stack: list, ctx: Context, keep=()):
        """Fold the condition blocks that only ``members`` reach into (cond, true, false, members).

        A call that folds nothing is remembered (``_compound_key``): an ``elif`` chain asks the same
        question once per branch, each time about every test after it."""
        self.compound_calls += 1
        if self.compound_calls > COMPOUND_CALLS_PER_BLOCK * len(self.cfg.blocks) + 16_384:
            # nested conditional expressions in a test are searched once per way to read them
            raise self.error(t, "condition too complex (search limit reached)")
        key = self._compound_key(t, f, members, stack, ctx, keep)
        if key in self._unfolded:
            return cond, t, f, members
        folded_any = False
        for _ in range(len(self.cfg.blocks) + 1):
            merged = False
            if t == f and t not in keep and self.classify(t, ctx) == "goto":
                # both edges of the test go to the next test (the compiler folded ``A and <falsy
                # constant> or B``): A is only truth-tested, so this is ``(A and False) or B``
                pc = self.pure_condition(t, stack, members, ctx)
                if pc is not None and pc[3] not in members and set(self.cfg.blocks[pc[3]].preds) <= members:
                    cx, t2, f2, sub = self.compound(pc[0], pc[1], pc[2], set(members) | {pc[3]}, stack, ctx,
                                                    keep=keep)
                    cond = bool_op(ast.Or, bool_op(ast.And, cond, ast.Constant(False)), cx)
                    t, f, members = t2, f2, sub
                    continue
            for side in ("t", "f"):
                x = t if side == "t" else f
                other = f if side == "t" else t
                if x in keep or self.classify(x, ctx) != "goto":
                    continue
                x = self.past_lone_jump(x)
                if x in keep or any(self.past_lone_jump(k) == x for k in keep):
                    continue        # (an outcome of an enclosing test lands there too)
                pc = self.pure_condition(x, stack, members, ctx)
                through = self.entered_from(pc[3], members) if pc is not None and pc[3] not in members else None
                if through is None:
                    continue
                pc = (*pc[:4], pc[4] | through)
                cx, t2, f2, sub_members = self.compound(pc[0], pc[1], pc[2], set(members) | pc[4], stack,
                                                        ctx, keep=tuple(keep) + (other,))
                same = self.same_place
                if same(t2, f2) and not same(t2, other):
                    # both outcomes of the inner test go on alike (``a and (x if b else 3)``: the
                    # constant's branch joins the other): it is only evaluated
                    if side == "t":
                        cond, t, f = bool_op(ast.And, cond, bool_op(ast.Or, cx, ast.Constant(True))), t2, other
                    else:
                        cond, t, f = bool_op(ast.Or, cond, bool_op(ast.And, cx, ast.Constant(False))), other, f2
                elif side == "t" and same(f2, other):
                    cond, t, f = bool_op(ast.And, cond, cx), t2, other
                elif side == "t" and same(t2, other):
                    cond, t, f = bool_op(ast.And, cond, negate(cx)), f2, other
                elif side == "f" and same(t2, other):
                    cond, t, f = bool_op(ast.Or, cond, cx), other, f2
                elif side == "f" and same(f2, other):
                    cond, t, f = bool_op(ast.Or, cond, negate(cx)), other, t2
                else:
                    continue
                members = sub_members
                merged = True
                break
            if not merged:
                folded = self.conditional_condition(cond, t, f, members, stack, ctx, keep)
                if folded is None:
                    break
                cond, t, f, members = folded
            folded_any = True
        if not folded_any:
            self._unfolded.add(key)
        return cond, t, f, members

    def _compound_key(self, t, f, members: set[int], stack: list, ctx: Context, keep) -> tuple:
        """What ``compound``'s choices depend on: the two targets, the stack's values, the context's
        loop and layers, and of ``members``, ``keep`` and the stops only what lies in the region
        the search can read (blocks from ``_region_low`` of either target on; other blocks are
        neither tested, nor predecessors of tested blocks or lone jumps, nor targets). Unless one handler covers
        the code, the handlers of all members count too (``same_protection``)."""
        low = self._region_low
        n = len(self.instrs)
        lo = min((low[self.cfg.block_of[p]] for p in (t, f) if p is not None and 0 <= p < n), default=0)

        def inside(p) -> bool:
            return p is None or not 0 <= p < n or self.cfg.block_of[p] >= lo

        values = (tuple(stack), ctx.loop, ctx.layers)
        self._pinned.append(values)      # ids below stay those of live objects
        handlers = None if self._one_handler else frozenset(self._block_handlers[m] for m in members)
        return (t, f, tuple(map(id, values[0])), id(ctx.loop), tuple(map(id, ctx.layers)), handlers,
                frozenset(m for m in members if m >= lo), frozenset(p for p in keep if inside(p)),
                frozenset(p for p in ctx.stops if inside(p)))

    def _lone_jump(self, block) -> bool:
        return block.end == block.start + 1 and self.instrs[block.start].opname == "JUMP"

    def _looked_at_low(self, block) -> int:
        """The smallest block index whose membership ``compound`` may ask about when it reads
        ``block``: the block itself and, for a test or a lone jump, its predecessors and theirs
        through lone jumps (``entered_from``, ``conditional_condition``)."""
        low = block.index
        if self._lone_jump(block) or self.instrs[block.end - 1].opname in CONDITIONAL_JUMPS:
            for p in block.preds:
                low = min(low, p)
                if self._lone_jump(self.cfg.blocks[p]):
                    low = min(low, *self.cfg.blocks[p].preds, p)
        return low

    @functools.cached_property
    def _region_low(self) -> list[int]:
        """For each block, the smallest block index among the blocks it reaches by normal flow
        (itself included) and what ``compound`` looks at there (``_looked_at_low``). Strongly connected
        components first (iterative Tarjan), whose successors are finished before them."""
        blocks = self.cfg.blocks
        own = [self._looked_at_low(b) for b in blocks]
        low_link, order, on_stack, comp_of = {}, {}, set(), {}
        stack: list[int] = []
        result = list(own)
        counter = 0
        for root in range(len(blocks)):
            if root in order:
                continue
            work = [(root, 0)]
            while work:
                b, i = work.pop()
                if i == 0:
                    order[b] = low_link[b] = counter
                    counter += 1
                    stack.append(b)
                    on_stack.add(b)
                succs = blocks[b].succs
                if i < len(succs):
                    work.append((b, i + 1))
                    s = succs[i]
                    if s not in order:
                        work.append((s, 0))
                    elif s in on_stack:
                        low_link[b] = min(low_link[b], order[s])
                    continue
                for s in succs:
                    if s in on_stack and comp_of.get(s) is None:
                        low_link[b] = min(low_link[b], low_link[s])
                if low_link[b] == order[b]:
                    members = []
                    while True:
                        x = stack.pop()
                        on_stack.discard(x)
                        comp_of[x] = b
                        members.append(x)
                        if x == b:
                            break
                    value = min(own[x] for x in members)
                    for x in members:
                        for s in blocks[x].succs:
                            if comp_of.get(s) is not None and comp_of[s] != b:
                                value = min(value, result[s])
                    for x in members:
                        result[x] = value
        return result

    def conditional_condition(self, cond, t, f, members: set[int], stack: list, ctx: Context, keep=()):
        """``(a if cond else b)`` as a condition: both branches test and jump to the same two places.

        Returns (condition, true, false, members) or None. A branch's place is compared through
        unconditional jumps (the compiler jumps from one branch's test to the other's target).
        """
        if t in keep or f in keep or t == f or self.classify(t, ctx) != "goto" or self.classify(f, ctx) != "goto":
            return None
        sides = []
        taken = set(members)
        for x in (t, f):
            # a branch may reach its test through a lone jump (``x if (c or a) else y``: ``c``'s
            # true edge jumps to the test ``a`` leads to as well)
            y = self.past_lone_jump(x)
            through = {self.cfg.block_of[x]} if y != x else set()
            if through and not set(self.cfg.block_at(x).preds) <= set(members):
                return None
            pc = self.pure_condition(y, stack, members)
            if pc is None or pc[3] in taken or not set(self.cfg.blocks[pc[3]].preds) <= set(members) | through:
                return None
            # each branch folds only the tests that it alone (with the test before) reaches:
            # a test both reach comes after the conditional expression
            sub = self.compound(pc[0], pc[1], pc[2], set(members) | pc[4] | through, stack, ctx,
                                keep=tuple(keep) + (t, f))
            if taken & set(sub[3]) - set(members):
                return None
            taken |= set(sub[3])
            sides.append(sub)
        (ca, ta, fa, _), (cb, tb, fb, _) = sides
        same = self.same_place
        if same(ta, tb) and same(fa, fb):
            other = cb
        elif same(ta, fb) and same(fa, tb):
            other = negate(cb)
        else:
            return None
        for x in (ta, fa, tb, fb):  # the jumps from one branch's test to the other's targets
            while x is not None and x < len(self.instrs) and self.instrs[x].opname == "JUMP" \
                    and self.cfg.is_leader(x) and self.cfg.block_at(x).end == x + 1 \
                    and self.cfg.block_of[x] not in taken and set(self.cfg.block_at(x).preds) <= taken:
                taken.add(self.cfg.block_of[x])
                x = self.cfg.pos(self.instrs[x].target)
        return ast.IfExp(cond, ca, other), self.final_place(ta), self.final_place(fa), taken

    def same_place(self, a: int | None, b: int | None) -> bool:
        """Do jumps to ``a`` and to ``b`` run the same code?

        The same position through unconditional jumps, or two copies of one small block that
        returns (3.11+ copies ``return None`` and the like into each path that reaches it).
        """
        if a == b:
            return True
        a, b = self.final_place(a), self.final_place(b)
        return a == b or (a is not None and b is not None and self.same_return_block(a, b))

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
        if rt[0] != "goto" or rf[0] != "goto":
            return self.conditional_exit(cond, t, f, rt, rf, ctx, stack, out)
        join = self.join_of(t, f, ctx)
        if join is None and ctx.loop is not None:
            join = self.value_join_after_loop(t, f, ctx, stack)
        if join is None:
            value = self.value_before_copied_tails(t, f, ctx, stack)
            if value is not None:
                then, other, join = value
                stack.append(ast.IfExp(cond, self.executor.value(then, self.instrs[i]),
                                       self.executor.value(other, self.instrs[i])))
                return join
        inner = ctx.with_stops(join)
        s_then, s_else = list(stack), list(stack)
        then = self.emit(t, inner, s_then)
        other = self.emit(f, inner, s_else)
        if len(s_then) == len(stack) + 1 and len(s_else) == len(stack) + 1 and not then and not other \
                and join is not None:
            stack.append(ast.IfExp(cond, self.executor.value(s_then[-1], self.instrs[i]),
                                   self.executor.value(s_else[-1], self.instrs[i])))
            return join
        if len(s_then) != len(s_else) and join is not None and then and other:
            raise self.error(i, "branches leave different stacks")
        if join is not None:
            _settle_branch_stacks(stack, s_then, then, s_else, other, pending,
                                  lambda: self.error(i, "branches leave different values on the stack"))
            keep = s_then if len(s_then) >= len(s_else) else s_else
            stack[:] = keep if then else (s_else if other else keep)
        out.append(ast.If(cond, then or [ast.Pass()], other))
        return join

    def value_before_copied_tails(self, t: int, f: int, ctx: Context, stack: list) -> tuple | None:
        """A conditional expression whose branches never meet: 3.12+ copied the small returning
        code after it into both (``return s[:m.start() if m else None].strip()``).

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
        while common < min(len(a), len(b)) and _copy_key(self.instrs[a[-1 - common]]) \
                == _copy_key(self.instrs[b[-1 - common]]) \
                and self.instrs[a[-1 - common]].lineno == self.instrs[b[-1 - common]].lineno:
            common += 1
        for n in range(min(common, len(a) - 1, len(b) - 1), 0, -1):
            if _ends_statement(self.instrs[b[-n]]):
                continue
            values = self.one_value_each(((t, a[-n]), (f, b[-n])), ctx, stack)
            if values is not None and all(isinstance(x, ast.expr) for x in values):
                return values[0], values[1], b[-n]
        return None

    def straight_to_end(self, p: int | None) -> list[int] | None:
        """The positions of the jump-free code from ``p`` that ends the function, entered only at
        ``p``; None when it jumps or is entered elsewhere."""
        if p is None:
            return None
        found = []
        for k in range(p, min(p + 32, len(self.instrs))):
            if k != p and self.cfg.is_leader(k) and self.cfg.blocks[self.cfg.block_of[k]].preds != [self.cfg.block_of[k - 1]]:
                return None
            ins = self.instrs[k]
            if ins.target is not None:
                return None
            found.append(k)
            if ins.opname in ENDS_FUNCTION:
                return found
        return None

    def value_join_after_loop(self, t: int, f: int, ctx: Context, stack: list) -> int | None:
        """Where the two values of a conditional expression inside a loop meet when that is past the
        loop's own blocks (``return -(a if b else c)`` in a loop body): a join of the whole function
        at which both branches have pushed one value and run no statement."""
        join = self.join_within(t, f, None)
        if join is None or self.one_value_each(((t, join), (f, join)), ctx, stack) is None:
            return None
        return join

    def one_value_each(self, branches: tuple, ctx: Context, stack: list) -> list | None:
        """The value each branch pushes from its start to its stop (``branches``: (start, stop)
        pairs), when each only pushes one value (runs no statement, leaves the stack below as
        it was); else None."""
        values = []
        for start, stop in branches:
            trial = list(stack)
            try:
                if self.emit(start, ctx.with_stops(stop), trial) or len(trial) != len(stack) + 1 \
                        or any(x is not y for x, y in zip(trial, stack, strict=False)):
                    return None
            except DecompilationError:
                return None
            values.append(trial[-1])
        return values

    def continue_stmt(self, target: int | None, ctx: Context) -> ast.Continue:
        """``continue``. One that jumps to a while loop's test at the top is marked ``to_top``: the
        compiler goes there only for a written ``continue`` (the end of the body runs the test's copy
        at the bottom), so cleanup must not fold it into an ``if`` around the rest of the body."""
        node = ast.Continue()
        loop = ctx.loop
        if target is not None and target < len(self.instrs) and self.instrs[target].opname == "JUMP":
            target = self.cfg.pos(self.instrs[target].target)   # (``continue`` is a jump back)
        node.to_top = loop is not None and target == loop.header and copies_loop_tests() \
            and self.instrs[loop.header].opname not in ("FOR_ITER", "ASYNC_FOR_ITER")
        return node

    def resolve_exit(self, pos, ctx, stack):
        """('goto', None), ('end', pos) for the region's end, or ('stmt', [break/continue/return])."""
        kind = self.classify(pos, ctx)
        if kind == "goto":
            return ("goto", None)
        if kind == "stop":
            return ("end", pos)
        if kind == "continue":
            return ("stmt", [self.continue_stmt(pos, ctx)])
        if kind == "break":
            return ("stmt", [ast.Break()])
        body: list = []
        normal = self.leave_region(pos, ctx, list(stack), body)
        return ("end", None) if normal else ("stmt", body)

    def conditional_exit(self, cond, t, f, rt, rf, ctx, stack, out):
        """A conditional jump one or both of whose branches leave the current region."""
        if rt[0] == "stmt" and rf[0] == "goto":
            out.append(ast.If(cond, rt[1], []))
            return f
        if rf[0] == "stmt" and rt[0] == "goto":
            out.append(ast.If(negate(cond), rf[1], []))
            return t
        if rt[0] == "end" and rf[0] == "goto":
            out.append(ast.If(negate(cond), self.emit(f, ctx, list(stack)) or [ast.Pass()], []))
            return rt[1]
        if rf[0] == "end" and rt[0] == "goto":
            out.append(ast.If(cond, self.emit(t, ctx, list(stack)) or [ast.Pass()], []))
            return rf[1]
        then = rt[1] if rt[0] == "stmt" else []
        other = rf[1] if rf[0] == "stmt" else []
        out.append(ast.If(cond, then or [ast.Pass()], other))   # (even empty: the test runs code)
        end = rt[1] if rt[0] == "end" else rf[1] if rf[0] == "end" else None
        return end

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
        stmts = self.emit(i + 1, ctx.with_stops(target), right_stack)
        if stmts or len(right_stack) != len(stack) + 1:
            raise self.error(i, "value-position and/or with statements inside")
        right = self.executor.value(right_stack[-1], ins)
        stack.append(bool_op(ast.And if is_and else ast.Or, self.executor.value(left, ins), right))
        return target

    def chain_in_copied_tails(self, start: int, stop: int, end: int, stmts: list, left, middle) -> bool:
        """The last comparison of a chain in value position whose right operand is a conditional
        expression, 3.12+ having copied the comparison and the returning code after the chain into
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

    def copied_tail(self, start: int, stop: int, tail: int) -> int | None:
        """Where the code from ``start`` (before ``stop``) runs a copy of the straight-line code at
        ``tail`` that ends the function: 3.12+ copies a small returning block into each path that
        reaches it, so a value's two paths no longer meet (``return (a < b < c), d``)."""
        copy = []
        for ins in self.instrs[tail:tail + 8]:    # (straight on, across changes of handler)
            if ins.target is not None:
                return None
            copy.append(ins)
            if ins.opname in ENDS_FUNCTION:
                break
        if not copy or copy[-1].opname not in ENDS_FUNCTION:
            return None
        key = [_copy_key(ins) for ins in copy]
        n = len(copy)
        found = [p for p in range(start + 1, stop - n + 1)
                 if [_copy_key(x) for x in self.instrs[p:p + n]] == key]
        return found[0] if len(found) == 1 else None

    def merge_compare(self, left, right, middle, i):
        if isinstance(left, ast.Compare) and isinstance(right, ast.Compare) and right.left is middle:
            return ast.Compare(left.left, left.ops + right.ops, left.comparators + right.comparators)
        if isinstance(left, ast.Compare) and isinstance(right, ast.BoolOp):
            return ast.BoolOp(ast.And(), [left, right])
        raise self.error(i, "unrecognised chained comparison")

    # -- loops -------------------------------------------------------------------------
    def try_loop(self, pos: int, ctx: Context, stack: list, out: list):
        ins = self.instrs[pos]
        inverted = self.while_tests.get(pos)
        if ctx.loop is not None and pos == ctx.loop.header:
            if ctx.loop.wraps_while and inverted is not None:
                return self.while_loop(pos, ctx, stack, out, inverted)
            return False
        if ctx.loop is not None and pos == ctx.loop.body_start:
            bottom = min((p for p in ctx.loop.continues if p != ctx.loop.header), default=ctx.loop.back)
            inner = [x for x in self.back_edge_targets.get(pos, []) if not (bottom <= x <= ctx.loop.back)]
            if not inner:
                if inverted is not None and inverted[1] != pos and self.cfg.block_of[inverted[4]] in ctx.loop.blocks:
                    # the body starts with a ``while`` of its own: its test is where the enclosing
                    # loop's rounds begin (``while a: while b: ...``)
                    return self.while_loop(pos, ctx, stack, out, inverted)
                return False
            return self.while_loop(pos, ctx, stack, out, None, sources=inner)
        if ins.opname in ("FOR_ITER", "ASYNC_FOR_ITER"):
            return self.for_loop(pos, ctx, stack, out)
        if inverted is not None:
            # jumps back to the test from after the loop's bottom: an enclosing ``while True``
            # whose body starts with this loop (its ``continue`` and the inner one's are the same jump)
            outer = [x for x in self.back_edge_targets.get(pos, []) if x > inverted[4]]
            if outer:
                return self.while_loop(pos, ctx, stack, out, None, sources=outer, wraps_while=True)
            return self.while_loop(pos, ctx, stack, out, inverted)
        if pos in self.back_edge_targets:
            return self.while_loop(pos, ctx, stack, out, None)
        return False

    def exits_of(self, blocks: frozenset[int], header: int, exit_pos: int | None, ctx: Context) -> set[int]:
        """Positions where a jump out of the loop is ``break`` (and where those breaks land).

        Code laid out inside the loop's range counts as the loop's (inline code ending in break or
        continue), except a place where the enclosing statement ends (``ctx.stops``): 3.12+ lays the
        code after a try statement before its handlers, so such a place can sit inside the range,
        and a jump from the loop straight to it can only be ``break``. Likewise a jump to the next
        round of the enclosing loop (``ctx.next_rounds``): ``continue`` binds to the innermost loop, so
        it is a ``break`` that 3.12+ threaded through the end of the enclosing loop's body.
        """
        stops, outer_next = ctx.stops, ctx.next_rounds
        last = max(self.cfg.blocks[b].end for b in blocks)
        if exit_pos is not None and exit_pos > header:
            last = max(last, exit_pos)  # the loop's code is laid out before its exit
        found: set[int] = set()
        # the except clauses of a try inside the loop run under their handler's cleanup handler:
        # a jump to a later clause stays in the loop, wherever that clause is laid out
        clauses = set()
        for b in blocks:
            h = self.cfg.blocks[b].handler
            hp = self.cfg.pos(h.target) if h is not None else None
            if hp is not None and self.cfg.block_of[hp] in blocks and self.is_try_handler(h.target) \
                    and self.cfg.handler_at[hp] is not None:
                clauses.add(self.cfg.handler_at[hp].target)

        def in_clauses(t: int) -> bool:
            return any(x in clauses for x in self.cfg.handler_chain(t))

        # the loop inside a protected region: code after the region (its finally copy, the code
        # after the try statement) is protected by the handlers outside it alone (the region's
        # handler is, by its cleanup handler). 3.12+ lays the except clauses of a try in the
        # loop's body out after that code, and a jump there from the loop can only be ``break``
        # (``try: while True: ... break ... finally: ...``)
        chain = self.cfg.handler_chain(header)
        region = ctx.layers[-1].target if ctx.layers else None
        outside = chain[chain.index(region) + 1:] if region in chain else None

        def leaves_region(t: int) -> bool:
            around = self.cfg.handler_chain(t)
            return outside is not None and len(around) <= len(outside) \
                and around == outside[len(outside) - len(around):]

        def ends_enclosing(t: int) -> bool:
            return t != header and self.cfg.block_of[t] not in blocks \
                and (t in stops or self.follow_trivial(t, backward=True) in stops)

        # jumps anywhere in the loop's layout range that land after it (inline code ending in break)
        from_loop = self.reached_within(blocks, header, last)
        for k in range(header, last):
            ins = self.instrs[k]
            if (ins.opname == "JUMP" or ins.opname in POP_JUMPS) and ins.target is not None \
                    and self.cfg.block_of[k] in from_loop:
                t = self.cfg.pos(ins.target)
                leaving = t is not None and region in self.cfg.handler_chain(k) and leaves_region(t)
                if t is None or t == exit_pos or (header <= t < last and not (ends_enclosing(t) or leaving)):
                    continue
                if exit_pos in outer_next and self.final_place(t) == exit_pos:
                    continue            # the loop's exit is the enclosing loop's next round
                if t < header and t in outer_next:
                    found.add(t)
                    continue
                if t < header and t in self.back_edge_targets:  # an enclosing loop's next round
                    continue
                final = self.follow_trivial(t, backward=True)
                if self.reraises(final) or in_clauses(t) or (final is not None and header <= final < last
                                                             and final != exit_pos and not leaving):
                    continue
                found.add(t)
                if final is not None:
                    found.add(final)
        for b in blocks:
            for s in self.cfg.blocks[b].succs:
                if s in blocks:
                    continue
                p = self.cfg.blocks[s].start
                if p == exit_pos or p == header or (header < p < last and not ends_enclosing(p)):
                    continue
                if exit_pos in outer_next and self.final_place(p) == exit_pos:
                    continue
                final = self.follow_trivial(p, backward=True)
                if self.reraises(final) or in_clauses(p):
                    continue
                if final is not None and (final >= last or final == exit_pos or final in stops):
                    found.add(p)
                    found.add(final)
        own_cleanups = set()    # those of the try statements in the loop (clauses ending in break too)
        for b in blocks:
            h = self.cfg.blocks[b].handler
            hp = self.cfg.pos(h.target) if h is not None else None
            if hp is not None and h.target not in chain and self.is_try_handler(h.target) \
                    and self.cfg.handler_at[hp] is not None:
                own_cleanups.add(self.cfg.handler_at[hp].target)
        if own_cleanups and outer_next:
            # ``break`` in an except clause of a try in the loop, threaded by 3.12+ through the end
            # of the enclosing loop's body to its next round: the clause leaves its handler's
            # cleanup range (POP_EXCEPT, the iterator popped) and jumps there
            for index, block in enumerate(self.cfg.blocks):
                if index in blocks or not own_cleanups & set(self.cfg.handler_chain(block.start)):
                    continue
                for s in block.succs:
                    after = self.cfg.blocks[s]
                    jump = self.instrs[after.end - 1]
                    if s not in blocks and not own_cleanups & set(self.cfg.handler_chain(after.start)) \
                            and jump.opname == "JUMP":
                        t = self.cfg.pos(jump.target)
                        if t is not None and t < header and t in outer_next:
                            found.add(t)
        found = self.without_body_returns_of_for(found, blocks, header)
        return self.without_dead_ends(self.without_inline_exits(found), blocks, exit_pos)

    def without_body_returns_of_for(self, found: set[int], blocks: frozenset[int], header: int) -> set[int]:
        """Drop code that ends the function and that a ``for`` loop's body enters by a test
        alone: a ``break`` pops the iterator before it jumps, so code entered with the iterator
        still on the stack is the body's (``if c: return a`` laid out after the except clauses
        3.12+ put at the end of the function)."""
        if self.instrs[header].opname not in ("FOR_ITER", "ASYNC_FOR_ITER"):
            return found
        dropped = set()
        for p in found:
            if not self.cfg.is_leader(p):
                continue
            preds = self.cfg.blocks[self.cfg.block_of[p]].preds
            if preds and all(b in blocks and self.instrs[self.cfg.blocks[b].end - 1].opname in POP_JUMPS
                             for b in preds) and self.dead_end({p}, set(blocks)) is not None:
                dropped.add(p)
        return found - dropped

    def reached_within(self, blocks: frozenset[int], header: int, last: int) -> set[int]:
        """The blocks laid out in ``[header, last)`` that the loop reaches (by jumps or by raising).

        Other code can lie in that range: 3.12+ lays every except clause out at the end of the
        function, so an earlier loop's clauses can sit between this loop's blocks."""
        return self.cfg.reach(blocks, lambda b: b in blocks or header <= self.cfg.blocks[b].start < last)

    def without_dead_ends(self, found: set[int], blocks: frozenset[int], exit_pos: int | None) -> set[int]:
        """When jumps leave the loop for several places, drop those that start code only the loop
        reaches and that ends the function (``while a: if c: continue; return b``, the return laid
        out after the loop's last block): that code is the loop body's own, not a ``break``."""
        finals = {self.follow_trivial(p, backward=True) for p in found} - {None}
        if len(finals) < 2:
            return found
        # the place breaks land: the loop's exit, else the latest place, unless that place is
        # itself a dead end and the others are not (``while True:`` ending in a raise, laid out
        # after it, whose breaks go on with the enclosing loop)
        candidates = [exit_pos] if exit_pos in finals else sorted(finals, reverse=True)
        fallback = None
        for keep in candidates:
            others = {p for p in found if self.follow_trivial(p, backward=True) != keep}
            if self.dead_end(others, set(blocks)) is not None:
                return found - others   # (together: the branches of an if inside the loop meet there)
            inside, dead = set(blocks), set()
            changed = True
            while changed:     # a dead end may be entered through another (a jump to the return)
                changed = False
                for p in others - dead:
                    region = self.dead_end({p}, inside)
                    if region is not None:
                        dead.add(p)
                        inside |= region
                        changed = True
            if dead == others:
                return found - dead
            if fallback is None:
                fallback = found - dead
        return fallback

    def dead_end(self, starts: set[int], loop_blocks: set[int]) -> set[int] | None:
        """The blocks of the code at ``starts`` if it ends the function (return or raise) without
        joining other code and only ``loop_blocks`` enter it, else None."""
        region: set[int] = set()
        for p in starts:
            if not self.cfg.is_leader(p):
                return None
            region.add(self.cfg.block_of[p])
        todo = list(region)
        while todo:
            b = todo.pop()
            if len(region) > 64:
                return None
            for s in self.cfg.blocks[b].succs:
                if s in loop_blocks:
                    return None
                if s not in region:
                    region.add(s)
                    todo.append(s)
        grown = True
        while grown:    # take in the little blocks on the way from the loop (a chain's POP_TOP; JUMP)
            grown = False
            for b in list(region):
                for pred in self.cfg.blocks[b].preds:
                    block = self.cfg.blocks[pred]
                    if pred not in region and pred not in loop_blocks and set(block.succs) <= region \
                            and set(block.preds) <= region | loop_blocks and block.preds:
                        region.add(pred)
                        grown = True
        entered_inside = all(pred in region or pred in loop_blocks
                             for b in region for pred in self.cfg.blocks[b].preds)
        return region if entered_inside else None

    def without_inline_exits(self, found: set[int]) -> set[int]:
        """Drop exits whose code runs straight into another exit: the tail of an ``if`` that ends in
        ``break`` laid out after the loop (3.14 no longer copies the test to the bottom, so the
        last body statement can fall into the code after the loop)."""
        def runs_into(p: int, q: int) -> bool:
            if not p < q <= p + 64 or self.cfg.handler_at[p] != self.cfg.handler_at[q]:
                return False
            return all(ins.target is None and ins.opname not in ENDS_FUNCTION
                       and ins.opname not in ("RERAISE", "FOR_ITER", "ASYNC_FOR_ITER")
                       and self.cfg.handler_at[p + k] == self.cfg.handler_at[p]
                       for k, ins in enumerate(self.instrs[p:q]))
        return {p for p in found if not any(runs_into(p, q) for q in found)}

    def reraises(self, p: int | None) -> bool:
        """Does the block at ``p`` only re-raise the exception being handled?

        ``RERAISE`` (no except clause matched) or, ending ``except*`` clauses, ``SWAP 2; POP_EXCEPT;
        RERAISE 0`` (what they left unhandled).
        """
        if p is None or p >= len(self.instrs):
            return False
        ops = self.instrs[p:self.cfg.block_at(p).end]
        return bool(ops) and ops[-1].opname == "RERAISE" \
            and all(o.opname in ("SWAP", "POP_EXCEPT") for o in ops[:-1])

    def follow_trivial(self, p: int | None, backward: bool = False) -> int | None:
        """Follow blocks made only of POP_TOP and a forward JUMP; the position finally reached.

        With ``backward``, also backward jumps that do not go to a loop's head (3.12+ puts the
        code after a try statement before its handler and jumps back to it).
        """
        for _ in range(16):
            if p is None or p >= len(self.instrs):
                return p
            block = self.cfg.block_at(p)
            ops = self.instrs[block.start:block.end]
            if ops and ops[-1].opname == "JUMP" and all(o.opname in ("POP_TOP", "POP_EXCEPT") for o in ops[:-1]):
                t = self.cfg.pos(ops[-1].target)
                if t is None or t == p or (t < p and not (backward and t not in self.back_edge_targets)):
                    return p
                p = t
                continue
            return p
        return p

    def final_place(self, p: int | None) -> int | None:
        """Where control ends up from ``p`` through unconditional jumps (either direction)."""
        seen = set()
        while p is not None and p < len(self.instrs) and self.instrs[p].opname == "JUMP" and p not in seen:
            seen.add(p)
            p = self.cfg.pos(self.instrs[p].target)
        return p

    def follow_jumps(self, p: int | None) -> int | None:
        """Follow blocks that are a single forward JUMP."""
        for _ in range(16):
            if p is None or p >= len(self.instrs):
                return p
            ins = self.instrs[p]
            if ins.opname != "JUMP":
                return p
            t = self.cfg.pos(ins.target)
            if t is None or t <= p:
                return p
            p = t
        return p

    def break_target(self, found: set[int], exit_pos, pos):
        """The single place breaks land (the largest of the resolved positions)."""
        finals = {self.follow_trivial(p, backward=True) for p in found} - {None}
        if exit_pos is not None and len(finals) > 1:
            # a copy of the loop's test at the bottom leaves the loop where the test does (into
            # the else clause); the breaks land elsewhere
            finals.discard(self.follow_trivial(exit_pos, backward=True))
        return self.single(self.one_return_copy(finals, exit_pos), pos, "breaks leave the loop to different places")

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
            # ``(*row for row in rows)`` (3.15+): every item of ``row`` is yielded as it comes
            stack.pop()
            out.append(ast.Expr(ast.Yield(ast.Starred(iterator.iterable, ast.Load()))))
            return exit_pos
        break_target = self.break_target(breaks, exit_pos, pos)
        loop = Loop(pos, frozenset({pos}), frozenset({exit_pos} | breaks), blocks,
                    after=break_target if break_target is not None else exit_pos)
        hole = v.Hole()
        body_stack = stack + [hole]
        body = self.emit(pos + 1, Context(ctx.stops, loop, ctx.layers), body_stack)
        if hole.target is None:
            raise self.error(pos, "for loop target not found")
        stack.pop()
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
            # the else clause is ``continue`` (3.12+ jumps straight to the enclosing FOR_ITER)
            return [self.continue_stmt(exit_pos, ctx)], break_target
        orelse = self.emit(exit_pos, ctx.with_stops(break_target), list(stack))
        if break_target in ctx.next_rounds:
            return strip_continue(orelse), None
        return orelse, break_target

    def yields_each_item(self, pos: int, exit_pos: int | None) -> bool:
        """``FOR_ITER; YIELD_VALUE; POP_TOP; JUMP back``: a generator expression's starred element."""
        ops = [(ins.opname, self.cfg.pos(ins.target) if ins.target is not None else None)
               for ins in self.instrs[pos + 1:pos + 4]]
        return self.code.co_name == "<genexpr>" and exit_pos == pos + 4 \
            and ops == [("YIELD_VALUE", None), ("POP_TOP", None), ("JUMP", pos)]

    def single(self, items: set, pos, message):
        if len(items) > 1:
            raise self.error(pos, message)
        return next(iter(items), None)

    # -- match statements ----------------------------------------------------------------
    def find_matches(self) -> dict[int, MatchRead]:
        """Positions where a match statement's first case starts (its subject on the stack).

        A first case on a copy of the subject (more cases follow), with a sequence, mapping or
        class pattern, or a refutable or/as pattern is a match statement; a lone literal test is
        an ``if`` already.
        """
        found: dict[int, MatchRead] = {}
        inside: list[tuple[int, int]] = []
        reader = PatternReader(self.instrs, self.cfg.pos)
        for p, ins in enumerate(self.instrs):
            if not (ins.opname in ("COPY", "MATCH_SEQUENCE", "MATCH_MAPPING") or self.class_pattern_at(p)):
                continue
            if ins.opname == "COPY" and ins.argval != 1:
                continue
            if any(a <= p < b for a, b in inside):
                continue
            try:
                read = reader.read_match(p)
            except NoMatch:
                continue
            first = read.cases[0]
            if not first.copy and not any(isinstance(n, (ast.MatchSequence, ast.MatchMapping, ast.MatchClass))
                                          for n in ast.walk(first.pattern)) \
                    and not (isinstance(first.pattern, (ast.MatchAs, ast.MatchOr)) and first.fail is not None):
                continue
            found[p] = read
            inside.extend(read.pattern_ranges())
        return found

    def class_pattern_at(self, p: int) -> bool:
        """``p`` loads a (dotted) class name followed by ``LOAD_CONST names; MATCH_CLASS``."""
        k = p
        if self.instrs[k].opname not in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_CLASSDEREF"):
            return False
        k += 1
        while k < len(self.instrs) and self.instrs[k].opname == "LOAD_ATTR":
            k += 1
        return k + 1 < len(self.instrs) and self.instrs[k].opname == "LOAD_CONST" \
            and self.instrs[k + 1].opname == "MATCH_CLASS"

    def match_statement(self, pos: int, ctx: Context, stack: list, out: list) -> int | None:
        read = self.matches[pos]
        if not stack or not isinstance(stack[-1], ast.expr):
            raise self.error(pos, "match statement without a subject")
        subject = stack[-1]
        base = stack[:-1]
        cases = []
        fail = read.fail
        for case in read.cases:
            guard = None
            q = case.after
            if case.copy:
                start = q + 1
                if self.instrs[q].opname != "POP_TOP":
                    found = self.match_guard(q, case.fail, ctx, stack)
                    if found is None or self.instrs[found[1]].opname != "POP_TOP" or case.fail is None:
                        raise self.error(q, "unrecognised guard of a case")
                    guard, start = found[0], found[1] + 1
            else:
                # the last case: a guard fails to where a failed pattern goes (an irrefutable
                # pattern has none: the guard's failure then is the default case's start)
                start = q
                found = self.match_guard(q, case.fail, ctx, base)
                if found is not None:
                    guard, start = found[0], found[1]
                    if fail is None:
                        fail = found[2]
            for opname, name in case.stores:
                if opname == "STORE_GLOBAL":
                    self.executor.globals_declared.add(name)
                elif opname == "STORE_DEREF" and name in self.code.co_freevars:
                    self.executor.nonlocals_declared.add(name)
            cases.append((case.pattern, guard, start))
        ends = [start for _, _, start in cases] + ([fail] if fail is not None else [])
        join = self.match_end(ends, ctx)
        if join is not None and join < max(start for _, _, start in cases):
            raise self.error(pos, "match statement cases join inside a case")
        inner = ctx.with_stops(join)
        nodes = []
        for pattern, guard, start in cases:
            body = self.emit(start, inner, list(base))
            nodes.append(ast.match_case(pattern, guard, body or [ast.Pass()]))
        if fail is not None and fail != join:
            body = self.emit(fail, inner, list(base))
            guard = None
            if len(body) == 1 and isinstance(body[0], ast.If) and not body[0].orelse:
                guard, body = body[0].test, body[0].body        # ``case _ if g:`` (same code)
            nodes.append(ast.match_case(ast.MatchAs(None, None), guard, body or [ast.Pass()]))
        stack.pop()
        out.append(ast.Match(self.executor.value(subject, self.instrs[pos]), nodes))
        return join

    def match_end(self, ends: list[int], ctx: Context) -> int | None:
        """Where the cases of a match statement meet again (the compiler's ``end`` label).

        Bodies that end in return, raise, break or continue never get there; the end is the
        nearest block that post-dominates the most case starts (and the no-match path), at least
        two of them. None when no two paths meet: everything after the last case is its default.
        """
        ipdom = self.ipdom(ctx.loop)
        counts: dict[int, int] = {}
        for e in ends:
            b = self.cfg.block_of[e]
            if b not in ipdom:
                continue                    # leaves the loop (break)
            seen = set()
            for _ in range(len(ipdom) + 2):
                if b == EXIT or b in seen:
                    break
                seen.add(b)
                counts[b] = counts.get(b, 0) + 1
                b = ipdom.get(b, EXIT)
        best = max(counts.values(), default=0)
        if best < 2:
            return None
        return min(self.cfg.blocks[b].start for b, n in counts.items() if n == best)

    def match_guard(self, q: int, fail: int | None, ctx: Context, stack: list):
        """A case's guard at ``q`` failing to ``fail`` (any place if None): (condition, where the
        guard lets the case go on, where it fails to), or None."""
        trial = list(stack)
        scratch: list = []
        try:
            end, stop = self.executor.run(q, self.cfg.block_at(q).end, trial, scratch)
        except DecompilationError:
            return None
        if scratch or stop.ins is None or stop.ins.opname not in POP_JUMPS:
            return None
        t, f = self.branches(end - 1)
        cond, t, f, _ = self.compound(stop.condition, t, f, {self.cfg.block_of[end - 1]}, trial, ctx,
                                      keep=(fail,))
        if len(trial) != len(stack):
            return None
        if fail is None:
            # the guard falls through into its case's body (it jumps when false)
            return (negate(cond), f, t) if f == end else (cond, t, f)
        if f == fail:
            return cond, t, f
        if t == fail:
            return negate(cond), f, t
        return None

    def find_while_tests(self) -> dict[int, tuple]:
        """Top-of-loop tests that 3.11+ duplicated at the bottom of ``while`` loops.

        Maps the top test's first position to (test_end, body_start, exit_pos, bottom, back).
        """
        found = {}
        for body_start, sources in self.back_edge_targets.items():
            back = max(sources)
            tests = ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE")
            last = back       # the bottom copy's last test
            if self.instrs[back].opname == "JUMP" and back >= 1 and self.instrs[back - 1].opname in tests:
                last = back - 1   # ``POP_JUMP_IF_FALSE exit; JUMP body``: the test ends in a true constant
            elif self.instrs[back].opname not in tests:
                continue
            end = body_start - 1
            ins = self.instrs
            if end >= 3 and ins[end].opname == "JUMP" and ins[end - 1].opname == "POP_TOP" \
                    and ins[end - 2].opname == "JUMP" and self.cfg.pos(ins[end - 2].target) == body_start \
                    and ins[end - 3].opname.startswith("POP_JUMP"):
                # a chained comparison ends the test: ``POP_JUMP_IF_FALSE exit; JUMP body`` then the
                # trampoline ``POP_TOP; JUMP exit`` popping the middle operand; at the bottom it is
                # ``POP_JUMP_IF_TRUE body`` (the trampoline after it)
                end -= 3
            else:
                # the same, 3.12+: the trampoline runs a copy of the returning code after the loop
                j = self.cfg.block_at(end).start if end >= 0 else -1
                if j >= 2 and ins[j].opname == "POP_TOP" and self.is_return_copy(j + 1, body_start) \
                        and ins[j - 1].opname == "JUMP" and self.cfg.pos(ins[j - 1].target) == body_start \
                        and ins[j - 2].opname.startswith("POP_JUMP"):
                    end = j - 2
            k = 0
            while True:
                a, b = last - k, end - k
                if b < 0 or a <= body_start:
                    break
                ia, ib = self.instrs[a], self.instrs[b]
                if (ia.target is None) != (ib.target is None):
                    break
                if ia.target is None and (ia.opname != ib.opname or ia.argval != ib.argval):
                    break
                # jumps inside the test (``and``/``or`` values, a chain's exit) land alike in both copies
                same_value_jump = ia.opname == ib.opname \
                    and (ia.opname.startswith("JUMP_IF") or ia.opname == "JUMP") \
                    and self.cfg.pos(ia.target) is not None and self.cfg.pos(ib.target) is not None \
                    and self.cfg.pos(ia.target) - a == self.cfg.pos(ib.target) - b
                # ``... or`` ending in a constant true: the test jumps into the body unconditionally
                same_value_jump = same_value_jump or (ia.opname == ib.opname == "JUMP"
                                                      and self.cfg.pos(ia.target) == body_start
                                                      and self.cfg.pos(ib.target) == body_start)
                if ia.target is not None and not same_value_jump \
                        and not (ia.opname.startswith("POP_JUMP") and ib.opname.startswith("POP_JUMP")):
                    break
                if ib.lineno != ia.lineno:
                    break
                k += 1
            if k == 0:
                continue
            top, test_end = end + 1 - k, end
            if not self.instrs[test_end].opname.startswith("POP_JUMP"):
                continue
            t, f = self.branches(test_end)
            exit_pos = f if self.same_place(t, body_start) else t
            bottom = last - k + 1
            widened = self.widen_copied_test(top, bottom, test_end, body_start, exit_pos)
            if widened is not None:
                top, bottom = widened
            found[top] = (test_end, body_start, exit_pos, bottom, back)
        return found

    def widen_copied_test(self, top: int, bottom: int, test_end: int, body_start: int,
                          exit_pos: int | None) -> tuple | None:
        """(top, bottom) starts of a while test's two copies, past where they stop repeating.

        The copies differ where a constant folded a jump away: the top one's ``POP_JUMP_IF_FALSE
        exit; JUMP body`` is ``POP_JUMP_IF_TRUE body`` and a copy of the exit at the bottom. Each
        copy goes back over its test code on the while statement's line and the copies of the
        code after the loop between it; both must then start alike. None when they do not.
        """
        line = self.instrs[test_end].lineno
        new_top = self.test_code_start(top, line, exit_pos, 0)
        new_bottom = self.test_code_start(bottom, line, exit_pos, body_start)
        if new_top == top and new_bottom == bottom:
            return None
        a, b = self.instrs[new_top], self.instrs[new_bottom]
        if new_top >= body_start or (a.opname, repr(a.argval)) != (b.opname, repr(b.argval)):
            return None
        return new_top, new_bottom

    def test_code_start(self, p: int, line, exit_pos: int | None, floor: int) -> int:
        """Back from ``p`` over loads, tests and jumps on ``line`` and copies of the block at
        ``exit_pos`` (not below ``floor``): where that code starts (with a test, not with such a
        copy, which belongs to the code before: a ``break`` at the end of the body)."""
        first = p
        while p - 1 >= floor:
            ins = self.instrs[p - 1]
            if ins.lineno == line and (ins.opname in TEST_OPS or ins.opname in CONDITIONAL_JUMPS):
                p -= 1
                first = p
                continue
            start = self.cfg.block_at(p - 1).start
            if start >= floor and exit_pos is not None and start != exit_pos \
                    and self.copied_block_end(start) == p and self.same_place(start, exit_pos):
                p = start
                continue
            break
        return first

    def while_loop(self, pos, ctx, stack, out, inverted, sources=None, wraps_while=False):
        if inverted is not None:
            test_end, body_start, exit_pos, bottom, back = inverted
            sources = self.back_edge_targets.get(body_start, []) \
                + [x for x in self.back_edge_targets.get(pos, []) if x <= back]
            blocks = self.loop_blocks(pos, sources) | self.loop_blocks(body_start, sources)
            breaks = self.exits_of(blocks, pos, exit_pos, ctx)
            break_target = self.break_target(breaks, exit_pos, pos)
            loop = Loop(pos, frozenset({pos, bottom}), frozenset({exit_pos} | breaks), blocks, body_start, back,
                        after=break_target if break_target is not None else exit_pos)
            # the test itself, evaluated once at the top
            test_stack = list(stack)
            scratch: list = []
            cond = self.loop_test(pos, test_end, body_start, exit_pos, test_stack, scratch, ctx)
            # (in the body, reaching where the enclosing statement ends is a ``break`` when the loop
            # exits there too)
            body_stops = (ctx.stops - loop.breaks) | {bottom}
            body = self.emit(body_start, Context(body_stops, loop, ctx.layers), list(stack))
            orelse, after = self.loop_else(exit_pos, break_target, ctx, stack)
            out.append(ast.While(cond, strip_continue(body) or [ast.Pass()], orelse))
            return None if after in ctx.next_rounds else after
        sources = sources or self.back_edge_targets[pos]
        blocks = self.loop_blocks(pos, sources)
        with_else = self.while_else_without_copy(pos, sources, blocks, ctx, stack, out) if not wraps_while else None
        if with_else is not None:
            return with_else[0]
        breaks = self.exits_of(blocks, pos, None, ctx)
        try:
            break_target = self.break_target(breaks, None, pos)
        except DecompilationError:
            # the body's last statements, laid out after the test's exit, run into that exit: a
            # top-tested loop whose body ends in ``break``/``return`` (so no copy of the test)
            read = self.while_else_without_copy(pos, sources, blocks, ctx, stack, out, with_else=False) \
                if not wraps_while else None
            if read is None:
                raise
            return read[0]
        loop = Loop(pos, frozenset({pos}), frozenset(breaks), blocks, after=break_target, wraps_while=wraps_while)
        body = self.emit_loop_body_from_header(pos, loop, ctx, stack)
        out.append(ast.While(ast.Constant(True), strip_continue(body) or [ast.Pass()], []))
        return None if break_target in ctx.next_rounds else break_target

    def while_else_without_copy(self, pos, sources, blocks, ctx, stack, out, with_else: bool = True) -> tuple | None:
        """``while c: ... else: ...`` whose body never runs off its end, so the compiler made no copy
        of the test at the bottom: the test at ``pos`` leaves the loop for the else clause, breaks
        land after it. (Where both go to one place, ``while True:`` with ``if not c: break``
        reads the same and is kept.) Returns (where control goes next,) or None."""
        if pos in self._else_trials:
            return None
        found = self.header_test(pos, blocks)
        if found is None:
            return None
        test_end, body_start, exit_pos = found
        try:
            target = self.break_target(self.exits_of(blocks, pos, exit_pos, ctx), exit_pos, pos)
        except DecompilationError:
            return None
        if with_else and target is not None and self.same_place(target, exit_pos):
            return None
        trial_out: list = []
        trial_stack = list(stack)
        self._else_trials.add(pos)
        try:
            after = self.while_loop(pos, ctx, trial_stack, trial_out, (test_end, body_start, exit_pos, pos, max(sources)))
        except DecompilationError:
            return None
        finally:
            self._else_trials.discard(pos)
        for stmt in trial_out:
            out.append(stmt)
        stack[:] = trial_stack
        return (after,)

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
            if b not in blocks or any(ins.lineno != line for ins in code) \
                    or code[-1].opname not in POP_JUMPS and code[-1].opname != "JUMP" \
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
        return self.emit(pos, Context(ctx.stops, loop, ctx.layers), list(stack))

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

    # -- try / with ----------------------------------------------------------------------
    def covered(self, pos: int, layer: Layer) -> bool:
        return layer.target in self.cfg.handler_chain(pos)

    def test_left_out(self, pos: int, layer: Layer) -> bool:
        """A lone conditional jump between two covered instructions: 3.13+ leaves jumps out of
        the handler's range (they cannot raise), so this test inside a ``with`` or ``try`` body
        is still the body's, not a way out of it."""
        block = self.cfg.block_at(pos)
        return JUMPS_CANNOT_RAISE and block.start == pos and block.end == pos + 1 \
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

    def try_start(self, pos: int, ctx: Context, stack: list, out: list):
        chain = self.cfg.handler_chain(pos)
        active = self.active_targets(ctx)
        candidates = [t for t in chain if t not in active and self.is_try_handler(t)]
        if not candidates:
            return False
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
            return False
        return self.emit_protected(pos, outer, ctx, stack, out)

    def is_try_handler(self, target: int) -> bool:
        p = self.cfg.pos(target)
        return p is not None and self.instrs[p].opname == "PUSH_EXC_INFO"

    def handler_kind(self, target: int) -> str:
        p = self.cfg.pos(target)
        nxt = self.instrs[p + 1] if p + 1 < len(self.instrs) else None
        if nxt is not None and nxt.opname == "WITH_EXCEPT_START":
            return "with"
        if self.is_except_handler(p):
            return "try"
        return "finally"

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

    def finally_ops(self, target: int) -> tuple[int, int]:
        """(first, last) positions of a finally handler's body: after PUSH_EXC_INFO up to its RERAISE 0."""
        p = self.cfg.pos(target)
        cleanup = self.cfg.handler_at[p]
        limit = self.cfg.pos(cleanup.target) if cleanup is not None else len(self.instrs)
        if limit is None or limit <= p:
            limit = len(self.instrs)
        last = None
        for k in range(p + 1, limit):
            ins = self.instrs[k]
            if ins.opname == "RERAISE" and ins.argval == 0:
                last = k
        if last is None:
            raise self.error(p, "finally handler without RERAISE")
        return p + 1, last

    def skip_finally_copy(self, span: tuple[int, int], p: int) -> int:
        """Skip the inline copy of a finally body starting at ``p``; returns the position after it.

        The copy is compared with the handler's instruction by instruction in layout order, and
        where that fails, along both copies' control flow (``walk_finally_copy``).
        """
        try:
            return self.skip_finally_copy_in_layout(span, p)
        except DecompilationError:
            walked = self.walk_finally_copy(span, p)
            if walked is None:
                raise
            return walked

    def skip_finally_copy_in_layout(self, span: tuple[int, int], p: int) -> int:
        """``skip_finally_copy`` for copies laid out alike.

        The handler's copy may hold extra exception bookkeeping (POP_TOP of the exception,
        POP_EXCEPT) before a break/continue/return; those are skipped on the handler side.
        """
        h, last = span
        k = p
        cont = None
        # the copy may be shared by several exits, which jump to it (3.10 keeps one copy so)
        while h < last and self.instrs[h].opname != "JUMP" and k < len(self.instrs) \
                and self.instrs[k].opname == "JUMP":
            t = self.cfg.pos(self.instrs[k].target)
            if t is None or t <= k:
                break
            k = t
        joins = None    # where the inline copy goes on when a test in the body skips to its end
        while h < last:
            if k >= len(self.instrs):
                raise self.error(p, "finally body copy not found on exit")
            a, b = self.instrs[h], self.instrs[k]
            if a.opname == b.opname and (a.target is not None or a.argval == b.argval):
                if a.target is not None and self.cfg.pos(a.target) == last and b.target is not None:
                    joins = self.cfg.pos(b.target)
                h += 1
                k += 1
                continue
            if a.opname == "RERAISE" and h + 1 == last and joins is not None and k == joins:
                # 3.12+ copied the final RERAISE to the end of an if in the body; the inline copy
                # falls through to where its test's other branch jumps
                cont = k
                h += 1
                continue
            if a.opname == "RERAISE" and b.opname == "LOAD_CONST" and k + 1 < len(self.instrs) \
                    and self.instrs[k + 1].opname == "RETURN_VALUE":
                # the path ends the function: the compiler copied the final return into it
                cont = k
                h += 1
                k += 2
                continue
            if a.opname == "RERAISE" and b.opname == "RETURN_VALUE":
                cont = k
                h += 1
                k += 1
                continue
            if a.opname == "RERAISE" and b.opname == "JUMP":
                # a path through the finally body: re-raise in the handler, go on inline
                cont = self.cfg.pos(b.target)
                h += 1
                k += 1
                continue
            if a.opname in ("POP_TOP", "POP_EXCEPT"):
                h += 1
                continue
            if cont is not None:
                # the copy's straight path ended where the statement goes on (or in the return
                # after it, which the compiler copied in); the rest of the handler's body is
                # reached by branches, and the copy holds those in its own places
                return cont
            raise self.error(p, "finally body copy not found on exit")
        if cont is None and joins is not None and k > p and self.instrs[k - 1].opname == "RETURN_VALUE":
            # the body ends with an if whose branch leaves (break, return): the copy goes on where
            # its test's other branch jumps
            return joins
        return k if cont is None else cont

    def walk_finally_copy(self, span: tuple[int, int], p: int) -> int | None:
        """Where the inline copy of a finally body at ``p`` goes on, found by walking it and the
        handler's copy side by side along their control flow (not their layout).

        The two copies can be laid out differently: in the inline one, a loop's except clauses
        sit at the end of the function and its test is copied to the bottom; in the handler they
        may not be. Each pair of positions compares one instruction; branches, and except
        clauses inside the body, pair their targets. Where the handler's copy ends (its final
        RERAISE), the inline copy goes on: that must be one place. None when the copies differ.
        """
        first = span[0]
        own_cleanup = _target_of(self.cfg.handler_at[first])
        ins = self.instrs
        exits: set[int] = set()
        seen: set[tuple[int, int]] = set()
        work = [(first, p)]
        while work:
            h, k = work.pop()
            h, k = self.follow_any_jumps(h), self.follow_any_jumps(k)
            if h is None or k is None or len(seen) > 4 * len(ins):
                return None     # (a bounded walk: the copies can only be so much longer than the code)
            if (h, k) in seen:
                continue
            seen.add((h, k))
            a, b = ins[h], ins[k]
            if a.opname == "RERAISE" and a.argval == 0 and _target_of(self.cfg.handler_at[h]) == own_cleanup:
                exits.add(k)      # the end of the finally body
                continue
            if _copy_key(a) != _copy_key(b) and not (a.target is not None and a.opname == b.opname):
                if a.opname in ("POP_TOP", "POP_EXCEPT"):
                    work.append((h + 1, k))     # the handler's own bookkeeping before leaving
                    continue
                return None
            handler = self.cfg.handler_at[h]
            if handler is not None and handler.target != own_cleanup:
                # inside an except clause or try of the body: its handler is the copy's too
                other = self.cfg.handler_at[k]
                if other is None:
                    return None
                work.append((self.cfg.pos(handler.target), self.cfg.pos(other.target)))
            if a.opname in ENDS_FUNCTION or a.opname == "RERAISE":
                continue
            if a.target is not None:
                work.append((self.cfg.pos(a.target), self.cfg.pos(b.target)))
            work.append((h + 1, k + 1))
        places = self.one_return_copy(sorted(exits))
        return next(iter(places)) if len(places) == 1 else None

    def follow_any_jumps(self, p: int | None) -> int | None:
        """Past unconditional jumps, forward or back."""
        for _ in range(16):
            if p is None or p >= len(self.instrs) or self.instrs[p].opname != "JUMP":
                return p if p is not None and p < len(self.instrs) else None
            p = self.cfg.pos(self.instrs[p].target)
        return p

    def emit_protected(self, pos: int, target: int, ctx: Context, stack: list, out: list):
        kind = self.handler_kind(target)
        layer = Layer(kind, target)
        if kind == "finally":
            layer.finally_ops = self.finally_ops(target)
        entry_stack = list(stack)
        body_ctx = Context(frozenset(), ctx.loop, ctx.layers + (layer,))
        body_stack = list(stack)
        body = self.emit(pos, body_ctx, body_stack)
        continuation = self.body_continuation(layer, ctx) if kind == "try" else None
        if continuation is not None:
            # read again, the returning blocks other than ``continuation`` as the body's own
            layer = Layer(kind, target, continuation=continuation)
            body_ctx = Context(frozenset(), ctx.loop, ctx.layers + (layer,))
            body_stack = list(stack)
            body = self.emit(pos, body_ctx, body_stack)
        after = self.single(self.one_return_copy(layer.normal_exits), pos, "try body leaves at different places")
        if kind == "with":
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
        if kind == "finally":
            fin_layer = Layer("handler", self.cfg.handler_at[hpos].target if self.cfg.handler_at[hpos] else -2)
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
        h_layer = Layer("handler", cleanup.target if cleanup else -2, continuation=after)
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
                h_layer = Layer("handler", h_layer.target, continuation=continuation)
                h_ctx = Context(frozenset(), ctx.loop, ctx.layers + (h_layer,))
                h_stmts = self.emit(hpos, h_ctx, list(handler_stack))
            handlers = self.except_clauses(h_stmts, pos)
            h_after = self.single(self.one_return_copy(h_layer.normal_exits, after), pos,
                                  "except clauses continue at different places")
        orelse: list = []
        if after is not None and h_after is not None and after != h_after:
            # the else clause ends where the except clauses go on, or at its own copy of that
            # place when it is a small returning block 3.12+ copied
            orelse = self.emit(after, ctx.with_stops(h_after, *self.return_copies(h_after)), list(entry_stack))
            after = h_after
        elif after is None:
            after = h_after
        out.append(try_type(body or [ast.Pass()], handlers, orelse, []))
        return after

    def is_except_star_handler(self, p: int) -> bool:
        """PUSH_EXC_INFO; COPY 1; BUILD_LIST 0; SWAP 2: the start of ``except*`` clauses.

        The stack then holds the original group, the list of exceptions raised by the clauses
        and the part of the group no clause has matched yet.
        """
        ops = [(ins.opname, ins.argval) for ins in self.instrs[p + 1:p + 4]]
        return ops == [("COPY", 1), ("BUILD_LIST", 0), ("SWAP", 2)]

    def except_star_clauses(self, hpos: int, h_layer: Layer, ctx: Context, base: list):
        """The ``except*`` clauses of the handler at ``hpos`` and where control goes after them.

        Each clause is ``<type>; CHECK_EG_MATCH; COPY 1; POP_JUMP_IF_NONE no_match; STORE name|POP_TOP;
        <body>`` (the body protected by a cleanup handler that adds what it raises to the list),
        ``no_match: POP_TOP`` falling into the next clause. After the last one, ``LIST_APPEND 1;
        PREP_RERAISE_STAR`` computes what to re-raise: ``COPY 1; POP_JUMP_IF_NOT_NONE reraise;
        POP_TOP; POP_EXCEPT`` then the code after the statement.
        """
        ins = self.instrs
        state = [v.ExcState(), v.ExcValue(), v.ExcValue(), v.ExcValue()]
        k = hpos + 4
        handlers: list[ast.ExceptHandler] = []
        while k < len(ins) and not (ins[k].opname == "LIST_APPEND" and ins[k].argval == 1):
            if len(handlers) > 64 or not self.cfg.is_leader(k) and handlers:
                raise self.error(k, "unrecognised except* clause")
            stack = base + state
            scratch: list = []
            # (the clause's type may be computed: ``except* (A if c else B)``)
            end, stop = self.run_test(k, stack, scratch, set(), ctx, len(ins))
            test = stop.condition
            if scratch or stop.ins is None or stop.ins.opname != "POP_JUMP_IF_NONE" \
                    or len(stack) != len(base) + 5 or not isinstance(test, ast.Compare) \
                    or not _is_match(test.left) or test.left.func.id != "__exception_group_matches__":
                raise self.error(k, "unrecognised except* clause")
            typ = test.left.args[0]
            no_match = self.cfg.pos(stop.ins.target)
            if no_match is None or ins[no_match].opname != "POP_TOP":
                raise self.error(k, "unrecognised except* clause")
            following = no_match + 1
            # the matched part of the group: stored to the clause's name, or dropped
            stack[-1] = v.ExcValue()
            scratch = []
            self.executor.run(end, end + 1, stack, scratch)
            name = None
            if len(scratch) == 1 and isinstance(scratch[0], ExceptAsStmt):
                name = scratch[0].name
            elif scratch or ins[end].opname != "POP_TOP":
                raise self.error(end, "unrecognised except* clause target")
            body_pos = end + 1
            layers = ctx.layers + (h_layer,)
            # the clause's cleanup handler (adds what the body raises to the list): the handler
            # just inside the clauses' own cleanup; none when the body cannot raise
            chain = self.cfg.handler_chain(body_pos) if body_pos < len(ins) else []
            clause_layer = None
            if h_layer.target in chain and chain.index(h_layer.target) > 0:
                clause = chain[chain.index(h_layer.target) - 1]
                c = self.cfg.pos(clause)
                if not any(x.opname == "LIST_APPEND" and x.argval == 3 for x in ins[c:c + 4]):
                    raise self.error(body_pos, "except* clause body without its cleanup handler")
                clause_layer = Layer("handler", clause)
                layers += (clause_layer,)
            elif h_layer.target not in chain:
                raise self.error(body_pos, "except* clause body outside the clauses' handler")
            body = self.emit(body_pos, Context(frozenset({following}), ctx.loop, layers), stack)
            if clause_layer is not None and set(clause_layer.normal_exits) - {following}:
                raise self.error(body_pos, "except* clause continues elsewhere than the next clause")
            handlers.append(ast.ExceptHandler(typ, name, body or [ast.Pass()]))
            k = following
        tail = [(x.opname, x.argval) for x in ins[k:k + 6]]
        if not handlers or tail[:3] != [("LIST_APPEND", 1), ("PREP_RERAISE_STAR", None), ("COPY", 1)] \
                or tail[3][0] != "POP_JUMP_IF_NOT_NONE" or tail[4:] != [("POP_TOP", None), ("POP_EXCEPT", None)]:
            raise self.error(k, "unrecognised end of except* clauses")
        reraise = self.cfg.pos(ins[k + 3].target)
        if [x.opname for x in ins[reraise:reraise + 3]] != ["SWAP", "POP_EXCEPT", "RERAISE"]:
            raise self.error(k, "unrecognised end of except* clauses")
        after = k + 6
        if after >= len(ins):
            raise self.error(k, "except* clauses run past the last instruction")
        if self.final_kind(after, ctx) is None:
            after = self.follow_jumps(after)
        return handlers, after

    def with_suppressed_exit(self, target: int) -> int | None:
        """Where a with statement goes on after ``__exit__`` suppressed an exception."""
        p = self.cfg.pos(target)
        for k in range(p, min(p + 8, len(self.instrs))):
            ins = self.instrs[k]
            if ins.opname == "POP_JUMP_IF_TRUE":
                q = self.cfg.pos(ins.target)
                while q is not None and q < len(self.instrs) and self.instrs[q].opname in ("POP_TOP", "POP_EXCEPT"):
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

    def except_clauses(self, stmts: list, pos) -> list[ast.ExceptHandler]:
        handlers = []
        while True:
            if len(stmts) == 1 and isinstance(stmts[0], ReraiseStmt):
                return handlers
            if len(stmts) == 1 and isinstance(stmts[0], ast.If) and _is_match(stmts[0].test):
                node = stmts[0]
                typ = node.test.args[0]
                body = list(node.body)
                name = None
                if body and isinstance(body[0], ExceptAsStmt):
                    name = body.pop(0).name
                handlers.append(ast.ExceptHandler(typ, name, body or [ast.Pass()]))
                stmts = node.orelse
                if not stmts:
                    return handlers
                continue
            if stmts and isinstance(stmts[0], ast.If) and _is_match(stmts[0].test) and not stmts[0].orelse:
                node = stmts[0]
                body = list(node.body)
                name = None
                if body and isinstance(body[0], ExceptAsStmt):
                    name = body.pop(0).name
                handlers.append(ast.ExceptHandler(node.test.args[0], name, body or [ast.Pass()]))
                stmts = stmts[1:]
                continue
            # a bare except: the remaining statements
            body = [s for s in stmts]
            handlers.append(ast.ExceptHandler(None, None, body or [ast.Pass()]))
            return handlers

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
        if kind == "return" and goes_on:
            # 3.10's copy of the code after the try statement, falling on from the clause
            first.normal_exits.append(first.continuation)
            return True
        if kind is None:
            exit_to = self.follow_jumps(first_exit)
            if exit_to is not None and exit_to < len(self.instrs) and self.instrs[exit_to].opname == "JUMP":
                back = self.cfg.pos(self.instrs[exit_to].target)
                if back is not None and back < exit_to and (back not in self.back_edge_targets
                                                            or self.instrs[exit_to].extra.get("no_interrupt")):
                    # to code laid out before the handler (3.12+); a jump that skips the
                    # interrupt check is never a ``continue``, even to a loop's header (3.14
                    # lays a while loop right after the try body, test first)
                    exit_to = self.follow_jumps(back)
            if continuation is None or dest is None or self.final_kind(dest, ctx) != "return":
                first.normal_exits.append(exit_to)
                return True
            if goes_on:
                first.normal_exits.append(first.continuation if p != first_exit else exit_to)
                return True
            # a jump to a return other than where the try statement goes on: the clause's own
            # (3.10 copies a clause's returns into each path to them; depyf shares the copies)
            p, kind = dest, "return"
        if kind == "return":
            q = p
            while q is not None and q + 1 < len(self.instrs) and self.instrs[q].opname == "POP_TOP":
                q += 1
            if q is None or self.instrs[q].opname != "LOAD_CONST":
                q = p           # (iterators are popped before a constant is loaded and returned)
            node = ast.Return(self.return_value(q, stack))
            node.source_line = self.instrs[p].lineno if p is not None else None
            out.append(node)
        elif kind == "break":
            out.append(ast.Break())
        elif kind == "continue":
            out.append(self.continue_stmt(p, ctx))
        return False

    def body_continuation(self, layer: Layer, ctx: Context) -> int | None:
        """Where a try body that seems to go on at several places goes on, when all of them but
        one are blocks that return without computing anything (``return <constant>``): 3.10 puts
        a constant return after the body's POP_BLOCK, outside the handler's range, and its copies
        become jumps to one (see ``depyf.decompiler.versions.v3_10``). Those are the body's own
        returns; None when the exits need no second reading."""
        places = self.one_return_copy(layer.normal_exits)
        if len(places) < 2 or None in places:
            return None
        rest = [p for p in places if self.final_kind(p, ctx) != "return"]
        return rest[0] if len(rest) == 1 else None

    def clause_continuation(self, h_layer: Layer, ctx: Context) -> int | None:
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
        rest = [p for p in places if self.final_kind(p, ctx) != "return"]
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
            while p + 2 < len(self.instrs) and self.instrs[p].opname == "SWAP" and self.instrs[p].argval == 2 \
                    and self.instrs[p + 1].opname == "POP_TOP":
                p += 2
            if layers[k - 1].kind == "handler" and p + 1 < len(self.instrs) \
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

    def continuation_place(self, layer: Layer, layers: tuple) -> int | None:
        """Where control lands when the except clauses of ``layer`` go on after their try
        statement: their continuation, past the exits of the regions it leaves too.

        None when unknown (not except clauses, or their try body never went on), and
        ``NO_CONTINUATION`` when the try statement cannot go on, as its body never does and
        its clauses only seem to (see ``clause_continuation``).
        """
        c = layer.continuation      # (None but for except clauses)
        if c is None or c == NO_CONTINUATION:
            return c
        return self.follow_jumps(self.leave_enclosing(c, layers, []))

    def final_kind(self, p, ctx) -> str | None:
        if p is None or p >= len(self.instrs):
            return None
        # a return from inside for loops first pops their iterators: SWAP 2; POP_TOP
        # ... and leaving except handlers pops their saved exception state: SWAP 2; POP_EXCEPT
        while p + 2 < len(self.instrs) and self.instrs[p].opname == "SWAP" and self.instrs[p].argval == 2 \
                and self.instrs[p + 1].opname in ("POP_TOP", "POP_EXCEPT"):
            p += 2
        if ctx.loop is not None and p in ctx.loop.continues:
            return "continue"
        if ctx.loop is not None and p in ctx.loop.breaks:
            return "break"
        if ctx.loop is not None and self.same_return_block(p, ctx.loop.after):
            return "break"
        ins = self.instrs[p]
        if ins.opname == "RETURN_VALUE":
            return "return"
        if ins.opname == "LOAD_CONST" and p + 1 < len(self.instrs) and self.instrs[p + 1].opname == "RETURN_VALUE":
            return "return"
        pops = 0
        while ins.opname == "POP_TOP" and p + 1 < len(self.instrs):
            p += 1
            pops += 1
            ins = self.instrs[p]
        if pops == 1 and ctx.loop is not None and self.instrs[ctx.loop.header].opname == "FOR_ITER" \
                and self.same_return_block(p, ctx.loop.after):
            return "break"      # pops the iterator, then runs 3.12+'s copy of the code after the loop
        if pops and ins.opname == "LOAD_CONST" and p + 1 < len(self.instrs) \
                and self.instrs[p + 1].opname == "RETURN_VALUE":
            return "return"     # ``return <constant>`` inside for loops: their iterators popped first
        if ins.opname == "JUMP" and ctx.loop is not None:
            t = self.cfg.pos(ins.target)
            if t in ctx.loop.continues:
                return "continue"
            if t in ctx.loop.breaks:
                return "break"
        return None

    def one_return_copy(self, exits: list, prefer: int | None = None) -> set:
        """The places in ``exits``, with copies of one returning block counted once.

        3.12+ copies a small block that returns (``return r`` after a try statement) to the end
        of the try body and of each except clause, so their exits differ only in which copy they
        run. ``prefer`` (the try body's exit) stands for all when it is such a copy too.
        """
        places = set(exits)
        if not places or None in places:
            return places
        for first in (prefer, min(places)):
            if first is not None and all(p == first or self.same_return_block(p, first)
                                         or self.same_exit_copy(p, first) for p in places):
                return {first}
        return places

    def same_exit_copy(self, p: int, q: int) -> bool:
        """Do ``p`` and ``q`` run copies of one exit sequence (``POP_EXCEPT``, a with's exit
        call...) to the same place?

        3.10 copies the exit of an enclosing region into each path that leaves it: the end
        of a with statement inside an except clause whose test is a conditional expression
        leaves the clause by one copy per path, each then jumping to where the try statement
        goes on.
        """
        if p == q:
            return True
        end = self.copied_block_end(q, or_jump=True)
        return end is not None and self.instrs[end - 1].opname == "JUMP" and self.repeats(p, q, end - q)

    def repeats(self, p: int, q: int, n: int) -> bool:
        """Do the ``n`` instructions at ``p`` repeat those at ``q``: the same operations, jump
        targets and exception handlers?"""
        if p + n > len(self.instrs) or q + n > len(self.instrs):
            return False
        return all(_copy_key(self.instrs[p + k]) == _copy_key(self.instrs[q + k])
                   and self.instrs[p + k].target == self.instrs[q + k].target
                   and self.cfg.handler_at[p + k] == self.cfg.handler_at[q + k] for k in range(n))

    def return_copies(self, q: int | None) -> set[int]:
        """Every other place that runs a copy of the small returning block at ``q``."""
        if q is None:
            return set()
        return {p for p in range(len(self.instrs)) if p != q and self.same_return_block(p, q)}

    def same_return_block(self, p: int, q: int | None) -> bool:
        """Is the code at ``p`` a copy of the code at ``q``: a few straight-line instructions
        (loads, stores, deletes, calls) ending in a return?

        3.12+ copies a small block that returns (the code after a loop) into the paths that jump
        to it: a ``break`` that went through exit sequences lands on such a copy. Running the copy
        or breaking to the original is the same, as both end the function the same way.
        """
        if q is None or p == q or q >= len(self.instrs):
            return False
        end = self.copied_block_end(q)
        return end is not None and self.repeats(p, q, end - q)

    def return_value(self, p, stack):
        ins = self.instrs[p]
        if ins.opname == "LOAD_CONST":
            return self.executor_value_const(ins)
        for item in reversed(stack):
            if isinstance(item, ast.expr):
                return item
        raise self.error(p, "return value not found")

    def executor_value_const(self, ins):
        scratch: list = []
        self.executor.op_LOAD_CONST(ins, scratch, [])
        return scratch[0]

    def skip_exit(self, layer: Layer, p: int | None, stack: list) -> int | None:
        if p is None:
            return None
        ins = self.instrs
        if layer.kind == "finally":
            return self.skip_finally_copy(layer.finally_ops, p)
        if layer.kind == "with":
            k = p
            limit = p + 8
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
        if layer.kind == "handler":
            k = p
            if k + 1 < len(ins) and ins[k].opname == "POP_TOP" and ins[k + 1].opname == "POP_EXCEPT":
                k += 1
            if k < len(ins) and ins[k].opname == "POP_EXCEPT":
                k += 1
            if k + 2 < len(ins) and ins[k].opname == "LOAD_CONST" and ins[k].argval is None \
                    and ins[k + 1].opname in ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL") \
                    and ins[k + 2].opname in ("DELETE_FAST", "DELETE_NAME", "DELETE_DEREF", "DELETE_GLOBAL") \
                    and ins[k + 1].argval == ins[k + 2].argval:
                k += 3
            return k
        return p


_SMALL_VALUE = 32    # instructions a conditional expression inside a test may span (bounds trial reads)


def _ends_statement(ins) -> bool:
    """Does ``ins`` use the value before it as a whole statement (``x = v``, ``v``, ``return v``)?
    Branches that each end so read as an if statement, as written, not as one conditional value."""
    return ins.opname.startswith("STORE_") or ins.opname in ("POP_TOP", "RETURN_VALUE")


def _target_of(entry) -> int | None:
    """Which handler an exception-table entry sends to (one handler's range may be split)."""
    return entry.target if entry is not None else None


def _copy_key(ins) -> tuple:
    """What two copies of an instruction share (constants compared by their repr: ``0 == False``)."""
    return ins.opname, ins.arg, repr(ins.argval)


def _continues_chain(cond, stack: list) -> bool:
    """A comparison whose right operand stays on the stack: the next test of ``a < b < c`` uses it."""
    return isinstance(cond, ast.Compare) and bool(stack) and stack[-1] is cond.comparators[-1]


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


def _is_match(test) -> bool:
    return isinstance(test, ast.Call) and isinstance(test.func, ast.Name) \
        and test.func.id in ("__exception_matches__", "__exception_group_matches__")


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


def strip_continue(body: list) -> list:
    """Drop ``continue`` statements that end a loop body (directly or at the end of an if), but
    not one that jumps to a while loop's test at the top (``Structurer.continue_stmt``): without
    it, the end of the body would run the bottom copy of the test instead."""
    if not body:
        return body
    last = body[-1]
    if isinstance(last, ast.Continue) and not getattr(last, "to_top", False):
        return strip_continue(body[:-1])
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
