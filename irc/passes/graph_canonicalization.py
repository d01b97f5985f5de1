"""Canonicalization patterns of the graph dialect.

xDSL's ``canonicalize`` asks each op with the ``GraphCanonicalization`` trait
for ``patterns_for(type(op))``: a primitive's op gets constant folding (its
NumPy semantics, as every interpreter runs it), constants moved right where
it commutes, and the identities its declaration states (docs/primitives.md);
the other ops get the patterns of ``_registry``. Every rewrite keeps the
reference interpreter's results bit for bit, NaN, infinities, signed zeros
and wrap-around included. Integer operations NumPy flags (division by zero,
a negative integer power) and casts of NaN are left to run time; a rewrite
removing an op that could fail applies only where the guards in scope prove
the failure impossible; a created op takes its source op's location.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import accumulate, pairwise

import numpy as np
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free

from irc.dialects.elementwise import ComparisonPredicate, ReductionKind
from irc.dialects.graph import (
    INDEX_TYPE,
    BinaryOp,
    BroadcastOp,
    CastOp,
    CompareOp,
    ConcatOp,
    CondOp,
    ConstantOp,
    DimOp,
    ForOp,
    InsertSliceOp,
    IotaOp,
    MatmulOp,
    ReduceOp,
    ReshapeOp,
    ScanOp,
    SelectOp,
    SliceOp,
    TensorType,
    TransposeOp,
    UnaryOp,
    WhileOp,
    YieldOp,
    elementwise,
    is_elementwise_op,
    tensor_type,
    yield_of,
)
from irc.dialects.sym import provable_in_scope
from irc.dtypes import DType, dtype
from irc.primitives.builtin import NOT
from irc.primitives.declaration import (
    Identity,
    Primitive,
    Splat,
    Term,
    Var,
    primitive,
)
from irc.shapes import SymExpr

# --------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------

#: The most elements a folded dense constant may get from a broadcast; other
#: folds never produce more elements than their operands already hold.
MAX_DENSE_ELEMENTS = 1024


def _dtype(value: SSAValue) -> DType:
    return dtype(tensor_type(value).element_type)


def _constant_array(value: SSAValue) -> np.ndarray | None:
    """The value of a ``graph.constant``, as the interpreter reads it: a 0-d
    array for a splat (whatever the tensor's shape), the whole array for a
    dense literal; None for any other value."""
    op = value.owner
    return op.literal() if isinstance(op, ConstantOp) else None


def _splat_array(value: SSAValue) -> np.ndarray | None:
    """The scalar of a splat ``graph.constant`` as a 0-d array, else None."""
    op = value.owner
    if isinstance(op, ConstantOp) and op.is_splat:
        return _constant_array(value)
    return None


def _is_splat_of(value: SSAValue, number: float) -> bool:
    """Whether ``value`` is a splat constant equal bit for bit to ``number``
    cast to its element type: ``-0.0`` matches only ``-0.0`` on floats and
    ``0`` on integers, ``-1`` is all ones on integers and ``true`` on bool."""
    splat = _splat_array(value)
    return (
        splat is not None and splat.tobytes() == np.array(number, splat.dtype).tobytes()
    )


def _constant(array: np.ndarray, result_type: TensorType) -> ConstantOp:
    """A constant of ``result_type`` holding ``array``: a splat when the array
    is 0-d (broadcast over the type's shape), a dense literal otherwise."""
    if array.ndim == 0:
        return ConstantOp.splat(array, result_type)
    constant = ConstantOp.dense(array)
    assert constant.result.type == result_type, "dense folds have static types"
    return constant


def _replace(
    rewriter: PatternRewriter, op: Operation, new: Operation | SSAValue
) -> None:
    """Replace ``op``'s result by an existing value, or by the result of a new
    op, which then takes over ``op``'s source location: diagnostics and debug
    info keep pointing at the code that the rewritten op came from."""
    if isinstance(new, SSAValue):
        rewriter.replace(op, (), (new,))
    else:
        new.location = op.location
        rewriter.replace(op, new)


def _constant_operands(op: Operation) -> list[np.ndarray] | None:
    """The values of ``op``'s operands when they are all constants."""
    constants = []
    for operand in op.operands:
        if (constant := _constant_array(operand)) is None:
            return None
        constants.append(constant)
    return constants


def _fold(
    op: Operation, rewriter: PatternRewriter, function: Callable[..., np.ndarray]
) -> None:
    """Replace ``op`` by the constant ``function`` computes from its operands,
    when they are all constants and NumPy computes it without complaint.

    The operands are materialised as contiguous arrays of at least one
    element, as the interpreter holds a splat: NumPy's loops take shortcuts
    for a 0-d or broadcast (stride 0) operand that change results (with a
    scalar exponent of 0.5, ``power`` is ``sqrt``, so ``(-inf) ** 0.5`` is
    NaN instead of inf).

    Float results take IEEE values silently, as in the interpreter; an
    integer result NumPy flags (division by zero, overflow of a division, a
    NaN or out-of-range float cast to an integer, a negative integer power)
    is not folded. Invalid IR that NumPy refuses (a TypeError) is left to
    the interpreter to report too.
    """
    if (constants := _constant_operands(op)) is None:
        return
    shape = np.broadcast_shapes(*(c.shape for c in constants)) or (1,)
    operands = [np.array(np.broadcast_to(c, shape)) for c in constants]
    result_type = tensor_type(op.results[0])
    result_dtype = dtype(result_type.element_type)
    checked = "raise" if result_dtype.kind == "i" else "ignore"
    try:
        with np.errstate(all=checked):
            value = np.asarray(function(*operands))
    except (FloatingPointError, TypeError, ValueError):
        return
    assert value.dtype == result_dtype.numpy, f"{op.name} folded to {value.dtype}"
    if all(c.ndim == 0 for c in constants):
        value = np.asarray(value.flat[0])
    _replace(rewriter, op, _constant(value, result_type))


# --------------------------------------------------------------------------
# Constant folding
# --------------------------------------------------------------------------


class FoldElementwise(RewritePattern):
    """``f(c1, c2)`` with constant operands is the constant the interpreter
    computes (with the NumPy function of the op's kind, which every
    interpreter runs)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: UnaryOp | BinaryOp | SelectOp, rewriter: PatternRewriter, /
    ) -> None:
        if isinstance(op, SelectOp):
            _fold(op, rewriter, np.where)
        else:
            _fold(op, rewriter, op.KIND.numpy)


class FoldCompare(RewritePattern):
    """A comparison of two constants is a bool constant."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CompareOp, rewriter: PatternRewriter, /) -> None:
        _fold(op, rewriter, op.predicate.data.numpy)


class FoldCast(RewritePattern):
    """A cast of a constant is a constant of the new element type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter, /) -> None:
        target = _dtype(op.result).numpy
        _fold(op, rewriter, lambda value: value.astype(target))


class DenseToSplat(RewritePattern):
    """A dense literal whose elements are all the same bits is a splat, which
    the identities below recognise and which later levels handle best."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConstantOp, rewriter: PatternRewriter, /) -> None:
        if op.is_splat:
            return
        array = _constant_array(op.result)
        assert array is not None
        if array.size == 0:
            return
        bits = array.view(f"u{array.itemsize}").ravel()
        if (bits == bits[0]).all():
            first = np.asarray(array.flat[0])
            _replace(rewriter, op, _constant(first, tensor_type(op.result)))


# --------------------------------------------------------------------------
# Binary identities (constants on the right)
# --------------------------------------------------------------------------


class MoveConstantRight(RewritePattern):
    """``c op x -> x op c`` for primitives that commute exactly (add, mul,
    and, or, xor: ``Primitive.commutative``), so the identities only look at
    the right operand."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if (
            isinstance(op, BinaryOp)
            and isinstance(op.lhs.owner, ConstantOp)
            and not isinstance(op.rhs.owner, ConstantOp)
        ):
            _replace(rewriter, op, type(op)(op.rhs, op.lhs))


@dataclass(frozen=True)
class ApplyIdentity(RewritePattern):
    """One of a primitive's declared identities (``Primitive.identities``):
    where the op's operands match the identity's, the op is its result."""

    identity: Identity

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if _dtype(op.operands[0]).kind not in self.identity.kinds:
            return
        bound: dict[str, SSAValue] = {}
        pairs = zip(self.identity.operands, op.operands, strict=True)
        if all(_matches(term, value, bound) for term, value in pairs):
            result = _built(self.identity.result, bound, op, rewriter)
            _replace(rewriter, op, result)


def _matches(term: Term, value: SSAValue, bound: dict[str, SSAValue]) -> bool:
    """Whether ``value`` has the form ``term``, binding its variables."""
    if isinstance(term, Var):
        return bound.setdefault(term.name, value) == value
    if isinstance(term, Splat):
        if not _is_splat_of(value, term.value):
            return False
        return term.bind is None or bound.setdefault(term.bind, value) == value
    op = value.owner
    if not is_elementwise_op(op, primitive(term.primitive)):
        return False
    if term.bind is not None and bound.setdefault(term.bind, value) != value:
        return False
    pairs = zip(term.operands, op.operands, strict=True)
    return all(_matches(inner, operand, bound) for inner, operand in pairs)


def _built(
    term: Term, bound: dict[str, SSAValue], op: Operation, rewriter: PatternRewriter
) -> SSAValue | Operation:
    """The value ``term`` stands for: a bound value, or a new op (its inner
    ops inserted before ``op``, at its location)."""
    if isinstance(term, Var):
        return bound[term.name]
    if isinstance(term, Splat):
        return ConstantOp.splat(term.value, tensor_type(op.results[0]))
    operands = []
    for inner in term.operands:
        built = _built(inner, bound, op, rewriter)
        if isinstance(built, Operation):
            built.location = op.location
            rewriter.insert(built, InsertPoint.before(op))
            built = built.results[0]
        operands.append(built)
    return elementwise(primitive(term.primitive), *operands)


# --------------------------------------------------------------------------
# Comparisons and selects
# --------------------------------------------------------------------------

_SWAPPED: dict[ComparisonPredicate, ComparisonPredicate] = {
    ComparisonPredicate.EQ: ComparisonPredicate.EQ,
    ComparisonPredicate.NE: ComparisonPredicate.NE,
    ComparisonPredicate.LT: ComparisonPredicate.GT,
    ComparisonPredicate.LE: ComparisonPredicate.GE,
    ComparisonPredicate.GT: ComparisonPredicate.LT,
    ComparisonPredicate.GE: ComparisonPredicate.LE,
}

_REFLEXIVE = frozenset(
    {ComparisonPredicate.EQ, ComparisonPredicate.LE, ComparisonPredicate.GE}
)


class CompareConstantRight(RewritePattern):
    """``cmp lt, c, x -> cmp gt, x, c``: the mirrored predicate is exact, NaN
    included (every ordered comparison with NaN is false either way)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CompareOp, rewriter: PatternRewriter, /) -> None:
        if isinstance(op.lhs.owner, ConstantOp) and not isinstance(
            op.rhs.owner, ConstantOp
        ):
            _replace(
                rewriter, op, CompareOp(_SWAPPED[op.predicate.data], op.rhs, op.lhs)
            )


class CompareSameOperands(RewritePattern):
    """``cmp p, x, x`` on integers and bools is true for eq, le, ge and false
    for ne, lt, gt. Not on floats, where ``NaN == NaN`` is false."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CompareOp, rewriter: PatternRewriter, /) -> None:
        if op.lhs == op.rhs and _dtype(op.lhs).kind in "ib":
            holds = op.predicate.data in _REFLEXIVE
            _replace(rewriter, op, ConstantOp.splat(holds, tensor_type(op.result)))


class SelectSameValues(RewritePattern):
    """``select(c, x, x) -> x``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SelectOp, rewriter: PatternRewriter, /) -> None:
        if op.true_value == op.false_value:
            _replace(rewriter, op, op.true_value)


