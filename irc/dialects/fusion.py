"""The fusion dialect: graph ops grouped into the kernels they will become.

``fusion.kernel`` (``KernelOp``) is an isolated region of graph ops with a
name, a kind (pointwise, reduction, matmul, attention) and a reason; each
becomes one GPU kernel. Each kind's contract on the ops inside, which the
tiler relies on, is its entry in ``CONTRACTS``; ``contract_violation`` is
what both the verifier and ``fuse`` check. ``AttentionChain`` defines the
attention kind's chain; ``RowIdioms`` and ``online_sum`` recognise the
idioms a reduction is computed by (``Idiom``, recorded by ``fuse``).

See docs/lowering.md, section "fusion: which ops become one kernel".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

import numpy as np
from xdsl.dialects.builtin import AnyFloat, StringAttr, SymbolNameConstraint
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    prop_def,
    region_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    RecursiveMemoryEffect,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from irc.dialects.graph import (
    ArgMaxOp,
    BinaryOp,
    BroadcastOp,
    CastOp,
    CompareOp,
    ConcatOp,
    ConstantOp,
    DimOp,
    InsertSliceOp,
    IotaOp,
    MatmulOp,
    ReduceOp,
    ReshapeOp,
    ScanOp,
    SelectOp,
    SliceOp,
    TakeOp,
    TensorType,
    TransposeOp,
    UnaryOp,
    is_elementwise_op,
    reduced_shape,
)
from irc.dialects.kernel_kind import (
    ATTENTION,
    ATTENTION_BACKWARD,
    MATMUL,
    POINTWISE,
    REDUCTION,
    KernelKind,
    KernelKindName,
    KindTable,
    kernel_kind,
    kernel_kind_error,
)
from irc.dialects.sym import GuardOp, product, shape_text
from irc.dialects.syntax import InputTypes
from irc.primitives.builtin import DIV, EXP, MUL, SUB
from irc.shapes import SymExpr

# --------------------------------------------------------------------------
# Kinds of graph ops, as fusion sees them
# --------------------------------------------------------------------------

#: Ops computing each result element from the same index of their operands.
ELEMENTWISE_OPS: tuple[type[Operation], ...] = (
    UnaryOp,
    BinaryOp,
    CompareOp,
    SelectOp,
    CastOp,
)

#: Ops that only move elements: each reads its operand through an index map.
LAYOUT_OPS: tuple[type[Operation], ...] = (
    BroadcastOp,
    ReshapeOp,
    TransposeOp,
    SliceOp,
)

#: What a matmul's operand tiles are loaded through: layout ops, casts, and
#: concats (a padded input, a convolution's windows side by side: masked
#: loads, so that the im2col matrix is never stored) of values or splats.
OPERAND_OPS: tuple[type[Operation], ...] = (*LAYOUT_OPS, ConcatOp, CastOp, ConstantOp)

#: Ops whose result elements are operand elements at computed indices:
#: layout ops plus the ones that pick among several operands.
INDEXING_OPS: tuple[type[Operation], ...] = (
    *LAYOUT_OPS,
    ConcatOp,
    InsertSliceOp,
    TakeOp,
)

#: Ops reducing axes of one operand.
REDUCTION_OPS: tuple[type[Operation], ...] = (ReduceOp, ArgMaxOp)

#: Ops scanning one axis of one operand: like reductions they walk rows, but
#: their results keep the rows' shape.
SCAN_OPS: tuple[type[Operation], ...] = (ScanOp,)

#: The ops that anchor a row kernel (``reduction``).
ROW_OPS: tuple[type[Operation], ...] = (*REDUCTION_OPS, *SCAN_OPS)

Shape = tuple[SymExpr, ...]

T = TypeVar("T")


def is_elementwise(op: Operation) -> bool:
    """Whether each result element depends on the same index of each operand."""
    return isinstance(op, ELEMENTWISE_OPS)


def is_dense_constant(op: Operation) -> bool:
    """A dense literal: it stays outside kernels and is read from memory."""
    return isinstance(op, ConstantOp) and not op.is_splat


def is_source(op: Operation) -> bool:
    """An op without operands that any kernel can compute at any index:
    a splat constant, an iota, a symbol's value."""
    return isinstance(op, IotaOp | DimOp) or (
        isinstance(op, ConstantOp) and op.is_splat
    )


def shape_of(value: SSAValue) -> Shape:
    """The dims of a ``!graph.tensor`` value (``()`` for another type, which
    the op's own verifier rejects)."""
    value_type = value.type
    return value_type.dims if isinstance(value_type, TensorType) else ()


def describe_shapes(shapes: Iterable[Shape]) -> str:
    return ", ".join(shape_text(shape) for shape in shapes)


# --------------------------------------------------------------------------
# Row structures
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class RowStructure:
    """What a reduction iterates over: operand shape ``shape`` (X), reduced
    over ``axes`` (A); the rows are indexed by the kept axes. A scan's rows
    are its operand's, along its one axis."""

    shape: Shape
    axes: tuple[int, ...]

    @staticmethod
    def of(op: Operation) -> RowStructure:
        """The rows that ``op``, a ``graph.reduce`` or ``graph.argmax``,
        reduces, or that a ``graph.scan`` scans."""
        if isinstance(op, ReduceOp):
            return RowStructure(shape_of(op.input), tuple(op.axis_list))
        if isinstance(op, ArgMaxOp | ScanOp):
            return RowStructure(shape_of(op.input), (op.axis.value.data,))
        raise TypeError(f"{op.name} is not a reduction")

    def reduced_shapes(self) -> tuple[Shape, Shape]:
        """A reduction's result shape: with its reduced axes kept as 1, and
        with them dropped."""
        return (
            tuple(reduced_shape(self.shape, self.axes, keepdims=True)),
            tuple(reduced_shape(self.shape, self.axes, keepdims=False)),
        )

    def __str__(self) -> str:
        return f"over {shape_text(self.axes)} of {shape_text(self.shape)}"


def maps_rows(
    source_shape: Sequence[SymExpr], row_shape: Sequence[SymExpr], axes: Sequence[int]
) -> bool:
    """Whether broadcasting ``source_shape`` to ``row_shape`` (NumPy's
    right-aligned broadcasting) maps a per-row value back onto its rows.

    That is what a reduction kernel can compute within a row: the source
    is a reduction's result shape (keepdims or not) over rows ``row_shape``
    reduced over ``axes``, and each kept axis of ``row_shape`` comes from the
    same axis of the row, not from a reduced one. With X = [N, D]:
    ``[N, 1] -> [N, D]`` maps rows for axes [1]; ``[N] -> [N, D]`` does not
    (right-aligned, N lands on axis 1, the reduced one); for axes [0],
    ``[D] -> [N, D]`` and ``[1, D] -> [N, D]`` do.
    """
    rows = RowStructure(tuple(row_shape), tuple(axes))
    keepdims, dropped = rows.reduced_shapes()
    source = tuple(source_shape)
    if source == keepdims:
        return True  # aligned axis for axis: kept axes onto themselves
    if source != dropped:
        return False
    kept = [axis for axis in range(len(row_shape)) if axis not in axes]
    offset = len(row_shape) - len(source)
    return kept == list(range(offset, len(row_shape)))


# --------------------------------------------------------------------------
# Kernel contracts
# --------------------------------------------------------------------------


#: Why graph ops (in a valid order, producers first) yielding some values
#: cannot be a kernel of a kind, or None when they can.
Contract = Callable[[Sequence[Operation], Sequence[SSAValue]], str | None]

#: The contract of each kernel kind (see the module docstring).
CONTRACTS: KindTable[Contract] = KindTable("kernel contract")


