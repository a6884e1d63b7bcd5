"""The module driver: one code object to an ast tree (``code_to_ast``) and to source."""

from __future__ import annotations

import ast
import contextvars
import sys
import threading
import types

from depyf.decompiler import opaque, traversal
from depyf.decompiler import values as v
from depyf.decompiler.cleanup import (
    BoolOpFromIfExp,
    asserts_of_false,
    renumber_temporaries,
    strip_tail_returns,
)
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.expressions import fold_negated_tests, load
from depyf.decompiler.instructions import COMPREHENSION_KINDS
from depyf.decompiler.pseudo_statements import leftover_marker
from depyf.decompiler.render.free_variables import with_free_variables_kept
from depyf.decompiler.render.nested import CO_COROUTINE, Nested, _qualname
from depyf.decompiler.render.percent_format import percent_formats
from depyf.decompiler.render.returns import remove_implicit_returns
from depyf.decompiler.render.unparse import unparse
from depyf.decompiler.slices import builds_slices, slices_as_values


def code_to_ast(code: types.CodeType, defaults: dict[str, ast.expr] | None = None) -> ast.Module:
    """The whole definition of ``code`` as a module: ``def``/``lambda`` or the module body."""
    nested = Nested()
    if code.co_name == "<module>":
        body, structurer = nested.statements(code)
        body = nested.with_module_annotations(strip_tail_returns(remove_implicit_returns(body)),
                                              "__conditional_annotations__" in code.co_cellvars)
        if body and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1 \
                and isinstance(body[0].targets[0], ast.Name) and body[0].targets[0].id == "__doc__" \
                and isinstance(body[0].value, ast.Constant):
            body[0] = ast.Expr(body[0].value)
        return ast.Module(body or [ast.Pass()], [])
    if not code.co_flags & 0x03:
        # a class body's code object: show it as the class statement it came from
        node = nested.class_def(v.FunctionValue(code), code.co_name, [], [], None)
        return ast.Module([node], [])
    fn = v.FunctionValue(code)
    if defaults:
        fn.defaults, fn.kwdefaults = _split_defaults(code, defaults)
    if code.co_name == "<lambda>":
        expr = nested.lambda_or_error(fn, None)
        return ast.Module([ast.Expr(expr)], [])
    name = code.co_name if code.co_name.isidentifier() else "_" + "".join(
        c if c.isalnum() else "_" for c in code.co_name)
    if code.co_name in COMPREHENSION_KINDS and code.co_varnames[:1] == (".0",):
        return ast.Module([_comprehension_def(nested, fn, name)], [])
    return ast.Module([nested.function_def(fn, name)], [])


def _comprehension_def(nested: Nested, fn: v.FunctionValue, name: str) -> ast.stmt:
    """A list, set or dict comprehension's own code object as the function that stands for it:
    ``def name(.0): return [... for x in .0 ...]`` (its body builds the result with instructions
    no statement writes; ``.0`` is named in the finished tree)."""
    code = fn.code
    element = nested.comprehension(fn, load(".0"), None)
    body = with_free_variables_kept(code, [ast.Return(element)])
    args = nested.arguments(code, [], {}, {})
    kind = ast.AsyncFunctionDef if code.co_flags & CO_COROUTINE else ast.FunctionDef
    extra = {"type_params": []} if sys.version_info >= (3, 12) else {}
    return kind(name, args, body, [], None, None, **extra)


def _name_comprehension_iterator(tree: ast.Module, code: types.CodeType) -> None:
    """A comprehension's own code object takes its iterator as ``.0``, which no source can name:
    the function standing for it names the parameter ``iterator`` (or ``iterator_2``, ... where
    the code uses that name)."""
    fn = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or ".0" not in [
        a.arg for a in fn.args.args
    ]:
        return
    taken = set(code.co_varnames) | set(code.co_names) | set(code.co_freevars) | set(code.co_cellvars)
    name, k = "iterator", 1
    while name in taken:
        k += 1
        name = f"iterator_{k}"
    for node in ast.walk(fn):
        if isinstance(node, ast.arg) and node.arg == ".0":
            node.arg = name
        elif isinstance(node, ast.Name) and node.id == ".0":
            node.id = name


def _split_defaults(code, defaults: dict[str, ast.expr]):
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    positional = code.co_varnames[:npos]
    pos_defaults = []
    started = False
    for name in positional:
        if name in defaults:
            started = True
            pos_defaults.append(defaults[name])
        elif started:
            return [], {}  # a gap: defaults were not all literal, show none
    if pos_defaults and len(pos_defaults) != sum(1 for n in positional if n in defaults):
        return [], {}
    kwonly = {n: defaults[n] for n in code.co_varnames[npos:npos + nkw] if n in defaults}
    return pos_defaults, kwonly


CO_FUTURE_ANNOTATIONS = 0x1000000


def code_to_source(code: types.CodeType, defaults: dict[str, ast.expr] | None = None) -> str:
    """Readable Python source for ``code`` (see ``code_to_ast``)."""
    return code_to_source_and_constants(code, defaults)[0]


