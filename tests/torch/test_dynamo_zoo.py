"""Dynamo's transformed code for many program shapes runs as our decompiled code (verified), and
the compiled results equal eager ones."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zoo_programs  # noqa: E402
from _dump_checks import check_dump  # noqa: E402

pytestmark = pytest.mark.torch


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("name", sorted(zoo_programs.CASES))
def test_transformed_code_runs_decompiled(name, backend, tmp_path):
    fn, make_inputs = zoo_programs.CASES[name]
    if fn is None:
        torch.manual_seed(0)
        fn = zoo_programs.Branchy()
    torch._dynamo.reset()
    try:
        args, kwargs = make_inputs()
        expected = fn(*args, **kwargs)
        compiled = torch.compile(fn, backend=backend)
        with depyf.prepare_debug(str(tmp_path / "dump")) as used:
            first = compiled(*args, **kwargs)
        with depyf.debug():
            again = compiled(*args, **kwargs)
    finally:
        torch._dynamo.reset()
    assert _same(expected, first) and _same(expected, again)
    index = check_dump(used)
    fallbacks = [(fn["name"], entry["fallback_reason"]) for fn in index["functions"]
                 for entry in fn["cache_entries"] if not entry["decompiled"]]
    assert fallbacks == []
    if not index["functions"] and torch._dynamo.explain(fn)(*args, **kwargs).graph_count == 0:
        # torch 2.2 gives up on unsupported_call's whole frame (no graph, no transformed code)
        pytest.skip(f"torch {torch.__version__}'s Dynamo compiles nothing for {name}: no transformed code")
    assert index["functions"], "nothing was compiled"
