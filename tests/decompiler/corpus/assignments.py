# ruff: noqa
"""Unpacking with starred targets, chained and augmented assignment on names, attributes and
subscripts, del, annotations."""

from ._cases import cases
from ._support import Box


@cases(([1, 2, 3, 4],),)
def starred_unpacking(xs):
    a, *b = xs
    *c, d = xs
    e, *f, g = xs
    (h, i), *j = [(1, 2), 3]
    return a, b, c, d, e, f, g, h, i, j


@cases((1, 2),)
def swap_and_rotate(a, b):
    a, b = b, a
    x, y, z = a, b, a + b
    x, y, z = z, x, y
    return a, b, x, y, z


@cases(((1, (2, (3, 4))),),)
def nested_unpacking(t):
    a, (b, (c, d)) = t
    [e, [f, g]] = [a, [b, c]]
    return a + b + c + d, e, f, g


@cases((5,),)
def chained_assignment(n):
    a = b = c = n
    d = e = [n]
    d.append(1)
    return a, b, c, e


@cases((3,),)
def augmented_attributes(n):
    box = Box(n)
    box.value += 1
    box.value *= 3
    box.child = Box(1)
    box.child.value -= 5
    return box.value, box.child.value


@cases((3,),)
def augmented_subscripts(n):
    d = {"a": n, "b": [n]}
    d["a"] += 1
    d["b"][0] **= 2
    d["b"] += [0]
    xs = [1, 2, 3]
    xs[1:] += [9]
    xs[-1] //= 2
    box = Box()
    box["k"] = n
    box["k"] <<= 2
    return d, xs, box.items


@cases((4,),)
def augmented_on_complex_targets(n):
    grid = [[0] * 3 for _ in range(3)]
    for i in range(3):
        grid[i][i] += n + i
        grid[i][(i + 1) % 3] -= 1
    return grid


@cases(([1, 2, 3, 4],),)
def del_statements(xs):
    xs = list(xs)
    d = {"a": 1, "b": 2}
    box = Box(1)
    box.extra = 5
    del xs[0], d["a"]
    del xs[1:]
    del box.extra
    x = 1
    del x
    try:
        x
    except NameError:
        gone = True
    return xs, d, hasattr(box, "extra"), gone


@cases((2,),)
def annotated_assignments(n):
    a: int = n
    b: list[int] = [a]
    c: "str"
    box = Box()
    box.value: int = 3
    d = {}
    d["k"]: float = 1.5
    return a, b, box.value, d


@cases((1, 2),)
def attribute_assignment_targets(a, b):
    box = Box()
    box.value, box.child = a, Box(b)
    box.child.value, (box["x"], box["y"]) = b * 2, (a, b)
    return box.value, box.child.value, box.items


@cases(([3, 1, 2],),)
def subscript_slice_assignment(xs):
    xs = list(xs)
    xs[0:2] = [9, 9, 9]
    xs[::2] = [0] * len(xs[::2])
    xs[-1:] = []
    return xs


@cases((5,),)
def starred_in_displays(n):
    a = [*range(n), *"ab"]
    b = (*a[:2], n)
    c = {*b, 100}
    d = {**{"x": 1}, "y": 2, **{"x": n}}
    return a, b, sorted(c, key=str), d


@cases(("abc",),)
def unpack_string_and_iterator(s):
    a, b, c = s
    it = iter(range(3))
    x, y, z = it
    return a + b + c, x + y + z


@cases(([1, 2],), ([1, 2, 3],))
def unpack_errors(xs):
    a, b = xs
    return a + b


@cases((3,),)
def multiple_targets_with_subscripts(n):
    d = {}
    d["a"] = d["b"] = n
    xs = [0, 0]
    i = 0
    i, xs[i] = 1, 5
    return d, xs, i


# Swaps through subscripts and attributes (random.shuffle): both sides are read before any store.

@cases(([1, 2, 3], 0, 2), ([4, 5], 1, 1))
def swap_subscripts(x, i, j):
    x = list(x)
    x[i], x[j] = x[j], x[i]
    return x


@cases((1, 2),)
def swap_attributes(a, b):
    box = Box(a)
    box.child = Box(b)
    box.value, box.child.value = box.child.value, box.value
    return box.value, box.child.value


@cases(([1, 2, 3],),)
def rotate_three_targets(x):
    x = list(x)
    x[0], x[1], x[2] = x[1], x[2], x[0]
    return x


