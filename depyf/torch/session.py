"""One ``prepare_debug`` session: hooks in, records what Dynamo did, writes the dump at the end."""

from __future__ import annotations

import json
import marshal
import sys
import threading
import types
import warnings
from collections.abc import Callable

from depyf.torch import adapter, index
from depyf.torch.children import count_child_processes
from depyf.torch.files import DumpFiles
from depyf.torch.full_code import EntryView, FunctionView, original_source_of, render_function
from depyf.torch.graphs import GraphDumper
from depyf.torch.guards import GuardClause, clauses_from_leaves
from depyf.torch.names import identifier
from depyf.torch.records import DepyfWarning, EntryRecord, FunctionRecord
from depyf.torch.trace import GRAPH_STAGES, TraceEvent
from depyf.torch.transformed import TransformedCode, dis_listing, safe_decompile, transform

_TRACE_KINDS = set(GRAPH_STAGES) | {"dynamo_graph_break_reason", "recompile_reasons"}
TRACE_FEATURE = "structured trace (joint graph files, recompilation reasons)"
# Where torch has no structured trace (2.2), what the dump reads from it comes from other seams;
# each is its own feature, unavailable only where its seam is missing too.
JOINT_GRAPH_FEATURE = "joint graph files"
RECOMPILE_FEATURE = "recompilation reasons"
TENSOR_GUARDS_FEATURE = "per-tensor guard text (dtype, size, stride)"
GUARD_LINES_FEATURE = "user lines behind guards"


