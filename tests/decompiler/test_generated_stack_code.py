"""Bytecode no compiler writes from source, in the style Dynamo generates: values kept on the
stack and juggled with COPY/SWAP. Each value the bytecode computes once must be computed once by
the recompiled code too (checked with a ``__getitem__`` that counts its calls)."""

from __future__ import annotations

import dis
import sys
import types

import pytest
from bytecode_assembly import assemble

import depyf

pytestmark = pytest.mark.skipif(sys.version_info[:2] not in ((3, 11), (3, 12), (3, 13)),
                                reason="hand-assembled CPython 3.11-3.13 bytecode")
# Programs whose jumps and subscripts are spelled as 3.11/3.12 spell them.
before_3_13 = pytest.mark.skipif(
    sys.version_info >= (3, 13), reason="hand-assembled CPython 3.11/3.12 bytecode"
)




class CountingItems:
    """``obj[k]`` returns a fresh ``[1, 2]`` and counts how often it was asked."""

    def __init__(self) -> None:
        self.calls = 0

    def __getitem__(self, key):
        self.calls += 1
        return [1, 2]


def _template(a):
    return a


# box = [a[0]]; inner = box[0]; inner[0:] = [inner[1], inner[0]]; return box
# with `box` and `inner` never stored: COPY'd on the stack (the shape Dynamo emits around graph
# outputs before calling a resume function).
SHARED_LIST_THEN_SUBSCRIPT = [
    ("RESUME", 0), ("LOAD_FAST", 0), ("LOAD_CONST", 0), ("BINARY_SUBSCR", 0), ("BUILD_LIST", 1),
    ("COPY", 1), ("LOAD_CONST", 0), ("BINARY_SUBSCR", 0),
    ("COPY", 1), ("COPY", 1), ("LOAD_CONST", 1), ("BINARY_SUBSCR", 0), ("SWAP", 2),
    ("COPY", 1), ("LOAD_CONST", 0), ("BINARY_SUBSCR", 0), ("SWAP", 2), ("POP_TOP", 0),
    ("BUILD_LIST", 2), ("SWAP", 2), ("LOAD_CONST", 0), ("LOAD_CONST", 2), ("BUILD_SLICE", 2),
    ("STORE_SUBSCR", 0), ("RETURN_VALUE", 0),
]


def _run(code: types.CodeType):
    fn = types.FunctionType(code, {})
    items = CountingItems()
    return fn(items), items.calls


@before_3_13
def test_value_shared_on_the_stack_and_subscripted_is_computed_once() -> None:
    code = assemble(_template, SHARED_LIST_THEN_SUBSCRIPT, [0, 1, None])
    expected = _run(code)
    assert expected == ([[2, 1]], 1)
    recompiled = depyf.recompile(code)
    assert _run(recompiled.code) == expected, recompiled.source


def _template2(a, b):
    return a


# tmp = a[0]; del b; return tmp   (with a[0] left on the stack across the `del`)
VALUE_WAITS_ACROSS_DEL = [
    ("RESUME", 0), ("LOAD_FAST", 0), ("LOAD_CONST", 0), ("BINARY_SUBSCR", 0), ("DELETE_FAST", 1),
    ("RETURN_VALUE", 0),
]


@before_3_13
def test_deleting_a_local_needs_no_temporary_for_values_waiting_on_the_stack() -> None:
    code = assemble(_template2, VALUE_WAITS_ACROSS_DEL, [0])
    recompiled = depyf.recompile(code)
    assert "__stack_" not in recompiled.source, recompiled.source
    items = CountingItems()
    assert types.FunctionType(recompiled.code, {})(items, 1) == [1, 2]
    assert items.calls == 1


class LoggingItems:
    """``obj[k]`` returns ``[k]`` and logs ``k``: the order of the subscripts is visible."""

    def __init__(self) -> None:
        self.keys: list = []

    def __getitem__(self, key):
        self.keys.append(key)
        return [key]


_POP_JUMP_IF_FALSE = (
    "POP_JUMP_FORWARD_IF_FALSE" if "POP_JUMP_FORWARD_IF_FALSE" in dis.opmap else "POP_JUMP_IF_FALSE"
)

