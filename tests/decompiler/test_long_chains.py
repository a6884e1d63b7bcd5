"""Long ``and``/``or`` chains decompile to one flat ``BoolOp`` that parses and behaves the same;
where the decompiler cannot follow a chain, it refuses (DecompilationError), never hands out text
that does not parse."""

from __future__ import annotations

import ast
import types

import pytest

import depyf
from depyf.decompiler.errors import DecompilationError


def _function(source: str) -> types.FunctionType:
    namespace: dict = {}
    exec(compile(source, "<generated>", "exec"), namespace)
    return namespace["f"]


def _value_chain(op: str, n: int) -> str:
    return "def f(x):\n    return " + f" {op} ".join(f"x[{i}]" for i in range(n)) + "\n"


def _test_chain(op: str, n: int) -> str:
    return (
        "def f(x):\n    if "
        + f" {op} ".join(f"x[{i}]" for i in range(n))
        + ":\n        return 1\n    return 2\n"
    )


def _mixed_chain(n: int) -> str:
    return "def f(x):\n    if " + " or ".join(f"x[{i}] and x[{i + 1}]" for i in range(0, n, 2)) + ":\n" \
        "        return 1\n    return 2\n"


def _inputs(n: int) -> list[list[int]]:
    """Lists of n items: all true, all false, one false (or one true) at the start, middle, end."""
    out = [[1] * n, [0] * n]
    for k in (0, n // 2, n - 1):
        out.append([1] * k + [0] + [1] * (n - k - 1))
        out.append([0] * k + [k + 7] + [0] * (n - k - 1))
    return out


def _bool_op_depth(node: ast.AST) -> int:
    """How many BoolOps lie inside each other at the deepest point."""
    deepest, todo = 0, [(node, 0)]
    while todo:
        node, depth = todo.pop()
        depth += isinstance(node, ast.BoolOp)
        deepest = max(deepest, depth)
        todo.extend((child, depth) for child in ast.iter_child_nodes(node))
    return deepest


@pytest.mark.parametrize("n", [100, 1000])
@pytest.mark.parametrize("shape", ["and-value", "or-value", "and-test", "or-test", "mixed"])
def test_a_long_chain_decompiles_to_a_flat_bool_op_that_behaves_the_same(shape, n):
    source = {"and-value": lambda: _value_chain("and", n), "or-value": lambda: _value_chain("or", n),
              "and-test": lambda: _test_chain("and", n), "or-test": lambda: _test_chain("or", n),
              "mixed": lambda: _mixed_chain(n)}[shape]()
    original = _function(source)
    for verify in (True, False) if n < 1000 else (True,):
        decompiled = depyf.decompile(original, verify=verify)
        # one BoolOp (two for ``or`` of ``and``s): each nested level counts against the parser's limit
        assert _bool_op_depth(ast.parse(decompiled)) == (2 if shape == "mixed" else 1)
        rebuilt = _function(decompiled)
        for x in _inputs(n):
            assert rebuilt(x) == original(x)


def test_a_chained_comparison_of_300_terms_decompiles_to_the_same_function():
    original = _function("def f(x):\n    return " + " < ".join(f"x[{i}]" for i in range(300)) + "\n")
    rebuilt = _function(depyf.decompile(original))
    for x in (list(range(300)), list(range(299)) + [0], [5] * 300, [0] + list(range(299))):
        assert rebuilt(x) == original(x)


def test_a_chain_of_10000_terms_decompiles_to_source_that_parses_or_is_refused():
    original = _function(_value_chain("and", 10_000))
    try:
        decompiled = depyf.decompile(original, verify=False)
    except DecompilationError:
        return      # (the decompiler follows the chain recursively: too deep is a refusal)
    rebuilt = _function(decompiled)
    for x in _inputs(10_000):
        assert rebuilt(x) == original(x)


def test_fifty_nested_conditional_expressions_in_a_test_decompile():
    # each way to read ``a if b else c if d else ...`` as a condition was searched again (as an
    # ``or`` and then as a conditional expression, each level doing so for the levels below): 15
    # of them reached the search's budget; each search is now made once
    source = "def f(x):\n    if " + "".join(f"x[{i}] if x[{i + 1}] else " for i in range(0, 100, 2)) \
        + "x[100]:\n        return 1\n    return 2\n"
    original = _function(source)
    rebuilt = _function(depyf.decompile(original))
    for x in _inputs(101):
        assert rebuilt(x) == original(x)


def _nested_ifs_in_a_loop(depth: int) -> str:
    """A ``while`` with an and/or test, whose body is ``depth`` ifs nested directly, each with an
    ``else``: the search from the loop's test tries each nested test as part of a condition."""
    lines = ["def f(x):", "    i = 0", "    while i < 3 and x[0] or i < 1:", "        i += 1"]
    lines += ["    " * (k + 2) + f"if x[{k}]:" for k in range(depth)]
    lines.append("    " * (depth + 2) + "x[0] -= 1")
    for k in reversed(range(depth)):
        lines += ["    " * (k + 2) + "else:", "    " * (k + 3) + f"x[{k}] += 1"]
    return "\n".join([*lines, "    return i, x", ""])


def test_twenty_nested_ifs_with_else_in_a_loop_decompile():
    # the loop test's search tried each nested test both as an and/or and as a conditional
    # expression, with different places kept: 2 ** depth searches, refused from depth 15 on
    original = _function(_nested_ifs_in_a_loop(20))
    rebuilt = _function(depyf.decompile(original))
    for x in _inputs(20):
        assert rebuilt(list(x)) == original(list(x))


def test_a_few_nested_conditional_expressions_in_a_test_still_decompile():
    source = "def f(x):\n    if " + "".join(f"x[{i}] if x[{i + 1}] else " for i in range(0, 20, 2)) \
        + "x[20]:\n        return 1\n    return 2\n"
    original = _function(source)
    rebuilt = _function(depyf.decompile(original))
    for x in _inputs(21):
        assert rebuilt(x) == original(x)
