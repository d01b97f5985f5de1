"""Building graph ops from traced values, with NumPy's rules.

This is where NumPy's implicit behaviour becomes explicit IR: type promotion
(NEP 50, Python scalars weak) becomes ``graph.cast``, broadcasting becomes
``graph.broadcast``, Python scalars become splat ``graph.constant`` ops and
symbolic sizes used as numbers become ``graph.dim``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation

from irc.capture.tensor import SymDim, Tensor
from irc.capture.trace import current_trace, fact_hint, tracing_error
from irc.dialects import graph
from irc.dialects.sym import shape_text
from irc.dtypes import (
    BOOL,
    FLOAT16,
    FLOAT64,
    INT64,
    DType,
    promote,
    promote_weak,
    scalar_dtype,
)
from irc.dtypes import dtype as to_dtype
from irc.errors import IrcShapeError, IrcTypeError
from irc.primitives.builtin import ABS, DIV, NEG
from irc.primitives.declaration import Primitive, primitive, set_tracer
from irc.shapes import ShapeError, SymExpr

#: Larger NumPy arrays met during tracing should be arguments, not literals.
MAX_DENSE_CONSTANT = 4096

Operand = Tensor | SymDim | bool | int | float | np.ndarray | np.generic


def emit(op: Operation) -> Tensor:
    """Insert ``op`` into the function being traced; wrap its result."""
    current_trace().emit(op)
    return Tensor(op.results[0])


def shape_of(value: Operand) -> tuple[SymExpr, ...]:
    if isinstance(value, Tensor):
        return value.type.dims
    if isinstance(value, np.ndarray):
        return tuple(SymExpr.const(d) for d in value.shape)
    return ()


def _is_python_scalar(value: Any) -> bool:
    # np.float64 subclasses float, but NumPy scalars are strong (NEP 50).
    if isinstance(value, np.generic):
        return False
    return isinstance(value, bool | int | float | SymDim)


def is_weak(value: Operand) -> bool:
    """Whether ``value`` stands for a Python scalar (NEP 50: it takes the
    dtype of the arrays it meets)."""
    return _is_python_scalar(value) or (isinstance(value, Tensor) and value.weak)


def dtype_of(value: Operand) -> DType:
    """The dtype a value has on its own (Python scalars: NumPy's defaults)."""
    if isinstance(value, Tensor):
        return value.irc_dtype
    if isinstance(value, SymDim):
        return INT64
    if isinstance(value, np.ndarray | np.generic):
        return to_dtype(value.dtype)
    if isinstance(value, bool | int | float):
        return scalar_dtype(value)
    raise tracing_error(
        f"cannot use a {type(value).__name__} as an array in a traced function"
    )


def _weak_sample(value: Operand) -> bool | int | float:
    """A Python scalar of the same kind as a weak value, for promotion."""
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, SymDim):
        return 0
    return 0.0 if dtype_of(value).kind == "f" else 0


def result_dtype(values: Sequence[Operand]) -> DType:
    """NumPy 2 promotion of several operands (NEP 50: Python scalars weak)."""
    strong = [dtype_of(v) for v in values if not is_weak(v)]
    weak = [_weak_sample(v) for v in values if is_weak(v)]
    if not strong:
        # Only Python scalars: Python's own rules (bool < int < float).
        strong = [max((dtype_of(w) for w in weak), key=lambda d: "bif".index(d.kind))]
    result = strong[0]
    for other in strong[1:]:
        result = promote(result, other)
    for sample in weak:
        result = promote_weak(result, sample)
    return result


def broadcast_shapes(*shapes: Sequence[SymExpr]) -> tuple[SymExpr, ...]:
    """NumPy broadcasting of symbolic shapes, using the declared facts."""
    result: Sequence[SymExpr] = ()
    for shape in shapes:
        try:
            result = graph.broadcast_shapes(result, shape, current_trace().facts)
        except ShapeError as err:
            message = _unbroadcastable(result, shape) or str(err)
            raise tracing_error(message, IrcShapeError) from None
    return tuple(result)


