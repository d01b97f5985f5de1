"""Automatic sharding: ``annotate-sharding``, ``propagate-sharding`` and
``partition``, and ``irc.auto_shard`` on data- and tensor-parallel
programs. The law: a partitioned program, run on every rank of a
simulated mesh on the blocks of its arguments, gives the global program's
results."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import irc
from irc import testing
from irc.dialects import graph as g
from irc.interpreters.collective import simulate
from irc.interpreters.graph import run_graph
from irc.ir import parse_module
from irc.passes.partition import PartitionPass
from irc.passes.sharding_annotation import AnnotateShardingPass
from irc.testing.sampling import inputs
from tests import distributed_programs as programs

P = irc.PartitionSpec


def _static_entry(module: ModuleOp) -> func.FuncOp:
    return next(f for f in module.ops if isinstance(f, func.FuncOp))


def _partitioned_equals_global(
    module: ModuleOp, specs: list[tuple[tuple[str, ...], ...]], seed: int
) -> None:
    """Partition ``module`` (static shapes) over a 2-rank mesh splitting the
    arguments by ``specs``; every rank's results equal the global ones."""
    arrays = inputs(module, {}, seed)
    try:
        want = run_graph(module, arrays)
    except irc.IrcError:
        return  # the program fails on these inputs on its own
    arguments = ";".join(",".join("+".join(a) for a in spec) for spec in specs)
    sharded = module.clone()
    AnnotateShardingPass(mesh="data=2", arguments=arguments).apply(None, sharded)  # type: ignore[arg-type]
    PartitionPass().apply(None, sharded)  # type: ignore[arg-type]
    sharded.verify()
    mesh = irc.Mesh(2, "data")

    def run_rank(rank: int) -> list[np.ndarray]:
        blocks = [
            P(*[a[0] if a else None for a in spec]).block(mesh, array, rank, "arg")
            for array, spec in zip(arrays, specs, strict=True)
        ]
        return run_graph(sharded, blocks)

    for got in simulate(2, run_rank):
        testing.compare_outputs(got, want, rtol=1e-4, atol=1e-5)


@st.composite
def _split_programs(draw: st.DrawFn) -> tuple[ModuleOp, list, int]:
    module = draw(testing.programs())
    static = testing.specialize(module, {s: 4 for s in _symbols(module)})
    entry = _static_entry(static)
    specs = []
    for arg in entry.body.block.args:
        type_ = arg.type
        dims = type_.dims if isinstance(type_, g.TensorType) else ()
        splittable = [
            i
            for i, d in enumerate(dims)
            if d.constant is not None and d.constant % 2 == 0
        ]
        chosen = draw(st.sampled_from([None, *splittable])) if splittable else None
        specs.append(tuple(("data",) if i == chosen else () for i in range(len(dims))))
    # The module as text: Hypothesis prints an example's repr, and an op's
    # is its whole module.
    return str(static), specs, draw(st.integers(0, 2**31 - 1))


def _symbols(module: ModuleOp) -> set[str]:
    entry = _static_entry(module)
    found: set[str] = set()
    for arg in entry.body.block.args:
        if isinstance(arg.type, g.TensorType):
            for dim in arg.type.dims:
                found |= set(dim.symbols)
    return found


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(_split_programs())
def test_partitioned_programs_give_the_global_results(case: tuple) -> None:
    text, specs, seed = case
    _partitioned_equals_global(parse_module(text), specs, seed)


MLP = """
func.func @mlp(%x: !graph.tensor<[8, 4], f32>, %w1: !graph.tensor<[4, 6], f32>, %w2: !graph.tensor<[6, 4], f32>) -> !graph.tensor<[8, 4], f32> {
  %h = graph.matmul %x, %w1 : (!graph.tensor<[8, 4], f32>, !graph.tensor<[4, 6], f32>) -> !graph.tensor<[8, 6], f32>
  %t = graph.tanh %h : !graph.tensor<[8, 6], f32>
  %y = graph.matmul %t, %w2 : (!graph.tensor<[8, 6], f32>, !graph.tensor<[6, 4], f32>) -> !graph.tensor<[8, 4], f32>
  func.return %y : !graph.tensor<[8, 4], f32>
}
"""


def test_megatron_mlp_is_one_all_reduce() -> None:
    module = parse_module(MLP)
    AnnotateShardingPass(mesh="model=2", arguments=";,model;model").apply(None, module)  # type: ignore[arg-type]
    PartitionPass().apply(None, module)  # type: ignore[arg-type]
    text = str(module)
    assert text.count("= collective.") == 1
    assert "collective.all_reduce" in text and "!graph.tensor<[4, 3], f32>" in text


