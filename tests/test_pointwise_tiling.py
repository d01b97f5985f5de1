"""Pointwise kernels tiled rows by columns (irc issue 13, item 4).

A pointwise kernel whose operands need coordinates (broadcast, transposed,
reshaped, sliced) is a 2-D block of rows of the outer dims by consecutive
columns of the innermost: only row indices are divided, never a whole
block's lanes, and a broadcast operand is read once per row or column of
the block rather than per element. A kernel of elementwise ops over
operands of its own shape keeps the flat 1-D form, where nothing divides.

Each program is checked against NumPy on Triton's interpreter at bindings
whose sizes are not multiples of the blocks (masked rows and columns).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import irc
from irc.dialects import loop, tile
from irc.ir import parse_module

pytest.importorskip("torch")

F32 = "float32"


def spec(*dims: int | str) -> irc.TensorSpec:
    return irc.TensorSpec(dims, F32)


def broadcast_rows_and_columns(x: Any, y: Any, z: Any) -> Any:
    return np.where(x > z, x * y, np.tanh(x - z)) + 1.5 * y


def transposed_operand(x: Any, y: Any) -> Any:
    return x + y.T


def swap_outer_dims(x: Any, bias: Any) -> Any:
    return np.transpose(x, (1, 0, 2)) * bias


def split_heads(x: Any) -> Any:
    return np.transpose(x.reshape(x.shape[0], 4, 32), (1, 0, 2))


def narrow_rows(x: Any, y: Any) -> Any:
    return x + y


def same_shape(x: Any, y: Any) -> Any:
    return x * y + 1


#: name: (function, specs, shapes at a binding, two or more bindings).
PROGRAMS: dict[str, tuple[Callable[..., Any], tuple[irc.TensorSpec, ...], Any]] = {
    "broadcast_rows_and_columns": (
        broadcast_rows_and_columns,
        (spec("N", "D"), spec(1, "D"), spec("N", 1)),
        lambda N, D: [(N, D), (1, D), (N, 1)],
    ),
    "transposed_operand": (
        transposed_operand,
        (spec("N", "D"), spec("D", "N")),
        lambda N, D: [(N, D), (D, N)],
    ),
    "swap_outer_dims": (
        swap_outer_dims,
        (spec("N", "M", "D"), spec("D")),
        lambda N, D: [(N, 3, D), (D,)],
    ),
    "split_heads": (split_heads, (spec("N", 128),), lambda N, D: [(N, 128)]),
    "narrow_rows": (
        narrow_rows,
        (spec("N", 3), spec(3)),
        lambda N, D: [(N, 3), (3,)],
    ),
    "same_shape": (
        same_shape,
        (spec("N", "D"), spec("N", "D")),
        lambda N, D: [(N, D), (N, D)],
    ),
}
BINDINGS = [{"N": 3, "D": 7}, {"N": 37, "D": 130}]


def compiled(name: str) -> irc.Compiled:
    function, specs, _ = PROGRAMS[name]
    return irc.compile(function, *specs)


def kernels(program: irc.Compiled) -> list[loop.KernelOp]:
    module = parse_module(program.ir("loop"))
    return [op for op in module.walk() if isinstance(op, loop.KernelOp)]


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda b: f"N{b['N']}-D{b['D']}")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_pointwise_kernels_agree_with_numpy(name: str, binding: dict[str, int]) -> None:
    function, _, shapes = PROGRAMS[name]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes(**binding)]
    got = compiled(name)(*args, backend="interpret")
    np.testing.assert_allclose(got, function(*args), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "name",
    [
        "broadcast_rows_and_columns",
        "transposed_operand",
        "swap_outer_dims",
        "split_heads",
    ],
)
def test_coordinates_tile_rows_by_columns(name: str) -> None:
    (kernel,) = kernels(compiled(name))
    assert set(kernel.tile_sizes) == {"BLOCK_R", "BLOCK_C"}, kernel.tile_sizes


@pytest.mark.parametrize("name", ["narrow_rows", "same_shape"])
def test_flat_kernels_stay_flat(name: str) -> None:
    """Same-shaped elementwise operands, or an innermost dim too narrow for a
    vector, keep 1-D blocks of the flattened shape."""
    (kernel,) = kernels(compiled(name))
    assert set(kernel.tile_sizes) == {"BLOCK"}, kernel.tile_sizes


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_no_division_per_element(name: str) -> None:
    """After bufferize, every division or remainder left in a kernel is of
    a scalar (the program id) or a column of row indices ([BLOCK_R, 1]),
    never of a block's lanes along the innermost dim; in a flat kernel over
    same-shaped operands none is left (the coordinates re-linearise), and
    with a narrow static innermost dim only divisions by that constant."""
    module = parse_module(compiled(name).ir("memory"))
    for op in module.walk():
        if not (
            isinstance(op, tile.BinaryOp) and op.kind.data.value in ("floordiv", "rem")
        ):
            continue
        assert name != "same_shape", f"{name} divides: {op}"
        if name == "narrow_rows":
            assert isinstance(op.operands[1].owner, tile.ConstantOp), str(op)
            continue
        shape = loop.shape_of(op.results[0].type)
        assert not shape or shape[-1] == 1, f"{name} divides lanes: {op}"


def test_broadcast_operands_read_a_row_or_a_column() -> None:
    """y [1, D] is read at [1, BLOCK_C] lanes and z [N, 1] at [BLOCK_R, 1],
    each under the factor of the block's mask that bounds its own index."""
    (kernel,) = kernels(compiled("broadcast_rows_and_columns"))
    reads = [op for op in kernel.walk() if isinstance(op, loop.ReadOp)]
    shapes = sorted(loop.shape_of(op.results[0].type) for op in reads)
    block_r, block_c = kernel.tile_sizes["BLOCK_R"], kernel.tile_sizes["BLOCK_C"]
    assert shapes == sorted([(block_r, block_c), (1, block_c), (block_r, 1)])
    for read in reads:
        assert read.mask is not None
        assert loop.shape_of(read.mask.type) == loop.shape_of(read.results[0].type)


@pytest.mark.parametrize("n", [3, 20])
def test_a_matmul_of_operands_broadcast_along_k_sums_one_product(n: int) -> None:
    """K = 1 with both operands broadcast along K (a scalar times a row): the
    K lanes past 1 are masked and must read 0, or the dot sums 16 copies."""

    def scaled_outer(x: Any, w: Any) -> Any:
        return (x.sum() * np.ones((1, 1), np.float32)) @ w[None, :]

    compiled = irc.compile(scaled_outer, spec("N"), spec("N"))
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal((2, n)).astype(np.float32)
    np.testing.assert_allclose(
        compiled(x, w, backend="interpret"), scaled_outer(x, w), rtol=1e-5
    )
