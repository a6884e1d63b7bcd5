"""Decompiler throughput: functions per second over pure-Python stdlib modules, and the ratio to compile().

Every function code object of each module (methods, nested functions, lambdas and comprehensions
included) is decompiled with ``depyf.decompile``; the same modules' source is compiled with CPython's
``compile()``. Medians over repeats, measured side by side in one process. Decompiler failures are
counted and listed separately, so the script works whatever state the decompiler is in.

    python bench/decompile_speed.py [--repeats 3] [--json out.json] [--show-failures 20]
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import inspect
import json
import statistics
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import depyf

MODULES = [
    "textwrap", "difflib", "configparser", "argparse", "ipaddress", "statistics", "enum",
    "dataclasses", "typing", "tokenize", "email.utils", "zipfile", "tarfile", "pickle",
    "_pydecimal", "logging", "fractions", "string", "shlex", "csv", "json.decoder", "json.encoder",
    "heapq", "bisect", "calendar", "pprint", "inspect", "ast", "gettext", "locale", "optparse",
    "smtplib", "http.client", "urllib.parse", "uuid", "random", "functools", "collections",
    "contextlib", "pathlib", "shutil", "glob", "fnmatch", "subprocess", "threading", "queue",
    "sched", "base64", "quopri", "html.parser", "email.message", "email.feedparser", "wave",
    "plistlib", "gzip", "copy", "dis", "traceback", "weakref", "numbers", "operator", "colorsys",
]  # fmt: skip


def module_sources(names: list[str]) -> dict[str, tuple[str, str]]:
    """name -> (path, source) for each module that is pure Python in this interpreter."""
    out = {}
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        path = spec.origin
        out[name] = (path, Path(path).read_text(encoding="utf-8"))
    return out


def function_codes(code: types.CodeType) -> list[types.CodeType]:
    """Every function code object nested in ``code`` (class bodies and 3.12+'s scopes of type
    parameters, which source never writes alone, are walked, not counted)."""
    found = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_flags & inspect.CO_NEWLOCALS and not const.co_name.startswith("<generic parameters"):
                found.append(const)
            found.extend(function_codes(const))
    return found


def where(code: types.CodeType) -> str:
    name = getattr(code, "co_qualname", code.co_name)  # co_qualname: CPython 3.11+
    return f"{code.co_filename}:{code.co_firstlineno} {name}"


def decompile_all(codes: list[types.CodeType]) -> tuple[float, float, dict[str, list[str]]]:
    """Seconds (wall, process CPU) to decompile every code; failures grouped by exception type."""
    failures: dict[str, list[str]] = collections.defaultdict(list)
    start, start_cpu = time.perf_counter(), time.process_time()
    for code in codes:
        try:
            depyf.decompile(code)
        except depyf.DecompilationError as exc:
            failures["DecompilationError"].append(f"{where(code)}: {exc}")
        except Exception as exc:  # a decompiler bug must not stop the benchmark
            failures[type(exc).__name__].append(f"{where(code)}: {exc!r}"[:300])
    return time.perf_counter() - start, time.process_time() - start_cpu, failures


def compile_all(sources: dict[str, tuple[str, str]]) -> tuple[float, float]:
    """Seconds (wall, process CPU) to compile every module."""
    start, start_cpu = time.perf_counter(), time.process_time()
    for path, source in sources.values():
        compile(source, path, "exec", dont_inherit=True)
    return time.perf_counter() - start, time.process_time() - start_cpu


def measure(repeats: int, modules: list[str] | None = None) -> dict:
    sources = module_sources(modules or MODULES)
    codes = []
    for path, source in sources.values():
        codes.extend(function_codes(compile(source, path, "exec", dont_inherit=True)))
    decompile_times, compile_times, decompile_cpu, compile_cpu = [], [], [], []
    failures: dict[str, list[str]] = {}
    for _ in range(repeats):
        seconds, cpu = compile_all(sources)
        compile_times.append(seconds)
        compile_cpu.append(cpu)
        seconds, cpu, failures = decompile_all(codes)
        decompile_times.append(seconds)
        decompile_cpu.append(cpu)
    decompile_s = statistics.median(decompile_times)
    compile_s = statistics.median(compile_times)
    failed = sum(len(v) for v in failures.values())
    return {
        "benchmark": "decompile_speed",
        "modules": len(sources),
        "source_lines": sum(source.count("\n") for _, source in sources.values()),
        "functions": len(codes),
        "decompiled": len(codes) - failed,
        "failed": failed,
        "failures_by_type": {kind: len(items) for kind, items in failures.items()},
        "failures": {kind: items for kind, items in failures.items()},
        "repeats": repeats,
        "decompile_s": decompile_s,
        "compile_s": compile_s,
        "functions_per_second": len(codes) / decompile_s,
        "decompile_over_compile": decompile_s / compile_s,
        # process CPU time: on a loaded machine wall time also counts waiting for a core
        "decompile_cpu_s": statistics.median(decompile_cpu),
        "compile_cpu_s": statistics.median(compile_cpu),
        "decompile_over_compile_cpu": statistics.median(decompile_cpu) / statistics.median(compile_cpu),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the result here")
    parser.add_argument("--modules", help="comma-separated module names instead of the built-in corpus")
    parser.add_argument("--show-failures", type=int, default=20, help="failures listed per exception type")
    args = parser.parse_args(argv)
    result = measure(args.repeats, args.modules.split(",") if args.modules else None)
    print(
        f"{result['modules']} modules, {result['source_lines']} lines, {result['functions']} functions: "
        f"{result['decompiled']} decompiled, {result['failed']} failed {result['failures_by_type']}"
    )
    print(f"decompile: {result['decompile_s']:.3f} s  ({result['functions_per_second']:.0f} functions/s)")
    print(
        f"compile(): {result['compile_s']:.3f} s  -> "
        f"decompile / compile = {result['decompile_over_compile']:.1f}x"
    )
    print(
        f"process CPU time: decompile {result['decompile_cpu_s']:.3f} s, "
        f"compile() {result['compile_cpu_s']:.3f} s"
        f"  -> decompile / compile = {result['decompile_over_compile_cpu']:.1f}x"
    )
    for kind, items in result["failures"].items():
        print(f"{kind}: {len(items)}")
        for item in items[: args.show_failures]:
            print(f"  {item}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
