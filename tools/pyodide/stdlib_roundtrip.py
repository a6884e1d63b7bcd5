"""Real code on any CPython, pyodide included: decompile and recompile every function of the stdlib
modules that ``tools/stdlib_swap.py`` tests, and compare the recompiled bytecode with the original.

    scripts/pyver 3.14 -- python tools/pyodide/stdlib_roundtrip.py [--modules textwrap,json] [--json out.json]

``tools/stdlib_swap.py`` runs CPython's own tests with the swapped functions, which needs
subprocesses and ``Lib/test``; pyodide has neither, so there this script is the real-code check.
Per module it counts functions found, decompiled, recompiled, recompiled to *identical* bytecode
(same instructions and arguments, nested code objects included, line numbers and exception-table
layout ignored) and *equivalent* (recompiled, a drop-in replacement by ``depyf.recompile``'s own
checks, but laid out differently), and lists failures with their errors. Exit status 0 when no
function fails.
"""

from __future__ import annotations

import argparse
import dis
import importlib.util
import json
import sys
import time
import types
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))     # (stdlib_swap imports its neighbour ``swapping``)

from swapping import units_of  # noqa: E402

import depyf  # noqa: E402


def _stdlib_swap():
    spec = importlib.util.spec_from_file_location("_stdlib_swap", ROOT / "tools" / "stdlib_swap.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def instruction_stream(code: types.CodeType) -> list:
    """What the code does, without positions: opnames and arguments, nested code compared recursively."""
    stream = []
    for ins in dis.get_instructions(code):
        if isinstance(ins.argval, types.CodeType):
            stream.append((ins.opname, ins.argval.co_name, instruction_stream(ins.argval)))
        elif ins.opname in ("NOP", "CACHE"):
            continue
        elif ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            stream.append((ins.opname,))  # targets move with any layout change
        else:
            stream.append((ins.opname, repr(ins.argval)))
    return stream


def module_report(name: str, units_of) -> dict:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return {"module": name, "error": "not found"}
    try:
        module_code = spec.loader.get_code(name)
    except Exception as exc:  # e.g. a module pyodide does not ship
        return {"module": name, "error": f"{type(exc).__name__}: {exc}"}
    counts = Counter(found=0, decompiled=0, recompiled=0, identical=0, equivalent=0)
    failures = []
    for code in units_of(module_code):
        counts["found"] += 1
        try:
            source = depyf.decompile(code)
        except Exception as exc:  # recorded per function
            failures.append(_failure(code, "decompile", exc))
            continue
        counts["decompiled"] += 1
        try:
            new = depyf.recompile(code).code
        except Exception as exc:
            failures.append(_failure(code, "recompile", exc))
            continue
        del source
        counts["recompiled"] += 1
        same = instruction_stream(new) == instruction_stream(code)
        counts["identical" if same else "equivalent"] += 1
    return {"module": name, **counts, "failures": failures}


def _failure(code: types.CodeType, stage: str, exc: Exception) -> dict:
    message = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    return {"qualname": getattr(code, "co_qualname", code.co_name), "line": code.co_firstlineno,
            "stage": stage, "error": message}


def print_table(reports: list[dict]) -> None:
    print(f"CPython {sys.version.split()[0]} ({sys.platform})")
    print(f"| {'module':<16} | found | decompiled | recompiled | identical | equivalent | failures |")
    print(f"|{'-' * 18}|-------|------------|------------|-----------|------------|----------|")
    totals = Counter()
    for r in reports:
        if "error" in r:
            print(f"| {r['module']:<16} | {r['error']} |")
            continue
        for key in ("found", "decompiled", "recompiled", "identical", "equivalent"):
            totals[key] += r[key]
        totals["failures"] += len(r["failures"])
        print(f"| {r['module']:<16} | {r['found']:>5} | {r['decompiled']:>10} | {r['recompiled']:>10} | "
              f"{r['identical']:>9} | {r['equivalent']:>10} | {len(r['failures']):>8} |")
    print(
        f"| {'**total**':<16} | {totals['found']:>5} | {totals['decompiled']:>10} | "
        f"{totals['recompiled']:>10} | "
        f"{totals['identical']:>9} | {totals['equivalent']:>10} | {totals['failures']:>8} |"
    )
    errors = Counter(f"[{f['stage']}] {f['error']}" for r in reports for f in r.get("failures", ()))
    if errors:
        print("\nMost common failures:")
        for error, count in errors.most_common(12):
            print(f"- {count} x {error}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", help="comma-separated module names (default: stdlib_swap's list)")
    parser.add_argument("--json", help="write the per-module results here")
    args = parser.parse_args(argv)
    swap = _stdlib_swap()
    names = args.modules.split(",") if args.modules else list(swap.MODULES)
    started = time.perf_counter()
    reports = [module_report(name, units_of) for name in names]
    print_table(reports)
    print(f"\n{len(names)} modules in {time.perf_counter() - started:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"python": sys.version, "modules": reports}, indent=1))
    return 0 if all(not r.get("failures") and "error" not in r for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
