"""Conservative checks that recompiled code can run in place of Dynamo's bytecode.

Semantic equivalence is undecidable; these checks reject the mistakes a decompiler makes in
practice: a dropped, duplicated or extra call or attribute access, a global it does not load,
and a local read where it may be unbound (for example read after ``del``) although Dynamo's code
never does that. Anything that looks different is rejected: then Dynamo's own bytecode runs.
"""

from __future__ import annotations

import dis
import sys
import types
from collections import Counter

from depyf.decompiler.codeinfo import argument_names

_NAME_OPS = {"LOAD_GLOBAL": "global", "LOAD_NAME": "global", "LOAD_ATTR": "attr", "LOAD_METHOD": "attr",
             "STORE_ATTR": "store_attr", "DELETE_ATTR": "del_attr", "STORE_GLOBAL": "store_global",
             "DELETE_GLOBAL": "del_global", "IMPORT_NAME": "import", "IMPORT_FROM": "import_from",
             # a cell's value and the cell itself are different things (Dynamo passes cells around)
             "LOAD_DEREF": "deref", "STORE_DEREF": "store_deref", "DELETE_DEREF": "del_deref",
             "LOAD_CLOSURE": "cell"}
# Operations whose count a faithful decompilation keeps (keyed by operator where there is one).
_OPERATOR_OPS = {"BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "UNARY_NEGATIVE", "UNARY_NOT",
                 "UNARY_INVERT", "UNARY_POSITIVE", "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR",
                 "GET_ITER", "FOR_ITER", "BINARY_ADD", "BINARY_SUBTRACT", "BINARY_MULTIPLY",
                 "BINARY_TRUE_DIVIDE", "INPLACE_ADD"}
# CPython 3.11+ compiles ``x is None`` / ``x is not None`` in a test to one jump without IS_OP;
# Dynamo's hand-built code keeps IS_OP and a plain jump. Either way it is one identity test.
_NONE_JUMPS = {"POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "POP_JUMP_FORWARD_IF_NONE",
               "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE"}
_CALL_OPS = {"CALL", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_METHOD", "CALL_FUNCTION_EX"}
_UNCONDITIONAL = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE", "JUMP"}
_TERMINAL = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}


_LISTINGS: dict[int, tuple[types.CodeType, tuple[dis.Instruction, ...]]] = {}


