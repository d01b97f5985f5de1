"""Attention as one kernel, from the general fusion rule matmul -> row
reduction -> matmul (``irc.dialects.fusion.AttentionChain``).

Each variant is plain NumPy: no mask, a causal mask from ``np.tri`` (by
``np.where`` or added as ``(1 - tri) * -1e10``), a bias passed as an
argument (ALiBi-style), another scale, a softmax written by hand, a
reciprocal multiplied in, keys and values of another length than the
queries, batched heads (``[H, S, d]``, ``k.transpose(0, 2, 1)``) and
batched queries over shared keys and values, and an epilogue. Each
must be ONE ``attention`` kernel and agree with NumPy on the reference
backend and on Triton's interpreter at several bindings of the symbolic
sequence length: 1, below a block, past one block with a masked tail, and
past two key blocks. Where the rule must not fire (the scores or the
probabilities are also returned, a symbolic head dim) the kernels stay
apart, with reasons that say why. The batched kernel compiles for sm_90
through Triton's real launch path (``irc.testing.fake_driver``, in a
subprocess: this process interprets), on tensor cores for 16-bit operands.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import irc
from irc import pytree, testing
from irc.api import DEFAULT_PIPELINE
from irc.dialects.fusion import KernelOp
from irc.ir import default_context, parse_module
from irc.lowering.pipeline import Pipeline

pytest.importorskip("torch")

HEAD_DIM = 16
HEADS = 2
#: Bindings of the sequence length: 1, below the 64-row block, past one
#: block (a masked tail), past two key blocks.
LENGTHS = (1, 5, 67, 130)
RTOL, ATOL = 1e-5, 5e-6


def softmax(x: Any) -> Any:
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def causal_where(q, k, v):
    scores = q @ k.T * q.shape[-1] ** -0.5
    scores = np.where(np.tri(q.shape[0]) == 0, -1e9, scores)
    return softmax(scores) @ v


def causal_additive(q, k, v):
    mask = (1 - np.tri(q.shape[0], dtype=q.dtype)) * -1e10
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def no_mask(q, k, v):
    return softmax(q @ k.T / np.sqrt(q.shape[-1])) @ v


def another_scale(q, k, v):
    return softmax(0.3 * (q @ k.T)) @ v


def alibi_bias(q, k, v, bias):
    return softmax(q @ k.T * 0.25 + bias) @ v


def softmax_by_hand(q, k, v):
    s = q @ k.T * 0.25
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return p @ v


def reciprocal_factor(q, k, v):
    s = q @ k.T
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e * (1.0 / e.sum(axis=1, keepdims=True))) @ v


def batched_causal(q, k, v):
    s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    s = np.where(np.tri(q.shape[1]) == 0, -1e9, s)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


def shared_keys(q, k, v):
    """Several query heads over one head of keys and values (multi-query
    attention): the batch dims broadcast."""
    return softmax(q @ k.T * 0.25) @ v


def with_epilogue(q, k, v, residual):
    return softmax(q @ k.T * 0.25) @ v * 2.0 + residual


def exported_sdpa(q, k, v):
    """Attention as torch's ONNX exporters write SDPA with a mask: q and k
    each scaled by the square root of the scale, and the softmax guarded
    by ``where(isnan(p), 0, p)``. The keys before S // 2 are padding, so
    the rows before it see no key (NaN, then 0) and, past 64 rows, a whole
    first block of keys is masked for rows that see later keys."""
    s = (q * 0.5) @ (k * 0.5).T
    rows = np.arange(q.shape[0])
    visible = (np.tri(q.shape[0]) == 1) & (rows >= q.shape[0] // 2)
    with np.errstate(invalid="ignore"):
        p = softmax(np.where(visible, s, -np.inf))
    return np.where(np.isnan(p), 0.0, p) @ v


def _spec(*dims: Any) -> irc.TensorSpec:
    return irc.TensorSpec(dims, "float32")


def _qkv(rng: np.random.Generator, s: int) -> list[np.ndarray]:
    return [rng.standard_normal((s, HEAD_DIM)).astype(np.float32) for _ in range(3)]


def _batched(rng: np.random.Generator, s: int) -> list[np.ndarray]:
    shape = (HEADS, s, HEAD_DIM)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]


def _cross(rng: np.random.Generator, s: int) -> list[np.ndarray]:
    t = 2 * s + 1  # keys and values of another length
    q = rng.standard_normal((s, HEAD_DIM)).astype(np.float32)
    k, v = (rng.standard_normal((t, HEAD_DIM)).astype(np.float32) for _ in range(2))
    return [q, k, v]


QKV = [_spec("S", HEAD_DIM)] * 3

#: name -> (function, specs, inputs at a sequence length).
VARIANTS: dict[str, tuple[Callable[..., Any], list[irc.TensorSpec], Any]] = {
    "causal_where": (causal_where, QKV, _qkv),
    "causal_additive": (causal_additive, QKV, _qkv),
    "no_mask": (no_mask, QKV, _qkv),
    "another_scale": (another_scale, QKV, _qkv),
    "alibi_bias": (
        alibi_bias,
        [*QKV, _spec("S", "S")],
        lambda rng, s: [
            *_qkv(rng, s),
            (-0.5 * np.abs(np.subtract.outer(np.arange(s), np.arange(s)))).astype(
                np.float32
            ),
        ],
    ),
    "softmax_by_hand": (softmax_by_hand, QKV, _qkv),
    "reciprocal_factor": (reciprocal_factor, QKV, _qkv),
    "cross_lengths": (
        no_mask,
        [_spec("S", HEAD_DIM), _spec("T", HEAD_DIM), _spec("T", HEAD_DIM)],
        _cross,
    ),
    "batched_causal": (
        batched_causal,
        [_spec(HEADS, "S", HEAD_DIM)] * 3,
        _batched,
    ),
    "shared_keys": (
        shared_keys,
        [_spec(HEADS, "S", HEAD_DIM), _spec("S", HEAD_DIM), _spec("S", HEAD_DIM)],
        lambda rng, s: [_batched(rng, s)[0], *_qkv(rng, s)[:2]],
    ),
    "exported_sdpa": (exported_sdpa, QKV, _qkv),
    "with_epilogue": (
        with_epilogue,
        [*QKV, _spec("S", HEAD_DIM)],
        lambda rng, s: [*_qkv(rng, s), _qkv(rng, s)[0]],
    ),
}


@pytest.fixture(scope="module")
def compiled() -> Callable[[str], irc.Compiled]:
    cache: dict[str, irc.Compiled] = {}

    def get(name: str) -> irc.Compiled:
        if name not in cache:
            function, specs, _ = VARIANTS[name]
            cache[name] = irc.compile(function, *specs)
        return cache[name]

    return get


def kernels(program: irc.Compiled) -> list[KernelOp]:
    return [op for op in program.module_at("fusion").walk() if isinstance(op, KernelOp)]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_is_one_attention_kernel(name: str, compiled) -> None:
    program = compiled(name)
    assert [k.kind_name for k in kernels(program)] == ["attention"]
    assert program.num_kernels == 1


@pytest.mark.parametrize("backend", ["reference", "interpret"])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_matches_numpy(name: str, backend: str, compiled) -> None:
    function, _, make_inputs = VARIANTS[name]
    program = compiled(name)
    for length in LENGTHS:
        arrays = make_inputs(np.random.default_rng(length), length)
        expected = function(*arrays)
        got = program(*arrays, backend=backend)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(
            got, expected, rtol=RTOL, atol=ATOL, err_msg=f"{name} at S={length}"
        )


def test_fully_masked_rows_are_nan_as_in_numpy() -> None:
    """A row whose every score is -inf: NumPy's softmax is NaN there
    (exp(-inf - -inf)); so is the kernel's, and the other rows are not."""

    def masked(q, k, v):
        s = np.where(np.tri(q.shape[0]) == 0, -np.inf, q @ k.T)
        s = np.where(np.arange(q.shape[0])[:, None] == 1, -np.inf, s)
        return softmax(s) @ v

    program = irc.compile(masked, *QKV)
    assert [k.kind_name for k in kernels(program)] == ["attention"]
    arrays = _qkv(np.random.default_rng(0), 5)
    with np.errstate(invalid="ignore"):
        expected = masked(*arrays)
    got = program(*arrays, backend="interpret")
    assert np.isnan(got[1]).all() and not np.isnan(np.delete(got, 1, axis=0)).any()
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


