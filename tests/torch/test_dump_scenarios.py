"""prepare_debug on the situations the issue lists: graph breaks, recompilation, dynamic shapes,
modules, methods, nested graph breaks and a training step."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
from depyf.torch import adapter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dump_checks import all_breaks, check_dump, stages  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def dump(tmp_path, run):
    with depyf.prepare_debug(str(tmp_path / "dump")) as d:
        result = run()
    return result, check_dump(d), Path(d)


def fn_named(index, name):
    return next(fn for fn in index["functions"] if fn["name"] == name)


def test_graph_breaks_print_data_dependent_and_unsupported_call(tmp_path):
    def helper(x):
        # Tensor.tolist() on a float tensor is not traceable: graph break
        return len(x.tolist())

    @torch.compile(backend="eager")
    def f(x):
        y = x.sin()
        print("side effect")
        if y.sum() > 0:
            y = y + 1
        z = helper(y)
        return y * 2, z

    x = torch.ones(3)
    (out, z), index, _ = dump(tmp_path, lambda: f(x))
    assert torch.equal(out, (x.sin() + 1) * 2) and z == 3
    lines = {b["source_line"] for b in all_breaks(index)}
    assert 'print("side effect")' in lines
    assert "if y.sum() > 0:" in lines
    assert "return len(x.tolist())" in lines
    reasons = " ".join(b["reason"] for b in all_breaks(index))
    # Without graph-break records in the trace (torch 2.5 and older) the reason is Dynamo's compile
    # reason, which names the data-dependent branch by the instruction handler (generic_jump).
    branch = "data-dependent" if adapter.dynamo_traces_graph_breaks() else "generic_jump"
    assert "print" in reasons and branch in reasons.lower() and "tolist" in reasons
    resume_names = [fn["name"] for fn in index["functions"] if fn["kind"] == "resume"]
    assert len(resume_names) >= 2
    assert all(fn["full_code_file"] == "full_code_for_f_0.py" for fn in index["functions"]
               if fn["kind"] == "resume" and fn["resumes"]["parent"] == "f")


def test_recompilation_from_new_dtype_and_new_shape(tmp_path):
    @torch.compile(backend="eager", dynamic=False)
    def f(x):
        return x * 2 + 1

    def run():
        return [f(torch.ones(4)), f(torch.ones(4, dtype=torch.float64)), f(torch.ones(6))]

    outs, index, d = dump(tmp_path, run)
    assert [o.dtype for o in outs] == [torch.float32, torch.float64, torch.float32]
    info = fn_named(index, "f")
    assert len(info["cache_entries"]) == 3
    reasons = " ".join(r["reason"] for r in info["recompilations"])
    assert "dtype mismatch" in reasons
    assert "size mismatch" in reasons
    assert all(r["cache_entry"] is not None for r in info["recompilations"])
    full = (d / info["full_code_file"]).read_text()
    assert full.count("if __guard_") == 3
    assert "torch.float64" in full


def test_dynamic_true_shows_symbolic_sizes(tmp_path):
    @torch.compile(backend="aot_eager", dynamic=True)
    def f(x):
        return x.sum(0) * x.shape[0]

    out, index, d = dump(tmp_path, lambda: f(torch.ones(5, 3)))
    assert torch.equal(out, torch.ones(5, 3).sum(0) * 5)
    graph = index["graphs"][0]
    captured = next(item["file"] for item in graph["files"] if item["stage"] == "captured_graph")
    text = (d / captured).read_text()
    assert "Sym(s" in text or "s77" in text or "s0" in text


def test_module_forward_and_compiled_method(tmp_path):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 2)

        def forward(self, x):
            return self.linear(x).relu()

        def score(self, x):
            return self.forward(x).sum()

    torch.manual_seed(0)
    net = Net()
    x = torch.randn(3, 4)
    expected = net(x)
    compiled = torch.compile(net, backend="eager")
    method = torch.compile(net.score, backend="eager")

    def run():
        return compiled(x), method(x)

    (out, score), index, _ = dump(tmp_path, run)
    assert torch.equal(out, expected) and torch.equal(score, expected.sum())
    names = {fn["name"] for fn in index["functions"]}
    assert {"forward", "score"} <= names
    assert any(
        "L['self']" in g for fn in index["functions"] for e in fn["cache_entries"] for g in e["guards"]
    )


@pytest.mark.skipif(
    not hasattr(torch._dynamo.config, "nested_graph_breaks"),
    reason="this torch has no nested graph breaks (torch._dynamo.config.nested_graph_breaks, 2.9+)",
)
def test_nested_graph_break_resume_functions_shown(tmp_path):
    def inner(x):
        x = x + 1
        torch._dynamo.graph_break()
        return x * 2

    @torch.compile(backend="eager")
    def outer(x):
        return inner(x.sin()).cos()

    x = torch.randn(4)
    with torch._dynamo.config.patch(nested_graph_breaks=True):
        out, index, d = dump(tmp_path, lambda: outer(x))
    assert torch.equal(out, ((x.sin() + 1) * 2).cos())
    full = (d / fn_named(index, "outer")["full_code_file"]).read_text()
    assert "resume function torch_dynamo_resume_in_inner_at_" in full
    used = {r for fn in index["functions"] for e in fn["cache_entries"] for r in e["resume_functions"]}
    assert any(r.startswith("torch_dynamo_resume_in_inner_at_") for r in used)


def test_training_step_with_backward_matches_plain_compile(tmp_path):
    def make():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
        return model, torch.optim.SGD(model.parameters(), lr=0.1)

    def train(model, opt, compiled):
        torch.manual_seed(1)
        losses = []
        for _ in range(2):
            x, y = torch.randn(4, 8), torch.randn(4, 1)
            loss = torch.nn.functional.mse_loss(compiled(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses, [p.detach().clone() for p in model.parameters()]

    model, opt = make()
    reference = train(model, opt, torch.compile(model, backend="aot_eager"))
    torch._dynamo.reset()
    model, opt = make()
    compiled = torch.compile(model, backend="aot_eager")
    got, index, _ = dump(tmp_path, lambda: train(model, opt, compiled))
    for a, b in zip(reference[0] + reference[1], got[0] + got[1], strict=True):
        assert torch.equal(a, b)
    assert {"captured_graph", "joint_graph", "forward", "backward"} <= stages(index)


def test_log_bytecode_writes_listings_and_loadable_code(tmp_path):
    import marshal

    @torch.compile(backend="eager")
    def f(x):
        return x + 1

    with depyf.prepare_debug(str(tmp_path / "dump"), log_bytecode=True) as d:
        f(torch.ones(2))
    files = sorted(p.name for p in (Path(d) / "bytecode").iterdir())
    assert "__transformed_code_0_for_f.original.dis.txt" in files
    assert "__transformed_code_0_for_f.dynamo.dis.txt" in files
    code = marshal.loads((Path(d) / "bytecode" / "__transformed_code_0_for_f.dynamo.marshal").read_bytes())
    assert code.co_name == "f"
    index = json.loads((Path(d) / "index.json").read_text())
    assert "bytecode/__transformed_code_0_for_f.original.marshal" in index["files"]


def test_function_compiled_before_prepare_debug_is_still_shown(tmp_path):
    @torch.compile(backend="eager")
    def f(x):
        return x * 3

    f(torch.ones(2))
    _, index, d = dump(tmp_path, lambda: f(torch.ones(2, 2)))
    info = fn_named(index, "f")
    assert len(info["cache_entries"]) == 2
    assert any(e["fallback_reason"] and "before prepare_debug" in e["fallback_reason"]
               for e in info["cache_entries"])


def test_internal_failures_become_warnings_and_the_program_still_works(tmp_path, monkeypatch):
    from depyf.torch import index as index_module
    from depyf.torch import session as session_module
    from depyf.torch.records import DepyfWarning

    def broken_transform(*args, **kwargs):
        raise RuntimeError("simulated depyf bug")

    def broken_index(*args, **kwargs):
        raise RuntimeError("simulated index bug")

    monkeypatch.setattr(session_module, "transform", broken_transform)
    monkeypatch.setattr(index_module, "write_index", broken_index)

    @torch.compile(backend="eager")
    def f(x):
        return x.sin() + 1

    x = torch.randn(3)
    with pytest.warns(DepyfWarning) as caught:
        with depyf.prepare_debug(str(tmp_path / "dump")):
            out = f(x)
    assert torch.equal(out, x.sin() + 1)
    messages = " ".join(str(w.message) for w in caught)
    assert "simulated depyf bug" in messages and "simulated index bug" in messages


def test_debugger_learns_the_dump_dir(tmp_path):
    from depyf import state

    @torch.compile(backend="eager")
    def f(x):
        return x + 1

    with depyf.prepare_debug(str(tmp_path / "dump")) as d:
        f(torch.ones(1))
    assert state.last_dump_dir() == d


def test_nested_prepare_debug_warns_and_dumps_once(tmp_path):
    from depyf.torch.records import DepyfWarning

    @torch.compile(backend="eager")
    def f(x):
        return x + 1

    with depyf.prepare_debug(str(tmp_path / "outer")) as outer:
        with pytest.warns(DepyfWarning, match="already active"):
            with depyf.prepare_debug(str(tmp_path / "inner")) as inner:
                f(torch.ones(1))
    assert inner == outer
    assert not (tmp_path / "inner").exists()
    check_dump(outer)