def instructions(code: types.CodeType) -> tuple[dis.Instruction, ...]:
    """``code``'s instructions without CACHE, EXTENDED_ARG and NOP; cached by identity (Dynamo's
    code may hold unhashable constants), as the checks of one transformed code read the same
    code objects several times."""
    entry = _LISTINGS.get(id(code))
    if entry is not None and entry[0] is code:
        return entry[1]
    listing = tuple(i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG", "NOP"))
    if len(_LISTINGS) >= 256:
        _LISTINGS.clear()
    _LISTINGS[id(code)] = (code, listing)
    return listing


# Local-variable instructions as (operation, name) steps; 3.12+ fuses some and 3.13 checks loads
# that may be unbound with LOAD_FAST_CHECK.
_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"}
_PAIRS = {"LOAD_FAST_LOAD_FAST": ("load", "load"), "LOAD_FAST_BORROW_LOAD_FAST_BORROW": ("load", "load"),
          "STORE_FAST_LOAD_FAST": ("store", "load"), "STORE_FAST_STORE_FAST": ("store", "store")}


def local_steps(ins: dis.Instruction) -> list[tuple[str, str]]:
    """What ``ins`` does to local variables: ("load" | "store" | "delete", name) steps in order."""
    if ins.opname in _LOADS:
        return [("load", str(ins.argval))]
    if ins.opname == "STORE_FAST":
        return [("store", str(ins.argval))]
    if ins.opname in ("DELETE_FAST", "LOAD_FAST_AND_CLEAR"):
        return [("delete", str(ins.argval))]
    kinds = _PAIRS.get(ins.opname)
    if kinds is not None:
        return [(kind, str(name)) for kind, name in zip(kinds, ins.argval, strict=True)]
    return []


def _cell_slots(code: types.CodeType) -> frozenset[str]:
    """Names whose ``LOAD_FAST`` pushes the cell (3.13+, where LOAD_CLOSURE is LOAD_FAST): cell and
    free variables whose slot never holds a plain value."""
    if sys.version_info < (3, 13):
        return frozenset()
    plain = {name for ins in instructions(code) for kind, name in local_steps(ins) if kind != "load"}
    return frozenset(set(code.co_cellvars) | set(code.co_freevars)) - plain


def effects(code: types.CodeType) -> Counter[tuple[str, str]]:
    """Multiset of name-based effects (globals, attributes, imports), calls and operators, with those
    of the nested code the instructions load (Dynamo leaves unused code objects in ``co_consts``)."""
    out: Counter[tuple[str, str]] = Counter()
    cells = _cell_slots(code)
    for ins in instructions(code):
        for step, name in local_steps(ins):
            if step == "load" and name in cells:
                out[("cell", name)] += 1
        kind = _NAME_OPS.get(ins.opname)
        if kind is not None:
            out[(kind, str(ins.argval))] += 1
        elif ins.opname in _CALL_OPS:
            out[("call", "")] += 1
        elif ins.opname == "LIST_EXTEND":
            # Same operation as a call of list.extend, which is how source spells it.
            out[("attr", "extend")] += 1
            out[("call", "")] += 1
        elif ins.opname in _NONE_JUMPS or ins.opname == "IS_OP":
            # `is` and `is not` differ only by which way the jump after them goes
            out[("IS_OP", "")] += 1
        elif ins.opname in _OPERATOR_OPS:
            key = ins.argrepr if ins.opname in ("BINARY_OP", "COMPARE_OP", "CONTAINS_OP") else ""
            out[(ins.opname, key)] += 1
        if ins.opname == "LOAD_CONST" and isinstance(ins.argval, types.CodeType):
            out += effects(ins.argval)
    return out


def maybe_unbound_loads(code: types.CodeType) -> set[str]:
    """Locals that some path may read before assigning them (or after deleting them)."""
    listing = instructions(code)
    if not listing:
        return set()
    index_of = {ins.offset: i for i, ins in enumerate(listing)}
    start = frozenset(argument_names(code)) | frozenset(code.co_cellvars) | frozenset(code.co_freevars)
    handler_starts = []
    try:
        for entry in dis.Bytecode(code).exception_entries:
            handler_starts.append(entry.target)
    except AttributeError:
        pass
    state: dict[int, frozenset[str]] = {0: start}
    for target in handler_starts:
        if target in index_of:
            # Conservative: a handler may run before anything but the arguments is assigned.
            state[index_of[target]] = start
    work = list(state)
    bad: set[str] = set()
    visits = 0
    while work and visits < 200_000:
        visits += 1
        i = work.pop()
        assigned = set(state[i])
        ins = listing[i]
        for step, name in local_steps(ins):
            if step == "load" and name not in assigned:
                bad.add(name)
            elif step == "store":
                assigned.add(name)
            elif step == "delete":
                assigned.discard(name)
        successors = []
        if ins.opname not in _TERMINAL and ins.opname not in _UNCONDITIONAL and i + 1 < len(listing):
            successors.append(i + 1)
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            target = index_of.get(ins.argval)
            if target is not None:
                successors.append(target)
        frozen = frozenset(assigned)
        for succ in successors:
            old = state.get(succ)
            new = frozen if old is None else old & frozen
            if old is None or new != old:
                state[succ] = new
                work.append(succ)
    return bad


def differences(dynamo_code: types.CodeType, candidate: types.CodeType) -> list[str]:
    """Reasons ``candidate`` may behave differently from ``dynamo_code`` (empty: accepted)."""
    problems = []
    ours, theirs = effects(candidate), effects(dynamo_code)
    if ours != theirs:
        extra = sorted((ours - theirs).elements())[:4]
        missing = sorted((theirs - ours).elements())[:4]
        problems.append(f"different calls or name accesses (extra {extra}, missing {missing})")
    unbound = maybe_unbound_loads(candidate) - maybe_unbound_loads(dynamo_code)
    if unbound:
        problems.append(f"may read {sorted(unbound)} while unbound")
    return problems
