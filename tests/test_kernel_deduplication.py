"""One kernel per distinct computation: ``dedupe-kernels`` in the default
pipeline. A stack of identical GPT-2 blocks emits one block's kernels and
launches them once per layer; the results are NumPy's. The FileCheck test
(transforms/dedupe-kernels.mlir) shows the rewrite, and
tests/test_check_pass.py checks the pass on generated stacks of layers
(``irc.testing.layer_programs``)."""

from __future__ import annotations

import numpy as np
import programs
import pytest

from irc.api import DEFAULT_PIPELINE
from irc.dialects import triton

#: The default pipeline without the deduplication.
WITHOUT = ",".join(p for p in DEFAULT_PIPELINE.split(",") if p != "dedupe-kernels")


def emitted_kernels(compiled) -> list[str]:
    module = compiled.compilation.module("triton")
    return [op.kernel_name for op in module.ops if isinstance(op, triton.KernelOp)]


def test_the_default_pipeline_dedupes_kernels() -> None:
    assert "dedupe-kernels" in DEFAULT_PIPELINE.split(",")
    assert WITHOUT != DEFAULT_PIPELINE


@pytest.mark.parametrize("layers", [4, pytest.param(12, marks=pytest.mark.slow)])
def test_a_stack_of_blocks_emits_one_blocks_kernels(layers: int) -> None:
    """Past ten layers too: the residual stream's elementwise chain then
    grows past fusion's chain limit, which must not change how a layer is
    fused (the layers' kernels would differ)."""
    one = programs.compile_stack(1)
    stack = programs.compile_stack(layers)
    assert emitted_kernels(stack) == emitted_kernels(one)
    assert stack.num_kernels == layers * one.num_kernels
    assert len(emitted_kernels(programs.compile_stack(layers, WITHOUT))) == (
        layers * one.num_kernels
    )


def test_a_deduplicated_stack_computes_what_numpy_does() -> None:
    rng = np.random.default_rng(0)
    layers = [programs.weights(rng) for _ in range(3)]
    x = rng.standard_normal((5, programs.N_EMBD)).astype(np.float32)
    expected = programs.transformer_stack(x, layers, n_head=programs.N_HEAD)
    compiled = programs.compile_stack(3)
    assert len(emitted_kernels(compiled)) < compiled.num_kernels
    for backend in ("reference", "interpret"):
        actual = compiled(x, layers, n_head=programs.N_HEAD, backend=backend)
        assert actual.dtype == expected.dtype == np.float32
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)
