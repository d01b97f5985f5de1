"""Every suite program launches through Triton's real JIT path, as it would
on a GPU: ``compiled(*tensors, backend="triton")`` under the fake CUDA driver
of ``irc.testing.fake_driver``, at every binding of ``SIZES``, twice.

Neither Triton's interpreter nor ``triton.compile(ASTSource(...))`` goes
through the launch itself: the binder, the argument specialisation, the
kernel cache and the check that the globals a kernel read are unchanged
(which a NaN constant fails on every launch). The calls run in one
subprocess (``tests/fake_gpu_suite.py``, the ``fake_gpu_report`` fixture);
what it recorded is checked here against the triton-level IR: the launches
in order, their grids (within CUDA's limits), their arguments, a second call
that compiles nothing, and results of NumPy's shapes and dtypes.
"""

from __future__ import annotations

from typing import Any

import pytest
from suite_programs import SIZES, SUITE

from irc.shapes import parse_expr
from irc.testing.fake_driver import MAX_GRID

#: Triton's pointer type of each torch dtype name.
POINTER = {
    "bool": "*i1",
    "int32": "*i32",
    "int64": "*i64",
    "float16": "*fp16",
    "bfloat16": "*bf16",
    "float32": "*fp32",
    "float64": "*fp64",
}


def program_report(report: dict[str, Any], name: str) -> dict[str, Any]:
    result = report[name]
    assert "error" not in result, result.get("error")
    return result


@pytest.mark.parametrize("name", sorted(SUITE))
def test_launches_on_the_real_path(name: str, fake_gpu_report: dict[str, Any]) -> None:
    result = program_report(fake_gpu_report, name)
    assert [call["sizes"] for call in result["calls"]] == SIZES[name]
    for call in result["calls"]:
        where = f"{name} at {call['sizes']}"
        # Sizes are at least 1 and no dim is 0: every kernel launches.
        assert len(call["expected"]) == result["kernels"], where
        for attempt in ("first", "second"):
            launched = [
                [launch["kernel"], launch["grid"], symbol_values(launch, result)]
                for launch in call[attempt]["launches"]
            ]
            assert launched == call["expected"], f"{where}, {attempt} call"
            assert call[attempt]["outputs"] == call["numpy"], where
        # The second call finds every binary in Triton's cache.
        assert call["second"]["compiled"] == 0, where


def symbol_values(launch: dict[str, Any], result: dict[str, Any]) -> list[int]:
    """The values passed for the kernel's symbol parameters, in order."""
    signature = result["declared"][launch["kernel"]]["signature"]
    return [
        launch["args"][param]["value"]
        for param, kind in signature.items()
        if not kind.startswith("*")
    ]


def launch_tile(extent: int, declared: int) -> int:
    """The size a launch gives a tile of ``declared`` lanes walking
    ``extent`` (docs/lowering.md): the next power of two, from 128 (or the
    declared size, if less) to the declared size."""
    power = 1
    while power < extent:
        power *= 2
    return min(max(power, min(128, declared)), declared)


@pytest.mark.parametrize("name", sorted(SUITE))
def test_launch_arguments(name: str, fake_gpu_report: dict[str, Any]) -> None:
    """Pointers of the declared types, 16-byte aligned (so Triton
    specialises them as a GPU launch would): tensors of the declared dtype,
    and workspace addresses that Triton typed as the declared pointer from
    the kernel's annotation; the constexprs the emitter
    declared, or for a tile the launch chooses the size the rule gives at
    the call's sizes; grids within CUDA's limits."""
    result = program_report(fake_gpu_report, name)
    for call in result["calls"]:
        for launch in call["first"]["launches"] + call["second"]["launches"]:
            where = f"{name} at {call['sizes']}: {launch['kernel']}"
            declared = result["declared"][launch["kernel"]]
            for param, kind in declared["signature"].items():
                arg = launch["args"][param]
                if kind.startswith("*"):
                    assert arg["kind"] in ("pointer", "address"), where
                    if arg["kind"] == "pointer":
                        assert POINTER[arg["dtype"]] == kind, where
                    assert launch["signature"][param] == kind, where
                    assert arg["aligned"], f"{where}: {param} is not 16-byte aligned"
                else:
                    assert arg["kind"] == "int", where
            chosen = declared["launch_tiles"]
            for param, value in declared["constexprs"].items():
                if param in chosen:  # the launch's: the extent's power of two
                    extent = parse_expr(chosen[param]).evaluate(call["sizes"])
                    value = launch_tile(extent, value)
                assert launch["args"][param] == {"kind": "int", "value": value}, where
                assert launch["signature"][param] == "constexpr", where
            for size, limit in zip(launch["grid"], MAX_GRID, strict=True):
                assert 1 <= size <= limit, where


@pytest.mark.parametrize("name", sorted(SUITE))
def test_specialisation_of_sizes(name: str, fake_gpu_report: dict[str, Any]) -> None:
    """A size of 1 reaches the kernel as a constexpr, as on a GPU; the
    kernels compile and run through that specialisation too."""
    result = program_report(fake_gpu_report, name)
    for call in result["calls"]:
        for launch in call["first"]["launches"]:
            for param, kind in result["declared"][launch["kernel"]][
                "signature"
            ].items():
                value = launch["args"][param].get("value")
                if not kind.startswith("*") and value == 1:
                    assert launch["signature"][param] == "constexpr"
                elif not kind.startswith("*"):
                    assert launch["signature"][param] in ("i32", "i64")


@pytest.mark.parametrize("name", sorted(SUITE))
def test_kernels_read_no_globals(name: str, fake_gpu_report: dict[str, Any]) -> None:
    """Triton re-checks every global a kernel read on each launch; the
    emitted kernels read none (constants are built inside them)."""
    result = program_report(fake_gpu_report, name)
    assert result["globals_read"] == {kernel: [] for kernel in result["declared"]}


def test_grid_beyond_cuda_limits_is_refused_before_launch(
    fake_gpu_report: dict[str, Any],
) -> None:
    """A batched matmul puts its batch on grid axis 1: a batch of 70,000 is
    an irc error naming the kernel, the axis, the size and the limit, and
    nothing is launched."""
    result = fake_gpu_report["beyond_grid_limits"]["irc"]
    assert result["launches"] == 0
    assert result["error"] is not None
    for part in ("kernel @k0", "70000 programs along axis 1", "limit of 65535"):
        assert part in result["error"]


def test_grids_are_checked_before_any_kernel_launches(
    fake_gpu_report: dict[str, Any],
) -> None:
    """The grids of a call are tested before its first launch: a kernel
    whose grid is within the limits is not launched when a later one's is
    beyond them (nothing half-done)."""
    result = fake_gpu_report["beyond_grid_limits"]["first"]
    assert result["kernels"] == 2
    assert result["launches"] == 0
    assert result["error"] is not None
    assert "70000 programs along axis 1" in result["error"]


def test_the_fake_driver_refuses_grids_cuda_refuses(
    fake_gpu_report: dict[str, Any],
) -> None:
    """Without the launcher's check, the same launch fails in the driver, as
    ``cuLaunchKernel`` fails on a GPU: the check above is what turns it into
    an irc error before anything runs."""
    result = fake_gpu_report["beyond_grid_limits"]["raw"]
    assert result["launches"] == 0
    assert result["error"] is not None
    assert "axis 1 is 70000" in result["error"]
    assert "CUDA_ERROR_INVALID_VALUE" in result["error"]
