# ruff: noqa
"""except* (CPython 3.11+)."""

from ._cases import cases


def _group(kind):
    if kind == 0:
        return None
    if kind == 1:
        return ExceptionGroup("one", [ValueError("a")])
    if kind == 2:
        return ExceptionGroup("two", [ValueError("a"), KeyError("b")])
    return ExceptionGroup("three", [TypeError("t")])


@cases((0,), (1,), (2,), (3,))
def except_star_basic(kind):
    log = []
    try:
        try:
            g = _group(kind)
            if g is not None:
                raise g
            log.append("none")
        except* ValueError as eg:
            log.append(("value", len(eg.exceptions)))
        except* KeyError:
            log.append("key")
    except ExceptionGroup as rest:
        log.append(("rest", [type(e).__name__ for e in rest.exceptions]))
    return log


@cases((0,), (1,), (2,))
def except_star_else_finally(kind):
    log = []
    try:
        g = _group(kind)
        if g is not None:
            raise g
    except* (ValueError, KeyError) as eg:
        log.append(sorted(type(e).__name__ for e in eg.exceptions))
    else:
        log.append("else")
    finally:
        log.append("finally")
    return log


@cases((0,), (1,))
def except_star_naked_exception(kind):
    result = "nothing"
    try:
        if kind:
            raise ValueError("bare")
    except* ValueError as eg:
        result = type(eg).__name__, len(eg.exceptions)
    return result


@cases((1,), (2,))
def except_star_reraise(kind):
    try:
        try:
            raise _group(kind)
        except* ValueError:
            raise
    except ExceptionGroup as g:
        return [type(e).__name__ for e in g.exceptions]


@cases((1,), (3,))
def except_star_in_loop(kind):
    out = []
    for k in (0, kind):
        try:
            g = _group(k)
            if g:
                raise g
        except* ValueError:
            out.append("v")
        except* TypeError:
            out.append("t")
    return out
