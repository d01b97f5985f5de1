"""Interval arithmetic on integers, with infinite ends.

An interval ``(low, high)`` bounds an integer quantity; a bound is an ``int``
or, for an unbounded side, a float infinity. Floats never meet ints in
arithmetic (only in comparisons), so large ints stay exact. The ``_x*``
functions combine bounds, the ``_i*`` functions and the ``*_interval``
functions intervals; every result contains every value the operation can
take on its arguments' intervals. Symbolic divisors are positive, so
:func:`divisor_interval` clamps a divisor's interval to ``[1, ...]``.
"""

from __future__ import annotations

import math
from typing import TypeAlias

Bound: TypeAlias = "int | float"
Interval: TypeAlias = "tuple[Bound, Bound]"
INF = math.inf


def xadd(a: Bound, b: Bound) -> Bound:
    if isinstance(a, float):
        return a
    if isinstance(b, float):
        return b
    return a + b


def _xmul(a: Bound, b: Bound) -> Bound:
    if a == 0 or b == 0:
        return 0
    if isinstance(a, float) or isinstance(b, float):
        return INF if (a > 0) == (b > 0) else -INF
    return a * b


def _xpow(a: Bound, power: int) -> Bound:
    if isinstance(a, float):
        return -INF if a < 0 and power % 2 else INF
    return a**power


def xfloordiv(a: Bound, b: Bound) -> Bound:
    """``floor(a / b)`` for ``b >= 1``."""
    if isinstance(a, float):
        return a
    if isinstance(b, float):
        return 0 if a >= 0 else -1
    return a // b


def xceildiv(a: Bound, b: int) -> Bound:
    return a if isinstance(a, float) else -(-a // b)


def imul(x: Interval, y: Interval) -> Interval:
    products = [_xmul(a, b) for a in x for b in y]
    return min(products), max(products)


def ipow(x: Interval, power: int) -> Interval:
    if power == 1:
        return x
    low, high = x
    ends = (_xpow(low, power), _xpow(high, power))
    if power % 2 == 0 and low < 0 < high:
        return 0, max(ends)
    return min(ends), max(ends)


def meet(x: Interval, y: Interval) -> Interval:
    return max(x[0], y[0]), min(x[1], y[1])


def divisor_interval(x: Interval) -> Interval:
    """Symbolic divisors are assumed positive."""
    low = max(x[0], 1)
    return low, max(x[1], low)


def floordiv_interval(num: Interval, den: Interval) -> Interval:
    # floor(n / d) is monotone in n and, for d > 0, in d: corners suffice.
    values = [xfloordiv(n, d) for n in num for d in den]
    return min(values), max(values)


def mod_interval(num: Interval, den: Interval) -> Interval:
    if num[0] >= 0 and num[1] < den[0]:
        return num  # always below the divisor: the mod is the identity
    top = xadd(den[1], -1)
    if num[0] >= 0:
        top = min(top, num[1])
    return 0, top
