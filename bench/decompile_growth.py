"""How decompile time grows with the size of the code: seconds per instruction at n = 100, 1,000, 10,000.

One generated function per shape and size, decompiled with ``depyf.decompile`` (flow check on) in a
child process with a time limit, so a shape that grows badly shows as a timeout, not a hang. Near-
linear work keeps the time per instruction flat as n grows; a quadratic shape grows tenfold per row.

    python bench/decompile_growth.py [--sizes 100,1000,10000] [--timeout 120] [--json out.json]

Shapes (n counts the repeated unit): an ``elif`` chain of n branches and conditional expressions
nested n deep (CPython refuses either much beyond 1,000, so larger n repeats chains of 1,000);
n / 100 assignments of conditional expressions nested 100 deep (several chains in one function); an
``if`` on conditional expressions nested n deep; a ``while`` on an and/or test around groups of 20
ifs nested directly, each with an ``else`` (n / 20 groups);
n straight-line assignments; n ``try``/``except`` statements; loops nested 10 deep, repeated n / 10
times (CPython allows 20 nested blocks); an ``if`` on an ``and``/``or`` chain of n tests; ``return`` of
an ``or`` of n / 3 ``and`` groups of three tests; ``return``
of one flat ``and`` of n comparisons, of one flat ``and`` of n subscripts, and an ``if`` on one flat
``or`` of n comparisons (source that nests them instead stops parsing at a few hundred terms).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARGS = "x, y"


def elif_chain(n: int) -> str:
    lines = []
    for start in range(0, n, 1000):
        arms = [f"    {'if' if i == start else 'elif'} x == {i}:\n        y += {i}"
                for i in range(start, min(n, start + 1000))]
        lines.append("\n".join(arms) + "\n    else:\n        y -= 1")
    return "\n".join(lines) + "\n    return y"


def nested_ifexp(n: int) -> str:
    lines = []
    for start in range(0, n, 1000):
        depth = min(1000, n - start)
        chain = " else ".join(f"{i} if x == {i}" for i in range(start, start + depth))
        lines.append(f"    y += {chain} else -1")
    return "\n".join(lines) + "\n    return y"


def ifexp_chains(n: int) -> str:
    """Conditional expressions nested 100 deep, each assigned to a name of its own (n / 100 of them,
    one for n under 200): the store and the next chain's first test follow every branch."""
    chain = " else ".join(f"{i} if x == {i}" for i in range(100))
    names = [f"z{j}" for j in range(max(1, n // 100))]
    return "\n".join(f"    {name} = {chain} else -1" for name in names) + "\n    return " + " + ".join(names)


def ifexp_test(n: int) -> str:
    """``if`` on conditional expressions nested n deep (chains of 1,000 for larger n): the test of
    each is another's branch, and each is a condition both as an ``or`` and as an expression."""
    lines = []
    for start in range(0, n, 1000):
        depth = min(1000, n - start)
        chain = " else ".join(f"x == {i} if x > {i} " for i in range(start, start + depth))
        lines.append(f"    if {chain} else x < 0:\n        y += 1")
    return "\n".join(lines) + "\n    return y"


def nested_ifs_in_loop(n: int) -> str:
    """A ``while`` on an ``and``/``or`` test around n / 20 groups of 20 ifs nested directly, each with
    an ``else``: each test is searched from the loop's, and each if's branches go round the loop."""
    lines = ["    while y < x and x > 0 or y < 1:", "        y += 1"]
    for _ in range(max(1, n // 20)):
        lines += ["    " * (k + 2) + f"if x > {k}:" for k in range(20)]
        lines.append("    " * 22 + "y += 2")
        for k in reversed(range(20)):
            lines += ["    " * (k + 2) + "else:", "    " * (k + 3) + f"y -= {k}"]
    return "\n".join(lines) + "\n    return y"


def straight_line(n: int) -> str:
    return "\n".join(f"    y = y * {i % 7 + 2} + x" for i in range(n)) + "\n    return y"


def many_try(n: int) -> str:
    unit = "    try:\n        y = y + x // {i}\n    except ZeroDivisionError:\n        y = -y"
    return "\n".join(unit.format(i=i % 5) for i in range(n)) + "\n    return y"


def nested_loops(n: int) -> str:
    lines = []
    for _ in range(max(1, n // 10)):
        for depth in range(10):
            lines.append("    " * (depth + 1) + f"for i{depth} in range(x):")
        lines.append("    " * 11 + "y += 1")
    return "\n".join(lines) + "\n    return y"


def bool_chain(n: int) -> str:
    ops = ("and", "or")
    cond = f" {ops[0]} ".join(
        "(" + f" {ops[1]} ".join(f"x > {i + k}" for k in range(5)) + ")" for i in range(0, n, 5))
    return f"    if {cond}:\n        y = 1\n    return y"


def value_or_of_ands(n: int) -> str:
    """``return (x > 0 and x > 1 and x > 2) or ...``: n / 3 groups of three tests."""
    groups = max(1, n // 3)
    return "    return " + " or ".join(
        "(" + " and ".join(f"x > {3 * g + k}" for k in range(3)) + ")" for g in range(groups))


def flat_and(n: int) -> str:
    return "    return " + " and ".join(f"x > {i}" for i in range(n))


def flat_and_values(n: int) -> str:
    """``return x[0] and x[1] and ...``: each operand is the value returned where it is false."""
    return "    return " + " and ".join(f"x[{i}]" for i in range(n))


def flat_or_test(n: int) -> str:
    return "    if " + " or ".join(f"x == {i}" for i in range(n)) + ":\n        y = 1\n    return y"


SHAPES = {
    f.__name__: f
    for f in (
        elif_chain,
        nested_ifexp,
        ifexp_chains,
        ifexp_test,
        nested_ifs_in_loop,
        straight_line,
        many_try,
        nested_loops,
        bool_chain,
        value_or_of_ands,
        flat_and,
        flat_and_values,
        flat_or_test,
    )
}


def one(shape: str, n: int) -> dict:
    """Decompile one generated function in this process; time and instruction count."""
    sys.path.insert(0, str(ROOT))
    import dis

    import depyf

    source = f"def f({ARGS}):\n    y = 0\n{SHAPES[shape](n)}\n"
    namespace: dict = {}
    try:
        exec(compile(source, f"<{shape} {n}>", "exec"), namespace)
    except (SyntaxError, RecursionError, MemoryError) as exc:
        return {"shape": shape, "n": n, "outcome": f"CPython does not compile it ({type(exc).__name__})"}
    code = namespace["f"].__code__
    instructions = sum(1 for _ in dis.get_instructions(code))
    start = time.process_time()
    try:
        depyf.decompile(code)
        outcome = "ok"
    except Exception as exc:  # a refusal is a result too
        outcome = f"{type(exc).__name__}: {str(exc)[:120]}"
    seconds = time.process_time() - start
    return {"shape": shape, "n": n, "instructions": instructions, "seconds": seconds,
            "us_per_instruction": 1e6 * seconds / instructions, "outcome": outcome}


def measure(shape: str, n: int, timeout: float) -> dict:
    command = [sys.executable, __file__, "--one", shape, str(n)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"shape": shape, "n": n, "outcome": f"timeout ({timeout:.0f} s)"}
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"shape": shape, "n": n, "outcome": f"failed: {done.stderr.strip()[-200:]}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per decompilation")
    parser.add_argument("--quick", action="store_true", help="sizes 100 and 1,000 only")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--one", nargs=2, metavar=("SHAPE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]))))
        return 0
    sizes = [100, 1000] if args.quick else [int(x) for x in args.sizes.split(",")]
    rows = []
    print(f"{'shape':<14} {'n':>6} {'instructions':>12} {'seconds':>9} {'us/instr':>9}  outcome")
    for shape in args.shapes.split(","):
        for n in sizes:
            row = measure(shape, n, args.timeout)
            rows.append(row)
            if "seconds" in row:
                print(f"{shape:<14} {n:>6} {row['instructions']:>12} {row['seconds']:>9.3f} "
                      f"{row['us_per_instruction']:>9.1f}  {row['outcome']}", flush=True)
            else:
                print(f"{shape:<14} {n:>6} {'':>12} {'':>9} {'':>9}  {row['outcome']}", flush=True)
    if args.json:
        table = [{"figure": f"{r['shape']} n={r['n']}",
                  "value": f"{r['us_per_instruction']:.1f} us/instr" if "seconds" in r else r["outcome"]}
                 for r in rows]
        args.json.write_text(
            json.dumps({"benchmark": "decompile_growth", "rows": rows, "table": table}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
