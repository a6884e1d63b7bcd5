"""Compile-time overhead of prepare_debug over plain torch.compile, per backend.

Each measurement runs a program in a fresh process with a fresh, empty Inductor cache directory,
so both sides compile everything from scratch: the seed example's `main()` (100 calls of
`toy_example`, which compiles the function and both resume functions), and a small transformers
GPT-2 (2 layers, built from a config, no download) called once. Prints the median of --repeat
runs and the ratio (bound: at most 1.2), and the steady-state time per call after the
prepare_debug context exited, relative to plain torch.compile.

    python bench/prepare_debug_overhead.py [--repeat 3] [--programs seed,gpt2]
        [--backends eager,aot_eager,inductor]
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
    program, backend, with_depyf = sys.argv[1], sys.argv[2], sys.argv[3] == "1"

    def cpu():
        # This process and the compilers it waited for (Inductor runs the C++ compiler).
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    if program == "seed":
        @torch.compile(backend=backend)
        def toy_example(a, b):
            x = a / (torch.abs(a) + 1)
            if b.sum() < 0:
                b = b * -1
            return x * b

        inputs = [(torch.randn(10), torch.randn(10)) for _ in range(100)]

        def main():
            for a, b in inputs:
                toy_example(a, b)
        steady_calls = 2000
    else:
        import transformers
        config = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=128, n_positions=32,
                                         bos_token_id=0, eos_token_id=0)
        torch.manual_seed(0)
        model = transformers.GPT2LMHeadModel(config).eval()
        compiled = torch.compile(model, backend=backend)
        ids = torch.randint(0, 128, (2, 8), generator=torch.Generator().manual_seed(1))

        def main():
            with torch.no_grad():
                compiled(input_ids=ids)
        steady_calls = 200

    # Both sides import depyf.torch (which imports parts of torch._dynamo) before the clock starts:
    # one-time imports are not compile cost, and must not favour either side.
    import depyf
    import depyf.torch
    if with_depyf:
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
    # steady state: the compiled code called again after the context exited
    for _ in range(3):
        main()
    start = time.perf_counter()
    for _ in range(steady_calls // (100 if program == "seed" else 1)):
        main()
    steady = (time.perf_counter() - start) / steady_calls
    print(json.dumps({"inside": inside, "total": total, "inside_cpu": inside_cpu, "total_cpu": total_cpu,
                      "steady": steady}))
""")


def measure(program: str, backend: str, with_depyf: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, "-c", CHILD, program, backend, "1" if with_depyf else "0"],
                              capture_output=True, text=True, env=env, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", default="eager,aot_eager,inductor")
    parser.add_argument("--programs", default="seed,gpt2")
    parser.add_argument("--inductor-repeat", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="one run, seed example, eager and aot_eager")
    parser.add_argument("--json", help="also write the figures here (for bench/run_all.py)")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.backends, args.programs = 1, "eager,aot_eager", "seed"
    print(
        "median of",
        args.repeat,
        "runs; wall = elapsed seconds, cpu = CPU seconds incl. compiler subprocesses;",
    )
    print("steady = time per call after prepare_debug exited (depyf / plain)")
    print(
        f"{'program':<8} {'backend':<10} {'plain wall':>10} {'depyf wall':>10} {'ratio':>6} {'plain cpu':>9} "
        f"{'depyf cpu':>9} {'ratio':>6} {'cpu ratio incl. index':>22} {'steady ratio':>12}"
    )
    table = []
    for program in args.programs.split(","):
        for backend in args.backends.split(","):
            runs: dict[str, list[float]] = {k: [] for k in ("p", "d", "pc", "dc", "dtc", "ps", "ds")}
            # Inductor compiles take a minute per process here: one interleaved pair unless asked
            repeat = args.repeat if backend != "inductor" else min(args.repeat, args.inductor_repeat)
            for _ in range(repeat):  # interleaved so machine load affects both sides alike
                plain = measure(program, backend, False)
                dumped = measure(program, backend, True)
                runs["p"].append(plain["inside"])
                runs["pc"].append(plain["inside_cpu"])
                runs["ps"].append(plain["steady"])
                runs["d"].append(dumped["inside"])
                runs["dc"].append(dumped["inside_cpu"])
                runs["dtc"].append(dumped["total_cpu"])
                runs["ds"].append(dumped["steady"])
            m = {k: statistics.median(v) for k, v in runs.items()}
            print(f"{program:<8} {backend:<10} {m['p']:>10.2f} {m['d']:>10.2f} {m['d'] / m['p']:>6.2f} "
                  f"{m['pc']:>9.2f} {m['dc']:>9.2f} {m['dc'] / m['pc']:>6.2f} {m['dtc'] / m['pc']:>22.2f} "
                  f"{m['ds'] / m['ps']:>12.2f}", flush=True)
            table.append({"figure": f"{program}, {backend}: compile time with / without (wall; CPU), "
                                    f"median of {repeat}",
                          "value": f"{m['d'] / m['p']:.2f}x; {m['dc'] / m['pc']:.2f}x  "
                                   f"({m['p']:.2f} s -> {m['d']:.2f} s wall, bound <= 1.2x)"})
            table.append(
                {
                    "figure": f"{program}, {backend}: steady-state call after the block, with / without",
                    "value": f"{m['ds'] / m['ps']:.2f}x  ({m['ps'] * 1e6:.0f} us -> {m['ds'] * 1e6:.0f} us)",
                }
            )
    if args.json:
        Path(args.json).write_text(json.dumps({"benchmark": "prepare_debug_overhead", "repeat": args.repeat,
                                               "table": table}, indent=2))


if __name__ == "__main__":
    main()
