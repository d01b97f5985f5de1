"""``tile``: each fusion kernel becomes a tiled loop nest (fusion -> loop).

The tiler evaluates graph values at index tiles: elementwise ops keep the
index, layout ops are index maps, kernel inputs are ``loop.read``s, so
nothing is copied. The kernel's kind fixes the iteration space and the
strategy (``STRATEGIES`` in ``tiler``; one module per kind), and
``builder`` folds every index op as it is built.

Entry points: ``TilePass`` (``tile``) and ``lower_device_control_flow``.
See docs/lowering.md, section "loop: tiled loop nests".
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import fusion, loop
from irc.dialects import graph as g
from irc.dialects.kernel_kind import REDUCTION, MatmulPrecision
from irc.dialects.tile import is_power_of_two
from irc.errors import IrcError
from irc.lowering import device_control_flow

# The strategies' modules register them in ``STRATEGIES`` when they load.
from irc.lowering.fusion_to_loop import (  # noqa: F401
    attention,
    attention_backward,
    matmul,
    pointwise,
)
from irc.lowering.fusion_to_loop.device_cond import DeviceCondTiler
from irc.lowering.fusion_to_loop.device_loop import DeviceLoopTiler
from irc.lowering.fusion_to_loop.device_while import DeviceWhileTiler
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
        lower_device_control_flow(op, self)
        for kernel in [k for k in op.walk() if isinstance(k, fusion.KernelOp)]:
            tiler = STRATEGIES[kernel.kernel_kind](kernel, self)
            Rewriter.replace_op(kernel, tiler.tile())


def lower_device_control_flow(module: ModuleOp, options: TilePass) -> None:
    """Replace every ``graph.for``, ``graph.while`` or ``graph.cond`` that
    fits one kernel by that kernel with the control flow inside
    (``irc.lowering.device_control_flow`` says which fit); the others stay,
    for ``bufferize`` to run on the host."""
    for op in [f for f in module.walk() if isinstance(f, g.CONTROL_FLOW_OPS)]:
        lowered = _device_kernel(op, options)
        if lowered is not None:
            kernel, replacements = lowered
            Rewriter.replace_op(op, kernel, replacements)


def _device_kernel(
    op: Operation, options: TilePass
) -> tuple[loop.KernelOp, list[SSAValue]] | None:
    """The one kernel ``op`` becomes, if it fits one, and what each of its
    results becomes."""
    if isinstance(op, g.ForOp):
        found_for = device_control_flow.device_loop(op)
        if found_for is None:
            return None
        kernel = DeviceLoopTiler(found_for, options).tile()
        return kernel, found_for.replacements(kernel)
    if isinstance(op, g.WhileOp):
        found_while = device_control_flow.device_while(op)
        if found_while is None:
            return None
        kernel = DeviceWhileTiler(found_while, options).tile()
        return kernel, found_while.replacements(kernel)
    assert isinstance(op, g.CondOp)
    found_cond = device_control_flow.device_cond(op)
    if found_cond is None:
        return None
    kernel = DeviceCondTiler(found_cond, options).tile()
    return kernel, list(kernel.results)


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
