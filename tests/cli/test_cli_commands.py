"""`depyf --help`, `decompile`, `report` and `coverage` through real subprocesses."""

from __future__ import annotations

import json
import marshal
import os
import py_compile
import re
import shutil
import sys
from pathlib import Path

import pytest
from helpers_cli import REPO, depyf_cli

FIXTURE = REPO / "tests" / "report" / "fixtures" / "toy_dump"


# ---- help ------------------------------------------------------------------------------------------

def test_help_lists_every_command_with_examples():
    done = depyf_cli("--help")
    assert done.returncode == 0
    for command in ("run", "decompile", "report", "coverage"):
        assert re.search(rf"^\s+{command}\b", done.stdout, re.M), command
    assert "examples:" in done.stdout and "depyf run train.py" in done.stdout


@pytest.mark.parametrize("command", ["run", "decompile", "report", "coverage"])
def test_every_command_has_help_with_examples(command):
    done = depyf_cli(command, "--help")
    assert done.returncode == 0
    assert f"usage: depyf {command}" in done.stdout
    assert re.search(r"^examples?:", done.stdout, re.M)


def test_no_command_prints_usage_and_fails():
    done = depyf_cli()
    assert done.returncode == 2
    assert "usage: depyf" in done.stderr


def test_version():
    done = depyf_cli("--version")
    assert done.returncode == 0 and re.fullmatch(r"depyf \d+\.\d+\.\d+\n", done.stdout)


# ---- decompile: errors -----------------------------------------------------------------------------

def fake_pyc(path: Path, magic_number: int) -> Path:
    path.write_bytes(
        magic_number.to_bytes(2, "little")
        + b"\r\n"
        + bytes(12)
        + marshal.dumps(compile("x = 1", "m", "exec"))
    )
    return path


@pytest.mark.parametrize("magic, version", [(3439, "3.10"), (3531, "3.12"), (3413, "3.8"), (3571, "3.13")])
def test_pyc_of_another_python_names_its_version(tmp_path, magic, version):
    pyc = fake_pyc(tmp_path / "mod.cpython-xx.pyc", magic)
    done = depyf_cli("decompile", str(pyc))
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"{pyc}: written by Python {version} (magic number {magic}), but this is Python 3." in done.stderr
    assert f"python{version} -m depyf decompile" in done.stderr


def test_file_that_is_not_a_pyc(tmp_path):
    bad = tmp_path / "notes.pyc"
    bad.write_text("hello, this is text")
    done = depyf_cli("decompile", str(bad))
    assert done.returncode == 2
    assert "notes.pyc: not a .pyc file" in done.stderr


def test_missing_py_file(tmp_path):
    done = depyf_cli("decompile", str(tmp_path / "nope.py"))
    assert done.returncode == 2 and "nope.py: no such file" in done.stderr


def test_py_file_with_a_syntax_error(tmp_path):
    src = tmp_path / "broken.py"
    src.write_text("def f(:\n")
    done = depyf_cli("decompile", str(src))
    assert done.returncode == 2 and "broken.py: does not compile" in done.stderr


def test_target_of_unknown_form():
    done = depyf_cli("decompile", "just_a_name")
    assert done.returncode == 2
    assert "TARGET must be module:qualname, a .py file or a .pyc file" in done.stderr


def test_unknown_module_and_attribute():
    done = depyf_cli("decompile", "no_such_module_xyz:f")
    assert done.returncode == 2 and "cannot import module 'no_such_module_xyz'" in done.stderr
    done = depyf_cli("decompile", "json:no_such_function")
    assert done.returncode == 2 and "has no attribute 'no_such_function'" in done.stderr


def test_object_without_bytecode_is_named():
    done = depyf_cli("decompile", "math:sqrt")
    assert done.returncode == 2
    assert "cannot decompile an object of type 'builtin_function_or_method'" in done.stderr


def test_py_file_is_compiled_never_run(tmp_path):
    marker = tmp_path / "ran"
    src = tmp_path / "side_effect.py"
    src.write_text(f"open({str(marker)!r}, 'w').close()\n\ndef f(x):\n    return x + 1\n")
    depyf_cli("decompile", str(src))
    assert not marker.exists()


