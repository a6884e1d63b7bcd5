"""The flow check: equivalent source passes, each kind of wrong decompilation it exists for is caught."""

from __future__ import annotations

import sys
import textwrap

import pytest

import depyf
from depyf.decompiler import DecompilationError
from depyf.decompiler.flowcheck import differences
from depyf.decompiler.flowcheck.flow import Flow


def _code(source: str):
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "<flowcheck-test>", "exec"), namespace)
    return next(v for k, v in namespace.items() if k == "f").__code__


def _differ(original: str, other: str) -> list[str]:
    return differences(_code(original), _code(other))


def test_layout_changes_that_keep_behaviour_pass():
    # an inverted test with swapped branches, `not in` spelled two ways, a tuple assignment split
    assert not _differ("""
        def f(a, b):
            if a not in b:
                x, y = g(a), 1
            else:
                x, y = 2, h(b)
            return x + y
    """, """
        def f(a, b):
            if not a in b:
                x = g(a)
                y = 1
                return x + y
            y = h(b)
            x = 2
            return x + y
    """)


def test_an_operator_on_a_constant_a_constant_test_carries_is_folded():
    # ``(9 or 2) or -y`` keeps a test of the constant 9 whose jump lands on the division itself;
    # ``9 or -y`` compiles to no test at all: both divide two constants and observe nothing
    assert not _differ("""
        def f(y):
            return True // ((9 or 2) or -y)
    """, """
        def f(y):
            return True // (9 or -y)
    """)


def test_a_lost_break_is_caught():
    # zipfile.ZipFile.__init__ on 3.12: the try body's break went missing, the loop never ended
    original = """
        def f(m):
            while True:
                try:
                    x = open(m)
                except OSError:
                    continue
                break
            return use(x)
    """
    assert _differ(original, original.replace("                break\n", ""))


def test_a_value_evaluated_twice_is_caught():
    # ``i, j = x = f()`` once decompiled into two calls of f
    assert _differ("""
        def f(s):
            i, j = x = s.m()
            return i, j, x
    """, """
        def f(s):
            i, j = s.m()
            x = s.m()
            return i, j, x
    """)


def test_evaluation_order_is_checked():
    assert _differ("""
        def f(self):
            mu, sigma = self.mu, self.sigma
            return mu, sigma
    """, """
        def f(self):
            sigma, mu = self.sigma, self.mu
            return mu, sigma
    """)


def test_swapped_branches_are_caught():
    assert _differ("""
        def f(a, o):
            if a > 0:
                return o.g(a)
            return o.h(a)
    """, """
        def f(a, o):
            if a > 0:
                return o.h(a)
            return o.g(a)
    """)


def test_nested_code_is_compared():
    assert _differ("""
        def f(xs):
            return [g(x) for x in xs if x]
    """, """
        def f(xs):
            return [g(x) for x in xs if not x]
    """)


def test_decompile_refuses_source_whose_flow_differs(monkeypatch):
    def sample(items):
        total = 0
        for item in items:
            if item:
                total += g(item)
        return total

    assert "for item in items" in depyf.decompile(sample, verify=True)
    import depyf.decompiler.api as api

    monkeypatch.setattr(api, "flow_differences", lambda original, new: ["sample: other paths (test)"])
    with pytest.raises(DecompilationError, match="would run differently"):
        depyf.decompile(sample, verify=True)
    assert "for item in items" in depyf.decompile(sample, verify=False)
    with pytest.raises(DecompilationError, match="would run differently"):
        depyf.recompile(sample.__code__, verify=True)


def g(x):
    return x


def test_a_comprehension_code_object_alone_still_decompiles():
    def outer(xs):
        return sum(x * 2 for x in xs if x)

    genexpr = next(c for c in outer.__code__.co_consts if hasattr(c, "co_code"))
    source = depyf.decompile(genexpr)
    assert "x * 2" in source and "for x in" in source


def test_a_lost_nonlocal_declaration_is_caught():
    # ``nonlocal v; del v`` printed without its declaration: the nested function deletes a local
    # of its own, and the outer ``v`` is no longer a cell
    problems = _differ("""
        def f(n):
            v = n
            def drop():
                nonlocal v
                del v
            drop()
            return v
    """, """
        def f(n):
            v = n
            def drop():
                del v
            drop()
            return v
    """)
    assert any("'v' is bound differently" in p and "del deref" in p and "del fast" in p for p in problems)
    assert any(p.split(":")[0].endswith("drop") for p in problems)   # (3.10 has no qualified names)


