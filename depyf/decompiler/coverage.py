"""Which opcodes of the running CPython the decompiler handles.

``coverage()`` lists every opcode of ``dis.opmap`` with whether the normalisation layer accepts
it, so a user on a new CPython sees at once what is missing. Opcodes that never appear in the
``co_code`` of a freshly compiled code object (instrumented forms, pseudo-instructions, internal
ones) are listed too but marked, since the decompiler never meets them.

``compiler_emitted_opnames()`` collects the opnames the compiler really emits for a body of
source; the tests use it to assert that every emittable opcode is handled.
"""

from __future__ import annotations

import dis
import importlib.util
import os
import sys
import types
import warnings
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CoverageReport", "OpcodeStatus", "compiler_emitted_opnames", "coverage", "main", "report",
           "stdlib_sources"]

# Kinds of opcode; only "real" ones can be in the co_code of a code object the compiler made.
REAL, INSTRUMENTED, PSEUDO, INTERNAL = "real", "instrumented", "pseudo", "internal"
# Present in dis.opmap but only ever produced by the interpreter itself: caches, the tier-2 JIT,
# and EXIT_INIT_CHECK, which lives in the shim frame of specialised ``__init__`` calls (3.13+).
_INTERNAL_NAMES = frozenset({"CACHE", "RESERVED", "ENTER_EXECUTOR", "INTERPRETER_EXIT", "TRACE_RECORD",
                             "EXIT_INIT_CHECK"})
_FIRST_PSEUDO_OPCODE = 256


@dataclass(frozen=True)
class OpcodeStatus:
    """One opcode of the running interpreter and whether the decompiler handles it."""

    name: str
    number: int
    kind: str
    handled: bool


@dataclass(frozen=True)
class CoverageReport:
    """Every opcode of ``dis.opmap`` for one CPython, with the decompiler's support."""

    python: str
    opcodes: tuple[OpcodeStatus, ...]

    @property
    def handled(self) -> tuple[OpcodeStatus, ...]:
        return tuple(op for op in self.opcodes if op.handled)

    @property
    def unhandled(self) -> tuple[OpcodeStatus, ...]:
        return tuple(op for op in self.opcodes if not op.handled)

    @property
    def share(self) -> float:
        """Handled share of all opcodes in ``dis.opmap``."""
        return len(self.handled) / len(self.opcodes) if self.opcodes else 1.0

    @property
    def real_share(self) -> float:
        """Handled share of the opcodes that can appear in compiled code (kind ``real``)."""
        real = [op for op in self.opcodes if op.kind == REAL]
        return sum(op.handled for op in real) / len(real) if real else 1.0

    def __str__(self) -> str:
        return format_report(self)


def handled_opnames() -> frozenset[str]:
    """Raw opnames the normalisation layer accepts; empty when this CPython has no version module."""
    try:
        from depyf.decompiler.instructions import handled_opnames as from_normaliser

        return frozenset(from_normaliser())
    except Exception:  # no version module for this interpreter, or the layer is not there yet
        return frozenset()


def opcode_kind(name: str, number: int) -> str:
    """``real``, or why the opcode never appears in freshly compiled bytecode."""
    if name.startswith("INSTRUMENTED_"):
        return INSTRUMENTED
    if number >= _FIRST_PSEUDO_OPCODE:
        return PSEUDO
    if name in _INTERNAL_NAMES:
        return INTERNAL
    return REAL


def coverage() -> CoverageReport:
    """Every opcode of ``dis.opmap`` for the running CPython and whether it is handled."""
    handled = handled_opnames()
    opcodes = tuple(
        OpcodeStatus(name, number, opcode_kind(name, number), name in handled)
        for name, number in sorted(dis.opmap.items(), key=lambda item: (item[1], item[0]))
    )
    return CoverageReport(python=sys.version.split()[0], opcodes=opcodes)


def format_report(cov: CoverageReport) -> str:
    lines = [f"depyf decompiler opcode coverage on CPython {cov.python}", ""]
    lines.append(f"{'opcode':<40} {'number':>6}  {'kind':<13} handled")
    for op in cov.opcodes:
        lines.append(f"{op.name:<40} {op.number:>6}  {op.kind:<13} {'yes' if op.handled else 'NO'}")
    real = [op for op in cov.opcodes if op.kind == REAL]
    lines.append("")
    lines.append(f"handled: {len(cov.handled)} of {len(cov.opcodes)} opcodes in dis.opmap ({cov.share:.1%})")
    lines.append(f"handled: {sum(op.handled for op in real)} of {len(real)} opcodes that compiled code can "
                 f"contain ({cov.real_share:.1%}; the others are {INSTRUMENTED}, {PSEUDO} or {INTERNAL})")
    missing = [op.name for op in real if not op.handled]
    if missing:
        lines.append("not handled: " + ", ".join(missing))
    return "\n".join(lines)


def report() -> str:
    """The coverage table for the running CPython, as printed by ``depyf coverage``."""
    return format_report(coverage())


# --------------------------------------------------------------------------- what the compiler emits

def stdlib_sources(include_tests: bool = False) -> Iterator[tuple[str, bytes]]:
    """``(path, source)`` of every ``.py`` file of the running CPython's standard library.

    Works where the stdlib is a directory (native builds) and where it is a zip (pyodide).
    ``site-packages`` is skipped, and so are the test packages unless ``include_tests``.
    """
    # textwrap is pure Python and never frozen (os is frozen in some builds, its __file__ made up).
    root = os.path.dirname(importlib.util.find_spec("textwrap").origin)
    zip_path, inner = _split_zip(root)
    if zip_path is None:
        for path in sorted(Path(root).rglob("*.py")):
            rel = path.relative_to(root).parts
            if _wanted(rel, include_tests):
                yield str(path), path.read_bytes()
        return
    with zipfile.ZipFile(zip_path) as archive:
        for name in sorted(archive.namelist()):
            if not name.endswith(".py") or not name.startswith(inner):
                continue
            if _wanted(tuple(name[len(inner):].split("/")), include_tests):
                yield f"{zip_path}/{name}", archive.read(name)


def _split_zip(path: str) -> tuple[str | None, str]:
    """``(archive, prefix inside it)`` when ``path`` lies inside a zip file, else ``(None, '')``."""
    parts = Path(path).parts
    for k in range(len(parts), 0, -1):
        candidate = os.path.join(*parts[:k])
        if os.path.isfile(candidate) and zipfile.is_zipfile(candidate):
            inner = "/".join(parts[k:])
            return candidate, (inner + "/" if inner else "")
    return None, ""


def _wanted(rel: tuple[str, ...], include_tests: bool) -> bool:
    if "site-packages" in rel:
        return False
    if not include_tests and any(p in ("test", "tests", "idle_test") for p in rel[:-1]):
        return False
    return True


def compiler_emitted_opnames(sources: Iterable[tuple[str, bytes | str]]) -> dict[str, str]:
    """Opnames the compiler emits for ``sources``, each with the first file that showed it.

    Sources that do not compile on this interpreter are skipped (the stdlib carries a few
    deliberately broken files). Nested code objects are included.
    """
    seen: dict[str, str] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings of old stdlib files
        for name, source in sources:
            try:
                code = compile(source, name, "exec", dont_inherit=True)
            except (SyntaxError, ValueError):
                continue
            for op in _opnames(code):
                seen.setdefault(op, name)
    return seen


def _opnames(code: types.CodeType) -> Iterator[str]:
    for ins in dis.get_instructions(code):
        yield ins.opname
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _opnames(const)


def main(argv: list[str] | None = None) -> int:
    """``depyf coverage``: print the table for the running CPython."""
    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
