"""Whole paths, not steps: do two flows allow the same sequences of effects?

``Flow.pairs`` compares each event with the events that can follow it, and ``steps_of_two`` one
step further. Neither sees a difference that lies in where a path came from several events back:
a ``return`` inside a loop that ends a ``try`` body leaves through its own copy of the finally
body, and the loop's exhaustion through another; code read back that sends the exhaustion into the
return's copy has the same pairs and triples (both copies run the same events and lead on to both
returns somewhere) but another path: exhausted, finally body, ``return 1``. Likewise a negated
``if i > n: break`` in a try body with a finally body: both ways run the finally body first.

This module walks both flows side by side, as one automaton over the labels of their *effects*:
calls, returns, raises, yields, attribute and subscript stores, iteration. Operators, compares,
subscripts read and stores of constants are left out of the sequences (the flow keeps them as
events only where no constant folding hides them, so they appear on one side and not the other
for code that computes the same: ``-(4 if b else b)`` is ``-4`` on the arm the compiler copied).
Each step is the branch decisions taken on the way (where the caller compares decisions) and the
next effect's label. A state is the set of effects each side can be at after the same sequence
of steps: the subset construction run on both at once. Where one side can take a step the other
cannot, the flows allow different sequences of effects. Every start (the function's entry and
each exception handler) is entered from one shared start, as ``pairs`` enters them.
"""

from __future__ import annotations

from depyf.decompiler.flowcheck.flow import Flow
from depyf.decompiler.flowcheck.tables import MAX_PATHS_PER_EVENT

# States visited before giving up (and saying nothing): the subset construction can grow with the
# product of the two flows' sizes where effects repeat many times with the same labels.
MAX_TRACE_STATES = 20_000

_START = -1         # the shared start, before any effect

# Event kinds that are no effects here (see the module's docstring)
_NO_EFFECT = frozenset({"store", "BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "BINARY_SUBSCR"})


class _TooManyPaths(Exception):
    """More ways between two effects than are followed with their decisions."""


def first_different_trace(ours: Flow, theirs: Flow, decisions: bool) -> tuple | None:
    """The last steps of a sequence of effects one flow allows and the other does not, with the
    side that allows it last (``"recompiled"`` or ``"original"``), or None: the same sequences,
    or too many states to tell. With ``decisions`` the branch decisions between effects are
    compared too, where there are not too many ways to follow. (Call ``pairs`` first: it finds
    every start.)"""
    if decisions:
        try:
            return _first_different(_EffectSteps(ours, True), _EffectSteps(theirs, True))
        except _TooManyPaths:
            ours.gave_up = theirs.gave_up = False   # (they had given up on no path before)
    return _first_different(_EffectSteps(ours, False), _EffectSteps(theirs, False))


def _first_different(mine_next: _EffectSteps, yours_next: _EffectSteps) -> tuple | None:
    start = (frozenset({_START}), frozenset({_START}))
    seen = {start}
    todo = [(start, ())]
    while todo:
        (mine, yours), trace = todo.pop()
        steps_mine, steps_yours = mine_next.from_all(mine), yours_next.from_all(yours)
        for key in steps_mine.keys() | steps_yours.keys():
            here, there = steps_mine.get(key), steps_yours.get(key)
            longer = trace + (key,)
            if here is None or there is None:
                return longer + ("recompiled" if there is None else "original",)
            state = (frozenset(here), frozenset(there))
            if state in seen:
                continue
            if len(seen) >= MAX_TRACE_STATES:
                return None
            seen.add(state)
            todo.append((state, longer[-4:]))    # (the last steps say where it differs)
    return None


def _is_operator(event: tuple) -> bool:
    kind = event[0]
    return kind in ("BINARY_OP", "BINARY_SUBSCR") or kind.startswith(("BINARY_", "UNARY_", "INPLACE_"))


def is_effect(event: tuple) -> bool:
    kind = event[0]
    return kind not in _NO_EFFECT and not kind.startswith(("BINARY_", "UNARY_", "INPLACE_"))


class _EffectSteps:
    """The effects that can come next after an effect of one flow, passing other events, each
    with the branch decisions on the way (``decisions``) or none."""

    def __init__(self, flow: Flow, decisions: bool):
        self.flow = flow
        self.decisions = decisions
        self.cache: dict[int, frozenset[tuple[tuple, int]]] = {}

    def from_all(self, at: frozenset) -> dict[tuple, set[int]]:
        """(decisions, next effect's label) -> the effects reached that way, from any of ``at``."""
        out: dict[tuple, set[int]] = {}
        events = self.flow.events
        for e in at:
            for path, n in self.after(e):
                out.setdefault((path, events[n]), set()).add(n)
        return out

    def after(self, e: int) -> frozenset[tuple[tuple, int]]:
        found = self.cache.get(e)
        if found is None:
            found = self.cache[e] = frozenset(
                self._with_decisions(e) if self.decisions else self._without_decisions(e))
        return found

    def _first_ways(self, e: int) -> list[tuple[tuple, int]]:
        """(decisions, event) for the events right after ``e`` (after each start for ``_START``)."""
        flow, events, decisions = self.flow, self.flow.events, self.decisions
        if e != _START:
            return list(flow._next_events(e, decisions))
        ways = [((), s) for s in flow.starts if events[s] is not None]
        for s in flow.starts:
            if events[s] is None:
                ways.extend(flow._next_events(s, decisions))
        return ways

    def _without_decisions(self, e: int) -> set[tuple[tuple, int]]:
        events, next_events = self.flow.events, self.flow._next_events
        work = [n for _, n in self._first_ways(e)]
        effects: set[tuple[tuple, int]] = set()
        passed: set[int] = set()
        while work:
            n = work.pop()
            if is_effect(events[n]):
                effects.add(((), n))
            elif n not in passed:
                passed.add(n)
                work.extend(m for _, m in next_events(n, False))
        return effects

    def _with_decisions(self, e: int) -> set[tuple[tuple, int]]:
        """Each way to the next effects with the decisions of its last stretch, from the last
        event passed: the decisions before that depend on where the layout puts events that are
        no effects (a loop's test copied to its bottom is a second event; a path round a loop
        without effects is left out, the way out of it is the same stretch either way)."""
        flow = self.flow
        events, next_events = flow.events, flow._next_events
        effects: set[tuple[tuple, int]] = set()
        stack = [(path, n, frozenset()) for path, n in self._first_ways(e)]
        explored = 0
        while stack:
            path, n, passed = stack.pop()
            if n < 0:
                continue            # (round a loop without an event)
            if is_effect(events[n]):
                effects.add((path, n))
                continue
            if n in passed:
                continue
            explored += 1
            if explored > MAX_PATHS_PER_EVENT or flow.gave_up:
                raise _TooManyPaths
            inside = passed | {n}
            # (an operator between a test and the effect its decision leads to keeps the decision:
            # ``if c: new = new + b' '`` computes before it stores)
            kept = path if _is_operator(events[n]) else ()
            stack.extend((kept + more, m, inside) for more, m in next_events(n, True))
        if flow.gave_up:
            raise _TooManyPaths
        return effects
