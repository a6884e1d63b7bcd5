"""Jumps the exception table leaves out of the protected code around them.

3.13 can leave an unconditional jump out of its handler's range when the statement whose line it
carries was optimised away: ``if 0: pass`` as a loop body's last statement inside an ``except``
clause leaves the jump back to the loop's header unprotected, inside a loop that one handler
protects whole; ``elif 0: pass`` leaves its jump to the next statement of the clause between two
ranges of the clause's handler. Read as the table says, the jump would leave the clause. No
source says that: the jump belongs to the protected code around it. (A try body's own jump back
to a loop around the try is left out by design, and stays so.)
"""

from __future__ import annotations

import bisect
import dataclasses


def cover_uncovered_jumps(instrs: list, entries: list) -> list:
    """``entries`` (``ExceptionEntry``) with one more for each ``JUMP`` of ``instrs`` (``Instr``)
    back to a ``for`` loop's header that no entry covers, where the instruction before it and the
    loop's start (what runs before its header: the iterator made) are covered alike (the same
    handler, depth and ``lasti``): the whole loop lies in that protected code. (``instructions.
    normalize`` calls this: it imports nothing from there.)"""
    if not entries:
        return entries
    ranges = sorted(entries, key=lambda e: e.start)
    starts = [e.start for e in ranges]
    ends = [e.end for e in ranges]
    # the last range before each that ends later than it: the ranges between end sooner, so one
    # that does not reach an offset rules them out too (ranges one after another: no steps back)
    ends_later: list[int] = []
    open_ranges: list[int] = []
    for k, end in enumerate(ends):
        while open_ranges and ends[open_ranges[-1]] <= end:
            open_ranges.pop()
        ends_later.append(open_ranges[-1] if open_ranges else -1)
        open_ranges.append(k)

    def covering(offset: int):
        """The range covering ``offset`` that starts last (the innermost of nested ones)."""
        k = bisect.bisect_right(starts, offset) - 1
        while k >= 0:
            if offset < ends[k]:
                return ranges[k]
            k = ends_later[k]
        return None

    uncovered = [k for k in range(1, len(instrs)) if instrs[k].opname == "JUMP"
                 and instrs[k].target is not None and covering(instrs[k].offset) is None]
    if not uncovered:
        return entries      # (the common case: no position map to build)
    position = {ins.offset: k for k, ins in reversed(list(enumerate(instrs)))}
    spans = _spans_by_handler(ranges)
    added = []
    for k in uncovered:
        jump = instrs[k]
        inside = covering(jump.target)
        if inside is None or not _restores_exception_state(instrs, position.get(inside.target)):
            inside = covering(instrs[k - 1].offset)     # (or the code laid out just before it)
        if inside is not None and _restores_exception_state(instrs, position.get(inside.target)) \
                and _between_ranges_of(spans, inside, jump.offset):
            # a jump into a handler's own code (an except clause or finally body, which the
            # cleanup that restores the exception state protects), or laid out right after that
            # code, from between that cleanup's ranges (``elif 0: pass`` inside an except clause
            # leaves its jump to the clause's next statement or to the clause's exit): nothing
            # enters a handler's code but the exception, and the way out of it starts with
            # ``POP_EXCEPT``
            added.append(dataclasses.replace(inside, start=jump.offset, end=jump.offset + 1))
            continue
        header = position.get(jump.target)
        if header is None or header < 1 or instrs[header].opname not in ("FOR_ITER", "ASYNC_FOR_ITER"):
            continue    # (a try body's way back to a loop around it is left out by design)
        before, after = covering(instrs[k - 1].offset), covering(instrs[header - 1].offset)
        if before is not None and after is not None \
                and (before.target, before.depth, before.lasti) == (after.target, after.depth, after.lasti):
            added.append(dataclasses.replace(before, start=jump.offset, end=jump.offset + 1))
    return entries + added if added else entries


def _spans_by_handler(ranges: list) -> dict[tuple, tuple[int, int]]:
    """For each handler, depth and ``lasti``: the first end and the last start of its ranges."""
    spans: dict[tuple, tuple[int, int]] = {}
    for e in ranges:
        key = (e.target, e.depth, e.lasti)
        first_end, last_start = spans.get(key, (e.end, e.start))
        spans[key] = (min(first_end, e.end), max(last_start, e.start))
    return spans


def _between_ranges_of(spans: dict[tuple, tuple[int, int]], entry, offset: int) -> bool:
    """Do ranges handled like ``entry`` (same handler, depth and ``lasti``) lie both before and
    after ``offset``?"""
    first_end, last_start = spans[(entry.target, entry.depth, entry.lasti)]
    return first_end <= offset < last_start


def _restores_exception_state(instrs: list, k: int | None) -> bool:
    """Is the handler at ``k`` the cleanup of a handler's own code (``COPY 3; POP_EXCEPT; RERAISE``)?"""
    return k is not None and k + 2 < len(instrs) and instrs[k].opname == "COPY" \
        and instrs[k + 1].opname == "POP_EXCEPT" and instrs[k + 2].opname == "RERAISE"
