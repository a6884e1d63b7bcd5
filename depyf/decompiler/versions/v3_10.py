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

- the block stack becomes 3.11's exception table: ``_BlockFlow`` replays SETUP_FINALLY /
  SETUP_WITH / SETUP_ASYNC_WITH / POP_BLOCK / POP_EXCEPT over every path, so each instruction
  knows its innermost handler and the stack depth under it. A try/with handler starts with a
  synthesised PUSH_EXC_INFO, and while a handler runs its code is covered by a synthesised cleanup
  (``COPY 3; POP_EXCEPT; RERAISE 1`` right after that code, at an odd offset), as 3.11 compiles
  it; the cleanup of ``except E as name`` keeps no PUSH_EXC_INFO, as in 3.11;
- the three values 3.10 pushes for an exception (traceback, value, type) are one value in the
  model: popping or storing them is one POP_TOP/STORE; ``DUP_TOP; <type>; JUMP_IF_NOT_EXC_MATCH``
  is ``<type>; CHECK_EXC_MATCH; POP_JUMP_IF_FALSE``; the saved exception state is one value too
  (``ROT_FOUR`` over it is ``SWAP 2``); SETUP_WITH is BEFORE_WITH, and the with exit
  ``LOAD_CONST None; DUP_TOP; DUP_TOP; CALL_FUNCTION 3`` is 3.11's three constants and ``CALL 2``;
- 3.10's optimiser copies small blocks ending in a return (with the no-line POP_BLOCK, finally
  body copy or with exit before them) into each predecessor; where such copies are exits of a try
  body, except clause or with body, a ``break``'s copy of the code after its for loop, or both
  paths of a chained comparison, identical copies become jumps to one, which is 3.11's layout
  (``_share_return_tails``, ``_share_chain_exits``);
- ``async for``: ``SETUP_FINALLY`` to END_ASYNC_FOR around ``GET_ANEXT; LOAD_CONST None;
  YIELD_FROM`` is ASYNC_FOR_ITER (target: after END_ASYNC_FOR), with no table entry.

``match``: ``MATCH_CLASS``/``MATCH_KEYS`` push a success flag over the attributes/values, which
becomes 3.11's None check (``COPY 1; POP_JUMP_IF_NONE``); ``ROT_N`` becomes SWAPs. 3.10 reads the
attributes/values by subscript instead of unpacking them, which the pattern reader accepts.

Refused (a DecompilationError names the opcode): shapes the block-stack replay does not
understand (other uses of the exception values).
"""

from __future__ import annotations

import dis
import types

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.instructions import (
    ExceptionEntry,
    Instr,
    chain_operand_copies,
    hoist_break_tails,
    raw_instructions,
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


def normalize(code: types.CodeType) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and synthesised exception table of ``code`` (compiled by CPython 3.10)."""
    raw = list(raw_instructions(code))
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
            if name == "ROT_FOUR" and len(under) == 3 and all(_is_exc(t) and t[0] == "S" for t in under) \
                    and not _is_exc(top):
                emit("SWAP", 2)  # a value moved under the saved exception state
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
    _share_return_tails(out, marks, breaks, cover, depth_of)
    _share_chain_exits(out, cover, depth_of)
    # 3.10 copies a finally handler's final RERAISE into the branch that jumps to it: one is enough
    out[:] = [ins for k, ins in enumerate(out)
              if not (ins.opname == "RERAISE" and k + 1 < len(out) and out[k + 1].opname == "RERAISE"
                      and out[k + 1].argval == ins.argval and cover[id(out[k + 1])] == cover[id(ins)])]
    out = _retarget(out, raw)
    _hoist_break_tails(out, cover, depth_of)
    return out, _table(out, cover, flow, raw[-1].offset + 2 if raw else 0)


def _typed_handler(raw: list[dis.Instruction], flow: _BlockFlow, i: int) -> bool:
    """Whether the POP_EXCEPT at ``i`` ends a handler that starts with an except clause's type test
    (not a finally body, whose copies end with their own code)."""
    state = flow.states.get(i)
    if not state or not state[1] or state[1][-1][0] != "H":
        return False
    return raw[flow.pos[state[1][-1][1]]].opname == "DUP_TOP"