def _unbroadcastable(lhs: Sequence[SymExpr], rhs: Sequence[SymExpr]) -> str | None:
    """The error for shapes whose first mismatch involves a symbol, with the
    fact that would make the two dims equal; None for two constants."""
    for a, b in zip(reversed(lhs), reversed(rhs)):
        if a != b and a != 1 and b != 1 and equal_if(a, b):
            return (
                f"shapes {shape_text(lhs)} and {shape_text(rhs)} do not "
                f"broadcast: {a} vs {b}{equal_if(a, b)}; else broadcast explicitly"
            )
    return None


def equal_if(lhs: SymExpr, rhs: SymExpr) -> str:
    """The fact that makes two sizes equal, for a message saying that they
    differ; symbols of different names are different sizes until a fact
    says otherwise, and constants cannot be declared equal."""
    if lhs.is_constant and rhs.is_constant:
        return ""
    return f"; if they are equal, declare it: {fact_hint(f'{lhs} == {rhs}')}"


def splat(value: bool | int | float, element: DType, shape: Sequence[Any]) -> Tensor:
    result_type = graph.TensorType(shape, element.ir_type)
    try:
        return emit(graph.ConstantOp.splat(value, result_type))
    except OverflowError:
        raise tracing_error(
            f"Python int {value} is out of bounds for {element.name}", IrcTypeError
        ) from None


def dense_constant(array: np.ndarray | np.generic) -> Tensor:
    array = np.asarray(array)
    if array.ndim == 0:
        return splat(array.item(), to_dtype(array.dtype), ())
    if array.size > MAX_DENSE_CONSTANT:
        raise tracing_error(
            f"a NumPy array of {array.size} elements is used as a constant; pass "
            f"arrays larger than {MAX_DENSE_CONSTANT} elements as arguments"
        )
    return emit(graph.ConstantOp.dense(array))


def materialize(value: Operand, element: DType, shape: Sequence[SymExpr]) -> Tensor:
    """``value`` as a tensor of exactly ``element`` and ``shape``."""
    if isinstance(value, bool | int | float):
        return splat(value, element, shape)
    if isinstance(value, SymDim):
        tensor = emit(graph.DimOp(value.expr, element.ir_type))
    elif isinstance(value, np.ndarray | np.generic):
        tensor = dense_constant(value)
    else:
        tensor = value
    return broadcast_to(cast(tensor, element), shape)


def cast(value: Tensor, element: DType) -> Tensor:
    if value.irc_dtype == element:
        return value
    return emit(graph.CastOp(value.value, element.ir_type))


def broadcast_to(value: Tensor, shape: Sequence[SymExpr | int]) -> Tensor:
    target = tuple(SymExpr.const(d) if isinstance(d, int) else d for d in shape)
    if value.type.dims == target:
        return value
    combined = broadcast_shapes(value.type.dims, target)
    facts = current_trace().facts
    if len(combined) != len(target) or not all(
        facts.prove_eq(c, t) for c, t in zip(combined, target)
    ):
        raise tracing_error(
            f"cannot broadcast an array of shape {_text(value.type.dims)} to "
            f"{_text(target)}",
            IrcShapeError,
        )
    return emit(graph.BroadcastOp(value.value, target))


def _text(dims: Sequence[SymExpr]) -> str:
    return "(" + ", ".join(str(d) for d in dims) + ")"


# ----- elementwise ------------------------------------------------------


