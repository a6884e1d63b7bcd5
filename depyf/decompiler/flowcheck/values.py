"""What straight-line code computes: each value a statement uses up, printed as the expression
that computes it from names and constants.

The flow compares the order of events, not the values that go into them: ``g(a, b)`` read back as
``g(b, a)``, or ``x - y`` as ``y - x``, takes the same paths. Equivalent source computes the same
values from the same names, however the compiler lays the statements out, so the prints, counted,
are the same for the original and for the source read back (up to the tails either copies). The
uses printed are stores, returns, tests, expression statements, yields, deletes, the iterables of
loops and the context managers of ``with``; and the variables that meet where ways join with
other values (``a and b or c``). A value that comes in by a jump, or is read from one
of the decompiler's temporaries, has no print; a value computed from it has none either. A value
used up by an instruction the prints do not follow is printed as a *part* (``part = a`` for
``f(*a)``).
"""

from __future__ import annotations

import dis
import re
from collections import Counter, defaultdict

from depyf.decompiler.flowcheck.labels import _VARIABLE_LOADS as _SINGLE_LOADS
from depyf.decompiler.flowcheck.labels import _literal_print
from depyf.decompiler.flowcheck.tables import _DUPLICATES, _MOVES, _TEMPORARY, _UNCONDITIONAL, _stack_effect

_HAVE_ARGUMENT = dis.HAVE_ARGUMENT
_UNKNOWN = None
# variable loads, the fused 3.13+ ones too (each name a value)
_VARIABLE_LOADS = _SINGLE_LOADS | {"LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"}
# operations on the values they pop, printed with the operator (their argrepr)
_OPERATIONS = ("BINARY_OP", "BINARY_ADD", "BINARY_SUBTRACT", "BINARY_MULTIPLY", "BINARY_TRUE_DIVIDE",
               "BINARY_FLOOR_DIVIDE", "BINARY_MODULO", "BINARY_POWER", "BINARY_LSHIFT", "BINARY_RSHIFT",
               "BINARY_AND", "BINARY_OR", "BINARY_XOR", "BINARY_MATRIX_MULTIPLY", "BINARY_SUBSCR",
               "UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_POSITIVE", "UNARY_NOT", "COMPARE_OP", "IS_OP",
               "CONTAINS_OP")
# instructions that use up the values they pop: where a statement's value ends
_CONSUMERS = ("STORE_", "RETURN_VALUE", "POP_TOP", "POP_JUMP", "RAISE_VARARGS", "DELETE_")
_USE = {"RETURN_": "return", "POP_TOP": "expr", "POP_JUM": "test", "JUMP_IF": "test", "YIELD_V": "yield",
        "DELETE_": "del",
        "RAISE_V": "raise"}
# 3.10/3.11's tests of ``and``/``or`` values: the test uses the value up where it goes on
_KEEPS_WHEN_TAKEN = frozenset({"JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"})
_NOTHING = frozenset({"NOP", "RESUME", "NOT_TAKEN", "CACHE", "EXTENDED_ARG", "TO_BOOL"})
_NULL = "NULL"
# instructions that only pop (POP_EXCEPT, POP_BLOCK, deletes, stores of attributes)
_CONTAINER_UPDATES = ("LIST_APPEND", "SET_ADD", "MAP_ADD", "LIST_EXTEND", "SET_UPDATE", "DICT_")
_ONLY_POPPING = ("STORE_", "DELETE_", "POP_", "RETURN_", "RAISE_", "RERAISE", "END_", "JUMP_IF_",
                 "PRINT_EXPR", "IMPORT_STAR", *_CONTAINER_UPDATES)
# a constant's print (``int:1``, a tuple's ``(int:1,str:'a')``), and an operator whose test
# can be inverted in place
_CONSTANT_PRINT = re.compile(r"\w+:|\(")
_INVERTIBLE = re.compile(r"(CONTAINS_OP|IS_OP) [^(]*\(")
_CLASS_BODY_NAMES = frozenset({"__qualname__", "__firstlineno__", "__static_attributes__"})
# what comes right before the POP_TOP that drops an ``and``/``or`` operand the chain goes on from
_TESTS_BEFORE_POP = frozenset({"NOT_TAKEN", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE",
                               "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_IF_NONE",
                               "POP_JUMP_IF_NOT_NONE"})
