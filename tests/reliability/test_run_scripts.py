"""Issue 18, items 7 and 12: ``depyf run`` keeps the user's program working, and its dump valid.

Each script runs twice as a real process, once as ``python script.py`` and once as
``depyf run script.py``; the user's output must be the same. Timeouts turn a hang into a failure.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers_reliability import REPO, run_depyf

SCRIPTS = Path(__file__).parent / "scripts"

pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def run_both(script: str, tmp_path: Path, timeout: float = 240) -> tuple[str, subprocess.CompletedProcess]:
    """stdout of ``python script.py`` and the whole result of ``depyf run script.py``, both from tmp_path."""
    shutil.copy(SCRIPTS / script, tmp_path / script)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    plain = subprocess.run([sys.executable, script], cwd=tmp_path, capture_output=True, text=True,
                           timeout=timeout, env=env)
    assert plain.returncode == 0, plain.stderr
    under = run_depyf("run", script, "-q", "-o", "dump", cwd=tmp_path, timeout=timeout)
    return plain.stdout, under


def test_spawn_pool_returning_a_script_class(tmp_path):
    plain, under = run_both("spawn_pool.py", tmp_path)
    assert plain == "[0, 2, 4, 6]\nargv0 spawn_pool.py\n"
    assert under.returncode == 0, under.stderr
    assert under.stdout == plain
    assert "Can't get attribute" not in under.stderr


def test_spawn_dataloader_with_script_classes(tmp_path):
    plain, under = run_both("spawn_dataloader.py", tmp_path)
    assert plain.startswith("[[0.0, 3.0], [8.0, 15.0], [24.0, 35.0], [48.0, 63.0]]\n")
    assert under.returncode == 0, under.stderr
    assert under.stdout == plain
    index = json.loads((tmp_path / "dump" / "index.json").read_text())
    assert [f["name"] for f in index["functions"]] == ["step"]  # the compiled step is in the dump


def test_lambdas_give_valid_python_and_plain_file_names(tmp_path):
    plain, under = run_both("compile_lambda.py", tmp_path)
    assert under.returncode == 0, under.stderr
    assert under.stdout == plain == "[3.0, 3.0, 3.0] [0.0, 0.0, 1.0]\nargv0 compile_lambda.py\n"
    dump = tmp_path / "dump"
    names = sorted(p.name for p in dump.glob("*.py"))
    assert all("<" not in n and ">" not in n for n in names), names
    assert "full_code_for__lambda__0.py" in names and "full_code_for__lambda__1.py" in names
    for path in dump.glob("*.py"):
        ast.parse(path.read_text(), filename=str(path))  # every file is valid Python
    full = (dump / "full_code_for__lambda__0.py").read_text()
    assert "def __guard_0_for__lambda_(" in full and "def __dispatch_for__lambda_(" in full
    index = json.loads((dump / "index.json").read_text())
    entries = [e for f in index["functions"] for e in f["cache_entries"]]
    assert sorted(e["guard_function"] for e in entries) == [
        "__guard_0_for__lambda_",
        "__guard_1_for__lambda_",
    ]
    assert [f["name"] for f in index["functions"]] == ["<lambda>", "<lambda>"]  # co_name as it is
