"""The pattern reader's moves: the instruction at hand, expected opcodes, saved positions,
where failing jumps go, and values taken from the symbolic stack."""

from __future__ import annotations

import ast

from depyf.decompiler.instructions import NAME_STORES, Instr, copy_key
from depyf.decompiler.patterns.model import (
    _NAME_LOADS,
    Discard,
    FailContext,
    NoMatch,
    Val,
    _lazy_wildcard,
)


class Cursor:
    """Position, expectations and failure jumps of the reader."""

    def ins(self, p: int | None = None) -> Instr:
        p = self.p if p is None else p
        if p is None or p >= len(self.instrs):
            raise NoMatch("past the end")
        return self.instrs[p]

    def op(self, p: int | None = None) -> str | None:
        p = self.p if p is None else p
        return self.instrs[p].opname if p is not None and p < len(self.instrs) else None

    def expect(self, opname: str, argval=None) -> Instr:
        ins = self.ins()
        if ins.opname != opname or (argval is not None and ins.argval != argval):
            raise NoMatch(f"expected {opname} at {self.p}")
        self.p += 1
        return ins

    def save(self):
        return self.p, list(self.S), [FailContext(f.base, f.cont, f.count) for f in self.fails]

    def restore(self, state) -> None:
        self.p, self.S, fails = state
        for cur, old in zip(self.fails, fails, strict=True):
            cur.base, cur.cont, cur.count = old.base, old.cont, old.count

    def fail_jump(self, ins: Instr) -> None:
        """A failing test at ``ins`` (its condition already popped) must reach the current continuation."""
        p = self.pos_of(ins.target)
        if p is None or p <= self.p - 1:
            raise NoMatch("fail jump backwards")
        self.fail_from(p)

    def fail_from(self, p: int) -> None:
        """The fail-pop chain from ``p`` pops what the current case (or or-alternative) pushed
        and goes on at its continuation."""
        ctx = self.fails[-1]
        need = len(self.S) - ctx.base
        if need < 0:
            raise NoMatch("fail below the case's stack")
        popped = 0
        for _ in range(4 * len(self.instrs)):
            if popped == need:
                break
            op = self.op(p)
            if op == "POP_TOP":
                popped += 1
                p += 1
            elif op == "JUMP":
                t = self.pos_of(self.instrs[p].target)
                if t is None or t <= p:
                    raise NoMatch("fail chain jumps backwards")
                p = t
            else:
                raise NoMatch("fail chain pops too little")
        self.fail_reaches(ctx, p)

    def fail_reaches(self, ctx: FailContext, p: int) -> None:
        if ctx.cont is None:
            ctx.cont = p
        elif ctx.cont != p and not self.same_code(ctx.cont, p):
            raise NoMatch("failing tests go on at different places")
        ctx.count += 1

    def same_code(self, a: int, b: int) -> bool:
        """The code at ``a`` and ``b`` is one piece of code that the compiler copied (a compiler that copies
        return tails copies small blocks that end the function instead of jumping to them)."""
        for _ in range(64):
            if a >= len(self.instrs) or b >= len(self.instrs):
                return False
            x, y = self.instrs[a], self.instrs[b]
            if copy_key(x) != copy_key(y):
                return False
            if x.opname == "JUMP":
                return True
            if x.opname in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                return True
            a, b = a + 1, b + 1
        return False

    def discard(self, tok) -> None:
        """``tok`` stays on the stack until a POP_TOP among the stores."""
        for k in range(len(self.S) - 1, -1, -1):
            if self.S[k] is tok:
                self.S[k] = Discard()
                return
        raise NoMatch("value to discard not on the stack")

    def cond_fail(self, opname: str) -> None:
        """A conditional jump taken when the test fails (its operand is on top of S)."""
        ins = self.expect(opname)
        self.S.pop()
        self.fail_jump(ins)

    def loads(self, p: int):
        """A constant, a name or a dotted name loaded from ``p``: (expression, next position)."""
        ins = self.instrs[p] if p < len(self.instrs) else None
        if ins is None:
            return None
        if ins.opname == "LOAD_CONST":
            if isinstance(ins.argval, (tuple, frozenset)) or hasattr(ins.argval, "co_code"):
                return None
            return ast.Constant(ins.argval), p + 1
        if ins.opname not in _NAME_LOADS:
            return None
        node: ast.expr = ast.Name(ins.argval, ast.Load())
        p += 1
        while self.op(p) == "LOAD_ATTR":
            node = ast.Attribute(node, self.instrs[p].argval, ast.Load())
            p += 1
        return node, p

    def top_val(self) -> Val:
        if not self.S or not isinstance(self.S[-1], Val) or self.S[-1].capture is not None:
            raise NoMatch("no value to match on top")
        return self.S[-1]

    def lazy(self, x: Val) -> ast.MatchAs:
        """``x`` is a capture whose rotation already happened, or a wildcard popped later."""
        x.capture = ast.MatchAs(None, None)
        x.capture.aliases = []
        x.capture.lazy = True
        return x.capture

    def capture(self) -> ast.MatchAs:
        """The value on top is kept for a name: rotated under the values still in use.

        The compiler's optimiser rewrites the SWAPs of consecutive rotations into fewer, other
        SWAPs with the same effect, so the whole run is applied here; values it moved are
        recognised as captures when their turn comes (``pattern``).
        """
        x = self.top_val()
        while self.op() == "SWAP":
            n = self.ins().argval
            if n > len(self.S):
                raise NoMatch("rotation below the stack")
            self.S[-1], self.S[-n] = self.S[-n], self.S[-1]
            self.p += 1
        x.capture = ast.MatchAs(None, None)
        x.capture.aliases = []
        return x.capture

    def moved(self, *toks) -> bool:
        """``toks`` are no longer on top because the optimiser merged their POP_TOPs with the
        rotations of captures (SWAPs) and the STOREs after them: they are popped later on."""
        ids = [id(t) for t in self.S]
        return self.op() in NAME_STORES | {"POP_TOP", "SWAP", "JUMP"} and all(id(t) in ids for t in toks)

    def pop_discarded(self) -> None:
        """POP_TOPs of values the pattern is done with (see ``moved``), and of values read
        lazily (``lazy``) that turn out to be wildcards."""
        while (
            self.op() == "POP_TOP"
            and self.S
            and (isinstance(self.S[-1], Discard) or _lazy_wildcard(self.S[-1]))
        ):
            tok = self.S.pop()
            if isinstance(tok, Val):
                del tok.capture.aliases             # a wildcard after all
            self.p += 1
