"""``horizontal-fusion``: identical per-head computations batched over a
leading head axis keep their meaning on generated per-head programs
(``check_pass`` over ``testing.head_programs``, with every batching rule and
with the default's heads holding a matmul); hand-written heads (attention
with 2, 3 and 12 heads, an MLP on row blocks, per-head weights, per-head
layer norms and softmaxes over columns) run through the whole pipeline and
agree with NumPy on the reference backend (bit for bit) and Triton's
interpreter at two bindings of the symbolic dims; the heads holding a
matmul become one kernel per stage for all heads, the others are left to
fusion by default; heads of different widths or sharing an op are left
alone; batched ops keep the user's lines; ``autodiff`` differentiates the
batched GPT-2 block. The FileCheck cases are in
``tests/filecheck/transforms/horizontal-fusion.mlir``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import settings
from programs import N_HEAD, attention, layer_norm, softmax
from suite_programs import SUITE
from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import (
    CommonSubexpressionElimination,
)

import irc
from irc import pytree, testing
from irc.api import DEFAULT_PIPELINE
from irc.dialects import graph as g
from irc.dialects.memory import LaunchOp
from irc.interpreters.graph import find_function
from irc.ir import default_context, parse_module
from irc.passes.horizontal_fusion import HorizontalFusionPass

EXAMPLES = max(200, settings.default.max_examples)
F32 = "float32"


#: Every batching rule, not only the default's heads holding a matmul.
EVERY_MATCH = "horizontal-fusion{require-matmul=false}"

#: Bodies rich in matmuls, for the default pass.
MATMUL_ACTIONS = ("matmul", "binary", "unary", "reduce", "broadcast", "transpose")


def test_check_pass_on_generated_heads() -> None:
    testing.check_pass(EVERY_MATCH, testing.head_programs(), max_examples=EXAMPLES)


def test_check_pass_on_generated_heads_with_matmuls() -> None:
    testing.check_pass(
        "horizontal-fusion",
        testing.head_programs(actions=MATMUL_ACTIONS, dtypes=(F32,)),
        max_examples=EXAMPLES,
    )


def test_check_pass_on_generated_heads_then_lowered() -> None:
    testing.check_pass(
        f"{EVERY_MATCH},fuse,tile,bufferize",
        testing.head_programs(max_ops=4),
        max_examples=max(30, EXAMPLES // 10),
        require_change=["horizontal-fusion"],
    )


# Hand-written per-head programs -----------------------------------------------


def attention_heads(x, mask, n_head):
    """Causal attention of each head, as picoGPT writes it."""
    q, k, v = np.split(x, 3, axis=-1)
    heads = zip(*(np.split(part, n_head, axis=-1) for part in (q, k, v)))
    return np.hstack([attention(qh, kh, vh, mask) for qh, kh, vh in heads])


def layer_norm_heads(x, g_, b, n_head):
    """A layer norm of each head's columns (as in grouped normalisation)."""
    return np.hstack([layer_norm(h, g_, b) for h in np.split(x, n_head, axis=1)])


def mlp_row_blocks(x, w1, w2, n_block):
    """The same two-layer MLP on each block of rows, stacked back."""
    blocks = np.split(x, n_block, axis=0)
    return np.vstack([np.tanh(block @ w1) @ w2 for block in blocks])


def per_head_weights(x, w):
    """Head h's rows times head h's own weight, stacked (``x[h] @ w[h]``)."""
    return np.stack([x[h] @ w[h] for h in range(x.shape[0])])


def softmax_heads_returned(x, n_head):
    """Per-head softmaxes returned one by one (no concatenation)."""
    return tuple(softmax(h) for h in np.split(x, n_head, axis=1))


HEAD_DIM = 4


def _attention_case(n_head: int) -> Case:
    width = 3 * n_head * HEAD_DIM
    return Case(
        lambda x, mask: attention_heads(x, mask, n_head),
        (irc.TensorSpec(("S", width), F32), irc.TensorSpec(("S", "S"), F32)),
        lambda rng, S: (
            rng.standard_normal((S, width)).astype(np.float32),
            np.triu(np.full((S, S), -1e9, np.float32), 1),
        ),
        [{"S": 3}, {"S": 5}],
        n_head,
    )


class Case:
    """A per-head program, its specs, inputs per binding and head count."""

    def __init__(
        self,
        function: Callable[..., Any],
        specs: tuple[irc.TensorSpec, ...],
        make_inputs: Callable[..., tuple[np.ndarray, ...]],
        bindings: list[dict[str, int]],
        heads: int,
    ) -> None:
        self.function = function
        self.specs = specs
        self.make_inputs = make_inputs
        self.bindings = bindings
        self.heads = heads


