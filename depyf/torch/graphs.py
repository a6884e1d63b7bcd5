"""Write ``__compiled_fn_<n>.<stage>.<k>.py`` files and make the running graphs come from them.

Graph modules we can reach (Dynamo's captured graph, AOTAutograd's forward/backward/inference
graphs, Inductor's output module) are handed to ``depyf.torch.linking`` so the file we write is
the code that runs (breakpoints hit). Stages we only see as text (joint graph, pre/post-grad
graphs) are written from the structured trace.
"""

from __future__ import annotations

import ast
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from depyf.fileio import NotRegularFile, read_regular
from depyf.torch import adapter
from depyf.torch.files import DumpFiles, DumpWriteError
from depyf.torch.linking import link_graph_module, link_inductor_output
from depyf.torch.trace import GRAPH_STAGES, TraceEvent


@dataclass
class GraphRecord:
    """What the dump knows about one graph."""

    name: str                       # short name, e.g. __compiled_fn_1
    global_name: str                # the global the transformed code calls
    compile_key: str | None
    files: list[dict[str, str]] = field(default_factory=list)  # {"stage", "file"}
    linked: list[str] = field(default_factory=list)           # files that run (breakpoints hit)
    not_linked: dict[str, str] = field(default_factory=dict)  # file -> why it is for reading only


