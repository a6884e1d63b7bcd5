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


# Pieces a supported release lacks by design (see the adapter's docstring): release -> dotted names.
_LACKED_BY_DESIGN = {
    (2, 2): {
        "torch._logging._internal.trace_log",
        "torch._logging._internal.trace_structured",
        "torch._dynamo.backends.common.AotAutograd.__call__",
        "torch._functorch.config.enable_autograd_cache",
    },
    (2, 3): {
        "torch._dynamo.backends.common.AotAutograd.__call__",
        "torch._functorch.config.enable_autograd_cache",
    },
    (2, 4): {"torch._functorch.config.enable_autograd_cache"},
}


def _trace_or_skip():
    if not adapter.has("torch._logging._internal.trace_log"):
        pytest.skip(
            f"torch {adapter.torch_version()} has no structured trace (torch._logging._internal.trace_log)"
        )


def test_check_supported_passes_and_nothing_is_missing():
    adapter.check_supported()
    lacked = _LACKED_BY_DESIGN.get(adapter._release(adapter.torch_version()), set())
    assert [line for line in adapter.missing_apis() if line.split(" ")[0] not in lacked] == []


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
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    if not hasattr(_debug_get_cache_entry_list(adapter.original_callable(f).__code__)[0], "backend"):
        pytest.skip(f"torch {adapter.torch_version()} cache entries do not name their backend (nor, "
                    "before 2.5, their compile id); the dump takes both from the compilation")
    assert all(e.compile_key and e.backend == "aot_eager" for e in entries)


def test_leaf_guards_walk_dict_children():
    f = _compiled()
    f(torch.ones(2), {"k": torch.ones(2)})
    (entry,) = adapter.cache_entries(adapter.original_callable(f).__code__)
    if not hasattr(entry.guard_manager, "root"):
        pytest.skip(f"torch {adapter.torch_version()} guards are a Python function, with no guard tree "
                    "(test_torch_releases.py checks its verbose_code_parts)")
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
    _trace_or_skip()
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
    _trace_or_skip()
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


# --- where the structured trace is absent (2.2): the seams its pieces come from instead ------------

def _seam_or_skip(dotted):
    if not adapter.has(dotted):
        pytest.skip(f"torch {adapter.torch_version()} has no {dotted}; its structured trace gives the dump "
                    "what this seam gives it on 2.2")


def test_patch_joint_graph_sees_the_joint_graph():
    _seam_or_skip("torch._functorch._aot_autograd.jit_compile_runtime_wrappers.aot_dispatch_autograd_graph")
    seen = []
    before = adapter.state_snapshot()
    undo = adapter.patch_joint_graph(seen.append)
    try:
        x = torch.ones(2, requires_grad=True)
        _compiled("aot_eager")(x, {"k": torch.ones(2)}).sum().backward()
        _compiled("inductor")(torch.ones(2), {"k": torch.ones(2)})  # inference: no joint graph
    finally:
        undo()
    assert adapter.state_snapshot() == before
    (joint,) = seen
    inputs = [node.name for node in joint.graph.nodes if node.op == "placeholder"]
    assert any(name.startswith("primals") for name in inputs)
    assert any(name.startswith("tangents") for name in inputs)   # forward and backward in one graph
    assert "aten.sin" in joint.code and "aten.cos" in joint.code  # sin's gradient is cos


def test_patch_recompile_reasons_names_the_failed_guard():
    _seam_or_skip("torch._dynamo.convert_frame.get_and_maybe_log_recompilation_reason")

    @torch.compile(backend="eager", dynamic=False)
    def f(x):
        return x * 2

    seen = []
    before = adapter.state_snapshot()
    undo = adapter.patch_recompile_reasons(lambda code, reasons: seen.append((code, reasons)))
    try:
        f(torch.ones(4))
        f(torch.ones(4))
        f(torch.ones(6))
    finally:
        undo()
    assert adapter.state_snapshot() == before
    ((code, reasons),) = seen
    assert code is adapter.original_callable(f).__code__
    (reason,) = reasons
    assert "size mismatch at index 0. expected 4, actual 6" in reason


