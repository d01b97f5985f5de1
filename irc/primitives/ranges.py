"""The vocabulary of primitives' value ranges (``TestDomain.range``).

A range is ``(low, high)`` in floats: an interval holding every value of an
SSA value on irc.testing's inputs. A rule maps operand ranges (already in
the primitive's operand domain) and the element kind to the result's range.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from irc.primitives.declaration import Range

UnaryRange = Callable[[Range, str], Range]
BinaryRange = Callable[[Range, Range, str], Range]


def magnitude(value_range: Range) -> float:
    return max(abs(value_range[0]), abs(value_range[1]))


def span(values: Iterable[float]) -> Range:
    items = list(values)
    return min(items), max(items)


def monotone(function: Callable[[float], float]) -> UnaryRange:
    """An increasing function: the ends map to the ends."""
    return lambda x, kind: (function(x[0]), function(x[1]))


def decreasing(function: Callable[[float], float]) -> UnaryRange:
    return lambda x, kind: (function(x[1]), function(x[0]))


def bounded(low: float, high: float) -> UnaryRange:
    return lambda x, kind: (low, high)


def corners(combine: Callable[[float, float], float]) -> BinaryRange:
    """A function monotone in each operand: the extremes lie at corners."""
    return lambda a, b, kind: span(combine(x, y) for x in a for y in b)


def negated(x: Range, kind: str) -> Range:
    return -x[1], -x[0]


def absolute(x: Range, kind: str) -> Range:
    lo, hi = x
    return (0.0 if lo < 0 < hi else min(abs(lo), abs(hi))), magnitude(x)


def inverted(x: Range, kind: str) -> Range:
    """Bitwise (integers) or logical (bools) not."""
    return (0.0, 1.0) if kind == "b" else (-x[1] - 1, -x[0] - 1)


def cosh(x: Range, kind: str) -> Range:
    lo, hi = x
    ends = (math.cosh(lo), math.cosh(hi))
    return (1.0 if lo < 0 < hi else min(ends)), max(ends)


def bitwise(lhs: Range, rhs: Range, kind: str) -> Range:
    if kind == "b":
        return 0.0, 1.0
    bound = 2.0 ** math.ceil(math.log2(max(magnitude(lhs), magnitude(rhs)) + 1))
    return -bound, bound


def additive_growth(a: float, b: float) -> float:
    """The default bound on ``|f(x, y)|``: ``2 max(a, b) + 2``."""
    return 2 * max(a, b) + 2
