"""The collective dialect: communication between the ranks of a device mesh,
at every level.

A sharded program is one SPMD program that every rank runs on its own
shards (docs/distributed.md). The ranks form a mesh with named axes
(``#collective.mesh<data = 2, model = 2>``: rank ``r`` sits at the
row-major coordinates of ``r`` in that shape), and each collective op
communicates within the groups of ranks that differ only along the axes
it names (``axes``): over ``["model"]`` of a 2x2 mesh, ranks {0, 1} and
{2, 3}. A rank's index in its group is its coordinates along those axes,
linearized in the order ``axes`` lists them (``collective.axis_index``).

The ops are functional, as jax.lax's collectives are:

- ``all_reduce`` (``sum``, ``max``, ``min``, ``mean``): every member gets the
  reduction of all members' values;
- ``all_gather``: the members' values concatenated along ``dim`` (stacked
  along a new ``dim`` when not ``tiled``);
- ``reduce_scatter``: the reduction, of which member ``i`` keeps block
  ``i`` along ``dim`` (the whole ``dim``, which must have as many entries
  as members, when not ``tiled``);
- ``all_to_all``: each member splits its value into as many blocks along
  ``split_dim`` as there are members, sends block ``j`` to member ``j`` and
  concatenates what it receives along ``concat_dim``;
- ``broadcast``: member ``root``'s value, everywhere;
- ``ppermute``: member ``dst`` gets member ``src``'s value for each pair of
  ``pairs``; a member no pair reaches gets zeros;
- ``axis_index``: the rank's index in its group, an ``i32`` scalar.

Each op has two forms, as ``debug`` and ``sym`` ops live at every level:
on tensors (graph, fusion, loop) it has a result; on buffers (memory,
triton) it writes the buffer given ``into`` and has none. Sizes stay
symbolic: a gather multiplies its dim by the group size, a scatter
divides it exactly (the verifier checks ``out * members == in``).

The dialect is level-neutral: it reads shapes through the ``dims`` and
``element_type`` that graph tensors and memory buffers both have, and
imports neither.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar, Protocol, cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    param_def,
    prop_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import (
    EffectInstance,
    HasCanonicalizationPatternsTrait,
    MemoryEffect,
    MemoryEffectKind,
)
from xdsl.utils.exceptions import VerifyException

from irc.dialects.sym import facts_in_scope
from irc.shapes import Facts, ShapeError, SymExpr, as_expr

#: The reductions of ``all_reduce`` and ``reduce_scatter``.
REDUCTIONS = ("sum", "max", "min", "mean")


# --------------------------------------------------------------------------
# The mesh
# --------------------------------------------------------------------------


@irdl_attr_definition
class MeshAttr(ParametrizedAttribute):
    """``#collective.mesh<data = 2, model = 2>``: the named axes of a
    device mesh and their sizes; rank ``r`` is at the row-major coordinates
    of ``r`` in this shape."""

    name = "collective.mesh"

    axis_names: ArrayAttr[StringAttr] = param_def()
    axis_sizes: ArrayAttr[IntAttr] = param_def()

    def __init__(self, names: Sequence[str], sizes: Sequence[int]):
        super().__init__(
            ArrayAttr([StringAttr(n) for n in names]),
            ArrayAttr([IntAttr(s) for s in sizes]),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        """``<data = 2, model = 2>``."""

        def axis() -> tuple[str, int]:
            name = parser.parse_identifier()
            parser.parse_punctuation("=")
            return name, parser.parse_integer(allow_boolean=False, allow_negative=False)

        axes = parser.parse_comma_separated_list(parser.Delimiter.ANGLE, axis)
        return (
            ArrayAttr([StringAttr(n) for n, _ in axes]),
            ArrayAttr([IntAttr(s) for _, s in axes]),
        )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            "<" + ", ".join(f"{n} = {s}" for n, s in zip(self.names, self.shape)) + ">"
        )

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n.data for n in self.axis_names.data)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(s.data for s in self.axis_sizes.data)

    @property
    def size(self) -> int:
        """The number of ranks."""
        return math.prod(self.shape)

    def verify(self) -> None:
        names, shape = self.names, self.shape
        if len(names) != len(shape) or not names:
            raise VerifyException(
                f"a mesh names each of its axes once and gives it a size: {names} "
                f"against {shape}"
            )
        if len(set(names)) != len(names):
            raise VerifyException(f"a mesh's axis names must differ: {names}")
        if any(size < 1 for size in shape):
            raise VerifyException(f"a mesh's axis sizes must be positive: {shape}")

    def coordinates(self, rank: int) -> tuple[int, ...]:
        """Rank ``rank``'s coordinates on the mesh (row-major)."""
        coords = []
        for size in reversed(self.shape):
            rank, coordinate = divmod(rank, size)
            coords.append(coordinate)
        return tuple(reversed(coords))

    def rank_at(self, coordinates: Sequence[int]) -> int:
        rank = 0
        for coordinate, size in zip(coordinates, self.shape, strict=True):
            rank = rank * size + coordinate
        return rank

    def group_size(self, axes: Sequence[str]) -> int:
        return math.prod(self.shape[self.names.index(a)] for a in axes)

    def group(self, rank: int, axes: Sequence[str]) -> list[int]:
        """The ranks of ``rank``'s group over ``axes``, in group-index order
        (the axes' coordinates linearized in the order ``axes`` lists them)."""
        positions = [self.names.index(a) for a in axes]
        base = list(self.coordinates(rank))
        members = []
        for index in range(self.group_size(axes)):
            coords = list(base)
            for position in reversed(positions):
                index, coords[position] = divmod(index, self.shape[position])
            members.append(self.rank_at(coords))
        return members

    def groups(self, axes: Sequence[str]) -> list[list[int]]:
        """Every group over ``axes``, ordered by their first rank: the same
        list on every rank, so all create their process groups alike."""
        seen: dict[int, list[int]] = {}
        for rank in range(self.size):
            members = self.group(rank, axes)
            seen.setdefault(min(members), members)
        return [seen[first] for first in sorted(seen)]


