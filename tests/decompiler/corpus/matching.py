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
