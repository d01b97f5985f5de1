"""The fusion dialect: graph ops grouped into the kernels they will become.

The ``fuse`` pass (``irc.lowering.graph_to_fusion``) moves the graph ops of a
function into ``fusion.kernel`` ops; each kernel becomes one GPU kernel
further down. A kernel is isolated from above: its region's block arguments
stand for its operands and ``fusion.yield`` gives its results, so everything
a kernel reads from memory is an operand and everything it writes a result.

Each kernel has a *kind* that says how the tiling pass iterates over it, and
with the kind comes a contract on the ops inside that the tiling pass relies
on and the verifier checks (see ``contract_violation``):

- ``pointwise``: one iteration space, the shape of every yielded value; any
  elementwise and layout ops (each with its own index map), no reductions,
  no matmul.
- ``reduction``: reductions (``graph.reduce``/``graph.argmax``) that all
  share one *row structure*: the same operand shape X and the same reduced
  axes A. The kernel iterates over the rows (the kept axes of X) and walks
  each row for the reductions; what uses a reduction's result is elementwise,
  a broadcast mapping it back onto the rows (``maps_rows``) or another
  reduction of the rows, so that it can be computed within the row.
  Or, in place of the reductions, scans (``graph.scan``) sharing one row
  structure (X scanned along one axis A): the same rows, walked in order
  with a running carry. What uses a scan's result is elementwise or another
  scan of the rows (computed in the same stretch of the row), and the kernel
  yields values of X's shape only. Reductions and scans do not share a
  kernel: a reduction of a scan would need the scan's carry in its loop.
- ``matmul``: one ``graph.matmul``; layout ops and casts on its operand side
  (they become the way tiles are loaded), elementwise ops on its result (the
  epilogue, computed on the accumulator tile).
- ``attention``: two ``graph.matmul`` ops chained through a row reduction
  along the first one's last axis (the *key* axis), which the second one
  contracts (``AttentionChain``): ``P @ v`` with ``P = exp(x - max(x)) * f``,
  ``x`` an elementwise function of the first matmul's result ``q @ k.T``
  that reads no reduction, the max along the key axis, ``f`` per-row
  factors (``1 / sum(exp(x - max(x)))``, a softmax's). The other reductions
  are such sums; operand sides and the epilogue are a matmul kernel's. The
  tiling walks the keys in blocks with an online max: ``exp(x - m)``, each
  sum and the second product rescale by ``exp(m_old - m_new)`` when the
  running max grows, and the factors, constant along the keys, multiply
  the product after the walk; the scores are never stored. The head dims
  (contracted by the first matmul, kept by the second) are static and at
  most ``MAX_HEAD_DIM``: a block of query rows and of output rows stays in
  registers.

In every kind, guards and dense constants stay outside kernels (they become
operands).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr, SymbolNameConstraint
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
from irc.dialects.kernel_kind import KernelKindName, kernel_kind_error
from irc.dialects.sym import GuardOp, shape_text
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


def contract_violation(
    kind: str, ops: Sequence[Operation], yielded: Sequence[SSAValue]
) -> str | None:
    """Why graph ``ops`` (in a valid order, producers first) yielding
    ``yielded`` cannot be a kernel of ``kind``, or None when they can.

    The verifier of ``fusion.kernel`` and the ``fuse`` pass (before it grows
    a kernel) share this function, so the pass never forms a kernel that
    does not verify.
    """
    if problem := kernel_kind_error(kind):
        return problem
    for op in ops:
        if problem := _never_inside(op):
            return problem
    if kind == "pointwise":
        return _pointwise_violation(ops, yielded)
    if kind == "reduction":
        return _reduction_violation(ops, yielded)
    if kind == "attention":
        return _attention_violation(ops, yielded)
    return _matmul_violation(ops, yielded)


def _never_inside(op: Operation) -> str | None:
    if isinstance(op, GuardOp):
        return "sym.guard stays outside kernels (the launcher checks it)"
    if is_dense_constant(op):
        return "a dense graph.constant stays outside kernels (pass it as an operand)"
    if op.dialect_name() != "graph":
        return f"a kernel holds graph ops only, not {op.name}"
    return None


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
    result_shape = shape_of(matmul.result)
    for value in yielded:
        if shape_of(value) != result_shape:
            return (
                f"a matmul kernel yields values of the matmul's result shape "
                f"{shape_text(result_shape)}, not {shape_text(shape_of(value))}"
            )
    return _epilogue_violation(ops, matmul) or _prologue_violation(
        ops, [matmul.lhs, matmul.rhs]
    )


def _epilogue_violation(ops: Sequence[Operation], matmul: MatmulOp) -> str | None:
    dependent: set[SSAValue] = {matmul.result}
    for op in ops:
        if any(operand in dependent for operand in op.operands):
            if not is_elementwise(op):
                return (
                    f"{op.name} uses the matmul's result but is not elementwise "
                    "(an epilogue is computed on the result tile)"
                )
            dependent.update(op.results)
    return None


def _prologue_violation(
    ops: Sequence[Operation], operands: Sequence[SSAValue]
) -> str | None:
    """Whether what ``ops`` compute of a matmul's ``operands`` is layout ops
    and casts only."""
    inside = set(ops)
    pending = list(operands)
    seen: set[Operation] = set()
    while pending:
        producer = pending.pop().owner
        if producer not in inside or producer in seen:
            continue
        assert isinstance(producer, Operation)
        seen.add(producer)
        if not isinstance(producer, (*LAYOUT_OPS, CastOp)):
            return (
                f"{producer.name} feeds the matmul's operands, where only layout "
                "ops and casts go (they become the way tiles are loaded)"
            )
        pending.extend(producer.operands)
    return None


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
    """

    scores: MatmulOp
    output: MatmulOp
    exponent: SSAValue
    maximum: ReduceOp
    sums: tuple[ReduceOp, ...]
    factors: tuple[RowFactor, ...]
    keys: RowStructure
    rescaled: frozenset[Operation]

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
            summed = _online_sum(reduction, exponent, maximum, keys, inside)
            if summed is None:
                return (
                    f"{reduction.name} feeds the per-row factors but is neither "
                    "max(x) nor a sum of exp(x - max(x)) along the keys"
                )
            sums.append(reduction)
            rescaled.update(summed)
        return AttentionChain(
            scores,
            output,
            exponent,
            maximum,
            tuple(sums),
            tuple(factors),
            keys,
            frozenset(rescaled),
        )


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


