"""Keep Ctrl-C from cutting ``prepare_debug``'s set-up and tear-down in half.

A ``KeyboardInterrupt`` that lands while depyf installs or removes its torch patches would leave
some installed; one that lands while the index is written would leave a dump without it. While
the block's own code runs, Ctrl-C behaves as always. While depyf's ``__enter__``/``__exit__`` run
(found on the interrupted frame's stack, so even the first instruction of ``__exit__`` counts),
the interrupt is held and delivered once depyf is done. A second Ctrl-C while the dump is being
written gives up on the dump (``DumpAbandoned``) so the program can stop at once.
"""

from __future__ import annotations

import signal
import sys
import threading
import types
from collections.abc import Callable
from typing import Any


class DumpAbandoned(BaseException):
    """Raised inside the dump writer when the user presses Ctrl-C a second time."""


class InterruptShield:
    """A SIGINT handler that holds interrupts while a guarded frame is on the main thread's stack."""

    def __init__(self, guarded: set[types.CodeType], notice: Callable[[], str]):
        self._guarded = guarded
        self._notice = notice
        self._previous: Any = None
        self._installed = False
        self.pending = 0
        self.writing = False   # set while the dump is written: a second Ctrl-C abandons it

    def install(self) -> None:
        """Take over SIGINT (main thread only, and only from a Python-level handler)."""
        if threading.current_thread() is not threading.main_thread():
            return
        try:
            previous = signal.getsignal(signal.SIGINT)
            if not callable(previous):  # SIG_IGN / SIG_DFL / set from C: leave them alone
                return
            signal.signal(signal.SIGINT, self._handle)
        except (ValueError, OSError):
            return
        self._previous = previous
        self._installed = True

    def _handle(self, signum: int, frame: types.FrameType | None) -> None:
        if not self._in_guarded(frame):
            self._previous(signum, frame)
            return
        self.pending += 1
        if self.writing and self.pending >= 2:
            raise DumpAbandoned
        if self.writing:
            print(self._notice(), file=sys.stderr, flush=True)

    def _in_guarded(self, frame: types.FrameType | None) -> bool:
        while frame is not None:
            if frame.f_code in self._guarded:
                return True
            frame = frame.f_back
        return False

    def restore(self) -> None:
        """Give SIGINT back to its previous handler (unless the block installed its own since)."""
        if not self._installed:
            return
        self._installed = False
        try:
            if signal.getsignal(signal.SIGINT) == self._handle:
                signal.signal(signal.SIGINT, self._previous)
        except (ValueError, OSError):
            pass

    def deliver(self) -> None:
        """Hand a held interrupt to the previous handler (the default one raises KeyboardInterrupt)."""
        if self.pending and self._previous is not None:
            self.pending = 0
            self._previous(signal.SIGINT, sys._getframe(1))
