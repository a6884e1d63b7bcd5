"""The decompiled source of the corpus and of a fixed sample of stdlib modules, hashed per code object,
equals the checked-in golden file of the running CPython (``tests/decompiler/golden/<X.Y>.json``).

A failure lists the code objects whose output changed. If the change is intended, regenerate the
file on each CPython that has one: ``bash scripts/pyver 3.X -- python tools/decompile_golden.py
--write-golden`` (``python tools/decompile_golden.py --write-golden`` for the default interpreter).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "decompile_golden.py"
GOLDEN = ROOT / "tests" / "decompiler" / "golden" / f"{sys.version_info.major}.{sys.version_info.minor}.json"


def _tool():
    sys.path.insert(0, str(TOOL.parent))
    try:
        import decompile_golden
    finally:
        sys.path.remove(str(TOOL.parent))
    return decompile_golden


def test_decompiled_output_equals_the_golden_file():
    if not GOLDEN.is_file():
        pytest.skip(f"no golden file for Python {sys.version_info.major}.{sys.version_info.minor} ({GOLDEN})")
    # A child process: the tool fixes PYTHONHASHSEED, which orders the sets shown in the source.
    done = subprocess.run([sys.executable, str(TOOL), "--check-golden"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"}, timeout=600)
    assert done.returncode == 0, f"\n{done.stdout[-8000:]}{done.stderr[-2000:]}"
    assert done.stdout.splitlines()[-1].endswith("0 changed, 0 missing, 0 new")


def test_a_difference_names_the_code_objects():
    tool = _tool()
    saved = {"python": "3.11.7", "digests": {"corpus/a.py:3 f#0": "1", "corpus/a.py:9 g#0": "2",
                                             "textwrap:10 wrap#0": "3"}}
    now = {"python": "3.11.7", "digests": {"corpus/a.py:3 f#0": "1", "corpus/a.py:9 g#0": "X",
                                           "corpus/b.py:1 h#0": "4"}}
    ok, lines = tool.compare(saved, now)
    assert not ok
    assert lines == ["changed: corpus/a.py:9 g#0", "missing: textwrap:10 wrap#0", "new: corpus/b.py:1 h#0",
                     "1 of 3 code objects unchanged; 1 changed, 1 missing, 1 new"]


def test_another_patch_release_compares_the_corpus_only():
    tool = _tool()
    saved = {"python": "3.11.7", "digests": {"corpus/a.py:3 f#0": "1", "textwrap:10 wrap#0": "3"}}
    now = {"python": "3.11.9", "digests": {"corpus/a.py:3 f#0": "1", "textwrap:10 wrap#0": "other"}}
    ok, lines = tool.compare(saved, now)
    assert ok and lines[0].startswith("note: saved on Python 3.11.7, checking on 3.11.9: only the corpus")
    ok, _ = tool.compare(saved, {"python": "3.11.9", "digests": {"corpus/a.py:3 f#0": "2"}})
    assert not ok