# v = a[0]; if a[1]: return v; return v   with `v` never stored: a[0] waits on the stack while the
# test a[1] runs, and each branch returns it.
VALUE_WAITS_ACROSS_A_TEST = [
    ("RESUME", 0), ("LOAD_FAST", 0), ("LOAD_CONST", 0), ("BINARY_SUBSCR", 0),
    ("LOAD_FAST", 0), ("LOAD_CONST", 1), ("BINARY_SUBSCR", 0), (_POP_JUMP_IF_FALSE, 1),
    ("RETURN_VALUE", 0), ("RETURN_VALUE", 0),
]


@before_3_13
def test_value_computed_before_an_if_test_is_evaluated_before_it() -> None:
    code = assemble(_template2, VALUE_WAITS_ACROSS_A_TEST, [0, 1])
    recompiled = depyf.recompile(code)
    for make in (types.FunctionType(code, {}), types.FunctionType(recompiled.code, {})):
        items = LoggingItems()
        assert make(items, None) == [0]
        assert items.keys == [0, 1], recompiled.source


def _closure_template():
    x = 5

    def inner():
        return x
    return inner


# 3.13 made LOAD_CLOSURE a pseudo-instruction: LOAD_FAST of a cell's slot pushes the cell.
_LOAD_CELL = "LOAD_CLOSURE" if dis.opmap.get("LOAD_CLOSURE", 256) < 256 else "LOAD_FAST"


def test_cell_object_used_as_a_value_is_loaded_as_the_cell() -> None:
    """Dynamo passes closure cells to resume functions (LOAD_CLOSURE outside MAKE_FUNCTION)."""
    inner = _closure_template()
    code = assemble(inner, [("COPY_FREE_VARS", 1), ("RESUME", 0), (_LOAD_CELL, 0), ("BUILD_TUPLE", 1),
                            ("RETURN_VALUE", 0)], [None])
    recompiled = depyf.recompile(code)
    assert "__cell_x" in recompiled.source and "the cell of variable 'x'" in recompiled.source
    for run in (code, recompiled.code):
        cells = types.FunctionType(run, {}, "inner", None, inner.__closure__)()
        assert cells == inner.__closure__ and cells[0] is inner.__closure__[0]


def _units(program: list[tuple[str, int]]) -> int:
    """Code units ``program`` takes (each instruction and its inline caches)."""
    cache = getattr(dis, "_inline_cache_entries", None)
    return sum(1 + (cache[dis.opmap[op]] if isinstance(cache, (list, tuple)) else cache.get(op, 0))
               for op, _ in program)


# d = {}; d['x'] = a; [if b:] d['y'] = b; return d   with `d` never stored: COPY'd under each value
# (the shape of 3.14's class-body __annotate__ functions, and of Dynamo's stack juggling).
_FILL_X = [("LOAD_FAST", 0), ("COPY", 2), ("LOAD_CONST", 0), ("STORE_SUBSCR", 0)]
_FILL_Y = [("LOAD_FAST", 1), ("COPY", 2), ("LOAD_CONST", 1), ("STORE_SUBSCR", 0)]


@before_3_13
@pytest.mark.parametrize("conditional", [False, True])
def test_container_on_the_stack_is_filled_through_one_name(conditional: bool) -> None:
    test = [("LOAD_FAST", 1), (_POP_JUMP_IF_FALSE, _units(_FILL_Y))] if conditional else []
    program = [("RESUME", 0), ("BUILD_MAP", 0), *_FILL_X, *test, *_FILL_Y, ("RETURN_VALUE", 0)]
    code = assemble(_template2, program, ["x", "y"])
    recompiled = depyf.recompile(code)
    for b in (0, 7):
        expected = {"x": 1, "y": b} if b or not conditional else {"x": 1}
        assert types.FunctionType(code, {})(1, b) == expected
        assert types.FunctionType(recompiled.code, {})(1, b) == expected, recompiled.source


