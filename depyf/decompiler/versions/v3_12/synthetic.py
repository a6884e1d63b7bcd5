"""The synthetic code objects made for inlined comprehensions (PEP 709), remembered by the
code object they stand for."""

from __future__ import annotations

import types
from collections import OrderedDict

from depyf.decompiler.instructions import ExceptionEntry, Instr

# Synthetic comprehension code objects -> their normalised instructions (bounded, most recent kept).
_SYNTHETIC: OrderedDict[int, tuple[types.CodeType, list[Instr], list[ExceptionEntry]]] = OrderedDict()


_SYNTHETIC_LIMIT = 4096


def synthetic_instructions(code: types.CodeType) -> tuple[list[Instr], list[ExceptionEntry]] | None:
    """The instructions of a synthetic comprehension code object made by a translator, if it is one."""
    entry = _SYNTHETIC.get(id(code))
    if entry is None or entry[0] is not code:
        return None
    return [_copy(i) for i in entry[1]], list(entry[2])


def _remember(code: types.CodeType, instrs: list[Instr], table: list[ExceptionEntry]) -> None:
    _SYNTHETIC[id(code)] = (code, instrs, table)
    while len(_SYNTHETIC) > _SYNTHETIC_LIMIT:
        _SYNTHETIC.popitem(last=False)


def _copy(ins: Instr) -> Instr:
    return Instr(
        ins.opname, ins.offset, ins.arg, ins.argval, ins.target, ins.lineno, ins.slots, dict(ins.extra)
    )
