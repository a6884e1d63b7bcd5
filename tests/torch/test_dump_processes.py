"""Processes sharing a dump directory do not clobber each other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import os, sys, time, torch, depyf
    dump, mode = sys.argv[1], sys.argv[2]
    if mode == "dist":
        import torch.distributed as dist
        dist.init_process_group("gloo", rank=int(os.environ["RANK"]), world_size=2)
    RANK = int(os.environ.get("RANK", "0"))  # read outside: Dynamo 2.2 cannot trace a missing key
    @torch.compile(backend="eager")
    def f(x):
        return x + RANK
    with depyf.prepare_debug(dump) as used:
        f(torch.ones(2))
        if mode == "hold":  # keep the directory until another process has written its dump
            import glob
            deadline = time.time() + float(sys.argv[3])
            while time.time() < deadline and not glob.glob(os.path.join(dump, "pid_*", "index.json")):
                time.sleep(0.2)
    print("USED", used)
    if mode == "dist":
        dist.destroy_process_group()
""")


def _start(tmp_path, *args, env=None):
    script = tmp_path / "proc.py"
    script.write_text(SCRIPT)
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=full_env)


def _used(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return Path(next(line for line in out.splitlines() if line.startswith("USED ")).split(" ", 1)[1])


def test_second_process_writes_to_pid_dir_and_is_linked(tmp_path):
    dump = tmp_path / "shared"
    first = _start(tmp_path, str(dump), "hold", "240")
    # Wait until the first process holds the directory.
    for _ in range(600):
        if (dump / ".depyf-owner").exists():
            break
        import time
        time.sleep(0.1)
    second = _start(tmp_path, str(dump), "plain")
    second_dir = _used(second)
    first_dir = _used(first)
    assert first_dir == dump
    assert second_dir == dump / f"pid_{second.pid}"
    assert json.loads((second_dir / "index.json").read_text())["functions"]
    assert json.loads((first_dir / "index.json").read_text())["functions"]
    assert f"pid_{second.pid}/index.md" in (dump / "index.md").read_text()
    assert not (dump / ".depyf-owner").exists()


def test_distributed_ranks_write_rank_dirs(tmp_path):
    dump = tmp_path / "dist"
    env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(29500 + os.getpid() % 1000)}
    procs = [_start(tmp_path, str(dump), "dist", env={**env, "RANK": str(r)}) for r in range(2)]
    used = [_used(p) for p in procs]
    assert used == [dump / "rank_0", dump / "rank_1"]
    for d in used:
        assert json.loads((d / "index.json").read_text())["process"]["subdir"] == d.name
    index_md = (dump / "index.md").read_text()
    assert "rank_0/index.md" in index_md and "rank_1/index.md" in index_md
