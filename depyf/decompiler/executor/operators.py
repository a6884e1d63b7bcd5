"""Unary, binary and comparison operators, subscripts, and formatted strings."""

from __future__ import annotations

import ast

from depyf.decompiler import values as v
from depyf.decompiler.expressions import BINARY_OPERATORS, COMPARE_OPERATORS, load


def _tuple_items(node) -> list | None:
    """The items of a tuple display or of a constant tuple, as nodes."""
    if isinstance(node, ast.Tuple):
        return list(node.elts)
    if isinstance(node, ast.Constant) and isinstance(node.value, tuple):
        return [ast.Constant(x) for x in node.value]
    return None


def _interpolation_text(text: str) -> str | None:
    """The expression text a template string keeps (``Interpolation.expression``): printed as
    written so the rebuilt template carries the same text; None (print the value) where the text
    is not an expression on its own."""
    try:
        ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None
    return text


class Operators:
    """Opcodes that compute one value from their operands."""

    def op_BINARY_OP(self, ins, stack, out):
        right = self.value(self.pop(stack, ins), ins)
        left = self.value(self.pop(stack, ins), ins)
        symbol = ins.argval
        inplace = symbol.endswith("=") and symbol not in ("==", "!=", "<=", ">=")
        node = ast.BinOp(left, BINARY_OPERATORS[symbol.rstrip("=") if inplace else symbol](), right)
        if inplace:
            node.inplace = True
        stack.append(node)

    def op_BINARY_SUBSCR(self, ins, stack, out):
        key = self.value(self.pop(stack, ins), ins)
        container = self.value(self.pop(stack, ins), ins)
        stack.append(ast.Subscript(container, key, ast.Load()))

    def _unary(self, op, ins, stack):
        stack.append(ast.UnaryOp(op, self.value(self.pop(stack, ins), ins)))

    def op_UNARY_NEGATIVE(self, ins, stack, out):
        self._unary(ast.USub(), ins, stack)

    def op_UNARY_POSITIVE(self, ins, stack, out):
        self._unary(ast.UAdd(), ins, stack)

    def op_UNARY_INVERT(self, ins, stack, out):
        self._unary(ast.Invert(), ins, stack)

    def op_UNARY_NOT(self, ins, stack, out):
        self._unary(ast.Not(), ins, stack)

    def op_COMPARE_OP(self, ins, stack, out):
        right = self.value(self.pop(stack, ins), ins)
        left = self.value(self.pop(stack, ins), ins)
        stack.append(ast.Compare(left, [COMPARE_OPERATORS[ins.argval]()], [right]))

    def op_IS_OP(self, ins, stack, out):
        right = self.value(self.pop(stack, ins), ins)
        left = self.value(self.pop(stack, ins), ins)
        stack.append(ast.Compare(left, [ast.IsNot() if ins.argval else ast.Is()], [right]))

    def op_CONTAINS_OP(self, ins, stack, out):
        right = self.value(self.pop(stack, ins), ins)
        if getattr(right, "folded_constant", False) and right.args and isinstance(right.args[0], ast.Set):
            right = right.args[0]
        left = self.value(self.pop(stack, ins), ins)
        stack.append(ast.Compare(left, [ast.NotIn() if ins.argval else ast.In()], [right]))

    def _format_spec(self, has_spec: bool, ins, stack) -> ast.JoinedStr | None:
        """The format spec on top of the stack (f-string and template fields), as a JoinedStr."""
        if not has_spec:
            return None
        spec = self.value(self.pop(stack, ins), ins)
        return spec if isinstance(spec, ast.JoinedStr) else ast.JoinedStr([spec])

    def op_BUILD_INTERPOLATION(self, ins, stack, out):
        conversion, has_spec = ins.argval
        spec = self._format_spec(has_spec, ins, stack)
        text = self.pop(stack, ins)
        value = self.value(self.pop(stack, ins), ins)
        if not (isinstance(text, ast.Constant) and isinstance(text.value, str)):
            raise self.error(ins, "interpolation without its expression text")
        stack.append(ast.Interpolation(value=value, str=_interpolation_text(text.value),
                                       conversion=-1 if conversion is None else ord(conversion),
                                       format_spec=spec))

    def op_BUILD_TEMPLATE(self, ins, stack, out):
        interpolations = self.value(self.pop(stack, ins), ins)
        strings = self.value(self.pop(stack, ins), ins)
        parts = _tuple_items(interpolations)
        texts = _tuple_items(strings)
        if parts is None or texts is None or len(texts) != len(parts) + 1 \
                or not all(isinstance(t, ast.Constant) and isinstance(t.value, str) for t in texts):
            raise self.error(ins, "unrecognised template string")
        values: list = []
        for text, part in zip([t.value for t in texts], [*parts, None], strict=True):
            if text:
                values.append(ast.Constant(text))
            if part is not None:
                values.append(part)
        stack.append(ast.TemplateStr(values))

    def op_FORMAT_VALUE(self, ins, stack, out):
        conversion, has_spec = ins.argval
        spec = self._format_spec(has_spec, ins, stack)
        item = self.pop(stack, ins)
        if isinstance(item, v.Converted):
            conversion = conversion or item.conversion
            item = item.value
        conv = -1 if conversion is None else ord(conversion)
        stack.append(ast.JoinedStr([ast.FormattedValue(self.value(item, ins), conv, spec)]))

    def op_CONVERT_VALUE(self, ins, stack, out):
        item = self.value(self.pop(stack, ins), ins)
        stack.append(v.Converted(item, ins.argval))

    def op_GET_LEN(self, ins, stack, out):
        stack.append(ast.Call(load("len"), [self.value(stack[-1], ins)], []))
