"""Inlined comprehensions (PEP 709) translated back into calls of synthetic code objects."""

from __future__ import annotations

import dis
import types

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.instructions import Instr
from depyf.decompiler.versions.v3_12.synthetic import _remember
from depyf.decompiler.versions.v3_12.tables import _CO_FLAGS_KEPT, _COMPREHENSION_NAMES, _TEMPLATE


class Comprehensions:
    """``LOAD_FAST_AND_CLEAR`` and the inlined comprehension it starts."""

    def _drop_comprehension_cleanup(self, target: int) -> None:
        """``SWAP 2; POP_TOP; (SWAP n; STORE_FAST x)...; RERAISE 0`` restoring shadowed names."""
        k = self.pos.get(target)
        if k is None:
            return
        self.dead_handlers.add(target)
        while k < len(self.raw):
            ins = self.raw[k]
            self.drop(ins)
            if ins.opname == "RERAISE":
                return
            if ins.opname not in ("SWAP", "POP_TOP", "STORE_FAST"):
                raise self.error(ins, "unexpected instruction in a comprehension's cleanup handler")
            k += 1

    def op_LOAD_FAST_AND_CLEAR(self, i, ins, out):
        """``LOAD_FAST_AND_CLEAR x..; SWAP n; BUILD_X 0; SWAP 2; FOR_ITER..END_FOR; restores``."""
        k = i
        hidden: list[dis.Instruction] = []
        while self.raw[k].opname == "LOAD_FAST_AND_CLEAR":
            hidden.append(self.raw[k])
            k += 1
        swap, build = self.at(k), self.at(k + 1)
        if swap is None or swap.opname != "SWAP" or swap.arg != len(hidden) + 1 \
                or build is None or build.opname not in _COMPREHENSION_NAMES or build.arg != 0:
            raise self.error(ins, "LOAD_FAST_AND_CLEAR outside an inlined comprehension")
        first_loop = self.comprehension_loop_start(k + 2)
        loop_end, body_end = self.comprehension_loop_end(first_loop)
        for e in self.table:
            if (
                build.offset <= e.start < self.raw[loop_end - 1].offset
                and e.target not in self.dead_handlers
                and self.raw[self.index(e.target)].opname != "END_ASYNC_FOR"
            ):
                self._drop_comprehension_cleanup(e.target)
        synthetic = self.synthetic_comprehension(
            build, self.raw[k + 2], hidden, first_loop, loop_end, body_end
        )
        self.drop(*hidden, swap, build)
        self.emit_comprehension_call(out, ins, synthetic)
        # The saved values of the hidden names sit under the result, in the order SWAP n+1 left them.
        saved: list[str | None] = [None, *(h.argval for h in hidden)]
        saved[0], saved[-1] = saved[-1], saved[0]
        return self.comprehension_epilogue(body_end, [*saved[:-1], None], out)

    def emit_comprehension_call(
        self, out: list[Instr], ins: dis.Instruction, synthetic: types.CodeType
    ) -> None:
        """The iterator is on the stack: call the synthetic comprehension on it, as 3.11 does."""
        getter = self._comprehension_getter
        if getter is not None and not (out and out[-1].opname == getter):
            self.emit(out, ins, getter)  # 3.15: the iterable was not made an iterator yet
        self.emit(out, ins, "LOAD_CONST", synthetic)
        self.emit(out, ins, "MAKE_FUNCTION", 0, arg=0)
        self.emit(out, ins, "SWAP", 2, arg=2)
        self.emit(out, ins, "CALL", 0, arg=0)

    def comprehension_loop_end(self, first_loop: int) -> tuple[int, int]:
        """``(end of the loop's instructions, index after its exit cleanup)`` (exclusive indices)."""
        loop = self.raw[first_loop]
        if loop.opname == "FOR_ITER":
            end_for = self.index(loop.argval)
            tail = self.at(end_for + 1)
            return end_for, end_for + 1 + (1 if tail is not None and tail.opname in self.END_FOR_TAIL else 0)
        if loop.opname == "GET_ANEXT":
            handler = next((e.target for e in self.table if e.start <= loop.offset < e.end), None)
            k = self.pos.get(handler) if handler is not None else None
            if k is not None and self.raw[k].opname == "END_ASYNC_FOR":
                return k + 1, k + 1
        raise self.error(loop, "inlined comprehension without a loop")

    def comprehension_loop_start(self, k: int) -> int:
        """Index of the outermost loop after ``BUILD_X 0; SWAP 2``.

        3.13.1+ and 3.15 call GET_ITER (GET_AITER) again there (3.15 only there): it is dropped and
        ``emit_comprehension_call`` makes sure the caller has one.
        """
        swap = self.at(k)
        if swap is None or swap.opname != "SWAP" or swap.arg != 2:
            raise self.error(self.raw[k - 1], "inlined comprehension without its SWAP")
        self.drop(swap)
        getter = self.at(k + 1)
        self._comprehension_getter = None
        if getter is not None and getter.opname in ("GET_ITER", "GET_AITER"):
            self.drop(getter)
            self._comprehension_getter = getter.opname
            return k + 2
        return k + 1

    def synthetic_comprehension(self, build, anchor, hidden, first_loop, loop_end, body_end):
        """A code object standing for the comprehension; its instructions are kept in ``_SYNTHETIC``."""
        body: list[Instr] = []
        self.emit(body, build, build.opname, 0, arg=0)
        # At the offset of the (dropped) instruction after BUILD_X: jumps back to the loop must
        # land on FOR_ITER, not on this load.
        self.emit(body, anchor, "LOAD_FAST", ".0", arg=0, synthetic=True)
        body.extend(self.translate(first_loop, loop_end))
        exit_offset = self.raw[body_end].offset if body_end < len(self.raw) else self.end_offset
        body.append(Instr("RETURN_VALUE", exit_offset, None, None, None, body[-1].lineno if body else None))
        for k in range(loop_end, body_end):
            self.drop(self.raw[k])
        name = _COMPREHENSION_NAMES[build.opname]
        varnames = (".0",) + tuple(dict.fromkeys(h.argval for h in hidden))
        lineno = (
            build.positions.lineno if build.positions and build.positions.lineno else self.code.co_firstlineno
        )
        replacements = {
            "co_name": name,
            "co_argcount": 1,
            "co_posonlyargcount": 0,
            "co_kwonlyargcount": 0,
            "co_flags": (self.code.co_flags & _CO_FLAGS_KEPT) | 0x0010 | 0x0003,
            "co_varnames": varnames,
            "co_nlocals": len(varnames),
            "co_filename": self.code.co_filename,
            "co_firstlineno": lineno,
        }
        if hasattr(self.code, "co_qualname"):
            replacements["co_qualname"] = f"{self.qualname}.{name}"
        # The template's bytecode never touches a local, so any co_varnames is valid for it.
        synthetic = _TEMPLATE.replace(**replacements)
        # (every offset of the loop, dropped instructions too: a jump to a dropped TO_BOOL or
        # NOT_TAKEN goes on to the next kept instruction, as in the enclosing code)
        first = self.raw[first_loop].offset
        offsets = [offset for offset in self.all_offsets if first <= offset < exit_offset]
        _remember(synthetic, self.retarget(body, offsets), [])
        return synthetic

    def comprehension_epilogue(self, k: int, tail: list[str | None], out: list[Instr]) -> int:
        """Drop the stores restoring the shadowed names; keep what consumes the result.

        After the loop the stack ends ``saved_1 .. saved_n result``; the compiler restores with
        ``SWAP n+1; STORE_FAST x_n .. x_1`` but may have moved a store of the result first.
        """
        tail = list(tail)  # names of the saved values, bottom first; None marks the result
        while any(x is not None for x in tail):
            ins = self.at(k)
            if ins is None:
                raise DecompilationError("inlined comprehension without its restores", qualname=self.qualname)
            k += 1
            if ins.opname in self.JUMPS and self.JUMPS[ins.opname] == "JUMP" and ins.argval > ins.offset:
                self.drop(ins)  # over the cleanup handler placed between loop and restores
                k = self.index(ins.argval)
                continue
            self.drop(ins)
            for opname, argval in self.micro_ops(ins):
                if not any(x is not None for x in tail):
                    self.emit(out, ins, opname, argval)  # e.g. the load half of STORE_FAST_LOAD_FAST
                elif opname == "SWAP" and argval <= len(tail):
                    tail[-1], tail[-argval] = tail[-argval], tail[-1]
                elif opname == "STORE_FAST" and tail[-1] is not None:
                    if tail[-1] != argval:
                        raise self.error(ins, "inlined comprehension restores the wrong name")
                    tail.pop()
                elif tail[-1] is None and opname in ("STORE_FAST", "POP_TOP"):
                    tail.pop()
                    self.emit(out, ins, opname, argval)
                else:
                    raise self.error(ins, "unexpected instruction while restoring a comprehension's names")
        return k

    def micro_ops(self, ins: dis.Instruction) -> list[tuple[str, object]]:
        """``(opname, argval)`` steps of one raw instruction (superinstructions give several)."""
        return [(ins.opname, ins.argval)]
