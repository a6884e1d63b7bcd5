"""Names for events: calls by their callee (and arguments), returns by what they return.

A plain ``CALL`` or ``return`` event says little about which call or which return it is; the
names here let paths that make another call, or return another value, read differently. Each is
compared only where both sides can name alike (see ``flowcheck.compare``).
"""

from __future__ import annotations

import dis
import types
from collections import Counter

from depyf.decompiler.flowcheck.tables import (
    _DUPLICATES,
    _FUSED_LOADS,
    _MOVES,
    _NAMED_LOADS,
    _STACK_EFFECTS,
    _TEMPORARY,
    _TERMINATOR_OPS,
    _UNCONDITIONAL,
    _UNKNOWN,
    _callee_slots,
    _stack_effect,
)

_HAVE_ARGUMENT = dis.HAVE_ARGUMENT
_MISSING = object()
# conditional jumps that keep the value they test when they jump, and pop it when they do not
_KEEPS_TESTED_VALUE = frozenset({"JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"})
_CALL = ("CALL",)
_COMPUTED = object()    # (``_value_loaded_before``: a value the instruction before computes)
# a call's arguments longer than this are not printed (see ``_arguments_print``)
_MAX_PRINTED_ARGUMENTS = 24


class EventLabels:
    """Naming the call and return events of a ``Flow``."""

    def _label_calls(self) -> None:
        """Name each call by its callee (``("CALL", "x.append")``), so calls made in another order
        read differently. The callee is what the code computes from where the call's lowest stack
        slot was first filled to where its first argument begins, found by following stack depths
        through straight-line code; a call whose callee comes in by a jump keeps no name."""
        self._call_prints: dict[int, str | None] = {}   # labelled call -> its arguments' print
        self._callee_loads: dict[int, list[int]] = {}   # labelled call -> its callee's attribute loads
        self._returned_from: dict[int, int] = {}  # ``return`` -> where computing its value began
        self._stored_from: dict[int, int] = {}    # store of a local -> where computing it began
        owner: dict[int, int] = {}   # stack slot -> instruction where computing its value began
        loaded: dict[int, int] = {}  # stack slot -> which name of a fused load began it
        depth = 0
        falls_through = True
        precall = None               # 3.11: PRECALL pops the arguments, CALL the callee
        starts = set(self.starts) | self.targets
        events = self.events
        effects = _STACK_EFFECTS
        # A target that only forward jumps (and the code before it) enter, where no handler
        # starts, gets the stack slots every way in agrees on: in ``f(a, x if c else y)`` both
        # branches leave ``f`` and ``a`` where they were (3.12+ copy the call into each branch),
        # however many jumps land there (``f(k and a < b < c)`` jumps to the call twice).
        entered = Counter(t for t in self._jump_targets if t is not None)
        handler_starts = set(self.starts)
        carried: dict[int, list[tuple[dict, dict, int]]] = {}
        # ``k and b`` falling through drops ``k`` and computes ``b`` in its slot; as an argument
        # the value began where ``k`` did (3.12+ copy the call into that way: no join says so)
        dropped_operand: tuple[int, int] | None = None    # (slot, where the dropped value began)
        operand_began: dict[int, tuple[int, int]] = {}     # slot -> (its owner, where the and began)
        for k, ins in enumerate(self.instructions):
            if not falls_through or k in starts:
                ways_in = carried.pop(k, [])
                if falls_through:
                    ways_in.append((owner, loaded, depth))
                if k not in handler_starts and ways_in \
                        and len(ways_in) == entered[k] + falls_through:
                    owner, loaded, depth = _agreed(ways_in)
                else:
                    owner, loaded, depth = {}, {}, 0
                dropped_operand, operand_began = None, {}
            op = ins.opname
            opcode = ins.opcode
            arg = ins.arg if opcode >= _HAVE_ARGUMENT else None
            effect = effects.get((opcode, arg), _MISSING)
            if effect is _MISSING:
                effect = _stack_effect(opcode, arg)
            if effect is None:
                owner, loaded, effect = {}, {}, 0
            after = depth + effect
            target = self._jump_targets[k]
            if target is not None and target > k and op in _KEEPS_TESTED_VALUE:
                # ``a and b``'s jump keeps ``a`` where falling through computes ``b`` in its place
                carried.setdefault(target, []).append((dict(owner), dict(loaded), depth))
            if op == "RETURN_VALUE" and depth - 1 in owner:
                self._returned_from[k] = owner[depth - 1]
            elif op in ("STORE_FAST", "STORE_DEREF", "STORE_FAST_LOAD_FAST") and depth - 1 in owner:
                self._stored_from[k] = owner[depth - 1]
            if op == "PRECALL":
                precall = (owner.get(after - 2), _operand_start(owner, operand_began, after))
            elif events[k] == _CALL:
                first, arguments = precall if precall is not None else (
                    owner.get(after - 1),
                    _operand_start(owner, operand_began, after - 1 + _callee_slots(ins)))
                label = (
                    self._callee(first, k if arguments is None else arguments, loaded.get(after - 1, 0))
                    if first is not None else ""
                )
                if label:
                    events[k] = ("CALL", label)
                    if arguments is not None:
                        self._call_prints[k] = self._arguments_print(arguments, k)
                        self._callee_loads[k] = [j for j in range(first, arguments)
                                                 if events[j] is not None and events[j][0] == "attr"]
                precall = None
            # (every slot with an owner is below ``depth``: the values popped lose theirs)
            for slot in range(after if after < depth else depth, depth):
                operand_began.pop(slot, None)
            if dropped_operand is not None and op not in _STACK_UNTOUCHED:
                slot, began = dropped_operand
                if after > depth and depth <= slot < after:    # (the first push of the other operand)
                    operand_began[slot] = (k, began)
                dropped_operand = None
            if _drops_tested_operand(self.instructions, k, op) and depth - 1 in owner:
                dropped_operand = (depth - 1, owner[depth - 1])
            fused = _FUSED_LOADS.get(op)
            if fused is None:
                for slot in range(after if after < depth else depth, depth):
                    if owner.pop(slot, None) is not None:
                        loaded.pop(slot, None)
                for slot in range(depth, after):
                    owner[slot] = k
            else:
                # a fused load begins the values it pushes, even where it pops as many (a store first)
                pops, first_name = fused
                base = min(depth - pops, after)
                for slot in range(base, depth):
                    owner.pop(slot, None)
                    loaded.pop(slot, None)
                for slot in range(base if pops else depth, after):
                    owner[slot] = k
                    loaded[slot] = first_name + slot - base
            depth = after
            falls_through = op not in _UNCONDITIONAL and op not in _TERMINATOR_OPS
            if target is not None and target > k and _same_effect_either_way(opcode, arg):
                carried.setdefault(target, []).append((dict(owner), dict(loaded), depth))

    def call_labels(self) -> set[str]:
        return {e[1] for e in self.events if e is not None and e[0] == "CALL" and len(e) > 1}

    def keep_call_labels(self, labels: set[str]) -> None:
        """Unname every call whose callee is not among ``labels``."""
        for k, e in enumerate(self.events):
            if e is not None and e[0] == "CALL" and len(e) > 1 and e[1] not in labels:
                self.events[k] = ("CALL",)

    def call_prints(self) -> dict[str, set[str | None]]:
        """For each callee name, the prints of the arguments it is called with (None: arguments
        that are not plain names and constants)."""
        prints: dict[str, set[str | None]] = {}
        for k, e in enumerate(self.events):
            if e is not None and e[0] == "CALL" and len(e) > 1:
                prints.setdefault(e[1], set()).add(self._call_prints.get(k))
        return prints

    def name_calls_by_arguments(self, callees: set[str]) -> None:
        """Name each call to one of ``callees`` by its arguments too (``f(1)`` apart from
        ``f(2)``), so that a path that makes the one call where the original made the other reads
        differently."""
        for k, e in enumerate(self.events):
            if e is not None and e[0] == "CALL" and len(e) > 1 and e[1] in callees:
                arguments = f"({self._call_prints.get(k)})"
                self.events[k] = ("CALL", e[1] + arguments)
                # the loads of the callee (``out.append``) come first: they tell the calls apart too
                for j in self._callee_loads.get(k, ()):
                    self.events[j] = (*self.events[j], arguments)

    def returned_values(self) -> dict[int, str | None]:
        """Each ``return``: the constant (``type:repr``) or the variable (``name:x``) it returns,
        or how straight-line code computes it from those (``expr:...``); None when its value comes
        in by a jump, or from a decompiler's temporary (which holds a value the original kept on
        the stack), or is computed otherwise."""
        found: dict[int, str | None] = {}
        instructions, targets = self.instructions, self.targets
        for k, e in enumerate(self.events):
            if e is None or e[0] != "return":
                continue
            ins = instructions[k]
            # (a return inside ``for`` loops pops each iterator from under the value first)
            j = k
            while j >= 2 and instructions[j - 1].opname == "POP_TOP" and j not in targets \
                    and j - 1 not in targets and _swaps_top_two(instructions[j - 2]):
                j -= 2
            if ins.opname == "RETURN_CONST":
                found[k] = _constant_print(ins.argval)
                continue
            found[k] = self._value_loaded_before(j)
            if found[k] is _COMPUTED:
                found[k] = self._computation_print(self._returned_from.get(k), k) if j == k else None
        return found

    def _value_loaded_before(self, j: int) -> str | None | object:
        """The constant (``type:repr``) or the variable (``name:x``) the instruction right before
        ``j`` loads, for the instruction ``j`` to use up; None where a jump brings the value
        (``j`` is a target) or it is a decompiler's temporary; ``_COMPUTED`` where it is computed.
        Instructions that leave the stack alone between them are passed over: 3.10 leaves a try
        body (``POP_BLOCK``) before it loads a constant to return, after it computes any other
        value (``-(0 or 4)``, a negation the compiler leaves unfolded)."""
        while j > 1 and j not in self.targets and self.instructions[j - 1].opname in _PASSED_BEFORE_A_USE:
            j -= 1
        if j == 0 or j in self.targets:
            return None
        before = self.instructions[j - 1]
        if j - 1 in self.constants:
            return _constant_print(self.constants[j - 1])
        if before.opname == "LOAD_COMMON_CONSTANT":     # (3.15: None, True, False)
            return _constant_print(before.argval)
        if before.opname in _VARIABLE_LOADS:
            return None if _TEMPORARY.match(str(before.argval)) else f"name:{before.argval}"
        return _COMPUTED

    def computed_stores(self) -> dict[int, tuple]:
        """Each store to a local or cell (no event yet) of a value that straight-line code right
        before it computes from names and constants, named by both: ``("set", "x",
        "expr:BINARY_OP +(x,int:1)")``. (For the sequences of effects: see ``traces``.)"""
        found: dict[int, tuple] = {}
        for k, first in self._stored_from.items():
            name = self.instructions[k].argval
            name = str(name[0] if isinstance(name, tuple) else name)    # (3.13+'s fused store-load)
            if self.events[k] is not None or _TEMPORARY.match(name) \
                    or _clears_exception_name(self.instructions, k):
                continue
            printed = self._computation_print(first, k)
            if printed is not None:
                found[k] = ("set", name, printed)
        return found

    def _computation_print(self, first: int | None, end: int) -> str | None:
        """How the straight-line instructions ``first`` to ``end`` compute one value from names
        and constants (``"expr:BUILD_TUPLE (items,w,int:3)"``), an operation folded into the
        constant it makes where the compiler left it unfolded; None when a jump enters or leaves
        them, they read a decompiler's temporary, or they do more than operators, attributes and
        displays do (a call: source may spell it another way, ``g(*())`` as ``g()``)."""
        if first is None or end - first > _MAX_PRINTED_ARGUMENTS:
            return None
        stack: list[str] = []
        for m in range(first, end):
            if m != first and m in self.targets or self._jump_targets[m] is not None:
                return None
            ins = self.instructions[m]
            op = ins.opname
            if op in _STACK_UNTOUCHED:
                continue
            effect = _stack_effect(ins.opcode, ins.arg if ins.opcode >= _HAVE_ARGUMENT else None)
            if op in _VARIABLE_LOADS or op in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
                names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
                if effect != len(names) or any(_TEMPORARY.match(str(n)) for n in names):
                    return None     # (3.11+'s LOAD_GLOBAL of a callee pushes a NULL too)
                stack.extend(str(n) for n in names)
            elif op in ("LOAD_CONST", "LOAD_SMALL_INT"):
                stack.append(_constant_print(ins.argval))
            elif op == "LOAD_ATTR" and effect == 0 and stack:
                stack[-1] = f"{stack[-1]}.{ins.argval}"
            elif op.startswith(_PRINTED_OPERATIONS):
                pops = 1 - effect
                if pops < 0 or pops > len(stack):
                    return None
                operands = stack[len(stack) - pops:]
                del stack[len(stack) - pops:]
                stack.append(f"{op} {ins.argrepr}({','.join(str(x) for x in operands)})")
            else:
                return None
            if m in self.constants:
                stack[-1] = _constant_print(self.constants[m])
            if stack[-1] is None:
                return None     # (a constant whose repr does not say what it is)
        return f"expr:{stack[0]}" if len(stack) == 1 else None

    def returns_values_brought_by_jumps(self) -> bool:
        """Does a ``return`` return a value that may come in by a jump (a conditional
        expression's)?"""
        return any(e is not None and e[0] == "return" and k in self.targets
                   and self.instructions[k].opname != "RETURN_CONST" for k, e in enumerate(self.events))

    def yielded_values(self) -> dict[int, str | None]:
        """Each ``yield`` of a value the source writes (not the ones of ``yield from`` and
        ``await``, which pass on what ``SEND`` got): the constant or variable it yields, or None
        when its value is computed or comes in by a jump."""
        found: dict[int, str | None] = {}
        instructions, targets = self.instructions, self.targets
        for k, e in enumerate(self.events):
            if e is None or e[0] != "YIELD_VALUE":
                continue
            j = k
            if j >= 1 and (instructions[j - 1].opname == "ASYNC_GEN_WRAP" or (
                    instructions[j - 1].opname == "CALL_INTRINSIC_1"
                    and "ASYNC_GEN_WRAP" in instructions[j - 1].argrepr)) and j not in targets:
                j -= 1      # (an async generator wraps what it yields)
            before = instructions[j - 1] if j >= 1 else None
            if before is not None and before.opname == "SEND":
                continue
            value = self._value_loaded_before(j)
            found[k] = None if value is _COMPUTED else value
        return found

    def name_yields_by_value(self, values: dict[int, str | None]) -> None:
        """Name each ``yield`` by the value it yields (``values``: ``yielded_values()``)."""
        for k, value in values.items():
            self.events[k] = ("YIELD_VALUE", value)

    def name_returns_by_value(self, values: dict[int, str | None]) -> None:
        """Name each ``return`` by the value it returns (``values``: ``returned_values()``)."""
        for k, value in values.items():
            self.events[k] = ("return", value)

    def _name_constant_stores(self) -> None:
        """Make each store of a constant to a local or cell an event named by both
        (``("store", "x", "int:1")``; a fused store of two values, by the one that is constant):
        branches that differ only in the constant they assign, or a dropped ``x = None``, then
        read differently. The constant is followed through the stack of straight-line code,
        moves included (``x, y = 1, f()`` stores 1 after a SWAP, as ``y = f(); x = 1`` does
        directly). A store whose value comes in by a jump, or a constant source cannot spell as
        a literal (a NaN is rebuilt by a call), is no event."""
        instructions, constants, events = self.instructions, self.constants, self.events
        self.stores_of_other_values: set[str] = set()   # names also stored a value not known here
        self.store_counts: Counter = Counter()          # name -> how many instructions store it
        starts = set(self.starts) | self.targets
        stack: list = []    # what this straight run of code pushed: a constant, or _UNKNOWN
        falls_through = True
        for k, ins in enumerate(instructions):
            if not falls_through or k in starts:
                stack = []
            op = ins.opname
            falls_through = op not in _UNCONDITIONAL and op not in _TERMINATOR_OPS
            if op in _LOCAL_STORES and not _clears_exception_name(instructions, k):
                names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
                names = names[:1] if op == "STORE_FAST_LOAD_FAST" else names
                label: tuple = ("store",)
                for depth, name in enumerate(names, 1):
                    value = stack[-depth] if len(stack) >= depth else _UNKNOWN
                    printed = None if value is _UNKNOWN else _literal_print(value)
                    if _TEMPORARY.match(str(name)):
                        continue
                    self.store_counts[str(name)] += 1
                    if printed is not None:
                        label += (str(name), printed)
                    else:
                        self.stores_of_other_values.add(str(name))
                if len(label) == 5:
                    # two constants in one fused store (``a, b = 1, 2`` on 3.14): source may
                    # store them in two statements, two events; compared as stores of other values
                    self.stores_of_other_values.update(label[1::2])
                elif len(label) > 1:
                    events[k] = label
            _step(stack, ins)
            if stack and op in _EMPTY_BUILDS and ins.arg == 0:
                stack[-1] = _EMPTY_BUILDS[op]
            elif stack and (k in constants or op == "LOAD_COMMON_CONSTANT"):
                # (3.15 loads None with LOAD_COMMON_CONSTANT)
                stack[-1] = constants[k] if k in constants else ins.argval

    def constant_stores(self) -> Counter:
        """How often each (name, constant) store event occurs in the code."""
        found: Counter = Counter()
        for e in self.events:
            if e is not None and e[0] == "store":
                found.update(zip(e[1::2], e[2::2], strict=True))
        return found

    def forget_constant_stores(self, names: set[str]) -> None:
        """Stores to ``names`` are no events (nor part of one) any more."""
        for k, e in enumerate(self.events):
            if e is not None and e[0] == "store" and any(n in names for n in e[1::2]):
                pairs = zip(e[1::2], e[2::2], strict=True)
                kept = tuple(x for n, v in pairs if n not in names for x in (n, v))
                self.events[k] = ("store", *kept) if kept else None

    def _arguments_print(self, first: int, end: int) -> str | None:
        """The names and constants the instructions ``first`` to ``end`` (a call's arguments)
        load, in order; None when they compute anything else or take a jump."""
        if end - first > _MAX_PRINTED_ARGUMENTS:
            return None
        parts = []
        for m in range(first, end):
            if m in self.targets and m != first:
                return None
            ins = self.instructions[m]
            op = ins.opname
            if op in _NAMED_LOADS or op in _FUSED_LOADS:
                parts.append(str(ins.argval))
            elif op in ("LOAD_CONST", "LOAD_SMALL_INT"):
                if isinstance(ins.argval, types.CodeType):
                    return None
                parts.append(f"{type(ins.argval).__name__}:{ins.argval!r}")
            elif op == "KW_NAMES":
                parts.append(repr(ins.argval))
            elif op not in ("PUSH_NULL", "NOP", "PRECALL", "CACHE", "EXTENDED_ARG"):
                return None
        return ",".join(parts)

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

