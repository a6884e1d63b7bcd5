"""depyf: see what ``torch.compile`` did to your code.

Importing depyf installs nothing and never imports torch; the torch-facing
names below are loaded on first use.
"""

from __future__ import annotations

from depyf.decompiler import DecompilationError, decompile, recompile

__all__ = [
    "DecompilationError",
    "coverage",
    "debug",
    "decompile",
    "install",
    "on_compile",
    "prepare_debug",
    "recompile",
    "uninstall",
]

__version__ = "0.1.0"

_TORCH_NAMES = {"prepare_debug", "debug", "install", "uninstall", "on_compile"}


def __getattr__(name: str):
    # Lazy: keeps `import depyf` free of torch and of any side effect.
    if name in _TORCH_NAMES:
        import depyf.torch as _torch_api  # binds these names here (see depyf.torch)

        return getattr(_torch_api, name)
    if name == "coverage":
        from depyf.decompiler.coverage import coverage

        return coverage
    if name in {"explain", "optimization"}:
        import importlib

        return importlib.import_module(f"depyf.{name}")
    raise AttributeError(f"module 'depyf' has no attribute {name!r}")
