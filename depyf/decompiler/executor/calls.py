"""Calls and imports."""

from __future__ import annotations

import ast
import keyword

from depyf.decompiler import values as v
from depyf.decompiler.instructions import COMPREHENSION_KINDS
from depyf.decompiler.pseudo_statements import WithExitStmt


def _keyword_name(key: ast.expr) -> str | None:
    """The name a ``name=value`` argument can spell this key with, or None."""
    if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier() \
            and not keyword.iskeyword(key.value):
        return key.value
    return None


def _keywords_from_mapping(kwargs: ast.expr) -> list[ast.keyword]:
    """The keyword arguments of a call whose keywords the compiler gathered in one mapping.

    ``f(**kw, k=v)`` builds ``{**kw, **{'k': v}}``; a display with name keys merged in comes back
    as ``k=v`` (the bytecode of ``**{'k': v}`` is the same). A name given twice (``f(k=1, k=2)``
    does not compile) keeps the displays as ``**`` arguments, and a key that is no name keeps
    the whole mapping as one.
    """
    if not isinstance(kwargs, ast.Dict):
        return [ast.keyword(None, kwargs)]
    if any(key is not None and _keyword_name(key) is None for key in kwargs.keys):
        return [ast.keyword(None, kwargs)]
    merged: list[ast.keyword] = []
    for key, val in zip(kwargs.keys, kwargs.values, strict=False):
        if key is not None:
            merged.append(ast.keyword(key.value, val))
        elif isinstance(val, ast.Dict) and val.keys and all(_keyword_name(k) for k in val.keys):
            merged.extend(ast.keyword(k.value, item) for k, item in zip(val.keys, val.values, strict=False))
        else:
            merged.append(ast.keyword(None, val))
    names = [kw.arg for kw in merged if kw.arg is not None]
    if len(names) == len(set(names)):
        return merged
    return [ast.keyword(None if key is None else key.value, val)
            for key, val in zip(kwargs.keys, kwargs.values, strict=False)]


class Calls:
    """Opcodes that call: functions, methods, ``__import__``."""

    def _callable(self, ins, stack):
        items = self.popn(stack, ins.slots, ins)
        real = [x for x in items if not isinstance(x, v.Null)]
        if len(real) == 2:
            # (unbound method, self) pair from a method load: treat as bound attribute call
            func, self_arg = real
            return func, [self_arg]
        if len(real) != 1:
            raise self.error(ins, "call without a callable")
        return real[0], []

    def op_CALL(self, ins, stack, out, kwnames=()):
        args = self.popn(stack, ins.argval, ins)
        func, prefix = self._callable(ins, stack)
        if isinstance(func, v.WithExit):
            out.append(WithExitStmt(func))
            stack.append(v.NULL)
            return
        if isinstance(func, v.BuildClass):
            stack.append(self._build_class(args, kwnames, ins))
            return
        args, prefix = prefix + args, []
        npos = len(args) - len(kwnames)
        if isinstance(func, v.FunctionValue) and func.code.co_name.startswith("<generic parameters of ") \
                and not kwnames:
            # a PEP 695 statement: its scope makes the type parameters, then the def, class or alias
            stack.append(self.decompile_nested.generic_scope(func, args, ins))
            return
        if isinstance(func, v.FunctionValue) and not kwnames and npos == 1 \
                and isinstance(args[0], v.Iterator) and func.code.co_name.startswith("<") \
                and (func.code.co_name in COMPREHENSION_KINDS or func.code.co_name == "<genexpr>"):
            stack.append(self.decompile_nested.comprehension(func, args[0].iterable, ins))
            return
        if not kwnames and npos == 1 and isinstance(args[0], (v.FunctionValue, v.ClassValue)) \
                and not prefix and isinstance(func, ast.expr):
            target = args[0]
            if isinstance(target, v.FunctionValue) and target.code.co_name != "<lambda>":
                target.decorators.insert(0, func)
                stack.append(target)
                return
            if isinstance(target, v.ClassValue):
                target.node.decorator_list.insert(0, func)
                stack.append(target)
                return
        func = self.value(func, ins)
        values = [self.value(a, ins) for a in prefix + args]
        pos = values[:len(values) - len(kwnames)] if kwnames else values
        kws = [
            ast.keyword(name, val)
            for name, val in zip(kwnames, values[len(values) - len(kwnames) :], strict=False)
        ]
        stack.append(ast.Call(func, pos, kws))

    def op_CALL_KW(self, ins, stack, out):
        names = self.pop(stack, ins)
        kwnames = tuple(e.value for e in names.elts) if isinstance(names, ast.Tuple) else tuple(names.value)
        self.op_CALL(ins, stack, out, kwnames)

    def op_CALL_FUNCTION_EX(self, ins, stack, out):
        kwargs = self.value(self.pop(stack, ins), ins) if ins.argval else None
        args = self.value(self.pop(stack, ins), ins)
        func, prefix = self._callable(ins, stack)
        func = self.value(func, ins)
        prefix = [self.value(p, ins) for p in prefix]
        if isinstance(args, ast.Tuple):
            pos = list(prefix) + list(args.elts)
        elif isinstance(args, ast.List):
            pos = list(prefix) + list(args.elts)
        else:
            pos = list(prefix) + [ast.Starred(args, ast.Load())]
        keywords = [] if kwargs is None else _keywords_from_mapping(kwargs)
        stack.append(ast.Call(func, pos, keywords))

    def op_IMPORT_NAME(self, ins, stack, out):
        fromlist = self.pop(stack, ins)
        level = self.pop(stack, ins)
        names = None
        if isinstance(fromlist, ast.Tuple):
            names = tuple(e.value for e in fromlist.elts)
        elif isinstance(fromlist, ast.Constant) and fromlist.value is not None:
            names = tuple(fromlist.value)
        stack.append(v.ImportValue(ins.argval, level.value if isinstance(level, ast.Constant) else 0, names))

    def op_IMPORT_FROM(self, ins, stack, out):
        module = stack[-1]
        if not isinstance(module, v.ImportValue):
            raise self.error(ins, "IMPORT_FROM without a module")
        if module.fromlist is None:
            stack.append(v.ImportValue(module.module, module.level, None, module.attrs + (ins.argval,)))
        else:
            stack.append(v.ImportedName(module, ins.argval))

    def op_IMPORT_STAR(self, ins, stack, out):
        module = self.pop(stack, ins)
        out.append(ast.ImportFrom(module.module or None, [ast.alias("*")], module.level))

    def _import_statement(self, item: v.ImportValue, target, ins):
        if not isinstance(target, ast.Name):
            raise self.error(ins, "import stored into a non-name")
        if item.fromlist is not None:
            raise self.error(ins, "import with a fromlist stored directly")
        top = item.module.split(".")[0]
        if item.attrs or target.id != top:
            return ast.Import([ast.alias(item.module, target.id)])
        return ast.Import([ast.alias(item.module, None)])

    def _import_from_statement(self, item: v.ImportedName, target, out, ins):
        if not isinstance(target, ast.Name):
            raise self.error(ins, "imported name stored into a non-name")
        alias = ast.alias(item.name, None if target.id == item.name else target.id)
        last = out[-1] if out else None
        if isinstance(last, ast.ImportFrom) and getattr(last, "source", None) is item.source:
            last.names.append(alias)
            return
        node = ast.ImportFrom(item.source.module or None, [alias], item.source.level)
        node.source = item.source
        out.append(node)

    def op_PRINT_EXPR(self, ins, stack, out):
        out.append(ast.Expr(self.value(self.pop(stack, ins), ins)))
