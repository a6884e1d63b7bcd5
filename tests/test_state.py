"""``depyf.state``: what prepare_debug, depyf.debug() and ``depyf run`` share (no torch needed)."""

from __future__ import annotations

import sys

from depyf import state


def test_the_latest_dump_dir_is_absolute_and_falls_back_to_the_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(state, "_last_dump_dir", None)
    assert state.last_dump_dir() is None
    (tmp_path / state.DEFAULT_DUMP_DIR).mkdir()
    assert state.last_dump_dir() == str(tmp_path / state.DEFAULT_DUMP_DIR)
    state.record_dump_dir("elsewhere")
    assert state.last_dump_dir() == str(tmp_path / "elsewhere")
    state.forget_dump_dir()
    assert state.last_dump_dir() == str(tmp_path / state.DEFAULT_DUMP_DIR)


def test_a_run_recording_holds_only_inside_its_block_and_nests():
    assert state.run_recording() is None
    outer_notes: list[str] = []
    with state.recording_run("/outer", outer_notes) as outer:
        assert state.run_recording() is outer and outer.dump_dir == "/outer" and outer.notes is outer_notes
        with state.recording_run("/inner", []) as inner:
            assert state.run_recording() is inner
        assert state.run_recording() is outer
    assert state.run_recording() is None


def test_the_state_module_imports_no_torch():
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", "import sys, depyf.state; assert 'torch' not in sys.modules"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