class DumpSession:
    """Hooks into torch while active; ``finish()`` writes full_code files and the index."""

    def __init__(self, dump_dir: str, *, clean_wild_fx_code: bool = True, log_bytecode: bool = False,
                 backend_hint: str | None = None):
        self.files = DumpFiles(dump_dir, adapter.process_rank(), on_failure=self._write_failed,
                               rank_source=adapter.distributed_rank)
        here = threading.current_thread()
        self.thread_id, self.thread_name = here.ident, here.name
        self.children_started = 0
        self.clean_wild_fx_code = clean_wild_fx_code
        self.log_bytecode = log_bytecode
        self.warnings: list[str] = []
        self.unavailable: list[dict[str, str]] = []   # index.json "unavailable": {"feature", "reason"}
        self.functions: dict[types.CodeType, FunctionRecord] = {}
        self.by_run_code: dict[int, EntryRecord] = {}
        self._guards_pending: dict[types.CodeType, FunctionRecord] = {}  # entries with unread guards
        self._name_serials: dict[str, int] = {}
        self._entry_numbers: dict[str, int] = {}
        self.trace_events: dict[str, list[TraceEvent]] = {}
        self.backends: set[str] = set()
        self.graphs = GraphDumper(self.files, self.warn)
        self._recompile_reasons: dict[types.CodeType, list[str]] = {}  # untraced: code -> reasons
        self._undo: list[Callable[[], None]] = []
        self._lock = threading.RLock()
        self.active = False
        self._resume_global_cache: dict[str, object] = {}

    # --- lifecycle --------------------------------------------------------------------------------
    def warn(self, message: str) -> None:
        self.warnings.append(message)
        warnings.warn(f"depyf: {message}", DepyfWarning, stacklevel=2)

    def _write_failed(self, exc: OSError) -> None:
        self.warn(f"could not write the dump in {self.files.dir}: {exc.strerror or exc}; dumping stopped "
                  "there and the incomplete dump is removed (the program runs on unchanged)")

    def mark_unavailable(self, feature: str, reason: str) -> None:
        """Record that this torch cannot provide ``feature``: one warning, one index.json item."""
        if any(item["feature"] == feature for item in self.unavailable):
            return
        self.unavailable.append({"feature": feature, "reason": reason})
        warnings.warn(f"depyf: {feature} unavailable: {reason}; the program runs unchanged", DepyfWarning,
                      stacklevel=2)

    def start(self) -> None:
        self.files.remove_stale()
        self._tell_about_directory()
        self.active = True
        # (feature the dump loses without it, step that installs the seam and returns its undo)
        steps: list[tuple[str, Callable[[], Callable[[], None]]]] = [
            (
                "transformed code and guards",
                lambda: adapter.register_bytecode_hook(self._bytecode_hook).remove,
            ),
            (
                "guards of cache entries Dynamo drops before the next compilation",
                lambda: adapter.patch_guarded_code(self._on_guarded_code),
            ),
            (TRACE_FEATURE, self._attach_trace),
            (
                "captured graph files",
                lambda: adapter.patch_call_user_compiler(self.graphs.around_user_compiler),
            ),
            (
                "forward/backward graph files",
                lambda: adapter.patch_aot_compilers(self.graphs.wrap_aot_compiler),
            ),
            (
                "Inductor output code files",
                lambda: adapter.patch_inductor_module_loader(self.graphs.on_inductor_module),
            ),
            (GUARD_LINES_FEATURE, adapter.keep_guard_user_lines),
            ("compile caches off", self._disable_caches),
            ("child process count", lambda: count_child_processes(self._child_started)),
        ]
        untraced = {stage for stage in ("pre_grad", "post_grad")
                    if not adapter.inductor_traces({k for k, v in GRAPH_STAGES.items() if v == stage})}
        if untraced:
            steps.append((f"{' and '.join(sorted(untraced))} graph files",
                          lambda: adapter.patch_inductor_passes(untraced, self.graphs.on_pass_graph)))
        self._install(steps)
        traced = adapter.has("torch._logging._internal.trace_log")
        if traced and not adapter.dynamo_traces_recompile_reasons():
            # A trace without recompilation reasons (2.3, 2.4): read them as where there is no trace.
            self._install([(RECOMPILE_FEATURE,
                            lambda: adapter.patch_recompile_reasons(self._on_recompile_reasons))])
        if traced and adapter.tensor_guards_only_logged():
            # Python guard functions with a trace (2.3): the per-tensor guard text as on 2.2.
            self._install([(TENSOR_GUARDS_FEATURE, adapter.patch_tensor_guard_text)])
        if not adapter.dynamo_traces_graph_breaks():
            # Graph breaks come from the captured graph's compile reason where the trace has none
            # (no trace at all on 2.2, no graph-break records up to 2.5 at least).
            self.graphs.on_break_reason = self._on_trace

    def _install(self, steps: list[tuple[str, Callable[[], Callable[[], None]]]]) -> None:
        for feature, step in steps:
            try:
                self._undo.append(step())
            except adapter.UnsupportedTorchError as exc:
                self.mark_unavailable(feature, str(exc))
            except Exception as exc:
                self.mark_unavailable(
                    feature, f"torch {adapter.torch_version()}: installing it failed: {exc!r}"
                )

    def _attach_trace(self) -> Callable[[], None]:
        """Listen to the structured trace; where torch has none, read its pieces elsewhere."""
        from depyf.torch import trace

        try:
            return trace.attach(self._on_trace, _TRACE_KINDS)
        except adapter.UnsupportedTorchError:
            pass
        # Graph breaks come from the captured graph's compile reason, the joint graph from
        # AOTAutograd, recompilation reasons from Dynamo's guard-failure check.
        self.graphs.on_break_reason = self._on_trace
        undo_at = len(self._undo)
        self._install([
            (JOINT_GRAPH_FEATURE, lambda: adapter.patch_joint_graph(
                lambda gm: self.graphs.on_pass_graph("joint_graph", gm))),
            (RECOMPILE_FEATURE, lambda: adapter.patch_recompile_reasons(self._on_recompile_reasons)),
            (TENSOR_GUARDS_FEATURE, adapter.patch_tensor_guard_text),
        ])
        installed = self._undo[undo_at:]
        del self._undo[undo_at:]

        def undo() -> None:
            while installed:
                installed.pop()()

        return undo

    def _on_recompile_reasons(self, code: types.CodeType, reasons: list[str]) -> None:
        """Dynamo is about to recompile ``code`` (no structured trace): the reasons wait for the
        compilation's id, which the bytecode hook of that compilation sees."""
        if self.active and reasons:
            with self._lock:
                self._recompile_reasons[code] = reasons

    def _tell_about_directory(self) -> None:
        files = self.files
        if files.foreign:
            shown = ", ".join(files.foreign[:5]) + (
                f" and {len(files.foreign) - 5} more" if len(files.foreign) > 5 else ""
            )
            self.warn(f"{files.requested} holds files depyf did not write ({shown}); they are kept and "
                      f"the dump goes to {files.root}")
        if files.replaced:
            print(f"depyf: replacing the earlier dump in {files.dir} ({len(files.replaced)} files its "
                  "index.json listed); other files there are kept", file=sys.stderr, flush=True)

    def _child_started(self, process: object) -> None:
        self.children_started += 1

    def detach_in_child(self) -> None:
        """In a forked child: dump nothing (the parent owns the directory and writes the index)."""
        self.active = False
        self.graphs.active = False
        self.files.failed = OSError("forked child process")
        self.files.owns_lock = False

    def _disable_caches(self) -> Callable[[], None]:
        ctx = adapter.compile_caches_disabled()
        ctx.__enter__()
        return lambda: ctx.__exit__(None, None, None)

    def stop(self) -> None:
        """Remove every hook and patch (in reverse order), each on its own; nothing of depyf stays in torch.

        An interrupt during one undo does not skip the others; it is raised after the last."""
        self.active = False
        self.graphs.active = False
        interrupted: BaseException | None = None
        while self._undo:
            undo = self._undo.pop()
            try:
                undo()
            except Exception as exc:
                self.warn(f"could not remove a hook cleanly: {exc!r}")
            except BaseException as exc:  # finish undoing first
                interrupted = interrupted or exc
        if interrupted is not None:
            raise interrupted

    # --- hooks --------------------------------------------------------------------------------
    def _on_trace(self, event: TraceEvent) -> None:
        if not self.active:
            return
        with self._lock:
            self.trace_events.setdefault(event.compile_key or "", []).append(event)
        self.graphs.on_trace(event)

    def _function_record(self, code: types.CodeType) -> FunctionRecord:
        record = self.functions.get(code)
        if record is None:
            serial = self._name_serials.get(code.co_name, 0)
            self._name_serials[code.co_name] = serial + 1
            record = FunctionRecord(code, serial)
            self.functions[code] = record
        return record

    def _next_entry_number(self, name: str) -> int:
        n = self._entry_numbers.get(name, 0)
        self._entry_numbers[name] = n + 1
        return n

    def _bytecode_hook(self, code: types.CodeType, dynamo_code: types.CodeType) -> types.CodeType | None:
        if not self.active or self.files.failed is not None:
            return None
        try:
            with self._lock:
                return self._handle_transformed(code, dynamo_code)
        except Exception as exc:  # never break the user's compilation
            self.warn(f"internal error while dumping {code.co_name}: {exc!r}; Dynamo's bytecode runs")
            return None

    def _remember_new_guards(self) -> None:
        """Read the guards of the cache entries made since the last compilation.

        Dynamo adds an entry after the bytecode hook returns, and drops it again when an object its
        guards check by identity is freed (torch 2.2 to 2.5 do so for GPT-2's ``ModelOutput``):
        reading guards only at the end would lose those entries' guards."""
        for record in list(self._guards_pending.values()):
            try:
                entries = adapter.cache_entries(record.code)
            except Exception:  # finish() reads them again and warns
                continue
            for entry in entries:
                ours = self.by_run_code.get(id(entry.code))
                if ours is None or ours.guards_read:
                    continue
                try:
                    leaves = adapter.leaf_guards(entry.guard_manager)
                    ours.clauses = clauses_from_leaves((leaf.kind, leaf.parts) for leaf in leaves)
                except Exception:  # finish() reads them again and warns
                    continue
                ours.guards_read = True
            if all(e.guards_read for e in record.entries):
                del self._guards_pending[record.code]

    def _on_guarded_code(self, code: types.CodeType, guards: object) -> None:
        """Read the guards of the entry Dynamo is about to make for ``code`` (the code that runs),
        while the guard function is sure to be alive (see ``adapter.patch_guarded_code``)."""
        if not self.active:
            return
        with self._lock:
            ours = self.by_run_code.get(id(code))
            if ours is None or ours.guards_read:
                return
            try:
                leaves = adapter.leaf_guards(guards)
                ours.clauses = clauses_from_leaves((leaf.kind, leaf.parts) for leaf in leaves)
            except Exception:  # read again at the next compilation and at the end
                return
            ours.guards_read = True

    def _handle_transformed(self, code: types.CodeType, dynamo_code: types.CodeType) -> types.CodeType | None:
        self._remember_new_guards()
        record = self._function_record(code)
        key = adapter.compile_key()
        if key:
            record.compile_keys.append(key)
        reasons = self._recompile_reasons.pop(code, None)
        if reasons and key:
            self._on_trace(TraceEvent("recompile_reasons", key, json.dumps(reasons)))
        number = self._next_entry_number(code.co_name)
        function_name = f"__transformed_code_{number}_for_{identifier(code.co_name)}"
        relative = f"{function_name}.py"
        result = transform(dynamo_code, function_name, self.files.path(relative))
        self.files.write(relative, result.file_text)
        entry = EntryRecord(number, code.co_name, key, result, relative,
                            self.graphs.graph_names_in(dynamo_code.co_names))
        record.entries.append(entry)
        self._guards_pending[code] = record
        self.by_run_code[id(result.code_to_run)] = entry
        self.by_run_code[id(dynamo_code)] = entry
        if self.log_bytecode:
            self._write_bytecode(function_name, code, dynamo_code, result)
        if not result.decompiled:
            return None
        return result.code_to_run

    def _write_bytecode(self, name: str, original: types.CodeType, dynamo_code: types.CodeType,
                        result: TransformedCode) -> None:
        versions = [("original", original), ("dynamo", dynamo_code)]
        if result.recompiled_code is not None:  # also when verification rejected it
            versions.append(("recompiled", result.recompiled_code))
        for label, code in versions:
            self.files.write(f"bytecode/{name}.{label}.dis.txt", dis_listing(code))
            self.files.write_bytes(f"bytecode/{name}.{label}.marshal", marshal.dumps(code))

    # --- the end --------------------------------------------------------------------------------
    def finish(self) -> None:
        """Write full_code files and the index (after ``stop``: cache entries are complete).

        The index is written last; when the file system refused a write, the dump is removed."""
        self.files.settle()  # init_process_group ran inside the block and nothing was written
        if self.children_started and not self.functions:
            self.warn(f"{self.children_started} child process(es) started inside prepare_debug and nothing "
                      "was compiled in this process: compilations in child processes are not in this dump "
                      "(call depyf.prepare_debug in the child's own code; each process then writes "
                      "pid_<p>/ or rank_<r>/ under the same directory)")
        if self.files.failed is not None:
            self.files.discard()
            return
        views = {}
        for record in list(self.functions.values()):
            try:
                views[record.code] = self._function_view(record)
            except Exception as exc:
                self.warn(f"could not describe {record.name}: {exc!r}")
        children: dict[types.CodeType, list[FunctionRecord]] = {}
        top_level = []
        for record in self.functions.values():
            parent = self._parent_of(record)
            if parent is not None:
                children.setdefault(parent.code, []).append(record)
            else:
                top_level.append(record)

        shown: set[types.CodeType] = set(self.functions)

        def attach(record: FunctionRecord) -> FunctionView | None:
            view = views.get(record.code)
            if view is None:
                return None
            view.resumes = [v for v in (attach(child) for child in children.get(record.code, [])) if v]
            # Resume functions that were never compiled on their own (nested graph breaks pass
            # them through __nested_resume_fns and Dynamo inlines them into a caller's graph).
            for entry in record.entries:
                for code in self.referenced_resume_codes(entry):
                    if code not in shown:
                        shown.add(code)
                        view.resumes.append(_uncompiled_resume_view(code))
            return view

        for record in top_level:
            view = attach(record)
            if view is None:
                continue
            try:
                self.files.write(record.full_code_file, render_function(view))
            except Exception as exc:
                self.warn(f"could not write {record.full_code_file}: {exc!r}")
        index.write_index(self, top_level, children)
        if self.files.failed is not None:
            self.files.discard()

    def referenced_resume_codes(self, entry: EntryRecord) -> list[types.CodeType]:
        """Code of the resume functions (``__resume_at_*`` globals) a transformed code uses."""
        out = []
        for name in entry.result.dynamo_code.co_names:
            if not adapter.is_resume_global(name):
                continue
            code = getattr(self._resume_global(name), "__code__", None)
            if isinstance(code, types.CodeType) and adapter.resume_of(code) and code not in out:
                out.append(code)
        return out

    def _resume_global(self, name: str) -> object:
        """The ``__resume_at_*`` global Dynamo installed in the compiled function's module."""
        if name not in self._resume_global_cache:
            found = None
            for module in list(sys.modules.values()):
                namespace = getattr(module, "__dict__", None)
                if isinstance(namespace, dict) and name in namespace:
                    found = namespace[name]
                    break
            self._resume_global_cache[name] = found
        return self._resume_global_cache[name]

    def _parent_of(self, record: FunctionRecord) -> FunctionRecord | None:
        resume = adapter.resume_of(record.code)
        if resume is None:
            return None
        parent_name = resume.parent
        candidates = [r for r in self.functions.values()
                      if r.name == parent_name and r.code.co_filename == record.code.co_filename
                      and r is not record]
        if not candidates:
            return None
        line = resume.line if resume.line is not None else record.code.co_firstlineno
        # The parent whose source range holds the break line, else the latest one.
        for cand in candidates:
            lines = [ln for _, _, ln in cand.code.co_lines() if ln is not None]
            if lines and min(lines) <= line <= max(lines):
                return cand
        return candidates[-1]

    def cache_entry_views(self, record: FunctionRecord) -> list[tuple[EntryRecord, list[GuardClause]]]:
        """Cache entries of ``record.code`` (as Dynamo checks them) with their guard clauses."""
        out = []
        try:
            entries = adapter.cache_entries(record.code)
        except Exception as exc:
            self.warn(f"could not read cache entries of {record.name}: {exc!r}")
            entries = []
        seen = set()
        for entry in entries:
            if entry.backend:
                self.backends.add(entry.backend)
            ours = self.by_run_code.get(id(entry.code))
            if ours is None:
                # Compiled before prepare_debug started: show it, but it was never swapped.
                number = self._next_entry_number(record.name)
                name = f"__transformed_code_{number}_for_{identifier(record.name)}"
                relative = f"{name}.py"
                result = transform(entry.code, name, self.files.path(relative))
                result.decompiled = False
                result.code_to_run = entry.code
                result.fallback_reason = "compiled before prepare_debug started" + (
                    f"; {result.fallback_reason}" if result.fallback_reason else "")
                self.files.write(relative, result.file_text if result.source is None else
                                 f"# {name}: compiled before prepare_debug, so Dynamo's bytecode runs.\n"
                                 f"# Decompiled for reading:\n{result.source}")
                ours = EntryRecord(number, record.name, entry.compile_key, result, relative,
                                   self.graphs.graph_names_in(entry.code.co_names))
                record.entries.append(ours)
                self.by_run_code[id(entry.code)] = ours
            seen.add(id(ours))
            try:
                leaves = adapter.leaf_guards(entry.guard_manager)
                clauses = clauses_from_leaves((leaf.kind, leaf.parts) for leaf in leaves)
            except Exception as exc:
                self.warn(f"could not read guards of {ours.transformed_name}: {exc!r}")
                clauses = []
            out.append((ours, clauses))
        return out

    def _function_view(self, record: FunctionRecord) -> FunctionView:
        entries = []
        live = self.cache_entry_views(record)
        record.live_entries = [ours for ours, _ in live]
        for ours, clauses in live:
            ours.clauses = clauses
            ours.guards_read = True
        live_ids = {id(ours) for ours in record.live_entries}
        dropped = [ours for ours in record.entries if id(ours) not in live_ids]
        for ours in [*record.live_entries, *dropped]:
            result = ours.result
            entries.append(EntryView(
                guard_name=ours.guard_name, transformed_name=ours.transformed_name,
                transformed_file=ours.file, clauses=ours.clauses, source=result.source,
                runs_decompiled=result.decompiled, fallback_reason=result.fallback_reason,
                dis_text="" if result.source is not None else dis_listing(result.dynamo_code),
                graphs=ours.graphs, cached=id(ours) in live_ids))
        # A resume function is Dynamo-made bytecode: its "source" is what we decompile from it.
        source = safe_decompile(record.code) if record.kind == "resume" else original_source_of(record.code)
        return FunctionView(code=record.code, name=record.name, dispatch_name=record.dispatch_name,
                            kind=record.kind, original_source=source, entries=entries)


def _uncompiled_resume_view(code: types.CodeType) -> FunctionView:
    source = safe_decompile(code)
    note = ("# Never compiled on its own: Dynamo traced it as part of the caller's graph "
            "(nested graph break).\n")
    return FunctionView(
        code=code,
        name=code.co_name,
        dispatch_name=f"__dispatch_for_{identifier(code.co_name)}",
        kind="resume",
        original_source=note + source if source else None,
        entries=[],
    )


def python_version() -> str:
    return ".".join(str(p) for p in sys.version_info[:3])