@irdl_attr_definition
class ShardingAttr(ParametrizedAttribute):
    """``#collective.sharding<[["data"], []], ["model"]>``: how a value of a
    program over a mesh is laid out on the ranks: per dim, the mesh axes
    that split it (in order), and the axes along which each rank holds a
    partial sum of the value (the rest of it is on the other members).
    Function arguments and results carry one (the ``irc.PartitionSpec``
    the user gave); ``propagate-sharding`` gives one to every value."""

    name = "collective.sharding"

    dims: ArrayAttr[ArrayAttr[StringAttr]] = param_def()
    partial: ArrayAttr[StringAttr] = param_def()

    def __init__(
        self, dims: Sequence[Sequence[str]], partial: Sequence[str] = ()
    ) -> None:
        super().__init__(
            ArrayAttr([ArrayAttr([StringAttr(a) for a in d]) for d in dims]),
            ArrayAttr([StringAttr(a) for a in partial]),
        )

    @property
    def split(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(a.data for a in d.data) for d in self.dims.data)

    @property
    def partial_axes(self) -> tuple[str, ...]:
        return tuple(a.data for a in self.partial.data)


#: The attribute holding a function's mesh, and each argument's, result's
#: and value's sharding. ``collective.mesh`` marks a program written for
#: whole arrays, to be partitioned; ``collective.spmd`` one rank's program
#: (what ``partition`` makes), whose ranks run it even where no collective
#: is left in it.
MESH_ATTRIBUTE = "collective.mesh"
SPMD_ATTRIBUTE = "collective.spmd"
SHARDING_ATTRIBUTE = "collective.sharding"
SHARDINGS_ATTRIBUTE = "collective.shardings"


# --------------------------------------------------------------------------
# The ops
# --------------------------------------------------------------------------


class CommunicationEffect(MemoryEffect):
    """Every rank must run the same collectives in the same order, so no
    pass may erase, merge, duplicate or reorder one (a value nobody reads is
    still communicated: the other ranks wait for it)."""

    @classmethod
    def get_effects(cls, op: Operation) -> set[EffectInstance]:
        return {EffectInstance(MemoryEffectKind.WRITE)}


class _Shaped(Protocol):
    """A graph tensor or a memory buffer type: what the dialect reads."""

    @property
    def dims(self) -> tuple[SymExpr, ...]: ...

    element_type: Attribute


def _shaped(value: SSAValue | None, op: Operation, role: str) -> _Shaped:
    type_ = None if value is None else value.type
    if not hasattr(type_, "dims") or not hasattr(type_, "element_type"):
        raise VerifyException(
            f"{op.name}: its {role} must be a tensor or a buffer, not {type_}"
        )
    return cast(_Shaped, type_)


