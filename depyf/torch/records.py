"""What a dump records while Dynamo compiles: one ``FunctionRecord`` per original code object, one
``EntryRecord`` per transformed code, and ``DumpState``, the view of a dump that the index writer
reads. ``depyf.torch.session`` fills them; ``depyf.torch.index`` writes them out; neither imports
the other's internals through this module."""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from depyf.torch import adapter
from depyf.torch.guards import GuardClause
from depyf.torch.names import identifier
from depyf.torch.transformed import TransformedCode

if TYPE_CHECKING:
    from depyf.torch.files import DumpFiles
    from depyf.torch.graphs import GraphDumper
    from depyf.torch.trace import TraceEvent


class DepyfWarning(UserWarning):
    """Something depyf could not do; the user's program is unaffected."""


@dataclass
class EntryRecord:
    """A transformed code that went through depyf's bytecode hook."""

    number: int
    function_name: str
    compile_key: str | None
    result: TransformedCode
    file: str
    graphs: list[str] = field(default_factory=list)
    clauses: list[GuardClause] = field(default_factory=list)
    guards_read: bool = False         # clauses were read from Dynamo's cache entry

    @property
    def transformed_name(self) -> str:
        return f"__transformed_code_{self.number}_for_{identifier(self.function_name)}"

    @property
    def guard_name(self) -> str:
        return f"__guard_{self.number}_for_{identifier(self.function_name)}"


@dataclass
class FunctionRecord:
    """An original code object Dynamo compiled (a user function or a resume function)."""

    code: types.CodeType
    serial: int                       # how many earlier records share this name
    entries: list[EntryRecord] = field(default_factory=list)
    compile_keys: list[str] = field(default_factory=list)
    live_entries: list[EntryRecord] = field(default_factory=list)  # cached now, in lookup order

    @property
    def name(self) -> str:
        return self.code.co_name

    @property
    def kind(self) -> str:
        return "resume" if adapter.resume_of(self.code) else "user"

    @property
    def full_code_file(self) -> str:
        return f"full_code_for_{identifier(self.name)}_{self.serial}.py"

    @property
    def dispatch_name(self) -> str:
        return f"__dispatch_for_{identifier(self.name)}" + (f"_{self.serial}" if self.serial else "")


class DumpState(Protocol):
    """What the index writer reads from a finished dump (``DumpSession`` provides it)."""

    files: DumpFiles
    graphs: GraphDumper
    functions: dict[types.CodeType, FunctionRecord]
    trace_events: dict[str, list[TraceEvent]]
    backends: set[str]
    warnings: list[str]
    unavailable: list[dict[str, str]]
    clean_wild_fx_code: bool

    def warn(self, message: str) -> None: ...

    def referenced_resume_codes(self, entry: EntryRecord) -> list[types.CodeType]: ...

    def _parent_of(self, record: FunctionRecord) -> FunctionRecord | None: ...


__all__ = ["DepyfWarning", "DumpState", "EntryRecord", "FunctionRecord"]
