"""Building containers: displays, slices, strings, and the appends and updates that grow them."""

from __future__ import annotations

import ast
import copy

from depyf.decompiler import values as v
from depyf.decompiler.expressions import constant, load
from depyf.decompiler.pseudo_statements import AppendStmt


class Containers:
    """Opcodes that build lists, tuples, sets, dicts, strings and slices."""

    def op_BUILD_TUPLE(self, ins, stack, out):
        raw = self.popn(stack, ins.argval, ins)
        if raw and all(isinstance(x, v.CellRef) for x in raw):
            stack.append(v.ClosureCells([x.name for x in raw]))
            return
        if raw and all(isinstance(x, v.TypeParams) for x in raw):
            stack.append(v.TypeParams([node for x in raw for node in x.nodes]))
            return
        items = [self.value(x, ins) for x in raw]
        stack.append(ast.Tuple(items, ast.Load()))

    def op_BUILD_LIST(self, ins, stack, out):
        if self.comp_kind == "list" and ins.argval == 0 and not any(
                isinstance(x, v.CompAccumulator) for x in stack):
            stack.append(v.CompAccumulator("list"))
            return
        items = [self.value(x, ins) for x in self.popn(stack, ins.argval, ins)]
        stack.append(ast.List(items, ast.Load()))

    def op_BUILD_SET(self, ins, stack, out):
        if self.comp_kind == "set" and ins.argval == 0 and not any(
                isinstance(x, v.CompAccumulator) for x in stack):
            stack.append(v.CompAccumulator("set"))
            return
        items = [self.value(x, ins) for x in self.popn(stack, ins.argval, ins)]
        stack.append(ast.Set(items))

    def op_BUILD_MAP(self, ins, stack, out):
        if self.comp_kind == "dict" and ins.argval == 0 and not any(
                isinstance(x, v.CompAccumulator) for x in stack):
            stack.append(v.CompAccumulator("dict"))
            return
        items = [self.value(x, ins) for x in self.popn(stack, 2 * ins.argval, ins)]
        stack.append(ast.Dict(items[0::2], items[1::2]))

    def op_BUILD_CONST_KEY_MAP(self, ins, stack, out):
        keys = self.pop(stack, ins)
        vals = [self.value(x, ins) for x in self.popn(stack, ins.argval, ins)]
        key_nodes = keys.elts if isinstance(keys, ast.Tuple) else [constant(k) for k in keys.value]
        stack.append(ast.Dict(list(key_nodes), vals))

    def op_BUILD_STRING(self, ins, stack, out):
        parts = []
        for x in self.popn(stack, ins.argval, ins):
            x = self.value(x, ins)
            if isinstance(x, ast.JoinedStr):
                parts.extend(x.values)
            else:
                parts.append(x)
        stack.append(ast.JoinedStr(parts))

    def op_BUILD_SLICE(self, ins, stack, out):
        items = [self.value(x, ins) for x in self.popn(stack, ins.argval, ins)]
        items = [None if isinstance(x, ast.Constant) and x.value is None else x for x in items]
        stack.append(ast.Slice(*items))

    def mutate(self, ins, stack, out, method: str, args: list) -> bool:
        """In-place change of a collection that is shared (COPY) or already spilled: a statement."""
        depth = ins.argval
        target = stack[-depth]
        shared = sum(1 for x in stack if x is target) > 1 or not isinstance(
            target, (ast.List, ast.Set, ast.Dict)
        )
        if not shared:
            return False
        self.spill(stack, out, force=(target,))
        target = stack[-depth]
        if method == "__setitem__":
            node = ast.Assign([ast.Subscript(target, args[0], ast.Store())], args[1])
        else:
            node = ast.Expr(ast.Call(ast.Attribute(target, method, ast.Load()), args, []))
        out.append(node)
        return True

    def op_LIST_APPEND(self, ins, stack, out):
        item = self.value(self.pop(stack, ins), ins)
        target = stack[-ins.argval]
        if not isinstance(target, v.CompAccumulator) and self.mutate(
                ins, stack, out, "append" if ins.opname == "LIST_APPEND" else "add", [item]):
            return
        if isinstance(target, v.CompAccumulator):
            out.append(AppendStmt(item, None))
        elif isinstance(target, (ast.List, ast.Set)):
            self.own_copy(stack, ins.argval).elts.append(item)
        else:
            raise self.error(ins, "LIST_APPEND to an unknown collection")

    op_SET_ADD = op_LIST_APPEND

    def op_MAP_ADD(self, ins, stack, out):
        val = self.value(self.pop(stack, ins), ins)
        key = self.value(self.pop(stack, ins), ins)
        target = stack[-ins.argval]
        if not isinstance(target, v.CompAccumulator) and self.mutate(
            ins, stack, out, "__setitem__", [key, val]
        ):
            return
        if isinstance(target, v.CompAccumulator):
            out.append(AppendStmt(val, key))
        elif isinstance(target, ast.Dict):
            target = self.own_copy(stack, ins.argval)
            target.keys.append(key)
            target.values.append(val)
        else:
            raise self.error(ins, "MAP_ADD to an unknown collection")

    def op_LIST_EXTEND(self, ins, stack, out):
        item = self.value(self.pop(stack, ins), ins)
        target = stack[-ins.argval]
        if isinstance(target, v.CompAccumulator):      # ``[*row for row in rows]`` (3.15+)
            out.append(AppendStmt(ast.Starred(item, ast.Load()), None))
            return
        if self.mutate(ins, stack, out, "extend" if ins.opname == "LIST_EXTEND" else "update", [item]):
            return
        if not isinstance(target, (ast.List, ast.Set)):
            raise self.error(ins, "extend of an unknown collection")
        target = self.own_copy(stack, ins.argval)
        if isinstance(item, ast.Tuple) and not target.elts and all(
                isinstance(e, ast.Constant) for e in item.elts):
            target.elts.extend(item.elts)  # a folded constant list/set display
        elif getattr(item, "folded_constant", False) and not target.elts and isinstance(target, ast.Set) \
                and item.args:
            target.elts.extend(item.args[0].elts)
        else:
            target.elts.append(ast.Starred(item, ast.Load()))

    op_SET_UPDATE = op_LIST_EXTEND

    def op_DICT_UPDATE(self, ins, stack, out):
        item = self.value(self.pop(stack, ins), ins)
        target = stack[-ins.argval]
        if isinstance(target, v.CompAccumulator):      # ``{**d for d in rows}`` (3.15+): no value
            out.append(AppendStmt(None, item))
            return
        if self.mutate(ins, stack, out, "update", [item]):
            return
        if not isinstance(target, ast.Dict):
            raise self.error(ins, "update of an unknown mapping")
        target = self.own_copy(stack, ins.argval)
        if isinstance(item, ast.Dict) and not target.keys:
            target.keys.extend(item.keys)
            target.values.extend(item.values)
        else:
            target.keys.append(None)
            target.values.append(item)

    op_DICT_MERGE = op_DICT_UPDATE

    def op_LIST_TO_TUPLE(self, ins, stack, out):
        item = self.value(self.pop(stack, ins), ins)
        if isinstance(item, ast.List):
            stack.append(ast.Tuple(item.elts, ast.Load()))
        else:
            stack.append(ast.Call(load("tuple"), [item], []))

    def own_copy(self, stack: list, depth: int) -> ast.List | ast.Set | ast.Dict:
        """The display ``depth`` deep in ``stack``, for an instruction that adds to it: a copy of
        its own (its lists of items too) the first time the current run adds to it, then that
        copy. The branches of a conditional expression inside a display (``{**(a if c else {}),
        2: x}``) are read on copies of one stack, each in runs of its own, and where each goes on
        to add to the display, the additions of one must not land in the other's."""
        node = stack[-depth]
        if self.fresh_displays.get(id(node)) is node:
            return node
        node = copy.copy(node)
        for field in ("elts", "keys", "values"):
            items = getattr(node, field, None)
            if items is not None:
                setattr(node, field, list(items))
        stack[-depth] = node
        self.fresh_displays[id(node)] = node
        return node
