"""``prepare_debug``: dump everything ``torch.compile`` produces inside the ``with`` block.

One dump per process at a time: torch's hooks are process-wide, so compilations in every thread
go to the active dump. A ``prepare_debug`` entered while another is active (nested, or in another
thread) joins it: it warns, yields the active dump's directory and creates nothing.

Set-up and tear-down hold Ctrl-C until they are done (``depyf.torch.interrupts``), remove each
patch independently, and write ``index.json`` last; a dump directory that cannot be written
costs the dump, with one warning, never the block.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import types
import warnings

from depyf import state
from depyf.torch import adapter
from depyf.torch.interrupts import DumpAbandoned, InterruptShield
from depyf.torch.records import DepyfWarning
from depyf.torch.session import DumpSession

_active: list[DumpSession] = []
_active_lock = threading.Lock()


def prepare_debug(dump_dir: str | os.PathLike[str] = "depyf_debug_dir", clean_wild_fx_code: bool = True,
                  log_bytecode: bool = False) -> PrepareDebug | JoinedRun:
    """Dump what ``torch.compile`` does inside the block into ``dump_dir``; yields the directory used.

    Compilations that happen inside the block count, also for functions decorated earlier.
    ``clean_wild_fx_code``: leave out graph modules that no ``__compiled_fn_<n>`` owns.
    ``log_bytecode``: also write original/Dynamo/recompiled bytecode (``dis`` text and marshal).
    Internal failures become ``DepyfWarning``s; the program's results are unchanged.
    Raises ``UnsupportedTorchError`` (before touching anything) on a torch it cannot work with,
    and ``ValueError`` for an empty ``dump_dir``. Under ``depyf run`` the block joins the run's
    dump (``depyf.state.recording_run``).
    """
    run = state.run_recording()
    if run is not None:
        return JoinedRun(run, dump_dir)
    path = os.fspath(dump_dir)
    if not isinstance(path, str) or not path.strip():
        raise ValueError("prepare_debug: dump_dir is empty; name a directory (\".\" for the current one)")
    return PrepareDebug(path, clean_wild_fx_code=clean_wild_fx_code, log_bytecode=log_bytecode)


class JoinedRun:
    """A ``prepare_debug`` block inside ``depyf run``: the run's dump already covers everything the
    script compiles, so the block only leaves a note saying where its output went."""

    def __init__(self, run: state.RunRecording, requested: object):
        self.run = run
        self.requested = requested

    def __enter__(self) -> str:
        self.run.notes.append(f"the script's prepare_debug({str(self.requested)!r}) was folded into "
                              f"this run's dump at {self.run.dump_dir}")
        return self.run.dump_dir

    def __exit__(self, *exc_info: object) -> None:
        state.record_dump_dir(self.run.dump_dir)  # a later `with depyf.debug():` finds the run's dump


class PrepareDebug:
    """The ``with`` block of ``prepare_debug`` (a class, so that tear-down can be guarded)."""

    def __init__(self, dump_dir: str, *, clean_wild_fx_code: bool, log_bytecode: bool):
        self.dump_dir = dump_dir
        self.options = {"clean_wild_fx_code": clean_wild_fx_code, "log_bytecode": log_bytecode}
        self.session: DumpSession | None = None
        self.shield = InterruptShield(_GUARDED, self._notice)

    def _notice(self) -> str:
        where = self.session.files.dir if self.session else self.dump_dir
        return f"depyf: writing the dump to {where} first; press Ctrl-C again to stop without it"

    def __enter__(self) -> str:
        adapter.check_supported()
        self.shield.install()
        try:
            used = self._start()
        except BaseException:
            self._tear_down()
            self.shield.restore()
            raise
        if self.shield.pending:  # Ctrl-C during set-up: undo it, then stop as asked
            self._tear_down()
            self.shield.restore()
            self.shield.deliver()
        return used

    def _start(self) -> str:
        with _active_lock:  # check and claim at once: two threads cannot both start a dump
            joined = _active[-1] if _active else None
            if joined is None:
                try:
                    session = DumpSession(self.dump_dir, **self.options)
                except OSError as exc:
                    session = None
                    failure = exc
                else:
                    _active.append(session)
        if joined is not None:
            _warn_joined(joined, self.dump_dir)
            return joined.files.dir
        if session is None:
            warnings.warn(f"depyf: cannot dump to {os.path.abspath(self.dump_dir)}: {_describe(failure)}; "
                          "the block runs without a dump", DepyfWarning, stacklevel=3)
            return os.path.abspath(self.dump_dir)
        self.session = session
        session.start()
        return session.files.dir

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: types.TracebackType | None) -> None:
        try:
            self._tear_down()
        finally:
            self.shield.restore()
        if self.shield.pending and not isinstance(exc, KeyboardInterrupt):
            self.shield.deliver()

    def _tear_down(self) -> None:
        """Patches out first (each on its own), then the dump; an interrupt cannot skip a step."""
        session, self.session = self.session, None
        if session is None:
            return
        try:
            session.stop()
        finally:
            with _active_lock:
                if session in _active:
                    _active.remove(session)
        abandoned = False
        self.shield.writing = True
        try:
            session.finish()
        except DumpAbandoned:
            abandoned = True
        except Exception as exc:  # the dump is best effort, the program is not
            warnings.warn(f"depyf: could not finish the dump: {exc!r}", DepyfWarning, stacklevel=3)
        finally:
            self.shield.writing = False
            if abandoned:
                session.files.discard()
            session.files.release()
        if abandoned:
            print(f"depyf: the dump in {session.files.dir} was not written (interrupted)", file=sys.stderr,
                  flush=True)
            self.shield.pending = max(self.shield.pending, 1)
            return
        state.record_dump_dir(session.files.dir)


_GUARDED = {PrepareDebug.__enter__.__code__, PrepareDebug.__exit__.__code__}


def _describe(exc: OSError) -> str:
    if isinstance(exc, (FileExistsError, NotADirectoryError)) and exc.filename:
        return f"{exc.filename} is a file, not a directory"
    return f"{type(exc).__name__}: {exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else "")


def _warn_joined(active: DumpSession, requested: str) -> None:
    here = threading.current_thread()
    if active.thread_id == here.ident:
        message = "prepare_debug is already active; the inner one dumps nothing"
    else:
        message = (f"prepare_debug({requested!r}) in thread {here.name!r}: thread {active.thread_name!r} "
                   f"already dumps to {active.files.dir}; one dump per process, so this thread's "
                   f"compilations go there while that block runs (and into no dump after it ends); "
                   f"{requested!r} is not created")
    warnings.warn(f"depyf: {message}", DepyfWarning, stacklevel=4)


def _after_fork_in_child() -> None:
    """A forked child inherits the hooks: keep it from writing into its parent's dump."""
    global _active_lock
    _active_lock = threading.Lock()  # another thread may have held it at the fork
    for session in list(_active):
        with contextlib.suppress(Exception):
            session.detach_in_child()
    _active.clear()  # the child may start its own dump (it writes pid_<p>/ or rank_<r>/)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
