"""``depyf.debug()``: step through what ``torch.compile`` runs, in the files ``prepare_debug`` wrote.

Inside the block nothing new is compiled: code that already has compiled code runs it (from the
dumped files, which ``prepare_debug`` linked), and a call that would need a new compilation
runs as plain Python with a warning (on torch 2.2 to 2.5, one warning at entry). The block
pauses once in the debugger, listing the files to open, so breakpoints can be set in them before
the compiled code runs.
"""

from __future__ import annotations

import bdb
import contextlib
import json
import os
import sys
import types
import warnings
from typing import Any

from depyf import state
from depyf.fileio import read_regular
from depyf.torch import adapter

__all__ = ["debug", "DebugWarning", "PAUSE_ENV"]

PAUSE_ENV = "DEPYF_DEBUG_PAUSE"
"""``1``: always pause (tests drive pdb through a pipe); ``0``: never pause; unset: pause when
stdin is a terminal or a debugger (pdb, debugpy) is attached."""


class DebugWarning(UserWarning):
    """Something inside ``depyf.debug()`` did not go as planned; the program itself is unaffected."""


def debug(*, pause: bool | None = None) -> DebugBlock:
    """Run the block on already compiled code only, pausing once so breakpoints can be set.

    ``pause``: ``True``/``False`` force or forbid the pause; ``None`` (default) follows
    ``DEPYF_DEBUG_PAUSE`` and otherwise pauses only when someone can answer: stdin is a terminal,
    or pdb or debugpy is already attached (their existing session is reused, so breakpoints set
    from ``python -m pdb`` or VS Code keep working). Every setting is restored on exit.
    The pause lands on the first line of the block, in the caller's frame.
    """
    return DebugBlock(pause)


class DebugBlock:
    """The ``with depyf.debug():`` block.

    A class rather than a generator so that the pause lands in the caller's frame, not in
    contextlib; ``__enter__``/``__exit__`` are hidden from Dynamo (see ``_hidden_from_dynamo``),
    so a block inside a compiled function makes Dynamo fall back to running it as Python."""

    def __init__(self, pause: bool | None):
        self.pause = pause
        self._restore = contextlib.ExitStack()

    def __enter__(self) -> None:
        _enter_block(self._restore, self.pause, sys._getframe(1))

    def __exit__(self, *exc_info: object) -> None:
        self._restore.close()


def _enter_block(restore: contextlib.ExitStack, pause: bool | None, caller: types.FrameType | None) -> None:
    _enter_no_compile(restore)
    try:
        print(_guide(state.last_dump_dir()), file=sys.stderr, flush=True)
        trace_before = sys.gettrace()
        if _pause(_user_frame(caller), pause):
            # The debugger we started ends with the block (and cannot trip over
            # interpreter shutdown); a debugger the user attached keeps running.
            restore.callback(sys.settrace, trace_before)
    except Exception as exc:  # the pause is a convenience; the block must still run
        _warn(f"could not pause in a debugger: {exc!r}")


def _hidden_from_dynamo() -> None:
    """Make Dynamo run ``debug()``'s entry points as Python instead of tracing them.

    Traced, ``set_stance`` inside them is a hard error (Dynamo forbids tracing it)."""
    try:
        DebugBlock.__enter__ = adapter.run_outside_dynamo(DebugBlock.__enter__)  # type: ignore[method-assign]
        DebugBlock.__exit__ = adapter.run_outside_dynamo(DebugBlock.__exit__)  # type: ignore[method-assign]
    except Exception:  # without it, only debug() inside compiled code fails
        pass


# ---------------------------------------------------------------------------- no new compilation


def _enter_no_compile(restore: contextlib.ExitStack) -> None:
    """``eager_on_recompile`` stance, plus a warning for each call it runs uncompiled.

    Without compile stances (torch 2.2 to 2.5) Dynamo's compile callbacks are installed as run-only
    mode instead: the same effect, but a cache miss calls nothing of ours, so one warning at entry
    says that such calls run uncompiled (a callback that declined a frame would mark its code as
    skipped for good)."""
    if not adapter.has_compile_stance():
        try:
            restore.callback(adapter.patch_compile_callbacks_to_run_only())
        except Exception as exc:  # never break the program
            _warn(f"new compilations are not prevented: {exc}")
            return
        _warn(f"torch {adapter.torch_version()} has no compile stance: a call that would need a new "
              "compilation runs uncompiled inside the block, without a warning of its own. Call it under "
              "depyf.prepare_debug() first to debug its compiled code.")
        return
    try:
        import torch

        stance = torch.compiler.set_stance("eager_on_recompile")  # sets it now; the object restores
    except Exception as exc:  # e.g. called inside a compiled region: never break the program
        _warn(f"new compilations are not prevented: {exc}")
        return
    restore.callback(stance.__exit__, None, None, None)
    try:
        _warn_on_uncompiled_calls(restore)
    except Exception as exc:  # a missing private API costs the warning, not the block
        _warn(f"calls that need a new compilation run uncompiled without a warning: {exc}")


