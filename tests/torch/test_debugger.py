"""Breakpoints in dumped files are hit, with live values, when compiled code runs.

Each test runs a small program in a child process with ``DEPYF_DEBUG_PAUSE=1`` and answers its pdb
prompts through stdin: the program compiles, pauses in ``depyf.debug()``, we read the dumped
files to pick lines, set breakpoints there, continue, and check what pdb prints.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).parent))
from test_debugger_support import (  # noqa: E402
    REPO,
    PdbSession,
    child_env,
    first_aot_graph_line,
    inductor_call_line,
    line_after,
)

pytestmark = pytest.mark.torch

# Graphs are linked by our own backends here, so these tests need only depyf.torch.linking and
# depyf.torch.debug; prepare_debug does the same linking for the standard backends.
LINKED_PROGRAM = textwrap.dedent('''
    import os, sys
    import torch
    from depyf import state
    from depyf.torch.debug import debug
    from depyf.torch.linking import link_graph_module, link_inductor_output
    from depyf.torch import adapter

    BACKEND = sys.argv[1]
    DUMP = os.path.abspath("dump")
    counter = [0]

    def linking(stage, compiler):
        def compile_and_link(gm, example_inputs):
            compiled = compiler(gm, example_inputs)
            name = f"__compiled_fn_{counter[0]}.{stage}.0.py"
            counter[0] += 1
            reason = link_graph_module(gm, os.path.join(DUMP, name))
            assert reason is None, reason
            return compiled
        return compile_and_link

    if BACKEND == "eager":
        from torch._dynamo.backends.debugging import eager
        backend = linking("captured_graph", eager)
    elif BACKEND == "aot_eager":
        from torch._dynamo.backends.common import aot_autograd
        from torch._dynamo.backends.debugging import boxed_nop
        backend = aot_autograd(fw_compiler=linking("forward", boxed_nop),
                               bw_compiler=linking("backward", boxed_nop))
    else:
        backend = "inductor"

    def f(a, b):
        x = a / (torch.abs(a) + 1)
        return (x * b).sum()

    compiled = torch.compile(f, backend=backend)
    a = torch.linspace(-1, 1, 10, requires_grad=BACKEND == "aot_eager")
    b = torch.arange(10.0)
    first = compiled(a, b)
    if a.requires_grad:
        first.backward()  # compiles the backward graph too
        a.grad = None
    if BACKEND == "inductor":
        for k, module in enumerate(adapter.inductor_loaded_modules()):
            reason = link_inductor_output(module, os.path.join(DUMP, f"__compiled_fn_{k}.output_code.0.py"))
            assert reason is None, reason
    state.record_dump_dir(DUMP)
    with debug():
        out = compiled(a, b)
        if a.requires_grad:
            out.backward()
    print("TRACE_AFTER", sys.gettrace())  # the pdb that debug() started ends with the block
    expected = f(a.detach(), b)
    print("SAME_AS_BEFORE", torch.equal(out, first))
    print("SAME_AS_EAGER", torch.equal(out, expected) if BACKEND != "inductor" else "n/a")
    if a.requires_grad:
        a2 = a.detach().clone().requires_grad_()
        f(a2, b).backward()
        print("SAME_GRAD", torch.equal(a.grad, a2.grad))
''')


def _start(tmp_path: Path, backend: str) -> PdbSession:
    (tmp_path / "program.py").write_text(LINKED_PROGRAM)
    session = PdbSession(["program.py", backend], cwd=tmp_path, env=child_env())
    pause = session.wait_prompt()
    assert pause is not None, session.transcript
    assert "depyf.debug(): compiled code runs from files in" in pause
    return session


def _break(session: PdbSession, path: Path, line: int) -> None:
    reply = session.send(f"b {path}:{line}")
    assert reply is not None and f"Breakpoint 1 at {path}:{line}" in reply, session.transcript


def _continue_to(session: PdbSession, path: Path, line: int) -> None:
    reply = session.send("c")
    assert reply is not None and f"{path}({line})" in reply, session.transcript


def _print(session: PdbSession, expr: str) -> str:
    reply = session.send(f"p {expr}")
    assert reply is not None, session.transcript
    return reply.removesuffix("(Pdb) ").strip()


def _assert_outputs_unchanged(rest: str, grads: bool) -> None:
    assert "SAME_AS_BEFORE True" in rest, rest
    assert "SAME_AS_EAGER False" not in rest, rest
    assert "TRACE_AFTER None" in rest, rest
    if grads:
        assert "SAME_GRAD True" in rest, rest


def test_breakpoint_in_eager_captured_graph(tmp_path: Path) -> None:
    session = _start(tmp_path, "eager")
    try:
        graph = tmp_path / "dump" / "__compiled_fn_0.captured_graph.0.py"
        line = line_after(graph, "l_b_ = L_b_")
        _break(session, graph, line)
        _continue_to(session, graph, line)
        assert _print(session, "l_a_.shape") == "torch.Size([10])"
        assert _print(session, "l_b_.tolist()") == str([float(i) for i in range(10)])
        _assert_outputs_unchanged(session.finish(), grads=False)
    finally:
        session.kill()


def _boxed_nop_interprets() -> bool:
    from torch._dynamo.backends.debugging import boxed_nop

    from depyf.torch import adapter

    return adapter.graph_runs_interpreted(boxed_nop(torch.fx.symbolic_trace(lambda x: x + 1), []))


AOT_EAGER_RUNS_GRAPH_CODE = pytest.mark.skipif(
    _boxed_nop_interprets(),
    reason="this torch's aot_eager runs graphs through torch.fx.Interpreter: no graph file code runs "
           "(the dump marks those files for reading only, tests/torch/test_dump_backends.py)")


@AOT_EAGER_RUNS_GRAPH_CODE
def test_breakpoints_in_aot_eager_forward_and_backward(tmp_path: Path) -> None:
    session = _start(tmp_path, "aot_eager")
    try:
        forward = tmp_path / "dump" / "__compiled_fn_0.forward.0.py"
        backward = tmp_path / "dump" / "__compiled_fn_1.backward.0.py"
        fw_line = first_aot_graph_line(forward)
        bw_line = first_aot_graph_line(backward)
        _break(session, forward, fw_line)
        reply = session.send(f"b {backward}:{bw_line}")
        assert reply is not None and "Breakpoint 2" in reply, session.transcript
        _continue_to(session, forward, fw_line)
        assert _print(session, "primals_2.tolist()") == str([float(i) for i in range(10)])
        assert _print(session, "primals_1.shape") == "torch.Size([10])"
        _continue_to(session, backward, bw_line)
        assert _print(session, "tangents_1.shape") == "torch.Size([])"
        assert _print(session, "tangents_1.item()") == "1.0"
        _assert_outputs_unchanged(session.finish(), grads=True)
    finally:
        session.kill()


@pytest.mark.slow
def test_breakpoint_in_inductor_output_code(tmp_path: Path) -> None:
    session = _start(tmp_path, "inductor")
    try:
        output = tmp_path / "dump" / "__compiled_fn_0.output_code.0.py"
        unpack = inductor_call_line(output)  # `arg0_1, arg1_1 = args`
        names = output.read_text().splitlines()[unpack - 1].split("=")[0].replace(" ", "").split(",")
        line = unpack + 1
        _break(session, output, line)
        _continue_to(session, output, line)
        assert _print(session, f"{names[1]}.tolist()") == str([float(i) for i in range(10)])
        assert _print(session, f"{names[0]}.shape") == "torch.Size([10])"
        _assert_outputs_unchanged(session.finish(), grads=False)
    finally:
        session.kill()


def test_breakpoints_set_from_python_m_pdb_are_hit(tmp_path: Path) -> None:
    """Under ``python -m pdb`` the pause reuses that pdb session (a new Pdb would ignore its breaks)."""
    (tmp_path / "program.py").write_text(LINKED_PROGRAM)
    session = PdbSession(["-m", "pdb", "program.py", "eager"], cwd=tmp_path, env=child_env())
    try:
        assert session.wait_prompt() is not None  # pdb stops before the first line
        pause = session.send("c")
        assert pause is not None and "depyf.debug(): compiled code runs from files in" in pause, (
            session.transcript
        )
        assert "program.py" in pause and "with debug():" not in pause.splitlines()[-1]
        graph = tmp_path / "dump" / "__compiled_fn_0.captured_graph.0.py"
        line = line_after(graph, "l_b_ = L_b_")
        _break(session, graph, line)
        _continue_to(session, graph, line)
        assert _print(session, "l_a_.shape") == "torch.Size([10])"
        reply = session.send("cl 1")
        assert reply is not None
        reply = session.send("c")
        assert reply is not None and "The program finished" in reply, session.transcript
        assert "SAME_AS_BEFORE True" in session.transcript
    finally:
        session.kill()


SEED = REPO / "examples" / "seed_example.py"


def _first_step_line(transformed: Path) -> int:
    """A line that runs early in a transformed-code file: decompiled source or a bytecode listing."""
    lines = transformed.read_text().splitlines()
    if any(line.startswith("__bytecode_listing__") for line in lines):
        return next(i for i, text in enumerate(lines, 1) if text.split()[1:2] == ["RESUME"]) + 1
    return line_after(transformed, "def ")


def _seed_session(tmp_path: Path) -> PdbSession:
    shutil.copy(SEED, tmp_path / "seed_example.py")
    session = PdbSession(["seed_example.py"], cwd=tmp_path, env=child_env())
    pause = session.wait_prompt()
    assert pause is not None, (
        "seed example did not reach depyf.debug()'s pause:\n" + session.transcript[-3000:]
    )
    return session


@pytest.mark.slow
def test_seed_example_breakpoint_in_transformed_code(tmp_path: Path) -> None:
    session = _seed_session(tmp_path)
    try:
        transformed = tmp_path / "depyf_debug_dir" / "__transformed_code_0_for_toy_example.py"
        line = _first_step_line(transformed)
        _break(session, transformed, line)
        _continue_to(session, transformed, line)
        assert _print(session, "a.shape") == "torch.Size([10])"
        assert _print(session, "b.shape") == "torch.Size([10])"
        session.send("cl 1")
        session.finish()
        assert session.proc.returncode == 0, session.transcript[-3000:]
    finally:
        session.kill()


@pytest.mark.slow
def test_seed_example_breakpoint_in_inductor_output(tmp_path: Path) -> None:
    session = _seed_session(tmp_path)
    try:
        dump = tmp_path / "depyf_debug_dir"
        outputs = sorted(p for p in dump.glob("__compiled_fn_*.py")
                         if "output_code" in p.name or "kernel" in p.name)
        assert outputs, sorted(p.name for p in dump.iterdir())
        output = outputs[0]
        unpack = inductor_call_line(output)
        names = output.read_text().splitlines()[unpack - 1].split("=")[0].replace(" ", "").split(",")
        _break(session, output, unpack + 1)
        _continue_to(session, output, unpack + 1)
        assert _print(session, f"{names[0]}.shape") == "torch.Size([10])"
        session.send("cl 1")
        session.finish()
        assert session.proc.returncode == 0, session.transcript[-3000:]
    finally:
        session.kill()


PREPARED_PROGRAM = textwrap.dedent('''
    import sys
    import torch
    import depyf

    def f(a, b):
        x = a / (torch.abs(a) + 1)
        if b.sum() < 0:          # graph break: the rest runs in a resume function
            b = b * -1
        return (x * b).sum()

    compiled = torch.compile(f, backend=sys.argv[1])
    a = torch.linspace(-1, 1, 10, requires_grad=True)
    b = torch.arange(10.0)
    with depyf.prepare_debug("mydump"):
        first = compiled(a, b)
        first.backward()
    first_grad, a.grad = a.grad, None
    with depyf.debug():
        out = compiled(a, b)
        out.backward()
    print("SAME_AS_BEFORE", torch.equal(out, first) and torch.equal(a.grad, first_grad))
''')


def _index(dump: Path) -> dict:
    import json

    return json.loads((dump / "index.json").read_text())


@pytest.mark.slow
@AOT_EAGER_RUNS_GRAPH_CODE
def test_prepare_debug_aot_eager_breakpoints_in_resume_function_and_graphs(tmp_path: Path) -> None:
    """Through prepare_debug: its own dump dir, the resume function's transformed code, forward, backward."""
    (tmp_path / "program.py").write_text(PREPARED_PROGRAM)
    session = PdbSession(["program.py", "aot_eager"], cwd=tmp_path, env=child_env())
    try:
        pause = session.wait_prompt()
        assert pause is not None, session.transcript
        dump = tmp_path / "mydump"
        assert f"compiled code runs from files in {dump}" in pause, pause
        index = _index(dump)
        graph = next(g for g in index["graphs"] if g["function"].startswith("torch_dynamo_resume_in_f"))
        files = {f["stage"]: dump / f["file"] for f in graph["files"]}
        resume = next(fn for fn in index["functions"] if fn["name"].startswith("torch_dynamo_resume_in_f"))
        entry = resume["cache_entries"][0]
        stops = []
        if entry["decompiled"]:
            transformed = dump / entry["transformed_code_file"]
            stops.append(
                (
                    transformed,
                    line_after(transformed, "def torch_dynamo_resume_in_f"),
                    [("x.shape", "torch.Size([10])"), ("b.tolist()", str([float(i) for i in range(10)]))],
                )
            )
        stops.append((files["forward"], first_aot_graph_line(files["forward"]),
                      [("primals_2.tolist()", str([float(i) for i in range(10)]))]))
        stops.append((files["backward"], first_aot_graph_line(files["backward"]),
                      [("tangents_1.item()", "1.0")]))
        for number, (path, line, _) in enumerate(stops, 1):
            reply = session.send(f"b {path}:{line}")
            assert reply is not None and f"Breakpoint {number} at {path}:{line}" in reply, session.transcript
        for path, line, checks in stops:
            _continue_to(session, path, line)
            for expr, expected in checks:
                assert _print(session, expr) == expected, session.transcript
        rest = session.finish()
        assert "SAME_AS_BEFORE True" in rest, session.transcript
        if not entry["decompiled"]:
            pytest.xfail("resume function not decompiled yet: " + str(entry.get("fallback_reason")))
    finally:
        session.kill()


