"""Loads, stores, deletes and unpacking; the stack shuffles (POP_TOP, COPY, SWAP)."""

from __future__ import annotations

import ast
import types

from depyf.decompiler import traversal
from depyf.decompiler import values as v
from depyf.decompiler.executor.stack_reads import _reads_name, _reads_target, _writes
from depyf.decompiler.expressions import constant, load, store, to_store
from depyf.decompiler.pseudo_statements import (
    AnnotationMarkStmt,
    ClassAnnotationsStmt,
    ExceptAsStmt,
    ModuleAnnotationsStmt,
)


def _parse_annotation(node: ast.Constant) -> ast.expr:
    """Under ``from __future__ import annotations`` the compiler stored the annotation's text."""
    try:
        return ast.parse(node.value, mode="eval").body
    except SyntaxError:
        return node


class LoadsStores:
    """Opcodes that move values between names and the stack."""

    def op_LOAD_CONST(self, ins, stack, out):
        value = ins.argval
        stack.append(value if isinstance(value, types.CodeType) else constant(value))

    def op_LOAD_FAST(self, ins, stack, out):
        bound = self.bound_names.get(ins.argval)
        stack.append(bound if bound is not None else load(ins.argval))

    def assign_pending_walrus(self, reader: ast.expr, stack: list, out: list) -> None:
        """A condition that reads a name must see a ``(name := ...)`` still waiting on the stack
        (a match subject captured before its guard): assign that value first."""
        names = {
            n.id for n in traversal.walk(reader) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        for item in list(stack):
            if isinstance(item, ast.expr) and any(
                    isinstance(n, ast.NamedExpr) and n.target.id in names for n in traversal.walk(item)):
                self.assign_temp(item, stack, out)

    op_LOAD_DEREF = op_LOAD_FAST
    op_LOAD_CLASSDEREF = op_LOAD_FAST
    op_LOAD_NAME = op_LOAD_FAST
    op_LOAD_GLOBAL = op_LOAD_FAST

    def op_ANNOTATION_MARK(self, ins, stack, out):
        out.append(AnnotationMarkStmt(ins.argval))

    def op_LOAD_CLOSURE(self, ins, stack, out):
        stack.append(v.CellRef(ins.argval))

    def op_PUSH_NULL(self, ins, stack, out):
        stack.append(v.NULL)

    def op_LOAD_ATTR(self, ins, stack, out):
        obj = self.value(self.pop(stack, ins), ins)
        stack.append(ast.Attribute(obj, ins.argval, ast.Load()))

    def op_LOAD_ASSERTION_ERROR(self, ins, stack, out):
        node = load("AssertionError")
        node.assertion_error = True     # the builtin itself, no lookup: ``assert``'s (cleanup)
        stack.append(node)

    def op_LOAD_BUILD_CLASS(self, ins, stack, out):
        stack.append(v.BuildClass())

    def _store(self, target: ast.expr, item, ins, stack, out) -> None:
        if isinstance(item, v.Hole):
            item.fill(target)
            return
        if isinstance(item, v.ExcValue) and isinstance(target, ast.Name):
            out.append(ExceptAsStmt(target.id))
            return
        if isinstance(item, (v.TypeParams, v.GenericBase)):
            # a PEP 695 scope names its type parameters: the statement's brackets say it
            if isinstance(item, v.TypeParams):
                self.type_params = item
            return
        if isinstance(item, v.TypeAliasValue) and isinstance(target, ast.Name) and target.id == item.name:
            out.append(ast.TypeAlias(ast.Name(item.name, ast.Store()), type_params=item.type_params,
                                     value=item.value))
            return
        if isinstance(item, v.FunctionValue) and isinstance(target, ast.Name) \
                and target.id == "__annotate_func__" and item.code.co_name == "__annotate__" \
                and not self.code.co_flags & 0x01:
            # 3.14+: a class body's annotations, computed lazily (render turns it into the
            # body's ``name: annotation`` statements)
            out.append(ClassAnnotationsStmt(item))
            return
        if isinstance(item, v.FunctionValue) and isinstance(target, ast.Name) \
                and target.id == "__annotate__" and item.code.co_name == "__annotate__" \
                and self.code.co_name == "<module>":
            # 3.14+: the module's annotations (render puts them back as ``name: annotation``)
            out.append(ModuleAnnotationsStmt(item))
            return
        if isinstance(item, v.FunctionValue) and isinstance(target, ast.Name) and (
                item.code.co_name == target.id or (item.code.co_name.startswith("__")
                                                   and target.id.endswith(item.code.co_name))):
            name = self.decompile_nested.definition_name(item.code.co_name, target.id)
            out.append(self.decompile_nested.function_def(item, name))
            return
        if isinstance(item, v.ClassValue) and isinstance(target, ast.Name) and (
                item.node.name == target.id or (item.node.name.startswith("__")
                                                and target.id.endswith(item.node.name))):
            item.node.name = self.decompile_nested.definition_name(item.node.name, target.id)
            out.append(item.node)
            return
        if isinstance(item, v.ImportValue):
            out.append(self._import_statement(item, target, ins))
            return
        if isinstance(item, v.ImportedName):
            self._import_from_statement(item, target, out, ins)
            return
        value = self.value(item, ins)
        if self.parallel and not any(value is x for x in self.parallel_pending):
            self.flush_parallel(out)
        if self.parallel or (isinstance(item, ast.expr) and not any(x is value for x in stack)
                             and (_reads_target(stack, target) or self.tuple_assignment_ahead(stack))):
            if not self.parallel:
                self.parallel_pending = [x for x in stack if isinstance(x, ast.expr)]
                # evaluation order is the order the values were completed, not their stack
                # positions (SWAP/ROT_TWO reorder the stack before the stores)
                self.parallel_order = sorted(
                    self.parallel_pending + [value], key=lambda x: getattr(x, "_seq", 0)
                )
            self.parallel.append((target, value))
            self.parallel_pending = [x for x in self.parallel_pending if x is not value]
            if not any(any(x is p for p in self.parallel_pending) for x in stack):
                self.flush_parallel(out)
            return
        if isinstance(value, ast.BinOp) and getattr(value, "inplace", False):
            self.statement(
                ast.AugAssign(to_store(target), value.op, value.right), stack, out, _writes(target)
            )
            return
        # a value still on the stack (COPY) is shared: chained assignment or walrus
        if any(x is value for x in stack):
            if out and isinstance(out[-1], ast.Assign) and getattr(out[-1], "shared_value", None) is value:
                out[-1].targets.append(target)
                return
            if isinstance(target, ast.Name):
                named = ast.NamedExpr(ast.Name(target.id, ast.Store()), value)
                named.from_copy = True
                for k, x in enumerate(stack):
                    if x is value:
                        stack[k] = named
                return
            self._assign_shared(target, value, stack, out)
            return
        if out and isinstance(out[-1], ast.Assign) and getattr(out[-1], "shared_value", None) is value:
            out[-1].targets.append(target)
            out[-1].shared_value = None
            return
        if isinstance(value, ast.NamedExpr) and getattr(value, "from_copy", False):
            # the copies were stored first, then the value itself: ``a = b = x``, not
            # ``b = (a := x)`` (innermost first: ``a = b = c = x`` stores a, b, c)
            targets = [target]
            while isinstance(value, ast.NamedExpr) and getattr(value, "from_copy", False):
                targets.insert(0, ast.Name(value.target.id, ast.Store()))
                value = value.value
            writes = set().union(*(_writes(t) for t in targets))
            self.statement(ast.Assign(targets, value), stack, out, writes)
            return
        self.statement(ast.Assign([target], value), stack, out, _writes(target))

    def op_STORE_FAST(self, ins, stack, out):
        self._store(store(ins.argval), self.pop(stack, ins), ins, stack, out)

    op_STORE_NAME = op_STORE_FAST

    def op_STORE_DEREF(self, ins, stack, out):
        if ins.argval in self.code.co_freevars:
            self.nonlocals_declared.add(ins.argval)
        self.op_STORE_FAST(ins, stack, out)

    def op_STORE_GLOBAL(self, ins, stack, out):
        self.globals_declared.add(ins.argval)
        self.op_STORE_FAST(ins, stack, out)

    def op_STORE_ATTR(self, ins, stack, out):
        obj = self.value(self.pop(stack, ins), ins)
        item = self.pop(stack, ins)
        obj = self.shared_container(obj, stack, out)
        self._store(ast.Attribute(obj, ins.argval, ast.Store()), item, ins, stack, out)

    def op_STORE_SUBSCR(self, ins, stack, out):
        key = self.value(self.pop(stack, ins), ins)
        container = self.value(self.pop(stack, ins), ins)
        item = self.pop(stack, ins)
        container = self.shared_container(container, stack, out)
        if isinstance(container, ast.Name) and container.id == "__annotations__" \
                and isinstance(key, ast.Constant) and isinstance(key.value, str):
            annotation = self.value(item, ins)
            if self.code.co_flags & 0x1000000 and isinstance(annotation, ast.Constant) \
                    and isinstance(annotation.value, str):
                annotation = _parse_annotation(annotation)
            ann = ast.AnnAssign(store(key.value), annotation, None, 1)
            out.append(ann)
            return
        self._store(ast.Subscript(container, key, ast.Store()), item, ins, stack, out)

    def op_DELETE_FAST(self, ins, stack, out):
        node = ast.Delete([ast.Name(ins.argval, ast.Del())])
        if ins.opname == "DELETE_FAST" and not self.parallel and not _reads_name(stack, ins.argval):
            # Deleting a local has no effect the values waiting on the stack could see, so they
            # need not be evaluated first (Dynamo deletes its temporaries around a graph call).
            out.append(node)
            return
        self.statement(node, stack, out, frozenset({ins.argval}))

    op_DELETE_NAME = op_DELETE_FAST

    def op_DELETE_DEREF(self, ins, stack, out):
        # ``nonlocal v; del v`` may be the only mention of ``v``: it binds like a store
        if ins.argval in self.code.co_freevars:
            self.nonlocals_declared.add(ins.argval)
        self.op_DELETE_FAST(ins, stack, out)

    def op_DELETE_GLOBAL(self, ins, stack, out):
        self.globals_declared.add(ins.argval)
        self.op_DELETE_FAST(ins, stack, out)

    def op_DELETE_ATTR(self, ins, stack, out):
        obj = self.value(self.pop(stack, ins), ins)
        self.statement(ast.Delete([ast.Attribute(obj, ins.argval, ast.Del())]), stack, out)

    def op_DELETE_SUBSCR(self, ins, stack, out):
        key = self.value(self.pop(stack, ins), ins)
        container = self.shared_container(self.value(self.pop(stack, ins), ins), stack, out)
        self.statement(ast.Delete([ast.Subscript(container, key, ast.Del())]), stack, out)

    def op_UNPACK_SEQUENCE(self, ins, stack, out):
        nxt = self.instrs[self.current + 1] if self.current + 1 < len(self.instrs) else None
        if (
            ins.argval == 1
            and nxt is not None
            and nxt.opname in ("LOAD_CONST", "BUILD_TUPLE", "RETURN_VALUE")
            and not isinstance(stack[-1] if stack else None, (v.Hole, ast.Call))
        ):
            # ``*args: *Ts`` (PEP 646) or a type parameter default ``*Ts = *tuple[int, ...]``: the
            # one item of unpacking the value, not a store
            stack.append(ast.Starred(self.value(self.pop(stack, ins), ins), ast.Load()))
            return
        self._unpack(ins, stack, out, ins.argval, None)

    def op_UNPACK_EX(self, ins, stack, out):
        before, after = ins.argval & 0xFF, ins.argval >> 8
        self._unpack(ins, stack, out, before + 1 + after, before)

    def _unpack(self, ins, stack, out, count, star_index):
        item = self.pop(stack, ins)
        if isinstance(item, v.Hole):
            parent = item
        else:
            value = self.value(item, ins)
            parent = v.Hole(lambda target, value=value: self._assign_unpacked(target, value, out))
        group = v.TupleHole(parent, count, star_index, is_local=lambda name: not self.rebindable(name))
        for k in reversed(range(count)):
            stack.append(group.child(k))

    def _assign_unpacked(self, target: ast.expr, value: ast.expr, out: list) -> None:
        """``a, b = value``; a value the stack still holds (COPY: ``a, b = x = f()``) stays shared,
        so the next store joins this assignment instead of evaluating it again."""
        stack = self.current_stack
        if any(x is value for x in stack):
            self._assign_shared(target, value, stack, out)
            return
        if out and isinstance(out[-1], ast.Assign) and getattr(out[-1], "shared_value", None) is value:
            # the last copy of a shared value, unpacked too: ``a, b = c, d = f()``
            out[-1].targets.append(target)
            out[-1].shared_value = None
            return
        if self.parallel or _reads_target(stack, target) or self.tuple_assignment_ahead(stack):
            # a value still waiting on the stack was read from a location these stores overwrite
            # (``(a, b), c = f(), b``), or its store comes next (``(a, b), c = f(), g()``): the
            # stores join one assignment with the value's own store
            self._store(target, value, None, stack, out)
            return
        out.append(ast.Assign([target], value))

    def _assign_shared(self, target: ast.expr, value: ast.expr, stack: list, out: list) -> None:
        """``target = value`` where the stack still holds ``value``: the store that takes it next
        adds its target to this assignment (``a = b = f()``) instead of evaluating it again."""
        node = ast.Assign([target], value)
        node.shared_value = value
        self.statement(node, stack, out, _writes(target), keep=value)

    def op_POP_TOP(self, ins, stack, out):
        item = self.pop(stack, ins)
        if isinstance(item, (v.Null, v.ExcValue, v.Iterator, v.ImportValue)):
            if isinstance(item, v.ImportValue) and item.fromlist is not None and item.fromlist[:1] == ("*",):
                return
            return
        if isinstance(item, v.WithEnter):
            item.fill(None)
            return
        if isinstance(item, v.Hole):
            target = store("_")
            target.dead_store = True
            item.fill(target)
            return
        if any(x is item for x in stack):
            return  # a COPY of a value still in use (e.g. chained comparison cleanup)
        if isinstance(item, ast.Name) and item.id.startswith("__stack_"):
            return
        self.statement(ast.Expr(self.value(item, ins)), stack, out)

    def op_COPY(self, ins, stack, out):
        item = stack[-ins.argval]
        if isinstance(item, ast.expr):
            self.copied.add(id(item))
        stack.append(item)

    def op_SWAP(self, ins, stack, out):
        n = ins.argval
        stack[-1], stack[-n] = stack[-n], stack[-1]

    def op_LOAD_LOCALS(self, ins, stack, out):
        stack.append(v.LoadLocals())

    def op_LOAD_FROM_DICT_OR_DEREF(self, ins, stack, out):
        self.pop(stack, ins)
        stack.append(load(ins.argval))

    op_LOAD_FROM_DICT_OR_GLOBALS = op_LOAD_FROM_DICT_OR_DEREF
