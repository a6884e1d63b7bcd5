"""Compile-time overhead of prepare_debug over plain torch.compile, per backend.

Each measurement runs the seed example's `main()` (100 calls of `toy_example`, which compiles
the function and both resume functions) in a fresh process with a fresh, empty Inductor cache
directory, so both sides compile everything from scratch. Prints the median of --repeat runs
and the ratio (target: at most 1.2).

    python bench/prepare_debug_overhead.py [--repeat 3] [--backends eager,aot_eager,inductor]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import json, os, sys, time, tempfile
    import torch
    backend, with_depyf = sys.argv[1], sys.argv[2] == "1"

    def cpu():
        # This process and the compilers it waited for (Inductor runs the C++ compiler).
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    @torch.compile(backend=backend)
    def toy_example(a, b):
        x = a / (torch.abs(a) + 1)
        if b.sum() < 0:
            b = b * -1
        return x * b

    def main():
        for _ in range(100):
            toy_example(torch.randn(10), torch.randn(10))

    if with_depyf:
        import depyf
        import depyf.torch  # import cost is not compile cost
        start, start_cpu = time.perf_counter(), cpu()
        with depyf.prepare_debug(tempfile.mkdtemp()):
            main()
            inside, inside_cpu = time.perf_counter() - start, cpu() - start_cpu
        total, total_cpu = time.perf_counter() - start, cpu() - start_cpu
    else:
        start, start_cpu = time.perf_counter(), cpu()
        main()
        inside = total = time.perf_counter() - start
        inside_cpu = total_cpu = cpu() - start_cpu
    print(json.dumps({"inside": inside, "total": total, "inside_cpu": inside_cpu, "total_cpu": total_cpu}))
""")


def measure(backend: str, with_depyf: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, "-c", CHILD, backend, "1" if with_depyf else "0"],
                              capture_output=True, text=True, env=env, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", default="eager,aot_eager,inductor")
    args = parser.parse_args()
    print("median of", args.repeat, "runs; wall = elapsed seconds, cpu = CPU seconds incl. compiler subprocesses")
    print(f"{'backend':<10} {'plain wall':>10} {'depyf wall':>10} {'ratio':>6} {'plain cpu':>9} "
          f"{'depyf cpu':>9} {'ratio':>6} {'cpu ratio incl. index':>22}")
    for backend in args.backends.split(","):
        runs: dict[str, list[float]] = {k: [] for k in ("p", "d", "pc", "dc", "dtc")}
        for _ in range(args.repeat):  # interleaved so machine load affects both sides alike
            plain = measure(backend, False)
            dumped = measure(backend, True)
            runs["p"].append(plain["inside"])
            runs["pc"].append(plain["inside_cpu"])
            runs["d"].append(dumped["inside"])
            runs["dc"].append(dumped["inside_cpu"])
            runs["dtc"].append(dumped["total_cpu"])
        m = {k: statistics.median(v) for k, v in runs.items()}
        print(f"{backend:<10} {m['p']:>10.2f} {m['d']:>10.2f} {m['d'] / m['p']:>6.2f} {m['pc']:>9.2f} "
              f"{m['dc']:>9.2f} {m['dc'] / m['pc']:>6.2f} {m['dtc'] / m['pc']:>22.2f}", flush=True)


if __name__ == "__main__":
    main()
