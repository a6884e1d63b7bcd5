"""Does recompiled code take the same paths as the original? A check that catches wrong control flow.

Decompiling can go wrong in ways that still compile: a ``break`` dropped, a branch attached to the
wrong statement, a loop that no longer ends. Counting calls, names and operators
(the effects check) does not see those. This module abstracts a code object into its *flow*: the
observable events (an attribute looked up, a call, an operator, a return, a raise, a yield) and, for
every event, which events can come next and which branch
decisions (true/false, loop has an item/is exhausted) lie between. Two code objects produced by the
same compiler from equivalent source have the same flow, however the compiler laid it out
(copied return blocks, inverted jumps, duplicated loop tests), because the order in which Python
evaluates things is fixed by the source. Exception edges are not followed; every handler is a
separate start.

``differences(original, recompiled)`` compares the flows of the two code objects and of the
nested code objects they create, and says what differs (empty: same flow).
"""

from __future__ import annotations

import dis
import operator
import re
import sys
import types
from collections import defaultdict

from depyf.decompiler.instructions import flow_instructions, raw_exception_entries

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
# Instructions followed, over all variables, before the access order check gives up on a code
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


def differences(original: types.CodeType, recompiled: types.CodeType) -> list[str]:
    """What differs between the flows of ``original`` and ``recompiled`` (and their nested code)."""
    problems: list[str] = []
    _compare(original, recompiled, problems)
    return problems


def _compare(original: types.CodeType, recompiled: types.CodeType, problems: list[str]) -> None:
    builders = _constant_builders(original)
    ours, theirs = Flow(recompiled, builders), Flow(original, builders)
    # A callee named on one side only (reached through a jump, or through instructions the other
    # layout fuses) says nothing: such calls are compared unnamed on both sides.
    named = ours.call_labels() & theirs.call_labels()
    ours.keep_call_labels(named)
    theirs.keep_call_labels(named)
    # Same successors: then the branch decisions, unless ``and``/``or`` values are tested (the
    # compiler threads their tests differently per parenthesising) or there are too many paths.
    # (The successors are the pairs with decisions without them, when no path was given up on.)
    if not (ours.has_value_tests or theirs.has_value_tests):
        strict_a, strict_b = ours.pairs(True), theirs.pairs(True)
        if not (ours.gave_up or theirs.gave_up):
            a, b = _without_decisions(strict_a), _without_decisions(strict_b)
            if a == b:
                a, b = strict_a, strict_b
        else:
            a, b = ours.pairs(False), theirs.pairs(False)
    else:
        a, b = ours.pairs(False), theirs.pairs(False)
    problems.extend(_binding_differences(original, theirs.bindings(), ours.bindings()))
    problems.extend(_access_order_differences(original, theirs.access_orders(), ours.access_orders()))
    if a != b:
        extra = sorted(a - b, key=repr)[:3]
        missing = sorted(b - a, key=repr)[:3]
        qualname = getattr(original, "co_qualname", original.co_name)
        problems.append(f"{qualname}: the recompiled code takes other paths (only there: {_show(extra)}; "
                        f"only in the original: {_show(missing)})")
    for mine, theirs_code, nested_problems in _pair_nested(theirs.nested_code(), ours.nested_code()):
        if theirs_code is None:
            problems.append(
                f"{getattr(mine, 'co_qualname', mine.co_name)}: nested code missing after recompiling"
            )
        else:
            problems.extend(nested_problems)


def _without_decisions(pairs: set) -> set:
    """``Flow.pairs(False)`` from ``Flow.pairs(True)`` of a flow that gave up on no path: the
    events reachable from each event are the same (every way to one passes a path without a
    loop), and a path that loops without an event is an entry of the strict pairs only."""
    return {(event, (), nxt) for event, _, nxt in pairs if nxt != _LOOP}