def _warn(message: str) -> None:
    warnings.warn(f"depyf.debug(): {message}", DebugWarning, stacklevel=5)


def _warn_on_uncompiled_calls(restore: contextlib.ExitStack) -> None:
    uncompiled = adapter.run_frame_uncompiled()  # built once: fails here, not inside Dynamo
    warned: set[types.CodeType] = set()

    def warn_and_run_uncompiled(frame: types.FrameType, *args: Any, **kwargs: Any) -> Any:
        try:
            # Expressions a debugger evaluates (pdb's `p x`: file "<string>") are not the user's.
            if (frame.f_code not in warned and not frame.f_code.co_filename.startswith("<")
                    and adapter.should_compile_frame(frame)):
                warned.add(frame.f_code)
                code = frame.f_code
                warnings.warn_explicit(
                    f"depyf.debug(): {code.co_name} would need a new compilation; it runs uncompiled "
                    "inside depyf.debug(). Call it under depyf.prepare_debug() first to debug its "
                    "compiled code.", DebugWarning, code.co_filename, frame.f_lineno)
        except Exception:
            pass
        return uncompiled

    tagged: dict[int, tuple[Any, Any]] = {}

    def wrap(result: Any, callback: Any) -> Any:
        # Only the eager_on_recompile stance turns a real compile callback into False (run
        # cached code only); keep cache hits as they are and add the warning on a miss.
        if result is not False or callback in (False, None):
            return result
        entry = tagged.get(id(callback))
        if entry is None or entry[0] is not callback:
            entry = tagged[id(callback)] = (callback, _with_backend(warn_and_run_uncompiled, callback))
        return entry[1]

    restore.callback(adapter.dynamo_callback_from_stance_patch(wrap))


def _with_backend(fn: Any, callback: Any) -> Any:
    """A fresh function object carrying the backend tag, so cache lookups still match entries."""
    wrapped = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    adapter.tag_frame_callback_with_backend(wrapped, callback)
    return wrapped


# ---------------------------------------------------------------------------- the pause


def _guide(dump_dir: str | None) -> str:
    if dump_dir is None:
        return ("depyf.debug(): no dump directory found; run the code under "
                "depyf.prepare_debug(dump_dir) first.")
    runs, read_only = _files_to_open(dump_dir)
    lines = [f"depyf.debug(): compiled code runs from files in {dump_dir}.",
             "Set breakpoints in them (pdb: `b <file>:<line>`), then continue:"]
    lines += _listing(dump_dir, runs) or ["  (no dumped code files found)"]
    if read_only:
        lines.append("For reading only (this code does not run from the file, see index.md):")
        lines += _listing(dump_dir, read_only)
    return "\n".join(lines)


_MAX_LISTED = 30


def _listing(dump_dir: str, names: list[str]) -> list[str]:
    shown = [f"  {os.path.join(dump_dir, name)}" for name in names[:_MAX_LISTED]]
    if len(names) > _MAX_LISTED:
        shown.append(f"  ... and {len(names) - _MAX_LISTED} more (see {os.path.join(dump_dir, 'index.md')})")
    return shown


def _is_code_file(name: str) -> bool:
    return name.endswith(".py") and name.startswith(
        ("__transformed_code_", "__compiled_fn_", "full_code_for_")
    )


def _files_to_open(dump_dir: str) -> tuple[list[str], list[str]]:
    """(files whose code runs, code files for reading only), from ``index.json`` when present.

    Without an index (or without the keys telling what runs) every code file counts as running.
    """
    try:
        raw, _ = read_regular(os.path.join(dump_dir, "index.json"), 64 * 1024 * 1024)  # never a FIFO
        return _split_by_index(json.loads(raw))
    except (OSError, ValueError, AttributeError, TypeError, RecursionError):
        names: list[str] = []
        with contextlib.suppress(OSError):
            names = sorted(os.listdir(dump_dir))
        return [n for n in names if _is_code_file(n)], []


