"""The one jump follower (``layout.jumps.follow_jumps``): what it passes and where it stops."""

from __future__ import annotations

from depyf.decompiler.instructions import Instr
from depyf.decompiler.layout.jumps import follow_jumps


def _code(*ops: tuple[str, int | None]) -> list[Instr]:
    """Instructions at offsets 0, 2, 4, ...: (opname, target offset)."""
    return [Instr(op, 2 * k, target=target) for k, (op, target) in enumerate(ops)]


def _pos_of(instrs: list[Instr]):
    index = {ins.offset: k for k, ins in enumerate(instrs)}
    return lambda offset: None if offset is None else index.get(offset)


def test_forward_jumps_are_followed_to_the_first_other_instruction():
    code = _code(("JUMP", 4), ("RETURN_VALUE", None), ("JUMP", 8), ("POP_TOP", None), ("RETURN_VALUE", None))
    assert follow_jumps(code, _pos_of(code), 0) == 4
    assert follow_jumps(code, _pos_of(code), 1) == 1
    assert follow_jumps(code, _pos_of(code), None) is None
    assert follow_jumps(code, _pos_of(code), 7) == 7      # past the code: as it is


def test_a_jump_back_is_followed_where_allowed():
    code = _code(("POP_TOP", None), ("RETURN_VALUE", None), ("JUMP", 0))
    assert follow_jumps(code, _pos_of(code), 2) == 2
    assert follow_jumps(code, _pos_of(code), 2, back=True) == 0
    assert follow_jumps(code, _pos_of(code), 2, back=lambda t, j: t != 0) == 2
    assert follow_jumps(code, _pos_of(code), 2, back=lambda t, j: t == 0 and j == 2) == 0


def test_a_loop_of_jumps_ends_where_it_began_or_after_the_steps():
    code = _code(("JUMP", 2), ("JUMP", 4), ("JUMP", 0))
    assert follow_jumps(code, _pos_of(code), 0, back=True, steps=None) == 0
    assert follow_jumps(code, _pos_of(code), 0, back=True, steps=2) == 2
    assert follow_jumps(code, _pos_of(code), 0, back=True, steps=0) == 0


def test_a_jump_to_no_instruction():
    code = _code(("JUMP", 40), ("RETURN_VALUE", None))
    assert follow_jumps(code, _pos_of(code), 0) == 0
    assert follow_jumps(code, _pos_of(code), 0, back=True) is None


def test_jump_at_passes_code_before_the_jump():
    code = _code(("POP_TOP", None), ("JUMP", 8), ("LOAD_CONST", None), ("RETURN_VALUE", None),
                 ("POP_TOP", None), ("JUMP", 4))

    def popping(p: int) -> int | None:
        return p + 1 if code[p].opname == "POP_TOP" and code[p + 1].opname == "JUMP" else None

    assert follow_jumps(code, _pos_of(code), 0, jump_at=popping) == 4      # the second block jumps back
    assert follow_jumps(code, _pos_of(code), 0, jump_at=popping, back=True) == 2
    assert follow_jumps(code, _pos_of(code), 0) == 0       # no JUMP at 0 itself

