"""Real models from transformers configs (no download): GPT-2 and BERT, forward and a backward step,
under prepare_debug on aot_eager and inductor."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import depyf  # noqa: E402
from depyf.torch import adapter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dump_checks import check_dump, stages  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.slow]


def gpt2():
    config = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=128, n_positions=32,
                                    bos_token_id=0, eos_token_id=0)
    return transformers.GPT2LMHeadModel(config)


def bert():
    config = transformers.BertConfig(num_hidden_layers=2, num_attention_heads=2, hidden_size=32,
                                     intermediate_size=64, vocab_size=128, max_position_embeddings=32)
    return transformers.BertForMaskedLM(config)


def step(make, backend, dump_dir=None):
    torch.manual_seed(0)
    model = make()
    model.train(False)
    ids = torch.randint(0, 128, (2, 8), generator=torch.Generator().manual_seed(1))
    compiled = torch.compile(model, backend=backend)

    def run():
        logits = compiled(input_ids=ids).logits
        logits.float().mean().backward()
        grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        return logits.detach(), grads

    if dump_dir is None:
        return run(), None
    with depyf.prepare_debug(str(dump_dir)) as used:
        result = run()
    return result, Path(used)


@pytest.fixture(scope="module", params=[(gpt2, "aot_eager"), (gpt2, "inductor"), (bert, "aot_eager"),
                                        (bert, "inductor")],
                ids=["gpt2-aot_eager", "gpt2-inductor", "bert-aot_eager", "bert-inductor"])
def model_run(request, tmp_path_factory):
    make, backend = request.param
    torch._dynamo.reset()
    reference, _ = step(make, backend)
    torch._dynamo.reset()
    before = adapter.state_snapshot()
    dumped, used = step(make, backend, tmp_path_factory.mktemp("dump"))
    after = adapter.state_snapshot()
    torch._dynamo.reset()
    return {"backend": backend, "reference": reference, "dumped": dumped, "dir": used,
            "state_restored": before == after}


def test_model_outputs_and_gradients_equal(model_run):
    (ref_logits, ref_grads), (logits, grads) = model_run["reference"], model_run["dumped"]
    assert torch.equal(ref_logits, logits)
    assert len(ref_grads) == len(grads)
    assert all(torch.equal(a, b) for a, b in zip(ref_grads, grads, strict=True))
    assert model_run["state_restored"]


def test_model_dump_complete(model_run):
    index = check_dump(model_run["dir"])
    expected = {"captured_graph", "forward", "backward"}
    if model_run["backend"] == "inductor":
        expected |= {"post_grad", "output_code"}
    assert expected <= stages(index)
    assert {"forward", "wrapper"} & {fn["name"] for fn in index["functions"]}
    assert not index["warnings"]
    for fn in index["functions"]:
        for entry in fn["cache_entries"]:
            assert entry["decompiled"] or entry["fallback_reason"]   # never a silent fallback


def test_model_dump_has_no_decompilation_fallback(model_run):
    index = check_dump(model_run["dir"])
    reasons = [e["fallback_reason"] for fn in index["functions"] for e in fn["cache_entries"]
               if not e["decompiled"]]
    assert reasons == []
