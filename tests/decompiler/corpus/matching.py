# ruff: noqa
"""match statements with every pattern kind."""

from ._cases import cases


class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y


class Color:
    RED = "red"
    GREEN = "green"


@cases((0,), (1,), (2,), (3,), ("x",))
def match_literals(v):
    match v:
        case 0:
            return "zero"
        case 1 | 2:
            return "one or two"
        case "x":
            return "ex"
        case _:
            return "other"


@cases((None,), (True,), (False,), (-1,), (1.5,), (2j,), (b"b",))
def match_singletons_and_numbers(v):
    match v:
        case None:
            return "none"
        case True:
            return "true"
        case False:
            return "false"
        case -1:
            return "minus one"
        case 1.5:
            return "one and a half"
        case 2j:
            return "complex"
        case b"b":
            return "bytes"
    return "unmatched"


@cases(([],), ([1],), ([1, 2],), ([1, 2, 3, 4],), ((5, 6),), ("ab",))
def match_sequences(v):
    match v:
        case []:
            return "empty"
        case [x]:
            return ("one", x)
        case [x, y]:
            return ("two", x, y)
        case [first, *rest]:
            return ("many", first, rest)
        case _:
            return "not a sequence"


@cases(({"a": 1},), ({"a": 1, "b": 2, "c": 3},), ({"b": 2},), ({},), (5,))
def match_mappings(v):
    match v:
        case {"a": 1, "b": b, **rest}:
            return ("ab", b, rest)
        case {"a": a}:
            return ("a", a)
        case {}:
            return "mapping"
    return "no"


@cases(((0, 0),), ((0, 5),), ((3, 3),), ((1, 2),), (3,))
def match_class_patterns(v):
    p = Point(*v) if isinstance(v, tuple) else v
    match p:
        case Point(x=0, y=0):
            return "origin"
        case Point(0, y):
            return ("on y axis", y)
        case Point(x, y) if x == y:
            return ("diagonal", x)
        case Point(x=x):
            return ("somewhere", x)
        case int(n):
            return ("int", n)
    return None


@cases(("red",), ("green",), ("blue",))
def match_value_patterns(c):
    match c:
        case Color.RED:
            return 1
        case Color.GREEN:
            return 2
        case other:
            return other


@cases(([1, (2, 3)],), ([1, [4, 5]],), ([1, 2],), ([(1, 2), 3],))
def match_nested_and_as(v):
    match v:
        case [1, (2, 3) as inner]:
            return ("tuple", inner)
        case [1, [a, b] as inner] if a < b:
            return ("list", inner, a, b)
        case [(1 | 2) as first, *_]:
            return ("alt", first)
        case [[x, y], z]:
            return ("nested", x, y, z)
    return "none"


@cases(([1, 2],), ("s",), (3.0,), ({"k": [1, {"z": 2}]},))
def match_builtin_classes(v):
    match v:
        case str() | bytes():
            return "text"
        case [int(a), int(b)]:
            return a + b
        case float(x) if x > 0:
            return "positive float"
        case {"k": [_, {"z": z}]}:
            return z
    return None


@cases((5,), (15,), (-3,))
def match_guards(n):
    match n:
        case x if x < 0:
            return "neg"
        case x if x < 10:
            return "small"
        case _:
            return "big"


@cases(((1, 2, 3),), ((1,),), ((),))
def match_star_in_middle(v):
    match v:
        case (a, *middle, b):
            return a, middle, b
        case (a,):
            return a
        case _:
            return "empty"


@cases(("go north",), ("look",), ("drop a b",), ("",))
def match_split_command(command):
    match command.split():
        case ["go", direction]:
            result = "going " + direction
        case ["look"]:
            result = "looking"
        case ["drop", *objects]:
            result = "dropping " + ",".join(objects)
        case _:
            result = "?"
    return result


@cases((1,), (2,))
def match_no_wildcard_falls_through(v):
    r = "start"
    match v:
        case 1:
            r = "one"
    return r


@cases((0,), (1,), (7,))
def match_in_loop_with_break(limit):
    out = []
    for i in range(4):
        match i:
            case 2 if limit == 0:
                break
            case 3:
                continue
            case _:
                out.append(i)
    return out