def contract_violation(
    kind: KernelKind, ops: Sequence[Operation], yielded: Sequence[SSAValue]
) -> str | None:
    """Why graph ``ops`` (in a valid order, producers first) yielding
    ``yielded`` cannot be a kernel of ``kind``, or None when they can.

    The verifier of ``fusion.kernel`` and the ``fuse`` pass (before it grows
    a kernel) share this function, so the pass never forms a kernel that
    does not verify.
    """
    for op in ops:
        if problem := _never_inside(op):
            return problem
    return CONTRACTS[kind](ops, yielded)


def _never_inside(op: Operation) -> str | None:
    if isinstance(op, GuardOp):
        return "sym.guard stays outside kernels (the launcher checks it)"
    if is_dense_constant(op):
        return "a dense graph.constant stays outside kernels (pass it as an operand)"
    if op.dialect_name() != "graph":
        return f"a kernel holds graph ops only, not {op.name}"
    return None


@CONTRACTS.register(POINTWISE)
def _pointwise_violation(
    ops: Sequence[Operation], yielded: Sequence[SSAValue]
) -> str | None:
    for op in ops:
        if isinstance(op, (*ROW_OPS, MatmulOp)):
            return f"a pointwise kernel cannot hold {op.name}"
    shapes = _distinct(shape_of(value) for value in yielded)
    if len(shapes) > 1:
        return (
            "a pointwise kernel yields values of one shape (its iteration "
            f"space), not {describe_shapes(shapes)}"
        )
    return None


@CONTRACTS.register(REDUCTION)
def _reduction_violation(
    ops: Sequence[Operation], yielded: Sequence[SSAValue]
) -> str | None:
    if any(isinstance(op, MatmulOp) for op in ops):
        return "a reduction kernel cannot hold graph.matmul"
    if any(isinstance(op, SCAN_OPS) for op in ops):
        return _scan_violation(ops, yielded)
    reductions = [op for op in ops if isinstance(op, REDUCTION_OPS)]
    if not reductions:
        return (
            "a reduction kernel holds at least one graph.reduce, graph.argmax or "
            "graph.scan"
        )
    rows = RowStructure.of(reductions[0])
    for reduction in reductions[1:]:
        other = RowStructure.of(reduction)
        if other != rows:
            return (
                "the reductions of a reduction kernel share one row structure: "
                f"{reductions[0].name} reduces {rows}, {reduction.name} {other}"
            )
    # A per-row value may be yielded in either form (keepdims or not).
    allowed = _distinct([rows.shape, *rows.reduced_shapes()])
    for value in yielded:
        if shape_of(value) not in allowed:
            return (
                f"a reduction kernel yields values of its rows' shape or of a "
                f"reduction's result ({describe_shapes(allowed)}), not "
                f"{shape_text(shape_of(value))}"
            )
    return _row_users_violation(ops, rows)


def _row_users_violation(ops: Sequence[Operation], rows: RowStructure) -> str | None:
    """Whether each op using a reduction's result (transitively) can run
    within a row: elementwise, a row-mapping broadcast, or a reduction."""
    dependent: set[SSAValue] = set()
    for op in ops:
        if isinstance(op, REDUCTION_OPS):
            dependent.update(op.results)
        elif any(operand in dependent for operand in op.operands):
            if not (
                is_elementwise(op)
                or _is_row_broadcast(op, rows)
                or _is_row_reshape(op, rows)
            ):
                return (
                    f"{op.name} uses a reduction's result but is neither "
                    "elementwise, nor a reshape between the per-row shapes, nor "
                    f"a broadcast mapping it back onto the rows {rows}"
                )
            dependent.update(op.results)
    return None


def _scan_violation(
    ops: Sequence[Operation], yielded: Sequence[SSAValue]
) -> str | None:
    """Why a reduction kernel of scans breaks its contract: its scans share
    one row structure, it holds no reduction, what uses a scan's result is
    elementwise or a scan, and it yields values of the rows' shape."""
    scans = [op for op in ops if isinstance(op, SCAN_OPS)]
    rows = RowStructure.of(scans[0])
    for op in ops:
        if isinstance(op, REDUCTION_OPS):
            return (
                f"a kernel of scans cannot hold {op.name}: a reduction and a scan "
                "do not share a kernel"
            )
        if isinstance(op, SCAN_OPS) and RowStructure.of(op) != rows:
            return (
                "the scans of a reduction kernel share one row structure: "
                f"{scans[0].name} scans {rows}, {op.name} {RowStructure.of(op)}"
            )
    for value in yielded:
        if shape_of(value) != rows.shape:
            return (
                "a kernel of scans yields values of its rows' shape "
                f"{shape_text(rows.shape)}, not {shape_text(shape_of(value))}"
            )
    dependent: set[SSAValue] = set()
    for op in ops:
        if isinstance(op, SCAN_OPS):
            dependent.update(op.results)
        elif any(operand in dependent for operand in op.operands):
            if not is_elementwise(op):
                return (
                    f"{op.name} uses a scan's result but is neither elementwise nor "
                    "a scan (a scan's value is known only along the stretch of the "
                    "row being scanned)"
                )
            dependent.update(op.results)
    return None


def _is_row_broadcast(op: Operation, rows: RowStructure) -> bool:
    return (
        isinstance(op, BroadcastOp)
        and shape_of(op.result) == rows.shape
        and maps_rows(shape_of(op.input), rows.shape, rows.axes)
    )


def _is_row_reshape(op: Operation, rows: RowStructure) -> bool:
    """A reshape between the per-row shapes (``[N]`` <-> ``[N, 1]``): it only
    adds or drops the reduced axes' 1s, so each row still reads its own value."""
    per_row = rows.reduced_shapes()
    return (
        isinstance(op, ReshapeOp)
        and shape_of(op.input) in per_row
        and shape_of(op.result) in per_row
    )


@CONTRACTS.register(MATMUL)
def _matmul_violation(
    ops: Sequence[Operation], yielded: Sequence[SSAValue]
) -> str | None:
    matmuls = [op for op in ops if isinstance(op, MatmulOp)]
    if len(matmuls) != 1:
        return f"a matmul kernel holds exactly one graph.matmul, not {len(matmuls)}"
    for op in ops:
        if isinstance(op, ROW_OPS):
            return f"a matmul kernel cannot hold {op.name}"
    (matmul,) = matmuls
    layouts = epilogue_layouts(ops, matmul)
    if isinstance(layouts, str):
        return layouts
    result_shape = shape_of(matmul.result)
    for value in yielded:
        if value not in layouts and shape_of(value) != result_shape:
            return (
                f"a matmul kernel yields values of the matmul's result shape "
                f"{shape_text(result_shape)} or computed from that result, not "
                f"{shape_text(shape_of(value))}"
            )
    return _prologue_violation(ops, [matmul.lhs, matmul.rhs])


@dataclass(frozen=True)
class EpilogueLayout:
    """Where the elements of a value computed from a matmul's result sit
    relative to the result tile: the result ``[*batch, M, N]`` with its
    last axis split row-major into ``columns`` (same elements, same order:
    a convolution's ``[N, O, OH * OW]`` product is its ``[N, O, OH, OW]``
    output), then its axes permuted by ``perm`` (``graph.transpose``'s,
    None for none), then runs of consecutive axes merged row-major into
    one by ``merges`` (the extents of each run, None for no merge: batched
    heads ``[H, T, d]`` transposed to ``[T, H, d]`` and joined as
    ``[T, H * d]``). A matmul kernel evaluates such a value at the tile's
    index mapped there and stores it there."""

    columns: Shape
    perm: tuple[int, ...] | None = None
    merges: tuple[Shape, ...] | None = None

    def index(self, lead: Sequence[T], columns: Sequence[T]) -> tuple[T, ...]:
        """The index of a value in this layout before ``merges``, from the
        result tile's ``lead`` coordinates and its column coordinates
        already split over ``columns``."""
        split = (*lead, *columns)
        return split if self.perm is None else tuple(split[p] for p in self.perm)

    def merged(
        self, index: Sequence[T], linearize: Callable[[Sequence[T], Shape], T]
    ) -> tuple[T, ...]:
        """``index`` (from :meth:`index`) with each run of ``merges``
        linearized into one coordinate."""
        if self.merges is None:
            return tuple(index)
        result, start = [], 0
        for run in self.merges:
            coords = index[start : start + len(run)]
            result.append(coords[0] if len(run) == 1 else linearize(coords, run))
            start += len(run)
        return tuple(result)


