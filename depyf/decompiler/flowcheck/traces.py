"""Whole paths, not steps: do two flows allow the same sequences of events?

``Flow.pairs`` compares each event with the events that can follow it, and ``steps_of_two`` one
step further. Neither sees a difference that lies in where a path came from several events back:
a ``return`` inside a loop that ends a ``try`` body leaves through its own copy of the finally
body, and the loop's exhaustion through another; code read back that sends the exhaustion into the
return's copy has the same pairs and triples (both copies run the same events and lead on to both
returns somewhere) but another path: exhausted, finally body, ``return 1``.

This module walks both flows side by side, as one automaton over the labels of their *effects*:
calls, returns, raises, yields, attribute and subscript stores, iteration. Operators, compares,
subscripts read and stores of constants are left out of the sequences (the flow keeps them as
events only where no constant folding hides them, so they appear on one side and not the other
for code that computes the same: ``-(4 if b else b)`` is ``-4`` on the arm the compiler copied);
so are branch decisions. A state is the set of effects each side can be at after the same
sequence of effects, the subset construction run on both at once. Where one side can take a step
the other cannot, the flows allow different sequences of effects. Every start (the function's
entry and each exception handler) is entered from one shared start, as ``pairs`` enters them.
"""

from __future__ import annotations

from depyf.decompiler.flowcheck.flow import Flow

# States visited before giving up (and saying nothing): the subset construction can grow with the
# product of the two flows' sizes where effects repeat many times with the same labels.
MAX_TRACE_STATES = 20_000

_START = -1         # the shared start, before any effect

# Event kinds that are no effects here (see the module's docstring)
_NO_EFFECT = frozenset({"store", "BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "BINARY_SUBSCR"})


def first_different_trace(ours: Flow, theirs: Flow) -> tuple | None:
    """The last steps of a sequence of effects one flow allows and the other does not, with the
    side that allows it last (``"recompiled"`` or ``"original"``), or None: the same sequences,
    or too many states to tell. (Call ``pairs`` first: it finds every start.)"""
    mine_next, yours_next = _EffectSteps(ours), _EffectSteps(theirs)
    start = (frozenset({_START}), frozenset({_START}))
    seen = {start}
    todo = [(start, ())]
    while todo:
        (mine, yours), trace = todo.pop()
        steps_mine, steps_yours = mine_next.from_all(mine), yours_next.from_all(yours)
        for label in steps_mine.keys() | steps_yours.keys():
            here, there = steps_mine.get(label), steps_yours.get(label)
            longer = trace + (label,)
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


def is_effect(event: tuple) -> bool:
    kind = event[0]
    return kind not in _NO_EFFECT and not kind.startswith(("BINARY_", "UNARY_", "INPLACE_"))


class _EffectSteps:
    """The effects that can come next after an effect of one flow, passing other events."""

    def __init__(self, flow: Flow):
        self.flow = flow
        self.cache: dict[int, frozenset[int]] = {}

    def from_all(self, at: frozenset) -> dict[tuple, set[int]]:
        """next effect's label -> the effects reached with it, from any of ``at``."""
        out: dict[tuple, set[int]] = {}
        events = self.flow.events
        for e in at:
            for n in self.after(e):
                out.setdefault(events[n], set()).add(n)
        return out

    def after(self, e: int) -> frozenset[int]:
        found = self.cache.get(e)
        if found is not None:
            return found
        flow, events = self.flow, self.flow.events
        if e == _START:
            work = [s for s in flow.starts if events[s] is not None]
            for s in flow.starts:
                if events[s] is None:
                    work.extend(n for _, n in flow._next_events(s, False))
        else:
            work = [n for _, n in flow._next_events(e, False)]
        effects: set[int] = set()
        passed: set[int] = set()
        while work:
            n = work.pop()
            if is_effect(events[n]):
                effects.add(n)
            elif n not in passed:
                passed.add(n)
                work.extend(m for _, m in flow._next_events(n, False))
        found = self.cache[e] = frozenset(effects)
        return found
