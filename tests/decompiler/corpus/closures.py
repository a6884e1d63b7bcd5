# ruff: noqa
"""lambda, closures, nonlocal and global."""

from ._cases import cases

COUNTER = 0
SETTINGS = {"mode": "a"}


@cases((1, 2), (3, -1))
def lambda_basic(a, b):
    add = lambda x, y=b: x + y
    return add(a), add(a, 10), (lambda: a)()


@cases((3,),)
def lambda_varargs(n):
    f = lambda *args, k=1, **kw: (args, k, kw)
    return f(n, n), f(k=n, z=2)


@cases((5,),)
def closure_counter(start):
    def make():
        count = start

        def inc(step=1):
            nonlocal count
            count += step
            return count

        return inc

    inc = make()
    return inc(), inc(2), inc()


@cases((2,),)
def closure_over_argument(x):
    def outer(y):
        def inner(z):
            return x + y + z
        return inner
    return outer(10)(100)


@cases((1,),)
def nonlocal_in_nested_levels(x):
    a = x

    def level1():
        nonlocal a
        a += 1

        def level2():
            nonlocal a
            a *= 10
            return a

        return level2()

    r = level1()
    return r, a


@cases((7,),)
def global_write(n):
    global COUNTER
    COUNTER = n
    COUNTER += 1
    return COUNTER


@cases(("b",),)
def global_read_and_mutate(mode):
    old = SETTINGS["mode"]
    SETTINGS["mode"] = mode
    new = SETTINGS["mode"]
    SETTINGS["mode"] = old
    return old, new


@cases((3,),)
def closure_cell_modified_after_creation(n):
    value = 0

    def get():
        return value

    value = n
    return get()


@cases((4,),)
def closure_in_loop_late_binding(n):
    fs = []
    for i in range(n):
        fs.append(lambda: i)
    return [f() for f in fs]


@cases((2,),)
def decorator_closure(n):
    def times(k):
        def deco(f):
            def wrapper(*args, **kwargs):
                return f(*args, **kwargs) * k
            return wrapper
        return deco

    @times(n)
    def base(x):
        return x + 1

    return base(3)


@cases((1,),)
def unbound_local_error(x):
    def f():
        if x > 5:
            y = 1
        return y
    try:
        return f()
    except UnboundLocalError:
        return "unbound"


@cases((3,),)
def argument_is_cell(n):
    def get():
        return n
    n += 1
    return get()


@cases((2,),)
def closure_shared_by_two(n):
    def make():
        v = n

        def get():
            return v

        def put(x):
            nonlocal v
            v = x

        return get, put

    get, put = make()
    put(get() + 5)
    return get()


@cases((3,),)
def recursive_nested(n):
    def fact(k):
        return 1 if k <= 1 else k * fact(k - 1)
    return fact(n + 2)


@cases((0,),)
def del_cell_variable(n):
    x = n + 1

    def f():
        return x

    before = f()
    del x
    try:
        f()
    except NameError:
        return before, "gone"
    return before, "still there"


@cases((1, 2),)
def lambda_nested_in_lambda(a, b):
    f = lambda x: lambda y: x * y + a
    return f(b)(3)


@cases((5,),)
def global_declared_not_assigned(n):
    global COUNTER
    return COUNTER is not None and n


@cases((1,), (2,))
def nonlocal_only_deleted(n):
    # ``nonlocal v; del v`` as the only mention of ``v`` in the nested function: without its
    # declaration the recompiled ``drop`` deleted a local of its own (UnboundLocalError)
    v = n * 10

    def drop():
        nonlocal v
        del v

    drop()
    try:
        return v
    except NameError as exc:
        return type(exc).__name__


@cases((3,),)
def nonlocal_in_class_body(n):
    v = n

    class Shifted:
        nonlocal v
        v = v + 1
        w = v * 2

    return v, Shifted.w, hasattr(Shifted, "v")


@cases(("k", 0), ("z", 0), (None, -1))
def lambda_conditional_over_lines(key, default):
    # the branches of a lambda's conditional expression on their own lines: 3.10 gives each its
    # own return (lines differ), which reads as an if statement, not one expression
    if key is None:
        report = lambda n, d: (n, d) if d else (
            n,
            default,
        )
    else:
        report = (
            lambda n, d: (n, d[key])
            if key in d
            else (n, default)
        )
    return report(1, {"k": 2}), report(2, {})


@cases((2, 5), (-1, 0))
def nested_function_whose_only_read_of_a_cell_is_folded_away(a, c):
    # ``7 or c`` compiles to the constant alone, yet ``c`` stays a free variable of g and a cell
    # of this function: the closure is part of the behaviour
    def g(k):
        """Adds seven."""
        nonlocal a
        a = a + k
        return (7 or c) + k

    class Folded:
        size = (3 or c) * 2

    return g(a), a, g.__code__.co_freevars, len(g.__closure__), Folded.size, Folded.__name__


@cases(([1, 2], [2, 3], 2), ([2], [2], 2))
def twin_lambdas_and_generators_on_two_lines_beside_others(first, second, point):
    # read back on one line, each pair of twins is one code constant on 3.10 while other
    # lambdas and generators of the same name remain: the flow check pairs each with its twin
    if (any(p != point for p in first) or
            any(p != point for p in second)):
        found = all(x in second for x in first)
    else:
        found = None
    scale = lambda x: x * point
    steps = [lambda x: max(x, scale(x)),
             point,
             lambda x: max(x, scale(x)),
             [point, lambda x: first + [x]]]
    return found, steps[0](3), steps[2](-1), steps[3][1](7)


@cases((2,), (0,))
def nested_function_keeps_cells_of_a_closure_in_code_that_never_runs(n):
    # the closure after the raise makes ``k`` and ``total`` cells of ``unfinished``; the compiler
    # drops the closure's code but keeps the cells, and so must the nested function read back
    def unfinished(k):
        """The code after the raise never runs."""
        total = k + n
        if k:
            return total
        raise ValueError(k)

        def later():
            return k, total

        return later

    try:
        return unfinished(n), unfinished.__code__.co_cellvars
    except ValueError as exc:
        return repr(exc), unfinished.__code__.co_cellvars
