"""NumPy's functions on traced arrays.

Ufuncs arrive through ``__array_ufunc__`` and array functions through
``__array_function__``; each handler below registers itself for the NumPy
callables it implements. Creation functions that take only sizes
(``np.arange(N)``, ``np.ones((N, 4))``, ``np.tri(N)``) dispatch on no array:
the traced code's lookups of them are intercepted (``irc.capture.intercept``,
which says how, and how nothing else sees it) and the functions here build
IR when a size is symbolic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irc.capture import einsum, layout
from irc.capture.intercept import creation, is_symbolic
from irc.capture.ops import (
    Operand,
    as_dim,
    as_size,
    as_strong,
    binary,
    broadcast_shapes,
    broadcast_to,
    cast,
    compare,
    dtype_of,
    emit,
    equal_if,
    materialize,
    normalize_axes,
    normalize_axis,
    result_dtype,
    select,
    shape_of,
    splat,
    unary,
)
from irc.capture.tensor import (
    FUNCTION_HANDLERS,
    UFUNC_AT_HANDLERS,
    UFUNC_HANDLERS,
    UFUNC_REDUCE_HANDLERS,
    SymDim,
    Tensor,
    dim_proxy,
)
from irc.capture.trace import current_trace, tracing_error
from irc.dialects import graph, sym
from irc.dialects.elementwise import COMPARISONS, ComparisonPredicate, ReductionKind
from irc.dtypes import BOOL, FLOAT64, INT64, DType, promote
from irc.dtypes import dtype as to_dtype
from irc.errors import IrcShapeError, IrcTypeError
from irc.primitives.builtin import (
    ABS,
    ADD,
    AND,
    DIV,
    ERF,
    FLOORDIV,
    MUL,
    NEG,
    NOT,
    OR,
    POW,
    RINT,
    RSQRT,
    SIGMOID,
    SQRT,
    SUB,
    XOR,
)
from irc.primitives.declaration import Primitive, on_declare
from irc.shapes import SymExpr


def _ufunc(*ufuncs: np.ufunc) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(handler: Callable[..., Any]) -> Callable[..., Any]:
        for ufunc in ufuncs:
            UFUNC_HANDLERS[ufunc] = handler
        return handler

    return register


def _function(*functions: Callable[..., Any]) -> Callable[..., Any]:
    def register(handler: Callable[..., Any]) -> Callable[..., Any]:
        for function in functions:
            FUNCTION_HANDLERS[function] = handler
        return handler

    return register


def _with_dtype(result: Tensor, requested: Any) -> Tensor:
    return result if requested is None else cast(result, to_dtype(requested))


# ----- elementwise ufuncs --------------------------------------------------

#: The predicate of each NumPy comparison ufunc, from the table.
_COMPARISONS: dict[np.ufunc, ComparisonPredicate] = {
    function: predicate for predicate, function in COMPARISONS.items()
}


def _register_primitive(kind: Primitive) -> None:
    """Capture the ufunc that is ``kind``'s reference semantics, if it is
    one (a primitive declared later is captured from then on)."""
    if isinstance(kind.numpy, np.ufunc):
        handler = _unary_handler if kind.arity == 1 else _binary_handler
        UFUNC_HANDLERS[kind.numpy] = handler(kind)


def _register_elementwise() -> None:
    on_declare(_register_primitive)
    UFUNC_HANDLERS[np.logical_and] = _logical_handler(AND)
    UFUNC_HANDLERS[np.logical_or] = _logical_handler(OR)
    UFUNC_HANDLERS[np.logical_xor] = _logical_handler(XOR)
    for ufunc, predicate in _COMPARISONS.items():
        UFUNC_HANDLERS[ufunc] = _compare_handler(predicate)


def _unary_handler(kind: Primitive) -> Callable[..., Tensor]:
    def handler(value: Operand, dtype: Any = None) -> Tensor:
        if kind is NOT and dtype_of(value).kind == "f":
            raise tracing_error("bitwise not is not defined on floats")
        return _with_dtype(unary(kind, value), dtype)

    return handler


def _binary_handler(kind: Primitive) -> Callable[..., Tensor]:
    def handler(lhs: Operand, rhs: Operand, dtype: Any = None) -> Tensor:
        return _with_dtype(binary(kind, lhs, rhs), dtype)

    return handler


def _logical_handler(kind: Primitive) -> Callable[..., Tensor]:
    def handler(lhs: Operand, rhs: Operand) -> Tensor:
        return binary(kind, _truth(lhs), _truth(rhs))

    return handler


def _compare_handler(predicate: str) -> Callable[..., Tensor]:
    def handler(lhs: Operand, rhs: Operand) -> Tensor:
        return compare(predicate, lhs, rhs)

    return handler


def _truth(value: Operand) -> Operand:
    if dtype_of(value) == BOOL:
        return value
    return compare("ne", value, 0)


_register_elementwise()


@_ufunc(np.logical_not)
def _logical_not(value: Operand) -> Tensor:
    return compare("eq", value, False if dtype_of(value) == BOOL else 0)


@_ufunc(np.square)
def _square(value: Operand) -> Tensor:
    return binary(MUL, value, value)


@_ufunc(np.reciprocal)
def _reciprocal(value: Operand) -> Tensor:
    if dtype_of(value).kind != "f":
        raise tracing_error(
            "np.reciprocal of integers (C division, 0 for most values) is not "
            "supported; cast to a float type first"
        )
    return binary(DIV, 1.0, value)


@_ufunc(np.positive)
def _positive(value: Operand) -> Operand:
    return value


@_ufunc(np.sign)
def _sign(value: Operand) -> Tensor:
    positive = compare("gt", value, 0)
    negative = compare("lt", value, 0)
    # Zeros and NaNs are their own sign, as in NumPy.
    return select(positive, 1, select(negative, -1, value))


# ----- float predicates: comparisons, not kinds of their own ---------------------
# Their result is bool, where an elementwise kind's is its operand's type; as
# comparisons they fuse like any other and read plainly in the IR
# (graph.cmp ne, %x, %x is isnan), and integers and bools are constants.


@_ufunc(np.isnan)
def _isnan(value: Operand) -> Tensor:
    """NaN is the one value unequal to itself."""
    if dtype_of(value).kind != "f":
        return splat(False, BOOL, shape_of(value))
    return compare("ne", value, value)


@_ufunc(np.isinf)
def _isinf(value: Operand) -> Tensor:
    if dtype_of(value).kind != "f":
        return splat(False, BOOL, shape_of(value))
    return compare("eq", unary(ABS, value), math.inf)


@_ufunc(np.isfinite)
def _isfinite(value: Operand) -> Tensor:
    """``|x| < inf``, which NaN is not."""
    if dtype_of(value).kind != "f":
        return splat(True, BOOL, shape_of(value))
    return compare("lt", unary(ABS, value), math.inf)


# ----- shifts: products and floored quotients by powers of two ---------------------
# C leaves a shift by a negative amount or by the width or more undefined;
# NumPy (and ONNX's BitShift) defines it, as these do: 0 to the left, the
# sign's fill (0 or -1) to the right.


@_ufunc(np.left_shift)
def _left_shift(value: Operand, shift: Operand) -> Tensor:
    """``x << s`` is ``x * 2**s``, whose wraparound drops the same bits."""
    element, bits = _shift_type("np.left_shift", value, shift)
    product = binary(MUL, value, _power_of_two(shift, element, bits))
    return select(_shift_within(shift, bits), product, 0)


@_ufunc(np.right_shift)
def _right_shift(value: Operand, shift: Operand) -> Tensor:
    """``x >> s`` (arithmetic) is ``x // 2**s``, floored as the shift
    rounds negative ``x``; ``2**(bits - 1)`` does not fit, but a shift by
    ``bits - 1`` leaves the sign's fill, as one past the width does."""
    element, bits = _shift_type("np.right_shift", value, shift)
    quotient = binary(FLOORDIV, value, _power_of_two(shift, element, bits))
    fill = select(compare("lt", value, 0), splat(-1, element, ()), 0)
    return select(_shift_within(shift, bits - 1), quotient, fill)