# Where the rule must not fire -------------------------------------------------


def test_returned_probabilities_keep_the_kernels_apart() -> None:
    """The probabilities are also returned, so they must be stored: the
    chain is no attention kernel, and the kernels say why they are apart."""

    def also_probabilities(q, k, v):
        p = softmax(q @ k.T)
        return p @ v, p

    program = irc.compile(also_probabilities, *QKV)
    found = kernels(program)
    assert "attention" not in [k.kind_name for k in found]
    assert any(
        "a reduction kernel never takes a matmul" in k.reason_text for k in found
    )
    assert any(
        "no attention kernel with the matmul -> row reduction -> graph.matmul"
        in k.reason_text
        and "graph.div" in k.reason_text
        and "is also used outside it, so it is stored" in k.reason_text
        for k in found
    )
    arrays = _qkv(np.random.default_rng(1), 7)
    for got, expected in zip(program(*arrays), also_probabilities(*arrays)):
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_symbolic_head_dim_is_not_an_attention_kernel() -> None:
    """The head dim must be static (a block of query rows stays in
    registers): with ``d`` symbolic the matmuls stay kernels of their own."""
    program = irc.compile(no_mask, *[_spec("S", "d")] * 3)
    found = kernels(program)
    assert "attention" not in [k.kind_name for k in found]
    assert any(
        "the first matmul's contracted dim (d) is not static" in k.reason_text
        for k in found
    )


