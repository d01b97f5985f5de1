"""Running sharded programs as the processes of a ``torch.distributed`` job.

Each process of a ``torchrun`` job is one rank of the mesh. The emitted
launchers call ``torch.distributed`` themselves (their prelude's
``_irc_collective``); the reference interpreters run a collective through
``TorchTransport``, which gathers every rank's value (one
``all_gather_object`` on the default group: each rank of an SPMD program
meets the same collectives in the same order) and lets
``irc.interpreters.collective.combine`` compute the result, as the
simulated ranks do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from irc.errors import IrcError
from irc.interpreters.collective import RankContext, running_as


def _dist() -> Any:
    import torch.distributed as dist

    return dist


def initialized() -> bool:
    """Whether this process is a rank of an initialized ``torch.distributed``
    job."""
    try:
        dist = _dist()
    except ImportError:
        return False
    return bool(dist.is_available() and dist.is_initialized())


def this_rank(mesh: Any) -> int:
    """This process's rank, checked against the size of ``mesh`` (an
    ``irc.Mesh``)."""
    if not initialized():
        raise IrcError(
            f"{mesh!r} runs one process per rank: start the script with torchrun "
            "and call torch.distributed.init_process_group first (or call the "
            "sharded function on global arrays to simulate the mesh in this "
            "process)"
        )
    dist = _dist()
    world = dist.get_world_size()
    if world != mesh.size:
        raise IrcError(
            f"{mesh!r} has {mesh.size} ranks but this torch.distributed job has "
            f"{world}: start it with torchrun --nproc-per-node {mesh.size}"
        )
    return int(dist.get_rank())


class TorchTransport:
    """A collective's values from every rank of the job, for the reference
    interpreters (torch.distributed's object collectives: any backend)."""

    def exchange(
        self, rank: int, members: Sequence[int], value: np.ndarray
    ) -> list[np.ndarray]:
        dist = _dist()
        gathered: list[Any] = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, np.asarray(value))
        return [np.asarray(gathered[m]) for m in members]


@contextlib.contextmanager
def running_on_process_group(rank: int, world_size: int) -> Iterator[None]:
    """Run the code inside as ``rank`` of this ``torch.distributed`` job."""
    with running_as(RankContext(rank, world_size, TorchTransport())):
        yield


def gather_objects(value: Any) -> list[Any]:
    """Every rank's ``value`` (as NumPy arrays), in rank order."""
    dist = _dist()
    gathered: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, _to_numpy(value))
    return gathered


def _to_numpy(value: Any) -> Any:
    from irc import pytree

    def leaf(x: Any) -> Any:
        if hasattr(x, "detach"):
            return x.detach().cpu().numpy()
        return np.asarray(x)

    return pytree.map_leaves(leaf, value)
