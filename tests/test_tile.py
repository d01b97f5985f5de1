"""The ``tile`` pass: fusion kernels become loop nests that compute the same
values (loop interpreter against graph interpreter), with the tile shapes,
reduction strategies and index widths the pass promises."""

from __future__ import annotations

import numpy as np
import pytest
from suite_programs import SUITE
from xdsl.dialects.builtin import ModuleOp, StringAttr, i32, i64
from xdsl.traits import ConstantLike, HasFolder

from irc import pytree, testing
from irc.dialects import loop, tile
from irc.dialects.fusion import IDIOM_ATTRIBUTE, RowIdioms
from irc.errors import IrcError
from irc.interpreters.graph import run_graph
from irc.interpreters.loop import run_loop
from irc.ir import default_context, parse_module, print_module
from irc.lowering.fusion_to_loop import TilePass
from irc.lowering.graph_to_fusion import FusePass

#: Bindings per program: 1, a non-power of two, and a size past one block
#: where the program's dims allow it.
SIZES = {
    "default": [{}, {"N": 1}, {"N": 5}],
    "rows": [{"N": 1, "D": 1}, {"N": 3, "D": 7}, {"N": 2, "D": 1100}],
}
ROW_PROGRAMS = {
    "softmax",
    "log_softmax",
    "logsumexp",
    "l2_normalize",
    "rms_norm",
    "layer_norm",
}


def tiled(name: str, **options: int) -> tuple[ModuleOp, ModuleOp]:
    """The graph module of a suite program and its tiled (loop) form."""
    graph = SUITE[name].compile(pipeline="canonicalize,cse").module
    module = graph.clone()
    ctx = default_context()
    FusePass().apply(ctx, module)
    TilePass(**options).apply(ctx, module)
    module.verify()
    return graph, module


def kernels(module: ModuleOp) -> list[loop.KernelOp]:
    return [op for op in module.walk() if isinstance(op, loop.KernelOp)]


@pytest.mark.parametrize("name", sorted(SUITE))
def test_tiled_suite_matches_graph(name: str) -> None:
    graph, module = tiled(name)
    rng = np.random.default_rng(0)
    for sizes in SIZES["rows" if name in ROW_PROGRAMS else "default"]:
        try:
            call = SUITE[name].inputs(rng, **sizes)
        except TypeError:  # the program has no such symbol
            continue
        leaves, _ = pytree.flatten((list(call.args), dict(call.kwargs)))
        arrays = [a for a in leaves if isinstance(a, np.ndarray)]
        expected = run_graph(graph, arrays)
        for got, want in zip(run_loop(module, arrays), expected, strict=True):
            np.testing.assert_allclose(
                got, want, rtol=2e-5, atol=1e-6, err_msg=f"{name} {sizes}"
            )


@pytest.mark.parametrize(
    "options",
    [{}, {"max_persistent": 16, "reduction_block": 16, "pointwise_block": 64}],
    ids=["default", "small-tiles"],
)
def test_tiled_kernels_hold_nothing_to_fold(options: dict[str, int]) -> None:
    """The tiler offers every op it builds to its folder (the loop dialect's,
    which canonicalize runs): no op of a tiled suite program still folds."""
    for name in sorted(SUITE):
        _, module = tiled(name, **options)
        for op in module.walk():
            trait = op.get_trait(HasFolder)
            if trait is not None and not op.has_trait(ConstantLike):
                assert trait.fold(op) is None, f"{name}: {op}"


def test_persistent_and_looped_reductions_agree() -> None:
    """Forcing the looped strategy on a static row changes nothing, ties
    and NaNs included."""
    text = """
    func.func @f(%x: !graph.tensor<[N, 100], f32>) -> (!graph.tensor<[N, 100], f32>, !graph.tensor<[N], i64>) {
      %0 = graph.reduce max %x [1] : !graph.tensor<[N, 100], f32> -> !graph.tensor<[N, 1], f32>
      %1 = graph.broadcast %0 : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, 100], f32>
      %2 = graph.sub %x, %1 : !graph.tensor<[N, 100], f32>
      %3 = graph.argmax %x [1] : !graph.tensor<[N, 100], f32> -> !graph.tensor<[N], i64>
      func.return %2, %3 : !graph.tensor<[N, 100], f32>, !graph.tensor<[N], i64>
    }
    """
    x = np.random.default_rng(1).standard_normal((4, 100)).astype(np.float32)
    x[2, 10] = x[2, 90] = 50.0  # a tie: the first maximum wins
    x[3, 60] = x[3, 5] = np.nan  # the first NaN wins, over any number
    expected = run_graph(parse_module(text), [x])
    for options, strategy in (
        ({}, "persistent"),
        ({"max_persistent": 64, "reduction_block": 32}, "looped"),
    ):
        module = parse_module(text)
        FusePass().apply(default_context(), module)
        TilePass(**options).apply(default_context(), module)
        assert all(strategy in kernel.reason.data for kernel in kernels(module))
        for got, want in zip(run_loop(module, [x]), expected, strict=True):
            np.testing.assert_array_equal(got, want)