CASES: dict[str, Callable[[], Case]] = {
    "attention-2": lambda: _attention_case(2),
    "attention-3": lambda: _attention_case(3),
    "attention-12": lambda: _attention_case(12),
    "layer-norm-columns": lambda: Case(
        lambda x, g_, b: layer_norm_heads(x, g_, b, 3),
        (
            irc.TensorSpec(("N", 12), F32),
            irc.TensorSpec((4,), F32),
            irc.TensorSpec((4,), F32),
        ),
        lambda rng, N: (
            rng.standard_normal((N, 12)).astype(np.float32),
            rng.standard_normal(4).astype(np.float32),
            rng.standard_normal(4).astype(np.float32),
        ),
        [{"N": 2}, {"N": 5}],
        3,
    ),
    "mlp-rows": lambda: Case(
        lambda x, w1, w2: mlp_row_blocks(x, w1, w2, 2),
        (
            irc.TensorSpec((6, "D"), F32),
            irc.TensorSpec(("D", 5), F32),
            irc.TensorSpec((5, 3), F32),
        ),
        lambda rng, D: (
            rng.standard_normal((6, D)).astype(np.float32),
            (rng.standard_normal((D, 5)) * 0.5).astype(np.float32),
            (rng.standard_normal((5, 3)) * 0.5).astype(np.float32),
        ),
        [{"D": 2}, {"D": 7}],
        2,
    ),
    "per-head-weights": lambda: Case(
        per_head_weights,
        (irc.TensorSpec((3, "N", 4), F32), irc.TensorSpec((3, 4, 5), F32)),
        lambda rng, N: (
            rng.standard_normal((3, N, 4)).astype(np.float32),
            rng.standard_normal((3, 4, 5)).astype(np.float32),
        ),
        [{"N": 2}, {"N": 5}],
        3,
    ),
    "softmax-returned": lambda: Case(
        lambda x: softmax_heads_returned(x, 2),
        (irc.TensorSpec(("N", 6), F32),),
        lambda rng, N: (rng.standard_normal((N, 6)).astype(np.float32),),
        [{"N": 1}, {"N": 4}],
        2,
    ),
}


def batched_ops(module: ModuleOp, heads: int) -> list[g.GraphOp]:
    """The graph ops of ``@main`` whose result has a leading head axis."""
    body = find_function(module).body.block
    return [
        op
        for op in body.ops
        if isinstance(op, g.GraphOp)
        and g.tensor_type(op.results[0]).rank >= 2
        and g.tensor_type(op.results[0]).dims[0] == heads
    ]


#: The default pipeline, and the same batching every match.
PIPELINES = {
    "default": DEFAULT_PIPELINE,
    "every-match": DEFAULT_PIPELINE.replace("horizontal-fusion", EVERY_MATCH),
}
#: The default pipeline without the pass.
WITHOUT = DEFAULT_PIPELINE.replace("horizontal-fusion,canonicalize,", "")

#: The cases the default batches: those whose heads hold a matmul.
WITH_MATMULS = {
    "attention-2",
    "attention-3",
    "attention-12",
    "mlp-rows",
    "per-head-weights",
}


@pytest.fixture(scope="module")
def compiled() -> Callable[[str, str], irc.Compiled]:
    cache: dict[tuple[str, str], irc.Compiled] = {}

    def get(name: str, pipeline: str = "default") -> irc.Compiled:
        if (name, pipeline) not in cache:
            case = CASES[name]()
            program = irc.compile(
                case.function, *case.specs, pipeline=PIPELINES.get(pipeline, pipeline)
            )
            cache[name, pipeline] = program
        return cache[name, pipeline]

    return get


def _leaves(value: Any) -> list[np.ndarray]:
    return list(value) if isinstance(value, tuple) else [value]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
@pytest.mark.parametrize("backend", ["reference", "interpret"])
def test_heads_match_numpy(name: str, pipeline: str, backend: str, compiled) -> None:
    case = CASES[name]()
    program = compiled(name, pipeline)
    rng = np.random.default_rng(0)
    for binding in case.bindings:
        arrays = case.make_inputs(rng, **binding)
        expected = _leaves(case.function(*arrays))
        got = _leaves(program(*arrays, backend=backend))
        assert len(got) == len(expected)
        for result, numpy_result in zip(got, expected):
            where = f"{name} at {binding}"
            assert result.dtype == numpy_result.dtype, where
            assert result.shape == numpy_result.shape, where
            if backend == "reference":
                # The same ops on each element: NumPy's results bit for bit.
                np.testing.assert_array_equal(result, numpy_result, err_msg=where)
            else:
                np.testing.assert_allclose(
                    result, numpy_result, rtol=1e-5, atol=1e-6, err_msg=where
                )


