"""Returns that the cleanup could take for copies of one return statement (``cleanup._same_return``)."""

from __future__ import annotations

import depyf

_TWO_RETURNS_BEFORE_A_FINALLY_BODY = '''
def f(a, b, x):
    try:
        while a > 0:
            a -= 1
            if b:
                x += 1
                return -(1 + b)
            elif x:
                return -(not b)
    finally:
        a = a + 1
    return a
'''


def test_returns_of_other_values_before_one_finally_body_stay_apart():
    # The finally body runs between each return's value and its RETURN_VALUE, which has the
    # finally body's line: the two returns share that line and the code on it, not their values.
    namespace: dict = {}
    exec(compile(_TWO_RETURNS_BEFORE_A_FINALLY_BODY, "<returns>", "exec"), namespace)
    f = namespace["f"]
    source = depyf.decompile(f)
    assert "return -(1 + b)" in source and "return -(not b)" in source
    g = type(f)(depyf.recompile(f.__code__).code, {})
    for args in [(0, 0, 0), (1, 2, 0), (1, 0, 3), (1, 0, 0), (2, -1, 1)]:
        assert g(*args) == f(*args)
