"""``prepare_debug``: dump everything ``torch.compile`` produces inside the ``with`` block."""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Iterator

from depyf.torch import adapter
from depyf.torch.session import DepyfWarning, DumpSession

_active: list[DumpSession] = []
_active_lock = threading.Lock()
_last_dump_dir: str | None = None


def last_dump_dir() -> str | None:
    """The directory the most recent ``prepare_debug`` wrote (this process's subdirectory)."""
    return _last_dump_dir


@contextlib.contextmanager
def prepare_debug(dump_dir: str | os.PathLike[str] = "depyf_debug_dir", clean_wild_fx_code: bool = True,
                  log_bytecode: bool = False) -> Iterator[str]:
    """Dump what ``torch.compile`` does inside the block into ``dump_dir``; yields the directory used.

    Compilations that happen inside the block count, also for functions decorated earlier.
    ``clean_wild_fx_code``: leave out graph modules that no ``__compiled_fn_<n>`` owns.
    ``log_bytecode``: also write original/Dynamo/recompiled bytecode (``dis`` text and marshal).
    Internal failures become ``DepyfWarning``s; the program's results are unchanged.
    Raises ``UnsupportedTorchError`` (before touching anything) on a torch it cannot work with.
    """
    global _last_dump_dir
    adapter.check_supported()
    with _active_lock:
        nested = bool(_active)
    if nested:
        warnings.warn("depyf: prepare_debug is already active; the inner one dumps nothing", DepyfWarning,
                      stacklevel=3)
        yield _active[-1].files.dir
        return
    session = DumpSession(os.fspath(dump_dir), clean_wild_fx_code=clean_wild_fx_code,
                          log_bytecode=log_bytecode)
    with _active_lock:
        _active.append(session)
    try:
        session.start()
        yield session.files.dir
    finally:
        session.stop()
        with _active_lock:
            _active.remove(session)
        try:
            session.finish()
        except Exception as exc:  # noqa: BLE001 - the dump is best effort, the program is not
            warnings.warn(f"depyf: could not finish the dump: {exc!r}", DepyfWarning, stacklevel=3)
        _last_dump_dir = session.files.dir
        _tell_debugger(session.files.dir)


def _tell_debugger(path: str) -> None:
    """Let ``depyf.debug()`` find this dump (its module may not exist yet)."""
    try:
        import importlib

        debug_module = importlib.import_module("depyf.torch.debug")  # the module, not the function
    except Exception:  # noqa: BLE001
        return
    setter = getattr(debug_module, "set_last_dump_dir", None)
    if callable(setter):
        try:
            setter(path)
        except Exception:  # noqa: BLE001
            pass
