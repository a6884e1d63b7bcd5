"""The layout features each version module declares (``instructions.Features``) are what the running
compiler does: each flag is checked against the bytecode of a small function compiled here."""

from __future__ import annotations

import dataclasses
import dis
import types

import pytest

import depyf
from depyf.decompiler.instructions import Features, _version_module, features


def _instructions(source: str) -> list[dis.Instruction]:
    module = compile(source, "<probe>", "exec")
    code = next(c for c in module.co_consts if hasattr(c, "co_code"))
    return list(dis.get_instructions(code))


def _first_load(instrs: list[dis.Instruction], name: str) -> int:
    return next(ins.offset for ins in instrs if ins.argval == name)


def test_the_running_versions_features_are_declared():
    assert isinstance(features(), Features)


def test_copies_return_tails():
    instrs = _instructions("def f(a):\n    try:\n        g()\n    except E:\n        h()\n    return a\n")
    returns = sum(ins.opname == "RETURN_VALUE" for ins in instrs)
    assert features().copies_return_tails == (returns > 1)


def _loads(instrs: list[dis.Instruction], name: str) -> int:
    return sum(ins.argval == name for ins in instrs)


def _returns(instrs) -> int:
    return sum(ins.opname.startswith("RETURN") for ins in instrs)


def _closing_jump(instrs) -> int:
    """The offset of the last jump backwards (a loop's closing jump)."""
    return max(ins.offset for ins in instrs if (ins.opcode in dis.hasjabs or ins.opcode in dis.hasjrel)
               and isinstance(ins.argval, int) and ins.argval < ins.offset)


_WHILE_ELSE_BREAK = ("def f(a):\n    while a:\n        if g():\n            break\n        a -= 1\n"
                     "    else:\n        h()\n    return y\n")

# Each copy a layout pass gated by ``copies_return_tails`` undoes, as the compiler makes it: the
# source, and whether its bytecode shows the copy.
RETURN_TAIL_COPIES = {
    # share_return_tails (compilers with a block stack): the code after a with body, in each exit
    "with": ("def f():\n    with a:\n        g()\n    return y\n", lambda instrs: _loads(instrs, "y") > 1),
    # share_return_tails (a break in a for loop): the code after the loop in the break
    "for break": ("def f(xs):\n    for x in xs:\n        if x:\n            break\n    return y\n",
                  lambda instrs: _loads(instrs, "y") > 1),
    # share_chain_exits / share_duplicated_returns: the return after a chained comparison
    "chain": ("def f(a, b, c):\n    return a < b < c\n", lambda instrs: _returns(instrs) > 1),
    # share_chain_exits / share_chain_value_copies (chain_operand_copies): the last comparison in
    # each branch of a conditional last operand
    "chain operand": ("def f(a, b, x):\n    return a < b <= (c if x else d)\n",
                      lambda instrs: sum(ins.opname == "COMPARE_OP" for ins in instrs) > 2),
    # hoist_break_tails / hoist_placed_break_tails: the code after a ``while True`` loop, kept only
    # in its break (out of a with), lies inside the loop
    "while break": ("def f():\n    while True:\n        with a:\n            if b():\n                break\n"
                    "        g()\n    return x\n",
                    lambda instrs: _first_load(instrs, "x") < _closing_jump(instrs)),
    # share_break_tail_copies: the code after a while loop with an else clause, in the break
    "while else break": (_WHILE_ELSE_BREAK, lambda instrs: _loads(instrs, "y") > 1),
}


@pytest.mark.parametrize("quirk", RETURN_TAIL_COPIES)
def test_each_copy_the_return_tail_passes_undo_is_copies_return_tails(quirk):
    source, copied = RETURN_TAIL_COPIES[quirk]
    assert features().copies_return_tails == copied(_instructions(source))


def _model(source: str, copies_return_tails: bool):
    module = compile(source, "<probe>", "exec")
    code = next(c for c in module.co_consts if hasattr(c, "co_code"))
    flags = dataclasses.replace(features(), copies_return_tails=copies_return_tails)
    instrs, _ = _version_module().normalize(code, flags)
    return instrs


