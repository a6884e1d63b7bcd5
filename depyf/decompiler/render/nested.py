"""Definitions nested in a code object: functions, lambdas, comprehensions, classes, and
the annotations of classes and modules (3.14+)."""

from __future__ import annotations

import ast
import sys
import types

from depyf.decompiler import values as v
from depyf.decompiler.cleanup import returns_to_breaks, strip_tail_returns, tidy
from depyf.decompiler.codeinfo import argument_names
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.executor import Executor
from depyf.decompiler.expressions import load
from depyf.decompiler.instructions import COMPREHENSION_KINDS, normalize
from depyf.decompiler.pseudo_statements import (
    AnnotationMarkStmt,
    ClassAnnotationsStmt,
    ModuleAnnotationsStmt,
)
from depyf.decompiler.render.comprehensions import comprehension_node, comprehension_parts
from depyf.decompiler.render.free_variables import with_free_variables_kept
from depyf.decompiler.render.returns import _contains_yield, bare_returns, remove_implicit_returns
from depyf.decompiler.structure import Structurer

CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08


CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR = 0x20, 0x80, 0x200


CO_HAS_DOCSTRING = 0x4000000


MAX_DEPTH = 60


def _returned_expression(body: list) -> ast.expr | None:
    """The one expression statements that only test and return compute: ``if t: return a`` then
    ``return b`` is ``a if t else b``. A lambda's conditional expression reads as such statements
    where its branches are on lines of their own (3.10 gives each branch its return). None when
    the statements do anything else."""
    if not body:
        return None
    first = body[0]
    if isinstance(first, ast.Return):
        return first.value if len(body) == 1 else None
    if not isinstance(first, ast.If) or (first.orelse and len(body) > 1):
        return None
    then = _returned_expression(first.body)
    other = _returned_expression(first.orelse or body[1:])
    if then is None or other is None:
        return None
    return ast.IfExp(first.test, then, other)


def _is_format_guard(stmt: ast.stmt, code: types.CodeType) -> bool:
    """``if format > 2: raise NotImplementedError``: how 3.14+ lazily evaluated values (annotations,
    bounds, alias values) refuse the formats they do not compute; ``format`` is their parameter."""
    if not (isinstance(stmt, ast.If) and code.co_argcount >= 1 and len(stmt.body) == 1
            and isinstance(stmt.body[0], ast.Raise) and not stmt.orelse):
        return False
    param = code.co_varnames[0]
    return any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(stmt.test))


def _implicit_class_store(target: str, value: ast.expr, code: types.CodeType) -> bool:
    """Is ``target = value`` one of the stores the compiler puts in every class body (not one the
    source wrote, such as ``__module__ = wrapped.__module__``)?"""
    if target == "__module__":
        return isinstance(value, ast.Name) and value.id == "__name__"
    if target == "__qualname__":
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            return False
        qualname = getattr(code, "co_qualname", None)     # (3.10: only the name is known)
        return value.value == qualname if qualname else value.value.rsplit(".", 1)[-1] == code.co_name
    if target == "__firstlineno__":
        return isinstance(value, ast.Constant) and isinstance(value.value, int)
    # (``__classcell__``, at the end or copied into branches, is left to _without_copied_class_cell)
    return target in ("__static_attributes__", "__classdictcell__")


def _without_copied_class_cell(body: list) -> list:
    """A class body's statements without the ``__classcell__`` stores that the compiler copied,
    with the implicit return after them, into the branches of its last statement (3.11 copies
    exit blocks without a line)."""
    out = []
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and stmt.targets[0].id == "__classcell__":
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                    ast.ClassDef)):
                setattr(stmt, field, _without_copied_class_cell(inner))
        for part in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
            part.body = _without_copied_class_cell(part.body)
        out.append(stmt)
    return out


def mangled(name: str, class_name: str | None) -> str:
    """``name`` as the compiler stores it when written in the class ``class_name``."""
    if class_name is None or not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    stripped = class_name.lstrip("_")
    return f"_{stripped}{name}" if stripped else name