def _binding_differences(
    code: types.CodeType, original: dict[str, set], recompiled: dict[str, set]
) -> list[str]:
    """Names stored or deleted with another kind of store (fast, deref, global, name): a lost
    ``nonlocal`` or ``global`` declaration still compiles, but binds another variable. A name only
    the recompiled code binds must be a local temporary of the decompiler's."""
    problems = []
    for name in sorted(original.keys() | recompiled.keys()):
        mine, theirs = recompiled.get(name, set()), original.get(name, set())
        if mine == theirs or (not theirs and _TEMPORARY.match(name) and mine <= {("store", "fast"),
                                                                             ("store", "name")}):
            continue
        qualname = getattr(code, "co_qualname", code.co_name)
        problems.append(f"{qualname}: {name!r} is bound differently (original: {_kinds(theirs)}; "
                        f"recompiled: {_kinds(mine)})")
    return problems


def _access_order_differences(code: types.CodeType, original: dict[str, set] | None,
                              recompiled: dict[str, set] | None) -> list[str]:
    """Variables read and written in another order: a value read, then the variable stored, then
    the value read earlier used (stack code keeps it there) must not turn into source that stores
    first and reads the new value. Compared for the variables both codes use (the decompiler's
    temporaries are its own); skipped where either side was too big to follow."""
    if original is None or recompiled is None:
        return []
    problems = []
    for name in sorted(original.keys() & recompiled.keys()):
        if original[name] != recompiled[name]:
            qualname = getattr(code, "co_qualname", code.co_name)
            problems.append(f"{qualname}: {name!r} is read and written in another order (only in the "
                            f"original: {_orders(original[name] - recompiled[name])}; only recompiled: "
                            f"{_orders(recompiled[name] - original[name])})")
    return problems


def _orders(pairs: set) -> str:
    return ", ".join(f"{a} -> {b}" for a, b in sorted(pairs)) or "none"


def _kinds(found: set) -> str:
    return ", ".join(f"{action} {kind}" for action, kind in sorted(found)) or "never"


def _constant_builders(code: types.CodeType) -> set[str]:
    """Builtins whose calls source needs to spell ``code``'s constants: ``float('nan')``,
    ``complex(-0.0, 1.0)``, ``frozenset({1})``. Such a call with constant arguments may stand for
    a constant of the original, so in both code objects it is not counted as an event."""
    found: set[str] = set()
    todo = list(code.co_consts)
    while todo:
        value = todo.pop()
        if isinstance(value, float) and value != value:
            found.add("float")
        elif isinstance(value, complex):
            found.add("complex")
        elif isinstance(value, frozenset):
            found.add("frozenset")
            todo.extend(value)
        elif isinstance(value, tuple):
            todo.extend(value)
    return found


def _show(pairs: list) -> str:
    return (
        ", ".join(f"{_label(a)} -[{'/'.join(d) if d else ''}]-> {_label(b)}" for a, d, b in pairs) or "none"
    )


def _label(event: tuple) -> str:
    return ":".join(str(x) for x in event if x != "")


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


def _pair_nested(original: list[types.CodeType], recompiled: list[types.CodeType]):
    """(nested code, its recompiled twin or None, the differences between them): twins matched by
    name, the first one with the same flow, else the first left. (Equivalent source can create
    same-named code in another order: branches swapped.)"""
    pool: dict[str, list[types.CodeType]] = defaultdict(list)
    for c in recompiled:
        pool[c.co_name].append(c)
    for c in original:
        candidates = pool.get(c.co_name)
        if not candidates:
            yield c, None, []
            continue
        compared = []
        for candidate in candidates:
            compared.append((candidate, differences(c, candidate)))
            if not compared[-1][1]:
                break
        match, found = next(((x, d) for x, d in compared if not d), compared[0])
        candidates.remove(match)
        yield c, match, found