def epilogue_layouts(
    ops: Sequence[Operation], matmul: MatmulOp, *, layout_ops: bool = True
) -> dict[SSAValue, EpilogueLayout] | str:
    """The layout of every value ``ops`` compute from ``matmul``'s result,
    or why one cannot be evaluated at the result tile: the epilogue is
    elementwise ops on one layout (``layout_ops``: through reshapes of the
    last axis, transposes, then one reshape joining axes)."""
    result = shape_of(matmul.result)
    layouts = {matmul.result: EpilogueLayout((result[-1],))}
    for op in ops:
        found = [layouts[o] for o in op.operands if o in layouts]
        if not found:
            continue
        if is_elementwise(op):
            if any(other != found[0] for other in found):
                return (
                    f"{op.name} combines the matmul's result in two layouts (an "
                    "epilogue is computed on the result tile)"
                )
            layout: EpilogueLayout | None = found[0]
        else:
            layout = _layout_of(op, found[0], result) if layout_ops else None
        if layout is None:
            extra = (
                ", a reshape of its last axis, a join of axes or a transpose"
                if layout_ops
                else ""
            )
            return (
                f"{op.name} uses the matmul's result but is not elementwise{extra} "
                "(an epilogue is computed on the result tile)"
            )
        layouts.update((value, layout) for value in op.results)
    return layouts


def _layout_of(
    op: Operation, layout: EpilogueLayout, result: Shape
) -> EpilogueLayout | None:
    """The layout of a layout op's result from its operand's, if the
    epilogue can follow it."""
    if layout.merges is not None:
        return None  # the tile's axes are joined: nothing more follows
    if isinstance(op, TransposeOp):
        before = layout.perm or tuple(range(len(op.perm)))
        perm = tuple(before[p] for p in op.perm)
        return EpilogueLayout(
            layout.columns, None if perm == tuple(range(len(perm))) else perm
        )
    # A split of a static 1 only adds unit axes, whose index is 0 rather
    # than the tile's column lanes.
    if isinstance(op, ReshapeOp) and layout.perm is None and result[-1] != 1:
        lead = len(result) - 1
        shape = shape_of(op.result)
        if (
            len(shape) > lead
            and tuple(shape[:lead]) == tuple(result[:lead])
            and product(shape[lead:]) == result[-1]
        ):
            return EpilogueLayout(tuple(shape[lead:]))
    # A join of one run of axes: the reshape's index map delinearizes the
    # joined index, which the builder gives back as the tile's coordinates
    # (two runs would be linearized together again). A static 1 in the run
    # is indexed by 0 there, not by the tile's lanes, as in a split of one.
    if isinstance(op, ReshapeOp):
        runs = _merged_runs(shape_of(op.operands[0]), shape_of(op.result))
        joined = [run for run in runs or () if len(run) > 1]
        if len(joined) == 1 and 1 not in joined[0]:
            return EpilogueLayout(layout.columns, layout.perm, runs)
    return None


def _merged_runs(source: Shape, target: Shape) -> tuple[Shape, ...] | None:
    """The runs of consecutive axes of ``source`` that ``target`` joins
    row-major, one per axis of ``target``, if it only joins axes."""
    runs: list[Shape] = []
    start = 0
    for dim in target:
        end = start + 1
        while end <= len(source) and product(source[start:end]) != dim:
            end += 1
        if end > len(source):
            return None
        runs.append(tuple(source[start:end]))
        start = end
    return tuple(runs) if start == len(source) else None


def _prologue_violation(
    ops: Sequence[Operation], operands: Sequence[SSAValue]
) -> str | None:
    """Whether what ``ops`` compute of a matmul's ``operands`` is what its
    tiles can be loaded through (``loads_operand_tiles``)."""
    inside = set(ops)
    pending = list(operands)
    seen: set[Operation] = set()
    while pending:
        producer = pending.pop().owner
        if producer not in inside or producer in seen:
            continue
        assert isinstance(producer, Operation)
        seen.add(producer)
        if not loads_operand_tiles(producer):
            return (
                f"{producer.name} feeds the matmul's operands, where only layout "
                "ops, concats, splats, casts and scalings by a constant go (they "
                "become the way tiles are loaded)"
            )
        pending.extend(producer.operands)
    return None


def loads_operand_tiles(op: Operation) -> bool:
    """Whether a matmul's operand tiles can be loaded through ``op``
    (``OPERAND_OPS``; a constant only as a splat, no array to read; a
    scaling by a constant, ``_scales_by_constant``)."""
    if isinstance(op, ConstantOp):
        return op.is_splat
    return isinstance(op, OPERAND_OPS) or _scales_by_constant(op)


def _scales_by_constant(op: Operation) -> bool:
    """``x * c``, ``c * x`` or ``x / c`` for a finite splat ``c`` (non-zero
    when it divides): a tile loaded with masked lanes read as 0 stays 0
    there, so the scaling happens as the tile is loaded (torch's exporters
    scale both q and k by the square root of attention's scale)."""
    if not is_elementwise_op(op, MUL, DIV):
        return False
    sides = [op.rhs] if op.KIND is DIV else [op.lhs, op.rhs]
    for side in sides:
        constant = side.owner
        if isinstance(constant, ConstantOp) and constant.is_splat:
            value = constant.literal()
            return bool(np.isfinite(value) and (op.KIND is MUL or value != 0))
    return False


def _distinct(shapes: Iterable[Shape]) -> list[Shape]:
    return list(dict.fromkeys(shapes))


# --------------------------------------------------------------------------
# Attention chains: matmul -> row reduction -> matmul
# --------------------------------------------------------------------------

#: The largest head dim of an attention kernel (the first matmul's contracted
#: extent, the second's result columns): a block of query rows and the
#: running output block stay in registers across the walk over the keys.
MAX_HEAD_DIM = 256


@dataclass(frozen=True)
class RowFactor:
    """A per-row ``value`` multiplying the second matmul's lhs (dividing it
    when ``divides``): constant along the keys, it moves after the
    contraction."""

    value: SSAValue
    divides: bool


