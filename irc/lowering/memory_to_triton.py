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
an error naming that op rather than something half-lowered.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import loop, memory
from irc.dialects import triton as tt
from irc.dialects.memory import BufferType


@dataclass(frozen=True)
class LowerMemoryToTritonPass(ModulePass):
    """Lower every ``memory.kernel`` of a module to a ``triton.kernel`` (see
    the module docstring); the host functions are left as they are."""

    name = "lower-memory-to-triton"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in list(op.ops):
            if isinstance(kernel, memory.KernelOp):
                Rewriter.replace_op(kernel, lower_kernel(kernel))


def convert_type(type_: Attribute) -> Attribute:
    """A loop tile becomes a triton block of the same shape; scalars stay."""
    if isinstance(type_, loop.TileType):
        return tt.BlockType(type_.dims, type_.element_type)
    return type_


def lower_kernel(kernel: memory.KernelOp) -> tt.KernelOp:
    """The ``triton.kernel`` computing what ``kernel`` computes."""
    symbols = kernel.symbol_names
    pointer_types: list[Attribute] = []
    for arg in kernel.args:
        assert isinstance(arg.type, BufferType), "verified by memory.kernel"
        pointer_types.append(tt.PointerType(arg.type.element_type))
    block = Block(arg_types=[*pointer_types, *(i64 for _ in symbols)])
    pointers = block.args[: len(kernel.args)]
    for old, new in zip(kernel.args, pointers, strict=True):
        new.name_hint = old.name_hint
    for symbol, arg in zip(symbols, block.args[len(kernel.args) :], strict=True):
        arg.name_hint = symbol
    converter = _BodyConverter(dict(zip(kernel.args, pointers, strict=True)))
    converter.convert_block(kernel.body.block, block)
    lowered = tt.KernelOp(
        kernel.kernel_name,
        kernel.kind.data,
        kernel.num_inputs,
        kernel.grid_exprs,
        kernel.tile_sizes,
        symbols,
        Region(block),
        kernel.reason.data,
    )
    lowered.attributes |= kernel.attributes
    lowered.location = kernel.location
    return lowered


#: The ops of a ``memory.kernel``'s body and the triton op that mirrors
#: each: the same operands, properties and results, tiles retyped as blocks.
_COUNTERPARTS: dict[type[Operation], type[Operation]] = {
    loop.ProgramIdOp: tt.ProgramIdOp,
    loop.SizeOp: tt.SizeOp,
    loop.RangeOp: tt.ArangeOp,
    loop.ConstantOp: tt.ConstantOp,
    loop.SplatOp: tt.FullOp,
    loop.UnaryOp: tt.UnaryOp,
    loop.BinaryOp: tt.BinaryOp,
    loop.CompareOp: tt.CompareOp,
    loop.SelectOp: tt.WhereOp,
    loop.CastOp: tt.CastOp,
    loop.ReduceOp: tt.ReduceOp,
    loop.DotOp: tt.DotOp,
    memory.LoadOp: tt.LoadOp,
    memory.StoreOp: tt.StoreOp,
    scf.YieldOp: scf.YieldOp,
}


@dataclass
class _BodyConverter:
    """Rebuilds a kernel body op by op with the triton ops, mapping every old
    value to its new counterpart."""

    values: dict[SSAValue, SSAValue]

    def convert_block(self, source: Block, target: Block) -> None:
        for op in source.ops:
            target.add_op(self._convert(op))

    def _convert(self, op: Operation) -> Operation:
        counterpart = _COUNTERPARTS.get(type(op))
        if counterpart is not None:
            new = counterpart.create(
                operands=[self._get(v) for v in op.operands],
                result_types=[convert_type(r.type) for r in op.results],
                properties=dict(op.properties),
            )
        elif isinstance(op, scf.ForOp):
            new = self._for(op)
        else:
            raise PassFailedException(
                f"lower-memory-to-triton: {op.name} has no triton counterpart; a "
                "memory.kernel holds loop compute ops, memory.load/store and scf.for"
            )
        new.attributes |= op.attributes
        new.location = op.location
        for old_result, new_result in zip(op.results, new.results, strict=True):
            new_result.name_hint = old_result.name_hint
            self.values[old_result] = new_result
        return new

    def _get(self, value: SSAValue) -> SSAValue:
        return self.values[value]

    def _for(self, op: scf.ForOp) -> Operation:
        source = op.body.block
        body = Block(arg_types=[convert_type(arg.type) for arg in source.args])
        for old, new in zip(source.args, body.args, strict=True):
            new.name_hint = old.name_hint
            self.values[old] = new
        self.convert_block(source, body)
        return scf.ForOp(
            self._get(op.lb),
            self._get(op.ub),
            self._get(op.step),
            [self._get(v) for v in op.iter_args],
            Region(body),
        )
