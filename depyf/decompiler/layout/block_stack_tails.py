"""The copies of return sequences and exits that a compiler with a block stack (SETUP_* and
POP_BLOCK; 3.10) makes where it copies return tails (``Features.copies_return_tails``), shared
again. Its normaliser replays the block stack, so each instruction comes with its handler
(``cover``) and its stack depth (``depth_of``): copies agree in those too.
"""

from __future__ import annotations

from depyf.decompiler.instructions import Instr, copy_key
from depyf.decompiler.layout.break_tails import share_break_tail_copies
from depyf.decompiler.layout.chain_copies import share_value_tail_copies
from depyf.decompiler.layout.copied_tails import chain_operand_copies, hoist_break_tails

_NOT_IN_TAIL = frozenset({"PUSH_EXC_INFO", "POP_EXCEPT", "RERAISE", "CHECK_EXC_MATCH", "YIELD_VALUE",
                          "YIELD_FROM", "AWAIT", "RAISE_VARARGS"})


def share_return_tails(out: list[Instr], marks: dict[int, object], breaks: dict[int, int], cover: dict,
                        depth_of: dict) -> None:
    """Undo 3.10's copies of the code after a try, except clause or with that ends in a return.

    3.10 copies a small block ending in RETURN_VALUE (and a block with no line of its own, such as
    the POP_BLOCK and finally body after a try) into every block that jumps to it; 3.11 keeps one,
    after the handlers, which is where the model expects the exits of a protected region to meet.
    Straight-line code ending in a return that starts where a region was left (not inside a finally
    body run by its handler), when it reads nothing from the stack under it (a with's exit call
    apart, for copies that leave the same with) and its copies agree in instructions, lines,
    exception handlers and stack depth, becomes jumps to the last copy.
    """
    targets = {ins.target for ins in out if ins.target is not None}
    replace: dict[int, tuple[int, int]] = {}
    used: set[int] = set()
    # a ``break`` in a for loop pops the iterator, then 3.10 copies the code after the loop when it
    # is a small return: jump there again, as 3.11 does
    for m, exit_offset in breaks.items():
        q = next((k for k, ins in enumerate(out) if ins.offset >= exit_offset), None)
        if q is None or q == m or m >= len(out):
            continue
        k = 0
        while m + k < len(out) and q + k < len(out) and k < 64:
            a, b = out[m + k], out[q + k]
            if _placed_key(a, cover, depth_of) != _placed_key(b, cover, depth_of) \
                    or a.target is not None or b.target is not None or (k and a.offset in targets):
                break
            if a.opname == "RETURN_VALUE":
                replace[m] = (m + k, out[q].offset)
                used.update(range(m, m + k + 1))
                break
            k += 1
    found: dict[int, tuple] = {}  # mark -> (its return, depth, kind of mark)
    for m in sorted(marks):
        base = depth_of.get(id(out[m])) if m < len(out) else None
        scan = m
        if isinstance(marks[m], tuple):  # the end of a with body: its __exit__ call comes first
            n = _exit_call_length(out, m)
            if n is None or base is None or any(out[k].offset in targets for k in range(m + 1, m + n)):
                continue
            scan, base = m + n, base - 1
        j = scan
        while j < len(out) and j < m + 64 and out[j].target is None and out[j].opname not in _NOT_IN_TAIL \
                and out[j].opname != "RETURN_VALUE" and (j == m or out[j].offset not in targets):
            depth = depth_of.get(id(out[j]))
            if base is None or depth is None or depth < base or depth == base and not (
                    out[j].opname.startswith("LOAD_") or out[j].opname == "PUSH_NULL"
                    or out[j].opname in ("DELETE_FAST", "DELETE_NAME", "DELETE_GLOBAL", "DELETE_DEREF")
                    or out[j].opname.startswith("BUILD_") and out[j].argval == 0):
                break  # would read a value from under the copy
            j += 1
        returns = base + 1
        if (
            scan < j < len(out) - 1
            and out[j - 1].opname == "SWAP"
            and out[j - 1].argval == 2
            and out[j].opname == "POP_EXCEPT"
            and isinstance(cover[id(out[j - 1])], tuple)
            and cover[id(out[j - 1])][0] == "cleanup"
            and not {out[j].offset, out[j + 1].offset} & targets
        ):
            j, returns = j + 1, base  # a return from an except clause: the same handler's state goes
        if j == scan or j >= len(out) or out[j].opname != "RETURN_VALUE" or out[j].offset in targets \
                or depth_of.get(id(out[j])) != returns:
            continue
        found[m] = (j, base, marks[m])
    taken: set[int] = set(used)
    tails: dict[tuple, dict[tuple[int, int], list[int]]] = {}
    for m, (j, base, kind) in found.items():
        if m in used:
            continue
        key = (tuple((*copy_key(ins), ins.lineno) for ins in out[m:j + 1]),
               tuple(cover[id(ins)] for ins in out[m:j + 1]), base, kind)
        tails.setdefault(key, {}).setdefault((m, j), []).append(m)
    for copies in sorted(tails.values(), key=lambda c: -max(j - first for first, j in c)):
        copies = {r: ms for r, ms in copies.items() if not taken.intersection(range(r[0], r[1] + 1))}
        if len(copies) < 2:
            continue
        keep = max(copies)
        for (first, j), from_marks in copies.items():
            used.update(from_marks)
            taken.update(range(first, j + 1))
            if (first, j) != keep:
                replace[first] = (j, out[keep[0]].offset)
    for m in sorted(replace, reverse=True):
        j, target = replace[m]
        jump = Instr("JUMP", out[m].offset, None, None, target, out[m].lineno)
        cover[id(jump)] = cover[id(out[m])]
        out[m:j + 1] = [jump]


