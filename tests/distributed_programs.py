"""Sharded programs the distributed tests run, simulated in one process and
as the ranks of a gloo job (functions at the top level: the job's processes
import them)."""

from __future__ import annotations

from typing import Any

import numpy as np

import irc

P = irc.PartitionSpec


def every_collective(x: Any, w: Any) -> tuple[Any, ...]:
    """Each collective of the dialect, on one rank's block of x."""
    y = x @ w
    return (
        irc.psum((y * y).sum(), "data"),
        irc.all_gather(y, "data", tiled=True),
        irc.all_gather(y, "data"),
        irc.psum_scatter(y, "data", tiled=True),
        irc.ppermute(y, "data", [(i, (i + 1) % 2) for i in range(2)]),
        irc.pmax(y, "data"),
        irc.pmin(y, "data"),
        irc.pmean(y, "data"),
        irc.pbroadcast(y, "data", 1),
        irc.axis_index("data"),
        irc.all_to_all(y, "data", 0, 1, tiled=True),
    )


def mlp_loss(params: dict[str, Any], x: Any) -> Any:
    """A GELU MLP's squared output, averaged."""
    h = np.tanh(x @ params["w1"] + params["b1"])
    return np.mean((h @ params["w2"]) ** 2)


def data_parallel_step(params: dict[str, Any], x: Any) -> tuple[Any, Any]:
    """One SGD step on this rank's batch block, gradients averaged over the
    data axis (what the unsharded step computes on the whole batch)."""
    loss, grads = irc.value_and_grad(mlp_loss)(params, x)
    loss, grads = irc.pmean((loss, grads), "data")
    new = {k: params[k] - 0.1 * grads[k] for k in params}
    return loss, new


def tensor_parallel_mlp(x: Any, w1: Any, w2: Any) -> Any:
    """Megatron's MLP: w1 split by columns and w2 by rows over "model", one
    all-reduce of the partial products."""
    return irc.psum(np.tanh(x @ w1) @ w2, "model")


def mlp(x: Any, w1: Any, w2: Any) -> Any:
    return np.tanh(x @ w1) @ w2


def tensor_parallel_attention(x: Any, wq: Any, wk: Any, wv: Any, wo: Any) -> Any:
    """Attention heads split over "model": each rank computes its heads
    (the columns of wq, wk, wv for them, the rows of wo), one all-reduce."""
    return irc.psum(_heads(x, wq, wk, wv, wo), "model")


def attention(x: Any, wq: Any, wk: Any, wv: Any, wo: Any) -> Any:
    return _heads(x, wq, wk, wv, wo)


HEAD_DIM = 4


def _heads(x: Any, wq: Any, wk: Any, wv: Any, wo: Any) -> Any:
    seq = x.shape[0]
    heads = wq.shape[1] // HEAD_DIM

    def split(t: Any) -> Any:
        return t.reshape(seq, heads, HEAD_DIM).transpose(1, 0, 2)

    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(np.float32(HEAD_DIM))
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    out = (p @ v).transpose(1, 0, 2).reshape(seq, heads * HEAD_DIM)
    return out @ wo


def inputs_every_collective() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((8, 4)).astype(np.float32),
        rng.standard_normal((4, 6)).astype(np.float32),
    )


def run_every_collective(rank: int, backend: str) -> list[np.ndarray]:
    """A rank of a 2-process job: its results of ``every_collective``."""
    mesh = irc.Mesh(2, "data")
    sharded = irc.shard_map(every_collective, mesh, (P("data"), P()), P("data"))
    blocks = sharded.blocks(inputs_every_collective(), rank)
    return [np.asarray(r) for r in sharded.local(*blocks, backend=backend)]


def mlp_params(width: int = 8) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {
        "w1": (rng.standard_normal((4, width)) / 2).astype(np.float32),
        "b1": rng.standard_normal(width).astype(np.float32),
        "w2": (rng.standard_normal((width, 3)) / 2).astype(np.float32),
    }


def batch(rows: int = 8) -> np.ndarray:
    return np.random.default_rng(2).standard_normal((rows, 4)).astype(np.float32)


def run_data_parallel(rank: int, world: int, backend: str, steps: int) -> list[float]:
    """A rank of a data-parallel job: the losses of ``steps`` SGD steps on its
    block of the batch, and its final parameters."""
    mesh = irc.Mesh(world, "data")
    step = irc.shard_map(data_parallel_step, mesh, (P(), P("data")), (P(), P()))
    params, x = mlp_params(), batch()
    losses = []
    for _ in range(steps):
        blocks = step.blocks((params, x), rank)
        loss, params = step.local(*blocks, backend=backend)
        losses.append(float(np.asarray(loss)))
        params = {k: np.asarray(v) for k, v in params.items()}
    return [losses, params]