# calls, by the values they pop besides their arguments (3.11's PRECALL pops them all: its CALL is
# then one more step that prints nothing)
_CALLS = {"CALL_FUNCTION": 1, "CALL_METHOD": 2, "CALL_FUNCTION_KW": 2, "CALL_KW": 3, "PRECALL": 2, "CALL": 2}
_PRECALLS = "PRECALL" in dis.opmap
# where a call's NULL goes: below its callable (3.11, 3.12), above it (3.13+: callable, self_or_null)
_NULL_ABOVE_CALLABLE = "CALL_KW" in dis.opmap
# instructions that take a value in for good: an iterable, a context manager
_TAKES_IN = {"GET_ITER": "iter", "GET_AITER": "iter", "BEFORE_WITH": "with", "SETUP_WITH": "with",
             "BEFORE_ASYNC_WITH": "with"}
# (3.14+ load a context manager's ``__exit__``, then its ``__enter__``: the second is the ``with``)
_SPECIAL_METHODS_USED_BY = {"__enter__": "with", "__aenter__": "with"}
# the displays whose items a call that spreads them passes one by one (a tuple constant prints so)
_SPREAD_DISPLAYS = ("BUILD_LIST ", "BUILD_TUPLE ", "tuple:(")


# how a known value an instruction not followed uses up prints (``part = xs`` for ``g(*xs)``)
PART = "part = "
# how a known value that meets others at a join prints (``join = c`` for ``a and b or c``)
JOIN = "join = "
# the prints whose counts ``compare`` compares (stores, returns and yields are copied with tails)
COUNTED = ("test = ", "iter = ", "with = ", "del = ", "expr = ", PART)


