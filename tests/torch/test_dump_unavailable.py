"""What a torch release cannot show is said in index.md as well as index.json (the report's part is
in tests/report/test_report_browser.py, the per-release items in tests/torch/test_torch_releases.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from depyf.torch import index

pytestmark = pytest.mark.torch


def test_index_md_lists_unavailable_features():
    data = {"torch_version": "2.2.2", "python_version": "3.11.7", "backend": "inductor", "functions": [],
            "graphs": [], "files": ["index.md", "index.json"], "warnings": [],
            "unavailable": [{"feature": "joint graph", "reason": "torch 2.2.2 does not log it"}]}
    text = index.render_markdown(data, [])
    assert "## Unavailable on torch 2.2.2\n" in text
    assert "- joint graph: torch 2.2.2 does not log it" in text
    assert "Unavailable" not in index.render_markdown(dict(data, unavailable=[]), [])
