"""The ``fuse`` pass on captured NumPy programs: how many kernels of which
kinds it forms, that the fused module computes what the graph module does,
and the fusion dialect's Python API.

The programs and their expected kernel counts are in ``suite_programs.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st
from suite_programs import SUITE, SuiteProgram
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, ModuleOp
from xdsl.ir import Block, Region

import irc
from irc import pytree, testing
from irc.api import DEFAULT_PIPELINE
from irc.dialects import graph as g
from irc.dialects.fusion import KernelOp, YieldOp, maps_rows
from irc.dialects.kernel_kind import POINTWISE
from irc.errors import BindingError
from irc.interpreters.fusion import run_fusion
from irc.interpreters.graph import run_graph
from irc.ir import default_context, parse_module, print_module
from irc.lowering.graph_to_fusion import CHAIN_LIMIT, FusePass
from irc.passes.autodiff import AutodiffPass
from irc.passes.registry import get_all_passes
from irc.shapes import SymExpr
from irc.testing import level_of

#: The graph passes of the default pipeline: these tests apply ``fuse``
#: themselves.
GRAPH_PIPELINE = "canonicalize,cse,horizontal-fusion,canonicalize"


class Fused:
    """A suite program compiled, fused, and run on one set of inputs."""

    def __init__(self, program: SuiteProgram, seed: int = 0):
        compiled = program.compile(pipeline=GRAPH_PIPELINE)
        self.graph = compiled.module
        self.module = compiled.module.clone()
        FusePass().apply(default_context(), self.module)
        self.module.verify()
        call = program.inputs(np.random.default_rng(seed))
        leaves, _ = pytree.flatten((list(call.args), dict(call.kwargs)))
        static = compiled.captured.static_leaves
        self.arrays = [leaf for i, leaf in enumerate(leaves) if i not in static]

    @property
    def kernels(self) -> list[KernelOp]:
        return [op for op in self.module.walk() if isinstance(op, KernelOp)]

    @property
    def kinds(self) -> list[str]:
        return [kernel.kind_name for kernel in self.kernels]

    def body(self) -> list[str]:
        """The op names of the fused function's body."""
        function = next(op for op in self.module.ops if isinstance(op, func.FuncOp))
        return [op.name for op in function.body.block.ops]


@pytest.fixture(scope="module", params=sorted(SUITE))
def fused(request: pytest.FixtureRequest) -> tuple[str, Fused]:
    return request.param, Fused(SUITE[request.param])


def test_kernel_count(fused: tuple[str, Fused]) -> None:
    name, result = fused
    assert len(result.kernels) == SUITE[name].kernels, "\n".join(
        f"{k.kernel_name} {k.kind_name}: {k.reason_text}" for k in result.kernels
    )


def test_only_kernels_guards_and_dense_constants_remain(
    fused: tuple[str, Fused],
) -> None:
    _, result = fused
    *body, last = result.body()
    assert last == "func.return"
    assert set(body) <= {"fusion.kernel", "sym.guard", "graph.constant"}
    for op in result.module.walk():
        if isinstance(op, g.ConstantOp) and not isinstance(op.parent_op(), KernelOp):
            assert not op.is_splat


def test_kernels_are_named_in_order(fused: tuple[str, Fused]) -> None:
    _, result = fused
    assert [k.kernel_name for k in result.kernels] == [
        f"k{i}" for i in range(len(result.kernels))
    ]
    assert all(k.reason_text for k in result.kernels)


