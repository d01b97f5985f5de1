"""Running the collective dialect's ops: their semantics on NumPy arrays, the
ranks a program runs as, and N ranks simulated in one process.

A collective op needs the values of the other members of its group. Where
they come from is a ``Transport``: ``SimulatedTransport`` when the ranks
are threads of this process (``simulate``, which is how ``check_pass``,
FileCheck tests and ``irc.Mesh.simulated`` run a sharded program), or
``irc.runtime.distributed``'s transport over ``torch.distributed`` when each
rank is a process. Either way the result is computed here, by ``combine``,
from every member's value: one spelling of each collective's meaning, which
the emitted launchers' ``torch.distributed`` calls are tested against.

The rank a program runs as is a context variable (``running_as``), so the
interpreters of every level run collectives without a new argument, and
threads simulating different ranks do not see each other's.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation

from irc.dialects.collective import (
    AllGatherOp,
    AllReduceOp,
    AllToAllOp,
    AxisIndexOp,
    BroadcastOp,
    CollectiveOp,
    MeshAttr,
    PpermuteOp,
    ReduceScatterOp,
)
from irc.errors import ExecutionError

T = TypeVar("T")

#: How long a simulated rank waits for the others at a collective before
#: the run is declared stuck (ranks that run different collectives).
SIMULATION_TIMEOUT_S = 60.0


# --------------------------------------------------------------------------
# Semantics
# --------------------------------------------------------------------------


def _reduce(values: Sequence[np.ndarray], reduction: str) -> np.ndarray:
    stacked = np.stack(values)
    if reduction == "sum":
        return stacked.sum(axis=0, dtype=stacked.dtype)
    if reduction == "max":
        return stacked.max(axis=0)
    if reduction == "min":
        return stacked.min(axis=0)
    if reduction == "mean":
        total = stacked.sum(axis=0, dtype=stacked.dtype)
        if np.issubdtype(stacked.dtype, np.integer):
            return (total // len(values)).astype(stacked.dtype)
        return (total / np.asarray(len(values), stacked.dtype)).astype(stacked.dtype)
    raise ExecutionError(f"unknown reduction {reduction!r}")


def combine(
    kind: str, parameters: dict[str, Any], values: Sequence[np.ndarray], index: int
) -> np.ndarray:
    """What member ``index`` of a group gets from collective ``kind`` (the
    op's name without its dialect) with ``parameters``, given every
    member's value in member order: the meaning of each collective."""
    members = len(values)
    if kind == "all_reduce":
        return _reduce(values, parameters["reduction"])
    if kind == "all_gather":
        dim = parameters["dim"]
        joined = np.concatenate if parameters["tiled"] else np.stack
        return joined(values, axis=dim)
    if kind == "reduce_scatter":
        total = _reduce(values, parameters["reduction"])
        dim = parameters["dim"]
        if not parameters["tiled"]:
            return np.take(total, index, axis=dim)
        return np.split(total, members, axis=dim)[index]
    if kind == "all_to_all":
        split, concat = parameters["split_dim"], parameters["concat_dim"]
        received = [np.split(v, members, axis=split)[index] for v in values]
        return np.concatenate(received, axis=concat)
    if kind == "broadcast":
        return np.array(values[parameters["root"]], copy=True)
    if kind == "ppermute":
        for source, target in parameters["pairs"]:
            if target == index:
                return np.array(values[source], copy=True)
        return np.zeros_like(values[index])
    raise ExecutionError(f"unknown collective {kind!r}")


# --------------------------------------------------------------------------
# Ranks and transports
# --------------------------------------------------------------------------


class Transport(Protocol):
    """How a rank gets the values of the other members of a group."""

    def exchange(
        self, rank: int, members: Sequence[int], value: np.ndarray
    ) -> list[np.ndarray]:
        """Every member's value (in ``members``' order), this rank's
        ``value`` among them; every member calls it with the same
        ``members``, in the same order of collectives."""
        ...


@dataclass(frozen=True)
class RankContext:
    """The rank a program runs as, on which mesh, and its transport."""

    rank: int
    world_size: int
    transport: Transport


_running_as: contextvars.ContextVar[RankContext | None] = contextvars.ContextVar(
    "irc_running_as", default=None
)


@contextlib.contextmanager
def running_as(context: RankContext) -> Iterator[None]:
    """Run the code inside as ``context.rank``: the collectives it meets
    exchange values through ``context.transport``."""
    token = _running_as.set(context)
    try:
        yield
    finally:
        _running_as.reset(token)


def current_rank() -> RankContext | None:
    return _running_as.get()


def _rank_for(op: CollectiveOp) -> RankContext:
    context = current_rank()
    if context is None:
        raise ExecutionError(
            f"{op.name} communicates between the ranks of a mesh of "
            f"{op.mesh.size}, and this program runs as no rank: run it with "
            "irc.Mesh(...).simulated (one process, the ranks as threads) or "
            "under torchrun (one process per rank)"
        )
    if context.world_size != op.mesh.size:
        raise ExecutionError(
            f"{op.name} runs on a mesh of {op.mesh.size} ranks "
            f"({_mesh_text(op.mesh)}), but this program runs among "
            f"{context.world_size}: the mesh must cover every rank"
        )
    return context


def _mesh_text(mesh: MeshAttr) -> str:
    return ", ".join(f"{n}={s}" for n, s in zip(mesh.names, mesh.shape, strict=True))


def run_collective(op: CollectiveOp, value: np.ndarray | None) -> np.ndarray:
    """What collective ``op`` gives this rank (``value`` its input; none
    for ``axis_index``)."""
    context = _rank_for(op)
    kind = op.name.removeprefix("collective.")
    return _run(context, kind, op.parameters(), op.mesh, op.axis_names, value)


def _run(
    context: RankContext,
    kind: str,
    parameters: dict[str, Any],
    mesh: MeshAttr,
    axes: Sequence[str],
    value: np.ndarray | None,
) -> np.ndarray:
    """Collective ``kind`` as ``context``'s rank, on its transport."""
    members = mesh.group(context.rank, axes)
    index = members.index(context.rank)
    if kind == "axis_index":
        return np.asarray(index, np.int32)
    assert value is not None
    values = context.transport.exchange(context.rank, members, np.asarray(value))
    return combine(kind, parameters, values, index)


class PeerFailed(ExecutionError):
    """A simulated rank stopped because another rank failed first."""


@dataclass
class SimulatedTransport:
    """The ranks as threads of one process: each collective is a meeting of
    its group's members, numbered per group so that consecutive collectives
    of the same group never mix."""

    world_size: int
    timeout_s: float = SIMULATION_TIMEOUT_S
    _lock: threading.Condition = field(default_factory=threading.Condition)
    _posted: dict[tuple[tuple[int, ...], int], dict[int, np.ndarray]] = field(
        default_factory=dict
    )
    _taken: dict[tuple[tuple[int, ...], int], int] = field(default_factory=dict)
    _sequence: dict[tuple[tuple[int, ...], int], int] = field(default_factory=dict)
    failed: BaseException | None = None

    def exchange(
        self, rank: int, members: Sequence[int], value: np.ndarray
    ) -> list[np.ndarray]:
        group = tuple(members)
        with self._lock:
            count = self._sequence.get((group, rank), 0)
            self._sequence[(group, rank)] = count + 1
            key = (group, count)
            self._posted.setdefault(key, {})[rank] = np.array(value, copy=True)
            self._lock.notify_all()
            if not self._lock.wait_for(
                lambda: self.failed is not None or len(self._posted[key]) == len(group),
                timeout=self.timeout_s,
            ):
                raise ExecutionError(
                    f"rank {rank} waited {self.timeout_s:.0f} s at a collective of "
                    f"ranks {list(group)} that not all of them reached: the ranks "
                    "ran different collectives"
                )
            if self.failed is not None:
                raise PeerFailed("another rank failed") from self.failed
            posted = self._posted[key]
            values = [posted[member] for member in group]
            self._taken[key] = self._taken.get(key, 0) + 1
            if self._taken[key] == len(group):
                del self._posted[key], self._taken[key]
            return values

    def fail(self, error: BaseException) -> None:
        """Wake every waiting rank: one rank failed, so the others would
        wait for it forever."""
        with self._lock:
            if self.failed is None:
                self.failed = error
            self._lock.notify_all()


def simulate(world_size: int, run: Callable[[int], T]) -> list[T]:
    """``run(rank)`` for every rank of a mesh of ``world_size``, each in a
    thread of this process running as that rank; their results in rank
    order. The first rank to fail fails the run, with its error."""
    transport = SimulatedTransport(world_size)
    results: list[Any] = [None] * world_size
    errors: list[BaseException | None] = [None] * world_size

    def body(rank: int) -> None:
        try:
            with running_as(RankContext(rank, world_size, transport)):
                results[rank] = run(rank)
        except BaseException as error:
            errors[rank] = error
            transport.fail(error)

    threads = [
        threading.Thread(target=body, args=(rank,), name=f"irc-rank-{rank}")
        for rank in range(world_size)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first = _first_error(errors)
    if first is not None:
        raise first
    return results


def _first_error(errors: Sequence[BaseException | None]) -> BaseException | None:
    """The error that started the failure: one that is not another rank's
    'another rank failed'."""
    own = [e for e in errors if e is not None and not isinstance(e, PeerFailed)]
    found = own or [e for e in errors if e is not None]
    return found[0] if found else None


# --------------------------------------------------------------------------
# The interpreter functions
# --------------------------------------------------------------------------


@register_impls
class CollectiveFunctions(InterpreterFunctions):
    """The collective ops for a level's interpreter. On tensors (``read``
    and ``write`` None) the op returns its result; on buffers ``read``
    turns the level's buffer into an array and ``write`` stores the
    result into the buffer the op names."""

    def __init__(
        self,
        read: Callable[[Any, Operation], np.ndarray] | None = None,
        write: Callable[[np.ndarray, Any, Operation], None] | None = None,
    ) -> None:
        self.read = read
        self.write = write

    def _run(self, op: CollectiveOp, args: PythonValues) -> PythonValues:
        if not op.on_buffers:
            value = args[0] if args else None
            return (run_collective(op, value),)
        assert self.read is not None and self.write is not None
        *inputs, output = args
        value = self.read(inputs[0], op) if inputs else None
        self.write(run_collective(op, value), output, op)
        return ()

    @impl(AllReduceOp)
    def run_all_reduce(
        self, interpreter: Interpreter, op: AllReduceOp, args: PythonValues
    ) -> PythonValues:
        return self._run(op, args)

    @impl(AllGatherOp)
    def run_all_gather(
        self, interpreter: Interpreter, op: AllGatherOp, args: PythonValues
    ) -> PythonValues:
        return self._run(op, args)

    @impl(ReduceScatterOp)
    def run_reduce_scatter(
        self, interpreter: Interpreter, op: ReduceScatterOp, args: PythonValues
    ) -> PythonValues:
        return self._run(op, args)

    @impl(AllToAllOp)
    def run_all_to_all(
        self, interpreter: Interpreter, op: AllToAllOp, args: PythonValues
    ) -> PythonValues:
        return self._run(op, args)

    @impl(BroadcastOp)
    def run_broadcast(
        self, interpreter: Interpreter, op: BroadcastOp, args: PythonValues
    ) -> PythonValues:
        return self._run(op, args)

    @impl(PpermuteOp)
    def run_ppermute(
        self, interpreter: Interpreter, op: PpermuteOp, args: PythonValues
    ) -> PythonValues:
        return self._run(op, args)

    @impl(AxisIndexOp)
    def run_axis_index(
        self, interpreter: Interpreter, op: AxisIndexOp, args: PythonValues
    ) -> PythonValues:
        return self._run(op, args)