# loads of a variable's value (not of an attribute)
_VARIABLE_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_DEREF",
                             "LOAD_CLASSDEREF", "LOAD_GLOBAL", "LOAD_NAME"})
_PRINTED_CONSTANT_TYPES = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))


# the operations a return's printed computation may make (besides loading names and constants)
_PRINTED_OPERATIONS = ("BINARY_", "UNARY_", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "BUILD_TUPLE", "BUILD_LIST",
                       "BUILD_SET", "BUILD_SLICE")
# stores of a local or cell variable (the fused 3.13+ stores: the top value goes to the first name)
_LOCAL_STORES = frozenset({"STORE_FAST", "STORE_DEREF", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"})
# instructions that leave the stack as it is
_STACK_UNTOUCHED = frozenset({"NOP", "RESUME", "EXTENDED_ARG", "CACHE", "NOT_TAKEN", "KW_NAMES", "POP_BLOCK",
                              "SETUP_FINALLY", "SETUP_ASYNC_WITH", "MAKE_CELL", "COPY_FREE_VARS",
                              "GEN_START"})
# what may stand between a value's load and the return or yield that uses it up
_PASSED_BEFORE_A_USE = frozenset({"POP_BLOCK", "NOP", "NOT_TAKEN", "EXTENDED_ARG", "CACHE"})
# loads that pop nothing (the others, LOAD_ATTR and the like, replace the value below them)
_POPPING_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR", "LOAD_FROM_DICT_OR_DEREF",
                            "LOAD_FROM_DICT_OR_GLOBALS", "LOAD_SPECIAL"})