class CollectiveCanonicalization(HasCanonicalizationPatternsTrait):
    """Joins collective ops to xDSL's ``canonicalize`` pass with the patterns
    of ``irc.passes.collective_canonicalization`` (looked up per op class,
    when canonicalize first asks)."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from irc.passes.collective_canonicalization import patterns_for

        return patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()


class CollectiveOp(IRDLOperation):
    """What every collective shares: the mesh, the axes its groups span, and
    its two forms (a tensor result, or the buffer ``output`` it writes)."""

    mesh = prop_def(MeshAttr)
    axes = prop_def(ArrayAttr[StringAttr])

    traits = traits_def(CommunicationEffect(), CollectiveCanonicalization())
    irdl_options = (ParsePropInAttrDict(),)

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(a.data for a in self.axes.data)

    @property
    def group_size(self) -> int:
        return self.mesh.group_size(self.axis_names)

    @property
    def on_buffers(self) -> bool:
        """Whether this is the memory levels' form (writes ``output``)."""
        return self._output() is not None

    def _output(self) -> SSAValue | None:
        return cast(SSAValue | None, self.output)

    def _result(self) -> SSAValue | None:
        return cast(SSAValue | None, self.result)

    @property
    def produced(self) -> SSAValue:
        """What the op makes: its result, or the buffer it writes."""
        value = self._output() or self._result()
        assert value is not None, "verified: exactly one of the two"
        return value

    def parameters(self) -> dict[str, object]:
        """The op's own parameters (besides mesh and axes), by name, as the
        runtimes read them."""
        return {}

    def verify_(self) -> None:
        names = self.axis_names
        if not names:
            raise VerifyException(f"{self.name} must name at least one mesh axis")
        unknown = [a for a in names if a not in self.mesh.names]
        if unknown or len(set(names)) != len(names):
            raise VerifyException(
                f"{self.name} over {list(names)}: each axis must be one of the "
                f"mesh's {list(self.mesh.names)}, once"
            )
        if (self._output() is None) == (self._result() is None):
            raise VerifyException(
                f"{self.name} either has a result (on tensors) or writes the "
                "buffer given 'into' (on buffers), not both or neither"
            )
        self.verify_shapes()

    def verify_shapes(self) -> None:
        raise NotImplementedError

    @property
    def input_value(self) -> SSAValue | None:
        return None


class _UnaryCollective(CollectiveOp):
    """A collective of one value."""

    input = operand_def()
    output = opt_operand_def()
    result = opt_result_def()

    assembly_format: ClassVar[str] = (
        "$input (`into` $output^)? attr-dict `:` type($input) "
        "(`into` type($output)^)? (`->` type($result)^)?"
    )

    def __init__(
        self,
        input: SSAValue,
        mesh: MeshAttr,
        axes: Sequence[str],
        properties: dict[str, Attribute] | None = None,
        output: SSAValue | None = None,
        facts: Facts | None = None,
    ):
        props: dict[str, Attribute] = {
            "mesh": mesh,
            "axes": ArrayAttr([StringAttr(a) for a in axes]),
            **(properties or {}),
        }
        result_types: list[Attribute] = []
        if output is None:
            shaped = cast(_Shaped, input.type)
            dims = self.result_dims(shaped.dims, mesh.group_size(axes), props, facts)
            result_types = [type(input.type)(dims, shaped.element_type)]  # pyright: ignore[reportCallIssue]
        super().__init__(
            operands=[input, [] if output is None else [output]],
            result_types=[result_types],
            properties=props,
        )

    @property
    def input_value(self) -> SSAValue:
        return self.input

    @classmethod
    def result_dims(
        cls,
        dims: tuple[SymExpr, ...],
        members: int,
        properties: dict[str, Attribute],
        facts: Facts | None = None,
    ) -> tuple[SymExpr, ...]:
        """The shape of the result, from the input's (``facts`` prove the
        divisions of a scatter): the same by default."""
        return dims

    def expected_dims(self) -> tuple[SymExpr, ...]:
        dims = _shaped(self.input, self, "input").dims
        properties = dict(self.properties)
        try:
            return self.result_dims(dims, self.group_size, properties)
        except VerifyException:
            # Only a scatter's division can need the guards' facts; reading
            # them scans the enclosing blocks, so only then.
            facts = facts_in_scope(self)
            return self.result_dims(dims, self.group_size, properties, facts)

    def verify_shapes(self) -> None:
        source = _shaped(self.input, self, "input")
        made = _shaped(self.produced, self, "result")
        if source.element_type != made.element_type:
            raise VerifyException(
                f"{self.name} keeps the element type: {source.element_type} "
                f"in, {made.element_type} out"
            )
        expected = self.expected_dims()
        if tuple(made.dims) != tuple(expected):
            raise VerifyException(
                f"{self.name} over {self.group_size} members makes "
                f"[{', '.join(map(str, expected))}] from "
                f"[{', '.join(map(str, source.dims))}], not "
                f"[{', '.join(map(str, made.dims))}]"
            )