@dataclass(frozen=True)
class AttentionChain:
    """``output = P @ v`` with ``P = exp(x - max(x)) * factors``, ``x`` (the
    ``exponent``) an elementwise function of ``scores``' result (``P``
    possibly cast to ``v``'s type, as mixed precision does): the structure
    of an ``attention`` kernel (see the module docstring).

    ``keys`` are the scores' rows, reduced along their last axis (the key
    axis, which ``output`` contracts); ``maximum`` is ``max(x)`` along it,
    ``sums`` the sums of ``exp(x - max(x))`` along it that the factors
    read. ``rescaled`` are the score-shaped ops reading a reduction that
    these forms account for (the broadcasts of the maximum and of the
    factors, the subtractions, exponentials and products): the online
    rescaling computes them; no other score-shaped op may read a reduction.

    ``nan_guarded``: ``P`` is a softmax read through ``where(isnan(P), 0,
    P)``, the guard torch's exporters write around every masked attention
    (its "safe softmax"). A softmax is NaN on a whole row or nowhere (where
    the row's max is not finite), so the guard zeroes the rows whose sum is
    NaN, which the kernel does once per row after the walk.
    """

    scores: MatmulOp
    output: MatmulOp
    exponent: SSAValue
    maximum: ReduceOp
    sums: tuple[ReduceOp, ...]
    factors: tuple[RowFactor, ...]
    keys: RowStructure
    rescaled: frozenset[Operation]
    nan_guarded: bool = False

    @property
    def reductions(self) -> tuple[ReduceOp, ...]:
        return (self.maximum, *self.sums)

    @staticmethod
    def of(
        output: MatmulOp, inside: Callable[[Operation], bool] = lambda _: True
    ) -> AttentionChain | str:
        """The chain ending at ``output`` among the ops for which ``inside``
        holds (the values of others are inputs), or why there is none."""
        shape = shape_of(output.lhs)
        if len(shape) < 2:
            return "the second matmul's lhs has no key axis"
        keys = RowStructure(shape, (len(shape) - 1,))
        rescaled: set[Operation] = set()
        factors: list[RowFactor] = []
        value = output.lhs
        rounding = value.owner
        if isinstance(rounding, CastOp) and inside(rounding):
            # P rounded to the second matmul's operand type (mixed
            # precision): the kernel rounds each block's terms instead.
            rescaled.add(rounding)
            value = rounding.operands[0]
        guard = _nan_guarded(value, inside)
        if guard is not None:
            value, guard_ops = guard
            rescaled.update(guard_ops)
        while (found := _row_factor(value, keys, inside)) is not None:
            factor, rest, ops = found
            factors.append(factor)
            rescaled.update(ops)
            value = rest
        shifted = _shifted_by_max(value, keys, inside)
        if shifted is None:
            return (
                "the second matmul's lhs is not exp(x - max(x)) along the keys "
                "times per-row factors"
            )
        exponent, maximum, ops = shifted
        rescaled.update(ops)
        scores = _scores_of(exponent, keys, inside)
        if isinstance(scores, str):
            return scores
        sums: list[ReduceOp] = []
        for reduction in _factor_reductions(factors, inside):
            if reduction is maximum or reduction in sums:
                continue
            summed = online_sum(reduction, inside)
            if summed is None or summed.maximum is not maximum:
                return (
                    f"{reduction.name} feeds the per-row factors but is neither "
                    "max(x) nor a sum of exp(x - max(x)) along the keys"
                )
            sums.append(reduction)
            rescaled.update(summed.ops)
        if guard is not None and not _is_softmax(factors, sums):
            return (
                "where(isnan(P), 0, P) fuses only over a softmax, P = exp(x - "
                "max(x)) / sum(exp(x - max(x))): other factors can be NaN at "
                "single scores"
            )
        return AttentionChain(
            scores,
            output,
            exponent,
            maximum,
            tuple(sums),
            tuple(factors),
            keys,
            frozenset(rescaled),
            nan_guarded=guard is not None,
        )


def _nan_guarded(
    value: SSAValue, inside: Callable[[Operation], bool]
) -> tuple[SSAValue, tuple[Operation, ...]] | None:
    """``value`` as ``where(p != p, 0, p)`` (``isnan``'s form): ``p`` and
    the ops of the guard."""
    select = value.owner
    if not isinstance(select, SelectOp) or not inside(select):
        return None
    guarded = select.false_value
    compare, zero = select.condition.owner, select.true_value.owner
    if (
        not isinstance(compare, CompareOp)
        or not inside(compare)
        or compare.predicate.data.value != "ne"
        or not compare.lhs == compare.rhs == guarded
        or not isinstance(zero, ConstantOp)
        or not zero.is_splat
        or zero.literal() != 0
    ):
        return None
    return guarded, (select, compare)


def _is_softmax(factors: Sequence[RowFactor], sums: Sequence[ReduceOp]) -> bool:
    """Whether the factors are one division by the chain's sum: ``P`` is
    ``exp(x - max(x)) / sum(exp(x - max(x)))``."""
    if len(factors) != 1 or not factors[0].divides:
        return False
    total = factors[0].value.owner
    while isinstance(total, ReshapeOp):  # the sum without keepdims
        total = total.input.owner
    return list(sums) == [total]


def _per_row(value: SSAValue, keys: RowStructure) -> SSAValue | None:
    """The per-row value that ``value`` broadcasts onto the rows, if it is
    such a broadcast."""
    op = value.owner
    if (
        isinstance(op, BroadcastOp)
        and shape_of(op.result) == keys.shape
        and maps_rows(shape_of(op.input), keys.shape, keys.axes)
    ):
        return op.input
    return None


def _row_factor(
    value: SSAValue, keys: RowStructure, inside: Callable[[Operation], bool]
) -> tuple[RowFactor, SSAValue, tuple[Operation, ...]] | None:
    """``value`` as ``rest * r`` or ``rest / r``, ``r`` broadcast per row:
    the factor, ``rest`` and the ops of the product."""
    op = value.owner
    if not is_elementwise_op(op, MUL, DIV) or not inside(op):
        return None
    # A product has the factor on either side; a quotient divides by it.
    sides = [(op.rhs, op.lhs)]
    if op.KIND is MUL:
        sides.append((op.lhs, op.rhs))
    for factor, rest in sides:
        row = _per_row(factor, keys)
        if row is not None:
            broadcast = factor.owner
            assert isinstance(broadcast, BroadcastOp)
            return RowFactor(row, op.KIND is DIV), rest, (op, broadcast)
    return None


def _shifted_by_max(
    value: SSAValue, keys: RowStructure, inside: Callable[[Operation], bool]
) -> tuple[SSAValue, ReduceOp, tuple[Operation, ...]] | None:
    """``value`` as ``exp(x - broadcast(max(x)))`` along the keys: ``x``,
    the max and the ops of the form."""
    exp = value.owner
    if not is_elementwise_op(exp, EXP) or not inside(exp):
        return None
    sub = exp.input.owner
    if not is_elementwise_op(sub, SUB) or not inside(sub):
        return None
    row = _per_row(sub.rhs, keys)
    maximum = row.owner if row is not None else None
    if (
        not isinstance(maximum, ReduceOp)
        or not inside(maximum)
        or maximum.kind.data.value != "max"
        or RowStructure.of(maximum) != keys
        or maximum.input != sub.lhs
    ):
        return None
    broadcast = sub.rhs.owner
    assert isinstance(broadcast, BroadcastOp)
    return sub.lhs, maximum, (exp, sub, broadcast)


def _scores_of(
    exponent: SSAValue, keys: RowStructure, inside: Callable[[Operation], bool]
) -> MatmulOp | str:
    """The one matmul of the keys' shape that ``exponent``'s elementwise
    chain reads."""
    found: list[MatmulOp] = []
    seen: set[Operation] = set()
    pending = [exponent]
    while pending:
        op = pending.pop().owner
        if not isinstance(op, Operation) or op in seen or not inside(op):
            continue
        seen.add(op)
        if isinstance(op, MatmulOp) and shape_of(op.result) == keys.shape:
            found.append(op)
        elif is_elementwise(op):
            pending.extend(op.operands)
    if len(found) != 1:
        return (
            f"the exponent reads {len(found)} matmuls of the scores' shape "
            f"{shape_text(keys.shape)} through elementwise ops, not one"
        )
    return found[0]


def _factor_reductions(
    factors: Sequence[RowFactor], inside: Callable[[Operation], bool]
) -> list[ReduceOp]:
    """The reductions that the factors' per-row computations read (through
    elementwise ops and reshapes; other values are inputs)."""
    found: list[ReduceOp] = []
    seen: set[Operation] = set()
    pending = [factor.value for factor in factors]
    while pending:
        op = pending.pop().owner
        if not isinstance(op, Operation) or op in seen or not inside(op):
            continue
        seen.add(op)
        if isinstance(op, ReduceOp):
            found.append(op)
        elif is_elementwise(op) or isinstance(op, ReshapeOp):
            pending.extend(op.operands)
    return found


