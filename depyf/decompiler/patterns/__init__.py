"""``match`` statements: read the pattern code of each case back into ``ast`` patterns.

The compiler lays a match statement out as a chain of cases over the subject on the stack::

    <subject> [COPY 1] <pattern> <stores of the captures> [<guard>] [POP_TOP] <body> JUMP end
    <fail-pop chain: POP_TOP ...>  -> next case (the subject still on the stack)

Only the last case that is not a trailing ``case _`` matches the subject itself (no COPY 1);
after it comes the default body, if any, then ``end``.

The pattern code is read by a small stack machine over *tokens* (values being matched, values
kept for a capture, values left to be popped), independent of the executor's expressions:

- a failing test jumps into the fail-pop chain; the number of POP_TOPs it goes through must be
  the number of tokens the pattern has pushed since the case (or or-alternative) began, and all
  the failing tests of one case must end at the same place: the next case;
- captures leave their value on the stack (rotated under the values still in use with SWAPs);
  the STOREs after the pattern pop them and give them their names;
- or-patterns are alternatives, each on a copy of the value, joined at a common end.

Everything is static (instructions only), so recognising a match start has no side effects.
Version differences are normalised before this module (see ``depyf.decompiler.versions``).

model.py holds what a reading yields; cursor.py the reader's moves over the instructions and its
symbolic stack; compound.py the or, sequence, mapping and class patterns; reader.py the
``PatternReader`` composing them (match, case, the patterns' dispatch).
"""

from depyf.decompiler.patterns.model import CaseRead, Discard, FailContext, MatchRead, NoMatch, Other, Val
from depyf.decompiler.patterns.reader import PatternReader

__all__ = [
    "CaseRead", "Discard", "FailContext", "MatchRead", "NoMatch", "Other", "PatternReader", "Val"
]
