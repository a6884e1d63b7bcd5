"""The printer: ``ast.unparse`` with plain ``and``/``or`` chains, and the same tree read back."""

from __future__ import annotations

import ast

import pytest

from depyf.decompiler.render.unparse import unparse

PLAIN = [
    "a and b and c != 2",
    "x or y or a and b",
    "a and (b is None or c != 1) and d != 2 and e",
    "a and not b and c",
    "(a and b) and c",
    "a and (b and c)",
    "(a if b else c) and d and e",
    "a and (y := f()) and c",
    "a or (lambda x: x) or c",
    "(a or b) and c and (d or e)",
    "not (a and b) and c",
]


@pytest.mark.parametrize("source", PLAIN)
def test_chains_print_with_the_parentheses_they_need_only(source):
    tree = ast.parse(source)
    printed = unparse(tree)
    assert printed == source
    assert ast.dump(ast.parse(printed)) == ast.dump(tree)


def test_everything_else_prints_as_ast_unparse_does():
    source = "def f(a, *, b=1):\n    return [x for x in a if x > b] + [f'{a!r:>{b}}']"
    tree = ast.parse(source)
    assert unparse(tree) == ast.unparse(tree)


@pytest.mark.parametrize("source", [
    "sum(x for x in xs)",
    "tuple(None for _ in range(n))",
    "f(a)(b for b in c if b)",
    "(a or b)(x for x in y)",
    "any((y := f(x)) for x in xs)",
    "f(x for xs in xss for x in xs)",
])
def test_a_generator_expression_alone_in_a_call_prints_in_its_parentheses(source):
    tree = ast.parse(source)
    printed = unparse(tree)
    assert printed == source
    assert ast.dump(ast.parse(printed)) == ast.dump(tree)


@pytest.mark.parametrize("source", [
    "sum((x for x in xs), 0)",
    "f(*(x for x in xs))",
    "f((x for x in xs), key=1)",
    "f(key=(x for x in xs))",
])
def test_a_generator_expression_beside_other_arguments_keeps_its_own(source):
    tree = ast.parse(source)
    assert unparse(tree) == source == ast.unparse(tree)
