"""Writes at traced scalar indices: ``x[i] = v`` where ``i`` is a 0-d
integer array known only at run time (a ``fori_loop`` index, an ``argmax``),
as ``x.at[i].set(v)`` is in JAX.

An index array of rank 0 selects one position along its axis, so unlike
``x[idx] = v`` with an array of indices there are no repeated indices to
order (the scatter that ``irc.capture.writes`` refuses). The write is built
from ops every level already has, so it lowers, fuses and differentiates
like any other:

1. ``row = np.take(x, i, axis)``: the slice of ``x`` the index selects
   (``graph.take``, with NumPy's wrapping of a negative index);
2. ``row[rest] = v``: the rest of the key written into it as an ordinary
   write (basic, or again dynamic for a second traced index);
3. ``x = np.where(iota(axis) == i, row, x)``: the new slice put back with a
   one-hot ``graph.select`` along the axis.

The select reads and writes all of ``x``, so a write costs ``x``'s size, not
the slice's: right for correctness everywhere, not a fast scatter. An index
outside ``[-n, n)`` is an error of the reference interpreter's ``take`` (as
a read at that index is); the emitted kernels do not check it, and the
one-hot mask then matches no position, so nothing is written.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irc.capture import layout, ops
from irc.capture.tensor import SymDim, Tensor
from irc.capture.views import assign
from irc.dialects import graph
from irc.primitives.builtin import ADD

__all__ = ["dynamic_setitem", "is_dynamic_key"]


def is_dynamic_key(items: tuple) -> bool:
    """Whether every index array of the (expanded) key is a 0-d integer, at
    least one of them traced: a write that ``dynamic_setitem`` makes."""
    arrays = [item for item in items if layout.is_index_array(item)]
    return (
        bool(arrays)
        and all(_is_scalar_index(item) for item in arrays)
        and any(isinstance(item, Tensor) for item in arrays)
    )


def _is_scalar_index(item: Any) -> bool:
    if isinstance(item, Tensor):
        return item.type.rank == 0 and item.irc_dtype.kind == "i"
    if isinstance(item, np.ndarray):
        return item.ndim == 0 and item.dtype.kind in "iu"
    return False


def dynamic_setitem(target: Tensor, items: tuple, value: Any) -> None:
    """``target[items] = value`` for a key that ``is_dynamic_key`` accepts
    (expanded by ``layout.expand_key``)."""
    from irc.capture.writes import setitem  # writes dispatches here

    # A constant 0-d index is an int: NumPy indexes with it as with one.
    items = tuple(int(item) if isinstance(item, np.ndarray) else item for item in items)
    position = next(k for k, item in enumerate(items) if isinstance(item, Tensor))
    axis = sum(1 for item in items[:position] if item is not None)
    index = _wrapped(items[position], target.type.dims[axis])
    row = layout.take(target, index, axis)
    setitem(row, items[:position] + items[position + 1 :], value)
    assign(target, _put_back(target, row, index, axis).value)


def _wrapped(index: Tensor, extent: Any) -> Tensor:
    """``index`` with NumPy's wrapping of a negative one (``i + n``), so
    that the read and the one-hot mask name the same position."""
    shifted = ops.binary(ADD, index, SymDim(extent))
    return ops.select(ops.compare("lt", index, 0), shifted, index)


def _put_back(target: Tensor, row: Tensor, index: Tensor, axis: int) -> Tensor:
    """``target`` with ``row`` at ``index`` along ``axis``: a one-hot select,
    elementwise, so it fuses into the kernel that computes ``row``."""
    dims = target.type.dims
    positions = ops.emit(
        graph.IotaOp(axis, graph.TensorType(dims, index.type.element_type))
    )
    mask = ops.compare("eq", positions, index)
    spread = ops.broadcast_to(layout.expand_dims(row, axis), dims)
    return ops.select(mask, spread, target)
