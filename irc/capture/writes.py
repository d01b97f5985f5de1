"""Writes into traced arrays, with NumPy's semantics, as new values.

- ``x[key] = v`` with a basic key (ints, slices, ``None``, ``...``): ``v``
  cast to ``x``'s dtype as NumPy's assignment casts (unsafely: ``1.7`` into
  an int array is 1), its leading size-1 dims dropped and broadcast to
  ``x[key]``'s shape, then inserted (``graph.insert_slice``) into ``x``;
- ``x[mask] = v`` with a boolean mask: ``np.where(mask, v, x)`` (a
  ``graph.select``), for a scalar ``v`` or a ``MaskRead`` under the same
  mask (``x[mask] = x[mask] * a``, ``x[x < 0] *= a``);
- ``x += v`` and the other augmented assignments: the ufunc with
  ``out=x``, whose result NumPy casts to ``x``'s dtype under
  ``casting='same_kind'`` (a float result into an int array is refused),
  then written into ``x``.

Every write goes through ``irc.capture.views.assign``, so the arrays that
share memory with ``x`` see it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from irc.capture import layout
from irc.capture.advanced_indexing import scatter_set
from irc.capture.dynamic_writes import dynamic_setitem, is_dynamic_key
from irc.capture.ops import (
    broadcast_to,
    cast,
    emit,
    materialize,
    select,
    shape_of,
    splat,
)
from irc.capture.tensor import SymDim, Tensor
from irc.capture.trace import (
    UserLine,
    current_trace,
    tracing_error,
    tracing_error_at,
    user_line,
)
from irc.capture.views import Reshape, Window, assign, copy
from irc.dialects import graph
from irc.dtypes import DType
from irc.errors import IrcShapeError, IrcTypeError
from irc.shapes import SymExpr


def setitem(target: Tensor, key: Any, value: Any) -> None:
    """``target[key] = value``."""
    items = key if isinstance(key, tuple) else (key,)
    mask = layout.boolean_mask(items)
    if mask is not None:
        _masked_write(target, mask, value)
        return
    items = layout.expand_key(items, target.type.rank)
    if is_dynamic_key(items):  # x[i] = v at a traced 0-d index i
        dynamic_setitem(target, items, value)
        return
    if any(layout.is_index_array(item) for item in items):
        if isinstance(value, MaskRead):
            raise value.refused("assigned through index arrays")
        scatter_set(target, items, value)  # the last of repeated indices wins
        return
    if isinstance(value, MaskRead):
        raise value.refused("assigned to a slice")
    window, dims = layout.basic_window(target, items)
    if _reads_back(value, target, window, dims):
        return  # x[a:b] = x[a:b], as Python ends x[a:b] += v: nothing moves
    source = _assigned(value, target.irc_dtype, dims)
    source = layout.reshape(source, window.sizes)
    assign(target, window.backward(target.value, source.value))


def _reads_back(value: Any, target: Tensor, window: Window, dims: tuple) -> bool:
    """Whether ``value`` is the view ``target[key]`` of the window and shape
    that ``getitem`` gives for the key."""
    if not isinstance(value, Tensor) or value.view is None or target.view is None:
        return False
    steps: tuple = target.view.steps
    if not window.is_whole(target.type.dims):
        steps = (*steps, window)
    if dims != window.sizes:
        steps = (*steps, Reshape(dims))
    return value.view.storage is target.view.storage and value.view.steps == steps


def _assigned(value: Any, element: DType, dims: tuple[SymExpr, ...]) -> Tensor:
    """``value`` as NumPy assigns it to a region of ``element`` and ``dims``:
    cast unsafely, leading size-1 dims dropped, broadcast."""
    if isinstance(value, bool | int | float) and not isinstance(value, np.generic):
        if isinstance(value, float) and element.kind != "f":
            value = np.asarray(value).astype(element.numpy).item()
        tensor = splat(value, element, ())
    elif isinstance(value, SymDim):
        tensor = materialize(value, element, ())
    else:
        tensor = layout.as_tensor(value)
        tensor = cast(tensor, element)
    while tensor.type.rank > len(dims) and tensor.type.dims[0] == 1:
        tensor = layout.reshape(tensor, tensor.type.dims[1:])
    if tensor.type.rank > len(dims):
        raise tracing_error(
            f"cannot assign an array of shape {_text(tensor.type.dims)} to a "
            f"region of shape {_text(dims)}",
            IrcShapeError,
        )
    return broadcast_to(tensor, dims)


def _text(dims: tuple[SymExpr, ...]) -> str:
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


# ----- in place: the ufunc with out= -------------------------------------------


def in_place(target: Tensor, ufunc: Callable[..., Any], other: Any) -> Tensor:
    """``target op= other``: NumPy's ``ufunc(target, other, out=target)``."""
    if isinstance(other, MaskRead):
        raise other.refused(f"combined in place with a whole array ({ufunc.__name__})")
    store(target, ufunc(target, other), f"np.{ufunc.__name__}")
    return target


