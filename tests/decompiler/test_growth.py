"""Bounded work on big code: searches that grow linearly, deep chains within the recursion limit,
exception entries found in one pass that agree with a scan of the table."""

from __future__ import annotations

import sys
import types

import pytest

import depyf
from depyf.decompiler.cfg import ControlFlowGraph
from depyf.decompiler.dominators import EXIT, _first_common, common_post_dominator, post_dominators
from depyf.decompiler.instructions import normalize
from depyf.decompiler.structure import Structurer


def _function(source: str) -> types.FunctionType:
    namespace: dict = {}
    exec(compile(source, "<generated>", "exec"), namespace)
    return namespace["f"]


def test_exception_entries_of_many_try_statements_are_those_a_scan_of_the_table_finds():
    units = "\n".join(f"    try:\n        y = y + x // {i % 3}\n    except ZeroDivisionError:\n        y = -y"
                      for i in range(60))
    code = _function(f"def f(x):\n    y = 0\n{units}\n    return y\n").__code__
    instrs, entries = normalize(code)
    cfg = ControlFlowGraph(instrs, entries)
    scanned = [next((e for e in entries if e.start <= ins.offset < e.end), None) for ins in instrs]
    assert sum(e is not None for e in scanned) > 100
    assert cfg.handler_at == scanned


def _elif_chain(n: int) -> str:
    arms = "\n".join(f"    {'if' if i == 0 else 'elif'} x == {i}:\n        return {i}" for i in range(n))
    return f"def f(x):\n{arms}\n    return -1\n"


def _ifexp_chain(n: int) -> str:
    return "def f(x):\n    return " + " else ".join(f"{i} if x == {i}" for i in range(n)) + " else -1\n"


def _calls_of(method: str, source: str, monkeypatch) -> int:
    """How many times ``Structurer.<method>`` runs while decompiling ``f`` of ``source``."""
    calls = 0
    real = getattr(Structurer, method)

    def counting(self, *args, **kwargs):
        nonlocal calls
        calls += 1
        return real(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Structurer, method, counting)
        depyf.decompile(_function(source))
    return calls


def _compound_calls(source: str, monkeypatch) -> int:
    """How many times the condition search runs while decompiling ``f`` of ``source``."""
    return _calls_of("compound", source, monkeypatch)


def _elif_chains_in_a_row(n: int) -> str:
    """Two ``elif`` chains, the second's first test the join of all the first's branches."""
    arms = "\n".join(f"    {'if' if i == 0 else 'elif'} x == {i}:\n        y += {i}" for i in range(n))
    chain = f"{arms}\n    else:\n        y -= 1\n"
    return f"def f(x):\n    y = 0\n{chain}{chain}    return y\n"


def _ifexp_chains_in_a_row(k: int, depth: int = 60) -> str:
    """``k`` assignments of conditional expressions nested ``depth`` deep: the code after each
    chain (its store, then the next chain's first test) is entered from every branch."""
    expr = "0"
    for i in range(depth):
        expr = f"({i} if c{i} else {expr})"
    stores = "".join(f"    x{j} = {expr}\n" for j in range(k))
    params = ", ".join(f"c{i}" for i in range(depth))
    return f"def f({params}):\n{stores}    return " + " + ".join(f"x{j}" for j in range(k)) + "\n"


def _elif_chains_of_stores_in_a_row(k: int, n: int = 60) -> str:
    """``k`` ``elif`` chains whose ``else`` stores a constant and falls into the next chain's test."""
    arms = "\n".join(f"    {'if' if i == 0 else 'elif'} x == {i}:\n        y = {i}" for i in range(n))
    return "def f(x):\n" + f"{arms}\n    else:\n        y = -1\n" * k + "    return y\n"


@pytest.mark.parametrize("shape", [_elif_chain, _ifexp_chain, _elif_chains_in_a_row])
def test_the_condition_search_grows_linearly_with_a_chain_of_tests(shape, monkeypatch):
    # a search that looked at every later test of the chain again for each test would make n**2 / 2 calls
    small, large = (_compound_calls(shape(n), monkeypatch) for n in (40, 160))
    assert large <= 5 * small


_CHOSEN_TESTS = [[i == chosen for i in range(60)] for chosen in (0, 7, 59)] + [[False] * 60]


@pytest.mark.parametrize(("shape", "arguments"), [
    (_ifexp_chains_in_a_row, _CHOSEN_TESTS),
    (_elif_chains_of_stores_in_a_row, [[-3], [0], [7], [59]]),
])
def test_each_chain_of_several_in_a_row_costs_the_condition_search_about_as_much_as_one(
        shape, arguments, monkeypatch):
    # a branch that pushes or stores a constant and goes on to the code after the chain is never
    # where the search lands: the next chain's first test there, entered from every branch, must not
    # make each test's search read (and remember apart) the whole chain again (k * n**2 / 2 calls)
    one, four = (_compound_calls(shape(k), monkeypatch) for k in (1, 4))
    assert four <= 8 * one    # (loose: one chain alone costs less than one that another follows)
    original = _function(shape(3))
    rebuilt = _function(depyf.decompile(original))
    for args in arguments:
        assert rebuilt(*args) == original(*args)


