"""Issue 18, item 11: what a user sees when depyf cannot do what they asked: one line, a known status.

Every case runs the real command; the whole of stderr must be the one line shown (no traceback),
with the exit status docs/cli.md gives: 2 for a target that cannot be used, 1 for a dump that
cannot be read.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers_reliability import TOY_DUMP, run_depyf, stderr_lines

MODULES = {
    "boom.py": 'raise RuntimeError("no GPU found")\n\ndef f():\n    pass\n',
    "broken.py": "def f(:\n    pass\n",
    "quits.py": "import sys\nsys.exit(7)\n",
    "inventive.py": (
        "class Anything:\n    def __getattr__(self, name):\n        return Anything()\n\n\n"
        "thing = Anything()\n"
    ),
    "recursive.py": (
        "class Deep:\n    def __getattr__(self, name):\n        return getattr(self, name + '_')\n\n\n"
        "thing = Deep()\n"
    ),
}

DECOMPILE_CASES = {
    "boom:f": "cannot import module 'boom': importing it raised RuntimeError: no GPU found",
    "broken:f": "cannot import module 'broken': syntax error at {dir}/broken.py:1: invalid syntax",
    "quits:f": "cannot import module 'quits': it called sys.exit(7) while being imported",
    ".mod:f": (
        ".mod:f: a relative module name cannot be imported here; "
        "give the full name (package.module:qualname)"
    ),
    "inventive:thing.x": (
        "inventive:thing.x: cannot decompile an object of type 'Anything': more than 100 "
        "__wrapped__ objects deep (does its __getattr__ invent attributes?)"
    ),
    "recursive:thing.attr": (
        "recursive:thing.attr: looking up 'attr' raised RecursionError: maximum recursion depth exceeded"
    ),
}


@pytest.mark.parametrize("target", list(DECOMPILE_CASES))
def test_decompile_target_that_cannot_be_used(tmp_path, target):
    for name, text in MODULES.items():
        (tmp_path / name).write_text(text)
    done = run_depyf("decompile", target, cwd=tmp_path, timeout=60)
    assert (done.returncode, stderr_lines(done)) == (
        2, [f"depyf decompile: {DECOMPILE_CASES[target].format(dir=tmp_path)}"])
    assert done.stdout == ""


def _functions_list(index):
    index["functions"] = [1]


def _version_list(index):
    index["version"] = [1]


def _cache_entries_number(index):
    index["functions"][0]["cache_entries"] = 5


def _nul_in_file_name(index):
    index["files"].append("a\x00b.py")


def _unavailable_markup(index):
    index["unavailable"] = [{"feature": ["<img src=x onerror=alert(1)>"], "reason": "r"}]


REPORT_CASES = {
    "functions: [1]": (
        _functions_list,
        "not a valid depyf dump: functions[0] must be an object, not a number (1)",
    ),
    "version: [1]": (_version_list, "not a valid depyf dump: version must be an integer, not a list ([1])"),
    "cache_entries: 5": (
        _cache_entries_number,
        "not a valid depyf dump: functions[0].cache_entries must be a list, not a number (5)",
    ),
    "NUL in a file name": (
        _nul_in_file_name,
        "not a valid depyf dump: files[16] is not a usable file name: 'a\\x00b.py'",
    ),
    "unavailable feature a list": (
        _unavailable_markup,
        "not a valid depyf dump: unavailable[0].feature must be "
        "a string, not a list (['<img src=x onerror=alert(1)>'])",
    ),
    "nested 100k deep": (None, "cannot be read as JSON (nested too deeply)"),
}


@pytest.mark.parametrize("case", list(REPORT_CASES))
def test_report_on_a_malformed_index(tmp_path, case):
    dump = tmp_path / "dump"
    shutil.copytree(TOY_DUMP, dump)
    mutate, message = REPORT_CASES[case]
    if mutate is None:
        (dump / "index.json").write_text("[" * 100_000 + "]" * 100_000)
    else:
        index = json.loads((dump / "index.json").read_text())
        mutate(index)
        (dump / "index.json").write_text(json.dumps(index))
    done = run_depyf("report", str(dump), cwd=tmp_path, timeout=60)
    assert (done.returncode, stderr_lines(done)) == (1, [f"depyf report: {dump / 'index.json'}: {message}"])
    assert not (dump / "index.html").exists()


def test_report_to_a_place_that_cannot_be_written(tmp_path):
    done = run_depyf("report", str(TOY_DUMP), "-o", "/proc/report.html", cwd=tmp_path, timeout=60)
    assert (done.returncode, stderr_lines(done)) == (
        1, ["depyf report: cannot write the report: No such file or directory (/proc/report.html)"])


def test_on_compile_refuses_none():
    pytest.importorskip("torch")
    import depyf

    with pytest.raises(
        TypeError, match=r"^on_compile\(\) needs a callable taking a CompileEvent, not NoneType$"
    ):
        depyf.on_compile(None)


def test_documented_exit_statuses():
    """docs/cli.md names the status of each kind of failure tested here."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    assert "| 1 | something failed" in text and "a dump that cannot be read" in text
    assert "| 2 | bad usage" in text and "a module that fails to import" in text
