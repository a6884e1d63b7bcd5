"""A function made from a ``def``'s code object and used as a value without being stored under its
name: bytecode no source compiles to, which Dynamo writes for resume functions that carry a closure
(torch 2.2 to 2.4: ``LOAD_CLOSURE``, ``BUILD_TUPLE``, ``LOAD_CONST <code>``, ``MAKE_FUNCTION``, then
a call). The source names the function with a placeholder; the recompiled code makes it again from
the very same code object and cells. Where the closure tuple was kept elsewhere and is read back
(torch 2.10 and 2.11 keep it in the list of stack values they pass on), a placeholder is called
with it instead."""

from __future__ import annotations

import dis
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


def _made(code: types.CodeType):
    """What the code returns, run with the template's cells (``helper``'s cell is the closure)."""
    return _function(code)(1, 2)


def test_the_recompiled_code_makes_the_function_from_the_same_code_object():
    code = _returns_g()
    made = _made(code)
    assert made.__code__ is G_CODE and made(3, 4) == (5, 3, 4)
    recompiled = depyf.recompile(code)
    again = _made(recompiled.code)
    assert again.__code__ is G_CODE
    assert again.__closure__[0] is TEMPLATE.__closure__[0]    # the frame's own cell, not a copy
    assert again(3, 4) == (5, 3, 4)
    assert (again.__name__, again.__qualname__) == (made.__name__, made.__qualname__)


def test_a_made_function_called_at_once_recompiles_and_runs_alike():
    code = _calls_g()
    assert _made(code) == (5, 1, 2)
    recompiled = depyf.recompile(code)
    assert _made(recompiled.code) == (5, 1, 2)
    assert G_CODE in recompiled.code.co_consts


@pytest.mark.parametrize("shape", [_returns_g, _calls_g], ids=["returned", "called"])
def test_the_printed_source_is_not_padded(shape):
    # the subscripts that make room for the instructions are only in the tree that is compiled
    recompiled = depyf.recompile(shape())
    assert "__function_g[" not in recompiled.source
    assert "__function_g" in recompiled.source


def _outer_two():
    first, second = 5, 6

    def template(a, b):
        def g(x, y):
            return (first, second, x, y)
        return g(a, b)
    return template


TEMPLATE_TWO = _outer_two()
G_TWO = next(c for c in TEMPLATE_TWO.__code__.co_consts if isinstance(c, types.CodeType))


def _cell_slot(template: types.FunctionType, name: str) -> int:
    code = template.__code__
    if sys.version_info < (3, 11):
        return (code.co_cellvars + code.co_freevars).index(name)
    return code.co_nlocals + (code.co_cellvars + code.co_freevars).index(name)


def _make_g_two() -> list[tuple[str, int]]:
    """Push g made with two cells of the frame as its closure, under a qualified name of its own
    on 3.10 (MAKE_FUNCTION takes it from the stack there; the constants: None, g's code, the name)."""
    load = "LOAD_CLOSURE" if sys.version_info < (3, 13) else "LOAD_FAST"
    cells = [(load, _cell_slot(TEMPLATE_TWO, n)) for n in G_TWO.co_freevars] + [("BUILD_TUPLE", 2)]
    if sys.version_info < (3, 11):
        return [*cells, ("LOAD_CONST", 1), ("LOAD_CONST", 2), ("MAKE_FUNCTION", 8)]
    if sys.version_info < (3, 13):
        return [*cells, ("LOAD_CONST", 1), ("MAKE_FUNCTION", 8)]
    return [*cells, ("LOAD_CONST", 1), ("MAKE_FUNCTION", 0), ("SET_FUNCTION_ATTRIBUTE", 8)]


def _two_cells(program: list[tuple[str, int]]) -> types.CodeType:
    prologue = [] if sys.version_info < (3, 11) else [("COPY_FREE_VARS", 2), ("RESUME", 0)]
    return assemble(TEMPLATE_TWO, [*prologue, *program, ("RETURN_VALUE", 0)], [None, G_TWO, "resume_g"])


def _run_two(code: types.CodeType):
    return types.FunctionType(code, {}, "template", None, TEMPLATE_TWO.__closure__)(1, 2)


def test_a_made_function_with_two_cells_recompiles_and_runs_alike():
    if sys.version_info < (3, 11):
        call = [*_make_g_two(), ("LOAD_FAST", 0), ("LOAD_FAST", 1), ("CALL_FUNCTION", 2)]
    elif sys.version_info < (3, 12):
        call = [("PUSH_NULL", 0), *_make_g_two(), ("LOAD_FAST", 0), ("LOAD_FAST", 1), ("PRECALL", 2),
                ("CALL", 2)]
    elif sys.version_info < (3, 13):
        call = [("PUSH_NULL", 0), *_make_g_two(), ("LOAD_FAST", 0), ("LOAD_FAST", 1), ("CALL", 2)]
    else:
        call = [*_make_g_two(), ("PUSH_NULL", 0), ("LOAD_FAST", 0), ("LOAD_FAST", 1), ("CALL", 2)]
    code = _two_cells(call)
    assert _run_two(code) == (5, 6, 1, 2)
    recompiled = depyf.recompile(code)
    assert "with the cells of 'first', 'second' as its closure" in recompiled.source
    assert _run_two(recompiled.code) == (5, 6, 1, 2)