def _qualname(code: types.CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)


class Nested:
    """Decompiles code objects met inside another one (functions, lambdas, classes, comprehensions)."""

    def __init__(self, depth: int = 0, class_name: str | None = None):
        self.depth = depth
        self.class_name = class_name    # the class around: it mangles ``__private`` names

    def child(self, class_name: str | None = None) -> Nested:
        if self.depth >= MAX_DEPTH:
            raise DecompilationError("code objects nested too deeply")
        return Nested(self.depth + 1, class_name if class_name is not None else self.class_name)

    def statements(self, code: types.CodeType,
                   class_name: str | None = None) -> tuple[list[ast.stmt], Structurer]:
        """The statements of ``code``, read as the body of the class ``class_name`` if given."""
        instrs, entries = normalize(code)
        structurer = Structurer(code, instrs, entries, self.child(class_name))
        body = structurer.body()
        return tidy(body), structurer

    def arguments(self, code: types.CodeType, defaults: list, kwdefaults: dict,
                  annotations: dict) -> ast.arguments:
        names = code.co_varnames
        npos, nkw = code.co_argcount, code.co_kwonlyargcount
        nposonly = code.co_posonlyargcount

        def arg(name: str) -> ast.arg:
            return ast.arg(name, annotations.get(name))

        posonly = [arg(n) for n in names[:nposonly]]
        regular = [arg(n) for n in names[nposonly:npos]]
        kwonly = [arg(n) for n in names[npos:npos + nkw]]
        k = npos + nkw
        vararg = kwarg = None
        if code.co_flags & CO_VARARGS:
            vararg = arg(names[k])
            k += 1
        if code.co_flags & CO_VARKEYWORDS:
            kwarg = arg(names[k])
        kw_defaults = [kwdefaults.get(a.arg) for a in kwonly]
        return ast.arguments(posonly, regular, vararg, kwonly, kw_defaults, kwarg, list(defaults))

    def function_def(self, fn: v.FunctionValue, name: str | None = None) -> ast.stmt:
        code = fn.code
        # (a comprehension's own ``.0`` is named in the finished tree: _name_comprehension_iterator)
        hidden = [n for n in argument_names(code) if not n.isidentifier() and n != ".0"]
        if hidden:
            # 3.14's lazily evaluated values take ``.format``: a scope the compiler makes for a
            # statement (``type X = ...``), which only that statement can express
            raise DecompilationError(f"compiler-made scope with parameter {hidden[0]!r}: decompile the "
                                     "code that contains it", qualname=_qualname(code))
        body, structurer = self.statements(code)
        body = tidy(returns_to_breaks(strip_tail_returns(body)))
        decls: list[ast.stmt] = []
        if structurer.executor.globals_declared:
            decls.append(ast.Global(sorted(structurer.executor.globals_declared)))
        if structurer.executor.nonlocals_declared:
            decls.append(ast.Nonlocal(sorted(structurer.executor.nonlocals_declared)))
        doc = self.docstring(code)
        if doc is not None:
            decls.insert(0, ast.Expr(ast.Constant(doc)))
        # (the outermost function's lost cells are kept where it is rebuilt, out of its text)
        body = with_free_variables_kept(code, decls + body, cells=self.depth > 0)
        if code.co_flags & CO_ASYNC_GENERATOR:
            bare_returns(body)
        if code.co_flags & (CO_GENERATOR | CO_ASYNC_GENERATOR) and not _contains_yield(body):
            # keeps the generator kind: a yield the compiler sees but never runs
            body.insert(len(decls), ast.If(ast.Constant(False), [ast.Expr(ast.Yield(None))], []))
        args = self.arguments(code, fn.defaults, fn.kwdefaults, fn.annotations)
        kind = (
            ast.AsyncFunctionDef if code.co_flags & (CO_COROUTINE | CO_ASYNC_GENERATOR) else ast.FunctionDef
        )
        extra = {"type_params": fn.type_params} if sys.version_info >= (3, 12) else {}
        node = kind(name or code.co_name, args, body or [ast.Pass()], list(fn.decorators),
                    fn.annotations.get("return"), None, **extra)
        return node

    def docstring(self, code: types.CodeType) -> str | None:
        if code.co_name == "<lambda>" or code.co_name.startswith("<"):
            return None
        if sys.version_info >= (3, 14):
            has = code.co_flags & CO_HAS_DOCSTRING
            return code.co_consts[0] if has else None
        if code.co_consts and isinstance(code.co_consts[0], str):
            return code.co_consts[0]
        return None

    def lazy_expression(self, fn, ins) -> ast.expr:
        """The expression a lazily evaluated function returns (a bound, a default, an alias value)."""
        if not isinstance(fn, v.FunctionValue):
            raise DecompilationError("lazily evaluated value is not a function", qualname="<type parameter>")
        body = self.lazy_body(fn)
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            raise DecompilationError(
                "lazily evaluated value is not one expression", qualname=_qualname(fn.code)
            )
        return body[0].value

    def lazy_body(self, fn: v.FunctionValue) -> list:
        """The statements of a lazily evaluated function (3.12+ bounds and aliases, 3.14+
        ``__annotate__``) without its guard against formats it does not support."""
        body, _ = self.statements(fn.code)
        return [stmt for stmt in body if not _is_format_guard(stmt, fn.code)]

    def annotations_of(self, fn, ins) -> dict:
        """A function's annotations from its ``__annotate__`` function (3.14+: evaluated lazily)."""
        value = self.lazy_expression(fn, ins)
        if not isinstance(value, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                      for k in value.keys):
            raise DecompilationError("unrecognised __annotate__ function", qualname=_qualname(fn.code))
        return {k.value: val for k, val in zip(value.keys, value.values, strict=True)}

    def generic_scope(self, fn: v.FunctionValue, args: list, ins):
        """Run the ``<generic parameters of X>`` scope of ``def X[...]``, ``class X[...]`` or
        ``type X[...] = ...``: straight-line code that makes the type parameters, then the
        function, class or alias, which it returns with its type parameters attached."""
        code = fn.code
        instrs, _ = normalize(code)
        if not instrs or instrs[-1].opname != "RETURN_VALUE" or any(i.target is not None for i in instrs):
            raise DecompilationError("unrecognised type parameter scope", qualname=_qualname(code))
        executor = Executor(code, instrs, self.child())
        executor.bound_names = dict(zip(code.co_varnames[:code.co_argcount], args, strict=False))
        stack: list = []
        out: list = []
        end, stop = executor.run(0, len(instrs) - 1, stack, out)
        if stop.ins is not None or end != len(instrs) - 1 or out or len(stack) != 1:
            raise DecompilationError("unrecognised type parameter scope", qualname=_qualname(code))
        result = stack[0]
        if isinstance(result, v.ClassValue):
            if executor.type_params is None:
                raise DecompilationError("generic class without type parameters", qualname=_qualname(code))
            result.node.type_params = executor.type_params.nodes
        elif not isinstance(result, (v.FunctionValue, v.TypeAliasValue)):
            raise DecompilationError("unrecognised type parameter scope", qualname=_qualname(code))
        return result

    def lambda_or_error(self, fn: v.FunctionValue, ins) -> ast.expr:
        code = fn.code
        if code.co_name != "<lambda>" or fn.decorators:
            raise DecompilationError(f"function {code.co_name} used as a value", qualname=_qualname(code))
        body, _ = self.statements(code)
        if not code.co_flags & CO_GENERATOR:
            value = _returned_expression(body)
            if value is not None:
                body = [ast.Return(value)]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            if code.co_flags & CO_GENERATOR and body and isinstance(body[-1], ast.Return):
                exprs = [s.value for s in body[:-1] if isinstance(s, ast.Expr)]
                if len(exprs) == len(body) - 1 and len(exprs) == 1:
                    return ast.Lambda(self.arguments(code, fn.defaults, fn.kwdefaults, {}), exprs[0])
            raise DecompilationError("lambda body is not one expression", qualname=_qualname(code))
        return ast.Lambda(self.arguments(code, fn.defaults, fn.kwdefaults, {}), body[0].value)

    def comprehension(self, fn: v.FunctionValue, iterable: ast.expr, ins) -> ast.expr:
        code = fn.code
        body, _ = self.statements(code)
        body = [s for s in body if not (isinstance(s, ast.Return))]
        if len(body) != 1 or not isinstance(body[0], (ast.For, ast.AsyncFor)):
            raise DecompilationError("unrecognised comprehension body", qualname=_qualname(code))
        generators: list[ast.comprehension] = []
        element = comprehension_parts(body, generators, code)
        generators[0].iter = iterable
        kind = COMPREHENSION_KINDS.get(code.co_name)     # None: a generator expression
        if code.co_flags & CO_COROUTINE:
            generators[0].is_async = generators[0].is_async or 0
        node = comprehension_node(kind, element, generators)
        if code.co_flags & CO_COROUTINE:
            node.awaited_comprehension = True  # the call is awaited: ``await`` is implied by ``async for``
        return node

    def definition_name(self, name: str, target: str) -> str:
        """What a ``def``/``class`` here names to bind ``target``: ``name`` where the class around
        mangles it so (``__helper`` in class ``C``), else ``target`` (``_C__helper``)."""
        return name if mangled(name, self.class_name) == target else target

    def class_def(self, fn: v.FunctionValue, name: str, bases: list, keywords: list, ins) -> ast.ClassDef:
        body, structurer = self.statements(fn.code, class_name=name)
        cleaned = []
        for stmt in body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                target = stmt.targets[0].id
                if _implicit_class_store(target, stmt.value, fn.code):
                    continue
                if target == "__type_params__" and isinstance(stmt.value, ast.Name) \
                        and stmt.value.id == ".type_params":
                    continue            # a generic class: its brackets say it
                if target == "__doc__" and isinstance(stmt.value, ast.Constant) and not cleaned:
                    cleaned.append(ast.Expr(stmt.value))
                    continue
            cleaned.append(stmt)
        cleaned = strip_tail_returns(remove_implicit_returns(_without_copied_class_cell(cleaned)))
        cleaned = self.with_class_annotations(cleaned)
        if structurer.executor.nonlocals_declared:
            cleaned.insert(0, ast.Nonlocal(sorted(structurer.executor.nonlocals_declared)))
        if structurer.executor.globals_declared:
            cleaned.insert(0, ast.Global(sorted(structurer.executor.globals_declared)))
        cleaned = with_free_variables_kept(fn.code, cleaned)
        extra = {"type_params": []} if sys.version_info >= (3, 12) else {}
        return ast.ClassDef(name, bases, keywords, cleaned or [ast.Pass()], [], **extra)

    def with_class_annotations(self, body: list) -> list:
        """3.14+: ``name: annotation`` statements back in a class body, from its ``__annotate__``.

        The annotations come in source order. An annotated assignment is the body's first plain
        assignment to that name from where the previous annotation was; an annotation without a
        value goes just before the next one that has one. Both give the same ``__annotate__``
        function and the same namespace."""
        stores = [stmt for stmt in body if isinstance(stmt, ClassAnnotationsStmt)]
        if not stores:
            return body
        if len(stores) > 1:
            raise DecompilationError("class body stores two __annotate__ functions",
                                     qualname=_qualname(stores[0].fn.code))
        pending = self.class_annotation_entries(stores[0].fn)
        out: list = []
        for stmt in body:
            if isinstance(stmt, ClassAnnotationsStmt):
                continue
            name = stmt.targets[0].id if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) else None
            j = next((k for k, (n, _) in enumerate(pending) if n == name), None)
            if j is None:
                out.append(stmt)
                continue
            out.extend(ast.AnnAssign(ast.Name(n, ast.Store()), a, None, 1) for n, a in pending[:j])
            out.append(ast.AnnAssign(ast.Name(name, ast.Store()), pending[j][1], stmt.value, 1))
            pending = pending[j + 1:]
        out.extend(ast.AnnAssign(ast.Name(n, ast.Store()), a, None, 1) for n, a in pending)
        return out

    def class_annotation_entries(self, fn: v.FunctionValue) -> list[tuple[str, ast.expr]]:
        """(name, annotation) in order from a class's ``__annotate__``: ``return {...}``, or a dict
        filled one key at a time. Anything else (annotations inside ``if``) is refused."""
        body = self.lazy_body(fn)
        fail = DecompilationError("unrecognised class __annotate__ function", qualname=_qualname(fn.code))
        if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Dict):
            pairs = list(zip(body[0].value.keys, body[0].value.values, strict=True))
        elif len(body) >= 2 and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1 \
                and isinstance(body[0].targets[0], ast.Name) and isinstance(body[0].value, ast.Dict) \
                and not body[0].value.keys and isinstance(body[-1], ast.Return) \
                and isinstance(body[-1].value, ast.Name) and body[-1].value.id == body[0].targets[0].id:
            holder = body[0].targets[0].id
            pairs = []
            for stmt in body[1:-1]:
                target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
                if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                        and target.value.id == holder):
                    raise fail
                pairs.append((target.slice, stmt.value))
        else:
            raise fail
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier()
                   for k, _ in pairs):
            raise fail
        return [(k.value, val) for k, val in pairs]


    def with_module_annotations(self, body: list, compiler_made_the_set: bool) -> list:
        """3.14+: ``name: annotation`` statements back in a module body.

        The module stores an ``__annotate__`` function whose entries are each guarded by
        ``k in __conditional_annotations__``, and the body adds ``k`` to that set right after
        the annotated statement runs (ANNOTATION_MARK k). The annotated statement is the
        assignment to that name just before the mark, or none (``name: annotation`` alone).
        Where that shape is not found, the function and the marks stay as the code they are."""
        marks: list[int] = []
        stores: list[ModuleAnnotationsStmt] = []
        for node in _statements_within(body):
            if isinstance(node, AnnotationMarkStmt):
                marks.append(node.index)
            elif isinstance(node, ModuleAnnotationsStmt):
                stores.append(node)
        if not marks and not stores:
            if not compiler_made_the_set:
                return body
            # (``from __future__ import annotations``: the compiler still makes the set, first)
            return [stmt for stmt in body if not _makes_conditional_annotations(stmt)]
        # the compiler's store comes first; a later one is a ``def __annotate__`` of the source
        store = next((s for s in body if isinstance(s, ModuleAnnotationsStmt)), None)
        entries = None
        if store is not None and len(set(marks)) == len(marks):
            try:
                entries = self.module_annotation_entries(store.fn)
            except DecompilationError:
                entries = None
        if entries is None or sorted(marks) != sorted(entries) or not compiler_made_the_set:
            return _place_module_annotations(
                body, None, None, self, drop_set=compiler_made_the_set and not marks
            )
        return _place_module_annotations(body, entries, store, self, drop_set=True)

    def module_annotation_entries(self, fn: v.FunctionValue) -> dict[int, tuple[str, ast.expr]]:
        """index -> (name, annotation) from a module's ``__annotate__``: ``d = {}``, then for each
        annotation ``if k in __conditional_annotations__: d['name'] = annotation``, ``return d``."""
        body = self.lazy_body(fn)
        fail = DecompilationError("unrecognised module __annotate__ function", qualname=_qualname(fn.code))
        if len(body) < 2 or not (isinstance(body[0], ast.Assign) and len(body[0].targets) == 1
                                 and isinstance(body[0].targets[0], ast.Name)
                                 and isinstance(body[0].value, ast.Dict) and not body[0].value.keys):
            raise fail
        holders = {body[0].targets[0].id}
        if not (isinstance(body[-1], ast.Return) and isinstance(body[-1].value, ast.Name)
                and body[-1].value.id in holders):
            raise fail

        def alias(stmt) -> bool:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Name)
                and stmt.value.id in holders
            ):
                holders.add(stmt.targets[0].id)
                return True
            return False

        entries: dict[int, tuple[str, ast.expr]] = {}
        for stmt in body[1:-1]:
            if alias(stmt):
                continue
            test = stmt.test if isinstance(stmt, ast.If) and not stmt.orelse else None
            if not (
                isinstance(test, ast.Compare)
                and isinstance(test.left, ast.Constant)
                and isinstance(test.left.value, int)
                and len(test.ops) == 1
                and isinstance(test.ops[0], ast.In)
                and isinstance(test.comparators[0], ast.Name)
                and test.comparators[0].id == "__conditional_annotations__"
            ):
                raise fail
            found = None
            for inner in stmt.body:
                if alias(inner):
                    continue
                target = (
                    inner.targets[0] if isinstance(inner, ast.Assign) and len(inner.targets) == 1 else None
                )
                if found is not None or not (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Name)
                    and target.value.id in holders
                    and isinstance(target.slice, ast.Constant)
                    and isinstance(target.slice.value, str)
                    and target.slice.value.isidentifier()
                ):
                    raise fail
                found = (target.slice.value, inner.value)
            if found is None or test.left.value in entries:
                raise fail
            entries[test.left.value] = found
        return entries


