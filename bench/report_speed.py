"""How fast the report builds and opens as dumps grow.

Makes synthetic dumps shaped like real ones (functions, cache entries, graphs with five stage
files each, guards), then times `load_dump` + `render_html` and, when Chromium and selenium are
available, how long the browser takes to show the first view and to switch to a kernel.
Prints times and ratios (per MB of dump, and largest vs smallest); asserts nothing.

    python bench/report_speed.py            # sizes 10, 100, 400 functions
    python bench/report_speed.py 50 500     # chosen sizes
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from depyf.report import load_dump, render_html

STAGES = ["captured_graph", "pre_grad", "forward", "post_grad", "output_code"]


def graph_file(name: str, stage: str, lines: int) -> str:
    body = [f"# {name} {stage}", "class GraphModule(torch.nn.Module):",
            "    def forward(self, arg0_1: 'f32[64, 64][64, 1]cpu', arg1_1: 'f32[64][1]cpu'):"]
    for i in range(lines):
        body.append(
            f"        mul_{i}: 'f32[64, 64][64, 1]cpu' = "
            f"torch.ops.aten.mul.Tensor(arg0_1, {i});  arg0_1 = None"
        )
    body.append("        return (mul_0,)")
    return "\n".join(body) + "\n"


def make_dump(root: Path, functions: int, lines_per_file: int = 120) -> Path:
    root.mkdir(parents=True)
    index = {"format": "depyf-dump", "version": 1, "torch_version": "2.13.0", "python_version": "3.11.7",
             "backend": "inductor", "functions": [], "graphs": [], "files": [], "warnings": []}
    graph_no = 0
    for f in range(functions):
        name = f"fn_{f}"
        entries = []
        for e in range(2):
            graph_no += 1
            graph = f"__compiled_fn_{graph_no}"
            tfile = f"__transformed_code_{e}_for_{name}.py"
            (root / tfile).write_text(f"def __transformed_code_{e}_for_{name}(x, y):\n"
                                      f"    __temp_1, = {graph}(x, y)\n    return __temp_1\n")
            files = []
            for stage in STAGES:
                gfile = f"{graph}.{stage}.0.py"
                (root / gfile).write_text(graph_file(graph, stage, lines_per_file))
                files.append({"stage": stage, "file": gfile})
                index["files"].append(gfile)
            index["graphs"].append({"name": graph, "function": name, "files": files})
            index["files"].append(tfile)
            entries.append({"index": e, "guards": [f"check_tensor(L['x'], size=[{e + 8}], stride=[1])"] * 12,
                            "guard_function": f"__guard_{e}_for_{name}", "transformed_code_file": tfile,
                            "transformed_name": f"__transformed_code_{e}_for_{name}", "decompiled": True,
                            "fallback_reason": None, "graphs": [graph], "resume_functions": []})
        index["functions"].append({
            "name": name, "qualname": name, "filename": "/bench/model.py", "firstlineno": 10 * f + 1,
            "kind": "user", "resumes": None, "full_code_file": None,
            "source": f"def {name}(x, y):\n    if x.sum() > 0:\n        return x * y\n    return x + y\n",
            "cache_entries": entries,
            "graph_breaks": [{"reason": "data-dependent branching", "filename": "/bench/model.py",
                              "lineno": 10 * f + 2, "source_line": "if x.sum() > 0:"}],
            "recompilations": [{"reason": "tensor 'x' size mismatch at index 0. expected 8, actual 9",
                                "cache_entry": 1}],
        })
    (root / "index.json").write_text(json.dumps(index))
    return root


def dump_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.iterdir() if p.is_file())


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def browser_times(page: Path) -> tuple[float, float] | None:
    """Seconds to the first view, and to switch to a kernel tab; None without Chromium/selenium."""
    chromium, driver_bin = shutil.which("chromium"), shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        return None
    if not (chromium and driver_bin):
        return None
    profile = tempfile.mkdtemp(prefix="depyf-bench-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1440,900", f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_bin), options=options)
    try:
        start = time.perf_counter()
        driver.get(page.as_uri())
        WebDriverWait(driver, 120).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#main h1"))
        first = time.perf_counter() - start
        start = time.perf_counter()
        driver.execute_script("location.hash = 'graph/__compiled_fn_1/4'")
        WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#stage-code"))
        switch = time.perf_counter() - start
        return first, switch
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main(sizes: list[int]) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            root = make_dump(Path(tmp) / f"dump_{n}", n)
            mb = dump_bytes(root) / 1e6
            built: list[str] = []
            seconds = best_of(3, lambda root=root, built=built: built.append(render_html(load_dump(root))))
            page_text = built[-1]
            page = root / "index.html"
            page.write_text(page_text)
            shown = browser_times(page)
            rows.append((n, mb, seconds, len(page_text.encode()) / 1e6, shown))
    print(
        f"{'functions':>9} {'dump MB':>8} {'build s':>8} {'s per MB':>9} {'page MB':>8} "
        f"{'open s':>7} {'switch s':>9}"
    )
    for n, mb, seconds, page_mb, shown in rows:
        opened = f"{shown[0]:7.2f} {shown[1]:9.3f}" if shown else f"{'-':>7} {'-':>9}"
        print(f"{n:9d} {mb:8.2f} {seconds:8.3f} {seconds / mb:9.3f} {page_mb:8.2f} {opened}")
    small, large = rows[0], rows[-1]
    print(
        f"\nratio largest/smallest: dump size x{large[1] / small[1]:.1f}, "
        f"build time x{large[2] / small[2]:.1f}"
        f" (linear would be x{large[1] / small[1]:.1f})"
    )
    if small[4] and large[4]:
        print(f"ratio largest/smallest: time to first view x{large[4][0] / small[4][0]:.1f}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 100, 400])
