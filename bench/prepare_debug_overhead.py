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
    import json, sys, time, tempfile
    import torch
    backend, with_depyf = sys.argv[1], sys.argv[2] == "1"

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
        start = time.perf_counter()
        with depyf.prepare_debug(tempfile.mkdtemp()):
            main()
            inside = time.perf_counter() - start
        total = time.perf_counter() - start
    else:
        start = time.perf_counter()
        main()
        inside = total = time.perf_counter() - start
    print(json.dumps({"inside": inside, "total": total}))
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
    print(f"{'backend':<10} {'plain s':>8} {'depyf s':>8} {'ratio':>6} {'ratio incl. writing index':>26}")
    for backend in args.backends.split(","):
        plain, dumped, dumped_total = [], [], []
        for _ in range(args.repeat):  # interleave so machine load affects both sides alike
            plain.append(measure(backend, False)["inside"])
            result = measure(backend, True)
            dumped.append(result["inside"])
            dumped_total.append(result["total"])
        p, d, t = (statistics.median(v) for v in (plain, dumped, dumped_total))
        print(f"{backend:<10} {p:>8.2f} {d:>8.2f} {d / p:>6.2f} {t / p:>26.2f}")


if __name__ == "__main__":
    main()
