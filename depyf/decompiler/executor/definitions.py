"""Functions, classes, comprehensions, annotations and PEP 695 type parameters."""

from __future__ import annotations

import ast
import types

from depyf.decompiler import values as v

# PEP 695 type parameters made from a name alone (3.12+; ast has these node types from 3.12)
_TYPE_PARAM_KINDS = {
    "INTRINSIC_TYPEVAR": getattr(ast, "TypeVar", None),
    "INTRINSIC_PARAMSPEC": getattr(ast, "ParamSpec", None),
    "INTRINSIC_TYPEVARTUPLE": getattr(ast, "TypeVarTuple", None),
}


class Definitions:
    """Opcodes that make functions and classes and set their attributes."""

    def op_MAKE_FUNCTION(self, ins, stack, out):
        flags = ins.argval
        code = self.pop(stack, ins)
        qualname = None
        if ins.extra.get("qualname_on_stack"):
            code, qualname = self.pop(stack, ins), code
        if not isinstance(code, types.CodeType):
            raise self.error(ins, "MAKE_FUNCTION without a code object")
        fn = v.FunctionValue(code)
        if qualname is not None:
            known = isinstance(qualname, ast.Constant) and isinstance(qualname.value, str)
            fn.qualname, fn.qualname_known = (qualname.value if known else None), known
        if flags & 0x08:
            cells = self.pop(stack, ins)  # closure cells: recreated by the compiler
            self._set_closure(fn, cells, ins)
        if flags & 0x04:
            fn.annotations = self._annotations(self.pop(stack, ins), ins)
        if flags & 0x02:
            kw = self.value(self.pop(stack, ins), ins)
            if isinstance(kw, ast.Dict):
                fn.kwdefaults = {k.value: val for k, val in zip(kw.keys, kw.values, strict=False)}
        if flags & 0x01:
            d = self.value(self.pop(stack, ins), ins)
            fn.defaults = list(d.elts) if isinstance(d, ast.Tuple) else []
        stack.append(fn)

    def op_SET_FUNCTION_ATTRIBUTE(self, ins, stack, out):
        fn = self.pop(stack, ins)
        attr = self.pop(stack, ins)
        flag = ins.argval
        if flag == 0x08:
            self._set_closure(fn, attr, ins)
        elif flag == 0x04:
            fn.annotations = self._annotations(attr, ins)
        elif flag == 0x02:
            kw = self.value(attr, ins)
            if isinstance(kw, ast.Dict):
                fn.kwdefaults = {k.value: val for k, val in zip(kw.keys, kw.values, strict=False)}
        elif flag == 0x01:
            d = self.value(attr, ins)
            fn.defaults = list(d.elts) if isinstance(d, ast.Tuple) else []
        elif flag == 0x10:
            # 3.14+: annotations are computed by an ``__annotate__`` function when asked for
            fn.annotations = self.decompile_nested.annotations_of(attr, ins)
        stack.append(fn)

    def _set_closure(self, fn: v.FunctionValue, cells, ins) -> None:
        """The closure: the frame's cells by name, or (where the tuple was not built right here)
        the expression that gives it."""
        if isinstance(cells, v.ClosureCells):
            fn.closure = list(cells.names)
        else:
            fn.closure = None
            fn.closure_value = cells if isinstance(cells, ast.expr) else None

    def _annotations(self, item, ins) -> dict:
        node = self.value(item, ins) if not isinstance(item, v.FunctionValue) else None
        if isinstance(node, ast.Tuple):
            elts = node.elts
            return {elts[k].value: elts[k + 1] for k in range(0, len(elts) - 1, 2)}
        if isinstance(node, ast.Dict):
            return {k.value: val for k, val in zip(node.keys, node.values, strict=False)}
        return {}

    def _build_class(self, args, kwnames, ins) -> v.ClassValue:
        body_fn, name_node, *rest = args
        if not isinstance(body_fn, v.FunctionValue):
            raise self.error(ins, "class body is not a function")
        rest = [self.value(r, ins) for r in rest]
        npos = len(rest) - len(kwnames)
        # a generic class's implicit ``Generic[...]`` base comes back from its type parameters
        bases = [b for b in rest[:npos] if not (isinstance(b, ast.Name) and b.id == ".generic_base")]
        keywords = [ast.keyword(k, val) for k, val in zip(kwnames, rest[npos:], strict=False)]
        return v.ClassValue(self.decompile_nested.class_def(body_fn, name_node.value, bases, keywords, ins))

    def op_CALL_INTRINSIC_1(self, ins, stack, out):
        name = ins.argval
        if name == "INTRINSIC_UNARY_POSITIVE":
            self.op_UNARY_POSITIVE(ins, stack, out)
        elif name == "INTRINSIC_LIST_TO_TUPLE":
            self.op_LIST_TO_TUPLE(ins, stack, out)
        elif name == "INTRINSIC_PRINT":
            self.op_PRINT_EXPR(ins, stack, out)
        elif name == "INTRINSIC_IMPORT_STAR":
            self.op_IMPORT_STAR(ins, stack, out)
            stack.append(ast.Constant(None))
        elif name in _TYPE_PARAM_KINDS:
            param = self._type_param_name(self.pop(stack, ins), ins)
            stack.append(v.TypeParams([_TYPE_PARAM_KINDS[name](name=param)]))
        elif name in ("INTRINSIC_TYPEVAR_WITH_BOUND", "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS"):
            bound = self.decompile_nested.lazy_expression(self.pop(stack, ins), ins)
            param = self._type_param_name(self.pop(stack, ins), ins)
            stack.append(v.TypeParams([ast.TypeVar(name=param, bound=bound)]))
        elif name == "INTRINSIC_SET_TYPEPARAM_DEFAULT":
            default = self.decompile_nested.lazy_expression(self.pop(stack, ins), ins)
            params = self.pop(stack, ins)
            if not isinstance(params, v.TypeParams) or len(params.nodes) != 1:
                raise self.error(ins, "type parameter default without its parameter")
            params.nodes[0].default_value = default
            stack.append(params)
        elif name == "INTRINSIC_SET_FUNCTION_TYPE_PARAMS":
            params = self.pop(stack, ins)
            fn = self.pop(stack, ins)
            if not isinstance(params, v.TypeParams) or not isinstance(fn, v.FunctionValue):
                raise self.error(ins, "type parameters for something other than a function")
            fn.type_params = params.nodes
            stack.append(fn)
        elif name == "INTRINSIC_SUBSCRIPT_GENERIC":
            self.pop(stack, ins)
            stack.append(v.GenericBase())
        else:
            raise self.error(ins, f"intrinsic {name} not supported")

    def _type_param_name(self, item, ins) -> str:
        if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
            raise self.error(ins, "type parameter without a name")
        return item.value

    def op_TYPE_ALIAS(self, ins, stack, out):
        fn = self.pop(stack, ins)
        params = self.pop(stack, ins)
        name = self._type_param_name(self.pop(stack, ins), ins)
        value = self.decompile_nested.lazy_expression(fn, ins)
        stack.append(v.TypeAliasValue(name, params.nodes if isinstance(params, v.TypeParams) else [], value))

    def op_SETUP_ANNOTATIONS(self, ins, stack, out):
        pass
