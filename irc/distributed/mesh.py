"""``irc.Mesh`` and ``irc.PartitionSpec``: the ranks of a sharded program
and how an array's dims are split over them, in jax's spelling.

A mesh arranges the ranks of a ``torch.distributed`` job (or, in one
process, simulated ranks) in a grid with named axes: ``irc.Mesh((2, 2),
("data", "model"))`` puts rank ``r`` at the row-major coordinates of ``r``.
A ``PartitionSpec`` says, per dim of an array, which mesh axes split it:
``P("data", None)`` splits dim 0 into one block per coordinate of
``data`` and keeps dim 1 whole; an axis not named replicates the array
along it. See docs/distributed.md.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from irc.dialects.collective import MeshAttr
from irc.errors import IrcError

__all__ = ["Mesh", "PartitionSpec", "current_mesh"]


class Mesh:
    """The ranks of a sharded program as a grid with named axes.

    Under ``torchrun`` (``torch.distributed`` initialized), the mesh covers
    the job's ranks, whose number must be the mesh's size; elsewhere it is
    simulated: a sharded function called on it runs every rank as a thread
    of this process, which is how a program is checked on one machine.
    """

    def __init__(self, shape: int | Sequence[int], axis_names: str | Sequence[str]):
        sizes = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if len(sizes) != len(names) or not names:
            raise IrcError(
                f"irc.Mesh needs one name per axis: shape {sizes}, names {names}"
            )
        if len(set(names)) != len(names) or any(not n.isidentifier() for n in names):
            raise IrcError(
                f"irc.Mesh's axis names must be distinct identifiers, not {names}"
            )
        if any(size < 1 for size in sizes):
            raise IrcError(f"irc.Mesh's axis sizes must be positive, not {sizes}")
        self.shape = sizes
        self.axis_names = names

    @property
    def size(self) -> int:
        """The number of ranks."""
        return math.prod(self.shape)

    @property
    def attr(self) -> MeshAttr:
        """The mesh as the IR spells it (``#collective.mesh<...>``)."""
        return MeshAttr(self.axis_names, self.shape)

    def axis_size(self, axes: str | Sequence[str]) -> int:
        """How many ranks a group over ``axes`` has."""
        return self.attr.group_size(self.check_axes(axes))

    def check_axes(self, axes: str | Sequence[str]) -> tuple[str, ...]:
        """``axes`` as a tuple of this mesh's axis names, or an error that
        names the mesh's."""
        named = (axes,) if isinstance(axes, str) else tuple(axes)
        unknown = [a for a in named if a not in self.axis_names]
        if unknown or not named or len(set(named)) != len(named):
            raise IrcError(
                f"mesh axes {list(named)}: each must be one of this mesh's "
                f"{list(self.axis_names)}, once"
            )
        return named

    @property
    def is_distributed(self) -> bool:
        """Whether this process is one rank of a ``torch.distributed`` job
        (else the mesh is simulated in this process)."""
        from irc.runtime import distributed

        return distributed.initialized()

    def __repr__(self) -> str:
        axes = ", ".join(f"{n}={s}" for n, s in zip(self.axis_names, self.shape))
        return f"irc.Mesh({axes})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and (self.shape, self.axis_names) == (
            other.shape,
            other.axis_names,
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.axis_names))


