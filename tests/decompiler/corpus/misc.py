# ruff: noqa
"""assert, docstrings, pass, global statements, small oddities of the statement grammar."""

from ._cases import cases

LIMIT = 10


@cases((1,), (0,), (-1,))
def with_assert(x):
    assert x >= 0, f"negative: {x}"
    assert x < LIMIT
    return x


@cases((1,),)
def with_docstring(x):
    """This is the docstring.

    It has two paragraphs."""
    return x, with_docstring.__doc__


@cases((1,),)
def docstring_then_code(x):
    "Single-quoted docstring."
    y = x + 1
    "not a docstring, just an expression"
    return y


@cases((0,),)
def empty_function_body(x):
    pass


@cases((0,),)
def only_docstring(x):
    """Returns None."""


@cases((3,),)
def expression_statements(x):
    x
    x + 1
    [x]
    (lambda: None)()
    return x


@cases((2,),)
def nested_function_with_docstring(x):
    def inner():
        """Inner docstring."""
        return x

    return inner(), inner.__doc__


@cases((1,), (2,))
def raise_forms(kind):
    try:
        if kind == 1:
            raise ValueError
        raise ValueError("with message")
    except ValueError as e:
        return e.args


@cases((4,),)
def global_in_nested_function(n):
    def set_limit():
        global LIMIT
        old = LIMIT
        LIMIT = n
        LIMIT = old
        return old

    return set_limit()


@cases((2,),)
def semicolon_statements(n):
    a = n; b = a * 2; c = b + 1
    return a, b, c


@cases((3,),)
def builtins_shadowed_locally(n):
    list = [n]
    len = 5
    return list, len


@cases((1,),)
def return_tuple_without_parens(n):
    return n, n + 1


@cases((3,),)
def deeply_nested_blocks(n):
    out = []
    for i in range(n):
        if i:
            while i:
                try:
                    with open(__file__) as f:
                        if f.readable():
                            out.append(i)
                finally:
                    i -= 1
    return out