def test_a_nan_guard_over_other_factors_is_not_an_attention_kernel() -> None:
    """``where(isnan(P), 0, P)`` fuses over a softmax only, which is NaN on
    whole rows; ``P = exp(x - max(x)) * r`` can be NaN at single scores
    (``0 * inf``), so the chain stays apart."""

    def guarded_product(q, k, v, r):
        s = q @ k.T
        p = np.exp(s - s.max(-1, keepdims=True)) * r
        return np.where(np.isnan(p), 0.0, p) @ v

    program = irc.compile(guarded_product, *QKV, _spec("S", 1))
    found = kernels(program)
    assert "attention" not in [k.kind_name for k in found]
    rng = np.random.default_rng(2)
    arrays = [*_qkv(rng, 7), rng.standard_normal((7, 1)).astype(np.float32)]
    arrays[3][2, 0] = np.inf  # row 2 is NaN where its exp underflows to 0
    with np.errstate(invalid="ignore"):
        expected = guarded_product(*arrays)
    np.testing.assert_allclose(program(*arrays), expected, rtol=RTOL, atol=ATOL)


# Skipping the keys past a block's rows ----------------------------------------


def _walks_to_the_last_row(program: irc.Compiled) -> bool:
    """Whether the attention kernel's walk over the keys stops at its
    program's last row (``tile.binary min`` bounds the ``scf.for``)."""
    text = program.ir("loop")
    return "the keys past it are masked" in text and "tile.binary min" in text


@pytest.mark.parametrize(
    ("name", "skips"),
    [
        ("causal_where", True),
        # NumPy's NaN + -1e10 is NaN: skipping would hide a NaN score.
        ("causal_additive", False),
        ("batched_causal", True),
        ("no_mask", False),
        ("alibi_bias", False),
    ],
)
def test_causal_masks_skip_the_blocks_past_the_rows(
    name: str, skips: bool, compiled
) -> None:
    assert _walks_to_the_last_row(compiled(name)) == skips


