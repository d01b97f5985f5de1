"""NumPy's float functions that irc composes from graph ops at capture:
``np.logaddexp``, ``np.logaddexp2``, ``np.hypot``, ``np.fmod``, ``np.cbrt``
and ``np.sinc``.

None is a primitive (docs/primitives.md: composites are decompositions):
each is a few elementwise ops that every level lowers, fuses and
differentiates already. Each follows the numerically sound formula NumPy's
own loop uses, with NumPy's values at zeros, infinities and NaN, in NumPy
2's dtype: ints in float64, bools in float16, and 16-bit floats computed in
float32 and rounded once, as NumPy's half-precision loops compute them
(``np.sinc``, a Python function of ufuncs in NumPy, rounds where NumPy's
ufuncs round). Selects keep the branch not taken finite, so that its
gradient is 0 rather than ``0 * inf``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from irc.capture import layout
from irc.capture.ops import (
    Operand,
    as_strong,
    binary,
    broadcast_shapes,
    cast,
    compare,
    materialize,
    result_dtype,
    select,
    shape_of,
    unary,
)
from irc.capture.tensor import FUNCTION_HANDLERS, UFUNC_HANDLERS, Tensor
from irc.capture.trace import tracing_error
from irc.dtypes import BOOL, FLOAT16, FLOAT32, FLOAT64, DType
from irc.dtypes import dtype as to_dtype
from irc.errors import IrcTypeError
from irc.primitives.builtin import (
    ABS,
    ADD,
    AND,
    DIV,
    EXP,
    LOG1P,
    MAX,
    MIN,
    MUL,
    NEG,
    OR,
    POW,
    REM,
    SIN,
    SQRT,
    SUB,
    XOR,
)

# ----- types --------------------------------------------------------------------


def _float_loop(name: str, values: tuple[Operand, ...], requested: Any) -> DType:
    """The float type of NumPy's loop: ``dtype=`` where given, else the
    operands' promoted type, ints in float64 and bools in float16."""
    if requested is not None:
        element = to_dtype(requested)
        if element.kind != "f":
            raise tracing_error(
                f"{name}(..., dtype={element.name}): NumPy has no {element.name} "
                "loop for it (a float function); pass a float dtype",
                IrcTypeError,
            )
        return element
    element = result_dtype(values)
    if element.kind == "f":
        return element
    return FLOAT16 if element == BOOL else FLOAT64


def _working(element: DType) -> DType:
    """Where a 16-bit float is computed: float32, as NumPy's half loops."""
    return FLOAT32 if element.bits == 16 else element


def _operands(values: tuple[Operand, ...], element: DType) -> list[Tensor]:
    """The operands in ``element``, broadcast to their common shape."""
    shape = broadcast_shapes(*(shape_of(v) for v in values))
    return [materialize(v, element, shape) for v in values]


def _rounded(result: Tensor, element: DType) -> Tensor:
    """The result of a function (never weak), rounded once to ``element``."""
    return as_strong(cast(result, element))


def _is_nan(value: Tensor) -> Tensor:
    return compare("ne", value, value)


# ----- logaddexp and logaddexp2 ---------------------------------------------------

LN2 = math.log(2.0)


def _log_add_exp(name: str, values: tuple[Operand, ...], dtype: Any, base_two: bool):
    """NumPy's ``larger + log1p(exp(-|a - b|))`` (``exp2`` and ``log2`` for
    ``base_two``), where nothing overflows: the larger operand chosen by
    one select, so that at a tie each operand gets half the gradient and
    the Hessian is the smooth function's; NaN wins, and equal infinities
    (whose difference is NaN) are themselves."""
    element = _float_loop(name, values, dtype)
    a, b = _operands(values, _working(element))
    first = binary(OR, compare("ge", a, b), _is_nan(a))
    larger = select(first, a, b)
    gap = select(first, binary(SUB, b, a), binary(SUB, a, b))  # -|a - b|
    gap = select(_is_nan(gap), 0.0, gap)  # inf - inf: the larger is that inf
    if base_two:
        # log2(1 + 2**gap): exactly 1 at a tie, as NumPy's x + 1.
        term = binary(DIV, unary(LOG1P, unary(EXP, binary(MUL, gap, LN2))), LN2)
    else:
        term = unary(LOG1P, unary(EXP, gap))
    return _rounded(binary(ADD, larger, term), element)


def logaddexp(x1: Operand, x2: Operand, dtype: Any = None) -> Tensor:
    return _log_add_exp("np.logaddexp", (x1, x2), dtype, base_two=False)


def logaddexp2(x1: Operand, x2: Operand, dtype: Any = None) -> Tensor:
    return _log_add_exp("np.logaddexp2", (x1, x2), dtype, base_two=True)


# ----- hypot ---------------------------------------------------------------------