# Code nested deeper than 6,000 frames allow (an ``if`` on one ``or`` of 10,000 tests: the condition
# search recurses once per test) is read again in a thread of its own with a big stack
DEEP_RECURSION_LIMIT = 120_000
DEEP_STACK_BYTES = 1 << 30


def code_to_source_and_constants(code: types.CodeType, defaults: dict[str, ast.expr] | None = None
                                 ) -> tuple[str, dict[str, object]]:
    """The source, and the objects its placeholder names stand for (constants no literal spells)."""
    if opaque.active():
        return _source_and_constants(code, defaults, 6000)
    try:
        return _source_and_constants(code, defaults, 6000, deep_retry=True)
    except _TooDeep:
        try:
            return _in_deep_thread(lambda: _source_and_constants(code, defaults, DEEP_RECURSION_LIMIT))
        except _NoDeepThread:
            raise DecompilationError("code nested too deeply to decompile (no thread with a bigger "
                                     "stack can be started here)", qualname=_qualname(code)) from None


class _TooDeep(Exception):
    """The outermost reading ran out of frames: it is read again with more."""


class _NoDeepThread(Exception):
    """This interpreter cannot start a thread with a bigger stack (WebAssembly builds have no
    threads; some platforms refuse the size)."""


def _in_deep_thread(work):
    """``work()`` in a thread with a stack of ``DEEP_STACK_BYTES`` (the recursion limit it sets is
    only reached there), in a copy of the caller's context; its result or its exception."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as exc:  # handed to the caller as it is
            outcome.append((False, exc))

    context = contextvars.copy_context()
    try:
        previous = threading.stack_size()
        threading.stack_size(DEEP_STACK_BYTES)
    except (RuntimeError, ValueError):
        raise _NoDeepThread from None
    try:
        thread = threading.Thread(target=context.run, args=(run,), name="depyf-deep-code")
        thread.start()
    except RuntimeError:
        raise _NoDeepThread from None
    finally:
        threading.stack_size(previous)
    thread.join()
    ok, value = outcome[0]
    if ok:
        return value
    raise value


def _source_and_constants(code: types.CodeType, defaults: dict[str, ast.expr] | None, frames: int,
                          deep_retry: bool = False) -> tuple[str, dict[str, object]]:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, frames))  # long elif chains recurse once per branch
    try:
        outermost = not opaque.active()
        with opaque.collecting(code) as placeholders:
            source = _code_to_source(code, defaults)
            header = placeholders.header(source) if outermost else []
            if header:
                source = "\n".join(header) + "\n" + source
            return source, dict(placeholders.objects)
    except RecursionError:
        if deep_retry:
            raise _TooDeep from None
        raise DecompilationError("code nested too deeply to decompile", qualname=_qualname(code)) from None
    except MemoryError:
        raise DecompilationError("code nested too deeply to decompile", qualname=_qualname(code)) from None
    finally:
        sys.setrecursionlimit(limit)


def _code_to_source(code: types.CodeType, defaults: dict[str, ast.expr] | None = None) -> str:
    tree = code_to_ast(code, defaults)
    nodes = traversal.preorder(tree)    # one walk serves the passes below while the tree stands
    if any(node.__class__ is ast.IfExp for node in nodes):
        tree = BoolOpFromIfExp().visit(tree)
        nodes = traversal.preorder(tree)
    if fold_negated_tests(nodes) | asserts_of_false(nodes):
        nodes = traversal.preorder(tree)
    renumber_temporaries(tree, opaque.names_in(code), nodes)
    if builds_slices(code):
        slices_as_values(tree)
        nodes = None
    if code.co_flags & CO_FUTURE_ANNOTATIONS and code.co_name == "<module>" and not any(
            isinstance(s, ast.ImportFrom) and s.module == "__future__" for s in tree.body):
        has_docstring = bool(tree.body) and isinstance(tree.body[0], ast.Expr) \
            and isinstance(tree.body[0].value, ast.Constant) and isinstance(tree.body[0].value.value, str)
        tree.body.insert(
            1 if has_docstring else 0, ast.ImportFrom("__future__", [ast.alias("annotations")], 0)
        )
        tree.body = (
            [s for s in tree.body if not isinstance(s, ast.Pass)] if len(tree.body) == 2 else tree.body
        )
        nodes = None
    _name_comprehension_iterator(tree, code)   # renames only: the list of nodes still stands
    if nodes is None:
        nodes = traversal.preorder(tree)
    leftover = leftover_marker(nodes)
    if leftover is not None:
        raise DecompilationError(f"a construct was not recovered ({leftover} left in the syntax tree)",
                                 qualname=_qualname(code))
    traversal.fill_locations(tree, nodes=nodes)  # ast.unparse reads lineno (type comments)
    try:
        try:
            return unparse(tree) + "\n"
        except ValueError as exc:
            if "backslash" not in str(exc) or not percent_formats(tree):
                raise
            return unparse(tree) + "\n"     # (3.11: f-strings needing a backslash, as % formatting)
    except Exception as exc:  # unparse of a malformed tree is our bug: report it as such
        raise DecompilationError(f"could not print the recovered syntax tree ({exc})",
                                 qualname=_qualname(code)) from exc
