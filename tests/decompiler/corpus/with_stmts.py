# ruff: noqa
"""with statements: several items, targets, nesting, exceptions, control flow inside."""

import contextlib

from ._cases import cases
from ._support import Box, Recorder


@cases((0,), (1,))
def with_single(kind):
    log = []
    with Recorder(log) as name:
        log.append("body " + name)
    return log


@cases((0,),)
def with_no_target(kind):
    log = []
    with Recorder(log):
        log.append("body")
    return log


@cases((0,),)
def with_several_items(kind):
    log = []
    with Recorder(log, "a") as a, Recorder(log, "b"), Recorder(log, "c") as c:
        log.append(a + c)
    return log


@cases((0,), (1,))
def with_swallows(kind):
    log = []
    with Recorder(log, swallow=True):
        if kind:
            raise ValueError
        log.append("no error")
    log.append("after")
    return log


@cases((0,), (1,))
def with_propagates(kind):
    log = []
    try:
        with Recorder(log):
            if kind:
                raise KeyError
    except KeyError:
        log.append("caught")
    return log


@cases((0,), (1,))
def with_return_inside(kind):
    log = []

    def inner():
        with Recorder(log):
            if kind:
                return "early"
            log.append("late")
        return "end"

    return inner(), log


@cases((4,),)
def with_break_continue(n):
    log = []
    for i in range(n):
        with Recorder(log, str(i)):
            if i == 1:
                continue
            if i == 3:
                break
            log.append(i)
    return log


@cases((0,),)
def with_nested(kind):
    log = []
    with Recorder(log, "outer") as o:
        with Recorder(log, "inner") as i:
            log.append(o + i)
        log.append("between")
    return log


@cases((0,),)
def with_tuple_target(kind):
    class CM:
        def __enter__(self):
            return (1, (2, 3))

        def __exit__(self, *a):
            return False

    with CM() as (a, (b, c)):
        return a + b + c


@cases((0,),)
def with_attribute_and_subscript_target(kind):
    log = []
    box = Box()
    with Recorder(log, "x") as box.value, Recorder(log, "y") as box["k"]:
        pass
    return box.value, box.items, log


@cases((0,), (1,))
def with_inside_try(kind):
    log = []
    try:
        with Recorder(log):
            if kind:
                raise ValueError
    except ValueError:
        log.append("except")
    else:
        log.append("else")
    finally:
        log.append("finally")
    return log


@cases((0,), (1,))
def try_inside_with(kind):
    log = []
    with Recorder(log):
        try:
            if kind:
                raise ValueError
        except ValueError:
            log.append("handled")
    return log


@cases((0,),)
def with_parenthesized(kind):
    log = []
    with (
        Recorder(log, "p") as p,
        Recorder(log, "q") as q,
    ):
        log.append(p + q)
    return log


@cases((3,),)
def with_in_loop_with_else(n):
    log = []
    for i in range(n):
        with Recorder(log, "w"):
            log.append(i)
    else:
        log.append("else")
    return log


@cases(("ab",), ("a",), (3,), ([],))
def with_body_tests_inside_a_match(statement):
    # traceback.StackSummary._should_show_carets: 3.13+ leaves the lone conditional jumps of the
    # test out of the with statement's handler range (jumps cannot raise)
    log = []
    with contextlib.suppress(TypeError):
        match statement:
            case int():
                log.append("int")
            case str():
                if len(statement) == 1 and statement[0]:
                    log.append("one")
        log.append("end")
    return log


@cases(([3, 2, 0], True), ([1, 1], False), ([0], True))
def loop_in_with_then_test_after(xs, error):
    # a jump after the with statement is no break of the loop inside it
    with contextlib.nullcontext():
        for step in range(3):
            if max(xs) < 1:
                break
            for i in range(len(xs)):
                try:
                    xs[i] -= 1
                except ZeroDivisionError:
                    continue
    if error:
        return [x for x in xs], 1
    return [x for x in xs]