def hypot(x1: Operand, x2: Operand, dtype: Any = None) -> Tensor:
    """``big * sqrt(1 + (small / big)**2)`` of the magnitudes, which
    overflows only where the result does (JAX's formula, and its gradient:
    ``x / hypot`` and half the cotangent to each at a tie, ``(0.5, 0.5)``
    at the origin); an infinite operand gives inf, NaN or not (C's hypot)."""
    element = _float_loop("np.hypot", (x1, x2), dtype)
    a, b = (unary(ABS, v) for v in _operands((x1, x2), _working(element)))
    big, small = binary(MAX, a, b), binary(MIN, a, b)
    # 0 / 0 at the origin would be NaN, and its gradient too: divide by 1.
    ratio = binary(DIV, small, select(compare("eq", big, 0), 1.0, big))
    length = binary(MUL, big, unary(SQRT, binary(ADD, 1.0, binary(MUL, ratio, ratio))))
    infinite = binary(OR, compare("eq", a, math.inf), compare("eq", b, math.inf))
    return _rounded(select(infinite, math.inf, length), element)


# ----- fmod ------------------------------------------------------------------------


def fmod(x1: Operand, x2: Operand, dtype: Any = None) -> Tensor:
    """C's ``fmod``: the remainder of the quotient truncated towards zero,
    with the dividend's sign. Floats: ``remainder(|a|, |b|)`` (exact, NaN
    for a divisor of 0) signed as ``a``; ints: ``remainder`` moved to the
    dividend's sign, 0 for a divisor of 0 as NumPy's (which also warns)."""
    values = (x1, x2)
    element = result_dtype(values) if dtype is None else to_dtype(dtype)
    if element == BOOL:
        raise tracing_error(
            "np.fmod of bools: NumPy computes it in int8, which irc does not "
            "have; cast them with .astype(np.int32) first",
            IrcTypeError,
        )
    a, b = _operands(values, element)
    if element.kind == "i":
        # |a| would wrap at the least int: correct the divisor-signed remainder.
        remainder = binary(REM, a, b)
        moved = binary(
            AND,
            compare("ne", remainder, 0),
            binary(XOR, compare("lt", remainder, 0), compare("lt", a, 0)),
        )
        return as_strong(select(moved, binary(SUB, remainder, b), remainder))
    magnitude = binary(REM, unary(ABS, a), unary(ABS, b))
    signed = select(compare("lt", a, 0), unary(NEG, magnitude), magnitude)
    # A zero dividend is its own result, -0.0 too, with the slope 1 of the
    # others (a signbit select would negate the slope at -0.0).
    zero = binary(AND, compare("eq", a, 0), compare("eq", magnitude, 0))
    return as_strong(select(zero, a, signed))


# ----- cbrt ------------------------------------------------------------------------


def cbrt(x: Operand, dtype: Any = None) -> Tensor:
    """``|x| ** (1/3)`` refined by one Newton step (exact on perfect cubes,
    within an ulp elsewhere; the power alone is several ulps off), signed
    as ``x``; zeros, infinities and NaN are their own roots. The gradient is
    ``1 / (3 cbrt(x)**2)``, inf at +-0 (as JAX's)."""
    element = _float_loop("np.cbrt", (x,), dtype)
    (value,) = _operands((x,), _working(element))
    magnitude = unary(ABS, value)
    root = binary(POW, magnitude, 1.0 / 3.0)
    refine = binary(AND, compare("gt", root, 0), compare("lt", root, math.inf))
    safe = select(refine, root, 1.0)
    # Newton's step for y**3 = m: y - (y - m / y**2) / 3.
    residual = binary(SUB, safe, binary(DIV, magnitude, binary(MUL, safe, safe)))
    step = select(refine, binary(DIV, residual, 3.0), 0.0)
    refined = binary(SUB, root, step)
    signed = select(compare("lt", value, 0), unary(NEG, refined), refined)
    # At +-0: -(-x - root), which is x, -0.0 too (root is +0.0), and has
    # the root's infinite slope.
    at_zero = unary(NEG, binary(SUB, unary(NEG, value), refined))
    return _rounded(select(compare("eq", value, 0), at_zero, signed), element)


# ----- sinc ------------------------------------------------------------------------


def sinc(x: Operand) -> Tensor:
    """NumPy's ``sin(y) / y`` for ``y = pi * x`` (in x's float type, float64
    for ints and bools, rounded as NumPy's ufuncs round), 1 where ``y`` is
    0 (NumPy divides ``sin(eps) / eps`` there). At 0 the value is ``1 -
    y**2 / 6``, which is 1, so that the first and second derivatives are
    sinc's (0 and ``-pi**2 / 3``) as JAX's."""
    scaled = binary(MUL, layout.as_tensor(x), math.pi)
    zero = compare("eq", scaled, 0)
    safe = select(zero, 1.0, scaled)
    ratio = binary(DIV, unary(SIN, safe), safe)
    series = binary(SUB, 1.0, binary(DIV, binary(MUL, scaled, scaled), 6.0))
    return as_strong(select(zero, series, ratio))


UFUNC_HANDLERS[np.logaddexp] = logaddexp
UFUNC_HANDLERS[np.logaddexp2] = logaddexp2
UFUNC_HANDLERS[np.hypot] = hypot
UFUNC_HANDLERS[np.fmod] = fmod
UFUNC_HANDLERS[np.cbrt] = cbrt
FUNCTION_HANDLERS[np.sinc] = sinc
