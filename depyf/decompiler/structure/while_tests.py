"""The tests a compiler that copies loop tests (``Features.copies_loop_tests``) copies from the top
of a ``while`` loop to its bottom."""

from __future__ import annotations

from depyf.decompiler.instructions import CONDITIONAL_JUMPS, copy_key
from depyf.decompiler.structure.model import WhileTest

# Instructions a while test's copies are widened over (see ``Structurer.widen_copied_test``).
TEST_OPS = frozenset({
    "LOAD_FAST", "LOAD_CONST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "PUSH_NULL",
    "COMPARE_OP", "IS_OP", "CONTAINS_OP", "UNARY_NOT", "UNARY_NEGATIVE", "JUMP",
})

# a test's jump -> the jump taken on the other outcome of the same test
_OPPOSITE_TEST = {"POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE", "POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE",
                  "POP_JUMP_IF_NONE": "POP_JUMP_IF_NOT_NONE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NONE"}


class WhileTests:
    """Finding the two copies of each while test."""

    def find_while_tests(self) -> dict[int, WhileTest]:
        """Top-of-loop tests duplicated at the bottom of ``while`` loops.

        Maps the top test's first position to its ``WhileTest``.
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
                # the same with a copied return tail: the trampoline runs a copy of the code after the loop
                j = self.cfg.block_at(end).start if end >= 0 else -1
                if j >= 2 and ins[j].opname == "POP_TOP" and self.is_return_copy(j + 1, body_start) \
                        and ins[j - 1].opname == "JUMP" and self.cfg.pos(ins[j - 1].target) == body_start \
                        and ins[j - 2].opname.startswith("POP_JUMP"):
                    end = j - 2
            a, b = last, end     # the bottom and top copies, read backwards side by side
            while b >= 0 and a > body_start:
                folded = self._folded_jump_to_body(a, b, body_start)
                if folded is not None:
                    a, b = folded
                    continue
                ia, ib = self.instrs[a], self.instrs[b]
                if (ia.target is None) != (ib.target is None):
                    break
                if ia.target is None and copy_key(ia) != copy_key(ib):
                    break
                # jumps inside the test (``and``/``or`` values, a chain's exit) land alike in both copies
                # (a comprehension inlined in the test: its FOR_ITER and jump back too)
                same_value_jump = ia.opname == ib.opname \
                    and (ia.opname.startswith("JUMP_IF") or ia.opname in ("JUMP", "FOR_ITER")) \
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
                a, b = a - 1, b - 1
            if a == last:
                continue
            top, test_end = b + 1, end
            if not self.instrs[test_end].opname.startswith("POP_JUMP"):
                continue
            t, f = self.branches(test_end)
            exit_pos = f if self.same_place(t, body_start) else t
            bottom = a + 1
            widened = self.widen_copied_test(top, bottom, test_end, body_start, exit_pos)
            if widened is not None:
                top, bottom = widened
            found[top] = WhileTest(test_end, body_start, exit_pos, bottom, back)
        return found

    def _folded_jump_to_body(self, a: int, b: int, body_start: int) -> tuple[int, int] | None:
        """Where the two copies read on from, when the bottom one's ``a`` and the top one's ``b``
        end the same test of a value, once as one jump into the body and once as the opposite
        jump over a jump there (``POP_JUMP_IF_FALSE L; JUMP body; L:`` is ``POP_JUMP_IF_TRUE
        body``): the top copy has that form where a constant arm folded a test away (``(-5 if g()
        else c) or d``: a true ``g()`` enters the body). None when they end no such pair."""
        for one, pair in ((a, b), (b, a)):
            jump, test = self.instrs[pair], self.instrs[pair - 1] if pair >= 1 else None
            single = self.instrs[one]
            if (
                test is not None
                and jump.opname == "JUMP"
                and self.cfg.pos(jump.target) == body_start
                and test.opname == _OPPOSITE_TEST.get(single.opname)
                and self.cfg.pos(test.target) == pair + 1
                and single.target is not None
                and self.cfg.pos(single.target) == body_start
                and single.lineno == test.lineno
            ):
                return (a - 1, b - 2) if pair == b else (a - 2, b - 1)
        return None

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