def _shift_type(name: str, value: Operand, shift: Operand) -> tuple[DType, int]:
    """The promoted integer type of a shift and its width in bits."""
    element = result_dtype([value, shift])
    if element.kind != "i":
        raise tracing_error(
            f"{name} is defined on integers, got {element.name}", IrcTypeError
        )
    return element, element.bits


def _shift_within(shift: Operand, bits: int) -> Tensor:
    return binary(AND, compare("ge", shift, 0), compare("lt", shift, bits))


def _power_of_two(shift: Operand, element: DType, bits: int) -> Tensor:
    """``2**s`` of ``element`` for ``0 <= s < bits``, a product of the
    powers of ``s``'s binary digits (``2**(bits - 1)`` wraps to the least
    integer, whose bits are the same)."""
    power = splat(1, element, ())
    for digit in range(bits.bit_length() - 1):
        has_digit = compare("ne", binary(AND, shift, 1 << digit), 0)
        factor = splat(2 ** (1 << digit), element, ())
        power = binary(MUL, power, select(has_digit, factor, splat(1, element, ())))
    return power


# ----- rounding and powers in float64 -----------------------------------------------


@_function(np.round, np.around)
def _round(value: Operand, decimals: int = 0, out: Any = None) -> Tensor:
    _refuse("np.round", out=out)
    return round_to(layout.as_tensor(value), decimals)


def round_to(tensor: Tensor, decimals: int) -> Tensor:
    """NumPy's ``np.round``: ``rint(x * 10**d) / 10**d`` in x's dtype
    (``rint(x / 10**-d) * 10**-d`` for a negative ``d``), halves to even;
    integers are unchanged for ``d >= 0`` and rounded through float64 for
    ``d < 0``; bools round (to float16) only for ``d == 0``."""
    if not isinstance(decimals, int | np.integer) or isinstance(decimals, bool):
        raise tracing_error(f"np.round: decimals must be an int, got {decimals!r}")
    element = tensor.irc_dtype
    if element.kind == "i" and decimals >= 0:
        return as_strong(tensor)
    if decimals == 0:
        return unary(RINT, tensor)
    if element == BOOL:
        raise tracing_error(
            f"np.round(..., {decimals}) of a bool array: NumPy cannot store the "
            "scaled values in bool; cast it to a float dtype first",
            IrcTypeError,
        )
    working = cast(tensor, FLOAT64) if element.kind == "i" else tensor
    scale = _power_of_ten(abs(int(decimals)))
    if decimals > 0:
        rounded = unary(RINT, binary(MUL, working, scale))
        return cast(binary(DIV, rounded, scale), element)
    rounded = unary(RINT, binary(DIV, working, scale))
    return cast(binary(MUL, rounded, scale), element)


def _power_of_ten(n: int) -> float:
    """``10.0 ** n`` as NumPy's round computes it (exact to 1e8, then
    multiplied by ten)."""
    if n < 9:
        return 10.0**n
    power = 1e9
    for _ in range(n - 9):
        power *= 10.0
    return power


@_ufunc(np.float_power)
def _float_power(base: Operand, exponent: Operand, dtype: Any = None) -> Tensor:
    """``base ** exponent`` in the type NumPy's loop computes it in: float64
    for NumPy's own types; ml_dtypes 0.7 and later register a bfloat16 loop,
    which keeps bfloat16."""
    shape = broadcast_shapes(shape_of(base), shape_of(exponent))
    element = _float_power_type(base, exponent)
    a, b = (materialize(v, element, shape) for v in (base, exponent))
    return _with_dtype(emit(graph.elementwise(POW, a.value, b.value)), dtype)


def _float_power_type(base: Operand, exponent: Operand) -> DType:
    """The result type of ``np.float_power``'s loop for these operands, as
    NumPy resolves it (Python scalars are weak)."""
    operands = tuple(_numpy_operand_type(v) for v in (base, exponent))
    try:
        resolved = np.float_power.resolve_dtypes((*operands, None))[-1]
    except (TypeError, ValueError):  # no loop NumPy can name: float64's
        return FLOAT64
    return to_dtype(resolved)


def _numpy_operand_type(value: Operand) -> Any:
    """What ``np.ufunc.resolve_dtypes`` takes for an operand: the dtype of
    an array or NumPy scalar, the type of a Python scalar (or size)."""
    if isinstance(value, Tensor):
        return value.irc_dtype.numpy
    if isinstance(value, SymDim):
        return int
    if isinstance(value, bool | int | float):
        return type(value)
    return np.asarray(value).dtype


@_ufunc(np.matmul)
def _matmul(lhs: Operand, rhs: Operand) -> Tensor:
    return matmul(lhs, rhs)


def matmul(lhs: Operand, rhs: Operand) -> Tensor:
    """``a @ b`` with NumPy's rules: 1-D operands are promoted to matrices
    and their added axis removed again; batch dims broadcast."""
    a, b = layout.as_tensor(lhs), layout.as_tensor(rhs)
    if a.type.rank == 0 or b.type.rank == 0:
        raise tracing_error("matmul of a rank-0 array: use * instead", IrcShapeError)
    element = promote(a.irc_dtype, b.irc_dtype)
    if element == BOOL:
        raise tracing_error("matmul of bool arrays is not supported")
    a, b = cast(a, element), cast(b, element)
    vector_lhs, vector_rhs = a.type.rank == 1, b.type.rank == 1
    if vector_lhs:
        a = layout.expand_dims(a, 0)
    if vector_rhs:
        b = layout.expand_dims(b, 1)
    k_lhs, k_rhs = a.type.dims[-1], b.type.dims[-2]
    if not a.trace.facts.prove_eq(k_lhs, k_rhs):
        raise tracing_error(
            f"matmul: the contracted dims differ ({k_lhs} vs {k_rhs}) for shapes "
            f"{_text(lhs)} and {_text(rhs)}{equal_if(k_lhs, k_rhs)}",
            IrcShapeError,
        )
    batch = broadcast_shapes(a.type.dims[:-2], b.type.dims[:-2])
    a = materialize(a, element, (*batch, *a.type.dims[-2:]))
    b = materialize(b, element, (*batch, *b.type.dims[-2:]))
    result = emit(graph.MatmulOp(a.value, b.value))
    dims = list(result.type.dims)
    if vector_rhs:
        dims.pop(-1)
    if vector_lhs:
        dims.pop(-2 if not vector_rhs else -1)
    return layout.reshape(result, dims) if vector_lhs or vector_rhs else result


def _strong(value: Operand) -> Operand:
    if isinstance(value, bool | int | float) and not isinstance(value, np.generic):
        return np.asarray(value)
    return value


def _text(value: Operand) -> str:
    return "(" + ", ".join(str(d) for d in shape_of(value)) + ")"


@_function(np.dot)
def _dot(lhs: Operand, rhs: Operand) -> Tensor:
    if len(shape_of(lhs)) > 2 or len(shape_of(rhs)) > 2:
        raise tracing_error("np.dot of arrays of rank > 2: use np.matmul or @")
    if not shape_of(lhs) or not shape_of(rhs):
        # NumPy converts a Python scalar operand of dot to an array: strong.
        return binary(MUL, _strong(lhs), _strong(rhs))
    return matmul(lhs, rhs)


FUNCTION_HANDLERS[np.einsum] = einsum.einsum


# ----- reductions -------------------------------------------------------------

_ACCUMULATES = {"sum", "prod"}


def reduce(
    kind: str,
    value: Operand,
    axis: Any = None,
    keepdims: bool = False,
    dtype_: Any = None,
) -> Tensor:
    tensor = layout.as_tensor(value)
    axes = normalize_axes(axis, tensor.type.rank)
    element = tensor.irc_dtype
    if dtype_ is not None:
        element = to_dtype(dtype_)
    elif kind in _ACCUMULATES and element.kind in "bi":
        element = INT64  # NumPy accumulates bools and ints in int64
    tensor = cast(tensor, element)
    if not axes:
        return tensor
    if element == BOOL:
        kind = _BOOL_REDUCTIONS.get(kind, kind)
    return emit(graph.ReduceOp(kind, tensor.value, axes, keepdims))