class GraphDumper:
    """Collects graph files for one ``prepare_debug`` session."""

    def __init__(self, files: DumpFiles, warn: Callable[[str], None]):
        self.files = files
        self.warn = warn
        self.graphs: dict[str, GraphRecord] = {}          # short name -> record
        self.by_compile: dict[str, list[str]] = {}       # compile key -> short names
        self._local = threading.local()
        self._pending: dict[tuple[str, str], list[str]] = {}  # (graph, stage) -> files from the trace
        self._counts: dict[tuple[str, str], int] = {}
        self.active = True
        self.captured_via_gm = False
        self.backends: set[str] = set()    # backends the captured graphs went to
        # Set where the structured trace is unavailable: graph breaks then come from the graph module.
        self.on_break_reason: Callable[[TraceEvent], None] | None = None

    # --- naming ---------------------------------------------------------------------------------
    def _current(self, compile_key: str | None = None) -> str | None:
        stack = getattr(self._local, "stack", None)
        if stack:
            return stack[-1]
        key = compile_key if compile_key is not None else adapter.compile_key()
        names = self.by_compile.get(key or "", [])
        return names[-1] if names else None

    def _push(self, name: str) -> None:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        self._local.stack.append(name)

    def _pop(self) -> None:
        self._local.stack.pop()

    def _record(self, global_name: str, compile_key: str | None) -> GraphRecord:
        name = adapter.short_graph_name(global_name)
        record = self.graphs.get(name)
        if record is None:
            record = GraphRecord(name, global_name, compile_key)
            self.graphs[name] = record
            self.by_compile.setdefault(compile_key or "", []).append(name)
        return record

    def _new_path(self, graph: str, stage: str) -> str:
        k = self._counts.get((graph, stage), 0)
        self._counts[(graph, stage)] = k + 1
        relative = f"{graph}.{stage}.{k}.py"
        self.graphs[graph].files.append({"stage": stage, "file": relative})
        return relative

    # --- graph modules ----------------------------------------------------------------------------
    def around_user_compiler(self, call: Callable[[Any, list[Any]], Any], gm: Any, inputs: list[Any]) -> Any:
        """Dynamo calls the backend through here; the captured graph is dumped and linked after the
        backend returns (a backend may regenerate ``forward``, which would undo the link)."""
        if not self.active:
            return call(gm, inputs)
        name = None
        try:
            global_name = adapter.graph_backend_id(gm)
            if global_name:
                name = self._record(global_name, adapter.compile_key()).name
                self.captured_via_gm = True
        except Exception as exc:
            self.warn(f"could not name the captured graph: {exc!r}")
        if self.on_break_reason is not None:
            self._report_graph_break(gm)
        backend = adapter.compile_backend_name(adapter.compile_key())
        if backend:
            self.backends.add(backend)
        if name is None:
            return call(gm, inputs)
        self._push(name)
        try:
            compiled = call(gm, inputs)
        finally:
            self._pop()
        self._dump_graph_module(name, "captured_graph", gm)
        return compiled

    def _report_graph_break(self, gm: Any) -> None:
        """Hand the graph break that ended ``gm`` on as the structured trace would have."""
        try:
            brk = adapter.graph_break_of(gm)
            if brk is None or self.on_break_reason is None:
                return
            where = f"Graph break in user code at {brk.filename}:{brk.lineno}\n" if brk.filename else ""
            self.on_break_reason(TraceEvent("dynamo_graph_break_reason", adapter.compile_key(),
                                            f"{where}Graph Break Reason: {brk.reason}\n"))
        except Exception as exc:
            self.warn(f"could not read the graph break reason: {exc!r}")

    def wrap_aot_compiler(self, stage: str, compiler: Callable[..., Any]) -> Callable[..., Any]:
        """Wrap an AOTAutograd compiler so its graph module is dumped and linked before compiling."""
        owner = self._current()
        dump_stage = "forward" if stage == "inference" else stage

        def compile_with_dump(gm: Any, example_inputs: Any, *args: Any, **kwargs: Any) -> Any:
            name = owner or self._current()
            if not self.active or name is None or name not in self.graphs:
                return compiler(gm, example_inputs, *args, **kwargs)
            self._push(name)
            try:
                compiled = compiler(gm, example_inputs, *args, **kwargs)
            finally:
                self._pop()
            interpreted = adapter.graph_runs_interpreted(compiled)
            self._dump_graph_module(name, dump_stage, gm, reading_only=(
                "this torch's compiler runs the graph through torch.fx.Interpreter, not its forward code"
                if interpreted else None))
            return compiled

        for attr in ("__name__", "__qualname__"):
            try:
                setattr(compile_with_dump, attr, getattr(compiler, attr))
            except (AttributeError, TypeError):
                pass
        return compile_with_dump

    def on_inductor_module(self, module: Any, path: str) -> None:
        """Inductor loaded generated Python: if it is a graph's output code, make it run from the dump."""
        if not self.active or self.files.failed is not None or not callable(getattr(module, "call", None)):
            return
        name = self._current()
        if name is None or name not in self.graphs:
            return
        try:
            relative = self._take_pending(name, "output_code")
            target = self.files.path(relative)
            self._record_link(name, relative, link_inductor_output(module, target))
            if self._keep_if_valid(relative):
                return
            if not os.path.exists(target):
                with open(path, encoding="utf-8") as src:
                    self.files.write(relative, parseable_text(src.read()))
        except DumpWriteError as exc:
            self.files.fail(exc)
        except Exception as exc:
            self.warn(f"could not dump Inductor output code of {name}: {exc!r}")

    def _record_link(self, name: str, relative: str, reason: str | None) -> None:
        """Whether the file runs as the graph's code: listed as linked, or not, with why."""
        if reason is None:
            self.graphs[name].linked.append(relative)
        else:
            self.graphs[name].not_linked[relative] = reason

    def _keep_if_valid(self, relative: str) -> bool:
        """Keep a file someone else wrote if it is valid Python; else repair it (False if absent)."""
        target = self.files.path(relative)
        if not os.path.exists(target):
            return False
        try:
            text = read_regular(target, 64 * 1024 * 1024)[0].decode("utf-8", errors="replace")
        except NotRegularFile:  # a FIFO or device planted at the name: replaced, never read
            return False
        fixed = parseable_text(text)
        if fixed != text:
            self.files.write(relative, fixed)
        self.files.note_written(relative)
        return True

    def _take_pending(self, name: str, stage: str) -> str:
        pending = self._pending.get((name, stage))
        if pending:
            return pending.pop(0)
        return self._new_path(name, stage)

    def _dump_graph_module(self, name: str, stage: str, gm: Any, reading_only: str | None = None) -> None:
        """Write ``gm`` as this stage's file and make it run from there; never raises.
        ``reading_only``: why the file cannot be what runs even when linked."""
        if self.files.failed is not None:
            return
        try:
            relative = self._take_pending(name, stage)
            target = self.files.path(relative)
            reason = link_graph_module(gm, target, title=f"{name} {stage}")
            self._record_link(name, relative, reason if reason is not None else reading_only)
            if self._keep_if_valid(relative):
                return
            self.files.write(relative, parseable_text(readable_graph_source(gm)))
        except DumpWriteError as exc:
            self.files.fail(exc)
        except Exception as exc:
            self.warn(f"could not dump the {stage} graph of {name}: {exc!r}")

    def on_pass_graph(self, stage: str, gm: Any) -> None:
        """A graph the trace does not report on this torch, for reading: after Inductor's
        pre-/post-grad passes, or AOTAutograd's joint graph (no structured trace, 2.2)."""
        name = self._current()
        if not self.active or name is None or name not in self.graphs:
            return
        try:
            self.files.write(self._new_path(name, stage), parseable_text(readable_graph_source(gm)))
        except Exception as exc:
            self.warn(f"could not dump the {stage} graph of {name}: {exc!r}")

    # --- text from the structured trace ---------------------------------------------------------
    def on_trace(self, event: TraceEvent) -> None:
        stage = GRAPH_STAGES.get(event.kind)
        if stage is None or not self.active or not event.payload:
            return
        if stage == "captured_graph" and self.captured_via_gm:
            return
        name = self._current(event.compile_key)
        if name is None:
            return
        relative = self._new_path(name, stage)
        self.files.write(relative, parseable_text(event.payload))
        if stage in ("forward", "backward", "output_code"):
            # The graph module (or module) arrives later; it is linked into this same file.
            self._pending.setdefault((name, stage), []).append(relative)

    def graph_names_in(self, code_names: tuple[str, ...]) -> list[str]:
        """Short names of graphs a transformed code calls (in order of first use)."""
        out = []
        for global_name in code_names:
            if adapter.is_graph_global(global_name):
                short = adapter.short_graph_name(global_name)
                if short not in out:
                    out.append(short)
        return out


def parseable_text(text: str) -> str:
    """``text`` made valid Python: graph classes torch names ``<lambda>`` get a real name, and text
    that still does not parse is kept as comments."""
    text = text if text.endswith("\n") else text + "\n"
    candidates = [text, re.sub(r"^(\s*)class <[^>]*>\(", r"\1class GraphModule(", text, flags=re.M)]
    for candidate in candidates:
        try:
            ast.parse(candidate)
        except SyntaxError:
            continue
        return candidate
    body = "".join(f"# {line}" if line.strip() else "#\n" for line in text.splitlines(keepends=True))
    return "# depyf: torch printed this as text that is not valid Python; kept as comments.\n" + body


def readable_graph_source(gm: Any) -> str:
    """A graph module's code with shapes, as torch prints it (written when linking left no valid file)."""
    try:
        text = gm.print_readable(print_output=False, include_stride=True, include_device=True)
    except TypeError:  # torch 2.2's print_readable has no stride or device option
        try:
            text = gm.print_readable(print_output=False)
        except Exception:
            text = getattr(gm, "code", repr(gm))
    except Exception:
        text = getattr(gm, "code", repr(gm))
    return text if text.endswith("\n") else text + "\n"
