"""Independent launches as one: ``combine-launches`` in the default
pipeline (``irc/passes/combo_kernels.py``).

A combined kernel computes, bit for bit, what its kernels launched one by
one compute: on Triton's interpreter, at sizes of 1, at sizes that are no
multiple of any block and at larger ones, for kernels of 1-D and 2-D grids
and symbolic sizes, and for generated programs (a Hypothesis law). Launches
that depend on each other never combine, nor do kernels whose launch
chooses their tiles. A combined kernel compiles for an H100 (sm_90). The
FileCheck test (transforms/combine-launches.mlir) shows the rewrite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.context import Context

import irc
from irc import testing
from irc.api import DEFAULT_PIPELINE
from irc.dialects import memory
from irc.dialects import triton as tt
from irc.ir import default_context, parse_module, print_module
from irc.lowering.pipeline import passes_after
from irc.passes.combo_kernels import CombineLaunchesPass, storage

#: The default pipeline without the pass.
WITHOUT = ",".join(p for p in DEFAULT_PIPELINE.split(",") if p != "combine-launches")

F32 = "float32"


def spec(*dims: int | str) -> irc.TensorSpec:
    return irc.TensorSpec(dims, F32)


BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def gpt2_training_step(pipeline: str = DEFAULT_PIPELINE) -> irc.Compiled:
    """The GPT-2 block's training step of ``benchmarks/autodiff.py``: the
    loss's value and its gradients of x and of all twelve weights."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    import autodiff as losses

    loss = losses.LOSSES["gpt2_block"]
    step = irc.value_and_grad(loss.function, loss.argnums)
    return irc.compile(step, *loss.specs, pipeline=pipeline)


def combined_kernels(compiled: irc.Compiled) -> list[tt.KernelOp]:
    module = compiled.compilation.module("triton")
    return [op for op in module.ops if isinstance(op, tt.KernelOp) and op.pieces]


def run_both(
    function: Callable[..., Any], specs: Sequence[irc.TensorSpec], arrays: list[Any]
) -> tuple[Sequence[np.ndarray], Sequence[np.ndarray], Sequence[np.ndarray]]:
    """``function`` on the interpreter combined and not, and on the
    reference backend."""
    combined = irc.compile(function, *specs)
    alone = irc.compile(function, *specs, pipeline=WITHOUT)
    return (
        _tuple(combined(*arrays, backend="interpret")),
        _tuple(alone(*arrays, backend="interpret")),
        _tuple(combined(*arrays, backend="reference")),
    )


def _tuple(result: Any) -> tuple[np.ndarray, ...]:
    items = result if isinstance(result, tuple) else (result,)
    return tuple(np.asarray(item) for item in items)


def assert_same(combined, alone, reference) -> None:
    for got, want, oracle in zip(combined, alone, reference, strict=True):
        np.testing.assert_array_equal(got, want)  # bit for bit (NaN too)
        np.testing.assert_allclose(got, oracle, rtol=1e-5, atol=1e-5)


# ----- the default pipeline ---------------------------------------------------


def test_the_default_pipeline_combines_launches() -> None:
    names = DEFAULT_PIPELINE.split(",")
    assert names.index("combine-launches") == names.index("lower-memory-to-triton") + 1
    assert [p.name for p in passes_after("memory")] == [
        "lower-memory-to-triton",
        "combine-launches",
    ]


# ----- results unchanged --------------------------------------------------------


def three_independent(x, w, y):
    """A matmul, a pointwise kernel and a transposed matmul's prologue, all
    reading the arguments only: one launch; then the matmul that reads the
    prologue's result."""
    return x @ w, y * 2.0 + 1.0, np.exp(x).T @ y


def batched_beside_rows(a, b, x):
    """A batched matmul (a 2-D grid: tiles by batch) beside a row sum over a
    static row (a fixed row block) and a pointwise kernel."""
    return a @ b, x.sum(axis=1), np.tanh(x)


