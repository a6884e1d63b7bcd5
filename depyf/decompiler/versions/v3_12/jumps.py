"""Jump translation: jumps unthreaded and inverted as 3.11 lays them out, loop exits, offsets
remapped after instructions were dropped."""

from __future__ import annotations

import bisect
import dis
import itertools
from collections import defaultdict

from depyf.decompiler.instructions import ExceptionEntry, Instr, async_for_entries_to_outer
from depyf.decompiler.versions.v3_12.tables import _INVERTED, _OR_POP


class JumpTranslation:
    """Jumps, loop exits and the remapping of offsets."""

    def _find_dead_handlers(self) -> None:
        """CLEANUP_THROW handlers, the StopIteration wrapper and comprehension cleanups."""
        for target in {e.target for e in self.table}:
            k = self.pos.get(target)
            if k is None:
                continue
            ins = self.raw[k]
            if ins.opname == "CLEANUP_THROW":
                self.dead_handlers.add(target)
                self.drop(ins)
                nxt = self.at(k + 1)
                if nxt is not None and nxt.opname in self.JUMPS and self.JUMPS[nxt.opname] == "JUMP":
                    self.drop(nxt)
            elif (
                ins.opname == "CALL_INTRINSIC_1"
                and self.intrinsic_name(ins) == "INTRINSIC_STOPITERATION_ERROR"
            ):
                self.dead_handlers.add(target)
                self.drop(ins)
                nxt = self.at(k + 1)
                if nxt is not None and nxt.opname == "RERAISE":
                    self.drop(nxt)

    def jump(self, i: int, ins: dis.Instruction, out: list[Instr]) -> int:
        name = self.JUMPS[ins.opname]
        if name in _OR_POP and out and out[-1].opname == "COPY" and out[-1].argval == 1:
            nxt = self.at(i + 1)
            landing = self.at(self.pos.get(ins.argval, -1))
            after_landing = self.at(self.pos.get(ins.argval, -2) + 1)
            unthreaded = self._unthreaded(name, ins.argval)
            if nxt is not None and nxt.opname == "POP_TOP" and nxt.offset not in self.dropped \
                    and landing is not None and landing.opname == "POP_TOP" and after_landing is not None \
                    and unthreaded == ins.argval:
                # COPY 1; POP_JUMP_IF_X L; POP_TOP with L: POP_TOP (3.14 `a and b or c`: a false `a`
                # goes straight to `c`): the value is dropped on both paths, so this is
                # POP_JUMP_IF_X to the instruction after L's POP_TOP.
                out.pop()
                self.drop(nxt)
                self.emit(out, ins, name, target=after_landing.offset)
                return i + 2
            if nxt is not None and nxt.opname == "POP_TOP" and nxt.offset not in self.dropped:
                # COPY 1; POP_JUMP_IF_X L; POP_TOP  ==  JUMP_IF_X_OR_POP L
                copy = out.pop()
                out.append(Instr(_OR_POP[name], copy.offset, None, None, self.landing(unthreaded),
                                 copy.lineno))
                self.drop(ins, nxt)
                return i + 2
        folded = self._inverted_backward_jump(i, ins, name)
        if folded is not None:
            self.emit(out, ins, folded[0], target=folded[1])
            return i + 2
        if ins.opname == "JUMP_BACKWARD_NO_INTERRUPT":
            # not a loop's back edge: a jump to code the compiler placed earlier (the code after
            # a try statement, jumped to from its handlers)
            self.emit(out, ins, name, target=ins.argval, no_interrupt=True)
        else:
            self.emit(out, ins, name, target=ins.argval)
        return i + 1

    def _unthreaded(self, name: str, target: int) -> int:
        """Where a value-keeping ``COPY 1; POP_JUMP_IF_X`` jump goes before the compiler threaded it.

        In ``(a or b) and c`` a true ``a`` is the ``or``'s value and is tested by the ``and``'s own
        ``COPY 1; POP_JUMP_IF_FALSE``, which cannot jump; 3.14 jumps past that test, to its
        ``POP_TOP``. The model's jump goes to the test, as the source reads: recompiling the source
        gives the threaded jump back.
        """
        k = self.pos.get(target)
        if k is None or k < 2:
            return target
        test, copy = self.at(k - 1), self.at(k - 2)
        opposite = {"POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE", "POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE"}.get(
            name
        )
        if self.raw[k].opname == "POP_TOP" \
                and test.opname == opposite and test.offset not in self.dropped \
                and copy.opname == "COPY" and copy.argval == 1 and copy.offset not in self.dropped:
            return copy.offset
        return target

    def _inverted_backward_jump(self, i: int, ins: dis.Instruction, name: str) -> tuple[str, int] | None:
        """``POP_JUMP_IF_X L; JUMP_BACKWARD T; L:`` -> ``POP_JUMP_IF_NOT_X T``.

        3.12+ conditional jumps only go forward, so a jump back to a loop's head under a condition
        is compiled as the inverted condition over a JUMP_BACKWARD; 3.11 jumped back directly. The
        JUMP_BACKWARD is folded only when nothing else jumps to it (nor to a NOP before it).
        """
        inverse = _INVERTED.get(name)
        nxt, after = self.at(i + 1), self.at(i + 2)
        if inverse is None or nxt is None or after is None or nxt.offset in self.dropped:
            return None
        # L is the next kept instruction (a dropped NOP may sit between: 3.13 keeps one as a target)
        if self.JUMPS.get(nxt.opname) != "JUMP" or nxt.argval >= nxt.offset \
                or not nxt.offset < ins.argval <= after.offset:
            return None
        if any(o in self.jump_targets for o in range(ins.offset + 2, nxt.offset + 1, 2)):
            return None     # (also a jump to a dropped NOP before it: it lands on the JUMP_BACKWARD)
        self.drop(nxt)
        return inverse, nxt.argval

    def loop_exit(self, for_iter: dis.Instruction) -> int:
        """Offset after the END_FOR (and its tail) that ``for_iter`` jumps to; drops them."""
        k = self.pos.get(for_iter.argval)
        if k is None:
            return for_iter.argval
        end_for = self.raw[k]
        if end_for.opname != "END_FOR":
            return for_iter.argval
        self.drop(end_for)
        tail = self.at(k + 1)
        if tail is not None and tail.opname in self.END_FOR_TAIL:
            self.drop(tail)
            k += 1
        after = self.at(k + 1)
        return after.offset if after is not None else self.end_offset

    def retarget(self, instrs: list[Instr], offsets: list[int]) -> list[Instr]:
        """Point every jump of ``instrs`` at a kept instruction (dropped ones forward to the next)."""
        kept = sorted({ins.offset for ins in instrs})
        forward: dict[int, int] = {}
        j = 0
        for off in sorted(set(offsets) | set(kept)):
            while j < len(kept) and kept[j] < off:
                j += 1
            if j < len(kept):
                forward[off] = kept[j]
        end = max(kept) + 2 if kept else 0
        kept_set = set(kept)
        for ins in instrs:
            if ins.target is not None:
                ins.target = forward.get(ins.target, end if ins.target not in kept_set else ins.target)
        return instrs

    def remap(self, out: list[Instr], table: list[ExceptionEntry]) -> list[ExceptionEntry]:
        self.retarget(out, self.all_offsets)
        kept = sorted({ins.offset for ins in out})
        forward: dict[int, int] = {}
        j = 0
        for off in sorted(set(self.all_offsets) | {self.end_offset}):
            while j < len(kept) and kept[j] < off:
                j += 1
            forward[off] = kept[j] if j < len(kept) else self.end_offset
        table = async_for_entries_to_outer(table, self.async_for_handlers)
        offsets: list[int] | None = [ins.offset for ins in out]
        if any(a > b for a, b in itertools.pairwise(offsets)):
            offsets = None
        kept_entries = []
        for e in table:
            if e.target in self.dead_handlers or e.target in self.dropped:
                continue
            start, end = forward.get(e.start, self.end_offset), forward.get(e.end, self.end_offset)
            target = forward.get(e.target)
            if target is None or target == self.end_offset or start >= end:
                continue
            kept_entries.append(ExceptionEntry(start, end, target, e.depth, e.lasti))
        protected_by: dict[tuple, list[tuple[int, int]]] = defaultdict(list)   # handler -> its ranges
        for e in kept_entries:
            protected_by[(e.target, e.depth, e.lasti)].append((e.start, e.end))
        entries: list[ExceptionEntry] = []
        for e in kept_entries:
            last = entries[-1] if entries else None
            key = (e.target, e.depth, e.lasti)
            if last is not None and (last.target, last.depth, last.lasti) == key and (
                last.end == e.start or self._inner_jumps_only(
                    out, offsets, last.end, e.start, [(last.start, e.end), *protected_by[key]])
            ):
                # split by a drop, or by jumps that stay inside what the handler protects (3.13
                # leaves the jump over a removed ``if <false constant>:`` out of the range; it may
                # land in a later piece, past code another handler protects)
                entries[-1] = ExceptionEntry(last.start, e.end, e.target, e.depth, e.lasti)
            else:
                entries.append(e)
        return entries

    @staticmethod
    def _inner_jumps_only(out: list[Instr], offsets: list[int] | None, gap: int, resume: int,
                          ranges: list[tuple[int, int]]) -> bool:
        """Is ``[gap, resume)`` only jumps that land inside one of ``ranges`` (start, end)?
        (``offsets``: those of ``out``, where they never go down, to find the stretch by bisection.)

        Such jumps cannot raise; 3.13 leaves some (a loop's ``POP_JUMP_IF_X; JUMP_BACKWARD``) out of
        the exception range around them, which would cut the protected region in two.
        """
        if offsets is None:
            inside = [ins for ins in out if gap <= ins.offset < resume]
        else:
            inside = out[bisect.bisect_left(offsets, gap):bisect.bisect_left(offsets, resume)]
        return bool(inside) and all(
            ins.opname in ("JUMP", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE",
                           "POP_JUMP_IF_NOT_NONE") and ins.target is not None
            and any(start <= ins.target < end for start, end in ranges)
            for ins in inside)
