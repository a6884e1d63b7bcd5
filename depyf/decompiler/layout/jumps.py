"""The one jump follower: where control goes from a place through unconditional jumps.

Compilers thread jumps (a jump to a jump goes straight to the last target) in some places and not
in others, and lay out code that only jumps on (a chained comparison's ``POP_TOP; JUMP``, the
code after a try statement that its handlers jump back to); reading the layout back asks, in many
places, where a jump finally lands. Each of them follows jumps here, with what it may pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from depyf.decompiler.instructions import Instr


def follow_jumps(
    instrs: Sequence[Instr],
    pos_of: Callable[[int | None], int | None],
    p: int | None,
    *,
    back: bool | Callable[[int, int], bool] = False,
    steps: int | None = 16,
    jump_at: Callable[[int], int | None] | None = None,
) -> int | None:
    """Where control goes from position ``p`` of ``instrs`` through unconditional jumps: the first
    place reached that is not a jump to follow.

    ``pos_of`` gives the position of a jump's target offset (None: none, past the code). A jump
    forward is followed; a jump back (or to where it started) only where ``back`` is True or
    ``back(its target, its position)`` holds. ``jump_at(q)`` is the position of the jump that the
    code at ``q`` reaches doing nothing that counts (None: it reaches none); by default ``q``
    itself where it holds a ``JUMP``. At most ``steps`` jumps are followed (None: until a place
    comes again). A jump to no instruction leads to None where every jump back is followed
    (``back`` True), and is not followed elsewhere. ``p`` None or past the code is returned as it is.
    """
    seen: set[int] = set()
    taken = 0
    while steps is None or taken < steps:
        if p is None or p >= len(instrs) or steps is None and p in seen:
            return p
        seen.add(p)
        j = jump_at(p) if jump_at is not None else p if instrs[p].opname == "JUMP" else None
        if j is None:
            return p
        t = pos_of(instrs[j].target)
        if t is None:
            if back is not True:
                return p
        elif t <= p and not (back is True or callable(back) and back(t, j)):
            return p
        p = t
        taken += 1
    return p
