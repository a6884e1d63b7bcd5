"""Notice child processes started while a dump is active (their compilations are not in it)."""

from __future__ import annotations

import multiprocessing.process
from collections.abc import Callable
from typing import Any


def count_child_processes(on_start: Callable[[Any], None]) -> Callable[[], None]:
    """Call ``on_start(process)`` for each ``multiprocessing`` process started (``mp.spawn``, Pools, ...).

    Returns the function that stops counting."""
    base = multiprocessing.process.BaseProcess
    original = base.__dict__["start"]

    def start(self: Any) -> None:
        original(self)
        try:
            on_start(self)
        except Exception:  # counting must never break the program
            pass

    start.__wrapped__ = original  # type: ignore[attr-defined]
    base.start = start  # type: ignore[method-assign]

    def undo() -> None:
        if base.__dict__.get("start") is start:
            base.start = original  # type: ignore[method-assign]

    return undo
