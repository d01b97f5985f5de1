"""Data-parallel training of a small MLP with irc.shard_map.

Run it as one process per rank, on CPU tensors (gloo):

    torchrun --nproc-per-node 2 examples/data_parallel.py

Each rank takes its block of every batch, computes the loss and gradients
of its block, averages them over the ranks (``irc.pmean``: one all-reduce)
and takes the same SGD step, so every rank keeps the same weights. Rank 0
prints the loss as it falls, then checks that the run equals the same
steps on the whole batch in one process. Without torchrun the mesh has one
rank, simulated in this process.
"""

from __future__ import annotations

import os

import numpy as np
import torch.distributed as dist

import irc

P = irc.PartitionSpec


def loss(params: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    return np.mean((hidden @ params["w2"] - y) ** 2)


def step(params: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray):
    value, grads = irc.value_and_grad(loss)(params, x, y)
    value, grads = irc.pmean((value, grads), "data")  # one all-reduce
    return value, {k: params[k] - 0.2 * grads[k] for k in params}


def data() -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    y = np.sin(x[:, :2] * 2).astype(np.float32)
    params = {
        "w1": (rng.standard_normal((8, 32)) / 3).astype(np.float32),
        "b1": np.zeros(32, np.float32),
        "w2": (rng.standard_normal((32, 2)) / 6).astype(np.float32),
    }
    return params, x, y


def main() -> None:
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    world = dist.get_world_size() if distributed else 1
    rank = dist.get_rank() if distributed else 0
    mesh = irc.Mesh(world, "data")
    sharded_step = irc.shard_map(step, mesh, (P(), P("data"), P("data")), (P(), P()))

    params, x, y = data()
    losses = []
    for iteration in range(20):
        blocks = sharded_step.blocks((params, x, y), rank)  # this rank's rows
        if distributed:
            value, params = sharded_step.local(*blocks)
        else:
            value, params = sharded_step(params, x, y)
        params = {k: np.asarray(v) for k, v in params.items()}
        losses.append(float(np.asarray(value)))
        if rank == 0 and iteration % 5 == 0:
            print(f"step {iteration:2d}  loss {losses[-1]:.4f}", flush=True)

    if rank == 0:
        # The same steps on the whole batch in one process.
        single, _, _ = data()
        for expected in losses:
            value, grads = irc.value_and_grad(loss)(single, x, y)
            single = {k: single[k] - 0.2 * grads[k] for k in single}
            assert np.isclose(float(value), expected, rtol=1e-4), (value, expected)
        print(
            f"{world} rank(s): loss {losses[0]:.4f} -> {losses[-1]:.4f}, "
            "the same as one process on the whole batch"
        )
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