def _exit_points(raw: list[dis.Instruction], flow: _BlockFlow) -> dict[int, object]:
    """Indices just after the end of a try body, an except clause or a with body (its exit sequence);
    ("with", handler) at the end of a with body, where the copy starts with the __exit__ call."""
    found: dict[int, object] = {}
    # code of a finally body run by its handler (or of a bare except) up to its last instruction there:
    # a copy of an exit in it is never the one to share (the normal path must not jump into a handler)
    last: dict[int, int] = {}
    for i, (_, blocks) in flow.states.items():
        for block in blocks:
            if block[0] == "H" and flow.kinds.get(block[1]) == "finally" \
                    and raw[flow.pos[block[1]]].opname != "DUP_TOP":
                last[block[1]] = max(last.get(block[1], i), i)
    inside = {k for handler, end in last.items() for k in range(flow.pos[handler], end + 2)}
    # ... nor inside the copy of a finally body that follows the end of its try body
    for i, ins in enumerate(raw):
        state = flow.states.get(i)
        if ins.opname == "POP_BLOCK" and state and state[1] and state[1][-1][1] in last:
            inside.update(range(i + 2, i + 2 + last[state[1][-1][1]] - flow.pos[state[1][-1][1]]))
    for i, ins in enumerate(raw):
        if ins.opname == "POP_BLOCK":
            state = flow.states.get(i)
            block = state[1][-1] if state and state[1] else None
            found[i + 1] = ("with", block[1]) if block is not None and block[4] == "with" else True
        elif ins.opname == "POP_EXCEPT" and _typed_handler(raw, flow, i):
            ops = raw[i + 1:i + 4]
            if len(ops) == 3 and ops[0].opname == "LOAD_CONST" and ops[0].argval is None \
                    and ops[1].opname.startswith("STORE_") and ops[2].opname.startswith("DELETE_") \
                    and ops[1].argval == ops[2].argval:
                found[i + 4] = True  # after the cleanup of ``except E as name``
            else:
                found[i + 1] = True
        elif ins.opname == "CALL_FUNCTION" and ins.arg == 3 and i >= 3 \
                and [r.opname for r in raw[i - 3:i]] == ["LOAD_CONST", "DUP_TOP", "DUP_TOP"] \
                and i + 1 < len(raw) and raw[i + 1].opname == "POP_TOP":
            found[i + 2] = True  # after a with's __exit__(None, None, None)
    return {k: kind for k, kind in found.items() if k not in inside}


_NOT_IN_TAIL = frozenset({"PUSH_EXC_INFO", "POP_EXCEPT", "RERAISE", "CHECK_EXC_MATCH", "YIELD_VALUE",
                          "YIELD_FROM", "AWAIT", "RAISE_VARARGS"})