class SelectConstantCondition(RewritePattern):
    """``select(true, x, y) -> x`` and ``select(false, x, y) -> y`` for a
    splat condition."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SelectOp, rewriter: PatternRewriter, /) -> None:
        condition = _splat_array(op.condition)
        if condition is not None:
            chosen = op.true_value if bool(condition) else op.false_value
            _replace(rewriter, op, chosen)


class SelectNotCondition(RewritePattern):
    """``select(not(c), x, y) -> select(c, y, x)``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SelectOp, rewriter: PatternRewriter, /) -> None:
        if is_elementwise_op(inner := op.condition.owner, NOT):
            _replace(rewriter, op, SelectOp(inner.input, op.false_value, op.true_value))


class SelectOfBools(RewritePattern):
    """``select(c, true, false) -> c`` and ``select(c, false, true) -> not(c)``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SelectOp, rewriter: PatternRewriter, /) -> None:
        if op.result.type != op.condition.type:
            return
        if _is_splat_of(op.true_value, 1) and _is_splat_of(op.false_value, 0):
            _replace(rewriter, op, op.condition)
        elif _is_splat_of(op.true_value, 0) and _is_splat_of(op.false_value, 1):
            _replace(rewriter, op, elementwise(NOT, op.condition))


# --------------------------------------------------------------------------
# Casts
# --------------------------------------------------------------------------

#: Casts that keep every value (NaN, infinities and -0.0 included), besides
#: those from bool, which are all exact.
_EXACT_CASTS = frozenset(
    {
        ("int32", "int64"),
        ("int32", "float64"),
        ("float16", "float32"),
        ("float16", "float64"),
        ("bfloat16", "float32"),
        ("bfloat16", "float64"),
        ("float32", "float64"),
    }
)


def _is_exact_cast(source: DType, target: DType) -> bool:
    return source.kind == "b" or (source.name, target.name) in _EXACT_CASTS


class CastToSameType(RewritePattern):
    """A cast to the operand's own type is the operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter, /) -> None:
        if op.input.type == op.result.type:
            _replace(rewriter, op, op.input)


