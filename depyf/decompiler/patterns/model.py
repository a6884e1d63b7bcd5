"""What reading a match statement yields, and the stack entries the reader tracks."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from depyf.decompiler.instructions import Instr

_NAME_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_CLASSDEREF"})


class NoMatch(Exception):
    """The instructions are not a match statement's pattern code (of the expected shape)."""


class Val:
    """A value being matched; once captured, ``capture`` is the ``MatchAs`` waiting for its name."""

    def __init__(self):
        self.capture: ast.MatchAs | None = None

    def __repr__(self) -> str:
        return f"Val({'capture' if self.capture else ''})"


class Discard:
    """A value the pattern is done with, popped later by a POP_TOP among the stores."""

    def __repr__(self) -> str:
        return "Discard"


class Other:
    """Any other intermediate value (a tuple of keys, the attributes of a class pattern, a flag)."""

    def __init__(self, what: str):
        self.what = what

    def __repr__(self) -> str:
        return self.what


@dataclass
class FailContext:
    """Failing tests of one case (or or-alternative): pop down to ``base`` tokens, go on at ``cont``."""

    base: int
    cont: int | None = None
    count: int = 0


@dataclass
class CaseRead:
    """One case's pattern: where it starts, whether it copies the subject, where its stores end."""

    start: int
    copy: bool
    pattern: ast.pattern
    after: int                       # position after the pattern and its stores
    fail: int | None                 # where a failed match goes on (None: irrefutable)
    stores: list = field(default_factory=list)   # (opname, name) of the captures, in order


@dataclass
class MatchRead:
    cases: list[CaseRead]
    fail: int | None                 # where control goes when no case matched (after the last case)

    def pattern_ranges(self) -> list[tuple[int, int]]:
        return [(c.start, c.after) for c in self.cases]


def _is_copy1(ins: Instr) -> bool:
    return ins.opname == "COPY" and ins.argval == 1


def _lazy_wildcard(tok) -> bool:
    """A value read lazily whose POP_TOP makes it a wildcard: no name, no sub-pattern yet."""
    return isinstance(tok, Val) and getattr(tok.capture, "lazy", False) and tok.capture.name is None \
        and tok.capture.pattern is None and hasattr(tok.capture, "aliases")


def _fresh(tok) -> bool:
    return isinstance(tok, Val) and tok.capture is None


def _as_star(pat: ast.pattern) -> ast.pattern:
    if isinstance(pat, ast.MatchAs) and pat.pattern is None:
        star = ast.MatchStar(None)
        if hasattr(pat, "aliases"):
            star.capture = pat          # named when its store is read
        return star
    raise NoMatch("starred element with a sub-pattern")


def _finish(pattern: ast.pattern) -> ast.pattern:
    """Resolve captures (names known now) into ``MatchStar``/``MatchMapping.rest``; check names."""
    for node in ast.walk(pattern):
        if isinstance(node, ast.MatchStar) and getattr(node, "capture", None) is not None:
            node.name = node.capture.name
            if node.name is None:
                raise NoMatch("starred capture without a name")
        if isinstance(node, ast.MatchMapping) and getattr(node, "rest_capture", None) is not None:
            node.rest = node.rest_capture.name
            if node.rest is None:
                raise NoMatch("**rest without a name")
        if isinstance(node, ast.MatchAs) and hasattr(node, "aliases") and node.name is None:
            raise NoMatch("capture without a name")
    return pattern
