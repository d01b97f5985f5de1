"""``lower-memory-to-triton``: from the memory level to the triton level.

Each module-level ``memory.kernel`` becomes a ``triton.kernel`` of the same
name: buffers become pointers, symbols become ``i64`` arguments, accesses
become ``triton.load`` / ``triton.store``, and tiles are retyped to
``!triton.tensor``; the host functions keep their memory ops. The patterns
are ``LowerKernel``, ``LowerAccess`` and ``TilesToTensors``, run in one walk.

Entry point: ``LowerMemoryToTritonPass``. See docs/lowering.md, section
"The triton level".
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp, UnknownLoc, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
    TypeConversionPattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import loop, memory, tile
from irc.dialects import triton as tt
from irc.dialects.memory import BufferType


@dataclass(frozen=True)
class LowerMemoryToTritonPass(ModulePass):
    """Lower every ``memory.kernel`` of a module to a ``triton.kernel``
    (docs/lowering.md); the host functions are left as they are.

    Every kernel is checked before any is rewritten, so a failure leaves the
    module as it was. Each pattern rewrites one op whatever the others have
    done yet (result types are converted from the old results, not inferred
    from operands), so the walk may take the ops in any order."""

    name = "lower-memory-to-triton"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Kernels of a nested module too: the walk below lowers every op.
        for kernel in op.walk():
            if isinstance(kernel, memory.KernelOp):
                check_lowerable(kernel)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [LowerKernel(), LowerAccess(), TilesToTensors()],
                # A kernel keeps every op, used or not, in its order.
                dce_enabled=False,
            ),
            # Each op is final after one rewrite: one walk, no fixed point.
            apply_recursively=False,
            listener=PatternRewriterListener(
                operation_replacement_handler=[_keep_location]
            ),
        ).rewrite_module(op)


# --------------------------------------------------------------------------
# What can be lowered
# --------------------------------------------------------------------------

#: The memory accesses and their triton ops: the same operands (buffer or
#: pointer, offset, optional mask) and properties.
ACCESS_OPS: Mapping[type[Operation], type[Operation]] = {
    memory.LoadOp: tt.LoadOp,
    memory.StoreOp: tt.StoreOp,
}

#: The ops a kernel body keeps, retyped, besides the tile dialect's.
KEPT_OPS: tuple[type[Operation], ...] = (
    scf.ForOp,
    scf.WhileOp,
    scf.IfOp,
    scf.ConditionOp,
    scf.YieldOp,
)


def check_lowerable(kernel: memory.KernelOp) -> None:
    """Raise ``PassFailedException`` unless every argument of ``kernel`` is
    a buffer and every op of its body one the patterns lower or keep."""
    for index, arg in enumerate(kernel.args):
        if not isinstance(arg.type, BufferType):
            raise PassFailedException(
                f"lower-memory-to-triton: argument {index} of memory.kernel "
                f"@{kernel.kernel_name} has type {arg.type}, not a !memory.buffer"
            )
    for op in kernel.body.walk():
        if not _lowerable(op):
            raise PassFailedException(
                f"lower-memory-to-triton: {op.name} in memory.kernel "
                f"@{kernel.kernel_name} has no triton counterpart; a memory.kernel "
                "holds tile ops, memory.load/store, scf.for, scf.while and scf.if"
            )


def _lowerable(op: Operation) -> bool:
    """Whether the patterns lower or keep ``op``."""
    return (
        type(op) in ACCESS_OPS
        or isinstance(op, KEPT_OPS)
        or op.dialect_name() == tile.Tile.name
    )


# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------


@dataclass
class TilesToTensors(TypeConversionPattern):
    """``!loop.tile<[...], T>`` -> ``!triton.tensor<[...], T>`` in the
    results and block arguments of any op; scalars stay."""

    # Not ``@attr_type_rewrite_pattern``: its failed match prints the
    # attribute for a message nobody reads, five times the pass's cost.
    def convert_type(self, typ: Attribute, /) -> Attribute | None:
        if isinstance(typ, loop.TileType):
            return _block_type(typ)
        return None


@functools.lru_cache(maxsize=1024)
def _block_type(tile: loop.TileType) -> tt.BlockType:
    """The triton block of a tile's shape; a kernel has few distinct tile
    types, and building (and verifying) each anew was a fifth of the pass."""
    return tt.BlockType(tile.dims, tile.element_type)


_TYPES = TilesToTensors()


def convert_type(type_: Attribute) -> Attribute:
    """A loop tile becomes a triton block of the same shape; scalars stay."""
    return _TYPES.convert_type(type_) or type_


# --------------------------------------------------------------------------
# Patterns
# --------------------------------------------------------------------------


@dataclass
class LowerKernel(RewritePattern):
    """``memory.kernel`` -> ``triton.kernel`` with the same launch: each
    buffer argument becomes a pointer to its element type, one ``i64``
    argument per symbol follows, named after it; the body moves over."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memory.KernelOp, rewriter: PatternRewriter, /):
        block = op.body.block
        for arg in op.args:
            buffer = arg.type
            assert isinstance(buffer, BufferType), "checked by check_lowerable"
            pointer = rewriter.replace_value_with_new_type(
                arg, tt.PointerType(buffer.element_type)
            )
            pointer.location = arg.location
        for symbol in op.symbol_names:
            arg = rewriter.insert_block_argument(block, len(block.args), i64)
            arg.name_hint = symbol
        lowered = tt.KernelOp(
            op.kernel_name,
            op.kind.data,
            op.num_inputs,
            op.grid_exprs,
            op.tile_sizes,
            op.symbol_names,
            rewriter.move_region_contents_to_new_regions(op.body),
            op.reason.data,
        )
        lowered.attributes |= op.attributes
        lowered.location = op.location
        rewriter.replace(op, lowered)


@dataclass
class LowerAccess(RewritePattern):
    """``memory.load`` / ``memory.store`` -> ``triton.load`` /
    ``triton.store``, with the same operands, properties and attributes, the
    results retyped."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        counterpart = ACCESS_OPS.get(type(op))
        if counterpart is not None:
            rewriter.replace(op, rebuilt(op, counterpart))


def rebuilt(op: Operation, counterpart: type[Operation]) -> Operation:
    """An op of type ``counterpart`` with ``op``'s operands, properties,
    attributes and location, and its result types converted."""
    new = counterpart.create(
        operands=op.operands,
        result_types=[convert_type(result.type) for result in op.results],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    new.location = op.location
    return new


def _keep_location(op: Operation, new_results: Sequence[SSAValue | None]) -> None:
    """An op that is rebuilt as an op of its own type without a location
    (``TypeConversionPattern`` rebuilds ``scf.for`` so) keeps its location."""
    for result in new_results:
        new = None if result is None else result.owner
        if type(new) is type(op) and isinstance(new.location, UnknownLoc):
            new.location = op.location
