"""One converter per ATen operator: each evaluates an FX node with NumPy
operations, which run eagerly on NumPy arrays and are captured as graph ops
on traced arrays, as the ONNX importer's converters do.

The elementwise functions come from the primitives' declarations (their
``aten`` names, docs/primitives.md) and the composite functions from
:mod:`irc.nn`, which the ONNX importer uses too: this module holds only what
is ATen's own (its overloads, its layout ops, its dtype rules). Every node's
result dtype is the one torch's meta computation recorded
(``node.meta["val"]``): operands are cast to it (or, for a comparison, to
their promoted dtype) before the NumPy function runs, so NumPy's promotion
never differs from torch's.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irc import nn
from irc.capture import layout
from irc.capture.intercept import CREATION
from irc.capture.numpy_api import erf
from irc.capture.tensor import SymDim
from irc.dtypes import dtype as irc_dtype
from irc.errors import IrcError
from irc.primitives.declaration import Primitive, on_declare

Value = Any

# NumPy's creation functions taking symbolic sizes while traced: capture
# intercepts them for user code only, and this module is irc's.
full = CREATION["full"](np.full)
arange = CREATION["arange"](np.arange)
broadcast_to = CREATION["broadcast_to"](np.broadcast_to)


class UnsupportedAtenOp(IrcError):
    """An ATen operator, or a form of one, that irc's graph level cannot
    express; ``node`` names the FX node where one was met."""

    def __init__(self, message: str, node: str | None = None):
        super().__init__(message)
        self.node = node


@dataclass
class AtenCall:
    """One FX node being converted: its evaluated arguments and what torch
    computed of its result (dtype and shape, symbolic sizes as ``SymDim``)."""

    name: str
    overload: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    meta: Any

    def arg(self, index: int, name: str, default: Any = None) -> Any:
        if index < len(self.args):
            return self.args[index]
        return self.kwargs.get(name, default)

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the (first) result."""
        value = self.meta[0] if isinstance(self.meta, list | tuple) else self.meta
        return numpy_dtype(value.dtype)

    def unsupported(self, form: str) -> UnsupportedAtenOp:
        return UnsupportedAtenOp(
            f"{self.name}.{self.overload} with {form} is not supported by irc"
        )


Converter = Callable[[AtenCall], Value]

#: The converters, by ATen operator (``"aten.add"``, every overload).
CONVERTERS: dict[str, Converter] = {}


def converts(*names: str) -> Callable[[Converter], Converter]:
    def register(converter: Converter) -> Converter:
        for name in names:
            CONVERTERS[name] = converter
        return converter

    return register


def numpy_dtype(torch_dtype: Any) -> np.dtype:
    return irc_dtype(torch_dtype).numpy


# ----- values ------------------------------------------------------------------


def is_array(value: Value) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def cast(value: Value, dtype: np.dtype) -> Value:
    """``value`` in ``dtype``: arrays are cast, Python scalars stay weak."""
    if is_array(value):
        return value if np.dtype(value.dtype) == dtype else value.astype(dtype)
    return value


def as_array(value: Value, dtype: np.dtype) -> Value:
    """An operand as an array of ``dtype`` (a Python scalar as a 0-d one)."""
    if is_array(value):
        return cast(value, dtype)
    return np.asarray(value, dtype)