# prefixes of instructions that only pop (stores, deletes, POP_TOP, conditional jumps, returns)
_CONSUMER_PREFIXES = ("STORE_", "DELETE_", "POP_", "RETURN_", "RAISE_", "RERAISE", "END_FOR",
                      "JUMP_IF_", "PRINT_EXPR", "IMPORT_STAR")


def _swaps_top_two(ins: dis.Instruction) -> bool:
    return ins.opname == "ROT_TWO" or ins.opname == "SWAP" and ins.arg == 2


def _clears_exception_name(instructions: list, k: int) -> bool:
    """Whether the store at ``k`` is the ``name = None; del name`` that ends an ``except ... as
    name`` clause: every such clause has it, on each way out, so as an event it would only join
    paths that leave by other ways (a ``break`` read as ``continue`` would then pass)."""
    following = instructions[k + 1] if k + 1 < len(instructions) else None
    return (following is not None and following.opname.startswith("DELETE_")
            and following.argval == instructions[k].argval)


def _step(stack: list, ins: dis.Instruction) -> None:
    """Run ``ins`` on ``stack`` (``_name_constant_stores``): moves and copies exactly, loads push
    unknown values, every other instruction replaces what it may have read by unknown values.
    (Where the stack holds fewer values than an instruction reaches, the ones below are unknown.)"""
    op = ins.opname
    if op in _STACK_UNTOUCHED:
        return
    if op in _MOVES:
        n = _MOVES[op] or ins.arg
        if len(stack) < n:
            stack[:0] = [_UNKNOWN] * (n - len(stack))
        if op == "SWAP":
            stack[-1], stack[-n] = stack[-n], stack[-1]
        else:
            stack[-n:] = [stack[-1], *stack[-n:-1]]
        return
    if op in _DUPLICATES:
        n = _DUPLICATES[op] or ins.arg
        if len(stack) < n:
            stack[:0] = [_UNKNOWN] * (n - len(stack))
        stack.extend(stack[-n:] if op == "DUP_TOP_TWO" else [stack[-n]])
        return
    effect = _stack_effect(ins.opcode, ins.arg if ins.opcode >= _HAVE_ARGUMENT else None)
    if effect is None:
        stack.clear()
        return
    if op.startswith(_CONSUMER_PREFIXES) and effect <= 0:
        pops, pushes = -effect, 0
    elif (op.startswith("LOAD_") and op not in _POPPING_LOADS or op == "PUSH_NULL") and effect >= 0:
        pops, pushes = 0, effect
    elif effect <= 0 or op.startswith("BUILD_"):
        pops, pushes = 1 - effect, 1
    else:
        pops, pushes = 1, 1 + effect
    del stack[max(0, len(stack) - pops):]
    stack.extend([_UNKNOWN] * pushes)


