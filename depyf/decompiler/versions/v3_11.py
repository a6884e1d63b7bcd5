"""CPython 3.11 -> the shared instruction model (see ``depyf.decompiler.instructions``)."""

from __future__ import annotations

import dis
import types

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.instructions import (
    ExceptionEntry,
    Features,
    Instr,
    async_for_entries_to_outer,
    extended_arg_landings,
    forward_offsets,
    lean_instructions,
    raw_exception_entries,
)
from depyf.decompiler.layout.value_tests import unthread_value_tests

_DROP = {"CACHE", "PRECALL", "NOP", "RESUME", "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS",
         "ASYNC_GEN_WRAP"}
_JUMPS = {
    "JUMP_FORWARD": "JUMP", "JUMP_BACKWARD": "JUMP", "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "JUMP_IF_FALSE_OR_POP": "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP": "JUMP_IF_TRUE_OR_POP",
    "FOR_ITER": "FOR_ITER",
}
_SAME = {
    "POP_TOP", "PUSH_NULL", "COPY", "SWAP", "RETURN_VALUE", "LOAD_CONST", "LOAD_FAST", "STORE_FAST",
    "DELETE_FAST", "LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE", "LOAD_CLASSDEREF",
    "LOAD_NAME", "STORE_NAME", "DELETE_NAME", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_ATTR", "STORE_ATTR",
    "DELETE_ATTR", "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "UNARY_NEGATIVE", "UNARY_NOT",
    "UNARY_INVERT", "UNARY_POSITIVE", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "BUILD_TUPLE", "BUILD_LIST",
    "BUILD_SET", "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_STRING", "BUILD_SLICE", "LIST_APPEND",
    "SET_ADD", "MAP_ADD", "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "LIST_TO_TUPLE",
    "UNPACK_SEQUENCE", "UNPACK_EX", "GET_ITER", "GET_LEN", "MATCH_CLASS", "MATCH_MAPPING",
    "MATCH_SEQUENCE", "MATCH_KEYS", "COPY_DICT_WITHOUT_KEYS", "LOAD_BUILD_CLASS", "SETUP_ANNOTATIONS",
    "PRINT_EXPR", "IMPORT_STAR", "IMPORT_NAME", "IMPORT_FROM", "LOAD_ASSERTION_ERROR", "RAISE_VARARGS",
    "RERAISE", "PUSH_EXC_INFO", "POP_EXCEPT", "CHECK_EXC_MATCH", "CHECK_EG_MATCH", "PREP_RERAISE_STAR",
    "WITH_EXCEPT_START", "BEFORE_WITH", "BEFORE_ASYNC_WITH", "GET_AITER", "YIELD_VALUE",
    "GET_YIELD_FROM_ITER", "GET_AWAITABLE", "GET_ANEXT", "END_ASYNC_FOR", "SEND", "MAKE_FUNCTION",
    "FORMAT_VALUE", "CALL", "CALL_FUNCTION_EX", "KW_NAMES", "LOAD_GLOBAL", "LOAD_METHOD",
    "RETURN_GENERATOR", "BINARY_OP",
}
HANDLED = frozenset(_DROP | set(_JUMPS) | _SAME)
FEATURES = Features(copies_return_tails=False, copies_loop_tests=True, handlers_laid_out_last=False,
                    jumps_cannot_raise=False,
                    threads_value_tests=True)
_CONVERSIONS = {0: None, 1: "s", 2: "r", 3: "a"}


