"""The HTML page: self-contained, data embedded intact, written where asked, shown in Jupyter."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

from depyf.report import build_report, load_dump, render_html, show

FIXTURE = Path(__file__).parent / "fixtures" / "toy_dump"
DATA_RE = re.compile(r'<script type="application/json" id="depyf-data">(.*?)</script>', re.S)


def embedded_data(page: str) -> dict:
    match = DATA_RE.search(page)
    assert match, "the page has no embedded data block"
    return json.loads(match.group(1))


def test_page_embeds_the_manifest_and_files_unchanged():
    dump = load_dump(FIXTURE)
    data = embedded_data(render_html(dump))
    assert data["index"] == json.loads((FIXTURE / "index.json").read_text())
    assert data["files"] == dump.files


def test_page_loads_nothing_from_the_network():
    page = render_html(load_dump(FIXTURE))
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page and "url(http" not in page
    assert "<link" not in page  # styles are inline


def test_script_end_tags_in_dumped_code_cannot_break_the_page(tmp_path):
    dump_dir = tmp_path / "d"
    shutil.copytree(FIXTURE, dump_dir)
    evil = '# </script><script>alert(1)</script> & <!-- \u2028\n'
    (dump_dir / "__compiled_fn_1.forward.0.py").write_text(evil)
    page = render_html(load_dump(dump_dir))
    assert page.count("</script>") == 2  # the data block and the code block, nothing injected
    assert embedded_data(page)["files"]["__compiled_fn_1.forward.0.py"] == evil


def test_default_output_is_index_html_next_to_the_dump(tmp_path):
    dump_dir = tmp_path / "d"
    shutil.copytree(FIXTURE, dump_dir)
    out = build_report(dump_dir)
    assert out == dump_dir / "index.html"
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_output_can_be_a_file_or_a_directory(tmp_path):
    assert build_report(FIXTURE, tmp_path / "r.html") == tmp_path / "r.html"
    assert build_report(FIXTURE, tmp_path / "sub") == tmp_path / "sub" / "index.html"
    assert (tmp_path / "sub" / "index.html").is_file()


def test_placeholders_are_all_filled():
    page = render_html(load_dump(FIXTURE))
    for placeholder in ("__DEPYF_TITLE__", "__DEPYF_DATA__", "/*__DEPYF_CSS__*/", "/*__DEPYF_JS__*/"):
        assert placeholder not in page


def test_jupyter_view_is_an_iframe_holding_the_whole_page():
    view = show(FIXTURE, height=500)
    shown = view._repr_html_()
    match = re.fullmatch(
        r'<iframe srcdoc="([^"]*)" style="[^"]*height:500px[^"]*" sandbox="[^"]*"></iframe>', shown
    )
    assert match
    page = html.unescape(match.group(1))
    assert embedded_data(page)["index"]["functions"][0]["name"] == "toy_example"


def test_report_and_cli_never_import_torch():
    import subprocess
    import sys

    code = ("import sys, depyf.report, depyf.cli; depyf.cli.build_parser(); "
            "depyf.report.render_html(depyf.report.load_dump(sys.argv[1])); "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    done = subprocess.run([sys.executable, "-c", code, str(FIXTURE)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
