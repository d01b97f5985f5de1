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

from irc.capture import layout
from irc.capture.intercept import creation, is_symbolic
from irc.capture.ops import (
    Operand,
    as_dim,
    as_size,
    binary,
    broadcast_shapes,
    cast,
    compare,
    dtype_of,
    emit,
    materialize,
    normalize_axes,
    normalize_axis,
    select,
    shape_of,
    splat,
    unary,
)
from irc.capture.tensor import (
    FUNCTION_HANDLERS,
    UFUNC_HANDLERS,
    UFUNC_REDUCE_HANDLERS,
    SymDim,
    Tensor,
    dim_proxy,
)
from irc.capture.trace import current_trace, tracing_error
from irc.dialects import graph, sym
from irc.dialects.elementwise import COMPARISONS, ComparisonPredicate
from irc.dtypes import BOOL, FLOAT64, INT64, DType, promote
from irc.dtypes import dtype as to_dtype
from irc.errors import IrcShapeError
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

#: The graph op of each NumPy ufunc that is an elementwise kind's reference
#: semantics (``irc.dialects.elementwise``): a kind whose NumPy function is
#: a ufunc is captured from that ufunc with no line here.
_UNARY: dict[np.ufunc, type[graph.UnaryOp]] = {
    op.KIND.semantics.numpy: op
    for op in graph.UNARY_OPS
    if isinstance(op.KIND.semantics.numpy, np.ufunc)
}
_BINARY: dict[np.ufunc, type[graph.BinaryOp]] = {
    op.KIND.semantics.numpy: op
    for op in graph.BINARY_OPS
    if isinstance(op.KIND.semantics.numpy, np.ufunc)
}

_LOGICAL: dict[np.ufunc, type[graph.BinaryOp]] = {
    np.logical_and: graph.AndOp,
    np.logical_or: graph.OrOp,
    np.logical_xor: graph.XorOp,
}

#: The predicate of each NumPy comparison ufunc, from the table.
_COMPARISONS: dict[np.ufunc, ComparisonPredicate] = {
    function: predicate for predicate, function in COMPARISONS.items()
}


def _register_elementwise() -> None:
    for ufunc, unary_kind in _UNARY.items():
        UFUNC_HANDLERS[ufunc] = _unary_handler(unary_kind)
    for ufunc, binary_kind in _BINARY.items():
        UFUNC_HANDLERS[ufunc] = _binary_handler(binary_kind)
    for ufunc, logical_kind in _LOGICAL.items():
        UFUNC_HANDLERS[ufunc] = _logical_handler(logical_kind)
    for ufunc, predicate in _COMPARISONS.items():
        UFUNC_HANDLERS[ufunc] = _compare_handler(predicate)


def _unary_handler(kind: type[graph.UnaryOp]) -> Callable[..., Tensor]:
    def handler(value: Operand, dtype: Any = None) -> Tensor:
        if kind is graph.NotOp and dtype_of(value).kind == "f":
            raise tracing_error("bitwise not is not defined on floats")
        return _with_dtype(unary(kind, value), dtype)

    return handler


def _binary_handler(kind: type[graph.BinaryOp]) -> Callable[..., Tensor]:
    def handler(lhs: Operand, rhs: Operand, dtype: Any = None) -> Tensor:
        return _with_dtype(binary(kind, lhs, rhs), dtype)

    return handler


def _logical_handler(kind: type[graph.BinaryOp]) -> Callable[..., Tensor]:
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
    return binary(graph.MulOp, value, value)


@_ufunc(np.reciprocal)
def _reciprocal(value: Operand) -> Tensor:
    if dtype_of(value).kind != "f":
        raise tracing_error(
            "np.reciprocal of integers (C division, 0 for most values) is not "
            "supported; cast to a float type first"
        )
    return binary(graph.DivOp, 1.0, value)


@_ufunc(np.positive)
def _positive(value: Operand) -> Operand:
    return value


