"""irc's own primitives, one declaration each (see docs/primitives.md)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from irc.dtypes import compute_dtype
from irc.primitives import gradients as grad
from irc.primitives import onnx_forms as onnx
from irc.primitives import ranges
from irc.primitives import spelling as tl
from irc.primitives.declaration import (
    Identity,
    Of,
    OnnxForm,
    OperandDomain,
    Precision,
    Primitive,
    Splat,
    TestDomain,
    TritonSpelling,
    X,
    Y,
    declare,
    idempotent,
    involution,
    right_absorbing,
    right_identity,
    same_operands,
)

_FLOAT = frozenset("f")
_NUMBERS = frozenset("if")
_BITS = frozenset("bi")
#: Comparison predicates, as graph.compare spells them.
_EQ, _GE = "eq", "ge"
_FULL = Precision.FULL

# --------------------------------------------------------------------------
# Reference semantics of the composites
# --------------------------------------------------------------------------


def _rounded_once(
    function: Callable[[np.ndarray], np.ndarray],
) -> Callable[[np.ndarray], np.ndarray]:
    """Apply a composite function at float32 or wider and round once to the
    operand's dtype, so 16-bit results do not pile up rounding errors."""

    def apply(x: np.ndarray) -> np.ndarray:
        return function(x.astype(compute_dtype(x.dtype))).astype(x.dtype)

    return apply


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(x))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    one = x.dtype.type(1)
    return one / (one + np.exp(-x))


_math_erf = np.vectorize(math.erf, otypes=[np.float64])


def _erf(x: np.ndarray) -> np.ndarray:
    """``math.erf`` in float64 (NumPy has no erf and irc does not need
    SciPy), rounded to the operand's dtype."""
    return _math_erf(x.astype(np.float64)).astype(x.dtype)


# --------------------------------------------------------------------------
# Gradients that need more than the vocabulary
# --------------------------------------------------------------------------


def _abs_gradient(emit: Any, op: Any, cotangent: Any) -> Any:
    """Derivative 1 at 0, as JAX."""
    (x,) = op.operands
    non_negative = emit.compare(_GE, x, emit.constant_like(0, x))
    return emit.select(non_negative, cotangent, emit.neg(cotangent))


def _erf_slope(emit: Any, x: Any, z: Any) -> Any:
    gauss = emit.apply(EXP, emit.neg(emit.mul(x, x)))
    return emit.scale(gauss, 2 / math.sqrt(math.pi))


def _sqrt_one_minus_square(emit: Any, x: Any, z: Any) -> Any:
    """``sqrt(1 - x**2)``: 0 at +-1, where ``asin``/``acos`` have an infinite
    slope (the cotangent divides by it, as JAX's)."""
    return emit.apply(SQRT, grad.one_minus(emit, emit.mul(x, x)))


def _acos_gradient(emit: Any, op: Any, cotangent: Any) -> Any:
    return emit.neg(grad.reciprocal_of(_sqrt_one_minus_square)(emit, op, cotangent))


def _lhs_times_rhs(emit: Any, op: Any, cotangent: Any) -> Any:
    return emit.mul(cotangent, op.operands[1])


def _rhs_times_lhs(emit: Any, op: Any, cotangent: Any) -> Any:
    return emit.mul(cotangent, op.operands[0])


def _div_lhs(emit: Any, op: Any, cotangent: Any) -> Any:
    return emit.div(cotangent, op.operands[1])


def _div_rhs(emit: Any, op: Any, cotangent: Any) -> Any:
    """``-g * (x / y) / y``."""
    quotient, y = op.results[0], op.operands[1]
    return emit.neg(emit.div(emit.mul(cotangent, quotient), y))


def _rem_rhs(emit: Any, op: Any, cotangent: Any) -> Any:
    """``x % y = x - y * floor(x / y)``: ``-g * floor(x / y)``."""
    x, y = op.operands
    quotient = emit.apply(FLOOR, emit.div(x, y))
    return emit.neg(emit.mul(cotangent, quotient))


