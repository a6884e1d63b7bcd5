# ruff: noqa
"""Short-circuit and/or/not in value and in condition position, in any nesting."""

from ._cases import cases
from ._support import Truth

T3 = [(a, b, c) for a in (0, 1) for b in (0, 2) for c in (0, 3)]
T4 = [(a, b, c, d) for a in (0, 1) for b in (0, 1) for c in (0, 1) for d in (0, 1)]


@cases(*T3)
def value_and_or(a, b, c):
    return a and b or c


@cases(*T3)
def value_or_and(a, b, c):
    return a or b and c


@cases(*T3)
def value_paren_or_then_and(a, b, c):
    return (a or b) and c


@cases(*T3)
def value_and_paren_or(a, b, c):
    return a and (b or c)


@cases(*T3)
def assign_and_or(a, b, c):
    x = a and b or c
    return x


@cases(*T3)
def cond_and_or(a, b, c):
    if a and b or c:
        return "yes"
    return "no"


@cases(*T3)
def cond_not_or_and(a, b, c):
    if not (a or b) and c:
        return 1
    return 2


@cases(*T3)
def cond_not_and(a, b, c):
    if not (a and b):
        return c
    return -c


@cases(*T3)
def cond_or_not(a, b, c):
    if a or not b or c:
        return True
    else:
        return False


@cases(*T4)
def cond_two_groups(a, b, c, d):
    if (a or b) and (c or d):
        return "both"
    return "neither"


@cases(*T4)
def cond_and_of_ors_or(a, b, c, d):
    if a and b or c and d:
        return 1
    elif a or b and not c:
        return 2
    return 3


@cases(*T4)
def value_complex(a, b, c, d):
    return (a and not b) or (c and d) or (not a and not d)


@cases(*T4)
def value_nested_deep(a, b, c, d):
    return a or (b and (c or (d and a)))


@cases(*T3)
def not_value(a, b, c):
    return not a, not (a and b), not a or b, not (a or b or c)


@cases(*T3)
def bool_in_while(a, b, c):
    n = 0
    while (a or n < 2) and not (b and n > 0) and n < 5:
        n += 1
        if c:
            a = 0
    return n


@cases(*T3)
def bool_in_comprehension(a, b, c):
    return [x for x in range(6) if x % 2 and a or x > 3 and (b or c)]


@cases(*T3)
def bool_in_ternary(a, b, c):
    return (a or b) if (b and c) else (c or a)


@cases(("", None), ("x", None), ("", "d"), ("x", "d"))
def or_default(value, default):
    return value or default or "fallback"


@cases((0,), (1,), (5,))
def and_guard(n):
    return n and 10 // n


@cases(*T3)
def condition_with_calls(a, b, c):
    log = []

    def f(tag, v):
        log.append(tag)
        return v

    if f("a", a) and (f("b", b) or f("c", c)):
        log.append("body")
    return log


@cases(*T3)
def if_and_else_chain(a, b, c):
    if a and b:
        r = 1
    elif a and c:
        r = 2
    elif b or c:
        r = 3
    else:
        r = 4
    return r


@cases(*T3)
def assert_like_guard(a, b, c):
    if not a and not b and not c:
        return "none"
    return "some"


@cases(*T4)
def mixed_and_or_value_stmt(a, b, c, d):
    x = a or b
    y = c and d
    z = x and y or (x or y) and 5
    return x, y, z


@cases((0, 1), (1, 0), (2, 3))
def not_compare(a, b):
    if not a < b:
        return "ge"
    return "lt"


@cases((None,), ([],), ([1],))
def truthiness_of_objects(x):
    if x is None or not x:
        return "empty"
    return "full"


@cases(*T3)
def while_and_or_condition(a, b, c):
    # Found by the property test: `while A and B or C` as a loop test.
    n = 0
    while n < a and b or n < c:
        n += 1
    return n



@cases((0, 0), (0, 3), (1, 0), (1, 3), (2, 2))
def condition_with_constant_false_part(w, limit):
    # Found by the property test: `A and <falsy constant> or B` folds into a test whose two
    # exits meet (A is only truth-tested).
    Truth.asked = 0
    n = 0
    while Truth(w < 2) and -(not 9) or w < limit:
        w += 1
        n += 1
        if n > 5:
            break
    if Truth(n > 1) and 0 or n > 3:
        n += 10
    return w, n, Truth.asked


@cases((None, 1, 2), (3, 1, 2), (3, -5, 2), (3, 1, -9), (0, 0, 0))
def value_or_kept_over_lines_before_another_and(rows, i, j):
    return (i >= 0 and j >= 0 and
            (rows is None or
             (i >= -rows) != False and (i < rows) != False) and
            (j >= -3) != False and (j < 3) != False)


@cases(*T4)
def value_or_of_an_and_then_and(a, b, c, d):
    return (a or (b and c)) and d, (a >= 2 or (a <= 0 and a % 2 == 0)) and all(x == 1 or x % 2 == 0 for x in (b, c))


@cases((0, 0), (2, 5), (None, 1), (3, -1))
def or_of_an_or_ending_in_a_constant(b, w):
    # ``(b or 4) or ...``: the 4 decides the outer test, reached by the inner one's jump too; the
    # compiler drops that test where the ``or`` reads flat (refused on 3.12+ before)
    x = (b or 4) or 1 < b
    while w < 3 or w < 1:
        w += 1
    return x, w


def _twice(k):
    return 2 * k


@cases((1, 2), (0, 3), (-1, 0))
def call_of_an_and_whose_first_operand_decides_the_or(p, y):
    # ``(-2 or y)`` is always -2: the compiler threads the ``or``'s jump, and the source read back
    # (``-2 and 0``) folds to a constant. The callee stays ``_twice`` whichever way the value comes
    if p:
        b = _twice(p)
    else:
        b = _twice((-2 or y) and -0)
    return b
