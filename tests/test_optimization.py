"""The guard-skipping dispatcher: same results as torch.compile, guards checked on request."""

from __future__ import annotations

import gc
import types

import pytest

torch = pytest.importorskip("torch")

from depyf.optimization import (  # noqa: E402
    CHECK_ENV_VAR,
    DispatchGuardError,
    TorchCompileWrapperWithCustomDispatcher,
)
from depyf.torch import adapter  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Instances of one class share Dynamo's cache for the method; start each test from an empty one."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
    gc.collect()  # wrappers of this test go, and with them their bytecode hooks (see the test below)


class AddConstant(torch.nn.Module):
    def __init__(self, i: int) -> None:
        super().__init__()
        self.i = i

    def forward(self, x):
        return x + self.i


class Chain(TorchCompileWrapperWithCustomDispatcher):
    """The tutorial's example: a plain object holding submodules."""

    def __init__(self, n: int, backend: str = "eager", **kwargs) -> None:
        self.fs = torch.nn.ModuleList([AddConstant(i) for i in range(n)])
        super().__init__(torch.compile(self.forward, backend=backend, **kwargs))

    def forward(self, x):
        for f in self.fs:
            x = f(x)
        return x

    def __call__(self, x):
        if len(self.compiled_codes) == 1:
            with self.dispatch_to_code(0):
                return self.forward(x)
        return self.compiled_callable(x)


class ModuleChain(torch.nn.Module, TorchCompileWrapperWithCustomDispatcher):
    """The same as an nn.Module subclass."""

    def __init__(self, n: int, check: bool | None = None) -> None:
        torch.nn.Module.__init__(self)
        self.fs = torch.nn.ModuleList([AddConstant(i) for i in range(n)])
        self.scale = torch.nn.Parameter(torch.tensor(2.0))
        TorchCompileWrapperWithCustomDispatcher.__init__(
            self, torch.compile(self.forward, backend="eager"), check=check
        )

    def forward(self, x):
        for f in self.fs:
            x = f(x)
        return x * self.scale


class Counting:
    """A backend that runs the graph as is and counts how often each compiled graph runs."""

    def __init__(self) -> None:
        self.compiled = 0
        self.runs = 0

    def __call__(self, gm, example_inputs):
        self.compiled += 1

        def run(*args):
            self.runs += 1
            return gm.forward(*args)

        return run


def test_dispatched_output_equals_compiled_for_plain_object():
    chain = Chain(5)
    x = torch.randn(4)
    expected = chain.compiled_callable(x)
    assert len(chain.compiled_codes) == 1
    assert torch.equal(chain(x), expected)
    assert torch.equal(chain(x + 1), chain.compiled_callable(x + 1))


def test_dispatched_output_equals_compiled_with_inductor_and_fullgraph():
    chain = Chain(3, backend="inductor", fullgraph=True)
    x = torch.randn(4)
    expected = chain.compiled_callable(x)
    assert torch.equal(chain(x), expected)


def test_nn_module_subclass_dispatches_and_stays_a_module():
    mod = ModuleChain(3)
    x = torch.randn(4)
    expected = mod.compiled_callable(x)
    with mod.dispatch_to_code(0):
        got = mod.forward(x)
        through_module_call = mod(x)  # nn.Module.__call__ looks up self.forward too
    assert torch.equal(got, expected) and torch.equal(through_module_call, expected)
    # The wrapper's own attributes must not become submodules or parameters.
    assert [name for name, _ in mod.named_parameters()] == ["scale"]
    assert "compiled_callable" not in dict(mod.named_modules())
    assert "forward" not in mod.__dict__


def test_gradients_through_the_dispatched_code_match():
    class Scaled(torch.nn.Module, TorchCompileWrapperWithCustomDispatcher):
        def __init__(self):
            torch.nn.Module.__init__(self)
            self.weight = torch.nn.Parameter(torch.tensor([1.5, -2.0, 0.5]))
            TorchCompileWrapperWithCustomDispatcher.__init__(
                self, torch.compile(self.forward, backend="aot_eager", fullgraph=True)
            )

        def forward(self, x):
            return (torch.tanh(x * self.weight) ** 2).sum()

    mod = Scaled()
    x = torch.randn(3)
    mod.compiled_callable(x).backward()
    expected = mod.weight.grad.clone()
    mod.weight.grad = None
    with mod.dispatch_to_code(0):
        mod.forward(x).backward()
    assert torch.allclose(mod.weight.grad, expected)


