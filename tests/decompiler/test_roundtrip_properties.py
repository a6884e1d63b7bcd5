"""Property-based round trips.

(a) Generated executable functions (arithmetic, comparisons, boolean operators, if/elif/else,
    bounded for/while loops with break/continue/else, try/except/else/finally, comprehensions,
    nested closures): decompile -> recompile -> same results on generated inputs.
(b) ``hypothesmith`` programs: every code object decompiles to source that parses, and decompiling
    the recompiled code gives the same source again (a fixed point), or the decompiler raises
    ``DecompilationError``. Any other exception, or a decompile that runs past its time bound,
    fails.

The default run is deterministic: derandomized, no example database, so every run (a newcomer's,
CI's) draws the same programs, and the programs random exploration once found wrong
(``property_cases/*.pysrc``) are replayed first. Random exploration is a separate command with a
time budget (``scripts/explore.sh --minutes 10``, ``DEPYF_EXPLORE=1``); each program it finds
failing is written to ``property_cases/`` as a case to add. Each property stays under about a
minute on one core.
"""

from __future__ import annotations

import ast
import hashlib
import os
import sys
import types
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from corpus._cases import Call  # noqa: E402
from corpus_harness import (  # noqa: E402
    BACKEND,
    TimeLimitExceeded,
    layout_differences,
    run_case,
    same,
    time_limit,
    with_code,
)
from hypothesis import HealthCheck, Phase, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from depyf import DecompilationError  # noqa: E402

EXPLORE = os.environ.get("DEPYF_EXPLORE") == "1"
_PROFILE = "depyf-explore" if EXPLORE else "depyf-fixed"
# Shrinking a failure of a large generated program can take many minutes; it is off unless asked
# for (DEPYF_HYPOTHESIS_SHRINK=1), so a failing run still ends in about a minute.
_PHASES = [Phase.explicit, Phase.generate, Phase.target]
if os.environ.get("DEPYF_HYPOTHESIS_SHRINK") == "1":
    _PHASES.append(Phase.shrink)
settings.register_profile(_PROFILE, derandomize=not EXPLORE, database=None, deadline=None, print_blob=True,
                          phases=_PHASES, report_multiple_bugs=False,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                 HealthCheck.filter_too_much])
BASE = settings.get_profile(_PROFILE)
# Programs exploration found failing, replayed by every run (see ``record_failure``)
CASES_DIR = Path(__file__).resolve().parent / "property_cases"
# Generous: a shared 2-core CI machine under load runs the longest input (a long boolean chain)
# in up to about 25 s; the step limit inside the decompiler is what bounds the work.
DECOMPILE_TIME_BOUND_S = 60.0

# --------------------------------------------------------------------------- (a) generated functions

VARS = ("a", "b", "c", "x", "y")
INPUTS = st.tuples(*[st.integers(-4, 4)] * 3)


def _atom() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(VARS), st.integers(-3, 9).map(str))


def _expr(depth: int) -> st.SearchStrategy[str]:
    if depth <= 0:
        return _atom()
    sub = _expr(depth - 1)
    binop = st.tuples(sub, st.sampled_from(["+", "-", "*", "//", "%", "&", "|", "^"]), sub).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})")
    compare = st.tuples(sub, st.sampled_from(["<", "<=", "==", "!=", ">", ">="]), sub).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})")
    chained = st.tuples(sub, sub, sub).map(lambda t: f"({t[0]} < {t[1]} <= {t[2]})")
    boolop = st.tuples(sub, st.sampled_from(["and", "or"]), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
    negation = sub.map(lambda e: f"(not {e})")
    unary = sub.map(lambda e: f"(-{e})")
    ternary = st.tuples(sub, sub, sub).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})")
    comprehension = st.tuples(sub, st.integers(0, 4), sub).map(
        lambda t: f"sum([{t[0]} + i for i in range({t[1]}) if {t[2]} or i])")
    builtin = st.tuples(sub, sub).map(lambda t: f"max({t[0]}, {t[1]})")
    return st.one_of(
        _atom(), binop, compare, chained, boolop, negation, unary, ternary, comprehension, builtin
    )


