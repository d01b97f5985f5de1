"""Activation functions and softmax, each a NumPy decomposition (see
:mod:`irc.nn`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from irc.capture.numpy_api import erf, sigmoid
from irc.errors import IrcError

__all__ = [
    "celu",
    "elu",
    "gelu",
    "hard_sigmoid",
    "hard_swish",
    "leaky_relu",
    "log_softmax",
    "mish",
    "relu",
    "selu",
    "silu",
    "softmax",
    "softplus",
    "softsign",
    "thresholded_relu",
]

#: SELU's constants (Klambauer et al.), as ONNX and PyTorch round them.
SELU_ALPHA = 1.67326319217681884765625
SELU_SCALE = 1.05070102214813232421875


def relu(x: Any) -> Any:
    """``max(x, 0)``."""
    return np.maximum(x, 0)


def leaky_relu(x: Any, negative_slope: float = 0.01) -> Any:
    return np.where(np.less(x, 0), x * negative_slope, x)


def elu(x: Any, alpha: float = 1.0) -> Any:
    return np.where(np.less(x, 0), (np.exp(x) - 1) * alpha, x)


def celu(x: Any, alpha: float = 1.0) -> Any:
    negative = (np.exp(x / alpha) - 1) * alpha
    return np.maximum(x, 0) + np.minimum(negative, 0)


def selu(x: Any, alpha: float = SELU_ALPHA, scale: float = SELU_SCALE) -> Any:
    return np.where(np.less_equal(x, 0), (np.exp(x) - 1) * alpha, x) * scale


def thresholded_relu(x: Any, threshold: float = 1.0) -> Any:
    """``x`` above ``threshold``, else 0 (a zero of ``x``'s type)."""
    return np.where(np.greater(x, threshold), x, x * 0)


def hard_sigmoid(x: Any, alpha: float = 1 / 6, beta: float = 0.5) -> Any:
    """``clip(alpha * x + beta, 0, 1)``: PyTorch's defaults (ONNX's are 0.2
    and 0.5)."""
    return np.clip(x * alpha + beta, 0, 1)


def hard_swish(x: Any) -> Any:
    return x * hard_sigmoid(x)


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``, as ONNX defines it (no threshold)."""
    return np.log(np.exp(x) + 1)


def softsign(x: Any) -> Any:
    return x / (np.abs(x) + 1)


def mish(x: Any) -> Any:
    return x * np.tanh(softplus(x))


def silu(x: Any) -> Any:
    """``x * sigmoid(x)`` (swish)."""
    return x * sigmoid(x)


def gelu(x: Any, approximate: str = "none") -> Any:
    """``x * Phi(x)``, with erf (``"none"``) or the tanh approximation."""
    if approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * math.sqrt(2 / math.pi)
        return x * (np.tanh(inner) + 1) * 0.5
    if approximate != "none":
        raise IrcError(
            f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}"
        )
    return x * (erf(x * (1 / math.sqrt(2))) + 1) * 0.5


def softmax(x: Any, axis: int = -1) -> Any:
    """``exp(x) / sum(exp(x))`` along ``axis``, shifted by the maximum (the
    form fusion recognises as one row kernel)."""
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exponentials = np.exp(shifted)
    return exponentials / np.sum(exponentials, axis=axis, keepdims=True)


def log_softmax(x: Any, axis: int = -1) -> Any:
    """``x - log(sum(exp(x)))`` along ``axis``, shifted by the maximum."""
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