def test_dispatch_runs_the_compiled_code_not_the_original():
    counting = Counting()

    class Obj(TorchCompileWrapperWithCustomDispatcher):
        def __init__(self):
            super().__init__(torch.compile(self.forward, backend=counting))

        def forward(self, x):
            return torch.sin(x) + 1

    obj = Obj()
    x = torch.randn(3)
    obj.compiled_callable(x)
    runs = counting.runs
    with obj.dispatch_to_code(0):
        assert torch.equal(obj.forward(x), torch.sin(x) + 1)
    assert counting.runs == runs + 1  # the compiled graph ran, not eager Python


def test_dispatched_method_runs_the_code_without_a_with_block():
    chain = Chain(3)
    x = torch.randn(4)
    expected = chain.compiled_callable(x)
    fast = chain.dispatched(0)
    assert fast.__self__ is chain and fast.__func__.__code__ is not Chain.forward.__code__
    assert torch.equal(fast(x), expected)
    assert "forward" not in chain.__dict__


def test_method_stored_under_another_name_is_dispatched_under_that_name():
    def _forward_impl(self, x):
        return x * 7

    class Aliased(TorchCompileWrapperWithCustomDispatcher):
        forward = _forward_impl

        def __init__(self):
            super().__init__(torch.compile(self.forward, backend="eager"))

    obj = Aliased()
    x = torch.randn(2)
    obj.compiled_callable(x)
    with obj.dispatch_to_code(0):
        assert obj.forward.__func__ is not _forward_impl
        assert torch.equal(obj.forward(x), x * 7)
    assert obj.forward.__func__ is _forward_impl


def test_compiled_codes_grow_with_recompilations():
    chain = Chain(2)
    floats = torch.randn(3)
    ints = torch.arange(3)
    chain.compiled_callable(floats)
    assert len(chain.compiled_codes) == 1
    chain.compiled_callable(ints)  # dtype guard fails: Dynamo recompiles
    assert len(chain.compiled_codes) == 2
    assert all(isinstance(code, types.CodeType) for code in chain.compiled_codes)
    with chain.dispatch_to_code(1):
        assert torch.equal(chain.forward(ints), ints + 1)
    with chain.dispatch_to_code(0):
        assert torch.equal(chain.forward(floats), floats + 1)


def test_only_the_instance_that_compiled_records_the_code():
    first, second = Chain(2), Chain(2)
    first.compiled_callable(torch.randn(3))
    assert len(first.compiled_codes) == 1
    assert second.compiled_codes == []
    x = torch.randn(3)
    second.compiled_callable(x)
    assert len(first.compiled_codes) == 1  # a compilation for `second` is never `first`'s
    entries = adapter.dispatch_cache_entries(Chain.forward.__code__)
    if len(entries) == 1:
        # Dynamo reuses the code compiled for `first`: nothing recorded, adopt it on request
        assert second.compiled_codes == []
        assert second.adopt_cached_code(x) == 0
        assert second.compiled_codes == first.compiled_codes
    else:
        # torch 2.2 guards each submodule and the backend by identity: `second` compiled its own code
        assert len(entries) == 2 and second.compiled_codes == [entries[0].code]
        assert second.adopt_cached_code(x) == 0
    assert torch.equal(second(x), x + 1)
    assert Chain(3).adopt_cached_code(x) is None  # three submodules: the cached guards fail


def test_graph_break_resume_functions_keep_their_compiled_graph():
    counting = Counting()

    class Broken(TorchCompileWrapperWithCustomDispatcher):
        def __init__(self):
            super().__init__(torch.compile(self.forward, backend=counting))

        def forward(self, x):
            y = torch.cos(x) * 2
            torch._dynamo.graph_break()
            return torch.sin(y) + 1

    obj = Broken()
    x = torch.randn(5)
    expected = obj.compiled_callable(x)
    assert counting.compiled == 2  # one graph before the break, one in the resume function
    runs = counting.runs
    with obj.dispatch_to_code(0):
        got = obj.forward(x)
    assert torch.equal(got, expected)
    assert counting.runs == runs + 2  # both graphs ran: the resume function used its compiled code
    assert torch.equal(obj.dispatched(0)(x), expected)
    assert counting.runs == runs + 4  # the same without the with-statement
    assert counting.compiled == 2  # and nothing was compiled again


