"""3.10 instructions translated onto the model's: ``normalize``."""

from __future__ import annotations

import dis
import types

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.instructions import (
    ExceptionEntry,
    Features,
    Instr,
    extended_arg_landings,
    raw_instructions,
)
from depyf.decompiler.layout.block_stack_tails import (
    drop_copied_reraises,
    hoist_placed_break_tails,
    share_chain_exits,
    share_jumped_to_tail_copies,
    share_placed_break_tail_copies,
    share_placed_value_tail_copies,
    share_return_tails,
)
from depyf.decompiler.layout.value_tests import unthread_value_tests
from depyf.decompiler.versions.v3_10.block_flow import (
    _DUP,
    _ROT,
    _BlockFlow,
    _exit_points,
    _is_exc,
    _model_depth,
    _table,
)

_DROP = frozenset({"NOP", "EXTENDED_ARG", "GEN_START"})


_JUMPS = {
    "JUMP_ABSOLUTE": "JUMP", "JUMP_FORWARD": "JUMP", "POP_JUMP_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_IF_TRUE": "POP_JUMP_IF_TRUE", "JUMP_IF_FALSE_OR_POP": "JUMP_IF_FALSE_OR_POP",
    "JUMP_IF_TRUE_OR_POP": "JUMP_IF_TRUE_OR_POP", "FOR_ITER": "FOR_ITER",
}


_BINARY = {
    "ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "MATRIX_MULTIPLY": "@", "TRUE_DIVIDE": "/",
    "FLOOR_DIVIDE": "//", "MODULO": "%", "POWER": "**", "LSHIFT": "<<", "RSHIFT": ">>", "AND": "&",
    "XOR": "^", "OR": "|",
}


_BINARY_OPS = {f"BINARY_{name}": symbol for name, symbol in _BINARY.items()} | \
    {f"INPLACE_{name}": symbol + "=" for name, symbol in _BINARY.items()}


_SAME = frozenset({
    "POP_TOP", "RETURN_VALUE", "LOAD_CONST", "LOAD_FAST", "STORE_FAST", "DELETE_FAST", "LOAD_DEREF",
    "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE", "LOAD_CLASSDEREF", "LOAD_NAME", "STORE_NAME",
    "DELETE_NAME", "LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR",
    "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT",
    "UNARY_POSITIVE", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET",
    "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_STRING", "BUILD_SLICE", "LIST_APPEND", "SET_ADD", "MAP_ADD",
    "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "LIST_TO_TUPLE", "UNPACK_SEQUENCE",
    "UNPACK_EX", "GET_ITER", "LOAD_BUILD_CLASS", "SETUP_ANNOTATIONS", "PRINT_EXPR", "IMPORT_STAR",
    "IMPORT_NAME", "IMPORT_FROM", "LOAD_ASSERTION_ERROR", "RAISE_VARARGS", "GET_AITER", "YIELD_VALUE",
    "GET_YIELD_FROM_ITER", "GET_AWAITABLE", "GET_ANEXT", "BEFORE_ASYNC_WITH", "GET_LEN", "MATCH_MAPPING",
    "MATCH_SEQUENCE", "COPY_DICT_WITHOUT_KEYS",
})


_SPECIAL = frozenset({
    "LOAD_METHOD", "CALL_METHOD", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_FUNCTION_EX", "MAKE_FUNCTION",
    "FORMAT_VALUE", "DUP_TOP", "DUP_TOP_TWO", "ROT_TWO", "ROT_THREE", "ROT_FOUR", "ROT_N", "YIELD_FROM",
    "SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH", "POP_BLOCK", "POP_EXCEPT", "RERAISE",
    "JUMP_IF_NOT_EXC_MATCH", "WITH_EXCEPT_START", "END_ASYNC_FOR", "MATCH_CLASS", "MATCH_KEYS",
})


HANDLED = frozenset(_DROP | set(_JUMPS) | set(_BINARY_OPS) | _SAME | _SPECIAL)


_CONVERSIONS = {0: None, 1: "s", 2: "r", 3: "a"}


