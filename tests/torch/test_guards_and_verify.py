"""Guard text -> valid Python, and the checks that keep wrong decompiled code from running."""

from __future__ import annotations

import ast
import textwrap

from depyf.torch.guards import clause_from_text, clauses_from_tree_text, full_location, guard_function_source
from depyf.torch.verify import differences, maybe_unbound_loads


def test_tensor_guard_keeps_python_and_source_line():
    clause = clause_from_text(
        "check_tensor(L['a'], Tensor, DispatchKeySet(CPU), torch.float32, device=None, requires_grad=False, "
        "size=[10], stride=[1])  # x = a / (torch.abs(a) + 1)  # mp/user.py:4 in f", "TENSOR_MATCH")
    assert clause.expression.startswith("check_tensor(L['a'], Tensor")
    assert "size=[10]" in clause.expression and "requires_grad=False" in clause.expression
    assert clause.user_line == "x = a / (torch.abs(a) + 1)"
    assert clause.location == "mp/user.py:4 in f"


def test_global_state_json_becomes_a_call_with_keyword():
    clause = clause_from_text('___check_global_state() against {"grad_mode":true,"num_threads":2}')
    assert clause.expression == "___check_global_state(expected={'grad_mode': True, 'num_threads': 2})"


def test_type_suffix_and_hint_move_to_note():
    clause = clause_from_text("___check_type_id(L['d'], 1234), type=<class 'dict'>  # y = d['k']  "
                              "# u.py:3 in f (HINT: type dict)")
    assert clause.expression == "___check_type_id(L['d'], 1234)"
    assert "dict" in clause.note


def test_hash_inside_string_is_not_a_comment():
    clause = clause_from_text("L['s'] == 'a # b'  # s = 'a # b'")
    assert clause.expression == "L['s'] == 'a # b'"


def test_text_that_is_not_python_is_wrapped_not_dropped():
    clause = clause_from_text("L['x'] matches some C++ rule ???  # x.py:1 in g")
    ast.parse(clause.expression, mode="eval")
    assert clause.expression.startswith("___unparsed_guard(")
    assert "some C++ rule" in clause.expression


def test_ids_guard_becomes_a_call():
    clause = clause_from_text("torch._functorch.utils.hooks ids == None  # x.py:1 in g")
    assert clause.expression == "___check_ids(torch._functorch.utils.hooks, expected=None)"


def test_guard_function_parses_and_tree_text_is_read():
    tree = textwrap.dedent("""
        TREE_GUARD_MANAGER:
        +- RootGuardManager
        | +- GLOBAL_STATE: ___check_global_state() against {"a":1}
        | +- GuardManager: source=L['x'], accessed_by=FrameLocalsGuardAccessor(key='x')
    """) + ("| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, torch.float32, size=[2], stride=[1])"
            "  # y = x + 1  # u.py:2 in f\n")
    clauses = clauses_from_tree_text(tree)
    assert [c.kind for c in clauses] == ["GLOBAL_STATE", "TENSOR_MATCH"]
    source = guard_function_source("__guard_0_for_f", clauses)
    ast.parse(source)
    assert "__guard_hit = __guard_hit and check_tensor(L['x']" in source
    assert "# y = x + 1" in source
    full = guard_function_source("__guard_0_for_f", clauses, ["/home/me/proj/u.py"])
    assert "# y = x + 1  # /home/me/proj/u.py:2 in f" in full, full


def test_shortened_location_gets_its_full_path_back():
    assert full_location("mp/seed/s.py:4 in f", ["/tmp/seed/s.py"]) == "/tmp/seed/s.py:4 in f"
    assert full_location("other.py:4 in f", ["/tmp/seed/s.py"]) == "other.py:4 in f"
    assert full_location("not a location", ["/tmp/x"]) == "not a location"


def _code(src, name="f"):
    namespace = {}
    exec(compile(textwrap.dedent(src), "<test>", "exec"), namespace)
    return namespace[name].__code__


