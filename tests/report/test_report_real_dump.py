"""Real dumps: `depyf run` on the seed example and on a model with graph breaks and recompilations,
then the report in headless Chromium, clicking from a function to a kernel.

Each run compiles with Inductor (20-40 s on 2 cores), so the runs are shared per module.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("selenium", reason="selenium (PyPI) drives Chromium in these tests")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = [pytest.mark.torch, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
MODEL = Path(__file__).parent / "models" / "breaks_and_recompiles.py"


def toy_example() -> Path:
    shipped = REPO / "examples" / "toy_example.py"
    return shipped if shipped.is_file() else REPO / "tests" / "cli" / "toy_example.py"


def depyf_run(script: Path, dump_dir: Path) -> subprocess.CompletedProcess:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    )
    return subprocess.run([sys.executable, "-m", "depyf", "run", str(script), "-o", str(dump_dir)],
                          cwd=dump_dir.parent, env=env, capture_output=True, text=True, timeout=600)


def summary_numbers(stderr: str) -> dict[str, int]:
    return {m.group(1).strip(): int(m.group(2))
            for m in re.finditer(r"^([a-z ]+?)\s*: (\d+)", stderr, re.M)}


@pytest.fixture(scope="module")
def model_run(tmp_path_factory):
    dump_dir = tmp_path_factory.mktemp("model") / "dump"
    return depyf_run(MODEL, dump_dir), dump_dir


@pytest.fixture(scope="module")
def seed_run(tmp_path_factory):
    dump_dir = tmp_path_factory.mktemp("seed") / "dump"
    return depyf_run(toy_example(), dump_dir), dump_dir


def open_page(browser, page: Path, route: str = "") -> None:
    browser.get_log("browser")
    browser.get(page.as_uri() + (f"#{route}" if route else ""))
    WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#main h1"))


def click(browser, css: str):
    element = browser.find_element(By.CSS_SELECTOR, css)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()
    return element


def test_model_run_keeps_output_and_summarizes_the_dump(model_run):
    done, dump_dir = model_run
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == "ran 4 steps\n"
    index = json.loads((dump_dir / "index.json").read_text())
    numbers = summary_numbers(done.stderr)
    functions = index["functions"]
    assert numbers["functions compiled"] == len(functions) >= 1
    assert numbers["graphs"] == len(index["graphs"]) >= 2
    assert numbers["graph breaks"] == sum(len(f["graph_breaks"]) for f in functions) >= 2
    assert numbers["recompilations"] == sum(len(f["recompilations"]) for f in functions) >= 1
    assert f"report             : {dump_dir / 'index.html'}" in done.stderr


def test_model_report_graph_breaks_recompilations_and_kernel(model_run, browser, screenshot):
    done, dump_dir = model_run
    assert done.returncode == 0, done.stderr[-3000:]
    index = json.loads((dump_dir / "index.json").read_text())
    user = next(i for i, f in enumerate(index["functions"]) if f["kind"] == "user")
    open_page(browser, dump_dir / "index.html")
    click(browser, f'#sidebar a.nav-item[data-route="fn/{user}"]')
    assert browser.find_element(By.CSS_SELECTOR, "#main h1").text == "Net.forward"
    marked = browser.find_elements(By.CSS_SELECTOR, "#main .graph-break .ln.hl")
    assert [m.text.split(None, 1)[1] for m in marked] == [
        "if y.sum() > 0:  # data-dependent branch: graph break"
    ]
    recompilation = browser.find_element(By.CSS_SELECTOR, "#main .recompilation").text
    assert "size mismatch at index 0. expected 4, actual 6" in recompilation
    screenshot("real_model_function")
    for route in ("overview", f"fn/{user}"):
        open_page(browser, dump_dir / "index.html", route)
        assert browser.execute_script(
            "var m = document.getElementById('main'); return m.scrollWidth - m.clientWidth") <= 0, route
    open_page(browser, dump_dir / "index.html", f"fn/{user}")

    # the call of the graph in the transformed code (decompiled, or Dynamo's kept bytecode) links to it
    graph = browser.find_element(By.CSS_SELECTOR, "#main .graph-chips > a").text
    code_link = f'#transformed-code a.ref[data-route="graph/{graph}"]'
    assert browser.find_elements(By.CSS_SELECTOR, code_link)
    click(browser, code_link)
    assert browser.find_element(By.CSS_SELECTOR, "#main h1").text == graph
    click(browser, '#main .tabs .tab[data-stage="output_code"], #main .tabs .tab[data-stage="kernel"]')
    assert browser.find_element(By.CSS_SELECTOR, "#main .tabs .tab.active").text.startswith("kernel")
    code = browser.find_element(By.ID, "stage-code").text
    assert "def call(" in code  # Inductor's entry point in its output code
    screenshot("real_model_kernel")
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_seed_example_report_from_function_to_kernel(seed_run, browser, screenshot):
    done, dump_dir = seed_run
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == ""
    numbers = summary_numbers(done.stderr)
    assert numbers["graph breaks"] == 1 and numbers["recompilations"] == 0
    open_page(browser, dump_dir / "index.html")
    click(browser, '#sidebar a.nav-item[data-route="fn/0"]')
    assert browser.find_element(By.CSS_SELECTOR, "#main h1").text == "toy_example"
    marked = browser.find_elements(By.CSS_SELECTOR, "#main .graph-break .ln.hl")
    assert [m.text.split(None, 1)[1] for m in marked] == ["if b.sum() < 0:"]
    # Without graph-break records in the trace (torch 2.5 and older) the reason shown is Dynamo's
    # compile reason, which names the branch by its instruction handler.
    from depyf.torch import adapter

    branch = "Data-dependent branching" if adapter.dynamo_traces_graph_breaks() else "generic_jump"
    assert branch in browser.find_element(By.CSS_SELECTOR, "#main .graph-break").text
    graph = browser.find_element(By.CSS_SELECTOR, "#main .graph-chips > a").text
    click(browser, f'#transformed-code a.ref[data-route="graph/{graph}"]')
    assert browser.find_element(By.CSS_SELECTOR, "#main h1").text == graph
    click(browser, '#main .tabs .tab[data-stage="output_code"], #main .tabs .tab[data-stage="kernel"]')
    code = browser.find_element(By.ID, "stage-code").text
    assert "def call(" in code
    screenshot("seed_example_kernel")
