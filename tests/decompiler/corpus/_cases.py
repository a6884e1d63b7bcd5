"""Attach the inputs that exercise a corpus function to the function itself.

The inputs live on the function (``__corpus_cases__``) rather than in a registry so that a module
re-executed from decompiled source carries its cases along with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Call:
    """One invocation: positional and keyword arguments."""

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"({', '.join(parts)})"


def call(*args: Any, **kwargs: Any) -> Call:
    """An invocation with keyword arguments, for use inside ``@cases``."""
    return Call(args, kwargs)


def cases(*invocations: tuple | Call) -> Callable[[F], F]:
    """Record the invocations (argument tuples or ``call(...)``) that take every branch of the function."""
    calls = [inv if isinstance(inv, Call) else Call(tuple(inv)) for inv in invocations]

    def mark(func: F) -> F:
        func.__corpus_cases__ = calls  # type: ignore[attr-defined]
        return func

    return mark
