"""A function made from a ``def``'s code object and used as a value without being stored under its
name: bytecode no source compiles to, which Dynamo writes for resume functions that carry a closure
(torch 2.2 to 2.4: ``LOAD_CLOSURE``, ``BUILD_TUPLE``, ``LOAD_CONST <code>``, ``MAKE_FUNCTION``, then
a call). The source names the function with a placeholder; the recompiled code makes it again from
the very same code object and cells."""

from __future__ import annotations

import sys
import types

import pytest
from bytecode_assembly import assemble

import depyf
from depyf import DecompilationError


def _outer():
    helper = 5

    def template(a, b):
        def g(x, y):
            return (helper, x, y)
        return g(a, b)
    return template


TEMPLATE = _outer()
G_CODE = next(c for c in TEMPLATE.__code__.co_consts if isinstance(c, types.CodeType))
# the slot of ``helper``'s cell: 3.10 counts cells alone, 3.11+ every local before them
CELL = 0 if sys.version_info < (3, 11) else TEMPLATE.__code__.co_nlocals


def _make_g() -> list[tuple[str, int]]:
    """Push g made with ``helper``'s cell as its closure (the constants: None, g's code, its name)."""
    if sys.version_info < (3, 11):
        return [("LOAD_CLOSURE", CELL), ("BUILD_TUPLE", 1), ("LOAD_CONST", 1), ("LOAD_CONST", 2),
                ("MAKE_FUNCTION", 8)]
    if sys.version_info < (3, 13):
        return [("LOAD_CLOSURE", CELL), ("BUILD_TUPLE", 1), ("LOAD_CONST", 1), ("MAKE_FUNCTION", 8)]
    return [("LOAD_FAST", CELL), ("BUILD_TUPLE", 1), ("LOAD_CONST", 1), ("MAKE_FUNCTION", 0),
            ("SET_FUNCTION_ATTRIBUTE", 8)]


def _prologue() -> list[tuple[str, int]]:
    return [] if sys.version_info < (3, 11) else [("COPY_FREE_VARS", 1), ("RESUME", 0)]


def _returns_g() -> types.CodeType:
    """``return <g made here>``: the function itself is the value."""
    return _assemble([*_prologue(), *_make_g(), ("RETURN_VALUE", 0)])


def _calls_g() -> types.CodeType:
    """``return <g made here>(a, b)``, the way Dynamo calls a resume function it makes."""
    if sys.version_info < (3, 11):
        call = [*_make_g(), ("LOAD_FAST", 0), ("LOAD_FAST", 1), ("CALL_FUNCTION", 2)]
    elif sys.version_info < (3, 12):
        call = [("PUSH_NULL", 0), *_make_g(), ("LOAD_FAST", 0), ("LOAD_FAST", 1), ("PRECALL", 2),
                ("CALL", 2)]
    elif sys.version_info < (3, 13):
        call = [("PUSH_NULL", 0), *_make_g(), ("LOAD_FAST", 0), ("LOAD_FAST", 1), ("CALL", 2)]
    else:
        call = [*_make_g(), ("PUSH_NULL", 0), ("LOAD_FAST", 0), ("LOAD_FAST", 1), ("CALL", 2)]
    return _assemble([*_prologue(), *call, ("RETURN_VALUE", 0)])


def _assemble(program: list[tuple[str, int]]) -> types.CodeType:
    return assemble(TEMPLATE, program, [None, G_CODE, "g"])


def _function(code: types.CodeType) -> types.FunctionType:
    return types.FunctionType(code, {}, "template", None, TEMPLATE.__closure__)


@pytest.mark.parametrize("shape", [_returns_g, _calls_g], ids=["returned", "called"])
def test_the_source_names_the_made_function_with_a_placeholder(shape):
    source = depyf.decompile(shape(), verify=False)
    assert "__function_g = a function made here from the code object 'g'" in source
    assert "with the cells of 'helper' as its closure" in source
    body = source[source.index("def template"):]
    assert ("return __function_g(a, b)" if shape is _calls_g else "return __function_g") in body


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10's MAKE_FUNCTION also takes the name")
def test_the_recompiled_code_makes_the_function_from_the_same_code_object():
    code = _returns_g()
    made = _function(code)(1, 2)
    assert made.__code__ is G_CODE and made(3, 4) == (5, 3, 4)
    recompiled = depyf.recompile(code)
    again = _function(recompiled.code)(1, 2)
    assert again.__code__ is G_CODE
    assert again.__closure__[0] is TEMPLATE.__closure__[0]    # the frame's own cell, not a copy
    assert again(3, 4) == (5, 3, 4) and again.__name__ == "g"


@pytest.mark.skipif(not (3, 11) <= sys.version_info[:2] <= (3, 12),
                    reason="3.11/3.12: the call form fits in the place of one global load")
def test_a_made_function_called_at_once_recompiles_and_runs_alike():
    code = _calls_g()
    assert _function(code)(1, 2) == (5, 1, 2)
    recompiled = depyf.recompile(code)
    assert _function(recompiled.code)(1, 2) == (5, 1, 2)
    assert G_CODE in recompiled.code.co_consts


@pytest.mark.skipif((3, 11) <= sys.version_info[:2] <= (3, 12), reason="the call form fits there")
@pytest.mark.parametrize("shape", [_returns_g, _calls_g], ids=["returned", "called"])
def test_where_the_instructions_do_not_fit_recompile_refuses(shape):
    if shape is _returns_g and sys.version_info >= (3, 11):
        pytest.skip("the returned form fits on 3.13")
    with pytest.raises(DecompilationError, match="no room"):
        depyf.recompile(shape())


def test_a_made_function_with_defaults_is_still_refused():
    # defaults are values the source would have to evaluate where the function is made: no
    # placeholder stands for them
    if sys.version_info < (3, 11):
        make = [("LOAD_CONST", 3), ("LOAD_CLOSURE", CELL), ("BUILD_TUPLE", 1), ("LOAD_CONST", 1),
                ("LOAD_CONST", 2), ("MAKE_FUNCTION", 9)]
    elif sys.version_info < (3, 13):
        make = [("LOAD_CONST", 3), ("LOAD_CLOSURE", CELL), ("BUILD_TUPLE", 1), ("LOAD_CONST", 1),
                ("MAKE_FUNCTION", 9)]
    else:
        make = [("LOAD_CONST", 3), ("LOAD_FAST", CELL), ("BUILD_TUPLE", 1), ("LOAD_CONST", 1),
                ("MAKE_FUNCTION", 0), ("SET_FUNCTION_ATTRIBUTE", 8), ("SET_FUNCTION_ATTRIBUTE", 1)]
    code = assemble(TEMPLATE, [*_prologue(), *make, ("RETURN_VALUE", 0)], [None, G_CODE, "g", (7, 8)])
    assert _function(code)(1, 2)() == (5, 7, 8)
    with pytest.raises(DecompilationError, match="used as a value"):
        depyf.decompile(code, verify=False)