def _pow_lhs(emit: Any, op: Any, cotangent: Any) -> Any:
    """``g * y * x**(y - 1)``, 0 where ``y == 0`` (as JAX)."""
    x, y = op.operands
    lowered = emit.apply(POW, x, emit.sub(y, emit.constant_like(1, y)))
    slope = emit.where_zero(
        emit.compare(_EQ, y, emit.constant_like(0, y)), emit.mul(y, lowered)
    )
    return emit.mul(cotangent, slope)


def _pow_rhs(emit: Any, op: Any, cotangent: Any) -> Any:
    """``g * x**y * log(x)``, with ``log(1)`` where ``x == 0`` (as JAX)."""
    x = op.operands[0]
    zero_base = emit.compare(_EQ, x, emit.constant_like(0, x))
    safe = emit.select(zero_base, emit.constant_like(1, x), x)
    log = emit.apply(LOG, safe)
    return emit.mul(cotangent, emit.mul(op.results[0], log))


def _chooser(index: int) -> Callable[[Any, Any, Any], Any]:
    """Operand ``index`` of ``maximum``/``minimum``: the whole cotangent
    where it alone is the result, half of it on a tie (JAX's rule)."""

    def rule(emit: Any, op: Any, cotangent: Any) -> Any:
        mine, other = op.operands[index], op.operands[1 - index]
        result = op.results[0]
        chosen = emit.compare(_EQ, mine, result)
        tie = emit.compare(_EQ, other, result)
        share = emit.select(
            tie, emit.constant_like(0.5, result), emit.constant_like(1, result)
        )
        return emit.mul(cotangent, emit.select(chosen, share, emit.zeros_like(share)))

    return rule


def _atan2_part(index: int) -> Callable[[Any, Any, Any], Any]:
    """``atan2(y, x)``: ``g * x / (x**2 + y**2)`` for ``y``, ``-g * y / (x**2
    + y**2)`` for ``x`` (at the origin both divide by zero, as JAX's)."""

    def rule(emit: Any, op: Any, cotangent: Any) -> Any:
        y, x = op.operands
        norm = emit.add(emit.mul(x, x), emit.mul(y, y))
        share = emit.div(x, norm) if index == 0 else emit.neg(emit.div(y, norm))
        return emit.mul(cotangent, share)

    return rule


# --------------------------------------------------------------------------
# Unary
# --------------------------------------------------------------------------


def _float_function(
    name: str,
    numpy: Callable[..., np.ndarray],
    summary: str,
    triton: TritonSpelling,
    test: TestDomain,
    **rest: Any,
) -> Primitive:
    """A unary function of floats (NumPy computes ints and bools in floats)."""
    return declare(Primitive(name, 1, _FLOAT, numpy, summary, triton, test, **rest))


def _f32_call(function: str) -> TritonSpelling:
    return TritonSpelling(tl.in_f32(tl.call(function)))


_NEGATE = tl.as_is(lambda x: f"(-{x})")
_INVERT = tl.as_is(lambda x: f"(~{x})")
_UNIT = TestDomain(ranges.bounded(-1.0, 1.0))
_ROUNDING = dict(integral_identity=True)

