"""The package's import graph: no module of ``depyf`` imports one that (directly or not) imports it
back, function-level imports included. The package ``__init__`` modules, which only gather public
names, are left out."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "depyf"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        if path.name == "__init__.py":
            continue
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found: list[str] = []
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for target in found:
                if target in modules and target != name and modules[target].name != "__init__.py":
                    edges.add(target)
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    cycles, state, stack = [], {}, []

    def visit(node: str) -> None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_the_import_graph_has_no_cycle():
    graph = _import_graph()
    assert "depyf.torch.records" in graph["depyf.torch.index"]
    assert "depyf.torch.session" not in graph["depyf.torch.index"]
    assert _cycles(graph) == []


def test_a_cycle_is_reported():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_the_decompiler_package_names_only_modules_that_exist():
    import re

    import depyf.decompiler as decompiler

    package = ROOT / "decompiler"
    named = set(re.findall(r"``(\w+)``", decompiler.__doc__ or ""))
    modules = {p.stem for p in package.glob("*.py")} | {p.name for p in package.iterdir() if p.is_dir()}
    assert {"instructions", "cfg", "executor", "structure", "cleanup", "render"} <= named
    assert named - {"ast.unparse"} <= modules, sorted(named - modules)
    assert all(hasattr(decompiler, name) for name in decompiler.__all__)


MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 400


def _sizes(root: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Lines of each module under ``root`` and of each class in them (``module:Class``)."""
    modules, classes = {}, {}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(root))
        modules[name] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                classes[f"{name}:{node.name}"] = node.end_lineno - node.lineno + 1
    return modules, classes


def _oversized(root: Path) -> list[str]:
    modules, classes = _sizes(root)
    return ([f"{name}: {n} lines" for name, n in modules.items() if n > MAX_MODULE_LINES]
            + [f"{name}: {n} lines" for name, n in classes.items() if n > MAX_CLASS_LINES])


def test_no_decompiler_module_over_600_lines_nor_class_over_400():
    assert _oversized(ROOT / "decompiler") == []
    modules, classes = _sizes(ROOT / "decompiler")
    assert "executor/core.py" in modules and "executor/core.py:Executor" in classes


def test_an_oversized_module_or_class_is_reported(tmp_path):
    body = "".join(f"    x{k} = {k}\n" for k in range(MAX_CLASS_LINES))
    (tmp_path / "big.py").write_text("class Big:\n" + body, encoding="utf-8")
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    (tmp_path / "fine.py").write_text("class Small:\n" + body[: body.index("x399")] + "\n", encoding="utf-8")
    assert _oversized(tmp_path) == ["long.py: 601 lines", "big.py:Big: 401 lines"]
