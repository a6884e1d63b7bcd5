"""``link_graph_module``/``link_inductor_output``: code runs from the written file, results unchanged."""

from __future__ import annotations

import ast
import dis
import sys
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from depyf.torch.linking import LinkWarning, link_graph_module, link_inductor_output  # noqa: E402

pytestmark = pytest.mark.torch


def _capture(fn, *args, link_to: Path | None = None):
    """Compile ``fn`` with the eager backend; return the captured graph modules and the result."""
    from torch._dynamo.backends.debugging import eager

    graphs = []

    def backend(gm, example_inputs):
        compiled = eager(gm, example_inputs)
        graphs.append(gm)
        if link_to is not None:
            assert link_graph_module(gm, str(link_to / f"graph_{len(graphs) - 1}.py")) is None
        return compiled

    torch._dynamo.reset()
    try:
        result = torch.compile(fn, backend=backend)(*args)
    finally:
        torch._dynamo.reset()
    return graphs, result


def _forward_code(gm):
    return type(gm).__dict__["forward"].__code__


def toy(a, b):
    x = a / (torch.abs(a) + 1)
    return x * b


def test_linked_graph_runs_from_the_written_file(tmp_path: Path) -> None:
    a, b = torch.randn(10), torch.randn(10)
    graphs, result = _capture(toy, a, b, link_to=tmp_path)
    path = tmp_path / "graph_0.py"
    text = path.read_text()
    ast.parse(text)
    code = _forward_code(graphs[0])
    assert code.co_filename == str(path)
    lines = text.splitlines()
    assert "torch.abs" in lines[code.co_firstlineno] or "l_a_ = L_a_" in lines[code.co_firstlineno]
    assert torch.equal(result, toy(a, b))
    # The bound method a backend returned earlier runs the linked code too.
    assert torch.equal(graphs[0].forward(a, b)[0], toy(a, b))


def test_line_numbers_match_the_file(tmp_path: Path) -> None:
    seen = []

    def tracer(frame, event, arg):
        if frame.f_code.co_filename.endswith("graph_0.py"):
            seen.append(frame.f_lineno)
            return tracer
        return None

    a, b = torch.randn(10), torch.randn(10)
    graphs, _ = _capture(toy, a, b, link_to=tmp_path)
    sys.settrace(tracer)
    try:
        graphs[0](a, b)
    finally:
        sys.settrace(None)
    lines = (tmp_path / "graph_0.py").read_text().splitlines()
    executed = {lines[n - 1].strip() for n in seen if n > 0}
    assert any(line.startswith("abs_1") and "torch.abs(l_a_)" in line for line in executed), executed
    assert any(line.startswith("return") for line in executed), executed


def test_nested_graph_modules_are_linked(tmp_path: Path) -> None:
    def branchy(x):
        return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))

    x = torch.randn(4)
    graphs, result = _capture(branchy, x, link_to=tmp_path)
    path = str(tmp_path / "graph_0.py")
    children = dict(graphs[0].named_children())
    assert {"cond_true_0", "cond_false_0"} <= set(children)
    for child in children.values():
        assert _forward_code(child).co_filename == path
    assert torch.equal(result, x.sin() if x.sum() > 0 else x.cos())


def test_mismatching_source_is_not_linked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    graphs, _ = _capture(toy, torch.randn(10), torch.randn(10))
    gm = graphs[0]
    before = _forward_code(gm)
    wrong = "def forward(self, L_a_, L_b_):\n    return (L_a_,)\n"
    monkeypatch.setattr(gm, "print_readable", lambda **kwargs: "class GraphModule(torch.nn.Module):\n    "
                        + wrong.replace("\n    ", "\n        "))
    monkeypatch.setattr(type(gm), "code", property(lambda self: wrong))
    with pytest.warns(LinkWarning, match="reading only"):
        reason = link_graph_module(gm, str(tmp_path / "wrong.py"))
    assert reason is not None and "does not compile to the running code" in reason
    assert _forward_code(gm) is before