@CONTRACTS.register(ATTENTION)
def _attention_violation(
    ops: Sequence[Operation], yielded: Sequence[SSAValue]
) -> str | None:
    matmuls = [op for op in ops if isinstance(op, MatmulOp)]
    if len(matmuls) != 2:
        return (
            "an attention kernel holds two graph.matmul ops (the scores and the "
            f"output), not {len(matmuls)}"
        )
    inside = set(ops)
    chain = AttentionChain.of(matmuls[1], inside.__contains__)
    if isinstance(chain, str):
        return chain
    if chain.scores is not matmuls[0]:
        return "the first graph.matmul of an attention kernel is the one x reads"
    for op in ops:
        if isinstance(op, ROW_OPS) and op not in chain.reductions:
            return (
                f"{op.name} is neither max(x) nor a sum of exp(x - max(x)) along "
                "the keys (the reductions an attention kernel rescales online)"
            )
    result_shape = shape_of(chain.output.result)
    statistics = {reduction.result for reduction in chain.reductions}
    for value in yielded:
        if value not in statistics and shape_of(value) != result_shape:
            return (
                "an attention kernel yields values of the second matmul's result "
                f"shape {shape_text(result_shape)} and its rows' max and sums, not "
                f"{shape_text(shape_of(value))}"
            )
    scores, output = chain.scores, chain.output
    return (
        _head_dims_violation(chain)
        or _between_violation(ops, chain)
        or _attention_epilogue_violation(ops, output)
        or _prologue_violation(ops, [scores.lhs, scores.rhs, output.rhs])
    )


def _attention_epilogue_violation(
    ops: Sequence[Operation], output: MatmulOp
) -> str | None:
    """An attention kernel's epilogue is elementwise on its output tile."""
    layouts = epilogue_layouts(ops, output, layout_ops=False)
    return layouts if isinstance(layouts, str) else None


def _head_dims_violation(chain: AttentionChain) -> str | None:
    if shape_of(chain.scores.result) != chain.keys.shape:
        return (
            f"the scores {shape_text(shape_of(chain.scores.result))} and the second "
            f"matmul's lhs {shape_text(chain.keys.shape)} differ in shape"
        )
    for what, dim in (
        ("the first matmul's contracted dim", shape_of(chain.scores.lhs)[-1]),
        ("the second matmul's result columns", shape_of(chain.output.result)[-1]),
    ):
        if dim.constant is None or dim.constant > MAX_HEAD_DIM:
            return (
                f"{what} ({dim}) is not static and at most {MAX_HEAD_DIM}: an "
                "attention kernel keeps a block of query rows and of its output "
                "in registers"
            )
    return None


def _between_violation(ops: Sequence[Operation], chain: AttentionChain) -> str | None:
    """Whether what reads the scores is computable from one block of keys at
    a time: elementwise score-shaped ops that read no reduction (``x``),
    the chain's reductions and rescaled forms, per-row ops of the
    reductions (the factors) and the second matmul."""
    keys = chain.keys
    per_row = keys.reduced_shapes()
    from_scores: set[SSAValue] = {chain.scores.result}
    from_reductions: set[SSAValue] = set()
    for op in ops:
        reads_scores = any(v in from_scores for v in op.operands)
        reads_reduction = any(v in from_reductions for v in op.operands)
        if op is chain.output or not (reads_scores or reads_reduction):
            continue  # the output's users are the epilogue's
        from_scores.update(op.results)
        if op in chain.reductions:
            from_reductions.update(op.results)
            continue
        if reads_reduction:
            from_reductions.update(op.results)
        if op in chain.rescaled:
            continue
        shape = shape_of(op.results[0])
        if shape == keys.shape and is_elementwise(op) and not reads_reduction:
            continue
        if shape in per_row and (is_elementwise(op) or _is_row_reshape(op, keys)):
            continue
        return (
            f"{op.name} reads the scores, but is neither elementwise on them "
            "(before the max), nor a per-row computation of the reductions, nor "
            "exp(x - max(x)) times per-row factors feeding the second matmul"
        )
    return None


# --------------------------------------------------------------------------
# Score walks: attention's backward, the scores recomputed block by block
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreWalk:
    """The structure of an ``attention_backward`` kernel: matmuls
    (``accumulations``, the values it yields) that each contract one axis of
    a score-shaped operand computed in the kernel, the *walked* axis, with
    a tensor read from memory. The score-shaped values are elementwise
    functions (and transposes of the last two axes) of the ``scores``
    matmuls, whose contracted dim is a static head dim, and of values read
    at the same score (a mask, a per-row statistic): each block of the walk
    recomputes them, so no ``[..., T, S]`` tensor is read or written.

    For each accumulation, ``score_operands`` says which operand (0: lhs,
    1: rhs) is score-shaped; its other axis (besides the walked one) is the
    *fixed* axis, whose blocks the programs take. Flash attention's
    backward is two such kernels: ``dv = P^T @ dO`` and ``dk = dS^T @ q``
    walk the queries (per block of keys), ``dq = dS @ k`` walks the keys.
    """

    accumulations: tuple[MatmulOp, ...]
    score_operands: tuple[int, ...]
    scores: tuple[MatmulOp, ...]
    #: The extents of the walked and the fixed axis, and the batch dims.
    walked: SymExpr
    fixed: SymExpr
    batch: Shape
    #: The accumulation each yielded value is computed from (itself, or
    #: its epilogue's: elementwise ops and layouts, as a matmul's).
    epilogues: dict[SSAValue, MatmulOp] = field(default_factory=dict)

    def score_operand(self, accumulation: MatmulOp) -> SSAValue:
        side = self.score_operands[self.accumulations.index(accumulation)]
        return accumulation.operands[side]

    def other_operand(self, accumulation: MatmulOp) -> SSAValue:
        side = self.score_operands[self.accumulations.index(accumulation)]
        return accumulation.operands[1 - side]

    @staticmethod
    def of(ops: Sequence[Operation], yielded: Sequence[SSAValue]) -> ScoreWalk | str:
        """The walk that ``ops`` yielding ``yielded`` compute, or why they
        compute none."""
        found = _walk_values(ops)
        if isinstance(found, str):
            return found
        accumulations, derived, scored = found
        if not accumulations or any(value not in derived for value in yielded):
            return (
                "an attention_backward kernel yields its accumulating matmuls' "
                "results and their epilogues' values"
            )
        sides: list[int] = []
        for accumulation in accumulations:
            side = _score_side(accumulation, scored)
            if isinstance(side, str):
                return side
            layouts = epilogue_layouts(ops, accumulation)
            if isinstance(layouts, str):
                return layouts
            sides.append(side)
        scores = tuple(
            op for op in ops if isinstance(op, MatmulOp) and op not in accumulations
        )
        walk = ScoreWalk(
            tuple(accumulations),
            tuple(sides),
            scores,
            *_walk_axes(accumulations[0], sides[0]),
            epilogues={value: derived[value] for value in yielded},
        )
        return walk._axes_violation() or walk._head_dims_violation() or walk

    def _axes_violation(self) -> str | None:
        for accumulation, side in zip(self.accumulations, self.score_operands):
            axes = _walk_axes(accumulation, side)
            if axes != (self.walked, self.fixed, self.batch):
                return (
                    "the accumulating matmuls of an attention_backward kernel keep "
                    "one axis, walk another and share their batch: "
                    f"{_axes_text(*axes)} against "
                    f"{_axes_text(self.walked, self.fixed, self.batch)}"
                )
        return None

    def _head_dims_violation(self) -> str | None:
        heads = [
            ("a scores matmul's contracted dim", shape_of(op.lhs)[-1])
            for op in self.scores
        ]
        for accumulation, side in zip(self.accumulations, self.score_operands):
            other = shape_of(accumulation.operands[1 - side])
            heads.append(("an accumulation's columns", other[-1 if side == 0 else -2]))
        for what, dim in heads:
            if dim.constant is None or dim.constant > MAX_HEAD_DIM:
                return (
                    f"{what} ({dim}) is symbolic or above {MAX_HEAD_DIM}: an "
                    "attention_backward kernel keeps its blocks of head dims in "
                    "registers"
                )
        return None


