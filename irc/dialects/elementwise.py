"""The elementwise kinds: one table of what each computes, read by every level.

An elementwise function (``exp``, ``add``, ``max``...) is the same function at
every level: a ``graph.exp`` op, a ``loop.unary exp`` on tiles, the same
under ``memory`` and ``triton``. Its kind is one ``ElementwiseKind``, carried
below the graph level by ``ElementwiseKindAttr`` (``#elementwise<kind exp>``
in generic form, a bare ``exp`` in the ops' own syntax), and ``SEMANTICS``
says what it means, in NumPy 2 terms:

- its arity;
- the element kinds it is defined on at the graph level (``"b"`` bool,
  ``"i"`` integer, ``"f"`` floating point, as ``irc.dtypes.DType.kind``);
- the NumPy function that is its reference semantics, which every
  interpreter runs and constant folding folds with, so that all of them
  compute the same numbers.

Adding an elementwise function is a member of ``ElementwiseKind`` and its
row in ``SEMANTICS`` here, its ``graph`` op class (``KIND = ...``) and its
Triton spelling in the backend; every other level reads this table.

Comparisons are the same, with a bool result: a ``ComparisonPredicate``
(``#elementwise<predicate lt>``, a bare ``lt`` in the ops' syntax) and its
NumPy function in ``COMPARISONS``. So are reductions, which fold an
elementwise kind over an axis: a ``ReductionKind`` (``#elementwise<reduction
sum>``) and its row in ``REDUCTIONS`` (its NumPy function and the kind that
combines two partial results).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Dialect, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.utils.str_enum import StrEnum

from irc.dtypes import BFLOAT16, FLOAT16, FLOAT32


class ElementwiseKind(StrEnum):
    """What an elementwise op computes (its row in ``SEMANTICS``)."""

    NEG = "neg"
    ABS = "abs"
    EXP = "exp"
    LOG = "log"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    TANH = "tanh"
    SIGMOID = "sigmoid"
    ERF = "erf"
    SIN = "sin"
    COS = "cos"
    FLOOR = "floor"
    CEIL = "ceil"
    TRUNC = "trunc"
    RINT = "rint"
    LOG1P = "log1p"
    EXPM1 = "expm1"
    LOG2 = "log2"
    LOG10 = "log10"
    SINH = "sinh"
    COSH = "cosh"
    ATAN = "atan"
    ASIN = "asin"
    ACOS = "acos"
    NOT = "not"
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    FLOORDIV = "floordiv"
    REM = "rem"
    POW = "pow"
    MAX = "max"
    MIN = "min"
    AND = "and"
    OR = "or"
    XOR = "xor"
    ATAN2 = "atan2"

    @property
    def semantics(self) -> Semantics:
        return SEMANTICS[self]

    @property
    def arity(self) -> int:
        return SEMANTICS[self].arity


@irdl_attr_definition
class ElementwiseKindAttr(EnumAttribute[ElementwiseKind], SpacedOpaqueSyntaxAttribute):
    """An ``ElementwiseKind`` as a property of the tile-level ops."""

    name = "elementwise.kind"


# --------------------------------------------------------------------------
# The NumPy semantics
# --------------------------------------------------------------------------

_SIXTEEN_BIT_FLOATS = (FLOAT16.numpy, BFLOAT16.numpy)


def compute_dtype(value_dtype: np.dtype) -> np.dtype:
    """Where 16-bit floats are computed and accumulated: float32, as on a
    GPU."""
    return FLOAT32.numpy if value_dtype in _SIXTEEN_BIT_FLOATS else value_dtype


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


@dataclass(frozen=True)
class Semantics:
    """One row of the table: what an elementwise kind computes.

    ``numpy`` takes arrays of one dtype and returns an array of that dtype;
    overflow, division by zero and invalid values give NumPy's IEEE (or
    wrapped integer) results, which are data, not errors.
    """

    arity: int
    #: The element kinds the graph op is defined on.
    domain: frozenset[str]
    numpy: Callable[..., np.ndarray]

    @property
    def float_only(self) -> bool:
        """Defined on floats alone: NumPy computes it in floating point for
        integer and bool operands (capture promotes them first)."""
        return self.domain == _FLOAT


_FLOAT = frozenset("f")
_NUMBERS = frozenset("if")
_BITS = frozenset("bi")


def _unary(domain: frozenset[str], function: Callable[..., np.ndarray]) -> Semantics:
    return Semantics(1, domain, function)


def _binary(domain: frozenset[str], function: Callable[..., np.ndarray]) -> Semantics:
    return Semantics(2, domain, function)


_K = ElementwiseKind

#: The reference semantics of every elementwise kind.
SEMANTICS: dict[ElementwiseKind, Semantics] = {
    _K.NEG: _unary(_NUMBERS, np.negative),
    _K.ABS: _unary(frozenset("bif"), np.abs),
    _K.EXP: _unary(_FLOAT, np.exp),
    _K.LOG: _unary(_FLOAT, np.log),
    _K.SQRT: _unary(_FLOAT, np.sqrt),
    _K.RSQRT: _unary(_FLOAT, _rounded_once(_rsqrt)),
    _K.TANH: _unary(_FLOAT, np.tanh),
    _K.SIGMOID: _unary(_FLOAT, _rounded_once(_sigmoid)),
    _K.ERF: _unary(_FLOAT, _erf),
    _K.SIN: _unary(_FLOAT, np.sin),
    _K.COS: _unary(_FLOAT, np.cos),
    _K.FLOOR: _unary(_FLOAT, np.floor),
    _K.CEIL: _unary(_FLOAT, np.ceil),
    _K.TRUNC: _unary(_FLOAT, np.trunc),
    _K.RINT: _unary(_FLOAT, np.rint),
    _K.LOG1P: _unary(_FLOAT, np.log1p),
    _K.EXPM1: _unary(_FLOAT, np.expm1),
    _K.LOG2: _unary(_FLOAT, np.log2),
    _K.LOG10: _unary(_FLOAT, np.log10),
    _K.SINH: _unary(_FLOAT, np.sinh),
    _K.COSH: _unary(_FLOAT, np.cosh),
    _K.ATAN: _unary(_FLOAT, np.arctan),
    _K.ASIN: _unary(_FLOAT, np.arcsin),
    _K.ACOS: _unary(_FLOAT, np.arccos),
    _K.NOT: _unary(_BITS, np.invert),
    _K.ADD: _binary(_NUMBERS, np.add),
    _K.SUB: _binary(_NUMBERS, np.subtract),
    _K.MUL: _binary(_NUMBERS, np.multiply),
    _K.DIV: _binary(_FLOAT, np.true_divide),
    _K.FLOORDIV: _binary(_NUMBERS, np.floor_divide),
    _K.REM: _binary(_NUMBERS, np.remainder),
    _K.POW: _binary(_NUMBERS, np.power),
    _K.MAX: _binary(_NUMBERS, np.maximum),
    _K.MIN: _binary(_NUMBERS, np.minimum),
    _K.AND: _binary(_BITS, np.bitwise_and),
    _K.OR: _binary(_BITS, np.bitwise_or),
    _K.XOR: _binary(_BITS, np.bitwise_xor),
    _K.ATAN2: _binary(_FLOAT, np.arctan2),
}

#: The float kinds that NumPy 2 computes on integers and bools as the
#: identity, keeping their dtype (``np.floor`` of int64 is int64): they round
#: to an integer, which those values already are.
INTEGRAL_IDENTITIES = frozenset({_K.FLOOR, _K.CEIL, _K.TRUNC})

UNARY_KINDS = frozenset(k for k in ElementwiseKind if k.arity == 1)
BINARY_KINDS = frozenset(k for k in ElementwiseKind if k.arity == 2)


# --------------------------------------------------------------------------
# Comparisons
# --------------------------------------------------------------------------


class ComparisonPredicate(StrEnum):
    """What an elementwise comparison tests (its row in ``COMPARISONS``)."""

    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"

    @property
    def numpy(self) -> Callable[..., np.ndarray]:
        return COMPARISONS[self]


@irdl_attr_definition
class ComparisonPredicateAttr(
    EnumAttribute[ComparisonPredicate], SpacedOpaqueSyntaxAttribute
):
    """A ``ComparisonPredicate`` as a property of the comparison ops."""

    name = "elementwise.predicate"


#: The reference semantics of every comparison (NaN compares false, and
#: ``ne`` true, as in NumPy).
COMPARISONS: dict[ComparisonPredicate, Callable[..., np.ndarray]] = {
    ComparisonPredicate.EQ: np.equal,
    ComparisonPredicate.NE: np.not_equal,
    ComparisonPredicate.LT: np.less,
    ComparisonPredicate.LE: np.less_equal,
    ComparisonPredicate.GT: np.greater,
    ComparisonPredicate.GE: np.greater_equal,
}


# --------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------


class ReductionKind(StrEnum):
    """What a reduction computes over an axis (its row in ``REDUCTIONS``);
    ``argmax`` is the index of the first maximum (NaN counting as the
    largest), the others are folds of an elementwise kind."""

    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"
    ARGMAX = "argmax"

    @property
    def semantics(self) -> Reduction:
        return REDUCTIONS[self]


@irdl_attr_definition
class ReductionKindAttr(EnumAttribute[ReductionKind], SpacedOpaqueSyntaxAttribute):
    """A ``ReductionKind`` as a property of the reduction ops."""

    name = "elementwise.reduction"


@dataclass(frozen=True)
class Reduction:
    """One row of ``REDUCTIONS``."""

    #: NumPy's reduction, taking ``axis`` (and ``dtype`` if it ``widens``).
    numpy: Callable[..., np.ndarray]
    #: The elementwise kind that combines two partial results; None for
    #: argmax, which keeps an index too.
    combine: ElementwiseKind | None
    #: Whether 16-bit floats accumulate in float32 (``compute_dtype``), as
    #: NumPy's sums and products do, and round once at the end.
    widens: bool


#: The reference semantics of every reduction.
REDUCTIONS: dict[ReductionKind, Reduction] = {
    ReductionKind.SUM: Reduction(np.sum, ElementwiseKind.ADD, widens=True),
    ReductionKind.PROD: Reduction(np.prod, ElementwiseKind.MUL, widens=True),
    ReductionKind.MAX: Reduction(np.max, ElementwiseKind.MAX, widens=False),
    ReductionKind.MIN: Reduction(np.min, ElementwiseKind.MIN, widens=False),
    ReductionKind.ARGMAX: Reduction(np.argmax, None, widens=False),
}

Elementwise = Dialect(
    "elementwise",
    [],
    [ElementwiseKindAttr, ComparisonPredicateAttr, ReductionKindAttr],
)
