# ruff: noqa
"""Generators: yield, yield from, return values, yield as expression, generators with try/finally."""

from ._cases import cases


@cases((3,), (0,))
def gen_simple(n):
    for i in range(n):
        yield i * 2


@cases((3,),)
def gen_with_return(n):
    yield n
    return n * 10


@cases((2,),)
def gen_yield_from(n):
    r = yield from gen_with_return(n)
    yield r
    yield from range(n)


@cases((3,),)
def gen_yield_expression_value(n):
    received = []
    for i in range(n):
        x = yield i
        received.append(x)
    return received


@cases((0,), (1,))
def gen_try_finally(kind):
    try:
        yield 1
        if kind:
            raise ValueError
        yield 2
    finally:
        yield "cleanup"


@cases((4,),)
def gen_while_break(n):
    i = 0
    while True:
        if i >= n:
            break
        yield i
        i += 1
    yield "end"


@cases((3,),)
def gen_nested_generators(n):
    def inner(k):
        for j in range(k):
            yield j
    for i in range(n):
        yield list(inner(i))


@cases((2,),)
def gen_yield_in_expression(n):
    a = (yield n) or 5
    b = [(yield a), (yield a + 1)]
    yield b


@cases((3,),)
def gen_empty_return(n):
    if n > 2:
        return
    yield n


@cases((0,),)
def gen_never_yields_but_is_generator(n):
    if False:
        yield
    return "done"


@cases((3,),)
def gen_with_except(n):
    for i in range(n):
        try:
            if i == 1:
                raise KeyError(i)
            yield i
        except KeyError as e:
            yield "err%s" % e


@cases((2,),)
def gen_with_statement(n):
    from ._support import Recorder
    log = []
    with Recorder(log):
        yield n
        yield list(log)
    yield log


@cases((2,),)
def gen_yield_tuple(n):
    yield n, n + 1
    yield (n,)
    yield


@cases((5,),)
def gen_expression_returned(n):
    return list(x for x in range(n) if x % 2)


@cases(([[1, 2], [3]],),)
def gen_yield_from_nested(rows):
    for row in rows:
        yield from row
    yield from ()


@cases(("b/d/f/",), ("/b/d/",), ("",))
def gen_while_and_condition_tuple_assign(path):
    # zipfile._ancestry: a generator loop with an and-condition and a tuple assignment.
    import posixpath
    path = path.rstrip(posixpath.sep)
    while path and path != posixpath.sep:
        yield path
        path, tail = posixpath.split(path)
