"""The live status line of `depyf run`: Dynamo's counters, read without importing torch."""

from __future__ import annotations

import io
import sys
import time
import types
from collections import Counter, defaultdict

from depyf.report.progress import LiveStatus, describe, dynamo_counts


def _fake_counters(monkeypatch) -> defaultdict:
    counters: defaultdict = defaultdict(Counter)
    module = types.ModuleType("torch._dynamo.utils")
    module.counters = counters
    monkeypatch.setitem(sys.modules, "torch._dynamo.utils", module)
    return counters


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
        deadline = time.monotonic() + 5
        while not stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        counters["frames"]["ok"] = 3   # changes after the first line, before the next is due
        counters["stats"]["unique_graphs"] = 3
    lines = stream.getvalue().splitlines()
    assert lines[0] == "depyf: compiled 0 frames, 1 graph, 0 graph breaks"
    assert lines[-1] == "depyf: compiled 3 frames, 3 graphs, 0 graph breaks"
