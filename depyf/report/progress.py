"""Live status of a script running under ``depyf run``: what Dynamo compiled so far.

On a terminal the status is one line on stderr, rewritten in place; otherwise (logs, CI, pipes)
it prints a plain line only when the counts change and at most every few seconds, so the
script's own output stays readable. It reads Dynamo's counters only if the script imported torch
(never importing it itself), from a daemon thread that never touches the script's state.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


def dynamo_counts() -> dict[str, int] | None:
    """Frames compiled, graphs and graph breaks so far, or None if torch's Dynamo is not loaded."""
    if "torch._dynamo.utils" not in sys.modules:
        return None  # never import torch (or depyf.torch) for a status line
    from depyf.torch.adapter import compile_counts

    return compile_counts()


def describe(counts: dict[str, int]) -> str:
    return (f"depyf: compiled {counts['frames']} frame{'s' if counts['frames'] != 1 else ''}, "
            f"{counts['graphs']} graph{'s' if counts['graphs'] != 1 else ''}, "
            f"{counts['breaks']} graph break{'s' if counts['breaks'] != 1 else ''}")


class LiveStatus:
    """A background reporter; use as a context manager around the script run."""

    def __init__(self, stream: TextIO | None = None, interval: float = 0.25, plain_every: float = 5.0,
                 enabled: bool = True):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval
        self.plain_every = plain_every
        self.enabled = enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = ""
        self._printed = ""   # the last plain line written (not a terminal)
        self._last_plain: float | None = None   # when the last plain line was written (None: never)

    def __enter__(self) -> LiveStatus:
        if self.enabled:
            self._thread = threading.Thread(target=self._loop, name="depyf-status", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._draw_final()
        self.clear()

    def _draw_final(self) -> None:
        """Show the last counts once even when the run ended between two redraws (on a terminal)
        or after the last plain line (logs): the final line always has the final counts."""
        counts = dynamo_counts()
        if counts is None or not (counts["frames"] or counts["graphs"]):
            return
        line = describe(counts)
        if self.tty and line != self._shown:
            self._write("\r\x1b[K" + line)
            self._shown = line
        elif not self.tty and line != self._printed:   # (also where no plain line was due yet)
            self._write(line + "\n")
            self._printed = line

    def clear(self) -> None:
        """Erase the live line (terminal only) so the next output starts on a clean line."""
        if self.tty and self._shown:
            self._write("\r\x1b[K")
            self._shown = ""

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the script closed or replaced stderr
            self._stop.set()

    def _loop(self) -> None:
        last_counts: dict[str, int] | None = None
        while not self._stop.wait(self.interval):
            counts = dynamo_counts()
            if counts is None or counts["frames"] == 0 and counts["graphs"] == 0:
                continue
            if self.tty:
                if counts != last_counts:  # redraw only on change: less churn under the script's output
                    line = describe(counts)
                    self._write("\r\x1b[K" + line)
                    self._shown = line
                    last_counts = counts
            elif counts != last_counts and (self._last_plain is None
                                            or time.monotonic() - self._last_plain >= self.plain_every):
                self._printed = describe(counts)
                self._write(self._printed + "\n")
                self._last_plain = time.monotonic()
                last_counts = counts
