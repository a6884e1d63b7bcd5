"""Or, sequence, mapping and class patterns."""

from __future__ import annotations

import ast

from depyf.decompiler.patterns.model import Discard, FailContext, NoMatch, Other, Val, _as_star, _is_copy1


class CompoundPatterns:
    """Patterns made of sub-patterns."""

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
                # the enclosing failure's pop chain goes on right here (the compiler may lay
                # the last alternative's failure into it), or a copy of where it goes
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
        unpacked, or each read by ``COPY 1; LOAD_CONST i; BINARY_SUBSCR`` and the tuple popped after
        them (the items not read are wildcards)."""
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
            # [subject, keys] -> [subject, rest]; rest is captured, then the subject popped
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
