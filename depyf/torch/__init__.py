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


def _bind_in_depyf() -> None:
    """Put the names above in ``depyf``'s own namespace, where its lazy ``__getattr__`` would find
    them: Dynamo 2.2 reads a module's attribute from its ``__dict__`` when it traces
    ``depyf.debug`` in a compiled function (a ``KeyError`` inside Dynamo otherwise)."""
    import depyf

    for name in ("prepare_debug", "debug", "install", "uninstall", "on_compile"):
        setattr(depyf, name, globals()[name])


_bind_in_depyf()