def _int(properties: dict[str, Attribute], name: str) -> int:
    attribute = properties[name]
    assert isinstance(attribute, IntegerAttr)
    return attribute.value.data


def _dim_in_range(dims: tuple[SymExpr, ...], dim: int, rank_extra: int = 0) -> None:
    if not 0 <= dim < len(dims) + rank_extra:
        raise VerifyException(f"dim {dim} is out of range for a rank-{len(dims)} value")


def _divided(dim: SymExpr, members: int, what: str, facts: Facts | None) -> SymExpr:
    """``dim / members``, exact by polynomial division or by ``facts``, or a
    ``VerifyException`` saying why not."""
    try:
        return dim.exact_div(members, facts)
    except ShapeError as err:
        raise VerifyException(
            f"{what}: a dim of size {dim} does not split into {members} equal "
            f"blocks ({err})"
        ) from err


def _reduction_prop(reduction: str) -> dict[str, Attribute]:
    if reduction not in REDUCTIONS:
        raise VerifyException(
            f"unknown reduction {reduction!r}; expected one of {', '.join(REDUCTIONS)}"
        )
    return {"reduction": StringAttr(reduction)}


def _verify_reduction(op: CollectiveOp, reduction: StringAttr) -> None:
    if reduction.data not in REDUCTIONS:
        raise VerifyException(
            f"{op.name}: unknown reduction {reduction.data!r}; expected one of "
            f"{', '.join(REDUCTIONS)}"
        )


@irdl_op_definition
class AllReduceOp(_UnaryCollective):
    """``%y = collective.all_reduce %x {mesh = .., axes = ["data"],
    reduction = "sum"} : T -> T``: every member gets the reduction of all
    members' values (``psum``, ``pmax``, ``pmin``, ``pmean``)."""

    name = "collective.all_reduce"

    reduction = prop_def(StringAttr)

    @staticmethod
    def make(
        x: SSAValue, mesh: MeshAttr, axes: Sequence[str], reduction: str = "sum"
    ) -> AllReduceOp:
        return AllReduceOp(x, mesh, axes, _reduction_prop(reduction))

    def parameters(self) -> dict[str, object]:
        return {"reduction": self.reduction.data}

    def verify_shapes(self) -> None:
        _verify_reduction(self, self.reduction)
        super().verify_shapes()


@irdl_op_definition
class AllGatherOp(_UnaryCollective):
    """``%y = collective.all_gather %x {.., dim = 0 : i64, tiled} : T -> T'``:
    the members' values concatenated along ``dim`` (tiled) or stacked along
    a new axis ``dim``."""

    name = "collective.all_gather"

    dim = prop_def(IntegerAttr)
    tiled = opt_prop_def(UnitAttr)

    @staticmethod
    def make(
        x: SSAValue, mesh: MeshAttr, axes: Sequence[str], dim: int, tiled: bool
    ) -> AllGatherOp:
        props: dict[str, Attribute] = {"dim": IntegerAttr(dim, i64)}
        if tiled:
            props["tiled"] = UnitAttr()
        return AllGatherOp(x, mesh, axes, props)

    @classmethod
    def result_dims(cls, dims, members, properties, facts=None):  # type: ignore[override]
        dim = _int(properties, "dim")
        if "tiled" in properties:
            _dim_in_range(dims, dim)
            return (*dims[:dim], dims[dim] * members, *dims[dim + 1 :])
        _dim_in_range(dims, dim, 1)
        return (*dims[:dim], as_expr(members), *dims[dim:])

    def parameters(self) -> dict[str, object]:
        return {"dim": self.dim.value.data, "tiled": self.tiled is not None}