def test_py_file_lists_functions_and_methods_in_source_order(tmp_path):
    src = tmp_path / "two.py"
    src.write_text("def first(a):\n    return a\n\nclass K:\n    def method(self):\n        return 2\n")
    done = depyf_cli("decompile", str(src))
    assert done.returncode == 0, done.stderr
    assert f"# ---- {src}:first" in done.stdout and f"# ---- {src}:K.method" in done.stdout
    assert done.stdout.index(":first") < done.stdout.index(":K.method")


# ---- decompile: success ----------------------------------------------------------------------------

def test_decompile_module_function_prints_source():
    done = depyf_cli("decompile", "json:dumps")
    assert done.returncode == 0, done.stderr
    compile(done.stdout, "out", "exec")
    assert done.stdout.startswith("def dumps(obj")


def test_decompile_py_file_with_verify(tmp_path):
    src = tmp_path / "funcs.py"
    src.write_text(
        "def add(a, b=2):\n    return a + b\n\ndef sign(x):\n    if x < 0:\n        return -1\n    return 1\n"
    )
    done = depyf_cli("decompile", "--verify", str(src))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("# verified:") == 2
    namespace: dict = {}
    exec(compile(done.stdout, "out", "exec"), namespace)
    assert namespace["add"](1, 2) == 3 and namespace["sign"](-5) == -1


def test_decompile_pyc_of_this_python(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import os\n\ndef f(p):\n    return os.path.join(p, 'x')\n")
    pyc = Path(py_compile.compile(str(src), cfile=str(tmp_path / "m.pyc")))
    done = depyf_cli("decompile", str(pyc))
    assert done.returncode == 0, done.stderr
    namespace: dict = {}
    exec(compile(done.stdout, "out", "exec"), namespace)
    assert namespace["f"]("a") == "a/x"


def test_output_cut_short_by_the_reader_is_not_an_error():
    import subprocess

    env_cmd = f"{sys.executable} -m depyf decompile json.decoder: | head -n 2"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", env_cmd], cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.returncode == 0, done.stderr
    assert "BrokenPipeError" not in done.stderr and len(done.stdout.splitlines()) == 2


# ---- report ------------------------------------------------------------------------------------------

def test_report_from_an_existing_dump(tmp_path):
    dump_dir = tmp_path / "dump"
    shutil.copytree(FIXTURE, dump_dir)
    done = depyf_cli("report", str(dump_dir))
    assert done.returncode == 0, done.stderr
    page = (dump_dir / "index.html").read_text()
    data = re.search(r'id="depyf-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(data)["index"] == json.loads((FIXTURE / "index.json").read_text())
    for line in (
        "functions compiled : 2 (1 user, 1 resume)",
        "graphs             : 4",
        "graph breaks       : 1",
        "recompilations     : 2",
        f"report             : {dump_dir / 'index.html'}",
    ):
        assert line in done.stderr
    assert done.stdout == ""


def test_report_to_another_place(tmp_path):
    done = depyf_cli("report", str(FIXTURE), "-o", str(tmp_path / "r.html"), "-q")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").is_file()
    assert done.stderr.strip() == f"depyf: report: {tmp_path / 'r.html'}"


def test_report_for_each_process_of_a_shared_dump(tmp_path):
    for sub in ("rank_0", "rank_1"):
        shutil.copytree(FIXTURE, tmp_path / "dump" / sub)
    done = depyf_cli("report", str(tmp_path / "dump"), "-q")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"depyf: report: {tmp_path / 'dump' / sub / 'index.html'}"
                                        for sub in ("rank_0", "rank_1")]


def test_report_of_a_missing_directory(tmp_path):
    done = depyf_cli("report", str(tmp_path / "nope"))
    assert done.returncode == 2 and "nope: no such directory" in done.stderr


def test_report_of_a_directory_that_is_not_a_dump(tmp_path):
    done = depyf_cli("report", str(tmp_path))
    assert done.returncode == 1 and "index.json missing" in done.stderr


# ---- coverage ----------------------------------------------------------------------------------------

def test_coverage_prints_the_decompiler_report():
    done = depyf_cli("coverage")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"depyf decompiler opcode coverage on CPython {sys.version.split()[0]}")
    assert re.search(r"^LOAD_FAST +\d+ +\w+ +yes$", done.stdout, re.M)
