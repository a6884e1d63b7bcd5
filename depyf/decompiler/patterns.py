"""``match`` statements: read the pattern code of each case back into ``ast`` patterns.

The compiler lays a match statement out as a chain of cases over the subject on the stack::

    <subject> [COPY 1] <pattern> <stores of the captures> [<guard>] [POP_TOP] <body> JUMP end
    <fail-pop chain: POP_TOP ...>  -> next case (the subject still on the stack)

Only the last case that is not a trailing ``case _`` matches the subject itself (no COPY 1);
after it comes the default body, if any, then ``end``.

The pattern code is read by a small stack machine over *tokens* (values being matched, values
kept for a capture, values left to be popped), independent of the executor's expressions:

- a failing test jumps into the fail-pop chain; the number of POP_TOPs it goes through must be
  the number of tokens the pattern has pushed since the case (or or-alternative) began, and all
  the failing tests of one case must end at the same place: the next case;
- captures leave their value on the stack (rotated under the values still in use with SWAPs);
  the STOREs after the pattern pop them and give them their names;
- or-patterns are alternatives, each on a copy of the value, joined at a common end.

Everything is static (instructions only), so recognising a match start has no side effects.
Version differences are normalised before this module (see ``depyf.decompiler.versions``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from depyf.decompiler.instructions import Instr

_NAME_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_CLASSDEREF"})
_NAME_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"})


class NoMatch(Exception):
    """The instructions are not a match statement's pattern code (of the expected shape)."""


class Val:
    """A value being matched; once captured, ``capture`` is the ``MatchAs`` waiting for its name."""

    def __init__(self):
        self.capture: ast.MatchAs | None = None

    def __repr__(self) -> str:
        return f"Val({'capture' if self.capture else ''})"


class Discard:
    """A value the pattern is done with, popped later by a POP_TOP among the stores."""

    def __repr__(self) -> str:
        return "Discard"


class Other:
    """Any other intermediate value (a tuple of keys, the attributes of a class pattern, a flag)."""

    def __init__(self, what: str):
        self.what = what

    def __repr__(self) -> str:
        return self.what


@dataclass
class FailContext:
    """Failing tests of one case (or or-alternative): pop down to ``base`` tokens, go on at ``cont``."""

    base: int
    cont: int | None = None
    count: int = 0


@dataclass
class CaseRead:
    """One case's pattern: where it starts, whether it copies the subject, where its stores end."""

    start: int
    copy: bool
    pattern: ast.pattern
    after: int                       # position after the pattern and its stores
    fail: int | None                 # where a failed match goes on (None: irrefutable)
    stores: list = field(default_factory=list)   # (opname, name) of the captures, in order


@dataclass
class MatchRead:
    cases: list[CaseRead]
    fail: int | None                 # where control goes when no case matched (after the last case)

    def pattern_ranges(self) -> list[tuple[int, int]]:
        return [(c.start, c.after) for c in self.cases]


def _is_copy1(ins: Instr) -> bool:
    return ins.opname == "COPY" and ins.argval == 1


