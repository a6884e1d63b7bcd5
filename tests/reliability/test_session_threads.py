"""A second thread's ``prepare_debug`` while another thread's is active (issue 18, item 9).

One dump per process: the second thread joins the active dump and is told so, naming both
threads and the directory its compilations go to; the directory it asked for is not created.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).parent))
from session_support import depyf_warnings, run, value

pytestmark = pytest.mark.torch

PROGRAM = """
    import threading
    first_dir, other_dir = sys.argv[1], sys.argv[2]

    @torch.compile(backend="eager")
    def in_main(x):
        return x + 1

    @torch.compile(backend="eager")
    def in_worker(x):
        return x * 3

    go, done = threading.Event(), threading.Event()

    def worker():
        go.wait()
        with depyf.prepare_debug(other_dir) as used:
            report("WORKER_USED", used)
            report("WORKER_RESULT", in_worker(torch.ones(2)).tolist())
        done.set()

    thread = threading.Thread(target=worker, name="worker")
    thread.start()
    with depyf.prepare_debug(first_dir) as used:
        report("MAIN_USED", used)
        in_main(torch.ones(2))
        go.set()
        done.wait(240)
    thread.join()
    report("OTHER_EXISTS", os.path.exists(other_dir))
"""


def test_second_thread_joins_the_active_dump_and_is_told_so(tmp_path):
    first, other = tmp_path / "first", tmp_path / "other"
    rc, out, err = run(tmp_path, PROGRAM, str(first), str(other))
    assert rc == 0, err
    assert value(out, "WORKER_RESULT") == "[3.0, 3.0]"
    assert value(out, "MAIN_USED") == value(out, "WORKER_USED") == str(first)
    assert value(out, "OTHER_EXISTS") == "False"
    [warning] = depyf_warnings(err)
    assert (f"prepare_debug({str(other)!r}) in thread 'worker': thread 'MainThread' already dumps to {first}"
            in warning)
    assert "one dump per process" in warning and f"{str(other)!r} is not created" in warning
    names = sorted(fn["name"] for fn in json.loads((first / "index.json").read_text())["functions"])
    assert names == ["in_main", "in_worker"]
