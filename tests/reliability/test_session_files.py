"""``prepare_debug(dir)`` never deletes or overwrites files it did not write (issue 18, items 4 and 12)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).parent))
from session_support import depyf_warnings, run, value

pytestmark = pytest.mark.torch

COMPILE_TWO = """
    @torch.compile(backend="eager")
    def f(x):
        return x * 2 + 1
    @torch.compile(backend="eager")
    def g(x):
        return x - 3
    with depyf.prepare_debug(sys.argv[1]) as used:
        report("USED", used)
        report("RESULT", f(torch.ones(3)).tolist())
        if sys.argv[2] == "both":
            g(torch.ones(3))
"""

USER_FILES = {
    "index.md": "# My project\n",
    "index.json": '{"name": "my-project"}\n',
    "full_code_for_notes_0.py": "print('mine')\n",
    "notes.txt": "keep me\n",
    "bytecode/mine.marshal": "not depyf's\n",
    "bytecode/__transformed_code_0_for_x.original.dis.txt": "mine too\n",
}


def _plant(directory: Path) -> None:
    for name, text in USER_FILES.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)


def _unchanged(directory: Path) -> bool:
    return all((directory / name).read_text() == text for name, text in USER_FILES.items())


def test_user_files_with_depyf_names_are_kept_and_the_dump_goes_next_to_them(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    _plant(project)
    rc, out, err = run(tmp_path, COMPILE_TWO, str(project), "both")
    assert rc == 0, err
    assert _unchanged(project)
    used = Path(value(out, "USED"))
    assert used == project / "depyf_dump"
    assert json.loads((used / "index.json").read_text())["format"] == "depyf-dump"
    [warning] = depyf_warnings(err)
    assert f"{project} holds files depyf did not write" in warning and "index.md" in warning
    assert str(used) in warning
    # Running again in the same place replaces the dump in depyf_dump/ and still keeps the user's files.
    rc, out, err = run(tmp_path, COMPILE_TWO, str(project), "f")
    assert rc == 0, err
    assert _unchanged(project) and Path(value(out, "USED")) == used
    assert not list(used.glob("full_code_for_g_*.py"))


def test_rerun_replaces_only_the_files_its_earlier_index_listed_and_says_so(tmp_path):
    dump = tmp_path / "dump"
    rc, out, err = run(tmp_path, COMPILE_TWO, str(dump), "both")
    assert rc == 0, err
    assert Path(value(out, "USED")) == dump
    first = json.loads((dump / "index.json").read_text())["files"]
    assert "full_code_for_g_0.py" in first
    (dump / "my_notes.txt").write_text("keep me\n")
    rc, out, err = run(tmp_path, COMPILE_TWO, str(dump), "f")
    assert rc == 0, err
    assert f"depyf: replacing the earlier dump in {dump} ({len(first)} files its index.json listed)" in err
    assert (dump / "my_notes.txt").read_text() == "keep me\n"
    assert not (dump / "full_code_for_g_0.py").exists()          # g was not compiled this time
    assert (dump / "full_code_for_f_0.py").exists()
    assert not depyf_warnings(err)


def test_a_crafted_index_cannot_make_depyf_delete_other_files(tmp_path):
    dump = tmp_path / "dump"
    dump.mkdir()
    outside = tmp_path / "outside.py"
    outside.write_text("precious\n")
    (dump / "notes.txt").write_text("precious\n")
    (dump / "index.json").write_text(json.dumps({
        "format": "depyf-dump", "version": 1,
        "files": ["index.json", "../outside.py", str(outside), "notes.txt", "bytecode/../../outside.py"]}))
    rc, out, err = run(tmp_path, COMPILE_TWO, str(dump), "f")
    assert rc == 0, err
    assert outside.read_text() == "precious\n" and (dump / "notes.txt").read_text() == "precious\n"
    assert Path(value(out, "USED")) == dump


def test_an_empty_dump_dir_is_refused():
    torch_api = pytest.importorskip("depyf.torch")
    with pytest.raises(ValueError, match="dump_dir is empty"):
        torch_api.prepare_debug("")


def test_stale_pid_dirs_of_ended_processes_are_not_listed_and_their_dumps_are_replaced(tmp_path):
    dump = tmp_path / "dump"
    dead = 2 ** 22 + 12345  # above the default pid_max: no live process has it
    stale = dump / f"pid_{dead}"
    stale.mkdir(parents=True)
    (stale / "index.json").write_text(json.dumps({"format": "depyf-dump", "version": 1,
                                                  "files": ["index.md", "index.json"]}))
    (stale / "index.md").write_text("# depyf dump\n")
    kept = dump / f"pid_{dead + 1}"
    kept.mkdir()
    (kept / "results.csv").write_text("1,2\n")  # not listed by any index: stays
    rc, out, err = run(tmp_path, COMPILE_TWO, str(dump), "f")
    assert rc == 0, err
    index_md = (dump / "index.md").read_text()
    assert "Other processes" not in index_md and f"pid_{dead}" not in index_md
    assert not stale.exists()
    assert (kept / "results.csv").read_text() == "1,2\n"
