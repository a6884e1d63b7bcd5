"""The events of one code object and the paths between them."""

from __future__ import annotations

import dis
import types
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

from depyf.decompiler.flowcheck.events import EventExtraction
from depyf.decompiler.flowcheck.jump_tests import JumpTests
from depyf.decompiler.flowcheck.labels import EventLabels, _clears_exception_name
from depyf.decompiler.flowcheck.tables import (
    _CALLS,
    _CONDITIONAL,
    _FLIP,
    _JUMPS,
    _NAME_EVENTS,
    _OPERATOR_EVENTS,
    _PLAIN_EVENTS,
    _RETURNS,
    _SETUP,
    _SLICE_OPS,
    _TERMINAL,
    _UNCONDITIONAL,
    MAX_PATHS_PER_EVENT,
)
from depyf.decompiler.flowcheck.values import ValuePrints
from depyf.decompiler.instructions import flow_instructions, raw_exception_entries

_CANNOT_RAISE = frozenset({"NOP", "JUMP_FORWARD"})


class Flow(
    EventExtraction,
    EventLabels,
    JumpTests,
    ValuePrints,
):
    """The events of one code object and the paths between them."""

    def __init__(self, code: types.CodeType, constant_builders: frozenset | set = frozenset()):
        self.code = code
        self.instructions = []
        self.index: dict[int, int] = {}  # offset -> instruction index (EXTENDED_ARG: the one it extends)
        pending = []
        for ins in flow_instructions(code):
            if ins.opname in ("CACHE", "EXTENDED_ARG"):
                pending.append(ins.offset)
                continue
            k = len(self.instructions)
            if pending:
                for offset in pending:
                    self.index[offset] = k
                pending = []
            self.index[ins.offset] = k
            self.instructions.append(ins)
        self.gave_up = False
        index = self.index
        # instruction -> the instruction its jump goes to (None: no jump, or out of the code)
        self._jump_targets = [index.get(ins.argval) if ins.opcode in _JUMPS else None
                              for ins in self.instructions]
        self.targets = set(self._jump_targets)
        self.targets.discard(None)
        self.events = []
        for ins in self.instructions:
            known = _EVENT_OPNAMES.get(ins.opname)
            if known is None:
                known = _is_event(ins.opname)
            self.events.append(self._event(ins) if known else None)
        self._constant_builds: set[int] = set()   # the loads and calls of ``float('nan')`` and the like
        if constant_builders:
            self._drop_constant_builds(constant_builders)
        self._future_import: set[int] = set()   # the instructions of ``from __future__ import ...``
        self._drop_future_imports()
        self.constants: dict[int, object] = {}   # instruction index -> the constant it leaves
        # the walk from the starts (reachable instructions, the ways into each jump target), kept
        # while the constants it was taken with stand
        self._walked: tuple[set[int], dict[int, list[int]]] | None = None
        self._drop_folded_constants()
        self._cache: dict[tuple[int, bool], set] = {}
        self.starts = [0]
        self._add_entered_handlers(raw_exception_entries(code))  # 3.11+ (3.10: SETUP_*)
        carried = self._constants_carried_by_jumps()
        if carried:
            self._drop_folded_constants(carried)
        self._name_constant_stores()
        self._label_calls()
        self.has_value_tests = any(ins.opname in _CONDITIONAL and self._value_test(k)
                                   for k, ins in enumerate(self.instructions))

    def _constants_carried_by_jumps(self) -> dict[int, int]:
        """Jump targets entered only by a value-keeping test of a constant that always jumps there
        (``3 or x``: JUMP_IF_TRUE_OR_POP, or 3.12+'s COPY 1; POP_JUMP_IF_TRUE): target -> the
        constant's instruction."""
        _, entries = self._walk_taken()
        carried = {}
        for target, sources in entries.items():
            k = sources[0]
            ins = self.instructions[k]
            if (
                len(set(sources)) != 1
                or ins.opname not in _CONDITIONAL
                or self.index.get(ins.argval) != target
                or not self._constant_outcome(k)
            ):
                continue
            j = k - 1
            while j >= 0 and self.instructions[j].opname in ("TO_BOOL", "NOP", "NOT_TAKEN"):
                j -= 1
            keeps_value = ins.opname in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP")
            if j >= 0 and self.instructions[j].opname == "COPY" and self.instructions[j].arg == 1:
                keeps_value, j = True, j - 1
            if keeps_value and j in self.constants:
                carried[target] = j
        return carried

    def _walk_taken(self) -> tuple[set[int], dict[int, list[int]]]:
        """The walk kept from the starts (``_walk``), or a fresh one where none is kept."""
        return self._walked if self._walked is not None else self._walk()

    def _walk(self, handler_of: dict[int, int] | None = None) -> tuple[set[int], dict[int, list[int]]]:
        """The instructions reachable from the starts, and for each jump target reached the
        instructions leading to it.
        With ``handler_of`` (instruction -> its exception handler), a handler becomes a start once
        code it protects is reached; 3.10's handlers are added by ``_successors`` on the way."""
        seen: set[int] = set()
        entries: dict[int, list[int]] = defaultdict(list)
        todo = list(self.starts)
        cache = self._successor_cache
        targets = self.targets
        while todo:
            k = todo.pop()
            if k not in seen:
                seen.add(k)
                found = cache.get(k)
                if found is None:
                    found = cache[k] = self._find_successors(k)
                for n, _ in found:
                    if n in targets:
                        entries[n].append(k)
                    todo.append(n)
                handler = handler_of.get(k) if handler_of else None
                if handler is not None and handler not in seen:
                    self.starts.append(handler)
                    todo.append(handler)
            if not todo:
                todo = [s for s in self.starts if s not in seen]
        return seen, entries

    def _add_entered_handlers(self, entries) -> None:
        """Exception handlers as starts, each once code it protects can run: a handler of an empty
        ``try`` body (``try: pass``) is kept by the compiler but never entered, also where the
        body is what the compiler left in its range: a ``NOP`` (3.12+) or a ``JUMP_FORWARD`` past
        the handlers (3.11), which cannot raise (a forward jump checks no signals)."""
        handler_of: dict[int, int] = {}
        instructions = self.instructions
        for e in entries:
            target = self.index.get(e.target)
            first, end = self.index.get(e.start), self.index.get(e.end, len(instructions))
            if target is not None and first is not None:
                for j in range(first, end):
                    if instructions[j].opname not in _CANNOT_RAISE:
                        handler_of.setdefault(j, target)
        # (a walk from every start found reaches the same instructions by the same ways)
        self._walked = self._walk(handler_of)
        self.starts = [0] + sorted(set(self.starts) - {0})

    def _event(self, ins: dis.Instruction) -> tuple | None:
        op = ins.opname
        if op in _NAME_EVENTS:
            return (_NAME_EVENTS[op], str(ins.argval))
        if op in ("IS_OP", "CONTAINS_OP"):  # negation: see _negated_test
            return (op,)
        if op in _OPERATOR_EVENTS:
            key = ins.argrepr
            if key.startswith("bool(") and key.endswith(")"):
                key = key[5:-1]
            return (op, key)
        if op in _SLICE_OPS:  # 3.12+: ``x[a:b]`` without building the slice first
            return (_SLICE_OPS[op],)
        if op in _CALLS:  # ``f(*())`` and ``f()`` are the same call, made by different opcodes
            return ("CALL",)
        if op in _RETURNS:
            return ("return",)
        if op in _PLAIN_EVENTS:
            return (op,)
        if op.startswith("BINARY_") or op.startswith("INPLACE_"):  # 3.10's operator opcodes
            return (op,)
        return None

    def cell_deletions(self) -> dict[int, tuple]:
        """Each ``del`` of a cell variable, as an event (``("del", "x")``): a nested function
        that reads the cell sees it, so it is an effect; a ``del`` of a plain local is seen by
        this frame's own reads only (and the decompiler may put it before a value computed for
        later). The ``del`` that ends an ``except ... as name`` clause is none."""
        instructions = self.instructions
        return {k: ("del", str(ins.argval)) for k, ins in enumerate(instructions)
                if ins.opname == "DELETE_DEREF" and not (
                    k and instructions[k - 1].opname.startswith("STORE_")
                    and _clears_exception_name(instructions, k - 1))}

    @contextmanager
    def events_added(self, added: dict[int, tuple]) -> Iterator[None]:
        """These instructions are events too, while the ``with`` lasts."""
        saved, cache = {k: self.events[k] for k in added}, self._cache
        for k, e in added.items():
            self.events[k] = e
        self._cache = {}
        try:
            yield
        finally:
            for k, e in saved.items():
                self.events[k] = e
            self._cache = cache

    def nested_code(self) -> list[types.CodeType]:
        """The code objects this code can load. (One compiled in a branch the compiler dropped as
        dead, ``if 0: def g(): ...``, stays among the constants; one loaded only where a constant
        test never goes, ``if -1: ... else: [listcomp]``, is left out of source that says ``if -1``.)"""
        reachable, _ = self._walk_taken()
        loaded = {id(self.instructions[k].argval) for k in reachable
                  if self.instructions[k].opname == "LOAD_CONST"}
        return [c for c in self.code.co_consts if isinstance(c, types.CodeType) and id(c) in loaded]

    def _successors(self, k: int) -> list[tuple[int, str]]:
        """(next instruction index, decision taken on the way) pairs (computed once per
        instruction while the known constants stand; do not modify)."""
        found = self._successor_cache.get(k)
        if found is None:
            found = self._successor_cache[k] = self._find_successors(k)
        return found

    def _find_successors(self, k: int) -> list[tuple[int, str]]:
        ins = self.instructions[k]
        op = ins.opname
        if op in _TERMINAL:
            return []
        target = self._jump_targets[k]
        if op in _UNCONDITIONAL:
            return [(target, "")] if target is not None else []
        nxt = [(k + 1, "")] if k + 1 < len(self.instructions) else []
        if k in self.constants and k + 1 in self.targets:
            # a constant running into a test of its value that jumps also reach (``(b or 4) or c``:
            # the 4 decides that test, which the compiler drops where the ``or`` is one, flat)
            after = self._through_tests_of_known_truth(k + 1, bool(self.constants[k]))
            if after != k + 1:
                return [(after, "")]
        if op in _CONDITIONAL and target is not None:
            known = self._constant_outcome(k)
            if known is not None:       # a test of a constant: only one way is ever taken
                return [(target, "")] if known else [(n, "") for n, _ in nxt]
            taken, fall = _CONDITIONAL[op]
            truth = self._kept_truth(k)
            if truth is not None:
                target = self._through_tests_of_known_truth(target, truth)
            if self._negated_test(k):
                taken, fall = _FLIP.get(taken, taken), _FLIP.get(fall, fall)
            return [(target, taken)] + [(n, fall) for n, _ in nxt]
        if op in _SETUP and target is not None and not (
                k + 1 < len(self.instructions) and self.instructions[k + 1].opname == "POP_BLOCK"):
            self._add_start(target)  # (3.10) a handler; one protecting nothing is never entered
        return nxt

    def _add_start(self, k: int) -> None:
        if k not in self.starts:
            self.starts.append(k)

    def _next_events(self, k: int, decisions: bool) -> set:
        """(decisions, event index) pairs reachable from ``k`` through instructions that are no events.

        With ``decisions``, each path keeps the branch decisions it took and a path that comes
        back to an instruction without passing an event ends in index -1 (a loop doing nothing);
        without, only which events come next.
        """
        key = (k, decisions)
        if key in self._cache:
            return self._cache[key]
        found: set = set()
        events, cache, successors = self.events, self._successor_cache, self._successors
        if not decisions:
            seen: set[int] = set()
            work = [k]
            while work:
                pos = work.pop()
                for nxt, _ in cache.get(pos) or successors(pos):
                    if events[nxt] is not None:
                        found.add(((), nxt))
                    elif nxt not in seen:
                        seen.add(nxt)
                        work.append(nxt)
            self._cache[key] = found
            return found
        stack = [(k, (), frozenset())]
        explored = 0
        while stack:
            pos, path, visited = stack.pop()
            for nxt, decision in cache.get(pos) or successors(pos):
                step = path + (decision,) if decision else path
                if events[nxt] is not None:
                    found.add((step, nxt))
                elif nxt in visited:
                    found.add((step, -1))
                else:
                    explored += 1
                    if explored > MAX_PATHS_PER_EVENT:
                        self.gave_up = True
                        return set()
                    stack.append((nxt, step, visited | {nxt}))
        self._cache[key] = found
        return found

    def steps_of_two(self, decisions: bool) -> set | None:
        """(event, decisions, event, decisions, event) for every event reached and each way into
        and out of it: ``pairs`` one step longer. Pairs alone cannot tell apart two loops whose
        rounds begin with the same event: a ``break`` of the inner loop read as ``continue``
        reaches a FOR_ITER either way, only the event after it tells which. None when there are
        more than ``MAX_PATHS_PER_EVENT`` ways to combine (call ``pairs`` first, same ``decisions``)."""
        events = self.events
        into: dict[int, set] = defaultdict(set)
        out_of: dict[int, set] = {}
        todo = list(self.starts)
        seen: set[int] = set()
        while todo:
            e = todo.pop()
            if e in seen:
                continue
            seen.add(e)
            here = ("start",) if e in self.starts and events[e] is None else events[e]
            ways = {(path, events[n] if n >= 0 else ("loop",)) for path, n in self._next_events(e, decisions)}
            if events[e] is None:       # a start that is no event: its ways begin the paths
                for path, n in self._next_events(e, decisions):
                    if n >= 0:
                        into[n].add((here, path))
                        todo.append(n)
                continue
            out_of[e] = ways
            for path, n in self._next_events(e, decisions):
                if n >= 0:
                    into[n].add((events[e], path))
                    todo.append(n)
            if e in self.starts:
                into[e].add((("start",), ()))
        out: set = set()
        for e, ways in out_of.items():
            if len(into[e]) * len(ways) + len(out) > MAX_PATHS_PER_EVENT:
                return None
            for before, first in into[e]:
                for second, after in ways:
                    out.add((before, first, events[e], second, after))
        return out

    def pairs(self, decisions: bool) -> set:
        """(event, decisions, next event) for every event reachable from a start (starts included)."""
        out: set = set()
        done: set[int] = set()
        started: set[int] = set()
        while len(started) < len(self.starts):
            todo = []
            for s in [s for s in self.starts if s not in started]:
                started.add(s)
                if self.events[s] is not None:
                    out.add((("start",), (), self.events[s]))
                    todo.append(s)
                    continue
                for path, e in self._next_events(s, decisions):
                    out.add((("start",), path, self.events[e] if e >= 0 else ("loop",)))
                    if e >= 0:
                        todo.append(e)
            while todo:
                e = todo.pop()
                if e in done:
                    continue
                done.add(e)
                for path, nxt in self._next_events(e, decisions):
                    out.add((self.events[e], path, self.events[nxt] if nxt >= 0 else ("loop",)))
                    if nxt >= 0 and nxt not in done:
                        todo.append(nxt)
        return out


_EVENT_OPNAMES: dict[str, bool] = {}


def _is_event(opname: str) -> bool:
    """Can an instruction of this name be an event (``Flow._event`` names it)? Remembered."""
    found = _EVENT_OPNAMES.get(opname)
    if found is None:
        found = _EVENT_OPNAMES[opname] = (
            opname in _NAME_EVENTS or opname in ("IS_OP", "CONTAINS_OP") or opname in _OPERATOR_EVENTS
            or opname in _SLICE_OPS or opname in _CALLS or opname in _RETURNS or opname in _PLAIN_EVENTS
            or opname.startswith("BINARY_") or opname.startswith("INPLACE_")
        )
    return found
