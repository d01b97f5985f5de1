"""``partition``: rewrite a function over a mesh into the program each rank
runs, inserting the collectives its shardings imply.

The function is written for whole (global) arrays, with a sharding on each
argument and result (``irc.auto_shard`` puts them there from
``PartitionSpec``s). Walking it forward with the rules of
``propagate-sharding`` (``decide``), each op is rebuilt on its operands'
blocks (its types divided by the splits), after converting each operand
from the sharding it has to the one the op needs:

- a partial sum that the op cannot keep partial is summed:
  ``collective.all_reduce`` over its axes;
- a split dim that the op needs whole is gathered: ``collective.all_gather``
  (tiled);
- a whole dim that the op needs split keeps only this rank's block: the
  broadcast, splat, iota (along another axis) or literal alike in every
  block that made it is made again at the block's size, or else the rank's
  block is taken (``graph.take`` at ``collective.axis_index``).

Each result is converted to its requested sharding (whole by default) right
after the op that makes it, not at the return: its collective starts as
soon as the value exists, and the launcher waits for it only at the end, so
a data-parallel step's gradient all-reduces overlap the rest of its
backward pass. ``bucket-bytes`` then merges the all-reduces of such results
that are smaller than it into buckets: one all-reduce per bucket, of the
values flattened and concatenated, as PyTorch's DDP buckets gradients.
Every decision is a function of the IR and the options alone, so every rank
compiles the same program.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import graph as g
from irc.dialects.collective import (
    MESH_ATTRIBUTE,
    SHARDINGS_ATTRIBUTE,
    SPMD_ATTRIBUTE,
    AllGatherOp,
    AllReduceOp,
    AxisIndexOp,
    MeshAttr,
)
from irc.dialects.sym import product
from irc.dtypes import dtype
from irc.passes.sharding_propagation import (
    Axes,
    Sharding,
    argument_shardings,
    check_mesh_axes,
    decide,
    function_mesh,
    result_shardings,
)
from irc.shapes import ShapeError, SymExpr


def _local_dims(
    dims: Sequence[SymExpr], sharding: Sharding, mesh: MeshAttr, where: str
) -> list[SymExpr]:
    """The block's dims of a value of ``dims`` laid out as ``sharding``."""
    local = []
    for dim, axes in zip(dims, sharding.dims, strict=True):
        if not axes:
            local.append(dim)
            continue
        parts = mesh.group_size(axes)
        try:
            local.append(dim.exact_div(parts))
        except ShapeError as err:
            raise PassFailedException(
                f"partition: {where}: a dim of size {dim} does not split into "
                f"{parts} blocks over {list(axes)} ({err})"
            ) from err
    return local


def _local_type(
    value_type: object, sharding: Sharding, mesh: MeshAttr, where: str
) -> object:
    if not isinstance(value_type, g.TensorType):
        return value_type
    return value_type.with_shape(_local_dims(value_type.dims, sharding, mesh, where))


def _same_blocks(array: np.ndarray, dim: int, parts: int) -> np.ndarray | None:
    """The first block of ``array`` along ``dim`` if every block is equal
    to it (a constant broadcast along a split dim), else None."""
    blocks = np.split(array, parts, axis=dim)
    if all(np.array_equal(b, blocks[0]) for b in blocks[1:]):
        return blocks[0]
    return None


@dataclass
class _Value:
    """A value of the rank's program and how it is laid out."""

    value: SSAValue
    sharding: Sharding