def test_tensor_guards_only_logged_where_guards_check_all_tensors_in_one_call():
    # 2.2 and 2.3 build Python guard functions with one ___check_tensors call (2.3 has a trace
    # too, so the dump needs the guards-log seam there as well); later releases spell each out.
    @torch.compile(backend="eager")
    def f(x, y):
        return x + y

    f(torch.ones(2), torch.ones(2))
    (entry,) = adapter.cache_entries(adapter.original_callable(f).__code__)
    parts = [part for leaf in adapter.leaf_guards(entry.guard_manager) for part in leaf.parts]
    assert adapter.tensor_guards_only_logged() == any("___check_tensors(" in part for part in parts), parts


def test_patch_tensor_guard_text_spells_out_each_tensor(capfd):
    _seam_or_skip("torch._dynamo.guards.CheckFunctionManager.compile_check_fn")

    @torch.compile(backend="eager")
    def f(x, y):
        return x + y

    before = adapter.state_snapshot()
    undo = adapter.patch_tensor_guard_text()
    try:
        f(torch.ones(2, 3), torch.ones(2, 3, dtype=torch.float64))
    finally:
        undo()
    assert adapter.state_snapshot() == before
    (entry,) = adapter.cache_entries(adapter.original_callable(f).__code__)
    leaves = adapter.leaf_guards(entry.guard_manager)
    tensors = [part for leaf in leaves if leaf.kind == "TENSOR_MATCH" for part in leaf.parts]
    assert any(part.startswith("check_tensor(L['x'], Tensor") and "torch.float32" in part
               and "size=[2, 3]" in part and "stride=[3, 1]" in part for part in tensors), tensors
    assert any(part.startswith("check_tensor(L['y'], Tensor") and "torch.float64" in part for part in tensors)
    assert not any("___check_tensors(" in part for leaf in leaves for part in leaf.parts)
    assert "check_tensor(" not in capfd.readouterr().err  # the guards log reached no handler of the user's


def test_keep_guard_user_lines_names_the_user_line_behind_each_tensor_guard(capfd):
    # 2.5 to 2.8 record a guard's user stack only while the guards log is on; the dump needs it on
    # every release for the "# x = a + 1" comment behind each guard of full_code.
    @torch.compile(backend="eager")
    def f(x, y):
        z = x.sin() + 1
        return z * y

    before = adapter.state_snapshot()
    undo = adapter.keep_guard_user_lines()
    try:
        f(torch.ones(2, 3), torch.ones(2, 3))
    finally:
        undo()
    assert adapter.state_snapshot() == before
    (entry,) = adapter.cache_entries(adapter.original_callable(f).__code__)
    parts = [part for leaf in adapter.leaf_guards(entry.guard_manager) for part in leaf.parts]
    # the guards on x itself (2.2 checks every tensor in one ___check_tensors call: its hasattr guards)
    x_guards = [part for part in parts if part.startswith(("check_tensor(L['x']", "hasattr(L['x']"))]
    assert x_guards and all("# z = x.sin() + 1" in part for part in x_guards), parts
    assert "check_tensor(" not in capfd.readouterr().err  # the guards log reached no handler of the user's


def test_keep_guard_user_lines_leaves_a_guards_log_the_user_enabled_alone():
    import logging

    from torch._dynamo import guards

    logger = guards.guards_log
    level, propagate = logger.level, logger.propagate
    logger.setLevel(logging.DEBUG)
    try:
        handlers = list(logger.handlers)
        undo = adapter.keep_guard_user_lines()
        assert list(logger.handlers) == handlers and logger.propagate == propagate
        undo()
        assert logger.level == logging.DEBUG
    finally:
        logger.setLevel(level)


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

    def caches():
        # no AOTAutograd cache before 2.5: nothing to turn off there
        return (inductor_config.fx_graph_cache, getattr(functorch_config, "enable_autograd_cache", False))

    before = caches()
    with adapter.compile_caches_disabled():
        assert caches() == (False, False)
    assert caches() == before


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


