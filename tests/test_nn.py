"""``irc.nn``'s activations against PyTorch's, an independent implementation:
captured with a symbolic size and run on the reference interpreter and on
Triton's interpreter, and eagerly on NumPy arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import irc
from irc import nn

#: Each activation with PyTorch's, at PyTorch's default parameters.
ACTIVATIONS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "relu": (nn.relu, F.relu),
    "leaky_relu": (nn.leaky_relu, F.leaky_relu),
    "elu": (nn.elu, F.elu),
    "celu": (nn.celu, F.celu),
    "selu": (nn.selu, F.selu),
    "hard_sigmoid": (nn.hard_sigmoid, F.hardsigmoid),
    "hard_swish": (nn.hard_swish, F.hardswish),
    "softplus": (nn.softplus, lambda x: F.softplus(x, threshold=1e9)),
    "softsign": (nn.softsign, F.softsign),
    "mish": (nn.mish, F.mish),
    "silu": (nn.silu, F.silu),
    "gelu": (nn.gelu, F.gelu),
    "gelu_tanh": (
        lambda x: nn.gelu(x, approximate="tanh"),
        lambda x: F.gelu(x, approximate="tanh"),
    ),
    "thresholded_relu": (nn.thresholded_relu, lambda x: F.threshold(x, 1.0, 0.0)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_matches_pytorch(name: str) -> None:
    ours, theirs = ACTIVATIONS[name]
    compiled = irc.compile(ours, irc.TensorSpec(("N",), "float32"))
    assert compiled.num_kernels == 1
    rng = np.random.default_rng(0)
    for size in (1, 37):
        x = (rng.standard_normal(size) * 4).astype(np.float32)
        x[0] = 0.0
        expected = theirs(torch.from_numpy(x)).numpy()
        for backend in ("reference", "interpret"):
            np.testing.assert_allclose(
                compiled(x, backend=backend), expected, rtol=2e-6, atol=2e-6
            )
        np.testing.assert_allclose(ours(x), expected, rtol=2e-6, atol=2e-6)


def test_gelu_names_its_approximations() -> None:
    with pytest.raises(irc.IrcError, match="'none' or 'tanh', not 'erf'"):
        nn.gelu(np.zeros(2, np.float32), approximate="erf")