LISTING_PROGRAM = textwrap.dedent('''
    import os
    import torch
    from depyf.torch import adapter
    from depyf import state
    from depyf.torch.debug import debug
    from depyf.torch.linking import link_bytecode_listing

    DUMP = os.path.abspath("dump")
    counts = {}

    def link_listing(code, new_code):
        n = counts[code.co_name] = counts.get(code.co_name, -1) + 1
        path = os.path.join(DUMP, f"__transformed_code_{n}_for_{code.co_name}.py")
        return link_bytecode_listing(new_code, path, title=f"__transformed_code_{n}_for_{code.co_name}")

    def toy_example(a, b):
        x = a / (torch.abs(a) + 1)
        if b.sum() < 0:
            b = b * -1
        return x * b

    compiled = torch.compile(toy_example, backend="eager")
    a, b = torch.linspace(-1, 1, 10), torch.arange(10.0)
    handle = adapter.register_bytecode_hook(link_listing)
    first = compiled(a, b)
    handle.remove()
    state.record_dump_dir(DUMP)
    with debug():
        out = compiled(a, b)
    print("SAME_AS_BEFORE", torch.equal(out, first))
''')


def test_breakpoint_in_transformed_code_listing(tmp_path: Path) -> None:
    """Transformed code that is not decompiled still runs from its dumped listing (same bytecode)."""
    (tmp_path / "program.py").write_text(LISTING_PROGRAM)
    session = PdbSession(["program.py"], cwd=tmp_path, env=child_env())
    try:
        assert session.wait_prompt() is not None, session.transcript
        listing = tmp_path / "dump" / "__transformed_code_0_for_toy_example.py"
        lines = listing.read_text().splitlines()
        # The graph call, `__compiled_fn_...(a, b)` (CPython 3.10: CALL_FUNCTION): torch 2.15's
        # profiler prologue has CALLs before it that run only under a profiler.
        call = ["CALL", "2"] if sys.version_info >= (3, 11) else ["CALL_FUNCTION", "2"]
        line = next(i for i, text in enumerate(lines, 1) if text.split()[1:3] == call)
        _break(session, listing, line)
        _continue_to(session, listing, line)
        assert _print(session, "a.tolist()") == _print(session, "torch.linspace(-1, 1, 10).tolist()")
        assert _print(session, "b.tolist()") == str([float(i) for i in range(10)])
        session.send("cl 1")
        assert "SAME_AS_BEFORE True" in session.finish(), session.transcript
    finally:
        session.kill()
