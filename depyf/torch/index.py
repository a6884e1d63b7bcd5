"""Write ``index.json`` (the contract in docs/dump-format.md) and ``index.md`` (for people)."""

from __future__ import annotations

import json
import linecache
import os
import re
import sys
from typing import Any

import torch

from depyf.fileio import read_regular
from depyf.torch import adapter
from depyf.torch.files import SHARED_PAGE_MARK, atomic_write, earlier_dump_files
from depyf.torch.full_code import original_source_of
from depyf.torch.records import DumpState, FunctionRecord

_BREAK_AT = re.compile(r"Graph break in user code at (?P<file>.+):(?P<line>\d+)")
_REASON = re.compile(r"Graph Break Reason:\s*(?P<reason>.*)")


def parse_graph_break(payload: str) -> dict[str, Any]:
    """Reason and user location from a ``dynamo_graph_break_reason`` artifact."""
    out: dict[str, Any] = {"reason": "", "filename": None, "lineno": None, "source_line": None}
    match = _BREAK_AT.search(payload)
    if match:
        out["filename"] = match.group("file")
        out["lineno"] = int(match.group("line"))
        out["source_line"] = linecache.getline(out["filename"], out["lineno"]).strip() or None
    lines = payload.splitlines()
    for i, line in enumerate(lines):
        header = _REASON.match(line)
        if not header:
            continue
        rest = [ln.strip() for ln in lines[i + 1:i + 10] if ln.strip()]
        title = header.group("reason").strip()
        if title.startswith("Encountered graph break") and rest:
            title = rest.pop(0)
        explanation = next(
            (ln[len("Explanation:") :].strip() for ln in rest if ln.startswith("Explanation:")), None
        )
        out["reason"] = f"{title}: {explanation}" if explanation else title
        break
    if not out["reason"]:
        out["reason"] = next((ln.strip() for ln in lines if ln.strip()), "")
    return out


def parse_recompile_reasons(payload: str) -> list[str]:
    try:
        value = json.loads(payload)
    except ValueError:
        return [payload.strip()] if payload.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


def _function_json(
    session: DumpState, record: FunctionRecord, parent: FunctionRecord | None
) -> dict[str, Any]:
    cache_entries = []
    resume_names = [r.name for r in session.functions.values() if session._parent_of(r) is record]
    for position, entry in enumerate(_ordered_entries(session, record)):
        cache_entries.append({
            "index": position,
            "guards": [c.expression for c in entry.clauses],
            "guard_details": [{"expression": c.expression, "kind": c.kind, "user_line": c.user_line,
                               "location": c.location, "note": c.note} for c in entry.clauses],
            "guard_function": entry.guard_name,
            "transformed_code_file": entry.file,
            "transformed_name": entry.transformed_name,
            "decompiled": entry.result.decompiled,
            "fallback_reason": entry.result.fallback_reason,
            "graphs": entry.graphs,
            "resume_functions": sorted({c.co_name for c in session.referenced_resume_codes(entry)}
                                       | set(resume_names)),
            "compile_id": entry.compile_key,
        })
    breaks, recompiles = [], []
    for key in dict.fromkeys(record.compile_keys):
        for event in session.trace_events.get(key, []):
            if event.kind == "dynamo_graph_break_reason":
                item = parse_graph_break(event.payload)
                if item not in breaks:
                    breaks.append(item)
            elif event.kind == "recompile_reasons":
                index = next((i for i, e in enumerate(cache_entries) if e["compile_id"] == key), None)
                for reason in parse_recompile_reasons(event.payload):
                    recompiles.append({"reason": reason, "cache_entry": index, "compile_id": key})
    resumes = None
    if parent is not None:
        resume = adapter.resume_of(record.code)
        resumes = {"parent": parent.name, "at_line": resume.line if resume else None}
    code = record.code
    return {
        "name": record.name,
        "qualname": getattr(code, "co_qualname", code.co_name),
        "filename": code.co_filename,
        "firstlineno": code.co_firstlineno,
        "kind": record.kind,
        "resumes": resumes,
        "full_code_file": (parent_file(session, record)),
        "source": None if record.kind == "resume" else original_source_of(code),
        "cache_entries": cache_entries,
        "graph_breaks": breaks,
        "recompilations": recompiles,
    }


def parent_file(session: DumpState, record: FunctionRecord) -> str:
    """The full_code file that shows ``record`` (a resume function lives in its parent's file)."""
    seen = set()
    current = record
    while True:
        parent = session._parent_of(current)
        if parent is None or parent.code in seen:
            return current.full_code_file
        seen.add(parent.code)
        current = parent


def _ordered_entries(session: DumpState, record: FunctionRecord) -> list[Any]:
    """Entries in the order Dynamo checks them, those no longer cached last."""
    live = list(record.live_entries)
    rest = [e for e in record.entries if e not in live]
    return live + rest


