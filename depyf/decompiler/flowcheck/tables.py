"""Opcode tables of the flow check: which instructions are events, jumps, bindings."""

from __future__ import annotations

import dis
import operator
import re
import sys

# Steps explored from one event before the check gives up on branch decisions for the code
# (long pure boolean chains have exponentially many paths); events and successors are still compared.
MAX_PATHS_PER_EVENT = 2048


_UNCONDITIONAL = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE", "JUMP",
                  "JUMP_NO_INTERRUPT"}


_TERMINAL = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}


# conditional jumps: opname -> (decision when the jump is taken, decision when it falls through)
_CONDITIONAL = {
    "POP_JUMP_IF_FALSE": ("F", "T"), "POP_JUMP_IF_TRUE": ("T", "F"),
    "POP_JUMP_FORWARD_IF_FALSE": ("F", "T"), "POP_JUMP_FORWARD_IF_TRUE": ("T", "F"),
    "POP_JUMP_BACKWARD_IF_FALSE": ("F", "T"), "POP_JUMP_BACKWARD_IF_TRUE": ("T", "F"),
    "JUMP_IF_FALSE_OR_POP": ("F", "T"), "JUMP_IF_TRUE_OR_POP": ("T", "F"),
    "POP_JUMP_IF_NONE": ("None", "notNone"), "POP_JUMP_IF_NOT_NONE": ("notNone", "None"),
    "POP_JUMP_FORWARD_IF_NONE": ("None", "notNone"), "POP_JUMP_FORWARD_IF_NOT_NONE": ("notNone", "None"),
    "POP_JUMP_BACKWARD_IF_NONE": ("None", "notNone"), "POP_JUMP_BACKWARD_IF_NOT_NONE": ("notNone", "None"),
    "FOR_ITER": ("done", "item"), "SEND": ("done", "sent"), "JUMP_IF_NOT_EXC_MATCH": ("F", "T"),
}


_FLIP = {"T": "F", "F": "T"}


_CONSTANT_ARGUMENT_OPS = {"LOAD_CONST", "BUILD_SET", "BUILD_TUPLE", "PRECALL", "PUSH_NULL", "UNARY_NEGATIVE",
                          "SET_UPDATE", "KW_NAMES"}


_SETUP = {"SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH", "SETUP_CLEANUP"}


# Events named by what they touch. Not events: stores to and deletes of locals (nothing outside
# the frame observes their order; ``a, b = x, y`` stores in an order the compiler picks, 3.13 even
# fuses the stores) and global loads (only code that rebinds the global in between could tell when
# it happened, and generated code such as Dynamo's loads the callee long before the arguments).
_NAME_EVENTS = {
    "STORE_NAME": "store_name",
    "STORE_GLOBAL": "store_global",
    "DELETE_NAME": "del_name",
    "DELETE_GLOBAL": "del_global",
    "LOAD_ATTR": "attr",
    "LOAD_METHOD": "attr",
    "LOAD_SUPER_ATTR": "attr",
    "STORE_ATTR": "store_attr",
    "DELETE_ATTR": "del_attr",
    "IMPORT_NAME": "import",
    "IMPORT_FROM": "import_from",
}