def tensor_parallel_inputs() -> tuple[np.ndarray, ...]:
    """x, the MLP's w1 and w2, attention's wq, wk, wv and wo (embd 8, 2 heads
    of 4)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 8)).astype(np.float32)
    w = [(rng.standard_normal((8, 8)) / 3).astype(np.float32) for _ in range(6)]
    return (x, *w)


def run_tensor_parallel(rank: int, backend: str) -> list[np.ndarray]:
    """A rank of a 2x2 (data, model) job: its blocks of the tensor-parallel
    MLP's and attention's outputs (rows split over "data", weights over
    "model")."""
    mesh = irc.Mesh((2, 2), ("data", "model"))
    x, w1, w2, wq, wk, wv, wo = tensor_parallel_inputs()
    column = P(None, "model")
    mlp_sharded = irc.shard_map(
        tensor_parallel_mlp, mesh, (P("data"), column, P("model")), P("data")
    )
    heads = irc.shard_map(
        tensor_parallel_attention,
        mesh,
        (P(), column, column, column, P("model")),
        P(),
    )
    mlp_out = mlp_sharded.local(*mlp_sharded.blocks((x, w1, w2), rank), backend=backend)
    attention_blocks = heads.blocks((x, wq, wk, wv, wo), rank)
    attention_out = heads.local(*attention_blocks, backend=backend)
    return [np.asarray(mlp_out), np.asarray(attention_out)]


# --------------------------------------------------------------------------
# A GPT-2 block over a batch of sequences (picoGPT's, batched)
# --------------------------------------------------------------------------

GPT2_EMBD, GPT2_HEADS = 16, 2


def _layer_norm(x: Any, g: Any, b: Any) -> Any:
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(variance + 1e-5) + b


def _gelu(x: Any) -> Any:
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def gpt2_block(x: Any, p: dict[str, Any]) -> Any:
    """x: [batch, seq, embd]; the heads split as NumPy code splits them."""
    seq = x.shape[1]
    h = _layer_norm(x, p["ln1_g"], p["ln1_b"]) @ p["attn_w"] + p["attn_b"]
    q, k, v = np.split(h, 3, axis=-1)
    mask = (1 - np.tri(seq, dtype=x.dtype)) * -1e10
    heads = []
    for qh, kh, vh in zip(
        np.split(q, GPT2_HEADS, axis=-1),
        np.split(k, GPT2_HEADS, axis=-1),
        np.split(v, GPT2_HEADS, axis=-1),
        strict=True,
    ):
        scores = qh @ kh.transpose(0, 2, 1) / np.sqrt(np.float32(qh.shape[-1])) + mask
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        heads.append((e / e.sum(axis=-1, keepdims=True)) @ vh)
    x = x + np.concatenate(heads, axis=-1) @ p["proj_w"] + p["proj_b"]
    m = _gelu(_layer_norm(x, p["ln2_g"], p["ln2_b"]) @ p["fc_w"] + p["fc_b"])
    return x + m @ p["out_w"] + p["out_b"]


def gpt2_loss(p: dict[str, Any], x: Any) -> Any:
    return np.mean(gpt2_block(x, p) ** 2)


def gpt2_step(p: dict[str, Any], x: Any) -> tuple[Any, Any, Any]:
    """One SGD step on the whole batch: loss, gradients, new weights."""
    loss, grads = irc.value_and_grad(gpt2_loss)(p, x)
    return loss, grads, {k: p[k] - 0.1 * grads[k] for k in p}


def gpt2_data_parallel_step(p: dict[str, Any], x: Any) -> tuple[Any, Any, Any]:
    """The same step on this rank's sequences, gradients averaged."""
    loss, grads = irc.value_and_grad(gpt2_loss)(p, x)
    loss, grads = irc.pmean((loss, grads), "data")
    return loss, grads, {k: p[k] - 0.1 * grads[k] for k in p}


def gpt2_params(seed: int = 5) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = GPT2_EMBD

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    return {
        "ln1_g": 1 + w(d) / 2, "ln1_b": w(d) / 2,
        "attn_w": w(d, 3 * d), "attn_b": w(3 * d) / 2,
        "proj_w": w(d, d), "proj_b": w(d) / 2,
        "ln2_g": 1 + w(d) / 2, "ln2_b": w(d) / 2,
        "fc_w": w(d, 4 * d), "fc_b": w(4 * d) / 2,
        "out_w": w(4 * d, d), "out_b": w(d) / 2,
    }  # fmt: skip


