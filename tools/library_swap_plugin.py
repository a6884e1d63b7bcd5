"""pytest plugin of ``tools/library_swap.py``: swaps a library's code in before the tests are
collected (mode ``swap``) and records which tests pass.

Configured by the environment that ``library_swap.py`` sets: ``DEPYF_LIBSWAP_MODE`` (baseline or
swap), ``DEPYF_LIBSWAP_PACKAGE`` and ``DEPYF_LIBSWAP_OUT`` (where the JSON result goes).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import pkgutil
import sys
from pathlib import Path

_failed: set[str] = set()
_seen: set[str] = set()
_why: dict[str, str] = {}   # why each test that did not pass did not: its error's end, or the skip reason
_result: dict = {}
_WHY_CHARS = 2000           # the end of a traceback names the error and the line that raised it


def _is_test_module(name: str) -> bool:
    parts = name.split(".")
    return any(p in ("tests", "test", "testing", "conftest") or p.startswith("test_") for p in parts)


def library_version(module) -> str:
    """The module's ``__version__``, else its distribution's (tornado, rich and werkzeug have none)."""
    version = getattr(module, "__version__", None)
    if isinstance(version, str):
        return version
    try:
        return importlib.metadata.version(module.__name__)
    except Exception:  # no distribution of that name: a package installed another way
        return "?"


def _library_modules(package: str) -> tuple[list, list[str]]:
    """Every importable non-test module of ``package``; the names of those that fail to import."""
    root = importlib.import_module(package)
    modules, not_imported = [root], []
    # (not pkgutil.walk_packages: a package whose import raises anything but ImportError, such as
    # pytest's Skipped from an ``importorskip`` in its __init__, would end the walk)
    pending = [(getattr(root, "__path__", None), package)]
    while pending:
        paths, prefix = pending.pop()
        if paths is None:
            continue
        for info in pkgutil.iter_modules(paths, prefix=prefix + "."):
            if _is_test_module(info.name) or info.name.endswith(".__main__"):
                continue    # (importing a package's __main__ runs its program)
            try:
                module = importlib.import_module(info.name)
            except BaseException:  # optional dependencies missing, platform-only modules
                not_imported.append(info.name)
                continue
            modules.append(module)
            if info.ispkg:
                pending.append((getattr(module, "__path__", None), info.name))
    # Only modules with Python source can be swapped (extension modules have no code objects).
    return [m for m in modules if getattr(m, "__spec__", None) and m.__spec__.origin
            and m.__spec__.origin.endswith(".py")], not_imported


def pytest_configure(config) -> None:
    package = os.environ["DEPYF_LIBSWAP_PACKAGE"]
    mod = importlib.import_module(package)
    _result["version"] = library_version(mod)
    if os.environ.get("DEPYF_LIBSWAP_MODE") != "swap":
        return
    from swapping import swap_modules

    modules, not_imported = _library_modules(package)
    swap = swap_modules(modules, identity=os.environ.get("DEPYF_LIBSWAP_IDENTITY") == "1")
    swap["modules"] = len(modules)
    swap["not_imported"] = not_imported
    _result["swap"] = swap


def pytest_runtest_logreport(report) -> None:
    _seen.add(report.nodeid)
    if report.failed or report.skipped:  # skipped and xfailed tests do not count as passing
        _failed.add(report.nodeid)
        _why.setdefault(report.nodeid, _why_not_passed(report))


def _why_not_passed(report) -> str:
    """The first reason a test did not pass (setup, call or teardown), kept so that a test that
    fails only after the swap can be told apart from a flaky one without rerunning it."""
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        kind = "xfailed" if hasattr(report, "wasxfail") else "skipped"
        return f"{kind} in {report.when}: {reason}"[:300]
    text = report.longreprtext or ""
    return f"failed in {report.when}:\n" + text[-_WHY_CHARS:]


def pytest_sessionfinish(session, exitstatus) -> None:
    _result["passed"] = sorted(_seen - _failed)
    _result["failed"] = len(_failed)
    _result["why_not_passed"] = _why
    Path(os.environ["DEPYF_LIBSWAP_OUT"]).write_text(json.dumps(_result))
    sys.stdout.flush()
