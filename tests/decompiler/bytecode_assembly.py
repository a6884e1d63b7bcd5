"""Hand-assembled bytecode for the decompiler's tests: shapes the compiler never emits for source
but Dynamo's bytecode has (stack code), straight-line only (no jumps, no line table)."""

from __future__ import annotations

import dis
import sys
import types


def assemble(template: types.FunctionType, program: list[tuple[str, int]], consts: list,
             names: tuple = ()) -> types.CodeType:
    """Code of ``template`` with ``program`` as its body. 3.11+: a RESUME goes first where the
    program has none, and each instruction gets its inline cache entries."""
    if sys.version_info >= (3, 11) and (not program or program[0][0] != "RESUME"):
        program = [("RESUME", 0), *program]
    cache = getattr(dis, "_inline_cache_entries", None)
    out = bytearray()
    for opname, arg in program:
        op = dis.opmap[opname]
        out += bytes([op, arg])
        if cache is not None:
            out += bytes(2 * (cache[op] if isinstance(cache, (list, tuple)) else cache.get(opname, 0)))
    changes = {"co_code": bytes(out), "co_consts": tuple(consts), "co_names": names, "co_stacksize": 16,
               "co_linetable": b""}
    if sys.version_info >= (3, 11):
        changes["co_exceptiontable"] = b""
    return template.__code__.replace(**changes)
