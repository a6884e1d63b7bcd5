"""Issue 18, items 2 and 3: depyf never writes through a planted link and never reads without bounds.

A dump directory may hold anything: a symbolic link where index.html goes, a FIFO or a 300 MB file
listed in index.json, a .pyc whose header claims a 2**31-item tuple. Each test runs depyf as a
user does and checks what they care about: files outside the dump keep their contents, the
command ends (no hang), memory stays small, and the message says what was wrong.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers_reliability import REPO, TOY_DUMP, run_depyf, stderr_lines

from depyf.torch.files import DumpFiles

MB = 1024 * 1024


def measured_depyf(
    args: list[str], cwd: Path, address_space: int | None = None
) -> tuple[subprocess.CompletedProcess, int]:
    """Run ``depyf ARGS`` in a child Python; its result and its peak RSS in bytes."""
    # The peak of this program's own memory: /proc's VmHWM (in kB) is per address space, while
    # ru_maxrss also counts the pages of the test process the child was forked from (preexec_fn
    # forks), which holds torch when the whole suite runs.
    code = (
        "import resource, sys\nfrom depyf.cli import main\ntry:\n    rc = main(sys.argv[1:])\nfinally:\n"
        "    try:\n"
        "        peak = next(int(l.split()[1]) for l in open('/proc/self/status')\n"
        "                    if l.startswith('VmHWM:'))\n"
        "    except (OSError, StopIteration):\n"
        "        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "    print('MAXRSS', peak, file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )

    def limit():  # so a runaway allocation fails fast instead of swapping the machine
        if address_space:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    done = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)), preexec_fn=limit)
    lines = done.stderr.splitlines()
    rss = next((int(line.split()[1]) * 1024 for line in lines if line.startswith("MAXRSS")), -1)
    done.stderr = "\n".join(line for line in lines if not line.startswith("MAXRSS"))
    return done, rss


@pytest.fixture()
def dump(tmp_path) -> Path:
    target = tmp_path / "dump"
    shutil.copytree(TOY_DUMP, target)
    return target


def add_listed_file(dump: Path, name: str) -> None:
    index = json.loads((dump / "index.json").read_text())
    index["files"].append(name)
    (dump / "index.json").write_text(json.dumps(index))


# ---- item 2: writes through symbolic links


def test_report_replaces_a_link_at_index_html_and_keeps_its_target(dump, tmp_path):
    victim = tmp_path / "outside" / "notes.txt"
    victim.parent.mkdir()
    victim.write_text("the user's own notes\n")
    (dump / "index.html").symlink_to(victim)
    done = run_depyf("report", str(dump), "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "the user's own notes\n"
    assert not (dump / "index.html").is_symlink()
    assert (dump / "index.html").read_text().startswith("<!DOCTYPE html>")


def test_dump_writes_replace_planted_links_and_keep_their_targets(tmp_path):
    """Links at a dump file's name, at its bytecode file's name and at the old predictable temp name."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victims = {name: outside / f"victim{k}.txt" for k, name in enumerate(
        ["full_code_for_f_0.py", f"index.json.{os.getpid()}.tmp", "bytecode/f.original.marshal"])}
    root = tmp_path / "dump"
    (root / "bytecode").mkdir(parents=True)
    for name, victim in victims.items():
        victim.write_text("keep me\n")
        (root / name).symlink_to(victim)
    files = DumpFiles(str(root), rank=None)
    try:
        files.write("full_code_for_f_0.py", "x = 1\n")
        files.write("index.json", "{}\n")
        files.write_bytes("bytecode/f.original.marshal", b"\x00" * 8)
        # files with depyf's names that no earlier index lists are kept: the dump may move aside
        written = Path(files.path("full_code_for_f_0.py"))
        index = Path(files.path("index.json"))
    finally:
        files.release()
    assert {name: v.read_text() for name, v in victims.items()} == {name: "keep me\n" for name in victims}
    assert written.read_text() == "x = 1\n"
    assert not written.is_symlink()
    assert index.read_text() == "{}\n"


# ---- item 3: reads without bounds


def test_report_does_not_block_on_a_fifo_listed_in_the_index(dump, tmp_path):
    os.mkfifo(dump / "pipe.py")
    add_listed_file(dump, "pipe.py")
    done = run_depyf("report", str(dump), "-q", cwd=tmp_path, timeout=60)  # TimeoutExpired = the old hang
    assert done.returncode == 0, done.stderr
    page = (dump / "index.html").read_text()
    assert "pipe.py" in page and '"not_regular":["pipe.py"]' in page


