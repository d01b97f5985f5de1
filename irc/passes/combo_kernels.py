"""``combine-launches``: independent kernel launches as one launch (combo
kernels, as TorchInductor's ``combo_kernels`` makes them).

A training step launches many small kernels that do not depend on each
other: the weight gradient ``h^T @ dy`` and the input gradient ``dy @ W^T``
both only read ``dy``. Each launch costs host time and leaves the GPU idle
between kernels too small to fill it. This pass merges launches that are
independent into one ``triton.kernel`` over a flat grid: its programs are
split among the kernels it combines, each a ``triton.piece`` that runs the
programs from its offset on, on its own grid (``irc.dialects.triton``), so
each piece's body is its kernel's body unchanged.

The rule (docs/lowering.md, "Independent launches as one"): launches of one
host block combine when

- they are independent: neither writes storage the other reads or writes
  (through ``memory.reuse`` and ``memory.row`` to the storage they view; the
  host function's arguments may all be one tensor; a buffer that host
  control flow carries may be any storage);
- they can be made adjacent: each launch but the last moves down to the last
  one past launches it is independent of, allocations and deallocations of
  storage it does not touch, and sizes and guards; no launch moves across a
  debug print or callback, a collective, a host transfer or a control-flow
  region, which end a group;
- their launch configuration is fixed and the same: no tile whose size the
  launch chooses (``launch_tiles``: the tuner sizes such a kernel per bucket
  of its sizes, with warps to match), the same ``num_warps`` and
  ``num_stages`` (Triton's defaults where a kernel declares none) and the
  same ``matmul_precision`` for those that multiply, since a launch has one
  of each; and no other launch attribute;
- a group has at most ``max-pieces`` launches and ``MAX_POINTERS`` buffers.

A kernel launched more than once (``dedupe-kernels``) keeps its own kernel
for its launches that do not combine; equal groups share one combined
kernel; a kernel no longer launched is erased. The pass runs on the triton
level, after ``lower-memory-to-triton``: the memory level and its reference
interpreter keep one kernel per launch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from irc.dialects import memory, sym, tile
from irc.dialects import triton as tt
from irc.dialects.kernel_kind import (
    ATTENTION,
    MATMUL,
    MATMUL_PRECISION_ATTRIBUTE,
    NUM_STAGES_ATTRIBUTE,
    NUM_WARPS_ATTRIBUTE,
    kernel_kind,
)
from irc.dialects.sym import product
from irc.shapes import SymExpr

#: The most buffers a combined kernel takes (its pointer arguments): a
#: launch's parameters are copied to the GPU with it.
MAX_POINTERS = 128

#: What Triton launches with when a kernel declares no warps or stages.
DEFAULT_WARPS, DEFAULT_STAGES = 4, 3

#: The launch attributes a combined kernel can carry for all its pieces.
_SHARED_ATTRIBUTES = frozenset(
    {NUM_WARPS_ATTRIBUTE, NUM_STAGES_ATTRIBUTE, MATMUL_PRECISION_ATTRIBUTE}
)

#: Host ops a launch may move down past (the others end a group): those
#: that only allocate, free, view or size storage, and guards, checked
#: before anything runs. Launches and deallocations are crossed only when
#: they do not touch what the moving launch touches.
_CROSSABLE = (
    memory.LaunchOp,
    memory.AllocOp,
    memory.ReuseOp,
    memory.DeallocOp,
    memory.ConstantOp,
    memory.RowOp,
    memory.SizeOp,
    sym.GuardOp,
)


@dataclass(frozen=True)
class CombineLaunchesPass(ModulePass):
    """Merge independent launches of triton kernels into one launch of a
    combined kernel (the rule is the module's docstring); ``max-pieces=1``
    combines nothing."""

    name = "combine-launches"

    #: The most launches one combined launch stands for.
    max_pieces: int = 8

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_pieces < 2:
            return
        launched = _launch_counts(op)
        combiner = _Combiner(op, self.max_pieces)
        for function in op.ops:
            if isinstance(function, func.FuncOp):
                for inner in list(function.walk()):
                    for region in inner.regions:
                        for block in region.blocks:
                            combiner.block(block)
        after = _launch_counts(op)
        for kernel in list(op.ops):
            if (
                isinstance(kernel, tt.KernelOp)
                and launched.get(kernel.kernel_name)
                and not after.get(kernel.kernel_name)
            ):
                Rewriter.erase_op(kernel)


def _launch_counts(module: ModuleOp) -> dict[str, int]:
    """How many launch ops name each kernel (the host functions' ops only:
    kernel bodies are most of a module and launch nothing)."""
    counts: dict[str, int] = {}
    for top in module.ops:
        if isinstance(top, tt.KernelOp | memory.KernelOp):
            continue
        for op in top.walk():
            if isinstance(op, memory.LaunchOp):
                counts[op.kernel_name] = counts.get(op.kernel_name, 0) + 1
    return counts


# --------------------------------------------------------------------------
# Which kernels may join a combined launch, and with which others
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class LaunchConfig:
    """What one launch fixes for every piece of a combined kernel: warps,
    stages, and the float32 matmul precision (None for a kernel without a
    ``tile.dot``, which any precision suits)."""

    warps: int
    stages: int
    precision: str | None

    def joins(self, other: LaunchConfig) -> bool:
        """Whether one launch suits both: the same warps and stages, and the
        same precision where both multiply."""
        precisions = {self.precision, other.precision} - {None}
        same = (self.warps, self.stages) == (other.warps, other.stages)
        return same and len(precisions) <= 1

    def merged(self, other: LaunchConfig) -> LaunchConfig:
        return LaunchConfig(self.warps, self.stages, self.precision or other.precision)


def launch_config(kernel: tt.KernelOp) -> LaunchConfig | None:
    """The fixed launch configuration of ``kernel``, or None when it may not
    join a combined launch (``why_alone`` says why)."""
    if why_alone(kernel) is not None:
        return None
    warps = _int_attribute(kernel, NUM_WARPS_ATTRIBUTE) or DEFAULT_WARPS
    stages = _int_attribute(kernel, NUM_STAGES_ATTRIBUTE) or DEFAULT_STAGES
    precision = kernel.attributes.get(MATMUL_PRECISION_ATTRIBUTE)
    multiplies = any(isinstance(op, tile.DotOp) for op in kernel.body.walk())
    if not multiplies:
        text = None
    elif isinstance(precision, StringAttr):
        text = precision.data
    else:
        text = "ieee"
    return LaunchConfig(warps, stages, text)


def why_alone(kernel: tt.KernelOp) -> str | None:
    """Why ``kernel`` is launched alone whatever its neighbours, or None if
    it may join a combined launch."""
    if kernel.pieces:
        return "it combines kernels already"
    if kernel.never_launches:
        return "its grid is empty"
    other = sorted(set(kernel.attributes) - _SHARED_ATTRIBUTES)
    if other:
        # launch_tiles among them: the launch chooses those tiles per size.
        return f"its launch attributes {other} are its own"
    for name in (NUM_WARPS_ATTRIBUTE, NUM_STAGES_ATTRIBUTE):
        if name in kernel.attributes and _int_attribute(kernel, name) is None:
            return f"its {name} is not a positive integer"
    if any(arg.type != i64 for arg in kernel.symbol_args):
        return "a symbol argument is not i64"
    return None


def _int_attribute(kernel: tt.KernelOp, name: str) -> int | None:
    value = kernel.attributes.get(name)
    if isinstance(value, IntegerAttr) and value.value.data >= 1:
        return value.value.data
    return None


# --------------------------------------------------------------------------
# Storage: what a launch reads and writes
# --------------------------------------------------------------------------


class _Token:
    """A storage that stands for several: every argument of the host
    function (a caller may pass one tensor twice), or any storage (a buffer
    host control flow carries or yields)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


ARGUMENTS = _Token("arguments")
ANY = _Token("any")

Storage = SSAValue | _Token


def storage(value: SSAValue) -> Storage:
    """The storage ``value`` is a view of: the allocation (or constant) it
    reuses or is a row of, the host function's arguments, or any."""
    while isinstance(value.owner, memory.ReuseOp | memory.RowOp):
        value = value.owner.source
    if isinstance(value, BlockArgument):
        return ARGUMENTS if isinstance(value.owner.parent_op(), func.FuncOp) else ANY
    if isinstance(value.owner, memory.AllocOp | memory.ConstantOp):
        return value
    return ANY


def _overlap(xs: Iterable[Storage], ys: Iterable[Storage]) -> bool:
    ys = list(ys)
    return any(x is ANY or y is ANY or x == y for x in xs for y in ys)


@dataclass
class _Launch:
    """A launch with the storages its kernel reads and writes."""

    op: memory.LaunchOp
    kernel: tt.KernelOp
    reads: list[Storage]
    writes: list[Storage]

    @staticmethod
    def of(op: memory.LaunchOp, kernel: tt.KernelOp) -> _Launch:
        inputs = kernel.num_inputs
        return _Launch(
            op,
            kernel,
            [storage(v) for v in op.args[:inputs]],
            [storage(v) for v in op.args[inputs:]],
        )

    def conflicts(self, other: _Launch) -> bool:
        """Whether one writes storage the other reads or writes: their
        order matters."""
        return _overlap(self.writes, [*other.reads, *other.writes]) or _overlap(
            other.writes, self.reads
        )

    def crosses(self, op: Operation) -> bool:
        """Whether this launch may run after ``op`` instead of before."""
        if isinstance(op, memory.LaunchOp):
            kernel = op.callee()
            return isinstance(kernel, tt.KernelOp) and not self.conflicts(
                _Launch.of(op, kernel)
            )
        if isinstance(op, memory.DeallocOp):
            return not _overlap([storage(op.buffer)], [*self.reads, *self.writes])
        return isinstance(op, _CROSSABLE) or op.dialect_name() == "arith"


# --------------------------------------------------------------------------
# Groups of launches
# --------------------------------------------------------------------------


@dataclass
class _Group:
    """Launches to combine, in host order. Every op between two members is
    one that the members before it may move down past (``_ends_group``)."""

    members: list[_Launch]
    config: LaunchConfig

    def pointers(self) -> int:
        return sum(len(m.op.args) for m in self.members)

    def admits(self, launch: _Launch, config: LaunchConfig, limit: int) -> bool:
        """Whether ``launch`` may join: independent of every member, the
        same configuration, within the limits."""
        return (
            len(self.members) < limit
            and self.pointers() + len(launch.op.args) <= MAX_POINTERS
            and self.config.joins(config)
            and not any(m.conflicts(launch) for m in self.members)
        )


class _Combiner:
    """Finds the groups of each host block and replaces each by one launch
    of a combined kernel (one kernel per distinct group)."""

    def __init__(self, module: ModuleOp, max_pieces: int):
        self.module = module
        self.max_pieces = max_pieces
        self.kernels: dict[tuple[object, ...], tt.KernelOp] = {}
        #: Each kernel's ``launch_config``, computed once.
        self.configs: dict[tt.KernelOp, LaunchConfig | None] = {}

    def block(self, block: Block) -> None:
        for group in self._groups(block):
            self._combine(group)

    def _groups(self, block: Block) -> list[_Group]:
        found: list[_Group] = []
        group: _Group | None = None
        for op in block.ops:
            launch = self._candidate(op)
            if launch is not None:
                config = self.configs[launch.kernel]
                assert config is not None
                if group is not None and group.admits(launch, config, self.max_pieces):
                    group.members.append(launch)
                    group.config = group.config.merged(config)
                    continue
                if group is not None and len(group.members) > 1:
                    found.append(group)
                group = _Group([launch], config)
            elif group is not None and _ends_group(op, group):
                if len(group.members) > 1:
                    found.append(group)
                group = None
        if group is not None and len(group.members) > 1:
            found.append(group)
        return found

    def _candidate(self, op: Operation) -> _Launch | None:
        """``op`` as a launch that may join a group."""
        if not isinstance(op, memory.LaunchOp):
            return None
        kernel = op.callee()
        if not isinstance(kernel, tt.KernelOp):
            return None
        if kernel not in self.configs:
            self.configs[kernel] = launch_config(kernel)
        if self.configs[kernel] is None:
            return None
        return _Launch.of(op, kernel)

    def _combine(self, group: _Group) -> None:
        """One launch of the group's combined kernel where its last member
        was; the members go."""
        members = group.members
        arguments, maps, inputs = _arguments(members)
        key = (tuple(m.kernel.kernel_name for m in members), tuple(maps), inputs)
        kernel = self.kernels.get(key)
        if kernel is None:
            kernel = self.kernels[key] = _combined_kernel(
                self._fresh_name(members), group, arguments, maps, inputs
            )
            first = members[0].kernel
            assert first.parent_block() is self.module.body.block
            Rewriter.insert_op(kernel, InsertPoint.before(first))
        launch = memory.LaunchOp(kernel.kernel_name, arguments)
        launch.location = members[0].op.location
        Rewriter.insert_op(launch, InsertPoint.before(members[-1].op))
        for member in members:
            Rewriter.erase_op(member.op)

    def _fresh_name(self, group: Sequence[_Launch]) -> str:
        names = [m.kernel.kernel_name for m in group]
        base = "combo_" + "_".join(names)
        if len(base) > 64:
            base = f"combo_{names[0]}_and_{len(names) - 1}"
        name, index = base, 1
        while SymbolTable.lookup_symbol(self.module, name) is not None:
            index += 1
            name = f"{base}_{index}"
        return name


def _ends_group(op: Operation, group: _Group) -> bool:
    """Whether the open group ends at ``op``: an op no member may move past
    (a launch that conflicts with a member, among others)."""
    return not all(member.crosses(op) for member in group.members)


# --------------------------------------------------------------------------
# The combined kernel
# --------------------------------------------------------------------------


def _arguments(
    group: Sequence[_Launch],
) -> tuple[list[SSAValue], list[tuple[int, ...]], int]:
    """The combined launch's buffers (the members' inputs, each buffer once,
    then their outputs), each member's argument -> combined argument map,
    and the number of inputs."""
    inputs: list[SSAValue] = []
    for member in group:
        for value in member.op.args[: member.kernel.num_inputs]:
            if value not in inputs:
                inputs.append(value)
    outputs = [v for m in group for v in m.op.args[m.kernel.num_inputs :]]
    maps: list[tuple[int, ...]] = []
    next_output = len(inputs)
    for member in group:
        count = member.kernel.num_inputs
        mapped = [inputs.index(v) for v in member.op.args[:count]]
        for _ in member.op.args[count:]:
            mapped.append(next_output)
            next_output += 1
        maps.append(tuple(mapped))
    return [*inputs, *outputs], maps, len(inputs)


def _combined_kernel(
    name: str,
    group: _Group,
    arguments: Sequence[SSAValue],
    maps: Sequence[tuple[int, ...]],
    inputs: int,
) -> tt.KernelOp:
    """The kernel whose pieces are the group's kernels, in order."""
    members, config = group.members, group.config
    kernels = [m.kernel for m in members]
    symbols = _symbols(kernels)
    pointers = [_pointer_type(members, maps, i) for i in range(len(arguments))]
    block = Block(arg_types=[*pointers, *([i64] * len(symbols))])
    for index, value in enumerate(arguments):
        block.args[index].name_hint = _hint(members, maps, index) or value.name_hint
    symbol_args = dict(zip(symbols, block.args[len(arguments) :], strict=True))
    for symbol, arg in symbol_args.items():
        arg.name_hint = symbol
    tiles: dict[str, int] = {}
    offset = SymExpr.const(0)
    for kernel, mapped in zip(kernels, maps, strict=True):
        renamed = _merge_tiles(tiles, kernel.tile_sizes)
        values: dict[SSAValue, SSAValue] = {
            arg: block.args[index]
            for arg, index in zip(kernel.pointer_args, mapped, strict=True)
        }
        values |= {
            arg: symbol_args[symbol]
            for symbol, arg in zip(kernel.symbol_names, kernel.symbol_args, strict=True)
        }
        block.add_op(_piece(kernel, offset, values, renamed))
        offset = offset + product(kernel.grid_exprs)
    combined = tt.KernelOp(
        name,
        _kind(kernels),
        inputs,
        [offset],
        tiles,
        symbols,
        Region(block),
        _reason(kernels, config),
    )
    combined.attributes[NUM_WARPS_ATTRIBUTE] = IntegerAttr(config.warps, i64)
    combined.attributes[NUM_STAGES_ATTRIBUTE] = IntegerAttr(config.stages, i64)
    if config.precision is not None:
        combined.attributes[MATMUL_PRECISION_ATTRIBUTE] = StringAttr(config.precision)
    combined.location = kernels[0].location
    return combined


def _symbols(kernels: Sequence[tt.KernelOp]) -> list[str]:
    """The combined kernel's symbols: its pieces', and those of their grids,
    from which each program finds its piece."""
    names: set[str] = set()
    for kernel in kernels:
        names |= set(kernel.symbol_names)
        for extent in kernel.grid_exprs:
            names |= extent.symbols
    return sorted(names)


def _pointer_type(
    group: Sequence[_Launch], maps: Sequence[tuple[int, ...]], index: int
) -> Attribute:
    for member, mapped in zip(group, maps, strict=True):
        if index in mapped:
            return member.kernel.pointer_args[mapped.index(index)].type
    raise AssertionError(f"no piece takes combined argument {index}")


def _hint(
    group: Sequence[_Launch], maps: Sequence[tuple[int, ...]], index: int
) -> str | None:
    for member, mapped in zip(group, maps, strict=True):
        if index in mapped:
            return member.kernel.pointer_args[mapped.index(index)].name_hint
    return None


def _merge_tiles(tiles: dict[str, int], own: dict[str, int]) -> dict[str, str]:
    """Add a piece's tiles to the combined kernel's ``tiles``: a tile of the
    same name and size is shared, one whose name is taken by another size
    is renamed. The piece's renames."""
    renamed: dict[str, str] = {}
    for tile_name, size in own.items():
        name, index = tile_name, 1
        while tiles.get(name, size) != size:
            index += 1
            name = f"{tile_name}_{index}"
        tiles[name] = size
        if name != tile_name:
            renamed[tile_name] = name
    return renamed


def _piece(
    kernel: tt.KernelOp,
    offset: SymExpr,
    values: dict[SSAValue, SSAValue],
    renamed: dict[str, str],
) -> tt.PieceOp:
    """``kernel``'s body as a piece starting at program ``offset``, its
    arguments replaced by the combined kernel's, its tiles renamed."""
    body = Block()
    for op in kernel.body.block.ops:
        body.add_op(op.clone(value_mapper=values))
    for op in body.walk():
        if isinstance(op, tile.RangeOp | tile.BlockSizeOp) and op.block.data in renamed:
            op.properties["block"] = StringAttr(renamed[op.block.data])
    piece = tt.PieceOp.create(
        properties={
            "piece": StringAttr(kernel.kernel_name),
            "offset": sym.SymExprAttr(offset),
            "grid": kernel.grid,
            "reason": kernel.reason,
        },
        regions=[Region(body)],
    )
    piece.location = kernel.location
    return piece


def _kind(kernels: Sequence[tt.KernelOp]) -> str:
    """The combined kernel's kind: a matmul's or attention's if a piece is
    one (a measurement then tries the stages its loop of loads pipelines),
    else the first piece's."""
    for kernel in kernels:
        if kernel_kind(kernel.kind.data) in (MATMUL, ATTENTION):
            return kernel.kind.data
    return kernels[0].kind.data


def _reason(kernels: Sequence[tt.KernelOp], config: LaunchConfig) -> str:
    names = ", ".join(f"@{k.kernel_name}" for k in kernels)
    return (
        f"combines {names} into one launch: independent (none writes a buffer "
        "another reads or writes), each a piece of the flat grid in turn, all "
        f"launched with {config.warps} warps and {config.stages} stages"
    )
