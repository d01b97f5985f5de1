"""Interval arithmetic on integers, with infinite ends.

An interval ``(low, high)`` bounds an integer quantity; a bound is an ``int``
or, for an unbounded side, a float infinity. Floats never meet ints in
arithmetic (only in comparisons), so large ints stay exact. The ``_x*``
functions combine bounds, the ``_i*`` functions and the ``*_interval``
functions intervals; every result contains every value the operation can
take on its arguments' intervals. Symbolic divisors are positive, so
:func:`_divisor_interval` clamps a divisor's interval to ``[1, ...]``.
"""

from __future__ import annotations

import math
from typing import TypeAlias

_Bound: TypeAlias = "int | float"
_Interval: TypeAlias = "tuple[_Bound, _Bound]"
_INF = math.inf


def _xadd(a: _Bound, b: _Bound) -> _Bound:
    if isinstance(a, float):
        return a
    if isinstance(b, float):
        return b
    return a + b


def _xmul(a: _Bound, b: _Bound) -> _Bound:
    if a == 0 or b == 0:
        return 0
    if isinstance(a, float) or isinstance(b, float):
        return _INF if (a > 0) == (b > 0) else -_INF
    return a * b


def _xpow(a: _Bound, power: int) -> _Bound:
    if isinstance(a, float):
        return -_INF if a < 0 and power % 2 else _INF
    return a**power


def _xfloordiv(a: _Bound, b: _Bound) -> _Bound:
    """``floor(a / b)`` for ``b >= 1``."""
    if isinstance(a, float):
        return a
    if isinstance(b, float):
        return 0 if a >= 0 else -1
    return a // b


def _xceildiv(a: _Bound, b: int) -> _Bound:
    return a if isinstance(a, float) else -(-a // b)


def _imul(x: _Interval, y: _Interval) -> _Interval:
    products = [_xmul(a, b) for a in x for b in y]
    return min(products), max(products)


def _ipow(x: _Interval, power: int) -> _Interval:
    if power == 1:
        return x
    low, high = x
    ends = (_xpow(low, power), _xpow(high, power))
    if power % 2 == 0 and low < 0 < high:
        return 0, max(ends)
    return min(ends), max(ends)


def _meet(x: _Interval, y: _Interval) -> _Interval:
    return max(x[0], y[0]), min(x[1], y[1])


def _divisor_interval(x: _Interval) -> _Interval:
    """Symbolic divisors are assumed positive."""
    low = max(x[0], 1)
    return low, max(x[1], low)


def _floordiv_interval(num: _Interval, den: _Interval) -> _Interval:
    # floor(n / d) is monotone in n and, for d > 0, in d: corners suffice.
    values = [_xfloordiv(n, d) for n in num for d in den]
    return min(values), max(values)


def _mod_interval(num: _Interval, den: _Interval) -> _Interval:
    if num[0] >= 0 and num[1] < den[0]:
        return num  # always below the divisor: the mod is the identity
    top = _xadd(den[1], -1)
    if num[0] >= 0:
        top = min(top, num[1])
    return 0, top
