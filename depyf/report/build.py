"""Write the report: one self-contained ``index.html`` built from a dump's ``index.json``.

The page carries its data as embedded JSON and its own CSS and JavaScript, so it opens from
the file system (and inside a Jupyter iframe) with no server and nothing fetched from the network.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from importlib import resources
from pathlib import Path

from depyf.fileio import write_atomic
from depyf.report.manifest import Dump, load_dump

REPORT_NAME = "index.html"


def _asset(name: str) -> str:
    return resources.files("depyf.report").joinpath("assets", name).read_text(encoding="utf-8")


def report_data(dump: Dump) -> dict:
    """What the page needs: the manifest untouched plus the text of the files it names."""
    from depyf import __version__

    return {
        "index": dump.index,
        "files": dump.files,
        "meta": {
            "dump_dir": str(dump.root.resolve()),
            "generated_at": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "depyf_version": __version__,
            "truncated": dump.truncated,
            "missing": dump.missing,
            "not_regular": dump.not_regular,
        },
    }


def _embed_json(data: dict) -> str:
    # Inside <script type="application/json"> only "</script" could end the block early; escaping
    # every "<", ">" and "&" keeps the JSON valid and the HTML parser blind to it.
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(dump: Dump) -> str:
    """The complete page for ``dump`` as a string."""
    import html

    title = f"depyf report: {dump.root.resolve().name}"
    values = {
        "__DEPYF_TITLE__": html.escape(title),
        "/*__DEPYF_CSS__*/": _asset("report.css"),
        "/*__DEPYF_JS__*/": _asset("report.js"),
        "__DEPYF_DATA__": _embed_json(report_data(dump)),
    }
    # One pass over the template: a value is never searched for placeholders, so a dump
    # directory named like one (its name is in the title and the data) changes nothing.
    pattern = re.compile("|".join(re.escape(key) for key in values))
    page = _asset("report.html")
    if any(key not in page for key in values):
        raise RuntimeError("report template lost a placeholder")
    return pattern.sub(lambda match: values[match.group(0)], page)


def build_report(dump_dir: str | Path, out: str | Path | None = None) -> Path:
    """Build the report for ``dump_dir`` and return the path of the written HTML file.

    ``out`` may name an ``.html`` file or a directory (the file is then ``out/index.html``);
    by default the report is written next to the dump as ``dump_dir/index.html``.
    """
    dump = load_dump(dump_dir)
    if out is None:
        target = dump.root / REPORT_NAME
    else:
        out = Path(out)
        target = out if out.suffix.lower() in {".html", ".htm"} else out / REPORT_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, render_html(dump))  # never through a link planted at the target
    return target