def _share_return_tails(out: list[Instr], marks: dict[int, object], breaks: dict[int, int], cover: dict,
                        depth_of: dict) -> None:
    """Undo 3.10's copies of the code after a try, except clause or with that ends in a return.

    3.10 copies a small block ending in RETURN_VALUE (and a block with no line of its own, such as
    the POP_BLOCK and finally body after a try) into every block that jumps to it; 3.11 keeps one,
    after the handlers, which is where the model expects the exits of a protected region to meet.
    Straight-line code ending in a return that starts where a region was left (not inside a finally
    body run by its handler), when it reads nothing from the stack under it (a with's exit call
    apart, for copies that leave the same with) and its copies agree in instructions, lines,
    exception handlers and stack depth, becomes jumps to the last copy.
    """
    targets = {ins.target for ins in out if ins.target is not None}
    replace: dict[int, tuple[int, int]] = {}
    used: set[int] = set()
    # a ``break`` in a for loop pops the iterator, then 3.10 copies the code after the loop when it
    # is a small return: jump there again, as 3.11 does
    for m, exit_offset in breaks.items():
        q = next((k for k, ins in enumerate(out) if ins.offset >= exit_offset), None)
        if q is None or q == m or m >= len(out):
            continue
        k = 0
        while m + k < len(out) and q + k < len(out) and k < 64:
            a, b = out[m + k], out[q + k]
            if (a.opname, repr(a.argval), a.lineno, cover[id(a)], depth_of.get(id(a))) != \
                    (b.opname, repr(b.argval), b.lineno, cover[id(b)], depth_of.get(id(b))) \
                    or a.target is not None or b.target is not None or (k and a.offset in targets):
                break
            if a.opname == "RETURN_VALUE":
                replace[m] = (m + k, out[q].offset)
                used.update(range(m, m + k + 1))
                break
            k += 1
    found: dict[int, tuple] = {}  # mark -> (its return, depth, kind of mark)
    for m in sorted(marks):
        base = depth_of.get(id(out[m])) if m < len(out) else None
        scan = m
        if isinstance(marks[m], tuple):  # the end of a with body: its __exit__ call comes first
            n = _exit_call_length(out, m)
            if n is None or base is None or any(out[k].offset in targets for k in range(m + 1, m + n)):
                continue
            scan, base = m + n, base - 1
        j = scan
        while j < len(out) and j < m + 64 and out[j].target is None and out[j].opname not in _NOT_IN_TAIL \
                and out[j].opname != "RETURN_VALUE" and (j == m or out[j].offset not in targets):
            depth = depth_of.get(id(out[j]))
            if base is None or depth is None or depth < base or depth == base and not (
                    out[j].opname.startswith("LOAD_") or out[j].opname == "PUSH_NULL"
                    or out[j].opname in ("DELETE_FAST", "DELETE_NAME", "DELETE_GLOBAL", "DELETE_DEREF")
                    or out[j].opname.startswith("BUILD_") and out[j].argval == 0):
                break  # would read a value from under the copy
            j += 1
        returns = base + 1
        if (
            scan < j < len(out) - 1
            and out[j - 1].opname == "SWAP"
            and out[j - 1].argval == 2
            and out[j].opname == "POP_EXCEPT"
            and isinstance(cover[id(out[j - 1])], tuple)
            and cover[id(out[j - 1])][0] == "cleanup"
            and not {out[j].offset, out[j + 1].offset} & targets
        ):
            j, returns = j + 1, base  # a return from an except clause: the same handler's state goes
        if j == scan or j >= len(out) or out[j].opname != "RETURN_VALUE" or out[j].offset in targets \
                or depth_of.get(id(out[j])) != returns:
            continue
        found[m] = (j, base, marks[m])
    taken: set[int] = set(used)
    tails: dict[tuple, dict[tuple[int, int], list[int]]] = {}
    for m, (j, base, kind) in found.items():
        if m in used:
            continue
        key = (tuple((ins.opname, repr(ins.argval), ins.lineno) for ins in out[m:j + 1]),
               tuple(cover[id(ins)] for ins in out[m:j + 1]), base, kind)
        tails.setdefault(key, {}).setdefault((m, j), []).append(m)
    for copies in sorted(tails.values(), key=lambda c: -max(j - first for first, j in c)):
        copies = {r: ms for r, ms in copies.items() if not taken.intersection(range(r[0], r[1] + 1))}
        if len(copies) < 2:
            continue
        keep = max(copies)
        for (first, j), from_marks in copies.items():
            used.update(from_marks)
            taken.update(range(first, j + 1))
            if (first, j) != keep:
                replace[first] = (j, out[keep[0]].offset)
    for m in sorted(replace, reverse=True):
        j, target = replace[m]
        jump = Instr("JUMP", out[m].offset, None, None, target, out[m].lineno)
        cover[id(jump)] = cover[id(out[m])]
        out[m:j + 1] = [jump]


