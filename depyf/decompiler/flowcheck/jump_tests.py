"""Reading the conditional jumps of a ``Flow``: what they test, and where a known value takes them.

Kept apart from the walk itself: these answer questions about one test (is its value kept, is it
negated, does it test a constant) that the walk asks at each branch.
"""

from __future__ import annotations

from depyf.decompiler.flowcheck.tables import _CONDITIONAL

# conditional jumps on a value's truth: opname -> the truth that makes them jump
_JUMPS_ON_TRUTH = {op: decisions[0] == "T" for op, decisions in _CONDITIONAL.items()
                   if decisions[0] in ("T", "F") and op != "JUMP_IF_NOT_EXC_MATCH"}
_KEEPS_VALUE = {"JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"}
_THREADING_LIMIT = 16


class JumpTests:
    """The conditional jumps of a ``Flow`` (its ``instructions``, ``constants``, ``targets`` and
    ``_jump_targets``), read one at a time."""

    def _kept_truth(self, k: int) -> bool | None:
        """The truth of the value the conditional jump at ``k`` leaves on the stack when it jumps
        (``a or b``: JUMP_IF_TRUE_OR_POP, or 3.12+'s COPY 1; POP_JUMP_IF_TRUE); None when it
        keeps no value."""
        jumps_on = _JUMPS_ON_TRUTH.get(self.instructions[k].opname)
        return jumps_on if jumps_on is not None and self._value_test(k) else None

    def _through_tests_of_known_truth(self, target: int, truth: bool) -> int:
        """Where a jump that carries a value of known ``truth`` to ``target`` goes on to.

        A test of that value at ``target`` can go one way only. The compiler threads such jumps
        where the lines allow (``(a is None or b) and c``, written over several lines, keeps the
        jump to the second test; on one line it jumps past it), so both layouts read as the
        threaded one: the other way is never taken."""
        instructions = self.instructions
        for _ in range(_THREADING_LIMIT):
            t = target
            while t < len(instructions) and instructions[t].opname == "NOP":
                t += 1
            if t >= len(instructions):
                return target
            keeps = instructions[t].opname in _KEEPS_VALUE
            test = t
            if instructions[t].opname == "COPY" and instructions[t].arg == 1:
                keeps, test = True, t + 1
            while test < len(instructions) and instructions[test].opname == "TO_BOOL":
                test += 1
            jumps_on = _JUMPS_ON_TRUTH.get(instructions[test].opname) if test < len(instructions) else None
            nxt = self._jump_targets[test] if jumps_on is not None else None
            if nxt is None:
                return target
            if jumps_on != truth:
                return test + 1
            if not keeps:
                return nxt
            target = nxt
        return target

    def _constant_outcome(self, k: int) -> bool | None:
        """Whether the conditional jump at ``k`` is taken, when it tests a constant loaded right
        before it (3.14 keeps ``LOAD_SMALL_INT 0; TO_BOOL; POP_JUMP_IF_TRUE``, which source that
        says ``and 0 or`` may compile without); None when the value is not known."""
        j = k - 1
        while j >= 0 and self.instructions[j].opname in ("TO_BOOL", "NOP", "NOT_TAKEN", "COPY"):
            j -= 1
        if j not in self.constants or any(t in self.targets for t in range(j + 1, k + 1)):
            return None
        value = self.constants[j]
        op = self.instructions[k].opname
        if "NOT_NONE" in op:
            return value is not None
        if "NONE" in op:
            return value is None
        if op in ("JUMP_IF_NOT_EXC_MATCH", "FOR_ITER", "SEND"):
            return None
        return bool(value) == ("TRUE" in op)

    def _value_test(self, k: int) -> bool:
        """Is the jump at ``k`` part of an ``and``/``or`` whose value is used (not a statement's test)?

        The compiler threads such jumps through each other (``a or b and c or d``), so how many
        tests a path passes depends on how the expression is parenthesised, not on what it does;
        the events it reaches are still compared."""
        if self.instructions[k].opname in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
            return True
        j = k - 1
        if j >= 0 and self.instructions[j].opname == "TO_BOOL":
            j -= 1
        if j < 1 or self.instructions[j].opname != "COPY" or self.instructions[j].arg != 1:
            return False
        # (``except*``'s own tests, ``COPY 1`` then a jump if None, of the group a clause matched
        # and of the group left to raise again, are no ``and``/``or``: which clause runs, and
        # whether anything is left)
        before = self.instructions[j - 1]
        return not (before.opname in ("CHECK_EG_MATCH", "PREP_RERAISE_STAR")
                    or before.opname == "CALL_INTRINSIC_2" and "PREP_RERAISE_STAR" in before.argrepr)

    def _negated_test(self, k: int) -> bool:
        """Does the jump at ``k`` test a negated result (``not in``, ``is not``, ``not x``)?

        ``if a not in b`` and ``if not a in b`` compile to an inverted operator or to an inverted
        jump: decisions are recorded for the un-negated test so both read the same."""
        negated = False
        j = k - 1
        while j >= 0 and self.instructions[j].opname in ("COPY", "TO_BOOL", "NOP", "UNARY_NOT"):
            negated ^= self.instructions[j].opname == "UNARY_NOT"
            j -= 1
        if (
            j >= 0
            and self.instructions[j].opname in ("IS_OP", "CONTAINS_OP")
            and self.instructions[j].arg == 1
        ):
            negated = not negated
        return negated