@cases(([1, 2, 3],), ([9],), ([],), ((4, 5),), ("no",))
def match_star_positions(v):
    match v:
        case [*_, 3]:
            return "ends in three"
        case [9, *_]:
            return "starts with nine"
        case [4, *_, 5]:
            return "four to five"
        case [*head, 5]:
            return head
        case [*everything]:
            return everything
    return "nothing"


@cases(([1, 2],), ([1, 2, 3],), ([0, 1, 2, 3, 4],), ([5],))
def match_star_captures(v):
    match v:
        case [first, *_, last] if first == last:
            return ("same", first)
        case [_, second, *_, before_last, _]:
            return (second, before_last)
        case [*_, x, y]:
            return (x, y)
        case [_, *_]:
            return "one or more"
    return None


@cases(({"x": 1, "y": 2},), ({"kind": "pt", "x": 0},), ({"kind": Color.RED},), ({},), ({"k": None},), ([],))
def match_mapping_forms(v):
    match v:
        case {"kind": Color.RED, **others}:
            return ("red", others)
        case {"kind": "pt", **rest}:
            return ("pt", rest)
        case {"k": None}:
            return "k is None"
        case {"x": x, "y": y, **kw} if not kw:
            return x + y
        case {**everything} if everything:
            return everything
    return "empty or not a mapping"


@cases((None,), (True,), (False,), ([None, True],), ([False, 0],), (0,))
def match_singletons_nested(v):
    match v:
        case [None, True]:
            return "none-true"
        case [False, x]:
            return ("false", x)
        case None | True:
            return "none or true"
        case False:
            return "false"
    return "else"


@cases(([1, 5],), ([5, 1],), ((2, 7),), ([3, 3],), ({"point": (1, 2)},))
def match_or_with_captures(v):
    if isinstance(v, dict):
        v = Point(*v["point"])
    match v:
        case [1, x] | [x, 1]:
            return ("has one", x)
        case (2, y) | [y, 2]:
            return ("has two", y)
        case Point(x=a, y=b) | [a, b]:
            return ("pair", a, b)
    return None


@cases(((1, (2, 3)),), ((0, 0),), (("a", [1]),), ((None, None),), (4,))
def match_nested_classes(v):
    if isinstance(v, tuple):
        x, y = v
        v = Point(x, Point(*y) if isinstance(y, tuple) else y)
    match v:
        case Point(x=1, y=Point(x=px, y=py) as inner):
            return ("nested", px, py, inner.x)
        case Point(0, 0) | Point(x=None, y=None):
            return "zero-ish"
        case Point(str(name), [*items]):
            return (name, items)
        case object(real=r) if r == 4:
            return ("number", r)
    return "no"


@cases((["add", 1, 2],), (["neg", 5],), (["stop"],), (["add", "a", "b"],), (["skip", 0],))
def match_commands_in_loop(cmd):
    results = []
    for attempt in range(3):
        match cmd:
            case ["add", int(a), int(b)]:
                results.append(a + b + attempt)
            case ["neg", n] if attempt < 2:
                results.append(-n)
                continue
            case ["stop"]:
                break
            case ["skip", _]:
                return "skipped"
            case _:
                results.append(None)
        results.append(attempt)
    return results


@cases((3, 4), (0, 1), (-1, -1))
def match_subject_expression(a, b):
    match (a + b, a * b):
        case (0, _):
            return "sum zero"
        case (s, p) if s > p:
            return ("sum bigger", s, p)
        case (s, p):
            return ("product bigger or equal", s, p)


@cases((1,), (2,), (3,))
def match_wildcard_with_guard_first(n):
    seen = []
    match n:
        case _ if n > 2:
            seen.append("big")
        case 1:
            seen.append("one")
        case _ if n == 2:
            seen.append("two")
    seen.append("done")
    return seen


@cases(([1, [2, [3, 4]]],), ([1, [2, 3]],), ([[1], 2],))
def match_nested_match_statements(v):
    match v:
        case [1, rest]:
            match rest:
                case [2, [a, b]]:
                    return a * b
                case [2, c]:
                    return c
        case [[x], y]:
            return x + y
    return 0