@pytest.mark.parametrize(
    ("function", "specs", "shapes", "pieces"),
    [
        (
            three_independent,
            (spec("N", 32), spec(32, "M"), spec("N", 16)),
            lambda n, m: [(n, 32), (32, m), (n, 16)],
            3,
        ),
        (
            batched_beside_rows,
            (spec("B", "N", 16), spec("B", 16, "M"), spec("N", 64)),
            lambda n, m: [(3, n, 16), (3, 16, m), (n, 64)],
            3,
        ),
    ],
    ids=["matmul-pointwise-prologue", "batched-rows-pointwise"],
)
@pytest.mark.parametrize("sizes", [(1, 1), (5, 3), (70, 130)])
def test_combined_kernels_compute_what_their_kernels_do(
    function: Callable[..., Any],
    specs: tuple[irc.TensorSpec, ...],
    shapes: Callable[[int, int], list[tuple[int, ...]]],
    pieces: int,
    sizes: tuple[int, int],
) -> None:
    (kernel,) = combined_kernels(irc.compile(function, *specs))
    assert len(kernel.pieces) == pieces
    rng = np.random.default_rng(sum(sizes))
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes(*sizes)]
    assert_same(*run_both(function, specs, arrays))


def test_a_2d_grid_piece_keeps_its_grid() -> None:
    compiled = irc.compile(
        batched_beside_rows, spec("B", "N", 16), spec("B", 16, "M"), spec("N", 64)
    )
    (kernel,) = combined_kernels(compiled)
    grids = [piece.grid_exprs for piece in kernel.pieces]
    assert any(len(grid) == 2 for grid in grids), grids
    # The flat grid is each piece's product in turn, still symbolic.
    (total,) = kernel.grid_exprs
    assert {"B", "M", "N"} <= total.symbols


def test_the_gpt2_training_step_launches_fewer_kernels() -> None:
    """Four pairs of its backward kernels combine (three pairs of matmuls
    each reading one gradient, and attention's two backward walks): 24
    launches become 20; its launch-tuned row kernels stay alone."""
    compiled = gpt2_training_step()
    alone = gpt2_training_step(WITHOUT)
    assert (alone.num_kernels, compiled.num_kernels) == (24, 20)
    assert all(len(k.pieces) == 2 for k in combined_kernels(compiled))


# ----- what may not combine -------------------------------------------------------


def test_dependent_launches_never_combine() -> None:
    """A chain: each kernel reads the one before."""

    def chain(x, w):
        h = np.tanh(x @ w)
        return (h @ w.T).sum(axis=1)

    compiled = irc.compile(chain, spec("N", 32), spec(32, 32))
    assert combined_kernels(compiled) == []
    assert (
        compiled.num_kernels
        == irc.compile(chain, spec("N", 32), spec(32, 32), pipeline=WITHOUT).num_kernels
    )


def test_launch_tuned_kernels_stay_alone() -> None:
    """A row sum over a symbolic row takes its block from the launch (tuned
    per bucket of D, with warps to match): it never joins a combined launch,
    though it is independent of the others."""

    def rows_and_matmuls(x, w, y):
        return x.sum(axis=1), y @ w, np.exp(y)

    compiled = irc.compile(
        rows_and_matmuls, spec("N", "D"), spec(16, 16), spec("N", 16)
    )
    (kernel,) = combined_kernels(compiled)
    assert len(kernel.pieces) == 2
    module = compiled.compilation.module("triton")
    alone = [
        op
        for op in module.ops
        if isinstance(op, tt.KernelOp) and "launch_tiles" in op.attributes
    ]
    assert len(alone) == 1 and not alone[0].pieces
    x = np.random.default_rng(1).standard_normal((7, 300)).astype(np.float32)
    y = np.ones((7, 16), np.float32)
    w = np.eye(16, dtype=np.float32)
    assert_same(
        *run_both(
            rows_and_matmuls, (spec("N", "D"), spec(16, 16), spec("N", 16)), [x, w, y]
        )
    )
    configurations = compiled.launch_configurations("interpret")
    assert f"kernel_{kernel.kernel_name}" in configurations


BUFFER = "!memory.buffer<[N], [1], f32>"

