# ruff: noqa
"""Conditional expressions and the walrus operator."""

from ._cases import cases


@cases((1,), (-1,), (0,))
def sign(x):
    return 1 if x > 0 else -1 if x < 0 else 0


@cases((1, 2), (3, 2))
def ternary_in_call(a, b):
    return max(a if a > b else b, 0), str(a if a else b)


@cases((1, 2), (0, 2))
def ternary_nested_left(a, b):
    return (a if b else b) if a else (b if a else a)


@cases((True, 1, 2), (False, 1, 2))
def ternary_in_arith(c, a, b):
    return 10 + (a if c else b) * 2


@cases((True,), (False,))
def ternary_lambda(c):
    f = (lambda x: x + 1) if c else (lambda x: x - 1)
    return f(10)


@cases(([1, 2, 3, 4],), ([],))
def walrus_in_if(xs):
    if (n := len(xs)) > 2:
        return n * 2
    return n


@cases(([3, 1, 4, 1, 5],),)
def walrus_in_comprehension(xs):
    total = 0
    sums = [total := total + x for x in xs]
    return sums, total


@cases(([5, 0, 3],), ([0],))
def walrus_in_while(data):
    data = list(data)
    out = []
    while (item := data.pop()) != 0:
        out.append(item)
    return out, item


@cases((4,), (10,))
def walrus_in_comprehension_condition(n):
    return [y for x in range(n) if (y := x * x) % 2 == 0], n


@cases((1, 2), (0, 0))
def walrus_value(a, b):
    r = (c := a + b) * c
    return r, c


@cases((3,), (0,))
def ternary_as_condition(x):
    if (x if x > 1 else 0):
        return "big"
    return "small"


@cases((1, 0), (0, 1), (0, 0))
def ternary_with_bool(a, b):
    return (a and "A") if b else (b or "B")


@cases(("  abc # note ", "#"), ("  plain  ", "#"), ("#only", "#"))
def ternary_inside_a_slice_before_return(line, prefix):
    # configparser._Line._strip_inline: 3.12+ copies the returning code after the conditional
    # expression into both of its branches, so they never meet
    at = line.find(prefix)
    return line[:at if at >= 0 else None].strip()


@cases((1, [1, 2]), (0, [3]), (2, []))
def ternary_choosing_a_call_argument_before_return(flag, items):
    return len(list(items) if flag else [flag]) + 1


# While tests holding a conditional expression with a constant arm. The compiler folds the
# constant's test away: its branch jumps straight on, so the test's two copies (top and bottom of
# the loop) are laid out differently, and a branch may reach its test through a lone jump.
BITS5 = [(x, c, a, y, w) for x in (0, 1) for c in (0, 1) for a in (0, 1) for y in (0, 1) for w in (0, 1)]


@cases(*BITS5[::3])
def while_test_conditional_of_conditional_with_constant(x, c, a, y, w):
    n = 0
    while (x if (3 if c else a) else y) or w:
        n += 1
        x, a, w = a, n % 2, 0
        if n > 3:
            break
    return n, x, a


@cases(*BITS5[1::3])
def while_test_constant_arm_in_value_arm(x, c, a, y, w):
    n = 0
    while ((a if c else 0) if x else y) and not w:
        n += 1
        x, y = y, n % 2
        if n > 4:
            return "bound", n
    return n, x, y


@cases(*BITS5[2::3])
def while_test_false_constant_arm_in_test(x, c, a, y, w):
    n = 0
    while w or (x if (a if c else None) else y):
        n += 1
        w, c = 0, n % 2
        y = y and n < 3
    else:
        n = -n
    return n, c


@cases(*BITS5[::4])
def while_test_constant_arms_empty_body(x, c, a, y, w):
    it = iter([1, 0, 1, 1])
    while (next(it, 0) if (x if (-3 if c else a) else '') else y) or (w and next(it, 0)):
        pass
    return list(it)


@cases((-3, 1, 0), (-3, 1, 1), (-3, 0, 0))
def returns_differing_only_in_callee(a, b, n):
    # two written returns (not ``return (abs if n == 0 else str)(a), 0``, which the flow check
    # refuses: its call is no longer the call of ``abs`` that the last line also makes)
    if b:
        if n == 0:
            return abs(a), 0
        else:
            return str(a), 0
    return abs(b), str(b)


@cases((0, 1, 0), (1, 2, 0), (1, 2, 1), (1, 0, 1))
def and_with_a_conditional_right_operand_stored_then_returned(a, b, c):
    # compilers that copy return tails copy ``x = ...; return x`` into the conditional's first
    # branch (refused on 3.10, 3.12+ before)
    x = a and (b if c else 7)
    return x


@cases((0, 1, 0), (1, 2, 0), (0, 2, 1), (0, 0, 1))
def return_or_with_a_conditional_right_operand(a, b, c):
    return a or (b if c else 7)


@cases((0, 1, 0, 1), (1, 2, 0, 0), (1, 2, 1, 1), (1, 0, 1, 0))
def return_and_of_two_conditionals(a, b, c, x):
    y = b
    return (y if c else 7) and (5 if x else y)


@cases((0, 1, 0), (1, 2, 0), (1, 2, 1), (1, 0, 1))
def return_chain_of_ands_ending_in_a_conditional(a, b, c):
    return a and b and (b if c else 7)


def _collect(*args):
    return args


@cases(("s", None), ("s", 0), ("s", 3))
def call_whose_last_argument_tests_for_none(text, count=None):
    # the test jumps when it is true (``count`` is None): read straight, the branches come out
    # swapped under a negated test, which compiles to the opposite layout; 3.12+ also copy the
    # call into both branches, where the flow check cannot name the copy reached by the jump
    return _collect(text, count if count is not None else -1)


@cases((0, 1), (1, 1), ("", 2))
def conditional_value_under_a_negated_test(flag, n):
    first = n if not flag else -n
    second = -n if flag is None else n
    return first, second


@cases(("ab", 1), ("  ", 2), ("", 3))
def display_that_goes_on_after_a_conditional_unpacked_into_it(el, x):
    # each branch of the conditional expression is read on its own copy of the stack, and the
    # display is added to after the branches meet: one branch's additions stayed in the other's
    return ({**({1: el} if el and not el.isspace() else {}), 2: x},
            [*([el] if el and not el.isspace() else []), x],
            {*({el} if el and not el.isspace() else set()), x})


def _sorted_keywords(**kwargs):
    return sorted(kwargs.items())


def _note(log, value):
    log.append(value)
    return value


@cases((0,), (1,), ("",))
def conditional_values_among_many_keyword_arguments(c):
    # more than 15 keywords: 3.10 builds them with MAP_ADD, and copies the rest of the call after
    # the second conditional value whole into the branch that jumps (its first instruction has no
    # line of its own); the copy read as code of that branch spilled the keywords built so far
    log = []
    kwargs = dict(a=_note(log, 1) if c else _note(log, 2), b=_note(log, 3) if c else 4, k1=_note(log, 5),
                  k2=2, k3=3, k4=4, k5=5, k6=6, k7=7, k8=8, k9=9, k10=10, k11=11, k12=12, k13=13, k14=14,
                  k15=15, k16=16, k17=_note(log, 17), k18=18, k19=19, k20=20)
    return log, sorted(kwargs.items())


@cases((0,), (1,))
def conditional_value_then_many_keyword_arguments_returned(c):
    return _sorted_keywords(k0=0, k1=1, k2=2, k3=3, k4=4, k5=5, k6=6, k7=7, k8=8, k9=9, k10=10, k11=11, k12=12,
                            k13=13, k14=14, k15=15, k=1 if c else 2, j=3)