class ValuePrints:
    """The prints of the values a ``Flow``'s statements use up."""

    def value_prints(self) -> Counter[str]:
        """Each value a statement uses up (a store, a return, a test, an expression statement, a
        yield, a delete, a loop's iterable, a ``with``'s context manager), printed
        (``"store x = BINARY_OP -(a,b)"``) where every part of it is known, else the known
        parts, with the number of places that compute it."""
        found: Counter[str] = Counter()
        stack: list[str | None] = []
        instructions, constants, targets = self.instructions, self.constants, self.targets
        dropped = self._constant_builds | self._future_import
        reached = self._walk_taken()[0]     # (code no path reaches computes nothing)
        falls_through = True
        kw_names = None
        # a place only forward jumps (and the code before it) enter gets the values every way in
        # agrees on: 3.12+ copy ``g(a, x if c else y)``'s call into both branches, where ``g`` and
        # ``a`` are known either way
        jump_targets = self._jump_targets
        entered = Counter(t for t in jump_targets if t is not None)
        carried: dict[int, list[tuple[list, bool]]] = defaultdict(list)    # (a way in, run by a path?)
        for k, ins in enumerate(instructions):
            if not falls_through or k in targets:
                ways_in = carried.pop(k, [])
                if falls_through:
                    ways_in.append((stack, k - 1 in reached))
                ways = [way for way, _ in ways_in]
                if ways and len(ways) == entered[k] + falls_through:
                    stack = _agreed(ways)
                    if k in reached:
                        live = [way for way, run in ways_in if run]
                        _joined(found, live, stack, _popped_at(instructions, k))
                else:
                    stack = []
            op = ins.opname
            falls_through = op not in _UNCONDITIONAL and not op.startswith(("RETURN_", "RAISE_", "RERAISE"))
            target = jump_targets[k]
            if target is not None and target > k:
                way = list(stack) if op in _UNCONDITIONAL or op in _KEEPS_WHEN_TAKEN \
                    else stack[:-1] if op.startswith("POP_JUMP") else None
                if way is not None:
                    carried[target].append((way, k in reached))
            if op in _NOTHING or op in _UNCONDITIONAL or k in dropped:
                continue
            arg = ins.arg if ins.opcode >= _HAVE_ARGUMENT else None
            effect = _stack_effect(ins.opcode, arg)
            if effect is None:
                stack = []
                continue
            if op == "STORE_FAST_LOAD_FAST":    # (3.13+: ``x = ...; f(y)`` on one line)
                stored, loaded = _names(ins)
                value = _pop(stack, 1)[0]
                if k in reached and value is not None and not _TEMPORARY.match(stored):
                    found[f"store {stored} = {value}"] += 1
                stack.append(None if _TEMPORARY.match(loaded) else loaded)
                continue
            if op in _MOVES or op in _DUPLICATES:
                _move(stack, op, ins.arg)
                continue
            if op == "RETURN_VALUE":
                effect = -1     # (3.14 counts the value it hands back to the caller)
            elif op == "RETURN_CONST":      # (3.12/3.13)
                if k in reached:
                    found[f"return = {_literal_print(ins.argval)}"] += 1
                continue
            elif op == "YIELD_VALUE":
                value = _pop(stack, 1)[0]
                if k in reached and value is not None:
                    found[f"yield = {value}"] += 1
                stack.append(_UNKNOWN)      # (what is sent in)
                continue
            if op.startswith(_CONSUMERS) and effect < 0 or op in _KEEPS_WHEN_TAKEN:
                values = _pop(stack, -effect)
                if k not in reached:
                    continue
                if op == "POP_TOP" and k > 0 \
                        and (instructions[k - 1].opname in _TESTS_BEFORE_POP or k in targets):
                    continue    # (the tested value of an ``and``/``or`` chain, dropped as it goes on)
                if not op.startswith("STORE_"):
                    use = _USE[op[:7]]
                    if use == "test":
                        values = [_tested(v) for v in values]
                    if all(v is not None for v in values) and values:
                        found[f"{use} = {';'.join(values)}"] += 1
                    continue
                names = _names(ins)
                # (3.13+ fuse two stores, the top value to the first name)
                pairs = zip(names, reversed(values), strict=True) if len(names) == len(values) > 1 \
                    else [(",".join(names), ";".join(v or "?" for v in values))]
                for name, value in pairs:
                    # (the decompiler's temporaries hold what the original kept on the stack; a
                    # class body read back is compiled elsewhere, with another name and line)
                    if value is not None and "?" not in value and not _TEMPORARY.match(name) \
                            and name not in _CLASS_BODY_NAMES:
                        found[f"store {name} = {value}"] += 1
                continue
            if op in _VARIABLE_LOADS:
                names = _names(ins)
                with_null = effect == len(names) + 1    # (3.11+: a callee's LOAD_GLOBAL pushes a NULL)
                if with_null and not _NULL_ABOVE_CALLABLE:
                    stack.append(_NULL)     # (3.11, 3.12: below the callee)
                stack.extend(None if _TEMPORARY.match(n) else n for n in names)
                if with_null and _NULL_ABOVE_CALLABLE:
                    stack.append(_NULL)     # (3.13+: above it)
                elif not with_null and effect != len(names):
                    stack = [_UNKNOWN] * max(0, len(stack) - len(names) + effect)
            elif op == "PUSH_NULL":
                stack.append(_NULL)
            elif op == "CALL" and _PRECALLS:
                continue    # (3.11: PRECALL made the call's print)
            elif op in _CALLS:
                values = _pop(stack, _CALLS[op] + arg)
                if op in ("CALL_KW", "CALL_FUNCTION_KW") and values[-1] is not None:
                    values[-1] = f"kw{values[-1]}"
                elif kw_names is not None:
                    values.append(f"kw{kw_names}")
                kw_names = None
                known = all(v is not None for v in values)
                stack.append(f"CALL({','.join(v for v in values if v != _NULL)})" if known
                             else _parts(found, values, k in reached))
            elif op == "BUILD_MAP":
                # (its keys and values are parts; ``BUILD_MAP 0`` before the keywords a call
                # merges in takes nothing: the arguments below it stay known)
                _parts(found, _pop(stack, 2 * arg), k in reached)
                stack.append(_UNKNOWN)
            elif op == "CALL_FUNCTION_EX":
                stack.append(_spreading_call(found, _pop(stack, 1 - effect), k in reached))
            elif op == "KW_NAMES":
                kw_names = _literal_print(ins.argval)
            elif op in ("LOAD_CONST", "LOAD_SMALL_INT") \
                    or op == "LOAD_COMMON_CONSTANT" and (ins.argval is None or type(ins.argval) is bool):
                stack.append(_constant(ins.argval))     # (3.15 loads True, False and None so)
            elif op == "LOAD_ASSERTION_ERROR" or op == "LOAD_COMMON_CONSTANT" and ins.argrepr.isidentifier():
                stack.append(ins.argrepr or "AssertionError")    # (a builtin source names)
            elif op in ("LOAD_ATTR", "LOAD_METHOD") and effect in (0, 1):
                value = _pop(stack, 1)[0]
                stack.append(None if value is None else f"{value}.{ins.argval}")
                if effect:
                    stack.append(_NULL)     # (a method and its self: the call's print names the method)
            elif op.startswith(_OPERATIONS) or op.startswith(("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET",
                                                              "BUILD_SLICE")):
                values = _pop(stack, 1 - effect)
                known = all(v is not None for v in values)
                stack.append(_Built(f"{op} {_operator(ins)}({','.join(values)})", values) if known
                             else _parts(found, values, k in reached))
            elif op == "UNPACK_SEQUENCE":
                # ``a, b, c, d = f(), g(), h(), k()`` builds a tuple and unpacks it at once
                built = _pop(stack, 1)[0]
                items = built.items if isinstance(built, _Built) and len(built.items) == arg \
                    else _items(built, arg)
                stack.extend(reversed(items))
            elif op == "UNPACK_EX":
                stack.extend(reversed(_items(_pop(stack, 1)[0], (arg & 0xFF) + 1 + (arg >> 8), "*")))
            elif op in _TAKES_IN or op == "LOAD_SPECIAL":
                # the value a ``for`` loop, a comprehension or a ``with`` uses up
                value = _pop(stack, 1)[0]
                use = _TAKES_IN.get(op) or _SPECIAL_METHODS_USED_BY.get(ins.argrepr)
                if k in reached and value is not None and use:
                    found[f"{use} = {value}"] += 1
                stack.extend([_UNKNOWN] * (1 + effect))
            else:
                # anything else pops what it uses and pushes values that are not followed
                if op.startswith(_ONLY_POPPING) and effect <= 0:
                    pops, pushes = -effect, 0
                    if op.startswith(_CONTAINER_UPDATES) and arg and len(stack) >= arg + pops:
                        stack[-arg - pops] = _UNKNOWN  # (the display it adds to is no longer what was built)
                else:
                    pops, pushes = (1 - effect, 1) if effect <= 0 else (1, 1 + effect)
                _parts(found, _pop(stack, pops), k in reached)
                stack.extend([_UNKNOWN] * pushes)
            if k in constants and stack:
                stack[-1] = _constant(constants[k])
        return found


