"""Listen to torch's structured trace (what tlparse reads) while depyf is active.

The structured trace is torch's most stable description of a compilation: graph code per stage,
guards, graph-break reasons and recompilation reasons, each tagged with its compile id. A
logging handler on the trace logger receives them in the compiling thread, synchronously.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from depyf.torch import adapter

# Structured-trace record name (or artifact name) -> dump stage.
GRAPH_STAGES: dict[str, str] = {
    "dynamo_output_graph": "captured_graph",
    "aot_joint_graph": "joint_graph",
    "aot_forward_graph": "forward",
    "aot_inference_graph": "forward",
    "aot_backward_graph": "backward",
    "after_pre_grad_graph": "pre_grad",
    "inductor_post_grad_graph": "post_grad",
    "inductor_output_code": "output_code",
}
GRAPH_STAGES.update(adapter.release_graph_records())  # records named differently before torch 2.13


@dataclass
class TraceEvent:
    """One structured-trace record depyf cares about."""

    kind: str                 # record name, or the artifact name for "artifact" records
    compile_key: str | None
    payload: str
    metadata: dict[str, Any] = field(default_factory=dict)


class TraceListener(logging.Handler):
    """Forward interesting records to ``sink(event)``; never raises into torch."""

    def __init__(self, sink: Callable[[TraceEvent], None], kinds: set[str]):
        super().__init__(level=logging.DEBUG)
        self._sink = sink
        self._kinds = kinds
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._local, "busy", False):
            return
        self._local.busy = True
        try:
            metadata = getattr(record, "metadata", None)
            if not isinstance(metadata, dict):
                return
            kind = None
            for key, value in metadata.items():
                if key == "artifact" and isinstance(value, dict):
                    kind = value.get("name")
                    break
                if key in self._kinds:
                    kind = key
                    break
            if kind not in self._kinds:
                return
            payload = getattr(record, "payload", None)
            inner = metadata.get(kind) if isinstance(metadata.get(kind), dict) else {}
            self._sink(TraceEvent(kind, adapter.record_compile_key(metadata),
                                  payload if isinstance(payload, str) else "", dict(inner)))
        except Exception:  # a listener must never break compilation
            pass
        finally:
            self._local.busy = False


def wanted_by(kinds: set[str]) -> Callable[[str, Any], bool]:
    """Whether a ``trace_structured(name, metadata_fn)`` call makes a record of one of ``kinds``.

    Artifacts carry their name in the metadata, which torch builds with a small lambda."""

    def wanted(name: str, metadata_fn: Any) -> bool:
        if name in kinds:
            return True
        if name != "artifact":
            return False
        metadata = metadata_fn()
        return not isinstance(metadata, dict) or metadata.get("name") in kinds

    return wanted


def attach(sink: Callable[[TraceEvent], None], kinds: set[str]) -> Callable[[], None]:
    """Start listening; returns the function that stops.

    While only depyf listens, torch skips building the records nobody would read."""
    logger = adapter.trace_logger()
    handler = TraceListener(sink, kinds)
    logger.addHandler(handler)
    try:
        unfilter = adapter.skip_unwanted_trace_records(handler, wanted_by(kinds))
    except Exception:  # only a speed-up; the listener works without it
        unfilter = None

    def detach() -> None:
        if unfilter is not None:
            unfilter()
        logger.removeHandler(handler)

    return detach