class CastOfExactCast(RewritePattern):
    """``cast(cast(x : A -> B) : B -> C) -> cast(x : A -> C)`` when every value
    of A converts to B unchanged: a cast depends on the value alone, so the
    detour through B changes nothing (``i32 -> i64 -> f32`` is ``i32 -> f32``,
    ``f32 -> f64 -> f32`` is ``x``). A narrowing first cast (``f32 -> f16 ->
    f32``, ``i64 -> i32 -> i64``) rounds or wraps, so it stays."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter, /) -> None:
        inner = op.input.owner
        if not isinstance(inner, CastOp):
            return
        if not _is_exact_cast(_dtype(inner.input), _dtype(inner.result)):
            return
        if inner.input.type == op.result.type:
            _replace(rewriter, op, inner.input)
        else:
            _replace(rewriter, op, CastOp(inner.input, _dtype(op.result).ir_type))


# --------------------------------------------------------------------------
# Shape ops
# --------------------------------------------------------------------------


class ShapeOfSplat(RewritePattern):
    """Broadcasting, reshaping or transposing a splat gives a splat of the
    result type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: BroadcastOp | ReshapeOp | TransposeOp, rewriter: PatternRewriter, /
    ) -> None:
        constant = op.input.owner
        if isinstance(constant, ConstantOp) and constant.is_splat:
            _replace(rewriter, op, ConstantOp(constant.value, tensor_type(op.result)))


class SliceOfSplat(RewritePattern):
    """A slice of a splat is a splat of the result type, where the slice
    provably stays in bounds (out of bounds, it fails at run time)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SliceOp, rewriter: PatternRewriter, /) -> None:
        constant = op.input.owner
        if (
            isinstance(constant, ConstantOp)
            and constant.is_splat
            and op.provably_in_bounds()
        ):
            _replace(rewriter, op, ConstantOp(constant.value, tensor_type(op.result)))


class ShapeOfDense(RewritePattern):
    """Broadcasting, reshaping or transposing a dense literal to a static
    shape gives a dense literal (broadcasts up to ``MAX_DENSE_ELEMENTS``)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: BroadcastOp | ReshapeOp | TransposeOp, rewriter: PatternRewriter, /
    ) -> None:
        constant = op.input.owner
        if not isinstance(constant, ConstantOp) or constant.is_splat:
            return
        result_type = tensor_type(op.result)
        if (shape := result_type.static_shape) is None:
            return
        array = _constant_array(op.input)
        assert array is not None
        if isinstance(op, TransposeOp):
            moved = array.transpose(op.perm)
        elif isinstance(op, ReshapeOp):
            moved = array.reshape(shape)
        elif np.prod(shape) <= MAX_DENSE_ELEMENTS:
            moved = np.broadcast_to(array, shape)
        else:
            return
        _replace(rewriter, op, _constant(moved, result_type))


