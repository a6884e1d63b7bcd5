"""The executor: runs one stretch of instructions over the symbolic stack, dispatching each
opcode to the mixin of its family."""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass

from depyf.decompiler import opaque
from depyf.decompiler import values as v
from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.executor.calls import Calls
from depyf.decompiler.executor.containers import Containers
from depyf.decompiler.executor.definitions import Definitions
from depyf.decompiler.executor.generators_exceptions import GeneratorsExceptions
from depyf.decompiler.executor.loads_stores import LoadsStores
from depyf.decompiler.executor.operators import Operators
from depyf.decompiler.executor.ordering import Ordering
from depyf.decompiler.executor.stack_reads import _DURING_GROUP
from depyf.decompiler.expressions import load, store
from depyf.decompiler.instructions import CONDITIONAL_JUMPS, Instr

_COMPREHENSION_NAMES = {"<listcomp>": "list", "<setcomp>": "set", "<dictcomp>": "dict"}


@dataclass
class Stop:
    """Why a run stopped: ``ins`` is the control instruction (None: fell into a new block)."""

    ins: Instr | None
    condition: ast.expr | None = None


class Executor(
    Ordering, LoadsStores, Operators, Containers, Calls, Definitions, GeneratorsExceptions,
):
    """Runs instructions of one code object over a symbolic stack."""

    def __init__(self, code: types.CodeType, instrs: list[Instr], decompile_nested):
        self.code = code
        self.instrs = instrs
        self.decompile_nested = decompile_nested  # callable(code) -> FunctionDef/ClassDef parts
        self.qualname = getattr(code, "co_qualname", code.co_name)
        self.comp_kind = _COMPREHENSION_NAMES.get(code.co_name)
        self.parallel: list = []   # pending (target, value) stores of a tuple assignment
        self.parallel_pending: list = []  # values on the stack when the group started
        self.current = 0
        self.current_stack: list = []
        self.temp_count = 0
        self.seq = 0                    # completion counter for values pushed (``_seq``)
        self.copied: set[int] = set()   # ids of values COPY put on the stack a second time
        self.temp_of: dict[int, tuple[ast.expr, str]] = {}  # id(value) -> (value, temporary it went to)
        self.globals_declared: set[str] = set()
        self.nonlocals_declared: set[str] = set()
        self.bound_names: dict[str, object] = {}   # a PEP 695 scope's parameters: the caller's values
        self.type_params: v.TypeParams | None = None  # the last type parameters stored (a class's)

    def run(self, start: int, end: int, stack: list, out: list) -> tuple[int, Stop]:
        """Execute ``instrs[start:end]``; stop at the first control instruction.

        Returns the index after the last executed instruction and why it stopped.
        """
        i = start
        self.current_stack = stack
        while i < end:
            ins = self.instrs[i]
            op = ins.opname
            if self.parallel and (op not in _DURING_GROUP and not self.computes_next_target(ins, stack)
                                  or self.reads_group_target(ins)):
                self.flush_parallel(out)
            if op in CONDITIONAL_JUMPS:
                if op.startswith("JUMP_IF"):
                    return i + 1, Stop(ins, stack[-1])
                cond = self.pop(stack, ins)
                if isinstance(cond, v.FunctionValue) or type(cond) is v.Hole:  # ``assert lambda: ...``
                    cond = self.value(cond, ins)
                if op == "POP_JUMP_IF_NONE":
                    cond = ast.Compare(cond, [ast.Is()], [ast.Constant(None)])
                elif op == "POP_JUMP_IF_NOT_NONE":
                    cond = ast.Compare(cond, [ast.IsNot()], [ast.Constant(None)])
                return i + 1, Stop(ins, cond)
            if op in ("JUMP", "FOR_ITER", "ASYNC_FOR_ITER", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                if op == "RETURN_VALUE":
                    item = self.pop(stack, ins)
                    if isinstance(item, v.CompAccumulator):
                        out.append(ast.Return(None))
                    else:
                        node = ast.Return(self.value(item, ins))
                        node.source_line = ins.lineno    # copies of one return share it
                        self.name_repeated_parts(node, stack, out)
                        out.append(node)
                elif op == "RAISE_VARARGS":
                    out.append(self._raise(ins, stack))
                return i + 1, Stop(ins)
            handler = getattr(self, "op_" + op, None)
            if handler is None:
                raise self.error(ins, f"no symbolic semantics for {op}")
            self.current = i
            handler(ins, stack, out)
            if stack and isinstance(stack[-1], ast.expr) and not hasattr(stack[-1], "_seq"):
                self.seq += 1
                stack[-1]._seq = self.seq  # when this value was completed (see _store)
            i += 1
        self.flush_parallel(out)
        return i, Stop(None)

    def error(self, ins: Instr | None, message: str) -> DecompilationError:
        return DecompilationError(message, qualname=self.qualname, offset=ins.offset if ins else None,
                                  opname=ins.opname if ins else None)

    def pop(self, stack: list, ins: Instr):
        if not stack:
            raise self.error(ins, "stack underflow")
        return stack.pop()

    def popn(self, stack: list, n: int, ins: Instr) -> list:
        if n == 0:
            return []
        if len(stack) < n:
            raise self.error(ins, "stack underflow")
        items = stack[-n:]
        del stack[-n:]
        return items

    def value(self, item, ins: Instr) -> ast.expr:
        """An expression for a stack item, turning pending values into expressions."""
        if isinstance(item, ast.Set) and not item.elts:
            return ast.Call(load("set"), [], [])
        if isinstance(item, ast.expr):
            return item
        if type(item) is v.Hole and item.target is None:
            # an unpacked item used as a value without a store (Dynamo's ``UNPACK_SEQUENCE`` of a
            # graph's outputs): it gets a temporary, and the unpacking assigns to it
            name = self.new_temp()
            item.fill(store(name))
            return load(name)
        if isinstance(item, v.FunctionValue):
            return self.decompile_nested.lambda_or_error(item, ins)
        if isinstance(item, v.Converted):
            return item.value
        if isinstance(item, v.ImportValue):
            return load(item.module.split(".")[0])
        if isinstance(item, v.CellRef):
            return load(opaque.placeholder(opaque.CellOf(item.name)))
        if isinstance(item, v.ClosureCells):
            return ast.Tuple([load(opaque.placeholder(opaque.CellOf(n))) for n in item.names], ast.Load())
        if isinstance(item, types.CodeType):
            # a code object passed around as data (Dynamo builds nested functions this way)
            return load(opaque.placeholder(item))
        raise self.error(ins, f"{type(item).__name__} used as a value")
