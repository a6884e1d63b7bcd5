"""Translations of single 3.12 opcodes onto the model's."""

from __future__ import annotations

import dis

from depyf.decompiler.errors import DecompilationError
from depyf.decompiler.instructions import Instr
from depyf.decompiler.versions.v3_12.tables import CONVERSIONS


class Opcodes:
    """``op_<NAME>``: one raw instruction (and what belongs to it) onto the model."""

    def op_FOR_ITER(self, i, ins, out):
        self.emit(out, ins, "FOR_ITER", target=self.loop_exit(ins))
        return i + 1

    def op_END_FOR(self, i, ins, out):
        raise self.error(ins, "END_FOR that no FOR_ITER exits through")

    def op_LOAD_GLOBAL(self, i, ins, out):
        push_null = bool(ins.arg & 1)
        if push_null and not self.NULL_AFTER_GLOBAL:
            self.emit(out, ins, "PUSH_NULL")
        self.emit(out, ins, "LOAD_GLOBAL", ins.argval)
        if push_null and self.NULL_AFTER_GLOBAL:
            self.emit(out, ins, "PUSH_NULL")
        return i + 1

    def op_LOAD_ATTR(self, i, ins, out):
        self.emit(out, ins, "LOAD_ATTR", ins.argval)
        if ins.arg & 1:
            self.emit(out, ins, "PUSH_NULL")
        return i + 1

    def op_LOAD_SUPER_ATTR(self, i, ins, out):
        """``super`` ``__class__`` ``self`` LOAD_SUPER_ATTR -> ``super()`` (or ``super(a, b)``)
        + LOAD_ATTR."""
        two_args = bool(ins.arg & 2)
        if not two_args:
            # Zero-argument super(): the compiler loaded __class__ and the first argument itself.
            if len(out) < 3 or out[-1].opname not in ("LOAD_FAST", "LOAD_DEREF") \
                    or out[-2].opname not in ("LOAD_DEREF", "LOAD_FAST"):
                raise self.error(ins, "zero-argument super() without its implicit loads")
            self.dropped.add(out.pop().offset)
            self.dropped.add(out.pop().offset)
        self.emit(out, ins, "CALL", 2 if two_args else 0, slots=1)
        self.emit(out, ins, "LOAD_ATTR", ins.argval)
        if ins.arg & 1:
            self.emit(out, ins, "PUSH_NULL")
        return i + 1

    def op_KW_NAMES(self, i, ins, out):
        self.kw_names = self.code.co_consts[ins.arg]
        self.drop(ins)
        return i + 1

    def op_CALL(self, i, ins, out):
        if self.kw_names is not None:
            self.emit(out, ins, "LOAD_CONST", self.kw_names)
            self.emit(out, ins, "CALL_KW", ins.arg)
            self.kw_names = None
        else:
            self.emit(out, ins, "CALL", ins.arg)
        return i + 1

    def op_CALL_FUNCTION_EX(self, i, ins, out):
        self.emit(out, ins, "CALL_FUNCTION_EX", bool(ins.arg & 1))
        return i + 1

    def op_MAKE_FUNCTION(self, i, ins, out):
        self.emit(out, ins, "MAKE_FUNCTION", ins.arg or 0)
        return i + 1

    def op_BINARY_OP(self, i, ins, out):
        self.emit(out, ins, "BINARY_OP", dis._nb_ops[ins.arg][1])
        return i + 1

    def op_COMPARE_OP(self, i, ins, out):
        self.emit(out, ins, "COMPARE_OP", dis.cmp_op[ins.arg >> self.COMPARE_SHIFT])
        return i + 1

    COMPARE_SHIFT = 4

    def op_BINARY_SLICE(self, i, ins, out):
        self.emit(out, ins, "BUILD_SLICE", 2, arg=2)
        self.emit(out, ins, "BINARY_SUBSCR")
        return i + 1

    def op_STORE_SLICE(self, i, ins, out):
        self.emit(out, ins, "BUILD_SLICE", 2, arg=2)
        self.emit(out, ins, "STORE_SUBSCR")
        return i + 1

    def op_RETURN_CONST(self, i, ins, out):
        self.emit(out, ins, "LOAD_CONST", ins.argval)
        self.emit(out, ins, "RETURN_VALUE")
        return i + 1

    def op_FORMAT_VALUE(self, i, ins, out):
        self.emit(out, ins, "FORMAT_VALUE", (CONVERSIONS[ins.arg & 3], bool(ins.arg & 4)))
        return i + 1

    def intrinsic_name(self, ins: dis.Instruction) -> str:
        descs = dis._intrinsic_1_descs if ins.opname == "CALL_INTRINSIC_1" else dis._intrinsic_2_descs
        return descs[ins.arg]

    def op_CALL_INTRINSIC_1(self, i, ins, out):
        name = self.intrinsic_name(ins)
        if name == "INTRINSIC_ASYNC_GEN_WRAP":
            self.drop(ins)  # 3.11's ASYNC_GEN_WRAP before an async generator's yield: dropped as there
        elif (
            name == "INTRINSIC_TYPEALIAS" and out and out[-1].opname == "BUILD_TUPLE" and out[-1].argval == 3
        ):
            # ``type X[...] = v``: the model pops (name, type params or None, lazy value) itself
            out.pop()
            self.emit(out, ins, "TYPE_ALIAS")
        elif name == "INTRINSIC_PREP_RERAISE_STAR":
            # 3.11's opcode of the same meaning, after the LIST_APPEND 1 that op_LIST_APPEND
            # removed from every path into it
            self.emit(out, ins, "LIST_APPEND", 1, arg=1)
            self.emit(out, ins, "PREP_RERAISE_STAR")
        else:
            self.emit(out, ins, "CALL_INTRINSIC_1", name)
        return i + 1

    op_CALL_INTRINSIC_2 = op_CALL_INTRINSIC_1

    def is_prep_reraise_star(self, ins: dis.Instruction | None) -> bool:
        return ins is not None and ins.opname == "CALL_INTRINSIC_2" \
            and self.intrinsic_name(ins) == "INTRINSIC_PREP_RERAISE_STAR"

    def op_LIST_APPEND(self, i, ins, out):
        """``LIST_APPEND 1`` ending ``except*`` clauses: one copy, just before PREP_RERAISE_STAR.

        The compiler puts it at the join before PREP_RERAISE_STAR; 3.13 copies that small block
        into the paths that jump there (``LIST_APPEND 1; JUMP prep``). Every copy is dropped and
        ``op_CALL_INTRINSIC_1`` emits the single LIST_APPEND 1 at the join, as 3.11 has it.
        """
        if ins.arg == 1:
            nxt = self.at(i + 1)
            if nxt is not None and self.JUMPS.get(nxt.opname) == "JUMP" and nxt.argval > nxt.offset:
                k = self.pos.get(nxt.argval)
                nxt = self.raw[k] if k is not None else None
            if self.is_prep_reraise_star(nxt):
                self.drop(ins)
                return i + 1
        self.emit(out, ins, "LIST_APPEND", ins.argval)
        return i + 1

    def op_PUSH_EXC_INFO(self, i, ins, out):
        """``except*`` clauses start ``BUILD_LIST 0; COPY 2``: 3.11's ``COPY 1; BUILD_LIST 0; SWAP 2``.

        Both leave the original group, an empty list (what the clauses raise) and the unmatched rest.
        """
        self.emit(out, ins, "PUSH_EXC_INFO")
        build, copy = self.at(i + 1), self.at(i + 2)
        if build is not None and copy is not None and build.opname == "BUILD_LIST" and build.arg == 0 \
                and copy.opname == "COPY" and copy.arg == 2 \
                and build.offset not in self.dropped and copy.offset not in self.dropped:
            self.emit(out, build, "COPY", 1, arg=1)
            self.emit(out, build, "BUILD_LIST", 0)
            self.emit(out, copy, "SWAP", 2)
            return i + 3
        return i + 1

    def op_STORE_DEREF(self, i, ins, out):
        """``LOAD_LOCALS; STORE_DEREF __classdict__``: the compiler's own cell for a class namespace."""
        if ins.argval == "__classdict__" and out and out[-1].opname == "LOAD_LOCALS":
            self.dropped.add(out.pop().offset)
            self.drop(ins)
            return i + 1
        self.emit(out, ins, "STORE_DEREF", ins.argval)
        return i + 1

    def op_YIELD_VALUE(self, i, ins, out):
        self.emit(out, ins, "YIELD_VALUE")  # the oparg (stack depth) means nothing to the model
        return i + 1

    def op_RETURN_GENERATOR(self, i, ins, out):
        self.drop(ins)
        nxt = self.at(i + 1)
        if nxt is not None and nxt.opname == "POP_TOP":
            self.drop(nxt)
            return i + 2
        return i + 1

    def op_SEND(self, i, ins, out):
        """The await or yield-from loop:
        ``GETTER; LOAD_CONST None; SEND L; YIELD_VALUE; RESUME; JUMP_BACKWARD_NO_INTERRUPT; L: END_SEND``."""
        if len(out) < 2 or out[-1].opname != "LOAD_CONST" or out[-1].argval is not None:
            raise self.error(ins, "SEND outside an await/yield-from loop")
        self.dropped.add(out.pop().offset)
        getter = out[-1]
        k = i
        while k < len(self.raw) and self.raw[k].offset < ins.argval:
            self.drop(self.raw[k])
            k += 1
        end_send = self.at(k)
        if end_send is None or end_send.opname != "END_SEND":
            raise self.error(ins, "SEND loop without END_SEND")
        self.drop(end_send)
        if getter.opname == "GET_YIELD_FROM_ITER":
            getter.opname = "YIELD_FROM"
        elif getter.opname == "GET_AWAITABLE":
            getter.opname = "AWAIT"
        elif getter.opname == "GET_ANEXT":
            self._async_for(getter)
        else:
            raise self.error(ins, f"SEND after {getter.opname}")
        return k + 1

    def _async_for(self, getter: Instr) -> None:
        handler = next((e.target for e in self.table if e.start <= getter.offset < e.end), None)
        k = self.pos.get(handler) if handler is not None else None
        if k is None or self.raw[k].opname != "END_ASYNC_FOR":
            raise DecompilationError("async for without END_ASYNC_FOR", qualname=self.qualname,
                                     offset=getter.offset, opname="GET_ANEXT")
        getter.opname = "ASYNC_FOR_ITER"
        after = self.at(k + 1)
        getter.target = after.offset if after is not None else self.end_offset
        if (
            after is not None
            and after.opname in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT")
            and after.offset not in self.jump_targets
        ):
            # 3.12+ lays END_ASYNC_FOR out after the function's end, followed by a jump back to
            # the code after the loop: the loop exits there (inside an enclosing with or try body)
            getter.target = self.landing(after.argval)
            self.drop(after)
        getter.extra["end_async_for"] = handler
        self.dead_handlers.add(handler)
        self.async_for_handlers.add(handler)
        self.drop(self.raw[k])

    def op_END_SEND(self, i, ins, out):
        raise self.error(ins, "END_SEND outside an await/yield-from loop")

    def op_CLEANUP_THROW(self, i, ins, out):
        raise self.error(ins, "CLEANUP_THROW outside an await/yield-from handler")

    def op_LOAD_FAST_CHECK(self, i, ins, out):
        # the compiler's choice (the name may be unbound here); in source both are a plain name,
        # and the copies of a finally body differ only in it
        self.emit(out, ins, "LOAD_FAST", ins.argval)
        return i + 1