def _online_sum(
    reduction: ReduceOp,
    exponent: SSAValue,
    maximum: ReduceOp,
    keys: RowStructure,
    inside: Callable[[Operation], bool],
) -> tuple[Operation, ...] | None:
    """The ops of ``sum(exp(exponent - broadcast(maximum)))`` along the keys
    if ``reduction`` is that sum."""
    if reduction.kind.data.value != "sum" or RowStructure.of(reduction) != keys:
        return None
    summed = _shifted_by_max(reduction.input, keys, inside)
    if summed is None or summed[:2] != (exponent, maximum):
        return None
    return summed[2]


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
    for value in yielded:
        if shape_of(value) != result_shape:
            return (
                "an attention kernel yields values of the second matmul's result "
                f"shape {shape_text(result_shape)}, not {shape_text(shape_of(value))}"
            )
    scores, output = chain.scores, chain.output
    return (
        _head_dims_violation(chain)
        or _between_violation(ops, chain)
        or _epilogue_violation(ops, output)
        or _prologue_violation(ops, [scores.lhs, scores.rhs, output.rhs])
    )


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
        kind: str,
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
                "kind": StringAttr(kind),
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
        ops = [op for op in block.ops if op is not terminator]
        problem = contract_violation(self.kind_name, ops, terminator.values)
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


Fusion = Dialect("fusion", [KernelOp, YieldOp], [])
