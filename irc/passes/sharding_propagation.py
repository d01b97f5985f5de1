"""``propagate-sharding``: give every value of a program over a mesh a
sharding, from those of its arguments.

A function over a mesh (``collective.mesh`` on the function) says how each
argument is laid out on the ranks (``collective.sharding`` on the argument:
per dim the mesh axes that split it). This pass walks the function once,
forward, and decides for each op the sharding its operands must have and
the sharding of its results (``decide``): the rules below, a deterministic
function of the IR, so every rank decides alike. It records each op's
result shardings (``collective.shardings``); ``partition`` then rewrites
the function into the program each rank runs, inserting the collectives
that the decisions imply.

The rules keep data where it is whenever the op allows it:

- elementwise ops, selects, comparisons and casts compute on blocks: the
  operands take the sharding of the most split one; a partial sum stays
  partial through the sum of two partial sums (``add``/``sub``), and a
  float cast, and is summed before the others (which would not shrink it:
  summing it at once starts its all-reduce earlier);
- a broadcast keeps the splits of the dims it keeps; a transpose permutes
  them; a slice keeps those of the dims it takes whole, a concatenation
  those of the dims it does not join; a reshape moves a split to the first dim of the group it merges
  into or splits off (when the group's size divides);
- a ``sum`` over a split dim leaves each rank a partial sum (no
  communication yet); ``max``/``min``/``prod`` and ``argmax`` over one
  gather it first;
- ``matmul`` keeps the splits of ``M``, ``N`` and the batch dims, and a
  contraction over ``K`` split alike on both sides is a partial sum
  (Megatron's row-parallel product), otherwise ``K`` is gathered;
- everything else (constants, iotas, indexing, control flow) computes on
  whole values: its operands are gathered and summed first.

A partial sum is summed (``all_reduce``) only where a rule needs the whole
value, and a split is gathered only where a rule needs the whole dim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import graph as g
from irc.dialects.collective import (
    MESH_ATTRIBUTE,
    SHARDING_ATTRIBUTE,
    SHARDINGS_ATTRIBUTE,
    MeshAttr,
    ShardingAttr,
)
from irc.dialects.elementwise import ReductionKind
from irc.dtypes import is_float_type

Axes = tuple[str, ...]

#: The elementwise ops through which partial sums stay partial: the sum
#: (or difference) of two partial sums over the same axes, which saves an
#: all-reduce. Through the other linear ops (scaling, negation) a partial
#: sum would keep its size, so it is summed at once instead: its
#: all-reduce starts earlier, overlapping what follows.
_ADDITIVE = frozenset({"graph.add", "graph.sub"})


@dataclass(frozen=True)
class Sharding:
    """Per dim the mesh axes splitting it, and the axes of a partial sum."""

    dims: tuple[Axes, ...]
    partial: frozenset[str] = field(default_factory=frozenset)

    @staticmethod
    def replicated(rank: int) -> Sharding:
        return Sharding(((),) * rank)

    @staticmethod
    def of_attr(attr: ShardingAttr) -> Sharding:
        return Sharding(attr.split, frozenset(attr.partial_axes))

    def attr(self, mesh: MeshAttr) -> ShardingAttr:
        order = {name: i for i, name in enumerate(mesh.names)}
        return ShardingAttr(self.dims, sorted(self.partial, key=order.__getitem__))

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def split_count(self) -> int:
        return sum(1 for d in self.dims if d)

    @property
    def used_axes(self) -> frozenset[str]:
        return frozenset(a for d in self.dims for a in d)

    def whole(self) -> Sharding:
        """No partial sum."""
        return Sharding(self.dims)

    def with_dim(self, dim: int, axes: Axes) -> Sharding:
        dims = list(self.dims)
        dims[dim] = axes
        return Sharding(tuple(dims), self.partial)

    def __str__(self) -> str:
        text = ", ".join("*" if not d else "/".join(d) for d in self.dims)
        partial = f" partial {sorted(self.partial)}" if self.partial else ""
        return f"[{text}]{partial}"


@dataclass(frozen=True)
class Decision:
    """What an op needs of its operands, and what its results are."""

    operands: tuple[Sharding, ...]
    results: tuple[Sharding, ...]


def _rank(value: SSAValue) -> int:
    type_ = value.type
    return type_.rank if isinstance(type_, g.TensorType) else 0


def _replicated_everywhere(op: Operation) -> Decision:
    return Decision(
        tuple(Sharding.replicated(_rank(v)) for v in op.operands),
        tuple(Sharding.replicated(_rank(v)) for v in op.results),
    )


def _most_split(shardings: Sequence[Sharding]) -> Sharding:
    """The dims' sharding of the most split operand (the first among
    equals), without partial sums."""
    best = max(shardings, key=lambda s: s.split_count)
    return best.whole()


def _elementwise(op: Operation, actual: Sequence[Sharding]) -> Decision:
    target = _most_split(actual)
    partial = _partial_through(op, actual)
    operands = tuple(
        Sharding(
            target.dims, partial if partial and s.partial == partial else frozenset()
        )
        for s in actual
    )
    result = Sharding(target.dims, partial)
    return Decision(operands, (result,) * len(op.results))


def _partial_through(op: Operation, actual: Sequence[Sharding]) -> frozenset[str]:
    """The partial axes that stay partial through elementwise ``op``."""
    partials = [s.partial for s in actual]
    if op.name in _ADDITIVE and partials[0] and partials[0] == partials[1]:
        return partials[0]
    return frozenset()


def _cast(op: g.CastOp, actual: Sequence[Sharding]) -> Decision:
    source = g.tensor_type(op.operands[0]).element_type
    target = g.tensor_type(op.result).element_type
    linear = is_float_type(source) and is_float_type(target)
    sharding = actual[0] if linear else actual[0].whole()
    return Decision((sharding,), (sharding,))


def _layout_op(
    operand_dims: Sequence[Axes], result_dims: Sequence[Axes], partial: frozenset[str]
) -> Decision:
    """A layout op's decision: a partial sum stays partial through it (it
    moves elements, it does not combine them)."""
    return Decision(
        (Sharding(tuple(operand_dims), partial),),
        (Sharding(tuple(result_dims), partial),),
    )


def _broadcast(op: g.BroadcastOp, actual: Sequence[Sharding]) -> Decision:
    source, result = g.tensor_type(op.input), g.tensor_type(op.result)
    offset = result.rank - source.rank
    operand_dims = []
    result_dims: list[Axes] = [()] * result.rank
    for index, dim in enumerate(source.dims):
        axes = actual[0].dims[index]
        kept = axes and dim == result.dims[offset + index]
        operand_dims.append(axes if kept else ())
        if kept:
            result_dims[offset + index] = axes
    return _layout_op(operand_dims, result_dims, actual[0].partial)


def _transpose(op: g.TransposeOp, actual: Sequence[Sharding]) -> Decision:
    source = actual[0]
    dims = tuple(source.dims[p] for p in op.perm)
    return Decision((source,), (Sharding(dims, source.partial),))


def _reshape_groups(
    source: Sequence[object], result: Sequence[object]
) -> list[tuple[list[int], list[int]]] | None:
    """The dims of ``source`` and ``result`` grouped so that each group's
    sizes multiply alike (a reshape merges or splits within groups), or
    None when the sizes do not line up that way."""
    from irc.dialects.sym import product

    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(source) or j < len(result):
        src, dst = [i], [j]
        if i >= len(source) or j >= len(result):
            return None
        while product([source[k] for k in src]) != product([result[k] for k in dst]):
            left = product([source[k] for k in src])
            right = product([result[k] for k in dst])
            grow_source = _smaller(left, right)
            if grow_source and src[-1] + 1 < len(source):
                src.append(src[-1] + 1)
            elif dst[-1] + 1 < len(result):
                dst.append(dst[-1] + 1)
            else:
                return None
        groups.append((src, dst))
        i, j = src[-1] + 1, dst[-1] + 1
    return groups


def _smaller(left: object, right: object) -> bool:
    """Whether ``left`` divides ``right`` exactly as a polynomial (so the
    source group must grow)."""
    try:
        right.exact_div(left)  # type: ignore[attr-defined]
    except Exception:
        return False
    return True


def _reshape(op: g.ReshapeOp, actual: Sequence[Sharding], mesh: MeshAttr) -> Decision:
    source, result = g.tensor_type(op.input), g.tensor_type(op.result)
    groups = _reshape_groups(source.dims, result.dims)
    operand_dims: list[Axes] = [()] * source.rank
    result_dims: list[Axes] = [()] * result.rank
    if groups is not None:
        for src, dst in groups:
            axes = actual[0].dims[src[0]]
            if not axes or any(actual[0].dims[k] for k in src[1:]):
                continue
            first = result.dims[dst[0]]
            try:
                first.exact_div(mesh.group_size(axes))
            except Exception:
                continue
            operand_dims[src[0]] = axes
            result_dims[dst[0]] = axes
    return _layout_op(operand_dims, result_dims, actual[0].partial)


def _reduce(op: g.ReduceOp, actual: Sequence[Sharding]) -> Decision:
    source = actual[0]
    axes = set(op.axes.get_values())
    summing = op.kind.data == ReductionKind.SUM
    operand_dims = list(source.dims)
    partial = set(source.partial) if summing else set()
    for axis in axes:
        if source.dims[axis]:
            if summing:
                partial.update(source.dims[axis])
            else:
                operand_dims[axis] = ()
    source_rank = len(source.dims)
    keepdims = g.tensor_type(op.result).rank == source_rank
    result_dims = [
        () if axis in axes else operand_dims[axis]
        for axis in range(source_rank)
        if keepdims or axis not in axes
    ]
    operand = Sharding(tuple(operand_dims), source.partial if summing else frozenset())
    return Decision((operand,), (Sharding(tuple(result_dims), frozenset(partial)),))


def _argmax(op: g.ArgMaxOp, actual: Sequence[Sharding]) -> Decision:
    """An argmax keeps the splits of the other dims; its axis is whole."""
    axis = op.axis.value.data
    operand = actual[0].whole().with_dim(axis, ())
    keepdims = g.tensor_type(op.result).rank == operand.rank
    dims = operand.dims if keepdims else operand.dims[:axis] + operand.dims[axis + 1 :]
    return Decision((operand,), (Sharding(dims),))


def _matmul(op: g.MatmulOp, actual: Sequence[Sharding]) -> Decision:
    lhs, rhs = actual
    lhs_type, rhs_type = g.tensor_type(op.lhs), g.tensor_type(op.rhs)
    result_type = g.tensor_type(op.result)
    batch = result_type.rank - 2
    result_dims: list[Axes] = [()] * result_type.rank
    lhs_dims: list[Axes] = [()] * lhs_type.rank
    rhs_dims: list[Axes] = [()] * rhs_type.rank
    used: set[str] = set()

    def claim(axes: Axes) -> bool:
        if not axes or used & set(axes):
            return False
        used.update(axes)
        return True

    lhs_offset, rhs_offset = batch - (lhs_type.rank - 2), batch - (rhs_type.rank - 2)
    for dim in range(batch):
        li, ri = dim - lhs_offset, dim - rhs_offset
        axes = lhs.dims[li] if li >= 0 else ()
        whole_lhs = li >= 0 and lhs_type.dims[li] == result_type.dims[dim]
        whole_rhs = ri < 0 or rhs_type.dims[ri] == result_type.dims[dim]
        if axes and whole_lhs and whole_rhs and claim(axes):
            result_dims[dim] = lhs_dims[li] = axes
            if ri >= 0:
                rhs_dims[ri] = axes
    contraction = lhs.dims[-1]
    partial: set[str] = set(lhs.partial) if lhs.partial and not rhs.partial else set()
    if contraction and contraction == rhs.dims[-2] and claim(contraction):
        lhs_dims[-1] = rhs_dims[-2] = contraction
        partial.update(contraction)
    if claim(lhs.dims[-2]):
        result_dims[-2] = lhs_dims[-2] = lhs.dims[-2]
    if claim(rhs.dims[-1]):
        result_dims[-1] = rhs_dims[-1] = rhs.dims[-1]
    lhs_partial = lhs.partial if lhs.partial and not rhs.partial else frozenset()
    return Decision(
        (Sharding(tuple(lhs_dims), lhs_partial), Sharding(tuple(rhs_dims))),
        (Sharding(tuple(result_dims), frozenset(partial)),),
    )


def _slice(op: g.SliceOp, actual: Sequence[Sharding]) -> Decision:
    """A slice keeps the splits of the dims it takes whole (offset 0, every
    element, stride 1); the dims it cuts are gathered first."""
    source, result = g.tensor_type(op.input), g.tensor_type(op.result)
    dims = []
    for axis, axes in enumerate(actual[0].dims):
        whole = (
            op.offset_list[axis] == 0
            and op.stride_list[axis] == 1
            and result.dims[axis] == source.dims[axis]
        )
        dims.append(axes if whole else ())
    sharding = Sharding(tuple(dims))
    return Decision((sharding,), (sharding,))


def _concat(op: g.ConcatOp, actual: Sequence[Sharding]) -> Decision:
    """A concatenation keeps the splits of the other dims (the operands
    take the most split one's); its own axis is whole."""
    axis = op.axis.value.data
    target = _most_split(actual).with_dim(axis, ())
    return Decision((target,) * len(actual), (target,))


def decide(op: Operation, actual: Sequence[Sharding], mesh: MeshAttr) -> Decision:
    """The sharding ``op`` needs of its operands and gives its results,
    given its operands' ``actual`` shardings (the rules of the module's
    docstring)."""
    if op.regions or not op.results:
        return _replicated_everywhere(op)
    if isinstance(op, g.UnaryOp | g.BinaryOp | g.CompareOp | g.SelectOp):
        return _elementwise(op, actual)
    if isinstance(op, g.CastOp):
        return _cast(op, actual)
    if isinstance(op, g.BroadcastOp):
        return _broadcast(op, actual)
    if isinstance(op, g.TransposeOp):
        return _transpose(op, actual)
    if isinstance(op, g.ReshapeOp):
        return _reshape(op, actual, mesh)
    if isinstance(op, g.ReduceOp):
        return _reduce(op, actual)
    if isinstance(op, g.MatmulOp):
        return _matmul(op, actual)
    if isinstance(op, g.ArgMaxOp):
        return _argmax(op, actual)
    if isinstance(op, g.SliceOp):
        return _slice(op, actual)
    if isinstance(op, g.ConcatOp):
        return _concat(op, actual)
    return _replicated_everywhere(op)


# --------------------------------------------------------------------------
# The walk
# --------------------------------------------------------------------------


def function_mesh(function: func.FuncOp) -> MeshAttr:
    """The mesh a function runs over (its ``collective.mesh``)."""
    mesh = function.attributes.get(MESH_ATTRIBUTE)
    if not isinstance(mesh, MeshAttr):
        raise PassFailedException(
            f"@{function.sym_name.data} has no {MESH_ATTRIBUTE} attribute: "
            "sharding needs the mesh the function runs over"
        )
    return mesh


def _attribute_at(
    attrs: ArrayAttr[DictionaryAttr] | None, index: int
) -> ShardingAttr | None:
    if attrs is None:
        return None
    found = attrs.data[index].data.get(SHARDING_ATTRIBUTE)
    return found if isinstance(found, ShardingAttr) else None


def argument_shardings(function: func.FuncOp) -> list[Sharding]:
    """Each argument's declared sharding (replicated where none is)."""
    found = []
    for index, arg in enumerate(function.body.block.args):
        attr = _attribute_at(function.arg_attrs, index)
        found.append(
            Sharding.replicated(_rank(arg)) if attr is None else Sharding.of_attr(attr)
        )
    return found


def result_shardings(function: func.FuncOp) -> list[Sharding]:
    """Each result's requested sharding (replicated where none is)."""
    types = function.function_type.outputs.data
    found = []
    for index, type_ in enumerate(types):
        attr = _attribute_at(function.res_attrs, index)
        rank = type_.rank if isinstance(type_, g.TensorType) else 0
        found.append(
            Sharding.replicated(rank) if attr is None else Sharding.of_attr(attr)
        )
    return found


def check_mesh_axes(function: func.FuncOp, mesh: MeshAttr) -> None:
    for sharding in [*argument_shardings(function), *result_shardings(function)]:
        unknown = sharding.used_axes - set(mesh.names)
        if unknown:
            raise PassFailedException(
                f"@{function.sym_name.data}: a sharding names {sorted(unknown)}, "
                f"not axes of the mesh {mesh}"
            )


def propagate(function: func.FuncOp) -> dict[SSAValue, Sharding]:
    """Every value of the function's body and its sharding, forward from
    the arguments' (what ``partition`` rewrites by)."""
    mesh = function_mesh(function)
    check_mesh_axes(function, mesh)
    shardings: dict[SSAValue, Sharding] = dict(
        zip(function.body.block.args, argument_shardings(function), strict=True)
    )
    for op in function.body.block.ops:
        actual = [shardings.get(v, Sharding.replicated(_rank(v))) for v in op.operands]
        decision = decide(op, actual, mesh)
        for result, sharding in zip(op.results, decision.results, strict=True):
            shardings[result] = sharding
    return shardings


class PropagateShardingPass(ModulePass):
    """``propagate-sharding``: record on each op of every function over a
    mesh its results' shardings (``collective.shardings``)."""

    name = "propagate-sharding"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.walk():
            if not isinstance(function, func.FuncOp):
                continue
            if MESH_ATTRIBUTE not in function.attributes:
                continue
            mesh = function_mesh(function)
            shardings = propagate(function)
            for inner in function.body.block.ops:
                if inner.results:
                    inner.attributes[SHARDINGS_ATTRIBUTE] = ArrayAttr(
                        [shardings[r].attr(mesh) for r in inner.results]
                    )
