"""torch.compile integration: dump (``prepare_debug``), debug (``debug``), log (``install``) and
callbacks (``on_compile``). Importing this module imports torch but installs nothing."""

from __future__ import annotations

from depyf.torch.adapter import UnsupportedTorchError
from depyf.torch.callbacks import CompileEvent, on_compile
from depyf.torch.debug import debug
from depyf.torch.install import install, uninstall
from depyf.torch.prepare import prepare_debug
from depyf.torch.records import DepyfWarning

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