def gpt2_batch(batch: int = 4, seq: int = 5) -> np.ndarray:
    rng = np.random.default_rng(6)
    return rng.standard_normal((batch, seq, GPT2_EMBD)).astype(np.float32)


def run_gpt2_data_parallel(rank: int, backend: str) -> list[Any]:
    """A rank of a 2-process job: its data-parallel GPT-2 step's results."""
    mesh = irc.Mesh(2, "data")
    step = irc.shard_map(gpt2_data_parallel_step, mesh, (P(), P("data")), P())
    blocks = step.blocks((gpt2_params(), gpt2_batch()), rank)
    loss, grads, new = step.local(*blocks, backend=backend)
    as_numpy = {k: np.asarray(v) for k, v in grads.items()}
    return [
        float(np.asarray(loss)),
        as_numpy,
        {k: np.asarray(v) for k, v in new.items()},
    ]


def accumulated_step(params: dict[str, Any], x: Any, micro: int = 2) -> Any:
    """The data-parallel step over ``micro`` micro-batches of this rank's
    block: gradients summed by an ``irc.fori_loop``, then one all-reduce."""
    xs = x.reshape(micro, -1, x.shape[-1])
    zeros = {k: np.zeros_like(v) for k, v in params.items()}

    def body(i: Any, carry: Any) -> Any:
        total, grads = carry
        loss, grad = irc.value_and_grad(mlp_loss)(params, xs[i])
        return total + loss, {k: grads[k] + grad[k] for k in grads}

    total, grads = irc.fori_loop(0, micro, body, (np.float32(0), zeros))
    mean = (total / micro, {k: v / micro for k, v in grads.items()})
    return irc.pmean(mean, "data")


def run_saved_every_collective(rank: int, directory: str) -> list[np.ndarray]:
    """A rank of a 2-process job: its program of ``every_collective`` saved
    as an artefact, then loaded by the artefact's own loader (no irc) and
    run on the rank's blocks."""
    import importlib.util
    from pathlib import Path

    mesh = irc.Mesh(2, "data")
    sharded = irc.shard_map(every_collective, mesh, (P("data"), P()), P("data"))
    blocks = sharded.blocks(inputs_every_collective(), rank)
    path = Path(directory) / f"rank{rank}"
    sharded.compiled(blocks).save(path)
    spec = importlib.util.spec_from_file_location(
        f"saved_rank{rank}",
        path / "__init__.py",
        submodule_search_locations=[str(path)],
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    saved = module.load(interpret=True)
    return [np.asarray(r) for r in saved(*blocks)]


def run_shared_launch_configurations(rank: int, directory: str) -> list[Any]:
    """Rank 0 keeps, in a tuning directory of its own, a configuration of a
    layer norm's kernel other than the cost model's; rank 1 keeps none.
    Each calls once (deciding from what it keeps), then both share: rank 1
    launches rank 0's. Each rank's configurations before and after, and the
    results right against NumPy."""
    import json
    import os

    from irc.runtime import triton_backend

    os.environ["IRC_CACHE_DIR"] = os.path.join(directory, f"rank{rank}")
    os.environ.pop("IRC_CACHE", None)

    def layer_norm(x: Any) -> Any:
        mean = x.mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(
            ((x - mean) ** 2).mean(axis=-1, keepdims=True) + 1e-5
        )

    compiled = irc.compile(layer_norm, irc.TensorSpec(("N", "D"), "float32"))
    tuner = triton_backend.load_source(
        compiled.triton_source, interpret=True
    )._IRC_TUNER
    x = np.random.default_rng(0).standard_normal((3, 300)).astype(np.float32)
    expected = layer_norm(x.astype(np.float64))
    if rank == 0:
        # A first call decides the key the launches look up (the cost
        # model's configuration), which then gives way to a kept one.
        compiled(x, backend="interpret")
        (key,) = tuner.chosen
        kept = tuner.candidates(key)[-1]
        path, identity = tuner._entry_path(key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        device, digest, buckets = identity
        with open(path, "w") as file:
            json.dump(
                {
                    "format": 1,
                    "device": device,
                    "kernel": digest,
                    "buckets": buckets,
                    "config": list(kept),
                },
                file,
            )
        tuner.chosen.clear()
    got = compiled(x, backend="interpret")
    before = compiled.launch_configurations("interpret")
    compiled.share_launch_configurations("interpret")
    after = compiled.launch_configurations("interpret")
    again = compiled(x, backend="interpret")
    for y in (got, again):
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    return [before, after]
