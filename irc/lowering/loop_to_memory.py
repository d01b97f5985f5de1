"""``bufferize``: from the loop level to the memory level.

Tensors become row-major buffers and every ``loop.kernel`` is split in two:
a module-level ``memory.kernel`` whose accesses are loads and stores at
linear offsets (``KernelBufferizer``), and, in the host function, storage
for its outputs and a ``memory.launch`` (``FunctionBufferizer``). Storage
follows liveness: a dead intermediate's storage is reused or deallocated.
Control flow becomes host ``scf`` (``irc.lowering.host_control_flow``).

Entry point: ``BufferizePass``. See docs/lowering.md, section "The memory
level".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntegerType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException, VerifyException

from irc.dialects import collective, debug, graph, loop, memory, sym, tile
from irc.dialects.graph import TensorType
from irc.dialects.memory import BufferType
from irc.dialects.tile import broadcast_tile_shapes
from irc.lowering.fusion_to_loop.builder import indices_fit
from irc.lowering.host_control_flow import HostControlFlow
from irc.shapes import Facts, ShapeError, SymExpr

# --------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class BufferizePass(ModulePass):
    """Lower a loop-level module to the memory level (see the module
    docstring)."""

    name = "bufferize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # A nested module is a symbol table of its own, bufferized as the
        # top one is: fuse and tile lower its functions too.
        for module in [m for m in op.walk() if isinstance(m, ModuleOp)]:
            _bufferize_module(module)


def _bufferize_module(module: ModuleOp) -> None:
    """Bufferize the loop-level functions directly in ``module``."""
    functions = [f for f in module.ops if isinstance(f, func.FuncOp)]
    names = _SymbolNames.of(module, prefix_with_function=len(functions) > 1)
    for function in functions:
        if not function.body.blocks:
            _set_buffer_signature(function)
        elif _is_loop_level(function):
            FunctionBufferizer(function, names).run()
        else:
            _check_not_half_tiled(function)


def _is_loop_level_op(op: Operation) -> bool:
    """The ops a loop-level function body holds; control-flow ops hold the
    same in their regions, and end them with ``graph.yield``."""
    if isinstance(op, graph.ConstantOp):
        return not op.is_splat
    if isinstance(op, graph.CONTROL_FLOW_OPS):
        return all(
            _is_loop_level_op(inner) or isinstance(inner, graph.YieldOp)
            for region in op.regions
            for inner in region.block.ops
        )
    return isinstance(
        op,
        (
            loop.KernelOp,
            sym.GuardOp,
            func.ReturnOp,
            *debug.DEBUG_OPS,
            *collective.COLLECTIVE_OPS,
        ),
    )


def _is_loop_level(function: func.FuncOp) -> bool:
    """Whether ``function`` is at the loop level, with something to
    bufferize: only loop-level ops, and a tensor in the signature or an op
    besides the return. A memory-level function is not (so the pass is
    idempotent), nor is one of a higher level (graph ops, fusion kernels):
    ``bufferize`` leaves those as they are, as ``tile`` leaves graph ops."""
    ops = list(function.body.ops)
    if not all(_is_loop_level_op(op) for op in ops):
        return False
    signature = function.function_type
    tensors = any(
        isinstance(t, TensorType) for t in (*signature.inputs, *signature.outputs)
    )
    return tensors or any(not isinstance(op, func.ReturnOp) for op in ops)


def _check_not_half_tiled(function: func.FuncOp) -> None:
    """A function with loop kernels and ops of another level cannot be
    bufferized: an error naming the first such op."""
    ops = list(function.body.ops)
    if not any(isinstance(op, loop.KernelOp) for op in ops):
        return
    stray = next(op for op in ops if not _is_loop_level_op(op))
    if isinstance(stray, graph.ConstantOp):
        raise _fail(
            stray,
            "a splat constant at function level has no storage to become; "
            "tile folds splats into the kernels that read them",
        )
    raise _fail(
        stray,
        "a function with loop kernels may hold only sym.guard, dense "
        "graph.constant, loop.kernel, debug and collective ops, control flow "
        "(graph.cond, graph.while, "
        "graph.for) over those, and func.return; tile should have made this op "
        "part of a kernel",
    )


def _set_buffer_signature(function: func.FuncOp) -> None:
    """Give ``function`` the buffers of its tensors as argument and result
    types."""
    signature = function.function_type
    function.function_type = FunctionType.from_lists(
        [_buffer_of(t) for t in signature.inputs],
        [_buffer_of(t) for t in signature.outputs],
    )


@dataclass
class _SymbolNames:
    """Kernel names unique in the module (functions and kernels share the
    symbol table); prefixed with the function's name when there are several
    functions, so that a name says where the kernel comes from."""

    taken: set[str]
    prefix_with_function: bool

    @staticmethod
    def of(module: ModuleOp, prefix_with_function: bool) -> _SymbolNames:
        taken = {
            name.data
            for op in module.ops
            if isinstance(name := op.get_attr_or_prop("sym_name"), StringAttr)
        }
        return _SymbolNames(taken, prefix_with_function)

    def fresh(self, function: str, kernel: str) -> str:
        base = f"{function}_{kernel}" if self.prefix_with_function else kernel
        name, suffix = base, 1
        while name in self.taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        self.taken.add(name)
        return name


def _fail(op: Operation, message: str) -> PassFailedException:
    function = op.parent_op()
    where = (
        f" in @{function.sym_name.data}" if isinstance(function, func.FuncOp) else ""
    )
    return PassFailedException(f"bufferize: {op.name}{where}: {message}")


def _tensor(value: SSAValue) -> TensorType:
    assert isinstance(value.type, TensorType), "loop-level values are graph tensors"
    return value.type


# --------------------------------------------------------------------------
# Liveness and the storage plan
# --------------------------------------------------------------------------


@dataclass
class _Dead:
    """A dead intermediate's buffer, free to be reused, and the op after
    which it died (where its dealloc goes unless someone reuses it)."""

    buffer: SSAValue
    after: Operation
    reused: bool = False


@dataclass
class _Pool:
    """The storage of dead intermediates, in the order they died."""

    facts: Facts
    dead: list[_Dead] = field(default_factory=list)

    def take(self, wanted: BufferType) -> SSAValue | None:
        """The most recently freed buffer that can hold ``wanted`` (its
        cache lines are the likeliest to be warm), marked as reused."""
        for entry in reversed(self.dead):
            if not entry.reused and self._fits(
                memory.buffer_type(entry.buffer), wanted
            ):
                entry.reused = True
                return entry.buffer
        return None

    def _fits(self, free: BufferType, wanted: BufferType) -> bool:
        if free.element_type != wanted.element_type:
            return False
        return free.numel == wanted.numel or self.facts.prove_eq(
            free.numel, wanted.numel
        )

    def release(self, buffer: SSAValue, after: Operation) -> None:
        self.dead.append(_Dead(buffer, after))

    def deallocate_unreused(self) -> None:
        """A ``memory.dealloc`` right after the last use of every dead
        buffer that no later intermediate took."""
        for entry in reversed(self.dead):  # each insertion lands just after
            if not entry.reused:
                block = entry.after.parent_block()
                assert block is not None
                dealloc = memory.DeallocOp(entry.buffer)
                dealloc.location = entry.after.location
                block.insert_op_after(dealloc, entry.after)


#: The last use of a value whose buffer is never released.
_FOREVER = 1 << 62


def _last_uses(block: Block) -> dict[SSAValue, int]:
    """For each value defined in ``block``, the position of the last op of
    the block that uses it (its defining op's if none does)."""
    last: dict[SSAValue, int] = {}
    for position, op in enumerate(block.ops):
        for result in op.results:
            last[result] = position
        for operand in op.operands:
            last[operand] = position
    return last


def _keep_collective_inputs(
    block: Block, last_use: dict[SSAValue, int]
) -> dict[int, list[SSAValue]]:
    """A collective runs asynchronously until its result is first used (the
    launcher waits there, or at the block's end for a result nobody reads),
    so its input's buffer must not be reused before: it lives at least
    until then. The inputs so kept, by the position at which they now
    die."""
    kept: dict[int, list[SSAValue]] = {}
    end = len(block.ops)
    for position, op in enumerate(block.ops):
        if not isinstance(op, collective.CollectiveOp) or op.input_value is None:
            continue
        first_use = _first_use(block, op.produced, position)
        if first_use == position:  # never read: in flight until the end
            first_use = end
        if first_use > last_use[op.input_value]:
            last_use[op.input_value] = first_use
            kept.setdefault(first_use, []).append(op.input_value)
    return kept


def _first_use(block: Block, value: SSAValue, defined_at: int) -> int:
    """The position of the first op of ``block`` after ``defined_at`` that
    uses ``value``, in its regions too (the defining op's if none does)."""
    for position, op in enumerate(block.ops):
        if position > defined_at and any(
            operand is value for inner in op.walk() for operand in inner.operands
        ):
            return position
    return defined_at


def _function_facts(block: Block) -> Facts:
    """The facts of the function's guards; the empty set if they contradict
    each other (such a function never runs, and equal sizes without facts
    are still equal)."""
    facts = [g.fact.fact for g in block.ops if isinstance(g, sym.GuardOp)]
    try:
        return Facts(facts)
    except ShapeError:
        return Facts()


# --------------------------------------------------------------------------
# Functions
# --------------------------------------------------------------------------


class FunctionBufferizer:
    """Rewrites one loop-level function in place: a new entry block over
    buffers, built op by op, and the kernels moved before the function."""

    def __init__(self, function: func.FuncOp, names: _SymbolNames):
        self.function = function
        self.names = names
        self.old_block = function.body.block
        self.block = Block(
            arg_types=[_buffer_of(t) for t in function.function_type.inputs]
        )
        self.buffers: dict[SSAValue, SSAValue] = {}
        for old, new in zip(self.old_block.args, self.block.args, strict=True):
            new.name_hint = old.name_hint
            self.buffers[old] = new
        self.returned: set[SSAValue] = set()
        self.last_use = _last_uses(self.old_block)
        #: Collective inputs kept alive past their own last use: by the
        #: position at which they die.
        self.kept_until = _keep_collective_inputs(self.old_block, self.last_use)
        self.pool = _Pool(_function_facts(self.old_block))
        #: Where ops are emitted: the function's block, or a host region's.
        self.current = self.block
        #: Inside a region, the buffers its yielded kernel outputs go to.
        self.destinations: dict[SSAValue, SSAValue] | None = None
        #: Inside a region, the buffers of its dead temporaries, which a
        #: later temporary of the same buffer type takes.
        self.region_free: list[SSAValue] = []
        self.control_flow = HostControlFlow(self)

    @property
    def function_name(self) -> str:
        return self.function.sym_name.data

    def run(self) -> None:
        ops = list(self.old_block.ops)
        terminator = ops[-1] if ops else None
        if isinstance(terminator, func.ReturnOp):
            self.returned = set(terminator.operands)
        for position, op in enumerate(ops):
            self._lower(op, position)
        self.pool.deallocate_unreused()
        self._install()

    def _lower(self, op: Operation, position: int) -> None:
        if isinstance(op, func.ReturnOp):
            self._emit(func.ReturnOp(*(self.buffers[v] for v in op.operands)), op)
            return
        self.lower_op(op)
        assert self.current.last_op is not None
        self._release_dead(op, position, self.current.last_op)

    def lower_op(self, op: Operation) -> None:
        """Lower a kernel, guard, debug op, dense constant or control-flow
        op of the function or of one of its regions into the current block."""
        if isinstance(op, loop.KernelOp):
            self._lower_kernel(op)
        elif isinstance(op, sym.GuardOp):
            self._emit(op.clone(), op)
        elif isinstance(op, debug.DEBUG_OPS):
            # The same op, reading its values' buffers, between the launches.
            self._emit(op.clone(value_mapper=self.buffers), op)
        elif isinstance(op, collective.CollectiveOp):
            self._lower_collective(op)
        elif isinstance(op, graph.ConstantOp):
            self._lower_constant(op)
        else:
            assert isinstance(op, graph.CONTROL_FLOW_OPS), "checked by _is_loop_level"
            self.control_flow.lower(op)

    def emit(
        self, new: Operation, old: Operation, into: Block | None = None
    ) -> Operation:
        """Append ``new`` (at ``old``'s location) to ``into``, by default
        the current block."""
        new.location = old.location
        (self.current if into is None else into).add_op(new)
        return new

    _emit = emit

    @contextmanager
    def inside(
        self, block: Block, destinations: dict[SSAValue, SSAValue]
    ) -> Iterator[None]:
        """Emit into a host region's ``block``, its yielded kernel outputs
        written to ``destinations``."""
        saved = self.current, self.destinations
        self.current, self.destinations = block, destinations
        try:
            yield
        finally:
            self.current, self.destinations = saved

    def lower_block(self, block: Block) -> None:
        """Lower a region body's ops but its terminator into the current
        block. Its buffers are allocated once per call (``region_storage``)
        and the body runs its ops in order, so a temporary (a kernel output
        the body does not yield) that is dead gives its buffer to a later
        temporary of the same buffer type: a body's storage follows its
        liveness, as a function's does."""
        saved = self.last_use, self.kept_until, self.region_free
        self.last_use = _last_uses(block)
        self.kept_until = _keep_collective_inputs(block, self.last_use)
        self.region_free = []
        try:
            for position, op in enumerate(list(block.ops)[:-1]):
                self.lower_op(op)
                self.region_free += self._dead_after(op, position)
        finally:
            self.last_use, self.kept_until, self.region_free = saved

    def region_storage(self, value: SSAValue, hint: str | None = None) -> SSAValue:
        """A fresh buffer for ``value`` (a tensor of the loop level) in the
        function's block: before the outermost control-flow op that needs it
        (which is emitted once its regions are), so allocated once per call,
        and never reused (it lives until the function returns)."""
        new = memory.AllocOp(BufferType.of_tensor(_tensor(value)))
        if isinstance(value.owner, Operation):
            new.location = value.owner.location
        self.block.add_op(new)
        new.results[0].name_hint = hint or value.name_hint
        return new.results[0]

    def keep_alive(self, value: SSAValue) -> None:
        """Never release ``value``'s buffer: a loop result reads it in place
        (a carry the loop passes on unchanged), so it lives as long as that
        result may be read."""
        self.last_use[value] = _FOREVER

    def storage_of(self, value: SSAValue) -> SSAValue:
        """The buffer a result inside a region is written to: the region's
        destination for it if it is yielded, else a dead temporary's of the
        same type, else one of its own."""
        if self.destinations is not None and value in self.destinations:
            return self.destinations[value]
        wanted = BufferType.of_tensor(_tensor(value))
        for buffer in reversed(self.region_free):
            if buffer.type == wanted:
                self.region_free.remove(buffer)
                return buffer
        return self.region_storage(value)

    def _lower_constant(self, op: graph.ConstantOp) -> None:
        assert isinstance(op.value, DenseIntOrFPElementsAttr), "not a splat"
        result_type = BufferType.of_tensor(_tensor(op.result))
        new = self.emit(memory.ConstantOp(op.value, result_type), op, into=self.block)
        new.results[0].name_hint = op.result.name_hint
        self.buffers[op.result] = new.results[0]

    def _lower_kernel(self, op: loop.KernelOp) -> None:
        inputs = [self.buffers[v] for v in op.inputs]
        outputs = [self._storage(result, op) for result in op.outputs]
        name = self.names.fresh(self.function_name, op.kernel_name)
        kernel = KernelBufferizer(op, name).run()
        module_block = self.function.parent_block()
        assert module_block is not None
        module_block.insert_op_before(kernel, self.function)
        self._emit(memory.LaunchOp(name, [*inputs, *outputs]), op)

    def _lower_collective(self, op: collective.CollectiveOp) -> None:
        """The buffer form of a collective, between the launches: it writes
        its result's buffer, allocated as a kernel output's is."""
        output = self._storage(op.produced, op)
        self._emit(collective.on_buffers(op, self.buffers, output), op)

    def _storage(self, result: SSAValue, op: Operation) -> SSAValue:
        """Storage for a kernel output: inside a region, the destination of
        a yielded value or a buffer allocated once for the whole function;
        else fresh if returned, else a dead intermediate's when one fits,
        else fresh."""
        if self.destinations is not None:
            buffer = self.storage_of(result)
            self.buffers[result] = buffer
            return buffer
        wanted = BufferType.of_tensor(_tensor(result))
        free = None if result in self.returned else self.pool.take(wanted)
        new = memory.AllocOp(wanted) if free is None else memory.ReuseOp(free, wanted)
        self._emit(new, op)
        new.results[0].name_hint = result.name_hint
        self.buffers[result] = new.results[0]
        return new.results[0]

    def _release_dead(self, op: Operation, position: int, last: Operation) -> None:
        """Intermediates last used by ``op`` are free once it has run (once
        ``last``, the last op it became, has)."""
        for value in self._dead_after(op, position):
            self.pool.release(value, last)

    def _dead_after(self, op: Operation, position: int) -> list[SSAValue]:
        """The buffers of the intermediates ``op``, at ``position`` in its
        block, uses last: inputs it read, outputs nobody reads, collective
        inputs kept alive until then."""
        dead: list[SSAValue] = []
        kept = self.kept_until.get(position, [])
        for value in dict.fromkeys((*op.operands, *op.results, *kept)):
            if self._is_intermediate(value) and self.last_use[value] == position:
                dead.append(self.buffers[value])
        return dead

    def _is_intermediate(self, value: SSAValue) -> bool:
        return (
            isinstance(value.owner, loop.KernelOp | collective.CollectiveOp)
            and value not in self.returned
        )

    def _install(self) -> None:
        """Swap the new block in and give the function its buffer signature."""
        for op in reversed(list(self.old_block.ops)):
            op.drop_all_references()
        self.function.body.detach_block(self.old_block)
        self.function.body.add_block(self.block)
        _set_buffer_signature(self.function)


def _buffer_of(type_: Attribute) -> Attribute:
    return BufferType.of_tensor(type_) if isinstance(type_, TensorType) else type_


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------


class KernelBufferizer:
    """Builds the ``memory.kernel`` of one ``loop.kernel``, moving its body."""

    def __init__(self, op: loop.KernelOp, name: str):
        self.op = op
        self.name = name
        input_types = [BufferType.of_tensor(_tensor(v)) for v in op.inputs]
        output_types = [BufferType.of_tensor(_tensor(v)) for v in op.outputs]
        self.block = Block(arg_types=[*input_types, *output_types])
        self.num_inputs = len(input_types)
        self.sizes: dict[tuple[SymExpr, Attribute], SSAValue] = {}
        self.offsets: dict[tuple[object, ...], SSAValue] = {}
        self.last_size: Operation | None = None
        self.symbols = set(op.symbol_names)
        self.facts: Facts | None = None
        #: Whether offsets of a width into a buffer of a size fit that width.
        self.narrow_fits: dict[tuple[SymExpr, int], bool] = {}

    def run(self) -> memory.KernelOp:
        old_block = self.op.body.block
        self._name_arguments(old_block)
        for op in list(old_block.ops):
            op.detach()
            self.block.add_op(op)
        accesses = [
            op for op in self.block.walk() if isinstance(op, loop.ReadOp | loop.WriteOp)
        ]
        for access in accesses:
            if isinstance(access, loop.ReadOp):
                self._lower_read(access)
            else:
                self._lower_write(access)
        kernel = memory.KernelOp(
            self.name,
            self.op.kind.data,
            self.num_inputs,
            self.op.grid_exprs,
            self.op.tile_sizes,
            self.symbols,
            Region(self.block),
            self.op.reason.data,
        )
        kernel.location = self.op.location
        kernel.attributes |= self.op.attributes
        return kernel

    def _name_arguments(self, old_block: Block) -> None:
        outputs = self.block.args[self.num_inputs :]
        for old, new in zip(old_block.args, self.block.args, strict=False):
            new.name_hint = old.name_hint
        for index, arg in enumerate(outputs):
            arg.name_hint = "out" if len(outputs) == 1 else f"out{index}"

    def _buffer_arg(self, tensor: SSAValue) -> SSAValue:
        """The buffer argument standing for a loop kernel input."""
        assert isinstance(tensor, BlockArgument), "loop.read reads kernel inputs"
        return self.block.args[tensor.index]

    def _lower_read(self, read: loop.ReadOp) -> None:
        buffer = self._buffer_arg(read.tensor)
        others = [] if read.mask is None else [read.mask]
        offset = self._offset(read, read.indices, memory.buffer_type(buffer), others)
        load = memory.LoadOp(buffer, offset, read.mask)
        self._insert(load, read)
        load.result.name_hint = read.result.name_hint
        read.result.replace_all_uses_with(load.result)
        _erase(read)

    def _lower_write(self, write: loop.WriteOp) -> None:
        buffer = self.block.args[self.num_inputs + write.output_index]
        others = [write.value] + ([] if write.mask is None else [write.mask])
        offset = self._offset(write, write.indices, memory.buffer_type(buffer), others)
        self._insert(memory.StoreOp(write.value, buffer, offset, write.mask), write)
        _erase(write)

    def _insert(self, new: Operation, before: Operation) -> None:
        new.location = before.location
        block = before.parent_block()
        assert block is not None
        block.insert_op_before(new, before)

    def _offset(
        self,
        access: Operation,
        indices: Sequence[SSAValue],
        buffer: BufferType,
        others: Sequence[SSAValue],
    ) -> SSAValue:
        """The linear offset of ``indices`` in ``buffer`` for ``access``,
        whose ``others`` operands (mask, stored value) also shape it.

        An earlier access's offset with the same terms is reused when it is
        visible here (a load and a store at the same place share it).
        """
        terms = _offset_terms(indices, buffer, others)
        index_type = _index_type(indices)
        if len(terms) > 1 or any(stride != 1 for _, stride in terms):
            # Only arithmetic this pass adds can wrap: an index used as
            # it is keeps its type.
            index_type = self._offset_type(index_type, buffer)
        key = (index_type, *terms)
        known = self.offsets.get(key)
        if known is not None and _visible(known, access):
            return known
        offset = self._sum_of_terms(access, terms, index_type)
        if isinstance(offset.owner, tile.BinaryOp | tile.CastOp) and all(
            offset is not index for index, _ in terms
        ):
            offset.name_hint = "off"
        self.offsets[key] = offset
        return offset

    def _offset_type(self, indices: IntegerType, buffer: BufferType) -> IntegerType:
        """The type of an offset into ``buffer`` from indices whose widest
        type is ``indices``: that type, unless it is narrower than 64
        bits and the facts in scope do not prove ``buffer`` small enough
        for it by the tiler's rule (``indices_fit``), then ``i64``. A
        product ``row * D`` of a hand-written i32 kernel would wrap past
        ``2**31`` on a large buffer; the tiler's own i32 kernels are proven
        by the same rule, so their offsets stay i32."""
        width = indices.width.data
        if width >= 64:
            return indices
        key = (buffer.numel, width)
        if key not in self.narrow_fits:
            facts = self._facts()
            self.narrow_fits[key] = indices_fit(facts, [buffer.numel], width)
        return indices if self.narrow_fits[key] else i64

    def _facts(self) -> Facts:
        """The facts of the guards around the kernel (none if they
        contradict each other: such code never runs, and i64 is safe)."""
        if self.facts is None:
            try:
                self.facts = sym.facts_in_scope(self.op)
            except VerifyException:
                self.facts = Facts()
        return self.facts

    def _sum_of_terms(
        self,
        access: Operation,
        terms: Sequence[tuple[SSAValue, SymExpr]],
        index_type: IntegerType,
    ) -> SSAValue:
        """``sum(index * stride)`` before ``access`` in ``index_type`` (an
        index of another width is cast); no ``* 1``, and 0 for no terms."""
        total: SSAValue | None = None
        for index, stride in terms:
            term = self._cast(index, index_type, access)
            if stride != 1:
                term = self._binary("mul", term, self._size(stride, index_type), access)
            total = term if total is None else self._binary("add", total, term, access)
        return total if total is not None else self._size(SymExpr.const(0), index_type)

    def _cast(
        self, value: SSAValue, index_type: IntegerType, access: Operation
    ) -> SSAValue:
        if loop.element_of(value.type) == index_type:
            return value
        cast = tile.CastOp(value, index_type)
        self._insert(cast, access)
        return cast.result

    def _binary(
        self, kind: str, lhs: SSAValue, rhs: SSAValue, access: Operation
    ) -> SSAValue:
        op = tile.BinaryOp(kind, lhs, rhs)
        self._insert(op, access)
        return op.result

    def _size(self, expr: SymExpr, index_type: IntegerType) -> SSAValue:
        """A ``tile.size`` for ``expr``, one per kernel, at its top (so that
        it is computed once, outside any loop); its symbols join the
        kernel's."""
        key = (expr, index_type)
        if key not in self.sizes:
            size = tile.SizeOp(expr, index_type)
            size.location = self.op.location
            if self.last_size is not None:
                self.block.insert_op_after(size, self.last_size)
            elif (first := self.block.first_op) is not None:
                self.block.insert_op_before(size, first)
            else:
                self.block.add_op(size)
            self.last_size = size
            self.sizes[key] = size.result
            self.symbols |= expr.symbols
        return self.sizes[key]


def _offset_terms(
    indices: Sequence[SSAValue], buffer: BufferType, others: Sequence[SSAValue]
) -> list[tuple[SSAValue, SymExpr]]:
    """The (index, stride) pairs the offset adds up.

    On a dim of static extent 1 every lane that touches memory has index 0,
    so its term is left out (keepdims shapes such as ``[M, 1, N]`` are
    common), unless that index alone gives the access its lane shape.
    """
    terms = list(zip(indices, buffer.strides, strict=True))
    context = [loop.shape_of(v.type) for v in others]
    full = broadcast_tile_shapes(*context, *(loop.shape_of(i.type) for i in indices))
    for position in reversed(range(len(terms))):
        if buffer.dims[position] != 1:
            continue
        rest = [
            loop.shape_of(i.type) for i, _ in terms[:position] + terms[position + 1 :]
        ]
        if broadcast_tile_shapes(*context, *rest) == full:
            del terms[position]
    return _recombined(terms)


def _recombined(
    terms: list[tuple[SSAValue, SymExpr]],
) -> list[tuple[SSAValue, SymExpr]]:
    """``terms`` with each complete row-major delinearization of one value
    summed back into that value: ``(l floordiv D) * D + (l rem D)`` is
    ``l``, since ``(x rem m) + (x floordiv m rem n) * m == x rem (m * n)``
    for positive ``m`` and ``n`` (dims are at least 1 when lanes touch
    memory). Without this, a contiguous access reads through ``floordiv``
    and ``rem`` and Triton cannot see that its lanes are consecutive, so
    it cannot vectorise the loads."""
    result = list(terms)
    position = len(result) - 1
    while position > 0:
        inner = tile.Digit.of(result[position][0])
        stride = result[position][1]
        digit, start = inner, position
        while digit.modulus is not None and start > 0:
            outer_index, outer_stride = result[start - 1]
            outer = tile.Digit.of(outer_index)
            if not (
                outer.base is digit.base
                and outer.divisor == digit.divisor * digit.modulus
                and outer_stride == stride * digit.modulus
            ):
                break
            modulus = None if outer.modulus is None else digit.modulus * outer.modulus
            digit = tile.Digit(digit.base, digit.divisor, modulus, digit.quotient)
            start -= 1
        if start < position and digit.modulus is None:
            result[start : position + 1] = [(inner.quotient, stride)]
        position = start - 1
    return result


def _visible(value: SSAValue, access: Operation) -> bool:
    """Whether ``value``, computed before an earlier access, dominates
    ``access``: its block is ``access``'s or encloses it (accesses are
    lowered in program order, so it comes first in that block)."""
    home = (
        value.owner.parent_block()
        if isinstance(value.owner, Operation)
        else value.owner
    )
    block = access.parent_block()
    while block is not None:
        if block is home:
            return True
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return False


def _erase(op: Operation) -> None:
    block = op.parent_block()
    assert block is not None
    block.erase_op(op)


def _index_type(indices: Sequence[SSAValue]) -> IntegerType:
    """The widest integer type among the indices; i64 for a rank-0 access."""
    types = [loop.element_of(i.type) for i in indices]
    widths = [t for t in types if isinstance(t, IntegerType)]
    if not widths:
        return i64
    return max(widths, key=lambda t: t.width.data)