def test_fusion_interpreter_matches_graph_interpreter(
    fused: tuple[str, Fused],
) -> None:
    _, result = fused
    expected = run_graph(result.graph, result.arrays)
    actual = run_fusion(result.module, result.arrays)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_suite_program_computes_what_numpy_does(fused: tuple[str, Fused]) -> None:
    """The graph module (hence the fused one) agrees with the NumPy function
    it was captured from, so the suite's expected results are NumPy's."""
    name, result = fused
    call = SUITE[name].inputs(np.random.default_rng(0))
    expected = SUITE[name].function(*call.args, **call.kwargs)
    expected_leaves, _ = pytree.flatten(expected)
    actual = run_fusion(result.module, result.arrays)
    assert len(actual) == len(expected_leaves)
    for got, want in zip(actual, expected_leaves):
        assert got.dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_fused_module_round_trips(fused: tuple[str, Fused]) -> None:
    _, result = fused
    text = print_module(result.module)
    assert print_module(parse_module(text)) == text
    generic = print_module(result.module, generic=True)
    assert print_module(parse_module(generic)) == text


# Particular programs ------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kinds"),
    [
        ("softmax", ["reduction"]),
        ("layer_norm", ["reduction"]),
        ("cross_entropy", ["reduction", "reduction"]),
        ("gelu_linear", ["matmul"]),
        ("mlp", ["matmul", "matmul"]),
        ("swiglu", ["matmul", "matmul", "matmul"]),
        ("causal_attention", ["attention"]),
        ("head_split", ["pointwise"]),
        ("rotary", ["pointwise"]),
        ("adam_step", ["pointwise"]),
    ],
)
def test_kernel_kinds(name: str, kinds: list[str]) -> None:
    assert Fused(SUITE[name]).kinds == kinds


def test_layer_norm_fuses_mean_and_variance() -> None:
    (kernel,) = Fused(SUITE["layer_norm"]).kernels
    reductions = [op for op in kernel.body.walk() if isinstance(op, g.ReduceOp)]
    assert len(reductions) == 2
    assert kernel.reason_text.startswith("row reduction over [1] of [N, D] (")


def test_adam_step_is_one_kernel_with_three_outputs() -> None:
    result = Fused(SUITE["adam_step"])
    (kernel,) = result.kernels
    assert len(kernel.outputs) == 3
    assert len(kernel.inputs) == 4


def test_embedding_keeps_its_guard_outside() -> None:
    result = Fused(SUITE["embedding"])
    assert result.body() == ["sym.guard", "fusion.kernel", "func.return"]


def test_attention_is_one_kernel_from_scores_to_output() -> None:
    (kernel,) = Fused(SUITE["causal_attention"]).kernels
    names = [op.name for op in kernel.body.walk()]
    assert {"graph.iota", "graph.select", "graph.reduce"} <= set(names)
    assert names.count("graph.matmul") == 2
    assert [v.type for v in kernel.outputs] == [kernel.inputs[2].type]  # [S, 64]
    assert kernel.reason_text.startswith("attention: matmul [S, 64] x [64, S]")
    assert "so the [S, S] scores never reach memory" in kernel.reason_text


def test_gpt2_block() -> None:
    """7 kernels, each of them necessary under the kernel contracts:

    - layer norm 1 (k0); its output feeds the qkv matmul's operand, which
      takes only layout ops and casts;
    - the qkv matmul with its bias (k1): its result is read by the
      attention kernel's three operand sides;
    - the heads, batched by ``horizontal-fusion`` over a leading head axis,
      as one attention kernel: q @ k.T, the scaled, masked softmax and
      p @ v (the q/k/v windows, reshaped and transposed to [heads, seq, 8],
      are its prologue; the causal mask, shared by the heads, is recomputed
      in it), so the [heads, seq, seq] scores never reach memory;
    - the projection with its bias and the residual add (k3), whose
      prologue joins the heads (the transpose and reshape that replace
      their concatenation), and whose result the second layer norm and the
      final residual both read;
    - layer norm 2, then c_fc with GELU, then c_proj with the residual.
    """
    result = Fused(SUITE["gpt2_block"])
    assert result.kinds == [
        "reduction",  # layer norm 1
        "matmul",  # qkv projection + bias
        "attention",  # every head: softmax(q @ k.T * scale + mask) @ v
        "matmul",  # heads joined, attention projection + bias + residual
        "reduction",  # layer norm 2
        "matmul",  # c_fc + bias + GELU
        "matmul",  # c_proj + bias + residual
    ]
    assert SUITE["gpt2_block"].kernels == 7


