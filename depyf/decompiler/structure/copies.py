"""Code the compilers copy into each path that reaches it: small returning blocks
(``Features.copies_return_tails``), with the exit sequences before them. Recognising two copies as
one place."""

from __future__ import annotations

from depyf.decompiler.instructions import COPIED_BLOCK_LIMIT, copy_key
from depyf.decompiler.structure.model import ENDS_FUNCTION

# Instructions that may make up a small block copied into each path that reaches it: no
# jumps and nothing touching the exception state, so two equal copies run the same way.
STRAIGHT_OPS = frozenset({
    "LOAD_FAST", "LOAD_CONST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_CLASSDEREF",
    "LOAD_FROM_DICT_OR_DEREF", "LOAD_LOCALS", "STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL",
    "DELETE_FAST", "DELETE_NAME", "DELETE_DEREF", "DELETE_GLOBAL", "PUSH_NULL", "CALL", "CALL_KW",
    "BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP", "BUILD_TUPLE", "BUILD_LIST", "POP_TOP", "RETURN_VALUE",
    "LOAD_ASSERTION_ERROR", "RAISE_VARARGS", "POP_EXCEPT", "UNARY_NOT", "UNARY_NEGATIVE", "UNARY_INVERT",
    "UNARY_POSITIVE", "IS_OP", "CONTAINS_OP", "BUILD_SET", "BUILD_MAP", "BUILD_SLICE", "BUILD_STRING",
    "BINARY_SLICE", "FORMAT_VALUE", "STORE_ATTR", "STORE_SUBSCR",
    "SWAP",   # (a return inside for loops pops their iterators from under its value: SWAP 2; POP_TOP)
})


class CopiedCode:
    """Small returning blocks and exit sequences copied into several paths."""

    def is_return_copy(self, p: int, end: int) -> bool:
        """Is ``p`` up to ``end`` straight-line code ending in a return or raise (a copied return tail)?"""
        return self.copied_block_end(p) == end

    def copied_block_end(self, p: int, *, or_jump: bool = False, or_reraise: bool = False) -> int | None:
        """Where the small block at ``p`` that the compilers copy ends (just after its return or
        raise, or with ``or_jump`` its unconditional jump): at most ``COPIED_BLOCK_LIMIT`` straight-line
        instructions.
        Compilers that copy return tails copy such blocks into each path that reaches them, some with
        the exit sequences before them. None when ``p`` starts no such block."""
        for k in range(p, min(p + COPIED_BLOCK_LIMIT, len(self.instrs))):
            ins = self.instrs[k]
            if or_jump and ins.opname == "JUMP" or or_reraise and ins.opname == "RERAISE":
                return k + 1
            if ins.target is not None or ins.opname not in STRAIGHT_OPS:
                return None
            if ins.opname in ENDS_FUNCTION:
                return k + 1
        return None

    def one_return_copy(self, exits: list, prefer: int | None = None) -> set:
        """The places in ``exits``, with copies of one returning block counted once.

        A compiler that copies return tails copies ``return r`` after a try statement to the end
        of the try body and of each except clause, so their exits differ only in which copy they
        run. ``prefer`` (the try body's exit) stands for all when it is such a copy too.
        """
        places = set(exits)
        if not places or None in places:
            return places
        for first in (prefer, min(places)):
            if first is not None and all(p == first or self.same_return_block(p, first, or_reraise=True)
                                         or self.same_exit_copy(p, first) for p in places):
                return {first}
        return places

    def same_exit_copy(self, p: int, q: int) -> bool:
        """Do ``p`` and ``q`` run copies of one exit sequence (``POP_EXCEPT``, a with's exit
        call...) to the same place?

        A compiler with a block stack copies the exit of an enclosing region into each path that
        leaves it: the end of a with statement inside an except clause whose test is a conditional
        expression leaves the clause by one copy per path, each then jumping to where the try statement
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
        handler_at = self.cfg.handler_at
        return all(copy_key(self.instrs[p + k]) == copy_key(self.instrs[q + k])
                   and _handled_alike(handler_at[p + k], handler_at[q + k]) for k in range(n))

    def return_copies(self, q: int | None) -> set[int]:
        """Every other place that runs a copy of the small returning block at ``q``."""
        if q is None:
            return set()
        return {p for p in range(len(self.instrs)) if p != q and self.same_return_block(p, q)}

    def same_return_block(self, p: int, q: int | None, *, or_reraise: bool = False) -> bool:
        """Is the code at ``p`` a copy of the code at ``q``: a few straight-line instructions
        (loads, stores, deletes, calls) ending in a return?

        A compiler that copies return tails copies the code after a loop into the paths that jump
        to it: a ``break`` that went through exit sequences lands on such a copy. Running the copy
        or breaking to the original is the same, as both end the function the same way.
        """
        if q is None or p == q or q >= len(self.instrs):
            return False
        end = self.copied_block_end(q, or_reraise=or_reraise)
        if end is None or not self.repeats(p, q, end - q):
            return False
        # the compiler's copies keep the lines of what they copy: equal code on other lines is
        # another statement (``return call()`` twice). Code only the compiler writes takes the
        # line of the code before each copy: a re-raise, the implicit ``return None`` (so any
        # return of a constant), the exit sequences before them
        last, value = self.instrs[end - 1], self.instrs[end - 2] if end - q >= 2 else None
        written = (last.opname == "RETURN_VALUE" and value is not None and value.opname != "LOAD_CONST") \
            or (last.opname == "RAISE_VARARGS" and last.argval)
        return not written or all(self.instrs[p + k].lineno == self.instrs[q + k].lineno
                                  for k in range(end - q))

    def straight_to_end(self, p: int | None) -> list[int] | None:
        """The positions of the jump-free code from ``p`` that ends the function, entered only at
        ``p``; None when it jumps or is entered elsewhere."""
        if p is None:
            return None
        found = []
        for k in range(p, min(p + 32, len(self.instrs))):
            if (
                k != p
                and self.cfg.is_leader(k)
                and self.cfg.blocks[self.cfg.block_of[k]].preds != [self.cfg.block_of[k - 1]]
            ):
                return None
            ins = self.instrs[k]
            if ins.target is not None:
                return None
            found.append(k)
            if ins.opname in ENDS_FUNCTION:
                return found
        return None

    def copied_tail(self, start: int, stop: int, tail: int) -> int | None:
        """Where the code from ``start`` (before ``stop``) runs a copy of the straight-line code at
        ``tail`` that ends the function: a compiler that copies return tails copies it into each path that
        reaches it, so a value's two paths no longer meet (``return (a < b < c), d``)."""
        copy = []
        for ins in self.instrs[tail:tail + COPIED_BLOCK_LIMIT]:    # (straight on, across changes of handler)
            if ins.target is not None:
                return None
            copy.append(ins)
            if ins.opname in ENDS_FUNCTION:
                break
        if not copy or copy[-1].opname not in ENDS_FUNCTION:
            return None
        key = [copy_key(ins) for ins in copy]
        n = len(copy)
        found = [p for p in range(start + 1, stop - n + 1)
                 if [copy_key(x) for x in self.instrs[p:p + n]] == key]
        return found[0] if len(found) == 1 else None


def _handled_alike(a, b) -> bool:
    """Do the exception entries ``a`` and ``b`` (None: no handler) send an exception to the same
    handler, the same way? (A copy's entry covers other offsets than the original's.)"""
    if a is None or b is None:
        return a is b
    return (a.target, a.depth, a.lasti) == (b.target, b.depth, b.lasti)