def unary(kind: Primitive, value: Operand) -> Tensor:
    """``kind`` of ``value`` with NumPy 2's dtype rules. Of weak values
    (Python scalars) a Python operator's result is weak, as Python's
    operators give Python scalars; every other function is strong, as
    NumPy's functions of Python scalars give NumPy scalars (``np.sqrt(3)``
    is an ``np.float64``): so ``x / np.sqrt(x.shape[-1])`` has the same
    dtype whether that dim is static or symbolic."""
    weak = is_weak(value) and kind.python_operator
    element = dtype_of(value)
    if kind.float_only and element.kind != "f":
        if kind.integral_identity:
            return as_strong(materialize(value, element, shape_of(value)))
        # NumPy computes float functions of ints in float64, of bools in float16.
        element = FLOAT16 if element == BOOL else FLOAT64
    if element == BOOL and "b" not in kind.domain:
        raise tracing_error(
            f"{_function_name(kind)} of a bool array: use ~x or np.logical_not",
            IrcTypeError,
        )
    if kind is ABS and element == BOOL:
        return materialize(value, element, shape_of(value))
    tensor = materialize(value, element, shape_of(value))
    result = emit(graph.elementwise(kind, tensor.value))
    result.weak = weak
    return result


def _function_name(kind: Primitive) -> str:
    return "negation" if kind is NEG else kind.name


def as_strong(value: Tensor) -> Tensor:
    """``value`` as the NumPy result of a function (never weak)."""
    return Tensor(value.value) if value.weak else value


def binary(kind: Primitive, lhs: Operand, rhs: Operand) -> Tensor:
    """``kind`` of ``lhs`` and ``rhs``, broadcast, with NumPy 2's dtype
    rules (weak as ``unary`` says)."""
    element = result_dtype([lhs, rhs])
    if kind.float_only and element.kind != "f":
        # True division and float functions of ints and bools, as in NumPy.
        element = FLOAT16 if element == BOOL and kind is not DIV else FLOAT64
    if element == BOOL:
        kind = primitive(kind.on_bools) if kind.on_bools else kind
        if "b" not in kind.domain:
            raise tracing_error(
                f"{kind.name} is not defined on bool "
                "arrays; cast them with .astype(np.int32) first",
                IrcTypeError,
            )
    elif "f" not in kind.domain and element.kind == "f":
        raise tracing_error(
            f"bitwise {kind.name} is not defined on floats", IrcTypeError
        )
    shape = broadcast_shapes(shape_of(lhs), shape_of(rhs))
    a, b = (materialize(v, element, shape) for v in (lhs, rhs))
    result = emit(graph.elementwise(kind, a.value, b.value))
    result.weak = is_weak(lhs) and is_weak(rhs) and kind.python_operator
    return result


def compare(predicate: str, lhs: Operand, rhs: Operand) -> Tensor:
    element = result_dtype([lhs, rhs])
    shape = broadcast_shapes(shape_of(lhs), shape_of(rhs))
    a, b = (materialize(v, element, shape) for v in (lhs, rhs))
    return emit(graph.CompareOp(predicate, a.value, b.value))


def select(condition: Operand, on_true: Operand, on_false: Operand) -> Tensor:
    element = result_dtype([on_true, on_false])
    shape = broadcast_shapes(*(shape_of(v) for v in (condition, on_true, on_false)))
    mask = (
        materialize(condition, BOOL, shape)
        if dtype_of(condition) == BOOL
        else (compare("ne", condition, 0))
    )
    mask = broadcast_to(mask, shape)
    a, b = (materialize(v, element, shape) for v in (on_true, on_false))
    return emit(graph.SelectOp(mask.value, a.value, b.value))


# ----- trace-time decisions on symbolic sizes ---------------------------


