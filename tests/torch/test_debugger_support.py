"""Helpers for the debugger tests (no tests here): drive pdb in a child process through its stdin."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROMPT = b"(Pdb) "


def child_env(**extra: str) -> dict[str, str]:
    """Environment for a child Python that imports this checkout's depyf and pauses on request."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONUNBUFFERED"] = "1"
    env["DEPYF_DEBUG_PAUSE"] = "1"
    env.pop("PYTHONBREAKPOINT", None)
    # Each test compiles from scratch: no warm Inductor caches shared with other runs.
    env.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
    env.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "0")
    env.update(extra)
    return env


class PdbSession:
    """A child process stopped at pdb prompts; ``send`` answers one prompt and returns the output."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str], timeout: float = 300):
        self.proc = subprocess.Popen([sys.executable, *args], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0)
        self.timeout = timeout
        self.transcript = ""

    def wait_prompt(self) -> str | None:
        """Output up to the next prompt; ``None`` once the child has exited."""
        buf = b""
        deadline = time.monotonic() + self.timeout
        assert self.proc.stdout is not None
        while not buf.endswith(PROMPT):
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise TimeoutError("no pdb prompt in time; transcript:\n" + self.transcript
                                   + buf.decode(errors="replace"))
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                self.transcript += buf.decode(errors="replace")
                self.proc.wait(timeout=self.timeout)
                return None
            buf += chunk
        text = buf.decode(errors="replace")
        self.transcript += text
        return text

    def send(self, line: str) -> str | None:
        assert self.proc.stdin is not None
        self.transcript += line + "\n"
        self.proc.stdin.write((line + "\n").encode())
        return self.wait_prompt()

    def finish(self) -> str:
        """Continue until the program ends (answering further prompts with ``c``); the rest of output."""
        start = len(self.transcript)
        for _ in range(500):
            if self.send("c") is None:
                break
        else:
            self.kill()
            raise AssertionError("program kept stopping; transcript:\n" + self.transcript)
        return self.transcript[start:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def line_after(path: Path, marker: str) -> int:
    """1-based number of the first code line (not blank, not a comment) after the line with ``marker``."""
    lines = path.read_text().splitlines()
    for i, text in enumerate(lines):
        if marker in text:
            for j in range(i + 1, len(lines)):
                stripped = lines[j].strip()
                if stripped and not stripped.startswith("#"):
                    return j + 1
    raise AssertionError(f"no code line after {marker!r} in {path}:\n" + "\n".join(lines))


def first_aot_graph_line(path: Path) -> int:
    """The first line of an AOTAutograd graph's ``forward`` where its inputs are bound: after
    ``args_list.clear()`` where the graph takes its inputs as one boxed list, else the
    first code line of ``forward`` (torch 2.7 passes them as parameters)."""
    if "args_list.clear()" in path.read_text():
        return line_after(path, "args_list.clear()")
    return line_after(path, "def forward(")


def inductor_call_line(path: Path) -> int:
    """The first line of the output code's ``call``: a ``Runner`` method in newer torch, a module
    function in torch 2.7."""
    marker = "def call(self, args)" if "def call(self, args)" in path.read_text() else "def call(args)"
    return line_after(path, marker)