class PatternReader:
    """Reads the cases of a match statement from instruction positions (see the module doc)."""

    def __init__(self, instrs: list[Instr], pos_of):
        self.instrs = instrs
        self.pos_of = pos_of          # offset -> instruction position
        self.p = 0
        self.S: list = []
        self.fails: list[FailContext] = []

    # -- helpers -------------------------------------------------------------------------
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
        """The code at ``a`` and ``b`` is one piece of code that the compiler copied (3.12+ copies
        small blocks that end the function instead of jumping to them)."""
        for _ in range(64):
            if a >= len(self.instrs) or b >= len(self.instrs):
                return False
            x, y = self.instrs[a], self.instrs[b]
            if x.opname != y.opname:
                return False
            if x.target is not None or y.target is not None:
                if x.target != y.target:
                    return False
                if x.opname == "JUMP":
                    return True
            elif x.argval != y.argval and not (x.argval != x.argval and y.argval != y.argval):
                return False
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

    # -- cases -----------------------------------------------------------------------------
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
            if ins.opname in _NAME_STORES:
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

    # -- patterns --------------------------------------------------------------------------
    def top_val(self) -> Val:
        if not self.S or not isinstance(self.S[-1], Val) or self.S[-1].capture is not None:
            raise NoMatch("no value to match on top")
        return self.S[-1]

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

    def moved(self, *toks) -> bool:
        """``toks`` are no longer on top because the optimiser merged their POP_TOPs with the
        rotations of captures (SWAPs) and the STOREs after them: they are popped later on."""
        ids = [id(t) for t in self.S]
        return self.op() in _NAME_STORES | {"POP_TOP", "SWAP", "JUMP"} and all(id(t) in ids for t in toks)

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

    def or_pattern(self) -> ast.MatchOr:
        x = self.top_val()
        below = len(self.S)
        alts: list[ast.pattern] = []
        tops: list[list] = []
        end = None
        while True:
            self.expect("COPY", 1)
            ctx = FailContext(base=len(self.S))
            self.fails.append(ctx)
            alt = Val()
            self.S.append(alt)
            try:
                alts.append(self.pattern(alt))
            finally:
                self.fails.pop()
            # the captures of this alternative put in the order of the first one's
            while self.op() == "SWAP" and self.ins().argval <= len(self.S) - below + 1:
                n = self.ins().argval
                self.S[-1], self.S[-n] = self.S[-n], self.S[-1]
                self.p += 1
            self.pop_discarded()
            if len(self.S) < below or self.S[below - 1] is not x:
                raise NoMatch("or-alternative lost its subject")
            tops.append(self.S[below:])
            del self.S[below:]
            if self.op() == "JUMP" and self.pos_of(self.ins().target) > self.p:
                target = self.pos_of(self.ins().target)
                self.p += 1
            else:
                target = self.p                     # falls into the end, or into a copy of it
            if end is not None and target != end and not self.same_code(end, target):
                raise NoMatch("or-alternatives end at different places")
            if end is None:
                end = target
            if ctx.count == 0:
                break                               # an irrefutable last alternative
            if ctx.cont is None or ctx.cont < self.p:
                raise NoMatch("or-alternative fails elsewhere")
            self.p = ctx.cont                       # past the alternative's fail-pop chain
            if _is_copy1(self.ins()):
                continue
            self.expect("POP_TOP")
            self.S.pop()
            if self.op() == "JUMP":
                self.fail_jump(self.expect("JUMP"))
            else:
                # the enclosing failure's pop chain goes on right here (3.12+ lays the last
                # alternative's failure into it), or a copy of where it goes
                self.fail_from(self.p)
            self.S.append(x)                        # on the paths that matched
            break
        if len(alts) < 2 or (self.p != end and ctx.count == 0):
            raise NoMatch("not an or-pattern")
        self.p = end
        counts = {len(t) for t in tops}
        if len(counts) != 1:
            raise NoMatch("or-alternatives bind different numbers of names")
        for k, tok in enumerate(tops[0]):
            for other in tops[1:]:
                o = other[k]
                if (
                    not isinstance(tok, Val)
                    or not isinstance(o, Val)
                    or tok.capture is None
                    or o.capture is None
                ):
                    raise NoMatch("or-alternative leaves a value that is not a capture")
                tok.capture.aliases.append(o.capture)
                tok.capture.aliases.extend(o.capture.aliases)
        self.S.extend(tops[0])
        # rotate the captures under the subject's copy, then pop it
        state = self.save()
        while self.op() == "SWAP":
            n = self.ins().argval
            if n > len(self.S):
                break
            self.S[-1], self.S[-n] = self.S[-n], self.S[-1]
            self.p += 1
        if self.op() == "POP_TOP" and self.S and self.S[-1] is x:
            self.p += 1
            self.S.pop()
        else:
            self.restore(state)
            self.discard(x)
        return ast.MatchOr(alts)

    def sequence(self) -> ast.MatchSequence:
        x = self.top_val()
        self.expect("MATCH_SEQUENCE")
        self.S.append(Other("flag"))
        self.cond_fail("POP_JUMP_IF_FALSE")
        n, cmp = None, None
        if self.op() == "GET_LEN" and self.op(self.p + 1) == "LOAD_CONST" \
                and self.op(self.p + 2) == "COMPARE_OP" and self.instrs[self.p + 2].argval in ("==", ">="):
            n = self.instrs[self.p + 1].argval
            cmp = self.instrs[self.p + 2].argval
            if not isinstance(n, int) or isinstance(n, bool):
                raise NoMatch("length test without a number")
            self.p += 3
            self.S.append(Other("flag"))
            self.cond_fail("POP_JUMP_IF_FALSE")
        op = self.op()
        if op == "POP_TOP":
            self.p += 1
            self.S.pop()
            if cmp == "==":
                return ast.MatchSequence([ast.MatchAs(None, None) for _ in range(n)])
            count = n if cmp == ">=" else 0
            return ast.MatchSequence([ast.MatchAs(None, None) for _ in range(count)] + [ast.MatchStar(None)])
        if op in ("UNPACK_SEQUENCE", "UNPACK_EX"):
            arg = self.ins().argval
            if op == "UNPACK_SEQUENCE":
                if cmp != "==" or arg != n:
                    raise NoMatch("unpack of another length")
                count, star = arg, None
            else:
                before, after = arg & 0xFF, arg >> 8
                count, star = before + 1 + after, before
                if not ((cmp == ">=" and n == count - 1) or (cmp is None and count == 1)):
                    raise NoMatch("starred unpack of another length")
            self.p += 1
            self.S.pop()
            elems = [Val() for _ in range(count)]
            self.S.extend(reversed(elems))
            pats = [self.pattern(e) for e in elems]
            if star is not None:
                pats[star] = _as_star(pats[star])
            return ast.MatchSequence(pats)
        if _is_copy1(self.ins()) and cmp == ">=":
            size = n + 1
            found: dict[int, ast.pattern] = {}
            for _ in range(size):
                index = self.subscript_index(size)
                if index is None:
                    break
                if index in found:
                    raise NoMatch("element read twice")
                elem = Val()
                self.S.append(elem)
                found[index] = self.pattern(elem)
                if self.S[-1] is not x:
                    if not self.moved(x):
                        raise NoMatch("sequence not on top after an element")
                    break
            if not found:
                raise NoMatch("starred sequence without elements")
            if self.op() == "POP_TOP" and self.S[-1] is x:
                self.p += 1
                self.S.pop()
            else:
                self.discard(x)
            positives = [i for i, neg in found if not neg]
            star = max(positives) + 1 if positives else 0
            negatives = [size - k for k, neg in found if neg]
            if any(i <= star for i in negatives) or star >= size:
                raise NoMatch("elements around the star overlap")
            pats = [ast.MatchAs(None, None) for _ in range(size)]
            pats[star] = ast.MatchStar(None)
            for (k, neg), pat in found.items():
                pats[size - k if neg else k] = pat
            return ast.MatchSequence(pats)
        raise NoMatch("unrecognised sequence pattern")

    def elements(self, count: int) -> list[ast.pattern]:
        """Patterns for the items of the tuple on top (a class's attributes, a mapping's values):
        unpacked (3.11+), or each read by ``COPY 1; LOAD_CONST i; BINARY_SUBSCR`` and the tuple
        popped after them (3.10: the items not read are wildcards)."""
        if self.op() == "UNPACK_SEQUENCE":
            if self.expect("UNPACK_SEQUENCE").argval != count:
                raise NoMatch("tuple of another count")
            self.S.pop()
            elems = [Val() for _ in range(count)]
            self.S.extend(reversed(elems))
            return [self.pattern(e) for e in elems]
        tup = self.S[-1]
        pats: list[ast.pattern] = [ast.MatchAs(None, None) for _ in range(count)]
        seen = set()
        while _is_copy1(self.ins()) and self.op(self.p + 1) == "LOAD_CONST" \
                and self.op(self.p + 2) == "BINARY_SUBSCR":
            i = self.instrs[self.p + 1].argval
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < count or i in seen:
                raise NoMatch("tuple item out of range")
            seen.add(i)
            self.p += 3
            elem = Val()
            self.S.append(elem)
            pats[i] = self.pattern(elem)
            if self.S[-1] is not tup:
                raise NoMatch("tuple not on top after an item")
        self.expect("POP_TOP")
        if self.S.pop() is not tup:
            raise NoMatch("pop of another value than the tuple")
        return pats

    def subscript_index(self, size: int):
        """``COPY 1; LOAD_CONST i; BINARY_SUBSCR`` -> (i, False); ``COPY 1; GET_LEN; LOAD_CONST k;
        BINARY_OP -; BINARY_SUBSCR`` -> (k, True) (the element ``size - k``)."""
        p = self.p
        if not _is_copy1(self.ins()):
            return None
        if self.op(p + 1) == "LOAD_CONST" and self.op(p + 2) == "BINARY_SUBSCR":
            i = self.instrs[p + 1].argval
            if not isinstance(i, int) or not 0 <= i < size:
                return None
            self.p = p + 3
            return (i, False)
        if self.op(p + 1) == "GET_LEN" and self.op(p + 2) == "LOAD_CONST" and self.op(p + 3) == "BINARY_OP" \
                and self.instrs[p + 3].argval == "-" and self.op(p + 4) == "BINARY_SUBSCR":
            k = self.instrs[p + 2].argval
            if not isinstance(k, int) or not 0 < k <= size:
                return None
            self.p = p + 5
            return (k, True)
        return None

    def mapping(self) -> ast.MatchMapping:
        x = self.top_val()
        self.expect("MATCH_MAPPING")
        self.S.append(Other("flag"))
        self.cond_fail("POP_JUMP_IF_FALSE")
        if self.op() == "POP_TOP":
            # ``{}``: only a mapping test
            self.p += 1
            self.S.pop()
            return ast.MatchMapping([], [], None)
        n = None
        if self.op() == "GET_LEN" and self.op(self.p + 1) == "LOAD_CONST" \
                and self.op(self.p + 2) == "COMPARE_OP" and self.instrs[self.p + 2].argval == ">=":
            n = self.instrs[self.p + 1].argval
            self.p += 3
            self.S.append(Other("flag"))
            self.cond_fail("POP_JUMP_IF_FALSE")
        keys = self.mapping_keys()
        if n is not None and n != len(keys) or n is None and keys:
            raise NoMatch("mapping length test does not fit its keys")
        self.expect("MATCH_KEYS")
        keys_tok = Other("keys")
        self.S.append(keys_tok)
        self.S.append(Other("values"))
        self.expect("COPY", 1)
        self.S.append(Other("values"))
        self.cond_fail("POP_JUMP_IF_NONE")
        pats = self.elements(len(keys))
        self.pop_discarded()
        on_top = len(self.S) >= 2 and self.S[-2] is x and self.S[-1] is keys_tok
        if not on_top and not self.moved(x, keys_tok):
            raise NoMatch("mapping subject and keys not on top")
        rest = None
        if not on_top:
            self.discard(x)
            self.discard(keys_tok)
        elif self.op() == "POP_TOP" and self.op(self.p + 1) == "POP_TOP":
            self.p += 2
            del self.S[-2:]
        elif self.op() == "BUILD_MAP" and self.ins().argval == 0:
            self.rest_copy(len(keys))
            del self.S[-2:]
            rest_val = Val()
            self.S.append(rest_val)
            rest = self.capture()
        elif self.op() == "COPY_DICT_WITHOUT_KEYS":
            # 3.10: [subject, keys] -> [subject, rest]; rest is captured, then the subject popped
            self.p += 1
            self.S[-1] = Val()
            rest = self.capture()
            if self.op() == "POP_TOP" and self.S[-1] is x:
                self.p += 1
                self.S.pop()
            else:
                self.discard(x)
        elif self.op() == "POP_TOP" and self.S[-1] is keys_tok and self.op(self.p + 1) == "POP_TOP":
            self.p += 2
            del self.S[-2:]
        else:
            self.S[-2:] = [Discard(), Discard()]
        node = ast.MatchMapping(keys, pats, None)
        node.rest_capture = rest
        return node

    def rest_copy(self, size: int) -> None:
        """``BUILD_MAP 0; SWAP 3; DICT_UPDATE 2; UNPACK_SEQUENCE n; (COPY k+1; SWAP 2; DELETE_SUBSCR)*``."""
        self.expect("BUILD_MAP", 0)
        self.expect("SWAP", 3)
        self.expect("DICT_UPDATE", 2)
        self.expect("UNPACK_SEQUENCE", size)
        for k in range(size, 0, -1):
            self.expect("COPY", k + 1)
            self.expect("SWAP", 2)
            self.expect("DELETE_SUBSCR")

    def mapping_keys(self) -> list[ast.expr]:
        ins = self.ins()
        if ins.opname == "LOAD_CONST" and isinstance(ins.argval, tuple):
            self.p += 1
            return [ast.Constant(k) for k in ins.argval]
        keys = []
        p = self.p
        while True:
            loaded = self.loads(p)
            if loaded is None:
                break
            node, p = loaded
            if isinstance(node, ast.Name):
                raise NoMatch("a plain name as a mapping key")
            keys.append(node)
        if self.op(p) != "BUILD_TUPLE" or self.instrs[p].argval != len(keys):
            raise NoMatch("mapping keys not recognised")
        self.p = p + 1
        return keys

    def class_pattern(self, cls: ast.expr, q: int) -> ast.MatchClass:
        names = self.instrs[q].argval
        if not all(isinstance(s, str) for s in names):
            raise NoMatch("keyword names not strings")
        nargs = self.instrs[q + 1].argval
        self.p = q + 2
        self.S[-1] = Other("attributes")
        self.expect("COPY", 1)
        self.S.append(Other("attributes"))
        self.cond_fail("POP_JUMP_IF_NONE")
        pats = self.elements(nargs + len(names))
        return ast.MatchClass(cls, pats[:nargs], list(names), pats[nargs:])


