"""``irc.auto_shard``: a function written for whole arrays, run on every
rank of a mesh with irc choosing the collectives.

``irc.auto_shard(f, mesh, in_specs, out_specs)`` says only how the
arguments are laid out on the ranks (and how the results should be); ``f``
holds no collective. irc captures ``f`` for the global arrays, then
``annotate-sharding`` records the specs, ``propagate-sharding`` decides
every value's layout and ``partition`` rewrites the program into the one
each rank runs, with the all-reduces and all-gathers the layouts imply
(docs/distributed.md, "Automatic sharding"). It is called as an
``irc.shard_map``-ed function is: on global arrays (simulated, or one
process per rank under ``torchrun``), or with ``.local(*blocks)``.

Data parallelism is a batch split (``P("data")`` on the inputs, weights
whole): the loss's mean over the batch and each weight's gradient become
partial sums, all-reduced where they are made (so they overlap the rest of
the backward pass) in buckets of ``bucket_bytes``. Megatron's tensor
parallelism is a weight split (``P(None, "model")`` on the first weight,
``P("model")`` on the second): one all-reduce of the output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from irc import pytree
from irc.capture.trace import active_trace
from irc.distributed.mesh import Mesh, PartitionSpec
from irc.distributed.shard_map import ShardMapped, Specs, _per_argument, _spec_of
from irc.errors import IrcError
from irc.lowering.pipeline import DEFAULT_PIPELINE
from irc.passes.sharding_annotation import mesh_text, specs_text

__all__ = ["AutoSharded", "auto_shard"]

#: The results' default layout: whole on every rank.
_WHOLE = PartitionSpec()


def auto_shard(
    f: Callable[..., Any],
    mesh: Mesh,
    in_specs: Specs,
    out_specs: PartitionSpec | Sequence[PartitionSpec] = _WHOLE,
    *,
    bucket_bytes: int = 1 << 20,
) -> AutoSharded:
    """``f`` (no collectives; whole arrays) run on every rank of ``mesh``,
    its arguments laid out by ``in_specs`` and results by ``out_specs``
    (one ``PartitionSpec`` for every result, or one per result array), the
    collectives chosen by irc."""
    if not isinstance(mesh, Mesh):
        raise IrcError(f"irc.auto_shard needs an irc.Mesh, not {type(mesh).__name__}")
    return AutoSharded(f, mesh, in_specs, out_specs, bucket_bytes)


class AutoSharded(ShardMapped):
    """The result of ``irc.auto_shard``."""

    def __init__(
        self,
        f: Callable[..., Any],
        mesh: Mesh,
        in_specs: Specs,
        out_specs: Specs,
        bucket_bytes: int,
    ) -> None:
        super().__init__(f, mesh, in_specs, out_specs)
        self.bucket_bytes = bucket_bytes

    def __call__(self, *args: Any, backend: str = "auto") -> Any:
        if active_trace() is not None:
            raise IrcError(
                "an irc.auto_shard function is compiled on its own, for the mesh: "
                "call it on arrays (inside traced code, use irc.shard_map with "
                "explicit collectives)"
            )
        return super().__call__(*args, backend=backend)

    def pipeline(self, blocks: Sequence[Any]) -> str:
        """The pass pipeline compiling the rank's program."""
        specs = _per_argument(self.in_specs, len(blocks), "in_specs")
        leaf_specs = [
            spec.entries
            for block, spec in zip(blocks, specs, strict=True)
            for _ in pytree.flatten(block)[0]
        ]
        if isinstance(self.out_specs, PartitionSpec):
            results = "*" + specs_text([self.out_specs.entries])
        else:
            results = specs_text([s.entries for s in self.out_specs])
        annotate = (
            f'annotate-sharding{{mesh="{mesh_text(self.mesh.axis_names, self.mesh.shape)}" '
            f'arguments="{specs_text(leaf_specs)}" results="{results}"}}'
        )
        # Folding constants first lets the partition make splats and
        # broadcasts at block size rather than take blocks of whole ones.
        return (
            f"{annotate},canonicalize,cse,partition{{bucket-bytes={self.bucket_bytes}}},"
            f"{DEFAULT_PIPELINE}"
        )

    def compiled(self, blocks: Sequence[Any]) -> Any:
        """The rank's program for blocks like ``blocks``: ``f`` captured for
        the global arrays they are blocks of, then partitioned."""
        from irc.api import compile

        specs = _per_argument(self.in_specs, len(blocks), "in_specs")
        global_specs = tuple(
            pytree.map_leaves(
                lambda leaf, spec=spec: _global_spec(leaf, spec, self.mesh), block
            )
            for block, spec in zip(blocks, specs, strict=True)
        )
        key = repr(global_specs)
        found = self._compiled.get(key)
        if found is None:
            found = compile(
                self.function, *global_specs, pipeline=self.pipeline(blocks)
            )
            self._compiled[key] = found
        return found


def _global_spec(leaf: Any, spec: PartitionSpec, mesh: Mesh) -> Any:
    local = _spec_of(leaf)
    spec.check(mesh, len(local.shape), "irc.auto_shard")
    shape = tuple(
        int(size) * spec.parts(mesh, dim) for dim, size in enumerate(local.shape)
    )
    return type(local)(shape, local.dtype)
