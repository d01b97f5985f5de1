"""Whole training steps in one program: the loss of a two-layer MLP (and of
the GPT-2-style block with a next-token cross-entropy), its gradients and an
Adam update of a pytree of parameters, compiled once with
the batch symbolic, against the same step in NumPy with hand-derived
gradients, over 20 steps."""

from __future__ import annotations

from typing import Any

import numpy as np
import programs
import pytest

import irc
from irc import pytree

LEARNING_RATE, BETA1, BETA2, EPSILON = 0.05, 0.9, 0.999, 1e-8
STEPS = 20


def mlp_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    error = hidden @ params["w2"] + params["b2"] - y
    return (error**2).mean()


def adam(
    params: dict[str, Any],
    gradients: dict[str, Any],
    m: dict[str, Any],
    v: dict[str, Any],
    t: Any,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """One Adam update, written once for NumPy arrays and traced values."""
    new_params, new_m, new_v = {}, {}, {}
    for name, gradient in gradients.items():
        new_m[name] = BETA1 * m[name] + (1 - BETA1) * gradient
        new_v[name] = BETA2 * v[name] + (1 - BETA2) * gradient**2
        m_hat = new_m[name] / (1 - BETA1**t)
        v_hat = new_v[name] / (1 - BETA2**t)
        new_params[name] = params[name] - LEARNING_RATE * m_hat / (
            np.sqrt(v_hat) + EPSILON
        )
    return new_params, new_m, new_v


def train_step(
    params: dict[str, Any],
    m: dict[str, Any],
    v: dict[str, Any],
    t: Any,
    x: Any,
    y: Any,
) -> tuple[Any, dict[str, Any], dict[str, Any], dict[str, Any]]:
    loss, gradients = irc.value_and_grad(mlp_loss)(params, x, y)
    return (loss, *adam(params, gradients, m, v, t))


def numpy_gradients(
    params: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray
) -> dict[str, np.ndarray]:
    """The MLP loss's gradients, derived by hand."""
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    error = hidden @ params["w2"] + params["b2"] - y
    d_out = 2 * error / error.size
    d_pre = (d_out @ params["w2"].T) * (1 - hidden**2)
    return {
        "w1": x.T @ d_pre,
        "b1": d_pre.sum(axis=0),
        "w2": hidden.T @ d_out,
        "b2": d_out.sum(axis=0),
    }


def numpy_step(
    params: dict[str, np.ndarray],
    m: dict[str, np.ndarray],
    v: dict[str, np.ndarray],
    t: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
) -> tuple[Any, ...]:
    return (
        mlp_loss(params, x, y),
        *adam(params, numpy_gradients(params, x, y), m, v, t),
    )


def initial_state(
    generator: np.random.Generator,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    params = {
        "w1": generator.standard_normal((3, 8)) * 0.5,
        "b1": np.zeros(8),
        "w2": generator.standard_normal((8, 2)) * 0.5,
        "b2": np.zeros(2),
    }
    zeros = {name: np.zeros_like(p) for name, p in params.items()}
    return params, zeros, dict(zeros)


@pytest.fixture(scope="module")
def compiled_step() -> irc.Compiled:
    params, _, _ = initial_state(np.random.default_rng(0))
    specs = {name: irc.TensorSpec(p.shape, "float64") for name, p in params.items()}
    return irc.compile(
        train_step,
        specs,
        dict(specs),
        dict(specs),
        irc.TensorSpec((), "float64"),
        irc.TensorSpec(("B", 3), "float64"),
        irc.TensorSpec(("B", 2), "float64"),
    )


def regression_data(
    generator: np.random.Generator, batch: int
) -> tuple[np.ndarray, np.ndarray]:
    x = generator.standard_normal((batch, 3))
    y = np.stack([np.sin(x[:, 0]) + x[:, 1], x[:, 2] * x[:, 0]], axis=1)
    return x, y


def test_the_step_is_one_program(compiled_step: irc.Compiled) -> None:
    text = compiled_step.ir("graph")
    assert text.count("func.func") == 1
    assert "!graph.tensor<[B, 3], f64>" in text


@pytest.mark.parametrize("batch", [16, 5])
def test_twenty_steps_match_numpy_and_the_loss_falls(
    compiled_step: irc.Compiled, batch: int
) -> None:
    generator = np.random.default_rng(batch)
    params, m, v = initial_state(generator)
    expected_params, expected_m, expected_v = params, m, v
    x, y = regression_data(generator, batch)
    losses = []
    for step in range(1, STEPS + 1):
        t = np.asarray(float(step))
        loss, params, m, v = compiled_step(params, m, v, t, x, y, backend="reference")
        expected = numpy_step(expected_params, expected_m, expected_v, t, x, y)
        expected_loss, expected_params, expected_m, expected_v = expected
        np.testing.assert_allclose(loss, expected_loss, rtol=1e-10)
        for name in params:
            np.testing.assert_allclose(
                params[name], expected_params[name], rtol=1e-8, atol=1e-12
            )
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0], losses


def test_a_step_runs_on_the_triton_interpreter(compiled_step: irc.Compiled) -> None:
    generator = np.random.default_rng(1)
    params, m, v = initial_state(generator)
    x, y = regression_data(generator, 4)
    t = np.asarray(1.0)
    loss, new_params, _, _ = compiled_step(params, m, v, t, x, y, backend="interpret")
    expected_loss, expected_params, _, _ = numpy_step(params, m, v, t, x, y)
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-10)
    for name in params:
        np.testing.assert_allclose(new_params[name], expected_params[name], rtol=1e-8)


