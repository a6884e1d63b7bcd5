"""The normalisation layer's contract on the running CPython, whatever its version.

Every code object of the test corpus and of a sample of the running version's standard library
normalises without error into the shared model: only opnames the symbolic executor knows (or the
control instructions the structurer handles), jump targets and exception handlers that are
instructions of the list, and synthetic comprehension code objects (3.12+) that normalise too.
"""

from __future__ import annotations

import sys
import types
import warnings
from pathlib import Path

import pytest

from depyf.decompiler import coverage
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.executor import Executor
from depyf.decompiler.instructions import CONDITIONAL_JUMPS, normalize
from depyf.decompiler.versions import v3_11

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
CONTROL = {"JUMP", "FOR_ITER", "ASYNC_FOR_ITER", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"}
# The model: what 3.11's normalisation passes through or creates, and what the executor has semantics for.
MODEL_OPNAMES = frozenset(
    {name[3:] for name in dir(Executor) if name.startswith("op_")}
    | set(v3_11._SAME)
    | CONDITIONAL_JUMPS
    | CONTROL
    | {"CALL_KW", "YIELD_FROM", "AWAIT"}
    # PEP 750 template strings (3.14+) extend the model; the executor has no semantics yet
    | {"BUILD_INTERPOLATION", "BUILD_TEMPLATE"}
)
# Stdlib modules with a bit of everything (loops, comprehensions, with, try, generators, classes).
STDLIB_SAMPLE = ("textwrap", "json/decoder", "json/encoder", "difflib", "contextlib", "functools",
                 "argparse", "string", "shlex", "fnmatch", "heapq", "bisect", "base64", "copy", "pprint")
# CPython 3.10 exceptions and match are not normalised yet (see depyf/decompiler/versions/v3_10/).
KNOWN_GAPS_3_10 = ("SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH", "MATCH_", "GET_LEN", "ROT_N",
                   "COPY_DICT_WITHOUT_KEYS", "POP_EXCEPT", "RERAISE", "WITH_EXCEPT_START",
                   "JUMP_IF_NOT_EXC_MATCH", "POP_BLOCK", "END_ASYNC_FOR", "BEFORE_ASYNC_WITH")


def _code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _sources():
    for path in sorted(CORPUS_DIR.glob("*.py")):
        yield str(path), path.read_bytes()
    wanted = {f"{name}.py" for name in STDLIB_SAMPLE}
    for name, source in coverage.stdlib_sources():
        if any(name.replace("\\", "/").endswith("/" + w) for w in wanted):
            yield name, source


def _all_code():
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, source in _sources():
            try:
                module = compile(source, name, "exec", dont_inherit=True)
            except SyntaxError:
                continue  # e.g. a py311_ corpus module on 3.10 is filtered by name elsewhere
            found.extend(_code_objects(module))
    return found


CODE = _all_code()


def _known_gap(error: DecompilationError) -> bool:
    return sys.version_info[:2] == (3, 10) and (error.opname or "").startswith(KNOWN_GAPS_3_10)


def _check(code: types.CodeType, problems: list[str], seen: set[int]) -> None:
    qualname = getattr(code, "co_qualname", code.co_name)
    try:
        instrs, table = normalize(code)
    except DecompilationError as exc:
        if not _known_gap(exc):
            problems.append(f"{qualname}: {exc}")
        return
    offsets = {ins.offset for ins in instrs}
    end = max(offsets, default=0) + 2
    for ins in instrs:
        if ins.opname not in MODEL_OPNAMES:
            problems.append(f"{qualname}: {ins.opname} at {ins.offset} is not a model instruction")
        if ins.target is not None and ins.target not in offsets and ins.target < end:
            problems.append(
                f"{qualname}: {ins.opname} at {ins.offset} jumps to {ins.target}, not an instruction"
            )
        if isinstance(ins.argval, types.CodeType) and id(ins.argval) not in seen:
            seen.add(id(ins.argval))
            if ins.argval.co_name in ("<listcomp>", "<setcomp>", "<dictcomp>"):
                _check(ins.argval, problems, seen)  # synthetic (3.12+) or real (3.10, 3.11)
    for entry in table:
        if entry.target not in offsets:
            problems.append(f"{qualname}: handler {entry.target} is not an instruction")
        if not entry.start < entry.end or entry.depth < 0:
            problems.append(f"{qualname}: bad exception entry {entry}")


def test_there_is_code_to_check():
    assert len(CODE) > 1000


@pytest.mark.parametrize("chunk", range(4))
def test_every_code_object_normalises_into_the_model(chunk: int):
    problems: list[str] = []
    seen: set[int] = set()
    for code in CODE[chunk::4]:
        _check(code, problems, seen)
    assert not problems, f"{len(problems)} problems on CPython {sys.version.split()[0]}:\n" + "\n".join(
        problems[:40]
    )