def _exit_call_length(out: list[Instr], m: int) -> int | None:
    """Length of the ``__exit__(None, None, None)`` call (awaited for async with) starting at ``m``."""
    ops = out[m:m + 6]
    if len(ops) < 5 or any(x.opname != "LOAD_CONST" or x.argval is not None for x in ops[:3]) \
            or ops[3].opname != "CALL" or ops[3].argval != 2:
        return None
    n = 5 if ops[4].opname != "AWAIT" else 6
    return n if len(ops) >= n and ops[n - 1].opname == "POP_TOP" else None


def _placed_key(ins: Instr, cover: dict, depth_of: dict) -> tuple:
    """``copy_key`` with what 3.10's copies keep of where they lie: the line, the handler, the depth."""
    return *copy_key(ins), ins.lineno, cover[id(ins)], depth_of.get(id(ins))


def _same_code(out: list[Instr], a: int, b: int, cover: dict, depth_of: dict) -> int | None:
    """Length of the straight-line code at ``a`` that runs as the code at ``b`` does: the same
    instructions up to a return or raise, or up to a jump into ``b``'s code at the place the copy
    has reached (where ``share_return_tails`` already made the rest of the copy a jump)."""
    k = 0
    while a + k < len(out) and b + k < len(out) and k < 16:
        x, y = out[a + k], out[b + k]
        if k and x.opname == "JUMP" and x.target == y.offset:
            return k + 1
        if _placed_key(x, cover, depth_of) != _placed_key(y, cover, depth_of) \
                or x.target is not None or y.target is not None:
            return None
        if x.opname in ("RETURN_VALUE", "RAISE_VARARGS"):
            return k + 1
        if x.opname in _NOT_IN_TAIL and x.opname != "POP_EXCEPT":
            return None
        k += 1
    return None


_COMPARES = frozenset({"COMPARE_OP", "IS_OP", "CONTAINS_OP"})


def share_chain_exits(out: list[Instr], cover: dict, depth_of: dict) -> None:
    """Undo 3.10's copies of the return after a chained comparison ``a < b < c``.

    As a value, the last comparison and the cleanup of a failed one (``SWAP 2; POP_TOP``) both end
    in a copy of what follows; as a condition, the cleanup (``POP_TOP``) ends in a copy of the code
    the last test jumps to. The first copy becomes a jump to the other, as 3.11 lays it out.
    """
    first_at: dict[int, int] = {}
    for k, ins in enumerate(out):
        first_at.setdefault(ins.offset, k)
    targets = {ins.target for ins in out if ins.target is not None}

    def index(offset):
        return next((k for k, ins in enumerate(out) if ins.offset >= offset), None)

    replace: dict[int, tuple[int, int]] = {}
    for k, ins in enumerate(out):
        if ins.target is None or k < 3 or out[k - 1].opname not in _COMPARES \
                or [x.opname for x in out[k - 3:k - 1]] != ["SWAP", "COPY"]:
            continue
        t = index(ins.target)
        if t is None or t <= k:
            continue
        if ins.opname in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP") and t + 2 < len(out) \
                and out[t].opname == "SWAP" and out[t].argval == 2 and out[t + 1].opname == "POP_TOP":
            # the copy before the cleanup, after the last comparison
            for n in range(1, 17):
                a = t - n
                if a <= k or out[a - 1].opname not in _COMPARES:
                    continue
                if _same_code(out, a, t + 2, cover, depth_of) == n \
                        and not any(out[x].offset in targets for x in range(a + 1, t)):
                    replace[a] = (t - 1, out[t + 2].offset)
                break
            if out[t - 1].opname == "RETURN_VALUE":
                replace.update(chain_operand_copies(
                    out, k, t - 1, lambda x: _placed_key(x, cover, depth_of)))
        elif ins.opname in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE") and t + 1 < len(out) \
                and out[t].opname == "POP_TOP" and out[t + 1].offset not in targets:
            last = next(
                (
                    j
                    for j in range(k + 1, t)
                    if out[j].opname in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE")
                    and out[j].target is not None
                    and index(out[j].target) != t
                ),
                None,
            )
            if last is None:
                continue
            if out[last].opname == ins.opname:  # the last test fails by jumping: its target is copied
                x = index(out[last].target)
                if x is None or x <= t + 1:
                    continue
                n = _same_code(out, t + 1, x, cover, depth_of)
                if n and not any(out[j].offset in targets for j in range(t + 2, t + 1 + n)):
                    replace[t + 1] = (t + n, out[x].offset)
            else:  # it fails by falling through: that code is the copy, jump to the cleanup's
                n = _same_code(out, last + 1, t + 1, cover, depth_of)
                if (
                    n
                    and last + n < t
                    and not any(out[j].offset in targets for j in range(last + 1, last + 1 + n))
                ):
                    replace[last + 1] = (last + n, out[t + 1].offset)
    for a in sorted(replace, reverse=True):
        end, target = replace[a]
        jump = Instr("JUMP", out[a].offset, None, None, target, out[a].lineno)
        cover[id(jump)] = cover[id(out[a])]
        out[a:end + 1] = [jump]