def test_a_closure_that_loses_a_cell_is_caught():
    # ``7 or c`` compiles to the constant alone, but c stays free in g (and a cell of f): a
    # decompiled ``7 + k`` without a never-run read of c gives g another closure
    original = """
        def f(c):
            def g(k):
                return (7 or c) + k
            return g
    """
    problems = _differ(original, original.replace("(7 or c)", "7"))
    assert any("other free variables" in p for p in problems)
    assert any("other cell variables" in p for p in problems)
    assert not _differ(original, original.replace("return (7 or c) + k", "if False:\n"
                                                   "                    (c,)\n"
                                                   "                return 7 + k"))


def test_a_lost_global_declaration_is_caught():
    problems = _differ("""
        def f(n):
            global COUNT
            COUNT = n
    """, """
        def f(n):
            COUNT = n
    """)
    assert (
        problems
        and "'COUNT' is bound differently (original: store global; recompiled: store fast)" in problems[0]
    )


def test_a_store_in_code_that_never_runs_only_needs_its_scope_kept():
    # the compiler keeps the handler of an empty try body; the decompiler leaves it out. Its store
    # never runs: dropping it is fine where the name stays a local (a parameter) ...
    def kept(a, c):
        try:
            pass
        except ZeroDivisionError:
            c = 1
        return a + c

    assert depyf.decompile(kept)
    # ... and refused where the store alone made the name local (``g`` would read a global)
    problems = _differ("""
        def f(a):
            try:
                pass
            except ZeroDivisionError:
                g = 1
            return g
    """, """
        def f(a):
            return g
    """)
    assert problems and "'g' is bound in code that never runs (fast)" in problems[0]


def test_a_split_tuple_assignment_that_reorders_calls_is_caught():
    # ``x[f()], x[g()] = h(), k()`` evaluates h, k, then f, g: as two assignments f runs before k
    problems = _differ("""
        def f(x, f, g, h, k):
            x[f()], x[g()] = h(), k()
    """, """
        def f(x, f, g, h, k):
            x[f()] = h()
            x[g()] = k()
    """)
    assert problems and "CALL:h" in problems[0] and "CALL:k" in problems[0]


def test_a_call_made_where_the_original_makes_another_call_to_the_same_callee_is_caught():
    # a loop whose body ends in ``break`` where the original goes back to the test: every call
    # is to ``c`` or ``a``, so only the arguments tell ``c(2) -> c(3)`` from ``c(2) -> a()``
    problems = _differ("""
        def f(a, b, c):
            while True:
                while a():
                    if b():
                        c(1)
                        break
                    c(2)
                c(3)
    """, """
        def f(a, b, c):
            while True:
                while a():
                    if b():
                        c(1)
                        break
                    c(2)
                    break
                c(3)
    """)
    assert problems and "c(int:2)" in problems[0]


def test_a_branch_read_into_the_other_one_is_caught_by_the_call_it_makes():
    # both branches start by loading ``out.append``: the call's arguments name the load too
    problems = _differ("""
        def f(x, out):
            if x == 1:
                out.append('one')
            elif x == 2:
                out.append('two')
            out.append('end')
    """, """
        def f(x, out):
            if x == 1:
                out.append('one')
            elif not x == 2:
                out.append('two')
            out.append('end')
    """)
    assert problems and "append" in problems[0] and "'two'" in problems[0]


def test_what_a_return_returns_is_compared_where_every_return_returns_a_name_or_a_constant():
    # ``return out`` lost (falling off the end returns None), and two constant returns swapped
    assert _differ("""
        def f(xs, out):
            for x in xs:
                out.append(x)
            return out
    """, """
        def f(xs, out):
            for x in xs:
                out.append(x)
    """)
    assert _differ("""
        def f(x):
            if x < 10:
                return 'small'
            return 'large'
    """, """
        def f(x):
            if not x < 10:
                return 'small'
            return 'large'
    """)


def test_a_return_of_a_computed_value_keeps_returns_compared_by_their_events_only():
    # one return computes its value: the decompiler may return it through a temporary
    assert not _differ("""
        def f(a, b):
            if a:
                return b
            return a + b
    """, """
        def f(a, b):
            if a:
                __stack_0 = b
                return __stack_0
            return a + b
    """)


def test_arguments_computed_another_way_are_not_compared():
    # a temporary on one side: ``log``'s calls are compared by callee only
    assert not _differ("""
        def f(log, x):
            log(x.y)
            log(1)
    """, """
        def f(log, x):
            __stack_0 = x.y
            log(__stack_0)
            log(1)
    """)


def test_calls_in_the_same_order_pass_however_the_callee_is_reached():
    # a method call, a global call, a call through ``*()`` and a call of a call's result
    assert not _differ("""
        def f(x, a):
            x.append(len(a))
            return g(*())(a)
    """, """
        def f(x, a):
            x.append(len(a))
            return g()(a)
    """)