def store(target: Tensor, result: Any, name: str) -> None:
    """Write a ufunc's ``result`` into its ``out=`` array ``target``: the
    same shape, and NumPy's ``casting='same_kind'`` to its dtype."""
    result = layout.as_tensor(result)
    _check_same_kind(result.irc_dtype, target.irc_dtype, name)
    same_shape = result.type.dims == target.type.dims or (
        len(result.type.dims) == len(target.type.dims)
        and all(
            current_trace().facts.prove_eq(a, b)
            for a, b in zip(result.type.dims, target.type.dims)
        )
    )
    if not same_shape:
        raise tracing_error(
            f"{name}'s result has shape {_text(result.type.dims)}, which does not "
            f"fit the output of shape {_text(target.type.dims)} (NumPy: "
            "non-broadcastable output operand); write x = x op y instead",
            IrcShapeError,
        )
    value = cast(result, target.irc_dtype)
    if value.type != target.type:  # dims equal by the facts, spelt otherwise
        value = emit(graph.ReshapeOp(value.value, target.type.dims))
    assign(target, value.value)


def _check_same_kind(source: DType, element: DType, name: str) -> None:
    """NumPy's ``casting='same_kind'`` of the result of the ufunc ``name`` to
    its output."""
    if np.can_cast(source.numpy, element.numpy, casting="same_kind"):
        return
    raise tracing_error(
        f"{name}'s result has dtype {source.name}, which NumPy does not cast "
        f"to the output's {element.name} under casting='same_kind' "
        f"(UFuncTypeError); write x = x.astype(np.{source.name}) first, or "
        f"cast the other operand to {element.name}",
        IrcTypeError,
    )


def into_out(
    ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict, out: Any
) -> Tensor:
    """``ufunc(*inputs, out=target)`` for one traced ``target``."""
    name = f"np.{ufunc.__name__}"
    targets = out if isinstance(out, tuple) else (out,)
    if method != "__call__" or len(targets) != 1 or not isinstance(targets[0], Tensor):
        raise tracing_error(
            f"{name}(..., out=...) is supported with one traced array as out= "
            "(not a NumPy array, nor for reductions); write y = "
            f"{name}(...) instead"
        )
    (target,) = targets
    store(target, ufunc(*inputs, **kwargs), name)
    return target


def copyto(target: Any, source: Any, casting: str = "same_kind", where: Any = True):
    """``np.copyto(target, source, casting=, where=)``: ``source`` broadcast
    to ``target``'s shape, cast under ``casting``, written where ``where``
    holds (``np.where(where, source, target)``)."""
    if not isinstance(target, Tensor):
        raise tracing_error(
            "np.copyto into a NumPy array cannot hold traced values; copy into a "
            "traced array (np.zeros_like(x, shape=...))"
        )
    source_dtype = layout.as_tensor(source).irc_dtype
    element = target.irc_dtype
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise tracing_error(f"np.copyto: unknown casting rule {casting!r}")
    if not np.can_cast(source_dtype.numpy, element.numpy, casting=casting):
        raise tracing_error(
            f"np.copyto cannot cast {source_dtype.name} to {element.name} under "
            f"casting={casting!r} (NumPy's TypeError); cast the source first",
            IrcTypeError,
        )
    value = _assigned(source, element, target.type.dims)
    if where is not True:
        value = select(where, value, target)
    assign(target, value.value)


# ----- boolean masks ---------------------------------------------------------------