COPY_KERNEL = """
  memory.kernel @{name} pointwise (%in: {B}, %out: {B}) inputs 1 grid [N] tiles {{}} symbols [] reason "copy" {{
    %i = tile.program_id 0 : i64
    %v = memory.load %in[%i] : {B}[i64] -> f32
    memory.store %v, %out[%i] : f32, {B}[i64]
  }}
"""


def host_module(body: str, results: str) -> str:
    kernels = "".join(COPY_KERNEL.format(name=n, B=BUFFER) for n in ("k0", "k1"))
    count = results.count("%")
    types = ", ".join([BUFFER] * count)
    return (
        f"builtin.module {{{kernels}  func.func @main(%x: {BUFFER}, %y: {BUFFER}) "
        f"-> ({types}) {{\n{textwrap.dedent(body)}    func.return {results} : {types}\n  }}\n}}"
    )


def combine(text: str) -> str:
    module = parse_module(text)
    for lowering in passes_after("memory"):
        lowering.apply(default_context(), module)
    return print_module(module)


@pytest.mark.parametrize(
    ("body", "results"),
    [
        # The second reads what the first writes.
        (
            f"""
            %0 = memory.alloc : {BUFFER}
            memory.launch @k0(%x, %0) : ({BUFFER}, {BUFFER})
            %1 = memory.alloc : {BUFFER}
            memory.launch @k1(%0, %1) : ({BUFFER}, {BUFFER})
            """,
            "%1",
        ),
        # The second writes the storage the first reads (memory.reuse).
        (
            f"""
            %0 = memory.alloc : {BUFFER}
            memory.launch @k0(%x, %0) : ({BUFFER}, {BUFFER})
            %1 = memory.alloc : {BUFFER}
            memory.launch @k0(%0, %1) : ({BUFFER}, {BUFFER})
            %2 = memory.reuse %0 : {BUFFER} -> {BUFFER}
            memory.launch @k1(%y, %2) : ({BUFFER}, {BUFFER})
            %3 = memory.alloc : {BUFFER}
            memory.launch @k1(%2, %3) : ({BUFFER}, {BUFFER})
            """,
            "%1, %3",
        ),
        # Both write one storage.
        (
            f"""
            %0 = memory.alloc : {BUFFER}
            memory.launch @k0(%x, %0) : ({BUFFER}, {BUFFER})
            %1 = memory.reuse %0 : {BUFFER} -> {BUFFER}
            memory.launch @k1(%y, %1) : ({BUFFER}, {BUFFER})
            """,
            "%1",
        ),
    ],
    ids=["read-after-write", "write-after-read-through-reuse", "write-after-write"],
)
def test_launches_touching_one_storage_never_combine(body: str, results: str) -> None:
    after = combine(host_module(body, results))
    assert "combo" not in after, after


def test_independent_launches_combine_past_an_allocation() -> None:
    body = f"""
    %0 = memory.alloc : {BUFFER}
    memory.launch @k0(%x, %0) : ({BUFFER}, {BUFFER})
    %1 = memory.alloc : {BUFFER}
    memory.launch @k1(%y, %1) : ({BUFFER}, {BUFFER})
    """
    after = combine(host_module(body, "%0, %1"))
    assert "memory.launch @combo_k0_k1(%x, %y, %0, %1)" in after, after


def test_storage_follows_reuse_and_rows() -> None:
    text = host_module(
        f"""
        %0 = memory.alloc : {BUFFER}
        memory.launch @k0(%x, %0) : ({BUFFER}, {BUFFER})
        %1 = memory.reuse %0 : {BUFFER} -> {BUFFER}
        memory.launch @k1(%y, %1) : ({BUFFER}, {BUFFER})
        """,
        "%1",
    )
    module = parse_module(text)
    (main,) = [op for op in module.ops if not isinstance(op, memory.KernelOp)]
    alloc, _, reuse, _, _ = list(main.body.block.ops)
    assert storage(reuse.results[0]) is alloc.results[0]
    assert storage(main.body.block.args[0]) is storage(main.body.block.args[1])


