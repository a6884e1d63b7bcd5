"""The degrade-safely rule (depyf/torch/adapter.py's docstring): a seam whose target has another
shape turns off its one feature with one warning and an index.json item, the program runs
unchanged (a torch older than the oldest supported release: test_install_callbacks_explain.py)."""

from __future__ import annotations

import json
import sys
import types
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
from depyf.torch import DepyfWarning, adapter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dump_checks import expected_unavailable  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_expect_names_the_torch_version_and_the_missing_piece():
    with pytest.raises(
        adapter.UnsupportedTorchError, match=rf"torch {adapter.torch_version()} has no torch\._dynamo\.nope"
    ):
        adapter.expect("torch._dynamo.nope")

    def shaped(self, graph, inputs):
        return graph

    holder = types.SimpleNamespace(fn=shaped)
    adapter.expect("os.path.join")  # present, no signature asked for
    assert adapter.has("os.path.join") and not adapter.has("os.path.nope")
    with pytest.raises(
        adapter.UnsupportedTorchError, match=r"takes \(self, graph, inputs\), depyf expects \(self, gm"
    ):
        torch._dynamo.__dict__["_depyf_test_holder"] = holder
        try:
            adapter.expect("torch._dynamo._depyf_test_holder.fn", ("self", "gm"))
        finally:
            del torch._dynamo.__dict__["_depyf_test_holder"]