#: NumPy's sums and products in bool (``dtype=bool``) are any and all.
_BOOL_REDUCTIONS = {"sum": "max", "prod": "min"}


def _reducer(kind: str) -> Callable[..., Tensor]:
    def handler(
        value: Operand,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **unsupported: Any,
    ) -> Tensor:
        _refuse(f"np.{kind}", out=out, **unsupported)
        return reduce(kind, value, axis, keepdims, dtype)

    return handler


def _refuse(name: str, **arguments: Any) -> None:
    given = [key for key, value in arguments.items() if value is not None]
    if given:
        raise tracing_error(
            f"{name}: the argument(s) {', '.join(given)} are not supported"
        )


FUNCTION_HANDLERS[np.sum] = _reducer("sum")
FUNCTION_HANDLERS[np.prod] = _reducer("prod")


def _extremum(kind: str) -> Callable[..., Tensor]:
    def handler(
        value: Operand,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **unsupported: Any,
    ) -> Tensor:
        _refuse(f"np.{kind}", out=out, **unsupported)
        return reduce(kind, value, axis, keepdims)

    return handler


for _name, _functions in (("max", (np.max, np.amax)), ("min", (np.min, np.amin))):
    for _f in _functions:
        FUNCTION_HANDLERS[_f] = _extremum(_name)


def _any_or_all(kind: str) -> Callable[..., Tensor]:
    """``np.any``/``np.all``: the ``max``/``min`` of the elements' truth
    values (``x != 0``, so NaN is true, as in NumPy), a bool result; what
    turns an array of bools into the scalar ``irc.cond`` needs. ``where=``
    masks elements out as the identity, False for any and True for all."""
    name = {"max": "any", "min": "all"}[kind]

    def handler(
        value: Operand,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        *,
        where: Any = True,
        **unsupported: Any,
    ) -> Tensor:
        _refuse(f"np.{name}", out=out, **unsupported)
        truth = layout.as_tensor(value)
        if truth.irc_dtype != BOOL:
            truth = compare("ne", truth, 0)
        if where is not True:
            identity = splat(name == "all", BOOL, ())
            truth = select(_mask(where, truth), truth, identity)
        return reduce(kind, truth, axis, keepdims)

    return handler


FUNCTION_HANDLERS[np.any] = _any_or_all("max")
FUNCTION_HANDLERS[np.all] = _any_or_all("min")

# ----- scans ------------------------------------------------------------------

#: The graph.scan kind of each NumPy running fold, with its first value.
_SCANS = {"cumsum": ("sum", 0), "cumprod": ("prod", 1)}


def scan(kind: str, value: Operand, axis: Any = None, dtype_: Any = None) -> Tensor:
    """``np.cumsum``/``np.cumprod``: a ``graph.scan`` along ``axis`` (the
    flattened array when it is None, as NumPy), accumulating bools and ints
    in int64 unless ``dtype_`` says otherwise."""
    tensor = layout.as_tensor(value)
    if axis is not None:
        axis = normalize_axis(axis, tensor.type.rank)
    if axis is None or tensor.type.rank == 0:
        tensor, axis = layout.reshape(tensor, (-1,)), 0
    element = tensor.irc_dtype
    if dtype_ is not None:
        element = to_dtype(dtype_)
    elif element.kind in "bi":
        element = INT64  # NumPy accumulates bools and ints in int64
    tensor = cast(tensor, element)
    return emit(graph.ScanOp(kind, tensor.value, axis))


def _scanner(name: str) -> Callable[..., Tensor]:
    kind, _ = _SCANS[name]

    def handler(
        value: Operand,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        **unsupported: Any,
    ) -> Tensor:
        _refuse(f"np.{name}", out=out, **unsupported)
        return scan(kind, value, axis, dtype)

    return handler


def _cumulative(name: str, scan_name: str) -> Callable[..., Tensor]:
    """NumPy 2.1's ``np.cumulative_sum``/``np.cumulative_prod``: ``axis`` is
    required above rank 1, and ``include_initial`` puts the fold's first
    value (0 or 1) before the running values."""
    kind, initial = _SCANS[scan_name]

    def handler(
        value: Operand,
        /,
        *,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        include_initial: bool = False,
        **unsupported: Any,
    ) -> Tensor:
        _refuse(f"np.{name}", out=out, **unsupported)
        if axis is None and len(shape_of(value)) > 1:
            raise tracing_error(
                f"np.{name} of an array of rank {len(shape_of(value))} needs an "
                f"axis: pass axis=..., or flatten first (np.{scan_name} flattens)"
            )
        result = scan(kind, value, axis, dtype)
        if not include_initial:
            return result
        scanned = normalize_axis(0 if axis is None else axis, result.type.rank)
        first = list(result.type.dims)
        first[scanned] = SymExpr.const(1)
        start = splat(initial, result.irc_dtype, first)
        return layout.concatenate([start, result], scanned)

    return handler


for _scan_name in _SCANS:
    FUNCTION_HANDLERS[getattr(np, _scan_name)] = _scanner(_scan_name)
if hasattr(np, "cumulative_sum"):  # NumPy 2.1 and later
    FUNCTION_HANDLERS[np.cumulative_sum] = _cumulative("cumulative_sum", "cumsum")
    FUNCTION_HANDLERS[np.cumulative_prod] = _cumulative("cumulative_prod", "cumprod")

UFUNC_REDUCE_HANDLERS[np.add] = lambda v, axis=0, dtype=None, keepdims=False: reduce(
    "sum", v, axis, keepdims, dtype
)
UFUNC_REDUCE_HANDLERS[np.multiply] = lambda v, axis=0, dtype=None, keepdims=False: (
    reduce("prod", v, axis, keepdims, dtype)
)
UFUNC_REDUCE_HANDLERS[np.maximum] = lambda v, axis=0, keepdims=False: reduce(
    "max", v, axis, keepdims
)
UFUNC_REDUCE_HANDLERS[np.minimum] = lambda v, axis=0, keepdims=False: reduce(
    "min", v, axis, keepdims
)


def _add_at(array: Any, indices: Any, values: Any = None) -> None:
    """``np.add.at(a, index, v)``: ``v`` added into ``a`` at the positions
    ``index`` names (integer arrays, slices, ints), repeated positions
    accumulating (``irc.capture.advanced_indexing.add_at``), written into
    ``a`` as every write is."""
    from irc.capture.advanced_indexing import add_at

    if not isinstance(array, Tensor):
        raise tracing_error(
            "np.add.at writes into a traced array only; here the array is "
            f"{type(array).__name__}: make it traced (np.zeros_like of one, or "
            "an argument)"
        )
    if values is None:
        raise tracing_error(
            "np.add.at needs the values to add: np.add.at(a, index, values)"
        )
    add_at(array, indices, values)


UFUNC_AT_HANDLERS[np.add] = _add_at


def _count(tensor: Tensor, axes: Sequence[int]) -> SymDim | int:
    """How many elements a reduction over ``axes`` combines, as a size."""
    return dim_proxy(sym.product(tensor.type.dims[axis] for axis in axes))


@_function(np.mean)
def mean(
    value: Operand,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
) -> Tensor:
    _refuse("np.mean", out=out)
    tensor = layout.as_tensor(value)
    if _is_integral(dtype):
        axes = normalize_axes(axis, tensor.type.rank)
        total = reduce("sum", tensor, axes, keepdims, dtype)
        return _truncated_quotient(total, _count(tensor, axes), dtype)
    element = _float_result(tensor.irc_dtype, dtype)
    tensor = cast(tensor, element)
    axes = normalize_axes(axis, tensor.type.rank)
    total = reduce("sum", tensor, axes, keepdims)
    return binary(DIV, total, _count(tensor, axes))


