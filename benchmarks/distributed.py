"""Communication of sharded programs: bytes each rank sends per step, over
the minimum, and how much of it overlaps computation.

A model, as ``traffic.py`` is: no network is timed. For each program the
rank's compiled program (its memory level, the host schedule the launcher
runs) is read, and each collective is counted with the bandwidth-optimal
ring algorithm's bytes per rank, ``n`` the group size and ``S`` the bytes
of the value:

- ``all_reduce``: ``2 (n-1)/n S``; ``all_gather``: ``(n-1)/n S`` of the
  result; ``reduce_scatter``: ``(n-1)/n S`` of the input; ``all_to_all``:
  ``(n-1)/n S``; ``broadcast`` and ``ppermute``: ``S``.

The minimum is what the parallelism needs whatever the compiler does:

- data parallelism: every weight's gradient all-reduced once
  (``2 (n-1)/n`` times the weights' bytes) and the loss (4 bytes);
- Megatron's tensor parallelism (forward): one all-reduce of the
  activations ``[tokens, embd]`` per MLP and per attention.

*Overlapped* is the share of the bytes whose collective has at least one
kernel launch between its start and the first read of its result (where
the launcher waits): those run while the GPU computes.

Run ``python benchmarks/distributed.py``; the table is in
docs/distributed.md.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import irc
from irc.dialects import collective, memory
from irc.dtypes import dtype
from tests import distributed_programs as programs

P = irc.PartitionSpec


@dataclass
class Traffic:
    collectives: int
    sent: float
    overlapped: float


def _bytes(value: Any) -> int:
    buffer = memory.buffer_type(value)
    count = 1
    for dim in buffer.dims:
        size = dim.constant
        assert size is not None, "the benchmark's programs are static"
        count *= size
    return count * dtype(buffer.element_type).numpy.itemsize


def _sent(op: collective.CollectiveOp) -> float:
    n = op.group_size
    if isinstance(op, collective.AxisIndexOp):
        return 0.0
    assert op.input_value is not None
    source, result = _bytes(op.input_value), _bytes(op.produced)
    if isinstance(op, collective.AllReduceOp):
        return 2 * (n - 1) / n * source
    if isinstance(op, collective.AllGatherOp):
        return (n - 1) / n * result
    if isinstance(op, collective.ReduceScatterOp | collective.AllToAllOp):
        return (n - 1) / n * source
    return float(source)


def traffic(compiled: Any) -> Traffic:
    """The collectives of a rank's program and their bytes, from its
    memory level's host function."""
    module = compiled.module_at("memory")
    function = next(f for f in module.ops if isinstance(f, func.FuncOp))
    ops = list(function.body.block.ops)
    count, sent, overlapped = 0, 0.0, 0.0
    for index, op in enumerate(ops):
        if not isinstance(op, collective.CollectiveOp):
            continue
        count += 1
        nbytes = _sent(op)
        sent += nbytes
        later = ops[index + 1 :]
        for after in later:
            reads = {o for inner in after.walk() for o in inner.operands}
            if op.produced in reads:
                break
            if isinstance(after, memory.LaunchOp):
                overlapped += nbytes
                break
    return Traffic(count, sent, overlapped)


def _weights_bytes(params: dict[str, np.ndarray]) -> int:
    return sum(v.nbytes for v in params.values())


def data_parallel(
    ranks: int, manual: bool, bucket_bytes: int = 1 << 20
) -> tuple[str, Traffic, float]:
    params = programs.gpt2_params()
    x = programs.gpt2_batch(batch=4 * ranks, seq=8)
    mesh = irc.Mesh(ranks, "data")
    if manual:
        step = irc.shard_map(
            programs.gpt2_data_parallel_step, mesh, (P(), P("data")), P()
        )
        name = f"GPT-2 block step, data parallel, shard_map + pmean, {ranks} ranks"
    else:
        step = irc.auto_shard(
            programs.gpt2_step, mesh, (P(), P("data")), P(), bucket_bytes=bucket_bytes
        )
        name = (
            f"GPT-2 block step, data parallel, auto_shard, {ranks} ranks, "
            f"buckets of {bucket_bytes} B"
        )
    compiled = step.compiled(step.blocks((params, x), 0))
    minimum = 2 * (ranks - 1) / ranks * (_weights_bytes(params) + 4)
    return name, traffic(compiled), minimum


def tensor_parallel(ranks: int) -> tuple[str, Traffic, float]:
    rng = np.random.default_rng(0)
    tokens, embd = 64, 64
    x = rng.standard_normal((tokens, embd)).astype(np.float32)

    def w(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    mesh = irc.Mesh(ranks, "model")
    column = P(None, "model")

    def block(x: Any, wq: Any, wk: Any, wv: Any, wo: Any, w1: Any, w2: Any) -> Any:
        h = x + programs.attention(x, wq, wk, wv, wo)
        return h + programs.mlp(h, w1, w2)

    sharded = irc.auto_shard(
        block, mesh, (P(), column, column, column, P("model"), column, P("model"))
    )
    arrays = (x, w(embd, embd), w(embd, embd), w(embd, embd), w(embd, embd))
    arrays += (w(embd, 4 * embd), w(4 * embd, embd))
    compiled = sharded.compiled(sharded.blocks(arrays, 0))
    minimum = 2 * (2 * (ranks - 1) / ranks * tokens * embd * 4)
    return (
        f"attention + MLP forward, Megatron, auto_shard, {ranks} ranks",
        traffic(compiled),
        minimum,
    )


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    rows = [
        data_parallel(2, manual=True),
        data_parallel(2, manual=False),
        data_parallel(2, manual=False, bucket_bytes=2048),
        data_parallel(4, manual=False, bucket_bytes=2048),
        tensor_parallel(2),
        tensor_parallel(4),
    ]
    print(
        "| program | collectives | KB sent per rank | minimum KB | over minimum | overlapped |"
    )
    print("|---|---|---|---|---|---|")
    for name, found, minimum in rows:
        print(
            f"| {name} | {found.collectives} | {found.sent / 1024:.2f} | "
            f"{minimum / 1024:.2f} | {found.sent / minimum:.2f}x | "
            f"{100 * found.overlapped / max(found.sent, 1):.0f}% |"
        )


if __name__ == "__main__":
    main()
