"""What a torch release cannot show is said in index.json, index.md and the report, never just missing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
from depyf.torch import adapter, index  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dump_checks import check_dump  # noqa: E402

pytestmark = pytest.mark.torch


def test_index_json_names_what_this_release_lacks(tmp_path):
    torch._dynamo.reset()

    @torch.compile(backend="eager")
    def f(x):
        return x.cos() + 1

    with depyf.prepare_debug(str(tmp_path / "dump")) as d:
        f(torch.ones(3))
    torch._dynamo.reset()
    data = check_dump(d)
    assert data["unavailable"] == adapter.release_unavailable_features()
    assert json.loads((Path(d) / "index.json").read_text())["unavailable"] == data["unavailable"]


def test_release_unavailable_features_name_the_release():
    for item in adapter.release_unavailable_features():
        assert set(item) == {"feature", "reason"}
        assert torch.__version__.split("+")[0] in item["reason"]


def test_index_md_lists_unavailable_features():
    data = {"torch_version": "2.7.1", "python_version": "3.11.7", "backend": "inductor", "functions": [],
            "graphs": [], "files": ["index.md", "index.json"], "warnings": [],
            "unavailable": [{"feature": "pre_grad graph", "reason": "torch 2.7.1 does not log it"}]}
    text = index.render_markdown(data, [])
    assert "## Not available with this torch\n\n- pre_grad graph: torch 2.7.1 does not log it\n" in text
    assert "Not available" not in index.render_markdown(dict(data, unavailable=[]), [])
