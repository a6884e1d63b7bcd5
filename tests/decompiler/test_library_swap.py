"""The third-party swap proof (tools/library_swap.py) on a small fixture library.

The real runs (networkx, mpmath, toolz, ... on every CPython) take minutes each and need those
libraries installed; these checks show that the harness swaps every function of a package, runs
the package's own tests, and notices code that behaves differently.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "library_swap.py"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "swaplib"
pytestmark = pytest.mark.skipif(sys.platform == "emscripten", reason="pyodide cannot start processes")


def _run(
    tmp_path: Path, *args: str, env: dict | None = None, library: str = "swaplib"
) -> tuple[int, dict, str]:
    out = tmp_path / "swap.json"
    pythonpath = os.pathsep.join([str(FIXTURE), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(TOOL), library, "--json", str(out), *args],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": pythonpath, **(env or {})})
    return proc.returncode, json.loads(out.read_text())["libraries"][0], proc.stdout + proc.stderr


def test_decompiled_library_passes_its_own_tests(tmp_path):
    rc, report, text = _run(tmp_path)
    assert rc == 0, text
    assert report["modules"] == 2
    assert report["functions_found"] == report["recompiled"] == report["swapped"] == 5
    assert report["tests_passed_before"] == report["tests_passed_after"] == 4
    assert report["regressions"] == []


def test_harness_notices_broken_code(tmp_path):
    rc, report, text = _run(tmp_path, "--_identity", env={"DEPYF_SWAP_MUTATE": "describe"})
    assert rc == 1
    assert report["regressions"] == ["tests/test_swaplib.py::test_describe"], text
    # the error that broke it is kept, so a regression can be told from a flaky test without a rerun
    reason = report["regression_reasons"]["tests/test_swaplib.py::test_describe"]
    assert reason.startswith("failed in call:") and "RuntimeError: mutant" in reason, reason
    assert "RuntimeError: mutant" in text


@pytest.mark.skipif(importlib.util.find_spec("toolz") is None, reason="toolz is not installed")
def test_toolz_passes_its_own_tests_after_the_swap(tmp_path):
    # a real library whose swap run takes about 20 s (toolz ships its tests in the package)
    rc, report, text = _run(tmp_path, library="toolz")
    assert rc == 0, text
    assert report["functions_found"] == report["swapped"] + report["not_live"] >= 400
    assert report["failures"] == [] and report["regressions"] == []
    assert report["tests_passed_before"] == report["tests_passed_after"] >= 150


def test_recompile_only_reports_every_function_and_runs_no_test(tmp_path):
    pythonpath = os.pathsep.join([str(FIXTURE), str(ROOT / "tools"), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(TOOL), "swaplib", "--recompile-only"], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path, env={**os.environ, "PYTHONPATH": pythonpath})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "swaplib ?: 5 of 5 functions recompiled (2 modules" in proc.stdout
    assert "0 refused" in proc.stdout and "passed" not in proc.stdout


def test_functions_equal_to_one_already_swapped_count_as_swapped():
    # code objects compare by content, not by file: numpy.distutils holds one method twice, in two
    # modules, and the one replacement serves both (swapped once, found twice)
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from library_swap import meets_bar
    finally:
        sys.path.remove(str(ROOT / "tools"))
    report = {"regressions": [], "failures": [], "functions_found": 3, "swapped": 2, "not_live": 0,
              "tests_passed_before": 10}
    assert not meets_bar(report)
    assert meets_bar({**report, "equal_codes": 1})


def test_a_module_whose_loader_cannot_give_its_code_is_read_from_its_source(tmp_path):
    # pytest's assertion rewriter loads the modules a package registers for rewriting, and has
    # no get_code (scipy registers its testing helpers): the harness compiles the source itself
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from swapping import _module_code
    finally:
        sys.path.remove(str(ROOT / "tools"))
    source = tmp_path / "plain.py"
    source.write_text("def f(x):\n    return x + 1\n")

    class RewritingLoader:   # like pytest's AssertionRewritingHook: exec_module, no get_code
        def exec_module(self, module):
            raise AssertionError("not called")

    spec = importlib.util.spec_from_file_location("plain", source, loader=RewritingLoader())
    code = _module_code(spec)
    assert code.co_filename == str(source)
    namespace: dict = {}
    exec(code, namespace)
    assert namespace["f"](1) == 2
    built_in = importlib.util.find_spec("sys")
    assert _module_code(built_in) is None
