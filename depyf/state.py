"""What ``prepare_debug``, ``depyf.debug()`` and ``depyf run`` share within one process.

- the directory of the latest finished dump, where ``depyf.debug()`` points the user;
- the dump a ``depyf run`` records into: while it is set, a ``prepare_debug`` the script calls
  itself joins that dump instead of starting a second one (and leaves a note for the run's
  summary).

Imports nothing beyond the standard library, so ``depyf run`` can use it before torch is loaded.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

DEFAULT_DUMP_DIR = "depyf_debug_dir"


@dataclass
class RunRecording:
    """The dump of a ``depyf run`` and the notes it prints after the script."""

    dump_dir: str
    notes: list[str] = field(default_factory=list)


_last_dump_dir: str | None = None
_run: RunRecording | None = None


def record_dump_dir(path: str) -> None:
    """Remember ``path`` as the latest dump (``prepare_debug`` calls this once its dump is written)."""
    global _last_dump_dir
    _last_dump_dir = os.path.abspath(path)


def forget_dump_dir() -> None:
    global _last_dump_dir
    _last_dump_dir = None


def last_dump_dir() -> str | None:
    """The latest dump recorded in this process, else ``./depyf_debug_dir`` if it exists, else None."""
    if _last_dump_dir is not None:
        return _last_dump_dir
    if os.path.isdir(DEFAULT_DUMP_DIR):
        return os.path.abspath(DEFAULT_DUMP_DIR)
    return None


def run_recording() -> RunRecording | None:
    """The ``depyf run`` dump that a ``prepare_debug`` called now joins, or None."""
    return _run


@contextlib.contextmanager
def recording_run(dump_dir: str, notes: list[str]) -> Iterator[RunRecording]:
    """While the block runs, ``prepare_debug`` calls join ``dump_dir`` and append a line to ``notes``."""
    global _run
    saved, _run = _run, RunRecording(dump_dir, notes)
    try:
        yield _run
    finally:
        _run = saved
