"""Hugging Face models exported to ONNX by torch, imported as a new user would.

The language models of ``irc.testing.models`` (GPT-2, Llama, Qwen2, BERT,
T5's encoder; random weights, small configs), GPT-2 and BERT also with
``attn_implementation="eager"``, exported by both of torch's exporters with
dynamic batch and sequence axes, import with those axes as irc symbols,
compile once, and match onnxruntime at two (batch, sequence) sizes with a
right-padded attention mask (on the reference backend, and at the first
size on Triton's interpreter); called eagerly (``f(*inputs, *f.weights)``,
as docs/onnx.md shows) they match too. What these exports needed:
``GatherND`` (the dynamo exporter's mask code), ``GatherElements`` (BERT's
token type ids), slicing an integer initializer at a symbolic size
(``position_ids[:, :seq]``) and NumPy integer scalars in eager calls
(``Shape -> Gather -> Range``).
"""

from __future__ import annotations

import re
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
from irc.testing import models  # noqa: E402

AXES = {0: "batch", 1: "seq"}
#: The layers of every model of ``irc.testing.models``.
LAYERS = 2


#: ``irc.testing.models``' language models, with transformers' default
#: attention (SDPA), and the ones named ``-eager-attention`` with
#: ``attn_implementation="eager"``.
MODELS = [
    *(name for name in models.MODELS if name not in ("vit", "whisper_encoder")),
    "gpt2-eager-attention",
    "bert-eager-attention",
]
#: torch's dynamo exporter raises a ConversionError on T5's encoder, in its
#: own decomposition step, before irc sees anything.
DYNAMO_FAILS = {"t5_encoder"}


def build(name: str) -> torch.nn.Module:
    base, eager, _ = name.partition("-eager-attention")
    return models.with_mask(base, "eager" if eager else None)


def inputs(batch: int, seq: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(batch * 100 + seq)
    ids = rng.integers(1, models.VOCABULARY, (batch, seq)).astype(np.int64)
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


@pytest.mark.parametrize("name", MODELS)
def test_an_exported_model_matches_onnxruntime_and_runs_eagerly(
    name: str, dynamo: bool
) -> None:
    if dynamo and name in DYNAMO_FAILS:
        pytest.skip("torch's dynamo exporter fails on this model (ConversionError)")
    model = build(name)
    example = tuple(torch.from_numpy(a) for a in inputs(2, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exported = export_torch(
            model, example, {"ids": AXES, "mask": AXES}, dynamo=dynamo
        )
    function = irc.onnx.load(exported)
    compiled = function.compile()
    # Each layer's attention is one kernel, the SDPA export's NaN-guarded
    # softmax included (docs/onnx.md counts the rest).
    kinds = re.findall(r"fusion\.kernel @\w+ (\w+)", compiled.ir("fusion"))
    assert kinds.count("attention") == LAYERS
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
