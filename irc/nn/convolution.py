"""Convolution and pooling over channels-first tensors (``[N, C, *spatial]``,
as ONNX and PyTorch lay them out), each a NumPy decomposition (see
:mod:`irc.nn`).

A window is a strided slice of the padded input, one per kernel offset:
convolution stacks the windows (im2col) and contracts them with the weight
in one ``einsum``; pooling takes their elementwise maximum or sum, which
fusion makes one kernel. Sizes stay symbolic: an output size is
``(size + pad_lo + pad_hi - dilation * (kernel - 1) - 1) // stride + 1``.

The gradients (``conv_input_gradient``, ``max_pool_backward``...) are
closed forms over the same windows: a window's gradient is added back where
it read (``_unwindowed``), so they take sizes such as ``(x_dim2 + 1) // 2``
that ``irc.vjp`` of the forward, differentiating functions of arrays whose
dims are plain symbols, does not. ``max_pool_with_indices`` gives torch's
argmax indices, for torch's backward graphs to pass back.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import irc.capture.numpy_api  # noqa: F401  (registers CREATION's traced versions)
from irc.capture import layout
from irc.capture.intercept import CREATION
from irc.errors import IrcError

__all__ = [
    "avg_pool",
    "avg_pool_backward",
    "conv",
    "conv_input_gradient",
    "conv_transpose",
    "conv_transpose_input_gradient",
    "conv_transpose_weight_gradient",
    "conv_weight_gradient",
    "global_avg_pool",
    "global_max_pool",
    "max_pool",
    "max_pool_backward",
    "max_pool_with_indices",
]

#: ``padding``: one amount for every spatial axis, one per axis, a
#: ``(before, after)`` pair per axis, or ``"valid"`` (none), ``"same"`` /
#: ``"same_upper"`` (the output size is ``ceil(size / stride)``, the odd
#: amount after) or ``"same_lower"`` (the odd amount before).
Padding = int | str | Sequence[int] | Sequence[tuple[int, int]]
Pads = list[tuple[int, int]]

#: einsum letters for up to three spatial axes.
_SPATIAL_LETTERS = "xyz"

# NumPy's creation functions taking symbolic sizes while traced: capture
# intercepts them for user code only, and this module is irc's.
_full = CREATION["full"](np.full)
_arange = CREATION["arange"](np.arange)
_broadcast_constant = CREATION["broadcast_to"](np.broadcast_to)


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
    strides_, pads, dilations_ = _window_options(
        "conv", x.shape[2:], kernel, strides, padding, dilations
    )
    channels, out_channels = x.shape[1], weight.shape[0]
    _check_groups(channels, out_channels, weight.shape[1], groups)
    patches = _patches(x, kernel, strides_, pads, dilations_)
    if patches is not None:
        columns, sizes = patches
    else:
        padded = pad_spatial(x, pads, 0)
        sizes = _output_sizes(padded.shape[2:], kernel, strides_, dilations_)
        windows = _windows(padded, kernel, strides_, dilations_, sizes)
        # [N, C, P, *out]: channel-major, as the weight's [O, C/groups, *K]
        # flattens.
        columns = np.stack(windows, axis=2)
    positions = math.prod(kernel)
    batch = x.shape[0]
    depth = (channels // groups) * positions
    if groups == 1:
        # [O, K] @ [N, K, OH * OW]: the product is already the output's
        # layout, so a matmul kernel stores it as [N, O, OH, OW] and takes
        # the bias, BatchNorm's affine, activations and residuals after
        # it as its epilogue.
        columns = columns.reshape(batch, depth, -1)
        kernel_matrix = weight.reshape(out_channels, depth)
        y = np.matmul(kernel_matrix, columns).reshape(batch, out_channels, *sizes)
    else:
        columns = columns.reshape(batch, groups, depth, *sizes)
        kernel_matrix = weight.reshape(groups, out_channels // groups, depth)
        letters = _SPATIAL_LETTERS[:spatial]
        y = np.einsum(f"ngk{letters},gok->ngo{letters}", columns, kernel_matrix)
        y = y.reshape(batch, out_channels, *sizes)
    if bias is not None:
        y = y + np.reshape(bias, (out_channels,) + (1,) * spatial)
    return y


def _patches(
    x: Any,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Pads,
    dilations: Sequence[int],
) -> tuple[Any, list[int]] | None:
    """The columns ``[N, C, *K, *out]`` and output sizes of a convolution
    whose windows tile its input (stride = kernel, no padding or dilation,
    static sizes that are multiples of the kernel: a ViT's patch
    embedding), by a reshape and a transpose: layout ops that a matmul
    loads in place, where the windows would be one slice per kernel offset
    side by side. None for other convolutions."""
    sizes = x.shape[2:]
    if (
        tuple(strides) != tuple(kernel)
        or any(d != 1 for d in dilations)
        or any(pad != (0, 0) for pad in pads)
        or not all(isinstance(n, int) and n % k == 0 for n, k in zip(sizes, kernel))
    ):
        return None
    out = [n // k for n, k in zip(sizes, kernel)]
    split = [d for o, k in zip(out, kernel) for d in (o, k)]
    blocks = x.reshape(x.shape[0], x.shape[1], *split)
    spatial = range(len(kernel))
    order = (0, 1, *(3 + 2 * i for i in spatial), *(2 + 2 * i for i in spatial))
    return np.transpose(blocks, order), out


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


def conv_input_gradient(
    grad: Any,
    weight: Any,
    input_sizes: Sequence[Any],
    *,
    strides: int | Sequence[int] = 1,
    padding: Padding = 0,
    dilations: int | Sequence[int] = 1,
    groups: int = 1,
) -> Any:
    """The gradient of :func:`conv`'s input (``[N, C, *input_sizes]``) from
    its output's ``grad`` (``[N, O, *S]``), as
    ``torch.nn.grad.conv{1,2,3}d_input`` computes it: a transposed
    convolution of ``grad`` where the input's size past the last window is
    known (its ``output_padding``), else each window's share of ``grad``
    added back where the window read (the transpose of im2col)."""
    kernel = tuple(weight.shape[2:])
    spatial = len(kernel)
    strides_, pads, dilations_ = _window_options(
        "conv_input_gradient", input_sizes, kernel, strides, padding, dilations
    )
    remainders = [
        (size + lo + hi - d * (k - 1) - 1) % s
        for size, (lo, hi), d, k, s in zip(
            input_sizes, pads, dilations_, kernel, strides_
        )
    ]
    options = {"strides": strides_, "dilations": dilations_, "groups": groups}
    if all(isinstance(r, int) for r in remainders):
        return conv_transpose(
            grad, weight, padding=pads, output_padding=remainders, **options
        )
    batch, out_channels = grad.shape[0], weight.shape[0]
    channels = weight.shape[1] * groups
    positions = math.prod(kernel)
    letters = _SPATIAL_LETTERS[:spatial]
    out_sizes = list(grad.shape[2:])
    kernel_matrix = np.reshape(
        weight, [groups, out_channels // groups, channels // groups * positions]
    )
    grouped = np.reshape(grad, [batch, groups, out_channels // groups, *out_sizes])
    columns = np.einsum(f"ngo{letters},gok->ngk{letters}", grouped, kernel_matrix)
    columns = np.reshape(columns, [batch, channels, positions, *out_sizes])
    padded = [size + lo + hi for size, (lo, hi) in zip(input_sizes, pads)]
    total = _unwindowed(
        [columns[:, :, i] for i in range(positions)],
        [batch, channels, *padded], kernel, strides_, dilations_,
    )  # fmt: skip
    return _cropped(total, pads, input_sizes)


def conv_weight_gradient(
    grad: Any,
    x: Any,
    kernel: Sequence[int],
    *,
    strides: int | Sequence[int] = 1,
    padding: Padding = 0,
    dilations: int | Sequence[int] = 1,
    groups: int = 1,
) -> Any:
    """The gradient of :func:`conv`'s weight (``[O, C / groups, *kernel]``)
    from its output's ``grad`` (``[N, O, *S]``) and its input ``x``
    (``[N, C, *spatial]``), as ``torch.nn.grad.conv{1,2,3}d_weight``
    computes it: each window of the input (the forward's im2col)
    contracted with ``grad``."""
    kernel = tuple(kernel)
    strides_, pads, dilations_ = _window_options(
        "conv_weight_gradient", x.shape[2:], kernel, strides, padding, dilations
    )
    windows = _windows(
        pad_spatial(x, pads, 0), kernel, strides_, dilations_, grad.shape[2:]
    )
    shape = [grad.shape[1], x.shape[1] // groups, *kernel]
    return _weight_contraction(windows, grad, groups, shape)


def conv_transpose_input_gradient(
    grad: Any,
    weight: Any,
    input_sizes: Sequence[Any],
    *,
    strides: int | Sequence[int] = 1,
    padding: int | Sequence[int] | Sequence[tuple[int, int]] = 0,
    output_padding: int | Sequence[int] = 0,
    dilations: int | Sequence[int] = 1,
    groups: int = 1,
) -> Any:
    """The gradient of :func:`conv_transpose`'s input (``[N, C,
    *input_sizes]``) from its output's ``grad``: the convolution of ``grad``
    with the same weight (a transposed convolution is that convolution's
    transpose), less what ``output_padding`` adds past the last window when
    it is a stride or more."""
    spatial = np.ndim(weight) - 2
    strides_ = _per_axis("conv_transpose_input_gradient", "strides", strides, spatial)
    extra = _per_axis(
        "conv_transpose_input_gradient", "output_padding", output_padding, spatial, 0
    )
    options = {"padding": padding, "dilations": dilations, "groups": groups}
    y = conv(grad, weight, strides=strides_, **options)
    if all(e < s for e, s in zip(extra, strides_)):
        return y
    return y[(Ellipsis, *(slice(0, size) for size in input_sizes))]


def conv_transpose_weight_gradient(
    grad: Any,
    x: Any,
    kernel: Sequence[int],
    *,
    strides: int | Sequence[int] = 1,
    padding: int | Sequence[int] | Sequence[tuple[int, int]] = 0,
    dilations: int | Sequence[int] = 1,
    groups: int = 1,
) -> Any:
    """The gradient of :func:`conv_transpose`'s weight (``[C, O / groups,
    *kernel]``) from its output's ``grad`` (``[N, O, *S]``) and its input
    ``x`` (``[N, C, *spatial]``): ``x`` contracted with each window of
    ``grad``, a window position per input position."""
    kernel = tuple(kernel)
    spatial = len(kernel)
    op = "conv_transpose_weight_gradient"
    strides_ = _per_axis(op, "strides", strides, spatial)
    dilations_ = _per_axis(op, "dilations", dilations, spatial)
    pads = _explicit_pads(op, padding, spatial, negative=True)
    windows = _windows(
        pad_spatial(grad, pads, 0), kernel, strides_, dilations_, x.shape[2:]
    )
    shape = [x.shape[1], grad.shape[1] // groups, *kernel]
    return _weight_contraction(windows, x, groups, shape)


def _weight_contraction(
    windows: Sequence[Any], grad: Any, groups: int, shape: Sequence[Any]
) -> Any:
    """``sum over n and positions of windows[k][n, c] * grad[n, o]`` within
    each group, as a weight of ``shape`` (``[O, C / groups, *K]``):
    ``windows`` ``[N, C, *positions]``, one per kernel offset ``k``,
    ``grad`` ``[N, O, *positions]``."""
    batch, channels = windows[0].shape[:2]
    out_channels = grad.shape[1]
    positions = list(windows[0].shape[2:])
    letters = _SPATIAL_LETTERS[: len(positions)]
    columns = np.reshape(
        np.stack(windows, axis=2),
        [batch, groups, channels // groups, len(windows), *positions],
    )
    grouped = np.reshape(grad, [batch, groups, out_channels // groups, *positions])
    result = np.einsum(f"ngck{letters},ngo{letters}->gock", columns, grouped)
    return np.reshape(result, list(shape))


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
    found = _pool_windows("max_pool", x, kernel, strides, padding, dilations, ceil_mode)
    return functools.reduce(np.maximum, found.windows(x, _lowest(x.dtype)))


def max_pool_with_indices(
    x: Any,
    kernel: Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    padding: Padding = 0,
    dilations: int | Sequence[int] = 1,
    ceil_mode: bool = False,
) -> tuple[Any, Any]:
    """:func:`max_pool` and the indices of its maxima, as
    ``torch.nn.functional.max_pool{1,2,3}d(..., return_indices=True)``
    defines them: int64 offsets into each (sample, channel)'s spatial axes
    flattened, the first maximum in the window's row-major order winning (a
    NaN wins over every number, the last NaN over earlier ones, as torch's
    CPU kernel has it); padding never wins. A graph that reads no index
    drops their computation."""
    found = _pool_windows(
        "max_pool_with_indices", x, kernel, strides, padding, dilations, ceil_mode
    )
    windows = found.windows(x, _lowest(x.dtype))
    values = functools.reduce(np.maximum, windows)
    floating = np.dtype(x.dtype).kind == "f"
    best = indices = seen = None
    for offsets, window in zip(_kernel_offsets(found.kernel), windows):
        positions = found.positions(offsets)
        inside = found.inside(positions)
        flat = found.flat(positions)
        if best is None:
            best, indices, seen = window, flat, inside
            continue
        take = np.greater(window, best)
        if floating:
            take = np.logical_or(take, np.not_equal(window, window))
        if inside is not None:  # padding: a window's first input element
            take = np.logical_and(inside, np.logical_or(take, np.logical_not(seen)))
            seen = np.logical_or(seen, inside)
        best = np.where(take, window, best)
        indices = np.where(take, flat, indices)
    return values, _broadcast_to(indices, values.shape)


def max_pool_backward(
    grad: Any,
    indices: Any,
    input_sizes: Sequence[Any],
    kernel: Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    padding: Padding = 0,
    dilations: int | Sequence[int] = 1,
    ceil_mode: bool = False,
) -> Any:
    """The gradient of :func:`max_pool_with_indices`'s input (whose last
    axes are ``input_sizes``): each output's ``grad`` added to the input
    element its index names, through the window that read it."""
    found = _pool_windows(
        "max_pool_backward", grad, kernel, strides, padding, dilations, ceil_mode,
        input_sizes=input_sizes,
    )  # fmt: skip
    zero = np.zeros((), np.dtype(grad.dtype))
    parts = []
    for offsets in _kernel_offsets(found.kernel):
        positions = found.positions(offsets)
        chosen = np.equal(indices, found.flat(positions))
        inside = found.inside(positions)
        if inside is not None:  # a position in the padding aliases another
            chosen = np.logical_and(chosen, inside)
        parts.append(np.where(chosen, grad, zero))
    return found.unwindowed(parts)


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
    found = _pool_windows("avg_pool", x, kernel, strides, padding, dilations, ceil_mode)
    total = functools.reduce(np.add, found.windows(x, 0))
    return total / found.divisor(total.dtype, count_include_pad, divisor_override)


def avg_pool_backward(
    grad: Any,
    input_sizes: Sequence[Any],
    kernel: Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    padding: Padding = 0,
    dilations: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Any:
    """The gradient of :func:`avg_pool`'s input (whose last axes are
    ``input_sizes``): each output's ``grad`` over its divisor, added to every
    element of its window."""
    found = _pool_windows(
        "avg_pool_backward", grad, kernel, strides, padding, dilations, ceil_mode,
        input_sizes=input_sizes,
    )  # fmt: skip
    share = grad / found.divisor(grad.dtype, count_include_pad, divisor_override)
    return found.unwindowed([share] * math.prod(found.kernel))


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


@dataclass(frozen=True)
class _PoolWindows:
    """A pooling's windows over an input's last ``len(kernel)`` axes
    (``in_sizes``): padded by ``pads``, and in ``ceil_mode`` by ``overhang``
    more after, past which the last window may reach; ``out_sizes`` windows
    per axis."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads: Pads
    overhang: tuple[int, ...]
    in_sizes: tuple[Any, ...]
    out_sizes: tuple[Any, ...]

    def padded(self, x: Any, fill: float) -> Any:
        pads = [(lo, hi + e) for (lo, hi), e in zip(self.pads, self.overhang)]
        return pad_spatial(x, pads, fill)

    def windows(self, x: Any, fill: float) -> list[Any]:
        """``x``'s windows, padded with ``fill``, one per kernel offset."""
        sizes = self.out_sizes
        return _windows(
            self.padded(x, fill), self.kernel, self.strides, self.dilations, sizes
        )

    def unwindowed(self, parts: Sequence[Any]) -> Any:
        """The input's gradient from its windows' (:func:`_unwindowed`)."""
        spatial = len(self.kernel)
        padded = [
            size + lo + hi + e
            for size, (lo, hi), e in zip(self.in_sizes, self.pads, self.overhang)
        ]
        shape = [*parts[0].shape[:-spatial], *padded]
        total = _unwindowed(parts, shape, self.kernel, self.strides, self.dilations)
        return _cropped(total, self.pads, self.in_sizes)

    def divisor(
        self, dtype: Any, count_include_pad: bool, divisor_override: int | None
    ) -> Any:
        """What each window's sum is divided by: its size within the padded
        input (``count_include_pad``) or within the input, ceil_mode's
        overhang never counted; ``divisor_override`` if given."""
        if divisor_override:
            return divisor_override
        counted = 1 if count_include_pad else 0
        if not any(self.overhang) and (counted or not any(map(any, self.pads))):
            return math.prod(self.kernel)
        # The same windows over ones where the input is (and counted padding).
        ones = pad_spatial(_full(list(self.in_sizes), 1, dtype), self.pads, counted)
        overhang = [(0, e) for e in self.overhang]
        counts = _windows(
            pad_spatial(ones, overhang, 0), self.kernel, self.strides,
            self.dilations, self.out_sizes,
        )  # fmt: skip
        return functools.reduce(np.add, counts)

    def positions(self, offsets: Sequence[int]) -> list[Any]:
        """For each axis, the input position the window at ``offsets`` reads
        at each output position (negative or past the input in the
        padding), shaped to broadcast over the last axes; int64."""
        spatial = len(self.kernel)
        found = []
        for axis, (k, s, (lo, _), d, out) in enumerate(
            zip(offsets, self.strides, self.pads, self.dilations, self.out_sizes)
        ):
            position = _arange(out, dtype=np.int64) * s + (k * d - lo)
            found.append(np.reshape(position, [out, *[1] * (spatial - 1 - axis)]))
        return found

    def inside(self, positions: Sequence[Any]) -> Any | None:
        """Where ``positions`` are in the input (not in its padding): None
        where they all are."""
        if not any(map(any, self.pads)) and not any(self.overhang):
            return None
        inside = None
        for position, size in zip(positions, self.in_sizes):
            within = np.logical_and(
                np.greater_equal(position, 0), np.less(position, size)
            )
            inside = within if inside is None else np.logical_and(inside, within)
        return inside

    def flat(self, positions: Sequence[Any]) -> Any:
        """The positions as offsets into the input's last axes flattened."""
        flat: Any = 0
        for position, size in zip(positions, self.in_sizes):
            flat = flat * size + position
        return flat