class Flow:
    """The events of one code object and the paths between them."""

    def __init__(self, code: types.CodeType, constant_builders: frozenset | set = frozenset()):
        self.code = code
        self.instructions = []
        self.index: dict[int, int] = {}  # offset -> instruction index (EXTENDED_ARG: the one it extends)
        pending = []
        for ins in flow_instructions(code):
            if ins.opname in ("CACHE", "EXTENDED_ARG"):
                pending.append(ins.offset)
                continue
            for offset in pending + [ins.offset]:
                self.index[offset] = len(self.instructions)
            pending = []
            self.instructions.append(ins)
        self.gave_up = False
        self.targets = {self.index[ins.argval] for ins in self.instructions
                        if ins.opcode in _JUMPS and ins.argval in self.index}
        self.events = [self._event(ins) for ins in self.instructions]
        if constant_builders:
            self._drop_constant_builds(constant_builders)
        self._future_import: set[int] = set()   # the instructions of ``from __future__ import ...``
        self._drop_future_imports()
        self.constants: dict[int, object] = {}   # instruction index -> the constant it leaves
        # the walk from the starts (reachable instructions, the ways into each), kept while the
        # constants it was taken with stand
        self._walked: tuple[set[int], dict[int, list[int]]] | None = None
        self._drop_folded_constants()
        self._cache: dict[tuple[int, bool], set] = {}
        self.starts = [0]
        self._add_entered_handlers(raw_exception_entries(code))  # 3.11+ (3.10: SETUP_*)
        carried = self._constants_carried_by_jumps()
        if carried:
            self._drop_folded_constants(carried)
        self._label_calls()
        self.has_value_tests = any(ins.opname in _CONDITIONAL and self._value_test(k)
                                   for k, ins in enumerate(self.instructions))

    def _constants_carried_by_jumps(self) -> dict[int, int]:
        """Jump targets entered only by a value-keeping test of a constant that always jumps there
        (``3 or x``: JUMP_IF_TRUE_OR_POP, or 3.12+'s COPY 1; POP_JUMP_IF_TRUE): target -> the
        constant's instruction."""
        _, entries = self._walked if self._walked is not None else self._walk()
        carried = {}
        for target, sources in entries.items():
            k = sources[0]
            ins = self.instructions[k]
            if (
                len(set(sources)) != 1
                or ins.opname not in _CONDITIONAL
                or self.index.get(ins.argval) != target
                or not self._constant_outcome(k)
            ):
                continue
            j = k - 1
            while j >= 0 and self.instructions[j].opname in ("TO_BOOL", "NOP", "NOT_TAKEN"):
                j -= 1
            keeps_value = ins.opname in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP")
            if j >= 0 and self.instructions[j].opname == "COPY" and self.instructions[j].arg == 1:
                keeps_value, j = True, j - 1
            if keeps_value and j in self.constants:
                carried[target] = j
        return carried

    def _walk(self, handler_of: dict[int, int] | None = None) -> tuple[set[int], dict[int, list[int]]]:
        """The instructions reachable from the starts, and for each the instructions leading to it.
        With ``handler_of`` (instruction -> its exception handler), a handler becomes a start once
        code it protects is reached; 3.10's handlers are added by ``_successors`` on the way."""
        seen: set[int] = set()
        entries: dict[int, list[int]] = defaultdict(list)
        todo = list(self.starts)
        while todo:
            k = todo.pop()
            if k not in seen:
                seen.add(k)
                for n, _ in self._successors(k):
                    entries[n].append(k)
                    todo.append(n)
                handler = handler_of.get(k) if handler_of else None
                if handler is not None and handler not in seen:
                    self.starts.append(handler)
                    todo.append(handler)
            if not todo:
                todo = [s for s in self.starts if s not in seen]
        return seen, entries

    def _add_entered_handlers(self, entries) -> None:
        """Exception handlers as starts, each once code it protects can run: a handler of an empty
        ``try`` body (``try: pass``) is kept by the compiler but never entered."""
        handler_of: dict[int, int] = {}
        for e in entries:
            target = self.index.get(e.target)
            first, end = self.index.get(e.start), self.index.get(e.end, len(self.instructions))
            if target is not None and first is not None:
                for j in range(first, end):
                    handler_of.setdefault(j, target)
        # (a walk from every start found reaches the same instructions by the same ways)
        self._walked = self._walk(handler_of)
        self.starts = [0] + sorted(set(self.starts) - {0})

    # -- events ---------------------------------------------------------------------------
    def _event(self, ins: dis.Instruction) -> tuple | None:
        op = ins.opname
        if op in _NAME_EVENTS:
            return (_NAME_EVENTS[op], str(ins.argval))
        if op in ("IS_OP", "CONTAINS_OP"):  # negation: see _negated_test
            return (op,)
        if op in _OPERATOR_EVENTS:
            key = ins.argrepr
            if key.startswith("bool(") and key.endswith(")"):
                key = key[5:-1]
            return (op, key)
        if op in _SLICE_OPS:  # 3.12+: ``x[a:b]`` without building the slice first
            return (_SLICE_OPS[op],)
        if op in _CALLS:  # ``f(*())`` and ``f()`` are the same call, made by different opcodes
            return ("CALL",)
        if op in _RETURNS:
            return ("return",)
        if op in _PLAIN_EVENTS:
            return (op,)
        if op.startswith("BINARY_") or op.startswith("INPLACE_"):  # 3.10's operator opcodes
            return (op,)
        return None

    def bindings(self) -> dict[str, set]:
        """name -> the (store/del, kind) pairs of every instruction that binds or unbinds it."""
        found: dict[str, set] = defaultdict(set)
        for k, ins in enumerate(self.instructions):
            binding = _BINDINGS.get(ins.opname)
            if binding is not None and k not in self._future_import:
                names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
                stored = names[:1] if ins.opname == "STORE_FAST_LOAD_FAST" else names
                for name in stored:
                    found[str(name)].add(binding)
        return found

    def access_orders(self) -> dict[str, set] | None:
        """For each local or cell variable both read and written (or deleted), which kind of
        access (read, write, del; or the start) can come right before which other kind, along any
        path. Repeats of one kind are one (a decompiler may read a variable twice where the
        bytecode kept a copy on the stack). None when following them would take too long."""
        accesses: dict[int, list[tuple[str, str]]] = {}
        for k, ins in enumerate(self.instructions):
            kinds = _ACCESSES.get(ins.opname)
            if kinds is None or k in self._future_import:
                continue
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,) * len(kinds)
            accesses[k] = [(str(n), kind) for n, kind in zip(names, kinds, strict=True)]
        by_name: dict[str, list[int]] = defaultdict(list)
        kinds_of: dict[str, set[str]] = defaultdict(set)
        for k, found in accesses.items():
            for name, kind in found:
                kinds_of[name].add(kind)
            for name in dict.fromkeys(n for n, _ in found):
                by_name[name].append(k)
        # (a variable only read, or only written, is accessed in one order whatever the layout)
        checked = [name for name, places in by_name.items()
                   if "read" in kinds_of[name] and len(kinds_of[name]) > 1 and not _TEMPORARY.match(name)]
        if not checked:
            return {}
        successors = [[n for n, _ in self._successors(k)] for k in range(len(self.instructions))]
        orders: dict[str, set] = {}
        budget = MAX_ACCESS_STEPS
        for name in checked:
            places = set(by_name[name])
            pairs: set = set()
            origins = [(s, "start", [s]) for s in self.starts]
            for k in by_name[name]:
                own = [a for n, a in accesses[k] if n == name]
                pairs.update((a, b) for a, b in zip(own, own[1:], strict=False) if a != b)
                origins.append((k, own[-1], successors[k]))
            for _, kind, work in origins:
                seen: set[int] = set()
                work = list(work)
                while work:
                    pos = work.pop()
                    if pos in seen:
                        continue
                    seen.add(pos)
                    if pos in places:
                        first = next(a for n, a in accesses[pos] if n == name)
                        if first != kind:
                            pairs.add((kind, first))
                        continue
                    work.extend(successors[pos])
                budget -= len(seen)
                if budget < 0:
                    return None
            orders[name] = pairs
        return orders

    def _label_calls(self) -> None:
        """Name each call by its callee (``("CALL", "x.append")``), so calls made in another order
        read differently. The callee is what the code computes from where the call's lowest stack
        slot was first filled to where its first argument begins, found by following stack depths
        through straight-line code; a call whose callee comes in by a jump keeps no name."""
        owner: dict[int, int] = {}   # stack slot -> instruction where computing its value began
        loaded: dict[int, int] = {}  # stack slot -> which name of a fused load began it
        depth = 0
        falls_through = True
        precall = None               # 3.11: PRECALL pops the arguments, CALL the callee
        starts = set(self.starts) | self.targets
        for k, ins in enumerate(self.instructions):
            if k in starts or not falls_through:
                owner, loaded, depth = {}, {}, 0
            effect = _stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None)
            if effect is None:
                owner, loaded, effect = {}, {}, 0
            after = depth + effect
            if ins.opname == "PRECALL":
                precall = (owner.get(after - 2), owner.get(after))
            elif self.events[k] == ("CALL",):
                first, arguments = precall if precall is not None else (
                    owner.get(after - 1), owner.get(after - 1 + _callee_slots(ins)))
                label = (
                    self._callee(first, k if arguments is None else arguments, loaded.get(after - 1, 0))
                    if first is not None else ""
                )
                if label:
                    self.events[k] = ("CALL", label)
                precall = None
            # a fused load begins the values it pushes, even where it pops as many (a store first)
            pops, first_name = _FUSED_LOADS.get(ins.opname, (0, 0))
            base = min(depth - pops, after)
            for slot in [s for s in owner if s >= base]:
                del owner[slot]
                loaded.pop(slot, None)
            for slot in range(base if pops else depth, after):
                owner[slot] = k
                if ins.opname in _FUSED_LOADS:
                    loaded[slot] = first_name + slot - base
            depth = after
            falls_through = ins.opname not in _UNCONDITIONAL and ins.opname not in _TERMINATOR_OPS

    def call_labels(self) -> set[str]:
        return {e[1] for e in self.events if e is not None and e[0] == "CALL" and len(e) > 1}

    def keep_call_labels(self, labels: set[str]) -> None:
        """Unname every call whose callee is not among ``labels``."""
        for k, e in enumerate(self.events):
            if e is not None and e[0] == "CALL" and len(e) > 1 and e[1] not in labels:
                self.events[k] = ("CALL",)

    def _callee(self, first: int, end: int, part: int = 0) -> str:
        """The names the instructions ``first`` to ``end`` load (the callee's computation; a fused
        load at ``first`` from its name ``part`` on)."""
        names = []
        for m in range(first, min(end, first + 16)):
            ins = self.instructions[m]
            if ins.opname == "LOAD_ASSERTION_ERROR":   # ``assert x, msg`` calls it with msg as self
                return "AssertionError"
            if ins.opname in _FUSED_LOADS:
                names.extend(str(x) for x in ins.argval[part if m == first else _FUSED_LOADS[ins.opname][1]:])
            elif ins.opname in _NAMED_LOADS:
                names.append(str(ins.argval))
            elif ins.opname not in ("PUSH_NULL", "NOP", "PRECALL", "KW_NAMES"):
                return ""       # not a plain (dotted) name: a call's result, a subscript, a ``with``
        return ".".join(names) if end - first <= 16 else ""

    def _drop_future_imports(self) -> None:
        """``from __future__ import ...`` (which source needs where the original had a compiler flag)."""
        for k, ins in enumerate(self.instructions):
            if ins.opname == "IMPORT_NAME" and ins.argval == "__future__":
                j = k
                while j < len(self.instructions) and self.instructions[j].opname != "POP_TOP":
                    self.events[j] = None
                    self._future_import.add(j)
                    j += 1

    def _drop_folded_constants(self, carried: dict[int, int] | None = None) -> None:
        """Operators on constants that the compiler left unfolded (``-(7 or x)`` keeps LOAD_CONST 7;
        UNARY_NEGATIVE, ``(-1 or 7) * 3`` keeps the multiplication): source that says ``-7`` or
        ``-1 * 3`` compiles to one constant, and an operator on constants observes nothing outside.
        Their values are kept where cheap to compute, so a test of one has a known outcome.
        ``carried`` maps a jump target to the constant every live way into it leaves on the stack
        (``(3 or x) // 3``: the constant test's jump carries 3 past the dead ``x``)."""
        carried = carried or {}
        self._successor_cache: dict[int, list[tuple[int, str]]] = {}   # (they depend on the constants)
        self._walked = None
        starts: dict[int, int] = {}   # index of an instruction making a constant -> where its operands begin
        for k, ins in enumerate(self.instructions):
            op = ins.opname
            if op in ("LOAD_CONST", "LOAD_SMALL_INT"):
                starts[k] = k
                self.constants[k] = ins.argval
                continue
            if op in _UNARY and k - 1 in starts:
                starts[k] = starts[k - 1]
                operands = [k - 1]
            elif (op == "BINARY_OP" or op.startswith("BINARY_")) and k - 1 in starts \
                    and carried.get(starts[k - 1], starts[k - 1] - 1) in starts:
                right = starts[k - 1]
                left = carried.get(right, right - 1)
                starts[k] = right if right in carried else starts[left]
                operands = [left, k - 1]
            elif (op == "BINARY_OP" or op.startswith("BINARY_")) and carried.get(k) in starts \
                    and starts[carried[k]] - 1 in starts:
                # the constant test's jump lands on the operator itself (``True // (9 or x)``)
                right = carried[k]
                left = starts[right] - 1
                starts[k] = starts[left]
                operands = [left, right]
            else:
                continue
            landing = k if k in carried else k + 1   # the carried jump lands on k: not a way in
            if any(j in self.targets for j in range(starts[k] + 1, landing)):
                del starts[k]
                continue
            self.events[k] = None
            if all(j in self.constants for j in operands):
                value = _fold(ins, [self.constants[j] for j in operands])
                if value is not _UNKNOWN:
                    self.constants[k] = value

    def _drop_constant_builds(self, builders: set[str]) -> None:
        """``float('nan')`` and the like: the global and the call that only rebuild a constant."""
        for k, ins in enumerate(self.instructions):
            if ins.opname != "LOAD_GLOBAL" or ins.argval not in builders:
                continue
            j = k + 1  # the call after the constant arguments
            while j < len(self.instructions) and self.events[j] is None \
                    and self.instructions[j].opname in _CONSTANT_ARGUMENT_OPS:
                j += 1
            if j < len(self.instructions) and self.events[j] is not None and self.events[j][0] == "CALL":
                self.events[j] = None

    def nested_code(self) -> list[types.CodeType]:
        """The code objects this code can load. (One compiled in a branch the compiler dropped as
        dead, ``if 0: def g(): ...``, stays among the constants; one loaded only where a constant
        test never goes, ``if -1: ... else: [listcomp]``, is left out of source that says ``if -1``.)"""
        reachable, _ = self._walked if self._walked is not None else self._walk()
        loaded = {id(self.instructions[k].argval) for k in reachable
                  if self.instructions[k].opname == "LOAD_CONST"}
        return [c for c in self.code.co_consts if isinstance(c, types.CodeType) and id(c) in loaded]

    # -- control --------------------------------------------------------------------------
    def _successors(self, k: int) -> list[tuple[int, str]]:
        """(next instruction index, decision taken on the way) pairs (computed once per
        instruction while the known constants stand; do not modify)."""
        found = self._successor_cache.get(k)
        if found is None:
            found = self._successor_cache[k] = self._find_successors(k)
        return found

    def _find_successors(self, k: int) -> list[tuple[int, str]]:
        ins = self.instructions[k]
        op = ins.opname
        if op in _TERMINAL:
            return []
        target = self.index.get(ins.argval) if ins.opcode in _JUMPS else None
        if op in _UNCONDITIONAL:
            return [(target, "")] if target is not None else []
        nxt = [(k + 1, "")] if k + 1 < len(self.instructions) else []
        if op in _CONDITIONAL and target is not None:
            known = self._constant_outcome(k)
            if known is not None:       # a test of a constant: only one way is ever taken
                return [(target, "")] if known else [(n, "") for n, _ in nxt]
            taken, fall = _CONDITIONAL[op]
            if self._negated_test(k):
                taken, fall = _FLIP.get(taken, taken), _FLIP.get(fall, fall)
            return [(target, taken)] + [(n, fall) for n, _ in nxt]
        if op in _SETUP and target is not None and not (
                k + 1 < len(self.instructions) and self.instructions[k + 1].opname == "POP_BLOCK"):
            self._add_start(target)  # (3.10) a handler; one protecting nothing is never entered
        return nxt

    def _constant_outcome(self, k: int) -> bool | None:
        """Whether the conditional jump at ``k`` is taken, when it tests a constant loaded right
        before it (3.14 keeps ``LOAD_SMALL_INT 0; TO_BOOL; POP_JUMP_IF_TRUE``, which source that
        says ``and 0 or`` may compile without); None when the value is not known."""
        j = k - 1
        while j >= 0 and self.instructions[j].opname in ("TO_BOOL", "NOP", "NOT_TAKEN", "COPY"):
            j -= 1
        if j not in self.constants or any(t in self.targets for t in range(j + 1, k + 1)):
            return None
        value = self.constants[j]
        op = self.instructions[k].opname
        if "NOT_NONE" in op:
            return value is not None
        if "NONE" in op:
            return value is None
        if op in ("JUMP_IF_NOT_EXC_MATCH", "FOR_ITER", "SEND"):
            return None
        return bool(value) == ("TRUE" in op)

    def _value_test(self, k: int) -> bool:
        """Is the jump at ``k`` part of an ``and``/``or`` whose value is used (not a statement's test)?

        The compiler threads such jumps through each other (``a or b and c or d``), so how many
        tests a path passes depends on how the expression is parenthesised, not on what it does;
        the events it reaches are still compared."""
        if self.instructions[k].opname in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
            return True
        j = k - 1
        if j >= 0 and self.instructions[j].opname == "TO_BOOL":
            j -= 1
        return j >= 0 and self.instructions[j].opname == "COPY" and self.instructions[j].arg == 1

    def _negated_test(self, k: int) -> bool:
        """Does the jump at ``k`` test a negated result (``not in``, ``is not``, ``not x``)?

        ``if a not in b`` and ``if not a in b`` compile to an inverted operator or to an inverted
        jump: decisions are recorded for the un-negated test so both read the same."""
        negated = False
        j = k - 1
        while j >= 0 and self.instructions[j].opname in ("COPY", "TO_BOOL", "NOP", "UNARY_NOT"):
            negated ^= self.instructions[j].opname == "UNARY_NOT"
            j -= 1
        if (
            j >= 0
            and self.instructions[j].opname in ("IS_OP", "CONTAINS_OP")
            and self.instructions[j].arg == 1
        ):
            negated = not negated
        return negated

    def _add_start(self, k: int) -> None:
        if k not in self.starts:
            self.starts.append(k)

    def _next_events(self, k: int, decisions: bool) -> set:
        """(decisions, event index) pairs reachable from ``k`` through instructions that are no events.

        With ``decisions``, each path keeps the branch decisions it took and a path that comes
        back to an instruction without passing an event ends in index -1 (a loop doing nothing);
        without, only which events come next.
        """
        key = (k, decisions)
        if key in self._cache:
            return self._cache[key]
        found: set = set()
        if not decisions:
            seen: set[int] = set()
            work = [k]
            while work:
                for nxt, _ in self._successors(work.pop()):
                    if self.events[nxt] is not None:
                        found.add(((), nxt))
                    elif nxt not in seen:
                        seen.add(nxt)
                        work.append(nxt)
            self._cache[key] = found
            return found
        stack = [(k, (), frozenset())]
        explored = 0
        while stack:
            pos, path, visited = stack.pop()
            for nxt, decision in self._successors(pos):
                step = path + (decision,) if decision else path
                if self.events[nxt] is not None:
                    found.add((step, nxt))
                elif nxt in visited:
                    found.add((step, -1))
                else:
                    explored += 1
                    if explored > MAX_PATHS_PER_EVENT:
                        self.gave_up = True
                        return set()
                    stack.append((nxt, step, visited | {nxt}))
        self._cache[key] = found
        return found

    def pairs(self, decisions: bool) -> set:
        """(event, decisions, next event) for every event reachable from a start (starts included)."""
        out: set = set()
        done: set[int] = set()
        started: set[int] = set()
        while len(started) < len(self.starts):
            todo = []
            for s in [s for s in self.starts if s not in started]:
                started.add(s)
                if self.events[s] is not None:
                    out.add((("start",), (), self.events[s]))
                    todo.append(s)
                    continue
                for path, e in self._next_events(s, decisions):
                    out.add((("start",), path, self.events[e] if e >= 0 else ("loop",)))
                    if e >= 0:
                        todo.append(e)
            while todo:
                e = todo.pop()
                if e in done:
                    continue
                done.add(e)
                for path, nxt in self._next_events(e, decisions):
                    out.add((self.events[e], path, self.events[nxt] if nxt >= 0 else ("loop",)))
                    if nxt >= 0 and nxt not in done:
                        todo.append(nxt)
        return out


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