class MaskRead:
    """``x[mask]`` for a boolean ``mask``: NumPy's result has as many elements
    as the mask has True ones, a size known only at run time. It is kept as
    the whole of ``values`` (``x``, then what elementwise ops with scalars
    made of it), which a write under the same mask consumes as a select:
    ``x[mask] = x[mask] * a`` and ``x[mask] *= a`` are ``np.where(mask, x *
    a, x)``. Every other use is refused with a pointer to ``np.where``; a
    read that leaves the function names ``line``, where it was taken, since
    the line running then is the caller's ``irc.compile``."""

    __slots__ = ("line", "mask", "values")

    #: Traced arrays leave ufuncs and functions of a read to it.
    irc_overrides_tensors = True

    def __init__(self, mask: Tensor, values: Tensor, line: UserLine | None):
        self.mask = mask
        self.values = values
        self.line = line

    @staticmethod
    def of(source: Tensor, mask: Tensor) -> MaskRead:
        return MaskRead(_full_mask(source, mask), copy(source), user_line())

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def ndim(self) -> int:
        return 1

    def refused(self, use: str) -> Exception:
        return tracing_error(
            f"a boolean-mask read x[mask] was {use}: its size is the number of "
            "True elements, known only at run time, so irc supports it only in "
            "elementwise arithmetic with scalars written back under the same "
            "mask (x[mask] = x[mask] * a, x[mask] *= a); compute on whole arrays "
            "with np.where(mask, x, 0) (or np.where(mask, f(x), x)) instead"
        )

    def escaped(self, how: str) -> Exception:
        """The error for a read that leaves the traced code (``how``: by
        which way), at the line that took it."""
        return tracing_error_at(
            self.line,
            f"the boolean-mask read x[mask] taken here is {how}: its size is the "
            "number of True elements, known only at run time, and irc compiles "
            "arrays whose shapes the arguments' shapes decide; keep the shape "
            "with np.where(mask, x, fill), write the masked values in place "
            "with x[mask] = v (or x[mask] *= a), or reduce them with "
            "np.sum(x, where=mask)",
        )

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kw: Any):
        if method != "__call__" or kw:
            raise self.refused(f"given to np.{ufunc.__name__}.{method}")
        operands = [self._operand(i, ufunc) for i in inputs]
        return MaskRead(self.mask, layout.as_tensor(ufunc(*operands)), self.line)

    def _operand(self, value: Any, ufunc: np.ufunc) -> Any:
        """The whole-array operand that stands for ``value`` in an
        elementwise op with this read: its values, or a scalar as it is."""
        if isinstance(value, MaskRead):
            if not same_value(value.mask.value, self.mask.value):
                raise self.refused(
                    f"combined with a read under another mask (np.{ufunc.__name__})"
                )
            return value.values
        if isinstance(value, bool | int | float | SymDim | np.generic):
            return value
        if isinstance(value, Tensor | np.ndarray) and all(
            d == 1 for d in shape_of(value)
        ):
            return (
                layout.reshape(layout.as_tensor(value), ())
                if shape_of(value)
                else value
            )
        raise self.refused(f"combined with a whole array (np.{ufunc.__name__})")

    def __array_function__(self, func: Callable, types: Any, args: tuple, kw: dict):
        raise self.refused(f"given to np.{func.__name__}")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise self.refused(f"used as an array (.{name})")

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise self.refused("converted to a NumPy array")

    def __bool__(self) -> bool:
        raise self.refused("used as a truth value")

    def __len__(self) -> int:
        raise self.refused("given to len()")

    def __iter__(self) -> Any:
        raise self.refused("iterated over")

    def __getitem__(self, key: Any) -> Any:
        raise self.refused("indexed")

    def __setitem__(self, key: Any, value: Any) -> None:
        raise self.refused(
            "assigned into (it is a copy in NumPy, so this write would be lost)"
        )

    def _apply(self, ufunc: np.ufunc, *operands: Any) -> MaskRead:
        return self.__array_ufunc__(ufunc, "__call__", *operands)

    def __add__(self, other: Any) -> MaskRead:
        return self._apply(np.add, self, other)

    def __radd__(self, other: Any) -> MaskRead:
        return self._apply(np.add, other, self)

    def __sub__(self, other: Any) -> MaskRead:
        return self._apply(np.subtract, self, other)

    def __rsub__(self, other: Any) -> MaskRead:
        return self._apply(np.subtract, other, self)

    def __mul__(self, other: Any) -> MaskRead:
        return self._apply(np.multiply, self, other)

    def __rmul__(self, other: Any) -> MaskRead:
        return self._apply(np.multiply, other, self)

    def __truediv__(self, other: Any) -> MaskRead:
        return self._apply(np.true_divide, self, other)

    def __rtruediv__(self, other: Any) -> MaskRead:
        return self._apply(np.true_divide, other, self)

    def __pow__(self, other: Any) -> MaskRead:
        return self._apply(np.power, self, other)

    def __floordiv__(self, other: Any) -> MaskRead:
        return self._apply(np.floor_divide, self, other)

    def __rfloordiv__(self, other: Any) -> MaskRead:
        return self._apply(np.floor_divide, other, self)

    def __mod__(self, other: Any) -> MaskRead:
        return self._apply(np.remainder, self, other)

    def __rmod__(self, other: Any) -> MaskRead:
        return self._apply(np.remainder, other, self)

    def __lt__(self, other: Any) -> MaskRead:
        return self._apply(np.less, self, other)

    def __le__(self, other: Any) -> MaskRead:
        return self._apply(np.less_equal, self, other)

    def __gt__(self, other: Any) -> MaskRead:
        return self._apply(np.greater, self, other)

    def __ge__(self, other: Any) -> MaskRead:
        return self._apply(np.greater_equal, self, other)

    def __abs__(self) -> MaskRead:
        return self._apply(np.absolute, self)

    def __neg__(self) -> MaskRead:
        return self._apply(np.negative, self)

    # In place on a read is in place on NumPy's copy, which Python then
    # assigns back (``x[m] *= a`` is ``x[m] = x[m] * a``, the product cast
    # to x's dtype under casting='same_kind').
    def _in_place(self, ufunc: np.ufunc, other: Any) -> MaskRead:
        result = self._apply(ufunc, self, other)
        name = f"np.{ufunc.__name__}"
        _check_same_kind(result.values.irc_dtype, self.values.irc_dtype, name)
        values = cast(result.values, self.values.irc_dtype)
        return MaskRead(self.mask, values, self.line)

    def __iadd__(self, other: Any) -> MaskRead:
        return self._in_place(np.add, other)

    def __isub__(self, other: Any) -> MaskRead:
        return self._in_place(np.subtract, other)

    def __imul__(self, other: Any) -> MaskRead:
        return self._in_place(np.multiply, other)

    def __itruediv__(self, other: Any) -> MaskRead:
        return self._in_place(np.true_divide, other)

    def __ipow__(self, other: Any) -> MaskRead:
        return self._in_place(np.power, other)

    def __ifloordiv__(self, other: Any) -> MaskRead:
        return self._in_place(np.floor_divide, other)

    def __imod__(self, other: Any) -> MaskRead:
        return self._in_place(np.remainder, other)


