"""Turn Dynamo's guard text into valid Python: one boolean expression per guard clause.

Dynamo describes each leaf guard with "verbose code parts" such as
``check_tensor(L['a'], Tensor, ..., size=[10], stride=[1])  # x = a + 1  # user.py:4 in f``.
Most are Python followed by comments; a few are not (``___check_global_state() against {json}``,
``___check_type_id(...), type=<class 'dict'>``). We keep the Python, spell C++-only checks as
readable calls with their arguments, and move the rest into comments, so the dumped guard
function always parses.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class GuardClause:
    """One guard clause: a Python expression, the kind of guard, and where it came from."""

    expression: str
    kind: str
    user_line: str | None = None   # the user source line that caused the guard
    location: str | None = None    # "file:line in fn" as Dynamo reports it
    note: str | None = None        # text that could not stay in the expression


def _parses(expr: str) -> bool:
    try:
        ast.parse(expr, mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True


def _comment_splits(text: str) -> list[int]:
    """Positions of ``#`` outside string literals."""
    out, quote, i = [], None, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if text.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
        elif ch in "'\"":
            quote = text[i:i + 3] if text[i:i + 3] in ("'''", '"""') else ch
            i += len(quote)
            continue
        elif ch == "#":
            out.append(i)
        i += 1
    return out


_TYPE_SUFFIX = re.compile(r",\s*type=<class '([^']*)'>\s*$")
_IDS = re.compile(r"^(?P<expr>[\w.\[\]'\"]+) ids == (?P<value>.+)$")
_AGAINST = re.compile(r"^(?P<call>[\w.]+\(\))\s+against\s+(?P<json>[\[{].*)$", re.S)


def clause_from_text(text: str, kind: str = "GUARD") -> GuardClause:
    """Parse one verbose guard part into a clause whose ``expression`` is valid Python."""
    text = " ".join(text.splitlines()).strip()
    splits = _comment_splits(text)
    code, comments = text, []
    if splits:
        code, rest = text[:splits[0]], text[splits[0]:]
        comments = [c.strip() for c in rest.split("#") if c.strip()]
    code = code.strip()
    note = None
    match = _TYPE_SUFFIX.search(code)
    if match:
        code = code[:match.start()].strip()
        note = f"type is {match.group(1)}"
    against = _AGAINST.match(code)
    if against:
        expected = against.group("json")
        try:
            value = json.loads(expected)
            code = f"{against.group('call')[:-2]}(expected={value!r})"
        except ValueError:
            code = f"{against.group('call')[:-2]}(expected={expected!r})"
    ids = _IDS.match(code)
    if ids and _parses(ids.group("expr")) and _parses(ids.group("value")):
        code = f"___check_ids({ids.group('expr')}, expected={ids.group('value')})"
    if not _parses(code):
        note = f"not Python as written: {code}"
        code = f"___unparsed_guard({code!r})"
    user_line = location = None
    for comment in comments:
        if re.search(r":\d+ in ", comment) and location is None:
            location = comment
        elif comment.startswith("(HINT") or comment.startswith("HINT"):
            note = (note + "; " if note else "") + comment.strip("()")
        elif user_line is None:
            user_line = comment
    return GuardClause(code, kind, user_line, location, note)


def clauses_from_leaves(leaves: Iterable[tuple[str, Iterable[str]]]) -> list[GuardClause]:
    """Clauses for ``(kind, verbose_parts)`` leaves, duplicates (shared aliasing guards) removed."""
    out, seen = [], set()
    for kind, parts in leaves:
        for part in parts:
            clause = clause_from_text(part, kind)
            if clause.expression in seen:
                continue
            seen.add(clause.expression)
            out.append(clause)
    return out


def clauses_from_tree_text(text: str) -> list[GuardClause]:
    """Clauses from Dynamo's printed guard tree (``TREE_GUARD_MANAGER: +- KIND: code``)."""
    leaves = []
    for line in text.splitlines():
        match = re.match(r"^[|\s]*\+-\s+([A-Z_]+):\s+(.*)$", line)
        if match and match.group(1) != "GuardManager":
            leaves.append((match.group(1), [match.group(2)]))
    return clauses_from_leaves(leaves)


def _comment(text: str) -> str:
    return " ".join(text.split())


def full_location(location: str, filenames: Iterable[str]) -> str:
    """Dynamo shortens the file in a guard's location (``mp/seed/x.py:4 in f``); give the full path
    back when one of ``filenames`` ends with it."""
    match = re.match(r"^(?P<path>\S+):(?P<rest>\d+ in .*)$", location)
    if not match:
        return location
    path = match.group("path")
    for filename in filenames:
        if filename != path and filename.endswith(path):
            return f"{filename}:{match.group('rest')}"
    return location


def guard_function_source(name: str, clauses: list[GuardClause], filenames: Iterable[str] = ()) -> str:
    """``def name(L, G, **___kwargs_ignored)`` returning whether every clause holds.

    ``filenames``: the user files the guards come from, to undo Dynamo's shortened paths."""
    lines = [
        f"def {name}(L, G, **___kwargs_ignored):",
        "    # L: the frame's locals, G: its globals. Names starting with ___ are Dynamo's C++ checks.",
        "    __guard_hit = True",
    ]
    for clause in clauses:
        lines.append(f"    # {clause.kind}" + (f": {_comment(clause.note)}" if clause.note else ""))
        tail = []
        if clause.user_line:
            tail.append(_comment(clause.user_line))
        if clause.location:
            tail.append(_comment(full_location(clause.location, filenames)))
        comment = f"  # {'  # '.join(tail)}" if tail else ""
        lines.append(f"    __guard_hit = __guard_hit and {clause.expression}{comment}")
    lines.append("    return __guard_hit")
    return "\n".join(lines) + "\n"