_CALLS = {"CALL", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_FUNCTION_EX", "CALL_METHOD", "CALL_KW"}


_PLAIN_EVENTS = {
    "BINARY_SUBSCR",
    "STORE_SUBSCR",
    "DELETE_SUBSCR",
    "GET_ITER",
    "GET_AITER",
    "GET_AWAITABLE",
    "YIELD_VALUE",
    "CHECK_EXC_MATCH",
    "CHECK_EG_MATCH",
    "IMPORT_STAR",
    "RAISE_VARARGS",
    "RERAISE",
    "BEFORE_WITH",
    "BEFORE_ASYNC_WITH",
    "SETUP_WITH",
    "SETUP_ASYNC_WITH",
    "MATCH_CLASS",
    "MATCH_KEYS",
    "UNARY_NEGATIVE",
    "UNARY_INVERT",
    "UNARY_POSITIVE",
    "FOR_ITER",
    "SEND",
    "GET_YIELD_FROM_ITER",
    "YIELD_FROM",
    "GET_ANEXT",
    "JUMP_IF_NOT_EXC_MATCH",
}


_SLICE_OPS = {"BINARY_SLICE": "BINARY_SUBSCR", "STORE_SLICE": "STORE_SUBSCR"}


# Stores and deletes by the kind of variable they bind (3.13+ fuse two fast stores into one, or a
# fast store with the next load: the store comes first in their argument)
_BINDINGS = {
    "STORE_FAST": ("store", "fast"),
    "STORE_FAST_MAYBE_NULL": ("store", "fast"),
    "STORE_FAST_STORE_FAST": ("store", "fast"),
    "STORE_FAST_LOAD_FAST": ("store", "fast"),
    "DELETE_FAST": ("del", "fast"),
    "STORE_DEREF": ("store", "deref"),
    "DELETE_DEREF": ("del", "deref"),
    "STORE_GLOBAL": ("store", "global"),
    "DELETE_GLOBAL": ("del", "global"),
    "STORE_NAME": ("store", "name"),
    "DELETE_NAME": ("del", "name"),
}


_TEMPORARY = re.compile(r"__stack_\d+$")


# Reads and writes of local and cell variables, in the order the instruction does them (the
# fused 3.13+ instructions name two variables)
_ACCESSES = {"LOAD_FAST": ("read",), "LOAD_FAST_CHECK": ("read",), "LOAD_FAST_BORROW": ("read",),
             "LOAD_DEREF": ("read",), "LOAD_FAST_LOAD_FAST": ("read", "read"),
             "LOAD_FAST_BORROW_LOAD_FAST_BORROW": ("read", "read"), "LOAD_FAST_AND_CLEAR": ("read", "write"),
             "STORE_FAST": ("write",), "STORE_FAST_MAYBE_NULL": ("write",), "STORE_DEREF": ("write",),
             "STORE_FAST_STORE_FAST": ("write", "write"), "STORE_FAST_LOAD_FAST": ("write", "read"),
             "DELETE_FAST": ("del",), "DELETE_DEREF": ("del",)}


# Reads of globals (and of names of module and class code), accessed in order with calls
_GLOBAL_READS = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"}


# Reads of variables a call may rebind: globals, names, cells
_REBINDABLE_READS = _GLOBAL_READS | {"LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"}


# Blocks of straight-line code visited before the access order check gives up on a code
MAX_ACCESS_STEPS = 400_000


# Loads whose name a call's label shows (the callee: ``f``, ``x.append``)
_NAMED_LOADS = ("LOAD_FAST", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_ATTR",
                "LOAD_METHOD", "LOAD_SUPER_ATTR", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW",
                "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS")


# Fused fast-variable instructions that load (3.13+ fuse two loads, or a store with the next load,
# on one line): the values they pop, and the position in their argument of the first name loaded
_FUSED_LOADS = {"LOAD_FAST_LOAD_FAST": (0, 0), "LOAD_FAST_BORROW_LOAD_FAST_BORROW": (0, 0),
                "STORE_FAST_LOAD_FAST": (1, 1)}


# Stack slots a call's callable takes: the callable and NULL/self on 3.11+ (and 3.10's CALL_METHOD)
_CALLEE_SLOTS = 2 if sys.version_info >= (3, 11) else 1


_OPERATOR_EVENTS = {"BINARY_OP", "COMPARE_OP"}  # keyed by the operator


_RETURNS = {"RETURN_VALUE", "RETURN_CONST"}


# Instructions that reorder the top n values (0: n is the argument) or push copies of them
_MOVES = {"SWAP": 0, "ROT_TWO": 2, "ROT_THREE": 3, "ROT_FOUR": 4, "ROT_N": 0}
_DUPLICATES = {"COPY": 0, "DUP_TOP": 1, "DUP_TOP_TWO": 2}


_UNKNOWN = object()


_LOOP = ("loop",)   # the event a path that comes back without passing one ends in


_UNARY = {"UNARY_NEGATIVE": operator.neg, "UNARY_INVERT": operator.invert, "UNARY_POSITIVE": operator.pos,
          "UNARY_NOT": operator.not_, "TO_BOOL": bool}


_BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "//": operator.floordiv, "%": operator.mod, "&": operator.and_, "|": operator.or_,
           "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift, "**": operator.pow}


_BINARY_3_10 = {"BINARY_ADD": "+", "BINARY_SUBTRACT": "-", "BINARY_MULTIPLY": "*", "BINARY_TRUE_DIVIDE": "/",
                "BINARY_FLOOR_DIVIDE": "//", "BINARY_MODULO": "%", "BINARY_AND": "&", "BINARY_OR": "|",
                "BINARY_XOR": "^", "BINARY_LSHIFT": "<<", "BINARY_RSHIFT": ">>", "BINARY_POWER": "**"}


def _fold(ins: dis.Instruction, operands: list) -> object:
    """The value of a unary or binary operator on small number constants, else ``_UNKNOWN``."""
    if not all(type(x) in (int, float, bool) and abs(x) < 2 ** 32 for x in operands):
        return _UNKNOWN   # (big operands: ``**`` and ``<<`` could take long)
    if len(operands) == 1:
        fn = _UNARY.get(ins.opname)
    else:
        fn = _BINARY.get(_BINARY_3_10.get(ins.opname, ins.argrepr))
        if fn in (operator.pow, operator.lshift) and abs(operands[1]) > 64:
            return _UNKNOWN
    try:
        return fn(*operands) if fn is not None else _UNKNOWN
    except (ArithmeticError, TypeError, ValueError):
        return _UNKNOWN


_JUMPS = set(dis.hasjrel) | set(dis.hasjabs) | set(getattr(dis, "hasjump", ()))


_TERMINATOR_OPS = _TERMINAL | {"RETURN_CONST"}


_STACK_EFFECTS: dict[tuple[int, int | None], int | None] = {}


def _stack_effect(opcode: int, arg: int | None) -> int | None:
    """``dis.stack_effect`` when the jump is not taken (None where it has none), remembered."""
    key = (opcode, arg)
    try:
        return _STACK_EFFECTS[key]
    except KeyError:
        pass
    try:
        effect = dis.stack_effect(opcode, arg, jump=False)
    except ValueError:
        effect = None
    if len(_STACK_EFFECTS) < 65536:
        _STACK_EFFECTS[key] = effect
    return effect


def _callee_slots(ins: dis.Instruction) -> int:
    return 2 if ins.opname == "CALL_METHOD" else _CALLEE_SLOTS
