"""Which pointwise kernels the piecewise form tiles, and by which pieces.

A pointwise kernel whose innermost axis is the axis of a ``graph.concat``
of operands of one width ``w`` (the concat spanning the output's shape) is
tiled by those pieces: each program holds an index ``c`` within a piece
(``0 <= c < w``) and computes every piece's output, piece ``k`` at
``k * w + c``. Inside piece ``k`` the concat is its operand ``k`` (no
select, no masked reads), and an input read at the same window by several
pieces is read once: a slice of unit stride shifts the window by its
offset, a concat by its operand's start, and each distinct window of each
input is one value (``LoopBuilder.window``), cached like any read. In
``x * cos + concat(-x[:, h:], x[:, :h]) * sin`` both pieces read ``x``'s
low and high halves, so each half is loaded once and used by both pieces.

Kernels with concats of unequal widths along the axis, of different widths
from one concat to another, concats along an outer axis, or a piece width
whose count of column blocks the facts cannot prove positive keep the
ordinary rows-by-columns or flat form (see ``pointwise``).
"""

from __future__ import annotations

from dataclasses import dataclass

from irc.dialects import fusion
from irc.dialects import graph as g
from irc.lowering.fusion_to_loop.index_maps import tensor_type
from irc.shapes import Facts, SymExpr


@dataclass(frozen=True)
class Pieces:
    """The innermost axis as ``count`` pieces of ``width``."""

    width: SymExpr
    count: int


def concat_pieces(
    kernel: fusion.KernelOp, shape: tuple[SymExpr, ...], facts: Facts
) -> Pieces | None:
    """The pieces tiling ``shape``'s innermost axis, or None if the kernel
    has no concat spanning ``shape`` along it, or its concats' operands
    differ in width (as ``facts`` simplify them: the halves of an even
    ``D`` are ``D - D floordiv 2`` and ``D floordiv 2``)."""
    if not shape:
        return None
    axis = len(shape) - 1
    widths: set[SymExpr] = set()
    count = 0
    for op in kernel.body.block.ops:
        if not isinstance(op, g.ConcatOp) or op.axis.value.data != axis:
            continue
        if tensor_type(op.results[0]).dims != shape or len(op.operands) < 2:
            continue
        widths |= {
            facts.simplify(tensor_type(operand).dims[axis]) for operand in op.operands
        }
        count = len(op.operands)
    if len(widths) != 1:
        return None
    return Pieces(widths.pop(), count)
