"""Run the decompiler corpus without pytest and print a to-do list: results per theme, top failures.

    python tools/corpus_report.py [--themes loops,exceptions] [--top 10] [--json out.json] [--show NAME]

For every corpus function (tests/decompiler/corpus) it records the first stage that fails:
``decompile`` (exception from depyf.decompile), ``source`` (the output does not parse),
``recompile`` (exception from depyf.recompile), ``layout`` (the new code is not a drop-in
replacement) or ``behaviour`` (different results on the function's cases). ``--show NAME``
prints the decompiled source and the differences for one function.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "decompiler")]

from corpus_harness import (  # noqa: E402
    BACKEND,
    CorpusEntry,
    all_entries,
    compare_functions,
    error_summary,
    layout_differences,
    parse_source,
    time_limit,
    with_code,
)

STAGES = ("decompile", "source", "recompile", "layout", "behaviour")


def check(entry: CorpusEntry) -> tuple[str | None, str]:
    """The first failing stage and a one-line message, or (None, "") when the function passes."""
    code = entry.func.__code__
    try:
        with time_limit(30):
            src = BACKEND.decompile(entry.func)
    except Exception as exc:
        return "decompile", error_summary(exc)
    try:
        parse_source(src, compile_too=not code.co_freevars)
    except SyntaxError as exc:
        return "source", error_summary(exc)
    try:
        with time_limit(30):
            rec = BACKEND.recompile(code)
    except Exception as exc:
        return "recompile", error_summary(exc)
    problems = layout_differences(code, rec.code)
    if problems:
        return "layout", problems[0]
    problems = compare_functions(entry.func, with_code(entry.func, rec.code))
    if problems:
        return "behaviour", problems[0][:300]
    return None, ""


def generalise(message: str) -> str:
    """Group messages that differ only in the function, offset or values."""
    message = re.sub(r" in [\w.<>]+( at offset \d+)?", "", message)
    message = re.sub(r"^\(.*?\): expected .*", "different results on a case (run --show NAME)", message)
    message = re.sub(r"0x[0-9a-f]+", "0x…", message)
    return message


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--themes", help="comma-separated theme modules (default: all)")
    parser.add_argument("--top", type=int, default=10, help="how many common failure messages to list")
    parser.add_argument("--json", help="write every result to this file")
    parser.add_argument("--show", help="print source and differences for one function (theme.name or name)")
    args = parser.parse_args(argv)

    entries = all_entries()
    if args.themes:
        wanted = set(args.themes.split(","))
        entries = [e for e in entries if e.theme in wanted]
    if args.show:
        return show([e for e in entries if args.show in (e.name, e.test_id)])

    start = time.perf_counter()
    results = [(e, *check(e)) for e in entries]
    elapsed = time.perf_counter() - start

    per_theme: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for entry, stage, _ in results:
        per_theme[entry.theme]["functions"] += 1
        per_theme[entry.theme][stage or "pass"] += 1
    header = f"| theme | functions | pass | {' | '.join(STAGES)} |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    totals: collections.Counter = collections.Counter()
    for theme in sorted(per_theme):
        counts = per_theme[theme]
        totals.update(counts)
        print(f"| {theme} | {counts['functions']} | {counts['pass']} | "
              + " | ".join(str(counts[s]) for s in STAGES) + " |")
    print(f"| **total** | {totals['functions']} | {totals['pass']} | "
          + " | ".join(str(totals[s]) for s in STAGES) + " |")
    print(f"\n{len(results)} functions in {elapsed:.1f} s\n")

    failures = [(e, stage, msg) for e, stage, msg in results if stage]
    common = collections.Counter((stage, generalise(msg)) for _, stage, msg in failures)
    print(f"Most common failures (top {args.top}):")
    for (stage, msg), n in common.most_common(args.top):
        examples = [e.test_id for e, s, m in failures if s == stage and generalise(m) == msg][:8]
        print(f"- {n} x [{stage}] {msg}\n    e.g. {', '.join(examples)}")

    if args.json:
        Path(args.json).write_text(json.dumps(
            [{"id": e.test_id, "stage": stage, "message": msg} for e, stage, msg in results], indent=1))
    return 0 if not failures else 1


def show(entries: list[CorpusEntry]) -> int:
    for entry in entries:
        print(f"=== {entry.test_id}")
        try:
            rec = BACKEND.recompile(entry.func.__code__)
        except Exception as exc:
            print(error_summary(exc))
            continue
        print(rec.source)
        for line in layout_differences(entry.func.__code__, rec.code) or compare_functions(
                entry.func, with_code(entry.func, rec.code)):
            print("  !", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
