"""What a joint function's backward reads from its forward: the min-cut of
irc.lowering.saved_activations, and fuse following it."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import irc
from irc import testing
from irc.api import DEFAULT_PIPELINE
from irc.dialects.fusion import KernelOp
from irc.ir import parse_module
from irc.lowering.graph_to_fusion import FusePass
from irc.lowering.saved_activations import NO_BACKWARD, plan_saved_activations
from irc.passes.autodiff import AutodiffPass
from irc.source_locations import is_backward_op, source_location
from irc.testing import differentiable_programs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import autodiff as autodiff_benchmark

#: A forward whose two results the backward reads (``v`` and ``w``), both
#: computed from one sum of three arguments: saving the sum, and recomputing
#: ``sin`` and ``cos`` from it, moves fewer bytes than saving both results
#: (what a choice made value by value does: each reads three tensors) or
#: the three arguments. (The backward's reduction over the rows is a
#: kernel of its own.)
SHARED_SUM = """\
func.func @f(%a: !graph.tensor<[N, D], f32>, %b: !graph.tensor<[N, D], f32>, %c: !graph.tensor<[N, D], f32>, %g: !graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>, !graph.tensor<[1, D], f32>) {
  %ab = graph.add %a, %b : !graph.tensor<[N, D], f32> loc("f.py":5:1)
  %u = graph.add %ab, %c : !graph.tensor<[N, D], f32> loc("f.py":1:1)
  %v = graph.sin %u : !graph.tensor<[N, D], f32> loc("f.py":2:1)
  %w = graph.cos %u : !graph.tensor<[N, D], f32> loc("f.py":3:1)
  %y = graph.mul %v, %w : !graph.tensor<[N, D], f32> loc("f.py":4:1)
  %dv = graph.mul %g, %w : !graph.tensor<[N, D], f32> loc("backward"("f.py":4:1))
  %dw = graph.mul %g, %v : !graph.tensor<[N, D], f32> loc("backward"("f.py":4:1))
  %du = graph.sub %dw, %dv : !graph.tensor<[N, D], f32> loc("backward"("f.py":2:1))
  %dc = graph.reduce sum %du [0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[1, D], f32> loc("backward"("f.py":1:1))
  func.return %y, %dc : !graph.tensor<[N, D], f32>, !graph.tensor<[1, D], f32>
}
"""


def function_block(module: ModuleOp) -> Any:
    function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    return function.body.block


def by_line(ops: Any) -> set[str]:
    return {str(source_location(op, short=True)) for op in ops}


def test_the_cut_saves_a_shared_operand_once() -> None:
    block = function_block(parse_module(SHARED_SUM))
    plan = plan_saved_activations(block)
    assert by_line(plan.saved) == {"f.py:1"}
    # y = v * w (f.py:4) is the forward's own: the backward does not read it.
    assert by_line(plan.recomputed) == {"f.py:2", "f.py:3"}
    # At N = D = 4096: a write and a read of the sum, and a read of %g.
    assert plan.capacity == 3 * 4096 * 4096 * 4


def test_fuse_follows_the_cut() -> None:
    """The backward's kernel reads the sum and recomputes sin and cos; the
    forward's kernel stores the sum and says why."""
    module = parse_module(SHARED_SUM)
    lowered = testing.check_semantics(module, "fuse")
    kernels = [op for op in lowered.walk() if isinstance(op, KernelOp)]
    assert len(kernels) == 2
    forward, backward = kernels
    assert len(forward.results) == 2  # y and the sum
    assert "the min-cut of forward and backward saves it" in forward.reason_text
    (saved,) = [value for value in backward.operands if value.owner is forward]
    assert saved.name_hint == "u"
    recomputed = {op.name for op in backward.body.block.ops}
    assert {"graph.sin", "graph.cos"} <= recomputed


#: ``k`` reaches the backward's matmul through two transposes, one of the
#: forward: the matmul loads its operand's tiles through them, not through
#: a product, so ``k`` is saved, not ``a`` and ``b``.
THROUGH_TRANSPOSES = """\
func.func @f(%a: !graph.tensor<[N, 8], f32>, %b: !graph.tensor<[N, 8], f32>, %q: !graph.tensor<[M, N], f32>, %g: !graph.tensor<[M, 8], f32>) -> (!graph.tensor<[M, 8], f32>, !graph.tensor<[N, 8], f32>) {
  %k = graph.mul %a, %b : !graph.tensor<[N, 8], f32> loc("f.py":1:1)
  %kt = graph.transpose %k [1, 0] : !graph.tensor<[N, 8], f32> -> !graph.tensor<[8, N], f32> loc("f.py":2:1)
  %o = graph.matmul %q, %k : (!graph.tensor<[M, N], f32>, !graph.tensor<[N, 8], f32>) -> !graph.tensor<[M, 8], f32> loc("f.py":3:1)
  %ktt = graph.transpose %kt [1, 0] : !graph.tensor<[8, N], f32> -> !graph.tensor<[N, 8], f32> loc("backward"("f.py":2:1))
  %gt = graph.transpose %g [1, 0] : !graph.tensor<[M, 8], f32> -> !graph.tensor<[8, M], f32> loc("backward"("f.py":3:1))
  %d = graph.matmul %ktt, %gt : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, M], f32>) -> !graph.tensor<[N, M], f32> loc("backward"("f.py":3:1))
  %dq = graph.matmul %d, %ktt : (!graph.tensor<[N, M], f32>, !graph.tensor<[N, 8], f32>) -> !graph.tensor<[N, 8], f32> loc("backward"("f.py":3:1))
  func.return %o, %dq : !graph.tensor<[M, 8], f32>, !graph.tensor<[N, 8], f32>
}
"""


def test_a_matmul_reading_through_transposes_cannot_recompute_a_product() -> None:
    plan = plan_saved_activations(function_block(parse_module(THROUGH_TRANSPOSES)))
    assert by_line(plan.saved) == {"f.py:1"}
    (why,) = plan.saved.values()
    assert why == "graph.matmul in the backward cannot recompute it"


def test_a_dim_negative_at_the_nominal_size_counts_one_element() -> None:
    """``N - 5000`` is negative with N at 4,096, where the cut weighs
    bytes; it counts as one element, and fuse goes on."""
    text = SHARED_SUM.replace("[N, D]", "[N - 5000, D]")
    module = parse_module(text)
    plan = plan_saved_activations(function_block(module))
    assert plan.capacity == 3 * 4096 * 4
    FusePass().apply(Context(), module)
    module.verify()
    assert "the min-cut of forward and backward saves it" in str(module)


def test_a_function_without_backward_ops_has_no_cut() -> None:
    text = re.sub(r'loc\("backward"\((.*)\)\)', r"loc(\1)", SHARED_SUM)
    module = parse_module(text)
    assert plan_saved_activations(function_block(module)) is NO_BACKWARD


def test_autodiff_marks_the_backward_ops() -> None:
    module = parse_module(
        SHARED_SUM.split("  %dv")[0]
        + "  func.return %y : !graph.tensor<[N, D], f32>\n}\n"
    )
    forward = [op for op in function_block(module).ops][:-1]
    AutodiffPass().apply(Context(), module)
    block = function_block(module)
    ops = list(block.ops)[:-1]  # the return
    assert not any(is_backward_op(op) for op in forward)
    assert all(is_backward_op(op) for op in ops if op not in forward)
    # The mark keeps the forward op's place for diagnostics and reasons
    # (the cotangents' seeds take the return's, which has none).
    places = by_line(op for op in ops if is_backward_op(op))
    assert (
        {"f.py:2", "f.py:3"} <= places <= {f"f.py:{n}" for n in range(1, 6)} | {"None"}
    )


def saved_values(name: str) -> Counter[str]:
    """The types of the forward values the backward kernels of
    ``benchmarks/autodiff.py``'s loss ``name`` read (its joint function in
    vjp form: a backward kernel depends on the loss's cotangent)."""
    loss = autodiff_benchmark.LOSSES[name]
    wrt = ",".join(map(str, autodiff_benchmark.differentiated_arguments(loss)))
    compiled = irc.compile(
        loss.function, *loss.specs, pipeline=f"autodiff{{wrt={wrt}}},{DEFAULT_PIPELINE}"
    )
    return Counter(map(str, autodiff_benchmark.saved_for_backward(compiled)))


def test_a_layer_norms_backward_recomputes_its_loss_from_the_arguments() -> None:
    """``y - target`` reads two tensors, which a choice made value by value
    stores; both are arguments, in memory anyway, and the backward reads
    ``x`` already: only the row statistics are saved."""
    assert set(saved_values("layer_norm")) == {"!graph.tensor<[B, 1], f32>"}


def test_a_gpt2_blocks_backward_reads_the_residual_not_its_normalised_rows() -> None:
    """Of the block's [T, 64] values the backward reads only the first
    layer norm's and the second's rows (matmul operands, forward and
    backward) and the residual sum between the attention and the MLP, from
    which it recomputes the centred and normalised rows; a choice made
    value by value stored those two as well (each reads the residual's two
    operands)."""
    saved = saved_values("gpt2_block")
    assert saved["!graph.tensor<[T, 64], f32>"] == 3, saved
    assert saved["!graph.tensor<[T, 256], f32>"] == 2, saved  # GELU's in and out


def test_the_gpt2_blocks_training_step_launches_20_kernels() -> None:
    """The performance issue's target (at most 20, Inductor 64), with no
    [T, T] value between kernels; the second layer norm's rows join its
    statistics' kernel, though they read the residual sum the attention's
    projection stores (a consumer of two kernels' values joins the later
    when it reads the other's too: 21 launches otherwise)."""
    loss = autodiff_benchmark.LOSSES["gpt2_block"]
    compiled = irc.compile(irc.value_and_grad(loss.function, loss.argnums), *loss.specs)
    assert compiled.num_kernels == 20
    kernels = [
        op for op in compiled.module_at("fusion").walk() if isinstance(op, KernelOp)
    ]
    assert not [
        result.type
        for kernel in kernels
        for result in kernel.results
        if "T, T]" in str(result.type)
    ]


def joint(module: ModuleOp) -> ModuleOp:
    """``module``'s joint function in vjp form."""
    module = module.clone()
    AutodiffPass().apply(Context(), module)
    return module


def test_fuse_keeps_the_meaning_of_generated_joint_functions() -> None:
    testing.check_pass(
        "fuse", differentiable_programs(max_ops=8).map(joint), max_examples=40
    )