def _full_mask(target: Tensor, mask: Tensor) -> Tensor:
    """A mask of ``target``'s shape: NumPy's mask of its leading dims selects
    whole sub-arrays."""
    dims, mask_dims = target.type.dims, mask.type.dims
    if len(mask_dims) > len(dims) or mask_dims != dims[: len(mask_dims)]:
        raise tracing_error(
            f"a boolean mask of shape {_text(mask_dims)} does not match the "
            f"array's shape {_text(dims)} (NumPy: boolean index did not match); "
            "it must have the array's shape or that of its leading dims",
            IrcShapeError,
        )
    trailing = (SymExpr.const(1),) * (len(dims) - len(mask_dims))
    return broadcast_to(layout.reshape(mask, mask_dims + trailing), dims)


def _masked_write(target: Tensor, mask: Tensor, value: Any) -> None:
    full = _full_mask(target, mask)
    if isinstance(value, MaskRead):
        if not same_value(value.mask.value, full.value):
            raise value.refused("assigned under another mask")
        source = cast(value.values, target.irc_dtype)
    else:
        if isinstance(value, Tensor | np.ndarray) and any(
            d != 1 for d in shape_of(value)
        ):
            raise tracing_error(
                "x[mask] = v with an array v needs v to have as many elements as "
                "the mask has True ones, known only at run time; write x = "
                "np.where(mask, v, x) with v of x's shape",
                IrcShapeError,
            )
        source = _assigned(value, target.irc_dtype, ())
    assign(target, select(full, source, target).value)


def same_value(a: SSAValue, b: SSAValue, depth: int = 8) -> bool:
    """Whether two SSA values are provably equal: the same value, or the
    results of the same pure op (name, properties, types) of equal operands
    (``x < 0`` computed twice)."""
    if a == b:
        return True
    op_a, op_b = a.owner, b.owner
    if (
        depth == 0
        or not isinstance(op_a, graph.GraphOp)
        or type(op_a) is not type(op_b)
    ):
        return False
    assert isinstance(op_b, graph.GraphOp)
    return (
        a.type == b.type
        and op_a.properties == op_b.properties
        and op_a.results.index(a) == op_b.results.index(b)
        and len(op_a.operands) == len(op_b.operands)
        and all(
            same_value(x, y, depth - 1) for x, y in zip(op_a.operands, op_b.operands)
        )
    )