def test_the_made_function_keeps_its_name_and_qualified_name():
    code = _two_cells(_make_g_two())
    made, again = _run_two(code), _run_two(depyf.recompile(code).code)
    assert again.__code__ is G_TWO and again(3, 4) == (5, 6, 3, 4)
    assert (again.__name__, again.__qualname__) == (made.__name__, made.__qualname__)
    if sys.version_info < (3, 11):
        assert again.__qualname__ == "resume_g"     # the name MAKE_FUNCTION was given, not the code's


@pytest.mark.parametrize("shape", [_returns_g, _calls_g], ids=["returned", "called"])
def test_without_room_made_for_it_the_function_is_not_patched_in(shape):
    # the instructions that make the function need more room than the load of a global: compiled
    # without the subscripts that ``room`` asks for, embedding refuses rather than overwriting
    # what follows the load
    from depyf.decompiler.opaque import embed
    from depyf.decompiler.rebuild import rebuild_code
    from depyf.decompiler.render import code_to_source_and_constants

    code = shape()
    source, constants = code_to_source_and_constants(code)
    with pytest.raises(DecompilationError, match="no room"):
        embed(rebuild_code(code, source), constants)


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


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="only 3.10 takes the qualified name from the stack")
def test_a_made_function_whose_qualified_name_is_computed_is_refused():
    # the placeholder stands for a code object and cells; a name read from a variable is a value
    # the source would have to show
    code = _assemble([("LOAD_CLOSURE", CELL), ("BUILD_TUPLE", 1), ("LOAD_CONST", 1), ("LOAD_FAST", 0),
                      ("MAKE_FUNCTION", 8), ("RETURN_VALUE", 0)])
    assert _function(code)("named", 2).__qualname__ == "named"
    with pytest.raises(DecompilationError, match="used as a value"):
        depyf.decompile(code, verify=False)


def _made_from_a_kept_closure(call: bool) -> types.CodeType:
    """``g = [(<helper's cell>,)]``, then g made from ``g[-1]`` as its closure: the tuple of cells
    kept in a list and read back, as torch 2.10 and 2.11 keep it in the list of stack values they
    pass on (the constants: None, g's code, its name, -1). ``call``: called with (a, b) at once."""
    load_cell = "LOAD_CLOSURE" if sys.version_info < (3, 13) else "LOAD_FAST"
    keep = [(load_cell, CELL), ("BUILD_TUPLE", 1), ("BUILD_LIST", 1), ("STORE_FAST", 2)]
    subscript = ("BINARY_SUBSCR", 0) if "BINARY_SUBSCR" in dis.opmap else \
        ("BINARY_OP", [name for name, _ in dis._nb_ops].index("NB_SUBSCR"))   # 3.14+
    closure = [("LOAD_FAST", 2), ("LOAD_CONST", 3), subscript]
    if sys.version_info < (3, 11):
        make = [*closure, ("LOAD_CONST", 1), ("LOAD_CONST", 2), ("MAKE_FUNCTION", 8)]
        calls = [("LOAD_FAST", 0), ("LOAD_FAST", 1), ("CALL_FUNCTION", 2)]
    elif sys.version_info < (3, 13):
        make = [*closure, ("LOAD_CONST", 1), ("MAKE_FUNCTION", 8)]
        make = [("PUSH_NULL", 0), *make] if call else make
        calls = [("LOAD_FAST", 0), ("LOAD_FAST", 1)] \
            + ([("PRECALL", 2)] if sys.version_info < (3, 12) else []) + [("CALL", 2)]
    else:
        make = [*closure, ("LOAD_CONST", 1), ("MAKE_FUNCTION", 0), ("SET_FUNCTION_ATTRIBUTE", 8)]
        calls = [("PUSH_NULL", 0), ("LOAD_FAST", 0), ("LOAD_FAST", 1), ("CALL", 2)]
    program = [*_prologue(), *keep, *make, *(calls if call else []), ("RETURN_VALUE", 0)]
    return assemble(TEMPLATE, program, [None, G_CODE, "g", -1])


@pytest.mark.parametrize("call", [False, True], ids=["returned", "called"])
def test_a_function_made_from_a_closure_kept_in_a_list_recompiles_and_runs_alike(call):
    code = _made_from_a_kept_closure(call)
    expected = _made(code) if call else _made(code)(3, 4)
    assert expected == ((5, 1, 2) if call else (5, 3, 4))
    recompiled = depyf.recompile(code)     # the flow check on
    source = recompiled.source
    assert "__make_function_g(closure) = a function made here from the code object 'g'" in source
    assert "__make_function_g(g[-1])" in source and "__make_function_g(g[-1])[" not in source
    made = _made(recompiled.code)
    if call:
        assert made == expected
    else:
        assert made.__code__ is G_CODE and made(3, 4) == expected
        assert made.__closure__[0] is TEMPLATE.__closure__[0]     # the very cell the list kept
        assert made.__qualname__ == _made(code).__qualname__