@st.composite
def _block(draw, depth: int, in_loop: bool, indent: int) -> list[str]:
    pad = "    " * indent
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kinds = ["assign", "augassign", "if", "return"]
        if depth > 0:
            kinds += ["if", "for", "while", "try", "closure"]
        if in_loop:
            kinds += ["break", "continue"]
        kind = draw(st.sampled_from(kinds))
        e = _expr(2)
        if kind == "assign":
            lines.append(f"{pad}{draw(st.sampled_from(VARS))} = {draw(e)}")
        elif kind == "augassign":
            op = draw(st.sampled_from(["+=", "-=", "*=", "|=", "^="]))
            lines.append(f"{pad}{draw(st.sampled_from(VARS))} {op} {draw(e)}")
        elif kind == "return":
            lines.append(f"{pad}return {draw(e)}")
            break
        elif kind in ("break", "continue"):
            lines.append(f"{pad}if {draw(e)}:")
            lines.append(f"{pad}    {kind}")
        elif kind == "if":
            lines.append(f"{pad}if {draw(e)}:")
            lines += draw(_block(depth - 1, in_loop, indent + 1))
            for _ in range(draw(st.integers(0, 2))):
                lines.append(f"{pad}elif {draw(e)}:")
                lines += draw(_block(depth - 1, in_loop, indent + 1))
            if draw(st.booleans()):
                lines.append(f"{pad}else:")
                lines += draw(_block(depth - 1, in_loop, indent + 1))
        elif kind == "for":
            var = draw(st.sampled_from(["i", "j"]))
            lines.append(f"{pad}for {var} in range({draw(st.integers(0, 4))}):")
            lines.append(f"{pad}    x = x + {var}")
            lines += draw(_block(depth - 1, True, indent + 1))
            if draw(st.booleans()):
                lines.append(f"{pad}else:")
                lines += draw(_block(depth - 1, in_loop, indent + 1))
        elif kind == "while":
            counter = f"w{indent}"
            lines.append(f"{pad}{counter} = 0")
            lines.append(f"{pad}while {counter} < {draw(st.integers(0, 4))} and {draw(e)} or {counter} < 1:")
            lines.append(f"{pad}    {counter} += 1")
            lines += draw(_block(depth - 1, True, indent + 1))
            if draw(st.booleans()):
                lines.append(f"{pad}else:")
                lines += draw(_block(depth - 1, in_loop, indent + 1))
        elif kind == "try":
            lines.append(f"{pad}try:")
            lines.append(f"{pad}    y = {draw(e)} // {draw(e)}")
            lines += draw(_block(depth - 1, in_loop, indent + 1))
            handlers = draw(st.sampled_from(["except", "except-else", "finally", "except-finally"]))
            if handlers.startswith("except"):
                caught = draw(st.sampled_from(["ZeroDivisionError", "ArithmeticError", "Exception"]))
                lines.append(f"{pad}except {caught}:")
                lines += draw(_block(depth - 1, in_loop, indent + 1))
            if handlers == "except-else":
                lines.append(f"{pad}else:")
                lines += draw(_block(depth - 1, in_loop, indent + 1))
            if handlers.endswith("finally"):
                lines.append(f"{pad}finally:")
                lines.append(f"{pad}    c = c + 1")
        elif kind == "closure":
            lines.append(f"{pad}def g(k):")
            lines.append(f"{pad}    nonlocal a")
            lines.append(f"{pad}    a = a + k")
            lines.append(f"{pad}    return {draw(e)} + k")
            lines.append(f"{pad}b = g({draw(e)})")
    return lines


@st.composite
def generated_functions(draw) -> str:
    body = ["    x = 0", "    y = 1", *draw(_block(2, False, 1)), "    return (a, b, c, x, y)"]
    return "def f(a, b, c):\n" + "\n".join(body) + "\n"