def test_online_sum_of_exponentials_matches_numpy() -> None:
    """The looped softmax denominator accumulates online, in the max's loop
    (one loop fewer), and matches NumPy on rows of several chunks with a
    masked tail: -inf entries, a row of -inf (NaN, as NumPy gives), a NaN, an
    inf, and values whose exponentials overflow without the shift."""
    text = """
    func.func @f(%x: !graph.tensor<[N, 100], f32>) -> !graph.tensor<[N, 1], f32> {
      %0 = graph.reduce max %x [1] : !graph.tensor<[N, 100], f32> -> !graph.tensor<[N, 1], f32>
      %1 = graph.broadcast %0 : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, 100], f32>
      %2 = graph.sub %x, %1 : !graph.tensor<[N, 100], f32>
      %3 = graph.exp %2 : !graph.tensor<[N, 100], f32>
      %4 = graph.reduce sum %3 [1] : !graph.tensor<[N, 100], f32> -> !graph.tensor<[N, 1], f32>
      func.return %4 : !graph.tensor<[N, 1], f32>
    }
    """
    x = np.random.default_rng(2).standard_normal((6, 100)).astype(np.float32)
    x[0, :40] = -np.inf  # the first chunks hold nothing but -inf
    x[1, :] = -np.inf
    x[2, 70] = np.nan
    x[3, 99] = np.inf
    x[4, :] *= 100.0
    x[5, 33] = 80.0  # a max in a later chunk rescales the earlier sums
    with np.errstate(invalid="ignore"):
        expected = np.sum(np.exp(x - x.max(1, keepdims=True)), 1, keepdims=True)
    module = parse_module(text)
    FusePass().apply(default_context(), module)
    TilePass(max_persistent=64, reduction_block=32).apply(default_context(), module)
    loops = [op for op in module.walk() if op.name == "scf.for"]
    assert len(loops) == 1
    (got,) = run_loop(module, [x])
    np.testing.assert_allclose(got, expected, rtol=1e-5, equal_nan=True)


VARIANCE = """
func.func @f(%x: !graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, 1], f32>, !graph.tensor<[N, 1], f32>) {
  %0 = graph.reduce sum %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
  %1 = graph.dim D : !graph.tensor<[], f32>
  %2 = graph.broadcast %1 : !graph.tensor<[], f32> -> !graph.tensor<[N, 1], f32>
  %mean = graph.div %0, %2 : !graph.tensor<[N, 1], f32>
  %3 = graph.broadcast %mean : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
  %4 = graph.sub %x, %3 : !graph.tensor<[N, D], f32>
  %5 = graph.mul %4, %4 : !graph.tensor<[N, D], f32>
  %6 = graph.reduce sum %5 [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
  %var = graph.div %6, %2 : !graph.tensor<[N, 1], f32>
  func.return %mean, %var : !graph.tensor<[N, 1], f32>, !graph.tensor<[N, 1], f32>
}
"""


@pytest.mark.parametrize("columns", [100, 128], ids=["masked-tail", "whole-chunks"])
def test_welford_variance_matches_numpy(columns: int) -> None:
    """The mean and the variance of a looped row share one loop (Welford's
    lane-wise counts, means and squared deviations) and match NumPy, with a
    large mean (a sum of squares minus the squared sum would cancel), a NaN
    and an inf."""
    x = np.random.default_rng(3).standard_normal((4, columns)).astype(np.float32)
    x[1] += 10_000.0
    x[2, 7] = np.nan
    x[3, 50] = np.inf
    module = parse_module(VARIANCE)
    FusePass().apply(default_context(), module)
    TilePass(max_persistent=64, reduction_block=32).apply(default_context(), module)
    assert len([op for op in module.walk() if op.name == "scf.for"]) == 1
    mean, variance = run_loop(module, [x])
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(mean, x.mean(1, keepdims=True), rtol=1e-5)
        np.testing.assert_allclose(
            variance, x.var(1, keepdims=True), rtol=1e-4, equal_nan=True
        )


def _fused_variance() -> ModuleOp:
    """``VARIANCE`` fused: its sum of squares recorded as ``centred_sum``."""
    module = parse_module(VARIANCE)
    FusePass().apply(default_context(), module)
    records = [
        op.attributes[IDIOM_ATTRIBUTE]
        for op in module.walk()
        if IDIOM_ATTRIBUTE in op.attributes
    ]
    assert records == [StringAttr("centred_sum")]
    return module


def _looped(module: ModuleOp) -> str:
    TilePass(max_persistent=64, reduction_block=32).apply(default_context(), module)
    return print_module(module)