def test_the_decompiler_temporaries_may_be_stored():
    assert not _differ("""
        def f(a):
            return a
    """, """
        def f(a):
            __stack_0 = a
            return __stack_0
    """)


def test_a_callee_loaded_by_a_fused_instruction_keeps_its_name():
    # 3.13+ fuse ``for x in xs: out.append(x)`` on one line into STORE_FAST_LOAD_FAST (x, out);
    # on two lines the body loads ``out`` by itself or fused with the next local
    one_line = """
        def f(xs, out, log):
            out.append(0)
            log.append(1)
            for x in xs: out.append(x)
    """
    assert not _differ(one_line, """
        def f(xs, out, log):
            out.append(0)
            log.append(1)
            for x in xs:
                out.append(x)
    """)
    problems = _differ(one_line, """
        def f(xs, out, log):
            out.append(0)
            log.append(1)
            for x in xs:
                log.append(x)
    """)
    assert problems and "CALL:out.append" in problems[0]


def test_a_read_moved_past_a_write_inside_a_loop_is_caught():
    # ``(lc, r1), r0 = g(r1), r1`` reads r1 for r0 before storing r1; split into two statements
    # r0 gets the new r1. Inside a loop every order of read and write occurs on some path, so
    # only the value read before the write and used after it tells them apart.
    original = """
        def f(g, r0, r1):
            while r1:
                (lc, r1), r0 = g(r1), r1
            return r0
    """
    problems = _differ(original, """
        def f(g, r0, r1):
            while r1:
                lc, r1 = g(r1)
                r0 = r1
            return r0
    """)
    assert problems and "reads r1 after writing it" in problems[0]
    # the value kept in a decompiler temporary is read before the write: the same behaviour
    assert not _differ(original, """
        def f(g, r0, r1):
            while r1:
                __stack_0 = r1
                (lc, r1), r0 = g(__stack_0), __stack_0
            return r0
    """)


_SWAP_IN_A_LOOP = """
    def f(a, b):
        for _ in range(3):
            a, b = b, a
        return a, b
"""


def test_a_swap_keeps_its_reads_before_its_writes():
    assert not _differ(_SWAP_IN_A_LOOP, _SWAP_IN_A_LOOP)
    problems = _differ(_SWAP_IN_A_LOOP, """
        def f(a, b):
            for _ in range(3):
                a = b
                b = a
            return a, b
    """)
    assert problems


def test_only_the_very_same_bytecode_skips_following_the_flow():
    from depyf.decompiler.flowcheck.compare import same_bytecode

    same = """
        def f(a):
            def g():
                return a + 1
            return g() * 2.0
    """
    assert same_bytecode(_code(same), _code("\n\n" + same))   # other lines, same code
    # equal constants of another type or sign, and nested code that differs, are not the same
    assert not same_bytecode(_code(same), _code(same.replace("2.0", "2")))
    assert not same_bytecode(_code("def f(a):\n    return a * 0.0"), _code("def f(a):\n    return a * -0.0"))
    assert not same_bytecode(_code(same), _code(same.replace("a + 1", "a - 1")))
    assert _differ(same, same.replace("a + 1", "a - 1"))      # and then the flow is followed


def _constants_renumbered(code, i: int, j: int):
    """``code`` with its constants ``i`` and ``j`` swapped and every instruction loading one of
    them loading it from its new index (code that runs the same, numbered in another order)."""
    import dis

    consts = list(code.co_consts)
    consts[i], consts[j] = consts[j], consts[i]
    units = bytearray(code.co_code)
    for k in range(0, len(units), 2):
        if units[k] in dis.hasconst and units[k + 1] in (i, j):
            units[k + 1] = j if units[k + 1] == i else i
    return code.replace(co_consts=tuple(consts), co_code=bytes(units))


def test_constants_numbered_in_another_order_are_the_same_bytecode():
    from depyf.decompiler.flowcheck.compare import same_bytecode

    code = _code("""
        def f(a):
            \"\"\"doc\"\"\"
            if a:
                return 'x', 2
            return 3.5
    """)
    k = code.co_consts.index(3.5)
    other = 1 if k != 1 else 2
    renumbered = _constants_renumbered(code, other, k)
    assert renumbered.co_consts != code.co_consts
    assert same_bytecode(code, renumbered)
    # the same indices loading the swapped constants run differently
    swapped_only = code.replace(co_consts=renumbered.co_consts)
    assert not same_bytecode(code, swapped_only)
    # equal sets are the same constant whatever order they print in; 0.0 and -0.0 are not
    member = _code("def f(x):\n    return x in {'a', None, 'b'}")
    sets = [c for c in member.co_consts if isinstance(c, frozenset)]
    assert sets
    reordered = tuple(frozenset(sorted(c, key=repr, reverse=True)) if isinstance(c, frozenset) else c
                      for c in member.co_consts)
    assert same_bytecode(member, member.replace(co_consts=reordered))
    zero = _code("def f(x):\n    return x in {0.0, 1.0}")
    negative = tuple(frozenset({-0.0, 1.0}) if isinstance(c, frozenset) else c for c in zero.co_consts)
    assert not same_bytecode(zero, zero.replace(co_consts=negative))


