# ruff: noqa
"""Chained comparisons in value position whose last operand is a conditional expression: 3.12+
copies the last comparison and the returning code after the chain into both of its branches.
(3.10 copies the return into one branch only and is still refused: tests/known_gaps.txt.)"""

from ._cases import cases


CHAIN_ARGS = [(a, b, c, x) for a in (-1, 0, 2) for b in (0, 1) for c in (-1, 2) for x in (0, 1)]


@cases(*CHAIN_ARGS[::2])
def chain_value_ending_in_conditional(a, b, c, x):
    return a < b <= (c if x else a)


@cases(*CHAIN_ARGS[1::2])
def chain_value_in_conditional_ending_in_conditional(a, b, c, x):
    return b if c > 0 else (a < b <= (1 if x else a))


@cases(*CHAIN_ARGS[::3])
def chain_value_ending_in_conditional_in_tuple(a, b, c, x):
    return (a < b <= (c if x else a)), [b < c <= (a if x else 1)]