def test_tile_reads_the_recorded_idioms(monkeypatch: pytest.MonkeyPatch) -> None:
    """``tile`` takes the idioms ``fuse`` recorded without recognising them
    again; a kernel without records (written by hand) is decided by the
    same recogniser, and tiles the same."""
    fused = _fused_variance()
    stripped = _fused_variance()
    for op in stripped.walk():
        op.attributes.pop(IDIOM_ATTRIBUTE, None)
    expected = _looped(stripped)

    def recognise(_: object) -> RowIdioms:
        raise AssertionError("tile recognised a recorded kernel's idioms again")

    monkeypatch.setattr(RowIdioms, "recognise", staticmethod(recognise))
    assert _looped(fused) == expected


def test_index_width_follows_the_guards() -> None:
    """i64 index arithmetic unless guards bound every extent below 2**31."""
    body = """
      %0 = graph.exp %x : !graph.tensor<[N, D], f32>
      func.return %0 : !graph.tensor<[N, D], f32>
    }
    """
    head = (
        "func.func @f(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {\n"
    )
    bounded = head + "sym.guard N <= 4096\nsym.guard D <= 4096\n" + body
    for text, index_type in ((head + body, i64), (bounded, i32)):
        module = parse_module(text)
        FusePass().apply(default_context(), module)
        TilePass().apply(default_context(), module)
        (kernel,) = kernels(module)
        pid = next(op for op in kernel.walk() if isinstance(op, tile.ProgramIdOp))
        assert pid.result.type == index_type


def test_tile_options_must_be_powers_of_two() -> None:
    module = SUITE["softmax"].compile(pipeline="canonicalize,cse").module.clone()
    FusePass().apply(default_context(), module)
    with pytest.raises(IrcError, match="power of two"):
        TilePass(pointwise_block=1000).apply(default_context(), module)


def test_fuse_then_tile_preserves_meaning() -> None:
    testing.check_pass("fuse,tile", max_examples=100)


def test_empty_reduction_masks_every_lane() -> None:
    """A reduced extent of 0 (a slice past the end) reads nothing."""
    module = parse_module(
        """
        func.func @main(%x: !graph.tensor<[1, 3], f32>) -> !graph.tensor<[3], f32> {
          %0 = graph.slice %x [1, 0] [1, 1] : !graph.tensor<[1, 3], f32> -> !graph.tensor<[0, 3], f32>
          %1 = graph.reduce sum %0 [0] : !graph.tensor<[0, 3], f32> -> !graph.tensor<[3], f32>
          func.return %1 : !graph.tensor<[3], f32>
        }
        """
    )
    testing.check_pass("fuse,tile", programs=[module], max_examples=5)


def test_a_transposed_one_by_one_matmul_result_is_stored_at_its_tile() -> None:
    """Regression: ``(a @ b).T`` whose product is ``[1, 1]`` made the tile
    pass read the matmul at a constant column (its one column delinearized
    to 0) and refuse the kernel fusion had formed."""
    import irc

    def f(x):
        row = (-x).reshape(1, -1)
        s = np.tanh(row @ row.T)
        return (s @ s.T).T

    compiled = irc.compile(f, irc.TensorSpec(("N",), "float32"))
    x = np.arange(1, 4, dtype=np.float32) / 4
    row = (-x).reshape(1, -1)
    s = np.tanh(row @ row.T)
    want = (s @ s.T).T
    np.testing.assert_allclose(compiled(x, backend="interpret"), want, rtol=1e-5)


@pytest.mark.parametrize("scale", ["div", "mul"])
def test_a_matmul_prologue_scaled_by_a_constant_keeps_masked_lanes_zero(
    scale: str,
) -> None:
    """Regression (found generating stacks of layers): a matmul operand
    scaled by a constant in its prologue, ``a @ (b / 1.0).T``, read the
    constant as 0 in the K tail's masked lanes, so those lanes computed
    ``0 / 0`` and the dot's ``0 * NaN`` made every result NaN."""
    op = f"graph.{scale}"
    module = parse_module(
        f"""
        func.func @main(%a: !graph.tensor<[N, N, N], f32>, %b: !graph.tensor<[N, N, N], f32>) -> !graph.tensor<[N, N, N], f32> {{
          %c = graph.constant 1.000000e+00 : f32 -> !graph.tensor<[N, N, N], f32>
          %0 = {op} %b, %c : !graph.tensor<[N, N, N], f32>
          %1 = graph.transpose %0 [0, 2, 1] : !graph.tensor<[N, N, N], f32> -> !graph.tensor<[N, N, N], f32>
          %2 = graph.matmul %a, %1 : (!graph.tensor<[N, N, N], f32>, !graph.tensor<[N, N, N], f32>) -> !graph.tensor<[N, N, N], f32>
          func.return %2 : !graph.tensor<[N, N, N], f32>
        }}
        """
    )
    testing.check_pass("fuse,tile", programs=[module], max_examples=10)