def test_the_return_tail_passes_run_where_the_flag_is_set():
    """Where the compiler copies return tails, its module runs the passes that share them (one
    RETURN_VALUE after a chained comparison, the code after a ``while True`` loop after its closing
    jump and its with's handler); told that it copies none, it runs none and the copies stay."""
    if not features().copies_return_tails:
        pytest.skip("this compiler copies no return tails: its module runs no such pass")
    chain = RETURN_TAIL_COPIES["chain"][0]
    assert sum(ins.opname == "RETURN_VALUE" for ins in _model(chain, True)) == 1
    assert sum(ins.opname == "RETURN_VALUE" for ins in _model(chain, False)) == 2

    def returns_after_the_loop(instrs) -> bool:
        back = max(k for k, ins in enumerate(instrs) if ins.opname == "JUMP" and ins.target < ins.offset)
        return [k for k, ins in enumerate(instrs) if ins.argval == "x"] > [back]

    loop = RETURN_TAIL_COPIES["while break"][0]
    assert returns_after_the_loop(_model(loop, True))
    assert not returns_after_the_loop(_model(loop, False))

    # the break jumps past the else clause to the one ``return y`` again
    assert sum(ins.opname == "RETURN_VALUE" for ins in _model(_WHILE_ELSE_BREAK, True)) == 1
    assert sum(ins.opname == "RETURN_VALUE" for ins in _model(_WHILE_ELSE_BREAK, False)) == 2


def test_copies_loop_tests():
    instrs = _instructions("def f():\n    while a:\n        b()\n")
    assert features().copies_loop_tests == (sum(ins.argval == "a" for ins in instrs) > 1)


def test_handlers_laid_out_last():
    instrs = _instructions("def f():\n    try:\n        g()\n    except E:\n        h()\n    k()\n")
    assert features().handlers_laid_out_last == (_first_load(instrs, "k") < _first_load(instrs, "h"))


def test_threads_value_tests():
    # ``(a or (b and c)) and d``: where a false ``b`` jumps, straight to the return or onto the
    # ``and d`` test
    instrs = _instructions("def f(a, b, c, d):\n    return (a or (b and c)) and d\n")
    after_b = next(ins for ins in instrs if ins.offset > _first_load(instrs, "b")
                   and isinstance(ins.argval, int) and ins.opcode in dis.hasjrel + dis.hasjabs)
    returned = next(ins.offset for ins in instrs if ins.opname == "RETURN_VALUE")
    assert features().threads_value_tests == (after_b.argval == returned)


def test_value_tests_are_unthreaded_where_the_flag_is_set():
    from depyf.decompiler.instructions import Instr
    from depyf.decompiler.layout.value_tests import unthread_value_tests

    # ``a and (b or c) and d``: b's jump comes back onto c's test
    instrs = [Instr("LOAD_FAST", 0, argval="a"), Instr("JUMP_IF_FALSE_OR_POP", 2, target=14),
              Instr("LOAD_FAST", 4, argval="b"), Instr("POP_JUMP_IF_TRUE", 6, target=12),
              Instr("LOAD_FAST", 8, argval="c"), Instr("JUMP_IF_FALSE_OR_POP", 10, target=14),
              Instr("LOAD_FAST", 12, argval="d"), Instr("RETURN_VALUE", 14)]
    unthread_value_tests(instrs)
    assert (instrs[3].opname, instrs[3].target) == ("JUMP_IF_TRUE_OR_POP", 10)
    # ``(a or (b and c)) and d``: a's jump comes onto the ``and d`` test, and b's too
    instrs = [Instr("LOAD_FAST", 0, argval="a"), Instr("POP_JUMP_IF_TRUE", 2, target=12),
              Instr("LOAD_FAST", 4, argval="b"), Instr("JUMP_IF_FALSE_OR_POP", 6, target=14),
              Instr("LOAD_FAST", 8, argval="c"), Instr("JUMP_IF_FALSE_OR_POP", 10, target=14),
              Instr("LOAD_FAST", 12, argval="d"), Instr("RETURN_VALUE", 14)]
    unthread_value_tests(instrs)
    assert [(i.opname, i.target) for i in instrs[1:4:2]] == [("JUMP_IF_TRUE_OR_POP", 10),
                                                              ("JUMP_IF_FALSE_OR_POP", 10)]
    # ``a and b and c``: nothing to undo
    instrs = [Instr("LOAD_FAST", 0, argval="a"), Instr("JUMP_IF_FALSE_OR_POP", 2, target=10),
              Instr("LOAD_FAST", 4, argval="b"), Instr("JUMP_IF_FALSE_OR_POP", 6, target=10),
              Instr("LOAD_FAST", 8, argval="c"), Instr("RETURN_VALUE", 10)]
    unthread_value_tests(instrs)
    assert [i.target for i in instrs[1:4:2]] == [10, 10]


