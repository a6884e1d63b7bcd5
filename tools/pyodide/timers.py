"""``signal.setitimer(ITIMER_REAL, ...)`` that works under pyodide.

In pyodide the interval timer is a JavaScript timeout, and JavaScript cannot run while Python is
busy, so SIGALRM never interrupts a Python loop: a test that guards a possibly endless call with an
alarm (as the corpus harness does) hangs forever. ``install()`` replaces ``signal.setitimer`` and
``signal.getitimer`` for ITIMER_REAL with a trace function that checks the deadline on every line
and calls the SIGALRM handler when it has passed; the trace is active only while a timer is armed.
``tools/pyodide/run.mjs`` installs it before running anything.
"""

from __future__ import annotations

import signal
import sys
import time

_deadline: float | None = None
_original_setitimer = getattr(signal, "setitimer", None)
_original_getitimer = getattr(signal, "getitimer", None)


def _remaining() -> float:
    return max(0.0, _deadline - time.monotonic()) if _deadline is not None else 0.0


def _trace(frame, event, arg):
    global _deadline
    if _deadline is not None and time.monotonic() >= _deadline:
        _deadline = None
        sys.settrace(None)
        handler = signal.getsignal(signal.SIGALRM)
        if callable(handler):
            handler(signal.SIGALRM, frame)  # its exception propagates into the traced code
        return None
    return _trace if _deadline is not None else None


def setitimer(which, seconds, interval=0.0):
    """ITIMER_REAL through tracing; the other timers as the platform has them."""
    global _deadline
    if which != signal.ITIMER_REAL:
        return _original_setitimer(which, seconds, interval)
    previous = (_remaining(), 0.0)
    if seconds > 0:
        _deadline = time.monotonic() + seconds
        sys.settrace(_trace)  # calls made from now on are traced ...
        frame = sys._getframe(1)
        while frame is not None:  # ... and so are the frames already running (a loop in the caller)
            frame.f_trace = _trace
            frame = frame.f_back
    else:
        _deadline = None
        sys.settrace(None)
    return previous


def getitimer(which):
    if which != signal.ITIMER_REAL:
        return _original_getitimer(which)
    return (_remaining(), 0.0)


def install() -> None:
    if sys.platform == "emscripten" and hasattr(signal, "SIGALRM"):
        signal.setitimer = setitimer
        signal.getitimer = getitimer