def test_branches_that_assign_other_constants_are_caught():
    # stores of constants to locals are events: branches swapped, or a test negated, where each
    # branch only assigns a constant, read differently
    original = """
        def f(a, b):
            if a:
                r = 1 if b else 2
            elif b:
                r = 3
            else:
                r = 4
            return r
    """
    assert _differ(original, """
        def f(a, b):
            if a:
                r = 1 if b else 2
            elif b:
                r = 4
            else:
                r = 3
            return r
    """)
    assert _differ(original.replace("elif b:", "elif not b:"), original)


def test_a_dropped_constant_store_is_caught():
    # (x is written and read in the same orders either way; only the store of 1 tells)
    original = """
        def f(a):
            x = 0
            if a:
                x = 1
                g()
            return x
    """
    assert _differ(original, original.replace("x = 1", "pass"))


def test_constants_stored_through_stack_moves_or_directly_are_alike():
    # ``x, y = 1, f()`` moves 1 past the call's value before storing it (a SWAP on 3.11+, a fused
    # double store on 3.13+); source that stores after the call says the same
    assert not _differ("""
        def f(a):
            x, y = 1, g(a)
            c = d = None
            return x, y, c, d
    """, """
        def f(a):
            y = g(a)
            x = 1
            c = d = None
            return x, y, c, d
    """)


def test_constants_stored_across_a_loop_or_two_at_once_need_not_be_events():
    # the 1 crosses a comprehension's loop (3.12+) on its way to the store; ``a, b = 1, 2`` is one
    # fused store of two constants on 3.14+: source storing them one by one still matches
    assert not _differ("""
        def f(a):
            x, y = 1, [i for i in a]
            u, v = 1, 2
            return x, y, u, v
    """, """
        def f(a):
            y = [i for i in a]
            x = 1
            v = 2
            u = 1
            return x, y, u, v
    """)


def test_the_cleanup_of_an_except_clause_name_does_not_join_paths():
    # every ``except ... as e`` ends with ``e = None; del e``: as an event it would let a break
    # read as continue pass (both ways out of the clause go through it)
    original = """
        def f(items, ignore, log):
            while True:
                try:
                    got = 10 // items.pop(0)
                except ZeroDivisionError as e:
                    if ignore:
                        log.append(type(e).__name__)
                        continue
                except TypeError as e:
                    if ignore:
                        log.append('type')
                        continue
                else:
                    log.append(got)
                break
            return log, items
    """
    mutant = original.replace("""                        log.append(type(e).__name__)
                        continue""", """                        log.append(type(e).__name__)
                        continue
                    continue""")
    assert _differ(original, mutant)


def test_a_break_of_an_inner_loop_read_as_continue_is_caught():
    # both loops' rounds begin with a FOR_ITER: only the event after it tells which loop goes on
    original = """
        def f(n):
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
    """
    indent = " " * 24
    assert _differ(original, original.replace(indent + "break", indent + "continue"))


def test_a_dropped_final_return_is_caught():
    # not every return is of a constant or a variable, so returns are not named by their values;
    # a return of None still differs from one of a tuple
    original = """
        def f(i, j):
            while i < j:
                if g(i):
                    return [i]
                i += 1
            return (i, j)
    """
    assert _differ(original, original.replace("    return (i, j)", "    pass"))


def test_an_if_return_then_falling_off_the_end_may_read_as_one_conditional_return():
    # mpmath.math2._sinpi_real: the last ``if n == 3: return -cos(r)`` reads back as ``return
    # -cos(r) if n == 3 else None``: one return whose value comes in by jumps, where the original
    # has a return of None of its own
    assert not _differ("""
        def f(n, r):
            if n == 2:
                return -sin(r)
            if n == 3:
                return -cos(r)
    """, """
        def f(n, r):
            if n == 2:
                return -sin(r)
            return -cos(r) if n == 3 else None
    """)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10's handlers are pushed by SETUP_FINALLY")
