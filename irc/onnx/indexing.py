"""ONNX converters for writes at computed positions (``ScatterND``,
``ScatterElements``), selection (``TopK``, ``NonZero``) and ``BitShift``;
registered by importing this module (``irc.onnx.converters`` does).

The scatters write rows of the data with its indexed axes flattened, at
the offsets their gather counterparts read (``element_offsets``,
``tuple_rows``), through :func:`irc.nn.scatter_rows`. ``TopK`` takes ``k``
rounds of a masked maximum, so ``k`` must be known at import time and is
limited; ``NonZero``'s output size is the count of nonzero elements, so its
input must be known at import time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irc import nn
from irc.capture import layout
from irc.capture.tensor import SymDim
from irc.nn.indexing import REDUCTIONS, extremes
from irc.onnx.converters import (
    Node,
    Value,
    converts,
    coordinates,
    element_offsets,
    normalize,
    shape_of,
    static_ints,
    tensor,
    tuple_rows,
    unsupported,
)
from irc.shapes import as_expr

#: The largest ``k`` TopK unrolls into rounds of a masked maximum.
TOP_K_LIMIT = 128


# ----- scatters ------------------------------------------------------------------------


def _reduction(node: Node) -> str:
    """ONNX's ``reduction`` names :func:`irc.nn.scatter_rows`'s."""
    reduction = node.attr("reduction", "none")
    if reduction not in REDUCTIONS:
        raise unsupported(
            node, f"reduction={reduction!r}", f"use one of {list(REDUCTIONS)}"
        )
    return reduction


@converts("ScatterElements", "Scatter")
def scatter_elements(node: Node, operands: list[Value]) -> list[Value]:
    """The updates written (or combined) into the data flattened, at the
    offsets GatherElements would read them from (``Scatter`` is its
    opset 9-10 name)."""
    data, indices, updates = (tensor(o) for o in operands)
    dims = shape_of(data)
    axis = normalize(node.attr("axis", 0), len(dims))
    offsets = np.reshape(element_offsets(dims, indices, axis), (-1,))
    flat = nn.scatter_rows(
        np.reshape(data, (-1,)),
        offsets,
        np.reshape(updates, (-1,)),
        _reduction(node),
    )
    return [np.reshape(flat, dims)]


@converts("ScatterND")
def scatter_nd(node: Node, operands: list[Value]) -> list[Value]:
    """The update slices written (or combined) into the rows of the data,
    its indexed axes flattened, that the index tuples name."""
    data, indices, updates = (tensor(o) for o in operands)
    dims = shape_of(data)
    rows = tuple_rows(node, dims, indices, 0)
    table = np.reshape(data, (-1, *dims[shape_of(indices)[-1] :]))
    return [np.reshape(nn.scatter_rows(table, rows, updates, _reduction(node)), dims)]


# ----- selection -----------------------------------------------------------------------


@converts("TopK", static=(1,))
def top_k(node: Node, operands: list[Value]) -> list[Value]:
    """The ``k`` largest (``largest=0``: smallest) elements along ``axis``
    and their int64 indices, sorted, the lower index first among equals:
    ``k`` rounds, each taking the extremum of the elements not yet taken
    and the first index that holds it. NaN ranks first (``np.max`` and
    ``np.min`` propagate it), whichever ``largest`` asks."""
    x = tensor(operands[0])
    dims = shape_of(x)
    axis = normalize(node.attr("axis", -1), len(dims))
    k = node.attr("k") if node.opset < 10 else static_ints(node, operands[1], "k")[0]
    _check_k(node, k, dims[axis])
    largest = bool(node.attr("largest", 1))
    positions = coordinates(dims, axis)
    taken: Value = None
    values, indices = [], []
    for _ in range(k):
        value, index = _extremum(x, taken, axis, largest)
        taken = _or(taken, np.equal(positions, index))
        values.append(value)
        indices.append(index)
    return [np.concatenate(values, axis), np.concatenate(indices, axis)]


def _check_k(node: Node, k: int, extent: Any) -> None:
    """``0 <= k <= TOP_K_LIMIT`` and ``k`` no more than the axis holds (a
    run-time guard where the axis is symbolic)."""
    if not 0 <= k <= TOP_K_LIMIT:
        raise unsupported(
            node,
            f"k={k}",
            f"irc unrolls k rounds of a maximum and takes 0 <= k <= {TOP_K_LIMIT}",
        )
    if isinstance(extent, SymDim):
        layout.guard(
            as_expr(k), "<=", extent.expr, f"TopK's k={k} must not exceed the axis"
        )
    elif k > extent:
        raise unsupported(node, f"k={k} larger than its axis ({extent} elements)")


def _extremum(x: Value, taken: Value, axis: int, largest: bool) -> tuple[Value, Value]:
    """The extremum of ``x`` along ``axis`` apart from ``taken``, and the
    first index untaken that holds it (a taken element can equal it: the
    identity stands in for those)."""
    lowest, highest = extremes(np.dtype(x.dtype))
    reduce = np.max if largest else np.min
    candidates = (
        x if taken is None else np.where(taken, lowest if largest else highest, x)
    )
    best = reduce(candidates, axis=axis, keepdims=True)
    holds = np.equal(x, best)
    if np.dtype(x.dtype).kind == "f":
        holds = np.logical_or(holds, np.logical_and(np.isnan(x), np.isnan(best)))
    if taken is not None:
        holds = np.logical_and(holds, np.logical_not(taken))
    index = np.argmax(holds.astype(np.int32), axis=axis, keepdims=True)
    return best, index.astype(np.int64)


def _or(mask: Value, other: Value) -> Value:
    return other if mask is None else np.logical_or(mask, other)


@converts("NonZero", static=(0,))
def non_zero(node: Node, operands: list[Value]) -> list[Value]:
    """The int64 coordinates of the nonzero elements, one row per axis, of
    an input known at import time (a traced input is refused: the output's
    size would depend on the data)."""
    x = operands[0]
    if not isinstance(x, np.ndarray | np.generic):
        raise unsupported(
            node,
            "an input computed at run time",
            "its output's size is the count of nonzero elements, which depends "
            "on the data: irc needs the input known at import time (a constant, "
            "or the graph input bound with irc.onnx.load(model, "
            "constants={name: array}))",
        )
    return [np.argwhere(np.asarray(x)).T.astype(np.int64)]


# ----- bit shifts ----------------------------------------------------------------------


@converts("BitShift")
def bit_shift(node: Node, operands: list[Value]) -> list[Value]:
    """NumPy's shifts, which define what C leaves undefined as ONNX does
    (a shift by the width or more gives 0, or -1 for a negative value
    shifted right)."""
    x, shift = (tensor(o) for o in operands)
    direction = node.attr("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise unsupported(node, f"direction={direction!r}", "use LEFT or RIGHT")
    return [(np.left_shift if direction == "LEFT" else np.right_shift)(x, shift)]
