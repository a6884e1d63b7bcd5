"""Version knowledge lives in ``depyf.decompiler.versions`` (opcode translation), in
``depyf.decompiler.layout`` (the passes that undo one compiler's layout quirks) and in the
``Features`` flags each version module exports. The structuring (``structure/``), the graph
modules (``cfg``, ``dominators``), the conditions, ``cleanup`` and the pattern reader read one
instruction model: none of them names a CPython version, in code, strings or comments; none imports
a version module or tests ``sys.version_info``; none matches an opname that only some compilers emit
(the normalisation turns those into the model's). The layout passes read the model too: they may
say which compiler lays code out how, but import no version module, test no ``sys.version_info``
and match no raw opname."""

from __future__ import annotations

import ast
import re
from pathlib import Path

DECOMPILER = Path(__file__).resolve().parent.parent / "depyf" / "decompiler"
VERSION_BLIND = ["structure", "patterns", "cfg.py", "dominators.py", "cleanup.py"]
# read the model, and may name the compilers whose layout they undo
MODEL_ONLY = ["layout"]

# ``3.12``, ``3.12+``, ``v3_12`` (a module name), ``(3, 12)`` (a version_info tuple), ``py312``;
# in code, strings and comments alike
_VERSION = re.compile(r"\b3\.1\d\b|(?<![\d.])3_1\d\b|\(3,\s*1\d\)|\bpy3\d{1,2}\b|\bPY3")
_VERSION_ATTRIBUTES = {"version_info", "hexversion", "version"}
# raw opnames the normalisation replaces (jump directions, constant returns, calls and blocks of
# some compilers); the model has ``JUMP``, ``POP_JUMP_IF_*``, ``LOAD_CONST`` + ``RETURN_VALUE``...
_RAW_OPNAME = re.compile(
    r"^(POP_JUMP_(FORWARD|BACKWARD)_IF_\w+|JUMP_(FORWARD|BACKWARD\w*|ABSOLUTE|NO_INTERRUPT)|RETURN_CONST"
    r"|END_FOR|END_SEND|TO_BOOL|NOT_TAKEN|PRECALL|RESUME|KW_NAMES|CALL_METHOD|LOAD_METHOD|CALL_FUNCTION\w*"
    r"|SETUP_(FINALLY|WITH|ASYNC_WITH|LOOP|EXCEPT)|POP_BLOCK|BEGIN_FINALLY|DUP_TOP\w*|ROT_\w+"
    r"|INPLACE_\w+|JUMP_IF_NOT_EXC_MATCH|\w+_BORROW\w*|LOAD_FAST_LOAD_FAST|STORE_FAST_\w+)$"
)


def version_names(source: str, *, prose: bool = True) -> list[str]:
    """Where ``source`` names a CPython version: ``line: what``; with ``prose`` False, only in code
    (version tests, imports of version modules, raw opnames), not a version number in a docstring
    or a comment."""
    found = []
    for m in _VERSION.finditer(source) if prose else ():
        line = source.count("\n", 0, m.start()) + 1
        found.append(f"{line}: {m.group()}")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in _VERSION_ATTRIBUTES \
                and isinstance(node.value, ast.Name) and node.value.id == "sys":
            found.append(f"{node.lineno}: sys.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module and (
                node.module.startswith("depyf.decompiler.versions")
                or node.module == "sys" and {a.name for a in node.names} & _VERSION_ATTRIBUTES):
            found.append(f"{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.ImportFrom) and node.module == "depyf.decompiler" \
                and any(a.name == "versions" for a in node.names):
            found.append(f"{node.lineno}: from depyf.decompiler import versions")
        elif isinstance(node, ast.Import) and any(a.name.startswith("depyf.decompiler.versions")
                                                  for a in node.names):
            found.append(f"{node.lineno}: import depyf.decompiler.versions")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and _RAW_OPNAME.match(node.value):
            found.append(f"{node.lineno}: {node.value!r}")
    return found


def _modules(names: list[str] = VERSION_BLIND) -> list[Path]:
    out = []
    for name in names:
        path = DECOMPILER / name
        out.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return out


def test_the_structuring_names_no_cpython_version():
    modules = _modules()
    assert DECOMPILER / "structure" / "conditions.py" in modules and DECOMPILER / "cfg.py" in modules
    found = {str(p.relative_to(DECOMPILER)): version_names(p.read_text(encoding="utf-8")) for p in modules}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_the_layout_passes_read_the_model_only():
    modules = _modules(MODEL_ONLY)
    assert DECOMPILER / "layout" / "copied_tails.py" in modules
    found = {str(p.relative_to(DECOMPILER)): version_names(p.read_text(encoding="utf-8"), prose=False)
             for p in modules}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_each_way_of_naming_a_version_is_reported():
    assert version_names("import sys\nif sys.version_info >= (3, 12):\n    pass\n") == [
        "2: (3, 12)", "2: sys.version_info"]
    assert version_names("x = 1  # 3.13+ leaves jumps out\n") == ["1: 3.13"]
    assert version_names('"""What 3_10 copies."""\n') == ["1: 3_10"]
    assert version_names("from depyf.decompiler.versions import v3_12\n") == [
        "1: 3_12", "1: from depyf.decompiler.versions import ..."]
    assert version_names("from depyf.decompiler import versions\n") == [
        "1: from depyf.decompiler import versions"]
    assert version_names("import sys\nNEW = sys.hexversion\n") == ["2: sys.hexversion"]
    assert version_names('if op == "JUMP_BACKWARD":\n    pass\n') == ["1: 'JUMP_BACKWARD'"]
    assert version_names('if op in ("JUMP", "FOR_ITER", "SETUP_ANNOTATIONS"):\n    pass\n') == []
    # in code only: a docstring may say which compiler lays code out so
    assert version_names('"""3.10 copies it."""\nimport sys\nOLD = sys.version_info < (3, 11)\n',
                         prose=False) == ["3: sys.version_info"]
    assert version_names("from depyf.decompiler.versions import v3_12\n", prose=False) == [
        "1: from depyf.decompiler.versions import ..."]
