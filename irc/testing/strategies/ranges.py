"""Value ranges: an interval that holds every value of an SSA value on the
inputs of ``irc.testing.inputs``, and how each elementwise op maps them.

A range is ``(low, high)`` in floats. The functions here compute the range
of an op's result from its operands' ranges, for operands that the caller
has already brought into the op's domain, and bound how far a result can
grow (:func:`_growth`), which decides when operands are squashed so that
results stay below :data:`MAGNITUDE_LIMIT`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from irc.dialects import graph as g
from irc.testing.sampling import FLOAT_INPUT_RANGE, INT_INPUT_RANGE

#: Results are kept below this magnitude (well inside float16's 65504).
MAGNITUDE_LIMIT = 1e4

_Range = tuple[float, float]


def _magnitude(value_range: _Range) -> float:
    return max(abs(value_range[0]), abs(value_range[1]))


def _span(values: Iterable[float]) -> _Range:
    items = list(values)
    return min(items), max(items)


def _union(*ranges: _Range) -> _Range:
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def _bitwise_range(lhs: _Range, rhs: _Range, kind: str) -> _Range:
    if kind == "b":
        return 0.0, 1.0
    bound = 2.0 ** math.ceil(math.log2(max(_magnitude(lhs), _magnitude(rhs)) + 1))
    return -bound, bound


def _unary_range(op: type[g.UnaryOp], x: _Range, kind: str) -> _Range:
    """The range of ``op`` on ``x``, whose domain the caller ensured."""
    lo, hi = x
    if op is g.NegOp:
        return -hi, -lo
    if op is g.AbsOp:
        return (0.0 if lo < 0 < hi else min(abs(lo), abs(hi))), _magnitude(x)
    if op is g.NotOp:
        return (0.0, 1.0) if kind == "b" else (-hi - 1, -lo - 1)
    monotone: dict[type[g.UnaryOp], Callable[[float], float]] = {
        g.ExpOp: math.exp,
        g.LogOp: math.log,
        g.SqrtOp: math.sqrt,
        g.FloorOp: math.floor,
    }
    if op in monotone:
        return monotone[op](lo), monotone[op](hi)
    if op is g.RsqrtOp:
        return 1 / math.sqrt(hi), 1 / math.sqrt(lo)
    if op is g.SigmoidOp:
        return 0.0, 1.0
    return -1.0, 1.0  # tanh, erf, sin, cos


def _binary_range(op: type[g.BinaryOp], a: _Range, b: _Range, kind: str) -> _Range:
    """The range of ``op`` on ``a`` and ``b``, whose domain the caller
    ensured (divisors exclude zero, powers are handled by the caller)."""
    corners = [(x, y) for x in a for y in b]
    if op is g.AddOp:
        return a[0] + b[0], a[1] + b[1]
    if op is g.SubOp:
        return a[0] - b[1], a[1] - b[0]
    if op is g.MulOp:
        return _span(x * y for x, y in corners)
    if op is g.DivOp:
        return _span(x / y for x, y in corners)
    if op is g.FloorDivOp:
        return _span(math.floor(x / y) for x, y in corners)
    if op is g.RemOp:
        return (0.0, b[1]) if b[0] > 0 else (b[0], 0.0)
    if op is g.MaximumOp:
        return max(a[0], b[0]), max(a[1], b[1])
    if op is g.MinimumOp:
        return min(a[0], b[0]), min(a[1], b[1])
    return _bitwise_range(a, b, kind)  # and, or, xor


def _growth(op: type[g.BinaryOp], a: float, b: float) -> float:
    """A bound on ``|op(x, y)|`` for ``|x| <= a`` and ``|y| <= b``, after the
    domain fixes (which add at most 1 to a magnitude)."""
    if op in (g.MulOp, g.PowOp):
        return (a + 1) * (b + 1)
    if op in (g.DivOp, g.FloorDivOp):
        return 2 * a + 1
    if op is g.RemOp:
        return b + 1
    return 2 * max(a, b) + 2


def _input_range(kind: str) -> _Range:
    if kind == "f":
        return -FLOAT_INPUT_RANGE, FLOAT_INPUT_RANGE
    if kind == "i":
        return float(-INT_INPUT_RANGE), float(INT_INPUT_RANGE)
    return 0.0, 1.0
