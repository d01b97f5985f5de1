"""``irc.shard_map``: a function written for one rank's blocks, run on
every rank of a mesh (jax.experimental.shard_map's semantics).

``irc.shard_map(f, mesh, in_specs, out_specs)`` is a function of global
arrays. Each rank gets the blocks of the arguments that ``in_specs``
give it, runs ``f`` on them (where ``irc.psum`` and the other
collectives communicate over the mesh's axes), and the ranks' results
are laid side by side as ``out_specs`` say. ``f`` is compiled once, as
the program every rank runs: the SPMD program of docs/distributed.md.

Where it runs:

- traced (inside ``irc.compile``, ``irc.jit`` or ``irc.grad``), its
  arguments are the rank's blocks already, and ``f`` is captured inline
  with its collectives: the enclosing program is the per-rank program;
- called on arrays, under ``torchrun`` (``torch.distributed`` initialized
  with as many ranks as the mesh), each process takes its blocks of the
  global arguments and gets the global results (sharded results are
  gathered); ``.local(*blocks)`` skips both: each process passes its own
  blocks and gets its own (what a data-parallel loader gives);
- called on arrays elsewhere, the mesh is simulated: every rank runs as a
  thread of this process, on the reference backend (the emitted kernels
  and their ``torch.distributed`` calls run under ``torchrun``; gloo runs
  them on CPU tensors).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irc import pytree
from irc.capture.specs import TensorSpec
from irc.capture.trace import active_trace
from irc.distributed.mesh import Mesh, PartitionSpec, using_mesh
from irc.errors import IrcError

__all__ = ["ShardMapped", "shard_map"]

Specs = PartitionSpec | Sequence[Any]


def shard_map(
    f: Callable[..., Any],
    mesh: Mesh,
    in_specs: Specs,
    out_specs: Specs,
) -> ShardMapped:
    """``f``, which takes and returns one rank's blocks, as a function of
    global arrays split over ``mesh`` by ``in_specs`` (a ``PartitionSpec``
    for every argument, or a tuple of one per positional argument, each
    applying to all arrays of that argument's pytree) and assembled by
    ``out_specs`` (likewise, per result)."""
    if not isinstance(mesh, Mesh):
        raise IrcError(f"irc.shard_map needs an irc.Mesh, not {type(mesh).__name__}")
    return ShardMapped(f, mesh, in_specs, out_specs)


class ShardMapped:
    """The result of ``irc.shard_map``."""

    def __init__(
        self, f: Callable[..., Any], mesh: Mesh, in_specs: Specs, out_specs: Specs
    ) -> None:
        functools.update_wrapper(self, f)
        self.function = f
        self.mesh = mesh
        self.in_specs = in_specs
        self.out_specs = out_specs
        self._compiled: dict[Any, Any] = {}

        # ``f``'s signature, so that the captured program's arguments have
        # ``f``'s parameter names.
        @functools.wraps(f)
        def body(*blocks: Any) -> Any:
            """``f`` on one rank's blocks, its collectives on this mesh."""
            with using_mesh(mesh):
                return f(*blocks)

        self.body = body

    def __call__(self, *args: Any, backend: str = "auto") -> Any:
        if active_trace() is not None:
            return self.body(*args)
        if self.mesh.is_distributed:
            return self._run_as_this_rank(args, backend)
        return self._simulate(args, backend)

    def local(self, *blocks: Any, backend: str = "auto") -> Any:
        """Run this process's rank on its own ``blocks`` (under ``torchrun``),
        returning its own blocks of the results."""
        from irc.runtime import distributed

        rank = distributed.this_rank(self.mesh)
        with distributed.running_on_process_group(rank, self.mesh.size):
            return self.compiled(blocks)(*blocks, backend=backend)

    def compiled(self, blocks: Sequence[Any]) -> Any:
        """The per-rank program for blocks like ``blocks`` (compiled once,
        with static shapes, by ``irc.compile``)."""
        from irc.api import compile

        specs = tuple(pytree.map_leaves(_spec_of, block) for block in blocks)
        key = repr(specs)
        found = self._compiled.get(key)
        if found is None:
            found = compile(self.body, *specs)
            self._compiled[key] = found
        return found

    # ----- the global view ------------------------------------------------

    def blocks(self, args: Sequence[Any], rank: int) -> tuple[Any, ...]:
        """Rank ``rank``'s blocks of the global ``args``."""
        specs = _per_argument(self.in_specs, len(args), "in_specs")
        return tuple(
            pytree.map_leaves(
                lambda leaf, spec=spec, i=i: spec.block(
                    self.mesh, np.asarray(leaf), rank, f"argument {i}"
                ),
                arg,
            )
            for i, (arg, spec) in enumerate(zip(args, specs, strict=True))
        )

    def assemble(self, per_rank: Sequence[Any]) -> Any:
        """The global results from every rank's results (in rank order)."""
        first = per_rank[0]
        single = not isinstance(first, tuple)
        results = [(r,) if single else r for r in per_rank]
        specs = _per_argument(self.out_specs, len(results[0]), "out_specs")
        assembled = []
        for i, spec in enumerate(specs):
            leaves = [pytree.flatten(r[i]) for r in results]
            treedef = leaves[0][1]
            joined = [
                spec.assemble(
                    self.mesh,
                    [np.asarray(leaves[rank][0][j]) for rank in range(len(results))],
                    f"result {i}",
                )
                for j in range(len(leaves[0][0]))
            ]
            assembled.append(pytree.unflatten(treedef, joined))
        return assembled[0] if single else tuple(assembled)

    def _simulate(self, args: Sequence[Any], backend: str) -> Any:
        from irc.interpreters.collective import simulate

        if backend not in ("auto", "reference"):
            raise IrcError(
                f"{self.mesh!r} is simulated in this process (torch.distributed is "
                "not initialized), where ranks run on the reference backend only; "
                f"backend={backend!r} runs under torchrun, one process per rank "
                "(gloo runs the emitted kernels on CPU tensors)"
            )
        backend = "reference"
        per_rank_blocks = [self.blocks(args, r) for r in range(self.mesh.size)]
        program = self.compiled(per_rank_blocks[0])
        outputs = simulate(
            self.mesh.size,
            lambda rank: program(*per_rank_blocks[rank], backend=backend),
        )
        return self.assemble(outputs)

    def _run_as_this_rank(self, args: Sequence[Any], backend: str) -> Any:
        from irc.runtime import distributed

        rank = distributed.this_rank(self.mesh)
        blocks = self.blocks(args, rank)
        with distributed.running_on_process_group(rank, self.mesh.size):
            result = self.compiled(blocks)(*blocks, backend=backend)
        return self.assemble(distributed.gather_objects(result))


def _spec_of(leaf: Any) -> TensorSpec:
    array = np.asarray(leaf) if not hasattr(leaf, "dtype") else leaf
    dtype = str(array.dtype).removeprefix("torch.")
    return TensorSpec(tuple(int(d) for d in array.shape), dtype)


def _per_argument(specs: Specs, count: int, what: str) -> list[PartitionSpec]:
    if isinstance(specs, PartitionSpec):
        return [specs] * count
    listed = list(specs)
    if len(listed) != count or not all(isinstance(s, PartitionSpec) for s in listed):
        raise IrcError(
            f"irc.shard_map's {what}: one PartitionSpec, or a tuple of one per "
            f"{'argument' if what == 'in_specs' else 'result'} ({count}), not {specs!r}"
        )
    return listed
