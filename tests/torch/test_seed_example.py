"""The seed example, verbatim (examples/seed_example.py), run as a user would run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dump_checks import check_dump, expected_stages, expected_unavailable, stages

pytestmark = [pytest.mark.torch, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def test_seed_example_writes_a_complete_inductor_dump(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("DEPYF_DEBUG_PAUSE", None)
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "seed_example.py")], cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    dump = tmp_path / "depyf_debug_dir"
    index = check_dump(dump)
    assert index["backend"] == "inductor"
    assert expected_stages("captured_graph", "pre_grad", "forward", "post_grad", "output_code") <= stages(
        index
    )
    names = [fn["name"] for fn in index["functions"]]
    assert names[0] == "toy_example"
    resumes = [fn for fn in index["functions"] if fn["kind"] == "resume"]
    assert len(resumes) == 2 and all(fn["resumes"]["parent"] == "toy_example" for fn in resumes)
    assert all(e["decompiled"] for fn in index["functions"] for e in fn["cache_entries"])
    assert (dump / "full_code_for_toy_example_0.py").exists()
    # Transformed code and resume functions run as the decompiled files (breakpoints work there).
    entries = [entry for fn in index["functions"] for entry in fn["cache_entries"]]
    assert [entry["fallback_reason"] for entry in entries if not entry["decompiled"]] == []
    # one warning per feature this torch lacks by design (none on 2.3 and later), nothing else
    assert proc.stderr.count("DepyfWarning") == len(expected_unavailable()), proc.stderr[-3000:]
