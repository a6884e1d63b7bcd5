"""``depyf.debug()`` inside compiled code, and where its pause lands (issue 18, item 10)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).parent))
from session_support import child_env, run, value, write_program

pytestmark = pytest.mark.torch

INSIDE_COMPILED = """
    def f(x):
        x = x + 1
        with depyf.debug(pause=False):
            y = x * 2
        return y.sum()

    x = torch.randn(8)
    report("SAME", torch.compile(f, backend="eager")(x).item() == f(x).item())
"""


def test_debug_inside_a_compiled_function_runs_it_unchanged(tmp_path):
    rc, out, err = run(tmp_path, INSIDE_COMPILED)
    assert rc == 0, err
    assert value(out, "SAME") == "True"
    assert "forbidden callable" not in err


PAUSING = """
    def main():
        with depyf.debug():
            marker = "the block's first line"
        return marker

    report("RESULT", main())
"""


def test_the_pause_lands_on_the_first_line_of_the_block(tmp_path):
    program = write_program(tmp_path, PAUSING)
    proc = subprocess.run([sys.executable, str(program)], input="c\n", cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=child_env(DEPYF_DEBUG_PAUSE="1"))
    assert proc.returncode == 0, proc.stderr
    stop = proc.stdout.split("(Pdb)")[0]
    assert f"> {program}(" in stop and "main()" in stop, stop
    assert "-> marker = \"the block's first line\"" in stop
    assert "contextlib" not in stop
    assert value(proc.stdout.split("(Pdb)")[-1].strip(), "RESULT") == "the block's first line"
