"""Sharded programs: ``irc.Mesh``, ``irc.PartitionSpec``, ``irc.shard_map``
and the collectives of traced code (docs/distributed.md)."""

from irc.distributed.auto_shard import AutoSharded, auto_shard
from irc.distributed.collectives import (
    all_gather,
    all_to_all,
    axis_index,
    pbroadcast,
    pmax,
    pmean,
    pmin,
    ppermute,
    psum,
    psum_scatter,
)
from irc.distributed.mesh import Mesh, PartitionSpec
from irc.distributed.shard_map import ShardMapped, shard_map

__all__ = [
    "AutoSharded",
    "Mesh",
    "PartitionSpec",
    "ShardMapped",
    "all_gather",
    "all_to_all",
    "auto_shard",
    "axis_index",
    "pbroadcast",
    "pmax",
    "pmean",
    "pmin",
    "ppermute",
    "psum",
    "psum_scatter",
    "shard_map",
]
