"""Which pointwise kernels the piecewise form tiles, and by which pieces.

A pointwise kernel whose innermost axis is the axis of a ``graph.concat``
of operands of one width ``w`` (the concat spanning the output's shape) is
tiled by those pieces: each program holds an index ``c`` within a piece
(``0 <= c < w``) and computes every piece's output, piece ``k`` at
``k * w + c``. Inside piece ``k`` the concat is its operand ``k`` (no
select, no masked reads), and an input read at the same window by several
pieces is read once: index maps move windows (``LoopBuilder.window``)
rather than compute new indices, and each distinct window of each input is
one value, cached like any read. In ``x * cos + concat(-x[:, h:], x[:, :h])
* sin`` both pieces read ``x``'s low and high halves, so each half is
loaded once and used by both pieces. *Interleaved* pieces are a concat of
``n`` one-column operands along the last axis of ``[..., A, n]`` reshaped
to the output ``[..., A * n]`` (GPT-J's and Llama's rotary pairs): the
columns are the ``A`` pair indices ``j``, piece ``k`` at ``j * n + k``.

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
    """The innermost axis as ``count`` pieces: at column ``c`` of
    ``[0, columns)``, piece ``k`` is the position ``c * stride + k * step``
    (side by side: ``stride`` 1 and ``step`` the pieces' width; interleaved:
    ``stride`` the count and ``step`` 1)."""

    columns: SymExpr
    count: int
    stride: int
    step: SymExpr


def concat_pieces(
    kernel: fusion.KernelOp, shape: tuple[SymExpr, ...], facts: Facts
) -> Pieces | None:
    """The pieces tiling ``shape``'s innermost axis: side by side, or else
    interleaved; None for neither."""
    return _side_by_side(kernel, shape, facts) or _interleaved(kernel, shape, facts)


def _side_by_side(
    kernel: fusion.KernelOp, shape: tuple[SymExpr, ...], facts: Facts
) -> Pieces | None:
    """Concats spanning ``shape`` along its innermost axis, of operands of
    one width (as ``facts`` simplify them: the halves of an even ``D`` are
    ``D - D floordiv 2`` and ``D floordiv 2``)."""
    if not shape:
        return None
    axis = len(shape) - 1
    widths: set[SymExpr] = set()
    count = 0
    for op in _concats(kernel, axis):
        if tensor_type(op.results[0]).dims != shape:
            continue
        widths |= {
            facts.simplify(tensor_type(operand).dims[axis]) for operand in op.operands
        }
        count = len(op.operands)
    if len(widths) != 1:
        return None
    width = widths.pop()
    return Pieces(width, count, 1, width)


def _interleaved(
    kernel: fusion.KernelOp, shape: tuple[SymExpr, ...], facts: Facts
) -> Pieces | None:
    """A concat of ``count`` operands of one column each along the last
    axis of ``[..., A, count]``, reshaped to ``shape = [..., A * count]``
    (NumPy's ``np.stack([a, b], -1).reshape(...)``, GPT-J's and Llama's
    pairs): piece ``k`` is every ``count``-th position from ``k``."""
    if not shape:
        return None
    for op in _concats(kernel, len(shape)):
        dims = tensor_type(op.results[0]).dims
        count = dims[-1].constant
        widths = {facts.simplify(tensor_type(v).dims[-1]) for v in op.operands}
        if (
            count is None
            or widths != {SymExpr.const(1)}
            or dims[:-2] != shape[:-1]
            or not facts.prove_eq(dims[-2] * count, shape[-1])
            or not any(_reshaped_to(use.operation, shape) for use in op.results[0].uses)
        ):
            continue
        return Pieces(dims[-2], count, count, SymExpr.const(1))
    return None


def _concats(kernel: fusion.KernelOp, axis: int) -> list[g.ConcatOp]:
    """The kernel's concats of two or more operands along ``axis``."""
    return [
        op
        for op in kernel.body.block.ops
        if isinstance(op, g.ConcatOp)
        and op.axis.value.data == axis
        and len(op.operands) >= 2
    ]


def _reshaped_to(op: object, shape: tuple[SymExpr, ...]) -> bool:
    return isinstance(op, g.ReshapeOp) and tensor_type(op.results[0]).dims == shape
