"""Several processes: torchrun ranks, a process group made inside the block, ``mp.spawn`` children
(issue 18, item 8)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).parent))
from session_support import REPO, child_env, depyf_warnings, start, value

pytestmark = [pytest.mark.torch, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


DISTRIBUTED_SCRIPT = textwrap.dedent("""
    import os, sys, torch
    import torch.distributed as dist

    @torch.compile(backend="eager")
    def before_init(x):
        return x + 1

    @torch.compile(backend="eager")
    def after_init(x):
        return x * 2

    before_init(torch.ones(2))               # compiled before init_process_group
    dist.init_process_group("gloo")
    t = after_init(torch.ones(2)) * (dist.get_rank() + 1)
    dist.all_reduce(t)
    # one write per rank: both ranks share the pipe, and print() writes each piece apart
    sys.stdout.write(f"RANK {dist.get_rank()} SUM {t.tolist()}\\n")
    sys.stdout.flush()
    dist.destroy_process_group()
""")


def test_torchrun_ranks_write_rank_dirs_under_depyf_run(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(DISTRIBUTED_SCRIPT)
    dump = tmp_path / "dump"
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=2",
         "--master_addr=127.0.0.1", f"--master_port={_free_port()}", "-m", "depyf", "run", "-q",
         str(script), "-o", str(dump)],
        cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=480)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.count("SUM [6.0, 6.0]") == 2   # results as without depyf
    assert sorted(p.name for p in dump.iterdir() if p.is_dir()) == ["rank_0", "rank_1"]
    for rank in (0, 1):
        data = json.loads((dump / f"rank_{rank}" / "index.json").read_text())
        assert data["process"]["subdir"] == f"rank_{rank}"
        assert sorted(fn["name"] for fn in data["functions"]) == ["after_init", "before_init"]
    index_md = (dump / "index.md").read_text()
    assert "rank_0/index.md" in index_md and "rank_1/index.md" in index_md


GROUP_INSIDE_BLOCK = """
    import torch.distributed as dist
    dump, rank = sys.argv[1], int(sys.argv[2])

    @torch.compile(backend="eager")
    def f(x):
        return x + rank

    with depyf.prepare_debug(dump) as used:
        dist.init_process_group("gloo", rank=rank, world_size=2)   # after the block started
        report("RESULT", f(torch.ones(2)).tolist())
    dist.destroy_process_group()
"""


def test_a_process_group_made_inside_the_block_moves_the_dump_to_rank_dirs(tmp_path):
    env = child_env(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))

    procs = [start(tmp_path, GROUP_INSIDE_BLOCK, str(tmp_path / "dump"), str(r), env=env) for r in range(2)]
    for rank, proc in enumerate(procs):
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert value(out, "RESULT") == str([1.0 + rank] * 2)
        assert not depyf_warnings(err), err
    dump = tmp_path / "dump"
    assert sorted(p.name for p in dump.iterdir() if p.is_dir()) == ["rank_0", "rank_1"]
    assert not (dump / "index.json").exists() and not (dump / ".depyf-owner").exists()
    for rank in (0, 1):
        data = json.loads((dump / f"rank_{rank}" / "index.json").read_text())
        assert [fn["name"] for fn in data["functions"]] == ["f"]


SPAWN_SCRIPT = textwrap.dedent("""
    import torch
    import torch.multiprocessing as mp

    def worker(rank):
        @torch.compile(backend="eager")
        def f(x):
            return x + rank
        with open(f"worker_{rank}.txt", "w") as out:
            out.write(str(f(torch.ones(2)).tolist()))

    if __name__ == "__main__":
        mp.spawn(worker, nprocs=2)
""")


def test_mp_spawn_children_under_depyf_run_are_named_in_a_warning(tmp_path):
    script = tmp_path / "spawner.py"
    script.write_text(SPAWN_SCRIPT)
    proc = subprocess.run([sys.executable, "-m", "depyf", "run", str(script), "-o", str(tmp_path / "dump")],
                          cwd=tmp_path, env=child_env(PYTHONPATH=str(REPO)), capture_output=True, text=True,
                          timeout=480)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert [(tmp_path / f"worker_{r}.txt").read_text() for r in (0, 1)] == ["[1.0, 1.0]", "[2.0, 2.0]"]
    assert "2 child process(es) started inside prepare_debug" in proc.stderr
    assert "call depyf.prepare_debug in the child's own code" in proc.stderr


def test_depyf_run_refuses_an_empty_output_dir(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("print('ran')\n")
    proc = subprocess.run([sys.executable, "-m", "depyf", "run", str(script), "-o", ""], cwd=tmp_path,
                          env=child_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "ran" not in proc.stdout
    assert "the dump directory is empty" in proc.stderr


FORKING = """
    import multiprocessing
    dump = sys.argv[1]

    @torch.compile(backend="eager")
    def in_parent(x):
        return x + 1

    @torch.compile(backend="eager")
    def in_child(x):
        return x * 5

    @torch.compile(backend="eager")
    def in_child_own_dump(x):
        return x - 2

    def child():
        in_child(torch.ones(2))                      # inherited hooks: not dumped anywhere
        with depyf.prepare_debug(dump) as used:      # its own dump
            with open("child.txt", "w") as out:
                out.write(f"{used} {in_child_own_dump(torch.ones(2)).tolist()}")

    with depyf.prepare_debug(dump) as used:
        in_parent(torch.ones(2))
        process = multiprocessing.get_context("fork").Process(target=child)
        process.start()
        process.join()
        report("CHILD_EXIT", process.exitcode)
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_writes_nothing_into_its_parents_dump_and_can_dump_on_its_own(tmp_path):
    from session_support import run

    dump = tmp_path / "dump"
    rc, out, err = run(tmp_path, FORKING, str(dump))
    assert rc == 0, err
    assert value(out, "CHILD_EXIT") == "0"
    child_dir, result = (tmp_path / "child.txt").read_text().split(" ", 1)
    assert result == "[-1.0, -1.0]"
    child_dir = Path(child_dir)
    assert child_dir.parent == dump and child_dir.name.startswith("pid_")
    parent = json.loads((dump / "index.json").read_text())
    assert [fn["name"] for fn in parent["functions"]] == ["in_parent"]
    child = json.loads((child_dir / "index.json").read_text())
    assert [fn["name"] for fn in child["functions"]] == ["in_child_own_dump"]
    assert not list(dump.rglob("*in_child_0*")) and not list(dump.rglob("full_code_for_in_child_0.py"))