@_ufunc(np.sign)
def _sign(value: Operand) -> Tensor:
    positive = compare("gt", value, 0)
    negative = compare("lt", value, 0)
    # Zeros and NaNs are their own sign, as in NumPy.
    return select(positive, 1, select(negative, -1, value))


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
            f"{_text(lhs)} and {_text(rhs)}",
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
        return binary(graph.MulOp, _strong(lhs), _strong(rhs))
    return matmul(lhs, rhs)


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
    return emit(graph.ReduceOp(kind, tensor.value, axes, keepdims))


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
    element = _float_result(tensor.irc_dtype, dtype)
    tensor = cast(tensor, element)
    axes = normalize_axes(axis, tensor.type.rank)
    total = reduce("sum", tensor, axes, keepdims)
    return binary(graph.DivOp, total, _count(tensor, axes))


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
    tensor = cast(layout.as_tensor(value), _float_result(dtype_of(value), dtype))
    axes = normalize_axes(axis, tensor.type.rank)
    centered = binary(graph.SubOp, tensor, mean(tensor, axes, keepdims=True))
    squares = reduce("sum", binary(graph.MulOp, centered, centered), axes, keepdims)
    return binary(graph.DivOp, squares, _count(tensor, axes) - ddof)


@_function(np.std)
def std(
    value: Operand,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
) -> Tensor:
    return unary(graph.SqrtOp, var(value, axis, dtype, out, ddof, keepdims))


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
def _expand_dims(value: Operand, axis: int) -> Tensor:
    return layout.expand_dims(layout.as_tensor(value), axis)


@_function(np.squeeze)
def _squeeze(value: Operand, axis: Any = None) -> Tensor:
    return layout.squeeze(layout.as_tensor(value), axis)


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
def _broadcast_to(value: Operand, shape: Any) -> Tensor:
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
    a_min, a_max = kw.pop("min", a_min), kw.pop("max", a_max)
    _refuse("np.clip", **kw)
    result: Operand = value
    if a_min is not None:
        result = binary(graph.MaximumOp, result, a_min)
    if a_max is not None:
        result = binary(graph.MinimumOp, result, a_max)
    return layout.as_tensor(result)


def _triangle(value: Operand, k: int, lower: bool) -> Tensor:
    tensor = layout.as_tensor(value)
    if tensor.type.rank < 2:
        raise tracing_error("np.tril/np.triu need an array of rank >= 2")
    rows, columns = tensor.type.dims[-2:]
    mask = diagonal_mask(rows, columns, k if lower else k - 1, "le")
    if not lower:
        mask = unary(graph.NotOp, mask)
    return select(mask, tensor, 0)


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
    return compare(predicate, j, binary(graph.AddOp, i, k) if k else i)


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
            index = binary(graph.MulOp, index, step)
        if not (isinstance(start, int) and start == 0):
            index = binary(graph.AddOp, index, start)
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


creation("zeros")(lambda original: _traced_zeros(original, 0))
creation("ones")(lambda original: _traced_zeros(original, 1))
creation("empty")(lambda original: _traced_zeros(original, 0))
creation("full")(_traced_full)
creation("arange")(_traced_arange)
creation("tri")(_traced_grid("le"))
creation("eye")(_traced_grid("eq"))


# ----- functions irc adds (NumPy has no erf, sigmoid or rsqrt) ------------------


def erf(value: Any) -> Any:
    """The error function; on NumPy arrays outside of tracing, computed with
    ``math.erf``."""
    if isinstance(value, Tensor | SymDim):
        return unary(graph.ErfOp, value)
    return np.vectorize(math.erf, otypes=[np.float64])(value).astype(
        np.result_type(value, np.float16)
    )


def sigmoid(value: Any) -> Any:
    if isinstance(value, Tensor | SymDim):
        return unary(graph.SigmoidOp, value)
    return 1 / (1 + np.exp(-value))


def rsqrt(value: Any) -> Any:
    if isinstance(value, Tensor | SymDim):
        return unary(graph.RsqrtOp, value)
    return 1 / np.sqrt(value)
