"""Model code written as pure-NumPy model ports write it (tests/model_programs.py)
compiles as written, with the sequence or batch length symbolic, and matches
NumPy running the same code at several sizes: on the reference interpreters
and on Triton's interpreter (the emitted kernels and launcher).

Shapes are small: the Triton interpreter runs the grid one program at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import model_programs as models
import numpy as np
import pytest

import irc
from irc.pytree import map_leaves

BACKENDS = ("reference", "interpret")


def f32(*shape: Any) -> irc.TensorSpec:
    return irc.TensorSpec(shape, "float32")


def specs_of(tree: Any) -> Any:
    return map_leaves(lambda a: irc.TensorSpec(a.shape, str(a.dtype)), tree)


def assert_matches(result: Any, expected: Any, rtol: float = 2e-5, atol: float = 2e-5):
    results = result if isinstance(result, tuple) else (result,)
    expecteds = expected if isinstance(expected, tuple) else (expected,)
    assert len(results) == len(expecteds)
    for got, want in zip(results, expecteds):
        want = np.asarray(want)
        assert got.dtype == want.dtype
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# ----- Llama ------------------------------------------------------------------


@pytest.fixture(scope="module")
def llama():
    params = models.llama_weights(np.random.default_rng(0))
    cache = f32(models.MAX_SEQ, models.N_KV_HEADS, models.HEAD_DIM)
    half = models.HEAD_DIM // 2
    compiled = irc.compile(
        models.llama_block,
        f32("seq", models.DIM),
        specs_of(params),
        f32("seq", half),
        f32("seq", half),
        cache,
        cache,
        facts=[f"seq <= {models.MAX_SEQ}"],
    )
    return compiled, params


def test_llama_block_keeps_seq_symbolic(llama):
    compiled, _ = llama
    text = compiled.ir("graph")
    assert "[seq, seq]" in text  # the causal scores
    assert "graph.insert_slice" in text  # the KV cache written by slice


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seq", [3, 7])
def test_llama_block_prefill_matches_numpy(llama, backend, seq):
    compiled, params = llama
    rng = np.random.default_rng(seq)
    x = rng.standard_normal((seq, models.DIM)).astype(np.float32)
    cos, sin = models.rotary_tables(seq)
    cache_shape = (models.MAX_SEQ, models.N_KV_HEADS, models.HEAD_DIM)
    numpy_caches = [np.zeros(cache_shape, np.float32) for _ in range(2)]
    irc_caches = [np.zeros(cache_shape, np.float32) for _ in range(2)]

    expected = models.llama_block(x, params, cos, sin, *numpy_caches)
    result = compiled(x, params, cos, sin, *irc_caches, backend=backend)

    assert_matches(result, expected, rtol=1e-4, atol=1e-4)
    for got, want in zip(irc_caches, numpy_caches):  # the prefill filled the cache
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert np.any(irc_caches[0][:seq]) and not np.any(irc_caches[0][seq:])


# ----- Mamba ------------------------------------------------------------------


@pytest.fixture(scope="module")
def mamba():
    params = models.mamba_weights(np.random.default_rng(1))
    compiled = irc.compile(
        models.mamba_block, f32("seq", models.D_MODEL), specs_of(params)
    )
    return compiled, params


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seq", [2, 9])
def test_mamba_block_matches_numpy(mamba, backend, seq):
    compiled, params = mamba
    x = np.random.default_rng(seq).standard_normal((seq, models.D_MODEL))
    x = x.astype(np.float32)
    assert_matches(
        compiled(x, params, backend=backend),
        models.mamba_block(x, params),
        rtol=1e-4,
        atol=1e-4,
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_mamba_block_written_with_einops_matches_numpy(backend):
    pytest.importorskip("einops")
    import einops  # noqa: F401  (irc's einops backend needs einops imported first)

    params = models.mamba_weights(np.random.default_rng(3))
    compiled = irc.compile(
        models.mamba_block_einops, f32("seq", models.D_MODEL), specs_of(params)
    )
    for seq in (2, 6):
        x = np.random.default_rng(seq).standard_normal((seq, models.D_MODEL))
        x = x.astype(np.float32)
        expected = models.mamba_block_einops(x, params)
        np.testing.assert_allclose(
            expected, models.mamba_block(x, params), rtol=1e-5, atol=1e-6
        )
        assert_matches(
            compiled(x, params, backend=backend), expected, rtol=1e-4, atol=1e-4
        )


@pytest.mark.parametrize("backend", BACKENDS)
def test_causal_conv_into_a_buffer_is_one_kernel(backend):
    """The padded buffer written by slice and the four shifted reads fuse:
    neither ``padded`` nor the running ``out`` reaches memory."""
    weight = np.random.default_rng(2).standard_normal((6, models.D_CONV))
    bias = np.linspace(-1, 1, 6)
    compiled = irc.compile(
        models.causal_depthwise_conv,
        irc.TensorSpec(("seq", 6), "float64"),
        specs_of(weight),
        specs_of(bias),
    )
    assert compiled.num_kernels == 1
    for seq in (1, 5, 12):
        x = np.random.default_rng(seq).standard_normal((seq, 6))
        assert_matches(
            compiled(x, weight, bias, backend=backend),
            models.causal_depthwise_conv(x, weight, bias),
            rtol=1e-12,
            atol=1e-12,
        )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch", [1, 3])
def test_selective_scan_loop_matches_numpy(backend, batch):
    steps, d_inner, d_state = 5, models.D_INNER, models.D_STATE
    rng = np.random.default_rng(batch)

    def draw(*shape: int, scale: float = 1.0) -> np.ndarray:
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    arrays = {
        "u": draw(batch, steps, d_inner),
        "delta": np.abs(draw(batch, steps, d_inner, scale=0.3)),
        "A": -np.abs(draw(d_inner, d_state)),
        "B": draw(batch, steps, d_state),
        "C": draw(batch, steps, d_state),
        "D": draw(d_inner),
    }
    batched = {"u", "delta", "B", "C"}
    specs = {
        name: f32("batch", *a.shape[1:]) if name in batched else specs_of(a)
        for name, a in arrays.items()
    }
    compiled = irc.compile(models.selective_scan_loop, **specs)
    assert_matches(
        compiled(**arrays, backend=backend),
        models.selective_scan_loop(**arrays),
        rtol=1e-4,
        atol=1e-5,
    )


# ----- a NumPy ML library's activations and layers ---------------------------

ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "leaky_relu.fn": models.LeakyReLU(0.3).fn,
    "leaky_relu.grad": models.LeakyReLU(0.3).grad,
    "elu.fn": models.ELU(1.0).fn,
    "elu.grad": models.ELU(1.0).grad,
    "softplus.fn": models.SoftPlus().fn,
    "softplus.grad": models.SoftPlus().grad,
    "hard_sigmoid.fn": models.HardSigmoid().fn,
    "hard_sigmoid.grad": models.HardSigmoid().grad,
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_matches_numpy(name, dtype):
    activation = ACTIVATIONS[name]
    compiled = irc.compile(activation, irc.TensorSpec(("N", 6), dtype))
    for n in (1, 4):
        z = np.random.default_rng(n).standard_normal((n, 6)).astype(dtype) * 3
        z[0, 0] = 0.0  # the boundary of the piecewise activations
        expected = activation(z)
        for backend in BACKENDS:
            assert_matches(compiled(z, backend=backend), expected, rtol=1e-6, atol=1e-6)


def test_leaky_relu_leaves_its_input_alone():
    compiled = irc.compile(models.LeakyReLU(0.3).fn, f32("N", 3))
    z = np.array([[-1.0, 2.0, -3.0]], np.float32)
    before = z.copy()
    compiled(z, backend="interpret")
    np.testing.assert_array_equal(z, before)  # the layer wrote into its copy


@pytest.mark.parametrize("backend", BACKENDS)
def test_layer_norm_forward_and_backward_match_numpy(backend):
    features = 8
    compiled = irc.compile(
        models.layer_norm_train_step,
        f32("N", features),
        f32(features),
        f32(features),
        f32("N", features),
    )
    for n in (2, 5):
        rng = np.random.default_rng(n)
        X, dLdy = (rng.standard_normal((n, features)).astype(np.float32) for _ in "ab")
        scaler = (1 + 0.1 * rng.standard_normal(features)).astype(np.float32)
        intercept = (0.1 * rng.standard_normal(features)).astype(np.float32)
        assert_matches(
            compiled(X, scaler, intercept, dLdy, backend=backend),
            models.layer_norm_train_step(X, scaler, intercept, dLdy),
            rtol=1e-4,
            atol=1e-5,
        )