def _same_code(out: list[Instr], a: int, b: int, cover: dict, depth_of: dict) -> int | None:
    """Length of the straight-line code ending in a return or raise at ``a`` when ``b`` holds the same."""
    k = 0
    while a + k < len(out) and b + k < len(out) and k < 16:
        x, y = out[a + k], out[b + k]
        if (x.opname, repr(x.argval), x.lineno, cover[id(x)], depth_of.get(id(x))) != \
                (y.opname, repr(y.argval), y.lineno, cover[id(y)], depth_of.get(id(y))) \
                or x.target is not None or y.target is not None:
            return None
        if x.opname in ("RETURN_VALUE", "RAISE_VARARGS"):
            return k + 1
        if x.opname in _NOT_IN_TAIL:
            return None
        k += 1
    return None


_COMPARES = frozenset({"COMPARE_OP", "IS_OP", "CONTAINS_OP"})


def _share_chain_exits(out: list[Instr], cover: dict, depth_of: dict) -> None:
    """Undo 3.10's copies of the return after a chained comparison ``a < b < c``.

    As a value, the last comparison and the cleanup of a failed one (``SWAP 2; POP_TOP``) both end
    in a copy of what follows; as a condition, the cleanup (``POP_TOP``) ends in a copy of the code
    the last test jumps to. The first copy becomes a jump to the other, as 3.11 lays it out.
    """
    first_at: dict[int, int] = {}
    for k, ins in enumerate(out):
        first_at.setdefault(ins.offset, k)
    targets = {ins.target for ins in out if ins.target is not None}

    def index(offset):
        return next((k for k, ins in enumerate(out) if ins.offset >= offset), None)

    replace: dict[int, tuple[int, int]] = {}
    for k, ins in enumerate(out):
        if ins.target is None or k < 3 or out[k - 1].opname not in _COMPARES \
                or [x.opname for x in out[k - 3:k - 1]] != ["SWAP", "COPY"]:
            continue
        t = index(ins.target)
        if t is None or t <= k:
            continue
        if ins.opname in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP") and t + 2 < len(out) \
                and out[t].opname == "SWAP" and out[t].argval == 2 and out[t + 1].opname == "POP_TOP":
            # the copy before the cleanup, after the last comparison
            for n in range(1, 17):
                a = t - n
                if a <= k or out[a - 1].opname not in _COMPARES:
                    continue
                if _same_code(out, a, t + 2, cover, depth_of) == n \
                        and not any(out[x].offset in targets for x in range(a + 1, t)):
                    replace[a] = (t - 1, out[t + 2].offset)
                break
            if out[t - 1].opname == "RETURN_VALUE":
                replace.update(chain_operand_copies(out, k, t - 1, lambda x: (
                    x.opname, repr(x.argval), x.lineno, cover[id(x)], depth_of.get(id(x)))))
        elif ins.opname in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE") and t + 1 < len(out) \
                and out[t].opname == "POP_TOP" and out[t + 1].offset not in targets:
            last = next(
                (
                    j
                    for j in range(k + 1, t)
                    if out[j].opname in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE")
                    and out[j].target is not None
                    and index(out[j].target) != t
                ),
                None,
            )
            if last is None:
                continue
            if out[last].opname == ins.opname:  # the last test fails by jumping: its target is copied
                x = index(out[last].target)
                if x is None or x <= t + 1:
                    continue
                n = _same_code(out, t + 1, x, cover, depth_of)
                if n and not any(out[j].offset in targets for j in range(t + 2, t + 1 + n)):
                    replace[t + 1] = (t + n, out[x].offset)
            else:  # it fails by falling through: that code is the copy, jump to the cleanup's
                n = _same_code(out, last + 1, t + 1, cover, depth_of)
                if (
                    n
                    and last + n < t
                    and not any(out[j].offset in targets for j in range(last + 1, last + 1 + n))
                ):
                    replace[last + 1] = (last + n, out[t + 1].offset)
    for a in sorted(replace, reverse=True):
        end, target = replace[a]
        jump = Instr("JUMP", out[a].offset, None, None, target, out[a].lineno)
        cover[id(jump)] = cover[id(out[a])]
        out[a:end + 1] = [jump]