def test_link_never_raises(tmp_path: Path) -> None:
    with pytest.warns(LinkWarning):
        assert link_graph_module(object(), str(tmp_path / "x.py")) is not None
    import types

    with pytest.warns(LinkWarning, match="no source file"):
        assert link_inductor_output(types.ModuleType("m"), str(tmp_path / "y.py")) is not None


def test_inductor_module_functions_run_from_the_written_file(tmp_path: Path) -> None:
    """A module laid out like Inductor's output code (``Runner.call`` bound to ``call``)."""
    import importlib.util

    source = tmp_path / "cache" / "cabc.py"
    source.parent.mkdir()
    source.write_text(
        "import torch\n\n"
        "class Runner:\n"
        "    def call(self, args):\n"
        "        a, = args\n"
        "        args.clear()\n"
        "        return (torch.abs(a) + 1,)\n\n"
        "runner = Runner()\ncall = runner.call\n\n"
        "def get_args():\n    return [torch.ones(3)]\n"
    )
    spec = importlib.util.spec_from_file_location("cabc", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    call = module.call
    target = tmp_path / "dump" / "__compiled_fn_1.output_code.0.py"
    assert link_inductor_output(module, str(target)) is None
    assert target.read_text() == source.read_text()
    assert call.__func__.__code__.co_filename == str(target)
    assert module.get_args.__code__.co_filename == str(target)
    x = torch.randn(3)
    assert torch.equal(call([x])[0], torch.abs(x) + 1)


def test_inductor_output_compiled_under_a_future_import_links(tmp_path: Path) -> None:
    """torch 2.2's Inductor compiles its output code in a module that has
    ``from __future__ import annotations``, so the running code carries that flag: the written file
    is compiled with it too (else ``co_flags`` differs and the file is for reading only)."""
    import __future__

    source = tmp_path / "cache" / "cdef.py"
    source.parent.mkdir()
    source.write_text("def call(args):\n    a, = args\n    return (a * 3,)\n")
    module = types.ModuleType("cdef")
    module.__file__ = str(source)
    exec(compile(source.read_text(), str(source), "exec",  # the test's own module text
                 flags=__future__.annotations.compiler_flag, dont_inherit=True), module.__dict__)
    assert module.call.__code__.co_flags & __future__.annotations.compiler_flag
    target = tmp_path / "dump" / "__compiled_fn_2.output_code.0.py"
    assert link_inductor_output(module, str(target)) is None
    assert module.call.__code__.co_filename == str(target)
    assert module.call([torch.ones(2)])[0].tolist() == [3.0, 3.0]


def _fallback_example(a, n):
    try:
        # a generator expression is nested code on every CPython (3.12 inlines list comprehensions)
        values = list(v * 2 for v in range(n))
    except ValueError:
        values = []
    return a + sum(values), '"""quoted"""\\d'


def test_bytecode_listing_runs_the_same_bytecode_from_the_listing(tmp_path: Path) -> None:
    import pdb
    import types

    from depyf.torch.linking import link_bytecode_listing

    original = _fallback_example.__code__
    path = tmp_path / "__transformed_code_0_for_f.py"
    code = link_bytecode_listing(original, str(path), title="__transformed_code_0_for_f: not decompiled")
    assert code is not None
    assert code.co_code == original.co_code
    assert getattr(code, "co_exceptiontable", None) == getattr(original, "co_exceptiontable", None)
    assert code.co_filename == str(path)
    ast.parse(path.read_text())
    listing = path.read_text().splitlines()
    function = types.FunctionType(code, _fallback_example.__globals__)

    seen = []

    def tracer(frame, event, arg):
        if frame.f_code.co_filename == str(path):
            seen.append((frame.f_code.co_name, frame.f_lineno))
            return tracer
        return None

    sys.settrace(tracer)
    try:
        result = function(1.5, 4)
    finally:
        sys.settrace(None)
    assert result == _fallback_example(1.5, 4)
    # 3.10 reports the call event on the header line (co_firstlineno): instruction lines only.
    texts = [listing[line - 1].split() for name, line in seen if name == "_fallback_example" and line]
    executed = [text[1] for text in texts if text[0].isdigit()]
    first = "RESUME" if sys.version_info >= (3, 11) else "SETUP_FINALLY"  # 3.10: no RESUME
    assert executed[0] == first and "RETURN_VALUE" in executed
    assert any(name == "<genexpr>" for name, _ in seen)  # nested code is listed and linked too
    call = "CALL" if sys.version_info >= (3, 11) else "CALL_FUNCTION"
    call_line = next(i for i, text in enumerate(listing, 1) if text.split()[1:2] == [call])
    assert pdb.Pdb().checkline(str(path), call_line) == call_line  # pdb accepts the line
    for nested in [code] + [c for c in code.co_consts if isinstance(c, types.CodeType)]:
        for offset, line in dis.findlinestarts(nested):  # each instruction reports its own line
            assert int(listing[line - 1].split()[0]) == offset, (offset, listing[line - 1])


def test_bytecode_listing_line_table_spans_long_code_and_far_lines() -> None:
    """Spans longer than one table entry holds, and line jumps beyond one entry's delta."""
    from depyf.torch.linking import _line_table

    body = "\n".join(f"    x{i} = a + {i}" for i in range(200))
    namespace: dict = {}
    exec(f"def g(a):\n{body}\n    return a\n", namespace)  # fixed test source
    code = namespace["g"].__code__
    units = len(code.co_code) // 2
    spans = [(310, 200), (15, 1), (410, units - 201)]
    linked = code.replace(co_firstlineno=10, co_linetable=_line_table(10, spans))
    merged: list[tuple[int, int, int]] = []
    for start, end, line in linked.co_lines():
        if merged and merged[-1][2] == line and merged[-1][1] == start:
            merged[-1] = (merged[-1][0], end, line)
        else:
            merged.append((start, end, line))
    assert merged == [(0, 400, 310), (400, 402, 15), (402, 2 * units, 410)]



@pytest.mark.slow
@pytest.mark.parametrize("model_name", ["gpt2", "bert"])
def test_real_model_graphs_all_link_and_outputs_stay_equal(tmp_path: Path, model_name: str) -> None:
    """Every captured, forward and backward graph of a small GPT-2 / BERT links (bytecode verified)."""
    transformers = pytest.importorskip("transformers")
    from torch._dynamo.backends.common import aot_autograd
    from torch._dynamo.backends.debugging import boxed_nop

    reasons = []

    def linking(stage):
        def compile_and_link(gm, example_inputs):
            compiled = boxed_nop(gm, example_inputs)
            reasons.append(link_graph_module(gm, str(tmp_path / f"{stage}_{len(reasons)}.py")))
            return compiled
        return compile_and_link

    torch.manual_seed(0)
    if model_name == "gpt2":
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
            n_layer=2, n_head=2, n_embd=64, vocab_size=128, n_positions=32, bos_token_id=0, eos_token_id=0))
    else:
        model = transformers.BertModel(
            transformers.BertConfig(
                num_hidden_layers=2,
                num_attention_heads=2,
                hidden_size=64,
                intermediate_size=128,
                vocab_size=128,
            )
        )
    model.eval()
    tokens = torch.randint(0, 128, (2, 16))

    def first_output(out):
        return out.logits if hasattr(out, "logits") else out.last_hidden_state

    expected = first_output(model(tokens))
    expected.sum().backward()
    expected_grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    torch._dynamo.reset()
    try:
        compiled = torch.compile(model, backend=aot_autograd(fw_compiler=linking("forward"),
                                                             bw_compiler=linking("backward")))
        out = first_output(compiled(tokens))
        out.sum().backward()
    finally:
        torch._dynamo.reset()
    assert reasons and all(reason is None for reason in reasons), reasons
    assert torch.equal(out, expected)
    for name, param in model.named_parameters():
        if name in expected_grads:
            assert torch.equal(param.grad, expected_grads[name]), name
        else:  # unused in the output (BERT's pooler): AOTAutograd may give zeros where eager gives None
            assert param.grad is None or not param.grad.any(), name
