"""``cleanup.terminates``: the one answer to "does control fall off the end of these statements?",
asked by the tidying rewrites and (through try statements) by the if builder."""

import ast

import pytest

from depyf.decompiler.cleanup import terminates


def _body(source: str) -> list[ast.stmt]:
    return ast.parse(source).body


@pytest.mark.parametrize(
    ("source", "plain", "through_try"),
    [
        ("return 1", True, True),
        ("x = 1", False, False),
        ("if c:\n    return 1\nelse:\n    raise E", True, True),
        ("if c:\n    return 1", False, False),
        # a try statement ends when its body and every except clause end
        ("try:\n    return f()\nexcept E:\n    raise", False, True),
        ("try:\n    return f()\nexcept E:\n    pass", False, False),
        # ... or when its else clause does (the body falls into it)
        ("try:\n    f()\nexcept E:\n    return 2\nelse:\n    return 1", False, True),
        # ... or when its finally body ends, whatever the rest does
        ("try:\n    f()\nfinally:\n    return 1", False, True),
        ("try:\n    f()\nfinally:\n    g()", False, False),
        # an if whose branch ends in such a try statement
        ("if c:\n    try:\n        return 1\n    except E:\n        return 2\nelse:\n    return 3",
         False, True),
        ("", False, False),
    ],
)
def test_terminates(source: str, plain: bool, through_try: bool) -> None:
    body = _body(source)
    assert terminates(body) is plain
    assert terminates(body, through_try=True) is through_try


def test_terminates_sees_a_loop_exit_as_an_end() -> None:
    loop = _body("for x in xs:\n    try:\n        break\n    except E:\n        continue")[0]
    assert terminates(loop.body, through_try=True)
    assert not terminates(loop.body)