def test_two_elif_chains_of_1000_branches_in_a_row_decompile_to_the_same_function():
    # the second chain's first test is where all 1,000 branches of the first go on: the search
    # from each test of the first chain lands on none of them, and its calls are remembered
    original = _function(_elif_chains_in_a_row(1000))
    rebuilt = _function(depyf.decompile(original))
    for x in (-5, 0, 1, 500, 999, 1000):
        assert rebuilt(x) == original(x)


def test_a_conditional_expression_chain_1000_deep_decompiles_to_the_same_function():
    original = _function(_ifexp_chain(1000))
    rebuilt = _function(depyf.decompile(original))
    for x in (-5, 0, 1, 500, 999, 1000):
        assert rebuilt(x) == original(x)


def test_the_nearest_common_post_dominator_is_the_first_node_of_one_chain_on_the_other():
    body = "\n".join(
        f"    for i in range(x):\n        try:\n            y += x // i\n        except ZeroDivisionError:\n"
        f"            if y > {k}:\n                return y\n            continue"
        for k in range(8)
    )
    code = _function(f"def f(x):\n    y = 0\n{body}\n    return y\n").__code__
    cfg = ControlFlowGraph(*normalize(code))
    ipdom = post_dominators({b.index for b in cfg.blocks}, {b.index: list(b.succs) for b in cfg.blocks})
    nodes = sorted(n for n in ipdom if n is not EXIT) + [EXIT]    # (EXIT: an object, not a number)
    assert len(nodes) > 40
    for a in nodes:
        for b in nodes:
            assert common_post_dominator(a, b, ipdom) == _first_common(a, b, ipdom)


@pytest.mark.skipif(sys.platform == "emscripten", reason="no threads under WebAssembly")
def test_an_if_on_one_or_of_8000_tests_decompiles_to_the_same_function():
    # CPython compiles it; the condition search recurses once per test, past the frames of the
    # main thread's limit: the code is read again in a thread with a big stack, not refused
    tests = " or ".join(f"x == {i}" for i in range(8000))
    original = _function(f"def f(x):\n    if {tests}:\n        return 1\n    return 2\n")
    rebuilt = _function(depyf.decompile(original))
    for x in (-5, 0, 1, 4000, 7999, 8000):
        assert rebuilt(x) == original(x)


def test_the_condition_search_of_one_long_or_holds_its_folded_blocks_once():
    # each level of the search used to copy the set of blocks folded so far, and every enclosing
    # level kept its own: n sets of up to n blocks (28 MB at its peak for 1,000 tests; 6 MB once
    # the set is grown in place and taken back where a fold is not used)
    import tracemalloc

    tests = " or ".join(f"x == {i}" for i in range(1000))
    original = _function(f"def f(x):\n    y = 0\n    if {tests}:\n        y = 1\n    return y\n")
    tracemalloc.start()
    try:
        source = depyf.decompile(original)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 15_000_000, f"{peak / 1e6:.1f} MB"
    rebuilt = _function(source)
    assert [rebuilt(x) for x in (-1, 0, 500, 999, 1000)] == [original(x) for x in (-1, 0, 500, 999, 1000)]


def test_deep_code_is_refused_by_name_where_no_thread_with_a_bigger_stack_starts(monkeypatch):
    # WebAssembly builds of CPython have no threads: deep code is refused with DecompilationError,
    # not a RuntimeError from threading
    import threading

    from depyf.decompiler.errors import DecompilationError

    def no_threads(size=None):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading, "stack_size", no_threads)
    tests = " or ".join(f"x == {i}" for i in range(8000))
    original = _function(f"def f(x):\n    if {tests}:\n        return 1\n    return 2\n")
    with pytest.raises(DecompilationError, match="nested too deeply"):
        depyf.decompile(original)


def _post_dominators_by_definition(nodes: set[int], succs: dict[int, list[int]]) -> dict:
    """d post-dominates n when every path from n to the exit passes d: n reaches the exit with d
    taken out of the graph only if d does not; the immediate one is the nearest such d."""
    def reaches_exit(start: int, removed: int | None) -> bool:
        seen, work = set(), [start]
        while work:
            x = work.pop()
            if x == removed or x in seen:
                continue
            seen.add(x)
            out = succs.get(x) or [EXIT]
            if any(s not in nodes for s in out):
                return True
            work.extend(out)
        return False

    found = {}
    for n in nodes:
        if not reaches_exit(n, None):
            found[n] = EXIT
            continue
        strict = {d for d in nodes if d != n and not reaches_exit(n, d)}
        # the nearest: the one every other strict post-dominator post-dominates
        nearest = [d for d in strict if all(e == d or not reaches_exit(d, e) for e in strict)]
        found[n] = nearest[0] if nearest else EXIT
    return found


