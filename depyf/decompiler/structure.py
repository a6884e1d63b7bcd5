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
from dataclasses import dataclass, field

from depyf.decompiler import values as v
from depyf.decompiler.cfg import ControlFlowGraph
from depyf.decompiler.dominators import EXIT, common_post_dominator, post_dominators
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.executor import ExceptAsStmt, Executor, ReraiseStmt, Stop
from depyf.decompiler.expressions import bool_op, negate

MAX_STEPS = 200_000


@dataclass
class Loop:
    header: int                      # position of FOR_ITER or of the loop test
    continues: frozenset[int]        # positions a jump to which is ``continue``
    breaks: frozenset[int]           # positions a jump to which is ``break``
    blocks: frozenset[int]           # block indices of the loop (for post-dominators)
    body_start: int | None = None    # first body position of a while loop with a folded test
    back: int | None = None          # the bottom test's jump back to body_start


@dataclass
class Layer:
    """A protected region being emitted: leaving it goes through ``kind``'s exit sequence."""

    kind: str                        # "try", "finally", "with", "handler"
    target: int                      # handler offset whose coverage defines the region
    finally_ops: list | None = None  # for "finally": the (opname, argval) of the finally body
    normal_exits: list = field(default_factory=list)


@dataclass(frozen=True)
class Context:
    stops: frozenset[int] = frozenset()
    loop: Loop | None = None
    layers: tuple = ()

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
        self._pdoms: dict[int | None, dict[int, int]] = {}
        self.back_edge_targets = self._back_edge_targets()
        self.while_tests = self.find_while_tests()

    # -- entry -------------------------------------------------------------------------
    def body(self) -> list[ast.stmt]:
        return self.emit(0, Context(), [])

    def error(self, pos: int | None, message: str) -> DecompilationError:
        ins = self.instrs[pos] if pos is not None and pos < len(self.instrs) else None
        return DecompilationError(message, qualname=self.qualname, offset=ins.offset if ins else None,
                                  opname=ins.opname if ins else None)

    # -- analyses ----------------------------------------------------------------------
    def _back_edge_targets(self) -> dict[int, list[int]]:
        """Position of every backward jump target -> positions of the jumps to it."""
        found: dict[int, list[int]] = {}
        for i, ins in enumerate(self.instrs):
            if ins.target is not None and ins.opname not in ("FOR_ITER", "ASYNC_FOR_ITER"):
                t = self.cfg.pos(ins.target)
                if t is not None and t <= i:
                    found.setdefault(t, []).append(i)
        return found

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
        ipdom = self.ipdom(ctx.loop)
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
                if ctx.layers and not self.covered(pos, ctx.layers[-1]):
                    self.leave_region(pos, ctx, stack, out)
                    break
                if ctx.loop is not None and pos in ctx.loop.continues and pos != ctx.loop.header:
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
            limit = self.cfg.block_at(pos).end
            for s in ctx.stops:
                if pos < s < limit:
                    limit = s
            for s in self.while_tests:
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
                out.append(ast.Continue())
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

    def pure_condition(self, pos: int, stack: list):
        """If the block at ``pos`` only computes a condition and jumps, return (cond, true, false, block)."""
        if pos is None or not self.cfg.is_leader(pos):
            return None
        block = self.cfg.block_at(pos)
        if block.exc_preds or pos in self.back_edge_targets or pos in self.while_tests:
            return None
        trial = list(stack)
        scratch: list = []
        try:
            end, stop = self.executor.run(pos, block.end, trial, scratch)
        except DecompilationError:
            return None
        if scratch or stop.ins is None or stop.ins.opname not in (
                "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
            return None
        t, f = self.branches(end - 1)
        cond = stop.condition
        if len(trial) == len(stack) + 1:
            try:
                cond, t, f = self.resolve_chain(cond, t, f, trial)
            except DecompilationError:
                return None
        if len(trial) != len(stack) or any(a is not b for a, b in zip(trial, stack, strict=False)):
            return None
        return cond, t, f, block.index

    def trampoline(self, p):
        """X for a block ``POP_TOP; JUMP X`` or ``POP_TOP`` falling into X (a chained comparison's exit)."""
        if p is None or p >= len(self.instrs) or self.instrs[p].opname != "POP_TOP":
            return None
        block = self.cfg.block_at(p)
        if block.end == p + 1:
            return p + 1
        if block.end == p + 2 and self.instrs[p + 1].opname == "JUMP":
            return self.cfg.pos(self.instrs[p + 1].target)
        return None

    def resolve_chain(self, cond, t, f, stack):
        """``a < b < c`` as a condition: the middle operand stays on the stack between tests.

        Failing tests jump to a trampoline that pops the middle operand; the tests are merged into
        one ``Compare`` whose true/false targets are those of the last test.
        """
        for _ in range(64):
            if not (isinstance(cond, ast.Compare) and stack and stack[-1] is cond.comparators[-1]):
                break
            middle = stack[-1]
            exit_pos = self.trampoline(f)
            if exit_pos is None:
                raise self.error(None, "unrecognised chained comparison")
            trial = list(stack)
            scratch: list = []
            end, stop = self.executor.run(t, self.cfg.block_at(t).end, trial, scratch)
            cond2 = stop.condition
            if scratch or stop.ins is None or not isinstance(cond2, ast.Compare) or cond2.left is not middle:
                raise self.error(t, "unrecognised chained comparison")
            t2, f2 = self.branches(end - 1)
            combined = ast.Compare(cond.left, cond.ops + cond2.ops, cond.comparators + cond2.comparators)
            if f2 == f:
                cond, t = combined, t2          # the chain goes on: same trampoline
            elif self.final_place(f2) == self.final_place(exit_pos):
                cond, t, f = combined, t2, exit_pos
            else:
                raise self.error(t, "unrecognised chained comparison")
            del trial[-2 if len(trial) >= 2 and trial[-1] is not middle and trial[-2] is middle else -1:][:0]
            if trial and trial[-1] is middle:
                trial.pop()
            elif len(trial) >= 2 and trial[-2] is middle:
                del trial[-2]
            stack[:] = trial
        return cond, t, f

    def compound(self, cond, t, f, members: set[int], stack: list, ctx: Context, keep=()):
        """Fold the condition blocks that only ``members`` reach into (cond, true, false, members)."""
        for _ in range(len(self.cfg.blocks) + 1):
            merged = False
            for side in ("t", "f"):
                x = t if side == "t" else f
                other = f if side == "t" else t
                if x in keep or self.classify(x, ctx) != "goto":
                    continue
                pc = self.pure_condition(x, stack)
                if pc is None or pc[3] in members or not set(self.cfg.blocks[pc[3]].preds) <= members:
                    continue
                cx, t2, f2, sub_members = self.compound(pc[0], pc[1], pc[2], set(members) | {pc[3]}, stack,
                                                        ctx, keep=tuple(keep) + (other,))
                if side == "t" and f2 == other:
                    cond, t, f = bool_op(ast.And, cond, cx), t2, other
                elif side == "t" and t2 == other:
                    cond, t, f = bool_op(ast.And, cond, negate(cx)), f2, other
                elif side == "f" and t2 == other:
                    cond, t, f = bool_op(ast.Or, cond, cx), other, f2
                elif side == "f" and f2 == other:
                    cond, t, f = bool_op(ast.Or, cond, negate(cx)), other, t2
                else:
                    continue
                members = sub_members
                merged = True
                break
            if not merged:
                break
        return cond, t, f, members

    def conditional(self, i: int, cond, ctx: Context, stack: list, out: list) -> int | None:
        t, f = self.branches(i)
        self.executor.assign_pending_walrus(cond, stack, out)
        holder = ast.Expr(cond)
        self.executor.name_repeated_parts(holder, stack, out)
        cond = holder.value
        if isinstance(cond, ast.Compare) and stack and stack[-1] is cond.comparators[-1]:
            cond, t, f = self.resolve_chain(cond, t, f, stack)
        cond, t, f, _ = self.compound(cond, t, f, {self.cfg.block_of[i]}, stack, ctx)
        pending = [x for x in stack if _evaluated_later(x)] if not _is_plain(cond) else []
        if pending:
            out = _SpillBeforeIf(out, pending, stack, self.executor)
        rt, rf = self.resolve_exit(t, ctx, stack), self.resolve_exit(f, ctx, stack)
        if rt[0] != "goto" or rf[0] != "goto":
            return self.conditional_exit(cond, t, f, rt, rf, ctx, stack, out)
        join = self.join_of(t, f, ctx)
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
            keep = s_then if len(s_then) >= len(s_else) else s_else
            stack[:] = keep if then else (s_else if other else keep)
        out.append(ast.If(cond, then or [ast.Pass()], other))
        return join

    def resolve_exit(self, pos, ctx, stack):
        """('goto', None), ('end', pos) for the region's end, or ('stmt', [break/continue/return])."""
        kind = self.classify(pos, ctx)
        if kind == "goto":
            return ("goto", None)
        if kind == "stop":
            return ("end", pos)
        if kind == "continue":
            return ("stmt", [ast.Continue()])
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
        if then or other:
            out.append(ast.If(cond, then or [ast.Pass()], other))
        end = rt[1] if rt[0] == "end" else rf[1] if rf[0] == "end" else None
        return end

    def value_bool_op(self, i, ins, ctx, stack, out) -> int | None:
        """``a and b`` / ``a or b`` (and chained comparisons) in value position."""
        target = self.cfg.pos(ins.target)
        left = stack.pop()
        is_and = ins.opname == "JUMP_IF_FALSE_OR_POP"
        tail = self.instrs[target:target + 2] if target is not None else []
        chained = len(tail) == 2 and tail[0].opname == "SWAP" and tail[0].argval == 2 \
            and tail[1].opname == "POP_TOP"
        if chained:
            end = target + 2
            region = ctx.with_stops(target, end)
            right_stack = list(stack)
            stmts = self.emit(i + 1, region, right_stack)
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

    def merge_compare(self, left, right, middle, i):
        if isinstance(left, ast.Compare) and isinstance(right, ast.Compare) and right.left is middle:
            return ast.Compare(left.left, left.ops + right.ops, left.comparators + right.comparators)
        if isinstance(left, ast.Compare) and isinstance(right, ast.BoolOp):
            return ast.BoolOp(ast.And(), [left, right])
        raise self.error(i, "unrecognised chained comparison")

    # -- loops -------------------------------------------------------------------------
    def try_loop(self, pos: int, ctx: Context, stack: list, out: list):
        ins = self.instrs[pos]
        if ctx.loop is not None and pos == ctx.loop.header:
            return False
        if ctx.loop is not None and pos == ctx.loop.body_start:
            bottom = min((p for p in ctx.loop.continues if p != ctx.loop.header), default=ctx.loop.back)
            inner = [x for x in self.back_edge_targets.get(pos, []) if not (bottom <= x <= ctx.loop.back)]
            if not inner:
                return False
            return self.while_loop(pos, ctx, stack, out, None, sources=inner)
        if ins.opname in ("FOR_ITER", "ASYNC_FOR_ITER"):
            return self.for_loop(pos, ctx, stack, out)
        inverted = self.while_tests.get(pos)
        if inverted is not None:
            return self.while_loop(pos, ctx, stack, out, inverted)
        if pos in self.back_edge_targets:
            return self.while_loop(pos, ctx, stack, out, None)
        return False

    def exits_of(self, blocks: frozenset[int], header: int, exit_pos: int | None) -> set[int]:
        """Positions where a jump out of the loop is ``break`` (and where those breaks land)."""
        last = max(self.cfg.blocks[b].end for b in blocks)
        if exit_pos is not None and exit_pos > header:
            last = max(last, exit_pos)  # the loop's code is laid out before its exit
        found: set[int] = set()
        # jumps anywhere in the loop's layout range that land after it (inline code ending in break)
        for k in range(header, last):
            ins = self.instrs[k]
            if ins.opname in ("JUMP", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE",
                              "POP_JUMP_IF_NOT_NONE") and ins.target is not None:
                t = self.cfg.pos(ins.target)
                if t is None or t < last or t == exit_pos:
                    continue
                final = self.follow_trivial(t)
                if final is not None and final < len(self.instrs) and self.instrs[final].opname == "RERAISE":
                    continue
                found.add(t)
                if final is not None:
                    found.add(final)
        for b in blocks:
            for s in self.cfg.blocks[b].succs:
                if s in blocks:
                    continue
                p = self.cfg.blocks[s].start
                if p == exit_pos or p == header or header < p < last:
                    continue
                final = self.follow_trivial(p)
                if final is not None and final < len(self.instrs) and self.instrs[final].opname == "RERAISE":
                    continue
                if final is not None and (final >= last or final == exit_pos):
                    found.add(p)
                    found.add(final)
        return found

    def follow_trivial(self, p: int | None) -> int | None:
        """Follow blocks made only of POP_TOP and a forward JUMP; the position finally reached."""
        for _ in range(16):
            if p is None or p >= len(self.instrs):
                return p
            block = self.cfg.block_at(p)
            ops = self.instrs[block.start:block.end]
            if ops and ops[-1].opname == "JUMP" and all(o.opname in ("POP_TOP", "POP_EXCEPT") for o in ops[:-1]):
                t = self.cfg.pos(ops[-1].target)
                if t is None or t <= p:
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
        finals = {self.follow_trivial(p) for p in found}
        return self.single(finals - {None}, pos, "breaks leave the loop to different places")

    def for_loop(self, pos, ctx, stack, out):
        ins = self.instrs[pos]
        exit_pos = self.cfg.pos(ins.target)
        sources = self.back_edge_targets.get(pos, [])
        blocks = self.loop_blocks(pos, sources) if sources else frozenset({self.cfg.block_of[pos]})
        breaks = self.exits_of(blocks, pos, exit_pos)
        iterator = stack[-1] if stack else None
        if isinstance(iterator, ast.Name) and iterator.id == ".0":
            iterator = stack[-1] = v.Iterator(iterator)
        if not isinstance(iterator, v.Iterator):
            raise self.error(pos, "for loop without an iterator")
        break_target = self.break_target(breaks, exit_pos, pos)
        loop = Loop(pos, frozenset({pos}), frozenset({exit_pos} | breaks), blocks)
        hole = v.Hole()
        body_stack = stack + [hole]
        body = self.emit(pos + 1, Context(ctx.stops, loop, ctx.layers), body_stack)
        if hole.target is None:
            raise self.error(pos, "for loop target not found")
        stack.pop()
        orelse: list = []
        after = exit_pos
        if break_target is not None and break_target != exit_pos:
            orelse = self.emit(exit_pos, ctx.with_stops(break_target), list(stack))
            after = break_target
        node_type = ast.AsyncFor if iterator.is_async or ins.opname == "ASYNC_FOR_ITER" else ast.For
        out.append(node_type(hole.target, iterator.iterable, strip_continue(body) or [ast.Pass()], orelse))
        return after

    def single(self, items: set, pos, message):
        if len(items) > 1:
            raise self.error(pos, message)
        return next(iter(items), None)

    def find_while_tests(self) -> dict[int, tuple]:
        """Top-of-loop tests that 3.11+ duplicated at the bottom of ``while`` loops.

        Maps the top test's first position to (test_end, body_start, exit_pos, bottom, back).
        """
        found = {}
        for body_start, sources in self.back_edge_targets.items():
            back = max(sources)
            if self.instrs[back].opname not in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE",
                                                "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
                continue
            k = 0
            while True:
                a, b = back - k, body_start - 1 - k
                if b < 0 or a <= body_start:
                    break
                ia, ib = self.instrs[a], self.instrs[b]
                if (ia.target is None) != (ib.target is None):
                    break
                if ia.target is None and (ia.opname != ib.opname or ia.argval != ib.argval):
                    break
                if ia.target is not None and not (ia.opname.startswith("POP_JUMP") and ib.opname.startswith("POP_JUMP")):
                    break
                if ib.lineno != ia.lineno:
                    break
                k += 1
            if k == 0:
                continue
            top, test_end = body_start - k, body_start - 1
            if not self.instrs[test_end].opname.startswith("POP_JUMP"):
                continue
            t, f = self.branches(test_end)
            exit_pos = f if t == body_start else t
            found[top] = (test_end, body_start, exit_pos, back - k + 1, back)
        return found

    def while_loop(self, pos, ctx, stack, out, inverted, sources=None):
        if inverted is not None:
            test_end, body_start, exit_pos, bottom, back = inverted
            sources = self.back_edge_targets.get(body_start, []) + self.back_edge_targets.get(pos, [])
            blocks = self.loop_blocks(pos, sources) | self.loop_blocks(body_start, sources)
            breaks = self.exits_of(blocks, pos, exit_pos)
            break_target = self.break_target(breaks, exit_pos, pos)
            loop = Loop(pos, frozenset({pos, bottom}), frozenset({exit_pos} | breaks), blocks, body_start, back)
            # the test itself, evaluated once at the top
            test_stack = list(stack)
            scratch: list = []
            cond = self.loop_test(pos, test_end, body_start, exit_pos, test_stack, scratch, ctx)
            body = self.emit(body_start, Context(ctx.stops | {bottom}, loop, ctx.layers), list(stack))
            orelse: list = []
            after = exit_pos
            if break_target is not None and break_target != exit_pos:
                orelse = self.emit(exit_pos, ctx.with_stops(break_target), list(stack))
                after = break_target
            out.append(ast.While(cond, strip_continue(body) or [ast.Pass()], orelse))
            return after
        sources = sources or self.back_edge_targets[pos]
        blocks = self.loop_blocks(pos, sources)
        breaks = self.exits_of(blocks, pos, None)
        break_target = self.break_target(breaks, None, pos)
        loop = Loop(pos, frozenset({pos}), frozenset(breaks), blocks)
        body = self.emit_loop_body_from_header(pos, loop, ctx, stack)
        out.append(ast.While(ast.Constant(True), strip_continue(body) or [ast.Pass()], []))
        return break_target

    def emit_loop_body_from_header(self, pos, loop, ctx, stack):
        return self.emit(pos, Context(ctx.stops, loop, ctx.layers), list(stack))

    def loop_test(self, pos, test_end, body_start, exit_pos, stack, scratch, ctx):
        """The condition under which a while loop's test enters the body."""
        end, stop = self.executor.run(pos, self.cfg.block_at(pos).end, stack, scratch)
        if scratch:
            raise self.error(pos, "while test with statements")
        t, f = self.branches(end - 1)
        cond, t, f, _ = self.compound(stop.condition, t, f, {self.cfg.block_of[pos]}, stack,
                                      Context(ctx.stops | {body_start, exit_pos}, ctx.loop, ctx.layers),
                                      keep=(body_start, exit_pos))
        if t == body_start and f == exit_pos:
            return cond
        if f == body_start and t == exit_pos:
            return negate(cond)
        raise self.error(pos, "unrecognised while-loop test")

    # -- try / with ----------------------------------------------------------------------
    def covered(self, pos: int, layer: Layer) -> bool:
        return layer.target in self.cfg.handler_chain(pos)

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
        """PUSH_EXC_INFO followed by a type test, or a bare ``except:`` (POP_TOP of the exception)."""
        k = p + 1
        if self.instrs[k].opname == "POP_TOP":
            return True
        while k < len(self.instrs) and k < p + 64:
            op = self.instrs[k].opname
            if op in ("CHECK_EXC_MATCH", "CHECK_EG_MATCH"):
                return True
            if op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "JUMP", "RETURN_VALUE", "RERAISE",
                      "RAISE_VARARGS", "STORE_FAST", "STORE_NAME", "POP_TOP", "CALL", "CALL_KW"):
                return False
            k += 1
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
        while h < last:
            if k >= len(self.instrs):
                raise self.error(p, "finally body copy not found on exit")
            a, b = self.instrs[h], self.instrs[k]
            if a.opname == b.opname and (a.target is not None or a.argval == b.argval):
                h += 1
                k += 1
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
            raise self.error(p, "finally body copy not found on exit")
        return k if cont is None else cont

    def emit_protected(self, pos: int, target: int, ctx: Context, stack: list, out: list):
        kind = self.handler_kind(target)
        layer = Layer(kind, target)
        if kind == "finally":
            layer.finally_ops = self.finally_ops(target)
        entry_stack = list(stack)
        body_ctx = Context(frozenset(), ctx.loop, ctx.layers + (layer,))
        body_stack = list(stack)
        body = self.emit(pos, body_ctx, body_stack)
        after = self.single(set(layer.normal_exits), pos, "try body leaves at different places")
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
            if len(node.body) == 1 and isinstance(node.body[0], ast.Try) and not node.body[0].finalbody:
                inner = node.body[0]
                node = ast.Try(inner.body, inner.handlers, inner.orelse, node.finalbody)
            out.append(node)
            return after
        # except clauses
        cleanup = self.cfg.handler_at[hpos]
        h_layer = Layer("handler", cleanup.target if cleanup else -2)
        h_ctx = Context(frozenset(), ctx.loop, ctx.layers + (h_layer,))
        h_stmts = self.emit(hpos, h_ctx, handler_stack)
        handlers = self.except_clauses(h_stmts, pos)
        h_after = self.single(set(h_layer.normal_exits), pos, "except clauses continue at different places")
        orelse: list = []
        if after is not None and h_after is not None and after != h_after:
            orelse = self.emit(after, ctx.with_stops(h_after), list(entry_stack))
            after = h_after
        elif after is None:
            after = h_after
        out.append(ast.Try(body or [ast.Pass()], handlers, orelse, []))
        return after

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
        for e in self.cfg.entries:
            if e.target == target and e.start <= self.instrs[pos].offset < e.end:
                return e.depth
        for e in self.cfg.entries:
            if e.target == target:
                return e.depth
        return 0

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
        layers = list(ctx.layers)
        p = pos
        first = layers[-1]
        k = len(layers) - 1
        first_exit = None
        while True:
            layer = layers[k]
            p = self.skip_exit(layer, p, stack)
            if first_exit is None:
                first_exit = p
            if k > 0 and not self.covered(p, layers[k - 1]) if p is not None else False:
                k -= 1
                continue
            break
        kind = self.final_kind(p, ctx)
        if kind is None:
            first.normal_exits.append(self.follow_jumps(first_exit))
            return True
        if kind == "return":
            out.append(ast.Return(self.return_value(p, stack)))
        elif kind == "break":
            out.append(ast.Break())
        elif kind == "continue":
            out.append(ast.Continue())
        return False

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
        ins = self.instrs[p]
        if ins.opname == "RETURN_VALUE":
            return "return"
        if ins.opname == "LOAD_CONST" and p + 1 < len(self.instrs) and self.instrs[p + 1].opname == "RETURN_VALUE":
            return "return"
        while ins.opname == "POP_TOP" and p + 1 < len(self.instrs):
            p += 1
            ins = self.instrs[p]
        if ins.opname == "JUMP" and ctx.loop is not None:
            t = self.cfg.pos(ins.target)
            if t in ctx.loop.continues:
                return "continue"
            if t in ctx.loop.breaks:
                return "break"
        return None

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