# Joint functions: forward and backward in one graph -----------------------------

#: Kernels of suite programs' joint functions (``autodiff`` in vjp mode,
#: then the default pipeline), the figures of docs/autodiff.md.
JOINT_KERNELS = {
    "log_softmax": 1,
    "layer_norm": 3,
    "cross_entropy": 4,
    "mlp": 8,
    "causal_attention": 4,
    "gpt2_block": 25,
}


def joint_kernels(name: str) -> list[KernelOp]:
    compiled = SUITE[name].compile(pipeline=f"autodiff,{DEFAULT_PIPELINE}")
    module = compiled.module_at("fusion")
    return [op for op in module.walk() if isinstance(op, KernelOp)]


@pytest.mark.parametrize("name", sorted(JOINT_KERNELS))
def test_joint_function_kernels(name: str) -> None:
    kernels = joint_kernels(name)
    assert len(kernels) == JOINT_KERNELS[name], "\n".join(
        f"{k.kernel_name} {k.kind_name}: {k.reason_text}" for k in kernels
    )


def stored_intermediates(kernels: list[KernelOp]) -> list[str]:
    """The types of the kernel results that other kernels read and the
    function does not return: what the forward stores for the backward."""
    return [
        str(result.type)
        for kernel in kernels
        for result in kernel.results
        if all(not isinstance(use.operation, func.ReturnOp) for use in result.uses)
    ]


@pytest.mark.parametrize("name", ["layer_norm", "log_softmax", "rms_norm"])
def test_backward_of_a_row_program_reads_only_per_row_statistics(name: str) -> None:
    """The backward recomputes the forward's pointwise values (``x - mean``,
    ``exp(x - max)``) from its input: no [N, D] intermediate is stored."""
    kernels = joint_kernels(name)
    stored = stored_intermediates(kernels)
    assert all("[N, 1]" in text for text in stored), stored
    assert any("recomputed here, not stored" in k.reason_text for k in kernels)


def test_cross_entropy_statistics_come_from_one_read_of_the_rows() -> None:
    """The forward's row max, sum of exponentials and picked logit are one
    kernel, which stores the max and the sum for the backward and says why."""
    first = joint_kernels("cross_entropy")[0]
    reductions = [op for op in first.body.walk() if isinstance(op, g.ReduceOp)]
    assert [op.kind.data for op in reductions] == ["max", "sum", "sum"]
    assert first.reason_text.count("(not recomputed: it is a reduction)") == 2


def chain_of_tanh(length: int) -> Callable[[np.ndarray], tuple[Any, Any]]:
    def program(x: np.ndarray) -> tuple[Any, Any]:
        for _ in range(length):
            x = np.tanh(x)
        return x.sum(axis=1), x.max(axis=0)

    return program


@pytest.mark.parametrize(
    ("length", "recomputed"), [(4, True), (CHAIN_LIMIT + 1, False)]
)
def test_only_a_short_chain_is_recomputed(length: int, recomputed: bool) -> None:
    """A chain used by two kernels (sums over rows and over columns) is
    recomputed in both when short; a longer one than ``CHAIN_LIMIT`` is
    computed once and stored for the other kernel, and the reason says why."""
    compiled = irc.compile(chain_of_tanh(length), irc.TensorSpec(("N", "D"), "float32"))
    first, second = (
        op for op in compiled.module_at("fusion").walk() if isinstance(op, KernelOp)
    )
    tanh_in_second = sum(isinstance(op, g.TanhOp) for op in second.body.walk())
    assert tanh_in_second == (length if recomputed else 0)
    if not recomputed:
        assert f"its elementwise chain is longer than {CHAIN_LIMIT} ops" in (
            first.reason_text
        )


def joint_functions() -> st.SearchStrategy[ModuleOp]:
    """Generated differentiable programs made their joint functions
    (``autodiff`` in vjp mode: a cotangent argument per result)."""

    def joint(module: ModuleOp) -> ModuleOp:
        module = module.clone()
        AutodiffPass().apply(default_context(), module)
        return module

    return testing.differentiable_programs().map(joint)


