"""Show the report inline in Jupyter: an iframe whose ``srcdoc`` is the whole page."""

from __future__ import annotations

import html
from pathlib import Path

from depyf.report.build import render_html
from depyf.report.manifest import load_dump


class ReportView:
    """The report of one dump, displayed by Jupyter through ``_repr_html_``."""

    def __init__(self, dump_dir: str | Path, height: int = 720):
        self.dump_dir = Path(dump_dir)
        self.height = height
        self.page = render_html(load_dump(self.dump_dir))

    def _repr_html_(self) -> str:
        # srcdoc keeps the page self-contained. The sandbox allows scripts but not the notebook's
        # origin: the page runs as an opaque origin and cannot reach the notebook, its cookies or
        # its kernel, even if a crafted dump got script into it.
        return (
            f'<iframe srcdoc="{html.escape(self.page, quote=True)}" '
            f'style="width:100%;height:{int(self.height)}px;border:1px solid #ccc;border-radius:4px" '
            'sandbox="allow-scripts"></iframe>'
        )

    def __repr__(self) -> str:
        return f"<depyf report of {self.dump_dir}>"


def show(dump_dir: str | Path, height: int = 720) -> ReportView:
    """The report for ``dump_dir`` as an object Jupyter renders inline (end a cell with it)."""
    return ReportView(dump_dir, height=height)
