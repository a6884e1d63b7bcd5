"""CPython 3.10 -> the shared instruction model (see ``depyf.decompiler.instructions``).

3.10 predates most of what the model takes from 3.11:

- calls push no NULL: ``CALL_FUNCTION n`` / ``CALL_FUNCTION_KW n`` / ``CALL_FUNCTION_EX`` become CALL /
  CALL_KW / CALL_FUNCTION_EX with one callable slot (``slots=1``); ``LOAD_METHOD`` + ``CALL_METHOD``
  become LOAD_ATTR + PUSH_NULL and a two-slot CALL, as for 3.11's method calls;
- ``BINARY_ADD``, ``INPLACE_ADD`` and friends become BINARY_OP with the operator ('+', '+=', ...);
- ``DUP_TOP``/``DUP_TOP_TWO``/``ROT_*`` become COPY/SWAP (``DUP_TOP; ROT_THREE`` of a chained
  comparison becomes 3.11's ``SWAP 2; COPY 2``);
- ``MAKE_FUNCTION`` finds the qualified name on the stack above the code (``extra['qualname_on_stack']``);
- ``GET_YIELD_FROM_ITER``/``GET_AWAITABLE``; ``LOAD_CONST None``; ``YIELD_FROM`` is YIELD_FROM / AWAIT;
- ``JUMP_ABSOLUTE`` is JUMP; ``GEN_START``, ``NOP`` and ``EXTENDED_ARG`` are dropped.

Not translated yet (a DecompilationError names the opcode): 3.10's block-stack exception handling
(``SETUP_FINALLY``, ``SETUP_WITH``, ``SETUP_ASYNC_WITH``, ``POP_BLOCK``, ``POP_EXCEPT``, ``RERAISE``,
``JUMP_IF_NOT_EXC_MATCH``, ``WITH_EXCEPT_START``, ``END_ASYNC_FOR``), which needs exception-table
entries and 3.11-shaped handler stacks synthesised from the block stack.

``match``: ``MATCH_CLASS``/``MATCH_KEYS`` push a success flag over the attributes/values, which
becomes 3.11's None check (``COPY 1; POP_JUMP_IF_NONE``); ``ROT_N`` becomes SWAPs. 3.10 reads the
attributes/values by subscript instead of unpacking them, which the pattern reader accepts.
"""

from __future__ import annotations

import dis
import types

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.instructions import ExceptionEntry, Instr

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
    "GET_YIELD_FROM_ITER", "GET_AWAITABLE", "GET_ANEXT", "GET_LEN", "MATCH_MAPPING", "MATCH_SEQUENCE",
    "COPY_DICT_WITHOUT_KEYS",
})
_SPECIAL = frozenset({
    "LOAD_METHOD", "CALL_METHOD", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_FUNCTION_EX", "MAKE_FUNCTION",
    "FORMAT_VALUE", "DUP_TOP", "DUP_TOP_TWO", "ROT_TWO", "ROT_THREE", "ROT_FOUR", "ROT_N", "YIELD_FROM",
    "MATCH_CLASS", "MATCH_KEYS",
})
HANDLED = frozenset(_DROP | set(_JUMPS) | set(_BINARY_OPS) | _SAME | _SPECIAL)
_CONVERSIONS = {0: None, 1: "s", 2: "r", 3: "a"}


def normalize(code: types.CodeType) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions of ``code`` (compiled by CPython 3.10); the table is always empty."""
    raw = list(dis.get_instructions(code))
    qualname = getattr(code, "co_qualname", code.co_name)
    out: list[Instr] = []
    line = code.co_firstlineno
    i = 0
    while i < len(raw):
        ins = raw[i]
        name = ins.opname
        line = ins.starts_line or line  # 3.10 marks only the first instruction of each line

        def emit(opname: str, argval: object = None, target: int | None = None, *, slots: int = 2,
                 ins: dis.Instruction = ins, line: int = line, **extra: object) -> Instr:
            new = Instr(opname, ins.offset, ins.arg, argval, target, line, slots, dict(extra))
            out.append(new)
            return new

        if name not in HANDLED:
            raise DecompilationError(f"unsupported opcode {name} (CPython 3.10)", qualname=qualname,
                                     offset=ins.offset, opname=name)
        nxt = raw[i + 1] if i + 1 < len(raw) else None
        if name in _DROP:
            pass
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
        elif name == "DUP_TOP" and nxt is not None and nxt.opname == "ROT_THREE":
            emit("SWAP", 2)  # chained comparison: [a b] -> [b a b], as 3.11 writes it
            emit("COPY", 2, ins=nxt)
            i += 1
        elif name == "DUP_TOP":
            emit("COPY", 1)
        elif name == "DUP_TOP_TWO":
            emit("COPY", 2)
            emit("COPY", 2)
        elif name in ("MATCH_CLASS", "MATCH_KEYS"):
            # 3.10 pushes a success flag over the attributes/values (None on failure); 3.11 tests
            # the None: ``MATCH_X; POP_JUMP_IF_FALSE t`` -> ``MATCH_X; COPY 1; POP_JUMP_IF_NONE t``
            if nxt is None or nxt.opname != "POP_JUMP_IF_FALSE":
                raise DecompilationError(f"{name} without its test (CPython 3.10)", qualname=qualname,
                                         offset=ins.offset, opname=name)
            emit(name, ins.argval)
            emit("COPY", 1, ins=nxt)
            emit("POP_JUMP_IF_NONE", target=nxt.argval, ins=nxt)
            i += 1
        elif name.startswith("ROT_"):
            depth = ins.arg if name == "ROT_N" else {"ROT_TWO": 2, "ROT_THREE": 3, "ROT_FOUR": 4}[name]
            for n in range(depth, 1, -1):  # top moves down ``depth - 1`` places
                emit("SWAP", n)
        elif name == "YIELD_FROM":
            _fold_yield_from(out, ins, qualname)
        i += 1
    return _retarget(out, raw), []


def _fold_yield_from(out: list[Instr], ins: dis.Instruction, qualname: str) -> None:
    """``GET_YIELD_FROM_ITER|GET_AWAITABLE; LOAD_CONST None; YIELD_FROM`` -> YIELD_FROM / AWAIT."""
    if len(out) < 2 or out[-1].opname != "LOAD_CONST" or out[-1].argval is not None \
            or out[-2].opname not in ("GET_YIELD_FROM_ITER", "GET_AWAITABLE"):
        raise DecompilationError("YIELD_FROM without its iterator", qualname=qualname, offset=ins.offset,
                                 opname=ins.opname)
    out.pop()
    getter = out[-1]
    getter.opname = "YIELD_FROM" if getter.opname == "GET_YIELD_FROM_ITER" else "AWAIT"


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
