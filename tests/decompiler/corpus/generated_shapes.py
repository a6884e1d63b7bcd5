# ruff: noqa
"""Shapes the property-based generator of test_roundtrip_properties found, written out
so every CPython runs them: tests that continue inside comprehensions and loops, code only a loop
reaches, values computed inside tests, constants the compiler folds part of the way."""

from ._cases import cases


@cases((0, [1, 5, 9]), (4, [1, 5, 9]), (9, []))
def comprehension_filter_with_chained_comparison(a, xs):
    # the filter's `or` over a chained comparison reads as nested tests that continue
    return [x + a for x in xs if (0 < a <= 5) or x > 4], [x for x in xs if (a < x <= 9) or a]


@cases((3, 0, 1), (3, 1, 1), (0, 1, 0))
def while_continue_then_return(a, b, c):
    # the return after the loop body's continue is laid out after the loop's last block
    while a:
        a -= 1
        if c and a > 1:
            continue
        return b, a
    return "done", a


@cases((3, 0, 1), (3, 1, 0), (0, 0, 0), (2, 1, 1))
def while_branches_meet_in_a_return(a, b, c):
    # the branches of an if meet in code that ends the function: the loop body's own
    while a:
        a -= 1
        if b:
            if c and a:
                continue
        elif c:
            pass
        return a, b
    return None


@cases((3, 0), (3, 1), (0, 1))
def while_else_with_trailing_continue(a, b):
    # the body never runs off its end, so there is no copy of the test at the bottom
    log = []
    while a:
        a -= 1
        if b and a == 1:
            break
        log.append(a)
        continue
    else:
        for x in range(2):
            log.append(("else", x))
    return log


@cases((3, 0, 1), (3, 1, 1), (0, 1, 0))
def while_body_ending_in_break(a, b, c):
    # the body's last statements run into the loop's exit
    if c > 5:
        pass
    else:
        while a:
            a -= 1
            if b and a:
                continue
            c -= a < c <= max(a, 6)
            break
    return a, c


@cases((0, 1), (1, 0), (1, 1))
def return_through_nested_except_clauses(a, b):
    log = []
    try:
        try:
            log.append(1 // a)
        except ZeroDivisionError:
            try:
                log.append(1 // b)
            except ZeroDivisionError:
                return "inner", log
    finally:
        log.append("finally")
    return "end", log


@cases((3, 1, 1), (3, 0, 2), (0, 0, 0))
def values_computed_inside_while_tests(a, b, c):
    n = 0
    while -(b if a > n else c) < 0 and n < 5:
        n += 1
    m = 0
    while m < 4 and -(a < m + 2 <= 4):
        m += 1
    k = 0
    while k < 3 and 4 * (b if c else 1):
        k += 1
    return n, m, k


@cases((0, 1), (2, 0), (5, 5))
def constant_folding_half_way(a, b):
    # `8 and 3` is folded into 3 after the `or` is laid out: the constant reaches `//` by a jump
    x = (8 and 3 or not b) // 3
    y = (not (-3 or b)) // 3
    z = -(5 if 1 else a)
    return x, y, z, (-1 or 7) * 3


@cases(([1, 2], 0), ([], 1), ([3], 1))
def for_else_test_only(xs, b):
    # the else clause only tests a value: the test is still run
    for x in xs:
        break
    else:
        if b:
            pass
    return xs


@cases((1, 0), (0, 1), (1, 1))
def while_test_joining_alike(a, b):
    # `(3 if b else 3)` is true either way: both outcomes of b's test enter the body
    n = 0
    while n < 2 and (3 if b else 3) or n < 1:
        n += 1
    return n


@cases(([1, 2, 3], 0), ([1, 2, 3], 2), ([], 1))
def return_constant_inside_for_in_try(xs, a):
    for x in xs:
        try:
            if x == a:
                break
            return 5
        except ArithmeticError:
            pass
    else:
        return "empty"
    return None