def _evaluated_later(item) -> bool:
    """A value computed by code before a condition but still only an expression on the stack."""
    return isinstance(item, ast.expr) and not isinstance(item, (ast.Name, ast.Constant))


def _is_plain(cond: ast.expr) -> bool:
    """A condition that only reads variables and constants: it cannot run code in between."""
    return all(isinstance(n, (ast.Name, ast.Constant, ast.BoolOp, ast.UnaryOp, ast.Not, ast.And, ast.Or,
                              ast.expr_context)) for n in ast.walk(cond))


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
                _replace_node(node, item, swap)
                for k, x in enumerate(self.stack):
                    if x is item:
                        self.stack[k] = swap
                    elif isinstance(x, ast.expr):
                        _replace_node(x, item, swap)
            self.pending = []
        self.out.append(node)


def _replace_node(tree: ast.AST, old: ast.expr, new: ast.expr) -> None:
    """Replace ``old`` (by identity) wherever it occurs inside ``tree``."""
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, new)
            elif isinstance(value, list):
                for k, x in enumerate(value):
                    if x is old:
                        value[k] = new


def _is_match(test) -> bool:
    return isinstance(test, ast.Call) and isinstance(test.func, ast.Name) \
        and test.func.id in ("__exception_matches__", "__exception_group_matches__")


def strip_reraise(body: list) -> list:
    """Drop the RERAISE that ends every path of a finally body."""
    if body and isinstance(body[-1], ReraiseStmt):
        return body[:-1]
    if body and isinstance(body[-1], ast.If):
        body[-1].body = strip_reraise(body[-1].body)
        body[-1].orelse = strip_reraise(body[-1].orelse)
    return body


def strip_continue(body: list) -> list:
    """Drop ``continue`` statements that end a loop body (directly or at the end of an if)."""
    if not body:
        return body
    last = body[-1]
    if isinstance(last, ast.Continue):
        return body[:-1]
    if isinstance(last, ast.If):
        last.body = strip_continue(last.body) or [ast.Pass()]
        last.orelse = strip_continue(last.orelse)
    if isinstance(last, ast.Try):
        if not last.orelse:
            last.body = strip_continue(last.body) or [ast.Pass()]
        for handler in last.handlers:
            handler.body = strip_continue(handler.body) or [ast.Pass()]
        last.orelse = strip_continue(last.orelse)
    if isinstance(last, (ast.With, ast.AsyncWith)):
        last.body = strip_continue(last.body) or [ast.Pass()]
    return body
