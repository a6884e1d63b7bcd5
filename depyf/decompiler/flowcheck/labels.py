"""Names for events: calls by their callee (and arguments), returns by what they return.

A plain ``CALL`` or ``return`` event says little about which call or which return it is; the
names here let paths that make another call, or return another value, read differently. Each is
compared only where both sides can name alike (see ``flowcheck.compare``).
"""

from __future__ import annotations

import dis
import types

from depyf.decompiler.flowcheck.tables import (
    _FUSED_LOADS,
    _NAMED_LOADS,
    _STACK_EFFECTS,
    _TEMPORARY,
    _TERMINATOR_OPS,
    _UNCONDITIONAL,
    _callee_slots,
    _stack_effect,
)

_HAVE_ARGUMENT = dis.HAVE_ARGUMENT
_MISSING = object()
_CALL = ("CALL",)
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
        owner: dict[int, int] = {}   # stack slot -> instruction where computing its value began
        loaded: dict[int, int] = {}  # stack slot -> which name of a fused load began it
        depth = 0
        falls_through = True
        precall = None               # 3.11: PRECALL pops the arguments, CALL the callee
        starts = set(self.starts) | self.targets
        events = self.events
        effects = _STACK_EFFECTS
        for k, ins in enumerate(self.instructions):
            if not falls_through or k in starts:
                owner, loaded, depth = {}, {}, 0
            op = ins.opname
            opcode = ins.opcode
            arg = ins.arg if opcode >= _HAVE_ARGUMENT else None
            effect = effects.get((opcode, arg), _MISSING)
            if effect is _MISSING:
                effect = _stack_effect(opcode, arg)
            if effect is None:
                owner, loaded, effect = {}, {}, 0
            after = depth + effect
            if op == "PRECALL":
                precall = (owner.get(after - 2), owner.get(after))
            elif events[k] == _CALL:
                first, arguments = precall if precall is not None else (
                    owner.get(after - 1), owner.get(after - 1 + _callee_slots(ins)))
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
        """Each ``return``: the constant (``type:repr``) or the variable (``name:x``) it returns;
        None when it returns a value computed or brought by a jump, or a decompiler's temporary
        (which holds a value the original kept on the stack)."""
        found: dict[int, str | None] = {}
        for k, e in enumerate(self.events):
            if e is None or e[0] != "return":
                continue
            ins = self.instructions[k]
            if ins.opname == "RETURN_CONST":
                found[k] = _constant_print(ins.argval)
            elif k in self.targets or k == 0:
                found[k] = None
            elif k - 1 in self.constants:
                found[k] = _constant_print(self.constants[k - 1])
            elif self.instructions[k - 1].opname == "LOAD_COMMON_CONSTANT":     # 3.15: None
                found[k] = _constant_print(self.instructions[k - 1].argval)
            elif self.instructions[k - 1].opname in _VARIABLE_LOADS \
                    and not _TEMPORARY.match(str(self.instructions[k - 1].argval)):
                found[k] = f"name:{self.instructions[k - 1].argval}"
            else:
                found[k] = None
        return found

    def name_returns_by_value(self, values: dict[int, str | None]) -> None:
        """Name each ``return`` by the value it returns (``values``: ``returned_values()``)."""
        for k, value in values.items():
            self.events[k] = ("return", value)

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


def _constant_print(value: object) -> str | None:
    """``type:repr`` of a constant whose repr says what it is (None for others: code objects,
    frozensets, whose repr need not be the same for equal values)."""
    if isinstance(value, tuple):
        parts = [_constant_print(x) for x in value]
        return None if None in parts else f"tuple:({','.join(parts)})"
    if type(value) in _PRINTED_CONSTANT_TYPES:
        return f"{type(value).__name__}:{value!r}"
    return None
