"""Sharded programs: the collective dialect, ``irc.shard_map``, gradients
through collectives, and the real path (the emitted launchers'
``torch.distributed`` calls) on 2- and 4-process gloo jobs."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

import irc
from irc import testing
from irc.interpreters.collective import combine, simulate
from irc.ir import parse_module
from irc.testing.distributed import free_port, run_ranks
from tests import distributed_programs as programs

P = irc.PartitionSpec
MESH = "#collective.mesh<data = 2>"


def _sharded_every_collective() -> irc.ShardMapped:
    return irc.shard_map(
        programs.every_collective, irc.Mesh(2, "data"), (P("data"), P()), P("data")
    )


def _expected_every_collective(x: np.ndarray, w: np.ndarray) -> list[list[np.ndarray]]:
    """Each rank's results, from ``combine``'s independent spelling... and
    from NumPy directly where the meaning is plain."""
    blocks = [x[:4] @ w, x[4:] @ w]
    out = []
    for rank in range(2):
        y = blocks[rank]
        out.append(
            [
                np.float32(sum((b * b).sum() for b in blocks)),
                np.concatenate(blocks),
                np.stack(blocks),
                (blocks[0] + blocks[1])[2 * rank : 2 * rank + 2],
                blocks[1 - rank],
                np.maximum(*blocks),
                np.minimum(*blocks),
                (blocks[0] + blocks[1]) / 2,
                blocks[1],
                np.int32(rank),
                np.concatenate([b[2 * rank : 2 * rank + 2] for b in blocks], axis=1),
            ]
        )
        assert y.shape == (4, 6)
    return out


def test_every_collective_on_simulated_ranks_means_what_numpy_says() -> None:
    x, w = programs.inputs_every_collective()
    sharded = _sharded_every_collective()
    program = sharded.compiled(sharded.blocks((x, w), 0))
    results = simulate(
        2, lambda r: program(*sharded.blocks((x, w), r), backend="reference")
    )
    for got, want in zip(results, _expected_every_collective(x, w), strict=True):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-5)


def test_the_collectives_survive_every_level() -> None:
    """The lowered program (fusion, loop, memory and triton levels) still
    holds each collective, on buffers from the memory level on."""
    x, w = programs.inputs_every_collective()
    sharded = _sharded_every_collective()
    compiled = sharded.compiled(sharded.blocks((x, w), 0))
    for level in ("graph", "fusion", "loop", "memory", "triton"):
        text = compiled.ir(level)
        assert text.count("collective.") >= 11, level
    assert "into %" in compiled.ir("memory")
    assert compiled.triton_source.count("= _irc_collective(") == 11


def test_every_level_runs_the_collectives_alike() -> None:
    """The same program at each level, on simulated ranks (the runners
    check_pass uses), gives the same results."""
    from irc.testing.interpreters import run_module

    x, w = programs.inputs_every_collective()
    sharded = _sharded_every_collective()
    compiled = sharded.compiled(sharded.blocks((x, w), 0))
    block = sharded.blocks((x, w), 0)
    reference = run_module(compiled.module_at("graph"), block)
    for level in ("fusion", "loop", "memory"):
        got = run_module(compiled.module_at(level), block)
        for a, b in zip(got, reference, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_the_lowering_passes_keep_sharded_programs_meaning() -> None:
    source = f"""
    func.func @f(%x: !graph.tensor<[N, 4], f32>) -> (!graph.tensor<[2*N, 4], f32>, !graph.tensor<[N, 4], f32>) {{
      %e = graph.exp %x : !graph.tensor<[N, 4], f32>
      %s = collective.all_reduce %e {{mesh = {MESH}, axes = ["data"], reduction = "sum"}} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
      %m = graph.mul %s, %x : !graph.tensor<[N, 4], f32>
      %g = collective.all_gather %m {{mesh = {MESH}, axes = ["data"], dim = 0 : i64, tiled}} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[2*N, 4], f32>
      %p = collective.ppermute %m {{mesh = {MESH}, axes = ["data"], pairs = array<i64: 0, 1, 1, 0>}} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
      func.return %g, %p : !graph.tensor<[2*N, 4], f32>, !graph.tensor<[N, 4], f32>
    }}
    """
    testing.check_pass("fuse,tile,bufferize", [source], max_examples=5)
    testing.check_pass(
        "canonicalize,cse", [source], max_examples=5, require_change=False
    )


def test_a_program_with_collectives_prints_and_parses_back() -> None:
    x, w = programs.inputs_every_collective()
    sharded = _sharded_every_collective()
    compiled = sharded.compiled(sharded.blocks((x, w), 0))
    for level in ("graph", "memory"):
        text = compiled.ir(level)
        assert str(parse_module(text)).strip() == text.strip()


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (
            'collective.all_reduce %x {mesh = M, axes = ["model"], reduction = "sum"} : T -> T',
            "mesh's",
        ),
        (
            'collective.all_reduce %x {mesh = M, axes = ["data"], reduction = "prod"} : T -> T',
            "unknown reduction",
        ),
        (
            'collective.all_gather %x {mesh = M, axes = ["data"], dim = 0 : i64, tiled} : T -> T',
            r"makes \[2\*N, 4\]",
        ),
        (
            'collective.broadcast %x {mesh = M, axes = ["data"], root = 2 : i64} : T -> T',
            "root 2",
        ),
        (
            'collective.ppermute %x {mesh = M, axes = ["data"], pairs = array<i64: 0, 1, 1, 1>} : T -> T',
            "permutation",
        ),
    ],
)
def test_the_verifier_says_what_is_wrong(op: str, message: str) -> None:
    tensor = "!graph.tensor<[N, 4], f32>"
    text = (
        f"func.func @f(%x: {tensor}) -> {tensor} {{\n"
        f"  %y = {op.replace('M', MESH).replace('T', tensor)}\n"
        f"  func.return %y : {tensor}\n}}"
    )
    with pytest.raises((VerifyException, irc.IrcError), match=message):
        parse_module(text).verify()


def test_combine_is_the_transport_free_meaning() -> None:
    values = [np.arange(4.0).reshape(2, 2) + r for r in range(2)]
    np.testing.assert_array_equal(
        combine(
            "reduce_scatter", {"reduction": "sum", "dim": 0, "tiled": True}, values, 1
        ),
        (values[0] + values[1])[1:],
    )
    np.testing.assert_array_equal(
        combine("ppermute", {"pairs": ((0, 1),)}, values, 0), np.zeros((2, 2))
    )


def test_a_data_parallel_step_equals_the_step_on_the_whole_batch() -> None:
    params, x = programs.mlp_params(), programs.batch()
    step = irc.shard_map(
        programs.data_parallel_step, irc.Mesh(2, "data"), (P(), P("data")), (P(), P())
    )
    loss, new = step(params, x)
    whole_loss, grads = irc.value_and_grad(programs.mlp_loss)(params, x)
    np.testing.assert_allclose(loss, whole_loss, rtol=1e-5)
    for key in params:
        np.testing.assert_allclose(
            new[key], params[key] - 0.1 * grads[key], rtol=1e-4, atol=1e-6
        )


@pytest.mark.parametrize("mesh_shape", [(2, 2), (1, 4)])
def test_tensor_parallel_mlp_and_attention_equal_the_unsharded_ones(
    mesh_shape: tuple[int, int],
) -> None:
    mesh = irc.Mesh(mesh_shape, ("data", "model"))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w1 = rng.standard_normal((16, 8)).astype(np.float32)
    w2 = rng.standard_normal((8, 16)).astype(np.float32)
    mlp = irc.shard_map(
        programs.tensor_parallel_mlp,
        mesh,
        (P("data"), P(None, "model"), P("model")),
        P("data"),
    )
    np.testing.assert_allclose(
        mlp(x, w1, w2), programs.mlp(x, w1, w2), rtol=1e-4, atol=1e-4
    )
    wq, wk, wv = (
        rng.standard_normal((16, 16)).astype(np.float32) / 4 for _ in range(3)
    )
    wo = rng.standard_normal((16, 16)).astype(np.float32) / 4
    heads = irc.shard_map(
        programs.tensor_parallel_attention,
        mesh,
        (P(), P(None, "model"), P(None, "model"), P(None, "model"), P("model")),
        P(),
    )
    np.testing.assert_allclose(
        heads(x, wq, wk, wv, wo),
        programs.attention(x, wq, wk, wv, wo),
        rtol=1e-4,
        atol=1e-4,
    )


def _through_every_collective(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    y = x @ w
    return (
        (irc.all_gather(np.tanh(y), "data", tiled=True) ** 2).sum()
        + irc.psum(y.sum(), "data")
        + (irc.ppermute(y, "data", [(0, 1), (1, 0)]) ** 2).sum()
        + (irc.pbroadcast(y, "data", 1) ** 2).sum()
        + (irc.psum_scatter(y, "data", tiled=True) ** 3).sum()
        + (irc.all_to_all(y, "data", 0, 1, tiled=True) ** 2).sum()
        + irc.pmean(y, "data").sum()
    )


def test_gradients_through_collectives_match_finite_differences() -> None:
    """The gradient of each rank's weights is that of the sum over ranks of
    every rank's loss (the collectives' transposes)."""
    mesh = irc.Mesh(2, "data")
    rng = np.random.default_rng(4)
    w = rng.standard_normal((2 * 3, 2)).astype(np.float64)
    x = rng.standard_normal((8, 3)).astype(np.float64)
    grad = irc.shard_map(
        irc.grad(_through_every_collective), mesh, (P("data"), P("data")), P("data")
    )
    total = irc.shard_map(
        lambda w_, x_: _through_every_collective(w_, x_).reshape(1),
        mesh,
        (P("data"), P("data")),
        P("data"),
    )
    got = grad(w, x)
    numeric = np.zeros_like(w)
    for index in np.ndindex(*w.shape):
        step = np.zeros_like(w)
        step[index] = 1e-6
        numeric[index] = (total(w + step, x).sum() - total(w - step, x).sum()) / 2e-6
    np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-5)


def test_pmax_has_no_gradient() -> None:
    mesh = irc.Mesh(2, "data")
    bad = irc.shard_map(
        irc.grad(lambda w: irc.pmax(w, "data").sum()), mesh, P("data"), P("data")
    )
    with pytest.raises(Exception, match="no gradient"):
        bad(np.ones(4, np.float32))


def test_mistakes_are_irc_errors() -> None:
    with pytest.raises(irc.IrcError, match="inside a function given to irc.shard_map"):
        irc.compile(lambda x: irc.psum(x, "data"), irc.TensorSpec((4,)))
    mesh = irc.Mesh(2, "data")
    with pytest.raises(irc.IrcError, match="one of this mesh's"):
        irc.shard_map(lambda x: irc.psum(x, "model"), mesh, P("data"), P("data"))(
            np.ones(4, np.float32)
        )
    with pytest.raises(irc.IrcError, match="does not split into 2"):
        irc.shard_map(lambda x: x, mesh, P("data"), P("data"))(np.ones(3, np.float32))
    with pytest.raises(irc.IrcError, match="reference backend only"):
        irc.shard_map(lambda x: x, mesh, P("data"), P("data"))(
            np.ones(4, np.float32), backend="interpret"
        )
    program = irc.shard_map(
        lambda x: irc.psum(x, "data"), mesh, P("data"), P("data")
    ).compiled([np.ones(2, np.float32)])
    with pytest.raises(irc.ExecutionError, match="runs as no rank"):
        program(np.ones(2, np.float32), backend="reference")


# --------------------------------------------------------------------------
# The real path: processes of a gloo job
# --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["interpret", "reference"])
def test_two_gloo_ranks_compute_what_the_simulation_does(backend: str) -> None:
    x, w = programs.inputs_every_collective()
    real = run_ranks(programs.run_every_collective, 2, backend)
    for got, want in zip(real, _expected_every_collective(x, w), strict=True):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-5)


def test_a_data_parallel_training_run_on_two_gloo_ranks_matches_one_process() -> None:
    steps = 3
    real = run_ranks(programs.run_data_parallel, 2, 2, "interpret", steps)
    params, x = programs.mlp_params(), programs.batch()
    losses = []
    for _ in range(steps):
        loss, grads = irc.value_and_grad(programs.mlp_loss)(params, x)
        losses.append(float(loss))
        params = {k: params[k] - 0.1 * grads[k] for k in params}
    assert losses[-1] < losses[0]
    for rank_losses, rank_params in real:
        np.testing.assert_allclose(rank_losses, losses, rtol=1e-4)
        for key in params:
            np.testing.assert_allclose(
                rank_params[key], params[key], rtol=1e-4, atol=1e-5
            )


@pytest.mark.slow
def test_four_gloo_ranks_run_tensor_and_data_parallel_programs() -> None:
    x, w1, w2, wq, wk, wv, wo = programs.tensor_parallel_inputs()
    real = run_ranks(programs.run_tensor_parallel, 4, "interpret")
    mesh = irc.Mesh((2, 2), ("data", "model"))
    np.testing.assert_allclose(
        P("data").assemble(mesh, [r[0] for r in real], "mlp"),
        programs.mlp(x, w1, w2),
        rtol=1e-4,
        atol=1e-4,
    )
    want = programs.attention(x, wq, wk, wv, wo)
    for rank_result in real:
        np.testing.assert_allclose(rank_result[1], want, rtol=1e-4, atol=1e-4)
    data_parallel = run_ranks(programs.run_data_parallel, 4, 4, "interpret", 2)
    losses = [r[0] for r in data_parallel]
    assert all(np.allclose(each, losses[0]) for each in losses)


@pytest.mark.slow
def test_the_data_parallel_example_runs_under_torchrun() -> None:
    """README-level promise: the example's two ranks train, and match one
    process (the example asserts it)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            "2",
            "--master-port",
            str(free_port()),
            str(root / "examples" / "data_parallel.py"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=root,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "the same as one process on the whole batch" in run.stdout


def _assert_gpt2_step_matches(loss: float, grads: dict, new: dict) -> None:
    want_loss, want_grads, want_new = programs.gpt2_step(
        programs.gpt2_params(), programs.gpt2_batch()
    )
    np.testing.assert_allclose(loss, want_loss, rtol=1e-4)
    for key in want_grads:
        np.testing.assert_allclose(grads[key], want_grads[key], rtol=2e-3, atol=1e-5)
        np.testing.assert_allclose(new[key], want_new[key], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("sharding", ["shard_map", "auto_shard"])
def test_a_data_parallel_gpt2_step_equals_one_process_on_the_whole_batch(
    sharding: str,
) -> None:
    """Loss, gradients and updated weights of the GPT-2 block's step on two
    simulated ranks, each with half of the sequences."""
    mesh = irc.Mesh(2, "data")
    if sharding == "shard_map":
        step = irc.shard_map(
            programs.gpt2_data_parallel_step, mesh, (P(), P("data")), P()
        )
    else:
        step = irc.auto_shard(programs.gpt2_step, mesh, (P(), P("data")), P())
    loss, grads, new = step(programs.gpt2_params(), programs.gpt2_batch())
    _assert_gpt2_step_matches(float(loss), grads, new)
    if sharding == "auto_shard":
        blocks = step.blocks((programs.gpt2_params(), programs.gpt2_batch()), 0)
        graph = step.compiled(blocks).ir("graph")
        assert "collective.all_gather" not in graph  # the batch stays split


@pytest.mark.slow
def test_a_data_parallel_gpt2_step_on_two_gloo_ranks_equals_one_process() -> None:
    for loss, grads, new in run_ranks(programs.run_gpt2_data_parallel, 2, "interpret"):
        _assert_gpt2_step_matches(loss, grads, new)


def test_canonicalizing_collectives_keeps_meaning_on_simulated_ranks() -> None:
    """The programs of tests/filecheck/transforms/canonicalize-collective.mlir
    (an all-reduce of a replicated value, two in a row, a broadcast of a
    replicated value): canonicalize changes each and keeps its results on
    every rank."""
    from pathlib import Path

    path = Path(__file__).parent / "filecheck/transforms/canonicalize-collective.mlir"
    chunks = [c for c in path.read_text().split("// -----") if "func.func" in c]
    changed = [c for c in chunks if "@argument" not in c]
    testing.check_pass("canonicalize", changed, max_examples=5)


def test_micro_batches_accumulate_in_a_loop_with_one_all_reduce_at_the_end() -> None:
    params, x = programs.mlp_params(), programs.batch(16)
    step = irc.shard_map(
        programs.accumulated_step, irc.Mesh(2, "data"), (P(), P("data")), P()
    )
    loss, grads = step(params, x)
    want_loss, want = irc.value_and_grad(programs.mlp_loss)(params, x)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    for key in want:
        np.testing.assert_allclose(grads[key], want[key], rtol=1e-4, atol=1e-6)
    graph = step.compiled(step.blocks((params, x), 0)).ir("graph")
    assert graph.count("graph.for") == 1
    # The loss and every gradient in one all-reduce, after the loop.
    assert graph.count("collective.all_reduce") == 1
    assert graph.index("graph.for") < graph.index("collective.all_reduce")


@pytest.mark.slow
def test_a_saved_rank_program_runs_on_two_gloo_ranks(tmp_path) -> None:
    """Each rank saves its compiled program; the artefact's own loader
    (torch, Triton and NumPy only) runs it on the job's process group."""
    x, w = programs.inputs_every_collective()
    real = run_ranks(programs.run_saved_every_collective, 2, str(tmp_path))
    for got, want in zip(real, _expected_every_collective(x, w), strict=True):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-5)


def test_every_rank_launches_rank_0_s_configurations_once_shared(tmp_path) -> None:
    """Rank 0 keeps a configuration other than the cost model's (in a
    tuning directory of its own), rank 1 none: they launch differently
    until ``share_launch_configurations``, then alike, both right."""
    before, after = zip(
        *run_ranks(programs.run_shared_launch_configurations, 2, str(tmp_path)),
        strict=True,
    )
    assert before[0] != before[1]
    assert after[0] == after[1] == before[0]


def test_sharing_launch_configurations_needs_a_distributed_job() -> None:
    compiled = irc.compile(lambda x: x * 2, irc.TensorSpec(("N",), "float32"))
    with pytest.raises(irc.IrcError, match="collective of a torch.distributed job"):
        compiled.share_launch_configurations("interpret")
