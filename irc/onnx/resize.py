"""ONNX's ``Resize``: each resized axis as a weighted sum of gathers.

Resampling one axis of ``n`` elements to ``m`` is linear in the input: each
output element is a weighted sum of a few input elements (its *taps*: one
for ``nearest``, two for ``linear``, four for ``cubic``, more when
``antialias`` widens a downsampling filter). The taps and weights depend
only on the sizes and the attributes, so they are computed here in NumPy,
once, as ONNX's operator definition states them, and the axis becomes
``sum_t take(x, index[t], axis) * weight[t]``: gathers that fuse with their
neighbours, where a dense ``[m, n]`` interpolation matrix would be a
matmul. ``tf_crop_and_resize`` reads outside its region as
``extrapolation_value``.

An axis of symbolic size has no taps to compute; there, ``nearest`` by an
integer scale (the ``Upsample`` that torch's ``F.interpolate`` exports, and
every half-pixel rounding of it) is ``np.repeat``, and other forms are
refused with what would make them work.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: ``nearest_mode``: the input index nearest a fractional coordinate.
NEAREST_MODES: dict[str, Callable[[float], int]] = {
    "round_prefer_floor": lambda x: math.ceil(x - 0.5),
    "round_prefer_ceil": lambda x: math.floor(x + 0.5),
    "floor": math.floor,
    "ceil": math.ceil,
}

COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
)


@dataclass(frozen=True)
class Resampling:
    """The attributes of one ``Resize`` node that shape its taps."""

    mode: str = "nearest"
    coordinates: str = "half_pixel"
    nearest_mode: str = "round_prefer_floor"
    cubic_coeff_a: float = -0.75
    exclude_outside: bool = False
    antialias: bool = False

    def source(
        self, j: int, n: int, m: int, scale: float, roi: tuple[float, float]
    ) -> float:
        """Output index ``j``'s coordinate in the input (ONNX's
        ``coordinate_transformation_mode``)."""
        if self.coordinates == "half_pixel":
            return (j + 0.5) / scale - 0.5
        if self.coordinates == "half_pixel_symmetric":
            adjustment = m / (scale * n)
            return n / 2 * (1 - adjustment) + (j + 0.5) / scale - 0.5
        if self.coordinates == "pytorch_half_pixel":
            return (j + 0.5) / scale - 0.5 if m > 1 else 0.0
        # The resized length is n * scale unrounded, as ONNX's definition
        # writes it (m itself when the node gives sizes).
        resized = n * scale
        if self.coordinates == "align_corners":
            return j * (n - 1) / (resized - 1) if m > 1 else 0.0
        if self.coordinates == "asymmetric":
            return j / scale
        start, end = roi
        if m > 1:
            return start * (n - 1) + j * (end - start) * (n - 1) / (resized - 1)
        return 0.5 * (start + end) * (n - 1)

    def filter(self, distance: float) -> float:
        """The interpolation kernel at ``distance`` input elements."""
        d = abs(distance)
        if self.mode == "linear":
            return max(0.0, 1.0 - d)
        a = self.cubic_coeff_a
        if d <= 1:
            return ((a + 2) * d - (a + 3)) * d * d + 1
        if d < 2:
            return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
        return 0.0


@dataclass(frozen=True)
class Taps:
    """Where each output element of one axis reads (``index[t, j]``) and
    with what weight (``weight[t, j]``); ``outside[j]`` marks the outputs
    that take ``extrapolation_value`` instead."""

    index: np.ndarray
    weight: np.ndarray
    outside: np.ndarray


def taps(
    resampling: Resampling, n: int, m: int, scale: float, roi: tuple[float, float]
) -> Taps:
    """The taps resampling an axis of ``n`` elements to ``m``."""
    rows: list[dict[int, float]] = []
    outside = np.zeros(m, bool)
    for j in range(m):
        x = resampling.source(j, n, m, scale, roi)
        if resampling.coordinates == "tf_crop_and_resize" and not 0 <= x <= n - 1:
            outside[j] = True
            rows.append({0: 0.0})
        elif resampling.mode == "nearest":
            nearest = NEAREST_MODES[resampling.nearest_mode](x)
            rows.append({min(max(nearest, 0), n - 1): 1.0})
        else:
            rows.append(_filtered(resampling, x, n, scale))
    width = max(len(row) for row in rows)
    index = np.zeros((width, m), np.int64)
    weight = np.zeros((width, m), np.float64)
    for j, row in enumerate(rows):
        for t, (i, w) in enumerate(sorted(row.items())):
            index[t, j], weight[t, j] = i, w
    return Taps(index, weight, outside)


def _filtered(
    resampling: Resampling, x: float, n: int, scale: float
) -> dict[int, float]:
    """The weights of ``linear`` or ``cubic`` at coordinate ``x``: the
    filter at the input elements around it (stretched by ``1 / scale``
    when antialiasing a downsampling, the weights then normalised to sum
    to 1), indices past the edges reading the edge element, or, under
    ``exclude_outside``, left out and the rest renormalised."""
    stretch = scale if resampling.antialias and scale < 1 else 1.0
    reach = (1 if resampling.mode == "linear" else 2) / stretch
    first, last = math.floor(x - reach) + 1, math.ceil(x + reach) - 1
    weights: dict[int, float] = {}
    for i in range(first, last + 1):
        w = resampling.filter((i - x) * stretch)
        if w == 0.0 or (resampling.exclude_outside and not 0 <= i < n):
            continue
        clamped = min(max(i, 0), n - 1)
        weights[clamped] = weights.get(clamped, 0.0) + w
    if resampling.exclude_outside or stretch != 1.0:
        total = sum(weights.values())
        weights = {i: w / total for i, w in weights.items()}
    return weights
