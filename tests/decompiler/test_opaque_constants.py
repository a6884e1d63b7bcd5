"""Objects in ``co_consts`` that no literal spells (Dynamo embeds ``torch.float32``, devices,
enum members): the source names them with placeholders, and ``recompile`` loads the very same
objects again."""

from __future__ import annotations

import ast
import enum
import types
import warnings

import depyf


class Mode(enum.IntEnum):
    FAST = 1


SENTINEL = object()


def _double(v):
    return v * 2


def _swap(value: object, objects: dict[str, object]) -> object:
    if isinstance(value, str):
        return objects.get(value, value)
    if isinstance(value, (tuple, frozenset)):
        return type(value)(_swap(v, objects) for v in value)
    if isinstance(value, types.CodeType):
        return value.replace(co_consts=tuple(_swap(c, objects) for c in value.co_consts))
    return value


def _with_objects(fn: types.FunctionType, objects: dict[str, object]) -> types.CodeType:
    """``fn``'s code with the string constants named in ``objects`` (also inside tuples and nested
    code) swapped for those objects."""
    return _swap(fn.__code__, objects)


with warnings.catch_warnings():
    warnings.simplefilter("ignore", SyntaxWarning)   # "'str' object is not callable"
    exec(compile('''
def sample(x, y):
    pair = ("MODE", 3)
    if y:
        return x, pair, "CALLABLE"(y), {"SENTINEL"}
    return x, pair, [v for v in x if v != "SENTINEL"]
''', "<sample>", "exec"), globals())

OBJECTS = {"MODE": Mode.FAST, "CALLABLE": _double, "SENTINEL": SENTINEL}


def test_source_names_each_object_and_says_what_it_is() -> None:
    code = _with_objects(sample, OBJECTS)  # noqa: F821 - defined by exec above
    source = depyf.decompile(code)
    ast.parse(source)
    assert "__const_Mode_FAST_1" in source and "__const_double(y)" in source, source
    assert "#   __const_Mode_FAST_1 = <Mode.FAST: 1>" in source, source
    assert "<Mode" not in source.split("def ", 1)[1], source


def test_recompiled_code_loads_the_same_objects() -> None:
    code = _with_objects(sample, OBJECTS)  # noqa: F821
    original = types.FunctionType(code, {})
    rebuilt = types.FunctionType(depyf.recompile(code).code, {})   # no globals: nothing to look up
    for args in (([1, 2], 0), ([1, SENTINEL], 0), ([3], 5)):
        expected, got = original(*args), rebuilt(*args)
        assert got == expected
        assert got[1][0] is Mode.FAST
    assert rebuilt([1], 4)[3] == {SENTINEL}