def _split_by_index(index: dict[str, Any]) -> tuple[list[str], list[str]]:
    files = [n for n in index.get("files", []) if isinstance(n, str) and _is_code_file(n)]
    runs: set[str] = set()
    read_only: set[str] = set()
    for graph in index.get("graphs", []):
        linked = graph.get("linked_files")
        if linked is None:
            return files, []  # an index that does not say what runs
        runs.update(linked)
        read_only.update(f["file"] for f in graph.get("files", []) if f.get("file") not in linked)
    for function in index.get("functions", []):
        for entry in function.get("cache_entries", []):
            name = entry.get("transformed_code_file")
            if name:
                (runs if entry.get("decompiled") else read_only).add(name)
        if function.get("full_code_file"):
            read_only.add(function["full_code_file"])
    runs_first = [n for n in files if n in runs] + sorted(runs - set(files))
    others = [n for n in files if n not in runs]
    return runs_first, others


def _pause(frame: types.FrameType | None, pause: bool | None) -> bool:
    """Stop once in ``frame`` (the user's ``with`` line) in whatever debugger can answer.

    Returns whether it started a debugger (rather than reusing an attached one or not pausing).
    """
    env = os.environ.get(PAUSE_ENV, "").strip()
    if pause is None and env in ("0", "1"):
        pause = env == "1"
    debugger = _attached_pdb()
    if _debugpy_connected():
        if pause is not False:
            import debugpy

            print("depyf.debug(): pausing in the attached debugpy client.", file=sys.stderr, flush=True)
            debugpy.breakpoint()
        return False
    if debugger is not None:
        if pause is not False:
            # Reuse the running session: a new Pdb would not know its breakpoints.
            _stop_in(debugger, frame)
        return False
    if pause is None:
        pause = _stdin_is_terminal()
        if not pause:
            print(f"depyf.debug(): not pausing: stdin is not a terminal and no debugger is attached "
                  f"(set {PAUSE_ENV}=1 to pause anyway).", file=sys.stderr, flush=True)
    if not pause:
        return False
    if sys.breakpointhook is sys.__breakpointhook__ and not os.environ.get("PYTHONBREAKPOINT"):
        import pdb

        _stop_in(pdb.Pdb(), frame)  # stop on the block's first line in the user's frame, nowhere else
    else:
        breakpoint()  # honour a custom hook (ipdb, PYTHONBREAKPOINT=...)
    return True


def _stop_in(debugger: bdb.Bdb, frame: types.FrameType | None) -> None:
    """Make a running bdb debugger stop at the next line of ``frame``.

    ``Bdb.set_trace`` would stop at the next line anywhere, which is inside bdb itself when the
    debugger is already tracing; this is its body with "step" narrowed to ``frame``.
    """
    if frame is None:
        debugger.set_trace()
        return
    sys.settrace(None)
    debugger.reset()
    outer: types.FrameType | None = frame
    while outer is not None:
        outer.f_trace = debugger.trace_dispatch
        debugger.botframe = outer
        outer = outer.f_back
    debugger._set_stopinfo(frame, None)  # stdlib bdb (3.8+): the "next" command's stop rule
    sys.settrace(debugger.trace_dispatch)


def _attached_pdb() -> bdb.Bdb | None:
    """The bdb-based debugger running this program, if any (``python -m pdb``, an earlier pause).

    A debugger that has no breakpoints stops tracing, so it is found on the stack as well as
    through ``sys.gettrace()``.
    """
    trace = sys.gettrace()
    owner = getattr(trace, "__self__", None)
    if isinstance(owner, bdb.Bdb):
        return owner
    frame = sys._getframe(1)
    while frame is not None:
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, bdb.Bdb):
            return candidate
        frame = frame.f_back
    return None


def _debugpy_connected() -> bool:
    debugpy = sys.modules.get("debugpy")
    if debugpy is None:
        return False
    try:
        return bool(debugpy.is_client_connected())
    except Exception:
        return False


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, AttributeError):
        return False


def _user_frame(frame: types.FrameType | None) -> types.FrameType | None:
    """The first frame from ``frame`` outward that is the user's (not this module, contextlib or
    torch's wrappers)."""
    skip = {__file__, contextlib.__file__}
    while frame is not None and (
        frame.f_code.co_filename in skip
        or os.sep + os.path.join("torch", "_dynamo") + os.sep in frame.f_code.co_filename
    ):
        frame = frame.f_back
    return frame


_hidden_from_dynamo()