def test_graph_break_inside_a_submodule_nested_resume():
    counting = Counting()

    class Breaks(torch.nn.Module):
        def forward(self, x):
            x = x * 3
            torch._dynamo.graph_break()
            return x - 1

    class Outer(TorchCompileWrapperWithCustomDispatcher):
        def __init__(self):
            self.inner = Breaks()
            super().__init__(torch.compile(self.forward, backend=counting))

        def forward(self, x):
            y = self.inner(x) + 2
            return y * y

    obj = Outer()
    x = torch.randn(4)
    runs = counting.runs
    expected = obj.compiled_callable(x)
    graphs_per_call = counting.runs - runs
    assert len(obj.compiled_codes) == 1 and graphs_per_call >= 2
    runs = counting.runs
    with obj.dispatch_to_code(0):
        assert torch.equal(obj.forward(x), expected)
    assert counting.runs - runs == graphs_per_call  # every graph, the resumed ones included, ran compiled
    with obj.dispatch_to_code(0):
        assert torch.equal(obj.forward(x + 1), obj.compiled_callable(x + 1))


def test_dispatch_runs_the_code_a_later_bytecode_hook_put_in_the_cache():
    """depyf.prepare_debug replaces Dynamo's code with debuggable code; dispatch must run that one."""
    marker = "replaced by a later hook"
    chain = Chain(2)

    def replace(code, new_code):
        if code is Chain.forward.__code__:
            return new_code.replace(co_consts=(*new_code.co_consts, marker))
        return None

    handle = adapter.register_bytecode_hook(replace)
    try:
        x = torch.randn(3)
        expected = chain.compiled_callable(x)
    finally:
        handle.remove()
    assert marker not in chain.compiled_codes[0].co_consts  # the list holds what Dynamo made
    fast = chain.dispatched(0)
    assert marker in fast.__func__.__code__.co_consts  # dispatch runs what the cache runs
    assert torch.equal(fast(x), expected)
    # Checked mode finds that cache entry's guards as well.
    object.__setattr__(chain, "_depyf_check", True)
    chain._depyf_dispatchers.clear()
    assert torch.equal(chain(x), expected)
    with pytest.raises(DispatchGuardError):
        chain(torch.arange(3))


def test_checked_mode_names_the_failed_guard():
    chain = Chain.__new__(Chain)
    chain.fs = torch.nn.ModuleList([AddConstant(i) for i in range(2)])
    TorchCompileWrapperWithCustomDispatcher.__init__(
        chain, torch.compile(chain.forward, backend="eager"), check=True
    )
    floats = torch.randn(3)
    chain.compiled_callable(floats)
    assert torch.equal(chain(floats), floats + 1)  # guards hold: dispatched normally
    with pytest.raises(DispatchGuardError) as info:
        chain(torch.arange(3))  # int64 input: the float code's dtype guard fails
    error = info.value
    assert error.code_index == 0
    assert error.function.endswith("Chain.forward")
    assert any("L['x']" in part and "dtype" in part for part in error.failed_guards)
    assert "L['x']" in str(error) and "compiled_codes[0]" in str(error)
    assert "forward" not in chain.__dict__  # the method is restored after the error


def test_checked_mode_catches_a_changed_module_attribute():
    mod = ModuleChain(2, check=True)
    x = torch.randn(3)
    mod.compiled_callable(x)
    mod.fs[1].i = 5  # the compiled graph baked in 1
    if not torch.equal(mod.compiled_callable(x), (x + 5) * 2):
        pytest.skip("torch.compile itself runs the stale graph here (torch 2.2 guards no module attribute)")
    with pytest.raises(DispatchGuardError, match=r"fs"):
        with mod.dispatch_to_code(0):
            mod.forward(x)


def test_checked_mode_from_environment_variable(monkeypatch):
    monkeypatch.setenv(CHECK_ENV_VAR, "1")
    chain = Chain(2)
    chain.compiled_callable(torch.randn(3))
    with pytest.raises(DispatchGuardError):
        chain(torch.arange(3))
    monkeypatch.setenv(CHECK_ENV_VAR, "0")
    torch._dynamo.reset()
    unchecked = Chain(2)
    unchecked.compiled_callable(torch.randn(3))
    with unchecked.dispatch_to_code(0):
        unchecked.forward(torch.randn(3))  # no check, no error