def test_post_dominators_are_those_of_the_definition_on_random_graphs():
    import random

    draw = random.Random(20261126)
    for _ in range(400):
        size = draw.randint(1, 12)
        nodes = set(range(size))
        succs = {n: [draw.randrange(size + 2) for _ in range(draw.choice((0, 1, 1, 2, 2, 3)))]
                 for n in nodes}
        ipdom = post_dominators(nodes, succs)
        assert {n: ipdom[n] for n in nodes} == _post_dominators_by_definition(nodes, succs), succs


def _lines_run(function, *args) -> int:
    """How many lines of ``function``'s module run during the call (a measure of work, not time)."""
    lines = 0
    filename = function.__code__.co_filename

    def trace(frame, event, arg):
        nonlocal lines
        if frame.f_code.co_filename != filename:
            return None
        if event == "line":
            lines += 1
        return trace

    sys.settrace(trace)
    try:
        function(*args)
    finally:
        sys.settrace(None)
    return lines


@pytest.mark.skipif(sys.gettrace() is not None, reason="needs the tracing hook for itself")
def test_post_dominators_of_many_handlers_that_reraise_take_linear_work():
    # n try statements in a row: the body of each goes on to the code after it, and its handler
    # (entered by exceptions, not by an edge) either joins that code or goes to a block that
    # re-raises to the exit. Climbing each handler's way on to the exit made this n squared.
    def graph(n: int) -> tuple[set[int], dict[int, list[int]]]:
        succs = {}
        for i in range(n):
            body, handler, reraise, after = 3 * i, 3 * i + 1, 3 * i + 2, 3 * i + 3
            succs[body] = [after]
            succs[handler] = [after, reraise]
            succs[reraise] = [-1]
        succs[3 * n] = [-1]
        return set(succs), succs

    small = _lines_run(post_dominators, *graph(200))
    large = _lines_run(post_dominators, *graph(1600))
    assert large < 10 * small, (small, large)   # 8x the code; quadratic work would be 64x
    ipdom = post_dominators(*graph(50))
    assert ipdom[0] == 3 and ipdom[1] is EXIT and ipdom[2] is EXIT and ipdom[147] == 150


def _or_of_and_groups(groups: int) -> str:
    """``return (x > 0 and x > 1 and x > 2) or (x > 3 and ...) or ...``: each group's first tests
    jump to the next group, and its last keeps the value and goes on into the same next group."""
    terms = " or ".join("(" + " and ".join(f"x > {3 * g + k}" for k in range(3)) + ")" for g in range(groups))
    return f"def f(x):\n    return {terms}\n"


def _emit_calls(source: str, monkeypatch) -> int:
    return _calls_of("emit", source, monkeypatch)


def test_a_value_or_of_and_groups_reads_each_group_once(monkeypatch):
    # the code after each group was read once for each branch of the group's first test: 2 ** n
    # reads, refused at 14 groups by the step limit
    few = _emit_calls(_or_of_and_groups(10), monkeypatch)
    many = _emit_calls(_or_of_and_groups(40), monkeypatch)
    assert many < 6 * few, (few, many)
    # 400 groups: each nested in the one before would not parse again (333 were refused so)
    original = _function(_or_of_and_groups(400))
    source = depyf.decompile(original)
    assert source.count(" if ") == 0      # read as and/or, as written
    rebuilt = _function(source)
    for x in range(-1, 1202, 31):
        assert rebuilt(x) is original(x)


def test_a_reading_that_would_run_for_ever_is_refused_by_the_run_budget(monkeypatch):
    # every run of the executor spends from one budget per code object, so a reading that keeps
    # going over the same instructions (a bug) ends in a refusal naming where it was, not a hang
    from depyf.decompiler.executor import core

    source = "def f(x):\n    y = 0\n    for i in x:\n        if i:\n            y += i\n    return y\n"
    function = _function(source)
    assert _function(depyf.decompile(function))([1, 0, 2]) == 3
    monkeypatch.setattr(core, "RUN_BUDGET_BASE", 3)
    monkeypatch.setattr(core, "RUN_BUDGET_PER_INSTRUCTION", 0)
    with pytest.raises(depyf.DecompilationError, match="instruction budget spent") as caught:
        depyf.decompile(function)
    assert caught.value.offset is not None and caught.value.opname


def test_the_largest_generated_shapes_stay_far_inside_the_run_budget(monkeypatch):
    # the budget refuses no real code: the 1,000-branch elif chain, the 1,000-deep conditional
    # expression and a chained comparison of five operands run well under a tenth of it
    from depyf.decompiler.executor import core

    monkeypatch.setattr(core, "RUN_BUDGET_BASE", core.RUN_BUDGET_BASE // 10)
    monkeypatch.setattr(core, "RUN_BUDGET_PER_INSTRUCTION", core.RUN_BUDGET_PER_INSTRUCTION // 10)
    chain = "def f(x, a, b, c):\n    if x:\n        raise ValueError(x)\n    t = a == b == c == 1\n" \
            "    return t\n"
    for source in (_elif_chains_in_a_row(1000), _ifexp_chain(1000), chain):
        depyf.decompile(_function(source))
