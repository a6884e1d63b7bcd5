"""Errors raised by the decompiler."""

from __future__ import annotations


class DecompilationError(Exception):
    """Bytecode that cannot be turned into source; names where and why.

    ``qualname``, ``offset`` and ``opname`` locate the instruction (offset and opname may be
    None when the failure is not tied to one instruction).
    """

    def __init__(self, message: str, *, qualname: str = "?", offset: int | None = None,
                 opname: str | None = None):
        self.reason = message
        self.qualname = qualname
        self.offset = offset
        self.opname = opname
        where = f"in {qualname}"
        if offset is not None:
            where += f" at offset {offset}"
        if opname is not None:
            where += f" ({opname})"
        super().__init__(f"{message} {where}")


class SourceDoesNotCompile(DecompilationError):
    """The decompiled source is not valid Python: a decompiler bug, never a result to return."""
