"""Run a small program that uses ``prepare_debug`` in its own process and read what it reports.

Each program prints ``KEY value`` lines (``RESULT``, ``SAME_STATE``, ...) that the tests read;
every test asserts what a user would see: results, files, messages, torch left as it was.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PRELUDE = textwrap.dedent("""
    import os, re, sys, json, signal, time, warnings
    import torch, depyf
    from depyf.torch import adapter
    warnings.simplefilter("always")
    def report(key, value):
        print(key, value, flush=True)
    def warm_up():
        # The first compilation imports torch modules that adapter.state_snapshot() looks into.
        torch.compile(lambda x: x + 1, backend="eager")(torch.ones(1))
""")


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID"):
        env.pop(name, None)
    env.update(extra)
    return env


def write_program(directory: Path, body: str, name: str = "program.py") -> Path:
    path = directory / name
    path.write_text(PRELUDE + textwrap.dedent(body))
    return path


def _default_sigint() -> None:
    # A program started from a terminal has SIGINT's default disposition. A test suite started as a
    # background job of a non-interactive shell ignores SIGINT, and children inherit that: Python
    # then installs no KeyboardInterrupt handler and a Ctrl-C would never arrive.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(directory: Path, body: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    program = write_program(directory, body)
    return subprocess.Popen([sys.executable, str(program), *args], cwd=directory, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env or child_env(),
                            preexec_fn=_default_sigint)


def run(directory: Path, body: str, *args: str, env: dict[str, str] | None = None,
        timeout: float = 300) -> tuple[int, str, str]:
    proc = start(directory, body, *args, env=env)
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def values(out: str, key: str) -> list[str]:
    return [line.split(" ", 1)[1] if " " in line else "" for line in out.splitlines()
            if line == key or line.startswith(key + " ")]


def value(out: str, key: str) -> str:
    found = values(out, key)
    assert found, f"{key} not reported; output:\n{out}"
    return found[-1]


def wait_for_line(proc: subprocess.Popen, key: str, timeout: float = 300) -> list[str]:
    """Read the child's stdout until a line starting with ``key``; the lines read so far."""
    lines: list[str] = []
    deadline = time.time() + timeout
    assert proc.stdout is not None
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith(key):
            return lines
    raise AssertionError(
        f"child never printed {key!r}; got {lines}, stderr:\n{proc.stderr.read() if proc.stderr else ''}"
    )


def interrupt(proc: subprocess.Popen) -> None:
    """Ctrl-C, as a terminal sends it: SIGINT to the process."""
    proc.send_signal(signal.SIGINT)


# The one warning per feature this torch release cannot provide (torch 2.2: no structured trace)
# is about the release, not the scenario under test.
RELEASE_GAP = re.compile(r"depyf: .+ unavailable: torch \S+ .*; the program runs unchanged")


def depyf_warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if "DepyfWarning:" in line and not RELEASE_GAP.search(line)]