@irdl_op_definition
class ReduceScatterOp(_UnaryCollective):
    """``%y = collective.reduce_scatter %x {.., reduction = "sum", dim = 0 :
    i64, tiled} : T -> T'``: the reduction of the members' values, of which
    member ``i`` keeps block ``i`` along ``dim`` (``psum_scatter``)."""

    name = "collective.reduce_scatter"

    reduction = prop_def(StringAttr)
    dim = prop_def(IntegerAttr)
    tiled = opt_prop_def(UnitAttr)

    @staticmethod
    def make(
        x: SSAValue,
        mesh: MeshAttr,
        axes: Sequence[str],
        dim: int,
        tiled: bool,
        reduction: str = "sum",
    ) -> ReduceScatterOp:
        props = {**_reduction_prop(reduction), "dim": IntegerAttr(dim, i64)}
        if tiled:
            props["tiled"] = UnitAttr()
        return ReduceScatterOp(x, mesh, axes, props)

    @classmethod
    def result_dims(cls, dims, members, properties, facts=None):  # type: ignore[override]
        dim = _int(properties, "dim")
        _dim_in_range(dims, dim)
        if "tiled" in properties:
            block = _divided(dims[dim], members, "collective.reduce_scatter", facts)
            return (*dims[:dim], block, *dims[dim + 1 :])
        if dims[dim] != as_expr(members):
            raise VerifyException(
                f"collective.reduce_scatter (not tiled) scatters a dim of size "
                f"{members}, one entry per member, not {dims[dim]}"
            )
        return (*dims[:dim], *dims[dim + 1 :])

    def parameters(self) -> dict[str, object]:
        return {
            "reduction": self.reduction.data,
            "dim": self.dim.value.data,
            "tiled": self.tiled is not None,
        }

    def verify_shapes(self) -> None:
        _verify_reduction(self, self.reduction)
        super().verify_shapes()


@irdl_op_definition
class AllToAllOp(_UnaryCollective):
    """``%y = collective.all_to_all %x {.., split_dim = 0 : i64, concat_dim =
    1 : i64} : T -> T'``: block ``j`` of ``split_dim`` goes to member
    ``j``; the blocks received are concatenated along ``concat_dim``."""

    name = "collective.all_to_all"

    split_dim = prop_def(IntegerAttr)
    concat_dim = prop_def(IntegerAttr)

    @staticmethod
    def make(
        x: SSAValue,
        mesh: MeshAttr,
        axes: Sequence[str],
        split_dim: int,
        concat_dim: int,
    ) -> AllToAllOp:
        props: dict[str, Attribute] = {
            "split_dim": IntegerAttr(split_dim, i64),
            "concat_dim": IntegerAttr(concat_dim, i64),
        }
        return AllToAllOp(x, mesh, axes, props)

    @classmethod
    def result_dims(cls, dims, members, properties, facts=None):  # type: ignore[override]
        split, concat = _int(properties, "split_dim"), _int(properties, "concat_dim")
        _dim_in_range(dims, split)
        _dim_in_range(dims, concat)
        out = list(dims)
        out[split] = _divided(dims[split], members, "collective.all_to_all", facts)
        out[concat] = out[concat] * members
        return tuple(out)

    def parameters(self) -> dict[str, object]:
        return {
            "split_dim": self.split_dim.value.data,
            "concat_dim": self.concat_dim.value.data,
        }


@irdl_op_definition
class BroadcastOp(_UnaryCollective):
    """``%y = collective.broadcast %x {.., root = 0 : i64} : T -> T``: the
    value of the member of index ``root``, on every member."""

    name = "collective.broadcast"

    root = prop_def(IntegerAttr)

    @staticmethod
    def make(
        x: SSAValue, mesh: MeshAttr, axes: Sequence[str], root: int
    ) -> BroadcastOp:
        return BroadcastOp(x, mesh, axes, {"root": IntegerAttr(root, i64)})

    def parameters(self) -> dict[str, object]:
        return {"root": self.root.value.data}

    def verify_shapes(self) -> None:
        if not 0 <= self.root.value.data < self.group_size:
            raise VerifyException(
                f"collective.broadcast: root {self.root.value.data} is not a member "
                f"index of a group of {self.group_size}"
            )
        super().verify_shapes()


