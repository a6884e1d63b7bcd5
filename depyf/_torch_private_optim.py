"""Names ``depyf.optimization`` uses from the torch adapter (every private torch API lives in
``depyf.torch.adapter``; this module only re-exports them under their historical names)."""

from depyf.torch.adapter import (
    TorchInternalsChanged,
    cache_entry_for,
    compile_mark,
    compiling_frame_locals,
    current_compile_id,
    entry_guards,
    failed_guards,
    lean_profiler_hooks,
    resume_of,
    run_only_eval_frame,
    set_eval_frame,
)
from depyf.torch.adapter import dispatch_cache_entries as cache_entries
from depyf.torch.adapter import dispatch_register_bytecode_hook as register_bytecode_hook

__all__ = [
    "TorchInternalsChanged",
    "cache_entries",
    "cache_entry_for",
    "compile_mark",
    "compiling_frame_locals",
    "current_compile_id",
    "entry_guards",
    "failed_guards",
    "lean_profiler_hooks",
    "register_bytecode_hook",
    "resume_of",
    "run_only_eval_frame",
    "set_eval_frame",
]