def test_skipping_is_exact() -> None:
    """The same mask, once as np.tri (skipped) and once as a boolean
    argument (not analysable, every block walked): bit for bit the same
    results, since each skipped term is exp(-1e9 - m) == 0 and leaves the
    max, the sums and the product unchanged."""

    def from_tri(q, k, v):
        return softmax(np.where(np.tri(q.shape[0]) == 0, -1e9, q @ k.T)) @ v

    def from_argument(q, k, v, keep):
        return softmax(np.where(keep, q @ k.T, -1e9)) @ v

    skipping = irc.compile(from_tri, *QKV)
    walking = irc.compile(from_argument, *QKV, irc.TensorSpec(("S", "S"), "bool"))
    assert _walks_to_the_last_row(skipping)
    assert not _walks_to_the_last_row(walking)
    for length in (5, 130):
        arrays = _qkv(np.random.default_rng(length), length)
        keep = np.tri(length) != 0
        np.testing.assert_array_equal(
            skipping(*arrays, backend="interpret"),
            walking(*arrays, keep, backend="interpret"),
        )


def test_non_finite_scores_past_the_row_reach_an_additive_masks_rows() -> None:
    """NumPy's ``NaN + -1e10`` is NaN: a NaN key past every row but the
    last makes every row NaN under the additive mask, as in NumPy."""
    arrays = _qkv(np.random.default_rng(0), 130)
    arrays[1][129] = np.nan
    with np.errstate(invalid="ignore"):
        expected = causal_additive(*arrays)
    got = irc.compile(causal_additive, *QKV)(*arrays, backend="interpret")
    assert np.isnan(expected).all(axis=1).all()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))


def test_a_fill_near_the_scores_is_not_skipped() -> None:
    """A fill of -1e4 with scores near -2e4: the masked terms are the
    rows' max, and NumPy averages over them; they must be walked."""

    def near_fill(q, k, v):
        return softmax(np.where(np.tri(q.shape[0]) == 0, -1e4, q @ k.T)) @ v

    length = 130
    q = np.full((length, HEAD_DIM), 5.0, np.float32)
    k = np.full((length, HEAD_DIM), -4e3 / HEAD_DIM, np.float32)  # scores -2e4
    v = np.arange(length, dtype=np.float32)[:, None].repeat(HEAD_DIM, 1)
    program = irc.compile(near_fill, *QKV)
    assert not _walks_to_the_last_row(program)
    np.testing.assert_allclose(
        program(q, k, v, backend="interpret"), near_fill(q, k, v), rtol=RTOL, atol=ATOL
    )


def test_a_mask_leaving_row_zero_no_key_is_not_skipped() -> None:
    """``np.tri(S, k=-1)`` keeps the keys before the row: row 0 keeps none,
    and NumPy averages all its values (every score -1e9). Skipping would
    leave it no key, so the walk goes over every block."""

    def strictly_before(q, k, v):
        s = np.where(np.tri(q.shape[0], k=-1) == 0, -1e9, q @ k.T)
        return softmax(s) @ v

    program = irc.compile(strictly_before, *QKV)
    assert program.num_kernels == 1 and not _walks_to_the_last_row(program)
    arrays = _qkv(np.random.default_rng(3), 70)
    np.testing.assert_allclose(
        program(*arrays, backend="interpret"),
        strictly_before(*arrays),
        rtol=RTOL,
        atol=ATOL,
    )


# The passes keep meaning; gradients -------------------------------------------

#: Attention-shaped programs for the pass checks and gradients.
CHECKED = [
    "causal_additive",
    "alibi_bias",
    "batched_causal",
    "exported_sdpa",
    "with_epilogue",
]


def _traced(name: str, dtype: str = "float32") -> Any:
    function, specs, _ = VARIANTS[name]
    return irc.trace(function, *[irc.TensorSpec(s.shape, dtype) for s in specs])


def test_fuse_keeps_the_meaning_of_attention_programs() -> None:
    testing.check_pass("fuse", programs=[_traced(n) for n in CHECKED], max_examples=8)


def test_tile_keeps_the_meaning_of_attention_programs() -> None:
    """On the loop level's reference interpreter, at random bindings of S."""
    testing.check_pass(
        "fuse,tile",
        programs=[_traced(n) for n in CHECKED],
        max_examples=8,
        require_change=["tile"],
    )


