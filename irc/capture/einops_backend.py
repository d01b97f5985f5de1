"""einops on traced arrays: an einops backend for irc's ``Tensor``.

einops finds the backend of a tensor among the subclasses of its
``AbstractBackend`` whose ``framework_name`` is an imported module, asking
each whether the tensor is its type. This module defines that subclass, for
the framework ``irc``; it imports einops, which is not a dependency of irc,
so capture imports this module only once einops has been imported
(``irc.capture.register_einops_backend``).

einops computes shapes in Python, from what ``shape`` returns: irc's symbolic
sizes (``SymDim``) flow through its arithmetic, so ``rearrange(x, 'b (h d)
-> b h d', h=12)`` of an ``[N, 768]`` array gives ``[N, 12, 64]``, and a
product of symbols (``N*M``) splits back into its factors. Each operation
becomes the graph ops NumPy's function of the same name captures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from einops._backends import AbstractBackend

from irc.capture.numpy_api import reduce
from irc.capture.ops import as_dim, broadcast_to, compare
from irc.capture.tensor import SymDim, Tensor
from irc.capture.trace import tracing_error

#: einops' reductions that are NumPy reductions of the same name.
_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "prod"})


class IrcBackend(AbstractBackend):
    """Traced arrays: einops' operations as irc's NumPy functions."""

    framework_name = "irc"

    def is_appropriate_type(self, tensor: Any) -> bool:
        return isinstance(tensor, Tensor)

    def shape(self, x: Tensor) -> tuple[int | SymDim, ...]:
        return x.shape

    def reshape(self, x: Tensor, shape: Sequence[int | SymDim]) -> Tensor:
        return np.reshape(x, tuple(shape))

    def transpose(self, x: Tensor, axes: Sequence[int]) -> Tensor:
        return np.transpose(x, tuple(axes))

    def reduce(self, x: Tensor, operation: str, axes: Sequence[int]) -> Tensor:
        axes = tuple(axes)
        if operation in _REDUCTIONS:
            return getattr(np, operation)(x, axis=axes)
        if operation in ("any", "all"):
            # Logic as NumPy's: the max (any) or min (all) of the truth values.
            truth = x if x.irc_dtype.kind == "b" else compare("ne", x, 0)
            return reduce("max" if operation == "any" else "min", truth, axes)
        raise tracing_error(
            f"einops reduction {operation!r} is not supported on traced arrays; "
            f"irc reduces with {', '.join(sorted(_REDUCTIONS | {'any', 'all'}))}"
        )

    def stack_on_zeroth_dimension(self, tensors: list[Tensor]) -> Tensor:
        return np.stack(tensors)

    def add_axis(self, x: Tensor, new_position: int) -> Tensor:
        return np.expand_dims(x, new_position)

    def add_axes(self, x: Tensor, n_axes: int, pos2len: dict[int, Any]) -> Tensor:
        """New axes of the given lengths (ints or symbolic sizes): a reshape
        and one broadcast, where einops' default tiles."""
        x = np.expand_dims(x, tuple(pos2len)) if pos2len else x
        dims = list(x.type.dims)
        for position, length in pos2len.items():
            dims[position] = as_dim(length, "an einops axis length")
        return broadcast_to(x, dims)

    def tile(self, x: Tensor, repeats: Sequence[int | SymDim]) -> Tensor:
        return np.tile(x, tuple(repeats))

    def concat(self, tensors: list[Tensor], axis: int) -> Tensor:
        return np.concatenate(tensors, axis=axis)

    def is_float_type(self, x: Tensor) -> bool:
        return x.irc_dtype.kind == "f"

    def arange(self, start: int, stop: int) -> np.ndarray:
        return np.arange(start, stop)

    def einsum(self, pattern: str, *x: Tensor) -> Tensor:
        return np.einsum(pattern, *x)
