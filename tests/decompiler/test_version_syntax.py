"""Syntax that only some CPython versions have: decompile, recompile, and compare behaviour.

Each case is source compiled from a string (so this file imports on every version) and skipped
where the running CPython cannot compile it. The function named ``f`` in the source is decompiled
with ``depyf.recompile`` and the rebuilt function must return the same results (or raise the same
exception type) for every input.
"""

from __future__ import annotations

import sys
import types
import warnings
from dataclasses import dataclass

import pytest

import depyf


@dataclass(frozen=True)
class Case:
    name: str
    minimum: tuple[int, int]
    source: str
    inputs: tuple[tuple, ...] = ((),)
    # What the decompiler core still lacks for this case (None: expected to pass). Such cases are
    # expected failures, not skips, so they report XPASS the day the core learns the construct.
    missing: str | None = None


def _describe_type_params(params) -> list:
    return [(type(p).__name__, p.__name__, repr(getattr(p, "__bound__", None))) for p in params]


CASES = [
    # 3.12: PEP 695 type parameters and `type` aliases, PEP 701 f-strings.
    Case(
        "type_alias",
        (3, 12),
        """
def f(n):
    type Pair[T] = tuple[T, T]
    type Plain = list[int]
    return (str(Pair.__value__), [p.__name__ for p in Pair.__type_params__], str(Plain.__value__),
            str(Pair[int]), n)
""",
        ((1,),),
    ),
    Case(
        "generic_function",
        (3, 12),
        """
def f(x):
    def first[T: (int, str), *Ts, **P](a: T, *rest: *Ts) -> T:
        return a
    return first(x), describe(first.__type_params__)
""",
        ((1,), ("a",)),
    ),
    Case(
        "generic_class",
        (3, 12),
        """
def f(x):
    class Box[T: int]:
        def __init__(self, item: T) -> None:
            self.item = item
        def get(self) -> T:
            return self.item
    return Box(x).get(), describe(Box.__type_params__), Box.__name__
""",
        ((3,),),
    ),
    Case(
        "generic_methods_decorators_closures",
        (3, 12),
        """
def f(x):
    import functools

    def tag(fn):
        fn.tagged = True
        return fn

    @tag
    def ident[T](v: T, *, scale: int = 2) -> T:
        return v * scale

    class Stack[T]:
        def __init__(self) -> None:
            self.items: list[T] = []

        def push[S: (int, str)](self, item: S) -> "Stack[T]":
            self.items.append(item)
            return self

        @functools.cache
        def kind(self) -> type:
            return T

    def outer(y):
        def inner[U](z: U) -> U:
            return z + y
        return inner
    return (ident(x), ident.tagged, Stack().push(x).items, Stack.__type_params__[0].__name__,
            Stack.push.__type_params__[0].__constraints__, outer(1)(x), describe(ident.__type_params__))
""",
        ((1,), (3,)),
    ),
    Case(
        "type_parameter_defaults",
        (3, 13),
        """
def f(x):
    def pick[T = int, *Ts = *tuple[int, ...]](v: T) -> T:
        return v
    class Box[T: int = bool, **P = [int, str]]:
        pass
    type Alias[T = str] = list[T]
    return (pick(x), [p.__default__ for p in pick.__type_params__],
            [p.__default__ for p in Box.__type_params__], Alias.__type_params__[0].__default__,
            str(Alias.__value__))
""",
        ((1,),),
    ),
    Case(
        "fstring_nested_quotes",
        (3, 12),
        """
def f(words, width):
    return f"{'-'.join(words)}|{f"{width:>{width}}"}|{"\\n".join(w.upper() for w in words)!r}"
""",
        ((["a", "b"], 4), ([], 1)),
    ),
    Case(
        "fstring_multiline_expression",
        (3, 12),
        """
def f(d):
    return f"{d[
        'k'
    ]:>5} {'x' if d['k'] else 'y'}"
""",
        (({"k": 1},), ({"k": 0},)),
    ),
    # 3.14: PEP 750 template strings, PEP 758 `except A, B:` without brackets.
    Case(
        "template_string",
        (3, 14),
        """
def f(name, width):
    t = t"hello {name!r:>{width}} and {width}"
    parts = [t, t"plain", t"{name=}", t"{ width+1 }{name!a}{width:{width}d}", t""]
    return [(p.strings, [(i.value, i.expression, i.conversion, i.format_spec) for i in p.interpolations])
            for p in parts]
""",
        (("ann", 6), ("", 0)),
    ),
    Case(
        "except_without_brackets",
        (3, 14),
        """
def f(exc):
    try:
        raise exc
    except ValueError, TypeError:
        return "value or type"
    except KeyError as e:
        return "key " + str(e)
    except Exception:
        return "other"
""",
        ((ValueError(),), (TypeError(),), (KeyError("k"),), (RuntimeError(),)),
    ),
    # 3.15: PEP 798 unpacking in comprehensions.
    Case(
        "unpacking_in_comprehension",
        (3, 15),
        """
def f(rows):
    return ([*row for row in rows], {*row for row in rows}, {**d for d in rows if isinstance(d, dict)},
            list(*row for row in rows), [x for row in rows for x in [*row, *row]])
""",
        (([[1, 2], [3]],), ([{"a": 1}, {"b": 2}],)),
    ),
]