class _EmptyBuild(str):
    """A new empty list, dict or set (``[]``, ``{}``, ``set()`` of the source): stored to a
    local, it is labelled like a constant. ``if acc is None: acc = []`` negated differs then."""


_EMPTY_BUILDS = {"BUILD_LIST": _EmptyBuild("list:[]"), "BUILD_MAP": _EmptyBuild("dict:{}"),
                 "BUILD_SET": _EmptyBuild("set:set()")}


def _literal_print(value: object) -> str | None:
    """``_constant_print`` of a constant that source spells as a literal (not a NaN, which it
    rebuilds with ``float('nan')``); an empty container built new, by its own label."""
    if isinstance(value, _EmptyBuild):
        return str(value)
    if isinstance(value, tuple):
        return None if any(_literal_print(x) is None for x in value) else _constant_print(value)
    if isinstance(value, (float, complex)) and value != value:
        return None
    return _constant_print(value)


def _constant_print(value: object) -> str | None:
    """``type:repr`` of a constant whose repr says what it is (None for others: code objects,
    frozensets, whose repr need not be the same for equal values)."""
    if isinstance(value, tuple):
        parts = [_constant_print(x) for x in value]
        return None if None in parts else f"tuple:({','.join(parts)})"
    if type(value) in _PRINTED_CONSTANT_TYPES:
        return f"{type(value).__name__}:{value!r}"
    return None


