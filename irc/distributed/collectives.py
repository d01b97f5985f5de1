"""The collectives of traced code, as jax.lax spells them: ``irc.psum``,
``irc.pmean``, ``irc.pmax``, ``irc.pmin``, ``irc.all_gather``,
``irc.psum_scatter``, ``irc.all_to_all``, ``irc.pbroadcast``,
``irc.ppermute`` and ``irc.axis_index``.

Each is called inside a function given to ``irc.shard_map``, on the
rank's own blocks, and names the mesh axes it communicates over; it
becomes one op of the collective dialect (``irc.dialects.collective``).
Those taking an array take a pytree of them too, as jax's do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, StringAttr, UnitAttr, i32, i64
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

from irc import pytree
from irc.capture.layout import as_tensor
from irc.capture.ops import emit
from irc.capture.tensor import Tensor
from irc.capture.trace import active_trace, tracing_error
from irc.dialects.collective import (
    AllGatherOp,
    AllReduceOp,
    AllToAllOp,
    AxisIndexOp,
    BroadcastOp,
    CollectiveOp,
    PpermuteOp,
    ReduceScatterOp,
)
from irc.dialects.graph import TensorType
from irc.distributed.mesh import Mesh, current_mesh
from irc.errors import IrcError
from irc.shapes import ShapeError

__all__ = [
    "all_gather",
    "all_to_all",
    "axis_index",
    "pbroadcast",
    "pmax",
    "pmean",
    "pmin",
    "ppermute",
    "psum",
    "psum_scatter",
]

AxisName = str | Sequence[str]


def _context(what: str, axis_name: AxisName) -> tuple[Mesh, tuple[str, ...]]:
    mesh = current_mesh(what)
    if active_trace() is None:
        raise IrcError(
            f"{what} runs in traced code only: inside a function given to "
            "irc.shard_map, called on a mesh or compiled"
        )
    try:
        return mesh, mesh.check_axes(axis_name)
    except IrcError as err:
        raise tracing_error(f"{what}: {err}") from err


def _collective(
    what: str,
    x: Any,
    axis_name: AxisName,
    make: Callable[[Tensor, Mesh, tuple[str, ...]], CollectiveOp],
) -> Any:
    """``make``'s op over every leaf of ``x``."""
    mesh, axes = _context(what, axis_name)

    def one(leaf: Any) -> Tensor:
        value = as_tensor(leaf)
        try:
            return emit(make(value, mesh, axes))
        except (VerifyException, ShapeError) as err:
            raise tracing_error(f"{what}: {err}") from err

    return pytree.map_leaves(one, x)


def _reduction(what: str, reduction: str) -> Callable[[Any, AxisName], Any]:
    def reduce(x: Any, axis_name: AxisName) -> Any:
        leaves, treedef = pytree.flatten(x)
        if len(leaves) > 1:
            return pytree.unflatten(treedef, _bucketed(what, reduce, leaves, axis_name))
        return _collective(
            what,
            x,
            axis_name,
            lambda v, mesh, axes: AllReduceOp.make(v.value, mesh.attr, axes, reduction),
        )

    reduce.__name__ = what.removeprefix("irc.")
    reduce.__doc__ = (
        f"The {reduction} of ``x`` (a pytree of arrays) over the ranks of each "
        "group along the mesh axes ``axis_name``, on every member "
        f"(jax.lax.{what.removeprefix('irc.')})."
    )
    return reduce


def _bucketed(
    what: str,
    reduce: Callable[[Any, AxisName], Any],
    leaves: list[Any],
    axis_name: AxisName,
) -> list[Any]:
    """The reduction of several arrays as one all-reduce per element type:
    flattened, concatenated, reduced, and cut apart again (one collective's
    latency instead of one per array, as jax reduces a pytree at once)."""
    _context(what, axis_name)
    tensors = [as_tensor(leaf) for leaf in leaves]
    results: list[Any] = [None] * len(tensors)
    by_type: dict[Any, list[int]] = {}
    for index, tensor in enumerate(tensors):
        by_type.setdefault(tensor.value.type.element_type, []).append(index)
    for indices in by_type.values():
        if len(indices) == 1:
            results[indices[0]] = reduce(tensors[indices[0]], axis_name)
            continue
        flat = np.concatenate([tensors[i].reshape(-1) for i in indices])
        reduced = reduce(flat, axis_name)
        offset = 0
        for i in indices:
            size = tensors[i].size
            results[i] = reduced[offset : offset + size].reshape(tensors[i].shape)
            offset = offset + size
    return results


