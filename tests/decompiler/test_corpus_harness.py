"""The harness itself: it must notice wrong code, drive every kind of code object, and time out."""

from __future__ import annotations

import types

import pytest
from corpus import async_code, comparisons, generators
from corpus._cases import Call
from corpus_harness import (
    Outcome,
    TimeLimitExceeded,
    compare_functions,
    run_case,
    same,
    time_limit,
    with_code,
)


def _compiled_function(src: str, name: str) -> types.FunctionType:
    namespace: dict = {}
    exec(compile(src, "<mutant>", "exec"), namespace)
    return namespace[name]


def test_detects_a_changed_comparison():
    mutant = _compiled_function("def chained_value(a, b, c):\n    return a <= b < c\n", "chained_value")
    original = comparisons.chained_value
    problems = compare_functions(original, with_code(original, mutant.__code__))
    assert problems and "(1, 1, 2)" in problems[0]


def test_detects_a_changed_generator():
    mutant = _compiled_function(
        "def gen_with_return(n):\n    yield n\n    return n * 11\n", "gen_with_return"
    )
    original = generators.gen_with_return
    assert compare_functions(original, with_code(original, mutant.__code__))


def test_identical_code_has_no_differences():
    original = comparisons.chain_with_side_effects
    assert compare_functions(original, with_code(original, original.__code__)) == []


def test_generator_driver_sends_counts():
    outcome = run_case(generators.gen_yield_expression_value, Call((3,)))
    assert outcome == Outcome("return", [1, 2, 3], (0, 1, 2))


def test_coroutine_and_async_generator_drivers():
    assert run_case(async_code.coro_await, Call((1,))).value == 3
    assert run_case(async_code.async_gen_async_for, Call((2,))).yielded == (0, 10, "done")


def test_exceptions_are_outcomes():
    outcome = run_case(comparisons.chained_value, Call((1, 2)))
    assert outcome.kind == "raise" and outcome.value is TypeError


def test_same_tells_signed_zero_and_nan():
    assert same(float("nan"), float("nan"))
    assert not same(0.0, -0.0)
    assert not same(1, 1.0)
    assert not same([1, 2], (1, 2))


def test_time_limit_stops_a_hang():
    with pytest.raises(TimeLimitExceeded):
        with time_limit(0.2):
            while True:
                pass