@cases(("a",), ("b",), ("z",))
def match_global_capture(v):
    global MATCHED
    match v:
        case "a" | "b" as MATCHED:
            pass
        case _:
            MATCHED = None
    return MATCHED


MATCHED = None


@cases((1,), ([2],))
def match_closure_capture(v):
    match v:
        case [inner]:
            pass
        case inner:
            pass
    return (lambda: inner)()


@cases(([1, 2, 0],), ([1, 2, 1],), ({"k": (1, 2)},), ({"j": (1, 2)},), ([(5, 6)],), ([[5, 6, 7]],), (0,))
def match_or_reordered_captures(v):
    match v:
        case [x, y, 0] | [y, x, 1]:
            return (x, y)
        case {"k": (a, b)} | {"j": (b, a)}:
            return (a, b)
        case [(p, q) | [q, p, _]]:
            return (p, q)
    return None


@cases(({"type": "a", "val": 3},), ({"type": "b", "val": 0},), ({"type": "c", "z": 1},), ({"type": "x", "z": 1},),
       ({"a": [1, {"b": 9}]},), ({"c": 4},))
def match_nested_or_in_mappings(v):
    def seen_later():
        return seen
    match v:
        case {"type": "a" | "b" as t, "val": int() | float() as n} if n:
            return (t, n)
        case {"type": t, **kw} if kw and t != "x":
            return (t, sorted(kw))
        case {"a": [1, {"b": seen}]} | {"c": seen}:
            return seen_later()
    return None


match len(Point.__match_args__):
    case 2:
        MODULE_LEVEL_MATCH = "two"
    case n if n > 2:
        MODULE_LEVEL_MATCH = n
    case _:
        MODULE_LEVEL_MATCH = None


class ClassBodyMatch:
    match Color.RED:
        case "red" | "crimson" as shade:
            kind = "warm"
        case _:
            kind = "other"


@cases(())
def match_at_module_and_class_level():
    return (MODULE_LEVEL_MATCH, ClassBodyMatch.kind, ClassBodyMatch.shade)


@cases((1, True), (9, False), ([0, 0], False), ([0, 1], False), (0, False), (3, False))
def match_compound_guards(v, flag):
    match v:
        case x if flag or x > 5:
            return ("first", x)
        case [a, b] if a or b:
            return ("pair", a, b)
        case y if not y:
            return "falsy"
        case _:
            return "rest"


@cases(([7, [-1, -2.5], 3],), ([{"p": {"q": [1, 2]}}, 7],), ([],), ([[0, 0]],))
def match_in_while_with_continue_and_break(v):
    i = 0
    out = []
    while i < len(v):
        i += 1
        match v[i - 1]:
            case 7:
                out.append("seven")
                continue
            case [-1, -2.5]:
                out.append("negs")
            case {"p": {"q": [*_, last]}}:
                out.append(last)
                break
        out.append(i)
    return out


@cases(([1, 5],), ([1, 1],), ([0, 0],), ([2],), ("ab",), ("a",), (b"xy",), (3,))
def match_guards_with_walrus(v):
    match v:
        case [x, y] if (s := x + y) > 3:
            return ("big", s)
        case [x, *_] if (t := x * 2):
            return ("t", t)
        case str() | bytes() as z if len(z) > 1:
            return z
    return None


# Mapping patterns nested in class and sequence patterns: a mapping's subject and keys are popped
# under the captures it rotated down, before the enclosing pattern goes on with its next value.
@cases((({"k": 1}, [1, 2]),), (({"k": 1}, [2, 2]),), (({"k": 1, "r": 0}, {"j": 5}),), (({}, [1, 2]),),
       (({"z": 2}, 0),), ((3, 4),), ([1],))
def match_mapping_capture_in_class(v):
    p = Point(*v) if isinstance(v, tuple) else v
    match p:
        case Point({"k": a}, [1, b]):
            return "point", a, b
        case Point({"k": a, **rest}, {"j": b}):
            return "rest", a, rest, b
        case Point(x={"k": 1} | {"z": 2}):
            return "or"
    return None


