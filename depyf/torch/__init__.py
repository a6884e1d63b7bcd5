"""torch.compile integration: dump (``prepare_debug``), debug (``debug``), log (``install``) and
callbacks (``on_compile``). Importing this module imports torch but installs nothing."""

from __future__ import annotations

from typing import Any

from depyf.torch.adapter import UnsupportedTorchError
from depyf.torch.callbacks import CompileEvent, on_compile
from depyf.torch.install import install, uninstall
from depyf.torch.prepare import prepare_debug
from depyf.torch.session import DepyfWarning

__all__ = [
    "CompileEvent",
    "DepyfWarning",
    "UnsupportedTorchError",
    "debug",
    "install",
    "on_compile",
    "prepare_debug",
    "uninstall",
]


def debug(*args: Any, **kwargs: Any) -> Any:
    """Run compiled code from the dumped files with breakpoints working (see ``depyf.torch.debug``)."""
    try:
        from depyf.torch.debug import debug as _debug
    except ImportError as exc:
        raise ImportError(
            "depyf.debug() is not available in this build: the module depyf.torch.debug is missing "
            f"({exc}). The dump written by prepare_debug can still be read."
        ) from exc
    return _debug(*args, **kwargs)