def _axes_text(walked: SymExpr, fixed: SymExpr, batch: Shape) -> str:
    text = f"keeping {fixed}, walking {walked}"
    return f"{text} (batch {shape_text(batch)})" if batch else text


def _walk_axes(accumulation: MatmulOp, side: int) -> tuple[SymExpr, SymExpr, Shape]:
    """The walked and fixed extents and the batch of an accumulation whose
    operand ``side`` is score-shaped."""
    score = shape_of(accumulation.operands[side])
    walked = score[-1] if side == 0 else score[-2]
    fixed = score[-2] if side == 0 else score[-1]
    return walked, fixed, shape_of(accumulation.result)[:-2]


def _walk_values(
    ops: Sequence[Operation],
) -> tuple[list[MatmulOp], dict[SSAValue, MatmulOp], set[SSAValue]] | str:
    """The accumulations (the matmuls reading values computed from other
    matmuls, the scores), the accumulation each value computed from one is
    of, and the values computed from the scores; checking that only elementwise ops and transposes of the last
    two axes lie between the scores and the accumulations, and that an
    epilogue reads one accumulation."""
    scored: set[SSAValue] = set()
    derived: dict[SSAValue, MatmulOp] = {}
    accumulations: list[MatmulOp] = []
    for op in ops:
        if isinstance(op, ROW_OPS):
            return (
                f"{op.name} is in an attention_backward kernel, which reduces "
                "nothing but its matmuls (the rows' statistics are its inputs)"
            )
        reads_scores = any(operand in scored for operand in op.operands)
        sources = {derived[o] for o in op.operands if o in derived}
        if sources and (reads_scores or len(sources) > 1 or isinstance(op, MatmulOp)):
            return (
                f"{op.name} reads an accumulation of an attention_backward kernel "
                "with other values than its own epilogue's"
            )
        if sources:
            derived.update((result, *sources) for result in op.results)
        elif isinstance(op, MatmulOp) and reads_scores:
            accumulations.append(op)
            derived[op.result] = op
        elif isinstance(op, MatmulOp):
            scored.add(op.result)
        elif reads_scores:
            if not (is_elementwise(op) or swaps_last_two(op)):
                return (
                    f"{op.name} reads the scores in an attention_backward kernel, "
                    "where only elementwise ops and transposes of the last two "
                    "axes do"
                )
            scored.update(op.results)
    return accumulations, derived, scored


def swaps_last_two(op: Operation) -> bool:
    """Whether ``op`` is a transpose of the last two axes alone."""
    if not isinstance(op, TransposeOp):
        return False
    rank = len(op.perm)
    return rank >= 2 and list(op.perm) == [*range(rank - 2), rank - 1, rank - 2]


def _score_side(accumulation: MatmulOp, scored: set[SSAValue]) -> int | str:
    """Which operand of ``accumulation`` is score-shaped."""
    sides = [i for i, operand in enumerate(accumulation.operands) if operand in scored]
    if len(sides) != 1:
        return (
            "each accumulating matmul of an attention_backward kernel multiplies "
            "one value computed from the scores by one read from memory"
        )
    side = sides[0]
    if shape_of(accumulation.operands[side])[:-2] != shape_of(accumulation.result)[:-2]:
        return (
            "the score-shaped operand of an attention_backward accumulation "
            "must have the result's batch dims"
        )
    return side


@CONTRACTS.register(ATTENTION_BACKWARD)
def _attention_backward_violation(
    ops: Sequence[Operation], yielded: Sequence[SSAValue]
) -> str | None:
    walk = ScoreWalk.of(ops, yielded)
    return walk if isinstance(walk, str) else None


# --------------------------------------------------------------------------
# Idioms: how a kernel's reductions are computed, decided once
# --------------------------------------------------------------------------


class Idiom(StrEnum):
    """A reduction that a row walk computes other than one walk of its own
    (see ``irc.lowering.fusion_to_loop.reduction``), as ``fuse`` records it
    on the ``graph.reduce`` (``IDIOM_ATTRIBUTE``) and ``tile`` reads it."""

    #: ``sum(exp(a - max(a)))`` along the rows: in the max's walk, each
    #: lane's sum rescaled as its running max grows (``online_sum``).
    ONLINE_SUM = "online_sum"
    #: ``sum((a - c)**2)``, ``c`` per row, Welford's way in an earlier walk
    #: than the centre's own (``centred_sum``).
    CENTRED_SUM = "centred_sum"
    #: ``sum(where(label == lane, base - o1 - ..., 0))``, the offsets per
    #: row, in the walk reading ``base`` (``one_hot_pick``).
    ONE_HOT_PICK = "one_hot_pick"


#: The discardable attribute of a reduction naming its ``Idiom``
#: (``{fusion.idiom = "online_sum"}``).
IDIOM_ATTRIBUTE = "fusion.idiom"


@dataclass(frozen=True)
class OnlineSum:
    """A float ``sum(exp(a - broadcast(maximum)))``, ``maximum = max(a)``
    over the same rows; ``ops`` are the exponential, the subtraction and
    the broadcast of the form."""

    maximum: ReduceOp
    ops: tuple[Operation, ...]


@dataclass(frozen=True)
class CentredSum:
    """A float ``sum((values - broadcast(center))**2)``, ``center`` a
    per-row value: the sum of squared deviations of ``values`` from it."""

    values: SSAValue
    center: SSAValue

    @property
    def reads(self) -> tuple[SSAValue, ...]:
        """What the walk accumulating it reads at each lane."""
        return (self.values,)

    @property
    def needs(self) -> tuple[SSAValue, ...]:
        """The per-row values its result needs after the walk."""
        return (self.center,)


@dataclass(frozen=True)
class OneHotPick:
    """A float ``sum(where(label == lane, base - o1 - o2 ..., 0))`` whose
    condition holds on at most one lane of a row (a per-row label compared
    with the lane's index: cross-entropy's one-hot pick), the ``offsets``
    per-row values: the sum is the picked ``base`` minus the offsets, in
    that order (NumPy's value, rounded the same), or 0 if no lane is
    picked."""

    condition: SSAValue
    base: SSAValue
    offsets: tuple[SSAValue, ...]

    @property
    def reads(self) -> tuple[SSAValue, ...]:
        return (self.condition, self.base)

    @property
    def needs(self) -> tuple[SSAValue, ...]:
        return self.offsets


#: A reduction computed in an earlier walk than its operand's dependencies
#: allow, from what it ``reads`` there and what it ``needs`` after.
Deferred = CentredSum | OneHotPick


def _always(_: Operation) -> bool:
    return True


def online_sum(
    total: Operation, inside: Callable[[Operation], bool] = _always
) -> OnlineSum | None:
    """``total`` as an online sum (``OnlineSum``) among the ops for which
    ``inside`` holds, or None: the one rule of both the reduction kernels'
    online sums and an attention kernel's."""
    if not isinstance(total, ReduceOp) or total.kind.data.value != "sum":
        return None
    shifted = _shifted_by_max(total.input, RowStructure.of(total), inside)
    if shifted is None or not isinstance(
        _element_type(shifted[0]), AnyFloat
    ):  # an integer exp would not rescale
        return None
    _, maximum, ops = shifted
    return OnlineSum(maximum, ops)


