"""Control-flow recovery: blocks and exception ranges -> nested ast statements.

``Structurer.emit`` walks the code from a position, letting the executor turn straight-line
instructions into statements, and decides at each control instruction what statement it is:

- loops: FOR_ITER headers, and targets of backward jumps (``while``); a compiler that copies loop
  tests (``Features.copies_loop_tests``) duplicates a ``while`` test at the bottom of the loop, which is
  recognised and folded back; a ``while`` whose body never goes back to its test has no jump back
  and reads as an ``if`` until a jump from inside it to its end (a ``break``) shows otherwise;
- conditionals: chains of conditional jumps are folded into ``and``/``or`` conditions, the join
  is the nearest common post-dominator of both branches inside the enclosing loop;
- ``try``/``with``: the exception table tells which blocks each handler protects. Leaving a
  protected region goes through an exit sequence (a ``finally`` body copy, a with's
  ``__exit__`` call, POP_EXCEPT) that is skipped; what follows is a return, break, continue or
  the normal exit.

One module per construct, each a mixin class of ``Structurer`` (core.py), which composes them:
graph.py, copies.py, conditions.py, compound.py, ifs.py, value_flows.py, loops.py, loop_exits.py,
clause_breaks.py, while_tests.py, once_loops.py, match.py, protected.py, excepts.py,
finally_copies.py, regions.py.
"""

from depyf.decompiler.structure.core import Structurer

__all__ = ["Structurer"]
