# ruff: noqa
"""Calls with */** in any mix; positional-only, keyword-only, default and variadic parameters."""

from ._cases import call, cases


def _show(*args, **kwargs):
    return args, sorted(kwargs.items())


@cases((1, [2, 3], {"k": 4}),)
def star_and_double_star(a, xs, kw):
    return [
        _show(a, *xs),
        _show(*xs, a),
        _show(*xs, *xs),
        _show(a, *xs, b=1, **kw),
        _show(**kw, b=2),
        _show(*xs, **kw, **{"z": 0}),
        _show(a, *xs, a, *xs, c=3, **kw),
        _show(**{"x": 1}, **kw),
        _show(*(), **{}),
    ]


@cases((1, 2),)
def keyword_calls(a, b):
    return _show(a, b=b), _show(b=b, a=a), _show(a, *[b], c=3)


@cases((1, 2), call(1, 2, 3), call(1, 2, c=5), call(1, b=5))
def positional_only(a, b, /, c=0):
    return a, b, c


@cases(call(1, b=2), call(1, b=2, c=3), (1,))
def keyword_only(a, *, b, c=10):
    return a, b, c


@cases(call(1, e=0), call(1, 2, 3, 4, 5, e=6, d=7, z=8))
def all_parameter_kinds(a, b=2, /, c=3, *args, d=4, e, **kwargs):
    return a, b, c, args, d, e, sorted(kwargs.items())


@cases((), (1, 2, 3))
def varargs_only(*args):
    return args, len(args)


@cases(call(), call(x=1, y=2))
def kwargs_only(**kw):
    return sorted(kw)


@cases(call(1, 2), call(1, 2, 3, k=4))
def star_args_after_kwonly_marker(a, b, *rest, k=None):
    return a, b, rest, k


@cases((3,),)
def method_calls(n):
    s = "a,b,c"
    parts = s.split(",", n)
    d = dict.fromkeys(parts, 0)
    d.update(a=1)
    return parts, d, "-".join(parts).upper().replace("A", "x")


@cases((2,),)
def nested_call_chain(n):
    return list(map(str, filter(None, range(n * 3)))), sorted([3, 1, 2], key=lambda x: -x, reverse=True)


@cases((1, 2, 3),)
def call_with_trailing_star_kwargs(a, b, c):
    args = (b, c)
    kwargs = {"sep": "|"}
    return "".join(map(str, (a, *args))), _show(a, *args, sep=":", **{"end": "!"})


@cases((4,),)
def call_result_subscript_and_attr(n):
    return _show(n)[0][0], dict(a=n).get("a"), (lambda: [n])()[0]


@cases(call(1), call(1, None), call(1, [5]))
def mutable_default_pattern(x, acc=None):
    if acc is None:
        acc = []
    acc.append(x)
    return acc


@cases(call(2), call(2, 3))
def default_referencing_constant(x, y=2 ** 10):
    return x * y


@cases((1,), call(1, 2, 3))
def posonly_with_varargs(a, /, *args):
    return a, args


@cases(call(1, kw=2), call(1))
def posonly_and_kwonly(a, /, *, kw=7):
    return a + kw


@cases((5,),)
def super_long_call(n):
    return _show(n, n + 1, n + 2, n + 3, n + 4, n + 5, n + 6, n + 7, n + 8, n + 9, a=1, b=2, c=3, d=4, e=5, f=6)


def _keywords(**kw):
    return sorted(kw.items())


@cases(({"a": 1},), ({"if": 2},), ({"k": 3},))
def keyword_arguments_that_are_python_keywords_or_repeated(kw):
    try:
        repeated = _keywords(**{"k": 1}, **kw)
    except TypeError as exc:
        repeated = type(exc).__name__
    return _keywords(**{"if": 1, "x": 2}), _keywords(**kw, **{"class": 0}), repeated, _keywords(**kw, z=9)


@cases((1, 2), (0, "b"))
def spread_displays_of_known_items(a, b):
    # a list or tuple display spread into a call is its items passed one by one (sympy's
    # ``Add(*[x, y, z])``): read back so, the value check compares it as the same call
    log = []
    log.append(_show(*[a, b, a]))
    log.append(_show(*(b, a)))
    log.append(_show(*[]))
    log.append(_show(*(1, 2)))
    return log, _show(*[a + 1, b], **{"k": a}), _show(*(a,), **dict(j=b))


class _Shower:
    show = staticmethod(_show)


@cases((1, 2), (0, "b"))
def spread_display_with_keywords_into_an_attribute(a, b):
    # ``M.from_tuples(*[index], names=names)`` (statsmodels) reads back as a plain call with
    # keywords; on 3.11 and 3.12 the global's NULL lies below it, and the attribute is its own
    return _Shower.show(*[a], names=b), _show(*[a, b], k=a)