def test_read_after_del_is_found():
    bad = _code("""
        def f(g):
            out = g()
            del out
            return out[0]
    """)
    good = _code("""
        def f(g):
            out = g()
            first = out[0]
            del out
            return first
    """)
    assert maybe_unbound_loads(bad) == {"out"}
    assert maybe_unbound_loads(good) == set()
    assert any("unbound" in p for p in differences(good, bad))


def test_dropped_or_extra_call_is_found_and_same_code_accepted():
    original = _code("""
        def f(g, x):
            y = g(x)
            return g(y)
    """)
    dropped = _code("""
        def f(g, x):
            return g(x)
    """)
    assert differences(original, original) == []
    assert differences(original, dropped)


def test_is_none_test_and_its_fused_jump_are_the_same_operation():
    # Dynamo (torch 2.15) writes `tmp is None` as IS_OP and a jump; the source the decompiler
    # prints compiles (CPython 3.11+) to one POP_JUMP_IF_NONE-style jump without IS_OP.
    explicit = _code("""
        def f(g, x):
            if (t := x is not None):
                g(x)
    """)
    fused = _code("""
        def f(g, x):
            if x is not None:
                g(x)
    """)
    other = _code("""
        def f(g, x):
            if x:
                g(x)
    """)
    assert differences(explicit, fused) == []
    assert differences(fused, explicit) == []
    assert differences(explicit, other)


def test_reading_a_cells_value_is_not_passing_the_cell():
    passes_cell = _code("""
        def outer():
            helper = len
            def f(g):
                return g(lambda: helper)
            return f
    """, "outer").co_consts
    passes_cell = next(c for c in passes_cell if hasattr(c, "co_code") and c.co_name == "f")
    reads_value = _code("""
        def outer():
            helper = len
            def f(g):
                return g(helper)
            return f
    """, "outer").co_consts
    reads_value = next(c for c in reads_value if hasattr(c, "co_code") and c.co_name == "f")
    assert differences(passes_cell, reads_value)


def test_branch_join_requires_assignment_on_every_path():
    code = _code("""
        def f(c):
            if c:
                v = 1
            return v
    """)
    assert maybe_unbound_loads(code) == {"v"}


def test_transform_runs_verified_decompiled_code_from_the_dumped_file(tmp_path):
    from depyf.torch.transformed import transform

    def h(a, b):
        c = a + b
        if c > 3:
            return c * 2
        return c

    path = tmp_path / "__transformed_code_0_for_h.py"
    result = transform(h.__code__, "__transformed_code_0_for_h", str(path))
    if not result.decompiled:  # the decompiler may reject it; then Dynamo's code must run
        assert result.code_to_run is h.__code__ and result.fallback_reason
        return
    path.write_text(result.file_text)
    assert result.code_to_run.co_filename == str(path)
    swapped = type(h)(result.code_to_run, h.__globals__)
    assert [swapped(1, 1), swapped(2, 5)] == [h(1, 1), h(2, 5)]
    ast.parse(result.file_text)


def test_transform_falls_back_when_recompiled_code_differs(tmp_path, monkeypatch):
    import depyf
    from depyf.decompiler.api import Recompiled
    from depyf.torch.transformed import transform

    def h(g, x):
        out = g(x)
        return out + 1

    def wrong(g, x):
        return g(x)

    monkeypatch.setattr(depyf, "recompile",
                        lambda code, filename=None: Recompiled("def h(g, x):\n    return g(x)\n",
                                                               wrong.__code__.replace(co_name="h")))
    result = transform(h.__code__, "__transformed_code_0_for_h", str(tmp_path / "t.py"))
    assert not result.decompiled and result.code_to_run is h.__code__
    assert "different calls" in result.fallback_reason or "argument" in result.fallback_reason
    assert "Dynamo's own bytecode runs" in result.file_text
    ast.parse(result.file_text)
