"""The report in a real browser: click from a function to its kernel, and check what is on screen."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from depyf.report import build_report, show

FIXTURE = Path(__file__).parent / "fixtures" / "toy_dump"

pytest.importorskip("selenium", reason="selenium (PyPI) drives Chromium in these tests")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    dump_dir = tmp_path_factory.mktemp("report") / "toy_dump"
    shutil.copytree(FIXTURE, dump_dir)
    return build_report(dump_dir)


def open_report(browser, page: Path, route: str = "") -> None:
    browser.get_log("browser")  # forget earlier pages' messages; this page's load errors stay
    browser.get(page.as_uri() + (f"#{route}" if route else ""))
    WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#main h1"))


def heading(browser) -> str:
    return browser.find_element(By.CSS_SELECTOR, "#main h1").text


def click(browser, css: str) -> None:
    element = browser.find_element(By.CSS_SELECTOR, css)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def assert_no_js_errors(browser) -> None:
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_click_from_function_to_kernel(browser, report, screenshot):
    open_report(browser, report)
    assert heading(browser) == "Overview"
    click(browser, '#sidebar a.nav-item[data-route="fn/0"]')
    assert heading(browser) == "toy_example"

    # the graph break: reason, and the user's line highlighted in the original source
    brk = browser.find_element(By.CSS_SELECTOR, "#main .graph-break")
    assert "data dependent control flow" in brk.text
    marked = brk.find_elements(By.CSS_SELECTOR, ".ln.hl")
    assert [m.text.split(None, 1) for m in marked] == [["5", "if b.sum() < 0:"]]

    # original and transformed code side by side
    original = browser.find_element(By.CSS_SELECTOR, ".split .pane.original")
    transformed = browser.find_element(By.CSS_SELECTOR, ".split .pane.transformed")
    assert "def toy_example(a, b):" in original.text
    assert "__compiled_fn_1_5f0c9e2a_7d41_4b8e_a6b3_2c9d0e1f4a57(a, b)" in transformed.text
    assert transformed.location["x"] > original.location["x"] + original.size["width"] / 2
    assert transformed.location["y"] == original.location["y"]
    screenshot("function_toy_example")
    guards = browser.find_elements(By.CSS_SELECTOR, "#main ul.guards li")
    assert (
        "toy_example.py:5 in toy_example: if b.sum() < 0:" in guards[3].text
    )  # which user line a guard protects
    assert "TENSOR_MATCH" in guards[3].text

    click(browser, '#transformed-code a.ref[data-route="graph/__compiled_fn_1"]')
    assert heading(browser) == "__compiled_fn_1"
    tabs = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#main .tabs .tab")]
    assert tabs == ["captured graph", "forward", "kernel ●"]  # the dot: the running code comes from it
    click(browser, '#main .tabs .tab[data-stage="kernel"]')
    code = browser.find_element(By.CSS_SELECTOR, "#stage-code")
    assert code.is_displayed()
    assert "cpp_fused_abs_add_div_lt_sum_0" in code.text
    assert browser.find_element(By.CSS_SELECTOR, "#main .tabs .tab.active").text.startswith("kernel")
    sub = browser.find_element(By.CSS_SELECTOR, "#main .sub").text
    assert "called from toy_example (cache entry 0)" in sub and "compile 0/0" in sub
    screenshot("graph_kernel")
    assert_no_js_errors(browser)


def test_recompilation_shows_the_failing_guard(browser, report, screenshot):
    open_report(browser, report, "fn/0/entry/1")
    assert heading(browser) == "toy_example"
    assert browser.find_element(By.CSS_SELECTOR, "#main .tabs .tab.active").text == "entry 1"
    text = browser.find_element(By.ID, "main").text
    assert "Compiled because this guard of an earlier entry failed" in text
    assert "tensor 'L['a']' size mismatch at index 0. expected 10, actual 8" in text
    assert "L['b'].size()[0] == L['a'].size()[0]" in text  # this entry's own guards
    click(browser, '#sidebar a.nav-item[data-route="overview"]')
    recompilations = browser.find_elements(By.CSS_SELECTOR, "#main .recompilation")
    assert len(recompilations) == 2
    cards = {c.find_element(By.CSS_SELECTOR, ".lbl").text: c.find_element(By.CSS_SELECTOR, ".num").text
             for c in browser.find_elements(By.CSS_SELECTOR, "#main .card")}
    assert (
        cards["functions compiled"] == "2" and cards["graph breaks"] == "1" and cards["recompilations"] == "2"
    )
    screenshot("overview")
    assert_no_js_errors(browser)


def test_resume_function_links_and_bytecode_fallback(browser, report):
    open_report(browser, report, "fn/0")
    click(browser, '#main .chips a[data-route="fn/1"]')
    assert heading(browser) == "torch_dynamo_resume_in_toy_example_at_5"
    assert "resumes toy_example after line 5" in browser.find_element(By.CSS_SELECTOR, "#main .sub").text
    # no source of its own: the parent's source with the resume line highlighted
    assert [
        m.text.split(None, 1) for m in browser.find_elements(By.CSS_SELECTOR, ".pane.original .ln.hl")
    ] == [["5", "if b.sum() < 0:"]]
    click(browser, '#main .tabs a[data-route="fn/1/entry/1"]')
    text = browser.find_element(By.ID, "main").text
    assert "Kept as Dynamo bytecode" in text and "JUMP_BACKWARD" in text
    # the graph's global (with torch's unique suffix) in the kept bytecode's listing links to the graph
    ref = browser.find_element(
        By.CSS_SELECTOR, '#transformed-code a.ref[data-route="graph/__compiled_fn_13"]'
    )
    assert ref.text == "__compiled_fn_13_8d3c0e1a_2b4f_4c1e_9a7d_0f5e6b7c8d9e"
    click(browser, '#transformed-code a.ref[data-route="graph/__compiled_fn_13"]')
    assert heading(browser) == "__compiled_fn_13"
    assert_no_js_errors(browser)


def test_keyboard_and_search(browser, report, screenshot):
    open_report(browser, report)
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("j")
    assert heading(browser) == "toy_example"
    body.send_keys("n")
    assert browser.find_element(By.CSS_SELECTOR, "#main .tabs .tab.active").text == "entry 1"
    body.send_keys("s")
    assert "stacked" in browser.find_element(By.CSS_SELECTOR, "#main .split").get_attribute("class")
    body.send_keys("s")
    body.send_keys("?")
    help_box = browser.find_element(By.ID, "help")
    assert help_box.is_displayed() and "next item in the tree" in help_box.text
    body.send_keys(Keys.ESCAPE)
    assert not help_box.is_displayed()
    body.send_keys("/")
    search = browser.switch_to.active_element
    assert search.get_attribute("id") == "search"
    search.send_keys("fn_7")  # the tree filters as you type
    visible = [
        a.get_attribute("data-route")
        for a in browser.find_elements(By.CSS_SELECTOR, "#sidebar .nav-item")
        if a.is_displayed()
    ]
    assert "graph/__compiled_fn_7" in visible and "graph/__compiled_fn_1" not in visible
    search.clear()
    search.send_keys("cpp_fused_mul_0", Keys.ENTER)  # Enter searches inside all code
    assert heading(browser) == "Search: cpp_fused_mul_0"
    hits = browser.find_elements(By.CSS_SELECTOR, "#main .results .hit")
    assert [h.find_element(By.CSS_SELECTOR, ".where").text for h in hits] == \
        ["__compiled_fn_7.kernel.0.py:5", "__compiled_fn_7.kernel.0.py:22"]
    assert hits[1].find_element(By.TAG_NAME, "mark").text == "cpp_fused_mul_0"
    screenshot("search")
    hits[1].click()
    assert heading(browser) == "__compiled_fn_7.kernel.0.py"
    assert browser.find_element(By.CSS_SELECTOR, "#file-code .ln.hl").text.startswith("22")
    browser.find_element(By.TAG_NAME, "body").send_keys("o")
    assert heading(browser) == "Overview"
    assert_no_js_errors(browser)


def test_code_is_highlighted(browser, report):
    open_report(browser, report, "graph/__compiled_fn_1/0")
    keywords = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "#stage-code .t-kw")}
    assert {"class", "def", "return", "import"} <= keywords
    assert "GraphModule" in {e.text for e in browser.find_elements(By.CSS_SELECTOR, "#stage-code .t-def")}
    comments = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#stage-code .t-com")]
    assert any("toy_example.py:5" in c for c in comments)


@pytest.mark.parametrize("size", [(1280, 800), (1440, 900)])
def test_fits_a_laptop_screen(browser, report, size):
    browser.set_window_size(*size)
    try:
        open_report(browser, report, "fn/0")
        for route in ("fn/0", "overview", "graph/__compiled_fn_1/2", "fn/1/entry/1"):
            open_report(browser, report, route)
            overflow = browser.execute_script(
                "var m = document.getElementById('main'), e = document.documentElement;"
                "return Math.max(e.scrollWidth - e.clientWidth, m.scrollWidth - m.clientWidth)")
            assert overflow <= 0, route  # only code boxes scroll sideways, inside themselves
        open_report(browser, report, "fn/0")
        font = browser.execute_script(
            "return parseFloat(getComputedStyle(document.querySelector('#transformed-code')).fontSize)")
        assert font >= 12
    finally:
        browser.set_window_size(1440, 900)


def test_jupyter_iframe_keeps_navigation_inside(browser, tmp_path, screenshot):
    host = tmp_path / "notebook.html"
    host.write_text("<!DOCTYPE html><html><body><h1 id='nb'>notebook</h1>" + show(FIXTURE)._repr_html_() +
                    "</body></html>")
    browser.get(host.as_uri())
    browser.switch_to.frame(browser.find_element(By.TAG_NAME, "iframe"))
    try:
        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#main h1"))
        click(browser, '#sidebar a.nav-item[data-route="graph/__compiled_fn_7"]')
        assert heading(browser) == "__compiled_fn_7"
        click(browser, '#main .tabs .tab[data-stage="kernel"]')
        assert "cpp_fused_mul_0" in browser.find_element(By.ID, "stage-code").text
    finally:
        browser.switch_to.default_content()
    assert browser.current_url == host.as_uri()
    assert browser.find_element(By.ID, "nb").text == "notebook"
    screenshot("jupyter_iframe")


@pytest.mark.parametrize("index", [
    {"format": "depyf-dump", "version": 1},
    {"version": 1, "functions": [{"name": "f"}], "graphs": [{"name": "__compiled_fn_3"}]},
    {"version": 1, "functions": [{"name": "g", "kind": "user", "source": None, "filename": "/x.py",
                                   "cache_entries": [{"index": 0, "graphs": ["__compiled_fn_9"],
                                                      "transformed_code_file": "missing.py"}],
                                   "graph_breaks": [{"reason": "r", "lineno": 3}],
                                   "recompilations": [{"reason": "guard failed"}]}],
     "graphs": [{"name": "__compiled_fn_9", "files": [{"stage": "a_new_stage", "file": "gone.py"}]}],
     "a_key_from_the_future": 1},
])
def test_sparse_or_odd_manifests_render_without_errors(browser, tmp_path, index):
    import json

    dump_dir = tmp_path / "odd"
    dump_dir.mkdir()
    (dump_dir / "index.json").write_text(json.dumps(index))
    page = build_report(dump_dir)
    open_report(browser, page)
    assert_no_js_errors(browser)
    routes = [
        a.get_attribute("data-route")
        for a in browser.find_elements(By.CSS_SELECTOR, "#sidebar a[data-route]")
    ]
    for route in routes:
        open_report(browser, page, route)
        assert heading(browser)
        assert_no_js_errors(browser)


def test_overview_shows_what_this_torch_could_not_provide(browser, tmp_path):
    import json

    dump_dir = tmp_path / "toy_dump"
    shutil.copytree(FIXTURE, dump_dir)
    index_path = dump_dir / "index.json"
    index = json.loads(index_path.read_text())
    index["torch_version"] = "2.2.2"
    index["unavailable"] = [{"feature": "structured trace (recompilation reasons)",
                             "reason": "torch 2.2.2 has no torch._logging._internal.trace_log"}]
    index_path.write_text(json.dumps(index))
    open_report(browser, build_report(dump_dir))
    main = browser.find_element(By.CSS_SELECTOR, "#main").text
    assert "Unavailable on torch 2.2.2" in main
    assert (
        "structured trace (recompilation reasons): torch 2.2.2 has no torch._logging._internal.trace_log"
        in main
    )
    assert_no_js_errors(browser)