NEG = declare(
    Primitive(
        "neg",
        1,
        _NUMBERS,
        np.negative,
        "Elementwise negation.",
        TritonSpelling(tl.in_f32(lambda x: f"(-{x})"), integers=_NEGATE),
        TestDomain(ranges.negated),
        gradient=(grad.negated,),
        identities=(involution("neg"),),
        onnx=OnnxForm(("Neg",), "Neg"),
        aten=("aten.neg",),
        python_operator=True,
    )
)
ABS = declare(
    Primitive(
        "abs",
        1,
        frozenset("bif"),
        np.abs,
        "Elementwise absolute value.",
        TritonSpelling(
            tl.in_f32(tl.call("tl.abs")),
            integers=tl.as_is(tl.call("tl.abs")),
            bools=tl.as_is(lambda x: x),
        ),
        TestDomain(ranges.absolute),
        gradient=(_abs_gradient,),
        identities=(
            idempotent("abs"),
            # abs(neg(x)) is abs(x), also for INT_MIN, which both leave as is.
            Identity((Of("neg", (X,)),), Of("abs", (X,))),
        ),
        onnx=OnnxForm(("Abs",), onnx.absolute),
        aten=("aten.abs",),
        python_operator=True,
    )
)
EXP = _float_function(
    "exp",
    np.exp,
    "Elementwise e**x.",
    _f32_call("tl.exp"),
    TestDomain(ranges.monotone(math.exp), OperandDomain.EXPONENT),
    gradient=(grad.times(lambda emit, x, z: z),),
    precision=_FULL,
    onnx=OnnxForm(("Exp",), "Exp"),
    aten=("aten.exp",),
)
LOG = _float_function(
    "log",
    np.log,
    "Elementwise natural logarithm.",
    _f32_call("tl.log"),
    TestDomain(ranges.monotone(math.log), OperandDomain.POSITIVE),
    gradient=(lambda emit, op, ct: emit.div(ct, op.operands[0]),),
    precision=_FULL,
    onnx=OnnxForm(("Log",), "Log"),
    aten=("aten.log",),
)
SQRT = _float_function(
    "sqrt",
    np.sqrt,
    "Elementwise square root.",
    TritonSpelling(
        tl.in_f32(tl.call("tl.sqrt_rn")), float64=tl.as_is(tl.call("tl.sqrt"))
    ),
    TestDomain(ranges.monotone(math.sqrt), OperandDomain.NON_NEGATIVE),
    gradient=(lambda emit, op, ct: emit.div(emit.scale(ct, 0.5), op.results[0]),),
    precision=_FULL,
    onnx=OnnxForm(("Sqrt",), "Sqrt"),
    aten=("aten.sqrt",),
)
RSQRT = _float_function(
    "rsqrt",
    _rounded_once(_rsqrt),
    "Elementwise 1/sqrt(x).",
    TritonSpelling(
        tl.in_f32(lambda x: f"tl.div_rn(1.0, tl.sqrt_rn({x}))"),
        float64=tl.as_is(lambda x: f"(1.0 / tl.sqrt({x}))"),
    ),
    TestDomain(ranges.decreasing(lambda v: 1 / math.sqrt(v)), OperandDomain.POSITIVE),
    gradient=(grad.times(lambda emit, x, z: emit.scale(emit.div(z, x), -0.5)),),
    precision=_FULL,
    onnx=OnnxForm((), onnx.rsqrt),
    aten=("aten.rsqrt",),
)
TANH = _float_function(
    "tanh",
    np.tanh,
    "Elementwise hyperbolic tangent.",
    _f32_call("_irc_tanh"),
    _UNIT,
    gradient=(grad.times(lambda emit, x, z: grad.one_minus(emit, emit.mul(z, z))),),
    onnx=OnnxForm(("Tanh",), "Tanh"),
    aten=("aten.tanh",),
)
SIGMOID = _float_function(
    "sigmoid",
    _rounded_once(_sigmoid),
    "Elementwise 1/(1+exp(-x)).",
    TritonSpelling(
        tl.in_f32(lambda x: f"tl.div_rn(1.0, 1.0 + tl.exp(-{x}))"),
        float64=tl.as_is(lambda x: f"(1.0 / (1.0 + tl.exp(-{x})))"),
    ),
    TestDomain(ranges.bounded(0.0, 1.0)),
    gradient=(grad.times(lambda emit, x, z: emit.mul(z, grad.one_minus(emit, z))),),
    onnx=OnnxForm(("Sigmoid",), "Sigmoid"),
    aten=("aten.sigmoid",),
)
ERF = _float_function(
    "erf",
    _erf,
    "Elementwise error function.",
    TritonSpelling(tl.in_f32(lambda x: f"tl.erf({x}.to(tl.float64)).to({x}.dtype)")),
    _UNIT,
    gradient=(grad.times(_erf_slope),),
    onnx=OnnxForm(("Erf",), "Erf"),
    aten=("aten.erf",),
)
SIN = _float_function(
    "sin",
    np.sin,
    "Elementwise sine.",
    _f32_call("tl.sin"),
    _UNIT,
    gradient=(grad.times(lambda emit, x, z: emit.apply(COS, x)),),
    onnx=OnnxForm(("Sin",), onnx.trigonometric("Sin")),
    aten=("aten.sin",),
)
COS = _float_function(
    "cos",
    np.cos,
    "Elementwise cosine.",
    _f32_call("tl.cos"),
    _UNIT,
    gradient=(grad.times(lambda emit, x, z: emit.neg(emit.apply(SIN, x))),),
    onnx=OnnxForm(("Cos",), onnx.trigonometric("Cos")),
    aten=("aten.cos",),
)
FLOOR = _float_function(
    "floor",
    np.floor,
    "Elementwise rounding towards -inf.",
    _f32_call("tl.floor"),
    TestDomain(ranges.monotone(math.floor), smooth=False),
    gradient=(grad.zero,),
    identities=(idempotent("floor"),),
    onnx=OnnxForm(("Floor",), "Floor"),
    aten=("aten.floor",),
    **_ROUNDING,
)
CEIL = _float_function(
    "ceil",
    np.ceil,
    "Elementwise rounding towards +inf.",
    _f32_call("tl.ceil"),
    TestDomain(ranges.monotone(math.ceil), smooth=False),
    gradient=(grad.zero,),
    identities=(idempotent("ceil"),),
    onnx=OnnxForm(("Ceil",), onnx.in_float32("Ceil")),
    aten=("aten.ceil",),
    **_ROUNDING,
)
TRUNC = _float_function(
    "trunc",
    np.trunc,
    "Elementwise rounding towards zero.",
    _f32_call("_irc_trunc"),
    TestDomain(ranges.monotone(math.trunc), smooth=False),
    gradient=(grad.zero,),
    identities=(idempotent("trunc"),),
    onnx=OnnxForm((), onnx.trunc),
    aten=("aten.trunc",),
    **_ROUNDING,
)
RINT = _float_function(
    "rint",
    np.rint,
    "Elementwise rounding to the nearest integer, halves to even.",
    _f32_call("_irc_rint"),
    # Python's round takes halves to even, as np.rint.
    TestDomain(ranges.monotone(round), smooth=False),
    gradient=(grad.zero,),
    identities=(idempotent("rint"),),
    # ONNX's Round rounds halves to even, as np.rint.
    onnx=OnnxForm((), onnx.in_float32("Round")),
    aten=("aten.round",),
)
LOG1P = _float_function(
    "log1p",
    np.log1p,
    "Elementwise log(1 + x), accurate for small x.",
    _f32_call("_irc_log1p"),
    TestDomain(ranges.monotone(math.log1p), OperandDomain.ABOVE_MINUS_ONE),
    gradient=(grad.reciprocal_of(lambda emit, x, z: grad.one_plus(emit, x)),),
    precision=_FULL,
    onnx=OnnxForm((), onnx.log1p),
    aten=("aten.log1p",),
)
EXPM1 = _float_function(
    "expm1",
    np.expm1,
    "Elementwise exp(x) - 1, accurate for small x.",
    _f32_call("_irc_expm1"),
    TestDomain(ranges.monotone(math.expm1), OperandDomain.EXPONENT),
    gradient=(grad.times(lambda emit, x, z: grad.one_plus(emit, z)),),
    precision=_FULL,
    onnx=OnnxForm((), onnx.expm1),
    aten=("aten.expm1",),
)
LOG2 = _float_function(
    "log2",
    np.log2,
    "Elementwise base-2 logarithm.",
    TritonSpelling(tl.in_f32(tl.in_f64("tl.log2({})"))),
    TestDomain(ranges.monotone(math.log2), OperandDomain.POSITIVE),
    gradient=(grad.reciprocal_of(lambda emit, x, z: emit.scale(x, math.log(2))),),
    precision=_FULL,
    onnx=OnnxForm((), onnx.log_base(2.0)),
    aten=("aten.log2",),
)
LOG10 = _float_function(
    "log10",
    np.log10,
    "Elementwise base-10 logarithm.",
    TritonSpelling(tl.in_f32(tl.in_f64("(tl.log({}) * 0.4342944819032518)"))),
    TestDomain(ranges.monotone(math.log10), OperandDomain.POSITIVE),
    gradient=(grad.reciprocal_of(lambda emit, x, z: emit.scale(x, math.log(10))),),
    precision=_FULL,
    onnx=OnnxForm((), onnx.log_base(10.0)),
    aten=("aten.log10",),
)
SINH = _float_function(
    "sinh",
    np.sinh,
    "Elementwise hyperbolic sine.",
    _f32_call("_irc_sinh"),
    TestDomain(ranges.monotone(math.sinh), OperandDomain.TWO_SIDED_EXPONENT),
    gradient=(grad.times(lambda emit, x, z: emit.apply(COSH, x)),),
    precision=_FULL,
    onnx=OnnxForm((), onnx.in_float32("Sinh")),
    aten=("aten.sinh",),
)
COSH = _float_function(
    "cosh",
    np.cosh,
    "Elementwise hyperbolic cosine.",
    _f32_call("_irc_cosh"),
    TestDomain(ranges.cosh, OperandDomain.TWO_SIDED_EXPONENT),
    gradient=(grad.times(lambda emit, x, z: emit.apply(SINH, x)),),
    precision=_FULL,
    onnx=OnnxForm((), onnx.in_float32("Cosh")),
    aten=("aten.cosh",),
)
ATAN = _float_function(
    "atan",
    np.arctan,
    "Elementwise inverse tangent (``np.arctan``).",
    _f32_call("_irc_atan"),
    TestDomain(ranges.monotone(math.atan)),
    gradient=(
        grad.reciprocal_of(lambda emit, x, z: grad.one_plus(emit, emit.mul(x, x))),
    ),
    onnx=OnnxForm((), onnx.in_float32("Atan")),
    aten=("aten.atan",),
)
ASIN = _float_function(
    "asin",
    np.arcsin,
    "Elementwise inverse sine (``np.arcsin``).",
    _f32_call("_irc_asin"),
    TestDomain(ranges.monotone(math.asin), OperandDomain.UNIT),
    gradient=(grad.reciprocal_of(_sqrt_one_minus_square),),
    onnx=OnnxForm((), onnx.in_float32("Asin")),
    aten=("aten.asin",),
)
ACOS = _float_function(
    "acos",
    np.arccos,
    "Elementwise inverse cosine (``np.arccos``).",
    _f32_call("_irc_acos"),
    TestDomain(ranges.decreasing(math.acos), OperandDomain.UNIT),
    gradient=(_acos_gradient,),
    onnx=OnnxForm((), onnx.in_float32("Acos")),
    aten=("aten.acos",),
)
TAN = _float_function(
    "tan",
    np.tan,
    "Elementwise tangent.",
    # Triton's interpreter has no tan (libdevice's is GPU-only): sin / cos in
    # float64, rounded once, so float32 results stay within an ulp of NumPy's.
    TritonSpelling(tl.in_f32(tl.in_f64("(tl.sin({0}) / tl.cos({0}))"))),
    # Within [-0.9, 0.9], far from the poles at +-pi/2, where tan is monotone.
    TestDomain(ranges.monotone(math.tan), OperandDomain.UNIT),
    # 1 + tan(x)**2 from the result: no second trigonometric call.
    gradient=(grad.times(lambda emit, x, z: grad.one_plus(emit, emit.mul(z, z))),),
    onnx=OnnxForm(("Tan",), onnx.in_float32("Tan")),
    aten=("aten.tan",),
)
NOT = declare(
    Primitive(
        "not",
        1,
        _BITS,
        np.invert,
        "Elementwise logical (bool) or bitwise (ints) not.",
        TritonSpelling(integers=_INVERT, bools=_INVERT),
        TestDomain(ranges.inverted),
        identities=(involution("not"),),
        onnx=OnnxForm(("BitwiseNot",), onnx.by_kind({"b": "Not", "i": "BitwiseNot"})),
        aten=("aten.bitwise_not",),
        python_operator=True,
    )
)

