"""`depyf run` for real: a subprocess, the real prepare_debug, real torch.compile (eager backend)."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers_cli import REPO, depyf_cli

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module", autouse=True)
def needs_prepare_debug():
    pytest.importorskip("torch")
    import depyf.torch

    if not hasattr(depyf.torch, "prepare_debug"):
        pytest.skip("depyf.prepare_debug is not implemented yet")


def write(path: Path, body: str) -> Path:
    path.write_text(textwrap.dedent(body))
    return path


def test_output_exit_status_and_argv_are_the_scripts(tmp_path):
    script = write(tmp_path / "prog.py", """
        import json, sys
        print("to stdout")
        print("to stderr", file=sys.stderr)
        json.dump({"argv": sys.argv, "name": __name__}, open("facts.json", "w"))
        sys.exit(5)
    """)
    done = depyf_cli("run", str(script), "a b", "-o", str(tmp_path / "dump"), "--", "-o", "x", cwd=tmp_path)
    assert done.returncode == 5
    assert done.stdout == "to stdout\n"
    assert done.stderr.startswith("to stderr\n")
    facts = json.loads((tmp_path / "facts.json").read_text())
    assert facts == {"argv": [str(script), "a b", "-o", "x"], "name": "__main__"}


def test_an_exception_in_the_script_is_printed_as_python_does(tmp_path):
    script = write(tmp_path / "boom.py", """
        def divide(a, b):
            return a / b
        divide(1, 0)
    """)
    done = depyf_cli("run", str(script), "-o", str(tmp_path / "dump"), cwd=tmp_path)
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == plain.returncode == 1
    assert done.stderr.startswith(plain.stderr)  # the same traceback, then depyf's own lines
    assert "ZeroDivisionError: division by zero" in done.stderr


def test_toy_example_with_the_eager_backend_and_a_live_status_on_a_terminal(tmp_path):
    dump_dir = tmp_path / "dump"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    master, slave = pty.openpty()  # stderr is a terminal: the status line is rewritten in place
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "depyf",
                "run",
                str(REPO / "tests" / "cli" / "toy_example.py"),
                "--backend",
                "eager",
                "-o",
                str(dump_dir),
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=slave,
            text=True,
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        stdout = proc.stdout.read()
        assert proc.wait(timeout=300) == 0
    finally:
        os.close(master)
    stderr = b"".join(chunks).decode(errors="replace")
    assert stdout == ""
    assert re.search(r"\r\x1b\[Kdepyf: compiled \d+ frames?, \d+ graphs?, \d+ graph breaks?", stderr)
    index = json.loads((dump_dir / "index.json").read_text())
    assert index["backend"] == "eager"
    stages = {f["stage"] for g in index["graphs"] for f in g["files"]}
    assert not stages & {"kernel", "output_code"}  # eager compiles no kernels
    assert re.search(r"^graph breaks\s+: 1\r?$", stderr, re.M)
    assert f"report             : {dump_dir / 'index.html'}" in stderr
    assert (dump_dir / "index.html").is_file()


def test_a_script_that_calls_prepare_debug_and_debug_itself(tmp_path):
    done = depyf_cli("run", str(REPO / "examples" / "seed_example.py"), "--backend", "eager",
                     "-o", str(tmp_path / "dump"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "the script's prepare_debug('depyf_debug_dir') was folded into this run's dump" in done.stderr
    assert not (tmp_path / "depyf_debug_dir").exists()
    index = json.loads((tmp_path / "dump" / "index.json").read_text())
    assert [f["name"] for f in index["functions"] if f["kind"] == "user"] == ["toy_example"]
    assert (tmp_path / "dump" / "index.html").is_file()