# a[b:] with the slice built before ``del b`` (Dynamo keeps such values on the stack across
# statements): the slice waits, so what it reads must be evaluated before the statement.
SLICE_WAITS_ACROSS_DEL = [
    ("RESUME", 0), ("LOAD_FAST", 0), ("LOAD_FAST", 1), ("LOAD_CONST", 0), ("BUILD_SLICE", 2),
    ("DELETE_FAST", 1), ("BINARY_SUBSCR", 0), ("RETURN_VALUE", 0),
]
# return slice(a, b), made by BUILD_SLICE: a slice object as a value, outside any brackets
SLICE_AS_A_VALUE = [
    ("RESUME", 0),
    ("LOAD_FAST", 0),
    ("LOAD_FAST", 1),
    ("BUILD_SLICE", 2),
    ("RETURN_VALUE", 0),
]


@pytest.mark.parametrize("program", [SLICE_WAITS_ACROSS_DEL, SLICE_AS_A_VALUE], ids=["waits", "value"])
def test_a_slice_on_the_stack_decompiles_to_python(program) -> None:
    """Once ``__stack_0 = b:``, which is not Python, handed out by every unverified path."""
    code = assemble(_template2, program, [None])
    source = depyf.decompile(code, verify=False)
    compiled = compile(source, "<decompiled>", "exec")
    namespace: dict = {}
    exec(compiled, namespace)
    for args in (([1, 2, 3], 1), ("abcd", 2)):
        assert namespace["_template2"](*args) == types.FunctionType(code, {})(*args), source


def _template_unpack(a):
    x = None
    return x


_JUMP_IF_FALSE = (
    "POP_JUMP_FORWARD_IF_FALSE" if "POP_JUMP_FORWARD_IF_FALSE" in dis.opmap else "POP_JUMP_IF_FALSE"
)

# x, <flag> = a; if <flag>: return x; return None   with <flag> never stored: the shape of
# torch 2.2's transformed code, which unpacks a graph's outputs and branches on the last one.
UNPACKED_ITEM_AS_CONDITION = [
    ("RESUME", 0), ("LOAD_FAST", 0), ("UNPACK_SEQUENCE", 2), ("STORE_FAST", 1),
    (_JUMP_IF_FALSE, 2), ("LOAD_FAST", 1), ("RETURN_VALUE", 0), ("LOAD_CONST", 0), ("RETURN_VALUE", 0),
]

# (<result>,) = a(); return <result>   (torch 2.2's resume functions return a graph's one output so)
_CALL_A = ([("PUSH_NULL", 0), ("LOAD_FAST", 0), ("PRECALL", 0), ("CALL", 0)] if "PRECALL" in dis.opmap
           else [("PUSH_NULL", 0), ("LOAD_FAST", 0), ("CALL", 0)])
UNPACKED_ONE_ITEM_RETURNED = [("RESUME", 0), *_CALL_A, ("UNPACK_SEQUENCE", 1), ("RETURN_VALUE", 0)]


@before_3_13
def test_unpacked_item_used_as_a_condition_gets_a_temporary() -> None:
    code = assemble(_template_unpack, UNPACKED_ITEM_AS_CONDITION, [None])
    recompiled = depyf.recompile(code)
    fn, original = types.FunctionType(recompiled.code, {}), types.FunctionType(code, {})
    for value in (("x", True), ("x", False), ("x", 0)):
        assert fn(value) == original(value), recompiled.source
    with pytest.raises(ValueError):
        fn(("x", True, 3))


@before_3_13
def test_one_item_unpacked_from_a_call_and_returned_is_a_real_unpacking() -> None:
    code = assemble(_template, UNPACKED_ONE_ITEM_RETURNED, [None])
    recompiled = depyf.recompile(code)
    fn = types.FunctionType(recompiled.code, {})
    assert fn(lambda: [5]) == 5, recompiled.source
    with pytest.raises(ValueError):
        fn(lambda: [1, 2])


@before_3_13
def test_keep_locals_keeps_a_local_the_code_never_uses() -> None:
    # Dynamo's resume functions carry the locals of the function they resume, used or not; torch
    # 2.2 moves a frame's locals into the code it runs by name and fails on a missing one.
    code = assemble(_template_unpack, UNPACKED_ONE_ITEM_RETURNED, [None])
    assert code.co_varnames == ("a", "x")
    assert "x" not in depyf.recompile(code).code.co_varnames
    kept = depyf.recompile(code, keep_locals=True)
    assert set(kept.code.co_varnames) >= {"a", "x"}, kept.source
    assert types.FunctionType(kept.code, {})(lambda: [7]) == 7