def _pool_windows(
    op: str,
    x: Any,
    kernel: Sequence[int],
    strides: int | Sequence[int] | None,
    padding: Padding,
    dilations: int | Sequence[int],
    ceil_mode: bool,
    *,
    input_sizes: Sequence[Any] | None = None,
) -> _PoolWindows:
    """The windows of a pooling of ``x``'s last ``len(kernel)`` axes, or of
    an input whose last axes are ``input_sizes`` (``x`` then the output's
    gradient, whose leading axes they share)."""
    kernel = tuple(int(k) for k in kernel)
    spatial = len(kernel)
    _check_spatial_rank(op, spatial)
    if np.ndim(x) < spatial:
        raise IrcError(
            f"{op}: a {spatial}-d kernel needs an input of rank at least "
            f"{spatial}, not {np.ndim(x)}"
        )
    strides_ = _strides(op, strides, kernel)
    dilations_ = _per_axis(op, "dilations", dilations, spatial)
    sizes = tuple(x.shape[-spatial:] if input_sizes is None else input_sizes)
    pads = _pads(op, padding, sizes, kernel, strides_, dilations_)
    overhang = tuple(
        _ceil_overhang(op, size, pad, k, s, d) if ceil_mode else 0
        for size, pad, k, s, d in zip(sizes, pads, kernel, strides_, dilations_)
    )
    padded = [size + lo + hi + e for size, (lo, hi), e in zip(sizes, pads, overhang)]
    out = _output_sizes(padded, kernel, strides_, dilations_)
    return _PoolWindows(kernel, strides_, dilations_, pads, overhang, sizes, tuple(out))


