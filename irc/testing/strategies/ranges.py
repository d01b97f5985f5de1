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
from irc.dialects.elementwise import ElementwiseKind
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


_K = ElementwiseKind
_UnaryRule = Callable[[_Range, str], _Range]


def _neg_range(x: _Range, kind: str) -> _Range:
    return -x[1], -x[0]


def _abs_range(x: _Range, kind: str) -> _Range:
    lo, hi = x
    return (0.0 if lo < 0 < hi else min(abs(lo), abs(hi))), _magnitude(x)


def _not_range(x: _Range, kind: str) -> _Range:
    return (0.0, 1.0) if kind == "b" else (-x[1] - 1, -x[0] - 1)


def _monotone(function: Callable[[float], float]) -> _UnaryRule:
    return lambda x, kind: (function(x[0]), function(x[1]))


def _bounded(lo: float, hi: float) -> _UnaryRule:
    return lambda x, kind: (lo, hi)


def _cosh_range(x: _Range, kind: str) -> _Range:
    lo, hi = x
    ends = (math.cosh(lo), math.cosh(hi))
    return (1.0 if lo < 0 < hi else min(ends)), max(ends)


#: The range of each unary kind's result, from its operand's range (in the
#: kind's domain: the caller ensured it).
_UNARY_RULES: dict[ElementwiseKind, _UnaryRule] = {
    _K.NEG: _neg_range,
    _K.ABS: _abs_range,
    _K.NOT: _not_range,
    _K.EXP: _monotone(math.exp),
    _K.LOG: _monotone(math.log),
    _K.SQRT: _monotone(math.sqrt),
    _K.FLOOR: _monotone(math.floor),
    _K.CEIL: _monotone(math.ceil),
    _K.TRUNC: _monotone(math.trunc),
    _K.RINT: _monotone(round),  # halves to even, as np.rint
    _K.LOG1P: _monotone(math.log1p),
    _K.EXPM1: _monotone(math.expm1),
    _K.LOG2: _monotone(math.log2),
    _K.LOG10: _monotone(math.log10),
    _K.SINH: _monotone(math.sinh),
    _K.COSH: _cosh_range,
    _K.ATAN: _monotone(math.atan),
    _K.ASIN: _monotone(math.asin),
    _K.ACOS: lambda x, kind: (math.acos(x[1]), math.acos(x[0])),
    _K.RSQRT: lambda x, kind: (1 / math.sqrt(x[1]), 1 / math.sqrt(x[0])),
    _K.SIGMOID: _bounded(0.0, 1.0),
    _K.TANH: _bounded(-1.0, 1.0),
    _K.ERF: _bounded(-1.0, 1.0),
    _K.SIN: _bounded(-1.0, 1.0),
    _K.COS: _bounded(-1.0, 1.0),
}


def _unary_range(op: type[g.UnaryOp], x: _Range, kind: str) -> _Range:
    """The range of ``op`` on ``x``, whose domain the caller ensured."""
    return _UNARY_RULES[op.KIND](x, kind)


_BinaryRule = Callable[[_Range, _Range, str], _Range]


def _corners(combine: Callable[[float, float], float]) -> _BinaryRule:
    return lambda a, b, kind: _span(combine(x, y) for x in a for y in b)


#: The range of each binary kind's result (powers are the caller's, divisors
#: exclude zero).
_BINARY_RULES: dict[ElementwiseKind, _BinaryRule] = {
    _K.ADD: lambda a, b, kind: (a[0] + b[0], a[1] + b[1]),
    _K.SUB: lambda a, b, kind: (a[0] - b[1], a[1] - b[0]),
    _K.MUL: _corners(lambda x, y: x * y),
    _K.DIV: _corners(lambda x, y: x / y),
    _K.FLOORDIV: _corners(lambda x, y: math.floor(x / y)),
    _K.REM: lambda a, b, kind: (0.0, b[1]) if b[0] > 0 else (b[0], 0.0),
    _K.MAX: lambda a, b, kind: (max(a[0], b[0]), max(a[1], b[1])),
    _K.MIN: lambda a, b, kind: (min(a[0], b[0]), min(a[1], b[1])),
    _K.AND: _bitwise_range,
    _K.OR: _bitwise_range,
    _K.XOR: _bitwise_range,
    _K.ATAN2: lambda a, b, kind: (-math.pi, math.pi),
}


def _binary_range(op: type[g.BinaryOp], a: _Range, b: _Range, kind: str) -> _Range:
    """The range of ``op`` on ``a`` and ``b``, whose domain the caller
    ensured (divisors exclude zero, powers are handled by the caller)."""
    return _BINARY_RULES[op.KIND](a, b, kind)


def _growth(op: type[g.BinaryOp], a: float, b: float) -> float:
    """A bound on ``|op(x, y)|`` for ``|x| <= a`` and ``|y| <= b``, after the
    domain fixes (which add at most 1 to a magnitude)."""
    if op in (g.MulOp, g.PowOp):
        return (a + 1) * (b + 1)
    if op in (g.DivOp, g.FloorDivOp):
        return 2 * a + 1
    if op is g.RemOp:
        return b + 1
    if op is g.Atan2Op:
        return math.pi
    return 2 * max(a, b) + 2


def _input_range(kind: str) -> _Range:
    if kind == "f":
        return -FLOAT_INPUT_RANGE, FLOAT_INPUT_RANGE
    if kind == "i":
        return float(-INT_INPUT_RANGE), float(INT_INPUT_RANGE)
    return 0.0, 1.0