@pytest.mark.parametrize("name", sorted(CASES))
def test_heads_are_batched(name: str, compiled) -> None:
    heads = CASES[name]().heads
    every = compiled(name, "every-match").module_at("graph")
    assert batched_ops(every, heads), name
    default = compiled(name).module_at("graph")
    assert bool(batched_ops(default, heads)) == (name in WITH_MATMULS)
    # No per-head copy of the work is left: one op per reduction or matmul
    # of the head's code.
    body = find_function(every).body.block.ops
    kinds = [op.name for op in body if isinstance(op, g.ReduceOp | g.MatmulOp)]
    assert all(kinds.count(kind) <= 2 for kind in set(kinds)), kinds


@pytest.mark.parametrize(
    ("name", "kernels", "without"),
    [
        # One attention kernel (q @ k.T, the masked softmax and p @ v) with
        # the heads in its grid, and the heads' join (a layout kernel, as
        # the result is returned): 2 for any number of heads, where without
        # the pass each head is an attention kernel and the join a concat;
        # the heads' kernels are independent, so their launches combine
        # (combine-launches), up to 8 a launch: 2 launches for 2 or 3
        # heads, 3 for 12, but a kernel per head still.
        ("attention-2", 2, 2),
        ("attention-3", 2, 2),
        ("attention-12", 2, 3),
        # The first layer of every row block, then the second, which writes
        # the blocks joined (its epilogue stores [2, 3, 3] as [6, 3]);
        # without the pass a row block's first layer writes the storage
        # that the block before's second layer read (memory.reuse), so
        # none of their launches combine.
        ("mlp-rows", 2, 5),
        # One batched matmul writing the stacked result; without the pass,
        # one launch of the three heads' matmuls, then their stacking.
        ("per-head-weights", 1, 2),
        # Left alone: fusion already joins the heads' row kernels.
        ("layer-norm-columns", 2, 2),
        ("softmax-returned", 1, 1),
    ],
)
def test_one_kernel_per_stage_for_all_heads(
    name: str, kernels: int, without: int, compiled
) -> None:
    assert compiled(name).num_kernels == kernels
    assert compiled(name, WITHOUT).num_kernels == without


def test_batched_ops_point_at_the_users_lines(compiled) -> None:
    graph = compiled("attention-3").module_at("graph")
    matmuls = [op for op in batched_ops(graph, 3) if isinstance(op, g.MatmulOp)]
    assert len(matmuls) == 2
    for op in matmuls:
        assert isinstance(op.location, FileLineColLoc)
        assert op.location.filename.data.endswith("programs.py")


# Refusals ---------------------------------------------------------------------


def _apply(text: str) -> ModuleOp:
    module = parse_module(text)
    HorizontalFusionPass(require_matmul=False).apply(Context(), module)
    module.verify()
    return module


def _heads_text(widths: tuple[int, int], second_operand: str) -> str:
    total = sum(widths)
    w0, w1 = widths
    t = lambda w: f"!graph.tensor<[N, {w}], f32>"  # noqa: E731
    return f"""
func.func @main(%x: {t(total)}) -> {t(total)} {{
  %x0 = graph.slice %x [0, 0] [1, 1] : {t(total)} -> {t(w0)}
  %x1 = graph.slice %x [0, {w0}] [1, 1] : {t(total)} -> {t(w1)}
  %e0 = graph.exp %x0 : {t(w0)}
  %a0 = graph.add %e0, %e0 : {t(w0)}
  %e1 = graph.exp %x1 : {t(w1)}
  %a1 = graph.add %e1, {second_operand} : {t(w1)}
  %r = graph.concat %a0, %a1 [1] : ({t(w0)}, {t(w1)}) -> {t(total)}
  func.return %r : {t(total)}
}}
"""