def _is_integral(requested: Any) -> bool:
    return requested is not None and to_dtype(requested).kind in "bi"


def _truncated_quotient(total: Tensor, count: SymDim | int, requested: Any) -> Tensor:
    """``total / count`` in float64, cast to the integer (or bool) dtype the
    user asked for: NumPy divides into an array of that dtype."""
    return cast(binary(DIV, total, count), to_dtype(requested))


def _float_result(element: DType, requested: Any) -> DType:
    if requested is not None:
        return to_dtype(requested)
    return element if element.kind == "f" else FLOAT64


@_function(np.var)
def var(
    value: Operand,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
) -> Tensor:
    _refuse("np.var", out=out)
    if _is_integral(dtype):
        return _integral_var(layout.as_tensor(value), axis, dtype, ddof, keepdims)
    tensor = cast(layout.as_tensor(value), _float_result(dtype_of(value), dtype))
    axes = normalize_axes(axis, tensor.type.rank)
    centered = binary(SUB, tensor, mean(tensor, axes, keepdims=True))
    squares = reduce("sum", binary(MUL, centered, centered), axes, keepdims)
    return binary(DIV, squares, _count(tensor, axes) - ddof)


@_function(np.std)
def std(
    value: Operand,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
) -> Tensor:
    variance = var(value, axis, dtype, out, ddof, keepdims)
    if not _is_integral(dtype):
        return unary(SQRT, variance)
    if variance.type.rank:
        # NumPy takes the root of an array in place, which it refuses.
        raise tracing_error(
            f"np.std(..., dtype={to_dtype(dtype).name}) of an array result: NumPy "
            "cannot store its float square root in an integer array (only a "
            "scalar result is truncated); pass a float dtype",
            IrcTypeError,
        )
    return cast(unary(SQRT, variance), to_dtype(dtype))


def _integral_var(
    tensor: Tensor, axis: Any, dtype: Any, ddof: int, keepdims: bool
) -> Tensor:
    """NumPy's variance with an integer ``dtype``: the sums are in ``dtype``
    and each quotient is truncated to it, the mean as well as the result."""
    axes = normalize_axes(axis, tensor.type.rank)
    count = _count(tensor, axes)
    total = reduce("sum", tensor, axes, True, dtype)
    centered = binary(SUB, tensor, _truncated_quotient(total, count, dtype))
    squares = binary(MUL, centered, centered)
    return _truncated_quotient(
        reduce("sum", squares, axes, keepdims, dtype), count - ddof, dtype
    )


@_function(np.argmax)
def argmax(
    value: Operand, axis: Any = None, out: Any = None, *, keepdims: bool = False
):
    _refuse("np.argmax", out=out)
    tensor = layout.as_tensor(value)
    if axis is None:
        flat = layout.reshape(tensor, (-1,))
        result = emit(graph.ArgMaxOp(flat.value, 0, False))
        if keepdims:
            return layout.reshape(result, [1] * tensor.type.rank)
        return result
    return emit(
        graph.ArgMaxOp(tensor.value, normalize_axis(axis, tensor.type.rank), keepdims)
    )


@_function(np.argmin)
def argmin(
    value: Operand, axis: Any = None, out: Any = None, *, keepdims: bool = False
) -> Tensor:
    """The first minimum (or the first NaN, as in NumPy) is the first
    maximum of an order-reversing map that keeps NaNs NaN: ``-x`` on floats,
    ``~x`` on ints (``-x`` would overflow at the least int) and bools."""
    _refuse("np.argmin", out=out)
    tensor = layout.as_tensor(value)
    if tensor.irc_dtype.kind == "f":
        reversed_order = emit(graph.elementwise(NEG, tensor.value))
    else:
        reversed_order = emit(graph.elementwise(NOT, tensor.value))
    return argmax(reversed_order, axis, keepdims=keepdims)


#: Where ``where=`` masks an element out, a reduction reads its identity
#: (max and min have none: NumPy needs ``initial=`` for them).
_IDENTITIES: dict[str, int] = {"sum": 0, "prod": 1}


