"""``match`` statements (the patterns are read by ``depyf.decompiler.patterns``)."""

from __future__ import annotations

import ast

from depyf.decompiler.dominators import EXIT
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.expressions import negate
from depyf.decompiler.instructions import POP_JUMPS
from depyf.decompiler.patterns import MatchRead, NoMatch, PatternReader
from depyf.decompiler.structure.model import Context, Guard

# a first case tests a copy of the subject, or a sequence or mapping pattern the subject itself
_STARTS_A_CASE = frozenset({"COPY", "MATCH_SEQUENCE", "MATCH_MAPPING"})


class MatchBuilder:
    """Match statements: where they start, their cases and guards, where the cases meet."""

    def find_matches(self) -> dict[int, MatchRead]:
        """Positions where a match statement's first case starts (its subject on the stack).

        A first case on a copy of the subject (more cases follow), with a sequence, mapping or
        class pattern, or a refutable or/as pattern is a match statement; a lone literal test is
        an ``if`` already.
        """
        found: dict[int, MatchRead] = {}
        inside: list[tuple[int, int]] = []
        opnames = {ins.opname for ins in self.instrs}
        class_patterns = "MATCH_CLASS" in opnames
        if not (class_patterns or opnames & _STARTS_A_CASE):
            return found    # (most code: no case can start anywhere)
        reader = PatternReader(self.instrs, self.cfg.pos)
        for p, ins in enumerate(self.instrs):
            if not (ins.opname in _STARTS_A_CASE or class_patterns and self.class_pattern_at(p)):
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
            if (
                not first.copy
                and not any(
                    isinstance(n, (ast.MatchSequence, ast.MatchMapping, ast.MatchClass))
                    for n in ast.walk(first.pattern)
                )
                and not (isinstance(first.pattern, (ast.MatchAs, ast.MatchOr)) and first.fail is not None)
            ):
                continue
            found[p] = read
            inside.extend(read.pattern_ranges())
        return found

    def class_pattern_at(self, p: int) -> bool:
        """``p`` loads a (dotted) class name followed by ``LOAD_CONST names; MATCH_CLASS``."""
        k = p
        if self.instrs[k].opname not in (
            "LOAD_GLOBAL",
            "LOAD_NAME",
            "LOAD_FAST",
            "LOAD_DEREF",
            "LOAD_CLASSDEREF",
        ):
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
                    if found is None or self.instrs[found.go_on].opname != "POP_TOP" or case.fail is None:
                        raise self.error(q, "unrecognised guard of a case")
                    guard, start = found.cond, found.go_on + 1
            else:
                # the last case: a guard fails to where a failed pattern goes (an irrefutable
                # pattern has none: the guard's failure then is the default case's start)
                start = q
                found = self.match_guard(q, case.fail, ctx, base)
                if found is not None:
                    guard, start = found.cond, found.go_on
                    if fail is None:
                        fail = found.fail
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
                if b is EXIT or b in seen:
                    break
                seen.add(b)
                counts[b] = counts.get(b, 0) + 1
                b = ipdom.get(b, EXIT)
        best = max(counts.values(), default=0)
        if best < 2:
            return None
        return min(self.cfg.blocks[b].start for b, n in counts.items() if n == best)

    def match_guard(self, q: int, fail: int | None, ctx: Context, stack: list) -> Guard | None:
        """A case's guard at ``q`` failing to ``fail`` (any place if None), or None."""
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
            return Guard(negate(cond), f, t) if f == end else Guard(cond, t, f)
        if f == fail:
            return Guard(cond, t, f)
        if t == fail:
            return Guard(negate(cond), f, t)
        return None
