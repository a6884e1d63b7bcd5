"""Swap decompiled-and-recompiled code into live modules: the shared core of the swap proofs.

``tools/stdlib_swap.py`` (CPython's own tests) and ``tools/library_swap.py`` (a third-party
library's own tests) both recompile every function of some modules with ``depyf.recompile`` and
put the new code into every live function and into later fresh imports of those modules; the
tests that then run exercise the recompiled code. Only the standard library is used here, so any
CPython 3.10+ can run it (``depyf`` is imported from this checkout).
"""

from __future__ import annotations

import ast
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# depyf's flow check is on, as for users: a function whose recompiled flow differs counts as not
# recompiled. DEPYF_VERIFY_FLOW=0 turns it off, to see what the unchecked output would do.
VERIFY_FLOW = os.environ.get("DEPYF_VERIFY_FLOW", "1") != "0"

CO_NEWLOCALS = 0x02
_COMPREHENSIONS = {"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"}


def units_of(code) -> list:
    """Function code objects defined directly in a module or class body (recursing into class bodies)."""
    import types

    found = []
    for const in code.co_consts:
        if not isinstance(const, types.CodeType) or const.co_name in _COMPREHENSIONS:
            continue
        if _is_generic_scope(const):
            # ``def f[T]``/``class C[T]`` (3.12+): the scope only wraps the statement; its
            # functions (and class body) are the units
            found.extend(units_of(const))
        elif any(n.startswith(".") for n in const.co_varnames[:const.co_argcount]):
            continue  # a scope the compiler makes for a statement (3.14's lazy ``type X = ...`` value)
        elif const.co_flags & CO_NEWLOCALS:
            found.append(const)
        else:  # a class body
            found.extend(units_of(const))
    return found


def _module_code(spec):
    """The code object of a module's source. A loader without ``get_code`` (pytest's assertion
    rewriter, for modules a package registers for rewriting) gets the source compiled here: its
    functions then match no live function (those run the rewritten code) and are left alone."""
    get_code = getattr(spec.loader, "get_code", None)
    if get_code is not None:
        return get_code(spec.name)
    if not spec.origin or not spec.origin.endswith(".py"):
        return None
    with open(spec.origin, "rb") as source:
        return compile(source.read(), spec.origin, "exec", dont_inherit=True)


def recompile_modules(modules: list, identity: bool = False) -> dict:
    """Recompile every function of ``modules`` (nothing is swapped): the replacements, the
    failures, the counts, and the slowest functions with their seconds."""
    recompile = _identity_recompile if identity else _depyf_recompile()
    replacements: dict = {}
    failures = []
    # equal_codes: functions whose code equals one met before (code objects compare by content,
    # not by file: two modules may hold the same method); one replacement serves them all
    counts = {"found": 0, "decompiled": 0, "recompiled": 0, "equal_codes": 0}
    files = set()
    timings = []
    started = time.perf_counter()
    for mod in modules:
        spec = mod.__spec__
        module_code = _module_code(spec)
        if module_code is None:
            continue
        files.add(module_code.co_filename)
        for code in units_of(module_code):
            counts["found"] += 1
            began = time.perf_counter()
            new_code, stage, error = recompile(code)
            timings.append((time.perf_counter() - began, f"{spec.name}.{_qualname(code)}"))
            if new_code is None:
                counts["decompiled"] += stage != "decompile"
                failures.append({"qualname": _qualname(code), "line": code.co_firstlineno, "stage": stage,
                                 "error": error})
                continue
            counts["decompiled"] += 1
            counts["recompiled"] += 1
            counts["equal_codes"] += code in replacements
            replacements[code] = new_code
    slowest = [(round(t, 3), name) for t, name in sorted(timings, reverse=True)[:5]]
    return {**counts, "replacements": replacements, "files": files, "failures": failures,
            "decompile_seconds": time.perf_counter() - started, "slowest": slowest}