def _hoist_break_tails(out: list[Instr], cover: dict, depth_of: dict) -> None:
    """``hoist_break_tails`` for 3.10: a copy starts at the loop's stack depth and stays in the
    loop's exception region; the moved copy keeps that region and those depths."""
    def fits(s: int, r: int, back: Instr) -> bool:
        return depth_of.get(id(out[s])) == depth_of.get(id(back)) \
            and all(cover[id(ins)] == cover[id(back)] for ins in out[s:r + 1])

    def made(new: Instr, old: Instr, back: Instr) -> None:
        cover[id(new)] = cover[id(back)]
        depth_of[id(new)] = depth_of.get(id(old))

    hoist_break_tails(out, fits, made)


def _exit_call_length(out: list[Instr], m: int) -> int | None:
    """Length of the ``__exit__(None, None, None)`` call (awaited for async with) starting at ``m``."""
    ops = out[m:m + 6]
    if len(ops) < 5 or any(x.opname != "LOAD_CONST" or x.argval is not None for x in ops[:3]) \
            or ops[3].opname != "CALL" or ops[3].argval != 2:
        return None
    n = 5 if ops[4].opname != "AWAIT" else 6
    return n if len(ops) >= n and ops[n - 1].opname == "POP_TOP" else None


def _is_exc(tag: object) -> bool:
    return isinstance(tag, tuple) and tag[0] in ("S", "X")


_ROT = {"ROT_TWO": 2, "ROT_THREE": 3, "ROT_FOUR": 4}
_DUP = "dup"  # the copy of the exception type an except clause tests
_STILL = frozenset({"NOP", "EXTENDED_ARG", "SETUP_ANNOTATIONS"})  # leave the stack alone
_TERMINAL = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE"})