@dataclass(frozen=True, init=False)
class PartitionSpec:
    """``P("data", None)``: per dim of an array, the mesh axes that split
    it (a name, a tuple of names, or None for a whole dim). Dims past the
    entries are whole; ``P()`` replicates the array on every rank."""

    entries: tuple[tuple[str, ...], ...]

    def __init__(self, *entries: str | Sequence[str] | None):
        normal = tuple(
            () if e is None else (e,) if isinstance(e, str) else tuple(e)
            for e in entries
        )
        object.__setattr__(self, "entries", normal)

    def axes(self) -> tuple[str, ...]:
        """Every mesh axis that splits some dim."""
        return tuple(a for entry in self.entries for a in entry)

    def __repr__(self) -> str:
        def text(entry: tuple[str, ...]) -> str:
            if not entry:
                return "None"
            return repr(entry[0]) if len(entry) == 1 else repr(entry)

        return f"P({', '.join(text(e) for e in self.entries)})"

    def check(self, mesh: Mesh, rank: int, what: str) -> None:
        """That the spec fits ``mesh`` and an array of ``rank`` dims."""
        if len(self.entries) > rank:
            raise IrcError(
                f"{what}: {self!r} names {len(self.entries)} dims of an array of {rank}"
            )
        used = self.axes()
        if len(set(used)) != len(used):
            raise IrcError(f"{what}: {self!r} splits by a mesh axis twice")
        for entry in self.entries:
            if entry:
                mesh.check_axes(entry)

    def entry(self, dim: int) -> tuple[str, ...]:
        """The mesh axes splitting ``dim`` (none past the entries)."""
        return self.entries[dim] if dim < len(self.entries) else ()

    def parts(self, mesh: Mesh, dim: int) -> int:
        """Into how many blocks ``dim`` is split."""
        entry = self.entry(dim)
        return mesh.attr.group_size(entry) if entry else 1

    def _slices(
        self, mesh: Mesh, rank: int, block_shape: Sequence[int]
    ) -> tuple[slice, ...]:
        """Where rank ``rank``'s block lies in the global array."""
        coordinates = mesh.attr.coordinates(rank)
        slices = []
        for dim, size in enumerate(block_shape):
            position = _linear(mesh, coordinates, self.entry(dim))
            slices.append(slice(position * size, (position + 1) * size))
        return tuple(slices)

    def block(self, mesh: Mesh, array: np.ndarray, rank: int, what: str) -> np.ndarray:
        """Rank ``rank``'s block of the global ``array``."""
        self.check(mesh, array.ndim, what)
        shape = []
        for dim, size in enumerate(array.shape):
            parts = self.parts(mesh, dim)
            if size % parts:
                raise IrcError(
                    f"{what}: dim {dim} of size {size} does not split into {parts} "
                    f"equal blocks over {list(self.entry(dim))} ({self!r})"
                )
            shape.append(size // parts)
        # (np.ascontiguousarray would make a 0-d block 1-d.)
        return np.array(array[self._slices(mesh, rank, shape)], copy=True, order="C")

    def assemble(
        self, mesh: Mesh, blocks: Sequence[np.ndarray], what: str
    ) -> np.ndarray:
        """The global array whose blocks (one per rank, in rank order) are
        ``blocks``: along an axis the spec does not name the blocks are
        replicas, and the one at coordinate 0 is taken."""
        first = np.asarray(blocks[0])
        self.check(mesh, first.ndim, what)
        shape = [size * self.parts(mesh, d) for d, size in enumerate(first.shape)]
        result = np.empty(shape, first.dtype)
        used = set(self.axes())
        for rank, block in enumerate(blocks):
            coordinates = mesh.attr.coordinates(rank)
            if any(
                coordinates[i] != 0
                for i, name in enumerate(mesh.axis_names)
                if name not in used
            ):
                continue
            result[self._slices(mesh, rank, first.shape)] = block
        return result


def _linear(mesh: Mesh, coordinates: Sequence[int], axes: Sequence[str]) -> int:
    """The block index of a rank at ``coordinates`` along ``axes``."""
    position = 0
    for axis in axes:
        at = mesh.axis_names.index(axis)
        position = position * mesh.shape[at] + coordinates[at]
    return position


_current: contextvars.ContextVar[Mesh | None] = contextvars.ContextVar(
    "irc_current_mesh", default=None
)


@contextlib.contextmanager
def using_mesh(mesh: Mesh) -> Iterator[None]:
    """Resolve the axis names of collectives in the code inside on ``mesh``."""
    token = _current.set(mesh)
    try:
        yield
    finally:
        _current.reset(token)


def current_mesh(what: str) -> Mesh:
    """The mesh of the ``shard_map`` being traced, or an error saying that
    ``what`` (``irc.psum``, ...) belongs inside one."""
    mesh = _current.get()
    if mesh is None:
        raise IrcError(
            f"{what} communicates over the axes of a mesh: call it inside a "
            "function given to irc.shard_map(f, mesh, in_specs, out_specs)"
        )
    return mesh