def centred_sum(total: Operation) -> CentredSum | None:
    """``total`` as a sum of squares about a per-row value, or None."""
    if not isinstance(total, ReduceOp) or total.kind.data.value != "sum":
        return None
    square = total.input.owner
    if not is_elementwise_op(square, MUL) or square.lhs != square.rhs:
        return None
    deviation = square.lhs.owner
    if not is_elementwise_op(deviation, SUB) or not isinstance(
        _element_type(deviation.lhs), AnyFloat
    ):
        return None
    spread = deviation.rhs.owner
    if not isinstance(spread, BroadcastOp):
        return None
    center = spread.input
    if shape_of(center) not in RowStructure.of(total).reduced_shapes():
        return None
    return CentredSum(deviation.lhs, center)


def one_hot_pick(total: Operation) -> OneHotPick | None:
    """``total`` as a one-hot pick minus per-row offsets (at least one:
    else nothing comes after the walk and no walk is saved), or None."""
    if not isinstance(total, ReduceOp) or total.kind.data.value != "sum":
        return None
    choice = total.input.owner
    if not isinstance(choice, SelectOp) or not _is_zero(choice.false_value):
        return None
    if not isinstance(_element_type(choice.true_value), AnyFloat):
        return None
    if not _picks_one_lane(choice.condition, total):
        return None
    per_row = RowStructure.of(total).reduced_shapes()
    base, offsets = choice.true_value, []
    while is_elementwise_op(base.owner, SUB):
        spread = base.owner.rhs.owner
        if not isinstance(spread, BroadcastOp) or shape_of(spread.input) not in per_row:
            break
        offsets.insert(0, spread.input)
        base = base.owner.lhs
    if not offsets:
        return None
    return OneHotPick(choice.condition, base, tuple(offsets))


def _element_type(value: SSAValue) -> Attribute | None:
    value_type = value.type
    return value_type.element_type if isinstance(value_type, TensorType) else None


def _is_zero(value: SSAValue) -> bool:
    constant = value.owner
    return (
        isinstance(constant, ConstantOp)
        and constant.is_splat
        and constant.literal().item() == 0
    )


def _picks_one_lane(condition: SSAValue, total: ReduceOp) -> bool:
    """Whether ``condition`` is ``per-row value == lane index`` along the
    one reduced axis (either way round): true on at most one lane a row."""
    compare = condition.owner
    rows = RowStructure.of(total)
    if not isinstance(compare, CompareOp) or len(rows.axes) != 1:
        return False
    if compare.predicate.data.value != "eq":
        return False
    per_row = rows.reduced_shapes()
    rank = len(shape_of(condition))

    def is_row_value(value: SSAValue) -> bool:
        spread = value.owner
        return isinstance(spread, BroadcastOp) and shape_of(spread.input) in per_row

    def is_lane_index(value: SSAValue) -> bool:
        spread = value.owner
        if isinstance(spread, BroadcastOp):
            value = spread.input
        iota = value.owner
        if not isinstance(iota, IotaOp):
            return False
        shift = rank - len(shape_of(value))  # broadcasting aligns right
        return iota.axis.value.data + shift == rows.axes[0]

    lhs, rhs = compare.lhs, compare.rhs
    return (is_row_value(lhs) and is_lane_index(rhs)) or (
        is_row_value(rhs) and is_lane_index(lhs)
    )


@dataclass(frozen=True)
class RowIdioms:
    """How the reductions of a reduction kernel's row walks are computed:
    the ``online`` sums with the max each joins, and the ``deferred`` ones
    (centred sums, one-hot picks) with their forms."""

    online: dict[Operation, ReduceOp]
    deferred: dict[Operation, Deferred]

    @staticmethod
    def recognise(reductions: Sequence[Operation]) -> RowIdioms:
        """The recogniser that ``fuse`` decides with: every online sum whose
        max is among ``reductions`` (a reduction kernel's, in block order);
        then each centred sum and one-hot pick that its form lets an
        earlier walk compute than its operand's dependencies allow (a
        variance with its mean, cross-entropy's pick with the max)."""
        online: dict[Operation, ReduceOp] = {}
        for total in reductions:
            summed = online_sum(total)
            if summed is not None and summed.maximum in reductions:
                online[total] = summed.maximum
        idioms = RowIdioms(online, {})
        for form_of in (centred_sum, one_hot_pick):
            for total in reductions:
                form = form_of(total)
                if form is None:
                    continue
                plain = idioms.levels(reductions)[total]
                idioms.deferred[total] = form
                if idioms.levels(reductions)[total] >= plain:
                    del idioms.deferred[total]  # no walk saved
        return idioms

    @staticmethod
    def recorded(reductions: Sequence[Operation]) -> RowIdioms:
        """The idioms that the reductions' records name (verified: each
        has its form)."""
        online: dict[Operation, ReduceOp] = {}
        deferred: dict[Operation, Deferred] = {}
        for total in reductions:
            idiom = recorded_idiom(total)
            if idiom is Idiom.ONLINE_SUM:
                summed = online_sum(total)
                assert summed is not None, "verified"
                online[total] = summed.maximum
            elif idiom is not None:
                form = _DEFERRED_FORMS[idiom](total)
                assert form is not None, "verified"
                deferred[total] = form
        return RowIdioms(online, deferred)

    def records(self) -> dict[Operation, Idiom]:
        """The record of each reduction computed by an idiom."""
        records = dict.fromkeys(self.online, Idiom.ONLINE_SUM)
        for total, form in self.deferred.items():
            centred = isinstance(form, CentredSum)
            records[total] = Idiom.CENTRED_SUM if centred else Idiom.ONE_HOT_PICK
        return records

    def walks(self, reductions: Sequence[Operation]) -> list[list[Operation]]:
        """``reductions`` grouped so that each group depends only on
        earlier ones: a group is one walk over the row."""
        depth = self.levels(reductions)
        walks: list[list[Operation]] = [[] for _ in range(max(depth.values()) + 1)]
        for reduction in reductions:
            walks[depth[reduction]].append(reduction)
        return walks

    def levels(self, reductions: Sequence[Operation]) -> dict[Operation, int]:
        """The walk of each reduction: one after the last reduction it
        reads; an online sum in its max's (after it); a deferred one in the
        first walk that can read what it reads and, afterwards, evaluate
        what it needs (the centre; the offsets)."""
        depth: dict[Operation, int] = {}

        def after(value: SSAValue) -> int:
            """The deepest walk of the reductions ``value`` reads (-1: none)."""
            owner = value.owner
            return max(
                (
                    depth[r]
                    for r in depth
                    if owner is r
                    or (isinstance(owner, Operation) and _depends_on(owner, r))
                ),
                default=-1,
            )

        for reduction in reductions:  # block order is topological
            if reduction in self.online:
                depth[reduction] = depth[self.online[reduction]]
            elif reduction in self.deferred:
                form = self.deferred[reduction]
                depth[reduction] = max(
                    1 + max(after(v) for v in form.reads),
                    *(after(v) for v in form.needs),
                    0,
                )
            else:
                depth[reduction] = 1 + max(
                    (depth[r] for r in depth if _depends_on(reduction, r)), default=-1
                )
        return depth


_DEFERRED_FORMS: dict[Idiom, Callable[[Operation], Deferred | None]] = {
    Idiom.CENTRED_SUM: centred_sum,
    Idiom.ONE_HOT_PICK: one_hot_pick,
}


def _depends_on(op: Operation, earlier: Operation) -> bool:
    stack = list(op.operands)
    seen: set[SSAValue] = set()
    while stack:
        value = stack.pop()
        if value in seen:
            continue
        seen.add(value)
        owner = value.owner
        if owner is earlier:
            return True
        if isinstance(owner, Operation):
            stack.extend(owner.operands)
    return False