def test_a_handler_whose_try_body_cannot_raise_is_never_entered():
    # ``try: pass`` leaves a NOP (3.12+) or a forward jump past the handlers (3.11) in the
    # protected range: neither raises, so the handlers never run and the finally body runs once
    original = """
        def f(c):
            try:
                pass
            except ValueError:
                pass
            finally:
                c = c + c
            return c
    """
    assert not _differ(original, """
        def f(c):
            c = c + c
            return c
    """)
    assert depyf.decompile(_code(original)).count("c + c") == 1
    # a body that can raise keeps its handlers: they are compared
    assert _differ(original.replace("pass\n            except", "c.x\n            except"), """
        def f(c):
            c.x
            c = c + c
            return c
    """)


def test_a_call_copied_into_the_branch_a_jump_enters_keeps_its_callee_name():
    # the branches of ``-1 if count is None else count`` meet before the call (3.10, 3.11) or
    # 3.12+ copy the call into both; either way the stack below the value is known there
    code = _code("def f(a, count=None):\n    return g(a, -1 if count is None else count)")
    flow = Flow(code)
    calls = [e for e in flow.events if e is not None and e[0] == "CALL"]
    assert calls and all(e == ("CALL", "g") for e in calls)
    written_the_other_way = _code("def f(a, count=None):\n"
                                  "    return g(a, count if count is not None else -1)")
    assert differences(code, written_the_other_way) == []


@pytest.mark.skipif(sys.version_info >= (3, 14),
                    reason="3.14 keeps the constant ``or`` test: where the value the ``and`` falls "
                           "through to begins is not followed past its POP_TOP")
def test_a_call_of_an_and_keeps_its_callee_name():
    # ``g((-2 or y) and 0)``: the value comes in by the ``and``'s jump or by falling through;
    # the callee below it is the same either way
    code = _code("def f(y):\n    return g((-2 or y) and -0)")
    calls = [e for e in Flow(code).events if e is not None and e[0] == "CALL"]
    assert calls and all(e == ("CALL", "g") for e in calls)



def test_a_call_whose_argument_two_jumps_complete_keeps_its_callee_name():
    # ``g(k and a < b <= 6)``: the ``and`` and the chained comparison each jump to the call, so
    # two jumps and the fall-through meet there; the callee below the value is the same on all
    # three ways. Where the compiler folds the ``and`` (the source read back) one jump is left:
    # both sides must name the call alike.
    code = _code("def f(k, a, b):\n    return g(k and a < b <= 6)")
    calls = [e for e in Flow(code).events if e is not None and e[0] == "CALL"]
    assert calls and all(e == ("CALL", "g") for e in calls)
    source = textwrap.dedent("""\
        def f(a, b):
            if a:
                pass
            elif not not a:
                b = g(max(5 or 2, 1 * -1))
            else:
                b = g((-2 if 3 else x) and b < y <= 6)
                x = -3
        """)
    namespace: dict = {}
    exec(source, namespace)
    text = depyf.decompile(namespace["f"])
    assert "g(" in text

def test_a_loop_exit_that_returns_another_computed_value_is_caught():
    # every return's value is a constant, a variable or computed from those in straight-line
    # code: the returns are named by how they compute it, so the loop's exit read as returning
    # ``c`` (a ``break`` to the body's own return) differs from returning the tuple
    original = """
        def f(items, w, b, c):
            for j in items:
                break
            else:
                while w < 3:
                    if b:
                        continue
                    return c
            return (items, w, b, c)
    """
    assert _differ(original, original.replace("                    return c\n",
                                              "                    break\n                return c\n"))
    # a return from inside a ``for`` loop pops the iterator under the value: still named
    returns = Flow(_code(original)).returned_values()
    assert sorted(returns.values()) == ["expr:BUILD_TUPLE (items,w,b,c)", "name:c"]


def test_values_computed_from_other_names_are_caught():
    # the same paths and events, other values: arguments or operands swapped, another variable read
    original = """
        def f(a, b, xs):
            if a < b:
                xs.append(g(a, b))
            return a - b
    """
    for wrong in (original.replace("g(a, b)", "g(b, a)"), original.replace("a - b", "b - a"),
                  original.replace("if a < b", "if b < a"), original.replace("g(a, b)", "g(a, a)")):
        assert any("computes other values" in p for p in differences(_code(original), _code(wrong)))


def test_values_spelled_another_way_pass():
    # a tuple assignment unpacked in place, a test negated into ``not in``, a value the original
    # kept on the stack held in a temporary: the same values either way
    assert not _differ("""
        def f(a, b):
            x, y, z, w = g(a), b, 1, h(a)
            if not a in b:
                return x
            return w + y
    """, """
        def f(a, b):
            x = g(a)
            y = b
            z = 1
            w = h(a)
            if a not in b:
                return x
            return w + y
    """)