def normalize(code: types.CodeType) -> tuple[list[Instr], list[ExceptionEntry]]:
    raw = lean_instructions(code)
    landings = extended_arg_landings(raw)
    table = [ExceptionEntry(e.start, e.end, e.target, e.depth, e.lasti)
             for e in raw_exception_entries(code)]
    out: list[Instr] = []
    dropped: list[int] = []
    kw_names = None
    qualname = getattr(code, "co_qualname", code.co_name)

    def emit(opname: str, argval: object = None, target: int | None = None) -> Instr:
        """Model the raw instruction being read (``ins``) as ``opname``."""
        if target is not None:
            target = landings.get(target, target)
        new = Instr(opname, ins.offset, ins.arg, argval, target, ins.lineno, extra={})
        out.append(new)
        return new

    i = 0
    while i < len(raw):
        ins = raw[i]
        name = ins.opname
        if name not in HANDLED:
            raise DecompilationError(f"unsupported opcode {name}", qualname=qualname, offset=ins.offset,
                                     opname=name)
        if name in _DROP:
            dropped.append(ins.offset)
        elif name == "RETURN_GENERATOR":
            dropped.append(ins.offset)
            if i + 1 < len(raw) and raw[i + 1].opname == "POP_TOP":
                dropped.append(raw[i + 1].offset)
                i += 1
        elif name in _JUMPS:
            emit(_JUMPS[name], target=ins.argval)
        elif name == "LOAD_GLOBAL":
            if ins.arg & 1:
                emit("PUSH_NULL")
            emit("LOAD_GLOBAL", ins.argval)
        elif name == "LOAD_METHOD":
            emit("LOAD_ATTR", ins.argval)
            emit("PUSH_NULL")
        elif name == "KW_NAMES":
            kw_names = code.co_consts[ins.arg]
            dropped.append(ins.offset)
        elif name == "CALL":
            if kw_names is not None:
                emit("LOAD_CONST", kw_names)
                emit("CALL_KW", ins.arg).slots = 2
                kw_names = None
            else:
                emit("CALL", ins.arg).slots = 2
        elif name == "CALL_FUNCTION_EX":
            emit("CALL_FUNCTION_EX", bool(ins.arg & 1)).slots = 2
        elif name == "BINARY_OP":
            emit("BINARY_OP", dis._nb_ops[ins.arg][1])
        elif name == "FORMAT_VALUE":
            emit("FORMAT_VALUE", (_CONVERSIONS[ins.arg & 3], bool(ins.arg & 4)))
        elif name == "SEND":
            i = _fold_send_loop(raw, i, out, dropped, table, qualname)
        else:
            emit(name, ins.argval)
        i += 1
    if FEATURES.threads_value_tests:
        unthread_value_tests(out)
    return out, _remap_table(out, dropped, table, raw)


def _fold_send_loop(raw, i, out, dropped, table, qualname) -> int:
    """``[GET_ANEXT|GET_AWAITABLE|GET_YIELD_FROM_ITER] LOAD_CONST None SEND ... JUMP`` -> one op.

    Returns the index of the loop's last raw instruction.
    """
    send = raw[i]
    if len(out) < 2 or out[-1].opname != "LOAD_CONST" or out[-1].argval is not None:
        raise DecompilationError("SEND outside an await/yield-from loop", qualname=qualname,
                                 offset=send.offset, opname="SEND")
    dropped.append(out.pop().offset)
    getter = out[-1]
    j = i + 1
    while j < len(raw) and raw[j].offset < send.argval:
        dropped.append(raw[j].offset)
        j += 1
    dropped.append(send.offset)
    if getter.opname == "GET_YIELD_FROM_ITER":
        getter.opname = "YIELD_FROM"
    elif getter.opname == "GET_AWAITABLE":
        getter.opname = "AWAIT"
    elif getter.opname == "GET_ANEXT":
        handler = next((e.target for e in table if e.start <= getter.offset < e.end), None)
        after = next((k for k in range(len(raw)) if raw[k].offset == handler), None)
        if after is None or raw[after].opname != "END_ASYNC_FOR":
            raise DecompilationError("async for without END_ASYNC_FOR", qualname=qualname,
                                     offset=getter.offset, opname="GET_ANEXT")
        getter.opname = "ASYNC_FOR_ITER"
        getter.target = raw[after + 1].offset if after + 1 < len(raw) else None
        getter.extra["end_async_for"] = handler
    else:
        raise DecompilationError("SEND after an unexpected instruction", qualname=qualname,
                                 offset=send.offset, opname=getter.opname)
    return j - 1


def _remap_table(out, dropped, table, raw):
    # END_ASYNC_FOR handlers are folded into ASYNC_FOR_ITER: drop them and their entries.
    async_handlers = {ins.extra["end_async_for"] for ins in out if ins.opname == "ASYNC_FOR_ITER"}
    if async_handlers:
        kept = []
        for ins in out:
            if ins.opname == "END_ASYNC_FOR" and ins.offset in async_handlers:
                dropped.append(ins.offset)
            else:
                kept.append(ins)
        out[:] = kept
        table = async_for_entries_to_outer(table, async_handlers)
    all_offsets = [r.offset for r in raw]
    fwd = forward_offsets(out, dropped, all_offsets)
    end_offset = raw[-1].offset + 2
    for ins in out:
        if ins.target is not None:
            ins.target = fwd.get(ins.target, end_offset)
    entries = []
    for e in table:
        start = fwd.get(e.start, end_offset)
        end = fwd.get(e.end, end_offset) if e.end in fwd else end_offset
        target = fwd.get(e.target)
        if target is None or start >= end:
            continue
        entries.append(ExceptionEntry(start, end, target, e.depth, e.lasti))
    return entries
