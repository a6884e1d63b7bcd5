# ruff: noqa
"""if / elif / else in all shapes, including empty bodies and nested chains."""

from ._cases import cases


@cases((-5,), (0,), (5,), (50,), (500,))
def elif_chain(x):
    if x < 0:
        return "negative"
    elif x == 0:
        return "zero"
    elif x < 10:
        return "small"
    elif x < 100:
        return "medium"
    else:
        return "large"


@cases((-5,), (0,), (5,))
def elif_chain_assign(x):
    if x < 0:
        label = "neg"
    elif x == 0:
        label = "zero"
    else:
        label = "pos"
    return label


@cases((1,), (2,), (3,))
def elif_no_else(x):
    out = []
    if x == 1:
        out.append("one")
    elif x == 2:
        out.append("two")
    out.append("end")
    return out


@cases((True, True), (True, False), (False, True), (False, False))
def nested_if(a, b):
    if a:
        if b:
            r = 1
        else:
            r = 2
    else:
        if b:
            r = 3
        else:
            r = 4
    return r


@cases((1,), (0,))
def if_pass(x):
    if x:
        pass
    else:
        x = 10
    return x


@cases((1,), (0,))
def if_only_pass(x):
    if x:
        pass
    return x


@cases((3,), (-3,))
def early_return_then_code(x):
    if x < 0:
        return "neg"
    y = x * 2
    if y > 4:
        y -= 1
    return y


@cases((0,), (1,), (2,))
def else_if_not_elif(x):
    if x == 0:
        r = "a"
    else:
        r = "b"
        if x == 1:
            r += "c"
    return r


@cases((5, 3), (3, 5), (4, 4))
def if_else_both_return(a, b):
    if a > b:
        return a - b
    else:
        return b - a


@cases((1, 1), (1, 0), (0, 1), (0, 0))
def if_in_else_with_tail(a, b):
    out = 0
    if a:
        out += 1
    else:
        if b:
            out += 2
        out += 4
    return out


@cases(*[(i,) for i in range(7)])
def long_elif_with_ranges(n):
    if n == 0:
        return "zero"
    elif n in (1, 2):
        return "few"
    elif 3 <= n < 5:
        return "some"
    elif n == 5 or n == 6:
        return "many"
    return "lots"


@cases((1,), (None,))
def if_expression_statement(x):
    r = []
    if x is not None:
        r.append(x)
    return r


@cases((0,), (1,), (2,), (3,))
def conditions_with_raise(x):
    if x == 0:
        raise ValueError("zero")
    elif x == 1:
        raise KeyError(x)
    elif x == 2:
        return "two"
    return "other"


@cases((2,), (7,))
def if_constant_condition(x):
    if True:
        x += 1
    if 0:
        x = 1000
    while False:
        x = -1
    return x


@cases((0, 1, 2), (1, 0, 2), (1, 2, 0), (0, 0, 0), (3, None, 4))
def if_conditional_expression_condition(a, b, c):
    out = []
    if (b if a else c):
        out.append("yes")
    else:
        out.append("no")
    if not (a if b is None else c) and a != 2:
        out.append("second")
    return out


class _Ring:
    def __init__(self, kind):
        self.is_QQ, self.is_ZZ = kind == "QQ", kind == "ZZ"

    def get_ring(self):
        return _Ring("ZZ")


def _clear(f, K, convert):
    return 2, [x * 2 for x in f]


@cases(([1, 2], "QQ", False), ([3], "ZZ", True), ([], "ZZ", False), ([1], "RR", False))
def branches_meet_though_one_raises(f, kind, blackbox):
    # sympy's dup_isolate_real_roots_sqf: the code after ``if/elif ... raise`` is where both go on
    # (nothing but the exit post-dominates them), not a copy in each branch
    K = _Ring(kind)
    if K.is_QQ:
        (_, f), K = _clear(f, K, convert=True), K.get_ring()
    elif not K.is_ZZ:
        raise ValueError("not supported over %s" % kind)
    if len(f) == 0:
        return []
    roots = sorted(f)
    if not blackbox:
        return roots
    else:
        return [(a, K.is_ZZ) for a in roots]


class _Stream:
    def __init__(self):
        self.pos, self.reads = 0, []

    def read(self, n):
        self.reads.append(n)
        self.pos += n


@cases((0,), (7,), (25,), (-3,))
def else_clause_that_raises_before_the_code_after_the_if(pos):
    # tarfile's _Stream.seek: the first branch jumps over the raising else clause to the code after
    # the if statement (read with no join, that code went into the first branch)
    s = _Stream()
    if pos - s.pos >= 0:
        blocks, rest = divmod(pos - s.pos, 10)
        for _ in range(blocks):
            s.read(10)
        s.read(rest)
    else:
        raise ValueError("seeking backwards")
    return s.pos, s.reads


@cases((0, "a"), (1, "b"), (2, ""))
def else_clause_that_returns_before_the_code_after_the_if(state, name):
    # the same with an else clause that returns (http.client's putrequest raises there)
    log = []
    if state == 0:
        log.append("idle")
        state = 1
    else:
        return "busy", state
    log.append(name or "/")
    return log, state
