"""Convolution and pooling over channels-first tensors (``[N, C, *spatial]``,
as ONNX and PyTorch lay them out), each a NumPy decomposition (see
:mod:`irc.nn`).

A window is a strided slice of the padded input, one per kernel offset:
convolution stacks the windows (im2col) and contracts them with the weight
in one ``einsum``; pooling takes their elementwise maximum or sum, which
fusion makes one kernel. Sizes stay symbolic: an output size is
``(size + pad_lo + pad_hi - dilation * (kernel - 1) - 1) // stride + 1``.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from irc.errors import IrcError

__all__ = [
    "avg_pool",
    "conv",
    "conv_transpose",
    "global_avg_pool",
    "global_max_pool",
    "max_pool",
]

#: ``padding``: one amount for every spatial axis, one per axis, a
#: ``(before, after)`` pair per axis, or ``"valid"`` (none), ``"same"`` /
#: ``"same_upper"`` (the output size is ``ceil(size / stride)``, the odd
#: amount after) or ``"same_lower"`` (the odd amount before).
Padding = int | str | Sequence[int] | Sequence[tuple[int, int]]
Pads = list[tuple[int, int]]

#: einsum letters for up to three spatial axes.
_SPATIAL_LETTERS = "xyz"


def conv(
    x: Any,
    weight: Any,
    bias: Any = None,
    *,
    strides: int | Sequence[int] = 1,
    padding: Padding = 0,
    dilations: int | Sequence[int] = 1,
    groups: int = 1,
) -> Any:
    """Cross-correlation of ``x`` (``[N, C, *S]`` or unbatched ``[C, *S]``)
    with ``weight`` (``[O, C / groups, *K]``), plus ``bias`` (``[O]``), as
    ``torch.nn.functional.conv{1,2,3}d`` and ONNX's ``Conv`` compute it."""
    spatial = np.ndim(weight) - 2
    _check_spatial_rank("conv", spatial)
    if np.ndim(x) == spatial + 1:  # unbatched
        return conv(
            x[None], weight, bias, strides=strides, padding=padding,
            dilations=dilations, groups=groups,
        )[0]  # fmt: skip
    _check_rank("conv", x, spatial + 2, "[N, C, *spatial]")
    kernel = tuple(weight.shape[2:])
    strides_ = _per_axis("conv", "strides", strides, spatial)
    dilations_ = _per_axis("conv", "dilations", dilations, spatial)
    channels, out_channels = x.shape[1], weight.shape[0]
    _check_groups(channels, out_channels, weight.shape[1], groups)
    pads = _pads("conv", padding, x.shape[2:], kernel, strides_, dilations_)
    padded = pad_spatial(x, pads, 0)
    sizes = _output_sizes(padded.shape[2:], kernel, strides_, dilations_)
    windows = _windows(padded, kernel, strides_, dilations_, sizes)
    positions = len(windows)
    # [N, C, P, *out]: channel-major, as the weight's [O, C/groups, *K] flattens.
    columns = np.stack(windows, axis=2)
    letters = _SPATIAL_LETTERS[:spatial]
    batch = x.shape[0]
    depth = (channels // groups) * positions
    if groups == 1:
        columns = columns.reshape(batch, depth, *sizes)
        kernel_matrix = weight.reshape(out_channels, depth)
        y = np.einsum(f"nk{letters},ok->no{letters}", columns, kernel_matrix)
    else:
        columns = columns.reshape(batch, groups, depth, *sizes)
        kernel_matrix = weight.reshape(groups, out_channels // groups, depth)
        y = np.einsum(f"ngk{letters},gok->ngo{letters}", columns, kernel_matrix)
        y = y.reshape(batch, out_channels, *sizes)
    if bias is not None:
        y = y + np.reshape(bias, (out_channels,) + (1,) * spatial)
    return y


def conv_transpose(
    x: Any,
    weight: Any,
    bias: Any = None,
    *,
    strides: int | Sequence[int] = 1,
    padding: int | Sequence[int] | Sequence[tuple[int, int]] = 0,
    output_padding: int | Sequence[int] = 0,
    dilations: int | Sequence[int] = 1,
    groups: int = 1,
) -> Any:
    """The transpose of :func:`conv` (the gradient of a convolution with
    respect to its input) of ``x`` (``[N, C, *S]``) with ``weight``
    (``[C, O / groups, *K]``), as ``torch.nn.functional.conv_transpose{1,2,3}d``
    and ONNX's ``ConvTranspose`` compute it: each output size is
    ``(size - 1) * stride - pad_lo - pad_hi + dilation * (kernel - 1) +
    output_padding + 1``. A negative padding amount grows the output by that
    many elements (zero, plus the bias) on its side, as ONNX's
    ``output_shape`` can ask."""
    spatial = np.ndim(weight) - 2
    _check_spatial_rank("conv_transpose", spatial)
    if np.ndim(x) == spatial + 1:
        return conv_transpose(
            x[None], weight, bias, strides=strides, padding=padding,
            output_padding=output_padding, dilations=dilations, groups=groups,
        )[0]  # fmt: skip
    _check_rank("conv_transpose", x, spatial + 2, "[N, C, *spatial]")
    kernel = tuple(weight.shape[2:])
    strides_ = _per_axis("conv_transpose", "strides", strides, spatial)
    dilations_ = _per_axis("conv_transpose", "dilations", dilations, spatial)
    extra = _per_axis("conv_transpose", "output_padding", output_padding, spatial, 0)
    if isinstance(padding, str):
        raise IrcError(
            f"conv_transpose: padding must be amounts, not {padding!r} (compute "
            "the amounts that give the output size you want)"
        )
    pads = _explicit_pads("conv_transpose", padding, spatial, negative=True)
    channels, out_per_group = x.shape[1], weight.shape[1]
    if weight.shape[0] != channels or channels % groups:
        raise IrcError(
            f"conv_transpose: a weight [{weight.shape[0]}, ...] and {groups} "
            f"groups for {channels} input channels; the weight is "
            "[C, O / groups, *kernel]"
        )
    # A stride-1 convolution of the input with strides - 1 zeros between its
    # elements, padded by the kernel's extent less the padding, with the
    # kernel flipped and its channel axes swapped.
    for axis, stride in enumerate(strides_):
        x = _interleave_zeros(x, 2 + axis, stride)
    reach = [d * (k - 1) for d, k in zip(dilations_, kernel)]
    x = pad_spatial(
        x,
        [(r - lo, r - hi + e) for r, (lo, hi), e in zip(reach, pads, extra)],
        0,
    )
    flipped = weight[(slice(None), slice(None)) + (slice(None, None, -1),) * spatial]
    regrouped = flipped.reshape(groups, channels // groups, out_per_group, *kernel)
    swapped = np.swapaxes(regrouped, 1, 2).reshape(
        groups * out_per_group, channels // groups, *kernel
    )
    return conv(x, swapped, bias, dilations=dilations_, groups=groups)


def max_pool(
    x: Any,
    kernel: Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    padding: Padding = 0,
    dilations: int | Sequence[int] = 1,
    ceil_mode: bool = False,
) -> Any:
    """The maximum over each window of the last ``len(kernel)`` axes of
    ``x``, as ``torch.nn.functional.max_pool{1,2,3}d`` and ONNX's
    ``MaxPool`` compute it (``strides`` defaults to the kernel, as in
    PyTorch; padding is never the maximum)."""
    fill = _lowest(x.dtype)
    windows = _pooling_windows(
        "max_pool", x, kernel, strides, padding, dilations, ceil_mode, fill
    )
    return functools.reduce(np.maximum, windows)


def avg_pool(
    x: Any,
    kernel: Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    padding: Padding = 0,
    dilations: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Any:
    """The mean over each window of the last ``len(kernel)`` axes of ``x``,
    as ``torch.nn.functional.avg_pool{1,2,3}d`` and ONNX's ``AveragePool``
    compute it (ONNX's also with ``dilations``): the divisor counts the
    explicit padding when ``count_include_pad`` (ONNX's default is not to,
    PyTorch's is), never what ``ceil_mode`` adds past it."""
    kernel = tuple(kernel)
    windows = _pooling_windows(
        "avg_pool", x, kernel, strides, padding, dilations, ceil_mode, 0
    )
    total = functools.reduce(np.add, windows)
    if divisor_override is not None:
        return total / divisor_override
    spatial = len(kernel)
    dilations_ = _per_axis("avg_pool", "dilations", dilations, spatial)
    pads = _pads("avg_pool", padding, x.shape[-spatial:], kernel,
                 _strides(strides, kernel), dilations_)  # fmt: skip
    if not ceil_mode and (count_include_pad or not any(map(any, pads))):
        return total / math.prod(kernel)
    # The divisor at each output position: the same windows over ones where
    # the input is (and where counted padding is).
    ones = np.ones_like(x[(0,) * (np.ndim(x) - spatial)])
    counted = 1 if count_include_pad else 0
    padded_ones = pad_spatial(ones, pads, counted)
    counts = _pooling_windows(
        "avg_pool", padded_ones, kernel, strides, 0, dilations_, ceil_mode, 0,
        input_sizes=x.shape[-spatial:], input_pads=pads,
    )  # fmt: skip
    return total / functools.reduce(np.add, counts).astype(total.dtype)


def global_avg_pool(x: Any) -> Any:
    """The mean over every spatial axis of ``[N, C, *S]``, kept as size 1."""
    return np.mean(x, axis=tuple(range(2, np.ndim(x))), keepdims=True)


def global_max_pool(x: Any) -> Any:
    """The maximum over every spatial axis of ``[N, C, *S]``, kept as size 1."""
    return np.max(x, axis=tuple(range(2, np.ndim(x))), keepdims=True)


def pad_spatial(x: Any, pads: Pads, value: float) -> Any:
    """``x`` with its last ``len(pads)`` axes padded by ``value``; a negative
    amount crops instead."""
    if not any(lo or hi for lo, hi in pads):
        return x
    lead = [(0, 0)] * (np.ndim(x) - len(pads))
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
    if any(lo or hi for lo, hi in grow):
        x = np.pad(x, lead + grow, constant_values=value)
    if all(lo >= 0 and hi >= 0 for lo, hi in pads):
        return x
    sizes = x.shape[-len(pads) :]
    crop = tuple(
        slice(-min(lo, 0), size + min(hi, 0)) for (lo, hi), size in zip(pads, sizes)
    )
    return x[(Ellipsis, *crop)]


def _pooling_windows(
    op: str,
    x: Any,
    kernel: Sequence[int],
    strides: int | Sequence[int] | None,
    padding: Padding,
    dilations: int | Sequence[int],
    ceil_mode: bool,
    fill: float,
    *,
    input_sizes: Sequence[Any] | None = None,
    input_pads: Pads | None = None,
) -> list[Any]:
    """The windows of ``x``'s last ``len(kernel)`` axes, padded with
    ``fill``. ``input_sizes`` and ``input_pads`` say which sizes and padding
    ``ceil_mode``'s output size is computed from, where ``x`` is already
    padded."""
    kernel = tuple(kernel)
    spatial = len(kernel)
    _check_spatial_rank(op, spatial)
    if np.ndim(x) < spatial:
        raise IrcError(
            f"{op}: a {spatial}-d kernel needs an input of rank at least "
            f"{spatial}, not {np.ndim(x)}"
        )
    strides_ = _strides(strides, kernel)
    dilations_ = _per_axis(op, "dilations", dilations, spatial)
    sizes = tuple(x.shape[-spatial:])
    pads = _pads(op, padding, sizes, kernel, strides_, dilations_)
    if input_sizes is None:
        input_sizes, input_pads = sizes, pads
    if ceil_mode:  # the overhang takes ``fill`` too: it never counts
        pads = [
            (lo, hi + _ceil_overhang(op, size, input_pad, k, s, d))
            for (lo, hi), size, input_pad, k, s, d in zip(
                pads, input_sizes, input_pads, kernel, strides_, dilations_
            )
        ]
    padded = pad_spatial(x, pads, fill)
    out = _output_sizes(padded.shape[-spatial:], kernel, strides_, dilations_)
    return _windows(padded, kernel, strides_, dilations_, out)


def _ceil_overhang(
    op: str, size: Any, pads: tuple[int, int], kernel: int, stride: int, dilation: int
) -> int:
    """How far past the padded input ``ceil_mode``'s last window reaches: the
    output size rounds up, but the last window must start inside the input
    or its leading padding (PyTorch's and ONNX's rule)."""
    if stride == 1:
        return 0
    lo, hi = pads
    reach = dilation * (kernel - 1) + 1
    if not isinstance(size, int):
        raise IrcError(
            f"{op}: ceil_mode with stride {stride} needs the spatial sizes "
            f"known, and one is symbolic ({size}); pass ceil_mode=False or "
            "give that axis a concrete size"
        )
    out = -(-(size + lo + hi - reach) // stride) + 1
    if (out - 1) * stride >= size + lo:
        out -= 1
    return max((out - 1) * stride + reach - (size + lo + hi), 0)


def _windows(
    x: Any,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    sizes: Sequence[Any],
) -> list[Any]:
    """One strided slice of ``x``'s last axes per kernel offset, row-major:
    element ``o`` of the slice at offset ``k`` is ``x[o * stride + k *
    dilation]``."""
    windows = []
    for offsets in itertools.product(*(range(k) for k in kernel)):
        index = tuple(
            slice(k * d, k * d + s * (size - 1) + 1, s)
            for k, d, s, size in zip(offsets, dilations, strides, sizes)
        )
        windows.append(x[(Ellipsis, *index)])
    return windows


def _output_sizes(
    padded: Sequence[Any],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> list[Any]:
    sizes = []
    for size, k, s, d in zip(padded, kernel, strides, dilations):
        out = (size - d * (k - 1) - 1) // s + 1
        if isinstance(out, int) and out < 1:
            raise IrcError(
                f"a window of {k} (dilation {d}) does not fit in a padded "
                f"size of {size}: the output would be empty"
            )
        sizes.append(out)
    return sizes


def _interleave_zeros(x: Any, axis: int, stride: int) -> Any:
    """``x`` with ``stride - 1`` zeros between its elements along ``axis``."""
    if stride == 1:
        return x
    zeros = np.zeros_like(x)
    spread = np.stack([x] + [zeros] * (stride - 1), axis=axis + 1)
    shape = list(x.shape)
    size = shape[axis]
    shape[axis] = size * stride
    spread = spread.reshape(shape)
    index = [slice(None)] * np.ndim(x)
    index[axis] = slice(0, size * stride - (stride - 1))
    return spread[tuple(index)]


def _pads(
    op: str,
    padding: Padding,
    sizes: Sequence[Any],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> Pads:
    if not isinstance(padding, str):
        return _explicit_pads(op, padding, len(kernel))
    mode = padding.lower()
    if mode == "valid":
        return [(0, 0)] * len(kernel)
    if mode not in ("same", "same_upper", "same_lower"):
        raise IrcError(
            f"{op}: padding {padding!r} is none of 'valid', 'same', "
            "'same_upper', 'same_lower'"
        )
    pads = []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        reach = d * (k - 1) + 1
        if s == 1:
            total = reach - 1
        elif isinstance(size, int):
            total = max((-(-size // s) - 1) * s + reach - size, 0)
        else:
            raise IrcError(
                f"{op}: padding {padding!r} with stride {s} needs the spatial "
                f"sizes known, and one is symbolic ({size}); give explicit "
                "padding amounts or a concrete size"
            )
        small = total // 2
        pads.append(
            (total - small, small) if mode == "same_lower" else (small, total - small)
        )
    return pads


def _explicit_pads(
    op: str,
    padding: int | Sequence[int] | Sequence[tuple[int, int]],
    rank: int,
    *,
    negative: bool = False,
) -> Pads:
    if isinstance(padding, int):
        pads = [(padding, padding)] * rank
    else:
        items = list(padding)
        if len(items) != rank:
            raise IrcError(
                f"{op}: {len(items)} padding amounts for {rank} spatial axes; "
                "give one amount or (before, after) pair per axis"
            )
        pads = [
            (item, item) if isinstance(item, int) else (int(item[0]), int(item[1]))
            for item in items
        ]
    if not negative and any(lo < 0 or hi < 0 for lo, hi in pads):
        raise IrcError(f"{op}: padding must not be negative, got {pads}")
    return pads


def _strides(
    strides: int | Sequence[int] | None, kernel: Sequence[int]
) -> tuple[int, ...]:
    if strides is None:
        return tuple(kernel)
    return _per_axis("pool", "strides", strides, len(kernel))


def _per_axis(
    op: str, name: str, value: int | Sequence[int], rank: int, least: int = 1
) -> tuple[int, ...]:
    values = (value,) * rank if isinstance(value, int) else tuple(value)
    if len(values) != rank or any(not isinstance(v, int) or v < least for v in values):
        raise IrcError(
            f"{op}: {name} must be one int of at least {least} or {rank} of "
            f"them, not {value!r}"
        )
    return values


def _check_spatial_rank(op: str, spatial: int) -> None:
    if not 1 <= spatial <= len(_SPATIAL_LETTERS):
        raise IrcError(
            f"{op}: {spatial} spatial axes; irc convolves and pools over 1 to "
            f"{len(_SPATIAL_LETTERS)}"
        )


def _check_rank(op: str, x: Any, rank: int, layout: str) -> None:
    if np.ndim(x) != rank:
        raise IrcError(
            f"{op}: the input has rank {np.ndim(x)}, and this weight needs "
            f"{layout} (rank {rank}) or the unbatched form"
        )


def _check_groups(
    channels: Any, out_channels: Any, per_group: Any, groups: int
) -> None:
    if not isinstance(groups, int) or groups < 1:
        raise IrcError(f"conv: groups must be a positive int, not {groups!r}")
    if channels % groups or out_channels % groups:
        raise IrcError(
            f"conv: {groups} groups do not divide {channels} input and "
            f"{out_channels} output channels"
        )
    if channels // groups != per_group:
        raise IrcError(
            f"conv: the weight has {per_group} input channels per group, and "
            f"{channels} channels in {groups} groups make "
            f"{channels // groups}"
        )


def _lowest(dtype: Any) -> float:
    """The value no element of ``dtype`` is below: padding for a maximum."""
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.integer):
        return int(np.iinfo(dtype).min)
    return -math.inf