# --------------------------------------------------------------------------
# Binary
# --------------------------------------------------------------------------


def _binary(
    name: str,
    domain: frozenset[str],
    numpy: Callable[..., np.ndarray],
    summary: str,
    triton: TritonSpelling,
    test: TestDomain,
    **rest: Any,
) -> Primitive:
    return declare(Primitive(name, 2, domain, numpy, summary, triton, test, **rest))


def _arithmetic(operator: str) -> TritonSpelling:
    return TritonSpelling(
        tl.in_f32(tl.infix(operator)), integers=tl.as_is(tl.infix(operator))
    )


def _bitwise(operator: str) -> TritonSpelling:
    text = tl.as_is(tl.infix(operator))
    return TritonSpelling(integers=text, bools=text)


_BITWISE_TEST = TestDomain(ranges.bitwise)
_OR_ON_BOOLS = tl.as_is(tl.infix("|"))
_AND_ON_BOOLS = tl.as_is(tl.infix("&"))
_OPERATOR = dict(python_operator=True)

ADD = _binary(
    "add",
    _NUMBERS,
    np.add,
    "Elementwise sum.",
    TritonSpelling(
        tl.in_f32(tl.infix("+")), integers=tl.as_is(tl.infix("+")), bools=_OR_ON_BOOLS
    ),
    TestDomain(lambda a, b, kind: (a[0] + b[0], a[1] + b[1])),
    gradient=(grad.identity, grad.identity),
    # x + -0.0 on floats, x + 0 on integers (-0.0 is 0 there); not x + 0.0,
    # which is +0.0 for x = -0.0, though adding +0.0 twice is adding it once
    # (a slice's cotangents, each padded with zeros, summed).
    identities=(
        right_identity(-0.0),
        Identity((Of("add", (X, Splat(0.0)), bind="y"), Splat(0.0)), Y, "f"),
    ),
    commutative=True,
    onnx=OnnxForm(("Add",), "Add"),
    aten=("aten.add",),
    on_bools="or",
    **_OPERATOR,
)
SUB = _binary(
    "sub",
    _NUMBERS,
    np.subtract,
    "Elementwise difference.",
    _arithmetic("-"),
    TestDomain(lambda a, b, kind: (a[0] - b[1], a[1] - b[0])),
    gradient=(grad.identity, grad.negated),
    identities=(
        right_identity(0.0),
        # -0.0 - x (0 - x on integers) is neg(x); 0.0 - x is not (+0.0 at 0.0).
        Identity((Splat(-0.0), X), Of("neg", (X,))),
        # Not x - x on floats: inf - inf is NaN.
        same_operands(Splat(0), "ib"),
    ),
    onnx=OnnxForm(("Sub",), "Sub"),
    aten=("aten.sub",),
    **_OPERATOR,
)
MUL = _binary(
    "mul",
    _NUMBERS,
    np.multiply,
    "Elementwise product.",
    TritonSpelling(
        tl.in_f32(tl.infix("*")), integers=tl.as_is(tl.infix("*")), bools=_AND_ON_BOOLS
    ),
    TestDomain(
        ranges.corners(lambda x, y: x * y), growth=lambda a, b: (a + 1) * (b + 1)
    ),
    gradient=(_lhs_times_rhs, _rhs_times_lhs),
    identities=(
        right_identity(1),
        # x * 0 only on integers: NaN and infinities make it NaN on floats.
        right_absorbing(0),
        # Exact on floats, and the same wrap-around on integers.
        Identity((X, Splat(-1)), Of("neg", (X,))),
    ),
    commutative=True,
    onnx=OnnxForm(("Mul",), "Mul"),
    aten=("aten.mul",),
    on_bools="and",
    **_OPERATOR,
)
DIV = _binary(
    "div",
    _FLOAT,
    np.true_divide,
    "Elementwise true division.",
    _f32_call("_irc_div"),
    TestDomain(
        ranges.corners(lambda x, y: x / y),
        OperandDomain.DIVISOR,
        growth=lambda a, b: 2 * a + 1,
    ),
    gradient=(_div_lhs, _div_rhs),
    precision=_FULL,
    identities=(right_identity(1), Identity((X, Splat(-1)), Of("neg", (X,)))),
    onnx=OnnxForm((), "Div"),
    aten=("aten.div",),
    **_OPERATOR,
)
FLOORDIV = _binary(
    "floordiv",
    _NUMBERS,
    np.floor_divide,
    "Elementwise division rounded towards -inf (Python's ``//``).",
    TritonSpelling(
        tl.in_f32(tl.call("_irc_floordiv_f")),
        integers=tl.as_is(tl.call("_irc_floordiv_i")),
    ),
    TestDomain(
        ranges.corners(lambda x, y: math.floor(x / y)),
        OperandDomain.DIVISOR,
        steps=True,
        growth=lambda a, b: 2 * a + 1,
    ),
    gradient=(grad.zero, grad.zero),
    precision=_FULL,
    # Not on floats: NumPy's inf // 1 is NaN.
    identities=(right_identity(1, "i"),),
    onnx=OnnxForm((), onnx.floordiv),
    aten=("aten.floor_divide",),
    **_OPERATOR,
)
REM = _binary(
    "rem",
    _NUMBERS,
    np.remainder,
    "Elementwise remainder with the divisor's sign (Python's ``%``).",
    TritonSpelling(
        tl.in_f32(tl.call("_irc_rem_f")), integers=tl.as_is(tl.call("_irc_rem_i"))
    ),
    TestDomain(
        lambda a, b, kind: (0.0, b[1]) if b[0] > 0 else (b[0], 0.0),
        OperandDomain.DIVISOR,
        steps=True,
        growth=lambda a, b: b + 1,
    ),
    gradient=(grad.identity, _rem_rhs),
    precision=_FULL,
    # x % 1 and x % -1 are 0 for every integer x.
    identities=(
        Identity((X, Splat(1)), Splat(0), "i"),
        Identity((X, Splat(-1)), Splat(0), "i"),
    ),
    onnx=OnnxForm((), onnx.remainder),
    aten=("aten.remainder",),
    **_OPERATOR,
)
POW = _binary(
    "pow",
    _NUMBERS,
    np.power,
    "Elementwise power.",
    TritonSpelling(tl.in_f32(tl.call("_irc_pow_f")), integers=tl.int_pow),
    TestDomain(None, OperandDomain.POWER, growth=lambda a, b: (a + 1) * (b + 1)),
    gradient=(_pow_lhs, _pow_rhs),
    precision=_FULL,
    # x ** 0 is 1 for every x, NaN and 0 included (C's pow).
    identities=(right_identity(1), Identity((X, Splat(0)), Splat(1))),
    onnx=OnnxForm((), "Pow"),
    aten=("aten.pow",),
    **_OPERATOR,
)
MAX = _binary(
    "max",
    _NUMBERS,
    np.maximum,
    "Elementwise maximum (NaN wins, as ``np.maximum``).",
    TritonSpelling(
        tl.nan_first(">"), integers=tl.as_is(tl.call("tl.maximum")), bools=_OR_ON_BOOLS
    ),
    TestDomain(lambda a, b, kind: (max(a[0], b[0]), max(a[1], b[1]))),
    gradient=(_chooser(0), _chooser(1)),
    # Not commutative: np.maximum(-0.0, 0.0) is 0.0 but (0.0, -0.0) is -0.0.
    identities=(same_operands(X),),
    onnx=OnnxForm((), onnx.extremum("Max", "Or")),
    aten=("aten.maximum",),
    on_bools="or",
    graph_name="maximum",
)
MIN = _binary(
    "min",
    _NUMBERS,
    np.minimum,
    "Elementwise minimum (NaN wins, as ``np.minimum``).",
    TritonSpelling(
        tl.nan_first("<"),
        integers=tl.as_is(tl.call("tl.minimum")),
        bools=_AND_ON_BOOLS,
    ),
    TestDomain(lambda a, b, kind: (min(a[0], b[0]), min(a[1], b[1]))),
    gradient=(_chooser(0), _chooser(1)),
    identities=(same_operands(X),),
    onnx=OnnxForm((), onnx.extremum("Min", "And")),
    aten=("aten.minimum",),
    on_bools="and",
    graph_name="minimum",
)
AND = _binary(
    "and",
    _BITS,
    np.bitwise_and,
    "Elementwise logical (bool) or bitwise (ints) and.",
    _bitwise("&"),
    _BITWISE_TEST,
    # -1 is all ones on integers and true on bool.
    identities=(same_operands(X), right_identity(-1, "ib"), right_absorbing(0)),
    commutative=True,
    onnx=OnnxForm(("BitwiseAnd",), onnx.by_kind({"b": "And", "i": "BitwiseAnd"})),
    aten=("aten.bitwise_and",),
    **_OPERATOR,
)
OR = _binary(
    "or",
    _BITS,
    np.bitwise_or,
    "Elementwise logical (bool) or bitwise (ints) or.",
    _bitwise("|"),
    _BITWISE_TEST,
    identities=(same_operands(X), right_identity(0, "ib"), right_absorbing(-1)),
    commutative=True,
    onnx=OnnxForm(("BitwiseOr",), onnx.by_kind({"b": "Or", "i": "BitwiseOr"})),
    aten=("aten.bitwise_or",),
    **_OPERATOR,
)
XOR = _binary(
    "xor",
    _BITS,
    np.bitwise_xor,
    "Elementwise logical (bool) or bitwise (ints) exclusive or.",
    _bitwise("^"),
    _BITWISE_TEST,
    identities=(
        same_operands(Splat(0), "ib"),
        right_identity(0, "ib"),
        # x ^ -1 (x ^ true on bool) is not(x).
        Identity((X, Splat(-1)), Of("not", (X,))),
    ),
    commutative=True,
    onnx=OnnxForm(("BitwiseXor",), onnx.by_kind({"b": "Xor", "i": "BitwiseXor"})),
    aten=("aten.bitwise_xor",),
    **_OPERATOR,
)
ATAN2 = _binary(
    "atan2",
    _FLOAT,
    np.arctan2,
    "Elementwise angle of the point (x, y) (``np.arctan2(y, x)``).",
    _f32_call("_irc_atan2"),
    # atan2 jumps by 2 pi where its first operand crosses 0 (x < 0).
    TestDomain(
        lambda a, b, kind: (-math.pi, math.pi),
        smooth=False,
        growth=lambda a, b: math.pi,
    ),
    gradient=(_atan2_part(0), _atan2_part(1)),
    onnx=OnnxForm((), onnx.atan2),
    aten=("aten.atan2",),
)