@pytest.mark.parametrize(
    ("widths", "second_operand"),
    [
        pytest.param((2, 3), "%e1", id="different-widths"),
        pytest.param((2, 2), "%e0", id="overlapping"),
    ],
)
def test_refused(widths: tuple[int, int], second_operand: str) -> None:
    module = _apply(_heads_text(widths, second_operand))
    assert not batched_ops(module, 2)
    names = [op.name for op in find_function(module).body.block.ops]
    assert names.count("graph.exp") == 2


def test_batched_when_the_heads_match() -> None:
    """The refusals' control: the same heads without the difference."""
    module = _apply(_heads_text((2, 2), "%e1"))
    assert {op.name for op in batched_ops(module, 2)} >= {"graph.exp", "graph.add"}


def test_gpt2_block_heads_batched() -> None:
    """The GPT-2 block of tests/programs.py: 8 kernels without the pass
    (an attention kernel per head, their concatenation read in place by the
    projection's matmul), 7 with it (tests/test_fuse.py says which). The
    two heads' kernels are independent: launched as one (combine-launches),
    7 launches either way."""
    block = SUITE["gpt2_block"]
    compiled = block.compile()
    assert compiled.num_kernels == 7
    without = block.compile(pipeline=WITHOUT)
    assert without.num_kernels == 7
    launched = [
        op.callee()
        for op in without.compilation.module("triton").walk()
        if isinstance(op, LaunchOp)
    ]
    assert sum(len(kernel.pieces) or 1 for kernel in launched) == 8
    for seq in (1, 6):
        call = block.inputs(np.random.default_rng(seq), seq=seq)
        expected = block.function(*call.args, **call.kwargs)
        got = compiled(*call.args, **call.kwargs, backend="reference")
        np.testing.assert_array_equal(got, expected)


# Autodiff through the batched heads ---------------------------------------------


def _in_float64(leaf: Any) -> Any:
    if isinstance(leaf, irc.TensorSpec) and leaf.dtype.kind == "f":
        return irc.TensorSpec(leaf.shape, "float64")
    return leaf


def test_gradients_through_the_batched_gpt2_heads() -> None:
    """``autodiff`` of the GPT-2 block after ``horizontal-fusion`` (the
    batched matmuls, reductions, reshapes and transposes) agrees with
    finite differences."""
    call = SUITE["gpt2_block"].specs()
    args, kwargs = pytree.map_leaves(_in_float64, (list(call.args), dict(call.kwargs)))
    module = irc.trace(SUITE["gpt2_block"].function, *args, **kwargs)
    for graph_pass in (CanonicalizePass(), CommonSubexpressionElimination()):
        graph_pass.apply(default_context(), module)
    HorizontalFusionPass().apply(default_context(), module)
    assert batched_ops(module, N_HEAD)
    testing.check_grad([module], max_examples=4)


# Joint functions: the backward's heads batched too ------------------------------


def attention_heads_loss(x, mask):
    return np.mean(attention_heads(x, mask, 3) ** 2)


def test_joint_function_heads_batched() -> None:
    """``value_and_grad`` of per-head attention. In the joint function each
    head's backward ops come before the next head's forward ones, and the
    cotangents of the heads' slices, each padded with zeros, are summed:
    ``canonicalize`` turns the sum into the concatenation of the windows,
    and the forward and backward heads are batched, every matmul with them
    (2 forward, 4 backward): 7 kernels (the forward attention, two
    attention_backward walks), where the unbatched program makes 14,
    launched as 6 and 9 (combine-launches launches independent kernels as
    one: the two walks, and the unbatched heads' kernels).
    Results agree with the unbatched program's, bit for bit on the
    reference backend, and on Triton's interpreter."""
    case = _attention_case(3)
    loss = irc.value_and_grad(attention_heads_loss)
    compiled = irc.compile(loss, *case.specs)
    without = irc.compile(loss, *case.specs, pipeline=WITHOUT)
    body = find_function(compiled.module_at("graph")).body.block
    matmuls = [op for op in body.ops if isinstance(op, g.MatmulOp)]
    assert [g.tensor_type(op.result).dims[0] for op in matmuls] == [3] * 6
    assert (compiled.num_kernels, without.num_kernels) == (6, 9)
    for binding in case.bindings:
        args = case.make_inputs(np.random.default_rng(7), *binding.values())
        value, grad = compiled(*args, backend="reference")
        expected_value, expected_grad = without(*args, backend="reference")
        np.testing.assert_array_equal(value, expected_value)
        np.testing.assert_array_equal(grad, expected_grad)
        value, grad = compiled(*args, backend="interpret")
        np.testing.assert_allclose(value, expected_value, rtol=1e-5)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-4, atol=1e-6)