def axis_of(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def axes_of(dims: Any, rank: int) -> tuple[int, ...]:
    """ATen's ``dim`` (an int, a list, or None: every axis) as axes. A
    scalar has none, though ATen takes its dim 0 or -1."""
    if rank == 0:
        return ()
    if dims is None or (isinstance(dims, list | tuple) and not dims):
        return tuple(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return tuple(axis_of(d, rank) for d in dims)


def sizes(values: Sequence[Any]) -> list[int | SymDim]:
    """ATen sizes (ints, SymDims) as NumPy takes them."""
    return [int(v) if isinstance(v, int | np.integer) else v for v in values]


# ----- elementwise ---------------------------------------------------------------


def _compute_dtype(call: AtenCall, operands: Sequence[Value]) -> np.dtype:
    """The dtype an elementwise op computes in: its result's, or, for a
    comparison (a bool result of non-bool operands), theirs promoted."""
    result = call.dtype
    if result != np.bool_:
        return result
    arrays = [np.dtype(v.dtype) for v in operands if is_array(v)]
    if not arrays:
        return result
    promoted = np.result_type(*arrays)
    scalars = [v for v in operands if not is_array(v)]
    if promoted.kind in "bi" and any(isinstance(s, float) for s in scalars):
        return np.dtype(np.float32)  # torch's default float dtype
    return promoted


def _elementwise(primitive: Primitive) -> Converter:
    def convert(call: AtenCall) -> Value:
        first, *rest = call.args[: primitive.arity]
        alpha = call.kwargs.get("alpha")
        if alpha is not None and alpha != 1:  # add/sub's scaled second operand
            rest[0] = rest[0] * alpha
        compute = _compute_dtype(call, [first, *rest])
        result = primitive(as_array(first, compute), *(cast(v, compute) for v in rest))
        return cast(result, call.dtype)

    return convert


def _register_primitive(primitive: Primitive) -> None:
    for name in primitive.aten:
        CONVERTERS.setdefault(name, _elementwise(primitive))


on_declare(_register_primitive)


def _comparison(ufunc: np.ufunc) -> Converter:
    def convert(call: AtenCall) -> Value:
        lhs, rhs = call.args[:2]
        compute = _compute_dtype(call, [lhs, rhs])
        return ufunc(as_array(lhs, compute), cast(rhs, compute))

    return convert


for _name, _ufunc in {
    "aten.eq": np.equal,
    "aten.ne": np.not_equal,
    "aten.lt": np.less,
    "aten.le": np.less_equal,
    "aten.gt": np.greater,
    "aten.ge": np.greater_equal,
}.items():
    CONVERTERS[_name] = _comparison(_ufunc)


@converts("aten.logical_and", "aten.logical_or", "aten.logical_xor")
def logical_binary(call: AtenCall) -> Value:
    function = {
        "aten.logical_and": np.logical_and,
        "aten.logical_or": np.logical_or,
        "aten.logical_xor": np.logical_xor,
    }[call.name]
    return function(*(as_array(v, np.dtype(np.bool_)) for v in call.args[:2]))


@converts("aten.logical_not")
def logical_not(call: AtenCall) -> Value:
    (x,) = call.args
    return np.logical_not(x if x.dtype == np.bool_ else x != 0)


@converts("aten.div", "aten.true_divide")
def div(call: AtenCall) -> Value:
    compute = call.dtype
    lhs, rhs = as_array(call.args[0], compute), cast(call.args[1], compute)
    mode = call.kwargs.get("rounding_mode")
    if mode is None:
        return lhs / rhs
    if compute.kind == "i":
        floor = np.floor_divide(lhs, rhs)
        if mode == "floor":
            return floor
        # trunc: the floor plus one where the exact quotient was negative
        inexact = np.not_equal(floor * rhs, lhs)
        negative = np.not_equal(np.less(lhs, 0), np.less(rhs, 0))
        return np.where(np.logical_and(inexact, negative), floor + 1, floor)
    quotient = lhs / rhs
    return np.floor(quotient) if mode == "floor" else np.trunc(quotient)


@converts("aten.where")
def where(call: AtenCall) -> Value:
    condition, on_true, on_false = call.args
    dtype = call.dtype
    return np.where(
        as_array(condition, np.dtype(np.bool_)),
        as_array(on_true, dtype),
        cast(on_false, dtype),
    )


@converts("aten.clamp", "aten.clamp_min", "aten.clamp_max")
def clamp(call: AtenCall) -> Value:
    x = cast(call.args[0], call.dtype)
    if call.name == "aten.clamp_min":
        low, high = call.args[1], None
    elif call.name == "aten.clamp_max":
        low, high = None, call.args[1]
    else:
        low, high = call.arg(1, "min"), call.arg(2, "max")
    if low is not None:
        x = np.maximum(x, cast(low, call.dtype))
    if high is not None:
        x = np.minimum(x, cast(high, call.dtype))
    return x


@converts("aten.native_dropout")
def native_dropout(call: AtenCall) -> Value:
    x, probability, train = call.args[:3]
    if train and probability:
        raise call.unsupported("p > 0 in training (irc computes deterministically)")
    return x, full(sizes(x.shape), True, np.bool_)


@converts("aten.relu")
def relu(call: AtenCall) -> Value:
    return nn.relu(call.args[0])


@converts("aten.gelu")
def gelu(call: AtenCall) -> Value:
    return nn.gelu(call.args[0], call.kwargs.get("approximate", "none"))


@converts("aten.silu")
def silu(call: AtenCall) -> Value:
    return nn.silu(call.args[0])


@converts("aten.reciprocal")
def reciprocal(call: AtenCall) -> Value:
    return 1 / cast(call.args[0], call.dtype)


@converts("aten.square")
def square(call: AtenCall) -> Value:
    x = cast(call.args[0], call.dtype)
    return x * x


@converts("aten.sign")
def sign(call: AtenCall) -> Value:
    return np.sign(call.args[0])


@converts("aten.isnan")
def isnan(call: AtenCall) -> Value:
    x = call.args[0]
    return np.not_equal(x, x)


@converts("aten.threshold_backward")
def threshold_backward(call: AtenCall) -> Value:
    gradient, x, threshold = call.args
    return np.where(np.less_equal(x, threshold), 0.0, gradient).astype(call.dtype)


@converts("aten.gelu_backward")
def gelu_backward(call: AtenCall) -> Value:
    gradient, x = call.args[:2]
    approximate = call.kwargs.get("approximate", "none")
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        inner = (x + x * x * x * 0.044715) * k
        t = np.tanh(inner)
        derivative = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (
            1 + 3 * 0.044715 * x * x
        )
    else:
        cdf = (erf(x * (1 / math.sqrt(2))) + 1) * 0.5
        pdf = np.exp(x * x * -0.5) * (1 / math.sqrt(2 * math.pi))
        derivative = cdf + x * pdf
    return gradient * derivative


@converts("aten.tanh_backward")
def tanh_backward(call: AtenCall) -> Value:
    gradient, y = call.args
    return gradient * (1 - y * y)


@converts("aten.sigmoid_backward")
def sigmoid_backward(call: AtenCall) -> Value:
    gradient, y = call.args
    return gradient * y * (1 - y)


# ----- dtypes and copies ------------------------------------------------------------


@converts("prims.convert_element_type", "aten._to_copy", "aten.to", "aten.type_as")
def convert_element_type(call: AtenCall) -> Value:
    return as_array(call.args[0], call.dtype)


@converts(
    "aten.clone",
    "aten.alias",
    "aten.detach",
    "aten.lift_fresh_copy",
    "aten.contiguous",
    "aten._unsafe_view",
)
def identity(call: AtenCall) -> Value:
    x = call.args[0]
    if call.name == "aten._unsafe_view":
        return np.reshape(x, sizes(call.args[1]))
    return x


# ----- creation ----------------------------------------------------------------------


@converts("aten.full", "aten.new_full")
def full_(call: AtenCall) -> Value:
    shape, value = (call.args[1:3]) if call.name == "aten.new_full" else call.args[:2]
    return full(sizes(shape), value, call.dtype)


@converts("aten.zeros", "aten.ones", "aten.new_zeros", "aten.new_ones")
def zeros_or_ones(call: AtenCall) -> Value:
    shape = call.args[1] if call.name.startswith("aten.new_") else call.args[0]
    value = 1 if call.name.endswith("ones") else 0
    return full(sizes(shape), value, call.dtype)


@converts("aten.full_like", "aten.zeros_like", "aten.ones_like")
def full_like(call: AtenCall) -> Value:
    x = call.args[0]
    value = {"aten.zeros_like": 0, "aten.ones_like": 1}.get(call.name)
    if value is None:
        value = call.args[1]
    return full(sizes(x.shape), value, call.dtype)


@converts("aten.scalar_tensor")
def scalar_tensor(call: AtenCall) -> Value:
    value = call.args[0]
    if isinstance(value, SymDim) or is_array(value):  # a size, or one computed
        return full([], value, call.dtype)
    return np.asarray(value, call.dtype)


@converts("aten.arange")
def arange_(call: AtenCall) -> Value:
    bounds = [a for a in call.args if not isinstance(a, np.dtype)]
    if call.overload == "default":
        start, end, step = 0, bounds[0], 1
    else:
        start, end = bounds[:2]
        step = bounds[2] if len(bounds) > 2 else call.kwargs.get("step", 1)
    return arange(start, end, step, dtype=call.dtype)


# ----- layout -----------------------------------------------------------------------


@converts("aten.view", "aten.reshape")
def view(call: AtenCall) -> Value:
    return np.reshape(call.args[0], sizes(call.args[1]))


@converts("aten.permute")
def permute(call: AtenCall) -> Value:
    x, dims = call.args
    return np.transpose(x, axes_of(dims, x.ndim))


@converts("aten.t")
def t(call: AtenCall) -> Value:
    x = call.args[0]
    return x if x.ndim < 2 else np.transpose(x)


@converts("aten.transpose")
def transpose(call: AtenCall) -> Value:
    x, first, second = call.args
    return np.swapaxes(x, axis_of(first, x.ndim), axis_of(second, x.ndim))


@converts("aten.unsqueeze")
def unsqueeze(call: AtenCall) -> Value:
    x, dim = call.args
    return np.expand_dims(x, axis_of(dim, x.ndim + 1))


@converts("aten.squeeze")
def squeeze(call: AtenCall) -> Value:
    x = call.args[0]
    dims = call.args[1] if len(call.args) > 1 else None
    candidates = axes_of(dims, x.ndim)
    ones = tuple(a for a in candidates if x.shape[a] == 1)
    return np.squeeze(x, ones) if ones else x


@converts("aten.expand")
def expand(call: AtenCall) -> Value:
    x, shape = call.args[:2]
    target = sizes(shape)
    offset = len(target) - x.ndim
    target = [
        x.shape[i - offset] if isinstance(d, int) and d == -1 else d
        for i, d in enumerate(target)
    ]
    return broadcast_to(x, target)


@converts("aten.cat")
def cat(call: AtenCall) -> Value:
    # ATen skips empty 1-d tensors, whatever the others' shapes (legacy)
    tensors = [v for v in call.args[0] if not (v.ndim == 1 and v.shape[0] == 0)]
    dim = call.arg(1, "dim", 0)
    if not tensors:
        return cast(call.args[0][0], call.dtype)
    if len(tensors) == 1:
        return cast(tensors[0], call.dtype)
    rank = tensors[0].ndim
    return np.concatenate([cast(v, call.dtype) for v in tensors], axis_of(dim, rank))


@converts("aten.split_with_sizes", "aten.split")
def split(call: AtenCall) -> Value:
    x, parts = call.args[:2]
    dim = axis_of(call.arg(2, "dim", 0), x.ndim)
    if isinstance(parts, int):  # split.Tensor: chunks of one size
        extent = x.shape[dim]
        parts = [min(parts, extent - start) for start in range(0, extent, parts)]
    pieces, start = [], 0
    for size in parts:
        key = [slice(None)] * x.ndim
        key[dim] = slice(start, start + size)
        pieces.append(x[tuple(key)])
        start = start + size
    return pieces


@converts("aten.slice")
def slice_(call: AtenCall) -> Value:
    x = call.args[0]
    dim = axis_of(call.arg(1, "dim", 0), x.ndim)
    start = call.arg(2, "start", None)
    end = call.arg(3, "end", None)
    step = call.arg(4, "step", 1)
    extent = x.shape[dim]
    if isinstance(end, int) and isinstance(extent, int) and end > extent:
        end = extent
    if isinstance(end, int) and end >= 2**62:  # ATen's "to the end"
        end = None
    key = [slice(None)] * x.ndim
    key[dim] = slice(start, end, step)
    return x[tuple(key)]


@converts("aten.slice_scatter")
def slice_scatter(call: AtenCall) -> Value:
    """``x`` with ``x[..., start:end:step, ...] = source`` along ``dim``."""
    x, source = call.args[:2]
    dim = axis_of(call.arg(2, "dim", 0), x.ndim)
    start, end = call.arg(3, "start", None), call.arg(4, "end", None)
    if isinstance(end, int) and end >= 2**62:  # ATen's "to the end"
        end = None
    key = [slice(None)] * x.ndim
    key[dim] = slice(start, end, call.arg(5, "step", 1))
    result = np.copy(x)
    result[tuple(key)] = source
    return result


@converts("aten.constant_pad_nd")
def constant_pad_nd(call: AtenCall) -> Value:
    """Padding (ATen's pairs run from the last dim backwards); a negative
    pad crops."""
    x, pad = call.args[:2]
    value = call.arg(2, "value", 0)
    widths = [[0, 0] for _ in range(x.ndim)]
    for pair in range(len(pad) // 2):
        widths[x.ndim - 1 - pair] = [pad[2 * pair], pad[2 * pair + 1]]
    crop = [
        slice(-low if low < 0 else None, high if high < 0 else None)
        for low, high in widths
    ]
    x = x[tuple(crop)] if any(low < 0 or high < 0 for low, high in widths) else x
    widths = [[max(low, 0), max(high, 0)] for low, high in widths]
    if not any(low or high for low, high in widths):
        return x
    return np.pad(x, widths, constant_values=value)


@converts("aten.select")
def select(call: AtenCall) -> Value:
    x, dim, index = call.args
    key: list[Any] = [slice(None)] * x.ndim
    key[axis_of(dim, x.ndim)] = index
    return x[tuple(key)]


@converts("aten.index")
def index(call: AtenCall) -> Value:
    """Advanced indexing: one index tensor as NumPy takes it; several, on
    the leading dims, as one gather of the flattened leading dims."""
    x, indices = call.args
    if any(i is not None and np.dtype(i.dtype) == np.bool_ for i in indices):
        raise call.unsupported("a boolean mask (its result's size depends on data)")
    if sum(i is not None for i in indices) == 1:
        return x[tuple(slice(None) if i is None else i for i in indices)]
    if any(i is None for i in indices):
        raise call.unsupported("index tensors apart from the leading dims")
    table, rows = _leading_rows(x, indices)
    return np.take(table, rows, axis=0)


def _leading_rows(x: Value, indices: Sequence[Value]) -> tuple[Value, Value]:
    """``x`` with its leading ``len(indices)`` dims flattened into rows,
    and the rows the index tensors (broadcast together, negative ones
    wrapped) select."""
    rows: Value = 0
    for axis, i in enumerate(indices):
        extent = x.shape[axis]
        rows = rows * extent + np.where(np.less(i, 0), i + extent, i)
    leading = len(indices)
    table = np.reshape(x, [math.prod(x.shape[:leading]), *x.shape[leading:]])
    return table, rows


def _flat_offsets(x: Value, dim: int, indices: Value) -> Value:
    """The offsets into ``x`` flattened of the elements ``torch.gather``
    reads and ``torch.scatter`` writes: ``indices`` along ``dim``, the
    position in ``indices`` along the other dims."""
    flat: Value = 0
    for position in range(x.ndim):
        extent = x.shape[position]
        if position == dim:
            coordinate = np.where(np.less(indices, 0), indices + extent, indices)
        else:
            along = [1] * x.ndim
            along[position] = indices.shape[position]
            coordinate = np.reshape(arange(indices.shape[position]), along)
        flat = flat * extent + coordinate
    return broadcast_to(flat, indices.shape)


def _flattened(x: Value) -> Value:
    return np.reshape(x, [math.prod(x.shape)])


@converts("aten.gather")
def gather(call: AtenCall) -> Value:
    """``torch.gather``: element ``[..., i, ...]`` of the result is ``x``'s
    at ``index[..., i, ...]`` along ``dim``, as one gather of flat offsets."""
    x, dim, indices = call.args[:3]
    offsets = _flat_offsets(x, axis_of(dim, x.ndim), indices)
    return np.take(_flattened(x), offsets)


@converts("aten.scatter", "aten.scatter_add")
def scatter(call: AtenCall) -> Value:
    """``torch.scatter`` (of a tensor or a value, replacing or with
    ``reduce="add"``) and ``scatter_add``: the elements ``torch.gather``
    would read, written (or added) as rows of ``x`` flattened."""
    x, dim, indices, source = call.args[:4]
    reduce = call.arg(4, "reduce", None)
    if reduce not in (None, "add"):
        raise call.unsupported(f"reduce={reduce!r}")
    offsets = _flattened(_flat_offsets(x, axis_of(dim, x.ndim), indices))
    if is_array(source):
        if tuple(source.shape) != tuple(indices.shape):
            raise call.unsupported("a source larger than the index")
        updates = _flattened(cast(source, call.dtype))
    else:
        updates = full(sizes(offsets.shape), source, call.dtype)
    accumulate = call.name == "aten.scatter_add" or reduce == "add"
    result = nn.scatter_rows(
        _flattened(x), offsets, updates, "add" if accumulate else "none"
    )
    return np.reshape(result, sizes(x.shape))


@converts("aten.index_put")
def index_put(call: AtenCall) -> Value:
    """``x[indices] = values`` (or ``+=`` with ``accumulate``), for index
    tensors on the leading dims, as rows of ``x`` with those dims flattened."""
    x, indices, values = call.args[:3]
    accumulate = bool(call.arg(3, "accumulate", False))
    if any(i is None for i in indices):
        raise call.unsupported("index tensors apart from the leading dims")
    if any(np.dtype(i.dtype) == np.bool_ for i in indices):
        raise call.unsupported("a boolean mask")
    table, rows = _leading_rows(x, indices)
    rest = list(x.shape[len(indices) :])
    updates = broadcast_to(cast(values, call.dtype), [*rows.shape, *rest])
    result = nn.scatter_rows(table, rows, updates, "add" if accumulate else "none")
    return np.reshape(result, sizes(x.shape))


@converts("aten.embedding")
def embedding(call: AtenCall) -> Value:
    weight, indices = call.args[:2]
    if isinstance(weight, np.ndarray) and not isinstance(indices, np.ndarray):
        weight = layout.as_tensor(weight)  # np.take dispatches on the weight
    return np.take(weight, indices, axis=0)


# ----- reductions ---------------------------------------------------------------------


def _reduction(function: Callable[..., Value]) -> Converter:
    def convert(call: AtenCall) -> Value:
        x = call.args[0]
        # sum.default has no dim (every axis), amax.default has one
        dims = call.arg(1, "dim", None)
        keepdim = bool(call.arg(2, "keepdim", False))
        axes = axes_of(dims, x.ndim)
        operand = x
        if call.dtype != np.bool_ and np.dtype(x.dtype) != call.dtype:
            operand = cast(x, call.dtype)
        if not axes:
            return operand
        return function(operand, axis=axes, keepdims=keepdim)

    return convert


CONVERTERS["aten.sum"] = _reduction(np.sum)
CONVERTERS["aten.mean"] = _reduction(np.mean)
CONVERTERS["aten.amax"] = _reduction(np.max)
CONVERTERS["aten.amin"] = _reduction(np.min)
CONVERTERS["aten.prod"] = _reduction(np.prod)


@converts("aten.cumsum", "aten.cumprod")
def cumulative(call: AtenCall) -> Value:
    x, dim = call.args[:2]
    if x.ndim == 0:  # a scalar's running sum or product is itself
        return cast(x, call.dtype)
    function = np.cumsum if call.name == "aten.cumsum" else np.cumprod
    return function(cast(x, call.dtype), axis=axis_of(dim, x.ndim))


@converts("aten.any", "aten.all")
def any_or_all(call: AtenCall) -> Value:
    x = call.args[0]
    dims = call.arg(1, "dim", None)
    keepdim = bool(call.arg(2, "keepdim", False))
    # the maximum (any) or minimum (all) of the truth values as 0 and 1
    truth = np.not_equal(x, 0)
    axes = axes_of(dims, x.ndim)
    if not axes:
        return truth
    function = np.max if call.name == "aten.any" else np.min
    return np.not_equal(
        function(truth.astype(np.int32), axis=axes, keepdims=keepdim), 0
    )


@converts("aten.max", "aten.min")
def max_or_min(call: AtenCall) -> Value:
    x = call.args[0]
    if len(call.args) == 1:
        return (np.max if call.name == "aten.max" else np.min)(x)
    if is_array(call.args[1]):  # max.other: elementwise
        function = np.maximum if call.name == "aten.max" else np.minimum
        return function(x, call.args[1])
    dim = axis_of(call.args[1], x.ndim)
    keepdim = bool(call.arg(2, "keepdim", False))
    values = (np.max if call.name == "aten.max" else np.min)(
        x, axis=dim, keepdims=keepdim
    )
    found = (np.argmax if call.name == "aten.max" else np.argmin)(
        x, axis=dim, keepdims=keepdim
    )
    return values, found


@converts("aten.argmax", "aten.argmin")
def argmax(call: AtenCall) -> Value:
    x = call.args[0]
    dim = call.arg(1, "dim", None)
    keepdim = bool(call.arg(2, "keepdim", False))
    function = np.argmax if call.name == "aten.argmax" else np.argmin
    if dim is None or x.ndim == 0:
        return function(np.reshape(x, (-1,)))
    return function(x, axis=axis_of(dim, x.ndim), keepdims=keepdim)


# ----- contractions -----------------------------------------------------------------


@converts("aten.mm", "aten.bmm", "aten.matmul")
def matmul(call: AtenCall) -> Value:
    lhs, rhs = call.args
    return np.matmul(lhs, rhs)


@converts("aten.addmm")
def addmm(call: AtenCall) -> Value:
    bias, lhs, rhs = call.args[:3]
    beta, alpha = call.kwargs.get("beta", 1), call.kwargs.get("alpha", 1)
    product = np.matmul(lhs, rhs)
    if alpha != 1:
        product = product * alpha
    return product + (bias if beta == 1 else bias * beta)


# ----- normalizations ------------------------------------------------------------------


@converts("aten._softmax", "aten.softmax")
def softmax(call: AtenCall) -> Value:
    x, dim = call.args[:2]
    if x.ndim == 0:  # exp(x - x)
        return np.ones_like(cast(x, call.dtype))
    return cast(nn.softmax(cast(x, call.dtype), axis_of(dim, x.ndim)), call.dtype)


@converts("aten._log_softmax", "aten.log_softmax")
def log_softmax(call: AtenCall) -> Value:
    x, dim = call.args[:2]
    if x.ndim == 0:  # x - x
        return np.zeros_like(cast(x, call.dtype))
    return cast(nn.log_softmax(cast(x, call.dtype), axis_of(dim, x.ndim)), call.dtype)


@converts("aten._softmax_backward_data")
def softmax_backward(call: AtenCall) -> Value:
    gradient, y, dim = call.args[:3]
    axis = axis_of(dim, y.ndim)
    return gradient * y - y * np.sum(gradient * y, axis=axis, keepdims=True)


@converts("aten._log_softmax_backward_data")
def log_softmax_backward(call: AtenCall) -> Value:
    gradient, y, dim = call.args[:3]
    axis = axis_of(dim, y.ndim)
    return gradient - np.exp(y) * np.sum(gradient, axis=axis, keepdims=True)


@converts("aten.native_layer_norm")
def native_layer_norm(call: AtenCall) -> Value:
    x, shape, weight, bias, eps = call.args
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    stash = numpy_dtype(call.meta[1].dtype)
    return nn.layer_norm(x, axes, weight, bias, eps, stash)


@converts("aten.sym_size")
def sym_size(call: AtenCall) -> Value:
    x, dim = call.args
    return x.shape[axis_of(dim, x.ndim)]


def _per_channel(value: Value, rank: int) -> Value:
    """A per-channel ``[C]`` value shaped to broadcast along dim 1."""
    return np.reshape(value, [value.shape[0], *[1] * (rank - 2)])


@converts("aten._native_batch_norm_legit_functional")
def batch_norm_functional(call: AtenCall) -> Value:
    """Batch normalization in training: the batch's statistics, and the
    running ones updated functionally (AOTAutograd writes them back into
    the module's buffers, as eager's in-place update would). With
    ``training=False``, the running statistics, unchanged."""
    x, weight, bias, running_mean, running_var, training, momentum, eps = call.args
    if not training:
        y, empty, _ = _batch_norm_inference(
            call, x, weight, bias, running_mean, running_var, eps
        )
        return y, empty, empty, running_mean, running_var
    y, mean, inverse, variance = _batch_norm_training(x, weight, bias, eps)
    count = math.prod(x.shape[a] for a in range(x.ndim) if a != 1)
    unbiased = variance * count / (count - 1)
    return (
        y,
        mean,
        inverse,
        running_mean * (1 - momentum) + mean * momentum,
        running_var * (1 - momentum) + unbiased * momentum,
    )


@converts("aten._native_batch_norm_legit")
def batch_norm_without_running_statistics(call: AtenCall) -> Value:
    """Batch normalization with the batch's statistics and no running ones
    (``track_running_stats=False``, instance normalization): the ``no_stats``
    form. The other updates its running statistics in place, which
    AOTAutograd's graphs do functionally instead (the op above)."""
    if call.overload != "no_stats":
        raise call.unsupported("running statistics updated in place")
    x, weight, bias, training, _, eps = call.args[:6]
    if not training:
        raise call.unsupported("training=False and no running statistics")
    y, mean, inverse, _ = _batch_norm_training(x, weight, bias, eps)
    return y, mean, inverse


def _batch_norm_training(
    x: Value, weight: Value, bias: Value, eps: float
) -> tuple[Value, Value, Value, Value]:
    """``(y, mean, 1/std, variance)`` of ``x`` normalized per channel (dim
    1) over the batch and the other axes, the variance biased."""
    axes = tuple(a for a in range(x.ndim) if a != 1)
    mean = np.mean(x, axis=axes)
    centered = x - _per_channel(mean, x.ndim)
    variance = np.mean(centered * centered, axis=axes)
    inverse = 1 / np.sqrt(variance + eps)
    y = _normalized(centered * _per_channel(inverse, x.ndim), weight, bias)
    return y, mean, inverse, variance


@converts("aten._native_batch_norm_legit_no_training")
def batch_norm_inference(call: AtenCall) -> Value:
    """Batch normalization with the running statistics (``model.eval()``)."""
    x, weight, bias, running_mean, running_var = call.args[:5]
    eps = call.arg(6, "eps", 1e-5)
    return _batch_norm_inference(call, x, weight, bias, running_mean, running_var, eps)


def _batch_norm_inference(
    call: AtenCall,
    x: Value,
    weight: Value,
    bias: Value,
    running_mean: Value,
    running_var: Value,
    eps: float,
) -> tuple[Value, Value, Value]:
    inverse = 1 / np.sqrt(running_var + eps)
    centered = x - _per_channel(running_mean, x.ndim)
    y = _normalized(centered * _per_channel(inverse, x.ndim), weight, bias)
    empty = full([0], 0, numpy_dtype(call.meta[1].dtype))
    return y, empty, empty


@converts("aten.native_group_norm")
def native_group_norm(call: AtenCall) -> Value:
    """Group normalization: ``(y, mean, 1/std)``, the statistics ``[N,
    groups]`` over each group of channels and the spatial axes."""
    x, weight, bias = call.args[:3]
    groups, eps = call.args[6:8]
    batch = x.shape[0]
    per_group = (x.shape[1] // groups) * math.prod(x.shape[2:])
    grouped = np.reshape(x, sizes([batch, groups, per_group]))
    stash = numpy_dtype(call.meta[1].dtype)
    y, mean, inverse = nn.layer_norm(grouped, (2,), None, None, eps, stash)
    y = _normalized(np.reshape(y, sizes(x.shape)), weight, bias)
    statistics = sizes([batch, groups])
    return (
        cast(y, call.dtype),
        np.reshape(mean, statistics),
        np.reshape(inverse, statistics),
    )


def _normalized(y: Value, weight: Value, bias: Value) -> Value:
    if weight is not None:
        y = y * _per_channel(weight, y.ndim)
    if bias is not None:
        y = y + _per_channel(bias, y.ndim)
    return y


# ----- convolution and pooling -----------------------------------------------------
#
# The math is ``irc.nn``'s (``nn.conv``, its gradients, ``nn.max_pool_with_indices``,
# ``nn.avg_pool``, their backwards); these converters decode ATen's arguments.
# The gradients are closed forms over the forward's windows: ``irc.vjp`` of the
# forward would give the same, but it differentiates functions of arrays whose
# dims are plain symbols, and a backward graph's saved activations have sizes
# such as ``(x_dim2 + 1) // 2``.


def _per_axis(call: AtenCall, name: str, values: Any, spatial: int) -> list[int]:
    """An ATen per-axis list as ints: one value stands for every axis."""
    items = list(values) if isinstance(values, list | tuple) else [values]
    if len(items) == 1:
        items = items * spatial
    if len(items) != spatial or not all(isinstance(v, int | np.integer) for v in items):
        raise call.unsupported(f"{name}={values!r} for {spatial} spatial axes")
    return [int(v) for v in items]


def _conv_options(call: AtenCall, first: int, spatial: int) -> dict[str, Any]:
    """``stride, padding, dilation, transposed, output_padding, groups``
    (arguments ``first`` on) as ``nn.conv`` and its kin take them, and
    ``transposed``."""
    stride, padding, dilation, transposed, output_padding, groups = call.args[
        first : first + 6
    ]
    if not isinstance(groups, int | np.integer):
        raise call.unsupported(f"groups={groups!r}")
    options = {
        "strides": _per_axis(call, "stride", stride, spatial),
        "padding": _per_axis(call, "padding", padding, spatial),
        "dilations": _per_axis(call, "dilation", dilation, spatial),
        "groups": int(groups),
        "transposed": bool(transposed),
    }
    if transposed:
        options["output_padding"] = _per_axis(
            call, "output_padding", output_padding, spatial
        )
    return options


@converts("aten.convolution")
def convolution(call: AtenCall) -> Value:
    """Convolution (``nn.conv``) or its transpose (``nn.conv_transpose``)
    over 1 to 3 spatial axes: strided, padded, dilated, grouped."""
    x, weight, bias = call.args[:3]
    options = _conv_options(call, 3, weight.ndim - 2)
    if options.pop("transposed"):
        return cast(nn.conv_transpose(x, weight, bias, **options), call.dtype)
    return cast(nn.conv(x, weight, bias, **options), call.dtype)


@converts("aten.convolution_backward")
def convolution_backward(call: AtenCall) -> Value:
    """The gradients of a convolution (or its transpose) with respect to
    its input, weight and bias, those ``output_mask`` asks for (None for
    the others): the bias's is the output's gradient summed over every axis
    but the channels."""
    gradient, x, weight = call.args[:3]
    if x.ndim != weight.ndim:
        raise call.unsupported("an unbatched input")
    options = _conv_options(call, 4, weight.ndim - 2)
    wanted = list(call.arg(10, "output_mask", [True, True, True]))
    kernel, in_sizes = weight.shape[2:], x.shape[2:]
    if options.pop("transposed"):
        input_gradient = nn.conv_transpose_input_gradient
        output_padding = {"output_padding": options.pop("output_padding")}
        weight_gradient = nn.conv_transpose_weight_gradient
    else:
        input_gradient, output_padding = nn.conv_input_gradient, {}
        weight_gradient = nn.conv_weight_gradient
    gradients = [
        input_gradient(gradient, weight, in_sizes, **options, **output_padding)
        if wanted[0]
        else None,
        weight_gradient(gradient, x, kernel, **options) if wanted[1] else None,
        np.sum(gradient, axis=(0, *range(2, gradient.ndim))) if wanted[2] else None,
    ]
    return tuple(
        None if g is None else cast(g, numpy_dtype(meta.dtype))
        for g, meta in zip(gradients, call.meta)
    )


#: The spatial rank of each pooling op.
_POOL_RANK = {
    "aten.max_pool1d_with_indices": 1,
    "aten.max_pool2d_with_indices": 2,
    "aten.max_pool3d_with_indices": 3,
    "aten.max_pool2d_with_indices_backward": 2,
    "aten.max_pool3d_with_indices_backward": 3,
    "aten.avg_pool1d": 1,
    "aten.avg_pool2d": 2,
    "aten.avg_pool3d": 3,
    "aten.avg_pool2d_backward": 2,
    "aten.avg_pool3d_backward": 3,
}


def _pool_options(
    call: AtenCall, kernel: Any, stride: Any, padding: Any, ceil_mode: Any
) -> dict[str, Any]:
    """ATen's ``kernel_size, stride, padding, ceil_mode`` as ``irc.nn``'s
    pooling takes them (an empty ``stride``: the kernel's)."""
    spatial = _POOL_RANK[call.name]
    kernel = _per_axis(call, "kernel_size", kernel, spatial)
    return {
        "kernel": kernel,
        "strides": _per_axis(call, "stride", stride, spatial) if stride else kernel,
        "padding": _per_axis(call, "padding", padding, spatial),
        "ceil_mode": bool(ceil_mode),
    }


def _pooled(call: AtenCall, pool: Callable[..., Value], *args: Any, **options: Any):
    """``pool(*args, **options)``, a pooling irc refuses (ceil_mode on a
    symbolic size whose last window may start in the padding) refused as
    this op."""
    try:
        return pool(*args, **options)
    except IrcError as error:
        raise call.unsupported(str(error)) from error


@converts(
    "aten.max_pool1d_with_indices",
    "aten.max_pool2d_with_indices",
    "aten.max_pool3d_with_indices",
)
def max_pool_with_indices(call: AtenCall) -> Value:
    """The maximum of each window and the indices of the maxima, as torch
    defines them (``nn.max_pool_with_indices``)."""
    x, kernel = call.args[:2]
    options = _pool_options(
        call, kernel, call.arg(2, "stride", []), call.arg(3, "padding", 0),
        call.arg(5, "ceil_mode", False),
    )  # fmt: skip
    spatial = len(options["kernel"])
    dilations = _per_axis(call, "dilation", call.arg(4, "dilation", 1), spatial)
    values, indices = _pooled(
        call, nn.max_pool_with_indices, x, dilations=dilations, **options
    )
    return cast(values, call.dtype), cast(indices, numpy_dtype(call.meta[1].dtype))


@converts(
    "aten.max_pool2d_with_indices_backward", "aten.max_pool3d_with_indices_backward"
)
def max_pool_with_indices_backward(call: AtenCall) -> Value:
    """Each output's gradient added to the input element its index names
    (``nn.max_pool_backward``)."""
    gradient, x, kernel, stride, padding, dilation, ceil_mode, indices = call.args[:8]
    options = _pool_options(call, kernel, stride, padding, ceil_mode)
    spatial = len(options["kernel"])
    dilations = _per_axis(call, "dilation", dilation, spatial)
    result = _pooled(
        call, nn.max_pool_backward, gradient, indices, x.shape[-spatial:],
        dilations=dilations, **options,
    )  # fmt: skip
    return cast(result, call.dtype)


def _avg_options(call: AtenCall, first: int) -> dict[str, Any]:
    """The options of an average pooling whose ``kernel_size`` is argument
    ``first``."""
    options = _pool_options(
        call, call.args[first], call.arg(first + 1, "stride", []),
        call.arg(first + 2, "padding", 0), call.arg(first + 3, "ceil_mode", False),
    )  # fmt: skip
    options["count_include_pad"] = bool(call.arg(first + 4, "count_include_pad", True))
    options["divisor_override"] = call.arg(first + 5, "divisor_override", None)
    return options


@converts("aten.avg_pool1d", "aten.avg_pool2d", "aten.avg_pool3d")
def avg_pool(call: AtenCall) -> Value:
    """The sum of each window over torch's divisor (``nn.avg_pool``)."""
    x = cast(call.args[0], call.dtype)
    return cast(_pooled(call, nn.avg_pool, x, **_avg_options(call, 1)), call.dtype)


@converts("aten.avg_pool2d_backward", "aten.avg_pool3d_backward")
def avg_pool_backward(call: AtenCall) -> Value:
    """Each output's gradient over its divisor, added to every element of
    its window (``nn.avg_pool_backward``)."""
    gradient, x = call.args[:2]
    options = _avg_options(call, 2)
    spatial = len(options["kernel"])
    gradient = cast(gradient, call.dtype)
    result = _pooled(
        call, nn.avg_pool_backward, gradient, x.shape[-spatial:], **options
    )
    return cast(result, call.dtype)


def _adaptive_windows(
    call: AtenCall, in_sizes: Sequence[Any], out_sizes: Sequence[Any]
) -> list[Any]:
    """How many input elements each output of an adaptive average pooling
    takes, per axis: the whole axis for an output size of 1, else the
    factor by which the output size divides the input's; other sizes
    (windows that overlap, of varying sizes) are refused."""
    factors = []
    for size, out in zip(in_sizes, out_sizes):
        if isinstance(out, int) and out == 1:
            factors.append(size)
            continue
        try:
            factor, remainder = size // out, size % out
        except TypeError:
            factor = remainder = None
        if not (isinstance(factor, int) and isinstance(remainder, int)) or remainder:
            raise call.unsupported(
                f"an output size of {out} that does not divide the input size "
                f"{size} (or may not: a symbolic size), whose windows overlap and "
                "differ in size; irc takes output sizes that divide the input's, "
                "and 1"
            )
        factors.append(factor)
    return factors


@converts("aten._adaptive_avg_pool2d", "aten._adaptive_avg_pool3d")
def adaptive_avg_pool(call: AtenCall) -> Value:
    """The mean of each of equal windows that tile the input: its last axes
    split into (output, window) pairs."""
    x, output_size = call.args[:2]
    out_sizes = sizes(output_size)
    spatial = len(out_sizes)
    lead = sizes(x.shape[:-spatial])
    factors = _adaptive_windows(call, x.shape[-spatial:], out_sizes)
    split = [d for pair in zip(out_sizes, factors) for d in pair]
    axes = tuple(len(lead) + 2 * a + 1 for a in range(spatial))
    pooled = np.mean(np.reshape(cast(x, call.dtype), [*lead, *split]), axis=axes)
    return cast(pooled, call.dtype)


@converts("aten._adaptive_avg_pool2d_backward", "aten._adaptive_avg_pool3d_backward")
def adaptive_avg_pool_backward(call: AtenCall) -> Value:
    """Each output's gradient, over its window's size, spread over the
    window."""
    gradient, x = call.args[:2]
    spatial = 2 if call.name == "aten._adaptive_avg_pool2d_backward" else 3
    out_sizes = sizes(gradient.shape[-spatial:])
    lead = sizes(x.shape[:-spatial])
    factors = _adaptive_windows(call, x.shape[-spatial:], out_sizes)
    ones = [d for out in out_sizes for d in (out, 1)]
    split = [d for pair in zip(out_sizes, factors) for d in pair]
    spread = broadcast_to(np.reshape(gradient, [*lead, *ones]), [*lead, *split])
    count = functools.reduce(operator.mul, factors, 1)
    if not isinstance(count, int):  # a symbolic size: a scalar of the dtype
        count = full([], count, call.dtype)
    return cast(np.reshape(spread, sizes(x.shape)) / count, call.dtype)


# ----- attention ----------------------------------------------------------------------


def _attention_scores(call: AtenCall, query: Value, key: Value, first: int) -> Value:
    """``q @ k^T * scale``, masked as ``attn_mask`` and ``is_causal`` say
    (a boolean mask keeps where True; a float one is added); ``first`` is
    the position of ``dropout_p`` among the arguments (``is_causal``
    follows)."""
    if call.arg(first, "dropout_p", 0.0):
        raise call.unsupported("dropout (irc computes attention deterministically)")
    scores = np.matmul(query, np.swapaxes(key, -1, -2)) * _attention_scale(call, query)
    if call.arg(first + 1, "is_causal", False):
        rows = np.reshape(arange(query.shape[-2]), [query.shape[-2], 1])
        columns = np.reshape(arange(key.shape[-2]), [1, key.shape[-2]])
        scores = np.where(np.less_equal(columns, rows), scores, -np.inf)
    mask = call.kwargs.get("attn_mask")
    if mask is not None:
        if np.dtype(mask.dtype) == np.bool_:
            scores = np.where(mask, scores, -np.inf)
        else:
            scores = scores + mask
    return scores


def _attention_scale(call: AtenCall, query: Value) -> float:
    scale = call.kwargs.get("scale")
    return 1 / math.sqrt(query.shape[-1]) if scale is None else scale


@converts("aten._scaled_dot_product_flash_attention_for_cpu")
def flash_attention(call: AtenCall) -> Value:
    """Attention and the log-sum-exp of each row's scores (what its
    backward reads): ``softmax(q k^T * scale) v``, the form fusion makes
    one flash-attention kernel."""
    query, key, value = call.args[:3]
    key, value = _shared_heads(query, key), _shared_heads(query, value)
    scores = _attention_scores(call, query, key, first=3)
    top = np.max(scores, axis=-1, keepdims=True)
    total = np.sum(np.exp(scores - top), axis=-1, keepdims=True)
    log_sum_exp = np.squeeze(top + np.log(total), -1)
    output = np.matmul(nn.softmax(scores, -1), value)
    return cast(output, call.dtype), cast(log_sum_exp, numpy_dtype(call.meta[1].dtype))


@converts("aten._scaled_dot_product_flash_attention_for_cpu_backward")
def flash_attention_backward(call: AtenCall) -> Value:
    """The gradients of attention from the forward's output and log-sum-exp:
    ``p = exp(s - lse)``, ``dv = p^T do``, ``ds = p * (do v^T - rowsum(do *
    o))``, ``dq = ds k * scale``, ``dk = ds^T q * scale``."""
    gradient, query, key, value, output, log_sum_exp = call.args[:6]
    heads = key.shape[-3]
    key, value = _shared_heads(query, key), _shared_heads(query, value)
    scale = _attention_scale(call, query)
    scores = _attention_scores(call, query, key, first=6)
    probabilities = np.exp(scores - np.expand_dims(log_sum_exp, -1))
    grad_value = np.matmul(np.swapaxes(probabilities, -1, -2), gradient)
    grad_probabilities = np.matmul(gradient, np.swapaxes(value, -1, -2))
    row = np.sum(gradient * output, axis=-1, keepdims=True)
    grad_scores = probabilities * (grad_probabilities - row)
    grad_query = np.matmul(grad_scores, key) * scale
    grad_key = np.matmul(np.swapaxes(grad_scores, -1, -2), query) * scale
    return (
        grad_query,
        _per_shared_head(grad_key, heads),
        _per_shared_head(grad_value, heads),
    )


def _shared_heads(query: Value, key: Value) -> Value:
    """Grouped-query attention: each of ``key``'s heads serves
    ``query``'s heads in a group of consecutive ones (``enable_gqa``)."""
    if key.shape[-3] == query.shape[-3]:
        return key
    return np.repeat(key, query.shape[-3] // key.shape[-3], axis=-3)


def _per_shared_head(gradient: Value, heads: int) -> Value:
    """The gradient of a shared head: the sum over its group's."""
    if gradient.shape[-3] == heads:
        return gradient
    *batch, total, rows, columns = gradient.shape
    grouped = np.reshape(gradient, [*batch, heads, total // heads, rows, columns])
    return np.sum(grouped, axis=-3)


# ----- symbolic integers ---------------------------------------------------------------

#: Python functions on sizes in a dynamic graph (``s0 * 2``), as FX records them.
SYMBOLIC: dict[Callable[..., Any], Callable[..., Any]] = {
    operator.add: operator.add,
    operator.sub: operator.sub,
    operator.mul: operator.mul,
    operator.floordiv: operator.floordiv,
    operator.truediv: operator.truediv,
    operator.mod: operator.mod,
    operator.neg: operator.neg,
    operator.getitem: operator.getitem,
}
