"""Source read back from common shapes compiles to the very instructions it came from.

Equal bytecode is the strongest sign that the source reads as it was written (and the flow check
then has nothing to follow). Each function here is compiled from source in a module of its own,
decompiled, recompiled, and compared instruction by instruction (line numbers aside).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from test_readability import SOURCES as READABILITY_SOURCES

import depyf
from depyf.decompiler.flowcheck.compare import same_bytecode

MODULES = {
    # 3.11+: a call on a name a module-level import binds is an attribute load and a plain call
    "call_on_an_imported_module": """
        import os
        import os.path as p

        def f(a):
            os.makedirs(a, exist_ok=True)
            return p.join(os.getcwd(), a), os.sep
    """,
    "call_on_a_module_and_a_method_call_on_another_global": """
        import json

        def f(a):
            return json.dumps(a), cache.get(a)
    """,
    "assert_statements": """
        def f(x, y):
            assert x > 0, "positive"
            assert y
            return x
    """,
    "if_ending_a_loop_body": """
        def f(xs, out):
            for x in xs:
                out.log(x)
                if x > 1:
                    out.append(x)
            return out
    """,
    "guard_clause_that_raises": """
        def f(n, items):
            if not n > 0:
                raise ValueError(n)
            return items[:n]
    """,
    "if_not_else": READABILITY_SOURCES["if_not_else"],
    # 3.12+ fuse ``super().g`` into LOAD_SUPER_ATTR, but not in a module that names ``super`` at
    # its top level: the function read back is compiled alike (refused before: "takes other paths")
    "super_call_in_a_module_that_names_super": """
        builtin_super = super

        class B:
            def g(self, x):
                return x + 1

        class C(B):
            def f(self, x):
                super().__init__()
                return super().g(x)

        f = C.f
    """,
    # the last test of an ``or`` keeps the ``not in`` / ``is not`` the bytecode tested
    "negated_membership_ending_an_or": """
        def f(a, c, d):
            if not a or a[0] not in c:
                return 1
            if d is None or a is not d:
                return 2
            return 3
    """,
    # ``assert False`` loads the builtin exception class, not the global name
    "assert_false_with_a_message": """
        def f(x):
            if x:
                return 1
            assert False, "unreachable: " + repr(x)
    """,
    # an except clause's guard that re-raises, before the return that ends the clause
    "guard_clause_that_reraises_in_an_except_clause": """
        def f(path, ignored):
            try:
                return path.stat()
            except OSError as e:
                if not ignored(e):
                    raise
                return False
            except ValueError:
                return False
    """,
    # ``if c: return x`` in a try in a loop, before the loop's next round
    "return_guarded_in_a_try_in_a_loop": """
        def f(modules, name, obj):
            for module_name, module in modules.items():
                if module is None:
                    continue
                try:
                    if module.get(name) is obj:
                        return module_name
                except AttributeError:
                    pass
            return None
    """,
    # the first branch jumps over an else clause that raises (or returns) to the code after the
    # if statement, which read with no join went into the first branch
    "else_clause_that_raises_before_the_code_after_the_if": """
        def f(self, pos):
            if pos - self.pos >= 0:
                blocks, rest = divmod(pos - self.pos, self.size)
                for i in range(blocks):
                    self.read(self.size)
                self.read(rest)
            else:
                raise ValueError("seeking backwards")
            return self.pos
    """,
    "else_clause_that_returns_before_the_code_after_the_if": """
        def f(self, method):
            if self.state == 0:
                self.state = 1
            else:
                return self.state
            self.validate(method)
            self.method = method
            return None
    """,
    # ``if c: body; continue`` then ``break``, laid out so: the body's jump back comes right
    # before the break (read before as ``if not c: break`` ahead of the body)
    "continue_then_break_ending_a_while_body": """
        def f(heap, start, pos):
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
    """,
    "super_call_fused": """
        class B:
            def g(self, x):
                return x + 1

        class C(B):
            def f(self, x):
                super().__init__()
                return super().g(x), super(C, self).g(x)

        f = C.f
    """,
}

if sys.version_info < (3, 13):
    # an ``if`` ending one branch of the statement that ends the loop body runs into its jump back
    # (3.13+ still read it back as a guard clause, which compiles to other instructions there)
    MODULES["if_ending_a_branch_that_ends_a_loop_body"] = """
        def f(items):
            best = n = 0
            for x in items:
                if x == 0:
                    n += 1
                    if n > best:
                        best = n
                else:
                    n = 0
            return best
    """

if sys.version_info >= (3, 11):
    # an ``if`` ending a try body whose finally body the normal exit copies before returning
    # (3.10 copies that exit and the return into each branch: read back as ``if not name: return``)
    MODULES["if_ending_a_try_body_with_a_finally_body"] = """
        def f(self, name, lock):
            lock.acquire()
            try:
                self.name = name
                if name:
                    self.names[name] = self
            finally:
                lock.release()
    """

if sys.version_info[:2] == (3, 11):
    # ``if c: body`` / ``else: break`` ending a for body (3.10 and 3.12+ compile the break into a
    # copy of the return after the loop: read back as ``else: return``)
    MODULES["else_clause_that_breaks_ending_a_for_body"] = """
        def f(chunks, width):
            line, size = [], 0
            for chunk in chunks:
                if size + len(chunk) <= width:
                    line.append(chunk)
                    size += len(chunk)
                else:
                    break
            return line
    """

if sys.version_info < (3, 12):
    # the else clause of a try statement whose except clause returns, laid out before the clause
    # (3.12+ lay the clauses out last, where code after the statement goes too)
    MODULES["else_clause_that_returns_after_an_except_clause_that_returns"] = """
        def f(stat, path, fd):
            try:
                st = stat(path, fd)
            except (OSError, ValueError):
                return False
            else:
                return st.mode > 0
    """
    # the else clause ending a for loop's round, whose except clause goes on to the next round
    MODULES["else_clause_ending_a_round_after_an_except_clause_that_passes"] = """
        def f(wrapper, wrapped, names):
            for name in names:
                try:
                    value = getattr(wrapped, name)
                except AttributeError:
                    pass
                else:
                    setattr(wrapper, name, value)
            return wrapper
    """


@pytest.mark.parametrize("name", sorted(MODULES))
def test_recompiled_code_has_the_original_instructions(name):
    namespace: dict = {}
    exec(compile(textwrap.dedent(MODULES[name]), f"<{name}>", "exec"), namespace)
    original = namespace["f"].__code__
    recompiled = depyf.recompile(original).code
    assert same_bytecode(original, recompiled), depyf.decompile(original)


@pytest.mark.skipif(sys.platform == "emscripten", reason="pyodide cannot start processes")
def test_assert_read_back_is_kept_under_optimize():
    """Code compiled with its asserts, read back in an interpreter running ``-O``: the assert is
    in the recompiled code too (the rebuild compiles with asserts whatever ``-O`` says)."""
    script = textwrap.dedent("""
        import depyf
        code = compile("def f(x):\\n    assert x, 'no'\\n    return x\\n", "<m>", "exec", optimize=0)
        namespace = {}
        exec(code, namespace)
        f = namespace["f"]
        source = depyf.decompile(f)
        assert "assert x, 'no'" in source, source
        f.__code__ = depyf.recompile(f.__code__).code
        try:
            f(0)
        except AssertionError as exc:
            print("raised", exc)
    """)
    done = subprocess.run([sys.executable, "-O", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "raised no"
