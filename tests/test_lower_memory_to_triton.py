"""``lower-memory-to-triton``'s tables and its refusals (the lowering itself
is checked by the FileCheck tests and, run under Triton's interpreter, by
``test_emit_triton``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, UnknownLoc
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import loop, memory, tiles
from irc.dialects import triton as tt
from irc.ir import default_context, parse_module, print_module
from irc.lowering.memory_to_triton import TILE_OPS, LowerMemoryToTritonPass

INVALID = (
    Path(__file__).parent / "filecheck/transforms/lower-memory-to-triton-invalid.mlir"
)

COPY = """
memory.kernel @copy pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [N] reason "" {
  %row = loop.program_id 0 : i64
  %v = memory.load %x[%row] : !memory.buffer<[N], [1], f32>[i64] -> f32
  memory.store %v, %out[%row] : f32, !memory.buffer<[N], [1], f32>[i64]
}
"""


def _tiles_base(op: type) -> type:
    """The op family of ``irc.dialects.tiles`` that ``op`` belongs to."""
    (base,) = (b for b in op.__bases__ if b.__module__ == tiles.__name__)
    return base


def test_every_loop_tile_op_has_the_triton_op_of_its_family() -> None:
    loop_tile_ops = {op for op in loop.Loop.operations if issubclass(op, tiles.TileOp)}
    assert set(TILE_OPS) == loop_tile_ops
    for loop_op, triton_op in TILE_OPS.items():
        assert triton_op in tt.Triton.operations
        assert _tiles_base(loop_op) is _tiles_base(triton_op), loop_op.name


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
