"""``except`` and ``except*`` clauses."""

from __future__ import annotations

import ast
import copy

from depyf.decompiler import values as v
from depyf.decompiler.pseudo_statements import (
    EXCEPTION_GROUP_MATCHES,
    EXCEPTION_MATCHES,
    ExceptAsStmt,
    ReraiseStmt,
)
from depyf.decompiler.structure.model import Context, Layer, RegionKind


class ExceptClauses:
    """The clauses of a try statement's handler."""

    def is_except_star_handler(self, p: int) -> bool:
        """PUSH_EXC_INFO; COPY 1; BUILD_LIST 0; SWAP 2: the start of ``except*`` clauses.

        The stack then holds the original group, the list of exceptions raised by the clauses
        and the part of the group no clause has matched yet.
        """
        ops = [(ins.opname, ins.argval) for ins in self.instrs[p + 1:p + 4]]
        return ops == [("COPY", 1), ("BUILD_LIST", 0), ("SWAP", 2)]

    def except_star_clauses(self, hpos: int, h_layer: Layer, ctx: Context, base: list):
        """The ``except*`` clauses of the handler at ``hpos`` and where control goes after them.

        Each clause is ``<type>; CHECK_EG_MATCH; COPY 1; POP_JUMP_IF_NONE no_match; STORE name|POP_TOP;
        <body>`` (the body protected by a cleanup handler that adds what it raises to the list),
        ``no_match: POP_TOP`` falling into the next clause. After the last one, ``LIST_APPEND 1;
        PREP_RERAISE_STAR`` computes what to re-raise: ``COPY 1; POP_JUMP_IF_NOT_NONE reraise;
        POP_TOP; POP_EXCEPT`` then the code after the statement.
        """
        ins = self.instrs
        state = [v.ExcState(), v.ExcValue(), v.ExcValue(), v.ExcValue()]
        k = hpos + 4
        handlers: list[ast.ExceptHandler] = []
        while k < len(ins) and not (ins[k].opname == "LIST_APPEND" and ins[k].argval == 1):
            if len(handlers) > 64 or not self.cfg.is_leader(k) and handlers:
                raise self.error(k, "unrecognised except* clause")
            stack = base + state
            scratch: list = []
            # (the clause's type may be computed: ``except* (A if c else B)``)
            end, stop = self.run_test(k, stack, scratch, set(), ctx, len(ins))
            test = stop.condition
            if scratch or stop.ins is None or stop.ins.opname != "POP_JUMP_IF_NONE" \
                    or len(stack) != len(base) + 5 or not isinstance(test, ast.Compare) \
                    or not _is_match(test.left) or test.left.func.id != EXCEPTION_GROUP_MATCHES:
                raise self.error(k, "unrecognised except* clause")
            typ = test.left.args[0]
            no_match = self.cfg.pos(stop.ins.target)
            if no_match is None or ins[no_match].opname != "POP_TOP":
                raise self.error(k, "unrecognised except* clause")
            following = no_match + 1
            # the matched part of the group: stored to the clause's name, or dropped
            stack[-1] = v.ExcValue()
            scratch = []
            self.executor.run(end, end + 1, stack, scratch)
            name = None
            if len(scratch) == 1 and isinstance(scratch[0], ExceptAsStmt):
                name = scratch[0].name
            elif scratch or ins[end].opname != "POP_TOP":
                raise self.error(end, "unrecognised except* clause target")
            body_pos = end + 1
            layers = ctx.layers + (h_layer,)
            # the clause's cleanup handler (adds what the body raises to the list): the handler
            # just inside the clauses' own cleanup; none when the body cannot raise
            chain = self.cfg.handler_chain(body_pos) if body_pos < len(ins) else []
            clause_layer = None
            if h_layer.target in chain and chain.index(h_layer.target) > 0:
                clause = chain[chain.index(h_layer.target) - 1]
                c = self.cfg.pos(clause)
                if not any(x.opname == "LIST_APPEND" and x.argval == 3 for x in ins[c:c + 4]):
                    raise self.error(body_pos, "except* clause body without its cleanup handler")
                clause_layer = Layer(RegionKind.HANDLER, clause)
                layers += (clause_layer,)
            elif h_layer.target not in chain:
                raise self.error(body_pos, "except* clause body outside the clauses' handler")
            body = self.emit(body_pos, Context(frozenset({following}), ctx.loop, layers), stack)
            if clause_layer is not None and set(clause_layer.normal_exits) - {following}:
                raise self.error(body_pos, "except* clause continues elsewhere than the next clause")
            handlers.append(ast.ExceptHandler(typ, name, body or [ast.Pass()]))
            k = following
        tail = [(x.opname, x.argval) for x in ins[k:k + 6]]
        if (
            not handlers
            or tail[:3] != [("LIST_APPEND", 1), ("PREP_RERAISE_STAR", None), ("COPY", 1)]
            or tail[3][0] != "POP_JUMP_IF_NOT_NONE"
            or tail[4:] != [("POP_TOP", None), ("POP_EXCEPT", None)]
        ):
            raise self.error(k, "unrecognised end of except* clauses")
        reraise = self.cfg.pos(ins[k + 3].target)
        if [x.opname for x in ins[reraise:reraise + 3]] != ["SWAP", "POP_EXCEPT", "RERAISE"]:
            raise self.error(k, "unrecognised end of except* clauses")
        after = k + 6
        if after >= len(ins):
            raise self.error(k, "except* clauses run past the last instruction")
        if self.final_kind(after, ctx) is None:
            after = self.follow_jumps(after)
        return handlers, after

    def except_clauses(self, stmts: list, pos) -> list[ast.ExceptHandler]:
        handlers = []
        while True:
            if len(stmts) == 1 and isinstance(stmts[0], ReraiseStmt):
                return handlers
            types = _matched_types(stmts[0].test) if stmts and isinstance(stmts[0], ast.If) else None
            if types and (len(stmts) == 1 or not stmts[0].orelse):
                node = stmts[0]
                handlers.extend(_clauses(types, node.body))
                stmts = node.orelse if len(stmts) == 1 else stmts[1:]
                if not stmts:
                    return handlers
                continue
            # a bare except: the remaining statements
            body = [s for s in stmts]
            handlers.append(ast.ExceptHandler(None, None, body or [ast.Pass()]))
            return handlers


def _matched_types(test) -> list[ast.expr] | None:
    """The types a clause test matches, in order: ``[A]`` for one match; ``[A, B]`` where clauses
    with the same body were read as one test ``A or B`` (the compiler shares the code of equal
    bodies: ``except A: raise`` then ``except B: raise``). None for any other test."""
    if _is_match(test):
        return [test.args[0]]
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        parts = [_matched_types(value) for value in test.values]
        if all(parts):
            return [typ for part in parts for typ in part]
    return None


def _clauses(types: list[ast.expr], stmts: list[ast.stmt]) -> list[ast.ExceptHandler]:
    """One clause per type, each with its own copy of the body ``stmts`` (which may begin with
    the store of the clause's name)."""
    handlers = []
    for k, typ in enumerate(types):
        body = list(stmts) if k == 0 else [copy.deepcopy(s) for s in stmts]
        name = body.pop(0).name if body and isinstance(body[0], ExceptAsStmt) else None
        handlers.append(ast.ExceptHandler(typ, name, body or [ast.Pass()]))
    return handlers


def _is_match(test) -> bool:
    return isinstance(test, ast.Call) and isinstance(test.func, ast.Name) \
        and test.func.id in (EXCEPTION_MATCHES, EXCEPTION_GROUP_MATCHES)
