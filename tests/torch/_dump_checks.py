"""Shared checks for dumps written by prepare_debug (not a test module)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any


def expected_unavailable() -> set[str]:
    """Features this torch release lacks by design (the releases listed in the adapter's
    docstring); on every other release the dump must have them all. Without the structured trace
    (2.2) its pieces come from other seams: only a piece whose seam is missing too is lacking."""
    from depyf.torch import adapter
    from depyf.torch.session import JOINT_GRAPH_FEATURE, RECOMPILE_FEATURE, TENSOR_GUARDS_FEATURE

    if adapter.has("torch._logging._internal.trace_log"):
        return set()
    seams = {
        JOINT_GRAPH_FEATURE:
            "torch._functorch._aot_autograd.jit_compile_runtime_wrappers.aot_dispatch_autograd_graph",
        RECOMPILE_FEATURE: "torch._dynamo.convert_frame.get_and_maybe_log_recompilation_reason",
        TENSOR_GUARDS_FEATURE: "torch._dynamo.guards.CheckFunctionManager.compile_check_fn",
    }
    return {feature for feature, dotted in seams.items() if not adapter.has(dotted)}


def expected_stages(*wanted: str) -> set[str]:
    """``wanted`` less the joint graph where this torch can give it neither from the structured
    trace nor from AOTAutograd."""
    from depyf.torch.session import JOINT_GRAPH_FEATURE

    if JOINT_GRAPH_FEATURE in expected_unavailable():
        return set(wanted) - {"joint_graph"}
    return set(wanted)


def check_dump(dump_dir: str | Path) -> dict[str, Any]:
    """Assert the dump is complete and self-consistent; returns index.json."""
    d = Path(dump_dir)
    index = json.loads((d / "index.json").read_text())
    assert index["format"] == "depyf-dump" and index["version"] == 1
    assert {item["feature"] for item in index["unavailable"]} == expected_unavailable(), index["unavailable"]
    for name in index["files"]:
        assert (d / name).exists(), f"index lists {name} but it is missing"
    for path in d.glob("*.py"):
        ast.parse(path.read_text(), filename=str(path))
    transformed_texts = []
    for fn in index["functions"]:
        full = (d / fn["full_code_file"]).read_text()
        assert fn["cache_entries"], f"{fn['name']} has no cache entry"
        for entry in fn["cache_entries"]:
            assert (d / entry["transformed_code_file"]).exists()
            assert f"def {entry['guard_function']}(" in full
            assert f"def {entry['transformed_name']}(" in full
            assert entry["guards"], "every cache entry has guards"
            transformed_texts.append((d / entry["transformed_code_file"]).read_text())
            graph_names = {g["name"] for g in index["graphs"]}
            compiled_earlier = "before prepare_debug" in (entry["fallback_reason"] or "")
            for graph in entry["graphs"]:
                assert graph in graph_names or compiled_earlier, f"{graph} is called but has no graph files"
        assert "def __dispatch_for_" in full
    for graph in index["graphs"]:
        assert graph["files"], graph
        for item in graph["files"]:
            assert (d / item["file"]).exists()
            assert item["file"].startswith(graph["name"] + ".")
        # The name in the file names is the one the transformed code calls.
        assert any(graph["global_name"] in text for text in transformed_texts), graph["name"]
    return index


def stages(index: dict[str, Any]) -> set[str]:
    return {item["stage"] for graph in index["graphs"] for item in graph["files"]}


def all_breaks(index: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for fn in index["functions"] for b in fn["graph_breaks"]]