def test_fusing_joint_functions_keeps_their_meaning() -> None:
    """Law: over generated joint functions, where forward values have users
    in several backward kernels (what is recomputed, stored in the first
    kernel or merged), the fused module computes what the graph does."""
    testing.check_pass("fuse", programs=joint_functions(), max_examples=100)


def test_fusing_is_deterministic() -> None:
    texts = {print_module(Fused(SUITE["gpt2_block"]).module) for _ in range(2)}
    assert len(texts) == 1


def test_registered_and_at_the_fusion_level() -> None:
    assert get_all_passes()["fuse"]() is FusePass
    result = Fused(SUITE["softmax"])
    assert level_of(result.graph).name == "graph"
    assert level_of(result.module).name == "fusion"


# The fusion dialect's Python API --------------------------------------------------


def test_kernel_op_builds_from_its_body() -> None:
    tensor = g.TensorType(["N"], Float32Type())
    block = Block(arg_types=[tensor, tensor])
    add = g.AddOp(*block.args)
    block.add_ops([add, YieldOp([add.result, block.args[0]])])
    function_block = Block(arg_types=[tensor, tensor])
    kernel = KernelOp("k0", POINTWISE, list(function_block.args), Region(block), "why")
    function_block.add_ops([kernel, func.ReturnOp(*kernel.outputs)])
    module = ModuleOp(
        [func.FuncOp("f", ([tensor, tensor], [tensor, tensor]), Region(function_block))]
    )
    module.verify()
    assert (kernel.kernel_name, kernel.kind_name, kernel.reason_text) == (
        "k0",
        "pointwise",
        "why",
    )
    assert [v.type for v in kernel.outputs] == [tensor, tensor]
    assert list(kernel.inputs) == list(function_block.args)
    x, y = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    total, first = run_fusion(module, [x, y])
    np.testing.assert_array_equal(total, x + y)
    np.testing.assert_array_equal(first, x)


def test_run_fusion_wants_arrays() -> None:
    module = Fused(SUITE["softmax"]).module
    with pytest.raises(BindingError, match="argument 'x' is a list"):
        run_fusion(module, [[1.0, 2.0]])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("source", "axes", "expected"),
    [
        (["N", 1], [1], True),  # keepdims, reduced axis last
        (["N"], [1], False),  # right-aligned, N lands on the reduced axis
        (["D"], [0], True),  # reduced leading axis dropped
        ([1, "D"], [0], True),
        (["N", "D"], [1], False),  # not a reduction's result
        ([], [0, 1], True),  # a full reduction
        ([1, 1], [0, 1], True),
    ],
)
def test_maps_rows(source: list[int | str], axes: list[int], expected: bool) -> None:
    def shape(dims: list[int | str]) -> tuple[SymExpr, ...]:
        return g.TensorType(dims, Float32Type()).dims

    assert maps_rows(shape(source), shape(["N", "D"]), axes) is expected


def test_maps_rows_follows_axes_not_sizes() -> None:
    """[N] -> [N, N] over axes [1] has the right sizes but broadcasts the
    row values along the rows, not across them."""
    rows = g.TensorType(["N", "N"], Float32Type()).dims
    assert not maps_rows(rows[:1], rows, [1])
    assert maps_rows(rows[:1], rows, [0])


#: A matmul whose operands are splats: fused into its kernel, they are
#: values, not masked reads.
SPLAT_MATMUL = """
func.func @main(%a: !graph.tensor<[1, N], f32>) -> !graph.tensor<[1, N], f32> {
  %one = graph.constant 1.000000e+00 : f32 -> !graph.tensor<[], f32>
  %lhs = graph.reshape %one : !graph.tensor<[], f32> -> !graph.tensor<[1, 1], f32>
  %rhs = graph.broadcast %one : !graph.tensor<[], f32> -> !graph.tensor<[1, N], f32>
  %p = graph.matmul %lhs, %rhs : (!graph.tensor<[1, 1], f32>, !graph.tensor<[1, N], f32>) -> !graph.tensor<[1, N], f32>
  %r = graph.add %p, %a : !graph.tensor<[1, N], f32>
  func.return %r : !graph.tensor<[1, N], f32>
}
"""