def test_propagation_records_every_values_sharding() -> None:
    from irc.passes.sharding_propagation import PropagateShardingPass

    module = parse_module(MLP)
    AnnotateShardingPass(mesh="model=2", arguments=";,model;model").apply(None, module)  # type: ignore[arg-type]
    PropagateShardingPass().apply(None, module)  # type: ignore[arg-type]
    text = str(module)
    assert '#collective.sharding<[[], ["model"]], []>' in text  # x @ w1, tanh
    assert '#collective.sharding<[[], []], ["model"]>' in text  # the partial sum


def test_data_parallel_step_all_reduces_each_gradient_once_in_buckets() -> None:
    params, x = programs.mlp_params(), programs.batch()

    def step(params, x):
        loss, grads = irc.value_and_grad(programs.mlp_loss)(params, x)
        return loss, {k: params[k] - 0.1 * grads[k] for k in params}

    mesh = irc.Mesh(2, "data")
    loss, new = irc.auto_shard(step, mesh, (P(), P("data")), P())(params, x)
    want_loss, want = step(params, x)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    for key in params:
        np.testing.assert_allclose(new[key], want[key], rtol=1e-4, atol=1e-6)
    bucketed = irc.auto_shard(step, mesh, (P(), P("data")), P())
    graph = bucketed.compiled(bucketed.blocks((params, x), 0)).ir("graph")
    unbucketed = irc.auto_shard(step, mesh, (P(), P("data")), P(), bucket_bytes=0)
    separate = unbucketed.compiled(unbucketed.blocks((params, x), 0)).ir("graph")
    assert graph.count("collective.all_reduce") < separate.count(
        "collective.all_reduce"
    )
    assert "collective.all_gather" not in graph  # weights stay whole, no gathers


@pytest.mark.parametrize("mesh_shape", [(2,), (4,)])
def test_auto_sharded_tensor_parallel_mlp_and_attention(mesh_shape: tuple[int]) -> None:
    mesh = irc.Mesh(mesh_shape, ("model",))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w1 = rng.standard_normal((16, 8)).astype(np.float32)
    w2 = rng.standard_normal((8, 16)).astype(np.float32)
    mlp = irc.auto_shard(programs.mlp, mesh, (P(), P(None, "model"), P("model")), P())
    np.testing.assert_allclose(
        mlp(x, w1, w2), programs.mlp(x, w1, w2), rtol=1e-4, atol=1e-4
    )
    wq, wk, wv = (
        rng.standard_normal((16, 16)).astype(np.float32) / 4 for _ in range(3)
    )
    wo = rng.standard_normal((16, 16)).astype(np.float32) / 4
    column = P(None, "model")
    attention = irc.auto_shard(
        programs.attention, mesh, (P(), column, column, column, P("model")), P()
    )
    got = attention(x, wq, wk, wv, wo)
    np.testing.assert_allclose(
        got, programs.attention(x, wq, wk, wv, wo), rtol=1e-4, atol=1e-4
    )
    graph = attention.compiled(attention.blocks((x, wq, wk, wv, wo), 0)).ir("graph")
    assert graph.count("collective.all_reduce") == 1
    assert "collective.all_gather" not in graph


def test_every_rank_compiles_the_same_program() -> None:
    """Decisions are a function of the IR: two compilations (as two ranks
    would make them) emit the same source."""
    mesh = irc.Mesh(2, "model")
    sources = []
    for _ in range(2):
        mlp = irc.auto_shard(
            programs.mlp, mesh, (P(), P(None, "model"), P("model")), P()
        )
        blocks = mlp.blocks(
            (
                np.ones((8, 16), np.float32),
                np.ones((16, 8), np.float32),
                np.ones((8, 16), np.float32),
            ),
            1,
        )
        sources.append(mlp.compiled(blocks).triton_source)
    assert sources[0] == sources[1]


def test_partition_errors_are_clear() -> None:
    module = parse_module(MLP)
    with pytest.raises(Exception, match="does not split into 4 blocks"):
        AnnotateShardingPass(mesh="model=4", arguments=";,model;model").apply(
            None, module
        )  # type: ignore[arg-type]
        PartitionPass().apply(None, module)  # type: ignore[arg-type]
    with pytest.raises(Exception, match="not axes of the mesh"):
        module = parse_module(MLP)
        AnnotateShardingPass(mesh="model=2", arguments="data").apply(None, module)  # type: ignore[arg-type]
        PartitionPass().apply(None, module)  # type: ignore[arg-type]
