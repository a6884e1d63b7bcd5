"""The stack through the blocks of 3.10 code: which handler each instruction is under, what
kind of handler (except, finally, with) it is, and the exception table it amounts to."""

from __future__ import annotations

import dis

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.instructions import ExceptionEntry, Instr


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
    cleanups: dict[int, float] = {}
    for handler, k in sorted(last.items(), key=lambda item: -item[1]):
        # after the next instruction no control falls through from, at a free (odd) offset; where
        # the cleanup of an enclosing handler is there already (a try statement inside a finally
        # body that ends the function), before it, halfway to its offset: the inner cleanup is
        # covered by the outer one, as 3.11 lays them out
        while k + 1 < len(out) and (out[k].opname not in _NO_FALL or out[k].offset % 2):
            k += 1
        if out[k].opname not in _NO_FALL:
            raise DecompilationError("handler code falls off the end", offset=out[k].offset)
        following = out[k + 1].offset if k + 1 < len(out) else None
        inserted = following is not None and following % 2 != 0     # (odd, or halfway)
        offset = (out[k].offset + following) / 2 if inserted else out[k].offset + 1
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
