"""The live status line of `depyf run`: Dynamo's counters, read without importing torch."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from collections import Counter, defaultdict

import pytest

from depyf.report.progress import LiveStatus, describe, dynamo_counts


def _fake_counters(monkeypatch) -> defaultdict:
    """Dynamo's counters replaced by empty ones (torch's own module, so the adapter reads them)."""
    utils = pytest.importorskip("torch._dynamo.utils")
    counters: defaultdict = defaultdict(Counter)
    monkeypatch.setattr(utils, "counters", counters)
    return counters


def test_no_counts_and_no_torch_import_without_torch():
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from depyf.report.progress import dynamo_counts; "
            "assert dynamo_counts() is None; assert 'torch' not in sys.modules",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_counts_come_from_dynamo_counters(monkeypatch):
    counters = _fake_counters(monkeypatch)
    counters["frames"]["ok"] = 3
    counters["stats"]["unique_graphs"] = 2
    counters["unimplemented"]["data-dependent"] = 1
    assert dynamo_counts() == {"frames": 3, "graphs": 2, "breaks": 1}
    assert describe(dynamo_counts()) == "depyf: compiled 3 frames, 2 graphs, 1 graph break"


def test_without_a_terminal_the_last_line_has_the_final_counts(monkeypatch):
    counters = _fake_counters(monkeypatch)
    stream = io.StringIO()
    with LiveStatus(stream=stream, interval=0.01, plain_every=3600):
        counters["stats"]["unique_graphs"] = 1
        deadline = time.monotonic() + 30   # (the first line is due at once; a loaded machine is slow)
        while not stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        counters["frames"]["ok"] = 3   # changes after the first line, before the next is due
        counters["stats"]["unique_graphs"] = 3
    lines = stream.getvalue().splitlines()
    assert lines[0] == "depyf: compiled 0 frames, 1 graph, 0 graph breaks"
    assert lines[-1] == "depyf: compiled 3 frames, 3 graphs, 0 graph breaks"


def test_without_a_terminal_a_short_run_still_ends_with_its_counts(monkeypatch):
    counters = _fake_counters(monkeypatch)
    stream = io.StringIO()
    with LiveStatus(stream=stream, interval=3600, plain_every=3600):   # no line falls due
        counters["frames"]["ok"] = 2
        counters["stats"]["unique_graphs"] = 2
    assert stream.getvalue().splitlines() == ["depyf: compiled 2 frames, 2 graphs, 0 graph breaks"]
