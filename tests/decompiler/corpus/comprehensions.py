# ruff: noqa
"""List, set, dict and generator comprehensions: nested, filtered, with closures, in class bodies."""

from ._cases import cases
from ._support import Truth


@cases((5,), (0,))
def list_comp(n):
    return [i * i for i in range(n)]


@cases((10,),)
def list_comp_filter(n):
    return [i for i in range(n) if i % 2 if i > 2]


@cases((4,),)
def nested_for_clauses(n):
    return [(i, j) for i in range(n) for j in range(i) if (i + j) % 2]


@cases((3,),)
def nested_comprehension(n):
    return [[i * j for j in range(n)] for i in range(n)]


@cases((6,),)
def set_comp(n):
    return {i % 3 for i in range(n)}


@cases((4,),)
def dict_comp(n):
    return {str(i): i * i for i in range(n) if i != 2}


@cases((5,),)
def generator_expression(n):
    return sum(i for i in range(n)), list(x * 2 for x in range(n) if x)


@cases((3, 10),)
def comprehension_closure(n, k):
    return [i + k for i in range(n)]


@cases((3,),)
def comprehension_captures_loop_variable(n):
    fs = [lambda: i for i in range(n)]
    gs = [lambda i=i: i for i in range(n)]
    return [f() for f in fs], [g() for g in gs]


@cases(([[1, 2], [3], []],),)
def flatten(rows):
    return [x for row in rows for x in row]


@cases((["a", "bb", "ccc"],),)
def dict_comp_from_enumerate(words):
    return {w: i for i, w in enumerate(words)}, {len(w): w for w in words}


@cases((4,),)
def comprehension_with_ternary(n):
    return ["even" if i % 2 == 0 else "odd" for i in range(n)]


@cases((3,),)
def genexpr_in_call_args(n):
    return tuple(i for i in range(n)), max((i for i in range(n)), default=-1), "".join(str(i) for i in range(n))


@cases((3,),)
def comprehension_uses_outer_in_condition(limit):
    data = [1, 5, 2, 8]
    return [d for d in data if d > limit], {d: [e for e in data if e < d] for d in data if d > limit}


@cases((3,),)
def class_level_comprehension(n):
    class C:
        base = [i for i in range(n)]
        squares = {i: i * i for i in base}
        total = sum(x for x in base)
    return C.base, C.squares, C.total


@cases((2,),)
def comprehension_with_walrus_and_nesting(n):
    return [[(y := x * k) for x in range(n)] + [y] for k in range(1, 3)]


@cases(([(1, (2, 3)), (4, (5, 6))],),)
def comprehension_unpacking_targets(pairs):
    return [a + b + c for a, (b, c) in pairs], [rest for _, *rest in [(1, 2, 3)]]


@cases((3,),)
def genexpr_lazy(n):
    g = (i * 10 for i in range(n))
    first = next(g)
    return first, list(g)


@cases((4,),)
def nested_generator_closures(n):
    def make():
        return [(lambda: i * j) for i in range(n) for j in range(2)]
    return [f() for f in make()]


@cases((3,),)
def async_free_nested_dict_set(n):
    return {frozenset({j for j in range(i)}): [k for k in range(i)] for i in range(n)}


@cases(([(1, None), (0, None), (0, 1), (1, 0)],),)
def comprehension_with_ternary_condition(fields):
    # dataclasses._hash_add: a conditional expression as the comprehension's filter.
    return [f for f in fields if (f[0] if f[1] is None else f[1])]



@cases((0,), (1,), (3,))
def comprehension_filter_always_true(n):
    # the compiler folds ``(y or 4) or i``: y's truth is computed, the element is taken either way
    Truth.asked = 0
    y = Truth(n % 2 == 1)
    return [i * 2 for i in range(n) if (y or 4) or i], Truth.asked


@cases(([(0, None), (1, None), (0, 0), (0, 2)], True), ([(3, 1), (0, None)], False))
def comprehension_ternary_filters(pairs, flag):
    first = [a for a, b in pairs if (a if b is None else b)]
    second = {a: b for a, b in pairs if not (b if flag else a)}
    third = [a for a, b in pairs if (a and b if flag else a or b) if a != 7]
    return first, second, third


@cases(({"a": [1, 2]}, {"b": [3], "c": []}),)
def equal_generators_merged_by_their_lines(succ, pred):
    # 3.10 merges equal code constants that start on one line: the first two generators (both
    # start at ``sum(``) are one constant here, the last two are two; the source read back, one
    # line per statement, has one constant for each pair
    plain = sum(len(v) for v in succ.values()) + sum(
        len(v) for v in pred.values()
    )
    weighted = sum(
        x for v in succ.values() for x in v
    ) + sum(
        x for v in pred.values() for x in v
    )
    return plain, weighted


@cases(([0, 1, None, "s", 2],), ([],))
def negated_or_and_and_as_elements(items):
    # ``not (a or b)`` keeps a's value on the stack and jumps to the truth test before the
    # ``not``; 3.13 drops that test (TO_BOOL), and the comprehension's own code must send the
    # jump on to the ``not``, as the enclosing code does
    flags = [not (isinstance(x, str) or x is None) for x in items]
    both = {i: not (x and i) for i, x in enumerate(items)}
    nested = [[not (x or y) for y in items[:2]] for x in items]
    return flags, both, nested, sum(not (x or 0) for x in items)


@cases((3,), (0,))
def generator_expressions_of_none(n):
    # (dask's meta_from_array) a generator expression yielding None: its code yields the None a
    # bare ``yield`` would; refused before ("could not print the recovered syntax tree")
    key = (Ellipsis,) + tuple(None for _ in range(n))
    return key, list(None for _ in range(n)), sum(1 for x in (None for _ in range(n)) if x is None)


@cases(([1, 0, 3],), ([],), ([(2, 5)],))
def comprehension_clauses_over_one_item(xs):
    # (IPython's SelectivePolicy._safe_get_methods) ``for y in [x]`` in a comprehension binds the
    # one item without a loop (3.9+): an assignment among its clauses, after a test or another
    # such binding; refused before ("unrecognised comprehension body")
    pairs = [x for x in xs if isinstance(x, tuple)]
    singles = [x for x in xs if not isinstance(x, tuple)]
    return (
        {m for x in singles for m in [x * 2] if m},
        [y for x in singles if x for y in [x + 1] for w in (y * 2,) if w > 2],
        {k: v for p in pairs for k, v in [p] if v},
        list(b for x in singles for a, *b in [(x, x, x)]),
        [z for x in singles for y in [x] for z in [y] if z < 2 < y + 2],
    )