def test_a_splat_operand_of_a_matmul_is_zero_in_its_masked_lanes() -> None:
    """The dot sums whole tiles, the K lanes past the contracted extent
    included: a splat operand must be 0 there, as a masked read is (a sum
    of 16 ones once came out of this 1 x 1 contraction)."""
    testing.check_pass("fuse,tile", programs=[SPLAT_MATMUL], max_examples=5)


UNIT_COLUMN_RESHAPE = """
func.func @main(%a: !graph.tensor<[1, N], f32>, %b: !graph.tensor<[N, 1], f32>) -> !graph.tensor<[1, 1, 1], f32> {
  %p = graph.matmul %a, %b : (!graph.tensor<[1, N], f32>, !graph.tensor<[N, 1], f32>) -> !graph.tensor<[1, 1], f32>
  %r = graph.reshape %p : !graph.tensor<[1, 1], f32> -> !graph.tensor<[1, 1, 1], f32>
  func.return %r : !graph.tensor<[1, 1, 1], f32>
}
"""


def test_a_reshape_adding_unit_axes_to_a_single_column_stays_out_of_the_epilogue() -> (
    None
):
    """Splitting a column of 1 only adds unit axes, indexed by 0 where the
    tile indexes its column lanes: the epilogue cannot read the result
    there (a tile crash that irc.testing's scatter_add programs found)."""
    testing.check_pass("fuse,tile", programs=[UNIT_COLUMN_RESHAPE], max_examples=5)


def test_a_matmul_kernel_yields_no_input_value_of_another_shape() -> None:
    """Regression (the JAX oracle's fuzzing, where it corrupted the heap): a
    matmul whose epilogue adds ``(a.T @ c).T`` to ``tanh(a)`` took
    ``tanh(a)``, which the function also returns, as an output; but its
    ``[K, 2]`` tile covers no ``[2, K]`` value computed before the matmul
    (the kernel contract refuses it, and the tiler stored it out of
    bounds). It is the epilogue's input only, computed by a kernel of its
    own."""
    module = parse_module(
        """
        func.func @main(%a: !graph.tensor<[2, K], f32>, %c: !graph.tensor<[2, 2], f32>, %d: !graph.tensor<[2, K], f32>) -> (!graph.tensor<[2, K], f32>, !graph.tensor<[2, K], f32>) {
          %t = graph.tanh %a : !graph.tensor<[2, K], f32>
          %g = graph.mul %d, %t : !graph.tensor<[2, K], f32>
          %at = graph.transpose %a [1, 0] : !graph.tensor<[2, K], f32> -> !graph.tensor<[K, 2], f32>
          %m = graph.matmul %at, %c : (!graph.tensor<[K, 2], f32>, !graph.tensor<[2, 2], f32>) -> !graph.tensor<[K, 2], f32>
          %mt = graph.transpose %m [1, 0] : !graph.tensor<[K, 2], f32> -> !graph.tensor<[2, K], f32>
          %r = graph.add %g, %mt : !graph.tensor<[2, K], f32>
          func.return %t, %r : !graph.tensor<[2, K], f32>, !graph.tensor<[2, K], f32>
        }
        """
    )
    testing.check_pass("fuse,tile", programs=[module], max_examples=10)
    FusePass().apply(default_context(), module)
    module.verify()
    (matmul_kernel,) = (
        op
        for op in module.walk()
        if isinstance(op, KernelOp) and op.kind.data == "matmul"
    )
    assert len(matmul_kernel.outputs) == 1