def hoist_placed_break_tails(out: list[Instr], cover: dict, depth_of: dict) -> None:
    """``hoist_break_tails`` for 3.10: a copy starts at the loop's stack depth and stays in the
    loop's exception region; the moved copy keeps that region and those depths."""
    def fits(s: int, r: int, back: Instr) -> bool:
        return depth_of.get(id(out[s])) == depth_of.get(id(back)) \
            and all(cover[id(ins)] == cover[id(back)] for ins in out[s:r + 1])

    def made(new: Instr, old: Instr, back: Instr) -> None:
        cover[id(new)] = cover[id(back)]
        depth_of[id(new)] = depth_of.get(id(old))

    hoist_break_tails(out, fits, made)


def share_placed_break_tail_copies(out: list[Instr], cover: dict, depth_of: dict) -> None:
    """``share_break_tail_copies`` for 3.10: a copy and the code it copies lie under the same
    handler at the same stack depth; the jump that replaces a copy keeps the copy's."""
    def same_place(a: Instr, b: Instr) -> bool:
        return cover[id(a)] == cover[id(b)] and depth_of.get(id(a)) == depth_of.get(id(b))

    def made(jump: Instr, first: Instr) -> None:
        cover[id(jump)] = cover[id(first)]
        depth_of[id(jump)] = depth_of.get(id(first))

    share_break_tail_copies(out, same_place, lambda e: True, made)


def drop_copied_reraises(out: list[Instr], cover: dict) -> None:
    """A finally handler's last ``RERAISE`` copied into the branch that jumps to it (a one-
    instruction block that ends the code, copied like a return tail): one of the two is enough."""
    out[:] = [ins for k, ins in enumerate(out)
              if not (ins.opname == "RERAISE" and k + 1 < len(out) and out[k + 1].opname == "RERAISE"
                      and out[k + 1].argval == ins.argval and cover[id(out[k + 1])] == cover[id(ins)])]


def share_placed_value_tail_copies(out: list[Instr], cover: dict, depth_of: dict) -> None:
    """``share_value_tail_copies`` for 3.10: copies under the same handler; each jump that replaces
    a copy keeps the copy's region and depth."""
    def keep_place(jump: Instr, first: Instr) -> None:
        cover[id(jump)] = cover[id(first)]
        depth_of[id(jump)] = depth_of.get(id(first))

    share_value_tail_copies(out, lambda a, b: cover[id(a)] == cover[id(b)], keep_place)


def share_jumped_to_tail_copies(out: list[Instr], cover: dict, depth_of: dict) -> None:
    """The code after a conditional expression, copied whole for the branch that jumps past the
    other: ``g(k0=0, ..., k15=15, k=1 if c else 2, j=3)`` builds its many keywords with
    ``MAP_ADD``, which has no line of its own, and 3.10 copies a returning block whose first
    instruction has no line into each jump to it, whatever its length. The copy lies right after
    the original's return and only that jump enters it. The jump goes to the original again (the
    same straight-line code, lines, handler and stack depth) and the copy is dropped."""
    index_of = {ins.offset: n for n, ins in enumerate(out)}
    entered = [ins.target for ins in out if ins.target is not None]
    k = len(out) - 1
    while k >= 0:
        jump = out[k]
        k -= 1
        if jump.opname != "JUMP" or jump.target is None:
            continue
        t = index_of.get(jump.target)
        if t is None or t <= k + 1 or out[t - 1].opname != "RETURN_VALUE" or entered.count(jump.target) != 1:
            continue
        end = t
        while end < len(out) and out[end].target is None and out[end].opname not in _NOT_IN_TAIL \
                and out[end].opname != "RETURN_VALUE" and (end == t or out[end].offset not in entered):
            end += 1
        if end >= len(out) or out[end].opname != "RETURN_VALUE" or out[end].offset in entered:
            continue
        s = t - (end - t + 1)
        if s <= k + 1 or any(out[n].offset in entered for n in range(s + 1, t)) \
                or any(_placed_key(out[s + n], cover, depth_of) != _placed_key(out[t + n], cover, depth_of)
                       or out[s + n].target is not None for n in range(end - t + 1)):
            continue
        jump.target = out[s].offset
        del out[t:end + 1]
        index_of = {ins.offset: n for n, ins in enumerate(out)}     # (positions after the copy moved)
        entered = [ins.target for ins in out if ins.target is not None]