def _ceil_overhang(
    op: str, size: Any, pads: tuple[int, int], kernel: int, stride: int, dilation: int
) -> int:
    """How far past the padded input ``ceil_mode``'s last window reaches: the
    output size rounds up, but the last window must start inside the input
    or its leading padding (PyTorch's and ONNX's rule). On a symbolic size,
    where the last window can never start past that (the padding after it
    and the stride less one within the window's reach), ``stride - 1``: the
    most it may reach past."""
    if stride == 1:
        return 0
    lo, hi = pads
    reach = dilation * (kernel - 1) + 1
    if not isinstance(size, int):
        if hi + stride - 1 < reach:
            return stride - 1
        raise IrcError(
            f"{op}: ceil_mode, a kernel of {kernel} (dilation {dilation}), stride "
            f"{stride} and padding {hi} on the symbolic size {size}: whether the "
            "last window starts in the padding depends on the size; pass "
            "ceil_mode=False or give that axis a concrete size"
        )
    out = -(-(size + lo + hi - reach) // stride) + 1
    if (out - 1) * stride >= size + lo:
        out -= 1
    return max((out - 1) * stride + reach - (size + lo + hi), 0)


def _broadcast_to(x: Any, shape: Sequence[Any]) -> Any:
    """``np.broadcast_to``, a NumPy constant to a symbolic shape too."""
    if isinstance(x, np.ndarray | int) and not all(isinstance(d, int) for d in shape):
        return _broadcast_constant(x, shape)
    return np.broadcast_to(x, shape)


def _kernel_offsets(kernel: Sequence[int]) -> list[tuple[int, ...]]:
    """Each offset in the kernel, row-major (as a weight's ``*K`` axes)."""
    return list(itertools.product(*(range(k) for k in kernel)))


def _window_key(
    offsets: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    sizes: Sequence[Any],
) -> tuple[Any, ...]:
    """The index of the window at kernel offset ``offsets`` in the padded
    input's last axes: its element ``o`` is ``x[o * stride + offset *
    dilation]``, ``sizes`` of them per axis."""
    return (
        Ellipsis,
        *(
            slice(k * d, k * d + s * (size - 1) + 1, s)
            for k, d, s, size in zip(offsets, dilations, strides, sizes)
        ),
    )


def _windows(
    x: Any,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    sizes: Sequence[Any],
) -> list[Any]:
    """One strided slice of ``x``'s last axes per kernel offset, row-major
    (:func:`_window_key`): the windows convolution and pooling read."""
    return [
        x[_window_key(offsets, strides, dilations, sizes)]
        for offsets in _kernel_offsets(kernel)
    ]


def _unwindowed(
    parts: Sequence[Any],
    shape: Sequence[Any],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> Any:
    """The transpose of :func:`_windows`: the sum of ``parts`` (one per
    kernel offset), each in zeros of the padded input's ``shape`` where its
    window read. Each is written into zeros of its own (a write into the
    sum so far would read it twice, and fused, evaluate the writes before
    it twice each)."""
    sizes = parts[0].shape[len(shape) - len(kernel) :]
    total = None
    for offsets, part in zip(_kernel_offsets(kernel), parts):
        placed = _full(list(shape), 0, np.dtype(part.dtype))
        if isinstance(placed, np.ndarray) and not isinstance(part, np.ndarray):
            placed = layout.as_tensor(placed)
        placed[_window_key(offsets, strides, dilations, sizes)] = part
        total = placed if total is None else total + placed
    return total


def _cropped(padded: Any, pads: Pads, sizes: Sequence[Any]) -> Any:
    """The input's part of a padded array: ``sizes`` elements of its last
    axes after the padding before them."""
    return padded[(Ellipsis, *(slice(lo, lo + n) for (lo, _), n in zip(pads, sizes)))]


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


def _window_options(
    op: str,
    sizes: Sequence[Any],
    kernel: Sequence[int],
    strides: int | Sequence[int],
    padding: Padding,
    dilations: int | Sequence[int],
) -> tuple[tuple[int, ...], Pads, tuple[int, ...]]:
    """A convolution's ``(strides, pads, dilations)`` per spatial axis (of
    ``sizes``), checked."""
    strides_ = _per_axis(op, "strides", strides, len(kernel))
    dilations_ = _per_axis(op, "dilations", dilations, len(kernel))
    return strides_, _pads(op, padding, sizes, kernel, strides_, dilations_), dilations_


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
    op: str, strides: int | Sequence[int] | None, kernel: Sequence[int]
) -> tuple[int, ...]:
    """A pooling's strides: the kernel's by default, as in PyTorch."""
    if strides is None:
        return tuple(kernel)
    return _per_axis(op, "strides", strides, len(kernel))


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


def _check_rank(op: str, x: Any, rank: int, form: str) -> None:
    if np.ndim(x) != rank:
        raise IrcError(
            f"{op}: the input has rank {np.ndim(x)}, and this weight needs "
            f"{form} (rank {rank}) or the unbatched form"
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
