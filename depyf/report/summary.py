"""Counts that describe a dump at a glance: what the CLI prints at the end of a run."""

from __future__ import annotations

from dataclasses import dataclass

from depyf.report.manifest import Dump


@dataclass(frozen=True)
class Summary:
    functions: int
    user_functions: int
    resume_functions: int
    cache_entries: int
    graphs: int
    graph_breaks: int
    recompilations: int
    fallbacks: int
    warnings: int
    unavailable: int = 0

    def lines(self, report_path: str | None = None, dump_dir: str | None = None) -> list[str]:
        """The one-screen summary, one fact per line."""
        out = [
            f"functions compiled : {self.functions} ({self.user_functions} user, "
            f"{self.resume_functions} resume)",
            f"cache entries      : {self.cache_entries}",
            f"graphs             : {self.graphs}",
            f"graph breaks       : {self.graph_breaks}",
            f"recompilations     : {self.recompilations}",
        ]
        if self.fallbacks:
            out.append(f"kept as bytecode   : {self.fallbacks} (decompilation failed; see the report)")
        if self.warnings:
            out.append(f"warnings           : {self.warnings}")
        if self.unavailable:
            out.append(f"unavailable        : {self.unavailable} feature(s) on this torch (see the report)")
        if dump_dir:
            out.append(f"dump               : {dump_dir}")
        if report_path:
            out.append(f"report             : {report_path}")
        return out


def summarize(dump: Dump) -> Summary:
    functions = dump.functions
    entries = [e for f in functions for e in f.get("cache_entries") or []]
    return Summary(
        functions=len(functions),
        user_functions=sum(1 for f in functions if f.get("kind", "user") != "resume"),
        resume_functions=sum(1 for f in functions if f.get("kind") == "resume"),
        cache_entries=len(entries),
        graphs=len(dump.graphs),
        graph_breaks=sum(len(f.get("graph_breaks") or []) for f in functions),
        recompilations=sum(len(f.get("recompilations") or []) for f in functions),
        fallbacks=sum(1 for e in entries if e.get("decompiled") is False),
        warnings=len(dump.index.get("warnings") or []),
        unavailable=len(dump.index.get("unavailable") or []),
    )
