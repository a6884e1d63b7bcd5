"""Shrink a function the decompiler refuses to a small one refused the same way.

Random exploration (``scripts/explore.sh``) finds programs of a hundred lines; a corpus case
wants the few statements that matter. This removes statements, and replaces compound
statements by their bodies, one at a time, keeping each change while ``depyf.decompile`` still
fails with the same message (offsets and names taken out of it):

    python tools/reduce_case.py tests/decompiler/property_cases/function_<hash>.pysrc
    bash scripts/pyver 3.12 -- python tools/reduce_case.py CASE.pysrc [--function f]

The smallest source found is printed. Work on the CPython that fails: layouts differ.
"""

from __future__ import annotations

import argparse
import ast
import copy
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import depyf  # noqa: E402


def failure(source: str, name: str) -> str | None:
    """The decompiler's error for function ``name`` of ``source``, without offsets; None when it
    reads back (or the source no longer defines a function that compiles)."""
    namespace: dict = {}
    try:
        exec(compile(source, "<case>", "exec"), namespace)
        depyf.decompile(namespace[name])
    except depyf.DecompilationError as exc:
        return re.sub(r" in \S+ at offset \d+ \(\w+\)", "", str(exc))
    except Exception:
        return None
    return None


def _statement_lists(tree: ast.AST):
    """Every list of statements in ``tree`` (bodies, else clauses, handlers' bodies)."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                yield node, field


def _changes(tree: ast.Module) -> list[tuple[int, int, bool]]:
    """The changes to try, as (statement list, statement, replace by its body) in tree order:
    one statement dropped, or a compound statement replaced by its body."""
    found = []
    for index, (node, field) in enumerate(_statement_lists(tree)):
        stmts = getattr(node, field)
        for k, stmt in enumerate(stmts):
            if not (len(stmts) == 1 and isinstance(stmt, ast.Pass)):    # (dropped, it comes back)
                found.append((index, k, False))
            inner = getattr(stmt, "body", None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                found.append((index, k, True))
    return found


def _apply(tree: ast.Module, change: tuple[int, int, bool]) -> ast.Module:
    index, k, replace_by_body = change
    smaller = copy.deepcopy(tree)
    node, field = list(_statement_lists(smaller))[index]
    stmts = getattr(node, field)
    if replace_by_body:
        stmts[k:k + 1] = stmts[k].body
    else:
        del stmts[k]
        if not stmts:
            stmts.append(ast.Pass())
    return smaller


def reduce(source: str, name: str) -> str:
    """The smallest source found that fails as ``source`` does."""
    wanted = failure(source, name)
    if wanted is None:
        raise SystemExit(f"{name} reads back: nothing to reduce")
    tree = ast.parse(source)
    changed = True
    while changed:     # passes until one changes nothing
        changed = False
        tried = 0      # changes of this pass that did not fail alike: not tried again in it
        progress = True
        while progress:
            progress = False
            changes = _changes(tree)
            for k in range(tried, len(changes)):
                smaller = _apply(tree, changes[k])
                text = ast.unparse(ast.fix_missing_locations(smaller))
                if failure(text, name) == wanted:
                    tree, changed, progress = smaller, True, True
                    break
                tried = k + 1
    return f"# fails with: {wanted}\n" + ast.unparse(tree) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", type=Path, help="a .py or .pysrc file defining the function")
    parser.add_argument("--function", default="f", help="the function to reduce (default: f)")
    args = parser.parse_args()
    print(reduce(args.case.read_text(encoding="utf-8"), args.function))


if __name__ == "__main__":
    main()
