"""``install()``/``uninstall()``: show decompiled source next to ``TORCH_LOGS=+bytecode`` logs."""

from __future__ import annotations

import logging
import threading
import types
from typing import Any

from depyf.torch import adapter
from depyf.torch.transformed import safe_decompile

_handle: Any = None
_lock = threading.Lock()


def _log_source(code: types.CodeType, new_code: types.CodeType) -> None:
    try:
        log = adapter.bytecode_logger()
        if not log.isEnabledFor(logging.DEBUG):
            return None
        source = safe_decompile(new_code)
        if source is None:
            source = "# depyf could not decompile this code; the bytecode listing above is what runs\n"
        log.debug("possible source code of the modified bytecode for %s (decompiled by depyf):\n%s",
                  code.co_name, source)
    except Exception:  # logging must never break compilation
        pass
    return None


def install() -> None:
    """After each Dynamo ``MODIFIED BYTECODE`` log (``TORCH_LOGS=+bytecode``), log its decompiled source.

    Idempotent; costs nothing unless bytecode logging is on. ``uninstall()`` removes it.
    """
    global _handle
    adapter.check_supported()
    with _lock:
        if _handle is None:
            _handle = adapter.register_bytecode_hook(_log_source)


def uninstall() -> None:
    """Undo ``install()`` (no-op when not installed)."""
    global _handle
    with _lock:
        if _handle is not None:
            _handle.remove()
            _handle = None


def is_installed() -> bool:
    return _handle is not None
