"""Comparison of two flows: the differences between the original's events and paths and the
decompiled source's."""

from __future__ import annotations

import dis
import re
import sys
import types
from collections import Counter, defaultdict
from collections.abc import Iterable

from depyf.decompiler.flowcheck.flow import Flow
from depyf.decompiler.flowcheck.tables import _LOOP, _TEMPORARY
from depyf.decompiler.flowcheck.traces import first_different_trace
from depyf.decompiler.flowcheck.values import COUNTED, JOIN, PART


def differences(original: types.CodeType, recompiled: types.CodeType) -> list[str]:
    """What differs between the flows of ``original`` and ``recompiled`` (and their nested code)."""
    problems: list[str] = []
    _compare(original, recompiled, problems)
    return problems


def _compare(original: types.CodeType, recompiled: types.CodeType, problems: list[str]) -> None:
    if same_bytecode(original, recompiled):
        return
    problems.extend(_closure_differences(original, recompiled))
    problems.extend(_docstring_differences(original, recompiled))
    builders = _constant_builders(original)
    ours, theirs = Flow(recompiled, builders), Flow(original, builders)
    # A callee named on one side only (reached through a jump, or through instructions the other
    # layout fuses) says nothing: such calls are compared unnamed on both sides.
    named = ours.call_labels() & theirs.call_labels()
    ours.keep_call_labels(named)
    theirs.keep_call_labels(named)
    # A callee called with several plain arguments (``log(1)``, ``log(2)``), with the same ones on
    # both sides: its calls are compared by their arguments too.
    mine, yours = ours.call_prints(), theirs.call_prints()
    by_arguments = {c for c, p in mine.items() if len(p) > 1 and None not in p and yours.get(c) == p}
    if by_arguments:
        ours.name_calls_by_arguments(by_arguments)
        theirs.name_calls_by_arguments(by_arguments)
    # Where every return returns a constant or a variable, on both sides, each return is compared
    # by what it returns (``return out`` read as falling off the end returns the same events).
    # (or a value computed in straight-line code from those: ``return (a, b)``, ``return n - 1``)
    mine_returns, their_returns = ours.returned_values(), theirs.returned_values()
    if mine_returns and their_returns and None not in mine_returns.values() \
            and None not in their_returns.values():
        ours.name_returns_by_value(mine_returns)
        theirs.name_returns_by_value(their_returns)
    elif not (ours.returns_values_brought_by_jumps() or theirs.returns_values_brought_by_jumps()):
        # elsewhere a ``return None`` (written, or falling off the end) still differs from a
        # return of another value: a dropped final ``return (a, b)`` reads differently. (Not
        # where a return's value comes in by jumps: ``if c: return x`` then falling off the end
        # reads back as ``return x if c else None``, one return of either value.)
        ours.name_returns_by_value({k: v for k, v in mine_returns.items() if v == _NONE})
        theirs.name_returns_by_value({k: v for k, v in their_returns.items() if v == _NONE})
    # Likewise each yield of a constant or a variable by what it yields, where both sides yield
    # the same values as often (a value the original yields from a variable may come from a
    # decompiler's temporary, which tells nothing; the order is what is compared then).
    mine_yields, their_yields = ours.yielded_values(), theirs.yielded_values()
    if mine_yields and Counter(mine_yields.values()) == Counter(their_yields.values()):
        ours.name_yields_by_value({k: v for k, v in mine_yields.items() if v is not None})
        theirs.name_yields_by_value({k: v for k, v in their_yields.items() if v is not None})
    # Stores of constants to locals are events. Where a name's constant stores differ between
    # the sides and one side also stores it a value not known there (``x, y = 1, [...]``: the
    # 1 crosses a loop on its way to the store; ``y = [...]; x = 1`` stores it directly), that
    # name's stores are left out on both sides: unless the recompiled code stores the name a
    # constant fewer times than the original, and the name fewer times (a dropped ``got = None``
    # before a loop that may store ``got = x``; code the decompiler copies stores more often).
    mine_stores, their_stores = ours.constant_stores(), theirs.constant_stores()
    if mine_stores != their_stores:
        unsure = {name for name, _ in (mine_stores - their_stores) + (their_stores - mine_stores)
                  if (name in ours.stores_of_other_values or name in theirs.stores_of_other_values)
                  and not _constant_store_dropped(name, ours, mine_stores, theirs, their_stores)}
        if unsure:
            ours.forget_constant_stores(unsure)
            theirs.forget_constant_stores(unsure)
    # Same successors: then the branch decisions, unless ``and``/``or`` values are tested (the
    # compiler threads their tests differently per parenthesising) or there are too many paths.
    # (The successors are the pairs with decisions without them, when no path was given up on.)
    with_decisions = False
    if not (ours.has_value_tests or theirs.has_value_tests):
        strict_a, strict_b = ours.pairs(True), theirs.pairs(True)
        if not (ours.gave_up or theirs.gave_up):
            a, b = _without_decisions(strict_a), _without_decisions(strict_b)
            if a == b:
                a, b, with_decisions = strict_a, strict_b, True
        else:
            a, b = ours.pairs(False), theirs.pairs(False)
    else:
        a, b = ours.pairs(False), theirs.pairs(False)
    if a == b:
        # the same single steps: then the same steps of two
        two_a, two_b = ours.steps_of_two(with_decisions), theirs.steps_of_two(with_decisions)
        if two_a is not None and two_b is not None and two_a != two_b:
            a, b = two_a, two_b
        else:
            # the same steps of two: then the same whole sequences of effects, stores of values
            # computed from names and constants among them where both sides make the same ones
            mine_set, their_set = _agreed_stores(ours.computed_stores(), theirs.computed_stores())
            mine_set.update(ours.cell_deletions())
            their_set.update(theirs.cell_deletions())
            with ours.events_added(mine_set), theirs.events_added(their_set):
                trace = first_different_trace(ours, theirs, with_decisions)
            if trace is not None:
                problems.append(_trace_problem(original, trace))
    problems.extend(_binding_differences(original, theirs.bindings(), ours.bindings()))
    problems.extend(_dead_binding_differences(original, recompiled, theirs.bindings(reachable=False)))
    problems.extend(_access_order_differences(original, theirs.access_orders(), ours.access_orders()))
    stale = theirs.stale_reads()    # (followed in the recompiled code only where the original has one)
    if stale:
        stale = stale - ours.stale_reads()
    if stale:
        qualname = getattr(original, "co_qualname", original.co_name)
        problems.append(f"{qualname}: the recompiled code reads {', '.join(sorted(stale))} after writing it, "
                        "where the original read it before and used the value after the write")
    if a != b:
        extra = sorted(a - b, key=repr)[:3]
        missing = sorted(b - a, key=repr)[:3]
        qualname = getattr(original, "co_qualname", original.co_name)
        problems.append(f"{qualname}: the recompiled code takes other paths (only there: {_show(extra)}; "
                        f"only in the original: {_show(missing)})")
    if not builders:    # (source spells some constants as calls: ``complex(-0.0, -2.0)``)
        problems.extend(_value_differences(original, theirs.value_prints(), ours.value_prints()))
    for mine, theirs_code, nested_problems in _pair_nested(theirs.nested_code(), ours.nested_code()):
        if theirs_code is None:
            problems.append(
                f"{getattr(mine, 'co_qualname', mine.co_name)}: nested code missing after recompiling"
            )
        else:
            problems.extend(nested_problems)