def _lazy_wildcard(tok) -> bool:
    """A value read lazily whose POP_TOP makes it a wildcard: no name, no sub-pattern yet."""
    return isinstance(tok, Val) and getattr(tok.capture, "lazy", False) and tok.capture.name is None \
        and tok.capture.pattern is None and hasattr(tok.capture, "aliases")


def _fresh(tok) -> bool:
    return isinstance(tok, Val) and tok.capture is None


def _as_star(pat: ast.pattern) -> ast.pattern:
    if isinstance(pat, ast.MatchAs) and pat.pattern is None:
        star = ast.MatchStar(None)
        if hasattr(pat, "aliases"):
            star.capture = pat          # named when its store is read
        return star
    raise NoMatch("starred element with a sub-pattern")


def _finish(pattern: ast.pattern) -> ast.pattern:
    """Resolve captures (names known now) into ``MatchStar``/``MatchMapping.rest``; check names."""
    for node in ast.walk(pattern):
        if isinstance(node, ast.MatchStar) and getattr(node, "capture", None) is not None:
            node.name = node.capture.name
            if node.name is None:
                raise NoMatch("starred capture without a name")
        if isinstance(node, ast.MatchMapping) and getattr(node, "rest_capture", None) is not None:
            node.rest = node.rest_capture.name
            if node.rest is None:
                raise NoMatch("**rest without a name")
        if isinstance(node, ast.MatchAs) and hasattr(node, "aliases") and node.name is None:
            raise NoMatch("capture without a name")
    return pattern
