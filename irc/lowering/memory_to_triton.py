"""``lower-memory-to-triton``: from the memory level to the triton level.

Each module-level ``memory.kernel`` becomes a ``triton.kernel`` of the same
name, so the host functions' ``memory.launch`` ops now launch it:

- its buffer arguments become ``!triton.ptr`` arguments (a kernel sees a
  buffer as the pointer to its first element: the offsets it loads and
  stores at are already linear), followed by one ``i64`` argument per
  symbol, named after it: the launcher passes the symbols' values there;
- ``memory.load`` / ``memory.store`` become ``triton.load`` /
  ``triton.store`` at pointer + offset;
- each loop compute op becomes the triton op that mirrors it
  (``loop.size`` -> ``triton.size`` over the symbol arguments,
  ``loop.range`` -> ``triton.arange``, ``loop.select`` -> ``triton.where``,
  ``loop.splat`` -> ``triton.full``, ...), and ``scf.for`` stays, with its
  tiles retyped as ``!triton.tensor``.

The host functions keep their memory ops (alloc, reuse, dealloc, constant,
guard, launch): the emitter turns them into the launcher. The conversion
is one to one, so a kernel that holds an op with no triton counterpart is
an error (``PassFailedException``, which ``irc-opt`` reports as the pass
failing) naming that op and its kernel rather than something
half-lowered: the pass checks every kernel before it rewrites any, and
leaves the module as it was when one fails. Nothing is removed or
reordered, dead ops included (the applier's dead-code elimination is off),
and every op keeps its attributes and location (a listener gives
``scf.for`` its location back when the type conversion rebuilds it).

As xDSL writes its conversions, the pass is a set of rewrite patterns run
by one ``PatternRewriteWalker``:

- ``LowerKernel``: ``memory.kernel`` -> ``triton.kernel``, its body moved
  over with the arguments retyped and the symbol arguments appended;
- ``LowerOneToOne``: the one generic pattern for the ops that map one to
  one, from the table ``ONE_TO_ONE``: the tile compute ops (``TILE_OPS``:
  a loop op and its triton op share a base in ``irc.dialects.tiles``,
  hence operands, properties and results) and the accesses
  (``ACCESS_OPS``: ``memory.load`` / ``memory.store``, whose buffer
  operand is the kernel argument that ``LowerKernel`` makes a pointer);
- ``TilesToTensors``: the ``TypeConversionPattern`` from ``!loop.tile`` to
  ``!triton.tensor`` for the ops that stay (``scf.for``'s results and
  block arguments).

Each pattern rewrites one op whatever the others have done yet (result
types are converted from the old results, not inferred from operands), so
the walk may take the ops in any order.
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

from irc.dialects import loop, memory
from irc.dialects import triton as tt
from irc.dialects.memory import BufferType
from irc.dialects.tiles import TileOp


@dataclass(frozen=True)
class LowerMemoryToTritonPass(ModulePass):
    """Lower every ``memory.kernel`` of a module to a ``triton.kernel`` (see
    the module docstring); the host functions are left as they are."""

    name = "lower-memory-to-triton"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.ops:
            if isinstance(kernel, memory.KernelOp):
                check_lowerable(kernel)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [LowerKernel(), LowerOneToOne(), TilesToTensors()],
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

#: The tile compute ops and the triton op that mirrors each: both derive
#: from the same base in ``irc.dialects.tiles``, so they have the same
#: operands and properties, and results of the same shape.
TILE_OPS: Mapping[type[TileOp], type[TileOp]] = {
    loop.ProgramIdOp: tt.ProgramIdOp,
    loop.SizeOp: tt.SizeOp,
    loop.RangeOp: tt.ArangeOp,
    loop.BlockSizeOp: tt.BlockSizeOp,
    loop.ConstantOp: tt.ConstantOp,
    loop.SplatOp: tt.FullOp,
    loop.UnaryOp: tt.UnaryOp,
    loop.BinaryOp: tt.BinaryOp,
    loop.CompareOp: tt.CompareOp,
    loop.SelectOp: tt.WhereOp,
    loop.CastOp: tt.CastOp,
    loop.ReduceOp: tt.ReduceOp,
    loop.ScanOp: tt.ScanOp,
    loop.DotOp: tt.DotOp,
}

#: The memory accesses and their triton ops: the same operands (buffer or
#: pointer, offset, optional mask) and properties.
ACCESS_OPS: Mapping[type[Operation], type[Operation]] = {
    memory.LoadOp: tt.LoadOp,
    memory.StoreOp: tt.StoreOp,
}

#: Every op that becomes one triton op with the same operands.
ONE_TO_ONE: Mapping[type[Operation], type[Operation]] = {**TILE_OPS, **ACCESS_OPS}

#: The ops a kernel body keeps, retyped.
KEPT_OPS: tuple[type[Operation], ...] = (scf.ForOp, scf.YieldOp)


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
        if not isinstance(op, KEPT_OPS) and type(op) not in ONE_TO_ONE:
            raise PassFailedException(
                f"lower-memory-to-triton: {op.name} in memory.kernel "
                f"@{kernel.kernel_name} has no triton counterpart; a memory.kernel "
                "holds loop compute ops, memory.load/store and scf.for"
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
class LowerOneToOne(RewritePattern):
    """The one generic pattern: an op of ``ONE_TO_ONE`` -> its triton op,
    with the same operands, properties and attributes, the results
    retyped."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        counterpart = ONE_TO_ONE.get(type(op))
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