# The GPT-2-style block with a next-token cross-entropy on top -----------------

VOCAB = 11


def next_token_loss(params: dict[str, Any], x: Any, targets: Any) -> Any:
    """The mean cross-entropy of the block's next-token logits."""
    hidden = programs.transformer_block(x, **params["block"], n_head=programs.N_HEAD)
    logits = hidden @ params["w_out"]
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    log_p = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
    chosen = targets[:, None] == np.arange(VOCAB)
    return -np.mean(np.sum(np.where(chosen, log_p, 0.0), axis=-1))


def gpt2_train_step(
    params: dict[str, Any],
    m: dict[str, Any],
    v: dict[str, Any],
    t: Any,
    x: Any,
    targets: Any,
) -> tuple[Any, ...]:
    loss, gradients = irc.value_and_grad(next_token_loss)(params, x, targets)
    return (loss, *tree_adam(params, gradients, m, v, t))


def tree_adam(
    params: dict[str, Any],
    gradients: dict[str, Any],
    m: dict[str, Any],
    v: dict[str, Any],
    t: Any,
) -> tuple[Any, Any, Any]:
    """``adam`` over the leaves of nested dicts."""
    leaves, tree = pytree.flatten(params)
    names = [str(i) for i in range(len(leaves))]

    def flat(value: Any) -> dict[str, Any]:
        return dict(zip(names, pytree.flatten(value)[0], strict=True))

    new = adam(flat(params), flat(gradients), flat(m), flat(v), t)
    return tuple(pytree.unflatten(tree, [part[n] for n in names]) for part in new)


# Hand-derived gradients of the block, layer by layer: each ``*_backward``
# takes the forward's inputs and the cotangent of its output.