def _parts(found: Counter[str], values: list[str | None], reached: bool) -> None:
    """Count the known values an instruction not followed uses up (``a`` in ``f(*a)``, ``-b`` in
    ``not -b``), each a part of a value that has no print; unknown is what it computes."""
    if reached:
        for value in values:
            if value is not None and value != _NULL and not _CONSTANT_PRINT.match(value):
                found[PART + value] += 1
    return _UNKNOWN


def _joined(found: Counter[str], ways: list[list], agreed: list, top_popped: bool) -> None:
    """Count the known values the ways into a place leave where they disagree (``b`` and ``c``
    where ``a and b or c`` meets): each a value that place goes on with (``join = c``). Only the
    ways some path runs count, and not the top value where the place drops it at once (3.12+
    meet there to pop the operand an ``and``/``or`` test kept). Only variables and their
    attributes: computed values meeting (a chained comparison's) print as the compiler folded
    them, which differs between equivalent sources."""
    if len(ways) < 2 or any(len(w) != len(agreed) for w in ways):
        return
    for i, value in enumerate(agreed[:-1] if top_popped else agreed):
        if value is _UNKNOWN:
            for way in ways:
                item = way[i]
                if item is not None and item != _NULL and _is_variable(item):
                    found[JOIN + item] += 1


def _is_variable(value: str) -> bool:
    """A variable or an attribute of one (``s.c``): values the source spells one way only."""
    return all(part.isidentifier() for part in value.split("."))


