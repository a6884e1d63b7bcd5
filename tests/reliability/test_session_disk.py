"""A dump directory that cannot be written costs the dump, never the program (issue 18, item 6).

The program runs unchanged with one clear warning; no ``*.tmp`` or half-written dump is left.
A real full or read-only file system is a small tmpfs where this machine lets the tests mount
one (root); the simulated ``ENOSPC`` test runs everywhere.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).parent))
from session_support import depyf_warnings, run, value

pytestmark = pytest.mark.torch

PROGRAM = """
    import errno
    dump, mode = sys.argv[1], sys.argv[2]
    if mode == "enospc-after":
        # every dump file is written by depyf.fileio through os.fdopen: after N files, the disk is full
        import os as real_os
        import types
        from depyf import fileio
        calls = [0]
        class FillingOs(types.ModuleType):
            def __getattr__(self, name):
                return getattr(real_os, name)
        def fdopen(fd, mode="r", *args, **kwargs):
            f = real_os.fdopen(fd, mode, *args, **kwargs)
            calls[0] += 1
            if calls[0] > int(sys.argv[3]):
                f.write(b"partial")
                f.close()
                raise OSError(errno.ENOSPC, "No space left on device")
            return f
        filling = FillingOs("os")
        filling.fdopen = fdopen
        fileio.os = filling

    def make(k):  # a code object of its own per function: each one compiles
        namespace = {}
        nl = chr(10)
        exec(f"def fn_{k}(x):{nl}    y = x * {k} + 1{nl}    return (y.sin() + {k}).sum(){nl}", namespace)
        return namespace[f"fn_{k}"]

    eager = [make(k) for k in range(8)]
    inputs = [torch.randn(16) for _ in range(8)]
    expected = [fn(x).tolist() for fn, x in zip(eager, inputs)]
    warm_up()
    before = adapter.state_snapshot()
    with depyf.prepare_debug(dump) as used:
        report("USED", used)
        got = [torch.compile(fn, backend="eager")(x).tolist() for fn, x in zip(eager, inputs)]
    report("SAME_RESULTS", got == expected)
    report("SAME_STATE", adapter.state_snapshot() == before)
    found = []
    for root, dirs, names in os.walk(used) if os.path.isdir(used) else []:
        found += [os.path.relpath(os.path.join(root, n), used) for n in names]
    report("FILES", sorted(found))
"""


def _check_program_ran_unchanged(rc: int, out: str, err: str) -> None:
    assert rc == 0, err
    assert value(out, "SAME_RESULTS") == "True"
    assert value(out, "SAME_STATE") == "True"


def test_a_file_given_as_the_dump_dir_runs_the_block_with_one_warning(tmp_path):
    target = tmp_path / "results.txt"
    target.write_text("mine\n")
    rc, out, err = run(tmp_path, PROGRAM, str(target), "plain")
    _check_program_ran_unchanged(rc, out, err)
    assert target.read_text() == "mine\n"
    [warning] = depyf_warnings(err)
    assert (
        f"cannot dump to {target}: {target} is a file, not a directory; the block runs without a dump"
        in warning
    )


def test_disk_full_midway_stops_the_dump_with_one_warning_and_removes_it(tmp_path):
    dump = tmp_path / "dump"
    rc, out, err = run(tmp_path, PROGRAM, str(dump), "enospc-after", "12")
    _check_program_ran_unchanged(rc, out, err)
    [warning] = depyf_warnings(err)
    assert "No space left on device" in warning and "dumping stopped" in warning
    assert value(out, "FILES") == "[]"   # no *.tmp, no half dump, no index.json
    assert "Traceback" not in err


@contextlib.contextmanager
def _tmpfs(where: Path, options: str):
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or mounted.returncode})")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0, reason="mounting needs root on Linux"
)
def test_a_really_full_file_system(tmp_path):
    with _tmpfs(tmp_path / "small", "size=48k") as small:
        rc, out, err = run(tmp_path, PROGRAM, str(small / "dump"), "plain")
        _check_program_ran_unchanged(rc, out, err)
        [warning] = depyf_warnings(err)
        assert "No space left on device" in warning
        assert value(out, "FILES") == "[]"
        assert not [p for p in small.rglob("*") if p.is_file()]


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0, reason="mounting needs root on Linux"
)
def test_a_read_only_file_system(tmp_path):
    with _tmpfs(tmp_path / "ro", "ro,size=16k") as read_only:
        rc, out, err = run(tmp_path, PROGRAM, str(read_only / "dump"), "plain")
        _check_program_ran_unchanged(rc, out, err)
        [warning] = depyf_warnings(err)
        assert f"cannot dump to {read_only / 'dump'}" in warning and "Read-only file system" in warning
