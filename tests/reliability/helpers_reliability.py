"""Helpers for the reliability tests: run ``python -m depyf`` as a user does, with a timeout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOY_DUMP = REPO / "tests" / "report" / "fixtures" / "toy_dump"


def run_depyf(
    *args: str, cwd: Path, timeout: float = 120, python: str = sys.executable
) -> subprocess.CompletedProcess:
    """``python -m depyf ARGS`` in ``cwd`` as a user runs it; raises TimeoutExpired if it hangs."""
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONSTARTUP", None)
    return subprocess.run([python, "-m", "depyf", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def stderr_lines(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.strip()]