class ShapeToSameType(RewritePattern):
    """A broadcast or reshape to the operand's own type is the operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: BroadcastOp | ReshapeOp, rewriter: PatternRewriter, /
    ) -> None:
        if op.input.type == op.result.type:
            _replace(rewriter, op, op.input)


class ReshapeOfReshape(RewritePattern):
    """``reshape(reshape(x))`` is one reshape of ``x``: both keep the
    row-major order of the elements."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter, /) -> None:
        if isinstance(inner := op.input.owner, ReshapeOp):
            _replace(rewriter, op, ReshapeOp(inner.input, tensor_type(op.result).dims))


class BroadcastOfBroadcast(RewritePattern):
    """``broadcast(broadcast(x))`` is one broadcast of ``x``: a dim of ``x``
    that is not 1 stays the same through both."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BroadcastOp, rewriter: PatternRewriter, /) -> None:
        if isinstance(inner := op.input.owner, BroadcastOp):
            _replace(
                rewriter, op, BroadcastOp(inner.input, tensor_type(op.result).dims)
            )


class IdentityTranspose(RewritePattern):
    """A transpose by the identity permutation is its operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /) -> None:
        if op.perm == tuple(range(len(op.perm))):
            _replace(rewriter, op, op.input)


class TransposeOfTranspose(RewritePattern):
    """``transpose(transpose(x, p), q)`` is ``transpose(x, [p[i] for i in q])``
    (``x`` itself when that is the identity)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /) -> None:
        inner = op.input.owner
        if not isinstance(inner, TransposeOp):
            return
        permutation = [inner.perm[axis] for axis in op.perm]
        if permutation == sorted(permutation):
            _replace(rewriter, op, inner.input)
        else:
            _replace(rewriter, op, TransposeOp(inner.input, permutation))


class FullSlice(RewritePattern):
    """A slice from offset 0 by stride 1 that keeps the whole shape is its
    operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SliceOp, rewriter: PatternRewriter, /) -> None:
        if (
            op.input.type == op.result.type
            and all(offset == 0 for offset in op.offset_list)
            and all(stride == 1 for stride in op.stride_list)
        ):
            _replace(rewriter, op, op.input)


class InsertCoveringDestination(RewritePattern):
    """An insert whose window is the whole destination, in order, is its
    source."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: InsertSliceOp, rewriter: PatternRewriter, /
    ) -> None:
        if op.covers_destination():
            _replace(rewriter, op, op.source)


def _same_window(read: SliceOp, write: InsertSliceOp) -> bool:
    """Whether a slice reads the window an insert writes (its sizes are the
    slice's result dims and the insert's source dims: the callers compare
    those)."""
    return (
        read.offset_list == write.offset_list and read.stride_list == write.stride_list
    )


class InsertOwnSlice(RewritePattern):
    """Writing back the window just read (``x[a:b] = x[a:b]``, which ``x[a:b]
    += 0`` becomes) leaves the destination as it is, where the window
    provably lies inside it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: InsertSliceOp, rewriter: PatternRewriter, /
    ) -> None:
        read = op.source.owner
        if (
            isinstance(read, SliceOp)
            and read.input == op.dest
            and _same_window(read, op)
            and read.provably_in_bounds()
        ):
            _replace(rewriter, op, op.dest)


class SliceOfInsert(RewritePattern):
    """Reading exactly the window an insert wrote gives what it wrote, where
    that window provably lies inside the destination."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SliceOp, rewriter: PatternRewriter, /) -> None:
        insert = op.input.owner
        if (
            isinstance(insert, InsertSliceOp)
            and _same_window(op, insert)
            and op.result.type == insert.source.type
            and insert.provably_in_bounds()
        ):
            _replace(rewriter, op, insert.source)


class ConcatDropEmpty(RewritePattern):
    """Operands of size 0 along the concat axis add nothing, and a concat of
    one operand of the result type is that operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConcatOp, rewriter: PatternRewriter, /) -> None:
        axis = op.axis.value.data
        inputs = list(op.inputs)
        kept = [v for v in inputs if tensor_type(v).dims[axis] != 0] or inputs[:1]
        if len(kept) == 1:
            if kept[0].type == op.result.type:
                _replace(rewriter, op, kept[0])
        elif len(kept) < len(inputs) and _concat_type(kept, axis) == op.result.type:
            _replace(rewriter, op, ConcatOp(kept, axis))


class ConcatOfConcat(RewritePattern):
    """An operand that is a concat along the same axis is its own operands,
    in place."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConcatOp, rewriter: PatternRewriter, /) -> None:
        axis = op.axis.value.data
        flat: list[SSAValue] = []
        for value in op.inputs:
            inner = value.owner
            if isinstance(inner, ConcatOp) and inner.axis.value.data == axis:
                flat.extend(inner.inputs)
            else:
                flat.append(value)
        if flat != list(op.inputs) and _concat_type(flat, axis) == op.result.type:
            _replace(rewriter, op, ConcatOp(flat, axis))


class ElementwiseOfConcats(RewritePattern):
    """``f(concat(a1, a2), concat(b1, b2)) -> concat(f(a1, b1), f(a2, b2))``
    for a binary elementwise op of two concats along one axis whose pieces
    meet at the same offsets (static widths), a splat piece cut where the
    other side's pieces meet. The same function of the same elements, so
    every bit stays. A slice's cotangent is its window padded with zeros:
    the sum of the cotangents of side-by-side slices (attention heads,
    ``np.split``) becomes the concatenation of their windows, which
    horizontal fusion then joins."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, BinaryOp):
            return
        lhs, rhs = op.lhs.owner, op.rhs.owner
        if not (isinstance(lhs, ConcatOp) and isinstance(rhs, ConcatOp)):
            return
        axis = lhs.axis.value.data
        if rhs.axis.value.data != axis or op.lhs.type != op.rhs.type:
            return
        left, right = _concat_pieces(lhs, axis), _concat_pieces(rhs, axis)
        if left is None or right is None:
            return
        cuts = sorted(set(_piece_ends(left)) | set(_piece_ends(right)))
        left_cut, right_cut = _cut_at(left, cuts, axis), _cut_at(right, cuts, axis)
        if left_cut is None or right_cut is None:
            return
        pieces = []
        for a, b in zip(left_cut, right_cut, strict=True):
            operands = []
            for piece in (a, b):
                if isinstance(piece, Operation):
                    piece.location = op.location
                    rewriter.insert(piece, InsertPoint.before(op))
                    piece = piece.results[0]
                operands.append(piece)
            combined = type(op)(*operands)
            combined.location = op.location
            rewriter.insert(combined, InsertPoint.before(op))
            pieces.append(combined.results[0])
        _replace(rewriter, op, ConcatOp(pieces, axis))


