"""prepare_debug on each backend: the seed and tutorial examples, outputs unchanged, dump complete."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
from depyf.torch import adapter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tutorial_example  # noqa: E402
from _dump_checks import all_breaks, check_dump, stages  # noqa: E402

pytestmark = pytest.mark.torch

EXPECTED_STAGES = {
    "eager": {"captured_graph"},
    "aot_eager": {"captured_graph", "joint_graph", "forward", "backward"},
    "inductor": {"captured_graph", "pre_grad", "joint_graph", "forward", "backward", "post_grad",
                 "output_code"},
}


def toy(backend):
    @torch.compile(backend=backend)
    def toy_example(a, b):
        x = a / (torch.abs(a) + 1)
        if b.sum() < 0:
            b = b * -1
        return x * b

    return toy_example


def toy_inputs():
    gen = torch.Generator().manual_seed(0)
    return [(torch.randn(10, generator=gen), torch.randn(10, generator=gen)) for _ in range(6)]


@pytest.fixture(scope="module", params=["eager", "aot_eager", "inductor"])
def backend_run(request, tmp_path_factory):
    backend = request.param
    torch._dynamo.reset()
    reference_toy = [toy(backend)(a, b) for a, b in toy_inputs()]
    reference_tutorial = tutorial_example.run(tutorial_example.make_function(backend))
    torch._dynamo.reset()
    before = adapter.state_snapshot()
    dump = tmp_path_factory.mktemp(f"dump_{backend}")
    with depyf.prepare_debug(str(dump)) as used_dir:
        dumped_toy = [toy(backend)(a, b) for a, b in toy_inputs()]
        dumped_tutorial = tutorial_example.run(tutorial_example.make_function(backend))
    after = adapter.state_snapshot()
    torch._dynamo.reset()
    return {
        "backend": backend, "dir": Path(used_dir), "before": before, "after": after,
        "reference": (reference_toy, reference_tutorial), "dumped": (dumped_toy, dumped_tutorial),
    }


def test_outputs_and_gradients_bitwise_identical(backend_run):
    (ref_toy, ref_tut), (got_toy, got_tut) = backend_run["reference"], backend_run["dumped"]
    for ref, got in zip(ref_toy, got_toy, strict=True):
        assert torch.equal(ref, got)
    for ref, got in zip(ref_tut, got_tut, strict=True):
        for r, g in zip(ref, got, strict=True):
            assert torch.equal(r, g)


def test_every_hook_and_patch_removed(backend_run):
    assert backend_run["before"] == backend_run["after"]


def toy_resume_name(index):
    """The resume function Dynamo made for toy_example's graph break, by the name it gave it."""
    names = {fn["name"] for fn in index["functions"]
             if fn["kind"] == "resume" and fn["resumes"]["parent"] == "toy_example"}
    assert names
    name = min(names)
    resume = adapter.resume_of(types.SimpleNamespace(co_name=name, co_firstlineno=0))
    assert resume is not None and resume.parent == "toy_example", name
    return name


def test_dump_complete_and_cross_referenced(backend_run):
    index = check_dump(backend_run["dir"])
    assert backend_run["backend"] in index["backend"]
    assert EXPECTED_STAGES[backend_run["backend"]] <= stages(index)
    names = {fn["name"] for fn in index["functions"]}
    assert {"toy_example", "function"} <= names
    assert toy_resume_name(index)  # named torch_dynamo_resume_in_toy_example_at_<line> from 2.5
    breaks = all_breaks(index)
    assert any(b["source_line"] == "if b.sum() < 0:" for b in breaks)
    assert any("if x.mean() > 0.5:" == b["source_line"] for b in breaks)
    assert not index["warnings"]


def test_tutorial_two_shapes_recompile_or_dynamic(backend_run):
    index = check_dump(backend_run["dir"])
    function = next(fn for fn in index["functions"] if fn["name"] == "function")
    # The second shape either recompiles (with the failed guard named) or is covered by a
    # dynamic-shape entry; the dump shows which.
    recompiled = function["recompilations"]
    assert len(function["cache_entries"]) >= 2
    assert recompiled and any("size mismatch" in r["reason"] or "x" in r["reason"] for r in recompiled)


def test_full_code_has_guards_transformed_code_resume_and_dispatch(backend_run):
    index = check_dump(backend_run["dir"])
    toy_fn = next(fn for fn in index["functions"] if fn["name"] == "toy_example")
    text = (backend_run["dir"] / toy_fn["full_code_file"]).read_text()
    assert "def toy_example(a, b):" in text                       # original source
    assert "check_tensor(L['a'], Tensor" in text                   # tensor guard spelled out
    assert "torch.float32" in text and "size=[10]" in text and "stride=[1]" in text
    assert "# x = a / (torch.abs(a) + 1)" in text                  # the user line behind the guard
    assert f"resume function {toy_resume_name(index)}" in text
    assert "if __guard_0_for_toy_example(L, G):" in text
    assert "return __transformed_code_0_for_toy_example(a, b)" in text
    assert text.rstrip().endswith("return toy_example(a, b)")


def test_transformed_files_say_what_runs(backend_run):
    index = check_dump(backend_run["dir"])
    for fn in index["functions"]:
        for entry in fn["cache_entries"]:
            text = (backend_run["dir"] / entry["transformed_code_file"]).read_text()
            if entry["decompiled"]:
                assert "it is the code that runs" in text
                assert entry["fallback_reason"] is None
            else:
                assert "Dynamo's own bytecode runs" in text
                assert entry["fallback_reason"]


def test_index_md_links_everything(backend_run):
    index = check_dump(backend_run["dir"])
    md = (backend_run["dir"] / "index.md").read_text()
    for name in index["files"]:
        assert f"({name})" in md
    assert "graph break at" in md


def test_aot_eager_graph_files_marked_for_reading_when_the_graph_is_interpreted(backend_run):
    # aot_eager's boxed_nop ran graphs through torch.fx.Interpreter up to torch 2.9: the files of
    # forward/backward graphs cannot be what runs there, and index.json must say so.
    if backend_run["backend"] != "aot_eager":
        pytest.skip("aot_eager only")
    from torch._dynamo.backends.debugging import boxed_nop

    interpreted = adapter.graph_runs_interpreted(boxed_nop(torch.fx.symbolic_trace(lambda x: x + 1), []))
    index = check_dump(backend_run["dir"])
    aot_files = [
        (g, f["file"]) for g in index["graphs"] for f in g["files"] if f["stage"] in ("forward", "backward")
    ]
    assert aot_files
    for graph, name in aot_files:
        if interpreted:
            assert name not in graph["linked_files"]
            assert "torch.fx.Interpreter" in graph["not_linked"][name]
        else:
            assert name in graph["linked_files"]


def test_graph_runs_interpreted_tells_interpreted_graphs_from_graph_code():
    gm = torch.fx.symbolic_trace(lambda x: x + 1)

    def interpreted(args):
        return torch.fx.Interpreter(gm).boxed_run(args)

    assert adapter.graph_runs_interpreted(interpreted)
    # torch 2.2 hands aot_eager's backward back inside torch._dynamo.disable
    assert adapter.graph_runs_interpreted(torch._dynamo.disable(interpreted))
    assert not adapter.graph_runs_interpreted(gm.forward)
    assert not adapter.graph_runs_interpreted(object())
