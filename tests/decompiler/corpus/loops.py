# ruff: noqa
"""for and while loops with break, continue and else clauses, nested."""

from ._cases import cases


@cases((5,), (0,))
def for_sum(n):
    total = 0
    for i in range(n):
        total += i
    return total


@cases(([1, 3, 5],), ([1, 4, 5],), ([],))
def for_else_search(xs):
    for x in xs:
        if x % 2 == 0:
            found = x
            break
    else:
        found = None
    return found


@cases((10,), (3,))
def while_else(n):
    i = 0
    while i < n:
        if i == 5:
            break
        i += 1
    else:
        return "exhausted", i
    return "broke", i


@cases((10,),)
def continue_in_for(n):
    out = []
    for i in range(n):
        if i % 3 == 0:
            continue
        if i > 7:
            break
        out.append(i)
    return out


@cases((4,),)
def nested_loops_break(n):
    pairs = []
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            if (i + j) % 2:
                continue
            pairs.append((i, j))
        else:
            pairs.append("inner-done")
    return pairs


@cases((6,), (1,))
def while_true_break(n):
    i = 0
    while True:
        i += 1
        if i >= n:
            break
    return i


@cases((20,), (0,))
def while_continue(n):
    i = 0
    out = []
    while i < n:
        i += 1
        if i % 2:
            continue
        out.append(i)
    return out


@cases(([(1, 2), (3, 4)],),)
def for_unpack(pairs):
    out = []
    for a, b in pairs:
        out.append(a * b)
    for i, (a, b) in enumerate(pairs):
        out.append(i + a + b)
    return out


@cases(({"a": 1, "b": 2},),)
def for_over_dict_items(d):
    keys = []
    for k, v in sorted(d.items()):
        keys.append(k * v)
    return keys


@cases((5,), (0,))
def return_inside_loop(n):
    for i in range(n):
        if i == 3:
            return "three"
    return "none"


@cases((3,),)
def for_else_with_continue(n):
    out = []
    for i in range(n):
        if i == 1:
            continue
        out.append(i)
    else:
        out.append("else")
    return out


@cases((3,), (0,))
def while_else_no_break(n):
    out = []
    while n:
        n -= 1
        out.append(n)
    else:
        out.append("done")
    return out


@cases((5,),)
def loop_var_after_loop(n):
    for i in range(n):
        pass
    return i


@cases(([1, 2, 3],),)
def for_attribute_target(xs):
    class Holder:
        pass

    h = Holder()
    out = {}
    for h.value in xs:
        out[h.value] = h.value * 2
    for out["last"] in xs:
        pass
    return out


@cases((3, 3),)
def triple_nested(a, b):
    total = 0
    for i in range(a):
        j = 0
        while j < b:
            for k in range(i):
                if k == j:
                    break
                total += k
            else:
                total += 100
            j += 1
    return total


@cases((10,),)
def while_with_complex_condition(n):
    i, j = 0, n
    while i < j and (i % 4 != 3 or j % 2 == 0):
        i += 1
        j -= 1
    return i, j