def _concat_pieces(op: ConcatOp, axis: int) -> list[tuple[int, SSAValue]] | None:
    """The operands of ``op`` with their widths along ``axis``, if static
    and positive (``ConcatDropEmpty`` drops empty ones first)."""
    pieces = []
    for value in op.inputs:
        width = tensor_type(value).dims[axis].constant
        if width is None or width <= 0:
            return None
        pieces.append((width, value))
    return pieces


def _piece_ends(pieces: Sequence[tuple[int, SSAValue]]) -> list[int]:
    return list(accumulate(width for width, _ in pieces))


def _cut_at(
    pieces: Sequence[tuple[int, SSAValue]], cuts: Sequence[int], axis: int
) -> list[SSAValue | Operation] | None:
    """``pieces`` cut at every offset of ``cuts`` (the ends of the pieces of
    both sides, in order): a piece is kept whole where no cut falls inside
    it, a splat cut into splats; None when a cut falls inside another
    piece."""
    result: list[SSAValue | Operation] = []
    start = 0
    remaining = iter(cuts)
    for (_, value), end in zip(pieces, _piece_ends(pieces), strict=True):
        inside = [start]
        while (cut := next(remaining)) < end:
            inside.append(cut)
        inside.append(end)
        if len(inside) == 2:
            result.append(value)
        else:
            constant = value.owner
            if not (isinstance(constant, ConstantOp) and constant.is_splat):
                return None
            dims = list(tensor_type(value).dims)
            for low, high in pairwise(inside):
                dims[axis] = SymExpr.const(high - low)
                piece_type = tensor_type(value).with_shape(dims)
                result.append(ConstantOp(constant.value, piece_type))
        start = end
    return result


def _concat_type(values: Sequence[SSAValue], axis: int) -> TensorType:
    """The result type ``ConcatOp(values, axis)`` gets: the first operand's
    dims, with the sum of the operands' along ``axis``."""
    shape = list(tensor_type(values[0]).dims)
    shape[axis] = sum(
        (tensor_type(v).dims[axis] for v in values[1:]), start=shape[axis]
    )
    return tensor_type(values[0]).with_shape(shape)


class ReduceOneElement(RewritePattern):
    """A reduction over no axes, or over axes of size 1, reduces one element
    to itself: it is a reshape (nothing at all when the types agree). Except
    a float sum: NumPy sums from ``+0.0``, so the sum of ``[-0.0]`` is
    ``+0.0``, also over no axes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReduceOp, rewriter: PatternRewriter, /) -> None:
        if op.kind.data == ReductionKind.SUM and _dtype(op.input).kind == "f":
            return
        dims = tensor_type(op.input).dims
        if any(dims[axis] != 1 for axis in op.axis_list):
            return
        if op.input.type == op.result.type:
            _replace(rewriter, op, op.input)
        else:
            _replace(rewriter, op, ReshapeOp(op.input, tensor_type(op.result).dims))


class ScanOfOneElement(RewritePattern):
    """A scan along an axis of size 1 is its operand: each element combines
    itself only (NumPy's running sum starts from the first element, so
    ``-0.0`` stays ``-0.0``)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScanOp, rewriter: PatternRewriter, /) -> None:
        if tensor_type(op.input).dims[op.axis_index] == 1:
            _replace(rewriter, op, op.input)


class ReduceMaxMinOfSplat(RewritePattern):
    """The max or min of a splat is the splat, provided the reduced axes are
    provably not empty (an empty max is an error at run time)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReduceOp, rewriter: PatternRewriter, /) -> None:
        constant = op.input.owner
        if (
            op.kind.data not in (ReductionKind.MAX, ReductionKind.MIN)
            or not isinstance(constant, ConstantOp)
            or not constant.is_splat
        ):
            return
        dims = tensor_type(op.input).dims
        reduced = [dims[axis] for axis in op.axis_list]
        if provable_in_scope(
            op, lambda facts: all(facts.prove_le(1, dim) for dim in reduced)
        ):
            _replace(rewriter, op, ConstantOp(constant.value, tensor_type(op.result)))


# --------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------


class IotaOfUnitAxis(RewritePattern):
    """An iota along an axis of size 1 is all zeros."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IotaOp, rewriter: PatternRewriter, /) -> None:
        result_type = tensor_type(op.result)
        if result_type.dims[op.axis.value.data] == 1:
            _replace(rewriter, op, ConstantOp.splat(0, result_type))