def swap_modules(modules: list, identity: bool) -> dict:
    """Recompile every function of ``modules``, then put the new code into every live function."""
    import gc
    import types

    done = recompile_modules(modules, identity)
    replacements, failures = done.pop("replacements"), done["failures"]
    files = done.pop("files")
    # Everything is recompiled before anything is swapped: depyf itself uses some of these modules.
    swapped_units = set()
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and obj.__code__ in replacements:
            original = obj.__code__
            try:
                obj.__code__ = replacements[original]
            except ValueError as exc:  # free variable count differs: the recompiled code cannot stand in
                failures.append({"qualname": _qualname(original), "line": original.co_firstlineno,
                                 "stage": "swap", "error": str(exc)})
                continue
            swapped_units.add(original)
    _install_load_hook(files, replacements)
    done["swapped"] = len(swapped_units)
    done["not_live"] = len([c for c in replacements if c not in swapped_units])
    return done


def _depyf_recompile():
    sys.path.insert(0, str(ROOT))
    import depyf

    def recompile(code):
        try:
            return depyf.recompile(code, verify=VERIFY_FLOW).code, "", ""
        except Exception as exc:  # recorded per function
            error = f"{type(exc).__name__}: {exc}"
        try:
            depyf.decompile(code)
            stage = "recompile"
        except Exception as exc:
            stage, error = "decompile", f"{type(exc).__name__}: {exc}"
        return None, stage, error.splitlines()[0][:500] if error else error

    return recompile


def _identity_recompile(code):
    """Harness check: the real source instead of decompiled source, through depyf's rebuild step.

    Functions named in ``DEPYF_SWAP_MUTATE`` (comma-separated) get ``raise RuntimeError`` as their
    first statement, so a test can check that the harness notices broken code.
    """
    import inspect
    import textwrap

    sys.path.insert(0, str(ROOT))
    from depyf.decompiler.rebuild import rebuild_code

    try:
        source = textwrap.dedent(inspect.getsource(code))
        if code.co_name in os.environ.get("DEPYF_SWAP_MUTATE", "").split(","):
            tree = ast.parse(source)
            tree.body[0].body.insert(0, ast.parse("raise RuntimeError('mutant')").body[0])
            source = ast.unparse(tree)
        return rebuild_code(code, source), "", ""
    except Exception as exc:
        return None, "recompile", f"{type(exc).__name__}: {exc}".splitlines()[0]


def _install_load_hook(files: set, replacements: dict) -> None:
    """Fresh imports of the swapped modules get the recompiled code too."""
    import importlib.machinery

    loader_cls = importlib.machinery.SourceFileLoader
    original_get_code = loader_cls.get_code

    def get_code(self, fullname):
        code = original_get_code(self, fullname)
        if code is not None and code.co_filename in files:
            code = _replace_consts(code, replacements)
        return code

    loader_cls.get_code = get_code


def _replace_consts(code, replacements: dict):
    import types

    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const in replacements:
                const = replacements[const]
            elif not const.co_flags & CO_NEWLOCALS or _is_generic_scope(const):
                const = _replace_consts(const, replacements)
        consts.append(const)
    return code.replace(co_consts=tuple(consts))


def _is_generic_scope(code) -> bool:
    return code.co_name.startswith("<generic parameters of ")


def _qualname(code) -> str:
    return getattr(code, "co_qualname", code.co_name)


def print_problems(name: str, report: dict, most: int = 20) -> None:
    """What went wrong in one swap report: an unfinished run, functions not swapped, tests that
    passed before the swap and fail after (at most ``most`` of each)."""
    for key in ("baseline_problem", "swap_problem"):
        if key in report:
            print(f"\n{name}: {report[key]}")
    if report["failures"]:
        print(f"\n{name}: {len(report['failures'])} functions not swapped:")
        for f in report["failures"][:most]:
            print(f"  - {f['qualname']} (line {f['line']}) [{f['stage']}] {f['error']}")
    if report["regressions"]:
        print(f"\n{name}: {len(report['regressions'])} tests passed before the swap and fail after:")
        reasons = report.get("regression_reasons", {})
        for test_id in report["regressions"][:most]:
            print(f"  - {test_id}")
            if test_id in reasons:  # the end of the error: its last lines name it
                print("    " + "\n    ".join(reasons[test_id].strip().splitlines()[-6:]))