@pytest.mark.parametrize(
    "name", ["causal_where", "alibi_bias", "batched_causal", "reciprocal_factor"]
)
def test_attention_gradients(name: str) -> None:
    """autodiff of attention against finite differences (float64), where
    ``softmax(x) @ v`` is differentiated as one chain (``dx = P * (dP -
    D)``, ``D = sum(dO * O)``); its joint function runs on the triton
    level's interpreter as on the reference."""
    testing.check_grad([_traced(name, "float64")], max_examples=4)
    function, specs, make_inputs = VARIANTS[name]
    joint = irc.compile(function, *specs, pipeline=f"autodiff,{DEFAULT_PIPELINE}")
    arrays = make_inputs(np.random.default_rng(0), 7)
    (result,) = testing.run_module(_traced(name), arrays)
    cotangent = np.random.default_rng(1).standard_normal(result.shape)
    inputs = [*arrays, cotangent.astype(result.dtype)]
    expected = testing.run_module(joint.module, inputs)
    actual = testing.run_module(parse_module(joint.ir("triton")), inputs)
    assert testing.compare_outputs(expected, actual, rtol=1e-4, atol=1e-4) is None


# The backward: flash attention's, from the general rules -------------------------

#: Variants whose joint function is the attention kernel (which yields its
#: rows' max and sum), the rows' ``sum(dO * O)``, and two attention_backward
#: kernels recomputing the scores block by block: the queries' gradient
#: walking the keys, the keys' and values' walking the queries.
FLASH_BACKWARD = [
    "causal_where",
    "causal_additive",
    "no_mask",
    "another_scale",
    "softmax_by_hand",
    "reciprocal_factor",
    "cross_lengths",
    "batched_causal",
    "with_epilogue",
]


def _training_step(name: str) -> irc.Compiled:
    """``value_and_grad`` of the variant's ``mean(out ** 2)``, every input
    differentiated."""
    function, specs, _ = VARIANTS[name]

    def loss(*arrays: Any) -> Any:
        return np.mean(function(*arrays) ** 2)

    return irc.compile(irc.value_and_grad(loss, tuple(range(len(specs)))), *specs)


def _score_shaped(kernel: KernelOp) -> list[str]:
    """The kernel's results with two symbolic dims (``[S, S]``, ``[S,
    T]``): score-shaped tensors."""
    return [
        str(result.type)
        for result in kernel.results
        if sum(dim.constant is None for dim in result.type.dims) >= 2
    ]


@pytest.mark.parametrize("name", FLASH_BACKWARD)
def test_the_backward_recomputes_the_probabilities(name: str) -> None:
    """One attention kernel and two attention_backward kernels, and no
    kernel stores a score-shaped tensor; the step agrees with the reference
    on Triton's interpreter at every length of ``LENGTHS`` (1, within a
    block, a masked tail, two blocks)."""
    step = _training_step(name)
    kernels = [k for k in step.module_at("fusion").walk() if isinstance(k, KernelOp)]
    kinds = [k.kind_name for k in kernels]
    assert kinds.count("attention") == 1 and kinds.count("attention_backward") == 2
    assert [_score_shaped(k) for k in kernels] == [[]] * len(kernels), kinds
    _, _, make_inputs = VARIANTS[name]
    for length in LENGTHS:
        arrays = make_inputs(np.random.default_rng(length), length)
        expected = pytree.flatten(step(*arrays, backend="reference"))[0]
        actual = pytree.flatten(step(*arrays, backend="interpret"))[0]
        for got, want in zip(actual, expected, strict=True):
            np.testing.assert_allclose(
                got, want, rtol=1e-4, atol=1e-5, err_msg=f"{name} at {length}"
            )


def _joint_graph(name: str) -> Any:
    """The variant's joint function at the graph level (float64)."""
    module = _traced(name, "float64")
    for graph_pass in Pipeline.parse("autodiff,canonicalize,cse").passes:
        graph_pass.apply(default_context(), module)
    return module


def test_fuse_and_tile_keep_the_meaning_of_attention_backward() -> None:
    """The law of every pass, on joint functions of attention: the
    attention_backward kernels compute what the graph does, at random
    bindings of the lengths (on each level's reference interpreter)."""
    testing.check_pass(
        "fuse,tile",
        programs=[_joint_graph(n) for n in ("causal_where", "cross_lengths")],
        max_examples=8,
        require_change=["tile"],
    )


