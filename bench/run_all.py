"""Run every benchmark in bench/ and print one table, with the machine it ran on.

    python bench/run_all.py [--quick] [--only dispatcher,decompile_speed] [--update-results]

Each benchmark runs in its own process (so torch state and caches do not leak between them) as
``python bench/<name>.py --json <file> [--quick]`` and writes a JSON object. The runner reads the
figures named in ``FIGURES`` below; a benchmark may instead (or also) put its own rows under a
``"table"`` key: ``[{"figure": "...", "value": "..."}, ...]``. Scripts that are missing are listed
as such; a failing script is reported with the end of its output and does not stop the others.

Results go to ``bench/out/results.json`` and ``bench/out/results.md``; ``--update-results`` also
rewrites the generated block of ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out"
RESULTS_MD = BENCH / "RESULTS.md"
START_MARK = "<!-- run_all:start -->"
END_MARK = "<!-- run_all:end -->"

# name -> extra arguments for --quick (a smoke run; its numbers are not worth recording)
BENCHMARKS: dict[str, list[str]] = {
    "dispatcher": ["--repeats", "3", "--calls", "2000"],
    "decompile_speed": ["--repeats", "1"],
    "decompile_growth": ["--quick"],
    "prepare_debug_overhead": ["--quick"],
    "report_speed": ["--quick"],
}


def _x(value: float) -> str:
    return f"{value:.2f}x"


def _us(seconds: float, calls: int) -> str:
    return f"{seconds / calls * 1e6:.2f} us/call"


def _dispatcher_rows(r: dict) -> list[tuple[str, str]]:
    s, calls = r["seconds"], r["calls"]
    rows = [
        (
            f"guarded torch.compile ({r['submodules']} submodules, {calls} calls)",
            f"{s['guarded']:.3f} s  ({_us(s['guarded'], calls)})",
        ),
        (
            "dispatched (dispatch_to_code in __call__)",
            f"{s['dispatched']:.3f} s  ({_us(s['dispatched'], calls)})",
        ),
        (
            "dispatched (dispatched(0) kept and called)",
            f"{s['dispatched_direct']:.3f} s  ({_us(s['dispatched_direct'], calls)})",
        ),
        ("floor (compiled graph called directly)", f"{s['floor']:.3f} s  ({_us(s['floor'], calls)})"),
        (
            "torch set_stance(skip_guard_eval_unsafe=True)",
            f"{s['torch_skip_guard_eval_unsafe']:.3f} s  ({_us(s['torch_skip_guard_eval_unsafe'], calls)})",
        ),
        ("guarded / dispatched (bound >= 4x)", _x(r["guarded_over_dispatched"])),
        ("dispatched / floor (bound <= 1.5x)", _x(r["dispatched_over_floor"])),
        ("guarded / dispatched(0) kept", _x(r["guarded_over_dispatched_direct"])),
        ("dispatched(0) kept / floor", _x(r["dispatched_direct_over_floor"])),
        ("guarded / floor", _x(r["guarded_over_floor"])),
        (
            "same ratios in process CPU time: guarded / dispatched, dispatched / floor",
            f"{_x(r['cpu_guarded_over_dispatched'])}, {_x(r['cpu_dispatched_over_floor'])}",
        ),
        ("load average (1 min) before, after", ", ".join(f"{v:.2f}" for v in r["load_average"])),
    ]
    return rows


def _decompile_rows(r: dict) -> list[tuple[str, str]]:
    return [
        (
            "corpus",
            f"{r['modules']} stdlib modules, {r['source_lines']} lines, "
            f"{r['functions']} function code objects",
        ),
        ("decompiled / failed", f"{r['decompiled']} / {r['failed']} {r['failures_by_type']}"),
        ("decompile throughput", f"{r['functions_per_second']:.0f} functions/s ({r['decompile_s']:.2f} s)"),
        (
            "decompile time / compile() time",
            f"{_x(r['decompile_over_compile'])} (compile(): {r['compile_s']:.3f} s)",
        ),
        (
            "same in process CPU time",
            f"{_x(r['decompile_over_compile_cpu'])} "
            f"({r['decompile_cpu_s']:.2f} s / {r['compile_cpu_s']:.3f} s)",
        ),
    ]


FIGURES: dict[str, Callable[[dict], list[tuple[str, str]]]] = {
    "dispatcher": _dispatcher_rows,
    "decompile_speed": _decompile_rows,
}


def _generic_rows(result: dict) -> list[tuple[str, str]]:
    """Rows for a benchmark without an entry in FIGURES: its "table", else its top-level numbers."""
    if isinstance(result.get("table"), list):
        return [(str(row.get("figure", "")), str(row.get("value", ""))) for row in result["table"]]
    rows = []
    for key, value in result.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            continue
        rows.append((key, f"{value:.4g}" if isinstance(value, float) else str(value)))
    return rows


def machine() -> dict[str, str]:
    """What the numbers depend on: CPU, cores, load, Python and torch versions, date."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = "not installed"
    try:
        transformers_version = importlib.metadata.version("transformers")
    except importlib.metadata.PackageNotFoundError:
        transformers_version = "not installed"
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "load_average_at_start": " ".join(f"{v:.2f}" for v in load),
        "os": platform.platform(),
        "python": platform.python_version(),
        "torch": torch_version,
        "transformers": transformers_version,
    }