class _BlockFlow:
    """A static pass over 3.10 code replaying its block stack and the kinds of values on its stack.

    ``states`` maps each reachable instruction's index to (tags, blocks) before it runs. A tag is
    None for an ordinary value, ``_DUP``, ("I", offset of GET_ITER, "iter") for a for loop's
    iterator, or (``"S"``/``"X"``, handler offset, ``"tb"``/``"val"``/``"type"``) for the three
    values of the saved exception state (S) and of the exception being
    handled (X) that 3.10 pushes on entering a handler; each triple is one value in the model.
    A block is ("F", handler offset, level, model level, kind) for SETUP_*, kind being "finally"
    (try/except or try/finally), "with", "name" (the cleanup of ``except E as name``) or
    "async_for"; or ("H", handler offset, level, model level) while a handler runs.
    """

    def __init__(self, raw: list[dis.Instruction], qualname: str):
        self.raw = raw
        self.qualname = qualname
        self.pos = {ins.offset: k for k, ins in enumerate(raw)}
        self.states: dict[int, tuple] = {}
        self.kinds: dict[int, str] = {}
        self.outer: dict[int, tuple] = {}   # handler offset -> the blocks around its handler
        self.loop_exits: dict[int, int] = {}  # offset of a for loop's GET_ITER -> where the loop ends

    def fail(self, k: int, message: str) -> DecompilationError:
        ins = self.raw[k] if k < len(self.raw) else None
        return DecompilationError(message, qualname=self.qualname, offset=ins.offset if ins else None,
                                  opname=ins.opname if ins else None)

    def run(self) -> None:
        if not self.raw:
            return
        start = (None,) if self.raw[0].opname == "GEN_START" else ()
        work = [(0, (start, ()))]
        while work:
            k, state = work.pop()
            if k >= len(self.raw):
                raise self.fail(len(self.raw) - 1, "control runs past the last instruction")
            old = self.states.get(k)
            if old is not None:
                if old != state:
                    raise self.fail(k, "paths join with different block or exception stacks")
                continue
            self.states[k] = state
            work.extend(self.step(k, *state))

    def handler_kind(self, target: int) -> str:
        h = self.pos[target]
        ops = self.raw[h:h + 4]
        if ops[0].opname == "END_ASYNC_FOR":
            return "async_for"
        if len(ops) == 4 and ops[0].opname == "LOAD_CONST" and ops[0].argval is None \
                and ops[1].opname.startswith("STORE_") and ops[2].opname.startswith("DELETE_") \
                and ops[1].argval == ops[2].argval and ops[3].opname == "RERAISE" and ops[3].arg == 1:
            return "name"
        return "finally"

    def setup(self, k: int, tags: tuple, blocks: tuple, level: int, kind: str):
        """The block a SETUP_* pushes, and the state its handler starts in."""
        target = self.raw[k].argval
        if target not in self.pos:
            raise self.fail(k, "handler outside the code")
        if self.kinds.setdefault(target, kind) != kind:
            raise self.fail(k, "one handler for different kinds of block")
        base = tags[:level]
        block = ("F", target, level, _model_depth(base), kind)
        self.outer[target] = blocks
        exc = tuple((group, target, role) for group in "SX" for role in ("tb", "val", "type"))
        handler = ("H", target, level, _model_depth(base))
        return block, (self.pos[target], (base + exc, blocks + (handler,)))

    def step(self, k: int, tags: tuple, blocks: tuple) -> list:
        ins = self.raw[k]
        name = ins.opname
        nxt = k + 1
        target = self.pos.get(ins.argval) if ins.opcode in dis.hasjabs or ins.opcode in dis.hasjrel else None

        def need(n: int) -> None:
            if len(tags) < n:
                raise self.fail(k, "stack underflow")

        if name == "SETUP_FINALLY":
            block, handler = self.setup(k, tags, blocks, len(tags), self.handler_kind(ins.argval))
            return [(nxt, (tags, blocks + (block,))), handler]
        if name == "SETUP_WITH":
            need(1)
            tags = tags[:-1] + (None,)
            block, handler = self.setup(k, tags, blocks, len(tags), "with")
            return [(nxt, (tags + (None,), blocks + (block,))), handler]
        if name == "SETUP_ASYNC_WITH":
            need(1)
            block, handler = self.setup(k, tags, blocks, len(tags) - 1, "with")
            return [(nxt, (tags, blocks + (block,))), handler]
        if name == "POP_BLOCK":
            if not blocks or blocks[-1][0] != "F":
                raise self.fail(k, "POP_BLOCK without a block")
            return [(nxt, (tags, blocks[:-1]))]
        if name == "POP_EXCEPT":
            if not blocks or blocks[-1][0] != "H" or len(tags) < 3 \
                    or any(not _is_exc(t) or t[0] != "S" for t in tags[-3:]):
                raise self.fail(k, "POP_EXCEPT without a handler's saved exception state")
            return [(nxt, (tags[:-3], blocks[:-1]))]
        if name == "END_ASYNC_FOR":
            need(7)
            if not blocks or blocks[-1][0] != "H":
                raise self.fail(k, "END_ASYNC_FOR outside its handler")
            return [(nxt, (tags[:-7], blocks[:-1]))]
        if name in _TERMINAL:
            return []
        if name == "JUMP_IF_NOT_EXC_MATCH":
            need(2)
            if tags[-2] != _DUP:
                raise self.fail(k, "exception match without the exception type")
            return [(nxt, (tags[:-2], blocks)), (target, (tags[:-2], blocks))]
        if name == "DUP_TOP":
            need(1)
            top = tags[-1]
            if top == _DUP or (_is_exc(top) and top[2] != "type"):
                raise self.fail(k, "exception value copied")
            return [(nxt, (tags + (_DUP if _is_exc(top) else None,), blocks))]
        if name in _ROT:
            n = _ROT[name]
            need(n)
            return [(nxt, (tags[:-n] + tags[-1:] + tags[-n:-1], blocks))]
        if name == "POP_TOP" or name.startswith("STORE_") and ins.opcode not in (dis.opmap["STORE_ATTR"],
                                                                                   dis.opmap["STORE_SUBSCR"]):
            need(1)
            return [(nxt, (tags[:-1], blocks))]
        if name == "WITH_EXCEPT_START":
            return [(nxt, (tags + (None,), blocks))]
        if name in ("JUMP_ABSOLUTE", "JUMP_FORWARD"):
            return [(target, (tags, blocks))]
        if name in ("GET_ITER", "GET_AITER"):
            need(1)
            return [(nxt, (tags[:-1] + (("I", ins.offset, "iter"),), blocks))]
        if name == "FOR_ITER":
            need(1)
            if isinstance(tags[-1], tuple) and tags[-1][0] == "I":
                self.loop_exits[tags[-1][1]] = ins.argval
            return [(nxt, (tags + (None,), blocks)), (target, (tags[:-1], blocks))]
        if name in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
            need(1)
            return [(nxt, (tags[:-1], blocks)), (target, (tags, blocks))]
        if name in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE"):
            need(1)
            return [(nxt, (tags[:-1], blocks)), (target, (tags[:-1], blocks))]
        effect = dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None)
        if effect < 0:
            need(-effect)
            if any(_is_exc(t) or t == _DUP for t in tags[effect:]):
                raise self.fail(k, "exception values used as operands")
            tags = tags[:effect]
        else:
            if effect == 0 and not name.startswith("DELETE_") and name not in _STILL and tags \
                    and (_is_exc(tags[-1]) or tags[-1] == _DUP):
                raise self.fail(k, "exception values used as operands")
            tags = tags + (None,) * effect
        return [(nxt, (tags, blocks))]

    def cover(self, blocks: tuple) -> tuple | None:
        """The (handler offset, depth, lasti) of the model's exception table for code under ``blocks``."""
        for block in reversed(blocks):
            if block[0] == "F":
                if block[4] == "async_for":
                    continue  # folded into ASYNC_FOR_ITER
                return (block[1], block[3], block[4] != "finally")
            if self.kinds[block[1]] == "name":
                continue  # 3.11 covers it with the cleanup of the except clause around it
            return ("cleanup", block[1], block[3] + 1)
        return None