def _popped_at(instructions: list, k: int) -> bool:
    """Is the first instruction that does something at ``k`` or after it a ``POP_TOP``?"""
    for m in range(k, len(instructions)):
        if instructions[m].opname not in _NOTHING:
            return instructions[m].opname == "POP_TOP"
    return False


def _spreading_call(found: Counter[str], values: list[str | None], reached: bool) -> str | None:
    """The print of a ``CALL_FUNCTION_EX`` (``values``: what it pops). A display of known items
    spread (``f(*[a, b])``, ``f(*(1, 2))``) counts as its items passed one by one, which does
    the same in the same order: with no keywords, the call prints as ``f(a, b)`` does; with
    keywords (``f(*[a], **kw)``, read back as ``f(a, **kw)``), its parts are the items."""
    values = [v for v in values if v != _NULL]     # (callable, arguments, keywords if any)
    spread = values[1] if len(values) in (2, 3) else None
    if isinstance(spread, _Built) and spread.startswith(_SPREAD_DISPLAYS) \
            and all(item is not None for item in spread.items):
        values = [values[0], *spread.items, *values[2:]]
        if len(values) == len(spread.items) + 1 and values[0] is not None:
            return f"CALL({','.join(values)})"
    return _parts(found, values, reached)


def _operator(ins: dis.Instruction) -> str:
    """An operation's operator as it prints: 3.13+ mark a comparison whose result goes to a test
    (``bool(>)``), which the same comparison in a value does not have."""
    text = ins.argrepr
    return text[5:-1] if text.startswith("bool(") and text.endswith(")") else text


def _constant(value: object) -> str:
    """A constant's print; a tuple's with the prints of its items (``u, v = 1, 2`` unpacks one)."""
    if type(value) is tuple:
        return _Built(_literal_print(value), [_literal_print(item) for item in value])
    return _literal_print(value)


def _items(value: str | None, count: int, starred: str = "") -> list[str | None]:
    """The prints of the items an unpacking of ``value`` gives."""
    if value is None:
        return [_UNKNOWN] * count
    return [f"UNPACK{starred}{count}({value})#{i}" for i in range(count)]


class _Built(str):
    """The print of a display, with the prints of its items (for an unpacking of it)."""

    def __new__(cls, text: str, items: list[str]) -> _Built:
        built = super().__new__(cls, text)
        built.items = items
        return built


def _tested(value: str | None) -> str | None:
    """A tested value as it prints whichever way the test is spelled: ``not`` folds into the jump
    or into ``not in``/``is not``, and a test of a constant is folded away by source that says
    it plainly."""
    if value is None or _CONSTANT_PRINT.match(value):
        return None
    while value.startswith("UNARY_NOT"):
        value = value[value.index("(") + 1:-1]
    return _INVERTIBLE.sub(r"\1(", value, count=1) if _INVERTIBLE.match(value) else value


def _agreed(ways: list[list]) -> list:
    """The values every way into a place leaves alike (unknown where they differ); nothing known
    where the ways leave stacks of different depths."""
    first = ways[0]
    if any(len(w) != len(first) for w in ways):
        return []
    return [x if all(w[i] == x for w in ways) else _UNKNOWN for i, x in enumerate(first)]


def _move(stack: list, op: str, arg: int | None) -> None:
    """Run a stack move or copy on the prints (what lies below the known ones is unknown)."""
    n = (_MOVES.get(op) if op in _MOVES else _DUPLICATES[op]) or arg or 1
    if len(stack) < n:
        stack[:0] = [_UNKNOWN] * (n - len(stack))
    if op == "SWAP":
        stack[-1], stack[-n] = stack[-n], stack[-1]
    elif op in _MOVES:
        stack[-n:] = [stack[-1], *stack[-n:-1]]
    elif op == "DUP_TOP_TWO":
        stack.extend(stack[-2:])
    else:
        stack.append(stack[-n])


def _pop(stack: list, n: int) -> list:
    values = stack[len(stack) - n:] if n else []
    if len(values) < n:
        values = [_UNKNOWN] * (n - len(values)) + values
    del stack[max(0, len(stack) - n):]
    return values


def _names(ins: dis.Instruction) -> tuple[str, ...]:
    return tuple(str(n) for n in ins.argval) if isinstance(ins.argval, tuple) else (str(ins.argval),)
