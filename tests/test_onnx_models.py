"""Hugging Face models exported to ONNX by torch, imported as a new user would.

GPT-2, BERT (with transformers' default attention and with
``attn_implementation="eager"``), Llama and T5's encoder (random weights,
small configs) exported by both of torch's exporters with dynamic batch and
sequence axes import with those axes as
irc symbols, compile once, and match onnxruntime at two (batch, sequence)
sizes with a right-padded attention mask (on the reference backend, and at
the first size on Triton's interpreter); called eagerly
(``f(*inputs, *f.weights)``, as docs/onnx.md shows) they match too. What
these exports needed: ``GatherND`` (the dynamo exporter's mask code),
``GatherElements`` (BERT's token type ids), slicing an integer initializer
at a symbolic size (``position_ids[:, :seq]``) and NumPy integer scalars
in eager calls (``Shape -> Gather -> Range``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from test_onnx_import import export_torch  # noqa: E402

import irc.onnx  # noqa: E402

AXES = {0: "batch", 1: "seq"}
VOCAB = 50


class LastHiddenState(torch.nn.Module):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model.eval()

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids, attention_mask=mask).last_hidden_state


def gpt2(attention: str = "sdpa") -> torch.nn.Module:
    config = transformers.GPT2Config(
        vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=2, n_positions=32,
        attn_implementation=attention,
    )  # fmt: skip
    return transformers.GPT2Model(config)


def bert(attention: str = "sdpa") -> torch.nn.Module:
    config = transformers.BertConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=48, max_position_embeddings=32,
        attn_implementation=attention,
    )  # fmt: skip
    return transformers.BertModel(config, add_pooling_layer=False)


def llama() -> torch.nn.Module:
    config = transformers.LlamaConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=32,
    )  # fmt: skip
    return transformers.LlamaModel(config)


def t5_encoder() -> torch.nn.Module:
    from transformers.models.t5.modeling_t5 import T5EncoderModel

    config = transformers.T5Config(
        vocab_size=VOCAB, d_model=32, d_kv=16, d_ff=48, num_layers=2, num_heads=2
    )
    return T5EncoderModel(config)


#: Transformers' default attention (SDPA) unless named; T5's encoder only by
#: the TorchScript exporter (torch's dynamo exporter fails on it, in its own
#: decomposition step).
MODELS = {
    "gpt2": gpt2,
    "gpt2-eager-attention": lambda: gpt2("eager"),
    "bert": bert,
    "bert-eager-attention": lambda: bert("eager"),
    "llama": llama,
    "t5-encoder": t5_encoder,
}
DYNAMO_FAILS = {"t5-encoder"}


def inputs(batch: int, seq: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(batch * 100 + seq)
    ids = rng.integers(0, VOCAB, (batch, seq)).astype(np.int64)
    mask = np.ones((batch, seq), np.int64)
    mask[-1, seq // 2 :] = 0  # the last sequence right-padded
    return ids, mask


@pytest.fixture(
    scope="module",
    params=[False, pytest.param(True, marks=pytest.mark.slow)],
    ids=["torchscript", "dynamo"],
)
def dynamo(request: Any) -> bool:
    return request.param


@pytest.mark.parametrize("name", sorted(MODELS))
def test_an_exported_model_matches_onnxruntime_and_runs_eagerly(
    name: str, dynamo: bool
) -> None:
    if dynamo and name in DYNAMO_FAILS:
        pytest.skip("torch's dynamo exporter cannot export this model")
    torch.manual_seed(0)
    model = LastHiddenState(MODELS[name]())
    example = tuple(torch.from_numpy(a) for a in inputs(2, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exported = export_torch(
            model, example, {"ids": AXES, "mask": AXES}, dynamo=dynamo
        )
    function = irc.onnx.load(exported)
    compiled = function.compile()
    session = ort.InferenceSession(exported)
    names = [i.name for i in session.get_inputs()]
    for batch, seq in [(2, 5), (3, 8)]:
        ids, mask = inputs(batch, seq)
        (expected,) = session.run(None, dict(zip(names, (ids, mask), strict=True)))
        kept = mask.astype(bool)  # padded positions are not compared
        results = [
            compiled(ids, mask, *function.weights, backend="reference"),
            function(ids, mask, *function.weights),
        ]
        if batch == 2:  # Triton's interpreter runs each grid serially
            results.append(compiled(ids, mask, *function.weights, backend="interpret"))
        for actual in results:
            assert actual.shape == expected.shape
            np.testing.assert_allclose(
                actual[kept], expected[kept], rtol=1e-4, atol=1e-5
            )