@settings(BASE, max_examples=150)
@given(source=generated_functions(), inputs=st.lists(INPUTS, min_size=3, max_size=6))
def test_generated_functions_round_trip(source: str, inputs: list[tuple]):
    with record_failure("function", source, inputs):
        _check_function(source, inputs)


def _check_function(source: str, inputs: list[tuple]) -> None:
    namespace: dict = {}
    exec(compile(source, "<generated>", "exec"), namespace)
    original = namespace["f"]
    try:
        with time_limit(DECOMPILE_TIME_BOUND_S):
            rec = BACKEND.recompile(original.__code__)
    except TimeLimitExceeded:
        pytest.fail(f"decompiling took longer than {DECOMPILE_TIME_BOUND_S} s:\n{source}")
    assert not layout_differences(original.__code__, rec.code)
    new = with_code(original, rec.code)
    for args in inputs:
        expected = run_case(original, Call(args))
        got = run_case(new, Call(args))
        assert same(expected, got), (f"f{args}: expected {expected.describe()}, got {got.describe()}\n"
                                     f"--- original ---\n{source}--- decompiled ---\n{rec.source}")


# --------------------------------------------------------------------------- (b) hypothesmith programs

def _code_objects(code: types.CodeType) -> list[types.CodeType]:
    out = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out.extend(_code_objects(const))
    return out


def _check_program(source: str) -> None:
    try:
        module_code = compile(source, "<hypothesmith>", "exec")
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        assume(False)  # CPython itself rejects it
        return
    for code in _code_objects(module_code):
        if code.co_name in {"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"}:
            continue  # covered by the code that contains them
        try:
            with time_limit(DECOMPILE_TIME_BOUND_S):
                _fixed_point(code)
        except DecompilationError:
            continue  # a clear refusal is allowed; wrong code or another exception is not
        except TimeLimitExceeded:
            pytest.fail(f"decompiling {code.co_name} ran past {DECOMPILE_TIME_BOUND_S} s:\n{source}")


def _fixed_point(code: types.CodeType) -> None:
    if code.co_name == "<module>":
        first = BACKEND.decompile(code)
        ast.parse(first)
        again = BACKEND.decompile(compile(first, "<hypothesmith>", "exec"))
    else:
        rec = BACKEND.recompile(code)
        first = rec.source
        ast.parse(first)
        again = BACKEND.decompile(rec.code)
    assert again == first, f"not a fixed point:\n--- first ---\n{first}\n--- second ---\n{again}"


hypothesmith = pytest.importorskip("hypothesmith")


@settings(BASE, max_examples=80)
@given(source=hypothesmith.from_grammar())
def test_grammar_programs_decompile_to_a_fixed_point(source: str):
    with record_failure("program", source):
        _check_program(source)


@settings(BASE, max_examples=12)
@given(source=hypothesmith.from_node())
def test_node_programs_decompile_to_a_fixed_point(source: str):
    with record_failure("program", source):
        _check_program(source)


# --------------------------------------------------------------------------- past findings

class record_failure:
    """While exploring, write a program whose check fails to ``property_cases/`` (a case to add,
    replayed by every later run); otherwise do nothing."""

    def __init__(self, kind: str, source: str, inputs: list[tuple] | None = None):
        self.kind, self.source, self.inputs = kind, source, inputs

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is not None and EXPLORE and not isinstance(exc, hypothesis.errors.UnsatisfiedAssumption):
            write_case(self.kind, self.source, self.inputs, f"{exc_type.__name__}: {exc}".splitlines()[0])
        return False


def write_case(kind: str, source: str, inputs: list[tuple] | None, reason: str) -> Path:
    """``property_cases/<kind>_<hash>.pysrc``: a header (kind, inputs, why it failed), then the program."""
    CASES_DIR.mkdir(exist_ok=True)
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    path = CASES_DIR / f"{kind}_{digest}.pysrc"
    header = [f"# kind: {kind}"]
    if inputs is not None:
        header.append(f"# inputs: {inputs!r}")
    header.append(f"# found failing: {(reason.splitlines() or [''])[0][:200]}")
    path.write_text("\n".join(header) + "\n" + source)
    return path


