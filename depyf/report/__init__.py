"""The HTML report of a dump: one static page built from ``index.json``.

``build_report(dump_dir)`` writes ``dump_dir/index.html``; ``show(dump_dir)`` displays it inline
in Jupyter. Nothing here imports torch.
"""

from depyf.report.build import REPORT_NAME, build_report, render_html
from depyf.report.jupyter import ReportView, show
from depyf.report.manifest import Dump, DumpError, load_dump
from depyf.report.summary import Summary, summarize

__all__ = [
    "REPORT_NAME",
    "Dump",
    "DumpError",
    "ReportView",
    "Summary",
    "build_report",
    "load_dump",
    "render_html",
    "show",
    "summarize",
]