def test_values_used_up_by_loops_unpacking_deletes_and_withs_are_caught():
    # the iterable of a loop, the value an unpacking or a ``with`` takes, the container a ``del``
    # deletes from: another variable read there computes another value
    original = """
        def f(a, b, xs, ys):
            for x in xs:
                u, v = x
                del ys[u]
                with g(a):
                    b = v
            return b
    """
    for old, new in (("in xs", "in ys"), ("= x\n", "= a\n"), ("del ys[u]", "del xs[u]"),
                     ("g(a)", "g(b)")):
        wrong = original.replace(old, new)
        assert wrong != original
        assert any("computes other values" in p for p in differences(_code(original), _code(wrong))), new


def test_an_operand_tested_twice_in_place_of_another_is_caught():
    # ``b and b`` for ``a and b``: every value the mutant tests, the original tests too, but one
    # of them twice and ``a`` never
    original = """
        def f(a, b, c):
            if a and b or c:
                return 1
            return 2
    """
    for wrong in (original.replace("a and b", "b and b"), original.replace("or c", "or a")):
        assert any("computes other values" in p for p in differences(_code(original), _code(wrong)))


def test_a_tail_spelled_out_in_each_branch_passes():
    # the statements after an ``if`` copied into both branches: the same values, computed in more
    # places
    assert not _differ("""
        def f(a, b):
            if a:
                b = g(a)
            h(a, b)
            return b
    """, """
        def f(a, b):
            if a:
                b = g(a)
                h(a, b)
            else:
                h(a, b)
            return b
    """)


def test_parts_of_values_not_followed_are_compared():
    # a starred argument and a dict display are not followed whole; the names they use up are
    original = """
        def f(a, b, xs, ys):
            g(a, *xs)
            return {a: b}, ys
    """
    for old, new in (("*xs", "*ys"), ("{a: b}", "{a: xs}")):
        wrong = original.replace(old, new)
        assert any("computes other values" in p for p in differences(_code(original), _code(wrong))), new


def test_a_value_followed_whole_on_one_side_only_passes():
    # ``g(*(), a)`` calls ``g`` with a starred empty tuple: its parts are printed, and
    # ``g(a)`` read back prints the call whole
    assert not _differ("""
        def f(a):
            return g(*(), a)
    """, """
        def f(a):
            return g(a)
    """)


def test_a_negated_value_computed_from_another_name_is_caught():
    # ``not a`` in a value (not a test): UNARY_NOT is followed like the other operators
    original = """
        def f(a, b, c):
            return (not a, not (a and b), not a or b, not (a or b or c))
    """
    wrong = original.replace("(not a,", "(not b,")
    assert any("computes other values" in p for p in differences(_code(original), _code(wrong)))


def test_one_of_several_stores_of_a_variable_computed_another_way_is_caught():
    # the original stores the same value into ``total`` three times; the mutant keeps two of
    # them: store counts alone are not compared (tails are copied), but a new value stored into
    # the very variable that lost one is
    original = """
        def f(a, b, items):
            total = 0
            for i in items:
                total += i + a
                total += i + a
                total += i + a
            return total
    """
    lines = original.split("\n")
    wrong = "\n".join(lines[:5] + [lines[5].replace("i + a", "i + b")] + lines[6:])
    assert wrong != original
    assert any("computes other values" in p for p in differences(_code(original), _code(wrong)))


def test_a_variable_stored_with_a_new_value_where_its_other_store_is_copied_passes():
    # a tail copied into both branches stores the same value twice: a store only one side has,
    # into another variable, is no sign
    assert not _differ("""
        def f(a, b):
            if a:
                b = g(a)
            c = h(b)
            return c
    """, """
        def f(a, b):
            if a:
                b = g(a)
                c = h(b)
                return c
            c = h(b)
            return c
    """)


def test_true_false_and_none_print_alike_however_they_are_loaded():
    # 3.15 loads a written True, False or None with LOAD_COMMON_CONSTANT, and computes ``not (5 &
    # 8)`` (UNARY_NOT of a constant, whose value the flow check works out): the same values
    assert not _differ("""
        def f(a):
            x = not (5 & 8)
            y = (not (1 | 2)) if a else None
            return x, y
    """, """
        def f(a):
            x = True
            y = False if a else None
            return x, y
    """)