def decide(expr: SymExpr, op: str, other: Any) -> bool:
    """Decide ``expr <op> other`` from the declared facts, or refuse."""
    if isinstance(other, float | np.floating) and not float(other).is_integer():
        # An integer against a fraction: N < 2.5 is N <= 2, N > 2.5 is N >= 3.
        op, other = _integral_comparison(op, float(other))
        if isinstance(other, bool):
            return other
    if isinstance(other, SymDim):
        rhs = other.expr
    elif isinstance(other, int | float | np.integer | np.floating):
        rhs = SymExpr.const(int(other))
    else:
        raise tracing_error(
            f"cannot compare the symbolic size {expr} with a {type(other).__name__}"
        )
    facts = current_trace().facts
    checks = {
        "==": (lambda: facts.prove_eq(expr, rhs), lambda: _provably_ne(expr, rhs)),
        "!=": (lambda: _provably_ne(expr, rhs), lambda: facts.prove_eq(expr, rhs)),
        "<": (lambda: facts.prove_lt(expr, rhs), lambda: facts.prove_le(rhs, expr)),
        "<=": (lambda: facts.prove_le(expr, rhs), lambda: facts.prove_lt(rhs, expr)),
        ">": (lambda: facts.prove_lt(rhs, expr), lambda: facts.prove_le(expr, rhs)),
        ">=": (lambda: facts.prove_le(rhs, expr), lambda: facts.prove_lt(expr, rhs)),
    }
    proves_true, proves_false = checks[op]
    if proves_true():
        return True
    if proves_false():
        return False
    raise tracing_error(
        f"cannot decide '{expr} {op} {rhs}' at trace time: it depends on the "
        f"symbols' values; declare a fact that decides it, such as "
        f"{fact_hint(f'{expr} {op} {rhs}')}, or make the dim static"
    )


def _integral_comparison(op: str, bound: float) -> tuple[str, int | bool]:
    """``n <op> bound`` for an integer ``n`` and a non-integral ``bound``, as
    a comparison with an integer (or its truth value, for == and !=)."""
    below, above = math.floor(bound), math.ceil(bound)
    return {
        "<": ("<=", below),
        "<=": ("<=", below),
        ">": (">=", above),
        ">=": (">=", above),
        "==": ("==", False),
        "!=": ("!=", True),
    }[op]


def _provably_ne(lhs: SymExpr, rhs: SymExpr) -> bool:
    facts = current_trace().facts
    return facts.prove_lt(lhs, rhs) or facts.prove_lt(rhs, lhs)


def as_dim(value: Any, what: str) -> SymExpr:
    """A size given by the user (int or symbolic) as an expression."""
    if isinstance(value, SymDim):
        return value.expr
    if isinstance(value, SymExpr):
        return value
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return SymExpr.const(int(value))
    raise tracing_error(f"{what} must be an int or a symbolic size, got {value!r}")


def as_size(value: Any, what: str) -> SymExpr:
    """A dim given by the user: an int or symbolic size, never negative."""
    size = as_dim(value, what)
    if current_trace().facts.prove_lt(size, SymExpr.const(0)):
        raise tracing_error(f"{what} must not be negative, got {size}", IrcShapeError)
    return size


def normalize_axis(axis: int, rank: int) -> int:
    if not isinstance(axis, int | np.integer) or isinstance(axis, bool):
        raise tracing_error(f"axis must be an int, got {axis!r}")
    if not -rank <= axis < max(rank, 1):
        raise tracing_error(f"axis {axis} is out of bounds for an array of rank {rank}")
    return int(axis) % max(rank, 1)


def normalize_axes(axis: Any, rank: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, tuple | list):
        axes = tuple(sorted(normalize_axis(a, rank) for a in axis))
        if len(set(axes)) != len(axes):
            raise tracing_error(f"repeated axis in {axis!r}")
        return axes
    return (normalize_axis(axis, rank),)


def apply(kind: Primitive, *operands: Any) -> Any:
    """``kind`` of ``operands``: graph IR where one is traced (with NumPy's
    promotion and broadcasting), its NumPy semantics otherwise."""
    if not any(isinstance(operand, Tensor | SymDim) for operand in operands):
        return kind.numpy(*operands)
    if len(operands) != kind.arity:
        raise tracing_error(
            f"{kind.name} takes {kind.arity} operand(s), not {len(operands)}",
            IrcTypeError,
        )
    return unary(kind, *operands) if kind.arity == 1 else binary(kind, *operands)


set_tracer(apply)