class ConstantDim(RewritePattern):
    """``graph.dim`` of a constant expression is a constant, when its element
    type holds the value (the interpreter fails otherwise)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DimOp, rewriter: PatternRewriter, /) -> None:
        value = op.value.data.constant
        element = _dtype(op.result).numpy
        if value is None or (
            element.kind == "i"
            and not np.iinfo(element).min <= value <= np.iinfo(element).max
        ):
            return
        _replace(rewriter, op, ConstantOp.splat(value, tensor_type(op.result)))


# --------------------------------------------------------------------------
# Structured control flow (graph.cond, graph.while, graph.for)
#
# Regions are isolated from above, so a value enters a loop only as a carry:
# a value the body uses but never changes is a carry the body yields back
# unchanged (a "pass-through" carry). The patterns below remove what no
# result needs, fold branches and loops whose outcome is known, and hoist
# work that depends only on pass-through carries out of the loop (it then
# enters as a pass-through carry of its own).
# --------------------------------------------------------------------------


def _insert_before(
    rewriter: PatternRewriter, op: Operation, new: Operation | Sequence[Operation]
) -> None:
    for created in [new] if isinstance(new, Operation) else new:
        rewriter.insert(created, InsertPoint.before(op))


def _inline_region(
    rewriter: PatternRewriter,
    op: Operation,
    block: Block,
    arguments: Sequence[SSAValue],
) -> list[SSAValue]:
    """Move ``block``'s ops before ``op`` with ``arguments`` for its block
    arguments; returns what its graph.yield yielded (the yield is erased)."""
    terminator = yield_of(block)
    rewriter.inline_block(block, InsertPoint.before(op), arguments)
    values = list(terminator.values)
    rewriter.erase(terminator)
    return values


class CondConstantPredicate(RewritePattern):
    """``graph.cond`` of a constant predicate is the branch it selects,
    inlined."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CondOp, rewriter: PatternRewriter, /) -> None:
        predicate = _splat_array(op.pred)
        if predicate is None:
            return
        region = op.then_region if bool(predicate) else op.else_region
        values = _inline_region(rewriter, op, region.block, list(op.inputs))
        rewriter.replace(op, (), values)


class CondDeadValues(RewritePattern):
    """Drop the results of a ``graph.cond`` that nothing uses and the operands
    that neither branch reads."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CondOp, rewriter: PatternRewriter, /) -> None:
        blocks = (op.then_region.block, op.else_region.block)
        used_results = [i for i, r in enumerate(op.outputs) if r.uses]
        read_inputs = [
            i
            for i in range(len(op.inputs))
            if any(block.args[i].uses for block in blocks)
        ]
        if len(used_results) == len(op.outputs) and len(read_inputs) == len(op.inputs):
            return
        for block in blocks:
            terminator = yield_of(block)
            terminator.operands = [terminator.values[i] for i in used_results]
            for index in reversed(range(len(op.inputs))):
                if index not in read_inputs:
                    block.erase_arg(block.args[index])
        new = CondOp(
            op.pred,
            [op.inputs[i] for i in read_inputs],
            _take_region(op.then_region),
            _take_region(op.else_region),
            [op.outputs[i].type for i in used_results],
        )
        new.location = op.location
        results: list[SSAValue | None] = [None] * len(op.outputs)
        for position, index in enumerate(used_results):
            results[index] = new.outputs[position]
        rewriter.replace(op, new, results)


def _take_region(region: Region) -> Region:
    """``region``'s block, moved into a region of its own (for a new op)."""
    return Region(region.detach_block(region.block))


Loop = WhileOp | ForOp


def _loop_blocks(op: Loop) -> list[tuple[Block, int]]:
    """The loop's blocks, each with the index of its first carry argument."""
    if isinstance(op, ForOp):
        return [(op.body.block, 1)]
    return [(op.cond_region.block, 0), (op.body_region.block, 0)]


def _body(op: Loop) -> tuple[Block, int]:
    return _loop_blocks(op)[-1]


def _carries(op: Loop) -> Sequence[SSAValue]:
    return op.carries if isinstance(op, ForOp) else op.inputs


def _is_pass_through(op: Loop, index: int) -> bool:
    """Whether the body yields carry ``index``'s block argument back unchanged."""
    block, first = _body(op)
    return yield_of(block).values[index] == block.args[first + index]


def _rebuild_loop(
    rewriter: PatternRewriter,
    op: Loop,
    keep: Sequence[int],
    extra: Sequence[SSAValue] = (),
    keep_ys: Sequence[int] | None = None,
) -> list[list[SSAValue]]:
    """Replace ``op`` by a loop of the carries ``keep`` (whose block arguments
    must be unused or only yielded back in place) plus the pass-through
    carries ``extra`` (appended), and of the ys ``keep_ys`` (all by default).
    Returns, per block, the block arguments of the ``extra``."""
    count = len(_carries(op))
    ys_kept = list(range(len(op.outputs) - count)) if keep_ys is None else keep_ys
    extra_arguments: list[list[SSAValue]] = []
    for block, first in _loop_blocks(op):
        is_body = block is _body(op)[0]
        if is_body:
            terminator = yield_of(block)
            values = list(terminator.values)
            terminator.operands = [
                *(values[i] for i in keep),
                *(values[count + i] for i in ys_kept),
            ]
            _erase_unused(rewriter, block)
        for index in reversed(range(count)):
            if index not in keep:
                block.erase_arg(block.args[first + index])
        arguments = [
            block.insert_arg(value.type, first + len(keep) + offset)
            for offset, value in enumerate(extra)
        ]
        if is_body:
            terminator = yield_of(block)
            values = list(terminator.values)
            values[len(keep) : len(keep)] = arguments
            terminator.operands = values
        extra_arguments.append(arguments)
    carries = [*(_carries(op)[i] for i in keep), *extra]
    if isinstance(op, ForOp):
        new: Loop = ForOp(
            op.trip_count,
            carries,
            list(op.xs),
            _take_region(op.body),
            [op.ys[i].type for i in ys_kept],
            reverse=op.is_reverse,
        )
    else:
        new = WhileOp(
            carries, _take_region(op.cond_region), _take_region(op.body_region)
        )
    new.location = op.location
    new.attributes.update(op.attributes)  # an unrolled loop stays marked
    results: list[SSAValue | None] = [None] * len(op.outputs)
    for position, index in enumerate(keep):
        results[index] = new.outputs[position]
    for position, index in enumerate(ys_kept):
        results[count + index] = new.outputs[len(carries) + position]
    rewriter.replace(op, new, results)
    return extra_arguments