@cases(([{"a": 1, "b": [2, {"c": 3}]}, {}],), ([{"a": 1, "b": [2, {"d": 3}]}, {}],), ([{"e": 5}, 6],),
       ([{"e": 5}, 6, 7],), ([[{"d": 0}]],), ([],), ({"e": 1},))
def match_mappings_inside_sequences(v):
    match v:
        case [{"a": 1, "b": [2, {"c": c}]}, {}]:
            return "deep", c
        case [{"e": e} as m, n]:
            return "as", e, m, n
        case [{"e": e}, *_, last]:
            return "star", e, last
        case [[{"d": d}]] if d == 0:
            return "guard", d
    return "none"


@cases(({"k": {"k": [1, 2]}, "x": 3},), ({"k": {"k": [1]}},), ({"k": {"k": "ab"}},),
       (({"k": 1, "j": 2}, [3]),), (({"k": 1}, [3]),), (({"k": 1, "j": 2}, (3, 4)),), (({"k": 1}, []),))
def match_mappings_inside_mappings_and_classes(v):
    p = Point(*v) if isinstance(v, tuple) else v
    match p:
        case {"k": {"k": [_, y]}, **rest}:
            return "two", y, rest
        case Point(({"k": a, "j": _} as m), [*_]):
            return "point", a, m
        case Point({"k": a}, [b, *more]):
            return "seq", a, b, more
    return "none"


# An or-pattern inside a sequence or class pattern whose last alternative fails into the
# enclosing failure's pops (3.12+), and ``name as name`` in a sequence (3.10 rotates the copy).
@cases(([[], 1],), ([2, 1],), ([3, 1],), (([], "z"),), ((2, [5]),), (("s", 1),), ([7, 3],), ([[1], 3],), (5,))
def match_or_and_as_inside_sequences_and_classes(v):
    p = Point(*v) if isinstance(v, tuple) else v
    match p:
        case [[] | 2, 1]:
            return "seq-or"
        case Point([] | 2, _):
            return "class-or"
        case [("s" | 7) as head, (n as m)]:
            return "as", head, n, m
        case [(a as b), 3]:
            return "name-as-name", a, b
    return "none"


# mapping patterns nested in class and sequence patterns (and the other way round); the first
# function is long enough for 3.10 to put an EXTENDED_ARG between MATCH_CLASS and its test
NESTED_SUBJECTS = [(k,) for k in range(11)]


def _nested_subject(k):
    """The k-th subject, built from this module's Point (also in source decompiled from it)."""
    return [
        Point({"k": 1}, []), Point({"a": 1, "b": 2}, 5), [{"a": 1}, {"b": 2}], [1, {"k": [3, {"j": 4}]}, 5],
        (Point({"q": 1}, 0), {"z": 1}), [{"k": 3}], [{"k": 0}], Point({"b": 2}, 0), [{"a": (3, 4)}, 1],
        {"outer": Point({"in": 7}, 0)}, 0,
    ][k]


@cases(*NESTED_SUBJECTS)
def match_mappings_inside_class_and_sequence_patterns(k):
    match _nested_subject(k):
        case Point(x={"k": v}, y=[*_]):
            return "p-map", v
        case Point({"a": 1, **rest}, y):
            return "p-rest", rest, y
        case [{"a": a}, {"b": b}]:
            return "seq-maps", a, b
        case [1, {"k": [x, {"j": y}]}, *tail]:
            return "deep", x, y, tail
        case (Point(x={"q": q}), {"z": 0 | 1 as z}):
            return "mixed", q, z
        case [{"k": v}] if v > 1:
            return "guard", v
        case _:
            return "none"


@cases(*NESTED_SUBJECTS)
def match_or_of_mappings_inside_class_and_sequence(k):
    match _nested_subject(k):
        case Point(x={"a": 1} | {"b": 2}):
            return 1
        case [{"a": [1, 2]} | {"a": (3, _)}, *r]:
            return 2, r
        case {"outer": Point(x={"in": i})}:
            return 3, i
    return 0