def _statements_within(body: list):
    """Every statement in ``body`` and in the statement lists nested in it."""
    for stmt in body:
        yield stmt
        for block in _blocks_of(stmt):
            yield from _statements_within(block)


def _blocks_of(stmt) -> list[list]:
    blocks = [getattr(stmt, name) for name in ("body", "orelse", "finalbody")
              if isinstance(getattr(stmt, name, None), list)]
    blocks += [handler.body for handler in getattr(stmt, "handlers", ())]
    blocks += [case.body for case in getattr(stmt, "cases", ())]
    return blocks


def _makes_conditional_annotations(stmt: ast.stmt) -> bool:
    """``__conditional_annotations__ = set()``, which 3.14+ compiles into a module that annotates."""
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and stmt.targets[0].id == "__conditional_annotations__" and isinstance(stmt.value, ast.Call) \
        and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "set" and not stmt.value.args


def _place_module_annotations(body: list, entries: dict | None, store: ModuleAnnotationsStmt | None,
                              nested: Nested, drop_set: bool) -> list:
    """``with_module_annotations``' rewrite (``store`` holds ``entries``); with ``entries`` None,
    the code as it runs instead: ``def __annotate__`` and ``__conditional_annotations__.add(k)``.
    ``drop_set``: leave out ``__conditional_annotations__ = set()`` (the compiler makes it)."""
    out: list = []
    for stmt in body:
        if isinstance(stmt, ModuleAnnotationsStmt):
            if stmt is not store:
                out.append(nested.function_def(stmt.fn, "__annotate__"))
            continue
        if isinstance(stmt, AnnotationMarkStmt):
            if entries is None:
                out.append(
                    ast.Expr(
                        ast.Call(
                            ast.Attribute(load("__conditional_annotations__"), "add", ast.Load()),
                            [ast.Constant(stmt.index)],
                            [],
                        )
                    )
                )
                continue
            name, annotation = entries[stmt.index]
            previous = out[-1] if out else None
            if isinstance(previous, ast.Assign) and len(previous.targets) == 1 \
                    and isinstance(previous.targets[0], ast.Name) and previous.targets[0].id == name:
                out[-1] = ast.AnnAssign(ast.Name(name, ast.Store()), annotation, previous.value, 1)
            else:
                out.append(ast.AnnAssign(ast.Name(name, ast.Store()), annotation, None, 1))
            continue
        if drop_set and _makes_conditional_annotations(stmt):
            continue
        for block in _blocks_of(stmt):
            block[:] = _place_module_annotations(block, entries, store, nested, drop_set)
        out.append(stmt)
    return out
