# ruff: noqa
"""Comparisons: chained, identity, membership, in value and condition position."""

from ._cases import cases


@cases((1, 2, 3), (3, 2, 1), (1, 1, 2), (2, 1, 2))
def chained_value(a, b, c):
    return a < b < c


@cases((1, 2, 3, 4), (1, 3, 2, 4), (4, 3, 2, 1))
def long_chain(a, b, c, d):
    return a < b <= c < d


@cases((1, 2, 3), (3, 2, 1), (2, 2, 2))
def chained_condition(a, b, c):
    if a < b < c:
        return "increasing"
    if a == b == c:
        return "flat"
    return "other"


@cases((1, [1, 2]), (3, [1, 2]), (None, [None]))
def membership(x, xs):
    return x in xs, x not in xs, not x in xs, x is None, x is not None


@cases((1, 2), (2, 1), (1, 1))
def all_relations(a, b):
    return [a < b, a <= b, a == b, a != b, a > b, a >= b]


@cases((5,), (50,), (500,))
def chain_with_side_effects(x):
    log = []

    def v(n):
        log.append(n)
        return n

    ok = v(1) < v(x) < v(100) < v(1000)
    return ok, log


@cases((1, 2, 3), (2, 1, 3), (1, 2, 0))
def chain_in_while(a, b, c):
    n = 0
    while a < b < c and n < 3:
        n += 1
        a -= 1
    return n


@cases((1, "a"), (2, "b"))
def mixed_types_equality(a, s):
    return a == 1 and s != "a", (a, s) == (1, "a"), [a] != [s]


@cases((0, 5, 10), (11, 5, 10), (5, 5, 5))
def chain_not(a, b, c):
    return not (a <= b <= c), not a <= b


@cases((3,), (7,), (11,))
def chained_in_ternary(x):
    return "mid" if 5 <= x <= 10 else "out"


@cases(([1, 2], [1, 2]), ([1], [2]))
def identity_vs_equality(a, b):
    c = a
    return a == b, a is b, c is a, a is not b


@cases((1, 2, 3), (3, 3, 3))
def chained_is_in(a, b, c):
    return a in [b, c] in [[b, c]], a is b is c


@cases((float("nan"),), (1.0,))
def nan_compare(x):
    return x == x, x != x, x < x or x >= x


@cases((0, 5, -1), (1, 5, -1), (1, -5, 3), (0, 0, 0), (1, 0, 0))
def chain_condition_with_conditional_operand(b, c, s):
    # Found by the property test: a conditional expression as the last operand of a chained
    # comparison in condition position.
    if s < 0 <= (c if b else -1):
        return "in"
    return "out"


@cases((0, 5), (7, 5), (-9, 5), (3, 2))
def chain_with_call_operands(x, limit):
    # _pydecimal.Decimal.rotate: ``-context.prec <= int(other) <= context.prec``; the calls log
    # their order, which the chain must keep (low, then middle, then high)
    log = []

    def low():
        log.append("low")
        return -limit

    def middle():
        log.append("middle")
        return x

    def high():
        log.append("high")
        return limit

    if not (low() <= middle() <= high()):
        log.append("outside")
    if low() < middle() < high():
        log.append("inside")
    return log


@cases((1, 2, 3), (3, 2, 1), (1, 1, 1))
def chain_value_then_return(a, b, c):
    # 3.12+ copies the code after a chain (up to the return) into both of the chain's exits
    if a == 1:
        x = a < b < c
        return x
    if b == 1:
        return repr(a <= b <= c)
    return (a < b < c), a, [b > c > a]


@cases((0,), (2,), (5,), (9,))
def chain_as_loop_test_and_assert(x):
    # 3.12+ runs a copy of the code after the statement in each exit of the chain
    while 1 < x < 4:
        x += 1
    assert -1 < x < 9, x
    return x


@cases((None, None, 1), (1, 1, 1), (None, None, None), ("a", None, None), (1, 1, None))
def chain_ending_in_is_none_test(node, clock_seq, a):
    # uuid.uuid1: the chain's last ``is None`` becomes a jump on None (POP_JUMP_IF_NOT_NONE),
    # taken when the chain fails
    out = []
    if a is not None and node is clock_seq is None:
        out.append("both none")
    if node is clock_seq is not None:
        out.append("same, not none")
    while node is clock_seq is None and len(out) < 3:
        out.append("loop")
    return out


@cases((1, 0, 0), (1, 2, 0), (0, 2, 5), (0, 1, 5), (0, 3, 5), (0, 0, 1))
def chain_exit_with_a_copied_return_inside_try(b, c, x):
    # the chain's exit pops the middle operand, then runs a copy of ``return not x``; 3.12+ leave
    # both returns out of the try's exception entries, which then cover the copy apart from the
    # original (refused before: "unrecognised chained comparison")
    try:
        if b:
            pass
        elif not c < b <= 1 % x:
            return not x
    except ZeroDivisionError:
        return "zero"
    return None


@cases((-1, 5, [1]), (0, 5, [1]), (3, 5, []), (-2, 0, [1, 2]))
def chained_comparison_test_in_a_for_loop_before_a_copied_return(a, b, xs):
    # the chain's exit pops the middle operand, then runs a copy of the return after it, which
    # first pops the loop's iterator from under the value (``SWAP 2; POP_TOP``): the copy was
    # not recognised ("unrecognised chained comparison")
    for x in xs:
        if a < 0 <= 1:
            pass
        return a
    return b


@cases((0, 1), (0, 3), (1, 1), (0, -1), (2, 5))
def chained_comparison_ending_in_a_chain_in_an_except_clause_under_finally(a, x):
    # the first test's exit pops the middle operand, then leaves the clause (``POP_EXCEPT``, a
    # jump); the last test's false branch leaves by another copy of that exit, which 3.13 lays
    # out apart (the finally's range starts between them): "unrecognised chained comparison"
    log = []
    try:
        a = 1 // a
    except ZeroDivisionError:
        if x < 2 <= (a < 2 <= a):
            log.append("chain")
    finally:
        log.append("finally")
    return (a, log)


@cases((0, 1, 2), (1, 1, 2), (0, 3, 2), (0, -1, -2), ("x", 1, 2))
def chained_comparison_value_stored_before_a_return_in_an_except_clause(a, c, y):
    # 3.10 copies the store and the clause's exit after both ends of the chain, then makes the
    # return of one copy a jump to the other: the copies agree up to that jump, with a
    # ``POP_EXCEPT`` in each (refused before: "unrecognised chained comparison"); the return of a
    # constant is what 3.10 copies, the recompiled layout shows the store
    try:
        a = 1 // a
    except (ZeroDivisionError, TypeError):
        a = 4 < c <= y
        return 5
    return a


@cases((0, 0, 1, 2), (0, 1, 1, 2), (0, 0, -3, 2), (0, 0, 0, -1), (1, 0, 0, 5))
def chained_comparison_test_before_a_return_in_an_except_clause(a, b, y, z):
    # the chain's cleanup jumps to a copy of the clause's exit (``POP_EXCEPT`` and the return)
    try:
        a = 1 // a
    except ZeroDivisionError:
        if b:
            pass
        elif not -1 < y <= z:
            return "outside"
    return a
