"""The pattern reader: a match statement's cases, and the dispatch of one pattern."""

from __future__ import annotations

import ast

from depyf.decompiler.instructions import NAME_STORES, Instr
from depyf.decompiler.patterns.compound import CompoundPatterns
from depyf.decompiler.patterns.cursor import Cursor
from depyf.decompiler.patterns.model import (
    CaseRead,
    Discard,
    FailContext,
    MatchRead,
    NoMatch,
    Other,
    Val,
    _finish,
    _fresh,
    _is_copy1,
    _lazy_wildcard,
)


class PatternReader(
    Cursor, CompoundPatterns,
):
    """Reads the cases of a match statement from instruction positions (see the module doc)."""

    def __init__(self, instrs: list[Instr], pos_of):
        self.instrs = instrs
        self.pos_of = pos_of          # offset -> instruction position
        self.p = 0
        self.S: list = []
        self.fails: list[FailContext] = []

    def read_match(self, start: int) -> MatchRead:
        """All the cases from ``start`` (the subject on the stack)."""
        cases: list[CaseRead] = []
        p = start
        for _ in range(len(self.instrs)):
            case = None
            if _is_copy1(self.ins(p)):
                try:
                    case = self.read_case(p, copy=True)
                except NoMatch:
                    case = None
            if case is None:
                case = self.read_case(p, copy=False)
            cases.append(case)
            if not case.copy:
                return MatchRead(cases, case.fail)
            p = case.fail
        raise NoMatch("too many cases")

    def read_case(self, start: int, copy: bool) -> CaseRead:
        self.p = start
        subject = Val()
        self.S = [subject]
        if copy:
            self.expect("COPY", 1)
            self.S.append(Val())
        self.fails = [FailContext(base=len(self.S) - 1)]
        pattern = self.pattern(self.S[-1])
        stores = self.settle(1 if copy else 0)
        if copy and self.S != [subject]:
            raise NoMatch("the subject is not left under a case")
        ctx = self.fails[0]
        pattern = _finish(pattern)
        case = CaseRead(start, copy, pattern, self.p, ctx.cont, stores)
        if copy:
            self.check_copy_case_rest(case)
        return case

    def settle(self, base: int) -> list:
        """The STOREs of the captures (and the POP_TOPs of discarded values) after a pattern."""
        stores = []
        while len(self.S) > base:
            ins = self.ins()
            if ins.opname in NAME_STORES:
                tok = self.S.pop()
                if not isinstance(tok, Val) or tok.capture is None or tok.capture.name is not None:
                    raise NoMatch("store of a value that is not a capture")
                for node in [tok.capture, *getattr(tok.capture, "aliases", [])]:
                    node.name = ins.argval
                stores.append((ins.opname, ins.argval))
            elif ins.opname == "POP_TOP":
                tok = self.S.pop()
                if _lazy_wildcard(tok):
                    del tok.capture.aliases             # a wildcard after all
                elif not isinstance(tok, Discard):
                    raise NoMatch("pop of a value still in use")
            elif ins.opname == "SWAP":
                n = ins.argval
                if n > len(self.S) - base:
                    raise NoMatch("swap below the case")
                self.S[-1], self.S[-n] = self.S[-n], self.S[-1]
            else:
                raise NoMatch(f"unexpected {ins.opname} among the stores")
            self.p += 1
        names = [n for _, n in stores]
        if len(set(names)) != len(names):
            raise NoMatch("a name bound twice")
        return stores

    def check_copy_case_rest(self, case: CaseRead) -> None:
        """A case on a copy of the subject goes on with POP_TOP, or a guard failing to ``fail``."""
        if case.fail is None and self.op(case.after) == "POP_TOP":
            raise NoMatch("an irrefutable case before others")
        if self.op(case.after) == "POP_TOP":
            return
        # a guard: its last conditional jump goes to the next case and falls into the POP_TOP
        p = case.after
        for _ in range(256):
            ins = self.ins(p)
            if ins.opname in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE",
                              "POP_JUMP_IF_NOT_NONE") and self.op(p + 1) == "POP_TOP":
                t = self.pos_of(ins.target)
                if case.fail is None and t is not None and t > p + 1:
                    case.fail = t
                if t == case.fail:
                    return
            elif ins.opname in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP", "FOR_ITER") \
                    or ins.opname.startswith("DELETE_"):
                break
            p += 1
        raise NoMatch("a case on a copy of the subject without POP_TOP or guard")

    def pattern(self, x: Val) -> ast.pattern:
        """The pattern matched against ``x``, normally on top of S (consumed, or kept as a capture).

        A value no longer on top was moved under others by a run of SWAPs that the compiler
        merged with an earlier capture's rotation (or folded into the order of the STOREs): it
        can only be a capture, or a wildcard popped among the stores.

        Values the pattern is done with that its last instructions pop are popped here, so
        that whatever encloses it (a sequence, a mapping, a class) finds its own values on top.
        """
        node = self.sub_pattern(x)
        self.pop_discarded()
        return node

    def sub_pattern(self, x: Val) -> ast.pattern:
        if not _fresh(x) or not any(t is x for t in self.S):
            raise NoMatch("value to match not on the stack")
        if self.S[-1] is not x:
            # values an earlier sub-pattern is done with (a mapping's subject and keys under
            # its rotated captures) may still be popped right here, above ``x``
            self.pop_discarded()
        if self.S[-1] is not x:
            return self.lazy(x)
        ins = self.ins()
        op = ins.opname
        if _is_copy1(ins):
            state = self.save()
            try:
                return self.or_pattern()
            except NoMatch:
                self.restore(state)
                x.capture = None
            return self.as_pattern()
        if op == "POP_TOP":
            self.p += 1
            self.S.pop()
            return ast.MatchAs(None, None)
        if op == "SWAP":
            return self.capture()
        if op == "MATCH_SEQUENCE":
            return self.sequence()
        if op == "MATCH_MAPPING":
            return self.mapping()
        if op == "POP_JUMP_IF_NOT_NONE":
            self.cond_fail("POP_JUMP_IF_NOT_NONE")
            return ast.MatchSingleton(None)
        loaded = self.loads(self.p)
        if loaded is not None:
            node, q = loaded
            nxt = self.op(q)
            if nxt == "COMPARE_OP" and self.instrs[q].argval == "==" \
                    and (isinstance(node, ast.Constant) or isinstance(node, ast.Attribute)):
                self.p = q + 1
                self.S[-1] = Other("test")
                self.cond_fail("POP_JUMP_IF_FALSE")
                return ast.MatchValue(node)
            if nxt == "IS_OP" and self.instrs[q].argval == 0 and isinstance(node, ast.Constant) \
                    and node.value in (None, True, False):
                self.p = q + 1
                self.S[-1] = Other("test")
                self.cond_fail("POP_JUMP_IF_FALSE")
                return ast.MatchSingleton(node.value)
            if nxt == "LOAD_CONST" and isinstance(self.instrs[q].argval, tuple) \
                    and self.op(q + 1) == "MATCH_CLASS" and not isinstance(node, ast.Constant):
                return self.class_pattern(node, q)
        return self.capture()

    def as_pattern(self) -> ast.MatchAs:
        x = self.top_val()
        self.expect("COPY", 1)
        copy = Val()
        self.S.append(copy)
        sub = self.pattern(copy)
        if self.S and self.S[-1] is x:
            node = self.capture()
        else:
            node = self.pattern(x)       # already rotated with the sub-pattern's captures
        node.pattern = sub
        return node
