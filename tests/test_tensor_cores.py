"""Matmuls on tensor cores (irc issue 13, item 5).

16-bit operands go to ``tl.dot`` in 16 bits with float32 accumulation, and
float32 matmuls multiply in IEEE fp32 unless compiled with
``matmul_precision="tf32"``. The IR states the choice (the kernel's
``matmul_precision``, ``num_warps`` and ``num_stages`` attributes, from the
size-class table ``MATMUL_CONFIGS``), the interpreter agrees with NumPy at two
bindings or more of the symbols, and an sm_90 compile through Triton's real
launch path (``irc.testing.fake_driver``) shows ``wgmma`` instructions for
16-bit and TF32 matmuls and none for IEEE ones.

The compile runs this file as a script in a subprocess (``python
tests/test_tensor_cores.py REPORT.json``), as ``fake_gpu_suite.py`` does:
the test process interprets Triton kernels.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import irc
from irc.backend.triton.launcher import TRITON_CUDA_DEFAULTS
from irc.errors import IrcError
from irc.lowering.fusion_to_loop.matmul import (
    MATMUL_CONFIGS,
    SMALL_MATMUL_EXTENT,
    MatmulConfig,
)

#: The elements and precisions compiled for sm_90, and what their matmul must
#: use there: wgmma (Hopper's tensor-core instruction) or no tensor core.
SM90_CASES = {
    "float16-ieee": ("float16", "ieee", True),
    "bfloat16-ieee": ("bfloat16", "ieee", True),
    "float32-tf32": ("float32", "tf32", True),
    "float32-ieee": ("float32", "ieee", False),
}
#: The sizes the sm_90 launches bind (M and N symbolic: the large class).
SM90_SIZES = {"M": 256, "N": 384}
K = 128

WGMMA = re.compile(r"\bwgmma\.mma_async\b")
MMA = re.compile(r"\bmma\.sync\b")


def linear(x: Any, w: Any) -> Any:
    return x @ w


def gelu_linear(x: Any, w: Any, b: Any) -> Any:
    """tanh-GELU of ``x @ w + b`` (the suite's ``gelu_linear``)."""
    y = x @ w + b
    return 0.5 * y * (1 + np.tanh(0.7978845608028654 * (y + 0.044715 * y**3)))


def _numpy_type(element: str) -> Any:
    return ml_dtypes.bfloat16 if element == "bfloat16" else np.dtype(element)


def _operands(
    rng: np.random.Generator, element: str, m: int, k: int, n: int
) -> tuple[np.ndarray, np.ndarray]:
    numpy_type = _numpy_type(element)
    x = rng.normal(size=(m, k)).astype(numpy_type)
    w = (rng.normal(size=(k, n)) / np.sqrt(k)).astype(numpy_type)
    return x, w


def _specs(element: str) -> tuple[irc.TensorSpec, irc.TensorSpec]:
    return irc.TensorSpec(("M", "K"), element), irc.TensorSpec(("K", "N"), element)


# --------------------------------------------------------------------------
# The IR and the emitted source
# --------------------------------------------------------------------------


def _kernel_attributes(compiled: irc.Compiled, level: str) -> str:
    (line,) = [line for line in compiled.ir(level).splitlines() if " matmul (" in line]
    return line[line.index("attributes {") :]


@pytest.mark.parametrize("level", ["loop", "memory", "triton"])
def test_the_kernel_states_its_precision_warps_and_stages(level: str) -> None:
    compiled = irc.compile(linear, *_specs("float32"), matmul_precision="tf32")
    attributes = _kernel_attributes(compiled, level)
    assert 'matmul_precision = "tf32"' in attributes
    config = MATMUL_CONFIGS["tf32", "large"]
    assert f"num_warps = {config.num_warps} : i64" in attributes
    assert f"num_stages = {config.num_stages} : i64" in attributes


def test_ieee_is_the_default_and_the_option_reaches_tl_dot() -> None:
    default = irc.compile(linear, *_specs("float32"))
    tf32 = irc.compile(linear, *_specs("float32"), matmul_precision="tf32")
    assert 'matmul_precision = "ieee"' in _kernel_attributes(default, "loop")
    assert 'input_precision="ieee"' in default.triton_source
    assert 'input_precision="tf32"' in tf32.triton_source
    assert 'input_precision="ieee"' not in tf32.triton_source


def test_the_option_round_trips_through_the_ir_text() -> None:
    """The triton level's text, parsed and emitted again, keeps TF32."""
    from irc.backend.triton import emit_module
    from irc.ir import parse_module

    compiled = irc.compile(linear, *_specs("float32"), matmul_precision="tf32")
    source = emit_module(parse_module(compiled.ir("triton")))
    assert 'input_precision="tf32"' in source


@pytest.mark.parametrize("element", ["float16", "bfloat16"])
def test_16_bit_operands_reach_tl_dot_in_16_bits(element: str) -> None:
    source = irc.compile(linear, *_specs(element)).triton_source
    call = "_irc_dot_bf16(" if element == "bfloat16" else "tl.dot("
    (dot,) = [line for line in source.splitlines() if call in line and " = " in line]
    assert ".to(tl.float32)" not in dot, dot  # the tiles are not widened
    assert "input_precision" not in dot


@pytest.mark.parametrize(
    ("element", "precision", "m", "n", "size"),
    [
        ("float16", "ieee", "M", "N", "large"),
        ("bfloat16", "ieee", 48, "N", "small"),
        ("float32", "tf32", "M", 200, "large"),
        ("float32", "tf32", "M", 64, "small"),
        ("float32", "ieee", "M", "N", "large"),
    ],
)
def test_tiles_warps_and_stages_come_from_the_size_class(
    element: str, precision: str, m: Any, n: Any, size: str
) -> None:
    spec_x, spec_w = (
        irc.TensorSpec((m, 256), element),
        irc.TensorSpec((256, n), element),
    )
    compiled = irc.compile(linear, spec_x, spec_w, matmul_precision=precision)
    kind = {"float16": "tensor-core-16", "bfloat16": "tensor-core-16"}.get(
        element, "tf32" if precision == "tf32" else "fma"
    )
    config = MATMUL_CONFIGS[kind, size]
    block_m = (
        min(config.block_m, max(16, 1 << (m - 1).bit_length()))
        if isinstance(m, int)
        else config.block_m
    )
    source = compiled.triton_source
    assert f"c_BLOCK_M: tl.constexpr = {block_m}, " in source
    assert f"c_BLOCK_K: tl.constexpr = {config.block_k})" in source
    assert _launch_options(config) in source


def _launch_options(config: MatmulConfig) -> str:
    """The end of the matmul kernel's tuning spec (``_IRC_TUNING``): no
    launch-chosen tile, the configuration's warps and stages (what the cost
    model launches with), stages tried by a measurement."""
    return f"', (), {config.num_warps}, {config.num_stages}, True, ()),"


def test_the_defaults_irc_assumes_are_tritons_cuda_defaults() -> None:
    """A kernel without a warps or stages attribute is launched with these
    (its tuning spec's), so they must be the installed Triton's."""
    from triton.backends.nvidia.compiler import CUDAOptions

    fields = CUDAOptions.__dataclass_fields__
    defaults = {name: fields[name].default for name in TRITON_CUDA_DEFAULTS}
    assert defaults == TRITON_CUDA_DEFAULTS


def test_a_symbol_bounded_by_facts_gets_the_small_class_and_a_small_tile() -> None:
    """``N <= 32`` makes a symbolic N small: the small class's warps, and a
    32-wide N tile; the values still agree with NumPy."""
    spec_x, spec_w = (
        irc.TensorSpec(("M", 64), "float16"),
        irc.TensorSpec((64, "N"), "float16"),
    )
    compiled = irc.compile(linear, spec_x, spec_w, facts=["N <= 32"])
    small = MATMUL_CONFIGS["tensor-core-16", "small"]
    source = compiled.triton_source
    assert (
        f"c_BLOCK_M: tl.constexpr = {small.block_m}, c_BLOCK_N: tl.constexpr = 32, "
        in source
    )
    assert _launch_options(small) in source
    rng = np.random.default_rng(2)
    for m, n in [(3, 1), (70, 32)]:
        x, w = _operands(rng, "float16", m, 64, n)
        np.testing.assert_allclose(
            compiled(x, w, backend="interpret").astype(np.float64),
            (x @ w).astype(np.float64),
            rtol=4e-3,
            atol=4e-3,
        )


def test_the_table_gives_16_bit_matmuls_larger_k_tiles() -> None:
    for size in ("small", "large"):
        assert (
            MATMUL_CONFIGS["tensor-core-16", size].block_k
            > MATMUL_CONFIGS["fma", size].block_k
        )
    assert MATMUL_CONFIGS["fma", "small"].block_m == SMALL_MATMUL_EXTENT


def test_explicit_tile_options_replace_the_table() -> None:
    pipeline = "canonicalize,cse,fuse,tile{matmul-block-m=32 matmul-block-k=16},bufferize,cse,lower-memory-to-triton"
    source = irc.compile(linear, *_specs("float16"), pipeline=pipeline).triton_source
    config = MATMUL_CONFIGS["tensor-core-16", "large"]
    blocks = (32, config.block_n, 16)
    assert (
        ", ".join(
            f"c_BLOCK_{name}: tl.constexpr = {size}"
            for name, size in zip("MNK", blocks)
        )
        in source
    )


def test_a_bad_precision_is_refused_with_the_choices() -> None:
    with pytest.raises(
        IrcError, match=r"matmul_precision='tf16' is not one of 'ieee', 'tf32'"
    ):
        irc.compile(linear, *_specs("float32"), matmul_precision="tf16")
    with pytest.raises(IrcError, match="tile option matmul-precision=fast"):
        irc.compile(
            linear, *_specs("float32"), pipeline="fuse,tile{matmul-precision=fast}"
        )


def test_a_precision_needs_a_tile_pass() -> None:
    with pytest.raises(
        IrcError, match=r"has no tile pass; add tile\{matmul-precision=tf32\}"
    ):
        irc.compile(
            linear, *_specs("float32"), pipeline="canonicalize", matmul_precision="tf32"
        )


# --------------------------------------------------------------------------
# Values on the Triton interpreter
# --------------------------------------------------------------------------

#: Bindings of (M, K, N): below one tile, several tiles with ragged edges.
BINDINGS = [(5, 7, 3), (130, 70, 129)]


@pytest.mark.parametrize("element", ["float16", "bfloat16"])
def test_16_bit_matmuls_agree_with_numpy(element: str) -> None:
    """NumPy's 16-bit matmul rounds each result once from a wider sum, as
    float32 accumulation does: the same up to 16-bit roundings (of the
    epilogue's steps too)."""
    rng = np.random.default_rng(0)
    compiled = irc.compile(
        gelu_linear, *_specs(element), irc.TensorSpec(("N",), element)
    )
    for m, k, n in BINDINGS:
        x, w = _operands(rng, element, m, k, n)
        b = rng.normal(size=n).astype(x.dtype)
        got = compiled(x, w, b, backend="interpret")
        want = gelu_linear(x, w, b)
        # The reference backend's dtype: NumPy's under the ml_dtypes CI
        # installs (older ones widen bfloat16 tanh to float32).
        assert got.dtype == compiled(x, w, b, backend="reference").dtype
        assert got.shape == want.shape
        tolerance = 2e-2 if element == "bfloat16" else 4e-3
        np.testing.assert_allclose(
            got.astype(np.float64),
            want.astype(np.float64),
            rtol=tolerance,
            atol=tolerance,
        )


@pytest.mark.parametrize("precision", ["ieee", "tf32"])
def test_float32_matmuls_agree_with_numpy_at_their_precision(precision: str) -> None:
    """IEEE at float32's accuracy; TF32 at the tolerance of 10-bit mantissas
    (each product within 2**-10 relatively, the interpreter computes in f32)."""
    rng = np.random.default_rng(1)
    jitted = irc.jit(
        linear, dims={"x": ("M", "K"), "w": ("K", "N")}, matmul_precision=precision
    )
    for m, k, n in BINDINGS:
        x, w = _operands(rng, "float32", m, k, n)
        got = jitted(x, w, backend="interpret")
        want = x @ w
        assert got.dtype == np.float32
        scale = np.abs(x) @ np.abs(w)
        rtol = 2**-10 if precision == "tf32" else 1e-5
        assert np.all(np.abs(got - want) <= rtol * scale + 1e-6)


# --------------------------------------------------------------------------
# sm_90: tensor-core instructions in the compiled kernels
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sm90_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from fake_gpu_suite import run_compiling

    out = tmp_path_factory.mktemp("tensor_cores") / "report.json"
    completed = run_compiling([__file__, str(out)], timeout=900)
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("case", sorted(SM90_CASES))
def test_sm90_matmuls_use_tensor_cores_as_their_precision_says(
    case: str, sm90_report: dict[str, Any]
) -> None:
    _, _, on_tensor_cores = SM90_CASES[case]
    result = sm90_report[case]
    assert "error" not in result, result.get("error")
    (launch,) = result["launches"]
    if on_tensor_cores:
        assert launch["wgmma"] > 0, f"{case}: no wgmma in the sm_90 PTX"
    else:
        assert launch["wgmma"] == launch["mma"] == 0, f"{case}: {launch}"


@pytest.mark.parametrize("case", sorted(SM90_CASES))
def test_sm90_launches_pass_the_tables_warps_and_stages(
    case: str, sm90_report: dict[str, Any]
) -> None:
    (launch,) = sm90_report[case]["launches"]
    assert sm90_report[case]["recompiled"] == 0, f"{case}: compiled again"
    assert launch["num_warps"] == launch["expected_warps"]
    assert launch["num_stages"] == launch["expected_stages"]


def _compile_on_the_fake_gpu(element: str, precision: str) -> dict[str, Any]:
    """``gelu_linear`` compiled for sm_90 through a launch on the fake
    driver: each kernel's tensor-core instruction counts and launch options."""
    import torch

    from irc.runtime import triton_backend
    from irc.testing.fake_driver import compiled_kernels, fake_cuda

    spec_b = irc.TensorSpec(("N",), element)
    compiled = irc.compile(
        gelu_linear, *_specs(element), spec_b, matmul_precision=precision
    )
    module = triton_backend.load_source(compiled.triton_source, interpret=False)
    torch_type = getattr(torch, element)
    m, n = SM90_SIZES["M"], SM90_SIZES["N"]
    tensors = [torch.zeros(shape, dtype=torch_type) for shape in ((m, K), (K, n), (n,))]
    config = MATMUL_CONFIGS[
        "tensor-core-16" if element != "float32" else precision.replace("ieee", "fma"),
        "large",
    ]
    with fake_cuda() as gpu:
        compiled(*tensors, backend="triton")
        loaded = len(gpu.loaded)
        # Again: Triton's cache must serve it, after checking that the
        # globals the kernel read (the prelude's constexprs) are unchanged.
        compiled(*tensors, backend="triton")
        recompiled = len(gpu.loaded) - loaded
    first_launches = gpu.launches[: len(gpu.launches) // 2]
    binaries = {
        digest: binary
        for function, _, _ in module.KERNELS.values()
        for digest, binary in compiled_kernels(function).items()
    }
    launches = []
    for launch in first_launches:
        ptx = binaries[launch.metadata.hash].asm["ptx"]
        launches.append(
            {
                "kernel": launch.kernel,
                "wgmma": len(WGMMA.findall(ptx)),
                "mma": len(MMA.findall(ptx)),
                "num_warps": launch.metadata.num_warps,
                "num_stages": launch.metadata.num_stages,
                "expected_warps": config.num_warps,
                "expected_stages": config.num_stages,
            }
        )
    return {"launches": launches, "recompiled": recompiled}


def _sm90_report() -> dict[str, Any]:
    report: dict[str, Any] = {}
    for case, (element, precision, _) in SM90_CASES.items():
        try:
            report[case] = _compile_on_the_fake_gpu(element, precision)
        except Exception as error:  # reported, and failed, by the test
            report[case] = {"error": f"{type(error).__name__}: {error}"}
    return report


if __name__ == "__main__":
    # python tests/test_tensor_cores.py REPORT.json
    Path(sys.argv[1]).write_text(json.dumps(_sm90_report()))
    sys.exit(0)
