"""A whole training step in one program: the loss of a two-layer MLP, its
gradients and an Adam update of a pytree of parameters, compiled once with
the batch symbolic, against the same step in NumPy with hand-derived
gradients, over 20 steps."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import irc

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
