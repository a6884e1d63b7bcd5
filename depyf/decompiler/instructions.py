"""Normalisation: each CPython's bytecode -> one version-blind instruction model.

Everything after this layer sees the same opnames with the same stack semantics, which are
CPython 3.11's with the version quirks removed:

- no CACHE, PRECALL, NOP, RESUME, EXTENDED_ARG, prologue (MAKE_CELL, COPY_FREE_VARS,
  RETURN_GENERATOR + its POP_TOP, GEN_START), TO_BOOL or NOT_TAKEN instructions;
- jumps are absolute: ``target`` is the offset of an instruction in the original code, and is
  always the offset of a kept instruction (dropped instructions forward to the next kept one);
  ``JUMP`` is every unconditional jump; conditional jumps are ``POP_JUMP_IF_FALSE/TRUE/NONE/
  NOT_NONE`` and ``JUMP_IF_FALSE_OR_POP/JUMP_IF_TRUE_OR_POP`` (value-position and/or);
- ``LOAD_GLOBAL`` / ``LOAD_ATTR`` never push NULL themselves: a separate ``PUSH_NULL`` is emitted
  (method loads become ``LOAD_ATTR`` + ``PUSH_NULL``); ``CALL`` (argval = argc) pops its arguments
  then ``slots`` (1 or 2) callable slots, NULL slots being ignored; ``CALL_KW`` pops a tuple of
  keyword names first (3.11's KW_NAMES becomes LOAD_CONST + CALL_KW);
- ``BINARY_OP`` carries the operator symbol in ``argval`` ('+', '+=', ...);
- ``FOR_ITER`` pops the iterator when exhausted and jumps to ``target`` (3.11 semantics);
- ``YIELD_FROM`` / ``AWAIT`` replace a whole SEND loop: pop the iterable, push the result;
  ``ASYNC_FOR_ITER`` is FOR_ITER for ``async for`` (target: after the loop);
- ``FORMAT_VALUE`` argval = (conversion char or None, has_spec); ``MAKE_FUNCTION`` argval = flags.
"""

from __future__ import annotations

import dis
import functools
import sys
import types
from dataclasses import dataclass, field

from depyf.decompiler.errors import DecompilationError


@dataclass
class Instr:
    """One normalised instruction. ``offset`` is the original instruction's offset."""

    opname: str
    offset: int
    arg: int | None = None
    argval: object = None
    target: int | None = None
    lineno: int | None = None
    slots: int = 2
    extra: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        tgt = f" ->{self.target}" if self.target is not None else ""
        return f"<{self.offset} {self.opname} {self.argval!r}{tgt}>"


@dataclass(frozen=True)
class ExceptionEntry:
    """A protected range [start, end) of offsets handled at ``target`` with stack ``depth``."""

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


POP_JUMPS = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"})
CONDITIONAL_JUMPS = POP_JUMPS | {"JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"}
JUMPS = CONDITIONAL_JUMPS | {"JUMP", "FOR_ITER", "ASYNC_FOR_ITER"}
TERMINATORS = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP"})


@functools.cache
def _version_module():
    major, minor = sys.version_info[:2]
    name = f"depyf.decompiler.versions.v{major}_{minor}"
    try:
        import importlib

        return importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - depends on the running interpreter
        raise DecompilationError(f"CPython {major}.{minor} is not supported yet ({exc})") from None


def normalize(code: types.CodeType) -> tuple[list[Instr], list[ExceptionEntry]]:
    """The normalised instructions and exception table of ``code`` for the running CPython."""
    check_opcodes(code)
    return _version_module().normalize(code)


# Opcodes with a name that still cannot run: inline cache entries where an instruction should be,
# placeholders, and 3.12+'s executor hook (only in specialised code).
_NOT_RUNNABLE = frozenset({"CACHE", "RESERVED", "ENTER_EXECUTOR"})


