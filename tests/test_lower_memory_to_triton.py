"""``lower-memory-to-triton``: what it keeps and its refusals (the lowering itself
is checked by the FileCheck tests and, run under Triton's interpreter, by
``test_emit_triton``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, UnknownLoc
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import loop, memory, tile
from irc.dialects import triton as tt
from irc.ir import default_context, parse_module, print_module
from irc.lowering.memory_to_triton import LowerMemoryToTritonPass

INVALID = (
    Path(__file__).parent / "filecheck/transforms/lower-memory-to-triton-invalid.mlir"
)

COPY = """
memory.kernel @copy pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [N] reason "" {
  %row = tile.program_id 0 : i64
  %v = memory.load %x[%row] : !memory.buffer<[N], [1], f32>[i64] -> f32
  memory.store %v, %out[%row] : f32, !memory.buffer<[N], [1], f32>[i64]
}
"""


SCALE = """
memory.kernel @scale pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {B = 4} symbols [N] reason "" {
  %row = tile.program_id 0 : i64
  %lanes = tile.range "B" : !loop.tile<[4], i64>
  %n = tile.size N : i64
  %mask = tile.cmp lt %lanes, %n : (!loop.tile<[4], i64>, i64) -> !loop.tile<[4], i1>
  %v = memory.load %x[%lanes] mask %mask : !memory.buffer<[N], [1], f32>[!loop.tile<[4], i64>] mask !loop.tile<[4], i1> -> !loop.tile<[4], f32>
  %two = tile.constant 2.0 : f32
  %w = tile.binary mul %v, %two : (!loop.tile<[4], f32>, f32) -> !loop.tile<[4], f32>
  memory.store %w, %out[%lanes] mask %mask : !loop.tile<[4], f32>, !memory.buffer<[N], [1], f32>[!loop.tile<[4], i64>] mask !loop.tile<[4], i1>
}
"""


def test_the_tile_ops_stay_on_triton_tensors() -> None:
    """The compute is the tile dialect's at both levels: each op stays, with
    its properties, and only its tiles change type."""
    ctx = default_context()
    module = parse_module(SCALE, ctx)
    (kernel,) = module.ops
    before = [op for op in kernel.walk() if op.dialect_name() == tile.Tile.name]
    LowerMemoryToTritonPass().apply(ctx, module)
    (lowered,) = module.ops
    assert isinstance(lowered, tt.KernelOp)
    after = [op for op in lowered.walk() if op.dialect_name() == tile.Tile.name]
    assert [(op.name, op.properties) for op in after] == [
        (op.name, op.properties) for op in before
    ]
    for op in after:
        assert not any(isinstance(t, loop.TileType) for t in op.result_types), op


def test_a_kernel_it_cannot_lower_leaves_the_module_as_it_was() -> None:
    """The first chunk of the FileCheck test: a kernel that lowers, then one
    that holds an arith op."""
    text = INVALID.read_text().split("// -----")[0]
    ctx = default_context()
    module = parse_module(text, ctx)
    before = print_module(module)
    with pytest.raises(PassFailedException, match="arith.constant in memory.kernel"):
        LowerMemoryToTritonPass().apply(ctx, module)
    assert print_module(module) == before


def test_kernel_arguments_keep_their_locations() -> None:
    """(The kernel syntax prints an argument's ``loc(...)`` but does not
    parse one, so the FileCheck test cannot give it one.)"""
    ctx = default_context()
    module = parse_module(COPY, ctx)
    (kernel,) = module.ops
    assert isinstance(kernel, memory.KernelOp)
    where = FileLineColLoc(StringAttr("model.py"), IntAttr(1), IntAttr(2))
    kernel.args[0].location = where
    LowerMemoryToTritonPass().apply(ctx, module)
    (lowered,) = module.ops
    assert isinstance(lowered, tt.KernelOp)
    assert [arg.location for arg in lowered.args] == [
        where,
        UnknownLoc(),
        UnknownLoc(),
    ]
