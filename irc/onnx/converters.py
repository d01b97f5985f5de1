"""One converter per ONNX operator family: each evaluates a node with NumPy
operations, which run eagerly on NumPy arrays and are captured as graph ops
on traced arrays. ONNX's typing holds (its operators take equal input types,
so NumPy's promotion never applies); values known at import time (constants,
``ShapeValue``s) are folded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from irc import nn
from irc.capture import layout
from irc.capture.intercept import CREATION
from irc.capture.tensor import SymDim, dim_proxy
from irc.capture.trace import active_trace
from irc.errors import IrcError, TracingError
from irc.onnx import resize as resize_op
from irc.onnx.shape_values import (
    ShapeValue,
    dims_list,
    is_symbolic,
    known_sizes,
    materialize,
    shape_value,
)
from irc.primitives.declaration import Primitive, on_declare
from irc.shapes import SymExpr, as_expr, smax, smin

Value = Any


def traced_or_numpy(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """NumPy's creation function ``name``, taking symbolic sizes while a
    graph is captured (capture intercepts them for user code only, and this
    module is irc's), NumPy's own in an eager call of an ``OnnxFunction``."""
    traced = CREATION[name](original)

    def call(*args: Any, **kwargs: Any) -> Any:
        function = traced if active_trace() is not None else original
        return function(*args, **kwargs)

    return call


full = traced_or_numpy("full", np.full)
arange = traced_or_numpy("arange", np.arange)
broadcast_to = traced_or_numpy("broadcast_to", np.broadcast_to)
Converter = Callable[["Node", list[Value]], list[Value]]


class UnsupportedOnnxOp(IrcError):
    """An ONNX operator, or a form of one, that irc's graph level cannot express."""


@dataclass
class Node:
    """An ONNX node with its attributes decoded, and where it is in the graph."""

    proto: Any
    index: int
    opset: int

    @cached_property
    def attributes(self) -> dict[str, Any]:
        from onnx import helper

        return {a.name: helper.get_attribute_value(a) for a in self.proto.attribute}

    def attr(self, name: str, default: Any = None) -> Any:
        value = self.attributes.get(name, default)
        return value.decode() if isinstance(value, bytes) else value

    @property
    def where(self) -> str:
        return f"node {self.index} {self.proto.name!r} ({self.proto.op_type})"


CONVERTERS: dict[str, Converter] = {}

#: Operand positions whose value must be known at import time, per operator.
STATIC_OPERANDS: dict[str, tuple[int, ...]] = {}


def converts(
    *op_types: str, static: tuple[int, ...] = ()
) -> Callable[[Converter], Converter]:
    def register(converter: Converter) -> Converter:
        for op_type in op_types:
            CONVERTERS[op_type] = converter
            if static:
                STATIC_OPERANDS[op_type] = static
        return converter

    return register


def unsupported(node: Node, form: str, fix: str = "") -> UnsupportedOnnxOp:
    return UnsupportedOnnxOp(
        f"{node.proto.op_type} with {form} is not supported by irc"
        + (f"; {fix}" if fix else "")
    )


# ----- values known at import time -----------------------------------------


def tensor(value: Value) -> Value:
    """An operand as an array (a ``ShapeValue`` becomes a traced tensor)."""
    return materialize(value) if isinstance(value, ShapeValue) else value


def known_ints(node: Node, value: Value, what: str) -> list[int | SymDim]:
    """The elements of an operand that must be known: a constant or sizes."""
    sizes = known_sizes(value)
    if sizes is None:
        raise TracingError(
            f"{node.proto.op_type} needs the value of its {what} known at compile "
            "time; here it is computed from the data at run time: make it a "
            "constant, compute it from input shapes, or bind the graph input "
            "that holds it with irc.onnx.load(model, constants={name: array})"
        )
    return dims_list(sizes.ravel().tolist())


def static_ints(node: Node, value: Value, what: str) -> list[int]:
    sizes = known_ints(node, value, what)
    if any(isinstance(s, SymDim) for s in sizes):
        raise TracingError(
            f"{node.proto.op_type} needs its {what} constant, not symbolic sizes"
        )
    return [int(s) for s in sizes]


def known_scalar(value: Value) -> Any:
    """A 0-d or 1-element constant (a NumPy scalar too, as eager calls
    make) as a Python number, else the value itself."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray) and value.size == 1:
        return value.reshape(()).item()
    if isinstance(value, ShapeValue) and value.elements.size == 1:
        return value.elements.ravel()[0]
    return value


def shape_of(value: Value) -> list[int | SymDim]:
    return list(value.shape)


def rank_of(value: Value) -> int:
    return len(value.shape)


def axes_operand(node: Node, operands: list[Value], position: int) -> list[int] | None:
    """Axes given as an attribute (older opsets) or as an optional input."""
    if "axes" in node.attributes:
        return list(node.attr("axes"))
    if position < len(operands) and operands[position] is not None:
        return static_ints(node, operands[position], "axes")
    return None


def normalize(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def numpy_dtype(onnx_type: int) -> np.dtype:
    from onnx import helper

    return np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type))


# ----- elementwise -----------------------------------------------------------

#: Elementwise operators that are no primitive's (a primitive declares the
#: ONNX op types it imports as: ``OnnxForm.imports``).
UNARY: dict[str, Callable[[Value], Value]] = {
    "Reciprocal": np.reciprocal,
    "Not": np.logical_not,
    "IsNaN": np.isnan,
    "Sign": np.sign,
    "Identity": lambda x: x,
    "Relu": nn.relu,
    "Softsign": nn.softsign,
    "Softplus": nn.softplus,
}

BINARY: dict[str, Callable[[Value, Value], Value]] = {
    "And": np.logical_and,
    "Or": np.logical_or,
    "Xor": np.logical_xor,
    "Equal": np.equal,
    "Less": np.less,
    "Greater": np.greater,
    "LessOrEqual": np.less_equal,
    "GreaterOrEqual": np.greater_equal,
}

#: The primitive each ONNX op type imports as, from the declarations.
PRIMITIVE_IMPORTS: dict[str, Primitive] = {}


def _size_extremum(combine: Callable[..., SymExpr]) -> Callable[[Any, Any], Any]:
    def extremum(a: Any, b: Any) -> Any:
        return dim_proxy(combine(as_expr(_expr(a)), as_expr(_expr(b))))

    return extremum


def _expr(size: Any) -> Any:
    return size.expr if isinstance(size, SymDim) else int(size)


#: Binary operators that fold over sizes (``Shape`` arithmetic). Sizes are
#: not negative, so ONNX's truncating Div is Python's floor division.
SIZE_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "Add": lambda a, b: a + b,
    "Sub": lambda a, b: a - b,
    "Mul": lambda a, b: a * b,
    "Div": lambda a, b: a // b,
    "Mod": lambda a, b: a % b,
    "Max": _size_extremum(smax),
    "Min": _size_extremum(smin),
    "Equal": lambda a, b: int(a == b),
}


def _elementwise(op_type: str) -> Callable[..., Value]:
    return UNARY.get(op_type) or BINARY.get(op_type) or PRIMITIVE_IMPORTS[op_type]


@converts(*UNARY)
def unary(node: Node, operands: list[Value]) -> list[Value]:
    value = operands[0]
    function = _elementwise(node.proto.op_type)
    if node.proto.op_type in ("Neg", "Identity") and is_symbolic(value):
        return [shape_value(function(value.elements))]
    return [function(tensor(value))]


@converts(*BINARY)
def binary(node: Node, operands: list[Value]) -> list[Value]:
    lhs, rhs = operands
    op_type = node.proto.op_type
    if op_type in SIZE_ARITHMETIC and (is_symbolic(lhs) or is_symbolic(rhs)):
        folded = _fold_sizes(op_type, lhs, rhs)
        if folded is not None:
            return [folded]
    return [_elementwise(op_type)(tensor(lhs), tensor(rhs))]


def _import_as(kind: Primitive) -> None:
    """Convert the ONNX op types ``kind`` declares into it."""
    for op_type in kind.onnx.imports:
        PRIMITIVE_IMPORTS[op_type] = kind
        CONVERTERS[op_type] = unary if kind.arity == 1 else binary


on_declare(_import_as)


def _fold_sizes(op_type: str, lhs: Value, rhs: Value) -> Value | None:
    a, b = known_sizes(lhs), known_sizes(rhs)
    if a is None or b is None:
        return None
    a, b = np.broadcast_arrays(a, b)
    combine = SIZE_ARITHMETIC[op_type]
    try:
        result = [combine(x, y) for x, y in zip(a.ravel(), b.ravel())]
    except TracingError:  # a comparison of sizes undecided at trace time
        return None
    folded = shape_value(np.array(result, dtype=object).reshape(a.shape))
    return folded.astype(np.bool_) if op_type == "Equal" else folded


@converts("Div")
def divide(node: Node, operands: list[Value]) -> list[Value]:
    lhs, rhs = operands
    if is_symbolic(lhs) or is_symbolic(rhs):
        folded = _fold_sizes("Div", lhs, rhs)
        if folded is not None:
            return [folded]
    lhs, rhs = tensor(lhs), tensor(rhs)
    if np.dtype(lhs.dtype).kind != "i":
        return [np.divide(lhs, rhs)]
    return [_truncating_divide(lhs, rhs)]


def _truncating_divide(lhs: Value, rhs: Value) -> Value:
    """ONNX's integer division, which truncates toward zero (NumPy floors)."""
    floored = np.floor_divide(lhs, rhs)
    inexact = np.not_equal(np.remainder(lhs, rhs), 0)
    signs_differ = np.not_equal(np.less(lhs, 0), np.less(rhs, 0))
    return np.where(np.logical_and(inexact, signs_differ), floored + 1, floored)


@converts("Mod")
def modulo(node: Node, operands: list[Value]) -> list[Value]:
    if any(is_symbolic(o) for o in operands) and not node.attr("fmod", 0):
        folded = _fold_sizes("Mod", *operands)
        if folded is not None:
            return [folded]
    lhs, rhs = (tensor(o) for o in operands)
    if node.attr("fmod", 0):
        if np.dtype(lhs.dtype).kind == "f":
            return [lhs - rhs * _truncate(lhs / rhs)]
        return [lhs - rhs * _truncating_divide(lhs, rhs)]
    return [np.remainder(lhs, rhs)]


def _truncate(value: Value) -> Value:
    return np.where(np.less(value, 0), -np.floor(-value), np.floor(value))


@converts("Pow")
def power(node: Node, operands: list[Value]) -> list[Value]:
    base, exponent = (tensor(o) for o in operands)
    return [np.power(base, exponent.astype(base.dtype))]


@converts("Max", "Min", "Sum", "Mean")
def variadic(node: Node, operands: list[Value]) -> list[Value]:
    op_type = node.proto.op_type
    if op_type in ("Max", "Min", "Sum") and any(is_symbolic(o) for o in operands):
        folded = operands[0]
        for operand in operands[1:]:
            folded = _fold_sizes(
                "Add" if op_type == "Sum" else op_type, folded, operand
            )
            if folded is None:
                break
        else:
            return [folded]
    combine = {"Max": np.maximum, "Min": np.minimum}.get(op_type, np.add)
    values = [tensor(o) for o in operands]
    result = values[0]
    for value in values[1:]:
        result = combine(result, value)
    if op_type == "Mean":
        result = result / len(values)
    return [result]


@converts("IsInf")
def is_inf(node: Node, operands: list[Value]) -> list[Value]:
    """Infinities of the signs ``detect_negative`` and ``detect_positive``
    ask for (both by default)."""
    x = tensor(operands[0])
    negative = bool(node.attr("detect_negative", 1))
    positive = bool(node.attr("detect_positive", 1))
    if negative and positive:
        return [np.isinf(x)]
    if positive:
        return [np.equal(x, np.inf)]
    if negative:
        return [np.equal(x, -np.inf)]
    return [np.zeros_like(x, dtype=np.bool_)]


@converts("Where")
def where(node: Node, operands: list[Value]) -> list[Value]:
    condition, on_true, on_false = operands
    if is_symbolic(on_true) or is_symbolic(on_false):
        # Exporters choose between sizes (``Where(Equal(shape, -1), ...)``).
        chosen = _choose_sizes(condition, on_true, on_false)
        if chosen is not None:
            return [chosen]
    return [np.where(tensor(condition), tensor(on_true), tensor(on_false))]


def _choose_sizes(condition: Value, on_true: Value, on_false: Value) -> Value | None:
    sizes_true, sizes_false = known_sizes(on_true), known_sizes(on_false)
    if (
        not isinstance(condition, np.ndarray)
        or sizes_true is None
        or sizes_false is None
    ):
        return None
    return shape_value(np.where(condition, sizes_true, sizes_false))


@converts("Cast", "CastLike")
def cast(node: Node, operands: list[Value]) -> list[Value]:
    value = operands[0]
    if node.proto.op_type == "CastLike":
        target = np.dtype(operands[1].dtype)
    else:
        target = numpy_dtype(node.attr("to"))
    if target == np.int64 and is_symbolic(value):
        return [value]  # sizes stay sizes
    return [tensor(value).astype(target)]


# ----- activations and clips ---------------------------------------------------


@converts("LeakyRelu", "Elu", "Selu", "Celu", "ThresholdedRelu", "HardSigmoid")
def activation(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    op_type = node.proto.op_type
    if op_type == "LeakyRelu":
        return [nn.leaky_relu(x, node.attr("alpha", 0.01))]
    if op_type == "Elu":
        return [nn.elu(x, node.attr("alpha", 1.0))]
    if op_type == "Celu":
        return [nn.celu(x, node.attr("alpha", 1.0))]
    if op_type == "Selu":
        alpha = node.attr("alpha", nn.SELU_ALPHA)
        return [nn.selu(x, alpha, node.attr("gamma", nn.SELU_SCALE))]
    if op_type == "ThresholdedRelu":
        return [nn.thresholded_relu(x, node.attr("alpha", 1.0))]
    return [nn.hard_sigmoid(x, node.attr("alpha", 0.2), node.attr("beta", 0.5))]


@converts("HardSwish")
def hard_swish(node: Node, operands: list[Value]) -> list[Value]:
    return [nn.hard_swish(tensor(operands[0]))]


@converts("Mish")
def mish(node: Node, operands: list[Value]) -> list[Value]:
    return [nn.mish(tensor(operands[0]))]


@converts("PRelu")
def prelu(node: Node, operands: list[Value]) -> list[Value]:
    x, slope = (tensor(o) for o in operands)
    return [np.where(np.less(x, 0), x * slope, x)]


@converts("Gelu")
def gelu(node: Node, operands: list[Value]) -> list[Value]:
    return [nn.gelu(tensor(operands[0]), node.attr("approximate", "none"))]


@converts("Clip")
def clip(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    if node.opset < 11:
        low, high = node.attr("min"), node.attr("max")
    else:
        low = operands[1] if len(operands) > 1 else None
        high = operands[2] if len(operands) > 2 else None
    if low is not None:
        x = np.maximum(x, _like(low, x))
    if high is not None:
        x = np.minimum(x, _like(high, x))
    return [x]


def _like(bound: Value, x: Value) -> Value:
    """A bound of ``x``'s type: a constant as a weak Python number."""
    scalar = known_scalar(bound)
    if isinstance(scalar, int | float):
        return np.asarray(scalar, np.dtype(x.dtype))
    return tensor(bound)


# ----- contractions ------------------------------------------------------------


@converts("MatMul")
def matmul(node: Node, operands: list[Value]) -> list[Value]:
    lhs, rhs = (tensor(o) for o in operands)
    product = np.matmul(lhs, rhs)
    # ONNX keeps the type (ml_dtypes multiplies NumPy bfloat16 into float32).
    return [product if product.dtype == lhs.dtype else product.astype(lhs.dtype)]


@converts("Gemm")
def gemm(node: Node, operands: list[Value]) -> list[Value]:
    a, b = tensor(operands[0]), tensor(operands[1])
    if node.attr("transA", 0):
        a = np.transpose(a)
    if node.attr("transB", 0):
        b = np.transpose(b)
    product = np.matmul(a, b)
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if alpha != 1.0:
        product = product * alpha
    if len(operands) > 2 and operands[2] is not None:
        bias = tensor(operands[2])
        product = product + (bias * beta if beta != 1.0 else bias)
    return [product]


@converts("Einsum")
def einsum(node: Node, operands: list[Value]) -> list[Value]:
    return [np.einsum(node.attr("equation"), *(tensor(o) for o in operands))]


# ----- convolution and pooling ---------------------------------------------------

#: ONNX's ``auto_pad`` modes other than NOTSET, as ``irc.nn`` paddings.
AUTO_PADS = {"SAME_UPPER": "same_upper", "SAME_LOWER": "same_lower", "VALID": "valid"}


def _per_axis(node: Node, name: str, spatial: int, default: int) -> list[int]:
    """An attribute with one int per spatial axis (``strides``, ...)."""
    values = list(node.attr(name, [default] * spatial))
    if len(values) != spatial:
        raise UnsupportedOnnxOp(
            f"{node.proto.op_type}: {name} has {len(values)} values for "
            f"{spatial} spatial axes; give one per axis"
        )
    return values


def _auto_pad(node: Node) -> str:
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad != "NOTSET" and auto_pad not in AUTO_PADS:
        raise unsupported(
            node,
            f"auto_pad={auto_pad!r}",
            "use NOTSET, SAME_UPPER, SAME_LOWER or VALID",
        )
    return auto_pad


def _padding(node: Node, spatial: int) -> str | list[tuple[int, int]]:
    """``auto_pad`` as an ``irc.nn`` padding mode, or NOTSET's ``pads``
    (``[x1_begin, x2_begin, ..., x1_end, x2_end]``) as a (begin, end) pair
    per spatial axis."""
    auto_pad = _auto_pad(node)
    if auto_pad != "NOTSET":
        return AUTO_PADS[auto_pad]
    return _pads(node, spatial)


def _pads(node: Node, spatial: int) -> list[tuple[int, int]]:
    pads = _per_axis(node, "pads", 2 * spatial, 0)
    return list(zip(pads[:spatial], pads[spatial:]))


def _spatial_rank(node: Node, x: Value, spatial: int) -> int:
    """``spatial``, checked against ``x``'s ``[N, C, *spatial]``."""
    if rank_of(x) != spatial + 2:
        raise UnsupportedOnnxOp(
            f"{node.proto.op_type}: an input of rank {rank_of(x)} with "
            f"{spatial} spatial axes; ONNX's layout is [N, C, *spatial] (rank "
            f"{spatial + 2})"
        )
    return spatial


def _kernel_of(node: Node, weight: Value) -> list[Any]:
    """The weight's kernel sizes, which ``kernel_shape`` (if given) repeats."""
    kernel = shape_of(weight)[2:]
    given = node.attr("kernel_shape")
    if given is not None and [int(k) for k in given] != kernel:
        raise UnsupportedOnnxOp(
            f"{node.proto.op_type}: kernel_shape {list(given)} differs from the "
            f"weight's kernel {kernel}"
        )
    return kernel


def optional_operand(operands: list[Value], position: int) -> Value:
    """Operand ``position`` as an array, or None where the node omits it."""
    if position < len(operands) and operands[position] is not None:
        return tensor(operands[position])
    return None


@converts("Conv")
def convolution(node: Node, operands: list[Value]) -> list[Value]:
    x, weight = tensor(operands[0]), tensor(operands[1])
    spatial = _spatial_rank(node, x, rank_of(weight) - 2)
    _kernel_of(node, weight)
    return [
        nn.conv(
            x,
            weight,
            optional_operand(operands, 2),
            strides=_per_axis(node, "strides", spatial, 1),
            padding=_padding(node, spatial),
            dilations=_per_axis(node, "dilations", spatial, 1),
            groups=node.attr("group", 1),
        )
    ]


@converts("ConvTranspose")
def convolution_transpose(node: Node, operands: list[Value]) -> list[Value]:
    x, weight = tensor(operands[0]), tensor(operands[1])
    spatial = _spatial_rank(node, x, rank_of(weight) - 2)
    kernel = _kernel_of(node, weight)
    strides = _per_axis(node, "strides", spatial, 1)
    dilations = _per_axis(node, "dilations", spatial, 1)
    output_padding = _per_axis(node, "output_padding", spatial, 0)
    auto_pad = _auto_pad(node)
    output_shape = node.attr("output_shape")
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = _transpose_pads(
            node, shape_of(x)[2:], kernel, strides, dilations, output_padding,
            output_shape, auto_pad,
        )  # fmt: skip
    elif auto_pad == "VALID":
        pads = [(0, 0)] * spatial
    else:
        pads = _pads(node, spatial)
    return [
        nn.conv_transpose(
            x,
            weight,
            optional_operand(operands, 2),
            strides=strides,
            padding=pads,
            output_padding=output_padding,
            dilations=dilations,
            groups=node.attr("group", 1),
        )
    ]


def _transpose_pads(
    node: Node,
    sizes: list[Any],
    kernel: list[Any],
    strides: list[int],
    dilations: list[int],
    output_padding: list[int],
    output_shape: Sequence[int] | None,
    auto_pad: str,
) -> list[tuple[int, int]]:
    """The pads that give ``output_shape`` (by default, for SAME_*, each
    input size times its stride), per ONNX's rule: the total is ``stride *
    (size - 1) + output_padding + (kernel - 1) * dilation + 1 - output``,
    its odd part at the end for SAME_UPPER, at the beginning otherwise (a
    negative total grows the output)."""
    spatial = len(sizes)
    if output_shape is not None:
        output_shape = list(output_shape)[-spatial:]
    pads = []
    for axis in range(spatial):
        size, k = sizes[axis], kernel[axis]
        reach = (k - 1) * dilations[axis] + 1
        if output_shape is None:  # size * stride: the size cancels out
            total = output_padding[axis] + reach - strides[axis]
        else:
            total = (
                strides[axis] * (size - 1) + output_padding[axis] + reach
                - output_shape[axis]
            )  # fmt: skip
        if not isinstance(total, int):
            raise unsupported(
                node,
                f"output_shape and a symbolic input size ({size})",
                "give explicit pads, or give that axis a concrete size",
            )
        half = total // 2
        pads.append(
            (half, total - half) if auto_pad == "SAME_UPPER" else (total - half, half)
        )
    return pads


def _pool_windows(node: Node, x: Value) -> dict[str, Any]:
    """A pooling node's window attributes as ``irc.nn``'s poolings take
    them (ONNX's strides default to 1, not to the kernel)."""
    kernel = node.attr("kernel_shape")
    if kernel is None:
        raise UnsupportedOnnxOp(f"{node.proto.op_type} needs its kernel_shape")
    kernel = [int(k) for k in kernel]
    spatial = len(kernel)
    _spatial_rank(node, x, spatial)
    return {
        "kernel": kernel,
        "strides": _per_axis(node, "strides", spatial, 1),
        "padding": _padding(node, spatial),
        "dilations": _per_axis(node, "dilations", spatial, 1),
        "ceil_mode": bool(node.attr("ceil_mode", 0)),
    }


@converts("MaxPool")
def max_pool(node: Node, operands: list[Value]) -> list[Value]:
    if len(node.proto.output) > 1 and node.proto.output[1]:
        raise unsupported(
            node,
            "its Indices output used",
            "irc computes the maximum only: remove the second output (torch's "
            "return_indices=False)",
        )
    # storage_order only orders the Indices output, which is not computed.
    x = tensor(operands[0])
    return [nn.max_pool(x, **_pool_windows(node, x))]


@converts("AveragePool")
def average_pool(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    count_include_pad = bool(node.attr("count_include_pad", 0))
    return [
        nn.avg_pool(x, **_pool_windows(node, x), count_include_pad=count_include_pad)
    ]


@converts("GlobalAveragePool")
def global_average_pool(node: Node, operands: list[Value]) -> list[Value]:
    return [nn.global_avg_pool(tensor(operands[0]))]


@converts("GlobalMaxPool")
def global_max_pool(node: Node, operands: list[Value]) -> list[Value]:
    return [nn.global_max_pool(tensor(operands[0]))]


# ----- reductions ----------------------------------------------------------------

REDUCERS: dict[str, Callable[..., Value]] = {
    "ReduceSum": np.sum,
    "ReduceMax": np.max,
    "ReduceMin": np.min,
    "ReduceProd": np.prod,
    "ReduceMean": np.mean,
    "ReduceL1": lambda x, **kw: np.sum(np.abs(x), **kw),
    "ReduceL2": lambda x, **kw: np.sqrt(np.sum(x * x, **kw)),
    "ReduceSumSquare": lambda x, **kw: np.sum(x * x, **kw),
    "ReduceLogSum": lambda x, **kw: np.log(np.sum(x, **kw)),
    "ReduceLogSumExp": lambda x, **kw: _logsumexp(x, **kw),
}


def _logsumexp(x: Value, axis: tuple[int, ...], keepdims: bool) -> Value:
    peak = np.max(x, axis=axis, keepdims=True)
    total = np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak
    return total if keepdims else np.squeeze(total, axis=axis)


@converts(*REDUCERS, static=(1,))
def reduce(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    rank = rank_of(x)
    axes = axes_operand(node, operands, 1)
    if not axes:
        if node.attr("noop_with_empty_axes", 0):
            return [x]
        axes = list(range(rank))
    axis = tuple(sorted({normalize(a, rank) for a in axes}))
    keepdims = bool(node.attr("keepdims", 1))
    if node.proto.op_type == "ReduceProd" and is_symbolic(operands[0]):
        return [_size_product(operands[0], keepdims)]
    reduced = REDUCERS[node.proto.op_type](x, axis=axis, keepdims=keepdims)
    # ONNX keeps the element type (NumPy sums small integers as int64).
    return [reduced if reduced.dtype == x.dtype else reduced.astype(x.dtype)]


def _size_product(value: ShapeValue, keepdims: bool) -> Value:
    product: Any = 1
    for size in value.elements.ravel():
        product = product * size
    return shape_value([product] if keepdims else product)


@converts("ArgMax", "ArgMin")
def arg_extremum(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    axis = normalize(node.attr("axis", 0), rank_of(x))
    keepdims = bool(node.attr("keepdims", 1))
    find = np.argmax if node.proto.op_type == "ArgMax" else np.argmin
    if not node.attr("select_last_index", 0):
        return [find(x, axis=axis, keepdims=keepdims)]
    # The last extremum is the first one of the reversed axis.
    reversed_index = find(np.flip(x, axis), axis=axis, keepdims=keepdims)
    return [(shape_of(x)[axis] - 1) - reversed_index]


# ----- normalizations ----------------------------------------------------------------


@converts("CumSum", static=(1,))
def cumulative_sum(node: Node, operands: list[Value]) -> list[Value]:
    """``np.cumsum`` along the axis operand; ``exclusive`` leaves each
    element out of its own sum (the sums shifted, rather than less the
    element, which would round), ``reverse`` sums from the end."""
    x = tensor(operands[0])
    axis = normalize(static_ints(node, operands[1], "axis")[0], len(shape_of(x)))
    reverse = bool(node.attr("reverse", 0))
    if reverse:
        x = np.flip(x, axis)
    total = np.cumsum(x, axis=axis, dtype=x.dtype)
    if node.attr("exclusive", 0):  # the sums shifted by one, 0 first
        rank = len(shape_of(x))
        before = [slice(None)] * rank
        before[axis] = slice(0, -1)
        widths = [(1, 0) if a == axis else (0, 0) for a in range(rank)]
        total = np.pad(total[tuple(before)], widths)
    return [np.flip(total, axis) if reverse else total]


@converts("Softmax", "LogSoftmax")
def softmax(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    rank = rank_of(x)
    default = -1 if node.opset >= 13 else 1
    axis = normalize(node.attr("axis", default), rank)
    if node.opset < 13:  # the input is read as a matrix [d0*..*d(axis-1), rest]
        shape = shape_of(x)
        rows = math.prod(shape[:axis]) if axis else 1
        flat = np.reshape(x, (rows, -1))
        return [np.reshape(_softmax(node, flat, 1), shape)]
    return [_softmax(node, x, axis)]


def _softmax(node: Node, x: Value, axis: int) -> Value:
    if node.proto.op_type == "LogSoftmax":
        return nn.log_softmax(x, axis)
    return nn.softmax(x, axis)


@converts("LayerNormalization")
def layer_normalization(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    rank = rank_of(x)
    axis = normalize(node.attr("axis", -1), rank)
    bias = operands[2] if len(operands) > 2 else None
    y, mean, inverse = nn.layer_norm(
        x,
        tuple(range(axis, rank)),
        tensor(operands[1]),
        None if bias is None else tensor(bias),
        node.attr("epsilon", 1e-5),
        numpy_dtype(node.attr("stash_type", 1)),
    )
    return [y, mean, inverse]


@converts("BatchNormalization")
def batch_normalization(node: Node, operands: list[Value]) -> list[Value]:
    training = node.attr("training_mode", 0)
    if training or any(node.proto.output[1:]):
        raise unsupported(
            node,
            "training_mode=1" if training else "its running statistics outputs",
            "irc imports inference: export the model in eval mode "
            "(torch's model.eval())",
        )
    if not node.attr("spatial", 1):
        raise unsupported(
            node, "spatial=0", "statistics per channel (spatial=1) are imported"
        )
    x = tensor(operands[0])
    # Opset 15 allows other float types for the parameters: ONNX keeps x's.
    scale, bias, mean, variance = (tensor(o).astype(x.dtype) for o in operands[1:5])
    epsilon = node.attr("epsilon", 1e-5)
    return [nn.batch_norm(x, scale, bias, mean, variance, epsilon)]


@converts("InstanceNormalization")
def instance_normalization(node: Node, operands: list[Value]) -> list[Value]:
    x, scale, bias = (tensor(o) for o in operands)
    return [nn.instance_norm(x, scale, bias, node.attr("epsilon", 1e-5))]


@converts("GroupNormalization")
def group_normalization(node: Node, operands: list[Value]) -> list[Value]:
    x, scale, bias = (tensor(o) for o in operands)
    groups = node.attr("num_groups")
    channels = shape_of(x)[1]
    if node.opset < 21:  # opset 18: a scale and a bias per group
        scale, bias = (_per_channel(v, groups, channels) for v in (scale, bias))
    epsilon = node.attr("epsilon", 1e-5)
    stash = numpy_dtype(node.attr("stash_type", 1)) if node.opset >= 21 else x.dtype
    if np.dtype(stash) == np.dtype(x.dtype):
        return [nn.group_norm(x, groups, scale, bias, epsilon)]
    # The statistics and normalization in the stash type, the affine in x's.
    normalized = nn.group_norm(x.astype(stash), groups, eps=epsilon).astype(x.dtype)
    channel_axis = (-1,) + (1,) * (rank_of(x) - 2)
    return [
        normalized * np.reshape(scale, channel_axis) + np.reshape(bias, channel_axis)
    ]


def _per_channel(value: Value, groups: int, channels: Any) -> Value:
    """A value per group repeated for each channel of its group."""
    per_group = np.reshape(value, (groups, 1))
    return np.reshape(np.broadcast_to(per_group, (groups, channels // groups)), (-1,))


# ----- layout ------------------------------------------------------------------------


@converts("Reshape", static=(1,))
def reshape(node: Node, operands: list[Value]) -> list[Value]:
    x, target = operands
    dims = known_ints(node, target, "target shape")
    source = shape_of(x)
    if not node.attr("allowzero", 0):
        dims = [source[i] if _is_int(d, 0) else d for i, d in enumerate(dims)]
    if is_symbolic(x):
        return [shape_value(np.reshape(x.elements, _numpy_dims(dims)))]
    return [np.reshape(x, dims)]


def _numpy_dims(dims: Sequence[Any]) -> list[int]:
    return [int(d) for d in dims]


def _is_int(value: Any, expected: int) -> bool:
    return isinstance(value, int | np.integer) and int(value) == expected


@converts("Flatten")
def flatten(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    shape = shape_of(x)
    axis = normalize(node.attr("axis", 1), len(shape))
    rows = math.prod(shape[:axis]) if axis else 1
    columns = math.prod(shape[axis:]) if axis < len(shape) else 1
    return [np.reshape(x, (rows, columns))]


@converts("Transpose")
def transpose(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    perm = node.attr("perm")
    return [np.transpose(x, None if perm is None else list(perm))]


@converts("Squeeze", static=(1,))
def squeeze(node: Node, operands: list[Value]) -> list[Value]:
    x = operands[0]
    axes = axes_operand(node, operands, 1)
    rank = len(shape_of(x))
    if axes is None:
        axes = [i for i, d in enumerate(shape_of(x)) if _is_int(d, 1)]
    axis = tuple(normalize(a, rank) for a in axes)
    if is_symbolic(x):
        return [shape_value(np.squeeze(x.elements, axis=axis))]
    return [np.squeeze(x, axis=axis)]


@converts("Unsqueeze", static=(1,))
def unsqueeze(node: Node, operands: list[Value]) -> list[Value]:
    x = operands[0]
    axes = axes_operand(node, operands, 1) or []
    rank = len(shape_of(x)) + len(axes)
    axis = tuple(sorted(normalize(a, rank) for a in axes))
    if is_symbolic(x):
        return [shape_value(np.expand_dims(x.elements, axis))]
    return [np.expand_dims(x, axis)]


@converts("Concat")
def concat(node: Node, operands: list[Value]) -> list[Value]:
    parts = [o for o in operands if o is not None]
    axis = node.attr("axis")
    if any(is_symbolic(p) for p in parts):
        sizes = [known_sizes(p) for p in parts]
        if all(s is not None for s in sizes):
            return [shape_value(np.concatenate(sizes, axis=axis))]
    values = [tensor(p) for p in parts]
    rank = rank_of(values[0])
    # ONNX allows empty operands (of shape [0]) that NumPy would need typed.
    return [np.concatenate(values, axis=normalize(axis, rank))]


@converts("Split", static=(1,))
def split(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    shape = shape_of(x)
    axis = normalize(node.attr("axis", 0), len(shape))
    outputs = len(node.proto.output)
    if "split" in node.attributes:
        sizes: list[Any] = list(node.attr("split"))
    elif len(operands) > 1 and operands[1] is not None:
        sizes = known_ints(node, operands[1], "split sizes")
    else:
        count = node.attr("num_outputs", outputs)
        extent = shape[axis]
        chunk = -(-extent // count)
        sizes = [chunk] * (count - 1) + [extent - chunk * (count - 1)]
    offsets: list[Any] = [0]
    for size in sizes[:-1]:
        offsets.append(offsets[-1] + size)
    results = []
    for offset, size in zip(offsets, sizes):
        key = [slice(None)] * len(shape)
        key[axis] = slice(offset, offset + size)
        results.append(x[tuple(key)])
    return results


@converts("Slice", static=(1, 2, 3, 4))
def slice_(node: Node, operands: list[Value]) -> list[Value]:
    x = operands[0]
    if node.opset < 10:
        starts, ends = list(node.attr("starts")), list(node.attr("ends"))
        axes, steps = node.attr("axes"), None
    else:
        starts = known_ints(node, operands[1], "starts")
        ends = known_ints(node, operands[2], "ends")
        axes = _optional_ints(node, operands, 3, "axes")
        steps = _optional_ints(node, operands, 4, "steps")
    rank = len(shape_of(x))
    axes = list(range(len(starts))) if axes is None else list(axes)
    steps = [1] * len(starts) if steps is None else steps
    key: list[slice] = [slice(None)] * rank
    extents = shape_of(x)
    for axis, start, end, step in zip(axes, starts, ends, steps):
        axis = normalize(int(axis), rank)
        symbolic = any(isinstance(v, SymDim) for v in (start, end, extents[axis]))
        if step < 0 and symbolic and not is_symbolic(x):
            # Capture slices backwards on static bounds only: reverse the axis
            # and slice it forwards.
            x = np.flip(x, axis)
            key[axis] = _forward(start, end, step, extents[axis])
        else:
            key[axis] = slice(start, _python_end(end, step), step)
    if is_symbolic(x):
        return [shape_value(x.elements[tuple(key)])]
    if isinstance(x, np.ndarray) and _has_symbolic_bound(key):
        x = layout.as_tensor(x)  # an initializer cut at a symbolic size
    return [x[tuple(key)]]


def _has_symbolic_bound(key: Sequence[slice]) -> bool:
    return any(
        isinstance(bound, SymDim)
        for part in key
        for bound in (part.start, part.stop, part.step)
    )


def _forward(start: Any, end: Any, step: int, extent: Any) -> slice:
    """``[start:end:step]`` (``step < 0``) as a slice of the reversed axis;
    symbolic bounds are taken to lie in the axis, as exporters write them."""
    first = extent - 1 - _index(start, extent)
    if isinstance(end, int) and (end < -(2**62) or _is_past_front(end, extent)):
        return slice(first, None, -step)
    return slice(first, extent - 1 - _index(end, extent), -step)


def _index(bound: Any, extent: Any) -> Any:
    """An ONNX bound as an index into the axis (from the back when negative,
    the last index when past the end)."""
    if not isinstance(bound, int):
        return bound
    if bound > 2**62:
        return extent - 1
    return bound + extent if bound < 0 else bound


def _is_past_front(end: int, extent: Any) -> bool:
    return isinstance(extent, int) and end + extent < 0


def _python_end(end: Any, step: int) -> Any:
    """ONNX's end past the front (``-INT64_MAX``) is Python's ``None``."""
    if step < 0 and isinstance(end, int) and end < -(2**62):
        return None
    return end


def _optional_ints(
    node: Node, operands: list[Value], position: int, what: str
) -> list[int] | None:
    if position < len(operands) and operands[position] is not None:
        return static_ints(node, operands[position], what)
    return None


@converts("Gather")
def gather(node: Node, operands: list[Value]) -> list[Value]:
    data, indices = operands
    axis = normalize(node.attr("axis", 0), len(shape_of(data)))
    sizes = known_sizes(data)
    index_values = known_sizes(indices)
    if sizes is not None and index_values is not None and is_symbolic(data):
        return [
            shape_value(np.take(sizes, _wrap(index_values, sizes.shape[axis]), axis))
        ]
    data = tensor(data)
    if index_values is not None and rank_of(indices) == 0:
        key = [slice(None)] * len(shape_of(data))
        key[axis] = dims_list([index_values.item()])[0]
        return [data[tuple(key)]]
    indices = tensor(indices)
    if isinstance(data, np.ndarray) and not isinstance(indices, np.ndarray):
        data = layout.as_tensor(data)  # np.take would not dispatch on the indices
    return [np.take(data, indices, axis=axis)]


@converts("GatherElements")
def gather_elements(node: Node, operands: list[Value]) -> list[Value]:
    """``np.take_along_axis``, as one gather from the flattened data at the
    linear index of each element: the indices' own coordinates along the
    other axes, their values along ``axis``."""
    data, indices = tensor(operands[0]), tensor(operands[1])
    dims = shape_of(data)
    axis = normalize(node.attr("axis", 0), len(dims))
    return [_take(np.reshape(data, (-1,)), element_offsets(dims, indices, axis))]


def element_offsets(dims: Sequence[Any], indices: Any, axis: int) -> Any:
    """The offset into data of ``dims`` flattened of each element that
    GatherElements reads and ScatterElements writes: its index along
    ``axis``, its own coordinates along the other axes."""
    index_dims = shape_of(indices)
    linear: Any = 0
    for d in range(len(dims)):
        if d == axis:
            coordinate = _from_end(indices, dims[axis])
        else:
            coordinate = coordinates(index_dims, d)
        linear = linear + coordinate * math.prod(dims[d + 1 :])
    return linear


@converts("GatherND")
def gather_nd(node: Node, operands: list[Value]) -> list[Value]:
    """Slices of the data at the index tuples of the last axis of the
    indices (after ``batch_dims`` axes both share), as one gather from the
    data with the indexed axes flattened."""
    data, indices = tensor(operands[0]), tensor(operands[1])
    dims = shape_of(data)
    batch = node.attr("batch_dims", 0)
    linear = tuple_rows(node, dims, indices, batch)
    flat = np.reshape(data, (-1, *dims[batch + shape_of(indices)[-1] :]))
    return [_take(flat, linear)]


def tuple_rows(node: Node, dims: Sequence[Any], indices: Any, batch: int) -> Any:
    """The row of data of ``dims``, its first ``batch + depth`` axes
    flattened, that each index tuple (the last axis of ``indices``, of
    ``depth`` entries, after ``batch`` axes both share) names: where
    GatherND reads and ScatterND writes a slice."""
    index_dims = shape_of(indices)
    depth = index_dims[-1]
    if not isinstance(depth, int):
        raise unsupported(node, "a symbolic index depth", "make the last axis static")
    indexed = dims[: batch + depth]
    linear: Any = 0
    for d in range(batch):
        linear = linear + coordinates(index_dims[:-1], d) * math.prod(indexed[d + 1 :])
    for j in range(depth):
        position = _from_end(indices[..., j], dims[batch + j])
        linear = linear + position * math.prod(indexed[batch + j + 1 :])
    return linear


def coordinates(dims: Sequence[Any], axis: int) -> Any:
    """Each element's coordinate along ``axis`` of an array of ``dims``
    (broadcasting along the others)."""
    shape = [-1 if d == axis else 1 for d in range(len(dims))]
    return np.reshape(arange(dims[axis], dtype=np.int64), shape)


def _from_end(indices: Any, extent: Any) -> Any:
    """ONNX's indices, negative ones counted from the end of ``extent``."""
    indices = indices.astype(np.int64)
    return np.where(indices < 0, indices + extent, indices)


def _take(data: Any, linear: Any) -> Any:
    if isinstance(data, np.ndarray) and not isinstance(linear, np.ndarray | int):
        data = layout.as_tensor(data)  # np.take would not dispatch on the indices
    return np.take(data, linear, axis=0)


def _wrap(indices: np.ndarray, extent: int) -> np.ndarray:
    """Indices into a static extent, negative ones counted from the end."""
    flat = [int(i) + extent if int(i) < 0 else int(i) for i in indices.ravel()]
    return np.array(flat, np.int64).reshape(indices.shape)


@converts("Expand", static=(1,))
def expand(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    target = known_ints(node, operands[1], "target shape")
    return [broadcast_to(x, bidirectional_shape(shape_of(x), target))]


def bidirectional_shape(lhs: Sequence[Any], rhs: Sequence[Any]) -> list[Any]:
    """ONNX's (and NumPy's) broadcast of two shapes of ints and sizes."""
    rank = max(len(lhs), len(rhs))
    lhs = [1] * (rank - len(lhs)) + list(lhs)
    rhs = [1] * (rank - len(rhs)) + list(rhs)
    return [b if _is_int(a, 1) else a for a, b in zip(lhs, rhs)]


@converts("Tile", static=(1,))
def tile(node: Node, operands: list[Value]) -> list[Value]:
    repeats = known_ints(node, operands[1], "repeats")
    return [np.tile(tensor(operands[0]), repeats)]


#: ONNX's Pad modes as ``np.pad``'s.
PAD_MODES = {
    "constant": "constant",
    "edge": "edge",
    "reflect": "reflect",
    "wrap": "wrap",
}


@converts("Pad", static=(1, 2, 3))
def pad(node: Node, operands: list[Value]) -> list[Value]:
    """``np.pad`` with ONNX's ``pads`` (``[begins..., ends...]`` over
    ``axes``); a negative pad removes elements, as a slice."""
    x = tensor(operands[0])
    rank = len(shape_of(x))
    mode = node.attr("mode", "constant")
    if mode not in PAD_MODES:
        raise unsupported(node, f"mode={mode!r}", f"use one of {sorted(PAD_MODES)}")
    axes = _optional_ints(node, operands, 3, "axes")
    axes = list(range(rank)) if axes is None else [normalize(a, rank) for a in axes]
    pads = static_ints(node, operands[1], "pads")
    if len(pads) != 2 * len(axes):
        raise unsupported(
            node, f"{len(pads)} pads for {len(axes)} axes", "give two pads per axis"
        )
    widths = [(0, 0)] * rank
    kept: list[slice] = [slice(None)] * rank
    for axis, before, after in zip(axes, pads[: len(axes)], pads[len(axes) :]):
        widths[axis] = (max(before, 0), max(after, 0))
        kept[axis] = slice(max(-before, 0), after if after < 0 else None)
    x = x[tuple(kept)]
    if mode != "constant":
        return [np.pad(x, widths, mode=PAD_MODES[mode])]
    value = known_scalar(optional_operand(operands, 2)) if len(operands) > 2 else 0
    if value is None:
        value = 0
    if not isinstance(value, int | float | bool | np.generic):
        raise unsupported(
            node,
            "a constant_value computed at run time",
            "make it a constant or bind the graph input that holds it",
        )
    return [np.pad(x, widths, constant_values=value)]


@converts("Resize", static=(1, 2, 3))
def resize(node: Node, operands: list[Value]) -> list[Value]:
    """Each resized axis resampled by its taps (``irc.onnx.resize``)."""
    x = tensor(operands[0])
    extents = shape_of(x)
    rank = len(extents)
    resampling = _resampling(node)
    axes = node.attr("axes", None)
    axes = list(range(rank)) if axes is None else [normalize(a, rank) for a in axes]
    roi = _optional_floats(node, operands, 1, "roi") or [0.0] * len(axes) + [1.0] * len(
        axes
    )
    if len(operands) == 2:  # Resize-10: (X, scales)
        operands = [operands[0], None, operands[1]]
    scales = _optional_floats(node, operands, 2, "scales")
    sizes = (
        None
        if len(operands) < 4 or operands[3] is None
        else known_ints(node, operands[3], "sizes")
    )
    if (scales is None) == (sizes is None):
        raise unsupported(node, "both or neither of scales and sizes", "give one")
    if sizes is not None:
        scales, outputs = _scales_of_sizes(node, [extents[a] for a in axes], sizes)
    else:
        outputs = [_scaled(extents[a], s) for a, s in zip(axes, scales)]
    extrapolation = node.attr("extrapolation_value", 0.0)
    for k, (axis, scale, m) in enumerate(zip(axes, scales, outputs)):
        region = (roi[k], roi[k + len(axes)])
        x = _resampled(node, x, axis, resampling, scale, m, region, extrapolation)
    return [x]


def _resampling(node: Node) -> resize_op.Resampling:
    mode = node.attr("mode", "nearest")
    coordinates = node.attr("coordinate_transformation_mode", "half_pixel")
    nearest_mode = node.attr("nearest_mode", "round_prefer_floor")
    for value, allowed, what in (
        (mode, ("nearest", "linear", "cubic"), "mode"),
        (coordinates, resize_op.COORDINATE_MODES, "coordinate_transformation_mode"),
        (nearest_mode, tuple(resize_op.NEAREST_MODES), "nearest_mode"),
    ):
        if value not in allowed:
            raise unsupported(node, f"{what}={value!r}", f"use one of {list(allowed)}")
    return resize_op.Resampling(
        mode,
        coordinates,
        nearest_mode,
        node.attr("cubic_coeff_a", -0.75),
        bool(node.attr("exclude_outside", 0)),
        bool(node.attr("antialias", 0)),
    )


def _optional_floats(
    node: Node, operands: list[Value], position: int, what: str
) -> list[float] | None:
    """A float operand that must be known (absent or empty: None)."""
    if position >= len(operands) or operands[position] is None:
        return None
    value = operands[position]
    if not isinstance(value, np.ndarray):
        raise TracingError(
            f"{node.proto.op_type} needs its {what} known at compile time; make "
            "it a constant or bind the graph input that holds it"
        )
    return [float(v) for v in value.ravel()] or None


def _scales_of_sizes(
    node: Node, extents: Sequence[Any], sizes: Sequence[Any]
) -> tuple[list[float], list[Any]]:
    """The scales and output sizes of ``sizes`` under ``keep_aspect_ratio_policy``."""
    policy = node.attr("keep_aspect_ratio_policy", "stretch")
    if any(not isinstance(e, int) for e in extents) and policy != "stretch":
        raise unsupported(
            node, f"keep_aspect_ratio_policy={policy!r} on symbolic sizes"
        )
    if policy == "stretch":
        return [_ratio(node, s, e) for s, e in zip(sizes, extents)], list(sizes)
    ratios = [int(s) / int(e) for s, e in zip(sizes, extents)]
    choose = {"not_larger": min, "not_smaller": max}.get(policy)
    if choose is None:
        raise unsupported(node, f"keep_aspect_ratio_policy={policy!r}")
    scale = choose(ratios)
    return [scale] * len(extents), [math.floor(scale * int(e) + 0.5) for e in extents]


def _ratio(node: Node, size: Any, extent: Any) -> float:
    if size == extent:
        return 1.0
    if isinstance(size, int) and isinstance(extent, int):
        return size / extent
    raise unsupported(
        node,
        f"sizes resizing a symbolic axis ({extent} to {size})",
        "give scales (an integer scale upsamples a symbolic axis by nearest)",
    )


def _scaled(extent: Any, scale: float) -> Any:
    """``floor(extent * scale)``: an integer scale keeps a symbolic extent."""
    if isinstance(extent, int):
        return math.floor(extent * scale)
    if scale == int(scale):
        return extent * int(scale)
    return None  # refused by _resampled


def _resampled(
    node: Node,
    x: Any,
    axis: int,
    resampling: resize_op.Resampling,
    scale: float,
    m: Any,
    region: tuple[float, float],
    extrapolation: float,
) -> Any:
    """``x`` with one axis resampled to ``m`` elements."""
    n = shape_of(x)[axis]
    cropping = resampling.coordinates == "tf_crop_and_resize"
    if scale == 1.0 and m == n and not cropping:
        return x
    if not isinstance(n, int):
        if (
            resampling.mode != "nearest"
            or m is None
            or cropping
            or not _repeats(resampling, scale)
        ):
            raise unsupported(
                node,
                f"{resampling.mode} resampling of the symbolic axis {axis} (size {n}) "
                f"by {scale} with coordinate_transformation_mode="
                f"{resampling.coordinates!r}",
                "only nearest by an integer scale with asymmetric floor or "
                "half-pixel rounding keeps a size symbolic; make the axis static",
            )
        return np.repeat(x, int(scale), axis=axis)
    if m is None or m < 1:
        raise unsupported(node, f"an output size of {m} for axis {axis}")
    taps = resize_op.taps(resampling, n, m, scale, region)
    along = (m,) + (1,) * (len(shape_of(x)) - axis - 1)
    dtype = np.dtype(x.dtype)
    result = None
    for index, weight in zip(taps.index, taps.weight):
        picked = np.take(x, index, axis=axis)
        if resampling.mode != "nearest":
            picked = picked * weight.astype(dtype).reshape(along)
        result = picked if result is None else result + picked
    if taps.outside.any():
        fill = np.asarray(extrapolation, dtype)
        result = np.where(taps.outside.reshape(along), fill, result)
    return result


def _repeats(resampling: resize_op.Resampling, scale: float) -> bool:
    """Whether nearest resampling by ``scale`` repeats each element: an
    integer scale, rounding the asymmetric coordinate down or a half-pixel
    one to the nearest (its fraction never reaches a half)."""
    if scale != int(scale) or scale < 1:
        return False
    if resampling.coordinates == "asymmetric":
        return resampling.nearest_mode == "floor"
    half_pixel = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel")
    return resampling.coordinates in half_pixel and resampling.nearest_mode.startswith(
        "round"
    )


@converts("OneHot", static=(1,))
def one_hot(node: Node, operands: list[Value]) -> list[Value]:
    """``values[1]`` where an index (negative ones counted from ``depth``)
    names the class along the new ``axis``, else ``values[0]``; an index
    out of range names none."""
    indices, values = tensor(operands[0]), tensor(operands[2])
    depth = known_scalar(operands[1])
    if not isinstance(depth, int | float):
        raise unsupported(node, "a depth computed at run time", "make it a constant")
    depth = int(depth)
    rank = len(shape_of(indices)) + 1
    axis = normalize(node.attr("axis", -1), rank)
    positions = _from_end(indices, depth)
    classes = np.reshape(
        arange(depth, dtype=np.int64), [-1 if d == axis else 1 for d in range(rank)]
    )
    hot = np.expand_dims(positions, axis) == classes
    return [np.where(hot, values[1], values[0])]


@converts("Trilu", static=(1,))
def trilu(node: Node, operands: list[Value]) -> list[Value]:
    x = tensor(operands[0])
    k = static_ints(node, operands[1], "k")[0] if len(operands) > 1 else 0
    triangle = np.triu if node.attr("upper", 1) else np.tril
    return [triangle(x, k)]


# ----- sources ------------------------------------------------------------------------


@converts("Constant")
def constant(node: Node, operands: list[Value]) -> list[Value]:
    from onnx import numpy_helper

    attributes = node.proto.attribute
    if not attributes:
        raise unsupported(node, "no value")
    attribute = attributes[0]
    if attribute.name == "value":
        return [numpy_helper.to_array(attribute.t)]
    simple = {
        "value_float": np.float32,
        "value_floats": np.float32,
        "value_int": np.int64,
        "value_ints": np.int64,
    }
    if attribute.name in simple:
        return [np.array(node.attr(attribute.name), simple[attribute.name])]
    raise unsupported(node, f"a {attribute.name} attribute")


@converts("ConstantOfShape", static=(0,))
def constant_of_shape(node: Node, operands: list[Value]) -> list[Value]:
    from onnx import numpy_helper

    dims = known_ints(node, operands[0], "shape")
    proto = node.attributes.get("value")
    fill = (
        numpy_helper.to_array(proto) if proto is not None else np.zeros(1, np.float32)
    )
    return [full(dims, fill.reshape(()).item(), fill.dtype)]


@converts("Range", static=(0, 1, 2))
def range_(node: Node, operands: list[Value]) -> list[Value]:
    start, limit, delta = (known_bound(o) for o in operands)
    element = np.dtype(operands[0].dtype)
    symbolic = any(isinstance(b, SymDim) for b in (start, limit))
    if symbolic and isinstance(delta, int) and delta < 0:
        # A traced arange steps forwards: count down from start instead.
        return [(start - arange(0, start - limit, -delta)).astype(element)]
    return [arange(start, limit, delta).astype(element)]


def known_bound(value: Value) -> Any:
    scalar = known_scalar(value)
    if isinstance(scalar, int | float | SymDim):
        return scalar
    raise TracingError(
        "Range needs its start, limit and delta known at compile time; here "
        "one is computed from the data at run time"
    )


@converts("Shape")
def shape(node: Node, operands: list[Value]) -> list[Value]:
    dims = shape_of(operands[0])
    start, end = node.attr("start", 0), node.attr("end")
    return [shape_value(dims[start:end])]


@converts("Size")
def size(node: Node, operands: list[Value]) -> list[Value]:
    total: Any = 1
    for dim in shape_of(operands[0]):
        total = total * dim
    return [shape_value(total)]


@converts("Dropout", static=(1, 2))
def dropout(node: Node, operands: list[Value]) -> list[Value]:
    if len(operands) > 2 and operands[2] is not None and known_scalar(operands[2]):
        raise unsupported(node, "training_mode=true")
    x = tensor(operands[0])
    return [x, full(shape_of(x), True)]