def _compile_case(case: Case) -> types.FunctionType:
    namespace = {"describe": _describe_type_params}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        exec(compile(case.source, f"<{case.name}>", "exec"), namespace)
    return namespace["f"]


def _outcome(func, args):
    try:
        return ("returned", func(*args))
    except Exception as exc:  # the exception type is the outcome
        return ("raised", type(exc))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_version_syntax_round_trip(case: Case):
    if sys.version_info < case.minimum:
        pytest.skip(f"needs CPython {case.minimum[0]}.{case.minimum[1]}")
    if case.missing:
        pytest.xfail(f"decompiler core lacks {case.missing}")
    func = _compile_case(case)
    rebuilt = depyf.recompile(func.__code__)
    compile(rebuilt.source, "<decompiled>", "exec")
    clone = types.FunctionType(rebuilt.code, func.__globals__, func.__name__, func.__defaults__,
                               func.__closure__)
    for args in case.inputs:
        assert _outcome(clone, args) == _outcome(func, args), rebuilt.source


def test_every_version_has_a_case():
    """Each CPython newer than 3.11 with new syntax has at least one case here."""
    assert {c.minimum for c in CASES} >= {(3, 12), (3, 14), (3, 15)}


@pytest.mark.skipif(sys.version_info < (3, 12), reason="needs CPython 3.12")
def test_cases_compile_on_this_version():
    """The sources themselves are valid on the versions they claim (guards against typos)."""
    for case in CASES:
        if sys.version_info >= case.minimum:
            func = _compile_case(case)
            for args in case.inputs:
                _outcome(func, args)


MODULE_WITH_ANNOTATIONS = """
import sys
x: int = 1
label: "str"
for i in range(2):
    w: list[int] = [i]
try:
    q: str = 'a'
except Exception:
    r: bytes
while x:
    x -= 1
    s: set = set()
if x:
    never: float = 2.0
"""


def test_module_annotations_read_back_as_annotated_statements():
    """3.14+ compiles module annotations into an ``__annotate__`` function plus a set of the
    annotated statements that ran (``__conditional_annotations__``); they read back as
    ``name: annotation`` statements, and the rebuilt module has the same ``__annotations__``."""
    import ast

    code = compile(MODULE_WITH_ANNOTATIONS, "<module-annotations>", "exec", dont_inherit=True)
    source = depyf.decompile(code)
    assert "__conditional_annotations__" not in source and "__annotate__" not in source, source
    annotated = {node.target.id: ast.unparse(node.annotation) for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.AnnAssign)}
    assert annotated == {"x": "int", "label": "'str'", "w": "list[int]", "q": "str", "r": "bytes",
                         "s": "set", "never": "float"}, source

    def annotations(module_code):
        namespace: dict = {}
        exec(module_code, namespace)
        if "__annotate__" in namespace:      # 3.14+: computed when asked for
            return namespace["__annotate__"](1)
        return namespace.get("__annotations__")

    assert annotations(compile(source, "<decompiled>", "exec", dont_inherit=True)) == annotations(code)


def test_module_with_future_annotations_and_its_own_annotate_function():
    source_text = "from __future__ import annotations\n" + MODULE_WITH_ANNOTATIONS + (
        "def __annotate__(format, /):\n    return {'own': format}\n")
    code = compile(source_text, "<future-annotations>", "exec", dont_inherit=True)
    source = depyf.decompile(code)
    assert source.startswith("from __future__ import annotations\n"), source
    first, again = {}, {}
    exec(code, first)
    exec(compile(source, "<decompiled>", "exec", dont_inherit=True), again)
    assert again["__annotations__"] == first["__annotations__"]
    assert again["__annotate__"](2) == first["__annotate__"](2) == {"own": 2}
