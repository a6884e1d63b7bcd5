"""Opcode coverage: the report lists every opcode, and every opcode the compiler emits is handled."""

from __future__ import annotations

import dis
import subprocess
import sys
from pathlib import Path

import pytest

from depyf.decompiler import coverage as cov

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"

# Constructs the stdlib may not use (or not on every version); compiled from strings so this file
# imports everywhere. Each entry: (minimum version, source).
EXTRA_SOURCES = [
    ((3, 10), """
def f(x, *a, k=1, **kw):
    global g
    g = x
    del g
    match x:
        case [1, *rest] if rest: pass
        case {"a": 1, **others}: pass
        case int(real=0) | str(): pass
        case _: pass
    print(x)
    return [i for i in a], {i for i in a}, {i: i for i in a}, (i for i in a), f"{x!r:>{k}}"
async def g(x):
    async with x as y:
        async for i in y:
            await i
    return [i async for i in x]
class C:
    a: int = 1
    def m(self): return super().m(), __class__
try:
    pass
except (ValueError, TypeError) as e:
    pass
finally:
    pass
"""),
    ((3, 11), """
try:
    pass
except* ValueError as eg:
    pass
"""),
    ((3, 12), """
type Alias[T] = list[T]
def gen[T: int, *Ts, **P](x: T) -> T: return x
class Box[T]:
    def get(self) -> T: ...
"""),
    ((3, 14), """
def t(name): return t"hello {name!r:>10}"
try:
    pass
except ValueError, TypeError:
    pass
"""),
]


def _extra_sources():
    for minimum, source in EXTRA_SOURCES:
        if sys.version_info >= minimum:
            yield f"<extra {minimum[0]}.{minimum[1]}>", source


def _corpus_sources():
    for path in sorted(CORPUS_DIR.glob("*.py")):
        yield str(path), path.read_bytes()


@pytest.fixture(scope="module")
def emitted() -> dict[str, str]:
    """Opnames the running compiler emits for the stdlib, the test corpus and the extra sources."""
    sources = [*cov.stdlib_sources(), *_corpus_sources(), *_extra_sources()]
    return cov.compiler_emitted_opnames(sources)


def test_report_lists_every_opcode_of_dis_opmap():
    report = cov.coverage()
    assert {op.name for op in report.opcodes} == set(dis.opmap)
    assert all(op.number == dis.opmap[op.name] for op in report.opcodes)
    assert report.share == len(report.handled) / len(dis.opmap)
    assert len(report.handled) + len(report.unhandled) == len(dis.opmap)


def test_report_text_names_each_opcode_and_the_share():
    report = cov.coverage()
    text = cov.report()
    lines = text.splitlines()
    for op in report.opcodes:
        row = next(line for line in lines if line.split()[:1] == [op.name])
        assert row.split()[-1] == ("yes" if op.handled else "NO")
    assert (
        f"handled: {len(report.handled)} of {len(dis.opmap)} opcodes in dis.opmap ({report.share:.1%})"
        in text
    )
    assert sys.version.split()[0] in lines[0]


def test_handled_matches_the_normalisation_layer():
    from depyf.decompiler import instructions

    try:
        expected = instructions.handled_opnames()
    except Exception:  # no version module for this CPython: nothing is handled
        expected = frozenset()
    assert {op.name for op in cov.coverage().handled} == expected & set(dis.opmap)


def test_opcode_kinds():
    assert cov.opcode_kind("LOAD_FAST", 1) == cov.REAL
    assert cov.opcode_kind("INSTRUMENTED_CALL", 170) == cov.INSTRUMENTED
    assert cov.opcode_kind("SETUP_FINALLY", 256) == cov.PSEUDO
    assert cov.opcode_kind("CACHE", 0) == cov.INTERNAL


def test_public_entry_point():
    import depyf

    if not hasattr(depyf, "coverage"):
        pytest.skip("depyf.coverage is not exported yet")
    assert isinstance(depyf.coverage(), cov.CoverageReport)


@pytest.mark.skipif(sys.platform == "emscripten", reason="no subprocesses under pyodide")
def test_command_line_prints_the_table():
    result = subprocess.run([sys.executable, "-m", "depyf.decompiler.coverage"], capture_output=True,
                            text=True, check=True, cwd=Path(__file__).resolve().parents[2])
    assert "LOAD_CONST" in result.stdout and "opcodes in dis.opmap" in result.stdout


def test_stdlib_sources_are_found(emitted):
    # Every CPython compiles its stdlib into at least these; an empty walk would pass vacuously.
    assert {"LOAD_CONST", "RETURN_VALUE", "CALL_FUNCTION_EX", "IMPORT_NAME", "RAISE_VARARGS"} <= set(emitted)
    assert len(emitted) > 60


def test_emitted_opcodes_are_real(emitted):
    kinds = {name: cov.opcode_kind(name, dis.opmap[name]) for name in emitted}
    assert {name for name, kind in kinds.items() if kind != cov.REAL} == set()


def test_every_opcode_the_compiler_emits_is_handled(emitted):
    handled = cov.handled_opnames()
    missing = sorted(set(emitted) - handled)
    assert not missing, "not handled on CPython {}: {}".format(
        sys.version.split()[0], ", ".join(f"{name} (e.g. {emitted[name]})" for name in missing))