_NONE = "NoneType:None"    # how ``returned_values`` names a return of None
_SAME_SHAPE = ("co_names", "co_varnames", "co_cellvars", "co_freevars", "co_argcount",
               "co_posonlyargcount", "co_kwonlyargcount", "co_exceptiontable")
# CO_NESTED only records that the function was compiled inside another one (the recompiled code
# always is: its source is compiled inside a function that gives it its free variables); it
# changes nothing the code does
_CO_NESTED = 0x10


def same_bytecode(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether ``a`` and ``b`` run the same instructions on the same names and constants (only
    their line numbers and names may differ): then their flows are equal without following them.
    Most functions read back into source that compiles to exactly the code it came from.
    Constants count as equal only with the same type and repr (``1`` is not ``1.0``, ``0.0`` is
    not ``-0.0``); nested code by the same rule. Where the compiler numbered the constants in
    another order (source that first loads a constant elsewhere), the instructions are compared
    by the constants they load rather than by their indices."""
    if any(getattr(a, field, None) != getattr(b, field, None) for field in _SAME_SHAPE):
        return False
    if a.co_flags & ~_CO_NESTED != b.co_flags & ~_CO_NESTED:
        return False
    if not (a.co_consts and b.co_consts and _same_constant(a.co_consts[0], b.co_consts[0])):
        # (the first constant is a function's docstring)
        return bool(not a.co_consts and not b.co_consts and a.co_code == b.co_code)
    if a.co_code == b.co_code:
        return len(a.co_consts) == len(b.co_consts) and all(
            _same_constant(x, y) for x, y in zip(a.co_consts, b.co_consts, strict=True))
    return _same_up_to_constant_indices(a, b)


def _same_constant(x: object, y: object) -> bool:
    if isinstance(x, types.CodeType):
        return isinstance(y, types.CodeType) and same_bytecode(x, y)
    if type(x) is not type(y) or x != y:
        return False
    if type(x) is frozenset:
        # (two equal sets print their items in the order they were added: ``x in {a, b}``)
        return sorted(map(repr, x)) == sorted(map(repr, y))
    return repr(x) == repr(y)


_LOADS_A_CONSTANT = frozenset(dis.hasconst)
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]


def _same_up_to_constant_indices(a: types.CodeType, b: types.CodeType) -> bool:
    """Same code units where every instruction that indexes the constants loads an equal one
    through its own index (each code unit is an opcode byte and an argument byte; an
    ``EXTENDED_ARG`` before an instruction gives its argument's higher bytes)."""
    code_a, code_b = a.co_code, b.co_code
    if len(code_a) != len(code_b):
        return False
    high_a = high_b = 0
    for k in range(0, len(code_a), 2):
        op = code_a[k]
        if op != code_b[k]:
            return False
        arg_a, arg_b = high_a << 8 | code_a[k + 1], high_b << 8 | code_b[k + 1]
        if op == _EXTENDED_ARG:
            high_a, high_b = arg_a, arg_b
            continue
        high_a = high_b = 0
        if op in _LOADS_A_CONSTANT:
            if not _same_constant(a.co_consts[arg_a], b.co_consts[arg_b]):
                return False
        elif arg_a != arg_b:
            return False
    return True


def _without_decisions(pairs: set) -> set:
    """``Flow.pairs(False)`` from ``Flow.pairs(True)`` of a flow that gave up on no path: the
    events reachable from each event are the same (every way to one passes a path without a
    loop), and a path that loops without an event is an entry of the strict pairs only."""
    return {(event, (), nxt) for event, _, nxt in pairs if nxt != _LOOP}


def _value_differences(code: types.CodeType, original: Counter[str], recompiled: Counter[str]) -> list[str]:
    """Values computed from other names, or in another way (``g(b, a)`` for ``g(a, b)``, ``y - x``
    for ``x - y``): a value the original computes is missing, and the recompiled code computes one
    the original does not, or computes it in more places (``b and b`` for ``a and b``). (One of
    the two alone is no sign: the decompiler's temporaries hide a value the original computed in
    one go, and source may spell out a value the original built in a way not followed, ``g()``
    for ``g(*())``. Counts are compared only where one side lacks a print entirely, and not for
    stores, returns and yields: the compiler copies those with the tails it copies, and it lays
    out a value's return or store once per way the value is reached where source read back may
    compute it once.)"""
    missing, extra = original - recompiled, recompiled - original
    only_original, only_recompiled = missing.keys() - recompiled.keys(), extra.keys() - original.keys()
    # (values meeting at a join are compared only with each other: which ways carry a value
    # there depends on the jumps the compiler threads, so one side alone may have more)
    joined_apart = _joins(only_original) and _joins(only_recompiled)
    only_original = {p for p in only_original if not p.startswith(JOIN)}
    only_recompiled = {p for p in only_recompiled if not p.startswith(JOIN)}
    # (a part the other side computes whole is no difference, nor one counted more where the
    # other side computes whole a value it is part of)
    more_original, more_recompiled = _uncovered(missing, only_recompiled), _uncovered(extra, only_original)
    only_original = _uncovered(only_original, recompiled)
    only_recompiled = _uncovered(only_recompiled, original)
    if not (only_original and only_recompiled or _counted(only_original) and _counted(more_recompiled)
            or _counted(only_recompiled) and _counted(more_original)
            or _restored(only_recompiled, missing) or _restored(only_original, extra)
            or _traded(more_original, more_recompiled) or joined_apart):
        return []
    qualname = getattr(code, "co_qualname", code.co_name)
    return [f"{qualname}: the recompiled code computes other values (only there: "
            f"{', '.join(sorted(extra)[:2])}; only in the original: {', '.join(sorted(missing)[:2])})"]


def _uncovered(prints: Iterable[str], other: Iterable[str]) -> set[str]:
    """``prints`` less the parts (``part = g``) that are part of a value the other side prints:
    one side may follow a value whole where the other follows only its parts."""
    text = "\n".join(other)
    return {p for p in prints
            if not (p.startswith(PART) and re.search(rf"(?<!\w){re.escape(p[len(PART):])}(?!\w)", text))}


def _restored(only_here: Iterable[str], fewer_here: Iterable[str]) -> bool:
    """Does one side store into a variable a value the other never stores there, where it stores
    another value into that variable fewer times (``x = g(b)`` in place of one of two ``x =
    g(a)``)? Store counts are not compared alone (tails are copied), but a copy stores the same
    value. (Not returns: a return of a value that two ways compute, ``return a and b``, prints
    where the compiler copies it into each way, and not where source read back joins them.)"""
    names = {p.split(" = ", 1)[0] for p in fewer_here if p.startswith("store ")}
    return any(p.split(" = ", 1)[0] in names for p in only_here if p.startswith("store "))


def _traded(fewer: Iterable[str], more: Iterable[str]) -> bool:
    """Does one side test (or use up in the same way, or carry to where values meet) one value
    fewer times where it tests another value more times (``if b and b`` for ``if a and b``)?
    Either count alone may differ between equivalent layouts (a loop's test copied to its bottom
    or not, a jump threaded past a join or not); both at once is a value read in place of
    another."""
    uses = {p.split(" = ", 1)[0] for p in _counted(fewer) + _joins(fewer)}
    return any(p.split(" = ", 1)[0] in uses for p in _counted(more) + _joins(more))


def _joins(prints: Iterable[str]) -> list[str]:
    return [p for p in prints if p.startswith(JOIN)]


def _counted(prints) -> list[str]:
    """The prints whose counts are compared: tests, expression statements, deletes, iterables,
    context managers and parts."""
    return [p for p in prints if p.startswith(COUNTED)]


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


# Comprehensions' code runs once, where it is made: nothing outside sees its closure.
_COMPREHENSION_CODE = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>"})


def _closure_differences(original: types.CodeType, recompiled: types.CodeType) -> list[str]:
    """Other free or cell variables: a function's closure is part of its behaviour
    (``__closure__``, ``__code__.co_freevars``), and the compiler decides it from the source before
    it folds constants, so a read it folded away (``7 or c``) still makes ``c`` free."""
    if original.co_name in _COMPREHENSION_CODE:
        return []
    problems = []
    qualname = getattr(original, "co_qualname", original.co_name)
    for attr, kind in (("co_freevars", "free"), ("co_cellvars", "cell")):
        theirs, mine = getattr(original, attr), getattr(recompiled, attr)
        if set(theirs) != set(mine):
            problems.append(f"{qualname}: other {kind} variables (original: {', '.join(theirs) or 'none'}; "
                            f"recompiled: {', '.join(mine) or 'none'})")
    return problems


_CO_HAS_DOCSTRING = 0x4000000     # 3.14+


def _docstring(code: types.CodeType) -> str | None:
    """A function's docstring: up to 3.13 its first constant (None where it has none), from 3.14
    that constant where a flag says so. (Class and module bodies store theirs as ``__doc__``.)"""
    if code.co_name.startswith("<") or code.co_flags & 0x03 != 0x03 or not code.co_consts:
        return None
    first = code.co_consts[0]
    if sys.version_info >= (3, 14) and not code.co_flags & _CO_HAS_DOCSTRING:
        return None
    return first if isinstance(first, str) else None


def _docstring_differences(original: types.CodeType, recompiled: types.CodeType) -> list[str]:
    """Another docstring (or none): ``__doc__`` is part of what a function is."""
    theirs, mine = _docstring(original), _docstring(recompiled)
    if theirs == mine:
        return []
    qualname = getattr(original, "co_qualname", original.co_name)
    return [f"{qualname}: another docstring (original: {theirs!r}; recompiled: {mine!r})"]


def _dead_binding_differences(code: types.CodeType, recompiled: types.CodeType,
                              dead: dict[str, set]) -> list[str]:
    """Names that only unreachable code of the original binds (the decompiler leaves such code
    out): the binding never runs, but it decides the name's scope, so the recompiled code must
    give the name the same kind (a local, a cell, a global)."""
    problems = []
    for name, found in sorted(dead.items()):
        kinds = {kind for _, kind in found}
        if len(kinds) != 1:
            continue
        kind = kinds.pop()
        if kind == "fast":
            same = name in recompiled.co_varnames
        elif kind == "deref":
            same = name in recompiled.co_cellvars or name in recompiled.co_freevars
        elif kind == "global":
            same = name not in recompiled.co_varnames and name not in recompiled.co_cellvars \
                and name not in recompiled.co_freevars
        else:
            same = True     # (module and class bodies: every name is looked up by name)
        if not same:
            qualname = getattr(code, "co_qualname", code.co_name)
            problems.append(f"{qualname}: {name!r} is bound in code that never runs ({kind}); the "
                            f"recompiled code gives it another scope")
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


def _show(steps: list) -> str:
    """Steps (``pairs``, or ``steps_of_two``) as ``event -[decisions]-> event ...``."""
    shown = []
    for step in steps:
        text = _label(step[0])
        for k in range(1, len(step), 2):
            text += f" -[{'/'.join(step[k])}]-> {_label(step[k + 1])}"
        shown.append(text)
    return ", ".join(shown) or "none"


def _trace_problem(code: types.CodeType, trace: tuple) -> str:
    """The last steps of a sequence of effects only one side allows, said as a difference."""
    *steps, side = trace
    text = " ".join(f"-[{'/'.join(path)}]-> {_label(label)}" for path, label in steps)
    qualname = getattr(code, "co_qualname", code.co_name)
    return (f"{qualname}: the recompiled code runs its effects in another sequence "
            f"(only in the {side}: ... {text})")


def _label(event: tuple) -> str:
    return ":".join(str(x) for x in event if x != "")


def _constant_store_dropped(name: str, recompiled: Flow, its_stores: Counter, original: Flow,
                            their_stores: Counter) -> bool:
    """Does ``recompiled`` store ``name`` some constant fewer times than ``original``, and the
    name fewer times?"""
    fewer = any(n == name and its_stores[n, value] < count for (n, value), count in their_stores.items())
    return fewer and recompiled.store_counts[name] < original.store_counts[name]


def _agreed_stores(mine: dict[int, tuple], theirs: dict[int, tuple]) -> tuple[dict, dict]:
    """The computed stores (``computed_stores``) of the names whose stores both sides make
    alike, as often: a name stored a value computed on one side and kept on the stack or in a
    decompiler's temporary on the other (a tuple assignment read back as two) says nothing."""
    def by_name(stores: dict[int, tuple]) -> dict[str, Counter]:
        found: dict[str, Counter] = defaultdict(Counter)
        for label in stores.values():
            found[label[1]][label[2]] += 1
        return found
    a, b = by_name(mine), by_name(theirs)
    agreed = {name for name in a.keys() & b.keys() if a[name] == b[name]}
    return ({k: e for k, e in mine.items() if e[1] in agreed},
            {k: e for k, e in theirs.items() if e[1] in agreed})


def _mangled_twins(pool: dict[str, list[types.CodeType]], name: str) -> list[types.CodeType]:
    """The code named ``name`` as a class mangles it (``_C__helper`` for ``__helper``): a method
    read back on its own is written outside its class, and defines its ``__private`` functions
    and classes by their mangled names (the names it stores them under)."""
    if not name.startswith("__") or name.endswith("__"):
        return []
    for other, codes in pool.items():
        if codes and len(other) > len(name) + 1 and other.endswith(name) and other.startswith("_") \
                and not other.startswith("__"):
            return codes
    return []


def _pair_nested(original: list[types.CodeType], recompiled: list[types.CodeType]):
    """(nested code, its recompiled twin or None, the differences between them): twins matched by
    name, the first one with the same flow, else the first left. (Equivalent source can create
    same-named code in another order: branches swapped.)

    The compiler merges equal code constants, and equal nested code is equal only when it starts
    on the same line (3.10 compares no columns): two generators the original wrote on two lines
    can be one constant in the source read back, which writes them on one. Once the twins of a
    name are taken, a nested code may share one already taken whose flow it has."""
    pool: dict[str, list[types.CodeType]] = defaultdict(list)
    taken: dict[str, list[types.CodeType]] = defaultdict(list)
    for c in recompiled:
        pool[c.co_name].append(c)
    def twin_taken(c: types.CodeType) -> types.CodeType | None:
        return next((x for x in taken[c.co_name] if not differences(c, x)), None)

    for c in original:
        candidates = pool.get(c.co_name) or _mangled_twins(pool, c.co_name)
        if not candidates:
            yield c, twin_taken(c), []
            continue
        compared = []
        for candidate in candidates:
            compared.append((candidate, differences(c, candidate)))
            if not compared[-1][1]:
                break
        if all(d for _, d in compared):
            # (twins merged into one constant while others of the name are left: a twin taken)
            shared = twin_taken(c)
            if shared is not None:
                yield c, shared, []
                continue
        match, found = next(((x, d) for x, d in compared if not d), compared[0])
        candidates.remove(match)
        taken[c.co_name].append(match)
        yield c, match, found
