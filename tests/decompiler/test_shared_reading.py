"""Work done once and shared (bytecode read once per code object, one tree walk, the flow check's
remembered successors) gives the same answers as doing it afresh."""

from __future__ import annotations

import ast
import collections
import dis
import types
from pathlib import Path

import depyf
from depyf.decompiler import instructions, traversal
from depyf.decompiler.flowcheck import Flow

CORPUS = Path(__file__).parent / "corpus"


def _codes(code: types.CodeType) -> list[types.CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_codes(const))
    return found


def _corpus_codes() -> list[types.CodeType]:
    codes = []
    for path in sorted(CORPUS.glob("*.py")):
        try:
            module = compile(path.read_text(encoding="utf-8"), str(path), "exec", dont_inherit=True)
        except SyntaxError:
            continue    # syntax of a newer CPython
        codes.extend(_codes(module)[1:])
    return codes


def sample(items, n=50):
    # (defined at module level so that its code and its generator expression are real nested code)
    words = [w for w in items if w]
    return {w: sum(1 for c in w if c.isupper()) for w in words[:n]}, (lambda k: k * 2)


def test_each_code_object_is_read_by_dis_once_per_decompile(monkeypatch):
    reads: collections.Counter = collections.Counter()   # id(code) -> reads (the code objects live on)
    real = dis.get_instructions

    def counting(code, *args, **kwargs):
        reads[id(code)] += 1
        return real(code, *args, **kwargs)

    monkeypatch.setattr(instructions.dis, "get_instructions", counting)
    source = depyf.decompile(sample)
    originals = {id(c) for c in _codes(sample.__code__)}
    assert len(originals) >= 3      # the function, the generator expression, the lambda (, the dict
    #                                 comprehension before 3.12)
    # the original and its nested code were read (by the normalisation and by the flow check) once each
    assert set(reads) >= originals
    assert all(reads[c] == 1 for c in originals)
    # a second call reads everything again, once, and gives the same result, which runs the same
    reads.clear()
    assert depyf.decompile(sample) == source
    assert all(reads[c] == 1 for c in originals)
    namespace: dict = {}
    exec(source, namespace)
    words = ["Ab", "", "CD", "x"]
    assert namespace["sample"](words)[0] == sample(words)[0]


def test_reading_outside_a_decompile_call_is_not_remembered():
    code = sample.__code__
    assert instructions.raw_instructions(code) == tuple(dis.get_instructions(code))
    with instructions.reading_once():
        first = instructions.raw_instructions(code)
        assert instructions.raw_instructions(code) is first
    assert instructions.raw_instructions(code) is not first


def test_preorder_is_node_visitor_order():
    tree = ast.parse(Path(instructions.__file__).read_text(encoding="utf-8"))
    visited = []

    class Recorder(ast.NodeVisitor):
        def visit(self, node):
            visited.append(node)
            self.generic_visit(node)

    Recorder().visit(tree)
    nodes = traversal.preorder(tree)
    assert len(nodes) == len(visited) > 1000
    assert all(a is b for a, b in zip(nodes, visited, strict=True))
    assert sorted(map(id, nodes)) == sorted(map(id, traversal.walk(tree)))


def test_remembered_successors_and_walk_match_fresh_ones():
    """The flow check finds each instruction's successors once and reuses the walk from the starts
    while the known constants stand: after construction they still equal freshly computed ones."""
    checked = 0
    for code in _corpus_codes():
        flow = Flow(code)
        for k, found in flow._successor_cache.items():
            assert found == flow._find_successors(k), (code.co_name, k)
        if flow._walked is not None:
            fresh_seen, fresh_entries = flow._walk()
            seen, entries = flow._walked
            assert seen == fresh_seen
            assert {n: sorted(v) for n, v in entries.items()} == {n: sorted(v) for n, v in fresh_entries.items()}
        checked += 1
    assert checked > 300
