"""Real processes and a real browser for the reliability tests.

``depyf`` runs as a child process (``python -m depyf``) exactly as a user starts it, each with a
timeout so a hang fails the test instead of blocking the suite. The headless Chromium fixtures are
the report tests' own (tests/report/conftest.py), loaded from that file.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_spec = importlib.util.spec_from_file_location(
    "depyf_report_browser_fixtures", REPO / "tests" / "report" / "conftest.py"
)
_browser_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_browser_fixtures)
chromium_binaries = _browser_fixtures.chromium_binaries
browser = _browser_fixtures.browser
screenshot = _browser_fixtures.screenshot
