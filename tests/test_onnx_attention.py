"""ONNX's ``Attention`` (opset 23) on irc.

Models with symbolic batch and sequence axes import, compile once and match
ONNX's reference implementation (``onnx.reference``) at two sizes, on the
reference backend and on the Triton interpreter: grouped-query attention
with a key/value cache, causality and a boolean mask; 3-D inputs split into
heads with an additive mask, a scale, softcap and the scores output. A
plain or causal node is one flash-attention kernel, as the same attention
written in NumPy is; forms irc refuses say what to change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import irc  # noqa: E402
import irc.onnx  # noqa: E402
from irc import nn  # noqa: E402
from irc.onnx import UnsupportedOnnxOp  # noqa: E402

RNG = np.random.default_rng(0)
FLOAT, BOOL = TensorProto.FLOAT, TensorProto.BOOL
BACKENDS = ["reference", "interpret"]


def attention_model(
    inputs: Sequence[tuple[str, int, list[Any]]],
    outputs: Sequence[tuple[str, int, list[Any]]],
    **attributes: Any,
) -> Any:
    """One Attention node (an absent input or output named ``""``) at opset
    23."""
    names = [name for name, _, _ in inputs]
    node = helper.make_node(
        "Attention", names, [name for name, _, _ in outputs], **attributes
    )
    graph = helper.make_graph(
        [node],
        "attention",
        [helper.make_tensor_value_info(*i) for i in inputs if i[0]],
        [helper.make_tensor_value_info(*o) for o in outputs if o[0]],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    onnx.checker.check_model(model, full_check=True)
    return model


def compare(model: Any, bindings: Sequence[dict[str, int]], backend: str) -> None:
    """Compile ``model`` once; at each binding of its symbols, random
    inputs give ONNX's reference outputs."""
    compiled = irc.onnx.load(model).compile()
    reference = ReferenceEvaluator(model)
    for binding in bindings:
        arguments = {i.name: random_input(i, binding) for i in model.graph.input}
        expected = reference.run(None, arguments)
        actual = compiled(*arguments.values(), backend=backend)
        actual = actual if isinstance(actual, tuple) else (actual,)
        for got, want in zip(actual, expected, strict=True):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def random_input(info: Any, binding: dict[str, int]) -> np.ndarray:
    """An input of ``info``'s type, its dim_params (``past + seq`` too)
    evaluated under ``binding``; a boolean mask leaves its first query no
    key (ONNX makes that row of the output zeros)."""
    shape = [
        d.dim_value if d.HasField("dim_value") else eval(d.dim_param, {}, binding)
        for d in info.type.tensor_type.shape.dim
    ]
    if info.type.tensor_type.elem_type == BOOL:
        mask = RNG.random(shape) > 0.3
        mask[..., 0, :] = False
        return mask
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grouped_query_attention_with_a_cache_matches_onnx(backend: str) -> None:
    """Four query heads over two key/value heads, a value head size of its
    own, past keys and values prepended (the causal mask aligned so each
    query sees the past), a boolean mask over every key whose ``past +
    seq`` axis is a symbol of its own, tied to the keys by a fact."""
    model = attention_model(
        [
            ("Q", FLOAT, ["batch", 4, "seq", 8]),
            ("K", FLOAT, ["batch", 2, "seq", 8]),
            ("V", FLOAT, ["batch", 2, "seq", 6]),
            ("mask", BOOL, ["seq", "past + seq"]),
            ("past_key", FLOAT, ["batch", 2, "past", 8]),
            ("past_value", FLOAT, ["batch", 2, "past", 6]),
        ],
        [
            ("Y", FLOAT, ["batch", 4, "seq", 6]),
            ("present_key", FLOAT, ["batch", 2, "past + seq", 8]),
            ("present_value", FLOAT, ["batch", 2, "past + seq", 6]),
        ],
        is_causal=1,
    )
    compare(
        model,
        [{"batch": 1, "seq": 3, "past": 2}, {"batch": 2, "seq": 5, "past": 4}],
        backend,
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_three_d_inputs_with_softcap_and_the_biased_scores_match_onnx(
    backend: str,
) -> None:
    """3-D inputs split into heads by the attributes, an additive mask
    shorter than the keys (ONNX masks the keys past it), a scale, softcap
    and the 4th output holding the masked scores."""
    model = attention_model(
        [
            ("Q", FLOAT, ["batch", "seq", 12]),
            ("K", FLOAT, ["batch", 5, 12]),
            ("V", FLOAT, ["batch", 5, 12]),
            ("mask", FLOAT, ["seq", 4]),
        ],
        [
            ("Y", FLOAT, ["batch", "seq", 12]),
            ("", FLOAT, []),
            ("", FLOAT, []),
            ("qk", FLOAT, ["batch", 3, "seq", 5]),
        ],
        q_num_heads=3,
        kv_num_heads=3,
        scale=0.3,
        softcap=2.0,
        qk_matmul_output_mode=2,
    )
    compare(model, [{"batch": 1, "seq": 2}, {"batch": 2, "seq": 3}], backend)


def kernel_kinds(compiled: Any) -> list[str]:
    return re.findall(r"fusion\.kernel @\w+ (\w+)", compiled.ir("fusion"))


def test_plain_and_causal_attention_are_one_attention_kernel() -> None:
    """The node's core path is the chain fusion makes one flash-attention
    kernel, as the same attention in NumPy, and so is a masked one: the
    rows it masks fully (ONNX makes them zeros) are zeroed by the kernel."""
    spec = irc.TensorSpec(("batch", 2, "seq", 8), "float32")
    qkv = [(name, FLOAT, ["batch", 2, "seq", 8]) for name in "QKV"]
    output = [("Y", FLOAT, ["batch", 2, "seq", 8])]

    def causal(q: Any, k: Any, v: Any) -> Any:
        scores = q @ np.swapaxes(k, -1, -2) * 8**-0.5
        return nn.softmax(np.where(np.tri(q.shape[-2]) == 0, -np.inf, scores)) @ v

    written = irc.compile(causal, spec, spec, spec)
    assert kernel_kinds(written) == ["attention"]
    for attributes in ({}, {"is_causal": 1}):
        compiled = irc.onnx.load(attention_model(qkv, output, **attributes)).compile()
        assert kernel_kinds(compiled) == ["attention"]
    masked = attention_model([*qkv, ("mask", BOOL, ["seq", "seq"])], output)
    assert kernel_kinds(irc.onnx.load(masked).compile()) == ["attention"]


def test_unsupported_forms_say_what_to_change() -> None:
    """The default scale of a symbolic head size would be a traced value
    (and the head size must be static for the attention kernel anyway)."""
    qkv = [(name, FLOAT, ["batch", 2, "seq", "size"]) for name in "QKV"]
    model = attention_model(qkv, [("Y", FLOAT, ["batch", 2, "seq", "size"])])
    with pytest.raises(
        UnsupportedOnnxOp,
        match=r"\(Attention\).*symbolic head size size and no scale.*make the head "
        "size static",
    ):
        irc.onnx.load(model).capture()
    scaled = attention_model(
        qkv, [("Y", FLOAT, ["batch", 2, "seq", "size"])], scale=0.5
    )
    assert "graph.matmul" in str(irc.onnx.load(scaled).module)
