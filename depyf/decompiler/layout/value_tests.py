"""``threads_value_tests``: tests of ``and``/``or`` operands threaded through the next test.

A value an ``and``/``or`` keeps is tested again where the enclosing ``and``/``or`` goes on, and a
compiler that threads jumps sends a test whose outcome that second test then knows straight past
it:

- ``a and (b or c) and d``: a true ``b`` goes on to ``d``. Read plainly, ``b``'s jump keeps its
  value (``JUMP_IF_TRUE_OR_POP``) and lands on the test after ``c`` (``JUMP_IF_FALSE_OR_POP``),
  which lets a true value pass; threaded, it drops the value and jumps to ``d``
  (``POP_JUMP_IF_TRUE``). (3.10, 3.11)
- ``(a or (b and c)) and d``: a false ``b`` is the value of the ``or``, which the ``and d`` test
  then sends to the end. Read plainly, ``b``'s jump lands on that test; threaded, it jumps to the
  end itself, past it. (3.10, 3.11, 3.14+)

Undoing both gives the layout of a compiler that does not thread (3.12, 3.13), which the rest of
the reading sees. Each rewrite runs alike: the test a jump is sent back onto passes a value of
the known truth on to where the jump went.
"""

from __future__ import annotations

from collections import defaultdict, deque

from depyf.decompiler.instructions import Instr

# a jump that pops the value -> (the value-keeping test it may have been threaded past, the jump
# that keeps the value and lands on that test)
_THREADED_PAST = {
    "POP_JUMP_IF_TRUE": ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"),
    "POP_JUMP_IF_FALSE": ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"),
}
_OTHER_TEST = {"JUMP_IF_TRUE_OR_POP": "JUMP_IF_FALSE_OR_POP", "JUMP_IF_FALSE_OR_POP": "JUMP_IF_TRUE_OR_POP"}


def unthread_value_tests(instrs: list[Instr]) -> None:
    """Both rewrites of the module docstring, in place."""
    position: dict[int, int] = {}
    for k, ins in enumerate(instrs):
        position.setdefault(ins.offset, k)
    _popping_jumps_back_onto_tests(instrs, position)
    _kept_values_back_onto_tests(instrs, position)


def _popping_jumps_back_onto_tests(instrs: list[Instr], position: dict[int, int]) -> None:
    """Each forward ``POP_JUMP_IF_X`` that lands right after a value test of the other truth
    becomes the value-keeping jump onto that test."""
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


def _kept_values_back_onto_tests(instrs: list[Instr], position: dict[int, int]) -> None:
    """Inside the operand of an ``or`` (``and``) that ends on a value test, a value test of that
    test's kind that jumps where it jumps lands on it instead."""
    # the value tests landing at each place, by kind, in the code's order (one jumped onto a test
    # below lands elsewhere from then on: it is skipped when met)
    landing: dict[tuple[int | None, str], deque[int]] = defaultdict(deque)
    for j, ins in enumerate(instrs):
        if ins.opname in _OTHER_TEST and ins.target is not None:
            landing[position.get(ins.target), ins.opname].append(j)
    for x, test in enumerate(instrs):
        other = _OTHER_TEST.get(test.opname)
        if other is None or test.target is None:
            continue
        waiting = landing.get((x, other))
        while waiting and position.get(instrs[waiting[0]].target) != x:
            waiting.popleft()
        opener = waiting[0] if waiting and waiting[0] < x else None
        if opener is None:
            continue
        for j in range(opener + 1, x):
            inner = instrs[j]
            if inner.opname == test.opname and inner.target == test.target:
                inner.target = test.offset
