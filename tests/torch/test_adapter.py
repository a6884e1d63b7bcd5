"""One test per private-torch access in depyf/torch/adapter.py: when torch changes, the failing
test names the seam that moved."""

from __future__ import annotations

import logging
import types

import pytest

torch = pytest.importorskip("torch")

from depyf.torch import adapter  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _compiled(backend="eager"):
    @torch.compile(backend=backend)
    def f(x, d):
        return x.sin() + d["k"]

    return f


def test_check_supported_passes_and_nothing_is_missing():
    adapter.check_supported()
    assert adapter.missing_apis() == []


def test_missing_api_is_named(monkeypatch):
    monkeypatch.setattr(adapter, "_REQUIRED", [("torch._dynamo.no_such_thing", "test")])
    assert adapter.missing_apis() == ["torch._dynamo.no_such_thing (used to test)"]


def test_register_bytecode_hook_sees_transformation_and_removes():
    seen = []
    before = adapter.bytecode_hook_count()
    handle = adapter.register_bytecode_hook(lambda code, new: seen.append((code.co_name, new.co_name)))
    assert adapter.bytecode_hook_count() == before + 1
    try:
        _compiled()(torch.ones(2), {"k": torch.ones(2)})
    finally:
        handle.remove()
    assert adapter.bytecode_hook_count() == before
    assert seen == [("f", "f")]


def test_bytecode_logger_is_the_torch_logs_bytecode_artifact():
    assert isinstance(adapter.bytecode_logger(), logging.Logger)
    assert adapter.bytecode_logger().name.endswith("__bytecode")


def test_compile_key_inside_and_outside_compilation():
    keys = []
    handle = adapter.register_bytecode_hook(lambda code, new: keys.append(adapter.compile_key()))
    try:
        _compiled()(torch.ones(2), {"k": torch.ones(2)})
    finally:
        handle.remove()
    assert adapter.compile_key() is None
    assert len(keys) == 1 and keys[0].count("/") == 1


def test_cache_entries_and_backend_name():
    # torch 2.12 and older keep no backend on a cache entry: the call_user_compiler seam (which
    # prepare_debug installs) remembers it per compilation.
    f = _compiled("aot_eager")
    undo = adapter.patch_call_user_compiler(lambda call, gm, inputs: call(gm, inputs))
    try:
        f(torch.ones(2), {"k": torch.ones(2)})
        f(torch.ones(3), {"k": torch.ones(3)})
    finally:
        undo()
    entries = adapter.cache_entries(adapter.original_callable(f).__code__)
    assert len(entries) >= 1
    assert all(isinstance(e.code, types.CodeType) and e.code.co_name == "f" for e in entries)
    assert all(e.compile_key and e.backend == "aot_eager" for e in entries)


def test_leaf_guards_walk_dict_children():
    f = _compiled()
    f(torch.ones(2), {"k": torch.ones(2)})
    (entry,) = adapter.cache_entries(adapter.original_callable(f).__code__)
    leaves = adapter.leaf_guards(entry.guard_manager)
    text = "\n".join(p for leaf in leaves for p in leaf.parts)
    assert "check_tensor(L['x']" in text
    assert "check_tensor(L['d']['k']" in text     # only reachable through the dict manager's children
    assert {"TENSOR_MATCH", "GLOBAL_STATE"} <= {leaf.kind for leaf in leaves}


def test_original_callable_unwraps_functions_and_modules():
    f = _compiled()
    assert adapter.original_callable(f).__code__.co_name == "f"
    module = torch.nn.Linear(2, 2)
    compiled = torch.compile(module)
    assert adapter.original_callable(compiled).__func__ is torch.nn.Linear.forward


def test_trace_logger_and_record_compile_key():
    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(record)

    handler = Collect()
    adapter.trace_logger().addHandler(handler)
    try:
        _compiled()(torch.ones(2), {"k": torch.ones(2)})
    finally:
        adapter.trace_logger().removeHandler(handler)
    graphs = [r for r in records if "dynamo_output_graph" in r.metadata]
    assert graphs and "def forward" in graphs[0].payload
    assert adapter.record_compile_key(graphs[0].metadata) == "0/0"
    assert adapter.record_compile_key({}) is None