@pytest.mark.skipif(sys.version_info < (3, 14), reason="annotations are computed by __annotate__ from 3.14")
def test_the_compilers_annotate_function_reads_back():
    # its ``format > 2`` test compares without the to-bool mark that the same test in source
    # has (``COMPARE_OP >`` against ``bool(>)``): the same value tested (this file's own
    # functions have string annotations, and no __annotate__)
    namespace: dict = {}
    exec("def f(x: int, *ys: 'list[str]') -> dict:\n    return {}\n", namespace)
    source = depyf.decompile(namespace["f"].__annotate__)
    assert "format" in source



def test_a_return_whose_finally_copy_the_loops_exit_runs_is_caught():
    # What the loop reader once made of it (it refuses now; this is the check behind it): the
    # ``return 1`` read as the loop's break target, so running out of items returns 1 too. Each
    # step and each step of two occur on both sides (both copies of the finally body lead on to
    # both returns somewhere); only the whole sequence, loop exhausted -> finally body ->
    # ``return 1``, is new. (The stored case function_436b76972ce9 guards the other way: effects
    # in the same order, an operator folded on one copy of a tail only.)
    original = """
        def f(items):
            log = []
            try:
                while items:
                    if items.pop():
                        log.append(len(items))
                    else:
                        return 1
            except IndexError:
                log.append("e")
            finally:
                log.append("f")
            return log
    """
    wrong = """
        def f(items):
            log = []
            try:
                while items:
                    if not items.pop():
                        break
                    log.append(len(items))
                return 1
            except IndexError:
                log.append("e")
            finally:
                log.append("f")
            return log
    """
    found = _differ(original, wrong)
    assert len(found) == 1 and "runs its effects in another sequence" in found[0]
    assert "log.append -[]-> return:" in found[0]
    assert not _differ(original, original.replace("return 1", "return 1  # the same"))


def test_a_negated_test_whose_ways_both_run_a_finally_body_first_is_caught():
    # Both ways out of the test run a copy of the finally body, so every step (compare -[T]->
    # log.append, compare -[F]-> log.append) and step of two is on both sides; the decision
    # before the copy that goes on to the return is what differs.
    original = """
        def f(n):
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
    """
    found = _differ(original, original.replace("if i > n:", "if not i > n:"))
    assert found, "a negated test let through"


def test_a_private_function_of_a_method_is_compared_with_its_mangled_twin():
    # A method read back on its own defines ``def __helper`` as ``def _C__helper`` (the name it
    # is stored under): the two nested codes are twins, so a wrong body in it is still seen.
    namespace: dict = {}
    exec(textwrap.dedent("""
        class C:
            def f(self, y):
                def __helper(v):
                    if v:
                        return v + 1
                    return print(v)
                return __helper(y)
    """), namespace)
    original = namespace["C"].f.__code__
    read_back = """
        def f(self, y):
            def _C__helper(v):
                if v:
                    return v + 1
                return print(v)
            return _C__helper(y)
    """
    assert not differences(original, _code(read_back))
    found = differences(original, _code(read_back.replace("if v:", "if not v:")))
    assert found and "__helper" in found[0] and "missing" not in found[0]


def test_a_negated_test_that_decides_whether_a_new_empty_list_is_stored_is_caught():
    # ``acc = []`` is stored on one way, the call after runs on both: the store of the new
    # empty list is an event, like a store of a constant.
    original = """
        def f(x, acc=None):
            if acc is None:
                acc = []
            acc.append(x)
            return acc
    """
    assert _differ(original, original.replace("if acc is None:", "if acc is not None:"))
    assert _differ(original, original.replace("acc = []", "acc = {}"))
    assert not _differ(original, original.replace("acc = []", "acc = []  # the same"))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* is 3.11+")
def test_a_negated_test_in_a_try_with_except_star_clauses_is_caught():
    # except* tests the group each clause matched with ``COPY 1`` and a jump, as an ``or`` whose
    # value is used would: those tests are the clauses', and decisions are still compared.
    original = """
        def f(kind):
            log = []
            try:
                g = make(kind)
                if g is not None:
                    raise g
                log.append("none")
            except* ValueError as eg:
                log.append(len(eg.exceptions))
            return log
    """
    assert _differ(original, original.replace("if g is not None:", "if g is None:"))
    assert not _differ(original, original.replace("if g is not None:", "if not g is None:"))


def test_a_lost_docstring_of_a_nested_function_is_caught():
    original = '''
        def f(n):
            def g():
                """Doc."""
                return n
            return g.__doc__
    '''
    found = _differ(original, original.replace('"""Doc."""', "pass"))
    assert found and "another docstring" in found[0]
    assert not _differ(original, original.replace('"""Doc."""', '"Doc."'))