def read_case(path: Path) -> tuple[str, str, list[tuple] | None]:
    """(kind, source, inputs) of a stored case."""
    text = path.read_text()
    kind, inputs, lines = "program", None, text.splitlines(keepends=True)
    while lines and lines[0].startswith("# ") and ":" in lines[0]:
        key, _, value = lines.pop(0)[2:].partition(":")
        if key == "kind":
            kind = value.strip()
        elif key == "inputs":
            inputs = ast.literal_eval(value.strip())
        elif key == "allow" and value.strip() == "refusal":
            kind += "+refusal"
        elif key != "found failing":
            lines.insert(0, f"# {key}:{value}")
            break
    return kind, "".join(lines), inputs


STORED_CASES = sorted(CASES_DIR.glob("*.pysrc")) if CASES_DIR.is_dir() else []


@pytest.mark.parametrize("path", STORED_CASES, ids=lambda p: p.stem)
def test_stored_cases_replay(path: Path):
    """Every program exploration once found failing: a generated function round-trips on its
    inputs (a case marked ``# allow: refusal`` may still be refused, never answered wrongly), a
    grammar program decompiles to a fixed point (or is refused)."""
    kind, source, inputs = read_case(path)
    if kind.startswith("function"):
        try:
            _check_function(source, inputs or [(0, 0, 0)])
        except DecompilationError as exc:
            if not kind.endswith("+refusal"):
                raise
            pytest.xfail(f"still refused (never wrong code): {exc}")
    else:
        try:
            _check_program(source)
        except hypothesis.errors.UnsatisfiedAssumption:
            pytest.skip("CPython itself rejects this program")


def test_pathological_input_is_refused_or_bounded():
    """Deep nesting and long boolean chains: an answer or a DecompilationError, within the bound."""
    deep_if = (
        "def f(a):\n"
        + "".join("    " * (i + 1) + f"if a > {i}:\n" for i in range(60))
        + "    " * 61
        + "return a\n"
    )
    long_bool = (
        "def g(a, b):\n    return "
        + " and ".join(f"(a or b{'' if i % 2 else ' and a'})" for i in range(300))
        + "\n"
    )
    many_elifs = "def h(a):\n    if a == 0:\n        return 0\n" + "".join(
        f"    elif a == {i}:\n        return {i}\n" for i in range(1, 400))
    for source in (deep_if, long_bool, many_elifs):
        namespace: dict = {}
        exec(compile(source, "<pathological>", "exec"), namespace)
        func = next(v for k, v in namespace.items() if not k.startswith("__"))
        try:
            with time_limit(DECOMPILE_TIME_BOUND_S):
                rec = BACKEND.recompile(func.__code__)
        except DecompilationError:
            continue
        except TimeLimitExceeded:
            pytest.fail(f"decompiling {func.__name__} ran past {DECOMPILE_TIME_BOUND_S} s")
        new = with_code(func, rec.code)
        args = (5,) if func.__code__.co_argcount == 1 else (0, 1)
        assert same(run_case(func, Call(args)), run_case(new, Call(args)))


def test_a_found_case_is_written_and_read_back(tmp_path, monkeypatch):
    """What exploration writes is what the replay reads: kind, inputs and the program unchanged."""
    monkeypatch.setattr(sys.modules[__name__], "CASES_DIR", tmp_path)
    source = "def f(a, b, c):\n    return (a, b, c, 0, 1)\n"
    path = write_case("function", source, [(1, 2, 3)], "AssertionError: f(1, 2, 3): expected ...\nmore")
    assert path.parent == tmp_path and path.suffix == ".pysrc"
    assert read_case(path) == ("function", source, [(1, 2, 3)])
    assert "# found failing: AssertionError: f(1, 2, 3): expected ..." in path.read_text()