def check_opcodes(code: types.CodeType) -> None:
    """Refuse bytecode with an opcode the running CPython does not define.

    CPython stops with ``SystemError: unknown opcode`` there; ``dis`` shows such a byte as a cache
    entry (3.11, 3.12) or an unnamed ``<n>`` instruction that later steps would silently skip."""
    raw = code.co_code
    caches = getattr(dis, "_inline_cache_entries", None)
    i = 0
    while i < len(raw):
        op = raw[i]
        name = dis.opname[op]
        if name.startswith("<") or name in _NOT_RUNNABLE:
            # (3.11+ read ``co_code`` back through a table that turns unknown opcodes into 0)
            op = getattr(code, "_co_code_adaptive", raw)[i]
            raise DecompilationError(
                f"unknown opcode {op} for CPython {sys.version_info[0]}.{sys.version_info[1]}",
                qualname=getattr(code, "co_qualname", code.co_name),
                offset=i,
                opname=f"<{op}>",
            )
        if isinstance(caches, (list, tuple)):
            i += 2 * caches[op]
        elif hasattr(caches, "get"):        # a mapping by name (3.13+; 3.15: a frozendict)
            i += 2 * caches.get(name, 0)
        i += 2


# 3.13+: conditional jumps take exact bools (TO_BOOL, dropped by normalisation, converts first), so
# a block of jumps alone cannot raise; before, a jump calls ``__bool__`` itself.
JUMPS_CANNOT_RAISE = sys.version_info >= (3, 13)


@functools.cache
def copies_loop_tests() -> bool:
    """Does the running compiler copy a ``while`` loop's test to the bottom of its body?

    3.10 to 3.13 do (the end of the body runs the copy; only a written ``continue`` jumps back to
    the test at the top), 3.14 does not. Asked of the compiler itself rather than kept per version."""
    probe = compile("while a:\n    b()\n", "<probe>", "exec")
    return sum(ins.argval == "a" for ins in dis.get_instructions(probe)) > 1


def handled_opnames() -> frozenset[str]:
    """Raw opnames of the running CPython that the normalisation layer accepts."""
    return frozenset(_version_module().HANDLED)


def forward_offsets(instrs: list[Instr], dropped: list[int], all_offsets: list[int]) -> dict[int, int]:
    """Map every original offset to the offset of the first kept instruction at or after it.

    Used to retarget jumps that land on dropped instructions.
    """
    kept = sorted({i.offset for i in instrs})
    mapping: dict[int, int] = {}
    j = 0
    for off in sorted(all_offsets):
        while j < len(kept) and kept[j] < off:
            j += 1
        if j < len(kept):
            mapping[off] = kept[j]
    return mapping



def async_for_entries_to_outer(table: list[ExceptionEntry], async_handlers: set[int]) -> list[ExceptionEntry]:
    """Give the ranges an ``END_ASYNC_FOR`` handler protected (the loop's ``__anext__`` await) to
    the handler around that ``END_ASYNC_FOR``, or drop them when there is none.

    The model folds that handler into ASYNC_FOR_ITER, which stops the loop; any other exception
    END_ASYNC_FOR re-raises, into the enclosing handler. Without this an ``async for`` inside a
    ``with`` or ``try`` body would cut the body's protected range in two.
    """
    def outer_of(offset: int, seen: set[int]) -> ExceptionEntry | None:
        around = next((o for o in table if o.start <= offset < o.end), None)
        if around is not None and around.target in async_handlers and around.target not in seen:
            return outer_of(around.target, seen | {around.target})
        return around if around is None or around.target not in async_handlers else None

    entries = []
    for e in table:
        if e.target not in async_handlers:
            entries.append(e)
            continue
        outer = outer_of(e.target, {e.target})
        if outer is not None:
            entries.append(ExceptionEntry(e.start, e.end, outer.target, outer.depth, outer.lasti))
    return entries

# Import the running version's module with the decompiler rather than during the first
# decompilation (inside torch.compile, that would count as compile time).
try:
    _version_module()
except DecompilationError:  # pragma: no cover - an unsupported CPython fails when used, not on import
    pass