def test_method_restored_after_exceptions_and_nesting():
    chain = Chain(1)
    chain.compiled_callable(torch.randn(2))
    original = chain.forward
    with pytest.raises(ZeroDivisionError):
        with chain.dispatch_to_code(0):
            raise ZeroDivisionError
    assert "forward" not in chain.__dict__
    with chain.dispatch_to_code(0):
        with chain.dispatch_to_code(0):
            assert chain.forward.__func__.__code__ is not original.__func__.__code__
        assert chain.forward.__func__.__code__ is not original.__func__.__code__
    assert chain.forward == original


def test_default_call_and_default_compiled_callable():
    class Default(TorchCompileWrapperWithCustomDispatcher):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            return x * 2

    obj = Default()
    x = torch.randn(2)
    assert torch.equal(obj(x), x * 2)  # the guarded torch.compile path
    assert len(obj.compiled_codes) == 1


def test_bytecode_hook_goes_with_the_wrapper():
    from torch._dynamo import convert_frame

    gc.collect()
    before = len(convert_frame._bytecode_hooks)
    chain = Chain(1)
    chain.compiled_callable(torch.randn(2))
    chain(torch.randn(2))
    assert len(convert_frame._bytecode_hooks) == before + 1
    del chain
    gc.collect()
    assert len(convert_frame._bytecode_hooks) == before


def test_clear_errors_for_misuse():
    chain = Chain(1)
    with pytest.raises(IndexError, match=r"has 0 compiled code.*call compiled_callable"):
        chain.dispatch_to_code(0)

    def free_function(x):
        return x

    class Wrong(TorchCompileWrapperWithCustomDispatcher):
        pass

    with pytest.raises(TypeError, match=r"method of the same object"):
        Wrong(torch.compile(free_function))


# One test per private torch API depyf.optimization uses (in depyf/torch/adapter.py).


def test_private_register_bytecode_hook_sees_each_transformation():
    seen = []

    def f(x):
        return x - 3

    handle = adapter.register_bytecode_hook(lambda code, new: seen.append((code, new)) and None)
    try:
        torch.compile(f, backend="eager")(torch.randn(2))
    finally:
        handle.remove()
    assert [code for code, _ in seen] == [f.__code__]
    assert isinstance(seen[0][1], types.CodeType) and seen[0][1] is not f.__code__


def test_private_cache_entries_expose_code_and_guards():
    def f(x):
        return x * 5

    seen = []
    handle = adapter.register_bytecode_hook(lambda code, new: seen.append(new) and None)
    try:
        torch.compile(f, backend="eager")(torch.randn(2))
    finally:
        handle.remove()
    entries = adapter.dispatch_cache_entries(f.__code__)
    assert [entry.code for entry in entries] == seen
    assert adapter.failed_guards(adapter.entry_guards(entries[0]), {"x": torch.randn(2)}) is None


def test_private_compiling_frame_locals_is_the_compiled_frame():
    found = []

    def f(x, marker):
        return x + 1

    def hook(code, new):
        if code is f.__code__:
            found.append(adapter.compiling_frame_locals())

    handle = adapter.register_bytecode_hook(hook)
    try:
        torch.compile(f, backend="eager")(torch.randn(2), "the marker")
    finally:
        handle.remove()
    assert found and found[0]["marker"] == "the marker"
    assert adapter.compiling_frame_locals() is None  # outside a compilation


def test_private_failed_guards_names_the_guard():
    def f(x):
        return x + 2

    torch.compile(f, backend="eager")(torch.randn(2))
    manager = adapter.entry_guards(adapter.dispatch_cache_entries(f.__code__)[0])
    failed = adapter.failed_guards(manager, {"x": torch.arange(2)})
    assert failed and any("L['x']" in part for part in failed)
    assert adapter.failed_guards(manager, {"x": torch.randn(2)}) is None  # outside torch.compile


def test_private_set_eval_frame_run_only_mode_never_compiles():
    counting = Counting()

    def f(x):
        return x + 4

    compiled = torch.compile(f, backend=counting)
    compiled(torch.randn(2))
    set_eval_frame = adapter.set_eval_frame()
    prior = set_eval_frame(adapter.run_only_eval_frame)
    try:
        assert torch.equal(f(torch.ones(2)), torch.ones(2) + 4)  # cached code runs
        f(torch.arange(2))  # guard miss: runs eagerly, no compilation
    finally:
        set_eval_frame(prior)
    assert counting.runs == 2 and counting.compiled == 1


