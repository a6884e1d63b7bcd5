"""The translator's driver: one code object's raw instructions through the ``op_<NAME>``
translations, then the layout passes its version's features call for (``Translator.normalize``)."""

from __future__ import annotations

import dis
import types

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.instructions import (
    ExceptionEntry,
    Features,
    Instr,
    extended_arg_landings,
    raw_exception_entries,
    raw_instructions,
)
from depyf.decompiler.layout.break_tails import share_break_tail_copies
from depyf.decompiler.layout.chain_copies import (
    share_chain_value_copies,
    share_duplicated_returns,
    share_value_tail_copies,
)
from depyf.decompiler.layout.copied_tails import hoist_break_tails
from depyf.decompiler.layout.value_tests import unthread_value_tests
from depyf.decompiler.versions.v3_12.comprehensions import Comprehensions
from depyf.decompiler.versions.v3_12.jumps import JumpTranslation
from depyf.decompiler.versions.v3_12.opcodes import Opcodes
from depyf.decompiler.versions.v3_12.tables import DROP, HANDLED, JUMPS, SAME, _tests_truth_next


class Translator(
    JumpTranslation, Opcodes, Comprehensions,
):
    """Translates one code object's raw instructions into the shared model.

    Subclasses for later versions override the class attributes and ``op_<NAME>`` methods.
    ``features`` are the layout features of the version whose bytecode it reads (its module's
    ``FEATURES``): they choose the layout passes ``normalize`` runs.
    """

    HANDLED = HANDLED
    DROP = DROP
    JUMPS = JUMPS
    SAME = SAME
    # What follows END_FOR at a loop exit and also belongs to it (3.13: POP_TOP, 3.14: POP_ITER).
    END_FOR_TAIL: frozenset[str] = frozenset()
    # Opnames dropped before pattern matching (3.13+: TO_BOOL, 3.14+: NOT_TAKEN).
    INVISIBLE: frozenset[str] = frozenset()
    # True where LOAD_GLOBAL pushes its NULL after the global (3.13+), False where before (3.12).
    NULL_AFTER_GLOBAL = False

    def __init__(self, code: types.CodeType, features: Features):
        self.code = code
        self.features = features
        self.qualname = getattr(code, "co_qualname", code.co_name)
        all_raw = list(raw_instructions(code))
        self.all_offsets = [r.offset for r in all_raw]
        self.end_offset = all_raw[-1].offset + 2 if all_raw else 0
        self.dropped: set[int] = set()
        self.raw = []
        for k, ins in enumerate(all_raw):
            if ins.opname not in self.HANDLED and ins.opname not in self.INVISIBLE:
                raise DecompilationError(f"unsupported opcode {ins.opname}", qualname=self.qualname,
                                         offset=ins.offset, opname=ins.opname)
            if ins.opname == "TO_BOOL" and not _tests_truth_next(all_raw, k):
                self.raw.append(ins)        # a value converted to bool: ``not not x``
            elif ins.opname in self.DROP or ins.opname in self.INVISIBLE:
                self.dropped.add(ins.offset)
            else:
                self.raw.append(ins)
        self.pos = {ins.offset: k for k, ins in enumerate(self.raw)}
        self.landings = extended_arg_landings(all_raw)
        for prefix, landing in self.landings.items():   # a jump to the prefix finds the instruction
            if landing in self.pos:
                self.pos[prefix] = self.pos[landing]
        self.jump_targets = {
            self.landing(ins.argval)
            for ins in all_raw if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs
        }
        self.table = [ExceptionEntry(e.start, e.end, e.target, e.depth, e.lasti)
                      for e in raw_exception_entries(code)]
        self.dead_handlers: set[int] = set()  # handler targets whose entries are removed
        self.async_for_handlers: set[int] = set()  # END_ASYNC_FOR targets (folded into ASYNC_FOR_ITER)
        self.kw_names: tuple | None = None
        self._find_dead_handlers()

    def normalize(self) -> tuple[list[Instr], list[ExceptionEntry]]:
        out = self.translate(0, len(self.raw))
        if self.features.copies_return_tails:
            share_chain_value_copies(out)
            share_duplicated_returns(out)
            share_value_tail_copies(out, lambda a, b: self.handler_of(a.offset) == self.handler_of(b.offset))
            hoist_break_tails(out, lambda first, last, back: all(   # the loop's handler protects the copy
                self.handler_of(ins.offset) == self.handler_of(back.offset) for ins in out[first:last + 1])
                and not self.handles_code_before(back.target, back.offset),
                lambda new, old, back: None)
            share_break_tail_copies(
                out, lambda a, b: self.handler_of(a.offset) == self.handler_of(b.offset),
                lambda e: not self.handles_code_before(out[e].target, out[e].offset),
                lambda jump, first: None)
        if self.features.threads_value_tests:
            unthread_value_tests(out)
        return out, self.remap(out, self.table)

    def handles_code_before(self, start: int, end: int) -> bool:
        """Does code between the offsets ``start`` and ``end`` handle exceptions raised before
        ``start``? Then a jump from ``end`` back to ``start`` closes no loop: it is the way on of
        except clauses laid out after the code that follows their try statement."""
        return any(start < e.target <= end and e.start < start for e in self.table)

    def handler_of(self, offset: int) -> int | None:
        """The handler that protects the raw instruction at ``offset`` (None: none)."""
        return next((e.target for e in self.table if e.start <= offset < e.end), None)

    def translate(self, start: int, end: int) -> list[Instr]:
        """Translate ``raw[start:end]`` into a new instruction list."""
        out: list[Instr] = []
        i = start
        while i < end:
            ins = self.raw[i]
            if ins.offset in self.dropped:
                i += 1
                continue
            ins = self.adjust(ins)
            name = ins.opname
            handler = getattr(self, "op_" + name, None)
            if handler is not None:
                i = handler(i, ins, out)
                continue
            if name in self.JUMPS:
                i = self.jump(i, ins, out)
                continue
            if name in self.SAME:
                self.emit(out, ins, name, ins.argval)
                i += 1
                continue
            raise DecompilationError(f"no translation for {name}", qualname=self.qualname, offset=ins.offset,
                                     opname=name)
        return out

    def adjust(self, ins: dis.Instruction) -> dis.Instruction:
        """Hook: rewrite a raw instruction before translation (3.15 fixes stack depths here)."""
        return ins

    def emit(self, out: list[Instr], ins: dis.Instruction, opname: str, argval: object = None,
             target: int | None = None, *, arg: int | None = -1, slots: int = 2, **extra: object) -> Instr:
        line = ins.positions.lineno if ins.positions else None
        if target is not None:
            target = self.landing(target)
        new = Instr(
            opname, ins.offset, ins.arg if arg == -1 else arg, argval, target, line, slots, dict(extra)
        )
        out.append(new)
        return new

    def landing(self, offset: int) -> int:
        """Where a jump to ``offset`` lands: past an ``EXTENDED_ARG`` prefix, on the instruction."""
        return self.landings.get(offset, offset)

    def drop(self, *instructions: dis.Instruction) -> None:
        self.dropped.update(i.offset for i in instructions)

    def error(self, ins: dis.Instruction, message: str) -> DecompilationError:
        return DecompilationError(message, qualname=self.qualname, offset=ins.offset, opname=ins.opname)

    def at(self, k: int) -> dis.Instruction | None:
        return self.raw[k] if 0 <= k < len(self.raw) else None

    def index(self, offset: int) -> int:
        return self.pos[offset]