def test_jumps_cannot_raise():
    instrs = _instructions("def f(a):\n    if a:\n        b()\n")
    assert features().jumps_cannot_raise == any(ins.opname == "TO_BOOL" for ins in instrs)


ASYNC_FOR_BREAK_IN_FINALLY = """\
async def f(xs):
    async for x in xs:
        try:
            if x:
                break
        finally:
            g()
    return 1
"""


def test_a_break_out_of_async_for_through_finally_is_a_break():
    """A ``break`` that pops the iterator and runs the copied code after the loop is a ``break`` in
    an ``async for`` as in a ``for`` loop (it read as ``return 1`` inside the loop where the
    compiler copies return tails)."""
    namespace: dict = {}
    exec(compile(ASYNC_FOR_BREAK_IN_FINALLY, "<source>", "exec"), namespace)
    assert depyf.decompile(namespace["f"]).strip() == ASYNC_FOR_BREAK_IN_FINALLY.strip()


CONTINUE_THEN_LEAVE_IN_EXCEPT_CLAUSE = {
    "break": """\
def f(stack, m):
    out = []
    while stack:
        try:
            c = 10 // stack.pop()
        except ZeroDivisionError:
            if m:
                m -= 1
                continue
            break
        out.append(c)
    return out, m
""",
    "return": """\
def f(stack, m):
    out = []
    while stack:
        try:
            c = 10 // stack.pop()
        except ZeroDivisionError:
            if m:
                m -= 1
                continue
            return m
        out.append(c)
    return out, m
""",
    "last statement": """\
def f(stack, m):
    out = []
    while stack:
        try:
            out.append(10 // stack.pop())
        except ZeroDivisionError:
            if m:
                m -= 1
                continue
            return None
    return out, m
""",
}


@pytest.mark.parametrize("source", CONTINUE_THEN_LEAVE_IN_EXCEPT_CLAUSE.values(),
                         ids=CONTINUE_THEN_LEAVE_IN_EXCEPT_CLAUSE.keys())
def test_a_continue_then_a_way_out_in_an_except_clause_of_a_while_loop(source):
    """Where the loop's test is not copied to its bottom, the clause's ``continue`` jumps back to
    the test at the top as the body's end does, and the clause's way out after it (``POP_EXCEPT``,
    then the break's or the return's code) is laid out after the loop's blocks: it is the clause's,
    not the place the loop's breaks land (it read so and was refused, "stack underflow")."""
    namespace: dict = {}
    exec(compile(source, "<source>", "exec"), namespace)
    original = namespace["f"]
    recompiled = depyf.recompile(original.__code__)
    again = types.FunctionType(recompiled.code, {})
    assert "except ZeroDivisionError:" in recompiled.source
    for stack, m in (([3, 2, 1], 0), ([0, 4], 0), ([0, 4], 1), ([0, 0, 5], 1), ([], 1)):
        assert again(list(stack), m) == original(list(stack), m)


def test_conditional_jumps_go_forward():
    """Where no conditional jump goes backwards, ``if c: g()`` ending a loop body jumps forward
    over a copy of the jump back, and that code is the very code of ``if not c: continue``."""
    source = "def f(xs):\n    for x in xs:\n        if x:\n            g()\n"
    same = _code_bytes(source) == _code_bytes(
        "def f(xs):\n    for x in xs:\n        if not x:\n            continue\n        g()\n")
    assert features().conditional_jumps_go_forward == same


def _code_bytes(source: str) -> bytes:
    module = compile(source, "<probe>", "exec")
    return next(c for c in module.co_consts if hasattr(c, "co_code")).co_code