def _operand_start(owner: dict[int, int], operand_began: dict[int, tuple[int, int]], slot: int) -> int | None:
    """Where the value in ``slot`` began: where its ``and``/``or`` began, for the operand that
    took the place of the one the ``and`` tested and dropped."""
    began = owner.get(slot)
    replaced = operand_began.get(slot)
    return replaced[1] if replaced is not None and replaced[0] == began else began


def _drops_tested_operand(instructions: list[dis.Instruction], k: int, op: str) -> bool:
    """Whether falling through instruction ``k`` drops the operand an ``and``/``or`` tested:
    ``JUMP_IF_FALSE_OR_POP`` (3.10, 3.11), or the ``POP_TOP`` after ``COPY 1`` and a
    ``POP_JUMP_IF_FALSE`` (3.12+; 3.13+ put ``TO_BOOL`` before the jump, 3.14+ ``NOT_TAKEN``
    after it)."""
    if op in _KEEPS_TESTED_VALUE:
        return True
    if op != "POP_TOP":
        return False
    m = k - 1
    if m >= 0 and instructions[m].opname == "NOT_TAKEN":
        m -= 1
    if m < 0 or not instructions[m].opname.startswith("POP_JUMP_IF_"):
        return False
    m -= 1
    if m >= 0 and instructions[m].opname == "TO_BOOL":
        m -= 1
    return m >= 0 and instructions[m].opname == "COPY" and instructions[m].arg == 1


