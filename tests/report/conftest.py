"""Headless Chromium for the report tests (Debian's `chromium` + `chromium-driver`, driven by selenium).

If the browser is missing and we are root on Debian, it is installed once per session with
apt-get; otherwise the browser tests are skipped with the reason. Screenshots go to
test-output/report/ at the repository root (gitignored) for people to look at.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-output" / "report"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1440,900",
]


def _find_binaries() -> tuple[str | None, str | None]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or (
        "/usr/lib/chromium/chromedriver" if os.path.exists("/usr/lib/chromium/chromedriver") else None)
    return browser, driver


def _install_chromium() -> str | None:
    """apt-get install chromium chromium-driver; returns why it could not, or None."""
    if shutil.which("apt-get") is None:
        return "apt-get not available (not Debian)"
    if os.geteuid() != 0:
        return "not root, cannot apt-get install chromium"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        done = subprocess.run(["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"],
                              capture_output=True, text=True, env=env, timeout=900)
        if done.returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], capture_output=True, env=env, timeout=600)
            done = subprocess.run(["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"],
                                  capture_output=True, text=True, env=env, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"apt-get install chromium failed: {exc}"
    if done.returncode != 0:
        return f"apt-get install chromium failed: {done.stderr.strip()[-300:]}"
    return None


@pytest.fixture(scope="session")
def chromium_binaries() -> tuple[str, str]:
    browser, driver = _find_binaries()
    if not (browser and driver):
        why = _install_chromium()
        browser, driver = _find_binaries()
        if not (browser and driver):
            pytest.skip(
                f"headless Chromium unavailable: {why or 'chromium/chromedriver not found after install'}"
            )
    return browser, driver


@pytest.fixture(scope="session")
def browser(chromium_binaries):
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium (PyPI) drives Chromium in these tests"
    )
    from selenium.webdriver.chrome.service import Service

    browser_bin, driver_bin = chromium_binaries
    profile = tempfile.mkdtemp(prefix="depyf-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = browser_bin
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # so tests can assert no JS errors
    driver = webdriver.Chrome(service=Service(executable_path=driver_bin), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture()
def screenshot(browser):
    """Save the current page as test-output/report/<name>.png and return the path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        assert browser.save_screenshot(str(path)), f"could not save {path}"
        return path

    return take
