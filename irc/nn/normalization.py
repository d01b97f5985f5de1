"""Normalizations, each a NumPy decomposition (see :mod:`irc.nn`): layer
normalization, and batch (inference), instance and group normalization over
channels-first tensors."""

from __future__ import annotations

from typing import Any

import numpy as np

from irc.errors import IrcError


def layer_norm(
    x: Any,
    axes: tuple[int, ...],
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-5,
    stash_dtype: Any = None,
) -> tuple[Any, Any, Any]:
    """Layer normalization over ``axes``: ``(y, mean, 1/std)``, the
    statistics (kept dims) in ``stash_dtype`` (float32 for 16-bit ``x``, as
    ONNX's ``stash_type`` and torch's ``native_layer_norm`` keep them),
    ``y`` in ``x``'s dtype."""
    stash = np.dtype(stash_dtype or x.dtype)
    wide = x.astype(stash) if np.dtype(x.dtype) != stash else x
    mean = np.mean(wide, axis=axes, keepdims=True)
    centered = wide - mean
    variance = np.mean(centered * centered, axis=axes, keepdims=True)
    inverse = 1 / np.sqrt(variance + eps)
    y = (centered * inverse).astype(x.dtype)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y, mean, inverse


def batch_norm(
    x: Any, scale: Any, bias: Any, mean: Any, variance: Any, eps: float = 1e-5
) -> Any:
    """Batch normalization in inference over ``[N, C, *S]``: the running
    statistics and the affine, per channel, folded into one multiply-add on
    ``x`` (what a convolution's epilogue takes)."""
    multiplier = scale / np.sqrt(variance + eps)
    shift = bias - mean * multiplier
    channel_axis = (-1,) + (1,) * (np.ndim(x) - 2)
    return x * np.reshape(multiplier, channel_axis) + np.reshape(shift, channel_axis)


def instance_norm(x: Any, scale: Any, bias: Any, eps: float = 1e-5) -> Any:
    """Each channel of each sample of ``[N, C, *S]`` normalized over its
    spatial axes, then scaled and shifted per channel."""
    axes = tuple(range(2, np.ndim(x)))
    y, _, _ = layer_norm(x, axes, eps=eps)
    channel_axis = (-1,) + (1,) * (np.ndim(x) - 2)
    return y * np.reshape(scale, channel_axis) + np.reshape(bias, channel_axis)


def group_norm(
    x: Any, groups: int, scale: Any = None, bias: Any = None, eps: float = 1e-5
) -> Any:
    """``[N, C, *S]`` normalized over each group of ``C / groups`` channels
    and the spatial axes, then scaled and shifted per channel."""
    batch, channels = x.shape[0], x.shape[1]
    if channels % groups:
        raise IrcError(f"group_norm: {groups} groups do not divide {channels} channels")
    grouped = x.reshape(batch, groups, channels // groups, *x.shape[2:])
    y, _, _ = layer_norm(grouped, tuple(range(2, np.ndim(grouped))), eps=eps)
    y = y.reshape(x.shape)
    channel_axis = (-1,) + (1,) * (np.ndim(x) - 2)
    if scale is not None:
        y = y * np.reshape(scale, channel_axis)
    if bias is not None:
        y = y + np.reshape(bias, channel_axis)
    return y