def _erase_unused(rewriter: PatternRewriter, block: Block) -> None:
    """Erase ``block``'s side-effect-free ops whose results nothing uses,
    last first (what computed a dropped carry or ys)."""
    for candidate in reversed(list(block.ops)):
        if (
            candidate is not block.last_op
            and not any(result.uses for result in candidate.results)
            and is_side_effect_free(candidate)
        ):
            rewriter.erase(candidate)


class LoopInvariantResult(RewritePattern):
    """The result of a pass-through carry is its initial value (a loop of no
    iterations gives it too)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Loop, rewriter: PatternRewriter, /) -> None:
        for index, carry in enumerate(_carries(op)):
            result = op.outputs[index]
            if result.uses and _is_pass_through(op, index):
                rewriter.replace_all_uses_with(result, carry)


class LoopDeadCarries(RewritePattern):
    """Drop the carries no result needs, and the ys that nothing uses.

    A carry is dead when its result is unused, a while's condition does not
    read it, and what the body computes from it feeds only the next values
    of dead carries (a counter nobody reads, an accumulator whose total is
    dropped): the largest such set, found by removing the carries that feed
    a live one until none does. The body's ops that computed only dead
    carries are deleted with them.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Loop, rewriter: PatternRewriter, /) -> None:
        count = len(_carries(op))
        ys = [i for i, y in enumerate(op.outputs[count:]) if y.uses]
        dead = _dead_carries(op, {count + i for i in ys})
        if not dead and len(ys) == len(op.outputs) - count:
            return
        body, first = _body(op)
        terminator = yield_of(body)
        # A dead carry yields its own argument back, so that what computed
        # its next value is unused: ``_rebuild_loop`` deletes it with the
        # unused ys, and drops the argument, then used by the yield alone.
        values = list(terminator.values)
        for index in dead:
            values[index] = body.args[first + index]
        terminator.operands = values
        keep = [i for i in range(count) if i not in dead]
        _rebuild_loop(rewriter, op, keep, keep_ys=ys)


def _dead_carries(op: Loop, live_yields: set[int]) -> set[int]:
    """The carries of ``op`` that no result needs (see ``LoopDeadCarries``);
    ``live_yields`` are the yield positions beyond the carries that are used
    (a for's used ys)."""
    count = len(_carries(op))
    body, first = _body(op)
    terminator = yield_of(body)
    reads_in_cond = set()
    if isinstance(op, WhileOp):
        cond_block = op.cond_region.block
        reads_in_cond = {i for i in range(count) if cond_block.args[i].uses}
    feeds = [_yield_positions(body.args[first + i], terminator) for i in range(count)]
    dead = {
        i for i in range(count) if not op.outputs[i].uses and i not in reads_in_cond
    }
    changed = True
    while changed:
        changed = False
        for index in sorted(dead):
            live = feeds[index] & (live_yields | (set(range(count)) - dead))
            if live:
                dead.discard(index)
                changed = True
    return dead


def _yield_positions(value: SSAValue, terminator: YieldOp) -> set[int]:
    """The operands of ``terminator`` that ``value`` flows into, through the
    ops of its block."""
    positions: set[int] = set()
    pending, seen = [value], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        for use in current.uses:
            if use.operation is terminator:
                positions.add(use.index)
            else:
                pending.extend(use.operation.results)
    return positions


