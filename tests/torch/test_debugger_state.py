"""``depyf.debug()``: nothing new compiles inside, every setting is restored, no hang without stdin;
and one test per private torch API it uses (in ``depyf/torch/adapter.py``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from depyf import state  # noqa: E402
from depyf.torch import adapter  # noqa: E402
from depyf.torch.debug import DebugWarning, debug  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_debugger_support import child_env  # noqa: E402

pytestmark = pytest.mark.torch


# torch 2.2 to 2.5 have no compile stance (``torch.compiler.set_stance``, 2.6): debug() installs Dynamo's
# compile callbacks as run-only mode instead, with one warning at entry, and the private pieces of its
# stance patch are missing.
HAS_STANCE = hasattr(torch.compiler, "set_stance") and hasattr(
    torch._dynamo.eval_frame, "_callback_from_stance"
)
needs_stance = pytest.mark.skipif(
    not HAS_STANCE,
    reason=f"torch {torch.__version__} has no compile stance "
    "(torch.compiler.set_stance, torch 2.6+): the test of the run-only path runs instead",
)


def _torch_state():
    eval_frame = torch._dynamo.eval_frame
    if not HAS_STANCE:
        setter = torch._C._dynamo.eval_frame.set_eval_frame
        callback = setter(None)
        setter(callback)
        return (sys.gettrace(), callback)
    stance = eval_frame._stance
    return (eval_frame._callback_from_stance, stance.stance, stance.skip_guard_eval_unsafe, stance.backend,
            sys.gettrace(), torch._C._dynamo.eval_frame.get_eval_frame_callback())


@pytest.fixture
def counting_compile():
    from torch._dynamo.backends.debugging import eager

    compiled = []

    def backend(gm, example_inputs):
        compiled.append(gm)
        return eager(gm, example_inputs)

    def scale(x):
        return x * 2 + 1

    torch._dynamo.reset()
    yield torch.compile(scale, backend=backend), compiled
    torch._dynamo.reset()


def test_nothing_new_compiles_inside_and_a_warning_says_so(counting_compile, capsys) -> None:
    # torch 2.6+: the eager_on_recompile stance, one warning per function it runs uncompiled;
    # 2.2 to 2.5: Dynamo's compile callbacks installed as run-only mode, one warning at entry
    fn, compiled = counting_compile
    x = torch.randn(4)
    assert torch.equal(fn(x), x * 2 + 1)
    assert len(compiled) == 1
    eval_frame = torch._dynamo.eval_frame
    installers = {name: vars(eval_frame).get(name) for name in ("_maybe_set_eval_frame", "set_eval_frame")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with debug(pause=False):
            assert torch.equal(fn(x), x * 2 + 1)  # cached compiled code still runs
            y = torch.randn(3, 5, dtype=torch.float64)  # would need a recompilation
            assert torch.equal(fn(y), y * 2 + 1)
            assert torch.equal(fn(y), y * 2 + 1)
    assert len(compiled) == 1
    messages = [str(w.message) for w in caught if issubclass(w.category, DebugWarning)]
    expected = "scale would need a new compilation" if HAS_STANCE else "no compile stance"
    assert len(messages) == 1 and expected in messages[0], messages
    assert {name: vars(eval_frame).get(name) for name in installers} == installers
    fn(y)  # compiles normally again once the block is left: the code was not marked as skipped
    assert len(compiled) == 2


def test_every_setting_is_restored(counting_compile) -> None:
    before = _torch_state()
    with debug(pause=False):
        assert _torch_state() != before or not HAS_STANCE  # without a stance the setter is patched
    assert _torch_state() == before
    with pytest.raises(KeyError), debug(pause=False):
        raise KeyError("user error inside the block")
    assert _torch_state() == before


def test_guide_lists_dumped_code_files(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(state, "_last_dump_dir", None)
    for name in ("__transformed_code_0_for_f.py", "__compiled_fn_1.forward.0.py", "full_code_for_f_0.py",
                 "index.md", "notes.txt"):
        (tmp_path / name).write_text("")
    state.record_dump_dir(str(tmp_path))
    with debug(pause=False):
        pass
    err = capsys.readouterr().err
    for name in ("__transformed_code_0_for_f.py", "__compiled_fn_1.forward.0.py", "full_code_for_f_0.py"):
        assert str(tmp_path / name) in err
    assert "index.md" not in err and "notes.txt" not in err


def test_no_pause_and_no_hang_without_a_terminal(tmp_path: Path) -> None:
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent("""
        import torch, depyf
        f = torch.compile(lambda x: x + 1, backend="eager")
        f(torch.ones(2))
        with depyf.debug():
            print("RESULT", f(torch.ones(2)).tolist())
        with depyf.debug():  # the name still works after the submodule was imported
            print("RESULT", f(torch.ones(2)).tolist())
    """))
    env = child_env()
    env.pop("DEPYF_DEBUG_PAUSE")
    done = subprocess.run([sys.executable, str(program)], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "RESULT [2.0, 2.0]" in done.stdout
    assert "not pausing: stdin is not a terminal" in done.stderr


# --- one test per private API depyf.debug() uses ------------------------------------------------------


def test_adapter_compile_callbacks_run_only_keep_cache_hits_and_compile_nothing(counting_compile) -> None:
    fn, compiled = counting_compile
    x = torch.randn(4)
    fn(x)
    before = _torch_state()
    undo = adapter.patch_compile_callbacks_to_run_only()
    try:
        assert torch.equal(fn(x), x * 2 + 1)
        y = torch.randn(2, 3, dtype=torch.float64)
        assert torch.equal(fn(y), y * 2 + 1)
        assert len(compiled) == 1
    finally:
        undo()
    assert _torch_state() == before
    fn(y)
    assert len(compiled) == 2


@needs_stance
def test_adapter_callback_from_stance_patch_wraps_and_restores() -> None:
    original = torch._dynamo.eval_frame._callback_from_stance
    seen = []
    restore = adapter.dynamo_callback_from_stance_patch(
        lambda result, callback: seen.append(callback) or result
    )
    try:
        assert torch._dynamo.eval_frame._callback_from_stance(None) is None
        assert seen == [None]
    finally:
        restore()
    assert torch._dynamo.eval_frame._callback_from_stance is original


@needs_stance
def test_adapter_tag_frame_callback_with_backend_keeps_cache_hits(counting_compile) -> None:
    # The tag's attribute differs per release (torch 2.8: _torchdynamo_orig_callable).
    fn, compiled = counting_compile
    x = torch.randn(4)
    fn(x)
    misses = []

    def on_miss(frame, *args, **kwargs):
        misses.append(frame.f_code.co_name)
        return adapter.run_frame_uncompiled()

    def wrap(result, callback):
        if result is not False or callback in (False, None):
            return result
        adapter.tag_frame_callback_with_backend(on_miss, callback)
        return on_miss

    restore = adapter.dynamo_callback_from_stance_patch(wrap)
    try:
        with torch.compiler.set_stance("eager_on_recompile"):
            assert torch.equal(fn(x), x * 2 + 1)
            assert "scale" not in misses  # the cached compiled code ran
            fn(torch.randn(2, 3, dtype=torch.float64))
            assert "scale" in misses
    finally:
        restore()
    assert len(compiled) == 1


@needs_stance
def test_adapter_should_compile_frame() -> None:
    def with_tensor(t):
        return sys._getframe()

    def without_tensor(n):
        return sys._getframe()

    assert adapter.should_compile_frame(with_tensor(torch.ones(1)))
    assert not adapter.should_compile_frame(without_tensor(3))


@needs_stance
def test_adapter_run_frame_uncompiled() -> None:
    result = adapter.run_frame_uncompiled()
    assert result.apply_to_code is False
    assert result.frame_exec_strategy.cur_action == torch._dynamo.types.FrameAction.SKIP


@pytest.mark.slow
def test_adapter_inductor_loaded_modules() -> None:
    torch._dynamo.reset()
    before = {id(m) for m in adapter.inductor_loaded_modules()}
    torch.compile(lambda x: x.sin() + 1, backend="inductor")(torch.ones(3))
    new = [m for m in adapter.inductor_loaded_modules() if id(m) not in before]
    torch._dynamo.reset()
    assert any(callable(getattr(m, "call", None)) for m in new)


def test_adapter_names_what_is_missing() -> None:
    with pytest.raises(adapter.UnsupportedTorchError, match=r"torch\._dynamo\.eval_frame\._no_such_api"):
        adapter._debug_private("torch._dynamo.eval_frame", "_no_such_api")


def test_guide_separates_files_that_run_from_files_for_reading(tmp_path: Path, capsys, monkeypatch) -> None:
    import json

    monkeypatch.setattr(state, "_last_dump_dir", None)
    index = {
        "files": ["index.md", "full_code_for_f_0.py", "__transformed_code_0_for_f.py",
                  "__transformed_code_1_for_f.py", "__compiled_fn_1.forward.0.py",
                  "__compiled_fn_1.joint_graph.0.py"],
        "functions": [{"name": "f", "full_code_file": "full_code_for_f_0.py", "cache_entries": [
            {"transformed_code_file": "__transformed_code_0_for_f.py", "decompiled": True},
            {"transformed_code_file": "__transformed_code_1_for_f.py", "decompiled": False}]}],
        "graphs": [{"name": "__compiled_fn_1", "files": [
            {"stage": "joint_graph", "file": "__compiled_fn_1.joint_graph.0.py"},
            {"stage": "forward", "file": "__compiled_fn_1.forward.0.py"}],
            "linked_files": ["__compiled_fn_1.forward.0.py"]}],
    }
    (tmp_path / "index.json").write_text(json.dumps(index))
    state.record_dump_dir(str(tmp_path))
    with debug(pause=False):
        pass
    err = capsys.readouterr().err
    runs, _, reading = err.partition("For reading only")
    assert str(tmp_path / "__transformed_code_0_for_f.py") in runs
    assert str(tmp_path / "__compiled_fn_1.forward.0.py") in runs
    for name in ("__transformed_code_1_for_f.py", "__compiled_fn_1.joint_graph.0.py", "full_code_for_f_0.py"):
        assert str(tmp_path / name) in reading and str(tmp_path / name) not in runs


def test_adapter_register_bytecode_hook() -> None:
    seen = []
    handle = adapter.register_bytecode_hook(lambda code, new_code: seen.append(code.co_name))

    def hooked(x):
        return x + 1

    torch._dynamo.reset()
    try:
        torch.compile(hooked, backend="eager")(torch.ones(2))
    finally:
        handle.remove()
    torch.compile(lambda x: x - 1, backend="eager")(torch.ones(2))
    torch._dynamo.reset()
    assert seen == ["hooked"]


def test_debug_is_the_function_wherever_it_is_reached():
    import importlib

    import depyf
    import depyf.torch

    module = importlib.import_module("depyf.torch.debug")
    assert isinstance(module, types.ModuleType) and module.debug is debug
    assert depyf.debug is debug and depyf.torch.debug is debug
