"""Opname tables of the 3.12 translation."""

from __future__ import annotations

from depyf.decompiler.instructions import COMPREHENSIONS

# Dropped everywhere: no effect on the values the decompiler reconstructs.
DROP = frozenset({"CACHE", "NOP", "RESUME", "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS"})


JUMPS = {
    "JUMP_FORWARD": "JUMP", "JUMP_BACKWARD": "JUMP", "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
    "POP_JUMP_IF_FALSE": "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_NONE": "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
}


# Same name and stack effect as in the shared model; argval as ``dis`` gives it.
SAME = frozenset({
    "POP_TOP", "PUSH_NULL", "COPY", "SWAP", "RETURN_VALUE", "LOAD_CONST", "LOAD_FAST", "STORE_FAST",
    "DELETE_FAST", "LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE",
    "LOAD_NAME", "STORE_NAME", "DELETE_NAME", "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_ATTR",
    "DELETE_ATTR", "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "UNARY_NEGATIVE", "UNARY_NOT",
    "UNARY_INVERT", "IS_OP", "CONTAINS_OP", "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET",
    "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_STRING", "BUILD_SLICE", "LIST_APPEND", "SET_ADD", "MAP_ADD",
    "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "UNPACK_SEQUENCE", "UNPACK_EX", "GET_ITER",
    "GET_LEN", "MATCH_CLASS", "MATCH_MAPPING", "MATCH_SEQUENCE", "MATCH_KEYS", "LOAD_BUILD_CLASS",
    "SETUP_ANNOTATIONS", "IMPORT_NAME", "IMPORT_FROM", "LOAD_ASSERTION_ERROR", "RAISE_VARARGS",
    "RERAISE", "PUSH_EXC_INFO", "POP_EXCEPT", "CHECK_EXC_MATCH", "CHECK_EG_MATCH", "WITH_EXCEPT_START",
    "BEFORE_WITH", "BEFORE_ASYNC_WITH", "GET_AITER", "YIELD_VALUE", "GET_YIELD_FROM_ITER", "GET_AWAITABLE",
    "GET_ANEXT", "END_ASYNC_FOR", "LOAD_LOCALS", "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS",
})


# Translated by a method of Translator (``op_<NAME>``).
SPECIAL = frozenset({
    "LOAD_GLOBAL", "LOAD_ATTR", "LOAD_SUPER_ATTR", "KW_NAMES", "CALL", "CALL_FUNCTION_EX", "BINARY_OP",
    "FORMAT_VALUE", "RETURN_CONST", "BINARY_SLICE", "STORE_SLICE", "FOR_ITER", "END_FOR", "SEND",
    "END_SEND", "CLEANUP_THROW", "RETURN_GENERATOR", "MAKE_FUNCTION", "COMPARE_OP", "CALL_INTRINSIC_1",
    "CALL_INTRINSIC_2", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_CHECK", "YIELD_VALUE", "STORE_DEREF",
})


HANDLED = frozenset(DROP | set(JUMPS) | SAME | SPECIAL)


CONVERSIONS = {0: None, 1: "s", 2: "r", 3: "a"}


_INVERTED = {"POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE", "POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE",
             "POP_JUMP_IF_NONE": "POP_JUMP_IF_NOT_NONE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NONE"}


_OR_POP = {"POP_JUMP_IF_FALSE": "JUMP_IF_FALSE_OR_POP", "POP_JUMP_IF_TRUE": "JUMP_IF_TRUE_OR_POP"}


# the BUILD_X that starts an inlined comprehension -> the name of the code object it becomes
_COMPREHENSION_NAMES = {c.build: c.name for c in COMPREHENSIONS}


_CO_FLAGS_KEPT = 0x0001 | 0x0002 | 0x0010  # OPTIMIZED, NEWLOCALS, NESTED


_TEMPLATE = compile("lambda: None", "<comprehension>", "eval").co_consts[0]


def _tests_truth_next(raw: list, k: int) -> bool:
    """Does the instruction after ``raw[k]`` (a TO_BOOL) only test its truth (a jump or ``not``)?

    Only then is TO_BOOL invisible; elsewhere it converts a value (3.13+ compiles ``not not x``
    to a lone TO_BOOL). An EXTENDED_ARG between them (a long jump) belongs to the jump.
    """
    k += 1
    while k < len(raw) and raw[k].opname == "EXTENDED_ARG":
        k += 1
    nxt = raw[k].opname if k < len(raw) else None
    return nxt in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "UNARY_NOT")
