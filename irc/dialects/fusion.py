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

In every kind, guards and dense constants stay outside kernels (they become
operands).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
    reduced_shape,
)
from irc.dialects.kernel_kind import KernelKindName, kernel_kind_error
from irc.dialects.sym import GuardOp, shape_text
from irc.dialects.syntax import InputTypes
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
    return _epilogue_violation(ops, matmul) or _prologue_violation(ops, matmul)


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


def _prologue_violation(ops: Sequence[Operation], matmul: MatmulOp) -> str | None:
    inside = set(ops)
    pending = [matmul.lhs, matmul.rhs]
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
