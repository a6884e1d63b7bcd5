"""Names ``depyf.debug()`` uses from the torch adapter (every private torch API lives in
``depyf.torch.adapter``; this module only re-exports them under their historical names)."""

from depyf.torch.adapter import (
    UnsupportedTorchError,
    dynamo_callback_from_stance_patch,
    inductor_loaded_modules,
    run_frame_uncompiled,
    run_outside_dynamo,
    should_compile_frame,
    tag_frame_callback_with_backend,
)
from depyf.torch.adapter import _debug_private as _private  # noqa: F401  (tests probe it)
from depyf.torch.adapter import register_bytecode_hook_remover as register_bytecode_hook

__all__ = [
    "UnsupportedTorchError",
    "dynamo_callback_from_stance_patch",
    "inductor_loaded_modules",
    "register_bytecode_hook",
    "should_compile_frame",
    "run_frame_uncompiled",
    "run_outside_dynamo",
    "tag_frame_callback_with_backend",
]
