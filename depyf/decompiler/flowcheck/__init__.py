"""Does recompiled code take the same paths as the original? A check that catches wrong control flow.

Decompiling can go wrong in ways that still compile: a ``break`` dropped, a branch attached to the
wrong statement, a loop that no longer ends. Counting calls, names and operators
(the effects check) does not see those. This module abstracts a code object into its *flow*: the
observable events (an attribute looked up, a call, an operator, a return, a raise, a yield) and, for
every event, which events can come next and which branch
decisions (true/false, loop has an item/is exhausted) lie between. Two code objects produced by the
same compiler from equivalent source have the same flow, however the compiler laid it out
(copied return blocks, inverted jumps, duplicated loop tests), because the order in which Python
evaluates things is fixed by the source. Exception edges are not followed; every handler is a
separate start.

``differences(original, recompiled)`` compares the flows of the two code objects and of the
nested code objects they create, and says what differs (empty: same flow).

tables.py holds the opcode tables; flow.py the ``Flow`` of one code object (its events and the paths
between them), which composes the event extraction of events.py and the call and return names of
labels.py; compare.py compares two flows (``differences``), and the values their statements use up,
printed by values.py as the expressions that compute them (``g(b, a)`` read for ``g(a, b)`` takes
the same paths). Where every step and every step of two are the same, traces.py compares whole
sequences of effects (calls, returns, raises, ...): a difference in where a path came from several
events back, which no fixed window sees.
"""

from depyf.decompiler.flowcheck.compare import _without_decisions, differences
from depyf.decompiler.flowcheck.flow import Flow
from depyf.decompiler.flowcheck.tables import MAX_ACCESS_STEPS, MAX_PATHS_PER_EVENT

__all__ = [
    "Flow", "MAX_ACCESS_STEPS", "MAX_PATHS_PER_EVENT", "_without_decisions", "differences"
]
