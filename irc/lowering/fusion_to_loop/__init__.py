"""``tile``: each fusion kernel becomes a tiled loop nest (fusion -> loop).

Every value inside a fusion kernel is a function of the kernel's iteration
point, so the tiler works by *evaluating graph values at index tiles*: to
know ``y`` at index ``(i, j)`` it asks for ``y``'s operands at the indices
``y``'s op maps ``(i, j)`` to. Elementwise ops keep the index; layout ops
are index maps (a transpose permutes it, a slice scales and shifts it, a
reshape re-linearises it, a broadcast pins stretched dims to 0, a concat
selects between its operands under masks, a take reads its index first);
kernel inputs are ``loop.read``s. Nothing is copied, and each value is
computed once per index in a scope (a cache keyed by value, index and mask).

The kernel's kind fixes the iteration space:

- ``pointwise``: the output shape, flattened; each program handles
  ``BLOCK`` consecutive elements and recovers their coordinates by
  division and remainder.
- ``reduction``: one program per row (the kept dims of the reductions),
  the reduced dims flattened into a lane index. A reduced extent that is
  static and at most ``max-persistent`` lanes is handled in one tile that
  stays in registers (a *persistent* reduction: the data is read once
  whatever the number of reductions); otherwise each group of independent
  reductions walks the row accumulating tile-wise, and the outputs of row
  shape are written by a last walk; each walk takes the row's first block
  from one read of it in the kernel body, then a ``scf.for`` over the
  blocks after it, so a row that fits the block is read once. Over a
  symbolic extent the block is chosen at launch (``launch_tiles``, at most
  ``max-row-block`` lanes). A kernel reading an input broadcast along its
  rows (layer norm's weights) walks ``rows-per-program`` rows a program,
  the weights read once, before the loop over them. A reduction kernel
  of scans has the same rows, walked in order: one tile, or a ``scf.for``
  over chunks carrying each scan's running value; its outputs are written
  chunk by chunk.
- ``matmul``: ``[BLOCK_M, BLOCK_N]`` output tiles (grid axis 0) per batch
  element (grid axis 1) and a K loop of ``tile.dot`` into an accumulator;
  the epilogue is evaluated on the accumulator tile.

Index arithmetic is 64-bit unless the guards in scope prove every extent
the kernel touches below ``2**30`` (room for an offset plus a block). It is
built with xDSL's ``Builder``, and every op built is first offered to its
folder (the loop dialect's: ``x + 0``, ``x * 1``, ``x floordiv 1``,
constants added or multiplied, ...), so the kernel holds no index op that
``canonicalize`` would fold.

The package's modules, along the pass's seams:

- :mod:`~irc.lowering.fusion_to_loop.builder`: the IR builder (insertion
  with folding, hoisted constants and sizes, index arithmetic, loops);
- :mod:`~irc.lowering.fusion_to_loop.index_maps`: the index maps of the
  layout ops;
- :mod:`~irc.lowering.fusion_to_loop.tiler`: the evaluation of graph values
  at an index, and the ``loop.kernel`` it builds, that every kind shares;
- one module per kind's strategy:
  :mod:`~irc.lowering.fusion_to_loop.pointwise` (with
  :mod:`~irc.lowering.fusion_to_loop.pieces`, the pieces of a concat that
  tile the innermost axis),
  :mod:`~irc.lowering.fusion_to_loop.reduction` (and
  :mod:`~irc.lowering.fusion_to_loop.scan` for reduction kernels of scans),
  :mod:`~irc.lowering.fusion_to_loop.matmul`; and
  :mod:`~irc.lowering.fusion_to_loop.device_loop` for a ``graph.for`` whose
  body is one pointwise kernel: one kernel with the loop inside.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import fusion
from irc.dialects import graph as g
from irc.dialects.kernel_kind import REDUCTION, MatmulPrecision
from irc.dialects.tile import is_power_of_two
from irc.errors import IrcError

# The strategies' modules register them in ``STRATEGIES`` when they load.
from irc.lowering.fusion_to_loop import attention, matmul, pointwise  # noqa: F401
from irc.lowering.fusion_to_loop.device_loop import DeviceLoopTiler, device_loop_kernel
from irc.lowering.fusion_to_loop.reduction import ReductionTiler
from irc.lowering.fusion_to_loop.scan import ScanTiler
from irc.lowering.fusion_to_loop.tiler import STRATEGIES, KernelTiler


@STRATEGIES.register(REDUCTION)
def _row_strategy(kernel: fusion.KernelOp, options: TilePass) -> KernelTiler:
    """A reduction kernel whose row ops are scans (the contract lets them
    share a kernel with no reduction) is walked in order by ``ScanTiler``."""
    if any(isinstance(op, fusion.SCAN_OPS) for op in kernel.body.block.ops):
        return ScanTiler(kernel, options)
    return ReductionTiler(kernel, options)


STRATEGIES.check_complete()


@dataclass(frozen=True)
class TilePass(ModulePass):
    """Lower every ``fusion.kernel`` to a ``loop.kernel`` (see the module
    docstring). The options are the tile sizes, powers of two (the matmul
    tiles 0 for the size-class table of ``matmul.MATMUL_CONFIGS``), the
    largest static reduced extent handled in one persistent tile, the
    largest row block a launch may choose for a symbolic one, the rows a
    program of a row kernel reading weights walks, and how
    float32 matmuls multiply (``ieee`` or ``tf32``)."""

    name = "tile"

    pointwise_block: int = 1024
    reduction_block: int = 1024
    max_persistent: int = 4096
    max_row_block: int = 8192
    rows_per_program: int = 16
    matmul_block_m: int = 0
    matmul_block_n: int = 0
    matmul_block_k: int = 0
    matmul_precision: str = MatmulPrecision.IEEE.value

    def __post_init__(self) -> None:
        # Checked when the pass is built, so that irc-opt reports a bad
        # option at the pass in -p.
        for name, value in vars(self).items():
            if name == "matmul_precision":
                continue
            from_table = name.startswith("matmul_block") and value == 0
            if not isinstance(value, int) or not (from_table or is_power_of_two(value)):
                raise IrcError(
                    f"tile option {name.replace('_', '-')}={value} is not a power of two"
                )
        matmul_blocks = (self.matmul_block_m, self.matmul_block_n, self.matmul_block_k)
        if min(b for b in (*matmul_blocks, 16) if b) < 16:
            raise IrcError("matmul tiles must be at least 16 (tl.dot's minimum)")
        if self.matmul_precision not in set(MatmulPrecision):
            raise IrcError(
                f"tile option matmul-precision={self.matmul_precision} is not one of "
                f"{', '.join(MatmulPrecision)}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _check_fused(op)
        lower_device_loops(op, self)
        for kernel in [k for k in op.walk() if isinstance(k, fusion.KernelOp)]:
            tiler = STRATEGIES[kernel.kernel_kind](kernel, self)
            Rewriter.replace_op(kernel, tiler.tile())


def lower_device_loops(module: ModuleOp, options: TilePass) -> None:
    """Replace every ``graph.for`` that fits one kernel by that kernel with
    the loop inside (``irc.lowering.fusion_to_loop.device_loop``); the
    other control flow stays, for ``bufferize`` to run on the host."""
    for op in [f for f in module.walk() if isinstance(f, g.ForOp)]:
        kernel = device_loop_kernel(op)
        if kernel is not None:
            Rewriter.replace_op(op, DeviceLoopTiler(op, kernel, options).tile())


def _check_fused(module: ModuleOp) -> None:
    """Refuse graph computations outside fusion kernels: ``tile`` takes the
    fusion level (guards and dense constants stay outside kernels)."""
    for function in module.ops:
        if not isinstance(function, func.FuncOp):
            continue
        for op in function.body.walk():
            outside = isinstance(op, g.GraphOp) and not (
                isinstance(op, g.ConstantOp) and not op.is_splat
            )
            if outside and not isinstance(op.parent_op(), fusion.KernelOp):
                raise PassFailedException(
                    f"tile: {op.name} in @{function.sym_name.data} is outside any "
                    "fusion.kernel; tile lowers the fusion level: run fuse first"
                )
