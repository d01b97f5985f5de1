"""Every kernel the suite launches compiles for an H100 (sm_90) as a GPU
launch compiles it: with the specialisation Triton's binder gives the
arguments (16-byte aligned pointers, sizes equal to 1 as constants,
multiples of 16 as divisible), through Triton's compiler to PTX and a cubin
assembled by the bundled ptxas.

The binaries are those the launches of ``test_gpu_launch.py`` compiled (the
``fake_gpu_report`` fixture). The specialisation matters for speed: a
contiguous kernel vectorises its global loads (``ld.global.v4``) only when
Triton knows its pointers are aligned and its sizes divisible by 16.
"""

from __future__ import annotations

from typing import Any

import pytest
from suite_programs import SIZES, SUITE

#: Kernels whose lanes read consecutive addresses: pointwise kernels over
#: whole tensors, row kernels (a row per program), and matmul tiles. Each
#: must vectorise its loads at the binding of ``SIZES`` whose sizes are
#: multiples of 16 (the third). Pointwise kernels tiled rows by columns
#: vectorise along their consecutive columns, whatever the rows read: a
#: transpose (head_split), concatenated slices (rotary), rows gathered by
#: ``take`` (embedding). Attention kernels (causal_attention's k0, the GPT-2
#: block's k2 and k3) load q, k and v tiles along their contiguous head dim.
VECTORISED: dict[str, list[str]] = {
    **{
        name: ["kernel_k0"]
        for name in (
            "softmax",
            "layer_norm",
            "rms_norm",
            "log_softmax",
            "logsumexp",
            "l2_normalize",
            "cross_entropy",
            "elementwise_broadcast",
            "adam_step",
            "gelu_linear",
            "head_split",
            "rotary",
            "embedding",
        )
    },
    "mlp": ["kernel_k0", "kernel_k1"],
    "swiglu": ["kernel_k0", "kernel_k1", "kernel_k2"],
    "causal_attention": ["kernel_k0"],
    # The qkv projection, the heads' attention, c_fc.
    "gpt2_block": ["kernel_k1", "kernel_k2", "kernel_k5"],
}
DIVISIBLE = 2


@pytest.mark.parametrize("name", sorted(SUITE))
def test_kernels_compile_for_h100(name: str, fake_gpu_report: dict[str, Any]) -> None:
    result = fake_gpu_report[name]
    assert "error" not in result, result.get("error")
    for call in result["calls"]:
        for launch in call["first"]["launches"]:
            where = f"{name} at {call['sizes']}: {launch['kernel']}"
            binary = launch["binary"]
            assert binary["sm_90"], f"{where}: no sm_90 PTX"
            assert binary["entry"], f"{where}: the PTX has no entry {launch['kernel']}"
            assert binary["cubin_bytes"] > 0, f"{where}: no cubin"


@pytest.mark.parametrize("name", sorted(VECTORISED))
def test_contiguous_kernels_vectorise_loads(
    name: str, fake_gpu_report: dict[str, Any]
) -> None:
    call = fake_gpu_report[name]["calls"][DIVISIBLE]
    assert call["sizes"] == SIZES[name][DIVISIBLE]
    loads = {
        launch["kernel"]: launch["binary"]["vector_loads"]
        for launch in call["first"]["launches"]
    }
    for kernel in VECTORISED[name]:
        assert loads[kernel] > 0, f"{name} at {call['sizes']}: {kernel} loads scalars"


#: What the kernels of ``fake_gpu_suite.every_elementwise_kind`` must call:
#: the prelude's helper or Triton function of each kind of irc issue 10.
ELEMENTWISE_HELPERS = (
    "_irc_log1p",
    "_irc_expm1",
    "tl.log2",
    "_irc_sinh",
    "_irc_cosh",
    "_irc_atan",
    "_irc_asin",
    "_irc_acos",
    "_irc_atan2",
    "tl.ceil",
    "_irc_trunc",
    "_irc_rint",
    "_irc_pow_f",
)


@pytest.mark.parametrize("element", ["float16", "bfloat16", "float32", "float64"])
def test_every_elementwise_kind_compiles_for_h100(
    element: str, fake_gpu_report: dict[str, Any]
) -> None:
    kinds = fake_gpu_report["elementwise_kinds"]
    assert "error" not in kinds, kinds.get("error")
    result = kinds[element]
    missing = [h for h in ELEMENTWISE_HELPERS if f"{h}(" not in result["source"]]
    assert not missing, f"the {element} kernels do not call {missing}"
    assert result["launches"], f"nothing launched at {element}"
    for launch in result["launches"]:
        binary = launch["binary"]
        assert binary["sm_90"] and binary["entry"], f"{element}: {launch['kernel']}"
        assert binary["cubin_bytes"] > 0, f"{element}: {launch['kernel']} has no cubin"
