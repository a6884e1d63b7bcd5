"""``threads_value_tests``: a test of an ``and``/``or`` operand threaded through the next test.

In ``a and (b or c) and d`` a true ``b`` goes on to ``d``. Read plainly, ``b``'s jump keeps its
value (``JUMP_IF_TRUE_OR_POP``) and lands on the test after ``c`` (``JUMP_IF_FALSE_OR_POP``),
which lets a true value pass. A compiler that threads value tests jumps straight past that test
and drops the value (``POP_JUMP_IF_TRUE`` to ``d``), so the operands no longer nest as written.
Undoing it gives back the jump that keeps the value and lands on the test: the two run alike
(the test passes a value of that truth on, popped, to the same place), and the rest of the
reading sees the layout of a compiler that does not thread.
"""

from __future__ import annotations

from depyf.decompiler.instructions import Instr

# a jump that pops the value -> (the value-keeping test it may have been threaded past, the jump
# that keeps the value and lands on that test)
_THREADED_PAST = {
    "POP_JUMP_IF_TRUE": ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"),
    "POP_JUMP_IF_FALSE": ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"),
}


def unthread_value_tests(instrs: list[Instr]) -> None:
    """Turn each forward ``POP_JUMP_IF_X`` that lands right after a test of the other truth that
    keeps its value back into the value-keeping jump to that test (in place)."""
    position: dict[int, int] = {}
    for k, ins in enumerate(instrs):
        position.setdefault(ins.offset, k)
    for k, ins in enumerate(instrs):
        rule = _THREADED_PAST.get(ins.opname)
        if rule is None or ins.target is None:
            continue
        landing = position.get(ins.target)
        if landing is None or landing - 1 <= k:
            continue
        passed = instrs[landing - 1]
        if passed.opname == rule[0]:
            ins.opname = rule[1]
            ins.target = passed.offset