def test_a_probability_used_elsewhere_is_differentiated_op_by_op() -> None:
    """``P`` also returned: its own cotangent joins ``dP``, so the chain's
    rule does not apply; the ops' rules do, the forward keeps ``P``, and
    the gradients still match finite differences."""

    def probabilities_too(q, k, v):
        p = softmax(q @ k.T * 0.25)
        return p @ v, p

    specs = [irc.TensorSpec(s.shape, "float64") for s in QKV]
    testing.check_grad([irc.trace(probabilities_too, *specs)], max_examples=3)
    joint = irc.compile(
        probabilities_too, *QKV, pipeline=f"autodiff,{DEFAULT_PIPELINE}"
    )
    graph = joint.ir("graph")
    assert "graph.argmax" in graph  # the max's own rule ran
    kernels = [k for k in joint.module_at("fusion").walk() if isinstance(k, KernelOp)]
    assert "attention" not in [k.kind_name for k in kernels]


def test_walks_that_read_each_other_stay_apart() -> None:
    """Two matmuls contracting ``P^T`` along the same axis, the second
    reading the first's result: they cannot share a walk (the kernel would
    read what it writes), so the later one walks alone, and every op keeps
    its place before its users."""

    def chained(q, k, v, x, y):
        p = softmax(q @ k.T * 0.25)
        a = p.T @ x
        b = p.T @ (a * 2)
        return p @ v + p.T @ y + b

    program = irc.compile(chained, *[_spec("S", HEAD_DIM)] * 5)
    kinds = [
        k.kind_name
        for k in program.module_at("fusion").walk()
        if isinstance(k, KernelOp)
    ]
    assert kinds.count("attention_backward") == 2, kinds
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((70, HEAD_DIM)).astype(np.float32) for _ in range(5)]
    np.testing.assert_allclose(
        program(*arrays, backend="interpret"), chained(*arrays), rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize("values", ["D", 300])
def test_a_wide_or_symbolic_value_head_is_no_walk(values: int | str) -> None:
    """``dv = P^T @ dO`` keeps a block of ``dO``'s head in registers: with
    v's head dim symbolic or above 256 it is no attention_backward kernel,
    and the step still agrees with the reference on Triton's interpreter."""

    def loss(q, k, v):
        return np.mean((softmax(q @ k.T * 0.25) @ v) ** 2)

    specs = [_spec("S", HEAD_DIM), _spec("S", HEAD_DIM), _spec("S", values)]
    step = irc.compile(irc.value_and_grad(loss, (0, 1, 2)), *specs)
    rng = np.random.default_rng(6)
    width = 5 if values == "D" else values
    arrays = [
        rng.standard_normal((9, HEAD_DIM)).astype(np.float32),
        rng.standard_normal((9, HEAD_DIM)).astype(np.float32),
        rng.standard_normal((9, width)).astype(np.float32),
    ]
    expected = pytree.flatten(step(*arrays, backend="reference"))[0]
    actual = pytree.flatten(step(*arrays, backend="interpret"))[0]
    for got, want in zip(actual, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_the_chain_rule_needs_statistics_per_row() -> None:
    """A max reshaped across the rows (``[S, 1]`` as ``[1, S]``) is no
    softmax's shift: the chain's rule does not apply, and the gradients
    match finite differences."""

    def shifted_by_columns(x, v):
        m = np.max(x, -1, keepdims=True).reshape(1, x.shape[0])
        e = np.exp(x - m)
        return (e / e.sum(-1, keepdims=True)) @ v

    testing.check_grad(
        shifted_by_columns,
        irc.TensorSpec(("S", "S"), "float64"),
        irc.TensorSpec(("S", 3), "float64"),
    )


def test_the_chain_rule_over_a_batch_broadcasting_matmul() -> None:
    """``P [S, S] @ v [2, S, 3]`` (the graph dialect broadcasts the batch):
    ``D`` sums the output's last axis, and ``dx`` sums over the batch."""
    testing.check_grad(
        [
            """
func.func @f(%x: !graph.tensor<[S, S], f64>, %v: !graph.tensor<[2, S, 3], f64>) -> !graph.tensor<[2, S, 3], f64> {
  %0 = graph.reduce max %x [1] : !graph.tensor<[S, S], f64> -> !graph.tensor<[S, 1], f64>
  %1 = graph.broadcast %0 : !graph.tensor<[S, 1], f64> -> !graph.tensor<[S, S], f64>
  %2 = graph.sub %x, %1 : !graph.tensor<[S, S], f64>
  %3 = graph.exp %2 : !graph.tensor<[S, S], f64>
  %4 = graph.reduce sum %3 [1] : !graph.tensor<[S, S], f64> -> !graph.tensor<[S, 1], f64>
  %5 = graph.broadcast %4 : !graph.tensor<[S, 1], f64> -> !graph.tensor<[S, S], f64>
  %6 = graph.div %3, %5 : !graph.tensor<[S, S], f64>
  %7 = graph.matmul %6, %v : (!graph.tensor<[S, S], f64>, !graph.tensor<[2, S, 3], f64>) -> !graph.tensor<[2, S, 3], f64>
  func.return %7 : !graph.tensor<[2, S, 3], f64>
}
"""
        ],
        max_examples=3,
    )


# sm_90: the attention kernel compiles for an H100 ---------------------------------

#: The batched attention compiled for sm_90 per element type: whether its
#: two dots must be on tensor cores (16-bit operands) or FMA (IEEE float32).
SM90_ELEMENTS = {"float32": False, "bfloat16": True}
SM90_HEADS, SM90_LENGTH, SM90_HEAD_DIM = 4, 256, 64


def batched_causal_scaled(q, k, v):
    """batched_causal with a weak scale (a NumPy float64 scale would make
    a 16-bit program float64)."""
    s = q @ k.transpose(0, 2, 1) * 0.125
    s = np.where(np.tri(q.shape[1]) == 0, -1e9, s)
    return softmax(s) @ v


@pytest.fixture(scope="module")
def sm90_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from fake_gpu_suite import run_compiling

    out = tmp_path_factory.mktemp("attention_sm90") / "report.json"
    completed = run_compiling([__file__, str(out)], timeout=900)
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("element", sorted(SM90_ELEMENTS))
def test_attention_compiles_for_h100(element: str, sm90_report: dict[str, Any]) -> None:
    """One launch, heads on grid axis 1, an sm_90 cubin; 16-bit operands on
    tensor cores (wgmma or mma), IEEE float32 on FMA."""
    result = sm90_report[element]
    assert "error" not in result, result.get("error")
    (launch,) = result["launches"]
    assert launch["grid"][:2] == [SM90_LENGTH // 64, SM90_HEADS]
    assert launch["sm_90"] and launch["cubin_bytes"] > 0
    tensor_cores = launch["wgmma"] + launch["mma"]
    assert (tensor_cores > 0) == SM90_ELEMENTS[element], launch


@pytest.mark.parametrize("element", sorted(SM90_ELEMENTS))
def test_attention_backward_compiles_for_h100(
    element: str, sm90_report: dict[str, Any]
) -> None:
    """The training step's two attention_backward kernels, launched as one
    (``combine-launches``): a program per block of 64 queries or keys and
    per head for each, an sm_90 cubin, the dots on tensor cores for 16-bit
    operands."""
    result = sm90_report[f"backward-{element}"]
    assert "error" not in result, result.get("error")
    (walks,) = [x for x in result["launches"] if "attention_backward" in x["kinds"]]
    assert walks["kinds"] == ["attention_backward"] * 2
    blocks, heads = SM90_LENGTH // 64, SM90_HEADS
    assert walks["grid"][0] == 2 * blocks * heads  # the pieces' grids, flattened
    assert walks["sm_90"] and walks["cubin_bytes"] > 0
    tensor_cores = walks["wgmma"] + walks["mma"]
    assert (tensor_cores > 0) == SM90_ELEMENTS[element], walks


def _sm90_launch(element: str) -> dict[str, Any]:
    import torch
    from fake_gpu_suite import h100_launches

    spec = irc.TensorSpec((SM90_HEADS, "S", SM90_HEAD_DIM), element)
    compiled = irc.compile(batched_causal_scaled, spec, spec, spec)
    shape = (SM90_HEADS, SM90_LENGTH, SM90_HEAD_DIM)
    tensors = [torch.zeros(shape, dtype=getattr(torch, element)) for _ in range(3)]
    return {"launches": h100_launches(compiled, tensors)}


def _sm90_backward(element: str) -> dict[str, Any]:
    """The launches of the batched attention's training step, each with
    the kinds of the kernels it runs (several where ``combine-launches``
    made them one launch)."""
    import torch
    from fake_gpu_suite import h100_launches

    from irc.dialects import triton as tt

    def loss(q, k, v):
        return np.mean(batched_causal_scaled(q, k, v) ** 2)

    spec = irc.TensorSpec((SM90_HEADS, "S", SM90_HEAD_DIM), element)
    compiled = irc.compile(irc.value_and_grad(loss, (0, 1, 2)), spec, spec, spec)
    fusion = compiled.module_at("fusion")
    kinds = {
        k.kernel_name: k.kind_name for k in fusion.walk() if isinstance(k, KernelOp)
    }
    kernels = [
        [kinds[p.piece.data] for p in k.pieces] if k.pieces else [kinds[k.kernel_name]]
        for k in compiled.compilation.module("triton").ops
        if isinstance(k, tt.KernelOp)
    ]
    shape = (SM90_HEADS, SM90_LENGTH, SM90_HEAD_DIM)
    tensors = [torch.zeros(shape, dtype=getattr(torch, element)) for _ in range(3)]
    launches = h100_launches(compiled, tensors)
    assert len(launches) == len(kernels), (len(launches), kernels)
    return {"launches": [{**x, "kinds": k} for x, k in zip(launches, kernels)]}


def _sm90_report() -> dict[str, Any]:
    report: dict[str, Any] = {}
    for element in SM90_ELEMENTS:
        for key, launches in (
            (element, _sm90_launch),
            (f"backward-{element}", _sm90_backward),
        ):
            try:
                report[key] = launches(element)
            except Exception as error:  # reported, and failed, by the test
                report[key] = {"error": f"{type(error).__name__}: {error}"}
    return report


if __name__ == "__main__":
    # python tests/test_attention.py REPORT.json (compiles: not interpreted)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    Path(sys.argv[1]).write_text(json.dumps(_sm90_report()))


def test_16_bit_attention_accumulates_in_float32() -> None:
    """float16 operands: the dots on float16 tiles, the max, the sums and
    the product in float32; the result within float16 rounding of the
    reference interpreter's (which computes each op in float16 as NumPy)."""
    spec = irc.TensorSpec((HEADS, "S", HEAD_DIM), "float16")
    program = irc.compile(batched_causal_scaled, spec, spec, spec)
    assert program.num_kernels == 1
    for length in (5, 130):
        arrays = [
            a.astype(np.float16) for a in _batched(np.random.default_rng(4), length)
        ]
        got = program(*arrays, backend="interpret")
        assert got.dtype == np.float16
        expected = batched_causal_scaled(*(a.astype(np.float32) for a in arrays))
        np.testing.assert_allclose(
            got.astype(np.float32), expected, rtol=2e-2, atol=2e-3
        )


def test_mixed_precision_attention_is_one_kernel() -> None:
    """``mixed_precision="bfloat16"`` casts the matmuls' operands, the
    probabilities included, to bfloat16: the chain still fuses (the kernel
    rounds each block's terms), and agrees with the reference interpreter
    of the same program within bfloat16 rounding."""
    program = irc.compile(causal_where, *QKV, mixed_precision="bfloat16")
    assert [k.kind_name for k in kernels(program)] == ["attention"]
    for length in (5, 130):
        arrays = _qkv(np.random.default_rng(length), length)
        np.testing.assert_allclose(
            program(*arrays, backend="interpret"),
            program(*arrays, backend="reference"),
            rtol=2**-7,
            atol=2**-7,
        )