#: Matmul epilogues stored through a join of axes: batched heads moved
#: behind the rows and joined (symbolic head width; a head width below the
#: 16-lane tile, whose masked lanes would land in the next head's columns),
#: row blocks stacked back (no transpose), and a join after an elementwise
#: epilogue reading another input in the joined layout.
JOINED_EPILOGUES = [
    """
func.func @main(%q: !graph.tensor<[3, N, D], f32>, %w: !graph.tensor<[D, D], f32>) -> !graph.tensor<[N, 3*D], f32> {
  %p = graph.matmul %q, %w : (!graph.tensor<[3, N, D], f32>, !graph.tensor<[D, D], f32>) -> !graph.tensor<[3, N, D], f32>
  %t = graph.transpose %p [1, 0, 2] : !graph.tensor<[3, N, D], f32> -> !graph.tensor<[N, 3, D], f32>
  %j = graph.reshape %t : !graph.tensor<[N, 3, D], f32> -> !graph.tensor<[N, 3*D], f32>
  func.return %j : !graph.tensor<[N, 3*D], f32>
}
""",
    """
func.func @main(%q: !graph.tensor<[2, N, 5], f32>, %w: !graph.tensor<[5, 5], f32>, %r: !graph.tensor<[N, 10], f32>) -> !graph.tensor<[N, 10], f32> {
  %p = graph.matmul %q, %w : (!graph.tensor<[2, N, 5], f32>, !graph.tensor<[5, 5], f32>) -> !graph.tensor<[2, N, 5], f32>
  %e = graph.tanh %p : !graph.tensor<[2, N, 5], f32>
  %t = graph.transpose %e [1, 0, 2] : !graph.tensor<[2, N, 5], f32> -> !graph.tensor<[N, 2, 5], f32>
  %j = graph.reshape %t : !graph.tensor<[N, 2, 5], f32> -> !graph.tensor<[N, 10], f32>
  %y = graph.add %j, %r : !graph.tensor<[N, 10], f32>
  func.return %y : !graph.tensor<[N, 10], f32>
}
""",
    """
func.func @main(%x: !graph.tensor<[2, M, K], f32>, %w: !graph.tensor<[K, 3], f32>) -> !graph.tensor<[2*M, 3], f32> {
  %p = graph.matmul %x, %w : (!graph.tensor<[2, M, K], f32>, !graph.tensor<[K, 3], f32>) -> !graph.tensor<[2, M, 3], f32>
  %j = graph.reshape %p : !graph.tensor<[2, M, 3], f32> -> !graph.tensor<[2*M, 3], f32>
  func.return %j : !graph.tensor<[2*M, 3], f32>
}
""",
    # Batch axes joined, whose tile coordinates come from the program id.
    """
func.func @main(%p: !graph.tensor<[B, 2, S, S], f32>, %v: !graph.tensor<[B, 2, S, 4], f32>) -> !graph.tensor<[2*B, S, 4], f32> {
  %m = graph.matmul %p, %v : (!graph.tensor<[B, 2, S, S], f32>, !graph.tensor<[B, 2, S, 4], f32>) -> !graph.tensor<[B, 2, S, 4], f32>
  %r = graph.reshape %m : !graph.tensor<[B, 2, S, 4], f32> -> !graph.tensor<[2*B, S, 4], f32>
  func.return %r : !graph.tensor<[2*B, S, 4], f32>
}
""",
]