def test_a_seam_of_another_shape_turns_off_one_feature_and_the_program_runs_unchanged(tmp_path, monkeypatch):
    from torch._inductor.codecache import PyCodeCache

    def load_by_key_path(cls, only_a_path):  # what a future torch might have instead
        raise AssertionError("depyf must not wrap or call a seam of another shape")

    monkeypatch.setattr(PyCodeCache, "load_by_key_path", classmethod(load_by_key_path))
    replaced = PyCodeCache.__dict__["load_by_key_path"]

    @torch.compile(backend="eager")
    def f(x):
        return x.sin() + 1

    x = torch.arange(4.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with depyf.prepare_debug(str(tmp_path / "dump")) as d:
            out = f(x)
    assert torch.equal(out, x.sin() + 1)
    assert PyCodeCache.__dict__["load_by_key_path"] is replaced
    ours = [
        str(w.message)
        for w in caught
        if issubclass(w.category, DepyfWarning)
        and not any(f"depyf: {feature} unavailable" in str(w.message) for feature in expected_unavailable())
    ]
    assert len(ours) == 1, ours
    assert "Inductor output code files unavailable" in ours[0]
    assert f"torch {adapter.torch_version()}" in ours[0] and "load_by_key_path" in ours[0]
    assert "depyf expects (key, path" in ours[0]
    index = json.loads((Path(d) / "index.json").read_text())
    (item,) = [item for item in index["unavailable"] if item["feature"] not in expected_unavailable()]
    assert item["feature"] == "Inductor output code files" and "load_by_key_path" in item["reason"]
    assert index["functions"][0]["cache_entries"][0]["decompiled"] is True   # the rest still works
    assert "## Unavailable on torch" in (Path(d) / "index.md").read_text()


def test_resume_of_reads_both_naming_conventions():
    def torch_dynamo_resume_in_toy_example_at_5():
        pass

    def resume_in_toy_example():
        pass

    def toy_example():
        pass

    new = adapter.resume_of(torch_dynamo_resume_in_toy_example_at_5.__code__)
    assert new == adapter.ResumeOf("toy_example", 5)
    old_code = resume_in_toy_example.__code__
    assert adapter.resume_of(old_code) == adapter.ResumeOf("toy_example", old_code.co_firstlineno)
    assert adapter.resume_of(toy_example.__code__) is None


def test_leaf_guards_of_a_python_guard_function():
    # torch 2.2 to 2.4 (without the C++ guard manager): cache entries carry a guard function
    guard_fn = types.SimpleNamespace(
        verbose_code_parts=[
            "___guarded_code.valid",
            "___check_global_state()",
            "hasattr(L['a'], '_dynamo_dynamic_indices') == False",
        ]
    )
    leaves = adapter.leaf_guards(guard_fn)
    assert [leaf.parts for leaf in leaves] == [("___check_global_state()",),
                                              ("hasattr(L['a'], '_dynamo_dynamic_indices') == False",)]
    with pytest.raises(adapter.UnsupportedTorchError):
        adapter.leaf_guards(object())


def test_graph_break_of_reads_the_compile_reason():
    import traceback

    frame = traceback.FrameSummary("user.py", 7, "f", line="if x.sum() > 0:")
    gm = types.SimpleNamespace(compile_subgraph_reason=types.SimpleNamespace(
        reason="generic_jump TensorVariable()", user_stack=[frame], graph_break=True))
    assert adapter.graph_break_of(gm) == adapter.GraphBreak("generic_jump TensorVariable()", "user.py", 7)
    gm.compile_subgraph_reason.graph_break = False
    assert adapter.graph_break_of(gm) is None
    assert adapter.graph_break_of(types.SimpleNamespace()) is None


def test_graph_name_from_the_calling_frame_when_the_graph_module_has_none():
    gm = torch.fx.symbolic_trace(torch.nn.ReLU())
    gm.meta.pop("backend_id", None)

    # Dynamo's own frame as on torch 2.2 to 2.7: the graph's global name is its local ``name``
    source = ("def compile_and_call_fx_graph(gm):\n    name = '__compiled_fn_7'\n"
              "    return adapter.graph_backend_id(gm)\n")
    namespace = {"adapter": adapter}
    exec(compile(source, "torch/_dynamo/output_graph.py", "exec"), namespace)
    assert namespace["compile_and_call_fx_graph"](gm) == "__compiled_fn_7"
    assert adapter.graph_backend_id(gm) is None  # outside that frame, not found


def test_failed_guards_of_a_python_guard_function():
    # the dispatcher on torch 2.2 to 2.4: the guard function Dynamo calls with the frame's locals
    def guard(L):
        return L["x"] > 0

    guard.verbose_code_parts = ["L['x'] > 0"]
    assert adapter.entry_guards(types.SimpleNamespace(check_fn=guard)) is guard
    assert adapter.failed_guards(guard, {"x": 1}) is None
    (reason,) = adapter.failed_guards(guard, {"x": -1})
    assert f"torch {adapter.torch_version()}'s guard function returned False" in reason


def test_without_the_structured_trace_graph_breaks_come_from_the_captured_graph(tmp_path, monkeypatch):
    # torch 2.2 has no structured trace; here its absence is simulated on this release. Its pieces
    # come from other seams (the adapter's 2.2 section); only one this release lacks too is
    # unavailable, each with one warning and one index.json item naming the missing piece.
    from depyf.torch import trace
    from depyf.torch.session import JOINT_GRAPH_FEATURE, RECOMPILE_FEATURE, TENSOR_GUARDS_FEATURE

    def no_trace(sink, kinds):
        raise adapter.UnsupportedTorchError(
            f"torch {adapter.torch_version()} has no torch._logging._internal.trace_log"
        )

    monkeypatch.setattr(trace, "attach", no_trace)

    @torch.compile(backend="eager")
    def f(x):
        y = x.cos()
        if y.sum() > 0:
            y = y + 1
        return y

    x = torch.zeros(3)
    before = adapter.state_snapshot()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with depyf.prepare_debug(str(tmp_path / "dump")) as d:
            out = f(x)
    assert adapter.state_snapshot() == before
    assert torch.equal(out, x.cos() + 1)
    index = json.loads((Path(d) / "index.json").read_text())
    features = [item["feature"] for item in index["unavailable"]]
    assert set(features) <= {JOINT_GRAPH_FEATURE, RECOMPILE_FEATURE, TENSOR_GUARDS_FEATURE}
    assert len(features) == len(set(features))
    for item in index["unavailable"]:
        assert f"torch {adapter.torch_version()}" in item["reason"]
    assert sorted(str(w.message) for w in caught if issubclass(w.category, DepyfWarning)) == sorted(
        f"depyf: {item['feature']} unavailable: {item['reason']}; the program runs unchanged"
        for item in index["unavailable"])
    if not adapter.has("torch._logging._internal.trace_log"):  # the real thing: every piece is there
        assert features == []
    (brk,) = index["functions"][0]["graph_breaks"]
    assert brk["source_line"] == "if y.sum() > 0:" and brk["filename"] == __file__
    assert brk["reason"]


def test_inductor_passes_give_the_pre_and_post_grad_graphs(monkeypatch):
    # what the dump uses where the trace lacks these stages (pre-grad before 2.7, post-grad before 2.5)
    seen = []
    before = adapter.state_snapshot()
    import torch._inductor.compile_fx as compile_fx

    originals = (compile_fx.pre_grad_passes, compile_fx.post_grad_passes)
    undo = adapter.patch_inductor_passes({"pre_grad", "post_grad"},
                                         lambda stage, gm: seen.append((stage, "def forward" in gm.code)))
    try:
        with adapter.compile_caches_disabled():
            out = torch.compile(lambda x: x.sin() * 2, backend="inductor")(torch.ones(3))
    finally:
        undo()
    assert torch.allclose(out, torch.ones(3).sin() * 2)
    assert ("pre_grad", True) in seen and ("post_grad", True) in seen
    assert (compile_fx.pre_grad_passes, compile_fx.post_grad_passes) == originals
    assert adapter.state_snapshot() == before
    assert not adapter.inductor_traces({"no_such_artifact"})


def test_a_cache_entry_dropped_before_the_dump_keeps_its_guard_function(tmp_path):
    """Dynamo drops a cache entry when an object its guards check by identity is freed (here the
    code of the function passed as ``fn``; torch 2.3 does, 2.13 keeps the entry). The dump still
    shows that entry with the guards it had, outside the dispatch; GPT-2's
    ``ModelOutput.__setitem__`` loses its entry so on torch 2.3 and 2.4."""
    import gc

    from _dump_checks import check_dump

    def apply(fn, x):
        return fn(x) * 2

    def later(x):
        return x - 1

    x = torch.arange(3.0)
    with depyf.prepare_debug(str(tmp_path)):
        made = {}  # a function whose code object nothing else holds: Dynamo guards its __code__ by id
        exec(compile("def inc(t):\n    return t + 1\n", "<inc>", "exec"), made)
        fn = made.pop("inc")
        assert torch.equal(torch.compile(apply, backend="eager")(fn, x), (x + 1) * 2)
        assert torch.equal(torch.compile(later, backend="eager")(x), x - 1)  # the next compilation
        del fn
        gc.collect()
        kept = adapter.dispatch_cache_entries(apply.__code__)
    if kept:
        pytest.skip(f"torch {adapter.torch_version()} keeps the entry when the guarded function is freed")
    index = check_dump(tmp_path)  # every listed entry has its guard function and guards
    (function,) = [fn for fn in index["functions"] if fn["name"] == "apply"]
    (entry,) = function["cache_entries"]
    assert any("L['fn']" in guard for guard in entry["guards"]), entry["guards"]
    full = (tmp_path / function["full_code_file"]).read_text()
    assert f"def {entry['guard_function']}(L, G" in full
    assert "No longer in Dynamo's cache" in full
    dispatch = full[full.index("def __dispatch_for_apply"):]
    assert entry["guard_function"] not in dispatch


def test_a_cache_entry_dropped_before_any_later_compilation_keeps_its_guards(tmp_path, recwarn):
    """As above, with no compilation after it: the guards are read as Dynamo makes the entry
    (``adapter.patch_guarded_code``), not only at the next compilation and at the end, when
    torch 2.2 to 2.5 have dropped it (GPT-2's dump on torch 2.4)."""
    import gc

    from _dump_checks import check_dump

    def apply(fn, x):
        return fn(x) * 2

    x = torch.arange(3.0)
    with depyf.prepare_debug(str(tmp_path)):
        made = {}
        exec(compile("def inc(t):\n    return t + 1\n", "<inc>", "exec"), made)
        fn = made.pop("inc")
        assert torch.equal(torch.compile(apply, backend="eager")(fn, x), (x + 1) * 2)
        del fn
        gc.collect()
        kept = adapter.dispatch_cache_entries(apply.__code__)
    # an entry Dynamo invalidated (torch 2.15: no code) is not described as a live one
    assert not [str(w.message) for w in recwarn if "could not describe" in str(w.message)]
    if kept:
        pytest.skip(f"torch {adapter.torch_version()} keeps the entry when the guarded function is freed")
    index = check_dump(tmp_path)  # every listed entry has guards
    (function,) = [fn for fn in index["functions"] if fn["name"] == "apply"]
    (entry,) = function["cache_entries"]
    assert any("L['fn']" in guard for guard in entry["guards"]), entry["guards"]


def test_torch_names_are_in_depyf_namespace_once_loaded():
    # Dynamo 2.2 reads a module's attribute from its __dict__ (the lazy module __getattr__ is not
    # consulted): `with depyf.debug():` inside a compiled function needs the name bound there.
    import depyf.torch

    for name in ("prepare_debug", "debug", "install", "uninstall", "on_compile"):
        assert vars(depyf)[name] is getattr(depyf.torch, name)