@irdl_op_definition
class PpermuteOp(_UnaryCollective):
    """``%y = collective.ppermute %x {.., pairs = array<i64: 0, 1, 1, 0>} :
    T -> T``: for each pair ``(src, dst)`` (flattened), member ``dst`` gets
    member ``src``'s value; members no pair reaches get zeros."""

    name = "collective.ppermute"

    pairs = prop_def(DenseArrayBase)

    @staticmethod
    def make(
        x: SSAValue,
        mesh: MeshAttr,
        axes: Sequence[str],
        pairs: Sequence[tuple[int, int]],
    ) -> PpermuteOp:
        flat = [index for pair in pairs for index in pair]
        return PpermuteOp(x, mesh, axes, {"pairs": DenseArrayBase.from_list(i64, flat)})

    @property
    def permutation(self) -> tuple[tuple[int, int], ...]:
        flat = cast(tuple[int, ...], self.pairs.get_values())
        return tuple(zip(flat[::2], flat[1::2], strict=True))

    def parameters(self) -> dict[str, object]:
        return {"pairs": self.permutation}

    def verify_shapes(self) -> None:
        flat = self.pairs.get_values()
        if len(flat) % 2:
            raise VerifyException("collective.ppermute: pairs come two by two")
        sources = [s for s, _ in self.permutation]
        targets = [t for _, t in self.permutation]
        members = self.group_size
        if any(not 0 <= int(i) < members for i in flat):
            raise VerifyException(
                f"collective.ppermute: a member index is outside a group of {members}"
            )
        if len(set(sources)) != len(sources) or len(set(targets)) != len(targets):
            raise VerifyException(
                "collective.ppermute: each member sends at most once and receives "
                "at most once (a permutation)"
            )
        super().verify_shapes()


@irdl_op_definition
class AxisIndexOp(CollectiveOp):
    """``%i = collective.axis_index {mesh = .., axes = ["data"]} :
    T``: this rank's index in its group over ``axes`` (a rank-0 ``i32``)."""

    name = "collective.axis_index"

    output = opt_operand_def()
    result = opt_result_def()

    assembly_format: ClassVar[str] = (
        "attr-dict (`into` $output^ `:` type($output))? (`:` type($result)^)?"
    )

    def __init__(
        self,
        mesh: MeshAttr,
        axes: Sequence[str],
        result_type: Attribute | None = None,
        output: SSAValue | None = None,
    ):
        super().__init__(
            operands=[[] if output is None else [output]],
            result_types=[[] if result_type is None else [result_type]],
            properties={
                "mesh": mesh,
                "axes": ArrayAttr([StringAttr(a) for a in axes]),
            },
        )

    def verify_shapes(self) -> None:
        made = _shaped(self.produced, self, "result")
        element = made.element_type
        if tuple(made.dims) or not (
            isinstance(element, IntegerType) and element == i32
        ):
            raise VerifyException(
                f"collective.axis_index makes a rank-0 i32 value, not {made}"
            )


#: Every collective op.
COLLECTIVE_OPS = (
    AllReduceOp,
    AllGatherOp,
    ReduceScatterOp,
    AllToAllOp,
    BroadcastOp,
    PpermuteOp,
    AxisIndexOp,
)

#: The collectives of one value (all but ``axis_index``).
UNARY_COLLECTIVE_OPS = COLLECTIVE_OPS[:-1]


def mesh_of(op: Operation) -> MeshAttr | None:
    """The mesh of the first collective op in ``op`` (a module, a function),
    else the mesh an op of it declares its ranks' program runs on
    (``collective.spmd``), or None."""
    declared = None
    for inner in op.walk():
        if isinstance(inner, CollectiveOp):
            return inner.mesh
        found = inner.attributes.get(SPMD_ATTRIBUTE)
        if declared is None and isinstance(found, MeshAttr):
            declared = found
    return declared


def on_buffers(
    op: CollectiveOp, mapping: dict[SSAValue, SSAValue], output: SSAValue
) -> CollectiveOp:
    """The buffer form of tensor-form ``op``: reading the buffers ``mapping``
    gives its operands, writing ``output``."""
    props = dict(op.properties)
    if isinstance(op, AxisIndexOp):
        new: CollectiveOp = AxisIndexOp(op.mesh, op.axis_names, output=output)
    else:
        assert isinstance(op, _UnaryCollective)
        new = type(op)(mapping[op.input], op.mesh, op.axis_names, props, output)
    new.properties.update(props)
    return new


Collective = Dialect("collective", list(COLLECTIVE_OPS), [MeshAttr, ShardingAttr])