# ----- a law: combining launches changes no result ------------------------------


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    case=testing.cases(
        st.one_of(
            testing.layer_programs(layers=(2, 3), max_ops=4),
            testing.programs(max_results=3, max_ops=6),
            testing.programs(
                max_results=3,
                max_ops=5,
                actions=(
                    *testing.CONTROL_FLOW_ACTIONS,
                    "binary",
                    "unary",
                    "reduce",
                    "matmul",
                ),
            ),
        )
    )
)
def test_combining_launches_changes_no_result(case: testing.Case) -> None:
    """Lowered to triton, then combined: the Triton interpreter gives the
    same bits before and after, and the combined module verifies, prints
    and parses back, and stays in bounds."""
    from irc.analysis.bounds import check_bounds

    module = case.module.clone()
    for lowering in passes_after("graph"):
        if lowering.name != "combine-launches":
            lowering.apply(default_context(), module)
    combined = module.clone()
    CombineLaunchesPass().apply(Context(), combined)
    combined.verify()
    assert print_module(parse_module(print_module(combined))) == print_module(combined)
    assert check_bounds(combined) == check_bounds(module) == []
    arrays = testing.inputs(case.module, case.binding, case.seed)
    before = testing.run_module(module, arrays)
    after = testing.run_module(combined, arrays)
    for got, want in zip(after, before, strict=True):
        np.testing.assert_array_equal(got, want)


# ----- a combined kernel compiles for an H100 --------------------------------------

GPU_SCRIPT = """
import json, os, sys
os.environ.pop("TRITON_INTERPRET", None)
sys.path.insert(0, {tests!r})
import numpy as np
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import test_combo_kernels as here
import irc
from irc.runtime import triton_backend
from irc.testing.fake_driver import fake_cuda

specs = (here.spec("N", 32), here.spec(32, "M"), here.spec("N", 16))
compiled = [
    irc.compile(here.three_independent, *specs),
    irc.compile(
        here.batched_beside_rows,
        here.spec("B", "N", 16),
        here.spec("B", 16, "M"),
        here.spec("N", 64),
    ),
    here.gpt2_training_step(),
]
names = []
for c in compiled:
    module = triton_backend.load_source(c.triton_source, interpret=False)
    for name, (kernel, signature, constexprs) in module.KERNELS.items():
        if "combo" not in name:
            continue
        order = [*signature, *constexprs]
        full = {{**signature, **{{k: "constexpr" for k in constexprs}}}}
        source = ASTSource(
            fn=kernel,
            signature=full,
            constexprs={{(order.index(k),): v for k, v in constexprs.items()}},
        )
        binary = triton.compile(source, target=GPUTarget("cuda", 90, 32))
        assert ".target sm_90" in binary.asm["ptx"], name
        assert len(binary.asm["cubin"]) > 0, name
        names.append(name)
# Triton's real launch path (binder, specialisation, compile) on a fake H100.
launches = []
with fake_cuda() as gpu:
    for n, m in ((5, 3), (64, 128)):
        arrays = [np.ones((n, 32), np.float32), np.ones((32, m), np.float32)]
        arrays.append(np.ones((n, 16), np.float32))
        start = len(gpu.launches)
        compiled[0](*(torch.from_numpy(a) for a in arrays), backend="triton")
        launches.append([[x.kernel, list(x.grid)] for x in gpu.launches[start:]])
print(json.dumps({{"compiled": names, "launches": launches}}))
"""


def test_combined_kernels_compile_for_h100(tmp_path: Path) -> None:
    tests = str(Path(__file__).parent)
    script = tmp_path / "compile.py"
    script.write_text(GPU_SCRIPT.format(tests=tests))
    completed = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "TRITON_DEFAULT_FP_FUSION": "0"},
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    # One per program of the two here, four in the GPT-2 training step.
    assert len(report["compiled"]) == 2 + 4, report["compiled"]
    # N = 5, M = 3: one 64x64 matmul tile, one block of 80 and one of 160
    # elements; N = 64, M = 128: 2 tiles, one block of 1024 and 2 of 1024.
    small, large = report["launches"]
    assert small == [["kernel_combo_k0_k1_k2", [3, 1, 1]], ["kernel_k3", [1, 1, 1]]]
    assert large == [["kernel_combo_k0_k1_k2", [5, 1, 1]], ["kernel_k3", [1, 1, 1]]]