def linear_backward(
    x: np.ndarray, w: np.ndarray, d_out: np.ndarray
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    return d_out @ w.T, {"w": x.T @ d_out, "b": d_out.sum(axis=0)}


def gelu_backward(x: np.ndarray, d_out: np.ndarray) -> np.ndarray:
    c = np.sqrt(2 / np.pi)
    t = np.tanh(c * (x + 0.044715 * x**3))
    slope = 0.5 * (1 + t) + 0.5 * x * (1 - t**2) * c * (1 + 3 * 0.044715 * x**2)
    return d_out * slope


def layer_norm_backward(
    x: np.ndarray, g: np.ndarray, d_out: np.ndarray, eps: float = 1e-5
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    std = np.sqrt(np.var(x, axis=-1, keepdims=True) + eps)
    normed = (x - np.mean(x, axis=-1, keepdims=True)) / std
    d_normed = d_out * g
    d_x = (
        d_normed
        - d_normed.mean(axis=-1, keepdims=True)
        - normed * (d_normed * normed).mean(axis=-1, keepdims=True)
    ) / std
    return d_x, {"g": (d_out * normed).sum(axis=0), "b": d_out.sum(axis=0)}


def attention_backward(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray, d_out: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    scale = 1 / np.sqrt(q.shape[-1])
    p = programs.softmax(q @ k.T * scale + mask)
    d_p = d_out @ v.T
    d_scores = p * (d_p - (d_p * p).sum(axis=-1, keepdims=True))
    return d_scores @ k * scale, d_scores.T @ q * scale, p.T @ d_out


def mha_backward(
    x: np.ndarray,
    c_attn: dict[str, np.ndarray],
    c_proj: dict[str, np.ndarray],
    d_out: np.ndarray,
) -> tuple[np.ndarray, dict[str, Any]]:
    n_head = programs.N_HEAD
    qkv = programs.linear(x, **c_attn)
    heads = [np.split(part, n_head, axis=-1) for part in np.split(qkv, 3, axis=-1)]
    mask = (1 - np.tri(x.shape[0])) * -1e10
    outs = [programs.attention(q, k, v, mask) for q, k, v in zip(*heads)]
    d_hstack, d_c_proj = linear_backward(np.hstack(outs), c_proj["w"], d_out)
    d_parts: list[list[np.ndarray]] = [[], [], []]
    for (q, k, v), d_head in zip(zip(*heads), np.split(d_hstack, n_head, axis=-1)):
        for part, d in zip(d_parts, attention_backward(q, k, v, mask, d_head)):
            part.append(d)
    d_qkv = np.concatenate([np.concatenate(p, axis=-1) for p in d_parts], axis=-1)
    d_x, d_c_attn = linear_backward(x, c_attn["w"], d_qkv)
    return d_x, {"c_attn": d_c_attn, "c_proj": d_c_proj}


def block_backward(
    x: np.ndarray, block: dict[str, Any], d_out: np.ndarray
) -> dict[str, Any]:
    """The gradients of the block's parameters (its input is data)."""
    ln_1, ln_2, attn, mlp = block["ln_1"], block["ln_2"], block["attn"], block["mlp"]
    normed_1 = programs.layer_norm(x, **ln_1)
    middle = x + programs.mha(normed_1, **attn, n_head=programs.N_HEAD)
    normed_2 = programs.layer_norm(middle, **ln_2)
    pre = programs.linear(normed_2, **mlp["c_fc"])
    d_gelu, d_c_proj = linear_backward(programs.gelu(pre), mlp["c_proj"]["w"], d_out)
    d_normed_2, d_c_fc = linear_backward(
        normed_2, mlp["c_fc"]["w"], gelu_backward(pre, d_gelu)
    )
    d_middle_ln, d_ln_2 = layer_norm_backward(middle, ln_2["g"], d_normed_2)
    d_middle = d_out + d_middle_ln
    d_normed_1, d_attn = mha_backward(
        normed_1, attn["c_attn"], attn["c_proj"], d_middle
    )
    _, d_ln_1 = layer_norm_backward(x, ln_1["g"], d_normed_1)
    return {
        "mlp": {"c_fc": d_c_fc, "c_proj": d_c_proj},
        "attn": d_attn,
        "ln_1": d_ln_1,
        "ln_2": d_ln_2,
    }


def next_token_gradients(
    params: dict[str, Any], x: np.ndarray, targets: np.ndarray
) -> dict[str, Any]:
    hidden = programs.transformer_block(x, **params["block"], n_head=programs.N_HEAD)
    p = programs.softmax(hidden @ params["w_out"])
    d_logits = (p - (targets[:, None] == np.arange(VOCAB))) / len(targets)
    return {
        "block": block_backward(x, params["block"], d_logits @ params["w_out"].T),
        "w_out": hidden.T @ d_logits,
    }


def gpt2_state(
    generator: np.random.Generator,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    as_f64 = pytree.map_leaves(
        lambda a: a.astype(np.float64), programs.weights(generator)
    )
    params = {
        "block": as_f64,
        "w_out": generator.standard_normal((programs.N_EMBD, VOCAB)) * 0.3,
    }
    zeros = pytree.map_leaves(np.zeros_like, params)
    return params, zeros, pytree.map_leaves(np.zeros_like, params)


def test_the_gpt2_block_trains_in_one_program_as_numpy_does() -> None:
    generator = np.random.default_rng(7)
    params, m, v = gpt2_state(generator)
    specs = pytree.map_leaves(lambda a: irc.TensorSpec(a.shape, "float64"), params)
    compiled = irc.compile(
        gpt2_train_step,
        specs,
        specs,
        specs,
        irc.TensorSpec((), "float64"),
        irc.TensorSpec(("seq", programs.N_EMBD), "float64"),
        irc.TensorSpec(("seq",), "int64"),
    )
    assert compiled.ir("graph").count("func.func") == 1
    seq = 6
    x = generator.standard_normal((seq, programs.N_EMBD))
    targets = generator.integers(0, VOCAB, seq)
    expected = (params, m, v)
    losses = []
    for step in range(1, STEPS + 1):
        t = np.asarray(float(step))
        loss, params, m, v = compiled(params, m, v, t, x, targets, backend="reference")
        gradients = next_token_gradients(expected[0], x, targets)
        expected_loss = next_token_loss(expected[0], x, targets)
        expected = tree_adam(*expected[:1], gradients, *expected[1:], t)
        np.testing.assert_allclose(loss, expected_loss, rtol=1e-9)
        for got, want in zip(pytree.flatten(params)[0], pytree.flatten(expected[0])[0]):
            np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10)
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0], losses