psum = _reduction("irc.psum", "sum")
pmean = _reduction("irc.pmean", "mean")
pmax = _reduction("irc.pmax", "max")
pmin = _reduction("irc.pmin", "min")


def all_gather(
    x: Any, axis_name: AxisName, *, axis: int = 0, tiled: bool = False
) -> Any:
    """The members' ``x`` stacked along a new axis ``axis`` (concatenated
    along ``axis`` with ``tiled``), on every member (jax.lax.all_gather)."""

    def make(v: Tensor, mesh: Mesh, axes: tuple[str, ...]) -> CollectiveOp:
        dim = _axis(axis, v.value.type.rank + (0 if tiled else 1), "irc.all_gather")
        return AllGatherOp.make(v.value, mesh.attr, axes, dim, tiled)

    return _collective("irc.all_gather", x, axis_name, make)


def psum_scatter(
    x: Any, axis_name: AxisName, *, scatter_dimension: int = 0, tiled: bool = False
) -> Any:
    """The sum of the members' ``x``, of which member ``i`` keeps block
    ``i`` along ``scatter_dimension`` (entry ``i`` without ``tiled``)
    (jax.lax.psum_scatter)."""

    def make(v: Tensor, mesh: Mesh, axes: tuple[str, ...]) -> CollectiveOp:
        dim = _axis(scatter_dimension, v.value.type.rank, "irc.psum_scatter")
        trace = active_trace()
        assert trace is not None
        properties = _scatter_properties(dim, tiled)
        return ReduceScatterOp(v.value, mesh.attr, axes, properties, facts=trace.facts)

    return _collective("irc.psum_scatter", x, axis_name, make)


def _scatter_properties(dim: int, tiled: bool) -> dict[str, Attribute]:
    props: dict[str, Attribute] = {
        "reduction": StringAttr("sum"),
        "dim": IntegerAttr(dim, i64),
    }
    if tiled:
        props["tiled"] = UnitAttr()
    return props


def all_to_all(
    x: Any,
    axis_name: AxisName,
    split_axis: int,
    concat_axis: int,
    *,
    tiled: bool = False,
) -> Any:
    """Member ``j`` gets block ``i`` of ``split_axis`` of every member ``i``'s
    ``x``... concatenated along ``concat_axis`` (jax.lax.all_to_all with
    ``tiled=True``, the form irc supports)."""
    if not tiled:
        raise tracing_error(
            "irc.all_to_all supports tiled=True only (the split axis is cut into "
            "one block per member, the blocks received are concatenated); "
            "reshape around it for jax's untiled form"
        )

    def make(v: Tensor, mesh: Mesh, axes: tuple[str, ...]) -> CollectiveOp:
        rank = v.value.type.rank
        split = _axis(split_axis, rank, "irc.all_to_all")
        concat = _axis(concat_axis, rank, "irc.all_to_all")
        return AllToAllOp.make(v.value, mesh.attr, axes, split, concat)

    return _collective("irc.all_to_all", x, axis_name, make)


def pbroadcast(x: Any, axis_name: AxisName, source: int = 0) -> Any:
    """Member ``source``'s ``x``, on every member of each group."""

    def make(v: Tensor, mesh: Mesh, axes: tuple[str, ...]) -> CollectiveOp:
        return BroadcastOp.make(v.value, mesh.attr, axes, source)

    return _collective("irc.pbroadcast", x, axis_name, make)


def ppermute(x: Any, axis_name: AxisName, perm: Sequence[tuple[int, int]]) -> Any:
    """For each ``(source, destination)`` of ``perm``, ``destination`` gets
    ``source``'s ``x``; a member no pair reaches gets zeros
    (jax.lax.ppermute)."""
    pairs = [(int(s), int(d)) for s, d in perm]

    def make(v: Tensor, mesh: Mesh, axes: tuple[str, ...]) -> CollectiveOp:
        return PpermuteOp.make(v.value, mesh.attr, axes, pairs)

    return _collective("irc.ppermute", x, axis_name, make)


def axis_index(axis_name: AxisName) -> Tensor:
    """This rank's index along the mesh axes ``axis_name`` (an ``int32``
    scalar; over several axes, their coordinates linearized in order)."""
    mesh, axes = _context("irc.axis_index", axis_name)
    return emit(AxisIndexOp(mesh.attr, axes, TensorType([], i32)))


def _axis(axis: int, rank: int, what: str) -> int:
    if not -rank <= axis < rank:
        raise tracing_error(f"{what}: axis {axis} is out of range for rank {rank}")
    return axis % rank