@cases((0, 1), (1, 1), (1, 0))
def with_if_return_at_the_end(a, c):
    # the RETURN after the with's exit copy takes the with's line, and so does the implicit
    # ``return None``: two returns, not ``return None if not a else c + 1`` (refused before)
    with contextlib.nullcontext():
        if a:
            return c + 1


@cases((1, 0, 0, 0), (0, 1, 1, 1), (0, 1, 1, 0), (0, 1, 0, 0), (0, 0, 1, 1), (1, 1, 1, 1), (1, 2, 0, 0))
def with_body_of_many_branches_ending_together(a, b, c, d):
    # every branch of the body ends the with statement: 3.10 gives each its own copy of the exit
    # code, and the normaliser shares one of them through jumps, here several in a row
    log = []
    with Recorder(log):
        if a:
            try:
                (q, r) = divmod(10, b - 1)
            except ZeroDivisionError:
                pass
            else:
                if q > 5:
                    raise ValueError(q)
                log.append(q)
        elif b:
            if c:
                if d == 1:
                    try:
                        (q, r) = divmod(10, d)
                    except ZeroDivisionError:
                        pass
                    else:
                        if r:
                            raise ValueError(r)
                        log.append(q)
    return log


LIMIT = 3


@cases((1,), (0,), ("x",))
def with_then_try_except_finally_reading_a_global(n):
    # the with's handler goes on after a suppressed exception with a jump back to the try
    # statement after it (3.12+): no loop, so the code after the try stays where it is
    log = []
    with contextlib.suppress(ZeroDivisionError):
        log.append(1 // n)
    try:
        log.append(LIMIT // n)
    except ZeroDivisionError:
        pass
    finally:
        log.append(LIMIT)
    return log


@cases(([1, 2],), ([],), ([5],))
def first_item_taken_in_a_with_body(xs):
    # ``for x in xs: ...; break`` ending a with body: the ``break`` falls into the with's exit
    # (3.10: the break was lost)
    log = []
    got = None
    with Recorder(log):
        for x in xs:
            got = x
            break
    return got, log



@cases((0, 0), (3, 1), (3, 0), (2, 5), (1, 2))
def while_in_a_with_body_returning_a_constant_from_its_body(b, c):
    # ``return 0`` in the loop runs the with's exit before it loads the constant, laid out like
    # the code after the loop: read as the loop's break target, the loop's exit, an ``if`` that
    # leaves the with body, was printed falling into it (wrong code the flow check refused, on
    # every version)
    n = 0
    with contextlib.nullcontext():
        while b:
            b -= 1
            if n < b <= c:
                return 0
        if c:
            return 1
    for j in range(2):
        n += j
    return n, b


@cases((0, 5), (1, 5), (2, 5), (3, 0))
def branch_ending_in_a_with_and_a_raising_test_meets_the_other_in_a_try(step, n):
    # the with body's own protection splits the try body's range in two: the branches meet in the
    # second piece, the same try (read as two pieces, the code after the if was copied into both)
    log = []
    try:
        if step:
            with Recorder(log):
                r = step * 2
            if not r > 2:
                raise ValueError(r)
        else:
            r = n
        log.append(r)
        return r, log
    except ValueError as exc:
        return str(exc), log


@cases((0, 0), (1, 0), (0, 1), (2, 1))
def except_clause_naming_its_exception_whose_with_body_always_raises(n, quiet):
    # (from hypothesis's ``given``) where ``__exit__`` suppresses the exception, the with's cleanup
    # pops its own exception state: the next ``POP_EXCEPT`` is the clause's way out, then the
    # unbinding of its name and the copied return (refused before on 3.10, 3.11 and 3.13:
    # ``e = None; del e`` read as statements of the clause)
    log = []
    manager = contextlib.suppress(ZeroDivisionError) if quiet else contextlib.nullcontext()
    try:
        log.append(10 // n)
    except ZeroDivisionError as e:
        with manager:
            log.append(str(e))
            raise e
    return log