def run_one(name: str, quick: bool, timeout: float) -> dict:
    """Run bench/<name>.py in a child process; its JSON result, or a record of why there is none."""
    script = BENCH / f"{name}.py"
    if not script.exists():
        return {"status": "missing", "detail": f"{script.relative_to(BENCH.parent)} not found"}
    if "--json" not in script.read_text(encoding="utf-8"):
        return _run_plain(script, timeout)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        command = [
            sys.executable,
            str(script),
            "--json",
            str(out),
            *(BENCHMARKS.get(name, []) if quick else []),
        ]
        start = time.perf_counter()
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=BENCH.parent)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "detail": f"no result after {timeout:.0f} s"}
        wall = time.perf_counter() - start
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
            return {
                "status": "failed",
                "detail": f"exit code {proc.returncode}",
                "output": tail,
                "wall_s": wall,
            }
        return {"status": "ok", "result": json.loads(out.read_text()), "stdout": proc.stdout, "wall_s": wall}


def _run_plain(script: Path, timeout: float) -> dict:
    """A script without --json: run it with its defaults and show the end of what it prints."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=timeout, cwd=BENCH.parent
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "detail": f"no result after {timeout:.0f} s"}
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
        return {"status": "failed", "detail": f"exit code {proc.returncode}", "output": tail, "wall_s": wall}
    lines = [line.strip() for line in proc.stdout.splitlines() if line.strip()][-12:]
    rows = [{"figure": "output (script has no --json)", "value": f"`{line}`"} for line in lines]
    return {"status": "ok", "result": {"table": rows}, "stdout": proc.stdout, "wall_s": wall}


def table(runs: dict[str, dict], info: dict[str, str]) -> str:
    lines = ["| benchmark | figure | value |", "|---|---|---|"]
    for name, run in runs.items():
        if run["status"] != "ok":
            lines.append(f"| {name} | {run['status']} | {run['detail']} |")
            continue
        rows = FIGURES.get(name, _generic_rows)(run["result"])
        for figure, value in rows:
            lines.append(f"| {name} | {figure} | {value} |")
    header = [
        f"Machine: {info['cpu']}, {info['cores']} cores, "
        f"load average at start {info['load_average_at_start']}; "
        f"{info['os']}",
        f"Python {info['python']}, torch {info['torch']}, transformers {info['transformers']}; "
        f"run {info['date']}",
        "",
    ]
    return "\n".join(header + lines) + "\n"


def update_results(markdown: str) -> None:
    """Replace the block between the run_all markers in bench/RESULTS.md (append it if absent)."""
    block = f"{START_MARK}\n{markdown}{END_MARK}"
    text = RESULTS_MD.read_text() if RESULTS_MD.exists() else "# Benchmark results\n\n"
    if START_MARK in text and END_MARK in text:
        before, rest = text.split(START_MARK, 1)
        after = rest.split(END_MARK, 1)[1]
        text = before + block + after
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    RESULTS_MD.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: fewer repeats, numbers not for the record"
    )
    parser.add_argument("--only", help="comma-separated benchmark names: " + ", ".join(BENCHMARKS))
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per benchmark")
    parser.add_argument("--update-results", action="store_true", help="rewrite the table in bench/RESULTS.md")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS and not (BENCH / f"{name}.py").exists()]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; known: {', '.join(BENCHMARKS)}")
    info = machine()
    runs = {}
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        runs[name] = run_one(name, args.quick, args.timeout)
        run = runs[name]
        print(f"  {run['status']} ({run.get('wall_s', 0):.0f} s)", file=sys.stderr, flush=True)
        for line in run.get("output", []):
            print(f"    {line}", file=sys.stderr)
    markdown = table(runs, info)
    print(markdown)
    OUT.mkdir(exist_ok=True)
    (OUT / "results.json").write_text(
        json.dumps({"machine": info, "quick": args.quick, "runs": runs}, indent=2)
    )
    (OUT / "results.md").write_text(markdown)
    if args.update_results:
        if args.quick:
            print("not updating bench/RESULTS.md from a --quick run", file=sys.stderr)
        else:
            update_results(markdown)
    return 0 if all(run["status"] in ("ok", "missing") for run in runs.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
