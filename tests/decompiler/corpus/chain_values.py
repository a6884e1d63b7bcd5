# ruff: noqa
"""Chained comparisons nested in conditions, conditional expressions and boolean operators, in
value and in test position, with and without a return after them.

When the last operand is a conditional expression, 3.10 and 3.12+ copy the last comparison and
the returning code after the chain into the branches (3.10 into all but the one that falls
through); a small returning block after a chain in test position is copied into its exit."""

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


@cases(*CHAIN_ARGS[::2])
def chain_value_ending_in_conditional_not(a, b, c, x):
    return not (a < b <= (c if x else a))


@cases(*CHAIN_ARGS[1::2])
def chain_value_ending_in_conditional_plus(a, b, c, x):
    return a < b <= (c if x else a) + 1


@cases(*CHAIN_ARGS[::2])
def chain_value_ending_in_conditional_same_arms(a, b, c, x):
    return a < b <= (c if x else c)


@cases(*CHAIN_ARGS)
def chain_value_ending_in_nested_conditional(a, b, c, x):
    return a < b <= (c if x else (a if c > 0 else b))


@cases(*CHAIN_ARGS[1::2])
def chain_value_ending_in_conditional_with_or_arm(a, b, c, x):
    return a < b <= (c if x else (a or b))


@cases(*CHAIN_ARGS[::2])
def chain_value_ending_in_conditional_with_or_first_arm(a, b, c, x):
    return a < b <= ((c or a) if x else b)


@cases(*CHAIN_ARGS[1::2])
def chain_value_three_tests_ending_in_conditional(a, b, c, x):
    return a < b < c <= (x if a else b)


@cases(*CHAIN_ARGS[::2])
def chain_value_stored_then_returned(a, b, c, x):
    y = a < b <= (c if x else a)
    return y


@cases(*CHAIN_ARGS[1::2])
def chain_value_stored_then_used(a, b, c, x):
    y = a < b <= (c if x else a)
    y = [y, x]
    return y


@cases(*CHAIN_ARGS[::2])
def chain_value_conditional_middle(a, b, c, x):
    return a < (b if x else c) <= c


@cases(*CHAIN_ARGS[1::2])
def chain_value_conditional_first(a, b, c, x):
    return (a if x else b) < b <= c


@cases(*CHAIN_ARGS[::2])
def chain_value_in_and(a, b, c, x):
    return x and a < b <= c


@cases(*CHAIN_ARGS[1::2])
def chain_value_in_or_ending_in_conditional(a, b, c, x):
    return x or a < b <= (c if x else a)


@cases(*CHAIN_ARGS)
def chain_values_in_and_ending_in_conditional(a, b, c, x):
    return a < b <= c and b < c <= (a if x else 1)


@cases(*CHAIN_ARGS[::2])
def chain_values_in_or(a, b, c, x):
    return a < b <= c or b < c <= x


@cases(*CHAIN_ARGS[1::2])
def chain_in_conditional_test(a, b, c, x):
    return a if b < c <= x else c


@cases(*CHAIN_ARGS)
def chains_in_conditional_arms(a, b, c, x):
    return (a < b <= c) if x else (b < c <= (a if x else 2))


@cases(*CHAIN_ARGS[::2])
def chain_ending_in_chain(a, b, c, x):
    return a < b <= (b < c <= x)


@cases(*CHAIN_ARGS[1::2])
def chain_values_in_call(a, b, c, x):
    return str(a < b <= c) + str(x)


@cases(*CHAIN_ARGS[::2])
def chain_test_then_return_not(a, b, c, x):
    if b < 3 <= c:
        pass
    return not x


@cases(*CHAIN_ARGS[1::2])
def chain_test_then_return_negative(a, b, c, x):
    if a < b <= c:
        x = 1
    return -x


@cases(*CHAIN_ARGS)
def chain_test_nested_in_elif_then_return_not(a, b, c, x):
    if x:
        if a:
            pass
        elif b:
            if b < 3 <= c:
                pass
    return not c


@cases(*CHAIN_ARGS[::2])
def chain_test_ending_in_conditional(a, b, c, x):
    if a < b <= (c if x else a):
        return 1
    return 2


@cases(*CHAIN_ARGS[1::2])
def chain_test_ending_in_conditional_no_return(a, b, c, x):
    y = 0
    if a < b <= (c if x else a):
        y = 1
    return y


@cases(*CHAIN_ARGS[::2])
def chain_test_negated_then_return_not(a, b, c, x):
    if not (a < b <= c):
        return 1
    return not c


@cases(*CHAIN_ARGS)
def chain_tests_in_and_or(a, b, c, x):
    if a < b <= c and x:
        return 1
    elif b < c <= (a if x else 2) or a:
        return 2
    return 3


@cases(*CHAIN_ARGS[1::2])
def chain_tests_in_conditional_test(a, b, c, x):
    if (a < b <= c) if x else (b < c <= a):
        return 1
    return 2


@cases(*CHAIN_ARGS[::2])
def chain_while_test_ending_in_conditional(a, b, c, x):
    n = 0
    while a < b + n <= (c if x else 3):
        n += 1
    return n


@cases(*CHAIN_ARGS[1::2])
def chain_elif_test_then_return_not(a, b, c, x):
    if x:
        return 1
    elif a < b <= c:
        c = 2
    return not c


@cases(*[(x, a, b, c, k) for x in (0, 1) for a in (1, 2) for b in (1, 2) for c in (1, 2) for k in (0, 1)])
def four_operand_chain_stored_after_a_raising_test(x, a, b, c, k):
    # the if before the chain is tried as a compound condition running on into the chain: the
    # chain's exit lies past the operand being read (this read looped for ever)
    if x:
        raise ValueError(x)
    same = a == b == c == 1
    if k:
        found = 1
    else:
        found = 2
    return same, found
