"""Writes at computed rows (scatters), a NumPy decomposition each (see
:mod:`irc.nn`), shared by the ONNX importer's ``ScatterND`` and
``ScatterElements`` and the torch importer's ``scatter`` and ``index_put``.

irc's one write at data-dependent positions is ``np.add.at`` along the first
axis (a ``graph.scatter_add``): a frontend flattens the axes it indexes into
rows and calls :func:`scatter_rows`. Replacing is adding, where a row is
written, with the sum of its updates (a row written twice gets the sum:
torch and ONNX leave which update wins undefined). A product, maximum or
minimum has no scatter of its own: each row compares itself with every
index, reducing the updates that name it, which costs rows x updates
comparisons (fusion keeps them in one kernel; nothing that size is stored).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import irc.capture.numpy_api  # noqa: F401  (registers CREATION's traced versions)
from irc.capture import layout
from irc.capture.intercept import CREATION
from irc.capture.tensor import Tensor

__all__ = ["REDUCTIONS", "extremes", "scatter_rows"]

Value = Any

_arange = CREATION["arange"](np.arange)

#: How an update combines with the row it is written to.
REDUCTIONS = ("none", "add", "mul", "max", "min")


def scatter_rows(
    table: Value, rows: Value, updates: Value, reduction: str = "none"
) -> Value:
    """``table`` with ``updates`` (of shape ``rows.shape + table.shape[1:]``)
    combined into the rows ``rows`` (negative ones counted from the end) of
    its first axis, by ``reduction`` (one of :data:`REDUCTIONS`)."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction={reduction!r}: expected one of {REDUCTIONS}")
    if isinstance(table, np.ndarray) and any(
        isinstance(v, Tensor) for v in (rows, updates)
    ):
        table = layout.as_tensor(table)  # a constant written at traced rows
    if np.dtype(table.dtype) == np.bool_:
        # Booleans combine as integers (a sum is an or, a product an and).
        as_ints = scatter_rows(
            table.astype(np.int32), rows, updates.astype(np.int32), reduction
        )
        return np.not_equal(as_ints, 0)
    if reduction == "none":
        return _replaced(table, rows, updates)
    if reduction == "add":
        result = np.copy(table)
        np.add.at(result, rows, updates)
        return result
    return _reduced(table, rows, updates, reduction)


def _replaced(table: Value, rows: Value, updates: Value) -> Value:
    """The sum of a row's updates where it has any (counted by a scatter of
    ones), ``table``'s row elsewhere."""
    written = np.zeros_like(
        _flattened(table[(slice(None), *[0] * (table.ndim - 1))]), np.int32
    )
    np.add.at(written, rows, 1)
    sums = np.zeros_like(table)
    np.add.at(sums, rows, updates)
    mask = np.reshape(np.greater(written, 0), [table.shape[0], *[1] * (table.ndim - 1)])
    return np.where(mask, sums, table)


def _reduced(table: Value, rows: Value, updates: Value, reduction: str) -> Value:
    """Each row's product, maximum or minimum of the updates whose index
    names it (a reduction over all updates, the others read as the
    identity), combined with the row, which no identity changes."""
    extent = table.shape[0]
    count = math.prod(rows.shape)
    rest = list(table.shape[1:])
    flat_rows = np.reshape(rows, [count])
    flat_rows = np.where(np.less(flat_rows, 0), flat_rows + extent, flat_rows)
    names = np.equal(
        np.reshape(_arange(extent, dtype=np.int64), [extent, 1]),
        np.reshape(flat_rows.astype(np.int64), [1, count]),
    )
    mask = np.reshape(names, [extent, count, *[1] * len(rest)])
    candidates = np.reshape(updates, [1, count, *rest])
    dtype = np.dtype(table.dtype)
    if reduction == "mul":
        named = np.where(mask, candidates, 1)
        return table * np.prod(named, axis=1, dtype=dtype)
    lowest, highest = extremes(dtype)
    if reduction == "max":
        return np.maximum(table, np.max(np.where(mask, candidates, lowest), axis=1))
    return np.minimum(table, np.min(np.where(mask, candidates, highest), axis=1))


def extremes(dtype: np.dtype) -> tuple[Any, Any]:
    """The identities of a maximum and a minimum in ``dtype`` (its least
    and greatest values)."""
    if dtype.kind == "f":
        return -np.inf, np.inf
    limits = np.iinfo(dtype)
    return limits.min, limits.max


def _flattened(x: Value) -> Value:
    return np.reshape(x, [math.prod(x.shape)])
