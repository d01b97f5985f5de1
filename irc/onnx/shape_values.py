"""Shape-valued tensors during import: what ONNX's ``Shape`` gives, known as
a list of sizes (ints and symbolic ``SymDim``s) instead of a traced tensor.

Exporters encode a dynamic reshape as a small subgraph over ``Shape``
(``Shape -> Gather -> Unsqueeze -> Concat -> Reshape``); evaluating that
subgraph on known sizes folds it into the symbolic shape of the reshape, so
no shape arithmetic reaches the IR.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irc.capture.tensor import SymDim


@dataclass(frozen=True)
class ShapeValue:
    """A 0-d or 1-d int64 tensor whose elements are ints and symbolic sizes,
    at least one of them symbolic (all-int values are plain NumPy arrays)."""

    elements: np.ndarray  # dtype object: int | SymDim

    @property
    def shape(self) -> tuple[int, ...]:
        return self.elements.shape

    @property
    def ndim(self) -> int:
        return self.elements.ndim

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.int64)

    def tolist(self) -> Any:
        return self.elements.tolist()


def shape_value(elements: Any) -> np.ndarray | ShapeValue:
    """Sizes as a NumPy int64 array when all are ints, else a ``ShapeValue``."""
    array = np.array(elements, dtype=object)
    flat = array.ravel().tolist()
    if all(isinstance(e, int | np.integer) for e in flat):
        return np.array(array.tolist(), dtype=np.int64).reshape(array.shape)
    return ShapeValue(array)


def known_sizes(value: Any) -> np.ndarray | None:
    """The elements of a known integer value (a NumPy array or scalar, or a
    ``ShapeValue``) as an object array of ints and ``SymDim``s, else None."""
    if isinstance(value, ShapeValue):
        return value.elements
    if isinstance(value, np.generic):  # a NumPy scalar, as eager calls make
        value = np.asarray(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iub":
        return np.array([int(e) for e in value.ravel()], dtype=object).reshape(
            value.shape
        )
    return None


def is_symbolic(value: Any) -> bool:
    return isinstance(value, ShapeValue)


def materialize(value: ShapeValue) -> Any:
    """A ``ShapeValue`` as a traced int64 tensor, for ops that compute on it."""
    parts = [np.add(element, np.int64(0)) for element in value.elements.ravel()]
    stacked = np.stack(
        [np.asarray(p, np.int64) if not _traced(p) else p for p in parts]
    )
    return np.reshape(stacked, value.shape)


def _traced(value: Any) -> bool:
    return not isinstance(value, np.ndarray | np.generic | int)


def dims_list(sizes: Sequence[Any]) -> list[int | SymDim]:
    return [int(s) if isinstance(s, int | np.integer) else s for s in sizes]