def normalize(code: types.CodeType, features: Features) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and synthesised exception table of ``code`` (compiled by CPython 3.10),
    laid out by the passes that ``features`` (the compiler's) call for."""
    raw = list(raw_instructions(code))
    landings = extended_arg_landings(raw)
    qualname = getattr(code, "co_qualname", code.co_name)
    flow = _BlockFlow(raw, qualname)
    flow.run()
    out: list[Instr] = []
    cover: dict[int, tuple | None] = {}
    push_exc_at = {target for target, kind in flow.kinds.items() if kind in ("finally", "with")}
    tail_starts = _exit_points(raw, flow)
    marks: dict[int, object] = {}
    breaks: dict[int, int] = {}
    depth_of: dict[int, int] = {}
    line = code.co_firstlineno
    for i, ins in enumerate(raw):
        name = ins.opname
        line = ins.starts_line or line  # 3.10 marks only the first instruction of each line
        if name not in HANDLED:
            raise DecompilationError(f"unsupported opcode {name} (CPython 3.10)", qualname=qualname,
                                     offset=ins.offset, opname=name)
        state = flow.states.get(i)
        if state is None:
            continue  # unreachable: nothing the decompiler could emit
        tags, blocks = state
        key = flow.cover(blocks)

        def emit(
            opname: str,
            argval: object = None,
            target: int | None = None,
            *,
            slots: int = 2,
            ins: dis.Instruction = ins,
            line: int = line,
            key: tuple | None = key,
            **extra: object,
        ) -> Instr:
            if target is not None:
                target = landings.get(target, target)
            new = Instr(opname, ins.offset, ins.arg, argval, target, line, slots, dict(extra))
            out.append(new)
            cover[id(new)] = key
            return new

        def fail(message: str, ins: dis.Instruction = ins) -> DecompilationError:
            return DecompilationError(message, qualname=qualname, offset=ins.offset, opname=ins.opname)

        top = tags[-1] if tags else None
        if i in tail_starts:
            marks.setdefault(len(out), tail_starts[i])
        first = len(out)
        if ins.offset in push_exc_at:
            emit("PUSH_EXC_INFO")  # the handler of a try/with: [exception] -> [saved state, exception]
        nxt = raw[i + 1] if i + 1 < len(raw) else None
        if name in _DROP or name in ("SETUP_FINALLY", "SETUP_ASYNC_WITH", "POP_BLOCK", "END_ASYNC_FOR"):
            pass
        elif name == "SETUP_WITH":
            emit("BEFORE_WITH")
        elif name == "POP_EXCEPT":
            emit("POP_EXCEPT", key=flow.cover(blocks[:-1]))
        elif name in ("RERAISE", "WITH_EXCEPT_START"):
            emit(name, ins.arg)
        elif name == "JUMP_IF_NOT_EXC_MATCH":
            emit("CHECK_EXC_MATCH")
            emit("POP_JUMP_IF_FALSE", target=ins.argval)
        elif name == "POP_TOP" and isinstance(top, tuple) and top[0] == "I" and top[1] in flow.loop_exits:
            emit("POP_TOP")
            breaks[len(out)] = flow.loop_exits[top[1]]  # a break: what follows may be the code after the loop
        elif _is_exc(top) and (name == "POP_TOP" or name.startswith("STORE_")):
            if top[2] == "val":  # the exception's three values are one value in the model
                emit(name, ins.argval)
            elif name != "POP_TOP":
                raise fail("exception type or traceback stored")
        elif name == "DUP_TOP" and _is_exc(top) and top[2] == "type":
            pass  # the except clause's type test: LOAD type; CHECK_EXC_MATCH in the model
        elif name.startswith("ROT_") and any(
            _is_exc(t) or t == _DUP for t in tags[-(_ROT.get(name) or ins.arg) :]
        ):
            under = tags[-4:-1]
            if name == "ROT_FOUR" and len(under) == 3 and not _is_exc(top) \
                    and (all(_is_exc(t) and t[0] == "S" for t in under)
                         or all(_is_exc(t) and t[0] == "X" for t in under)):
                # a value moved under the saved exception state, or under the exception being
                # handled (``return`` in a finally body): under one value in the model
                emit("SWAP", 2)
            else:
                raise fail("stack rotation through exception values")
        elif (
            name == "CALL_FUNCTION"
            and ins.arg == 3
            and len(out) >= 3
            and [x.opname for x in out[-3:]] == ["LOAD_CONST", "COPY", "COPY"]
            and out[-3].argval is None
            and raw[i - 1].opname == "DUP_TOP"
            and raw[i - 2].opname == "DUP_TOP"
        ):
            for x in out[-2:]:  # __exit__(None, None, None) ending a with body, as 3.11 writes it
                x.opname, x.argval = "LOAD_CONST", None
            emit("CALL", 2, slots=2)
        elif name in _JUMPS:
            emit(_JUMPS[name], target=ins.argval)
        elif name in _BINARY_OPS:
            emit("BINARY_OP", _BINARY_OPS[name])
        elif name in _SAME:
            emit(name, ins.argval)
        elif name == "LOAD_METHOD":
            emit("LOAD_ATTR", ins.argval)
            emit("PUSH_NULL")
        elif name == "CALL_METHOD":
            emit("CALL", ins.arg, slots=2)
        elif name == "CALL_FUNCTION":
            emit("CALL", ins.arg, slots=1)
        elif name == "CALL_FUNCTION_KW":
            emit("CALL_KW", ins.arg, slots=1)
        elif name == "CALL_FUNCTION_EX":
            emit("CALL_FUNCTION_EX", bool(ins.arg & 1), slots=1)
        elif name == "MAKE_FUNCTION":
            emit("MAKE_FUNCTION", ins.arg, qualname_on_stack=True)
        elif name == "FORMAT_VALUE":
            emit("FORMAT_VALUE", (_CONVERSIONS[ins.arg & 3], bool(ins.arg & 4)))
        elif name == "DUP_TOP" and nxt is not None and nxt.opname == "ROT_THREE" and flow.states.get(i + 1) \
                and i + 2 < len(raw) and raw[i + 2].opname in ("COMPARE_OP", "IS_OP", "CONTAINS_OP"):
            # chained comparison: [a b] -> [b a b], as 3.11 writes it (elsewhere, as in the
            # ``sub as name`` of a match pattern, the copy is COPY 1 and ROT_THREE rotates it)
            emit("SWAP", 2)
            emit("COPY", 2, ins=nxt)
            flow.states.pop(i + 1)  # ROT_THREE is done
        elif name == "DUP_TOP":
            emit("COPY", 1)
        elif name == "DUP_TOP_TWO":
            emit("COPY", 2)
            emit("COPY", 2)
        elif name in ("MATCH_CLASS", "MATCH_KEYS"):
            # 3.10 pushes a success flag over the attributes/values (None on failure); 3.11 tests
            # the None: ``MATCH_X; POP_JUMP_IF_FALSE t`` -> ``MATCH_X; COPY 1; POP_JUMP_IF_NONE t``
            # (with an EXTENDED_ARG before the jump in a long function)
            j = i + 1
            while j < len(raw) and raw[j].opname == "EXTENDED_ARG":
                j += 1
            test = raw[j] if j < len(raw) else None
            if test is None or test.opname != "POP_JUMP_IF_FALSE":
                raise DecompilationError(f"{name} without its test (CPython 3.10)", qualname=qualname,
                                         offset=ins.offset, opname=name)
            emit(name, ins.argval)
            emit("COPY", 1, ins=test)
            emit("POP_JUMP_IF_NONE", target=test.argval, ins=test)
            flow.states.pop(j, None)  # the POP_JUMP_IF_FALSE is done
        elif name.startswith("ROT_"):
            for n in range(
                ins.arg if name == "ROT_N" else _ROT[name], 1, -1
            ):  # top moves down ``depth - 1`` places
                emit("SWAP", n)
        elif name == "YIELD_FROM":
            getter = _fold_yield_from(out, ins, qualname)
            if getter.opname == "ASYNC_FOR_ITER":
                loop = next((b for b in reversed(blocks) if b[0] == "F"), None)
                h = flow.pos.get(loop[1]) if loop is not None and loop[4] == "async_for" else None
                if h is None or h + 1 >= len(raw):
                    raise fail("async for without END_ASYNC_FOR")
                getter.target = raw[h + 1].offset
        for new in out[first:]:
            depth_of[id(new)] = _model_depth(tags)
    if features.copies_return_tails:
        share_return_tails(out, marks, breaks, cover, depth_of)
        share_chain_exits(out, cover, depth_of)
        drop_copied_reraises(out, cover)
    out = _retarget(out, raw)
    if features.copies_return_tails:
        hoist_placed_break_tails(out, cover, depth_of)
        share_placed_break_tail_copies(out, cover, depth_of)
        share_placed_value_tail_copies(out, cover, depth_of)
        share_jumped_to_tail_copies(out, cover, depth_of)
    if features.threads_value_tests:
        unthread_value_tests(out)
    return out, _table(out, cover, flow, raw[-1].offset + 2 if raw else 0)


def _fold_yield_from(out: list[Instr], ins: dis.Instruction, qualname: str) -> Instr:
    """``GET_YIELD_FROM_ITER|GET_AWAITABLE|GET_ANEXT; LOAD_CONST None; YIELD_FROM`` -> one instruction.

    YIELD_FROM, AWAIT, or ASYNC_FOR_ITER (whose target the caller sets); returns it.
    """
    if len(out) < 2 or out[-1].opname != "LOAD_CONST" or out[-1].argval is not None \
            or out[-2].opname not in ("GET_YIELD_FROM_ITER", "GET_AWAITABLE", "GET_ANEXT"):
        raise DecompilationError("YIELD_FROM without its iterator", qualname=qualname, offset=ins.offset,
                                 opname=ins.opname)
    out.pop()
    getter = out[-1]
    getter.opname = {"GET_YIELD_FROM_ITER": "YIELD_FROM", "GET_AWAITABLE": "AWAIT",
                     "GET_ANEXT": "ASYNC_FOR_ITER"}[getter.opname]
    return getter


def _retarget(out: list[Instr], raw: list[dis.Instruction]) -> list[Instr]:
    """Point jumps that land on dropped instructions at the next kept one."""
    kept = sorted({ins.offset for ins in out})
    end = raw[-1].offset + 2 if raw else 0
    forward: dict[int, int] = {}
    j = 0
    for off in sorted({r.offset for r in raw}):
        while j < len(kept) and kept[j] < off:
            j += 1
        forward[off] = kept[j] if j < len(kept) else end
    for ins in out:
        if ins.target is not None:
            ins.target = forward.get(ins.target, end)
    return out
