"""Issue 18, item 1: a crafted dump runs no script in the report, in Chromium and in Jupyter.

index.json is untrusted input. Three layers are checked: ``depyf report`` refuses values of the
wrong type (a string where a line number goes) with one line naming the field; the page escapes
every value it shows, even values that reached it without passing the loader; and the Jupyter
view's iframe gets no access to the notebook's origin.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from helpers_reliability import TOY_DUMP, run_depyf, stderr_lines

from depyf.report import render_html, show
from depyf.report.manifest import Dump, load_dump

pytest.importorskip("selenium", reason="selenium (PyPI) drives Chromium in these tests")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def payload(tag: str) -> str:
    """Markup that records ``tag`` in ``window.__pwned`` if any part of it is parsed as HTML."""
    record = f"window.__pwned=(window.__pwned||[]).concat(['{tag}'])"
    return (f'<img src=x onerror="{record}"><script>{record}</script>'
            f'"><svg onload="{record}"><img src=x onerror={record.replace(" ", "")}>\'')


def craft_strings(value, path="index"):
    """``value`` with every string that is not a file name replaced by a payload naming its place."""
    if isinstance(value, dict):
        return {k: v if k in {"file", "full_code_file", "transformed_code_file", "format"} or k == "files"
                and path == "index" else craft_strings(v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [craft_strings(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, str):
        return payload(path)
    return value


EVIL_FILE = "\"'><img src=x onerror=window.__pwned=['file-name']>.py"


@pytest.fixture()
def crafted_dump(tmp_path) -> Path:
    """The toy dump with every shown string replaced by markup, and a file whose name is markup."""
    dump = tmp_path / "dump"
    shutil.copytree(TOY_DUMP, dump)
    index = json.loads((dump / "index.json").read_text())
    crafted = craft_strings(index)
    crafted["files"] = index["files"] + [EVIL_FILE]
    (dump / EVIL_FILE).write_text(f"# {payload('file-text')}\nx = '{payload('file-code')}'\n")
    (dump / "index.json").write_text(json.dumps(crafted))
    return dump


def visit_every_route(browser, page: Path) -> list[str]:
    """Open ``page``, then every route its sidebar and pages link to; the routes seen."""
    browser.get(page.as_uri())
    WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#main h1"))
    todo, seen = ["overview", "search/" + "%3Cimg%20src%3Dx"], []
    while todo and len(seen) < 80:
        route = todo.pop(0)
        if route in seen:
            continue
        seen.append(route)
        browser.execute_script("location.hash = arguments[0]", route)
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#main h1"))
        links = browser.execute_script(
            "return Array.from(document.querySelectorAll('[data-route]'))"
            ".map(a => a.getAttribute('data-route'))"
        )
        todo.extend(r for r in links if r not in seen)
    browser.execute_script("location.hash = 'overview'")
    time.sleep(1.0)  # an <img src=x> would fail to load and run its onerror by now
    return seen


def assert_nothing_ran(browser) -> None:
    assert browser.execute_script("return window.__pwned === undefined ? null : window.__pwned") is None
    assert (
        browser.execute_script(
            "return document.querySelectorAll('#main img, #sidebar img, #main svg').length"
        )
        == 0
    )


def test_crafted_strings_are_shown_as_text_and_run_nothing(browser, crafted_dump, screenshot):
    done = run_depyf("report", str(crafted_dump), "-q", cwd=crafted_dump.parent)
    assert done.returncode == 0, done.stderr
    routes = visit_every_route(browser, crafted_dump / "index.html")
    assert {"fn/0", "fn/0/entry/1", f"file/{EVIL_FILE}"} <= set(routes)
    assert any(r.startswith("graph/<img") for r in routes)  # graph names are crafted too
    assert_nothing_ran(browser)
    browser.execute_script("location.hash = arguments[0]", "fn/0")
    main_text = browser.find_element(By.ID, "main").text
    assert "<img src=x onerror=" in main_text  # what the dump holds is what the user reads
    screenshot("reliability-crafted-strings")


def test_values_of_the_wrong_type_are_refused_with_one_line(tmp_path):
    dump = tmp_path / "dump"
    shutil.copytree(TOY_DUMP, dump)
    index = json.loads((dump / "index.json").read_text())
    index["functions"][0]["firstlineno"] = payload("firstlineno")
    (dump / "index.json").write_text(json.dumps(index))
    done = run_depyf("report", str(dump), cwd=tmp_path)
    assert done.returncode == 1
    assert stderr_lines(done) == [
        f"depyf report: {dump / 'index.json'}: not a valid depyf dump: functions[0].firstlineno "
        "must be an integer, not a string ('<img src=x onerror=\"window.__pwned=(win...)"]
    assert not (dump / "index.html").exists()


def test_page_escapes_values_that_did_not_pass_the_loader(browser, tmp_path):
    """Defence in depth: the numbers the issue named, as strings, straight into the page."""
    dump = load_dump(TOY_DUMP)
    index = json.loads(json.dumps(dump.index))
    fn = index["functions"][0]
    fn["firstlineno"] = payload("firstlineno")
    fn["cache_entries"][0]["index"] = payload("entry-index")
    fn["graph_breaks"][0]["lineno"] = payload("break-lineno")
    fn["recompilations"][0]["cache_entry"] = payload("recompile-entry")
    resume = next(f for f in index["functions"] if f.get("resumes"))
    resume["resumes"]["at_line"] = payload("at-line")
    resume["firstlineno"] = payload("resume-firstlineno")
    index["warnings"] = payload("warnings-not-a-list")
    page = tmp_path / "page.html"
    page.write_text(render_html(Dump(root=TOY_DUMP, index=index, files=dump.files)), encoding="utf-8")
    routes = visit_every_route(browser, page)
    assert {"fn/0", "fn/0/entry/1"} <= set(routes)
    assert_nothing_ran(browser)


def test_jupyter_iframe_runs_the_page_without_the_notebook_origin(browser, tmp_path):
    shown = show(TOY_DUMP)._repr_html_()
    tokens = shown.split('sandbox="', 1)[1].split('"', 1)[0].split()
    assert tokens == ["allow-scripts"]  # no allow-same-origin: the page cannot reach the notebook
    host = tmp_path / "notebook.html"
    host.write_text(
        f"<!DOCTYPE html><html><body><h1 id='nb'>notebook</h1>{shown}</body></html>", encoding="utf-8"
    )
    browser.get(host.as_uri())
    frame = browser.find_element(By.TAG_NAME, "iframe")
    browser.switch_to.frame(frame)
    try:
        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#main h1"))
        assert browser.find_element(By.CSS_SELECTOR, "#main h1").text == "Overview"
        reach = browser.execute_script("try { return parent.document.title + '|reachable'; } "
                                       "catch (e) { return e.name; }")
        assert reach == "SecurityError"
    finally:
        browser.switch_to.default_content()


@pytest.mark.parametrize(
    "dir_name", ["__DEPYF_DATA__", "__DEPYF_TITLE__", "x</script><script>window.__pwned=1</script>"]
)
def test_dump_directory_named_like_a_placeholder_or_markup(browser, tmp_path, dir_name):
    dump = tmp_path / dir_name.replace("/", "_")
    shutil.copytree(TOY_DUMP, dump)
    done = run_depyf("report", str(dump), "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    browser.get((dump / "index.html").as_uri())
    WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#main h1"))
    assert browser.find_element(By.CSS_SELECTOR, "#main h1").text == "Overview"
    assert browser.find_element(By.ID, "stats").text.startswith("2 functions · 4 graphs")
    assert browser.find_element(By.ID, "dump-name").text == dump.name
    assert browser.title == "depyf: overview"
    assert_nothing_ran(browser)
