# ruff: noqa
"""Loops, branches and handlers combined: every way of leaving a block from inside another one.

The stdlib swap showed that such combinations, more than single constructs, trip a structurer.
"""

from ._cases import cases
from ._support import Recorder

SEQS = [([],), ([1],), ([3, 0, -2, 5, 7],), ([2, 4, 6, 8],), ([-1, -1, 9],)]


@cases(*SEQS)
def while_elif_chain_each_leaving_differently(xs):
    xs = list(xs)
    out = []
    while xs:
        x = xs.pop()
        if x < 0:
            continue
        elif x == 0:
            break
        elif x > 6:
            return "big", out
        else:
            out.append(x)
        out.append("tail")
    return "end", out


@cases(*SEQS)
def for_if_else_both_continue(xs):
    out = []
    for x in xs:
        if x % 2:
            out.append("odd")
            continue
        else:
            out.append("even")
            continue
    return out


@cases(*SEQS)
def inner_break_outer_continue(xs):
    out = []
    for x in xs:
        for y in range(3):
            if y == x:
                break
        else:
            out.append(("no break", x))
            continue
        out.append(("broke", x))
    return out


@cases(*SEQS)
def continue_inside_finally_guarded(xs):
    out = []
    for x in xs:
        try:
            if x == 0:
                raise ZeroDivisionError
            out.append(10 // x)
        except ZeroDivisionError:
            out.append("zero")
            continue
        finally:
            out.append("f")
        out.append("after")
    return out


@cases(*SEQS)
def return_from_with_in_loop(xs):
    from ._support import Recorder
    log = []
    for x in xs:
        with Recorder(log, str(x)):
            if x > 4:
                return x, log
            if x < 0:
                continue
        log.append("after with")
    return None, log


@cases(*SEQS)
def loop_in_try_in_loop(xs):
    out = []
    for rnd in range(2):
        try:
            for x in xs:
                if x == 5:
                    raise KeyError(x)
                if x < 0:
                    break
                out.append(x + rnd)
        except KeyError:
            out.append("key")
            continue
        out.append("round done")
    return out


@cases(*SEQS)
def while_with_try_else_break(xs):
    xs = list(xs)
    out = []
    while xs:
        try:
            v = 12 // xs.pop(0)
        except ZeroDivisionError:
            out.append("zero")
        else:
            if v > 3:
                break
            out.append(v)
    return out, xs


@cases(*SEQS)
def nested_if_in_loop_with_tails(xs):
    out = []
    for x in xs:
        if x > 0:
            if x % 2:
                out.append("odd")
            out.append("pos")
        else:
            if x:
                out.append("neg")
        out.append("each")
    return out


@cases(*SEQS)
def while_true_multiple_exits(xs):
    xs = list(xs)
    n = 0
    while True:
        if not xs:
            r = "empty"
            break
        x = xs.pop()
        if x == 0:
            return "zero", n
        n += 1
        if n > 3:
            r = "many"
            break
    return r, n


@cases(*SEQS)
def for_else_return_in_else(xs):
    for x in xs:
        if x == 0:
            break
    else:
        return "no zero"
    return "zero found"


@cases(*SEQS)
def try_finally_in_while_with_break_and_return(xs):
    xs = list(xs)
    log = []
    while xs:
        x = xs.pop(0)
        try:
            if x == 0:
                break
            if x > 6:
                return "big", log
        finally:
            log.append(x)
    return "end", log


@cases(*SEQS)
def if_without_else_as_last_in_loop_body_with_call(xs):
    total = 0
    for x in xs:
        total += x
        if total > 5:
            total -= 5
    return total


@cases(*SEQS)
def conditional_break_then_else_if(xs):
    out = []
    i = 0
    while i < len(xs):
        if xs[i] == 0:
            break
        elif xs[i] > 4:
            out.append("big")
        i += 1
    else:
        out.append("exhausted")
    return out


@cases(*SEQS)
def nested_while_shared_counter(xs):
    i = 0
    out = []
    while i < len(xs):
        j = i
        while j < len(xs) and xs[j] >= 0:
            j += 1
        out.append((i, j))
        i = j + 1
    return out


@cases(*SEQS)
def except_in_loop_with_return_and_raise(xs):
    for x in xs:
        try:
            if x < 0:
                raise ValueError(x)
        except ValueError as e:
            if x < -1:
                raise
            return "neg", str(e)
    return "none"


# ``return`` through nested try/finally statements with for loops between them: the returned value
# passes each finally body's copy and, between two of them, the pops of the loops' iterators.
RETURN_SEQS = [([0, 1, 2, 3],), ([3, 1, 0],), ([],), ([1],), ([1, 1],)]


@cases(*RETURN_SEQS)
def return_through_finally_loop_finally(xs):
    log = []
    try:
        for x in xs:
            try:
                if x > 2:
                    return x, log
            finally:
                log.append(x)
    finally:
        log.append("outer")
    return None, log


@cases(*RETURN_SEQS)
def return_through_loops_and_finallies(xs):
    log = []
    for x in xs:
        try:
            for y in xs:
                try:
                    for z in xs:
                        if z > y > x:
                            return z, log
                finally:
                    log.append(y)
        finally:
            log.append("o")
    return log


@cases(*RETURN_SEQS)
def return_from_except_through_loops_and_finallies(xs):
    log = []
    for x in xs:
        try:
            for y in xs:
                try:
                    log.append(1 / (y - 1))
                except ZeroDivisionError as e:
                    return str(e), y, log
                finally:
                    log.append(y)
        finally:
            log.append("o")
    return log


@cases(*RETURN_SEQS)
def return_through_while_for_with_and_finallies(xs):
    log = []
    i = 0
    while i < 2:
        i += 1
        try:
            for y in xs:
                with Recorder(log):
                    try:
                        while y:
                            if y > 2:
                                return y, log
                            y -= 1
                    finally:
                        log.append(y)
        finally:
            log.append("o")
    return log


@cases(*RETURN_SEQS)
def return_continue_and_fallthrough_through_finallies(xs):
    log = []
    for x in xs:
        try:
            for y in xs:
                try:
                    if y > 2:
                        return y, log
                    elif y == 0:
                        continue
                finally:
                    log.append(y)
                log.append("after")
        finally:
            log.append("o")
        if x == 1:
            return "one", log
    return log


# ``while True`` whose body leaves a try/finally by ``return``, ``continue`` and ``break``, each
# finally body running on the way out. 3.10 and 3.12+ copy a small block after the loop into each
# ``break`` (after the finally body's copy) and keep no other: only breaks reach it.
COUNTS = [(0,), (1,), (3,), (4,), (7,)]


@cases(*COUNTS)
def while_true_finally_return_continue_break(n):
    log = []
    i = 0
    while True:
        i += 1
        try:
            if i > n:
                return log
            if i % 2:
                continue
            if i > 3:
                break
            log.append(i)
        finally:
            log.append(-i)
    return "after", log


@cases(*COUNTS)
def while_true_finally_return(n):
    log = []
    i = 0
    while True:
        i += 1
        try:
            if i > n:
                return log
            log.append(i)
        finally:
            log.append(-i)


@cases(*COUNTS)
def while_true_finally_break_copies_return(n):
    log = []
    i = 0
    while True:
        i += 1
        try:
            if i > n:
                break
        finally:
            log.append(-i)
    return log


@cases(*COUNTS)
def while_true_finally_continue_break(n):
    log = []
    i = 0
    while True:
        i += 1
        try:
            if i % 2:
                continue
            if i > n:
                break
            log.append(i)
        finally:
            log.append(-i)
    return log


@cases(*COUNTS)
def while_true_finally_two_breaks_and_return(n):
    log = []
    i = 0
    while True:
        i += 1
        try:
            if i > n:
                break
            if i % 3 == 0:
                return i, log
            if i > 2 * n:
                break
        finally:
            log.append(-i)
    return log, i


@cases(*COUNTS)
def while_true_nested_finallies_break(n):
    log = []
    i = 0
    while True:
        i += 1
        try:
            try:
                if i > n:
                    break
                if i == 2:
                    continue
            finally:
                log.append("a")
        finally:
            log.append("b")
        log.append(i)
    return log


@cases(*COUNTS)
def while_true_finally_break_then_continue(n):
    log = []
    i = 0
    while True:
        i += 1
        try:
            if i > n:
                break
            continue
        finally:
            log.append(-i)
    return log


@cases(*RETURN_SEQS)
def return_break_continue_through_nested_for_finallies(xs):
    log = []
    for x in xs:
        try:
            for y in xs:
                try:
                    try:
                        if x * y > 3:
                            return log
                        if y == 2:
                            continue
                        if x == 3:
                            break
                        log.append((x, y))
                    finally:
                        log.append(-y)
                finally:
                    log.append("m")
        finally:
            log.append(-x)
    return log


@cases(*RETURN_SEQS)
def return_through_for_finally_in_while_true(xs):
    log = []
    while True:
        try:
            for x in xs:
                try:
                    if x > 2:
                        return log
                    log.append(x)
                finally:
                    log.append(-x)
        finally:
            log.append("outer")
        xs = [v + 1 for v in xs] or [3]


@cases(*COUNTS)
def while_true_try_except_finally_breaks(n):
    log = []
    while True:
        try:
            n -= 1
            if n < 0:
                break
            if n == 5:
                raise ValueError(n)
        except ValueError as e:
            log.append(str(e))
            break
        finally:
            log.append(n)
    return log


@cases(*RETURN_SEQS)
def while_true_finally_break_in_for_with_return(xs):
    out = []
    for x in xs:
        while True:
            try:
                if x > 2:
                    return out
                x += 1
                if x == 2:
                    break
            finally:
                out.append(x)
    return out


@cases(*COUNTS)
async def async_while_true_finally_break(n):
    log = []
    while True:
        try:
            n -= 1
            if n < 0:
                break
        finally:
            log.append(n)
    return log


@cases(*COUNTS)
def while_true_finally_break_and_constant_return(n):
    log = []
    while True:
        try:
            n -= 1
            if n < 0:
                break
            if n == 3:
                return "three"
        except KeyError:
            break
        finally:
            log.append(n)
    return log


@cases(*COUNTS)
def while_true_finally_break_then_delete_and_return(n):
    log = []
    while True:
        try:
            n -= 1
            if n < 0:
                break
        finally:
            log.append(n)
    del log
    return n


@cases(*COUNTS)
def while_true_finally_around_except_return_constant(n):
    log = []
    while True:
        try:
            try:
                n -= 1
                if n < 0:
                    break
                if n == 4:
                    raise ZeroDivisionError
            except ZeroDivisionError:
                return 0
        finally:
            log.append(n)
    return log


# ``break`` out of a with in a ``while True`` loop: 3.12+ lays the with's handler out after the
# loop's closing jump and jumps back from it into the loop
@cases(*COUNTS)
def while_true_with_break_then_statement(n):
    log = []
    i = 0
    while True:
        i += 1
        with Recorder(log):
            if i > n:
                break
        log.append(i)
    return log


@cases(*COUNTS)
def while_true_suppressing_with_break(n):
    log = []
    i = 0
    while True:
        i += 1
        with Recorder(log, swallow=True):
            if i == 2:
                raise ValueError
            if i > n:
                break
    return log, i


@cases(*COUNTS)
def while_true_suppressing_with_return_continue(n):
    log = []
    i = 0
    while True:
        i += 1
        with Recorder(log, swallow=True):
            if i == 2:
                raise ValueError
            if i > n:
                return log
            if i == 1:
                continue
            log.append(i)
        log.append(-i)


@cases(*COUNTS)
def while_true_two_withs_break(n):
    log = []
    i = 0
    while True:
        i += 1
        with Recorder(log, "a", swallow=True) as c, Recorder(log, "b"):
            if i > n:
                break
    return log


@cases((0, 0, 0), (0, 1, 0), (2, 0, 1), (0, 0, 1), (0, 0, "x"), (0, "y", 1))
def while_else_with_breaks_before_and_inside_a_try_finally(a, b, c):
    # the code after the else clause is laid out inside the loop's range, before the copy of
    # the test at the bottom: a jump there is a ``break`` (refused on 3.12+ before)
    log = []
    while a < 1:
        a += 1
        if b == 1:
            break
        try:
            log.append(a / c)
            if c == 1:
                return log
        except Exception:
            if b:
                break
        finally:
            c = c + 1 if isinstance(c, int) else c
    else:
        log.append("else")
    log.append("after")
    return log