def _model_depth(tags: tuple) -> int:
    """How many values the model has for these 3.10 stack values (each exception triple is one)."""
    return sum(1 for t in tags if t is None or isinstance(t, tuple) and t[2] in ("val", "iter"))


_NO_FALL = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP"})


def _table(out: list[Instr], cover: dict, flow: _BlockFlow, end: int) -> list[ExceptionEntry]:
    """Insert each handler's cleanup (3.11's ``COPY 3; POP_EXCEPT; RERAISE 1``); the table of ranges.

    As in 3.11 a cleanup follows the code it covers (``finally`` bodies are found up to it); its
    instructions take the odd offset after the last instruction of that code.
    """
    keys = [cover[id(ins)] for ins in out]
    last: dict[int, int] = {}
    for k, key in enumerate(keys):
        if key is not None and key[0] == "cleanup":
            last[key[1]] = k
    cleanups: dict[int, int] = {}
    for handler, k in sorted(last.items(), key=lambda item: -item[1]):
        # after the next instruction no control falls through from, at a free (odd) offset
        while k + 1 < len(out) and (
            out[k].opname not in _NO_FALL or out[k].offset % 2 or out[k + 1].offset % 2
        ):
            k += 1
        if out[k].opname not in _NO_FALL:
            raise DecompilationError("handler code falls off the end", offset=out[k].offset)
        offset = out[k].offset + 1
        cleanups[handler] = offset
        outer = flow.cover(flow.outer[handler])
        block = [Instr(opname, offset, None, argval) for opname, argval in
                 (("COPY", 3), ("POP_EXCEPT", None), ("RERAISE", 1))]
        out[k + 1:k + 1] = block
        keys[k + 1:k + 1] = [outer] * 3
    entries: list[ExceptionEntry] = []
    k = 0
    while k < len(out):
        j = k
        while j < len(out) and keys[j] == keys[k]:
            j += 1
        key = keys[k]
        if key is not None:
            stop = out[j].offset if j < len(out) else end
            if stop <= out[k].offset:
                raise DecompilationError("exception ranges overlap", offset=out[k].offset)
            if key[0] == "cleanup":
                if key[1] not in cleanups:
                    raise DecompilationError("handler without its cleanup", offset=out[k].offset)
                entries.append(ExceptionEntry(out[k].offset, stop, cleanups[key[1]], key[2], True))
            else:
                entries.append(ExceptionEntry(out[k].offset, stop, key[0], key[1], key[2]))
        k = j
    return entries


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
