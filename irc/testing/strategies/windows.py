"""Steps over sliding windows: ``convolve`` and ``pool``.

Both build what ``irc.nn.conv`` and ``irc.nn.max_pool`` capture, along an
operand's last axis: the axis padded by a ``concat`` with splat blocks, one
strided ``slice`` per kernel offset (a window), then the windows contracted
with a new weight argument by a ``matmul`` (whose operand tiles fusion
loads through the concats and slices: an implicit GEMM) or folded by
``maximum``/``add``. Window sizes, strides, dilations and padding are
drawn; a step whose windows might not fit the axis under the guards does
not apply.
"""

from __future__ import annotations

import functools

from xdsl.ir import SSAValue

from irc.dialects import graph as g
from irc.dtypes import dtype
from irc.primitives import builtin as p
from irc.shapes import SymExpr
from irc.testing.strategies.ranges import MAGNITUDE_LIMIT
from irc.testing.strategies.steps import Steps

#: The window steps, which ``programs`` takes when asked (as
#: ``CONTROL_FLOW_ACTIONS``): each adds a dozen ops, which would crowd out
#: the single-op steps that shrink failing programs well.
WINDOW_ACTIONS: tuple[str, ...] = ("convolve", "pool")


class WindowSteps(Steps):
    """The sliding-window steps of ``program``."""

    def convolve(self) -> bool:
        """``[..., L]`` to ``[..., out, channels]``: each output position's
        window (``[..., out, kernel]``) times a ``[kernel, channels]``
        weight."""
        windows = self._windows("f")
        if windows is None:
            return False
        stacked = self._stacked(windows)
        kernel = len(windows)
        magnitude = self.program.magnitude(stacked)
        if magnitude * magnitude * kernel > MAGNITUDE_LIMIT:
            stacked = self.domains.squash(stacked)
        tensor = g.tensor_type(stacked)
        weight_shape = [SymExpr.const(kernel), self.program.dim(for_argument=True)]
        weight = self.program.new_argument(tensor.with_shape(weight_shape))
        bound = (
            self.program.magnitude(stacked) * self.program.magnitude(weight) * kernel
        )
        self.program.emit(g.MatmulOp(stacked, weight), (-bound, bound))
        return True

    def pool(self) -> bool:
        """The maximum or the sum of each window of the last axis."""
        windows = self._windows("if")
        if windows is None:
            return False
        kind = self.choices.one_of((p.MAX, p.ADD))
        lo, hi = self.program.ranges[windows[0]]
        if kind is p.ADD:
            lo, hi = min(lo, 0) * len(windows), max(hi, 0) * len(windows)
            if max(-lo, hi) > MAGNITUDE_LIMIT:
                return False
        functools.reduce(
            lambda a, b: self.program.emit(g.elementwise(kind, a, b), (lo, hi)), windows
        )
        return True

    def _windows(self, kinds: str) -> list[SSAValue] | None:
        """One window of the padded last axis per kernel offset, or None
        where the windows might not fit."""
        value = self.program.pick_or_new(
            lambda t: t.rank >= 1 and dtype(t.element_type).kind in kinds, kinds, 1
        )
        tensor = g.tensor_type(value)
        extent = tensor.dims[-1]
        kernel = self.choices.integer(1, 3)
        stride = self.choices.one_of((1, 2))
        dilation = self.choices.one_of((1, 2))
        pad = self.choices.integer(0, 1)
        reach = dilation * (kernel - 1) + 1
        padded_extent = extent + 2 * pad
        if not self.program.facts.prove_le(reach, padded_extent):
            return None
        padded = self._padded(value, pad)
        count = (padded_extent - reach) // stride + 1
        rank = tensor.rank
        windows = []
        for offset in range(kernel):
            offsets = [SymExpr.const(0)] * (rank - 1) + [
                SymExpr.const(offset * dilation)
            ]
            sizes = [*tensor.dims[:-1], count]
            strides = [1] * (rank - 1) + [stride]
            windows.append(
                self.program.emit(
                    g.SliceOp(padded, offsets, sizes, strides),
                    self.program.ranges[padded],
                )
            )
        return windows

    def _padded(self, value: SSAValue, pad: int) -> SSAValue:
        """``value`` between ``pad`` splat elements on each side of its last
        axis."""
        if not pad:
            return value
        tensor = g.tensor_type(value)
        block = tensor.with_shape([*tensor.dims[:-1], SymExpr.const(pad)])
        splat = self.operands.splat(0, block)
        lo, hi = self.program.ranges[value]
        return self.program.emit(
            g.ConcatOp([splat, value, splat], tensor.rank - 1), (min(lo, 0), max(hi, 0))
        )

    def _stacked(self, windows: list[SSAValue]) -> SSAValue:
        """The windows side by side along a new last axis."""
        columns = []
        for window in windows:
            tensor = g.tensor_type(window)
            shape = [*tensor.dims, SymExpr.const(1)]
            columns.append(
                self.program.emit(
                    g.ReshapeOp(window, shape), self.program.ranges[window]
                )
            )
        if len(columns) == 1:
            return columns[0]
        rank = g.tensor_type(columns[0]).rank
        return self.program.emit(
            g.ConcatOp(columns, rank - 1), self.program.ranges[windows[0]]
        )