def recorded_idiom(op: Operation) -> Idiom | None:
    """The idiom recorded on ``op`` (a verified kernel's), if any."""
    record = op.attributes.get(IDIOM_ATTRIBUTE)
    return None if record is None else Idiom(cast(StringAttr, record).data)


def kernel_idioms(kind: KernelKind, ops: Sequence[Operation]) -> dict[Operation, Idiom]:
    """What the recogniser decides for a kernel of ``kind`` holding ``ops``
    (the verified contract's): the row idioms of a reduction kernel, the
    online sums of an attention kernel's chain."""
    if kind is ATTENTION:
        output = [op for op in ops if isinstance(op, MatmulOp)][-1]
        chain = AttentionChain.of(output, set(ops).__contains__)
        assert isinstance(chain, AttentionChain), "verified"
        return dict.fromkeys(chain.sums, Idiom.ONLINE_SUM)
    reductions = [op for op in ops if isinstance(op, REDUCTION_OPS)]
    if kind is not REDUCTION or not reductions:
        return {}
    return RowIdioms.recognise(reductions).records()


def _idiom_violation(kind: KernelKind, ops: Sequence[Operation]) -> str | None:
    """Why a record of an idiom in a kernel of ``kind`` holding ``ops`` is
    wrong: an unknown idiom, or one whose form the op does not have."""
    recognisable: dict[Operation, Idiom] | None = None
    for op in ops:
        record = op.attributes.get(IDIOM_ATTRIBUTE)
        if record is None:
            continue
        names = ", ".join(Idiom)
        if not isinstance(record, StringAttr) or record.data not in set(Idiom):
            return f"{op.name} records {IDIOM_ATTRIBUTE} {record}, not one of {names}"
        if recognisable is None:
            recognisable = _recognisable(kind, ops)
        if recognisable.get(op) != record.data:
            return (
                f"{op.name} records the idiom {record.data}, but it is not "
                f"{_IDIOM_FORMS[Idiom(record.data)]} in this {kind} kernel"
            )
    return None


def _recognisable(kind: KernelKind, ops: Sequence[Operation]) -> dict[Operation, Idiom]:
    """The idiom each op of the kernel may record: its form's, when the
    kernel computes it that way (a sum whose max is in the kernel)."""
    if kind is ATTENTION:
        return kernel_idioms(kind, ops)
    if kind is not REDUCTION:
        return {}
    reductions = [op for op in ops if isinstance(op, REDUCTION_OPS)]
    forms: dict[Operation, Idiom] = {}
    for total in reductions:
        summed = online_sum(total)
        if summed is not None and summed.maximum in reductions:
            forms[total] = Idiom.ONLINE_SUM
        elif centred_sum(total) is not None:
            forms[total] = Idiom.CENTRED_SUM
        elif one_hot_pick(total) is not None:
            forms[total] = Idiom.ONE_HOT_PICK
    return forms


_IDIOM_FORMS: dict[Idiom, str] = {
    Idiom.ONLINE_SUM: "a float sum(exp(a - max(a))) with its max",
    Idiom.CENTRED_SUM: "a float sum((a - c)**2) about a per-row c",
    Idiom.ONE_HOT_PICK: (
        "a float sum(where(label == lane, base - offsets, 0)) with per-row offsets"
    ),
}


# --------------------------------------------------------------------------
# The ops
# --------------------------------------------------------------------------


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A group of graph ops that becomes one GPU kernel.

    Custom form::

        %r:2 = fusion.kernel @k0 pointwise (%a, %b) : (T, T) -> (T, T) reason "..." {
        ^bb0(%x: T, %y: T):
          %1 = graph.add %x, %y : T
          fusion.yield %1, %x : T, T
        }

    ``@k0`` is the kernel's name, ``pointwise`` its kind (``reduction``,
    ``matmul``), the operands its inputs (the entry block's arguments, one
    to one and of the same types), the results what ``fusion.yield``
    yields, and ``reason`` says why the fusion pass formed it. Further
    attributes follow as ``attributes {...}`` before the region.
    """

    name = "fusion.kernel"

    sym_name = prop_def(SymbolNameConstraint())
    kind = prop_def(StringAttr)
    reason = prop_def(StringAttr)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")

    assembly_format = (
        "$sym_name custom<KernelKindName>($kind) ` ` `(` $inputs `)` `:` "
        "custom<InputTypes>(ref($inputs), type($inputs)) `->` `(` type($outputs) `)` "
        "`reason` $reason attr-dict-with-keyword $body"
    )
    custom_directives = (KernelKindName, InputTypes)

    traits = lazy_traits_def(lambda: (IsolatedFromAbove(), RecursiveMemoryEffect()))

    def __init__(
        self,
        name: str,
        kind: KernelKind,
        inputs: Sequence[SSAValue],
        body: Region,
        reason: str,
    ):
        """A kernel named ``name`` of ``kind`` on ``inputs``, whose result
        types are those ``body``'s ``fusion.yield`` yields."""
        terminator = body.block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException("a fusion.kernel body must end with fusion.yield")
        super().__init__(
            operands=[inputs],
            result_types=[[value.type for value in terminator.values]],
            properties={
                "sym_name": StringAttr(name),
                "kind": StringAttr(kind.name),
                "reason": StringAttr(reason),
            },
            regions=[body],
        )

    @property
    def kernel_name(self) -> str:
        return self.sym_name.data

    @property
    def kind_name(self) -> str:
        return self.kind.data

    @property
    def kernel_kind(self) -> KernelKind:
        """The kernel's kind (of a verified kernel: its name is known)."""
        return kernel_kind(self.kind_name)

    @property
    def reason_text(self) -> str:
        return self.reason.data

    @property
    def terminator(self) -> YieldOp:
        terminator = self.body.block.last_op
        assert isinstance(terminator, YieldOp), "verified"
        return terminator

    def verify_(self) -> None:
        block = self.body.block
        self._verify_arguments(block)
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException("a fusion.kernel body must end with fusion.yield")
        self._verify_yield(terminator)
        if problem := kernel_kind_error(self.kind_name):
            raise VerifyException(f"kernel @{self.kernel_name}: {problem}")
        ops = [op for op in block.ops if op is not terminator]
        problem = contract_violation(
            self.kernel_kind, ops, terminator.values
        ) or _idiom_violation(self.kernel_kind, ops)
        if problem is not None:
            raise VerifyException(f"kernel @{self.kernel_name}: {problem}")

    def _verify_arguments(self, block: Block) -> None:
        if len(block.args) != len(self.inputs):
            raise VerifyException(
                f"kernel @{self.kernel_name} has {len(self.inputs)} operands but "
                f"its block has {len(block.args)} arguments; they must match one "
                "to one"
            )
        for index, (arg, operand) in enumerate(zip(block.args, self.inputs)):
            if arg.type != operand.type:
                raise VerifyException(
                    f"kernel @{self.kernel_name}: block argument {index} has type "
                    f"{arg.type} but operand {index} has type {operand.type}"
                )

    def _verify_yield(self, terminator: YieldOp) -> None:
        yielded = [value.type for value in terminator.values]
        results: list[Attribute] = [value.type for value in self.outputs]
        if yielded != results:
            raise VerifyException(
                f"kernel @{self.kernel_name} yields ({_types(yielded)}) but its "
                f"results are ({_types(results)})"
            )


def _types(types: Iterable[Attribute]) -> str:
    return ", ".join(str(t) for t in types)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """``fusion.yield %a, %b : T1, T2``: the results of the enclosing kernel."""

    name = "fusion.yield"

    values = var_operand_def(TensorType)

    traits = lazy_traits_def(lambda: (HasParent(KernelOp), IsTerminator(), Pure()))

    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])


CONTRACTS.check_complete()

Fusion = Dialect("fusion", [KernelOp, YieldOp], [])