def write_index(session: DumpState, top_level: list[FunctionRecord],
                children: dict[Any, list[FunctionRecord]]) -> None:
    files = session.files
    functions = []
    order: list[tuple[FunctionRecord, FunctionRecord | None]] = []

    def visit(record: FunctionRecord, parent: FunctionRecord | None) -> None:
        order.append((record, parent))
        for child in children.get(record.code, []):
            visit(child, record)

    for record in top_level:
        visit(record, None)
    for record, parent in order:
        try:
            functions.append(_function_json(session, record, parent))
        except Exception as exc:
            session.warn(f"could not index {record.name}: {exc!r}")
    graphs = []
    owner_of = {}
    for item in functions:
        for entry in item["cache_entries"]:
            for graph in entry["graphs"]:
                owner_of.setdefault(graph, item["name"])
    for name, graph in session.graphs.graphs.items():
        if name not in owner_of and session.clean_wild_fx_code:
            # "Wild" graph: compiled, but no transformed code calls it (e.g. the compilation
            # restarted). Its files are removed unless clean_wild_fx_code=False.
            for item in graph.files:
                files.remove(item["file"])
            continue
        graphs.append({"name": name, "global_name": graph.global_name, "function": owner_of.get(name),
                       "compile_id": graph.compile_key, "files": graph.files, "linked_files": graph.linked,
                       "not_linked": graph.not_linked})
    written = [f for f in files.written if not f.startswith("index.")]
    data = {
        "format": "depyf-dump",
        "version": 1,
        "torch_version": torch.__version__.split("+")[0],
        "python_version": ".".join(str(p) for p in sys.version_info[:3]),
        # cache entries name their backend from 2.6; before, the captured graphs' backend is used
        "backend": ", ".join(sorted(session.backends or session.graphs.backends)) or None,
        "process": {"subdir": files.subdir, "pid": os.getpid()},
        "functions": functions,
        "graphs": graphs,
        "files": ["index.md", "index.json", *written],
        "warnings": list(session.warnings),
        "unavailable": list(session.unavailable),
    }
    # index.json last: a directory with an index.json holds a complete dump.
    files.write("index.md", render_markdown(data, files.process_dirs() if files.subdir is None else []))
    files.write("index.json", json.dumps(data, indent=2, default=str) + "\n")
    if files.subdir is not None and files.failed is None:
        _link_from_root(files)


def render_markdown(data: dict[str, Any], process_dirs: list[str]) -> str:
    out = [f"# depyf dump (torch {data['torch_version']}, Python {data['python_version']}, "
           f"backend {data['backend']})\n"]
    if process_dirs:
        out.append("## Other processes\n")
        out += [f"- [{d}]({d}/index.md)" for d in process_dirs]
        out.append("")
    out.append("## Compiled functions\n")
    for fn in data["functions"]:
        label = fn["name"] + (f" (resumes {fn['resumes']['parent']} at line {fn['resumes']['at_line']})"
                              if fn["resumes"] else "")
        out.append(f"### {label}\n")
        out.append(f"- defined at `{fn['filename']}:{fn['firstlineno']}`")
        out.append(f"- everything in one file: [{fn['full_code_file']}]({fn['full_code_file']})")
        for entry in fn["cache_entries"]:
            status = "decompiled code runs" if entry["decompiled"] else \
                f"Dynamo's bytecode runs ({entry['fallback_reason']})"
            graphs = ", ".join(entry["graphs"]) or "no graph"
            out.append(f"- cache entry {entry['index']}: [{entry['transformed_code_file']}]"
                       f"({entry['transformed_code_file']}), {len(entry['guards'])} guard clauses, "
                       f"calls {graphs}; {status}")
        for brk in fn["graph_breaks"]:
            where = f"`{brk['filename']}:{brk['lineno']}`" if brk["filename"] else "unknown location"
            line = f" `{brk['source_line']}`" if brk["source_line"] else ""
            out.append(f"- graph break at {where}{line}: {brk['reason']}")
        for rec in fn["recompilations"]:
            out.append(f"- recompiled (cache entry {rec['cache_entry']}) because: {rec['reason']}")
        out.append("")
    out.append("## Graphs\n")
    for graph in data["graphs"]:
        files = ", ".join(f"[{f['stage']}]({f['file']})" for f in graph["files"])
        out.append(f"- {graph['name']} (from {graph['function']}): {files}")
        for file, reason in graph.get("not_linked", {}).items():
            out.append(f"  - {file} is for reading only (the graph runs from torch's code): {reason}")
    if data["unavailable"]:
        out.append(f"\n## Unavailable on torch {data['torch_version']}\n")
        out += [f"- {item['feature']}: {item['reason']}" for item in data["unavailable"]]
    if data["warnings"]:
        out.append("\n## Warnings\n")
        out += [f"- {w}" for w in data["warnings"]]
    out.append("\n## All files\n")
    out += [f"- [{f}]({f})" for f in data["files"]]
    return "\n".join(out) + "\n"


def _link_from_root(files: Any) -> None:
    """Make sure the shared directory's index.md links this process's directory.

    A root index.md that is neither the owner's dump page nor depyf's shared page is left alone."""
    root_index = os.path.join(files.root, "index.md")
    line = f"- [{files.subdir}]({files.subdir}/index.md)"
    header = f"# depyf dump\n{SHARED_PAGE_MARK}\n\n## Processes\n\n"
    try:
        existing = ""
        if os.path.lexists(root_index):
            if os.path.islink(root_index) or not os.path.isfile(root_index):
                return
            existing = read_regular(root_index, 1 << 20)[0].decode("utf-8", errors="replace")
            if SHARED_PAGE_MARK not in existing and "index.md" not in earlier_dump_files(files.root):
                return  # not a page depyf wrote
        if files.subdir.startswith("rank_") and (not existing or SHARED_PAGE_MARK in existing):
            # Ranks share the root page: each rewrites it from the directories present, so the
            # last one to finish lists every rank.
            text = header + "".join(f"- [{d}]({d}/index.md)\n" for d in files.process_dirs())
        elif line in existing:
            return
        elif not existing:
            text = f"{header}{line}\n"
        else:
            heading = (
                ""
                if ("## Processes" in existing or "## Other processes" in existing)
                else "\n## Processes\n\n"
            )
            text = existing.rstrip("\n") + "\n" + heading + line + "\n"
        atomic_write(root_index, text)
    except OSError:
        pass
