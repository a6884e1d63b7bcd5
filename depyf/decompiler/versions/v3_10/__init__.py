"""CPython 3.10 -> the shared instruction model (see ``depyf.decompiler.instructions``).

3.10 predates most of what the model takes from 3.11:

- calls push no NULL: ``CALL_FUNCTION n`` / ``CALL_FUNCTION_KW n`` / ``CALL_FUNCTION_EX`` become CALL /
  CALL_KW / CALL_FUNCTION_EX with one callable slot (``slots=1``); ``LOAD_METHOD`` + ``CALL_METHOD``
  become LOAD_ATTR + PUSH_NULL and a two-slot CALL, as for 3.11's method calls;
- ``BINARY_ADD``, ``INPLACE_ADD`` and friends become BINARY_OP with the operator ('+', '+=', ...);
- ``DUP_TOP``/``DUP_TOP_TWO``/``ROT_*`` become COPY/SWAP (``DUP_TOP; ROT_THREE`` of a chained
  comparison becomes 3.11's ``SWAP 2; COPY 2``);
- ``MAKE_FUNCTION`` finds the qualified name on the stack above the code (``extra['qualname_on_stack']``);
- ``GET_YIELD_FROM_ITER``/``GET_AWAITABLE``; ``LOAD_CONST None``; ``YIELD_FROM`` is YIELD_FROM / AWAIT;
- ``JUMP_ABSOLUTE`` is JUMP; ``GEN_START``, ``NOP`` and ``EXTENDED_ARG`` are dropped.

- the block stack becomes 3.11's exception table: ``_BlockFlow`` replays SETUP_FINALLY /
  SETUP_WITH / SETUP_ASYNC_WITH / POP_BLOCK / POP_EXCEPT over every path, so each instruction
  knows its innermost handler and the stack depth under it. A try/with handler starts with a
  synthesised PUSH_EXC_INFO, and while a handler runs its code is covered by a synthesised cleanup
  (``COPY 3; POP_EXCEPT; RERAISE 1`` right after that code, at an odd offset), as 3.11 compiles
  it; the cleanup of ``except E as name`` keeps no PUSH_EXC_INFO, as in 3.11;
- the three values 3.10 pushes for an exception (traceback, value, type) are one value in the
  model: popping or storing them is one POP_TOP/STORE; ``DUP_TOP; <type>; JUMP_IF_NOT_EXC_MATCH``
  is ``<type>; CHECK_EXC_MATCH; POP_JUMP_IF_FALSE``; the saved exception state is one value too
  (``ROT_FOUR`` over it is ``SWAP 2``); SETUP_WITH is BEFORE_WITH, and the with exit
  ``LOAD_CONST None; DUP_TOP; DUP_TOP; CALL_FUNCTION 3`` is 3.11's three constants and ``CALL 2``;
- 3.10's optimiser copies small blocks ending in a return (with the no-line POP_BLOCK, finally
  body copy or with exit before them) into each predecessor; where such copies are exits of a try
  body, except clause or with body, a ``break``'s copy of the code after its for loop, or both
  paths of a chained comparison, identical copies become jumps to one, which is 3.11's layout
  (``share_return_tails``, ``share_chain_exits`` in ``depyf.decompiler.layout.block_stack_tails``);
- ``async for``: ``SETUP_FINALLY`` to END_ASYNC_FOR around ``GET_ANEXT; LOAD_CONST None;
  YIELD_FROM`` is ASYNC_FOR_ITER (target: after END_ASYNC_FOR), with no table entry.

``match``: ``MATCH_CLASS``/``MATCH_KEYS`` push a success flag over the attributes/values, which
becomes 3.11's None check (``COPY 1; POP_JUMP_IF_NONE``); ``ROT_N`` becomes SWAPs. 3.10 reads the
attributes/values by subscript instead of unpacking them, which the pattern reader accepts.

Refused (a DecompilationError names the opcode): shapes the block-stack replay does not
understand (other uses of the exception values).

translate.py maps the 3.10 instructions onto the model's (``normalize``); block_flow.py models the
stack through the blocks to find the exception handlers and their kinds; the layout passes
(``depyf.decompiler.layout``) that ``FEATURES`` call for share the return and exit tails the
compiler copies.
"""

import types

from depyf.decompiler.instructions import ExceptionEntry, Features, Instr
from depyf.decompiler.versions.v3_10 import translate
from depyf.decompiler.versions.v3_10.translate import HANDLED

FEATURES = Features(copies_return_tails=True, copies_loop_tests=True, handlers_laid_out_last=False,
                    jumps_cannot_raise=False,
                    threads_value_tests=True)


def normalize(code: types.CodeType,
              features: Features = FEATURES) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and exception table of ``code`` (compiled by CPython 3.10), laid
    out by the passes that ``features`` (the compiler's, ``FEATURES``) call for."""
    return translate.normalize(code, features)


__all__ = [
    "FEATURES", "HANDLED", "normalize"
]