#: Epilogues a matmul kernel does not store through, computed by a kernel of
#: their own: two runs of axes joined (a batch of heads joined as rows and
#: columns, which the reshape's index map linearizes together), and an
#: attention kernel's output read transposed by a consumer.
UNJOINED_EPILOGUES = [
    """
func.func @main(%p: !graph.tensor<[B, 2, S, S], f32>, %v: !graph.tensor<[B, 2, S, 4], f32>) -> !graph.tensor<[B*S, 8], f32> {
  %m = graph.matmul %p, %v : (!graph.tensor<[B, 2, S, S], f32>, !graph.tensor<[B, 2, S, 4], f32>) -> !graph.tensor<[B, 2, S, 4], f32>
  %t = graph.transpose %m [0, 2, 1, 3] : !graph.tensor<[B, 2, S, 4], f32> -> !graph.tensor<[B, S, 2, 4], f32>
  %r = graph.reshape %t : !graph.tensor<[B, S, 2, 4], f32> -> !graph.tensor<[B*S, 8], f32>
  func.return %r : !graph.tensor<[B*S, 8], f32>
}
""",
    """
func.func @main(%q: !graph.tensor<[16, 16], f32>, %k: !graph.tensor<[16, 16], f32>, %v: !graph.tensor<[16, 16], f32>, %w: !graph.tensor<[16, 16], f32>) -> (!graph.tensor<[], f32>, !graph.tensor<[16, 16], f32>, !graph.tensor<[16, 16], f32>) {
  %kt = graph.transpose %k [1, 0] : !graph.tensor<[16, 16], f32> -> !graph.tensor<[16, 16], f32>
  %s = graph.matmul %q, %kt : (!graph.tensor<[16, 16], f32>, !graph.tensor<[16, 16], f32>) -> !graph.tensor<[16, 16], f32>
  %m = graph.reduce max %s [1] : !graph.tensor<[16, 16], f32> -> !graph.tensor<[16, 1], f32>
  %mb = graph.broadcast %m : !graph.tensor<[16, 1], f32> -> !graph.tensor<[16, 16], f32>
  %d = graph.sub %s, %mb : !graph.tensor<[16, 16], f32>
  %e = graph.exp %d : !graph.tensor<[16, 16], f32>
  %l = graph.reduce sum %e [1] : !graph.tensor<[16, 16], f32> -> !graph.tensor<[16, 1], f32>
  %lb = graph.broadcast %l : !graph.tensor<[16, 1], f32> -> !graph.tensor<[16, 16], f32>
  %p = graph.div %e, %lb : !graph.tensor<[16, 16], f32>
  %o = graph.matmul %p, %v : (!graph.tensor<[16, 16], f32>, !graph.tensor<[16, 16], f32>) -> !graph.tensor<[16, 16], f32>
  %tot = graph.reduce sum %o [0, 1] : !graph.tensor<[16, 16], f32> -> !graph.tensor<[], f32>
  %u = graph.sub %o, %q : !graph.tensor<[16, 16], f32>
  %t = graph.transpose %u [1, 0] : !graph.tensor<[16, 16], f32> -> !graph.tensor<[16, 16], f32>
  %g = graph.tanh %t : !graph.tensor<[16, 16], f32>
  %a = graph.matmul %g, %w : (!graph.tensor<[16, 16], f32>, !graph.tensor<[16, 16], f32>) -> !graph.tensor<[16, 16], f32>
  %b = graph.matmul %g, %q : (!graph.tensor<[16, 16], f32>, !graph.tensor<[16, 16], f32>) -> !graph.tensor<[16, 16], f32>
  func.return %tot, %a, %b : !graph.tensor<[], f32>, !graph.tensor<[16, 16], f32>, !graph.tensor<[16, 16], f32>
}
""",
]


@pytest.mark.parametrize("text", UNJOINED_EPILOGUES)
def test_what_a_matmul_epilogue_does_not_store_through_stays_correct(
    text: str,
) -> None:
    """Regressions (review): such a kernel crashed ``tile`` (a value read
    away from the tile) or did not verify after ``fuse``."""
    testing.check_pass("fuse,tile", programs=[text], max_examples=10)


@pytest.mark.parametrize("text", JOINED_EPILOGUES)
def test_a_matmul_epilogue_stores_through_a_join_of_axes(text: str) -> None:
    """The joined value is the matmul kernel's one output (no copy kernel),
    the tiles keep the program's meaning and the bounds checker proves
    every store in bounds."""
    module = parse_module(text)
    FusePass().apply(default_context(), module)
    kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
    assert [k.kind.data for k in kernels] == ["matmul"]
    assert "stored as" in kernels[0].reason_text
    testing.check_pass("fuse,tile", programs=[text], max_examples=10)