def _masked(kind: str, handler: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``handler`` (``np.sum``, ``np.prod``, ``np.max`` or ``np.min``) with
    NumPy's ``where=`` (a ``graph.select`` of the identity, or of
    ``initial`` for max and min, where the mask is false) and ``initial=``
    (combined with the result, in the result's dtype)."""

    def reduction(
        value: Operand,
        axis: Any = None,
        *args: Any,
        initial: Any = None,
        where: Any = True,
        **options: Any,
    ) -> Tensor:
        tensor = layout.as_tensor(value)
        if where is not True:
            if initial is None and kind not in _IDENTITIES:
                raise tracing_error(
                    f"np.{kind}(..., where=...) needs initial=: the {kind}imum "
                    "has no identity to stand for the masked-out elements "
                    "(as in NumPy)"
                )
            # max and min read initial there, which the result includes anyway.
            fill = _IDENTITIES.get(kind, initial)
            mask = _mask(where, tensor)
            tensor = select(mask, tensor, _scalar(fill, tensor.irc_dtype))
        result = handler(tensor, axis, *args, **options)
        if initial is None:
            return result
        combine = ReductionKind(kind).semantics.combine
        assert combine is not None, "sum, prod, max or min"
        return binary(combine, result, _scalar(initial, result.irc_dtype))

    return reduction


def _mask(where: Any, tensor: Tensor) -> Tensor:
    """A reduction's ``where=``: bools that broadcast to the array's shape
    (not the other way round, which would change the result's shape)."""
    mask = layout.as_tensor(where)
    if mask.irc_dtype != BOOL:
        raise tracing_error(
            f"where= must be a bool mask, got {mask.irc_dtype.name}; compare "
            "first (where=x > 0)",
            IrcTypeError,
        )
    return broadcast_to(mask, tensor.type.dims)


def _scalar(value: Any, element: DType) -> Tensor:
    """A Python or NumPy scalar converted to ``element``, as NumPy converts
    a reduction's ``initial``."""
    if not isinstance(value, bool | int | float | np.generic):
        raise tracing_error(f"expected a scalar, got {type(value).__name__}")
    return splat(np.asarray(value).astype(element.numpy).item(), element, ())


for _f, _kind in (
    (np.sum, "sum"),
    (np.prod, "prod"),
    (np.max, "max"),
    (np.amax, "max"),
    (np.min, "min"),
    (np.amin, "min"),
):
    FUNCTION_HANDLERS[_f] = _masked(_kind, FUNCTION_HANDLERS[_f])


@_function(np.linalg.norm)
def _norm(
    x: Operand, ord: Any = None, axis: Any = None, keepdims: bool = False
) -> Tensor:
    """The vector 2-norm and the Frobenius norm: ``sqrt(sum(x * x))`` over
    the axes (ints in float64, as NumPy computes them)."""
    tensor = layout.as_tensor(x)
    if tensor.irc_dtype.kind != "f":
        tensor = cast(tensor, FLOAT64)
    rank = tensor.type.rank
    axes = normalize_axes(axis, rank)
    if axis is None:
        vector = rank == 1
        supported = ord is None or (ord == "fro" and rank == 2) or (ord == 2 and vector)
    else:
        vector = len(axes) == 1
        supported = ord in ((None, 2) if vector else (None, "fro"))
    if len(axes) > 2 and not (axis is None and ord is None):
        raise tracing_error(
            f"np.linalg.norm over {len(axes)} axes: give one axis (a vector "
            "norm) or two (a matrix norm)",
            IrcShapeError,
        )
    if not supported:
        kinds = (
            "vector norms: ord=None or 2"
            if vector
            else "matrix norms: ord=None or 'fro'"
        )
        raise tracing_error(
            f"np.linalg.norm(..., ord={ord!r}) is not supported (irc computes "
            f"{kinds}); write other norms with np.abs, np.max and np.sum"
        )
    squares = binary(MUL, tensor, tensor)
    return unary(SQRT, reduce("sum", squares, axes, keepdims))


# ----- layout ------------------------------------------------------------------


@_function(np.reshape)
def _reshape(value: Operand, shape: Any = None, order: str = "C", **kw: Any) -> Tensor:
    if order != "C":
        raise tracing_error("only C-order (row-major) reshape is supported")
    shape = kw.pop("newshape", shape)
    return layout.reshape(layout.as_tensor(value), shape)


@_function(np.transpose)
def _transpose(value: Operand, axes: Any = None) -> Tensor:
    return layout.transpose(layout.as_tensor(value), axes)


@_function(np.swapaxes)
def _swapaxes(value: Operand, axis1: int, axis2: int) -> Tensor:
    tensor = layout.as_tensor(value)
    rank = tensor.type.rank
    permutation = list(range(rank))
    a, b = normalize_axis(axis1, rank), normalize_axis(axis2, rank)
    permutation[a], permutation[b] = permutation[b], permutation[a]
    return layout.transpose(tensor, permutation)


@_function(np.expand_dims)
def _expand_dims(value: Operand, axis: int | Sequence[int]) -> Tensor:
    tensor = layout.as_tensor(value)
    if not isinstance(axis, tuple | list):
        return layout.expand_dims(tensor, axis)
    # NumPy places the new axes at their positions in the result.
    rank = tensor.type.rank + len(axis)
    new_axes = normalize_axes(axis, rank)
    dims = iter(tensor.type.dims)
    one = SymExpr.const(1)
    return layout.reshape(
        tensor, [one if i in new_axes else next(dims) for i in range(rank)]
    )


@_function(np.repeat)
def _repeat(value: Operand, repeats: Any, axis: int | None = None) -> Tensor:
    """Each element ``repeats`` times along ``axis``: a count (static or
    symbolic) broadcasts a new axis and merges it; one static count per
    element is a ``graph.take`` of the repeated indices."""
    tensor = layout.as_tensor(value)
    if axis is None:
        tensor, axis = layout.reshape(tensor, (-1,)), 0
    axis = normalize_axis(axis, tensor.type.rank)
    if isinstance(repeats, Tensor):
        raise tracing_error(
            "np.repeat with traced repeats gives a shape that depends on the "
            "data; pass the repeats as ints (or symbolic sizes)"
        )
    counts = np.asarray(repeats) if isinstance(repeats, list | np.ndarray) else None
    if counts is None or counts.size == 1:
        count = repeats if counts is None else counts.reshape(()).item()
        return _repeat_each(tensor, axis, as_size(count, "np.repeat's repeats"))
    extent = tensor.type.dims[axis]
    if counts.ndim != 1 or not extent.is_constant or counts.size != int(extent):
        raise tracing_error(
            f"np.repeat with one count per element needs a static axis of "
            f"{counts.size} elements, got an axis of size {extent}",
            IrcShapeError,
        )
    if counts.dtype.kind not in "iu" or (counts < 0).any():
        raise tracing_error("np.repeat's repeats must be non-negative ints")
    indices = np.repeat(np.arange(counts.size), counts)
    return layout.take(tensor, indices, axis)


def _repeat_each(tensor: Tensor, axis: int, count: SymExpr) -> Tensor:
    dims = list(tensor.type.dims)
    spread = layout.reshape(tensor, [*dims[: axis + 1], 1, *dims[axis + 1 :]])
    spread = broadcast_to(spread, [*dims[: axis + 1], count, *dims[axis + 1 :]])
    return layout.reshape(spread, [*dims[:axis], dims[axis] * count, *dims[axis + 1 :]])


@_function(np.tile)
def _tile(value: Operand, reps: Any) -> Tensor:
    """``reps`` copies along each axis (counts static or symbolic), as a
    broadcast of a size-1 axis before each axis and one reshape."""
    tensor = layout.as_tensor(value)
    given = tuple(reps) if isinstance(reps, tuple | list | np.ndarray) else (reps,)
    counts = [as_size(r, "np.tile's reps") for r in given]
    rank = max(len(counts), tensor.type.rank)
    one = SymExpr.const(1)
    counts = [one] * (rank - len(counts)) + counts
    dims = [one] * (rank - tensor.type.rank) + list(tensor.type.dims)
    if all(c == 1 for c in counts):
        return layout.reshape(tensor, dims)
    spread = layout.reshape(tensor, [d for dim in dims for d in (one, dim)])
    spread = broadcast_to(spread, [d for pair in zip(counts, dims) for d in pair])
    return layout.reshape(spread, [c * d for c, d in zip(counts, dims)])


@_function(np.flip)
def _flip(value: Operand, axis: Any = None) -> Tensor:
    tensor = layout.as_tensor(value)
    axes = normalize_axes(axis, tensor.type.rank)
    key = tuple(
        slice(None, None, -1) if i in axes else slice(None)
        for i in range(tensor.type.rank)
    )
    return layout.getitem(tensor, key) if axes else tensor


@_function(np.outer)
def _outer(a: Operand, b: Operand, out: Any = None) -> Tensor:
    _refuse("np.outer", out=out)
    # NumPy makes arrays of both operands: Python scalars are not weak here.
    rows = layout.reshape(layout.as_tensor(a), (-1, 1))
    columns = layout.reshape(layout.as_tensor(b), (1, -1))
    return binary(MUL, rows, columns)


@_function(np.pad)
def _pad(array: Operand, pad_width: Any, mode: Any = "constant", **kw: Any) -> Tensor:
    """``mode='constant'``: a ``graph.concat`` of constant blocks (widths
    static or symbolic) on each side of each padded axis; ``'edge'``,
    ``'reflect'``, ``'symmetric'`` and ``'wrap'``: a concat of slices of
    the array itself (static widths)."""
    if mode not in _PAD_MODES:
        raise tracing_error(
            f"np.pad(..., mode={mode!r}) is not supported: irc pads with "
            f"mode {', '.join(repr(m) for m in ('constant', *_PAD_MODES[1:]))}"
        )
    constant_values = kw.pop("constant_values", 0)
    reflecting = mode in ("reflect", "symmetric")
    if reflecting and kw.pop("reflect_type", "even") != "even":
        raise tracing_error("np.pad: reflect_type='odd' is not supported")
    _refuse("np.pad", **kw)
    tensor = layout.as_tensor(array)
    widths = _pad_widths(pad_width, tensor.type.rank)
    if mode != "constant":
        for axis, (before, after) in enumerate(widths):
            if before != 0 or after != 0:
                tensor = _pad_from_itself(tensor, axis, before, after, mode)
        return tensor
    if not isinstance(constant_values, bool | int | float | np.generic):
        raise tracing_error(
            "np.pad: constant_values must be one scalar in irc (per-axis values "
            "are not supported)"
        )
    element = tensor.irc_dtype
    fill = np.asarray(constant_values).astype(element.numpy).item()
    for axis, (before, after) in enumerate(widths):
        dims = list(tensor.type.dims)
        parts = [tensor]
        if before != 0:
            parts.insert(
                0, splat(fill, element, [*dims[:axis], before, *dims[axis + 1 :]])
            )
        if after != 0:
            parts.append(splat(fill, element, [*dims[:axis], after, *dims[axis + 1 :]]))
        tensor = layout.concatenate(parts, axis)
    return tensor


#: np.pad's modes that irc captures, ``constant`` first.
_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_from_itself(
    tensor: Tensor, axis: int, before: SymExpr, after: SymExpr, mode: str
) -> Tensor:
    """One axis of ``tensor`` padded with its own elements, as ``np.pad``'s
    ``mode`` chooses them: a concat of slices, each a run of consecutive
    (or reversed, or repeated) indices of the axis."""
    if before.constant is None or after.constant is None:
        raise tracing_error(
            f"np.pad(..., mode={mode!r}) needs static pad widths, not "
            f"({before}, {after})"
        )
    size = tensor.type.dims[axis]
    if size.constant is not None:
        indices = np.pad(
            np.arange(size.constant), (before.constant, after.constant), mode
        )
        runs = _index_runs(indices.tolist())
    else:
        runs = _symbolic_runs(size, before.constant, after.constant, mode)
    parts = [_run(tensor, axis, run) for run in runs]
    return layout.concatenate(parts, axis) if len(parts) > 1 else parts[0]


#: A run of indices along one axis: ``(start, length, step)``, step 1, -1
#: or 0 (one index repeated).
_Run = tuple[SymExpr, int, int]


def _index_runs(indices: list[int]) -> list[_Run]:
    """``indices`` as maximal runs of one step."""
    runs: list[_Run] = []
    start = 0
    while start < len(indices):
        end = start + 1
        step = indices[end] - indices[start] if end < len(indices) else 1
        if step not in (-1, 0, 1):
            step = 1
        else:
            while end < len(indices) and indices[end] - indices[end - 1] == step:
                end += 1
        runs.append((SymExpr.const(indices[start]), end - start, step))
        start = end
    return runs


def _symbolic_runs(size: SymExpr, before: int, after: int, mode: str) -> list[_Run]:
    """The runs of ``np.pad``'s indices on an axis of symbolic ``size``,
    where the widths fit in one reflection (a fact must say so)."""
    reach = {"edge": 0, "reflect": 1, "symmetric": 0, "wrap": 0}[mode]
    widest = max(before, after) + reach
    if mode != "edge" and not current_trace().facts.prove_le(widest, size):
        raise tracing_error(
            f"np.pad(..., mode={mode!r}) pads an axis of symbolic size {size} "
            f"by ({before}, {after}), which needs {size} >= {widest}: declare "
            f"the fact '{size} >= {widest}'",
            IrcShapeError,
        )
    last = size - 1
    before_run, after_run = {
        "edge": ((SymExpr.const(0), before, 0), (last, after, 0)),
        "reflect": ((SymExpr.const(before), before, -1), (last - 1, after, -1)),
        "symmetric": ((SymExpr.const(before - 1), before, -1), (last, after, -1)),
        "wrap": ((size - before, before, 1), (SymExpr.const(0), after, 1)),
    }[mode]
    middle = (SymExpr.const(0), size, 1)
    return [run for run in (before_run, middle, after_run) if not _is_empty(run)]


def _is_empty(run: tuple[SymExpr, Any, int]) -> bool:
    return isinstance(run[1], int) and run[1] == 0


def _run(tensor: Tensor, axis: int, run: tuple[SymExpr, Any, int]) -> Tensor:
    """The elements of ``tensor`` at one run of indices along ``axis``."""
    start, length, step = run
    key: list[Any] = [slice(None)] * tensor.type.rank
    if step == 0:
        key[axis] = slice(start, start + 1)
        one = layout.getitem(tensor, tuple(key))
        dims = list(tensor.type.dims)
        dims[axis] = as_size(length, "a pad width")
        return broadcast_to(one, dims)
    if step == 1:
        key[axis] = slice(start, start + length)
        return layout.getitem(tensor, tuple(key))
    key[axis] = slice(start - length + 1, start + 1)
    return _flip(layout.getitem(tensor, tuple(key)), axis)


def _pad_widths(pad_width: Any, rank: int) -> list[tuple[SymExpr, SymExpr]]:
    """NumPy's ``pad_width`` forms (``n``, ``(n,)``, ``(before, after)``,
    one pair per axis) as a ``(before, after)`` pair per axis."""
    if isinstance(pad_width, np.ndarray):
        pad_width = pad_width.tolist()
    rows = pad_width if isinstance(pad_width, tuple | list) else (pad_width,)
    nested = [isinstance(row, tuple | list) for row in rows]
    if not rows or (any(nested) and not all(nested)):
        raise tracing_error(f"np.pad: cannot read the pad widths {pad_width!r}")
    pairs = [tuple(row) for row in rows] if all(nested) else [tuple(rows)]
    if len(pairs) == 1:
        pairs = pairs * rank
    if len(pairs) != rank or any(len(pair) not in (1, 2) for pair in pairs):
        raise tracing_error(
            f"np.pad: the pad widths {pad_width!r} do not fit an array of rank {rank}",
            IrcShapeError,
        )
    return [
        (as_size(pair[0], "a pad width"), as_size(pair[-1], "a pad width"))
        for pair in pairs
    ]


@_function(np.squeeze)
def _squeeze(value: Operand, axis: Any = None) -> Tensor:
    return layout.squeeze(layout.as_tensor(value), axis)


@_function(np.ndim)
def _ndim(value: Tensor) -> int:
    return value.ndim


@_function(np.shape)
def _shape(value: Tensor) -> tuple[int | SymDim, ...]:
    return value.shape


@_function(np.copy)
def _copy(value: Operand, order: str = "K", subok: bool = False) -> Tensor:
    return layout.copy(layout.as_tensor(value))


@_function(np.copyto)
def _copyto(dst: Operand, src: Operand, casting: str = "same_kind", where: Any = True):
    from irc.capture.writes import copyto

    copyto(dst, src, casting, where)


@_function(np.concatenate)
def _concatenate(values: Sequence[Operand], axis: int | None = 0, **kw: Any) -> Tensor:
    _refuse("np.concatenate", **kw)
    return layout.concatenate(values, axis)


@_function(np.stack)
def _stack(values: Sequence[Operand], axis: int = 0, **kw: Any) -> Tensor:
    _refuse("np.stack", **kw)
    return layout.stack(values, axis)


@_function(np.lib.stride_tricks.sliding_window_view)
def _sliding_window_view(
    array: Operand,
    window_shape: int | Sequence[int],
    axis: int | Sequence[int] | None = None,
    *,
    subok: bool = False,
    writeable: bool = False,
) -> Tensor:
    """The windows of ``array`` along ``axis``, each window's axes appended
    (NumPy's read-only view): one strided slice per offset, stacked. The
    im2col of NumPy convolutions; ``irc.nn.conv`` builds the same."""
    if writeable:
        raise tracing_error(
            "np.lib.stride_tricks.sliding_window_view: writeable=True is not "
            "supported (its windows overlap: a write would change several)"
        )
    value = layout.as_tensor(array)
    rank = value.type.rank
    windows = (window_shape,) if isinstance(window_shape, int) else tuple(window_shape)
    if axis is None:
        axes = tuple(range(rank))
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(normalize_axis(a, rank) for a in axes)
    if len(windows) != len(axes) or len(set(axes)) != len(axes):
        raise tracing_error(
            "np.lib.stride_tricks.sliding_window_view: give one window size "
            f"per axis, each axis once (window_shape={window_shape!r}, "
            f"axis={axis!r}, rank {rank})"
        )
    for window, axis_ in zip(windows, axes):
        extent = value.type.dims[axis_]
        if not isinstance(window, int) or window < 1:
            raise tracing_error(
                f"sliding_window_view: window sizes must be ints >= 1, not {window!r}"
            )
        count = extent - window + 1
        if count.is_constant and count.constant < 0:
            raise tracing_error(
                f"sliding_window_view: a window of {window} does not fit axis "
                f"{axis_} of size {extent}"
            )
        value = layout.stack(
            [
                layout.slice_axis(value, axis_, SymExpr.const(k), count)
                for k in range(window)
            ],
            -1,
        )
    return value


@_function(np.convolve)
def _convolve(a: Operand, v: Operand, mode: str = "full") -> Tensor:
    return _sliding_product("np.convolve", a, v, mode, flip=True)


@_function(np.correlate)
def _correlate(a: Operand, v: Operand, mode: str = "valid") -> Tensor:
    return _sliding_product("np.correlate", a, v, mode, flip=False)


#: (before, after) zeros around the longer operand for each mode, given the
#: window ``m``: every overlap (``full``), the longer operand's length
#: centred as NumPy centres it (``same``), only whole overlaps (``valid``).
_SLIDING_PADDING: dict[str, Callable[[int], tuple[int, int]]] = {
    "full": lambda m: (m - 1, m - 1),
    "same": lambda m: (m - 1 - (m - 1) // 2, (m - 1) // 2),
    "valid": lambda m: (0, 0),
}


def _sliding_product(
    name: str, a: Operand, v: Operand, mode: str, flip: bool
) -> Tensor:
    """``np.convolve`` (``flip``: the shorter operand reversed) or
    ``np.correlate`` of 1-D arrays: the shorter operand, a window of static
    length, slid over the longer one (padded per ``mode``), one matmul of
    the windows with it."""
    long, short = layout.as_tensor(a), layout.as_tensor(v)
    if long.type.rank != 1 or short.type.rank != 1:
        raise tracing_error(f"{name}: the operands must be 1-D, as in NumPy")
    if mode not in _SLIDING_PADDING:
        raise tracing_error(
            f"{name}: mode must be one of {', '.join(_SLIDING_PADDING)}, not {mode!r}"
        )
    facts = current_trace().facts
    length, window = long.type.dims[0], short.type.dims[0]
    if not facts.prove_le(window, length):
        if not facts.prove_le(length + 1, window):
            raise tracing_error(
                f"{name}: irc cannot tell which operand is longer ({length} or "
                f"{window}), and NumPy slides the shorter over the longer; "
                "declare it as a fact (facts=[...])"
            )
        if flip:  # convolution commutes
            return _sliding_product(name, short, long, mode, flip)
        # NumPy's correlation of a shorter first operand: the swapped one, reversed
        return _sliding_product(name, short, long, mode, flip)[::-1]
    if not window.is_constant:
        raise tracing_error(
            f"{name}: the shorter operand's length must be static (it is the "
            f"window), not {window}"
        )
    size = window.constant
    if size == 0:
        raise tracing_error(f"{name}: the operands must not be empty, as in NumPy")
    kernel = short[::-1] if flip else short
    padded = np.pad(long, _SLIDING_PADDING[mode](size))
    return _sliding_window_view(padded, size) @ kernel


@_function(np.hstack)
def _hstack(values: Sequence[Operand], **kw: Any) -> Tensor:
    _refuse("np.hstack", **kw)
    tensors = [layout.as_tensor(v) for v in values]
    tensors = [layout.reshape(t, (1,)) if t.type.rank == 0 else t for t in tensors]
    return layout.concatenate(tensors, 0 if tensors[0].type.rank == 1 else 1)


@_function(np.vstack)
def _vstack(values: Sequence[Operand], **kw: Any) -> Tensor:
    _refuse("np.vstack", **kw)
    tensors = [layout.as_tensor(v) for v in values]
    tensors = [
        layout.reshape(t, (1, t.type.dims[0] if t.type.rank else 1))
        if t.type.rank < 2
        else t
        for t in tensors
    ]
    return layout.concatenate(tensors, 0)


@_function(np.split)
def _split(value: Operand, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    return layout.split(layout.as_tensor(value), indices_or_sections, axis)


@_function(np.take)
def _take(value: Operand, indices: Any, axis: int | None = None, **kw: Any) -> Tensor:
    _refuse("np.take", **{k: v for k, v in kw.items() if k != "mode" or v != "raise"})
    return layout.take(layout.as_tensor(value), indices, axis)


@_function(np.broadcast_to)
def _broadcast_to(value: Operand, shape: Any, subok: bool = False) -> Tensor:
    dims = [
        as_size(d, "a broadcast dim")
        for d in (shape if isinstance(shape, tuple | list) else (shape,))
    ]
    return layout.broadcast_view(layout.as_tensor(value), dims)


# ----- selection -----------------------------------------------------------------


@_function(np.where)
def _where(condition: Operand, x: Operand = None, y: Operand = None) -> Tensor:
    if x is None or y is None:
        raise tracing_error(
            "np.where(condition) with one argument gives data-dependent shapes; "
            "use np.where(condition, x, y)"
        )
    return select(condition, x, y)


@_function(np.clip)
def _clip(value: Operand, a_min: Operand = None, a_max: Operand = None, **kw: Any):
    """``np.minimum(np.maximum(x, a_min), a_max)``'s values, with PyTorch's
    ``clamp`` gradient: 1 for ``x`` in the closed interval (``maximum``'s
    rule would give half at a bound) and 0 elsewhere, NaN included
    (docs/autodiff.md, "Non-differentiable points")."""
    a_min, a_max = kw.pop("min", a_min), kw.pop("max", a_max)
    _refuse("np.clip", **kw)
    result: Operand = value
    if a_min is not None:
        result = _bounded(result, a_min, "ge", "lt")
    if a_max is not None:
        result = _bounded(result, a_max, "le", "gt")
    return layout.as_tensor(result)


def _bounded(value: Operand, bound: Operand, keep: str, past: str) -> Tensor:
    """``value`` where ``value <keep> bound``, else ``bound`` where ``value
    <past> bound``, else NaN (a NaN on either side, which ``np.maximum``
    propagates): selects, so that ``value`` has the gradient only where it
    is kept, and neither operand where the result is a NaN."""
    element = result_dtype([value, bound])
    other: Operand = bound
    if element.kind == "f":
        nan = splat(math.nan, element, ())
        other = select(compare(past, value, bound), bound, nan)
    return select(compare(keep, value, bound), value, other)


def _triangle(value: Operand, k: int, lower: bool) -> Tensor:
    tensor = layout.as_tensor(value)
    if tensor.type.rank < 2:
        raise tracing_error("np.tril/np.triu need an array of rank >= 2")
    rows, columns = tensor.type.dims[-2:]
    mask = diagonal_mask(rows, columns, k if lower else k - 1, "le")
    if not lower:
        mask = unary(NOT, mask)
    # NumPy's zeros are of the array's own dtype (a bool array stays bool).
    return select(mask, tensor, splat(0, tensor.irc_dtype, ()))


@_function(np.tril)
def _tril(value: Operand, k: int = 0) -> Tensor:
    return _triangle(value, k, lower=True)


@_function(np.triu)
def _triu(value: Operand, k: int = 0) -> Tensor:
    return _triangle(value, k, lower=False)


def diagonal_mask(rows: SymExpr, columns: SymExpr, k: int, predicate: str) -> Tensor:
    """``j <predicate> i + k`` over a ``rows x columns`` grid of indices
    ``(i, j)``, as a bool tensor: ``le`` is ``np.tri``, ``eq`` is ``np.eye``."""
    grid = graph.TensorType((rows, columns), INT64.ir_type)
    i = emit(graph.IotaOp(0, grid))
    j = emit(graph.IotaOp(1, grid))
    return compare(predicate, j, binary(ADD, i, k) if k else i)


# ----- creation from traced arrays (the *_like functions) ----------------------


def _like(fill_value: int) -> Callable[..., Tensor]:
    """``np.zeros_like``-style: ``fill_value`` in the prototype's shape (or
    ``shape``) and dtype (or ``dtype``); a C/F ``order`` is irrelevant here."""

    def handler(
        prototype: Operand,
        dtype: Any = None,
        order: Any = None,
        subok: Any = None,
        shape: Any = None,
        **unsupported: Any,
    ) -> Tensor:
        _refuse("a *_like function", **unsupported)
        tensor = layout.as_tensor(prototype)
        element = dtype_of(tensor) if dtype is None else to_dtype(dtype)
        dims = tensor.type.dims if shape is None else _dims(shape)
        return splat(fill_value, element, dims)

    return handler


# empty_like's contents are unspecified: zeros are as good as any.
FUNCTION_HANDLERS[np.zeros_like] = _like(0)
FUNCTION_HANDLERS[np.ones_like] = _like(1)
FUNCTION_HANDLERS[np.empty_like] = _like(0)


@_function(np.full_like)
def _full_like(
    prototype: Operand, fill_value: Any, dtype: Any = None, **unsupported: Any
) -> Tensor:
    _refuse("np.full_like", **unsupported)
    tensor = layout.as_tensor(prototype)
    element = dtype_of(tensor) if dtype is None else to_dtype(dtype)
    if isinstance(fill_value, Tensor | SymDim):
        return materialize(fill_value, element, tensor.type.dims)
    return splat(fill_value, element, tensor.type.dims)


def _dims(shape: Any) -> tuple[SymExpr, ...]:
    if not isinstance(shape, tuple | list):
        shape = (shape,)
    return tuple(as_size(d, "a shape dim") for d in shape)


# ----- creation from sizes: seen by the traced code only (intercept.py) ---------


def _is_symbolic(*values: Any) -> bool:
    return is_symbolic(values)


def _full(shape: Any, fill_value: Any, dtype_: Any) -> Tensor:
    dims = _dims(shape)
    if isinstance(fill_value, Tensor | SymDim):
        element = dtype_of(fill_value) if dtype_ is None else to_dtype(dtype_)
        return materialize(fill_value, element, dims)
    element = to_dtype(np.asarray(fill_value).dtype if dtype_ is None else dtype_)
    return splat(fill_value, element, dims)


def _traced_zeros(original: Callable[..., Any], fill: int) -> Callable[..., Any]:
    def creation(shape: Any, dtype: Any = float, *args: Any, **kw: Any) -> Any:
        if not _is_symbolic(shape):
            return original(shape, dtype, *args, **kw)
        return _full(shape, fill, dtype)

    return creation


def _traced_full(original: Callable[..., Any]) -> Callable[..., Any]:
    def full(shape: Any, fill_value: Any, dtype: Any = None, *args: Any, **kw: Any):
        if not _is_symbolic(shape, fill_value):
            return original(shape, fill_value, dtype, *args, **kw)
        return _full(shape, fill_value, dtype)

    return full


def _traced_arange(original: Callable[..., Any]) -> Callable[..., Any]:
    def arange(*args: Any, dtype: Any = None, **kw: Any) -> Any:
        if not _is_symbolic(*args):
            return original(*args, dtype=dtype, **kw)
        start, stop, step = _arange_bounds(args)
        low, high = as_dim(start, "arange start"), as_dim(stop, "arange stop")
        length = _arange_length(low, high, step)
        element = to_dtype(dtype) if dtype is not None else INT64
        if element == BOOL:
            raise tracing_error("np.arange cannot produce bools")
        index = emit(graph.IotaOp(0, graph.TensorType((length,), element.ir_type)))
        if step != 1:
            index = binary(MUL, index, step)
        if not (isinstance(start, int) and start == 0):
            index = binary(ADD, index, start)
        return cast(index, element)

    return arange


def _arange_length(start: SymExpr, stop: SymExpr, step: int) -> SymExpr:
    """NumPy's ``len(range(start, stop, step))``: empty when ``stop`` does
    not pass ``start``, guarded when that cannot be decided."""
    facts = current_trace().facts
    if facts.prove_le(stop, start):
        return SymExpr.const(0)
    if not facts.prove_le(start, stop):
        layout.guard(start, "<=", stop, f"np.arange start {start} must not pass {stop}")
    return (stop - start).ceildiv(step)


def _arange_bounds(args: tuple) -> tuple[Any, Any, int]:
    if len(args) == 1:
        return 0, args[0], 1
    if len(args) == 2:
        return args[0], args[1], 1
    step = args[2]
    if not isinstance(step, int) or isinstance(step, bool) or step <= 0:
        raise tracing_error("np.arange with symbolic bounds needs a positive int step")
    return args[0], args[1], step


def _traced_grid(predicate: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``np.tri`` (``le``) or ``np.eye`` (``eq``) taking symbolic sizes."""

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def grid(N: Any, M: Any = None, k: int = 0, dtype: Any = float, **kw: Any):
            if not _is_symbolic(N, M):
                return original(N, M, k, dtype, **kw)
            rows = as_dim(N, f"np.{original.__name__} N")
            columns = rows if M is None else as_dim(M, f"np.{original.__name__} M")
            return cast(diagonal_mask(rows, columns, k, predicate), to_dtype(dtype))

        return grid

    return wrap


def _traced_asarray(original: Callable[..., Any]) -> Callable[..., Any]:
    """``np.asarray``/``np.array`` of traced values: a traced array itself (in
    ``dtype``), a symbolic size as a 0-d int64 array, a list of them as
    ``np.stack`` (the elements' dtypes promoted, Python scalars as int64,
    float64 or bool, as NumPy's conversion takes them). ``order`` is
    irrelevant: the layout of a traced value is irc's own."""

    def asarray(value: Any, dtype: Any = None, order: Any = None, **kw: Any) -> Tensor:
        name = f"np.{original.__name__}"
        _refuse(name, **{k: v for k, v in kw.items() if not _is_default(k, v)})
        result = _traced_array(value, name)
        return result if dtype is None else cast(result, to_dtype(dtype))

    return asarray


def _is_default(option: str, value: Any) -> bool:
    """Whether an ``np.array`` option changes nothing here (traced values
    are never aliased, so ``copy``, ``subok`` and ``device`` do not)."""
    if option in ("ndmin", "ndmax"):
        return isinstance(value, int) and value == 0
    return option in ("copy", "subok", "device") or value is None


def _traced_array(value: Any, name: str) -> Tensor:
    if isinstance(value, tuple | list):
        if not value:
            raise tracing_error(f"{name}: an empty list has no traced elements")
        items = [_traced_array(item, name) for item in value]
        element = items[0].irc_dtype
        for item in items[1:]:
            element = promote(element, item.irc_dtype)
        return layout.stack([cast(item, element) for item in items], 0)
    if isinstance(value, Tensor):
        # A weak value stands for a Python scalar, which NumPy makes strong.
        return as_strong(value)
    return materialize(value, dtype_of(value), shape_of(value))


creation("asarray")(_traced_asarray)
creation("array")(_traced_asarray)
creation("zeros")(lambda original: _traced_zeros(original, 0))
creation("ones")(lambda original: _traced_zeros(original, 1))
creation("empty")(lambda original: _traced_zeros(original, 0))
creation("full")(_traced_full)
creation("arange")(_traced_arange)
creation("tri")(_traced_grid("le"))
creation("eye")(_traced_grid("eq"))


def _traced_broadcast_to(original: Callable[..., Any]) -> Callable[..., Any]:
    """``np.broadcast_to`` of a NumPy constant to a symbolic shape (NumPy
    dispatches on the array alone, and a constant does not reach irc)."""

    def broadcast_to(array: Any, shape: Any, subok: bool = False) -> Tensor:
        return _broadcast_to(array, shape)

    return broadcast_to


def _traced_ascontiguousarray(original: Callable[..., Any]) -> Callable[..., Any]:
    """The identity on a traced array (layout is the compiler's business);
    NumPy's C function does not dispatch, so its lookup is intercepted."""

    def ascontiguousarray(a: Any, dtype: Any = None, **kw: Any) -> Any:
        if not isinstance(a, Tensor):
            return original(a, dtype, **kw)
        _refuse("np.ascontiguousarray", **{k: v for k, v in kw.items() if k != "like"})
        result = layout.reshape(a, (1,)) if a.type.rank == 0 else a
        return _with_dtype(result, dtype)

    return ascontiguousarray


creation("broadcast_to")(_traced_broadcast_to)
creation("ascontiguousarray")(_traced_ascontiguousarray)


# ----- functions irc adds (NumPy has no erf, sigmoid or rsqrt) ------------------


def erf(value: Any) -> Any:
    """The error function; on NumPy arrays outside of tracing, computed with
    ``math.erf``."""
    if isinstance(value, Tensor | SymDim):
        return unary(ERF, value)
    return np.vectorize(math.erf, otypes=[np.float64])(value).astype(
        np.result_type(value, np.float16)
    )


def sigmoid(value: Any) -> Any:
    if isinstance(value, Tensor | SymDim):
        return unary(SIGMOID, value)
    return 1 / (1 + np.exp(-value))


def rsqrt(value: Any) -> Any:
    if isinstance(value, Tensor | SymDim):
        return unary(RSQRT, value)
    return 1 / np.sqrt(value)
