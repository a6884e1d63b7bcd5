"""Prove the decompiler on code it has never seen: swap decompiled-and-recompiled code into every
module of an installed third-party library and run that library's own test suite.

    python tools/library_swap.py networkx [--tests networkx] [--json out.json] [--timeout 1800]
    python tools/library_swap.py mpmath toolz --pytest-args "-x -q"
    python tools/library_swap.py networkx sympy --recompile-only    # no tests: refusals only

Many libraries ship their tests inside the package (networkx, mpmath, toolz, sympy, ...). For
each library two fresh pytest runs of ``pytest --pyargs <tests>`` are made, in the interpreter that
runs this script (install the library and pytest there first):

* baseline: the tests as they are; the ids of passing tests are recorded;
* swapped: before any test is collected, every module of the package is imported (modules that
  fail to import, e.g. for a missing optional dependency, are listed and left alone; the test
  modules themselves are not swapped) and every function of it is recompiled and swapped in by
  ``tools/swapping.py``, exactly as the stdlib swap does.

The report: functions found, decompiled, recompiled, swapped, failures with their errors, tests
passing before and after, and the ids of tests that passed before and fail after, each with why
(the end of its error, or its skip reason). The bar: zero such tests and no failures. Exit status 0
when every library meets it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swapping import print_problems

TOOLS = Path(__file__).resolve().parent
ROOT = TOOLS.parent


def run_library(package: str, tests: str, timeout: float, pytest_args: list[str]) -> dict:
    """Baseline and swapped test runs of one library, each in a fresh interpreter; the comparison."""
    started = time.perf_counter()
    baseline = _pytest_run("baseline", package, tests, timeout, pytest_args)
    swapped = _pytest_run("swap", package, tests, timeout, pytest_args)
    before, after = set(baseline.get("passed", [])), set(swapped.get("passed", []))
    swap = swapped.get("swap", {})
    regressions = sorted(before - after)
    why = swapped.get("why_not_passed", {})
    report = {
        "library": package,
        "version": swapped.get("version") or baseline.get("version"),
        "modules": swap.get("modules", 0),
        "modules_not_imported": swap.get("not_imported", []),
        "functions_found": swap.get("found", 0),
        "decompiled": swap.get("decompiled", 0),
        "recompiled": swap.get("recompiled", 0),
        "swapped": swap.get("swapped", 0),
        "not_live": swap.get("not_live", 0),
        "equal_codes": swap.get("equal_codes", 0),
        "failures": swap.get("failures", []),
        "tests_passed_before": len(before),
        "tests_passed_after": len(after),
        "regressions": regressions,
        # a regression without a reason was not run at all after the swap (deselected, or the run stopped)
        "regression_reasons": {t: why.get(t, "not run after the swap") for t in regressions},
        "decompile_seconds": round(swap.get("decompile_seconds", 0.0), 1),
        "seconds": round(time.perf_counter() - started, 1),
    }
    for label, run in (("baseline", baseline), ("swap", swapped)):
        if run.get("problem"):
            report[f"{label}_problem"] = run["problem"]
    return report


def _pytest_run(mode: str, package: str, tests: str, timeout: float, pytest_args: list[str]) -> dict:
    with tempfile.TemporaryDirectory(prefix="depyf-libswap-") as tmp:
        out = Path(tmp) / "result.json"
        env = dict(os.environ,
                   PYTHONPATH=os.pathsep.join(p for p in (str(TOOLS), str(ROOT), os.environ.get("PYTHONPATH"))
                                              if p),
                   DEPYF_LIBSWAP_MODE=mode, DEPYF_LIBSWAP_PACKAGE=package, DEPYF_LIBSWAP_OUT=str(out))
        cmd = [sys.executable, "-m", "pytest", "--pyargs", tests, "-p", "library_swap_plugin",
               "-p", "no:cacheprovider", "-q", "--no-header", "-rN",
               # a test module needing an optional dependency that is not installed is left out
               "--continue-on-collection-errors", *pytest_args]
        try:
            proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)
            code, output = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as exc:
            code, output = "timeout", (exc.stdout or b"").decode(errors="replace")
        result = json.loads(out.read_text()) if out.exists() else {}
        if not out.exists() or code not in (0, 1):
            result["problem"] = f"{mode} pytest run ended ({code}):\n{output[-3000:]}"
        return result


def recompile_only(libraries: list[str]) -> int:
    """Recompile every function of each library in this process and report what is refused: a
    check of the decompiler and its flow check on unseen code in seconds, without the tests."""
    from library_swap_plugin import _library_modules, library_version
    from swapping import recompile_modules

    refused = 0
    for package in libraries:
        modules, not_imported = _library_modules(package)
        done = recompile_modules(modules)
        version = library_version(sys.modules[package])
        print(f"{package} {version}: {done['recompiled']} of {done['found']} functions recompiled "
              f"({len(modules)} modules, {done['decompile_seconds']:.0f} s); slowest: "
              + ", ".join(f"{name} {t} s" for t, name in done["slowest"][:3]))
        print_problems(package, {**done, "regressions": []}, most=30)
        refused += len(done["failures"])
    print(f"Python {sys.version.split()[0]}: {refused} refused")
    return 0 if not refused else 1


def meets_bar(r: dict) -> bool:
    """No test broken, nothing refused, and every function found swapped, not live, or equal to
    one that was (``equal_codes``)."""
    accounted = r["swapped"] + r["not_live"] + r.get("equal_codes", 0)
    return (not r["regressions"] and not r["failures"] and r["functions_found"] > 0
            and accounted == r["functions_found"] and r["tests_passed_before"] > 0
            and "baseline_problem" not in r and "swap_problem" not in r)


def print_report(reports: list[dict]) -> None:
    heads = ("library", "version", "modules", "found", "recompiled", "swapped", "not live", "equal codes",
             "pass before", "pass after", "regressed", "s")
    print("| " + " | ".join(heads) + " |")
    print("|" + "---|" * len(heads))
    for r in reports:
        cells = (
            r["library"],
            r["version"],
            r["modules"],
            r["functions_found"],
            r["recompiled"],
            r["swapped"],
            r["not_live"],
            r.get("equal_codes", 0),
            r["tests_passed_before"],
            r["tests_passed_after"],
            len(r["regressions"]),
            r["seconds"],
        )
        print("| " + " | ".join(str(c) for c in cells) + " |")
    for r in reports:
        if r["modules_not_imported"]:
            print(f"\n{r['library']}: {len(r['modules_not_imported'])} modules not imported (left alone): "
                  + ", ".join(r["modules_not_imported"][:10]))
        print_problems(r["library"], r, most=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("libraries", nargs="+", help="importable package names")
    parser.add_argument("--tests", help="what pytest --pyargs runs (default: the package itself)")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments, one string")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per pytest run (default 1800)")
    parser.add_argument("--json", help="write the per-library reports to this file")
    parser.add_argument("--recompile-only", action="store_true",
                        help="only recompile every function (flow check on) and report refusals and the "
                             "slowest functions; no tests run")
    parser.add_argument("--_identity", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._identity:  # harness check: the real source, through depyf's rebuild step
        os.environ["DEPYF_LIBSWAP_IDENTITY"] = "1"

    if args.recompile_only:
        return recompile_only(args.libraries)
    started = time.perf_counter()
    reports = [run_library(lib, args.tests or lib, args.timeout, args.pytest_args.split())
               for lib in args.libraries]
    print_report(reports)
    ok = [r for r in reports if meets_bar(r)]
    print(
        f"\n{len(ok)}/{len(reports)} libraries meet the bar; "
        f"{time.perf_counter() - started:.0f} s wall time, "
        f"Python {sys.version.split()[0]}"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"python": sys.version.split()[0], "libraries": reports}, indent=1)
        )
    return 0 if len(ok) == len(reports) else 1


if __name__ == "__main__":
    sys.exit(main())