@cases(([1, 2],), ([3, 4],))
def unpack_then_name_the_same_value(pair):
    # difflib.SequenceMatcher.get_matching_blocks: ``i, j, k = x = f()`` calls f once
    calls = []

    def make():
        calls.append(1)
        return list(pair)

    i, j = x = make()
    a = [p, q] = b = make()

    box = Box(None)
    box.first, (r, s) = t = (make(), make())
    return i, j, x, a, p, q, b, box.first, r, s, t, len(calls)


# A tuple assignment evaluates every value, then each target in turn: the calls inside the
# targets run after all the values. Two assignments would interleave them.

@cases((0,), (1,))
def tuple_assignment_effects_in_targets(n):
    log = []

    def note(tag, value):
        log.append(tag)
        return value

    x = [0, 0, 0]
    x[note("f", n)], x[note("g", n + 1)] = note("h", 5), note("k", 6)
    box = Box(0)
    note("a", box).value, note("b", box).other = note("c", 1), note("d", 2)
    x[note("i", 0)], box.value, x[note("j", 2)] = note("l", 7), note("m", 8), note("n", 9)
    return x, box.value, box.other, log


@cases((2,),)
def long_tuple_assignment_effects_in_targets(n):
    log = []

    def note(tag, value):
        log.append(tag)
        return value

    x = [0] * 5
    x[note("a", 0)], x[note("b", 1)], x[note("c", 2)], x[note("d", n)] = (note("e", 1), note("f", 2),
                                                                            note("g", 3), note("h", 4))
    return x, log


def _logged(log, tag, value):
    def step():
        log.append(tag)
        return value
    return step


@cases((),)
def tuple_assignment_calls_in_targets():
    log = []
    f, g, h, k = (_logged(log, "f", 0), _logged(log, "g", 1), _logged(log, "h", "H"),
                  _logged(log, "k", "K"))
    x = [None, None]
    x[f()], x[g()] = h(), k()
    return x, log


@cases(((1, 2), (3, 4, 5)), ((6, 6), (7, 8, 9)))
def unpack_to_one_name_twice(pair, triple):
    # 3.13 drops the first of two stores to one local: the item is popped unstored, which
    # reads as ``_`` (a variable the code never had) unless named as the later target
    (n, n) = pair
    (a, b, a) = triple
    (c, *c) = triple
    return n, a, b, c


@cases(([3, 1, 2], 5), ([], 0))
def nested_unpack_overwrites_a_name_read_beside_it(items, r1):
    # ``(lc, r1), r0 = f(), r1``: the old ``r1`` is read before the nested stores overwrite it
    # (in a loop, so each kind of access follows each other kind on some path either way)
    log = []
    while items:
        (lc, r1), r0 = (items.pop(), r1 + 1), r1
        log.append((lc, r1, r0))
        [a, [b, *c]], d = [r0, [lc, r1]], r0 + lc
        log.append((a, b, c, d))
    return log, r1


class _Probe:
    # attribute reads that record their order
    def __init__(self, **values):
        self.values, self.reads = values, []

    def __getattr__(self, name):
        self.reads.append(name)
        return self.__dict__["values"][name]


@cases((0, 1, 2), (3, 0, 5), (0, 0, 0))
def tuple_assignment_with_an_or_value(a, b, c):
    # sympy's Pow._eval_transpose: ``i, p = x, (y or z)``; the compiler stores p first, and the
    # value the branches build where they meet must still be evaluated after x
    s = _Probe(a=a, b=b, c=c)
    i, p = s.a, (s.b or s.c)
    return i, p, s.reads


@cases((17, 9, 2), (10, 3, 3))
def tuple_assignment_with_nested_targets_after_a_plain_one(n, m, p):
    # sympy's _binomial_mod_prime_power: the compiler stores Nj, then unpacks the other two values;
    # the calls must still run in the order written
    Nj, Mj, Rj = n, m, n - m
    log = []
    while Nj:
        Nj, (Mj, mj), (Rj, rj) = Nj // p, divmod(Mj, p), divmod(Rj, p)
        log.append((Nj, Mj, mj, Rj, rj))
        Nj, *rest = Nj, log.append(Nj), log.append(Mj)
    return log


@cases(([(1, 2), (3, 4), (5, 6)],), ([(0, 0)],))
def chained_assignment_of_one_value_to_two_unpacked_targets(pairs):
    # (dask's merge_and_compress_summaries) ``a, b = c, d = next(it)``: the value is computed
    # once and unpacked twice; printed as two assignments it called next() twice (refused)
    it = iter(pairs)
    a, b = c, d = next(it)
    (e, f), g = h = k = next(it, ((7, 8), 9))
    p = q, r = s = next(it, (10, 11))
    return a, b, c, d, e, f, g, h, k, p, q, r, s, list(it)