def test_unwanted_trace_records_are_skipped_only_while_every_handler_is_ours():
    from torch._logging import _internal

    def collect_into(records):
        class Collect(logging.Handler):
            def emit(self, record):
                records.append(next(iter(record.metadata)))
        return Collect()

    ours, theirs = [], []
    handler = collect_into(ours)
    built = []
    logger = adapter.trace_logger()
    original = _internal.trace_structured
    saved = list(logger.handlers)  # torch's LazyTraceHandler, until the first record
    logger.handlers = [handler]
    undo = adapter.skip_unwanted_trace_records(handler, lambda name, metadata_fn: name == "wanted")
    try:
        patched = _internal.trace_structured
        assert patched is not original and torch._logging.trace_structured is patched
        patched("wanted", payload_fn=lambda: built.append("wanted") or "x")
        patched("unwanted", payload_fn=lambda: built.append("unwanted") or "x")
        assert ours == ["wanted"] and built == ["wanted"]
        # a user's own handler (TORCH_TRACE) turns the filter off: every record is built again
        other = collect_into(theirs)
        logger.addHandler(other)
        try:
            patched("unwanted", payload_fn=lambda: built.append("unwanted") or "x")
        finally:
            logger.removeHandler(other)
        assert theirs == ["unwanted"] and built == ["wanted", "unwanted"]
    finally:
        undo()
        logger.handlers = saved
    assert _internal.trace_structured is original and torch._logging.trace_structured is original


def test_patch_call_user_compiler_and_graph_backend_id():
    names = []

    def around(call, gm, inputs):
        names.append(adapter.graph_backend_id(gm))
        return call(gm, inputs)

    undo = adapter.patch_call_user_compiler(around)
    f = _compiled()
    try:
        f(torch.ones(2), {"k": torch.ones(2)})
    finally:
        undo()
    assert len(names) == 1 and names[0].startswith("__compiled_fn_")
    # the name the transformed code calls (with a uuid suffix on torch 2.8+)
    assert names[0] in adapter.original_callable(f).__globals__


def test_call_user_compiler_signature_of_each_generation():
    def before_2_8(self, gm):
        pass

    def since_2_8(self, gm, example_inputs):
        pass

    assert not adapter.call_user_compiler_takes_inputs(before_2_8)
    assert adapter.call_user_compiler_takes_inputs(since_2_8)
    from torch._dynamo.output_graph import OutputGraph

    takes = adapter.call_user_compiler_takes_inputs(OutputGraph.__dict__["call_user_compiler"])
    assert takes == (tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 8))


def test_graph_backend_id_from_compiling_frame_is_none_outside_a_compilation():
    assert adapter.graph_backend_id_from_compiling_frame() is None
    assert adapter.graph_backend_id(torch.fx.symbolic_trace(lambda x: x + 1)) is None


def test_patch_aot_compilers_sees_forward_and_backward_graphs():
    stages = []

    def wrap(stage, compiler):
        def inner(gm, inputs, *args, **kwargs):
            stages.append((stage, type(gm).__name__))
            return compiler(gm, inputs, *args, **kwargs)
        return inner

    before = adapter.state_snapshot()
    undo = adapter.patch_aot_compilers(wrap)
    try:
        x = torch.ones(2, requires_grad=True)
        _compiled("aot_eager")(x, {"k": torch.ones(2)}).sum().backward()
    finally:
        undo()
    assert adapter.state_snapshot() == before
    assert [s for s, _ in stages] == ["forward", "backward"]
    assert all("GraphModule" in name for _, name in stages)


def test_patch_inductor_module_loader_sees_output_code():
    loaded = []
    undo = adapter.patch_inductor_module_loader(lambda module, path: loaded.append((module, path)))
    try:
        with adapter.compile_caches_disabled():
            _compiled("inductor")(torch.ones(2), {"k": torch.ones(2)})
    finally:
        undo()
    assert any(callable(getattr(m, "call", None)) and p.endswith(".py") for m, p in loaded)


def test_compile_caches_disabled_restores():
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    before = (inductor_config.fx_graph_cache, functorch_config.enable_autograd_cache)
    with adapter.compile_caches_disabled():
        assert (inductor_config.fx_graph_cache, functorch_config.enable_autograd_cache) == (False, False)
    assert (inductor_config.fx_graph_cache, functorch_config.enable_autograd_cache) == before


def test_state_snapshot_notices_a_change():
    before = adapter.state_snapshot()
    handle = adapter.register_bytecode_hook(lambda code, new: None)
    try:
        assert adapter.state_snapshot() != before
    finally:
        handle.remove()
    assert adapter.state_snapshot() == before


def test_distributed_rank_is_none_without_process_group():
    assert adapter.distributed_rank() is None


def test_graph_records_of_this_release_cover_every_inductor_stage():
    # Record names differ per release (adapter.release_graph_records); a stage a release cannot
    # show must be named by adapter.release_unavailable_features.
    from depyf.torch import trace

    seen = set()
    detach = trace.attach(lambda event: seen.add(trace.GRAPH_STAGES[event.kind]), set(trace.GRAPH_STAGES))
    try:
        with adapter.compile_caches_disabled():
            x = torch.ones(2, requires_grad=True)
            _compiled("inductor")(x, {"k": torch.ones(2)}).sum().backward()
    finally:
        detach()
    unavailable = {item["feature"].removesuffix(" graph") for item in adapter.release_unavailable_features()}
    expected = {"captured_graph", "joint_graph", "forward", "backward", "pre_grad", "post_grad", "output_code"}
    assert expected - unavailable <= seen
    assert unavailable <= {"pre_grad"}
