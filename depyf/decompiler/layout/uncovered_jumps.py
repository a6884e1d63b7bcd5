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

    def covering(offset: int):
        k = bisect.bisect_right(starts, offset) - 1
        while k >= 0:
            e = ranges[k]
            if e.start <= offset < e.end:
                return e
            k -= 1
        return None

    uncovered = [k for k in range(1, len(instrs)) if instrs[k].opname == "JUMP"
                 and instrs[k].target is not None and covering(instrs[k].offset) is None]
    if not uncovered:
        return entries      # (the common case: no position map to build)
    position = {ins.offset: k for k, ins in reversed(list(enumerate(instrs)))}
    added = []
    for k in uncovered:
        jump = instrs[k]
        inside = covering(jump.target)
        if inside is None or not _restores_exception_state(instrs, position.get(inside.target)):
            inside = covering(instrs[k - 1].offset)     # (or the code laid out just before it)
        if inside is not None and _restores_exception_state(instrs, position.get(inside.target)) \
                and _between_ranges_of(ranges, inside, jump.offset):
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


def _between_ranges_of(ranges: list, entry, offset: int) -> bool:
    """Do ranges handled like ``entry`` (same handler, depth and ``lasti``) lie both before and
    after ``offset``?"""
    key = (entry.target, entry.depth, entry.lasti)
    alike = [e for e in ranges if (e.target, e.depth, e.lasti) == key]
    return any(e.end <= offset for e in alike) and any(e.start > offset for e in alike)


def _restores_exception_state(instrs: list, k: int | None) -> bool:
    """Is the handler at ``k`` the cleanup of a handler's own code (``COPY 3; POP_EXCEPT; RERAISE``)?"""
    return k is not None and k + 2 < len(instrs) and instrs[k].opname == "COPY" \
        and instrs[k + 1].opname == "POP_EXCEPT" and instrs[k + 2].opname == "RERAISE"
