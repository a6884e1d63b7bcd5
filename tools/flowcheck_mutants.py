"""Fault injection for the flow check: how much wrong code would it let through?

Every corpus function is decompiled, and its source is changed in the ways a control-flow
recovery goes wrong: the branches of an ``if`` swapped, a test negated, ``break`` read as
``continue``, a statement dropped, two statements swapped, the statement after an ``if`` read into
its branch or the last one of a branch read after it, the last statement of a loop body read after
the loop. With ``--values``, the changes are the ones a symbolic run of the stack goes wrong by
instead: two arguments of a call swapped, the operands of an operator or a comparison swapped, a
variable read in place of another, another callee called. Each changed source (a *mutant*)
that compiles into a drop-in code object and behaves differently on the function's corpus inputs
is wrong code; the flow check must refuse it. The
report counts, per kind of change, the mutants that behave differently and those of them the flow
check let through, and lists the ones it let through.

    python tools/flowcheck_mutants.py [--themes loops,branches] [--per-function 24] [--show 20] [--values]

The enumeration is fixed (no randomness): the same checkout gives the same report. Run it after
changing the flow check, and turn what it lets through into flow check tests.
"""

from __future__ import annotations

import argparse
import ast
import collections
import copy
import difflib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "decompiler"))

import corpus_harness  # noqa: E402

from depyf.decompiler import api  # noqa: E402
from depyf.decompiler.flowcheck import differences  # noqa: E402

# a broken mutant loop stops here (the corpus calls take microseconds)
corpus_harness.CALL_TIME_LIMIT_S = 0.5
# and one that grows a list without end raises MemoryError instead of exhausting the machine
_ADDRESS_SPACE = 4 << 30

_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.Return, ast.Raise,
           ast.Break, ast.Continue, ast.Pass)
_BODIES = ("body", "orelse", "finalbody")


def _statement_lists(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for field in _BODIES:
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body
        for part in getattr(node, "handlers", []) + getattr(node, "cases", []):
            yield part.body


def _mutations(tree: ast.Module) -> Iterator[tuple[str, callable]]:
    """(kind, change) pairs; each change mutates a fresh copy of ``tree`` found by position."""
    # nodes are addressed by their index in ast.walk order, the same in a deep copy
    for k, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.If) and node.orelse:
            yield "swap branches", _at(k, _swap_branches)
        if isinstance(node, (ast.If, ast.While)):
            yield "negate test", _at(k, _negate_test)
        if isinstance(node, ast.Break):
            yield "break as continue", _replace_at(k, ast.Continue)
        if isinstance(node, ast.Continue):
            yield "continue as break", _replace_at(k, ast.Break)
    for j, body in enumerate(_statement_lists(tree)):
        for i, stmt in enumerate(body):
            simple_pair = i + 1 < len(body) and isinstance(stmt, _SIMPLE) and isinstance(body[i + 1], _SIMPLE)
            if len(body) > 1 and isinstance(stmt, _SIMPLE):
                yield "drop statement", _in_list(j, i, _drop)
            if simple_pair:
                yield "swap statements", _in_list(j, i, _swap_with_next)
            if isinstance(stmt, ast.If) and i + 1 < len(body):
                yield "next statement into the branch", _in_list(j, i, _next_into_branch)
            if isinstance(stmt, ast.If) and len(stmt.body) > 1:
                yield "last of the branch after it", _in_list(j, i, _last_out_of_body)
            if isinstance(stmt, (ast.For, ast.While)) and len(stmt.body) > 1:
                yield "last of the loop after it", _in_list(j, i, _last_out_of_body)


# operators whose operands cannot be swapped without changing the value (in general)
_ORDERED_OPERATORS = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift, ast.MatMult)
_ORDERED_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn)


def _value_mutations(tree: ast.Module) -> Iterator[tuple[str, callable]]:
    """(kind, change) pairs that compute another value along the same paths."""
    nodes = list(ast.walk(tree))
    variables = sorted({n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                       | {a.arg for n in nodes if isinstance(n, ast.arguments)
                          for a in n.posonlyargs + n.args + n.kwonlyargs})
    callees = sorted({n.func.id for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)})
    for k, node in enumerate(nodes):
        if isinstance(node, ast.Call) and len(node.args) > 1 \
                and not any(isinstance(a, ast.Starred) for a in node.args[:2]) \
                and ast.dump(node.args[0]) != ast.dump(node.args[1]):
            yield "swap call arguments", _at(k, _swap_arguments)
        if isinstance(node, ast.BinOp) and isinstance(node.op, _ORDERED_OPERATORS) \
                and ast.dump(node.left) != ast.dump(node.right):
            yield "swap operands", _at(k, _swap_operands)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 \
                and isinstance(node.ops[0], _ORDERED_COMPARISONS) \
                and ast.dump(node.left) != ast.dump(node.comparators[0]):
            yield "swap operands", _at(k, _swap_compared)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in variables \
                and len(variables) > 1:
            other = variables[(variables.index(node.id) + 1) % len(variables)]
            yield "another variable read", _at(k, _renamed(other))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(callees) > 1:
            other = callees[(callees.index(node.func.id) + 1) % len(callees)]
            yield "another callee", _at(k, lambda call, other=other: _renamed(other)(call.func))