def _same_effect_either_way(opcode: int, arg: int | None) -> bool:
    """Whether a jump leaves the stack alike whether it is taken or not (``POP_JUMP_IF_TRUE``,
    ``JUMP_FORWARD``; not ``JUMP_IF_TRUE_OR_POP`` nor ``FOR_ITER``)."""
    try:
        return dis.stack_effect(opcode, arg, jump=True) == dis.stack_effect(opcode, arg, jump=False)
    except ValueError:
        return False


def _agreed(ways_in: list[tuple[dict, dict, int]]) -> tuple[dict, dict, int]:
    """The stack slots (owners, and the fused loads that began them) that every way into a
    place agrees on; nothing where they leave stacks of different depths. A slot every way fills
    but each from another place began where the first of them began: the value of ``a and b``
    where ``a`` is computed (on the way that computes ``b`` too, ``a`` came first)."""
    first_owner, first_loaded, depth = ways_in[0]
    if any(d != depth for _, _, d in ways_in):
        return {}, {}, 0
    owner = {slot: min(w[0][slot] for w in ways_in) for slot in first_owner
             if all(slot in w[0] for w in ways_in)}
    loaded = {slot: n for slot, n in first_loaded.items()
              if slot in owner and all(w[1].get(slot) == n for w in ways_in)}
    return owner, loaded, depth