def test_report_reads_a_huge_file_only_up_to_its_cap(dump, tmp_path):
    huge = dump / "huge.py"
    with open(huge, "wb") as f:  # 300 MB, sparse: no disk used
        f.truncate(300 * MB)
    add_listed_file(dump, "huge.py")
    done, rss = measured_depyf(["report", str(dump), "-q"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert 0 < rss < 250 * MB  # it read 300 MB whole before (636 MB RSS)
    page = (dump / "index.html").read_text()
    assert f"cut by the report: the file has {300 * MB} bytes" in page


def write_pyc(path: Path, body: bytes) -> None:
    path.write_bytes(importlib.util.MAGIC_NUMBER + b"\x00" * 12 + body)


def test_decompile_refuses_a_pyc_that_claims_a_huge_tuple(tmp_path):
    bomb = tmp_path / "bomb.pyc"
    write_pyc(bomb, b"(" + (2**31 - 1).to_bytes(4, "little"))
    assert bomb.stat().st_size == 21
    done, rss = measured_depyf(["decompile", str(bomb)], cwd=tmp_path, address_space=4 * 1024 * MB)
    assert done.returncode == 2
    assert stderr_lines(done) == [
        f"depyf decompile: {bomb}: corrupt .pyc file (marshal data claims 2147483647 "
        "items at offset 5, but only 0 bytes are left)"
    ]
    assert rss < 250 * MB


def test_decompile_still_reads_real_pycs(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text("def f(a, b=2):\n    return [x * b for x in a if x]\n")
    import py_compile

    pyc = Path(py_compile.compile(str(source), cfile=str(tmp_path / "mod.pyc")))
    done = run_depyf("decompile", str(pyc), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "return [x * b for x in a if x]" in done.stdout


@pytest.mark.parametrize("name", ["pipe.pyc", "pipe.py"])
def test_decompile_refuses_a_fifo_instead_of_blocking(tmp_path, name):
    os.mkfifo(tmp_path / name)
    done = run_depyf("decompile", str(tmp_path / name), cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert stderr_lines(done) == [f"depyf decompile: {tmp_path / name}: cannot read "
                                  "(not a regular file (a FIFO, device or directory))"]


def test_marshal_size_check_accepts_the_code_of_real_modules():
    """The size check knows this Python's code-object layout and walks real code to its last byte."""
    import marshal

    from depyf import marshal_sizes

    assert marshal_sizes._LAYOUT is not None
    stdlib = Path(os.__file__).parent
    walked = 0
    for path in sorted(stdlib.glob("*.py"))[:120]:
        try:
            code = compile(path.read_text(encoding="utf-8"), str(path), "exec")
        except (SyntaxError, UnicodeDecodeError):
            continue
        data = marshal.dumps(code)
        assert marshal_sizes._walk(data, marshal_sizes._LAYOUT) == len(data), path
        marshal_sizes.check_marshal_sizes(data)
        walked += 1
    assert walked > 100


def test_prepare_debug_does_not_block_on_a_fifo_at_the_owner_lock(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "dump").mkdir()
    os.mkfifo(tmp_path / "dump" / ".depyf-owner")
    (tmp_path / "prog.py").write_text(
        "import torch, depyf\n\n@torch.compile(backend='eager')\ndef f(x):\n    return x + 1\n\n"
        "with depyf.prepare_debug('dump'):\n    print(f(torch.ones(2)).tolist())\n")
    done = subprocess.run(
        [sys.executable, "prog.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert (done.returncode, done.stdout) == (0, "[2.0, 2.0]\n"), done.stderr
    assert json.loads((tmp_path / "dump" / "index.json").read_text())["functions"][0]["name"] == "f"


def test_debugger_file_list_does_not_block_on_a_fifo_index(tmp_path):
    """depyf.debug() reads the dump's index.json to know which files run; a FIFO there is skipped."""
    pytest.importorskip("torch")
    (tmp_path / "full_code_for_f_0.py").write_text("x = 1\n")
    os.mkfifo(tmp_path / "index.json")
    code = "import sys\nfrom depyf.torch.debug import _files_to_open\nprint(_files_to_open(sys.argv[1]))\n"
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert (done.returncode, done.stdout) == (0, "(['full_code_for_f_0.py'], [])\n"), done.stderr