def test_launcher_rank_reads_torchrun_environment(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert adapter.launcher_rank() is None and adapter.process_rank() is None
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert adapter.launcher_rank() is None  # RANK alone (a script's own convention) is not torchrun
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert adapter.launcher_rank() == 1 and adapter.process_rank() == 1
    monkeypatch.setenv("RANK", "5")
    assert adapter.launcher_rank() is None  # not a rank of that world


@pytest.mark.skipif(
    not hasattr(torch.compiler, "set_stance"),
    reason=f"torch {torch.__version__} has no torch.compiler.set_stance (2.6+), the call traced here",
)
def test_run_outside_dynamo_is_not_traced():
    from depyf.torch.debug import debug

    def forbidden():
        with debug(pause=False):
            return 1

    def f(x):
        return x + forbidden()

    traced = adapter.run_outside_dynamo(lambda: torch.compiler.set_stance("default"))  # traced: an error

    def g(x):
        traced()
        return x * 2

    x = torch.ones(2)
    assert torch.equal(torch.compile(f, backend="eager")(x), x + 1)
    assert torch.equal(torch.compile(g, backend="eager")(x), x * 2)


def test_state_snapshot_covers_the_child_process_counter():
    from depyf.torch.children import count_child_processes

    before = adapter.state_snapshot()
    undo = count_child_processes(lambda process: None)
    try:
        assert adapter.state_snapshot() != before
    finally:
        undo()
    assert adapter.state_snapshot() == before


def test_graph_records_of_this_release_cover_every_inductor_stage():
    # Record names differ per release (adapter.release_graph_records).
    if not adapter.has("torch._logging._internal.trace_log"):
        pytest.skip(f"torch {torch.__version__} has no structured trace")
    from depyf.torch import trace

    seen = set()
    detach = trace.attach(lambda event: seen.add(trace.GRAPH_STAGES[event.kind]), set(trace.GRAPH_STAGES))
    try:
        with adapter.compile_caches_disabled():
            x = torch.ones(2, requires_grad=True)
            _compiled("inductor")(x, {"k": torch.ones(2)}).sum().backward()
    finally:
        detach()
    # Inductor stages this release's trace lacks come from patch_inductor_passes instead.
    untraced = {stage for stage in ("pre_grad", "post_grad")
                if not adapter.inductor_traces({k for k, v in trace.GRAPH_STAGES.items() if v == stage})}
    expected = {
        "captured_graph",
        "joint_graph",
        "forward",
        "backward",
        "pre_grad",
        "post_grad",
        "output_code",
    }
    assert expected - untraced <= seen


def test_graph_breaks_reach_the_dump_whether_or_not_the_trace_has_them(tmp_path):
    # torch 2.7+ writes each graph break to the trace (dynamo_graph_break_reason); 2.3 to 2.5 do not,
    # and the dump reads it from the captured graph's compile reason (adapter.graph_break_of) there.
    import json

    import depyf
    from depyf.torch import trace

    @torch.compile(backend="eager")
    def f(x):
        y = x.cos()
        if y.sum() > 0:
            y = y + 1
        return y

    kinds = []
    detach = (trace.attach(lambda event: kinds.append(event.kind), {"dynamo_graph_break_reason"})
              if adapter.has("torch._logging._internal.trace_log") else (lambda: None))
    try:
        with depyf.prepare_debug(str(tmp_path / "dump")) as d:
            out = f(torch.zeros(3))
    finally:
        detach()
    assert torch.equal(out, torch.zeros(3).cos() + 1)
    index = json.loads(open(f"{d}/index.json", encoding="utf-8").read())
    (brk,) = next(fn for fn in index["functions"] if fn["name"] == "f")["graph_breaks"]
    assert brk["source_line"] == "if y.sum() > 0:" and brk["filename"] == __file__
    assert brk["reason"]
    assert bool(kinds) == adapter.dynamo_traces_graph_breaks()


def test_recompile_reasons_reach_the_dump_whether_or_not_the_trace_has_them(tmp_path):
    # torch 2.5+ writes them to the trace (recompile_reasons); 2.3 and 2.4 have a trace without
    # them, and the dump reads them from Dynamo's guard-failure check there, as on 2.2.
    import json

    import depyf
    from depyf.torch import trace

    @torch.compile(backend="eager", dynamic=False)
    def f(x):
        return x.sin() + 1

    kinds = []
    detach = (trace.attach(lambda event: kinds.append(event.kind), {"recompile_reasons"})
              if adapter.has("torch._logging._internal.trace_log") else (lambda: None))
    try:
        with depyf.prepare_debug(str(tmp_path / "dump")) as d:
            f(torch.zeros(3))
            f(torch.zeros(5))
    finally:
        detach()
    index = json.loads(open(f"{d}/index.json", encoding="utf-8").read())
    recompiled = next(fn for fn in index["functions"] if fn["name"] == "f")["recompilations"]
    assert recompiled and any("size mismatch" in r["reason"] for r in recompiled), recompiled
    assert bool(kinds) == adapter.dynamo_traces_recompile_reasons()


def test_graph_runs_interpreted_looks_through_dynamo_disable():
    # torch 2.5's aot_eager returns the backward graph as disable(disable(boxed_nop(...))) from its
    # second compilation on (AotAutograd keeps its backward wrapper in the backend's settings)
    from torch._dynamo.backends.debugging import boxed_nop

    compiled = boxed_nop(torch.fx.symbolic_trace(lambda x: x + 1), [])
    wrapped = torch._dynamo.disable(torch._dynamo.disable(compiled))
    assert wrapped is not compiled
    assert adapter.graph_runs_interpreted(wrapped) == adapter.graph_runs_interpreted(compiled)


# --- Dynamo's naming conventions -------------------------------------------------------------------

def _transformed_codes(fn, *args):
    codes = []
    handle = adapter.register_bytecode_hook(lambda code, new: codes.append(new) and None)
    try:
        fn(*args)
    finally:
        handle.remove()
    return codes


def test_graph_and_resume_globals_are_recognised_in_transformed_code():
    def broken(x):
        y = x.sin()
        torch._dynamo.graph_break()
        return y.cos()

    first = _transformed_codes(torch.compile(broken, backend="eager"), torch.ones(2))[0]
    graphs = [name for name in first.co_names if adapter.is_graph_global(name)]
    assert graphs and all(adapter.short_graph_name(name).startswith("__compiled_fn_") for name in graphs)
    assert adapter.short_graph_name(graphs[0]).removeprefix("__compiled_fn_").isdigit()
    assert adapter.continues_in_resume_functions(first)
    assert not any(adapter.is_resume_global(name) for name in ("sin", "__compiled_fn_1", "torch"))
    assert not adapter.is_graph_global("__resume_at_10_2")


def test_a_code_without_graph_break_continues_nowhere():
    code = _transformed_codes(_compiled(), torch.ones(2), {"k": torch.ones(2)})[0]
    assert not adapter.continues_in_resume_functions(code)


def test_compiled_wrapper_target_is_the_compiled_callable():
    def f(x):
        return x + 1

    module = torch.nn.Linear(2, 2)
    assert adapter.compiled_wrapper_target(torch.compile(f)) is f
    assert adapter.compiled_wrapper_target(f) is f
    assert adapter.compiled_wrapper_target(torch.compile(module)) is not module.forward


def test_graph_module_class_name_is_what_torch_prints():
    gm = torch.fx.symbolic_trace(lambda x: x + 1)
    assert adapter.graph_module_class_name(gm) == type(gm).__name__
    assert f"class {adapter.graph_module_class_name(gm)}(" in gm.print_readable(print_output=False)


def test_compile_counts_follow_compilations_and_graph_breaks():
    from torch._dynamo.utils import counters

    counters.clear()

    def broken(x):
        y = x.sin()
        torch._dynamo.graph_break()
        return y.cos()

    torch.compile(broken, backend="eager")(torch.ones(2))
    counts = adapter.compile_counts()
    assert counts is not None and counts["frames"] >= 2 and counts["graphs"] == 2 and counts["breaks"] >= 1


def test_patch_guarded_code_sees_the_code_that_runs_with_its_guard_function():
    seen = []
    undo = adapter.patch_guarded_code(lambda code, guards: seen.append((code, guards)))
    try:
        def f(x):
            return x * 3

        assert torch.equal(torch.compile(f, backend="eager")(torch.ones(2)), torch.full((2,), 3.0))
    finally:
        undo()
    import dataclasses

    from torch._dynamo import convert_frame

    assert convert_frame.GuardedCode.__module__ == "torch._dynamo.types"   # undone
    if [f.name for f in dataclasses.fields(convert_frame.GuardedCode)][:2] != ["code", "check_fn"]:
        # 2.6+: GuardedCode holds a guard manager; nothing is patched
        assert seen == []
        return
    (code, guards), = seen
    (entry,) = adapter.cache_entries(f.__code__)
    assert code is entry.code
    assert guards is entry.guard_manager
    assert any("L['x']" in part for leaf in adapter.leaf_guards(guards) for part in leaf.parts)
