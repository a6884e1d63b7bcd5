"""Prove that a change to the decompiler leaves its output alone: hash the decompiled source of every
function code object in the corpus and in the benchmark's stdlib modules, and compare with a saved run.

    python tools/decompile_golden.py --write before.json      # on the old code
    python tools/decompile_golden.py --check before.json      # on the new code: exit 1 on a difference

The checked-in golden files (``tests/decompiler/golden/<major>.<minor>.json``, compared by
``tests/decompiler/test_golden.py``) hold the corpus and a fixed sample of stdlib modules
(``SAMPLE_MODULES``); after an intended change of the output, regenerate the running
interpreter's file with

    python tools/decompile_golden.py --write-golden           # or: bash scripts/pyver 3.X -- python ...

Each code object is decompiled with ``depyf.decompile`` (flow check on); its entry is the SHA-256 of
the source, or of the error's type and message when it is refused, so a change in what is refused
shows up as well. Hashes depend on the CPython version (the bytecode differs); compare runs of the
same interpreter only. The stdlib's own source changes between patch releases, so against a file
written by another patch release only the corpus is compared. String hashing is fixed
(``PYTHONHASHSEED=0``, the script re-runs itself with it) because sets of strings are shown in their
iteration order.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from decompile_speed import MODULES, function_codes, module_sources  # noqa: E402

import depyf  # noqa: E402

CORPUS_DIR = ROOT / "tests" / "decompiler" / "corpus"
GOLDEN_DIR = ROOT / "tests" / "decompiler" / "golden"
# The stdlib modules of the golden files: varied code (classes, generators, comprehensions, try and
# with statements), small enough that the check stays well under a minute.
SAMPLE_MODULES = ["textwrap", "shlex", "fractions", "heapq", "bisect", "colorsys", "string", "csv",
                  "calendar", "copy", "fnmatch", "queue"]
REGENERATE = "python tools/decompile_golden.py --write-golden"


def corpus_sources() -> dict[str, tuple[str, str]]:
    """name -> (path, source) for each corpus file this interpreter can compile."""
    out = {}
    for path in sorted([*CORPUS_DIR.glob("*.py"), *CORPUS_DIR.glob("*.pysrc")]):
        source = path.read_text(encoding="utf-8")
        try:
            compile(source, str(path), "exec", dont_inherit=True)
        except SyntaxError:
            continue  # syntax of a newer CPython
        out[f"corpus/{path.name}"] = (str(path), source)
    return out


def outcome(code: types.CodeType) -> str:
    """The decompiled source, or the refusal, of one code object."""
    try:
        return depyf.decompile(code)
    except Exception as exc:  # a refusal is an outcome too
        return f"!{type(exc).__name__}: {exc}"


def digests(sources: dict[str, tuple[str, str]]) -> dict[str, str]:
    """'module:line qualname#k' -> SHA-256 of the outcome, for every function code object."""
    out: dict[str, str] = {}
    for name, (path, source) in sources.items():
        for code in function_codes(compile(source, path, "exec", dont_inherit=True)):
            key = f"{name}:{code.co_firstlineno} {getattr(code, 'co_qualname', code.co_name)}"
            k = 0
            while f"{key}#{k}" in out:
                k += 1
            out[f"{key}#{k}"] = hashlib.sha256(outcome(code).encode()).hexdigest()
    return out


def golden_path() -> Path:
    return GOLDEN_DIR / f"{sys.version_info.major}.{sys.version_info.minor}.json"


def compare(saved: dict, now: dict) -> tuple[bool, list[str]]:
    """Whether ``now`` has the outcomes of ``saved``, and the lines that say what differs.

    Against a run of another patch release only the corpus entries count (the stdlib source differs)."""
    old, new = saved["digests"], now["digests"]
    lines = []
    if saved["python"] != now["python"]:
        if saved["python"].rsplit(".", 1)[0] != now["python"].rsplit(".", 1)[0]:
            lines.append(f"warning: saved on Python {saved['python']}, checking on {now['python']}")
        else:
            lines.append(f"note: saved on Python {saved['python']}, checking on {now['python']}: "
                         "only the corpus is compared")
            old = {k: v for k, v in old.items() if k.startswith("corpus/")}
            new = {k: v for k, v in new.items() if k.startswith("corpus/")}
    changed = sorted(k for k in old.keys() & new.keys() if old[k] != new[k])
    missing, added = sorted(old.keys() - new.keys()), sorted(new.keys() - old.keys())
    for label, keys in (("changed", changed), ("missing", missing), ("new", added)):
        lines.extend(f"{label}: {key}" for key in keys)
    same = len(old.keys() & new.keys()) - len(changed)
    lines.append(f"{same} of {len(old)} code objects unchanged; {len(changed)} changed, "
                 f"{len(missing)} missing, {len(added)} new")
    return not (changed or missing or added), lines


def main(argv: list[str] | None = None) -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable, __file__, *(sys.argv[1:] if argv is None else argv)],
                  {**os.environ, "PYTHONHASHSEED": "0"})
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path, help="save the hashes here")
    group.add_argument("--check", type=Path, help="compare with hashes saved by --write")
    group.add_argument("--write-golden", action="store_true",
                       help="write this interpreter's golden file (corpus and the stdlib sample)")
    group.add_argument(
        "--check-golden", action="store_true", help="compare with this interpreter's golden file"
    )
    parser.add_argument("--corpus-only", action="store_true", help="skip the stdlib modules")
    args = parser.parse_args(argv)
    golden = args.write_golden or args.check_golden
    sources = corpus_sources()
    if not args.corpus_only:
        sources.update(module_sources(SAMPLE_MODULES if golden else MODULES))
    now = {"python": sys.version.split()[0], "digests": digests(sources)}
    target = args.write or args.check or golden_path()
    if args.write or args.write_golden:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"{len(now['digests'])} code objects hashed -> {target}")
        return 0
    if not target.is_file():
        print(f"no golden file {target} for Python {now['python']}; write it with {REGENERATE}")
        return 2
    ok, lines = compare(json.loads(target.read_text()), now)
    print("\n".join(lines))
    if not ok and args.check_golden:
        print(f"the decompiled output of the code objects above differs from {target}; if the change is "
              f"intended, regenerate the file with {REGENERATE} (on each CPython: bash scripts/pyver 3.X -- "
              "python tools/decompile_golden.py --write-golden) and commit it")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