def test_a_del_moved_past_a_call_is_caught():
    # ``g`` reads the cell ``x``: the ``del`` is an effect in the sequences compared (a ``del`` of
    # a plain local is not: only this frame's reads see it)
    original = """
        def f(n):
            x = n
            def g():
                return x
            before = g()
            del x
            return before
    """
    moved = original.replace("before = g()", "del x").replace("del x\n            return",
                                                              "before = g()\n            return")
    found = _differ(original, moved)
    assert found and "runs its effects in another sequence" in found[0]


def test_a_dropped_constant_store_of_a_name_a_loop_also_stores_is_caught():
    # ``got`` is stored a value not known as well (the loop's item): such names' constant stores
    # are compared only where both sides store the name as many times.
    original = """
        def f(xs, log):
            got = None
            with log:
                for x in xs:
                    got = x
                    break
            return got
    """
    assert _differ(original, original.replace("got = None", "pass", 1))


def test_yields_of_constants_and_variables_in_another_order_are_caught():
    original = """
        def f(n):
            yield (n, n + 1)
            yield n
            yield
    """
    swapped = """
        def f(n):
            yield (n, n + 1)
            yield
            yield n
    """
    assert _differ(original, swapped)
    assert not _differ(original, original.replace("yield\n", "yield None\n"))


def test_a_negated_test_whose_branches_store_other_computed_values_is_caught():
    # Both branches compute with an operator and store ``new``: the stores of values computed
    # from names and constants are effects in the sequences compared, each after the decision
    # that leads to it (the operator before the store keeps it).
    original = """
        def f(line):
            new = b""
            i = 0
            while i < len(line):
                c = line[i:i + 1]
                if c == b"_":
                    new = new + b" "; i = i + 1
                else:
                    new = new + c; i = i + 1
            return new
    """
    found = _differ(original, original.replace('if c == b"_":', 'if not c == b"_":'))
    assert found and "set:new" in found[0]


def test_a_name_tested_in_place_of_another_that_is_tested_elsewhere_too_is_caught():
    # ``if b and b`` for ``if a and b``: ``a`` is still tested (by the ``elif``), so no test is
    # missing on either side; one fewer test of ``a`` and one more of ``b`` is the difference.
    original = """
        def f(a, b, c):
            if a and b:
                r = 1
            elif a and c:
                r = 2
            else:
                r = 3
            return r
    """
    found = _differ(original, original.replace("if a and b:", "if b and b:"))
    assert found and "computes other values" in found[0]
    # a test copied more or fewer times alone is a layout (``while c`` or ``while True`` with
    # ``if not c: break``): no difference
    loop = """
        def f(c, n):
            while c(n):
                n = n - 1
            return n
    """
    rotated = """
        def f(c, n):
            while True:
                if not c(n):
                    break
                n = n - 1
            return n
    """
    assert not _differ(loop, rotated)


def test_a_value_read_in_place_of_another_where_values_meet_is_caught():
    # ``c`` and ``b`` meet the ``and``/``or`` value's other operands where it ends: the prints of
    # what meets there are compared, where both sides have one the other lacks
    original = """
        def f(a, b, c):
            return a and b or c
    """
    found = _differ(original, original.replace("or c", "or a"))
    assert found and "join = " in found[0]
    # one side's values meeting at a join, the other's stored in branches: no difference
    joined = """
        def f(a, b, c):
            x = a if c else b
            return x
    """
    branches = """
        def f(a, b, c):
            if c:
                x = a
            else:
                x = b
            return x
    """
    assert not _differ(joined, branches)
    assert _differ(joined, joined.replace("else b", "else c"))


def test_a_docstring_stays_first_where_a_closure_in_code_that_never_runs_keeps_a_cell():
    # the closure after the raise keeps ``n`` a cell of the original; the rebuild keeps the cell
    # with a block that never runs, which must follow the docstring (statsmodels'
    # ``GenericZeroInflated._deriv_score_obs_dendog``). (Nested code keeps such cells in its text:
    # corpus ``closures.nested_function_keeps_cells_of_a_closure_in_code_that_never_runs``.)
    def unfinished(n):
        """Unfinished: the code after the raise never runs."""
        raise NotImplementedError(n)

        def later():
            return n

        return later

    text = depyf.decompile(unfinished)
    namespace: dict = {}
    exec(text, namespace)
    rebuilt = namespace["unfinished"]
    assert rebuilt.__doc__ == unfinished.__doc__
    with pytest.raises(NotImplementedError):
        rebuilt(1)
    code = depyf.decompiler.api.recompile(unfinished).code
    assert code.co_consts[0] == unfinished.__doc__ and code.co_cellvars == unfinished.__code__.co_cellvars
