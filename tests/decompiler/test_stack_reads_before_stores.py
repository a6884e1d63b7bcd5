"""Stack code (Dynamo's style) that reads a variable, attribute or item, then stores it, then uses
the value read first: the source must evaluate the read into a temporary before the store, and the
flow check must tell source that stores first (and reads the new value) from the original. Likewise
a global read, then a call (which may rebind the global), then the value read used."""

from __future__ import annotations

import sys
import types

import pytest
from bytecode_assembly import assemble

import depyf
from depyf.decompiler.flowcheck import differences

pytestmark = pytest.mark.skipif(not (3, 10) <= sys.version_info[:2] <= (3, 13),
                                reason="hand-assembled CPython 3.10-3.13 bytecode")

_ADD = [("BINARY_ADD", 0)] if sys.version_info < (3, 11) else [("BINARY_OP", 0)]




def _template(x, y):
    return x


class Box:
    def __init__(self, a):
        self.a = a


# old = x; x = 1; return old
READ_STORE_USE = ([("LOAD_FAST", 0), ("LOAD_CONST", 0), ("STORE_FAST", 0), ("RETURN_VALUE", 0)], [1], ())
# old = x; x = y; return old + x
READ_STORE_READ = ([("LOAD_FAST", 0), ("LOAD_FAST", 1), ("STORE_FAST", 0), ("LOAD_FAST", 0), *_ADD,
                    ("RETURN_VALUE", 0)], [], ())
# old = y.a; y.a = 5; return old
ATTRIBUTE = ([("LOAD_FAST", 1), ("LOAD_ATTR", 0), ("LOAD_CONST", 0), ("LOAD_FAST", 1), ("STORE_ATTR", 0),
              ("RETURN_VALUE", 0)], [5], ("a",))
# old = x[0]; x[0] = 5; return old
SUBSCRIPT = ([("LOAD_FAST", 0), ("LOAD_CONST", 1), ("BINARY_SUBSCR", 0), ("LOAD_CONST", 0), ("LOAD_FAST", 0),
              ("LOAD_CONST", 1), ("STORE_SUBSCR", 0), ("RETURN_VALUE", 0)], [5, 0], ())

CASES = {"read-store-use": (READ_STORE_USE, lambda: (10, 20)),
         "read-store-read": (READ_STORE_READ, lambda: (10, 20)),
         "attribute": (ATTRIBUTE, lambda: (0, Box(3))),
         "subscript": (SUBSCRIPT, lambda: ([7], 0))}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("verify", [True, False])
def test_a_value_read_before_a_store_keeps_the_old_value(case, verify):
    (program, consts, names), arguments = CASES[case]
    code = assemble(_template, program, consts, names)
    expected = types.FunctionType(code, {})(*arguments())
    recompiled = depyf.recompile(code, verify=verify)
    assert types.FunctionType(recompiled.code, {})(*arguments()) == expected, recompiled.source
    assert "__stack_" in recompiled.source      # the value read first is kept in a temporary


def _stores_first(x, y):
    x = 1
    return x


def _reads_new_value(x, y):
    x = y
    return x + x


def _kept_in_a_temporary(x, y):
    __stack_0 = x
    x = 1
    return __stack_0


@pytest.mark.parametrize(("program", "wrong"),
                         [(READ_STORE_USE, _stores_first), (READ_STORE_READ, _reads_new_value)],
                         ids=["read-store-use", "read-store-read"])
def test_the_flow_check_sees_a_store_moved_before_the_read(program, wrong):
    # ``wrong`` is the source the decompiler printed for ``program`` before it kept the read
    code = assemble(_template, *program)
    problems = differences(code, wrong.__code__)
    assert any("'x' is read and written in another order" in p for p in problems), problems


def test_the_flow_check_accepts_the_read_kept_in_a_temporary():
    code = assemble(_template, *READ_STORE_USE)
    assert differences(code, _kept_in_a_temporary.__code__) == []


def _load_global(index: int, null: bool = False) -> tuple[str, int]:
    return ("LOAD_GLOBAL", (index << 1) | null if sys.version_info >= (3, 11) else index)


def _call_nothing() -> list[tuple[str, int]]:
    """A call without arguments of the global ``co_names[1]``."""
    if sys.version_info < (3, 11):
        return [_load_global(1), ("CALL_FUNCTION", 0)]
    if sys.version_info < (3, 12):
        return [_load_global(1, null=True), ("PRECALL", 0), ("CALL", 0)]
    return [_load_global(1, null=True), ("CALL", 0)]


# old = G; reset(); return old   (reset rebinds the global G)
GLOBAL_CALL_USE = ([_load_global(0), *_call_nothing(), ("POP_TOP", 0), ("RETURN_VALUE", 0)], [None],
                   ("G", "reset"))


def _rebinding_globals() -> dict:
    namespace = {"G": "old"}

    def reset():
        namespace["G"] = "new"

    namespace["reset"] = reset
    return namespace


@pytest.mark.parametrize("verify", [True, False])
def test_a_global_read_before_a_call_that_rebinds_it_keeps_the_old_value(verify):
    code = assemble(_template, *GLOBAL_CALL_USE)
    assert types.FunctionType(code, _rebinding_globals())(0, 0) == "old"
    recompiled = depyf.recompile(code, verify=verify)
    assert types.FunctionType(recompiled.code, _rebinding_globals())(0, 0) == "old", recompiled.source
    assert "__stack_" in recompiled.source


def _calls_first(x, y):
    reset()  # noqa: F821 (a global of the namespace the code runs in)
    return G  # noqa: F821


def _global_kept_in_a_temporary(x, y):
    __stack_0 = G  # noqa: F821
    reset()  # noqa: F821
    return __stack_0


def test_the_flow_check_sees_a_global_read_moved_after_a_call():
    # ``_calls_first`` is the source the decompiler printed before it kept the global's value
    code = assemble(_template, *GLOBAL_CALL_USE)
    problems = differences(code, _calls_first.__code__)
    assert any("'G' is read" in p and "call -> read" in p for p in problems), problems
    assert differences(code, _global_kept_in_a_temporary.__code__) == []