class ForOfKnownLength(RewritePattern):
    """A ``graph.for`` of static length 0 gives its initial carries and empty
    ys; one of length 1 is its body, inlined on slice 0 of its xs."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter, /) -> None:
        length = op.trip_count.constant
        if length == 0:
            empty = [ConstantOp.splat(0, tensor_type(y)) for y in op.ys]
            _insert_before(rewriter, op, empty)
            rewriter.replace(op, (), [*op.carries, *(c.result for c in empty)])
        elif length == 1:
            self._inline_once(op, rewriter)

    @staticmethod
    def _inline_once(op: ForOp, rewriter: PatternRewriter) -> None:
        index = ConstantOp.splat(0, INDEX_TYPE)
        slices = [ReshapeOp(x, tensor_type(x).dims[1:]) for x in op.xs]
        created: list[Operation] = [index, *slices]
        for new in created:
            new.location = op.location
        _insert_before(rewriter, op, created)
        values = _inline_region(
            rewriter,
            op,
            op.body.block,
            [index.result, *op.carries, *(s.result for s in slices)],
        )
        count = len(op.carries)
        stacked = [
            ReshapeOp(y, tensor_type(r).dims) for y, r in zip(values[count:], op.ys)
        ]
        for new in stacked:
            new.location = op.location
        _insert_before(rewriter, op, stacked)
        rewriter.replace(op, (), [*values[:count], *(s.result for s in stacked)])


#: The ops ``HoistLoopInvariant`` moves: those that cannot fail at run time,
#: since a hoisted op runs even when the loop runs no iteration (a slice or
#: a take out of bounds, or a max over an empty axis, stay in the loop).
_HOISTABLE = (
    UnaryOp,
    BinaryOp,
    CompareOp,
    SelectOp,
    CastOp,
    BroadcastOp,
    ReshapeOp,
    TransposeOp,
    MatmulOp,
)

#: The reductions that have a value over an empty axis (their identity).
_TOTAL_REDUCTIONS = (ReductionKind.SUM, ReductionKind.PROD)


def _cannot_fail(op: Operation) -> bool:
    if isinstance(op, ReduceOp):
        return op.kind.data in _TOTAL_REDUCTIONS
    return isinstance(op, _HOISTABLE)


class HoistLoopInvariant(RewritePattern):
    """An op of a loop body whose operands are all pass-through carries (or
    constants of the body) computes the same value in every iteration: it
    moves before the loop, and its result enters as a pass-through carry.
    Ops without operands (constants, iota), and ops of constants only (a
    broadcast of a scalar), stay: hoisting them would only turn them into
    carries. Only ops that cannot fail are hoisted
    (``_cannot_fail``)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Loop, rewriter: PatternRewriter, /) -> None:
        block, first = _body(op)
        count = len(_carries(op))
        invariant = {
            block.args[first + i]: _carries(op)[i]
            for i in range(count)
            if _is_pass_through(op, i)
        }
        for candidate in block.ops:
            if self._hoistable(candidate, invariant, block):
                self._hoist(rewriter, op, candidate, invariant)
                return

    @staticmethod
    def _hoistable(
        candidate: Operation, invariant: dict[SSAValue, SSAValue], block: Block
    ) -> bool:
        if not _cannot_fail(candidate) or not candidate.operands:
            return False
        if not any(operand in invariant for operand in candidate.operands):
            return False  # of constants only: it folds, in the loop
        return all(
            operand in invariant
            or (
                isinstance(operand.owner, ConstantOp)
                and operand.owner.parent_block() is block
            )
            for operand in candidate.operands
        )

    @staticmethod
    def _hoist(
        rewriter: PatternRewriter,
        op: Loop,
        candidate: Operation,
        invariant: dict[SSAValue, SSAValue],
    ) -> None:
        outside: dict[SSAValue, SSAValue] = dict(invariant)
        for operand in candidate.operands:
            if operand not in outside:
                constant = operand.owner
                assert isinstance(constant, Operation)
                copy = constant.clone()
                _insert_before(rewriter, op, copy)
                outside[operand] = copy.results[0]
        hoisted = candidate.clone(value_mapper=outside)
        _insert_before(rewriter, op, hoisted)
        count = len(_carries(op))
        arguments = _rebuild_loop(
            rewriter, op, list(range(count)), list(hoisted.results)
        )
        for result, argument in zip(candidate.results, arguments[-1]):
            rewriter.replace_all_uses_with(result, argument)
        rewriter.erase(candidate)


# --------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------


def _registry() -> dict[type[Operation], tuple[RewritePattern, ...]]:
    """The patterns of the graph ops but the primitives' (``_primitive_patterns``)."""
    shape_of_splat, shape_of_dense = ShapeOfSplat(), ShapeOfDense()
    shape_to_same = ShapeToSameType()
    patterns: dict[type[Operation], Sequence[RewritePattern]] = {
        CompareOp: [FoldCompare(), CompareConstantRight(), CompareSameOperands()],
        SelectOp: [
            FoldElementwise(),
            SelectConstantCondition(),
            SelectSameValues(),
            SelectNotCondition(),
            SelectOfBools(),
        ],
        CastOp: [FoldCast(), CastToSameType(), CastOfExactCast()],
        ConstantOp: [DenseToSplat()],
        IotaOp: [IotaOfUnitAxis()],
        DimOp: [ConstantDim()],
        BroadcastOp: [
            shape_of_splat,
            shape_of_dense,
            shape_to_same,
            BroadcastOfBroadcast(),
        ],
        ReshapeOp: [shape_of_splat, shape_of_dense, shape_to_same, ReshapeOfReshape()],
        TransposeOp: [
            shape_of_splat,
            shape_of_dense,
            IdentityTranspose(),
            TransposeOfTranspose(),
        ],
        SliceOp: [SliceOfSplat(), FullSlice(), SliceOfInsert()],
        InsertSliceOp: [InsertCoveringDestination(), InsertOwnSlice()],
        ConcatOp: [ConcatDropEmpty(), ConcatOfConcat()],
        ReduceOp: [ReduceOneElement(), ReduceMaxMinOfSplat()],
        ScanOp: [ScanOfOneElement()],
        CondOp: [CondConstantPredicate(), CondDeadValues()],
        WhileOp: [LoopInvariantResult(), LoopDeadCarries(), HoistLoopInvariant()],
        ForOp: [
            ForOfKnownLength(),
            LoopInvariantResult(),
            LoopDeadCarries(),
            HoistLoopInvariant(),
        ],
    }
    return {op: tuple(rewrites) for op, rewrites in patterns.items()}


_PATTERNS = _registry()


_FOLD, _COMMUTE = FoldElementwise(), MoveConstantRight()
_OF_CONCATS = ElementwiseOfConcats()


@cache
def _primitive_patterns(kind: Primitive) -> tuple[RewritePattern, ...]:
    """Constant folding, then (if it commutes) constants to the right, then
    the identities its declaration states, in their order."""
    commute = (_COMMUTE,) if kind.commutative else ()
    identities = tuple(ApplyIdentity(identity) for identity in kind.identities)
    return (_FOLD, *commute, *identities)


def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns rooted at ``op_type`` (none for ops
    without any)."""
    if issubclass(op_type, BinaryOp):
        return (*_primitive_patterns(op_type.KIND), _OF_CONCATS)
    if issubclass(op_type, UnaryOp):
        return _primitive_patterns(op_type.KIND)
    return _PATTERNS.get(op_type, ())
