"""Ctrl-C while ``prepare_debug`` sets up, tears down or writes the dump (issue 18, item 5).

Each program runs in its own process; the test sends it real SIGINTs at the point it reports.
What a user must find afterwards: the program stopped with KeyboardInterrupt, torch exactly as
before (``adapter.state_snapshot()``), no owner lock, either a complete dump (index.json) or no
dump files at all, no ``*.tmp`` files, and a later ``prepare_debug`` that works.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).parent))
from session_support import interrupt, start, value, wait_for_line

pytestmark = pytest.mark.torch

PROGRAM = """
    from depyf.torch import index as index_module, session as session_module
    dump, mode = sys.argv[1], sys.argv[2]

    @torch.compile(backend="eager")
    def f(x):
        return x * 2 + 1

    before = adapter.state_snapshot()
    original_stop, original_write = session_module.DumpSession.stop, index_module.write_index

    def slow_stop(self):
        report("POINT", "removing patches")
        time.sleep(4)  # the Ctrl-C lands here
        original_stop(self)

    def slow_write(*args, **kwargs):
        report("POINT", "writing the index")
        time.sleep(4)
        return original_write(*args, **kwargs)

    if mode == "stop":
        session_module.DumpSession.stop = slow_stop
    elif mode == "write":
        index_module.write_index = slow_write
    try:
        with depyf.prepare_debug(dump):
            report("RESULT", f(torch.ones(3)).tolist())
            if mode == "body":
                report("POINT", "in the block")
                time.sleep(30)
        report("AFTER_BLOCK", "ran on")
    except KeyboardInterrupt:
        report("INTERRUPTED", "KeyboardInterrupt")
    session_module.DumpSession.stop, index_module.write_index = original_stop, original_write
    report("SAME_STATE", adapter.state_snapshot() == before)
    report("LOCK", os.path.exists(os.path.join(dump, ".depyf-owner")))
    report("TMP", [n for n in os.listdir(dump) if n.endswith(".tmp")])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with depyf.prepare_debug(dump + "_again") as again:
            f(torch.ones(5))
    report("AGAIN_WARNINGS", [str(w.message) for w in caught  # a release's missing features aside
                              if not re.search(r"unavailable: torch \\S+ .*; the program runs unchanged",
                                               str(w.message))])
    report("AGAIN_INDEX", os.path.exists(os.path.join(again, "index.json")))
"""


def _interrupted(tmp_path: Path, mode: str, presses: int) -> tuple[str, str, Path]:
    dump = tmp_path / "dump"
    proc = start(tmp_path, PROGRAM, str(dump), mode)
    wait_for_line(proc, "POINT")
    for press in range(presses):
        if press:
            time.sleep(0.5)
        interrupt(proc)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return out, err, dump


def _left_clean(out: str) -> None:
    assert value(out, "INTERRUPTED") == "KeyboardInterrupt"
    assert "AFTER_BLOCK" not in out
    assert value(out, "SAME_STATE") == "True"
    assert value(out, "LOCK") == "False"
    assert value(out, "TMP") == "[]"
    assert value(out, "AGAIN_WARNINGS") == "[]"
    assert value(out, "AGAIN_INDEX") == "True"


def _complete(dump: Path) -> None:
    data = json.loads((dump / "index.json").read_text())
    assert [fn["name"] for fn in data["functions"]] == ["f"]
    assert all((dump / name).is_file() for name in data["files"])


def test_ctrl_c_in_the_block_still_writes_the_dump(tmp_path):
    out, err, dump = _interrupted(tmp_path, "body", 1)
    _left_clean(out)
    _complete(dump)


def test_ctrl_c_while_patches_are_removed_removes_them_all_then_stops(tmp_path):
    out, err, dump = _interrupted(tmp_path, "stop", 1)
    _left_clean(out)
    _complete(dump)


def test_ctrl_c_while_the_index_is_written_finishes_it_then_stops(tmp_path):
    out, err, dump = _interrupted(tmp_path, "write", 1)
    _left_clean(out)
    _complete(dump)
    assert f"depyf: writing the dump to {dump} first; press Ctrl-C again to stop without it" in err
    assert "Traceback" not in err


def test_ctrl_c_twice_while_the_index_is_written_leaves_no_dump_and_stops_at_once(tmp_path):
    out, err, dump = _interrupted(tmp_path, "write", 2)
    _left_clean(out)
    assert f"depyf: the dump in {dump} was not written (interrupted)" in err
    assert sorted(p.name for p in dump.iterdir()) == []   # no half dump, no index.json
    assert "Traceback" not in err
