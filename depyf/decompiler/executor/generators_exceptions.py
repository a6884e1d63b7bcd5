"""Iterators, generators and coroutines; with statements and exception handling."""

from __future__ import annotations

import ast

from depyf.decompiler import values as v
from depyf.decompiler.expressions import load
from depyf.decompiler.pseudo_statements import (
    EXCEPTION_GROUP_MATCHES,
    EXCEPTION_MATCHES,
    WITH_EXIT_SUPPRESSES,
    PopExceptStmt,
)


class GeneratorsExceptions:
    """Opcodes of iteration, yield/await, with and except."""

    def op_GET_ITER(self, ins, stack, out):
        stack.append(v.Iterator(self.value(self.pop(stack, ins), ins)))

    def op_GET_AITER(self, ins, stack, out):
        stack.append(v.Iterator(self.value(self.pop(stack, ins), ins), is_async=True))

    def op_YIELD_VALUE(self, ins, stack, out):
        item = self.pop(stack, ins)
        value = self.value(item, ins)
        if isinstance(value, ast.Constant) and value.value is None and ins.extra.get("bare", True):
            stack.append(ast.Yield(None))
        else:
            stack.append(ast.Yield(value))

    def op_YIELD_FROM(self, ins, stack, out):
        stack.append(ast.YieldFrom(self.value(self.pop(stack, ins), ins)))

    def op_GET_YIELD_FROM_ITER(self, ins, stack, out):
        pass  # the iterable stays; YIELD_FROM consumes it

    def op_AWAIT(self, ins, stack, out):
        item = self.pop(stack, ins)
        if isinstance(item, v.WithEnter):
            item.is_async = True
            stack.append(item)
            return
        if isinstance(item, v.Null):
            stack.append(item)  # awaiting __aexit__(None, None, None): part of the with exit
            return
        value = self.value(item, ins)
        if getattr(value, "awaited_comprehension", False):
            stack.append(value)
            return
        stack.append(ast.Await(value))

    def op_GET_AWAITABLE(self, ins, stack, out):
        pass

    def op_BEFORE_WITH(self, ins, stack, out):
        manager = self.value(self.pop(stack, ins), ins)
        stack.append(v.WithExit(manager))
        stack.append(v.WithEnter(manager))

    def op_BEFORE_ASYNC_WITH(self, ins, stack, out):
        manager = self.value(self.pop(stack, ins), ins)
        stack.append(v.WithExit(manager, is_async=True))
        stack.append(v.WithEnter(manager, is_async=True))

    def op_PUSH_EXC_INFO(self, ins, stack, out):
        exc = self.pop(stack, ins) if stack else v.ExcValue()
        stack.append(v.ExcState())
        stack.append(exc if isinstance(exc, v.ExcValue) else v.ExcValue())

    def op_POP_EXCEPT(self, ins, stack, out):
        item = self.pop(stack, ins)
        if not isinstance(item, v.ExcState):
            raise self.error(ins, "POP_EXCEPT without exception state")
        out.append(PopExceptStmt())

    def op_CHECK_EXC_MATCH(self, ins, stack, out):
        typ = self.value(self.pop(stack, ins), ins)
        node = ast.Call(load(EXCEPTION_MATCHES), [typ], [])
        stack.append(node)

    def op_CHECK_EG_MATCH(self, ins, stack, out):
        typ = self.value(self.pop(stack, ins), ins)
        self.pop(stack, ins)
        stack.append(v.ExcValue())
        stack.append(ast.Call(load(EXCEPTION_GROUP_MATCHES), [typ], []))

    def op_WITH_EXCEPT_START(self, ins, stack, out):
        stack.append(ast.Call(load(WITH_EXIT_SUPPRESSES), [], []))

    def _raise(self, ins, stack) -> ast.Raise:
        n = ins.argval
        items = [self.value(x, ins) for x in self.popn(stack, n, ins)]
        if n == 0:
            return ast.Raise(None, None)
        if n == 1:
            return ast.Raise(items[0], None)
        return ast.Raise(items[0], items[1])