@cases(([3, 0, 2],), ([1, 1],))
def for_try_continue(xs):
    out = []
    for x in xs:
        try:
            out.append(10 // x)
        except ZeroDivisionError:
            continue
        finally:
            out.append("f")
    return out


@cases((5,),)
def loop_with_nested_function(n):
    fs = []
    for i in range(n):
        def f(i=i):
            return i * i
        fs.append(f)
    return [f() for f in fs]


@cases((4,), (9,))
def while_break_else_nested(n):
    i = 0
    while i < n:
        i += 1
        j = 0
        while j < i:
            if j * i == 12:
                break
            j += 1
        else:
            continue
        break
    return i


@cases(("hello world",),)
def for_over_string(s):
    vowels = 0
    for ch in s:
        if ch in "aeiou":
            vowels += 1
        elif ch == " ":
            continue
    return vowels


@cases((3,),)
def for_with_starred_target(n):
    out = []
    for first, *rest in [(i, i + 1, i + 2) for i in range(n)]:
        out.append((first, rest))
    return out


# Minimal forms of loops found mis-structured in the stdlib (heapq._siftup, html.parser, tarfile).

@cases(([1, 0, 3],), ([],))
def while_if_then_tail(values):
    out = []
    k = 0
    while k < len(values):
        v = values[k]
        if v:
            v = v * 2
        out.append(v)
        k += 1
    return out


@cases(([5, 3, 8, 1, 9, 2, 7], 0), ([1, 2, 3, 4, 5], 1), ([2, 1], 0))
def while_if_and_not_then_tail(xs, pos):
    end = len(xs)
    child = 2 * pos + 1
    out = []
    while child < end:
        right = child + 1
        if right < end and not xs[child] < xs[right]:
            child = right
        out.append(child)
        pos = child
        child = 2 * pos + 1
    return out


@cases(([1, 2, 7, 4], 1), ([1, 0, 5], 1), ([1, 2], 0))
def while_true_or_break_in_if(xs, flag):
    it = iter(xs)
    if flag:
        while True:
            s = next(it, None)
            if not s or s == 7:
                break
    return list(it)


@cases(([3, -1, 4],), ([],))
def for_if_then_tail(values):
    out = []
    for v in values:
        if v < 0:
            v = -v
        out.append(v)
    return out


@cases(("xab", "yab", 0), ("ab", "ab", 0), ("ab", "cd", 0), ("a_b", "a_b", 0))
def multiline_while_condition(a, b, lo):
    # difflib.SequenceMatcher.find_longest_match: a condition split over lines with backslashes.
    i = len(a)
    j = len(b)
    n = 0
    while i > lo and j > lo and \
          not b[j - 1] == "_" and \
          a[i - 1] == b[j - 1]:
        i, j, n = i - 1, j - 1, n + 1
    return i, j, n


@cases(([b"", b"abcdef"], 3), ([b"xy", b"z"], 5), ([], 2), ([b"", b""], 1))
def while_two_breaking_ifs(chunks, n):
    # zipfile.ZipExtFile.read1: two sibling ifs that both end in break.
    chunks = list(chunks)
    buf = b""
    rest = b""
    while chunks:
        data = chunks.pop(0)
        if n < len(data):
            rest = data[n:]
            buf += data[:n]
            break
        if data:
            buf += data
            break
    return buf, rest, len(chunks)


@cases(("ab;cd", 1), ("abc", 1), ("x;", 0), ("y", 2))
def while_break_in_elif_branch(field, mode):
    # email._parseaddr.AddrlistClass.getaddress: the loop is the last statement of an elif
    # branch, so its break jumps to the same place as the end of the if/elif chain.
    pos = 0
    out = []
    if mode == 0:
        out.append("zero")
    elif mode == 1:
        pos += 1
        while pos < len(field):
            if pos < 10 and field[pos] == ";":
                pos += 1
                break
            out = out + [field[pos]]
            pos += 1
    else:
        out.append("other")
    out.append(pos)
    return out


@cases(([1, 2, 3], 2), ([1, 2], 5), ([], 0))
def for_break_as_last_statement_of_if(xs, stop):
    out = []
    if xs:
        for x in xs:
            out.append(x)
            if x == stop:
                break
    else:
        out.append("empty")
    return out


@cases(({"a": 1, "b": 2},), ({},))
def return_in_first_iteration(d):
    # configparser.RawConfigParser.popitem: the loop body always returns.
    d = dict(d)
    for key in sorted(d):
        value = d[key]
        del d[key]
        return key, value, d
    raise KeyError("empty")


@cases(([1, 2, 3, 4], 3, 9), ([1, 2], 5, 2), ([1, 2, 3], 7, 7), ([], 1, 1))
def while_one_return_or_break_then_tail(items, frame, old):
    # contextlib.ExitStack.__exit__._fix_exception_context: `while 1` left by return or by break;
    # the statement after the loop runs only after the break.
    result = []

    def fix(i):
        while 1:
            ctx = items[i] if i < len(items) else None
            if ctx is None or ctx == old:
                return
            if ctx == frame:
                break
            i += 1
        result.append(("fixed", i))

    fix(0)
    return result


@cases(([2, 0, 5], 1), ([0, 5], 0), ([], 0), ([0], 1))
def while_true_try_handlers_continue_then_break(items, ignore):
    # tarfile.TarFile.next: handlers that continue conditionally, then an unconditional break.
    items = list(items)
    got = None
    while True:
        try:
            got = 10 // items.pop(0)
        except ZeroDivisionError:
            if ignore:
                continue
        except IndexError:
            if not items:
                got = "empty"
        break
    return got, items


@cases(("a/b/c",), ("",), ("/",), ("x",))
def while_and_test_exits_to_copied_returns(path):
    # 3.11 copies the ``return None`` after the loop into each exit of the and-test
    while path and path != "/":
        yield path
        path = path.rpartition("/")[0]


@cases((8, 4), (6, 10), (50, 250), (3, 7), (0, 1))
def while_chained_comparison_test(m, n):
    # _pydecimal.Decimal._power_exact: a chained comparison as the whole while test
    steps = 0
    while m % 2 == n % 2 == 0 and steps < 5:
        m //= 2
        n //= 2
        steps += 1
    while m % 5 == n % 5 == 0:
        m //= 5
        n //= 5
    return m, n, steps


@cases(([1, 0, 2], True, 0), ([0, 5], False, 0), (["x", 3], True, 1), (["x"], False, 0), ([], True, 0),
       ([None, 4], True, 0), ([None], False, 1))
def while_true_try_named_handlers_continue_break_raise(items, ignore, offset):
    # tarfile.TarFile.next: named handlers that continue, fall through to the break, or raise
    items = list(items)
    log = []
    while True:
        try:
            got = 10 // items.pop(0)
        except ZeroDivisionError as e:
            if ignore:
                log.append(type(e).__name__)
                continue
        except TypeError as e:
            if ignore:
                log.append("type")
                continue
            elif offset == 0:
                raise ValueError(str(e)) from None
        except IndexError:
            if offset == 0:
                return "empty", log
        else:
            log.append(got)
        break
    return log, items


@cases(("ab-cd+e",), ("",), ("++--",), ("-x",))
def while_true_starting_with_while(text):
    # difflib._mdiff._line_iterator: the outer loop's first statement is a while loop, so both
    # loops start at the same test; the outer one is left by return, its branches continue
    chars = list(text)
    window = []
    out = []
    while True:
        while len(window) < 2:
            window.append(chars.pop(0) if chars else "X")
        s = "".join(window)
        window.pop(0)
        if s.startswith("X"):
            pending = len(out)
        elif s.startswith("-"):
            out.append("minus")
            continue
        elif s.startswith("+"):
            out.append("plus")
            continue
        else:
            pending = 0
        while pending > 0:
            pending -= 1
            out.append(pending)
        if s.startswith("X"):
            return out
        out.append(s)


@cases((["a", "b"], {}, True), (["x", "y", "z"], {"x": "y"}, True), ([], {}, False), (["q"], {"q": "q"}, True),
       (["k"], {}, True), (["m"], {}, True))
def while_true_try_break_to_shared_join(items, fallback, by_name):
    # zipfile.ZipFile.__init__: the try body's break goes to code shared with the if's else branch;
    # 3.12+ lays that code out before the handler, inside the loop's range
    items = list(items)
    tries = 0
    if by_name:
        mode = items[0] if items else "none"
        while True:
            tries += 1
            try:
                got = {"a": 1, "y": 2, "z": 3, "k": 4}[items.pop(0)]
            except KeyError:
                if mode in fallback:
                    mode = fallback[mode]
                    continue
                raise
            break
    else:
        got = -1
    total = got * 10
    for item in items:
        total += len(item)
    return total, tries, items


@cases((["a", "b", "c"], [{"b": 2}, {"c": 3, "b": 4}]), ([], []), (["a"], [{}]), (["b", "c"], [{"c": 1}, {"c": 2}]))
def for_else_in_handler_breaks_to_code_after_try(names, mro):
    # inspect._getmembers: a for/else inside an except clause, inside a loop; the break goes to the
    # code after the try statement, which 3.12+ lays out before the handler
    known = {"a": 1}
    results = []
    for key in names:
        try:
            value = known[key]
        except KeyError:
            for base in mro:
                if key in base:
                    value = base[key]
                    break
            else:
                results.append((key, "missing"))
                continue
        results.append((key, value))
    return results


@cases((5,), (0,), (3,))
def inner_loops_break_to_the_next_outer_round(n):
    # 3.12+ threads an inner loop's break straight to the enclosing loop's next round when
    # nothing follows the inner loop in the outer body
    log = []
    for i in range(n):
        for j in range(i):
            if j == 2:
                break
            log.append(("for", i, j))
    k = 0
    while k < n:
        k += 1
        m = 0
        while m < k:
            m += 1
            if m == 3:
                break
        else:
            log.append(("while-else", k))
    for i in range(n):
        while True:
            log.append(("true", i))
            if i % 2 or len(log) > 40:
                break
            i += 1
    for i in range(n):
        if i == 1:
            continue
        for j in range(n):
            if j > i:
                break
        else:
            log.append(("done", i))
            continue
    return log


@cases(({1: [2], 2: [3], 3: [1]},), ({1: [2], 2: []},), ({},), ({1: [1]},))
def find_cycle_inner_while_else_breaks_outer(graph):
    # graphlib.TopologicalSorter._find_cycle: an inner while/else whose break ends the body of
    # ``while True`` (so lands on its next round) and whose else breaks out of it
    stack = []
    itstack = []
    seen = set()
    where = {}
    for node in graph:
        if node in seen:
            continue
        while True:
            if node in seen:
                if node in where:
                    return stack[where[node]:] + [node]
            else:
                seen.add(node)
                itstack.append(iter(graph[node]).__next__)
                where[node] = len(stack)
                stack.append(node)
            while stack:
                try:
                    node = itstack[-1]()
                    break
                except StopIteration:
                    del where[stack.pop()]
                    itstack.pop()
            else:
                break
    return None


@cases((["ab=3d", "x_y", "=4", ""], False), (["a=\n", "=="], True))
def long_while_body_tests_walrus_line(lines, header):
    # quopri.decode, 3.13: the body is long enough that the loop test's jump needs EXTENDED_ARG,
    # which sits between TO_BOOL and the jump (TO_BOOL must stay invisible there)
    feed = list(reversed(lines))
    out = []
    while line := (feed.pop() if feed else ""):
        i, n = 0, len(line)
        partial = not line.endswith("\n")
        while i < n:
            c = line[i:i + 1]
            if c == "_" and header:
                out.append(" ")
                i = i + 1
            elif c != "=":
                out.append(c)
                i = i + 1
            elif i + 1 == n and not partial:
                partial = True
                break
            elif i + 1 < n and line[i + 1:i + 2] == "=":
                out.append("=")
                i = i + 2
            elif i + 2 < n and line[i + 1:i + 2].isdigit() and line[i + 2:i + 3].isdigit():
                out.append(chr(int(line[i + 1:i + 3])))
                i = i + 3
            else:
                out.append(c + "?")
                i = i + 1
        if not partial:
            out.append("|")
    return "".join(out)


@cases(([1, 2, 3], 2, "a"), ([0, 1], 5, "a"), ([], 1, "a"), ([1, 0, 3], 3, "a"))
def return_after_try_whose_else_returns_in_for(items, stop, a):
    # 3.12+: the code after the try is reached only from the except clause, so it is laid out
    # after the function's end; its ``return`` (entered by a test, the iterator still on the
    # stack) is the loop body's, not a break target
    seen = []
    for j in items:
        try:
            q = 6 // j
        except ZeroDivisionError:
            seen.append("zero")
        else:
            if q > stop:
                return q
            seen.append(q)
            continue
        if len(seen) >= stop:
            return a, seen
    return seen


# A while loop at the end of a for body whose body ends in ``break`` after a ``continue``: 3.12+
# sends both the loop's exit and its breaks straight to the for loop's next round.
@cases((0, 0, 0), (0, 4, 1), (2, 3, 2), (1, 6, 1), (3, 0, 3))
def while_ending_in_break_at_end_of_for(a, b, c):
    for j in range(3):
        while b < 5:
            if c % 2:
                c += 1
                continue
            b += 1
            break
    return a, b, c


@cases((0, 0, 0), (0, 4, 1), (2, 3, 2), (1, 6, 1), (3, 0, 3), (-1, 2, 5))
def while_ending_in_break_after_try_finally_break(a, b, c):
    log = []
    for j in range(3):
        try:
            if a > j:
                break
        finally:
            c = c + 1
        while b < 5:
            if c % 2:
                c += 1
                continue
            log.append(b)
            b += 1
            break
    return log, b, c


@cases((0, 0, 0), (1, 4, 1), (2, 3, 2), (3, 6, 1), (2, 0, 3))
def nested_whiles_ending_in_break(a, b, c):
    n = 0
    while n < a:
        n += 1
        while b < 5:
            b += 1
            if c > b:
                continue
            c += n
            break
    return n, b, c


# while tests that hold statements (walrus, calls; 3.12+ copies such a test to the loop's bottom),
# with try/finally, continue, break and return in the body
WHILE_SEQS = [([],), ([1],), ([3, 0, -2, 5, 7],), ([2, 4, 6, 8],), ([-1, -1, 9],), ([1, 2, 3, 0],)]


@cases(*WHILE_SEQS)
def while_walrus_len_test_continue(xs):
    xs = list(xs)
    out = []
    while (n := len(xs)) > 1:
        out.append(xs.pop() * n)
        if n == 3:
            continue
    return out


@cases(*WHILE_SEQS)
def while_conditional_call_test_break(xs):
    xs = list(xs)
    out = []
    while xs.pop() if xs else None:
        out.append(len(xs))
        if len(out) > 3:
            break
    return out


@cases(*WHILE_SEQS)
def while_walrus_and_test_break_else(xs):
    y = 0
    xs = list(xs)
    while (y := y + 1) and y < 10 and xs:
        if xs.pop(0) < 0:
            break
    else:
        return "else", y
    return y


@cases(*WHILE_SEQS)
def while_walrus_call_test_finally_continue_return(xs):
    xs = list(xs)
    log = []
    while (v := (xs.pop() if xs else None)) is not None:
        try:
            if v == 0:
                continue
            if v < 0:
                return log
            log.append(v)
        finally:
            log.append("f")
    return log


@cases(*WHILE_SEQS)
def while_two_walruses_test_finally_continue(xs):
    it = iter(xs)
    total = 0
    while (x := next(it, None)) is not None and (total := total + x) < 10:
        try:
            if x == 2:
                continue
        finally:
            total += 1
    return total


@cases(*WHILE_SEQS)
def for_nested_finallies_continue_return(xs):
    log = []
    for x in xs:
        try:
            if x == 0:
                continue
            try:
                if x < 0:
                    return log
                if x > 5:
                    continue
            finally:
                log.append("in")
        finally:
            log.append(x)
    return log


@cases(*WHILE_SEQS)
def while_finally_continue_return_then_tail(xs):
    log = []
    i = 0
    while i < len(xs):
        x = xs[i]
        i += 1
        try:
            if x == 0:
                continue
            if x < 0:
                return log, i
        finally:
            log.append(x)
        log.append("tail")
    return log


# a while test where a conditional expression's test is itself a conditional expression with a
# constant arm
FLAGS5 = [(c, a, x, y, w) for c in (0, 1) for a in (0, 1) for x in (0, 1) for y in (0, 1) for w in (0, 1)]


@cases(*FLAGS5)
def while_conditional_test_with_constant_arm_or(c, a, x, y, w):
    n = 0
    while (x if (3 if c else a) else y) or w:
        n += 1
        if n > 2:
            break
    return n


@cases(*FLAGS5)
def while_conditional_test_with_constant_else_arm_and(c, a, x, y, w):
    n = 0
    while (x if (a if c else 0) else y) and n < 3:
        n += 1
    return n


@cases(*FLAGS5)
def while_conditional_with_constant_arm_as_test_continue(c, a, x, y, w):
    n = 0
    while ((1 if c else a) if x else y) and n < 2:
        n += 1
        if w:
            continue
        n += 1
    return n


@cases(*FLAGS5)
def while_and_conditional_test_with_constant_arm_else(c, a, x, y, w):
    n = 0
    while n < 3 and (x if (0 if c else a) else y):
        n += 1
    else:
        n = -n
    return n


@cases(*FLAGS5)
def while_not_conditional_test_with_constant_arm_return(c, a, x, y, w):
    n = 0
    while not (x if (3 if c else a) else y):
        n += 1
        if n > 1:
            return n
    return n


@cases(([1, 2, 3],), ([],))
def for_body_on_the_for_line(xs):
    # 3.13 fuses the loop variable's store with the body's first load on one line; the source
    # with the body on its own line loads the two locals together instead
    out = [0]
    p = 1
    out.append(p)
    for x in xs: out.append(x)
    for x in xs: p *= out.index(x)
    return out, p


@cases(([[1, 1, 1], [1, 1]], 2), ([[1, 1, 1], [1, 0]], 5), ([[1, 1]], 5), ([], 1), ([[]], 1))
def while_with_try_breaks_then_for_body_goes_on(rounds, limit):
    # 3.12+ lays the except clause out at the end, after the code that follows the while loop:
    # that code's jump to the for loop's next round is not a ``break`` of the while loop
    ok = True
    n = 0
    for left in rounds:
        n = 0
        accept = 0
        while left:
            n += 1
            if n >= limit:
                accept = 1
                break
            try:
                left = left[1:] if left[0] else left[5]
            except IndexError:
                left = False
        if accept == 0:
            ok = False
            break
    return ok, n


@cases(([3, 2, 1], 0), ([0, 4], 0), ([0, 4], 1), ([], 1))
def while_with_continue_in_except_clause(stack, m):
    # 3.12+ lays the except clause out after the loop's bottom: its jump back to the test at the
    # top is the loop's ``continue``, not the next round of an enclosing ``while True``
    out = []
    while stack:
        try:
            c = 10 // stack.pop()
        except ZeroDivisionError:
            if m:
                m -= 1
                continue
            return
        out.append(c)
    return out, m


class _Steps:
    """An iterator over ``items`` with a ``check`` that raises StopIteration at the values in ``stops``."""

    def __init__(self, items, stops=()):
        self.items = list(items)
        self.stops = stops
        self.last = None

    def __next__(self):
        self.last = self.items.pop(0)
        return self.last

    def check(self):
        if self.last in self.stops:
            raise StopIteration


@cases(([1, 2, 3, 4], False), ([1, 2, 3], True), ([4], True))
def while_true_break_in_except_clause_only(items, stop):
    # the only way out of the loop is the clause's ``break``: 3.12+ lays the code after the loop
    # out right after the clause's POP_EXCEPT, inside the loop's range
    it = _Steps(items, stops=(2, 4))
    h = 0
    while True:
        next(it)
        try:
            it.check()
        except StopIteration:
            if stop:
                break
            h = 1
            stop = it.last == 4
    return h


@cases(([1, 2, 3, 9], 9, True, [0]), ([5, 6, 7], 0, True, [0]), ([5, 6, 7, 1, 2], 2, False, [0]))
def while_true_breaks_in_body_and_except_clause(items, a, b, d):
    # preflow-push's discharge: the code after the loop is laid out before the clauses, reached
    # by the body's break and by the clause's (POP_EXCEPT, then a jump to it)
    it = _Steps(items, stops=(5, 6, 7))
    h = 0
    while True:
        v = next(it)
        if v == a:
            break
        try:
            it.check()
        except StopIteration:
            h = h + 1
            if b and h >= 3:
                break
            v = h
    d[0] = h
    return v, d


@cases(([1, 7, 3], 1, 9), ([2, 1, 8, 1, 3], 1, 8), ([-1, 6], 0, 6), ([0], 0, 5))
def while_true_in_while_breaks_from_except_clause(items, s, t):
    # shortest-augmenting-path's search: an inner ``while True`` whose breaks (in the body and in
    # an except clause) land on the outer loop's code laid out between the body and the clauses
    it = _Steps(items, stops=(-1, 0, 1, 2, 3))
    u = s
    done = False
    rounds = 0
    while not done:
        rounds += 1
        while True:
            v = next(it)
            if v > 5:
                u = v
                break
            try:
                it.check()
            except StopIteration:
                if v == 0:
                    return u, rounds
                if v < 0:
                    done = True
                    break
                u = v
                if u != s:
                    break
        if u == t:
            done = True
    return u, rounds


@cases(([1, 2], [5, 6, 7], True), ([1, 2], [5], False), ([], [], True))
def while_true_try_in_for_breaks_to_next_item(pairs, items, sparse):
    # networkx's stochastic_block_model: the try starts at the ``while True`` header, and the
    # clause's break goes straight to the enclosing for loop's next item (read as that loop
    # again and again before)
    edges = iter(items)
    out = []
    for i in pairs:
        if sparse:
            while True:
                try:
                    out.append(next(edges) * i)
                except StopIteration:
                    break
        else:
            out.append(-i)
    return out


@cases(([[3], [1, 2], [2]], {2}, True, True), ([[1], [1], [2, 2]], set(), False, False), ([], set(), True, False),
       ([[5], [6]], {5, 6}, False, True))
def loop_goes_on_after_branches_that_continue(stack, seen, a, b):
    # networkx.readwrite.text.generate_network_text: the code after an if whose branch may continue
    # is where both branches go on, not a copy in each (the copies nest: 2 ** n of them)
    out = []
    while stack:
        node = tuple(stack.pop())
        if node[0] > 1:
            if node in seen and a:
                out.append("again")
                continue
            if node in seen:
                continue
            seen.add(node)
        if b:
            x = 1
        else:
            x = 2
        if node[-1] == 2:
            y = "two"
        else:
            y = "other"
        out.append((node, x, y))
    return out


@cases(([[1, 2], [3]], True, False), ([[1]], False, True), ([], True, True))
def while_body_ending_in_a_for_loop(stack, b, c):
    # the while loop's body ends in a for loop: its exit goes to the while test's copy at the bottom
    out = []
    while stack:
        node = stack.pop()
        if b:
            x = 1
        else:
            x = 2
        if c:
            y = 1
        else:
            y = 2
        for i in node:
            if i > 2:
                stack.append([i - 2])
            out.append((i, x, y))
    return out


@cases(([1, 2, 3], None), ([4, 5], 7), ([6], None), ([], None))
def for_body_that_ends_in_break(a, ta):
    # sympy's simplify_gpgp: the for body ends in break, so its code never goes back to the loop
    # start; on 3.10 and 3.11 the break falls into the while test right after the loop
    elim, tv, mu, coeff = set(), [], 1, 0
    hit = True
    while hit:
        hit = False
        for i, ai in enumerate(a[:-1]):
            if ai in elim:
                continue
            elim.add(ai)
            if not ta:
                ta = len(a)
                mu = 2
            hit = True
            if i == 0:
                coeff = 3
            tx = ai * mu
            if len(a) == 2:
                tx *= 4
            tv.append(tx)
            break
    return tv, coeff, sorted(elim)


@cases(([3, 0, 2, 5],), ([1, 1],), ([],), ([0, 0, 4],))
def while_true_whose_body_starts_with_a_while_whose_if_breaks(items):
    items = list(items)
    log = []
    while True:
        while items and len(log) < 6:
            x = items.pop()
            if x == 0:
                log.append("zero")
                break
            else:
                log.append(x)
        log.append("after")
        if not items or len(log) > 8:
            return log


@cases(([[[None]]],), ([None],), ([[0], 1],))
def while_body_on_the_test_line_rebinds_what_the_test_reads(node):
    # dis.distb, 3.13+: the body on the test's line fuses its store with the test's next load
    # (STORE_FAST_LOAD_FAST of one name), which reads the new value, not the one it stores
    while node[0]: node = node[0]
    return node


@cases((b"ab_c",), (b"",), (b"__",))
def statements_on_one_line_fuse_a_store_with_the_next_load(line):
    # quopri.decode, 3.13+: ``new = new + c; i = i + 1`` stores ``new`` and loads ``i`` in one
    # instruction
    new = b""
    i = 0
    while i < len(line):
        c = line[i:i + 1]
        if c == b"_":
            new = new + b" "; i = i + 1
        else:
            new = new + c; i = i + 1
    return new


@cases((0, [1]), (0, []), (2, [1, 2]), (-2, [0]))
def while_test_with_a_comprehension_and_continue(a, c):
    # 3.12+ inlines the comprehension: the two copies of the test each hold one, read back into
    # code objects of their own that must count as copies (refused on 3.12+ before)
    while a < 1 and [i for i in c if i]:
        a += 1
        if len(c) > 1:
            continue
        c = c[1:]
    return a, c


@cases((0, [1]), (0, []), (1, [0, 2]), (-3, [1]))
def while_test_with_a_comprehension_or_a_counter(a, c):
    n = 0
    while a < 0 and sum([i * 2 for i in c]) or n < 2:
        n += 1
        a += 1
        if not c:
            continue
    return a, n


@cases((1, 2, 3, 0, None), (1, 2, 3, 1, None), (3, 2, 1, 0, None), (1, 2, 3, 0, 0), (0, 5, 9, 0, 0),
       (1, 0, 3, 0, 0))
def while_test_chain_body_ends_in_a_return_laid_out_last(a, b, c, y, flip):
    # a loop whose body never falls off its end keeps its test at the top only; the body's last
    # statement (a return) is laid out after the continue that ends the else branch, outside the
    # loop's blocks: it is the body's, not a second place breaks go (refused before)
    rounds = 0
    while a < b <= c:
        rounds += 1
        if y:
            pass
        elif not (b if a else -2):
            pass
        else:
            if flip is None and a < b <= c and rounds > 2:
                break
            if flip is not None:
                b -= 1
            continue
        return not c, rounds
    return a, b, c, rounds


@cases((True, 0, 0, 0, 0), (False, -1, 1, 0, 0), (False, 0, 0, 1, 0), (False, 0, 0, 0, 1), (False, -1, 0, 1, 2))
def while_after_constant_arm_test_breaks_from_code_outside_its_blocks(a, w, y, b, c):
    # the body's code after ``continue`` (a test that breaks or returns) reaches no jump back:
    # it lies outside the loop's blocks, and its ``break`` goes where the test exits
    # (refused before: "breaks leave the loop to different places")
    n = 0
    if a:
        pass
    else:
        while w < 0 and -(y and 2) or w < 1:
            n += 1
            w += 1
            if b and n < 3:
                if c >= y:
                    continue
            elif y:
                break
            else:
                b = 1
                break
            return 7, n
    return 9, n, b


@cases((0, 5, lambda: 0), (0, 0, lambda: 0), (2, 0, lambda: 1), (0, 1, lambda: 1), (3, 3, lambda: 0))
def while_test_with_a_constant_arm_that_enters_the_body(w, c, g):
    # the true constant arm folds the test of ``g()`` into ``POP_JUMP_IF_FALSE L; JUMP body`` at
    # the top, where the copy at the bottom has one ``POP_JUMP_IF_TRUE body`` (3.12+; refused
    # before: "unrecognised while-loop test")
    n = 0
    while w < 3 and (-5 if g() else 3 < -2 <= c) or w < 1:
        n += 1
        w += 1
        if n > 4:
            break
    return n, w


@cases((0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 1, 4), (1, 0, 4), (-1, 2, 4))
def while_whose_body_never_goes_back_breaks_from_an_elif(w, x, a):
    # no path reaches the body's end, so there is no jump back: the loop is laid out as an
    # ``if``, and its ``break`` jumps from inside the body past code after the inner ``if``
    # (refused before: "the recompiled code takes other paths")
    b = 0
    while w > 0 or w < -5:
        if not x:
            a = 4
        elif not 4 - a:
            break
        b += 3
        return b, a
    if a > 3:
        b -= 1
    return b, a


@cases((0, [], 1), (1, [], 1), (1, [1, 2], 1), (1, [3], 0), (2, [5, 6], 2), (3, [0], 5))
def once_while_with_else_inside_a_for_loop(n, xs, k):
    # the inner loop's body never goes back to its test (it ends in ``break``), inside a loop
    # that goes on after it: its ``else`` runs when the test is false, a ``break`` skips it
    out = []
    for i in range(n):
        while k > i:
            if xs and xs[0] > 2:
                out.append(xs[0])
            elif not xs:
                break
            for x in xs:
                out.append(x * k)
            break
        else:
            out.append(i)
        out.append(k)
    return out


@cases(([], 0), ([0], 0), ([0], 5), ([3, 4], 0), ([2], 1))
def return_of_an_or_with_a_constant_tested_arm_inside_a_for_loop(xs, c):
    # the ``return`` pops the loop's iterator (``SWAP 2; POP_TOP``); 3.12+ copy that whole tail
    # into the right operand's branch (refused before: "value-position and/or with statements
    # inside")
    for x in xs:
        return x or (c if -1 else 0)
    return None


@cases((5, 1, 1, []), (0, 1, 1, []), (0, 1, 0, []), (0, 0, 1, []), (2, 1, 0, [7]))
def return_of_a_conditional_expression_in_a_while_inside_try_finally(n, x, a, log):
    # the two values meet at the return, laid out after the loop with the finally body before it:
    # the jumps there are no ``break`` (refused before: "return value not found")
    try:
        while n < 4:
            n += 1
            if x:
                return n if a else -n
    finally:
        log.append(n)
    return log


@cases((1, 0, 1, 1, [1, 2]), (0, 0, 0, 0, [1]), (2, 1, 0, 0, [3, 4]), (0, 1, 1, 0, [1, 2]), (3, 0, 0, 1, [1]),
       (1, 0, 2, 0, [5]))
def long_body_continue_through_a_conditional_test(a, b, c, y, items):
    # a body so long that the jump back to the loop's header needs an EXTENDED_ARG prefix: 3.12+
    # points the conditional expression's jump at that prefix, and the conditional jump before
    # the jump back (read as one inverted jump) must not swallow the jump that lands there
    total = 0
    for i in items:
        total += i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a
        total += i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a
        total += i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a
        total += i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a
        total += i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a
        total += i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a
        total += i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a
        total += i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a + i + a
        if b:
            if a:
                break
        elif y if c else max(c, 1):
            continue
        a -= c
    return a, total



@cases((1, 2, 0), (1, 1, 3), (0, 3, 1), (0, 3, 0), (0, 0, 2), (2, 0, 0))
def while_true_whose_tests_break_or_fall_into_a_return_laid_out_last(a, b, c):
    # the tests of ``if a: ... if b > 1: break`` never go back to the loop, and their other way
    # falls into a return of a conditional expression laid out after the loop's blocks: that
    # return is the body's own code, not a second place the breaks land
    n = 0
    while True:
        while c > n:
            n += 1
        if a:
            if b:
                n += 10
            if b > 1:
                break
        elif b > n:
            if c:
                n += 1
                continue
        return a if c else b
    return a, b, c, n


@cases((1, 5, 3), (4, 2, 3), (0, 9, 0), (1, 2, 5), (2, 3, 1))
def while_test_and_then_a_chain_ending_in_a_conditional_expression(a, b, c):
    # ``c and a < b <= (c if n else 3)``: the chain after the ``and`` is folded into the test
    # with its operand's conditional expression, as it is when it is the whole test
    n = 0
    while c and a < b <= (c if n else 3):
        n += 1
        c -= 1
    return n, c


@cases(([0, 1, 1], [0, 0, 1], 0), ([0, 1, 1], [0, 0, 1], 1), ([0, 1], [0, 1, 1], 1), ([0], [], 0),
       ([0, 1], [0, 1, 1], ""))
def inner_while_whose_continue_jumps_to_where_the_outer_loop_goes_back(a, b, c):
    # the compiler sends the ``continue`` to the inner loop's test at the top, which is also where
    # each round of the outer loop starts; the pass-only branches reach the copy of the test at
    # the bottom instead
    rounds = 0
    while a.pop():
        while b.pop():
            if c:
                pass
            elif a:
                if b:
                    continue
        rounds += 1
    return a, b, rounds



@cases(([], 5, 0, 0), ([1], 5, 0, 1), ([], 1, 1, 0), ([], 1, 0, 2), ([2], 0, 0, 0), ([], 2, 2, 0))
def while_in_a_loop_else_whose_exit_jumps_back_before_it(items, w, b, c):
    # the code after the for statement is laid out before the while loop (3.12+), whose test
    # jumps back to it; the ``return c`` laid out after the loop is the body's, not a break (read
    # as one, the loop's exit returned ``c``, and the flow check, naming no computed return, let
    # it through)
    for j in items:
        break
    else:
        try:
            return 1 // c
        except ArithmeticError:
            pass
        while w < 3:
            if b:
                b -= 1
                w += 1
                continue
            return c
    return (items, w, b, c)


def _divide_or_fail(k):
    return 1 // k


@cases((0, 0, 0), (0, 1, 0), (1, 1, 0), (0, 1, 2), (1, 0, 5), (2, 1, 1))
def while_whose_test_has_a_false_and_in_an_except_clause(k, a, c):
    # ``w < 1 and False or w < 1``: the compiler leaves a jump to the next instruction for the
    # ``and``; the condition folded the first time it was read was remembered as folding nothing,
    # so reading it again (after the ``if`` with a ``return`` inside, in an except clause) refused
    w = k
    log = []
    try:
        _divide_or_fail(k)
    except ArithmeticError:
        if c:
            if a:
                return 1
            log.append(c)
        while w < 1 and False or w < 1:
            w += 1
            log.append(w)
    return w, log


@cases((0, 0), (1, 0), (1, 2), (0, 3), (5, 1))
def once_while_breaking_from_an_if_nested_in_an_if(a, b):
    # the loop never goes back to its test, so it is laid out as ``if w < 3:``; the ``break``
    # inside two ``if`` statements jumps to the code after it, skipping ``return a`` (read as an
    # ``if`` that fell off into ``return a``, which the flow check refused)
    w = 0
    while w < 3:
        w += 1
        if a:
            if b:
                break
            b = 1
        return a
    return b


@cases((0, 0, 0), (-3, 0, 1), (-3, 1, 0), (0, 1, 1), (5, 2, 2), (-1, [], 3))
def once_while_under_a_negated_test_breaking_from_a_nested_if(a, b, c):
    # the enclosing ``if not ...:`` and the loop's test fold into one condition that jumps past
    # the loop when true: the loop's body is the false branch
    if not -2 < a:
        while a < 3 and (not (-7)) or a < 1:
            if c and b != []:
                if b:
                    break
                b = 1
            return a, b
    return a, b, c


@cases((0, 0, 0, 0), (0, 5, 1, 0), (0, 5, 1, 1), (0, 0, 1, 1), (1, 0, 1, 0), (5, 2, 3, 1), (2, 0, 0, 0))
def once_while_in_an_if_with_an_else_breaking_from_a_nested_if(a, b, c, x):
    # the loop never goes back to its test; its ``break``, two ``if`` statements deep, goes to
    # where the enclosing ``if``/``else`` ends (straight there on 3.12+, not through the test's
    # exit): the test's false branch ends the enclosing statement ("the branches end in
    # different places")
    if not c:
        while a < 4:
            if (7 == b) ^ 3:
                if not -x:
                    break
            else:
                b += 1
            return -(c and 4)
    else:
        x = 5
    return (a, b, c, x)


@cases((1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 0, 0), (0, 2, 3))
def once_while_in_an_except_clause_breaking_from_an_elif_chain(k, b, c):
    # the loop never goes back to its test; the chain's last branch breaks to the clause's last
    # statement: its code ran on into the clause's exit where the other branches go on inside
    # the clause (the statement after the chain then ran after it)
    try:
        k = 1 // k
    except ZeroDivisionError:
        w = 0
        while w < 1:
            w += 1
            if b:
                b = 1
            elif c:
                c = 2
            else:
                break
            c |= 1
            return -1
        b = -c
    return (k, b, c)


@cases((0, 0), (1, 0), (0, 1), (2, 3))
def once_while_in_a_with_body_breaking_from_an_elif_chain(b, c):
    # the same in a with body, whose exit calls ``__exit__``
    log = []
    with _Recorder(log):
        w = 0
        while w < 1:
            w += 1
            if b:
                log.append("b")
            elif c:
                log.append("c")
            else:
                break
            log.append("on")
            return log
        log.append("after")
    return log


@cases((1, 0, 0, 0), (0, 1, 1, 0), (0, 0, 1, 0), (0, 0, 0, 1), (0, 2, 0, 0), (0, 0, 0, 0))
def once_while_in_an_except_clause_breaking_past_a_constant_test(k, a, b, c):
    # the break sits in the else branch of an ``elif`` chain under a test the compiler folded
    # (``if -4: break``); a reading of the ``elif`` test as the loop put the code after the loop
    # in its body
    try:
        k = 1 // k
    except ZeroDivisionError:
        w = 0
        while w < 1:
            w += 1
            if a:
                b |= 1
            elif not (b | 6):
                pass
            elif not c:
                c = -b
            else:
                if -4:
                    break
            c |= True
            return -c
        b = b + 10
    return (k, a, b, c)


class _Recorder:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.log.append("exit")
        return False


@cases((0, 1, 0, []), (0, 1, 0, [1, 2]), (1, 0, 5, [3]), (2, 2, 1, [0, 1]), (1, 1, 1, []))
def for_else_whose_try_except_finally_body_breaks(k, a, b, xs):
    # 3.12+ lay the code after the loop between its else clause and the except clauses, so the
    # break's jump there (after the finally body's copy) read as staying in the loop ("try body
    # leaves at different places")
    log = []
    for x in xs:
        try:
            log.append(x // k)
            if a:
                break
        except ZeroDivisionError:
            b += 1
        finally:
            log.append("f")
        a = x
    else:
        return ("else", log, b)
    return (a, b, log)


@cases(([1, 0, 0], 1), ([0, 1, 0, 0], 0), ([0, 0], 1), ([1, 1, 1, 0, 0, 0], 1), ([1, 1, 0, 1, 0], 0))
def while_and_or_test_over_a_constant_continue(flags, b):
    # the body is ``continue`` alone (the test folded away): a NOP, then the jump back. 3.12+
    # fold that jump into the test's last jump; the ``and``'s jump into the body, to the NOP,
    # was sent past the loop instead of back to its test
    it = iter(flags + [0, 0])
    while next(it) and b or next(it):
        if 3:
            continue
    return list(it)


@cases((0, 0, 0, 0), (1, 1, 1, 1), (1, 1, 1, 0), (2, 1, 0, 3), (3, 0, 1, 2))
def once_while_breaking_three_ifs_deep_before_a_copied_return(a, b, c, x):
    # the loop never goes back to its test; the break's sibling is a copy of the return after
    # the ifs, so the branches of ``if b:`` end at two places (where the loop ends, where the ifs
    # meet) and the break was read as falling into the return ("takes other paths")
    w = 0
    while w < 3:
        w += 1
        if c:
            if b:
                if x:
                    break
            else:
                a = 2
        return x * a
    return (a, b, c, x)



@cases((0, 0, 0, 0, 0, 0), (2, 3, 0, 0, 0, 1), (1, 3, 0, 0, 1, 1), (1, 3, 0, 0, 0, 1), (1, 5, 0, 0, 1, 1),
       (1, 3, 0, 5, 1, 1), (4, 3, 0, 0, 0, 3), (3, 1, 2, 0, 1, 2))
def while_body_returning_after_a_branch_that_computes_a_chained_comparison(a, b, c, w, x, y):
    # the body's returns come after ifs whose other ways are ``continue`` and ``break``: laid out
    # after the jump back, entered only from the loop. The way to the last one holds a chained
    # comparison, blocks that part and meet again; the search for code that only the loop enters
    # and that ends the function took in a block only once every way into it was known, never
    # got past the place they meet, and read the return as a second place the breaks land
    if not a:
        pass
    else:
        while w < 4 and c < y <= b or w < 1:
            w += 1
            if not a % 2:
                y = 2 < a <= y
            else:
                if x:
                    if 2 < b <= 4:
                        break
                else:
                    continue
                return ("inner", w, y)
            y = -y
            return ("after the if", w, y)
    return (a, b, c, w, x, y)


@cases((0, 0, 0, 0), (1, 1, 0, 0), (3, 0, 0, -2), (1, 0, 1, 0), (1, 0, 0, 0), (1, 0, 0, 5), (1, 2, 3, -1),
       (3, 0, 1, 0))
def while_else_whose_test_negates_a_chained_comparison_and_whose_body_always_leaves(a, b, c, w):
    # the body never runs off its end, so the test is not copied to the bottom: the while
    # statement's own test blocks are found by their line. The chained comparison's value
    # holds a block that only drops its kept operand (``SWAP; POP_TOP``) and a test that keeps
    # its value (``JUMP_IF_FALSE_OR_POP``): neither was taken for part of the test, the loop was
    # read as ``while True``, and its two ways out as two places breaks land
    if not a:
        pass
    else:
        while w < 0 and -(a < b <= c) or w < 1:
            w += 1
            if b:
                pass
            else:
                if a > 2:
                    continue
                if c:
                    break
            return ("returned", w)
        else:
            c *= 3
    return (a, b, c, w)


@cases(([1, 2], 0, 5), ([1], 1, 0), ([], 0, 0), ([1, 2, 3], 2, -1))
def while_test_with_a_computed_conditional_value_in_a_for_body_that_returns(xs, b, w):
    # the for body never goes back to its FOR_ITER: the conditional expression inside the while
    # test meets in no block of the loop's own, but in the whole code's
    for x in xs:
        while -(b if b else 1) + w > 0:
            w -= 1
        else:
            return ("else", x, w)
    return ("none", w)


@cases(([1, 2], 0, 0), ([1, 2], 1, 0), ([1], 1, 2), ([], 0, 0), ([1, 2, 3], 0, 5))
def while_test_with_a_constant_arm_ending_a_for_body(xs, b, w):
    # the test's two ways out both go to the for loop's next round: one straight, one through
    # a jump there (3.11 lays the jump after the loop's exit)
    log = []
    for x in xs:
        while w < 3 and (b if b else 1):
            w += 1
            log.append(x)
    return log, w


@cases((0, [1], 1, 1, 1), (0, [1, 2], 1, 1, 0), (1, [1], 1, 0, 0), (0, [1, 2], 1, 0, 0), (0, [1], 0, 0, 1),
       (0, [1, 2], 0, 0, 0), (0, [], 1, 1, 1))
def while_else_in_a_for_loop_whose_body_breaks_or_returns(a, b, c, x, y):
    # the while never loops (laid out as an ``if``); its body's return pops the for loop's
    # iterator, which the else clause's branch that goes on to the next round still holds: the
    # stacks of the two branches differ, and only the one that goes on counts (refused before:
    # "branches leave different stacks")
    for j in b:
        while c:
            if x:
                if y:
                    break
            elif a:
                break
            return (1, j)
        else:
            if y:
                break
    return b


@cases((0, 0), (1, 0), (1, 1), (0, 1))
def while_else_returning_whose_body_breaks_from_try_finally_and_returns(w, c):
    # the body never goes back to the test (laid out as an ``if``); the else clause returns, so
    # no code of it runs into the place the break lands, which is laid out right after it
    # (refused before: "try body leaves at different places")
    log = []
    while w:
        try:
            if c:
                break
        finally:
            log.append("finally")
        return ("body", log)
    else:
        return ("else", log)
    log.append("after")     # (more than the compilers that copy returning code copy)
    return ("after", log)


@cases((0, 0, 0, 0), (1, 0, 1, 0), (0, 0, 1, 1), (0, 1, 1, 0), (0, 0, 1, 0), (0, 1, 1, 1))
def while_else_returning_whose_body_breaks_from_two_elifs_and_returns(a, b, c, x):
    # as above without the try: one branch of the elif chain goes on to the body's return, two
    # break, and the else clause returns (refused before: "the branches end in different places")
    y = 0
    while c:
        if a:
            c = 1
        elif x:
            y = 1
            break
        elif b:
            break
        return (3, c)
    else:
        return (4, y)
    y += 10     # (more than the compilers that copy returning code copy)
    return (a, b, y)


@cases((0, 0, 0), (0, 1, 1), (1, 1, 1), (0, 0, 1), (2, 0, 1))
def while_else_returning_whose_body_breaks_from_an_except_clause(a, b, w):
    # the except clause that breaks is laid out between the else clause and the code after the
    # loop on 3.12+ (handlers after the code they protect), and its other way out runs a copy of
    # the body's return (refused before: "except clauses continue at different places")
    x = -1
    while w:
        try:
            x = 1 // a
        except ZeroDivisionError:
            if b:
                break
        return ("body", -x)
    else:
        return ("else", x)
    x += 10     # (more than the compilers that copy returning code copy)
    return ("after", x)


@cases((0, 0, 0), (0, 1, 1), (1, 1, 1), (0, 0, 1), (2, 0, 1), ("s", 1, 1))
def while_else_returning_after_a_try_whose_handler_is_laid_out_before_the_code_after_it(a, b, w):
    # as above, after a try statement: 3.12+ lay its handler out after the loop's else clause
    # too, code reached only by raising between the clause and where the break lands
    try:
        x = -a
    except TypeError:
        x = 0
    while w:
        try:
            x = 1 // a
        except ZeroDivisionError:
            if b:
                break
        return ("body", -x)
    else:
        return ("else", x)
    x += 10     # (more than the compilers that copy returning code copy)
    return ("after", x)


@cases((0, 0, 0), (2, 1, 0), (2, 0, 0), (2, 0, 1), (-1, 0, 1), (0, 1, 1))
def while_except_clause_breaking_to_a_copied_return_beside_code_after_the_try(a, b, c):
    # the loop goes on after the try statement and its else clause returns, so only the break
    # reaches the code after the loop: small, it is copied into the clause after its POP_EXCEPT
    # and the original dropped (refused before: "except clauses continue at different places")
    y = 0
    while a:
        a -= 1
        try:
            y = a // c
        except ZeroDivisionError:
            if b:
                break
            y = 2
        else:
            return ("else", y)
        if y:
            continue
    else:
        return ("done", a)
    return (a, b, y)


@cases((0, 0, 0), (2, 1, 0), (2, 0, 0), (2, 0, 1), (1, 2, 0))
def while_except_clause_breaking_to_code_only_the_break_reaches(a, b, c):
    # as above with more code after the loop than the compilers copy: a jump from the clause
    # to code that only it reaches and that ends the function is the break, not the clause's
    # own code (which would run before its POP_EXCEPT)
    y = 0
    while a:
        a -= 1
        try:
            y = a // c
        except ZeroDivisionError:
            if b:
                break
            y = 2
        else:
            return ("else", y)
        if y:
            continue
    else:
        return ("done", a)
    while b:
        b -= 1
        y += b
    return (a, b, y)


@cases((0, 0, 0), (2, 1, 0), (2, 0, 0), (2, 0, 1), (1, 1, 0))
def while_named_except_clause_breaking_to_a_copied_return(a, b, c):
    # the same break from a clause that binds a name: its way out unbinds it first
    y = 0
    while a:
        a -= 1
        try:
            y = a // c
        except ZeroDivisionError as e:
            if b:
                break
            y = str(e)[:3]
        else:
            return ("else", y)
        if y:
            continue
    else:
        return ("done", a)
    return (a, b, y)


@cases(([], 0, 0), ([1, 2], 1, 0), ([1, 2], 0, 0), ([3], 0, 1), ([0, 2], 0, 2))
def for_except_clause_breaking_to_a_copied_return(items, b, c):
    # a for loop: the break also pops the iterator on its way out of the clause
    y = 0
    for a in items:
        try:
            y = a // c
        except ZeroDivisionError:
            if b:
                break
            y = 2
        else:
            return ("else", y)
        if y:
            continue
        y = -1
    else:
        return ("done", y)
    return (b, y)


@cases((0, 0, 0), (0, 1, 2), (5, 2, 1), (1, 1, 0), (2, 0, "x"))
def while_right_after_a_try_whose_except_clause_runs_off_its_end(w, b, c):
    # 3.12+ lay the clause out after the loop and jump back to its head, which is no ``continue``:
    # the loop is the code after the try statement (read before into its else clause as well)
    try:
        if c > 1:
            return -c
    except TypeError:
        pass
    while w < 3:
        if b:
            b -= 1
            w += 1
            continue
        return c
    return (w, b, c)


@cases(([], 1), ([1, 20, 3], 2), ([0, 5], 0), ([4, 2], 5))
def for_right_after_a_try_whose_except_clause_runs_off_its_end(items, c):
    out = []
    try:
        n = 10 // c
    except ZeroDivisionError:
        n = 0
    for x in items:
        if x > n:
            continue
        out.append(x)
    return out, n


@cases(([], 1), ([1, 0, 3], 7), ([0], 2), ([2, 5], 0))
def while_true_right_after_a_try_in_a_for_loop(xs, c):
    out = []
    for x in xs:
        try:
            y = 10 // x
        except ZeroDivisionError:
            y = c
        while True:
            if y > 3:
                y -= 3
                continue
            break
        out.append(y)
    return out


@cases((0, 0, 0, 0, 0), (0, 0, 1, 0, 1), (0, 0, 0, 5, 0), (0, 0, 0, -1, 1), (0, 1, 0, 0, 0), (2, 0, 0, 0, 0),
       (0, 0, 0, 0, 1))
def except_clause_in_a_while_whose_branches_meet_at_a_break_or_return(n, k, x, m, p):
    # the branches of ``if x`` meet at ``if p: break`` then a return: code of the loop's body that
    # never goes back to the test, so none of the loop's blocks (read before as a copy in each
    # branch; with more tests around, the flow check counted the copies' tests twice and refused)
    w = 0
    while w < 2 and (2 if not n else n * 2) or w < 1:
        w += 1
        try:
            r = 10 // n
        except ZeroDivisionError:
            if not k:
                if x:
                    pass
                else:
                    if m > w:
                        continue
                    if m < 0:
                        continue
                if p:
                    break
            return 4, w
        else:
            return r, w
    return n, k, x, m, p, w


@cases(([], 0, 0, 0), ([0, 1], 1, 0, 1), ([2, 3], 0, 5, 0), ([2], 0, 1, 1), ([1, 0], 0, -1, 0))
def if_chain_meeting_at_a_return_inside_a_for_loop(xs, x, m, p):
    out = []
    for v in xs:
        if v:
            if x:
                out.append(1)
            else:
                if m > v:
                    continue
                if m < 0:
                    continue
            if p:
                out.append(2)
            return out, v
        out.append(v)
    return out


class _Item:
    def __init__(self, x, y, z, w):
        self.x, self.y, self.z, self.w = x, y, z, w


@cases(([],), ([_Item(1, 1, 0, 0)],), ([_Item(0, 0, 1, 0)],), ([_Item(0, 0, 0, 1)],),
       ([_Item(1, 0, 0, 0), _Item(0, 0, 0, 0), _Item(1, 1, 1, 1)],))
def for_whose_elif_chain_breaks_three_ways_to_a_copied_return(items):
    # (from sympy's gate_simp) 3.12+ copy the return after the loop into each ``break`` and share
    # the copies: that shared return is the code after the loop, no place where the body's
    # branches meet
    c = 0
    for i in items:
        if i.x and i.y:
            c = 1
            break
        elif i.z:
            break
        elif i.w:
            break
    return c


@cases(([], 0), ([1], 3), ([5], 3), ([2, 9], 4), ([0], 2), ([], 5))
def while_true_whose_first_test_returns_then_a_for_that_returns_and_a_try(xs, n):
    # (from hypothesis's DataTree.generate_novel_prefix) the loop's test at the top lays its exit
    # (the first ``return``) out before the body: the nested ``for``'s return, laid out after that
    # exit, is the body's code, not code after the loop (refused before: "stack underflow")
    out = []
    while True:
        if n <= 0:
            return out
        for x in xs:
            if x > n:
                return x
        try:
            out.append(10 // (n - 2))
        except ZeroDivisionError:
            out.append(-1)
        n -= 1


@cases(([], 0), ([1], 3), ([5], 3), ([2, 9], 4), ([0], 2))
def while_true_whose_first_test_raises_then_a_for_that_returns_and_a_try(xs, n):
    # as above, the loop's first test leaving by ``raise`` (``assert``)
    out = []
    while True:
        if n <= 0:
            raise LookupError(len(out))
        for x in xs:
            if x > n:
                return x
        try:
            out.append(10 // (n - 2))
        except ZeroDivisionError:
            out.append(-1)
        n -= 1


@cases(([], 0, 0, 0), ([1], 1, 0, 0), ([1, 2], 1, 1, 0), ([1, 2], 1, 1, 1), ([0, 5], 1, 0, 0), ([3, 4], 0, 0, 1))
def for_try_whose_nested_break_jumps_to_a_shared_copy_of_the_return_after_the_loop(xs, p, q, r):
    # 3.12+ copy the return after the loop into each ``break`` and share the copies: a ``break``
    # that pops the iterator and jumps to another one's copy is a ``break`` too, no way out of the
    # try statement (refused before: "one branch leaves the protected region, the other goes on in it")
    out = []
    for x in xs:
        try:
            if p:
                if q:
                    if r:
                        break
                    continue
                else:
                    out.append(10 // x)
            out.append(x)
            break
        except ZeroDivisionError:
            pass
    return out


@cases(([1, 2], 0, 0, 0), ([1, 2], 1, 0, 0), ([1, 2], 0, 1, 0), ([1, 2], 0, 1, 1), ([], 0, 1, 1), ([0, 1], 0, 1, 2))
def for_whose_else_guards_a_store_with_continues_before_a_return(xs, a, y, x):
    # 3.12+: the tests' jumps back to the loop's header are ``continue``s, not the end of an ``if``
    # that ends the loop body: its body runs on into the ``return`` after the if statement (read
    # before as ``if y and x: c = i``, which the flow check refused)
    c = 0
    for i in xs:
        if a:
            pass
        else:
            if not y:
                continue
            if not (x and 3):
                continue
            c = i
        return -(not x), c
    return None, c


@cases(([5, 3, 8, 1], 0, 3), ([1, 2, 3], 0, 2), ([9], 0, 0), ([4, 6, 2, 7, 1], 1, 4))
def continue_then_break_ending_a_while_body(heap, start, pos):
    # heapq's _siftdown: the body's jump back comes right before the break, as written
    heap = list(heap)
    item = heap[pos]
    while pos > start:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        if item < parent:
            heap[pos] = parent
            pos = parent_pos
            continue
        break
    heap[pos] = item
    return heap


@cases((["ab", "cde", "f"], 5), (["abcdef"], 3), ([], 4), (["a", "b", "c"], 10))
def else_clause_that_breaks_ending_a_for_body(chunks, width):
    # textwrap's _wrap_chunks: the break is the else clause of the if that ends the body
    line, size = [], 0
    for chunk in chunks:
        if size + len(chunk) <= width:
            line.append(chunk)
            size += len(chunk)
        else:
            break
    return line, size


class _Tokens:
    """A token stream: ``in_range(k)`` says whether k more tokens follow the current one."""

    def __init__(self, tokens):
        self.tokens, self.at = tokens, 0

    def in_range(self, k):
        return self.at + k < len(self.tokens)

    def token(self, k=0):
        return self.tokens[self.at + k]

    def next(self):
        self.at += 1
        return self.tokens[self.at - 1]


@cases((["x", "y", ".", "m"],), (["x", "."],), (["x"],), (["x", "y", "1"],), (["1"],))
def loop_test_written_over_lines_raising_in_the_body(tokens):
    # (nltk's LogicParser.handle_lambda) ``while True: if not a or (b and not c): raise ...``,
    # the condition over several lines: only its first test is on the line the loop starts on.
    # It was read as ``while a: ... else: raise``, the rest of the condition a ``break`` that
    # skipped the raise (wrong code, refused by the flow check)
    stream = _Tokens(tokens)
    names = [stream.next()]
    while True:
        if not stream.in_range(0) or (
            stream.token() == "." and not stream.in_range(1)
        ):
            raise ValueError("expression expected", stream.at)
        if not stream.token().isalpha():
            break
        names.append(stream.next())
    return names, stream.at
