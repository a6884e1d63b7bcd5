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
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.flowcheck import Flow, _without_decisions
from depyf.decompiler.flowcheck.tables import _TEMPORARY
from depyf.decompiler.rebuild import _compiled_alone, rebuild_code

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


def test_each_code_object_is_read_once_per_decompile(monkeypatch):
    # id(code) -> reads (the code objects live on), by dis or, on 3.11, by the lean reader
    reads: collections.Counter = collections.Counter()

    def counting(read):
        def wrapper(code, *args, **kwargs):
            reads[id(code)] += 1
            return read(code, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(instructions.dis, "get_instructions", counting(dis.get_instructions))
    if hasattr(instructions, "_read_3_11"):
        monkeypatch.setattr(instructions, "_read_3_11", counting(instructions._read_3_11))
    monkeypatch.setattr(instructions, "_read_3_10", counting(instructions._read_3_10))
    source = depyf.decompile(sample)
    originals = {id(c) for c in _codes(sample.__code__)}
    assert len(originals) >= 3      # the function, the generator expression, the lambda (, the dict
    #                                 comprehension before 3.12)
    # the original and its nested code were read once each: the normalisation and the flow check
    # share the read
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
            assert {n: sorted(v) for n, v in entries.items()} == {
                n: sorted(v) for n, v in fresh_entries.items()
            }
        checked += 1
    assert checked > 300


def _corpus_and_stdlib_codes(monkeypatch) -> tuple[list[types.CodeType], bool]:
    """Every code object of the corpus and of the benchmark's stdlib modules, and whether the
    stdlib's were read (pyodide keeps the stdlib in a zip file: the corpus alone)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "bench"))
    from decompile_speed import MODULES, module_sources

    codes = _corpus_codes()
    try:
        stdlib = module_sources(MODULES).values()
    except OSError:
        stdlib = []
    for path, source in stdlib:
        codes.extend(_codes(compile(source, path, "exec", dont_inherit=True)))
    return codes, bool(stdlib)


def test_flow_instructions_read_what_dis_reads(monkeypatch):
    """The flow check's reader (straight from ``co_code`` on 3.11) gives dis's values for every
    instruction of the corpus and of the benchmark's stdlib modules (a constant's argrepr aside)."""
    codes, stdlib = _corpus_and_stdlib_codes(monkeypatch)
    compared = 0
    for code in codes:
        ours = list(instructions.flow_instructions(code))
        theirs = list(dis.get_instructions(code))
        assert len(ours) == len(theirs), code
        for a, b in zip(ours, theirs, strict=True):
            assert (a.opname, a.opcode, a.arg, a.offset) == (b.opname, b.opcode, b.arg, b.offset)
            assert getattr(a, "lineno", None) == (b.positions.lineno if hasattr(a, "lineno") else None)
            assert a.argval is b.argval or a.argval == b.argval, (a, b)
            assert a.argrepr == b.argrepr or b.opcode in dis.hasconst, (a, b)
            compared += 1
    assert compared > (200_000 if stdlib else 10_000)


def test_raw_instructions_are_what_dis_reads(monkeypatch):
    """``raw_instructions`` (3.10: its own reading, with the jump targets in a set) gives exactly
    ``dis.get_instructions`` for the corpus and the benchmark's stdlib modules."""
    codes, stdlib = _corpus_and_stdlib_codes(monkeypatch)
    compared = 0
    for code in codes:
        ours = instructions.raw_instructions(code)
        assert ours == tuple(dis.get_instructions(code)), code
        compared += len(ours)
    assert compared > (200_000 if stdlib else 10_000)


def test_successors_without_decisions_are_the_strict_pairs_without_them():
    """The flow check compares successors (``pairs(False)``) taken from the pairs with decisions."""
    checked = 0
    for code in _corpus_codes():
        strict = Flow(code).pairs(True)
        flow = Flow(code)
        plain = flow.pairs(False)
        flow.pairs(True)
        if flow.gave_up:
            continue
        assert _without_decisions(strict) == plain, code.co_name
        checked += 1
    assert checked > 300


def _orders_instruction_by_instruction(flow: Flow) -> dict[str, set]:
    """``Flow.access_orders`` by its definition: from each start and each access of a variable,
    follow every path instruction by instruction up to the next access of it.
    (Which instructions access what is ``Flow.accesses``, shared.)"""
    accesses = flow.accesses()
    places = collections.defaultdict(list)
    for k, found in accesses.items():
        for name in dict.fromkeys(n for n, _ in found):
            places[name].append(k)
    orders = {}
    for name, at in places.items():
        kinds = {kind for k in at for n, kind in accesses[k] if n == name}
        if "read" not in kinds or len(kinds) == 1 or _TEMPORARY.match(name):
            continue
        pairs = set()
        origins = [("start", [s]) for s in flow.starts]
        for k in at:
            own = [kind for n, kind in accesses[k] if n == name]
            pairs.update((a, b) for a, b in zip(own, own[1:], strict=False) if a != b)
            origins.append((own[-1], [n for n, _ in flow._successors(k)]))
        for kind, work in origins:
            seen = set()
            while work:
                pos = work.pop()
                if pos in seen:
                    continue
                seen.add(pos)
                if pos in at:
                    first = next(a for n, a in accesses[pos] if n == name)
                    if first != kind:
                        pairs.add((kind, first))
                else:
                    work.extend(n for n, _ in flow._successors(pos))
        orders[name] = pairs
    return orders


def test_access_orders_found_on_blocks_are_those_of_every_path():
    """The access orders are found per block of straight-line code, for all variables at once:
    they are those found by following each path instruction by instruction."""
    checked = 0
    for code in _corpus_codes():
        flow = Flow(code)
        found = flow.access_orders()
        assert found == _orders_instruction_by_instruction(flow), code.co_name
        checked += bool(found)
    assert checked > 100


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """The same bytecode, names, constants (nested code likewise) and line table; the qualified
    names of nested code aside."""
    fields = ("co_code", "co_names", "co_varnames", "co_cellvars", "co_freevars", "co_flags",
              "co_firstlineno", "co_argcount", "co_kwonlyargcount", "co_posonlyargcount", "co_stacksize")
    if any(getattr(a, f) != getattr(b, f) for f in fields) or list(a.co_lines()) != list(b.co_lines()):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts, strict=True):
        if isinstance(x, types.CodeType) != isinstance(y, types.CodeType):
            return False
        if isinstance(x, types.CodeType) and (x.co_name != y.co_name or not _same_code(x, y)):
            return False
        if not isinstance(x, types.CodeType) and not (x is y or x == y or (x != x and y != y)):
            return False
    return True


def test_code_compiled_alone_for_the_flow_check_is_the_wrapper_s():
    """The flow check compiles a function that needs no wrapper from the text alone: the code is
    the one the wrapper gives, but for the qualified names of the code nested in it."""
    alone = 0
    for code in _corpus_codes():
        try:
            source = depyf.decompile(code, verify=False)
            wrapped = rebuild_code(code, source)
        except DecompilationError:
            continue
        compared = rebuild_code(code, source, compared_only=True)
        assert _same_code(compared, wrapped), code.co_name
        alone += _compiled_alone(code, source, code.co_filename) is not None
    assert alone > 200