class FunctionPartitioner:
    """Rebuilds one function over a mesh as the program of one rank."""

    def __init__(self, function: func.FuncOp, bucket_bytes: int) -> None:
        self.function = function
        self.mesh = function_mesh(function)
        check_mesh_axes(function, self.mesh)
        self.bucket_bytes = bucket_bytes
        self.name = f"@{function.sym_name.data}"
        self.block = Block()
        self.values: dict[SSAValue, _Value] = {}
        #: Each value converted to a layout, and its converted value.
        self.conversions: dict[tuple[SSAValue, Sharding], SSAValue] = {}
        #: Where the conversion being placed puts its next op.
        self.anchor: Operation | None = None

    def run(self) -> None:
        old = self.function.body.block
        arguments = argument_shardings(self.function)
        for arg, sharding in zip(old.args, arguments, strict=True):
            local = _local_type(arg.type, sharding, self.mesh, f"{self.name} argument")
            new = self.block.insert_arg(local, len(self.block.args))
            new.name_hint = arg.name_hint
            self.values[arg] = _Value(new, sharding)
        wanted = result_shardings(self.function)
        returned = self._returned(old, wanted)
        finished: dict[SSAValue, SSAValue] = {}
        for arg in old.args:  # an argument returned as it is
            if arg in returned:
                finished[arg] = self._converted(arg, returned[arg])
        for op in list(old.ops):
            if isinstance(op, func.ReturnOp):
                break
            self._rebuild(op)
            for result in op.results:
                if result in returned:
                    finished[result] = self._converted(result, returned[result])
        terminator = old.last_op
        assert isinstance(terminator, func.ReturnOp)
        outputs = [finished[v] for v in terminator.arguments]
        self.block.add_op(func.ReturnOp(*outputs))
        self._bucket_all_reduces()
        self._install()

    # ----- ops -------------------------------------------------------------

    def _returned(
        self, block: Block, wanted: list[Sharding]
    ) -> dict[SSAValue, Sharding]:
        terminator = block.last_op
        if not isinstance(terminator, func.ReturnOp):
            raise PassFailedException(
                f"partition: {self.name} does not end in a return"
            )
        returned: dict[SSAValue, Sharding] = {}
        for value, sharding in zip(terminator.arguments, wanted, strict=True):
            if value in returned and returned[value] != sharding:
                raise PassFailedException(
                    f"partition: {self.name} returns one value with two shardings"
                )
            returned[value] = sharding
        return returned

    def _rebuild(self, op: Operation) -> None:
        if op.name.startswith("collective."):
            raise PassFailedException(
                f"partition: {self.name} already holds {op.name}: partition a "
                "program written for whole arrays (irc.shard_map's are per rank)"
            )
        actual = [self._known(v).sharding for v in op.operands]
        decision = decide(op, actual, self.mesh)
        operands = [
            self._converted(v, s)
            for v, s in zip(op.operands, decision.operands, strict=True)
        ]
        where = f"{op.name} in {self.name}"
        result_types = [
            _local_type(r.type, s, self.mesh, where)
            for r, s in zip(op.results, decision.results, strict=True)
        ]
        attributes = {
            k: v for k, v in op.attributes.items() if k != SHARDINGS_ATTRIBUTE
        }
        new = type(op).create(
            operands=operands,
            result_types=result_types,
            properties=dict(op.properties),
            attributes=attributes,
            regions=[region.clone() for region in op.regions],
        )
        new.location = op.location
        self.block.add_op(new)
        for old, made, sharding in zip(
            op.results, new.results, decision.results, strict=True
        ):
            made.name_hint = old.name_hint
            self.values[old] = _Value(made, sharding)

    def _known(self, value: SSAValue) -> _Value:
        found = self.values.get(value)
        if found is None:
            raise PassFailedException(
                f"partition: {self.name} uses a value defined outside its body"
            )
        return found

    # ----- conversions ----------------------------------------------------

    def _converted(self, value: SSAValue, wanted: Sharding) -> SSAValue:
        """``value``'s block laid out as ``wanted``, with the collectives
        that takes, placed right after ``value`` is made (so they start as
        early as they can) and made once per layout."""
        known = self._known(value)
        key = (known.value, wanted)
        if key in self.conversions:
            return self.conversions[key]
        current, sharding = known.value, known.sharding
        self.anchor = current.owner if isinstance(current.owner, Operation) else None
        extra = sharding.partial - wanted.partial
        if extra:
            current = self._emit(
                AllReduceOp.make(current, self.mesh, self._ordered(extra), "sum")
            )
            sharding = Sharding(sharding.dims, wanted.partial & sharding.partial)
        for dim, (have, want) in enumerate(
            zip(sharding.dims, wanted.dims, strict=True)
        ):
            if have == want:
                continue
            if have:
                current = self._emit(
                    AllGatherOp.make(current, self.mesh, have, dim, tiled=True)
                )
            if want:
                current = self._block_of(current, dim, want)
            sharding = sharding.with_dim(dim, want)
        self.anchor = None
        self.conversions[key] = current
        return current

    def _ordered(self, axes: frozenset[str] | Axes) -> Axes:
        return tuple(a for a in self.mesh.names if a in axes)

    def _block_of(self, value: SSAValue, dim: int, axes: Axes) -> SSAValue:
        """This rank's block of ``dim`` of a whole ``value``."""
        type_ = g.tensor_type(value)
        parts = self.mesh.group_size(axes)
        block = type_.dims[dim].exact_div(parts)
        local = list(type_.dims)
        local[dim] = block
        owner = value.owner
        if isinstance(owner, g.ConstantOp) and owner.is_splat:
            return self._emit(g.ConstantOp(owner.value, type_.with_shape(local)))
        if isinstance(owner, g.ConstantOp):
            same = _same_blocks(owner.literal(), dim, parts)
            if same is not None:  # a literal alike in every block (a mask)
                return self._emit(g.ConstantOp.dense(same))
        if isinstance(owner, g.IotaOp) and owner.axis.value.data != dim:
            return self._emit(g.IotaOp(owner.axis.value.data, type_.with_shape(local)))
        if isinstance(owner, g.BroadcastOp) and self._expanded(owner, dim):
            return self._emit(g.BroadcastOp(owner.input, local))
        split = [*type_.dims[:dim], SymExpr.const(parts), block, *type_.dims[dim + 1 :]]
        reshaped = self._emit(g.ReshapeOp(value, split))
        index = self._emit(AxisIndexOp(self.mesh, axes, g.TensorType([], i32)))
        return self._emit(g.TakeOp(reshaped, index, dim))

    @staticmethod
    def _expanded(op: g.BroadcastOp, dim: int) -> bool:
        """Whether ``op`` makes result dim ``dim`` (not its input)."""
        source, result = g.tensor_type(op.input), g.tensor_type(op.result)
        index = dim - (result.rank - source.rank)
        return index < 0 or source.dims[index] != result.dims[dim]

    def _emit(self, op: Operation) -> SSAValue:
        """Add ``op``: after ``anchor`` while a conversion of a computed
        value is placed, else at the end of the block."""
        if self.anchor is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_after(op, self.anchor)
            self.anchor = op
        return op.results[0]

    # ----- buckets ----------------------------------------------------------

    def _bucket_all_reduces(self) -> None:
        """Merge sum all-reduces of at most ``bucket_bytes`` each into
        buckets of at most that many bytes, in program order: one
        all-reduce per bucket over its values flattened and concatenated,
        where its last member was. A member joins a bucket only if nothing
        reads it before that point."""
        if self.bucket_bytes <= 0:
            return
        ops = list(self.block.ops)
        position = {op: index for index, op in enumerate(ops)}
        buckets: list[list[AllReduceOp]] = [[]]
        size = 0
        for op in ops:
            nbytes = self._mergeable_bytes(op)
            if nbytes is None:
                continue
            assert isinstance(op, AllReduceOp)
            bucket = buckets[-1]
            fits = (
                bucket
                and size + nbytes <= self.bucket_bytes
                and bucket[0].axis_names == op.axis_names
                and g.tensor_type(bucket[0].result).element_type
                == g.tensor_type(op.result).element_type
                and all(self._first_use(m, position) > position[op] for m in bucket)
            )
            if not fits:
                buckets.append([])
                size = 0
            buckets[-1].append(op)
            size += nbytes
        for bucket in buckets:
            if len(bucket) > 1:
                self._merge(bucket)

    def _mergeable_bytes(self, op: Operation) -> int | None:
        if not isinstance(op, AllReduceOp) or op.reduction.data != "sum":
            return None
        nbytes = self._bytes(op.results[0])
        if nbytes is None or nbytes > self.bucket_bytes:
            return None
        return nbytes

    def _first_use(self, op: Operation, position: dict[Operation, int]) -> int:
        uses = []
        for use in op.results[0].uses:
            user: Operation | None = use.operation
            while user is not None and user not in position:
                user = user.parent_op()
            if user is not None:
                uses.append(position[user])
        return min(uses, default=len(position))

    def _bytes(self, value: SSAValue) -> int | None:
        type_ = g.tensor_type(value)
        count = product(type_.dims).constant
        if count is None:
            return None
        return count * dtype(type_.element_type).numpy.itemsize

    def _merge(self, bucket: list[AllReduceOp]) -> None:
        """One all-reduce for ``bucket``, where its last member was; each
        member's part is cut out of it just before that member's first
        reader, so the launcher waits for the bucket only there."""
        last = bucket[-1]
        pieces: list[SSAValue] = []
        for op in bucket:
            flat = g.ReshapeOp(op.input, [product(g.tensor_type(op.input).dims)])
            self.block.insert_op_before(flat, last)
            pieces.append(flat.results[0])
        joined = g.ConcatOp(pieces, 0)
        self.block.insert_op_before(joined, last)
        reduced = AllReduceOp.make(joined.results[0], last.mesh, last.axis_names, "sum")
        self.block.insert_op_before(reduced, last)
        offset: SymExpr = SymExpr.const(0)
        for op, piece in zip(bucket, pieces, strict=True):
            size = g.tensor_type(piece).dims[0]
            reader = self._first_reader(op)
            sliced = g.SliceOp(reduced.results[0], [offset], [size], [1])
            shaped = g.ReshapeOp(sliced.results[0], g.tensor_type(op.results[0]).dims)
            self.block.insert_op_before(sliced, reader)
            self.block.insert_op_before(shaped, reader)
            op.results[0].replace_all_uses_with(shaped.results[0])
            offset = offset + size
        for op in bucket:
            op.detach()
            op.erase()

    def _first_reader(self, op: Operation) -> Operation:
        """The op of the block that first reads ``op``'s result (the return
        if nothing else does)."""
        readers = set()
        for use in op.results[0].uses:
            user: Operation | None = use.operation
            while user is not None and user.parent_block() is not self.block:
                user = user.parent_op()
            if user is not None:
                readers.add(user)
        for candidate in self.block.ops:
            if candidate in readers:
                return candidate
        raise AssertionError("a bucketed all-reduce's result is read")

    # ----- the function ----------------------------------------------------

    def _install(self) -> None:
        old = self.function.body.block
        for op in reversed(list(old.ops)):
            op.drop_all_references()
        self.function.body.detach_block(old)
        self.function.body.add_block(self.block)
        outputs = [v.type for v in self.block.last_op.operands]  # type: ignore[union-attr]
        self.function.function_type = func.FunctionType.from_lists(
            [a.type for a in self.block.args], outputs
        )
        # Now one rank's program: it runs on every rank of the mesh.
        del self.function.attributes[MESH_ATTRIBUTE]
        self.function.attributes[SPMD_ATTRIBUTE] = self.mesh
        self.function.arg_attrs = None
        self.function.res_attrs = None


@dataclass(frozen=True)
class PartitionPass(ModulePass):
    """``partition``: each function over a mesh (``collective.mesh``)
    becomes the program each rank runs on its blocks, with collectives
    (``bucket-bytes``: merge result all-reduces smaller than it, 0 for
    none)."""

    name = "partition"

    bucket_bytes: int = 1 << 20

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in list(op.walk()):
            if (
                isinstance(function, func.FuncOp)
                and MESH_ATTRIBUTE in function.attributes
            ):
                FunctionPartitioner(function, self.bucket_bytes).run()
