"""Prove that a change to the decompiler leaves its output alone: hash the decompiled source of every
function code object in the corpus and in the benchmark's stdlib modules, and compare with a saved run.

    python tools/decompile_golden.py --write before.json      # on the old code
    python tools/decompile_golden.py --check before.json      # on the new code: exit 1 on a difference

Each code object is decompiled with ``depyf.decompile`` (flow check on); its entry is the SHA-256 of
the source, or of the error's type and message when it is refused, so a change in what is refused
shows up as well. Hashes depend on the CPython version (the bytecode differs); compare runs of the
same interpreter only. String hashing is fixed (``PYTHONHASHSEED=0``, the script re-runs itself
with it) because sets of strings are shown in their iteration order.
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


def main(argv: list[str] | None = None) -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable, __file__, *(sys.argv[1:] if argv is None else argv)],
                  {**os.environ, "PYTHONHASHSEED": "0"})
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path, help="save the hashes here")
    group.add_argument("--check", type=Path, help="compare with hashes saved by --write")
    parser.add_argument("--corpus-only", action="store_true", help="skip the stdlib modules")
    args = parser.parse_args(argv)
    sources = corpus_sources()
    if not args.corpus_only:
        sources.update(module_sources(MODULES))
    now = {"python": sys.version.split()[0], "digests": digests(sources)}
    if args.write:
        args.write.write_text(json.dumps(now, indent=1, sort_keys=True))
        print(f"{len(now['digests'])} code objects hashed -> {args.write}")
        return 0
    saved = json.loads(args.check.read_text())
    if saved["python"] != now["python"]:
        print(f"warning: saved on Python {saved['python']}, checking on {now['python']}")
    old, new = saved["digests"], now["digests"]
    changed = sorted(k for k in old.keys() & new.keys() if old[k] != new[k])
    missing, added = sorted(old.keys() - new.keys()), sorted(new.keys() - old.keys())
    for label, keys in (("changed", changed), ("missing", missing), ("new", added)):
        for key in keys:
            print(f"{label}: {key}")
    same = len(old.keys() & new.keys()) - len(changed)
    print(f"{same} of {len(old)} code objects unchanged; {len(changed)} changed, "
          f"{len(missing)} missing, {len(added)} new")
    return 1 if changed or missing or added else 0


if __name__ == "__main__":
    raise SystemExit(main())
