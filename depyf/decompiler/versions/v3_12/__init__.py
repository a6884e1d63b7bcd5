"""CPython 3.12 -> the shared instruction model (see ``depyf.decompiler.instructions``).

3.12 differs from 3.11 in ways this module undoes:

- ``LOAD_ATTR`` with the low oparg bit is a method load (3.11's ``LOAD_METHOD``): LOAD_ATTR + PUSH_NULL.
- ``LOAD_SUPER_ATTR`` replaces ``super()`` + ``LOAD_ATTR``: the implicit ``__class__``/``self`` loads
  of zero-argument ``super()`` are removed and an explicit call is emitted.
- ``RETURN_CONST`` -> LOAD_CONST + RETURN_VALUE; ``BINARY_SLICE``/``STORE_SLICE`` -> BUILD_SLICE 2 +
  BINARY_SUBSCR/STORE_SUBSCR.
- ``FOR_ITER`` jumps to ``END_FOR`` (which pops the iterator): END_FOR is dropped and the loop
  exit is the instruction after it.
- ``and``/``or`` in value position is ``COPY 1; POP_JUMP_IF_X; POP_TOP``: folded into 3.11's
  ``JUMP_IF_X_OR_POP``.
- conditional jumps only go forward: ``POP_JUMP_IF_X L; JUMP_BACKWARD T; L:`` becomes 3.11's
  backward ``POP_JUMP_IF_NOT_X T``.
- await / yield from loops end in ``END_SEND`` and have ``CLEANUP_THROW`` handlers: the loop folds
  into AWAIT / YIELD_FROM / ASYNC_FOR_ITER as for 3.11, and the handlers and their table entries go.
- Generators and coroutines are wrapped in a handler turning StopIteration into RuntimeError
  (``CALL_INTRINSIC_1 INTRINSIC_STOPITERATION_ERROR; RERAISE 1``): dropped with its entries.
- class bodies that need their namespace in a cell (type parameters; 3.14 annotations) start with
  ``LOAD_LOCALS; STORE_DEREF __classdict__``: dropped, the compiler makes it again.
- PEP 709 inlined list/set/dict comprehensions (``LOAD_FAST_AND_CLEAR`` ... ``END_FOR`` and the
  restoring stores) are turned back into 3.11's shape: a synthetic ``<listcomp>``/``<setcomp>``/
  ``<dictcomp>`` code object, ``LOAD_CONST code; MAKE_FUNCTION 0; SWAP 2; CALL 0``. The synthetic
  code's own instructions are ``BUILD_X 0; LOAD_FAST .0; FOR_ITER ...; RETURN_VALUE``, exactly what
  3.11 compiles a comprehension into; ``normalize`` returns them when asked for that code object.

Later versions (3.13, 3.14, 3.15) subclass :class:`Translator` and override the hooks.

tables.py holds the opname tables; translator.py the ``Translator`` (its driver), which composes the
opcode translations (opcodes.py), the jump translation (jumps.py) and the inlined comprehensions
(comprehensions.py, with the synthetic code objects of synthetic.py), then runs the layout passes
(``depyf.decompiler.layout``) that the version's ``FEATURES`` call for, which share the copies the
compiler made again.
"""

import types

from depyf.decompiler.instructions import ExceptionEntry, Features, Instr
from depyf.decompiler.versions.v3_12.synthetic import synthetic_instructions
from depyf.decompiler.versions.v3_12.tables import CONVERSIONS, DROP, HANDLED, JUMPS, SAME, SPECIAL
from depyf.decompiler.versions.v3_12.translator import Translator

FEATURES = Features(copies_return_tails=True, copies_loop_tests=True, handlers_laid_out_last=True,
                    jumps_cannot_raise=False,
                    conditional_jumps_go_forward=True)


def normalize(code: types.CodeType,
              features: Features = FEATURES) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and exception table of ``code`` (compiled by CPython 3.12), laid
    out by the passes that ``features`` (the compiler's, ``FEATURES``) call for."""
    synthetic = synthetic_instructions(code)
    if synthetic is not None:
        return synthetic
    return Translator(code, features).normalize()


__all__ = [
    "CONVERSIONS", "FEATURES", "DROP", "HANDLED", "JUMPS", "SAME", "SPECIAL", "Translator", "normalize",
    "synthetic_instructions"
]
