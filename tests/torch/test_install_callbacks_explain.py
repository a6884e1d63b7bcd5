"""install()/uninstall(), on_compile(cb) and explain.dump_src(fn)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
from depyf.torch import adapter  # noqa: E402

pytestmark = pytest.mark.torch
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_install_logs_decompiled_source_after_bytecode_log(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(textwrap.dedent("""
        import torch, depyf
        depyf.install()
        @torch.compile(backend="eager")
        def f(x):
            return x + 1
        f(torch.ones(2))
        depyf.uninstall()
        from depyf.torch import adapter
        print("HOOKS", adapter.bytecode_hook_count())
    """))
    env = dict(os.environ, TORCH_LOGS="+bytecode", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    log = proc.stderr
    modified = log.index("MODIFIED BYTECODE")
    ours = log.index("possible source code of the modified bytecode for f")
    assert ours > modified
    assert "HOOKS 0" in proc.stdout


def test_install_is_idempotent_and_uninstall_restores():
    before = adapter.bytecode_hook_count()
    depyf.install()
    depyf.install()
    assert adapter.bytecode_hook_count() == before + 1
    depyf.uninstall()
    depyf.uninstall()
    assert adapter.bytecode_hook_count() == before


def test_on_compile_event_has_code_source_guards_and_graphs():
    events = []
    before = adapter.state_snapshot()
    handle = depyf.on_compile(events.append)

    @torch.compile(backend="eager")
    def f(x):
        y = x.cos()
        print("break")
        return y + 1

    try:
        out = f(torch.ones(3))
    finally:
        handle.remove()
    assert adapter.state_snapshot() == before
    assert torch.equal(out, torch.ones(3).cos() + 1)
    names = [e.original_code.co_name for e in events]
    assert names[0] == "f" and adapter.resume_of(events[1].original_code).parent == "f"
    first = events[0]
    assert first.transformed_code.co_name == "f"
    assert first.graph_names and first.graph_names[0].startswith("__compiled_fn_")
    if adapter._release(adapter.torch_version()) >= (2, 3):
        assert first.compile_id == "0/0"
    else:  # torch 2.2's torch._dynamo.reset() does not restart the frame count
        assert re.fullmatch(r"\d+/0", first.compile_id)
    if not adapter.has("torch._logging._internal.trace_log"):
        pytest.skip(f"torch {adapter.torch_version()} has no structured trace: events carry no guards")
    assert any("check_tensor(L['x']" in g for g in first.guards)
    assert first.source is None or "def f(" in first.source


def test_on_compile_callback_errors_become_warnings():
    def broken(event):
        raise RuntimeError("framework bug")

    handle = depyf.on_compile(broken)

    @torch.compile(backend="eager")
    def f(x):
        return x * 2

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = f(torch.ones(2))
    finally:
        handle.remove()
    assert torch.equal(out, torch.full((2,), 2.0))
    assert any("framework bug" in str(w.message) for w in caught)


def test_dump_src_of_compiled_function():
    from depyf.explain import dump_src

    @torch.compile(backend="eager")
    def g(a, b):
        x = a.sin()
        if b.sum() < 0:
            b = -b
        return x * b

    with pytest.raises(ValueError, match="no compiled code"):
        dump_src(g)
    g(torch.ones(3), torch.ones(3))
    text = dump_src(g)
    ast.parse(text)
    assert "def g(a, b):" in text
    assert "def __guard_0_for_g(L, G" in text
    assert "if __guard_0_for_g(L, G):" in text
    assert re.search(r"resume function (torch_dynamo_)?resume_in_g", text)


def test_importing_depyf_installs_nothing():
    code = ("import sys, depyf; assert 'torch' not in sys.modules; import torch; "
            "from depyf.torch import adapter; import depyf.torch; "
            "s = adapter.state_snapshot(); "
            "assert s['bytecode_hooks'] == 0 and s['trace_handlers'] == []; print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert proc.stdout.strip() == "ok", proc.stderr


def test_unsupported_torch_gets_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(torch, "__version__", "2.1.2")
    adapter.check_supported.cache_clear()
    try:
        with pytest.raises(
            adapter.UnsupportedTorchError, match=r"supports torch 2\.2 and later; this is torch 2\.1\.2"
        ):
            with depyf.prepare_debug(str(tmp_path / "d")):
                pass
        assert not (tmp_path / "d").exists()
        with pytest.raises(adapter.UnsupportedTorchError):
            depyf.install()
    finally:
        monkeypatch.undo()
        adapter.check_supported.cache_clear()