def _swap_arguments(node: ast.Call) -> None:
    node.args[0], node.args[1] = node.args[1], node.args[0]


def _swap_operands(node: ast.BinOp) -> None:
    node.left, node.right = node.right, node.left


def _swap_compared(node: ast.Compare) -> None:
    node.left, node.comparators[0] = node.comparators[0], node.left


def _renamed(name: str) -> callable:
    def change(node: ast.Name) -> None:
        node.id = name
    return change


def _swap_branches(node: ast.If) -> None:
    node.body, node.orelse = node.orelse, node.body


def _negate_test(node: ast.If | ast.While) -> None:
    node.test = ast.UnaryOp(ast.Not(), node.test)


def _drop(body: list, i: int) -> None:
    body.pop(i)


def _swap_with_next(body: list, i: int) -> None:
    body[i], body[i + 1] = body[i + 1], body[i]


def _next_into_branch(body: list, i: int) -> None:
    body[i].body.append(body.pop(i + 1))


def _last_out_of_body(body: list, i: int) -> None:
    body.insert(i + 1, body[i].body.pop())


def _at(k: int, change) -> callable:
    def apply(tree: ast.Module) -> None:
        change(list(ast.walk(tree))[k])
    return apply


def _replace_at(k: int, new_type: type) -> callable:
    def apply(tree: ast.Module) -> None:
        old = list(ast.walk(tree))[k]
        for lst in _statement_lists(tree):
            for i, stmt in enumerate(lst):
                if stmt is old:
                    lst[i] = new_type()
                    return
    return apply


def _in_list(j: int, i: int, change) -> callable:
    def apply(tree: ast.Module) -> None:
        change(list(_statement_lists(tree))[j], i)
    return apply


def check_function(entry, per_function: int, values: bool = False) -> list[tuple[str, bool, str]]:
    """(kind, caught, mutant source) for each mutant of ``entry`` that behaves differently."""
    code = entry.func.__code__
    try:
        source, constants = api.code_to_source_and_constants(code)
        api._raise_if_flow_differs(code, api._rebuild(code, source, constants, None))
    except Exception:
        return []       # refused or not rebuildable: nothing verified to mutate
    tree = ast.parse(source)
    found = []
    mutations = _value_mutations(tree) if values else _mutations(tree)
    for kind, change in list(mutations)[:per_function]:
        mutant = copy.deepcopy(tree)
        try:
            change(mutant)
            ast.fix_missing_locations(mutant)
            text = ast.unparse(mutant)
            if text == source:
                continue
            new_code = api._rebuild(code, text, constants, None)
        except Exception:
            continue
        candidate = corpus_harness.with_code(entry.func, new_code)
        try:
            if not corpus_harness.compare_functions(entry.func, candidate):
                continue        # the same on every corpus input: not known to be wrong
        except Exception:
            pass                # failing to even run it is behaving differently
        try:
            caught = bool(differences(code, new_code))
        except Exception:
            caught = True       # the check refuses what it cannot follow
        found.append((kind, caught, _changed_lines(source, text)))
    return found


def _changed_lines(before: str, after: str) -> str:
    """The lines a mutation changed, as a unified diff without its header."""
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=1)
    return "\n".join(list(diff)[2:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--themes", help="comma-separated corpus themes (default: all)")
    parser.add_argument("--per-function", type=int, default=24, help="mutants tried per function at most")
    parser.add_argument("--show", type=int, default=20, help="mutants let through to list")
    parser.add_argument("--values", action="store_true",
                        help="change values (arguments, operands, names) instead of control flow")
    args = parser.parse_args(argv)
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (_ADDRESS_SPACE, hard))
    except (ImportError, ValueError, OSError):
        pass
    themes = set(args.themes.split(",")) if args.themes else None
    entries = [e for e in corpus_harness.all_entries() if themes is None or e.theme in themes]
    started = time.process_time()
    wrong: collections.Counter = collections.Counter()
    through: collections.Counter = collections.Counter()
    missed = []
    for entry in entries:
        for kind, caught, text in check_function(entry, args.per_function, args.values):
            wrong[kind] += 1
            if not caught:
                through[kind] += 1
                missed.append((entry.test_id, kind, text))
    print(f"CPython {sys.version.split()[0]}: {len(entries)} corpus functions, "
          f"{time.process_time() - started:.0f} s of CPU")
    print(f"{'change':34} {'wrong mutants':>14} {'let through':>12}")
    for kind in sorted(wrong):
        print(f"{kind:34} {wrong[kind]:>14} {through[kind]:>12}")
    print(f"{'all':34} {sum(wrong.values()):>14} {sum(through.values()):>12}")
    for test_id, kind, text in missed[:args.show]:
        print(f"\n--- {test_id}: {kind}\n{text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
