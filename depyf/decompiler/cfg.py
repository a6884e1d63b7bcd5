"""Basic blocks and the control-flow graph, with each block's exception handler."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from depyf.decompiler.instructions import (
    FOR_ITERS,
    TERMINATORS,
    ExceptionEntry,
    Instr,
)


@dataclass
class Block:
    """Instructions ``[start, end)`` of the instruction list; one handler for all of them."""

    index: int
    start: int
    end: int
    handler: ExceptionEntry | None
    succs: list[int] = field(default_factory=list)   # normal-flow successors (block indices)
    preds: list[int] = field(default_factory=list)
    exc_preds: list[int] = field(default_factory=list)


class ControlFlowGraph:
    """Blocks of normalised instructions, split at jumps, jump targets and exception ranges."""

    def __init__(self, instrs: list[Instr], entries: list[ExceptionEntry]):
        self.instrs = instrs
        self.entries = entries
        self.index_of_offset: dict[int, int] = {}
        for i, ins in enumerate(instrs):
            self.index_of_offset.setdefault(ins.offset, i)
        self.handler_at = self._handlers()
        self.blocks: list[Block] = []
        self.block_of: list[int] = [0] * len(instrs)
        self._build()

    # -- construction -------------------------------------------------------------------
    def _handlers(self) -> list[ExceptionEntry | None]:
        """The entry covering each instruction: the first in table order that covers its offset
        (CPython's table is flat: at most one does). One pass over the offsets in order, each
        entry visiting only the instructions no earlier entry took, so many small ``try``
        statements cost no more than one big one."""
        order = sorted(range(len(self.instrs)), key=lambda i: self.instrs[i].offset)
        offsets = [self.instrs[i].offset for i in order]
        found: list[ExceptionEntry | None] = [None] * len(self.instrs)
        free = list(range(len(order) + 1))        # free[k]: first untaken index >= k (path-halved)

        def first_free(k: int) -> int:
            while free[k] != k:
                free[k] = free[free[k]]
                k = free[k]
            return k

        for e in self.entries:
            k = first_free(bisect.bisect_left(offsets, e.start))
            while k < len(order) and offsets[k] < e.end:
                found[order[k]] = e
                free[k] = k + 1
                k = first_free(k + 1)
        return found

    def pos(self, offset: int | None) -> int | None:
        """Instruction index of ``offset`` (None past the end)."""
        if offset is None:
            return None
        return self.index_of_offset.get(offset)

    def _build(self) -> None:
        n = len(self.instrs)
        leaders = {0}
        for i, ins in enumerate(self.instrs):
            if ins.opname in FOR_ITERS:
                leaders.add(i)  # a loop header even when no back edge reaches it
            if ins.target is not None:
                t = self.pos(ins.target)
                if t is not None:
                    leaders.add(t)
                leaders.add(i + 1)
            elif ins.opname in TERMINATORS:
                leaders.add(i + 1)
            if i > 0 and self.handler_at[i] != self.handler_at[i - 1]:
                leaders.add(i)
        for e in self.entries:
            t = self.pos(e.target)
            if t is not None:
                leaders.add(t)
        starts = sorted(x for x in leaders if x < n)
        for bi, s in enumerate(starts):
            e = starts[bi + 1] if bi + 1 < len(starts) else n
            self.blocks.append(Block(bi, s, e, self.handler_at[s]))
            for k in range(s, e):
                self.block_of[k] = bi
        for b in self.blocks:
            last = self.instrs[b.end - 1]
            succs = []
            if last.target is not None:
                t = self.pos(last.target)
                if last.opname != "JUMP" and b.end < n:
                    succs.append(self.block_of[b.end])
                if t is not None:
                    succs.append(self.block_of[t])
            elif last.opname not in TERMINATORS and b.end < n:
                succs.append(self.block_of[b.end])
            b.succs = list(dict.fromkeys(succs))
        # code nothing reaches (the handler of ``try: pass``, which the compiler keeps) is no
        # predecessor: its jumps back into a loop would make it part of the loop
        self.reachable = self._reachable()
        for index in sorted(self.reachable):
            b = self.blocks[index]
            for s in b.succs:
                self.blocks[s].preds.append(b.index)
            if b.handler is not None:
                h = self.pos(b.handler.target)
                if h is not None:
                    self.blocks[self.block_of[h]].exc_preds.append(b.index)

    def _reachable(self) -> set[int]:
        """Blocks reached from the entry by normal flow or by an exception raised in a reached block."""
        return self.reach([0] if self.blocks else [])

    def reach(self, starts: Iterable[int], keep: Callable[[int], bool] | None = None,
              raising: bool = True) -> set[int]:
        """Blocks reached from the blocks ``starts`` by normal flow or (with ``raising``) by
        raising, entering only blocks that ``keep`` accepts (all when None)."""
        seen: set[int] = set()
        work = list(starts)
        while work:
            index = work.pop()
            if index in seen or (keep is not None and not keep(index)):
                continue
            seen.add(index)
            b = self.blocks[index]
            work.extend(b.succs)
            if raising and b.handler is not None:
                h = self.pos(b.handler.target)
                if h is not None:
                    work.append(self.block_of[h])
        return seen

    # -- queries --------------------------------------------------------------------------
    def block_at(self, pos: int) -> Block:
        return self.blocks[self.block_of[pos]]

    def is_leader(self, pos: int) -> bool:
        return pos < len(self.instrs) and self.blocks[self.block_of[pos]].start == pos

    def handler_chain(self, pos: int) -> list[int]:
        """Handler target offsets protecting ``pos``, innermost first (through handler's handlers)."""
        chain = []
        seen = set()
        e = self.handler_at[pos] if pos < len(self.instrs) else None
        while e is not None and e.target not in seen:
            chain.append(e.target)
            seen.add(e.target)
            hp = self.pos(e.target)
            e = self.handler_at[hp] if hp is not None else None
        return chain
