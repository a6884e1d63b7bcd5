"""The stdlib swap proof: decompiled code swapped into stdlib modules passes CPython's own tests.

The full run (``tools/stdlib_swap.py`` over every module, about 50) is slow; the harness checks
use the identity backend on one small module and run in seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "stdlib_swap.py"
pytestmark = pytest.mark.skipif(sys.platform == "emscripten", reason="pyodide cannot start processes")


def _run(tmp_path: Path, *args: str, env: dict | None = None, timeout: float = 1200) -> tuple[int, dict, str]:
    out = tmp_path / "swap.json"
    proc = subprocess.run(
        [sys.executable, str(TOOL), "--json", str(out), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        cwd=ROOT,
    )
    return proc.returncode, json.loads(out.read_text()), proc.stdout + proc.stderr


def test_harness_swaps_every_function_of_a_module(tmp_path):
    rc, report, text = _run(tmp_path, "--_identity", "--modules", "textwrap")
    (mod,) = report["modules"]
    assert rc == 0, text
    assert mod["functions_found"] == mod["swapped"] > 10
    assert mod["tests_passed_before"] == mod["tests_passed_after"] > 50
    assert mod["regressions"] == []


def test_harness_notices_broken_code(tmp_path):
    rc, report, text = _run(
        tmp_path, "--_identity", "--modules", "textwrap", env={"DEPYF_SWAP_MUTATE": "dedent"}
    )
    (mod,) = report["modules"]
    assert rc == 1
    assert any("DedentTestCase" in t for t in mod["regressions"]), text


def test_harness_reaches_fresh_imports(tmp_path):
    """heapq's tests re-import the module without its C accelerator; the swap must reach that copy."""
    rc, report, text = _run(
        tmp_path, "--_identity", "--modules", "heapq", env={"DEPYF_SWAP_MUTATE": "heappush"}
    )
    (mod,) = report["modules"]
    assert mod["not_live"] > 0
    assert any("Python" in t for t in mod["regressions"]), text


@pytest.mark.slow
def test_every_stdlib_module_passes_its_tests_after_the_swap(tmp_path):
    rc, report, text = _run(tmp_path, timeout=3000)
    modules = report["modules"]
    assert len(modules) >= 30
    summary = {m["module"]: (len(m["failures"]), len(m["regressions"])) for m in modules}
    not_swapped = {m["module"]: m["failures"][:3] for m in modules if m["failures"]}
    regressed = {m["module"]: m["regressions"][:5] for m in modules if m["regressions"]}
    assert not not_swapped, f"functions not swapped: {not_swapped}\n{summary}"
    assert not regressed, f"tests that passed before the swap fail after it: {regressed}"
    assert rc == 0, text


def test_the_pyodide_round_trip_tool_runs_on_one_module(tmp_path):
    # the real-code check of the pyodide versions shares the stdlib swap's module list and its
    # walk over code objects: it must keep running when those move
    out = tmp_path / "roundtrip.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "pyodide" / "stdlib_roundtrip.py"), "--modules", "textwrap",
         "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (module,) = json.loads(out.read_text())["modules"]
    assert module["module"] == "textwrap" and module["found"] > 10
    assert module["recompiled"] == module["found"] == module["identical"] + module["equivalent"]
    assert module["failures"] == []