def test_private_lean_profiler_hooks_keep_the_profiler_range():
    import torch._dynamo.utils

    if not hasattr(torch._dynamo.utils, "record_pregraph_bytecode_enter"):
        pytest.skip("this torch's transformed code opens no pregraph profiler range (torch 2.8+)")
    chain = Chain(2)
    x = torch.randn(3)
    chain.compiled_callable(x)
    original = chain.compiled_codes[0]
    lean = adapter.lean_profiler_hooks(original, Chain.forward.__globals__)
    assert lean is not original and "__import_torch_dot__dynamo_dot_utils" not in lean.co_names
    with torch.profiler.profile() as prof:
        assert torch.equal(chain(x), x + 1)
    assert "Pregraph bytecode" in {event.name for event in prof.events()}


# The benchmark scripts' bookkeeping (their timings are not tested).


def _bench_module(name: str):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_decompile_speed_counts_every_function_and_failure():
    speed = _bench_module("decompile_speed")

    module_code = compile(
        "def f():\n    def g():\n        pass\nclass C:\n    def m(self):\n        pass\n", "m", "exec"
    )
    assert sorted(code.co_name for code in speed.function_codes(module_code)) == ["f", "g", "m"]
    result = speed.measure(1, ["colorsys"])
    assert result["modules"] == 1 and result["functions"] >= 5
    assert result["decompiled"] + result["failed"] == result["functions"]
    assert result["functions_per_second"] > 0 and result["decompile_over_compile"] > 0


def test_decompile_speed_works_while_the_decompiler_fails(monkeypatch):
    speed = _bench_module("decompile_speed")
    import depyf

    def failing(code):
        raise depyf.DecompilationError("not yet", qualname=code.co_name)

    monkeypatch.setattr(speed.depyf, "decompile", failing)
    result = speed.measure(1, ["colorsys"])
    assert result["decompiled"] == 0 and result["failed"] == result["functions"]
    assert result["failures_by_type"] == {"DecompilationError": result["functions"]}


def test_run_all_table_lists_missing_scripts_and_updates_only_its_block(tmp_path, monkeypatch):
    run_all = _bench_module("run_all")
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n\nnotes kept\n")
    monkeypatch.setattr(run_all, "RESULTS_MD", results)
    info = run_all.machine()
    assert info["cores"] and info["python"] and info["torch"] != "not installed"
    runs = {
        "report_speed": {"status": "missing", "detail": "bench/report_speed.py not found"},
        "other": {"status": "ok", "result": {"table": [{"figure": "report build", "value": "1.5 s"}]}},
    }
    markdown = run_all.table(runs, info)
    assert "| report_speed | missing |" in markdown and "| other | report build | 1.5 s |" in markdown
    run_all.update_results(markdown)
    run_all.update_results(markdown.replace("1.5 s", "2.5 s"))
    text = results.read_text()
    assert "notes kept" in text and "2.5 s" in text and "1.5 s" not in text
    assert text.count(run_all.START_MARK) == 1


def test_private_current_compile_id_and_cache_entry_for():
    def f(x):
        return x / 2

    seen = []

    def hook(code, new):
        if code is f.__code__:
            seen.append((new, adapter.current_compile_id(), adapter.compile_mark(code)))
            return new.replace()  # a copy: the cache entry runs a different object than the hook saw
        return None

    handle = adapter.register_bytecode_hook(hook)
    try:
        torch.compile(f, backend="eager")(torch.randn(2))
        torch.compile(f, backend="eager")(torch.arange(2))  # a second entry, in front of the first
    finally:
        handle.remove()
    (transformed, compile_id, mark), (second, _, second_mark) = seen
    assert compile_id is not None and adapter.current_compile_id() is None
    assert mark.compile_id == compile_id and (mark.entries_before, second_mark.entries_before) == (0, 1)
    entries = adapter.dispatch_cache_entries(f.__code__)
    entry = adapter.cache_entry_for(f.__code__, transformed, mark)
    assert entry is entries[1] and entry.code is not transformed
    assert adapter.cache_entry_for(f.__code__, second, second_mark) is entries[0]
    if hasattr(entry, "compile_id"):  # torch 2.3+: the entry names its compilation
        assert entry.compile_id == compile_id
        assert adapter.cache_entry_for(f.__code__, transformed, compile_id) is entry
    assert adapter.cache_entry_for(f.__code__, transformed, None) is None
