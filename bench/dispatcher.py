"""Guard overhead: guarded torch.compile vs depyf's dispatcher vs calling the compiled graph directly.

The tutorial's example: a module of N submodules, each adding a constant, called CALLS times.
Every figure is the median over REPEATS interleaved rounds, all measured in this one process.

    python bench/dispatcher.py [--submodules 100] [--calls 10000] [--repeats 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

CHUNKS = 10

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from depyf.optimization import TorchCompileWrapperWithCustomDispatcher  # noqa: E402


class F(torch.nn.Module):
    def __init__(self, i: int) -> None:
        super().__init__()
        self.i = i

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.i


class Mod(TorchCompileWrapperWithCustomDispatcher):
    def __init__(self, n: int) -> None:
        self.fs = torch.nn.ModuleList([F(i) for i in range(n)])
        super().__init__(torch.compile(self.forward))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for f in self.fs:
            x = f(x)
        return x

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if len(self.compiled_codes) == 1:
            with self.dispatch_to_code(0):
                return self.forward(x)
        return self.compiled_callable(x)


def graph_function(mod: Mod) -> Callable:
    """The compiled graph that Dynamo's code calls (a global named ``__compiled_fn_<n>...``)."""
    code = mod.compiled_codes[0]
    names = [name for name in code.co_names if name.startswith("__compiled_fn")]
    if len(names) != 1:
        raise RuntimeError(f"expected one compiled graph in Dynamo's code, found {names}")
    return Mod.forward.__globals__[names[0]]


def seconds(fn: Callable[[], object], calls: int) -> tuple[float, float]:
    """Wall-clock and process CPU seconds for ``calls`` calls of ``fn``."""
    cpu_start = time.process_time()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return time.perf_counter() - start, time.process_time() - cpu_start


def measure(submodules: int, calls: int, repeats: int) -> dict:
    torch.manual_seed(0)
    mod = Mod(submodules)
    x = torch.randn(10)
    start = time.perf_counter()
    expected = mod.compiled_callable(x)
    compile_s = time.perf_counter() - start
    graph = graph_function(mod)
    mod(x)  # builds the dispatcher
    direct = mod.dispatched(0)
    variants: dict[str, Callable[[], object]] = {
        "guarded": lambda: mod.compiled_callable(x),
        "dispatched": lambda: mod(x),
        "dispatched_direct": lambda: direct(x),
        "floor": lambda: graph(x)[0],
    }
    timers: dict[str, Callable[[int], tuple[float, float]]] = {
        name: (lambda n, fn=fn: seconds(fn, n)) for name, fn in variants.items()
    }

    def skip_guard_eval_unsafe(n: int) -> tuple[float, float]:
        # torch's own guard skipping, for comparison: the compiled callable under this stance.
        with torch.compiler.set_stance(skip_guard_eval_unsafe=True):
            return seconds(variants["guarded"], n)

    timers["torch_skip_guard_eval_unsafe"] = skip_guard_eval_unsafe
    for name, fn in variants.items():
        if not torch.equal(fn(), expected):
            raise AssertionError(f"{name} gives a different result from torch.compile")
    for timer in timers.values():
        timer(min(calls, 500))  # warm up
    times: dict[str, list[float]] = {name: [] for name in timers}
    cpu_times: dict[str, list[float]] = {name: [] for name in timers}
    load_before = os.getloadavg()[0]
    # Each repeat times CALLS calls of every variant, in CHUNKS interleaved slices, so that a change in
    # machine load (other processes) hits all variants alike instead of whichever ran at that moment.
    chunk = max(1, calls // CHUNKS)
    for _ in range(repeats):
        wall = dict.fromkeys(timers, 0.0)
        cpu = dict.fromkeys(timers, 0.0)
        for _ in range(calls // chunk):
            for name, timer in timers.items():
                w, c = timer(chunk)
                wall[name] += w
                cpu[name] += c
        for name in timers:
            times[name].append(wall[name])
            cpu_times[name].append(cpu[name])
    median = {name: statistics.median(values) for name, values in times.items()}
    cpu_median = {name: statistics.median(values) for name, values in cpu_times.items()}
    return {
        "benchmark": "dispatcher",
        "submodules": submodules,
        "calls": calls,
        "repeats": repeats,
        "compile_s": compile_s,
        "load_average": [load_before, os.getloadavg()[0]],
        "seconds": median,
        "cpu_seconds": cpu_median,
        "cpu_guarded_over_dispatched": cpu_median["guarded"] / cpu_median["dispatched"],
        "cpu_dispatched_over_floor": cpu_median["dispatched"] / cpu_median["floor"],
        "guarded_over_dispatched": median["guarded"] / median["dispatched"],
        "dispatched_over_floor": median["dispatched"] / median["floor"],
        "guarded_over_floor": median["guarded"] / median["floor"],
        "guarded_over_dispatched_direct": median["guarded"] / median["dispatched_direct"],
        "dispatched_direct_over_floor": median["dispatched_direct"] / median["floor"],
        "bound": "dispatched >= 4x faster than guarded, <= 1.5x the floor",
        "bound_met": median["guarded"] / median["dispatched"] >= 4
        and median["dispatched"] / median["floor"] <= 1.5,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submodules", type=int, default=100)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args(argv)
    result = measure(args.submodules, args.calls, args.repeats)
    for name, value in result["seconds"].items():
        print(f"{name:32s} {value:8.4f} s for {args.calls} calls  ({value / args.calls * 1e6:7.2f} us/call)")
    print(f"guarded / dispatched: {result['guarded_over_dispatched']:.2f}x")
    print(f"dispatched / floor:   {result['dispatched_over_floor']:.2f}x")
    print(f"guarded / dispatched_direct: {result['guarded_over_dispatched_direct']:.2f}x")
    print(f"dispatched_direct / floor:   {result['dispatched_direct_over_floor']:.2f}x")
    print(
        f"process CPU time: guarded / dispatched {result['cpu_guarded_over_dispatched']:.2f}x, "
        f"dispatched / floor {result['cpu_dispatched_over_floor']:.2f}x"
    )
    print(f"bound met: {result['bound_met']}  ({result['bound']})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
