"""The graph dialect: value-semantic tensor operations over symbolic shapes.

This is irc's highest level. A captured Python function becomes a ``func.func``
whose arguments and results are ``!graph.tensor`` values and whose body holds
the primitive ops below. Shapes are lists of symbolic dimensions
(``!graph.tensor<[N, 4], f32>``); every op verifies its shapes symbolically.

Conventions that keep later levels simple:

- Elementwise ops take operands of one and the same type: capture inserts
  explicit ``graph.broadcast`` and ``graph.cast`` ops (NumPy's implicit
  broadcasting and type promotion happen at capture time, visibly in the IR).
- Reductions, arg-reductions and slices carry their axes and offsets as
  properties (i64 integers); ``keepdims`` is not stored, it is read off the
  result type.
- Facts about symbols that could not be proven at compile time are
  ``sym.guard`` ops (``irc.dialects.sym``, the home of symbolic sizes at
  every level); later passes may assume them, the runtime checks them.
- Every op is ``Pure``, with MLIR's meaning: running it
  has no effect besides its results, so an op whose results are unused may
  be deleted even where running it would fail (a slice out of bounds, the
  max of an empty axis). A failure is observable only through a result
  that is used.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import ClassVar, TypeGuard, cast

import numpy as np
import numpy.typing as npt
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    UnitAttr,
    i64,
)
from xdsl.dialects.builtin import TensorType as BuiltinTensorType
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    RangeOf,
    RangeVarConstraint,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    irdl_custom_directive,
)
from xdsl.parser import AttrParser, Parser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    RecursiveMemoryEffect,
)
from xdsl.utils.exceptions import VerifyException

from irc.dialects.elementwise import (
    ComparisonPredicate,
    ComparisonPredicateAttr,
    ReductionKind,
    ReductionKindAttr,
)
from irc.dialects.sym import (
    NO_FACTS,
    SymExprAttr,
    SymExprList,
    SymExprValue,
    expr_array,
    facts_in_scope,
    parse_sym_expr_list,
    product,
    provable_in_scope,
    shape_text,
)
from irc.dialects.syntax import InputTypes
from irc.dtypes import (
    ELEMENT_TYPES,
    dtype,
    is_bool_type,
    is_float_type,
    is_int_type,
    verify_element_kind,
)
from irc.primitives import builtin
from irc.primitives.declaration import Primitive, on_declare
from irc.shapes import Dim, Facts, ShapeError, SymExpr

# --------------------------------------------------------------------------
# Element types and the tensor type
# --------------------------------------------------------------------------


@irdl_attr_definition
class TensorType(ParametrizedAttribute, TypeAttribute):
    """A tensor with symbolic dims: ``!graph.tensor<[N, D], f32>``.

    Dims are symbolic expressions (constants included); a rank-0 tensor is
    ``!graph.tensor<[], f32>``. The brackets keep the lexer from reading
    ``Nx4xf32`` as one identifier, as MLIR's spelling would.
    """

    name = "graph.tensor"

    shape: ArrayAttr[SymExprAttr]
    element_type: Attribute

    def __init__(self, shape: Iterable[Dim | str], element_type: Attribute):
        super().__init__(expr_array(shape), element_type)

    @property
    def dims(self) -> tuple[SymExpr, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def rank(self) -> int:
        return len(self.shape.data)

    @property
    def static_shape(self) -> tuple[int, ...] | None:
        """The shape as ints when no dim is symbolic, else None."""
        sizes = [dim.constant for dim in self.dims]
        if any(size is None for size in sizes):
            return None
        return tuple(size for size in sizes if size is not None)

    def with_shape(self, shape: Iterable[Dim | str]) -> TensorType:
        return TensorType(shape, self.element_type)

    def with_element_type(self, element_type: Attribute) -> TensorType:
        return TensorType(self.dims, element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims = parse_sym_expr_list(parser)
            parser.parse_punctuation(",")
            start = parser.pos
            element_type = parser.parse_type()
            if element_type not in ELEMENT_TYPES:
                parser.raise_error(_element_type_error(element_type), start, parser.pos)
        return (expr_array(dims), element_type)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{shape_text(self.dims)}, ")
        printer.print_attribute(self.element_type)
        printer.print_string(">")

    def verify(self) -> None:
        if self.element_type not in ELEMENT_TYPES:
            raise VerifyException(_element_type_error(self.element_type))
        for dim in self.dims:
            if NO_FACTS.prove_lt(dim, SymExpr.const(0)):
                raise VerifyException(f"dim {dim} of {self.name} is negative")


def _element_type_error(element_type: Attribute) -> str:
    supported = ", ".join(str(t) for t in ELEMENT_TYPES)
    return (
        f"unsupported element type {element_type} in graph.tensor; "
        f"supported: {supported}"
    )


def tensor_type(value: SSAValue) -> TensorType:
    value_type = value.type
    assert isinstance(value_type, TensorType), "verified by the op's constraints"
    return value_type


def _check_axes(axes: Sequence[int], rank: int, what: str) -> None:
    for axis in axes:
        if not 0 <= axis < rank:
            raise VerifyException(f"{what} {axis} is out of range for rank {rank}")
    if len(set(axes)) != len(axes):
        raise VerifyException(f"{what} list {shape_text(axes)} repeats an axis")


def _dims_equal(op: Operation, lhs: SymExpr, rhs: SymExpr) -> bool:
    return lhs == rhs or facts_in_scope(op).prove_eq(lhs, rhs)


# --------------------------------------------------------------------------
# Custom directives of the ops' assembly formats (with ``irc.dialects.sym``'s
# ``SymExprValue`` and ``SymExprList`` for expressions)
# --------------------------------------------------------------------------

_I64_VALUES = range(-(2**63), 2**63)


def _parse_i64(parser: Parser) -> int:
    start = parser.pos
    value = parser.parse_integer(allow_boolean=False)
    if value not in _I64_VALUES:
        parser.raise_error(f"{value} does not fit in i64", start, parser.pos)
    return value


def _parse_int_list(parser: Parser) -> list[int]:
    """``[i, j, ...]``: axes, a permutation or strides (i64 each)."""
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: _parse_i64(parser)
    )


def _i64_array(values: Iterable[int]) -> DenseArrayBase[I64]:
    return DenseArrayBase.from_list(i64, list(values))


@irdl_custom_directive
class I64List(CustomDirective):
    """``[0, 2]``: axes, a permutation or strides, a ``DenseArrayBase[I64]``
    property. Unlike xDSL's directive for a plain ``$axes``, it rejects
    ``true`` and ``false`` and says which integer does not fit in i64 (where
    xDSL's fails inside ``struct.pack``)."""

    values: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.values.set(state, _i64_array(_parse_int_list(parser)))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        values = self.values.get(op)
        assert isinstance(values, DenseArrayBase), "verified"
        printer.print_string(shape_text(cast(Sequence[int], values.get_values())))


@irdl_custom_directive
class SingleAxis(CustomDirective):
    """``[1]``: an op of one axis (an ``IntegerAttr[I64]`` property) spells it
    as a list, like the ops of several axes."""

    axis: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        start = parser.pos
        axes = _parse_int_list(parser)
        if len(axes) != 1:
            parser.raise_error(
                f"{state.op_type.name} takes exactly one axis", start, parser.pos
            )
        self.axis.set(state, IntegerAttr(axes[0], i64))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        axis = self.axis.get(op)
        assert isinstance(axis, IntegerAttr), "verified"
        printer.print_string(f"[{axis.value.data}]")


@irdl_custom_directive
class ComparisonType(CustomDirective):
    """``!graph.tensor<[N], f32>``: the type of a comparison's operands,
    from which its result type follows (the same shape, of bools)."""

    operand: TypeDirective
    result: TypeDirective

    def parse(self, parser: Parser, state: ParsingState) -> None:
        start = parser.pos
        operand_type = parser.parse_type()
        if not isinstance(operand_type, TensorType):
            parser.raise_error(
                f"{state.op_type.name} compares !graph.tensor values, not "
                f"{operand_type}",
                start,
            )
        self.operand.set(state, (operand_type,))
        self.result.set(state, (operand_type.with_element_type(IntegerType(1)),))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_attribute(self.operand.get(op)[0])


# --------------------------------------------------------------------------
# Enumerations
# --------------------------------------------------------------------------


#: The kinds ``graph.reduce`` takes (argmax is ``graph.argmax``).
REDUCE_KINDS: tuple[ReductionKind, ...] = tuple(
    kind for kind in ReductionKind if kind is not ReductionKind.ARGMAX
)


# --------------------------------------------------------------------------
# Elementwise ops
# --------------------------------------------------------------------------


class GraphCanonicalization(HasCanonicalizationPatternsTrait):
    """Joins graph ops to xDSL's ``canonicalize`` pass with the patterns in
    ``irc.passes.graph_canonicalization`` (looked up per op class)."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from irc.passes.graph_canonicalization import patterns_for

        return patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()


class GraphOp(IRDLOperation):
    """Base of the value-semantic graph ops: ``Pure`` (no side effects, so
    dead-code elimination may delete one whose results are unused, even one
    that would fail at run time)."""

    traits = traits_def(Pure(), GraphCanonicalization())


class UnaryOp(GraphOp):
    """``%y = graph.<fn> %x : T``: an elementwise function of one tensor."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)

    assembly_format = "$input attr-dict `:` type($result)"

    #: What the op computes: its primitive (``irc.primitives``), which also
    #: says which element kinds it is defined on.
    KIND: ClassVar[Primitive]

    def __init__(self, value: SSAValue | Operation):
        value = SSAValue.get(value)
        super().__init__(operands=[value], result_types=[value.type])

    def verify_(self) -> None:
        element_type = tensor_type(self.input).element_type
        verify_element_kind(self.name, element_type, self.KIND.domain)


class BinaryOp(GraphOp):
    """``%z = graph.<fn> %x, %y : T``: operands and result share one type."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    #: What the op computes, as ``UnaryOp.KIND``.
    KIND: ClassVar[Primitive]

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        element_type = tensor_type(self.lhs).element_type
        verify_element_kind(self.name, element_type, self.KIND.domain)


def _op_class_name(primitive: Primitive) -> str:
    name = primitive.op_name.removeprefix("graph.")
    return "".join(part.capitalize() for part in name.split("_")) + "Op"


@cache
def elementwise_op(primitive: Primitive) -> type[UnaryOp | BinaryOp]:
    """The graph op of ``primitive`` (``graph.exp``), generated from its
    declaration."""
    base = UnaryOp if primitive.arity == 1 else BinaryOp
    namespace = {
        "__doc__": primitive.summary,
        "__module__": __name__,
        "__annotations__": {"KIND": ClassVar[Primitive]},
        "name": primitive.op_name,
        "KIND": primitive,
    }
    return irdl_op_definition(type(_op_class_name(primitive), (base,), namespace))


# The op classes of irc's own primitives under Python names, for isinstance
# tests and pattern annotations (``graph.AddOp``); any primitive's class is
# ``elementwise_op(primitive)``.
NegOp = elementwise_op(builtin.NEG)
AbsOp = elementwise_op(builtin.ABS)
ExpOp = elementwise_op(builtin.EXP)
LogOp = elementwise_op(builtin.LOG)
SqrtOp = elementwise_op(builtin.SQRT)
RsqrtOp = elementwise_op(builtin.RSQRT)
TanhOp = elementwise_op(builtin.TANH)
SigmoidOp = elementwise_op(builtin.SIGMOID)
ErfOp = elementwise_op(builtin.ERF)
SinOp = elementwise_op(builtin.SIN)
CosOp = elementwise_op(builtin.COS)
FloorOp = elementwise_op(builtin.FLOOR)
CeilOp = elementwise_op(builtin.CEIL)
TruncOp = elementwise_op(builtin.TRUNC)
RintOp = elementwise_op(builtin.RINT)
Log1pOp = elementwise_op(builtin.LOG1P)
Expm1Op = elementwise_op(builtin.EXPM1)
Log2Op = elementwise_op(builtin.LOG2)
Log10Op = elementwise_op(builtin.LOG10)
SinhOp = elementwise_op(builtin.SINH)
CoshOp = elementwise_op(builtin.COSH)
AtanOp = elementwise_op(builtin.ATAN)
AsinOp = elementwise_op(builtin.ASIN)
AcosOp = elementwise_op(builtin.ACOS)
NotOp = elementwise_op(builtin.NOT)
AddOp = elementwise_op(builtin.ADD)
SubOp = elementwise_op(builtin.SUB)
MulOp = elementwise_op(builtin.MUL)
DivOp = elementwise_op(builtin.DIV)
FloorDivOp = elementwise_op(builtin.FLOORDIV)
RemOp = elementwise_op(builtin.REM)
PowOp = elementwise_op(builtin.POW)
MaximumOp = elementwise_op(builtin.MAX)
MinimumOp = elementwise_op(builtin.MIN)
AndOp = elementwise_op(builtin.AND)
OrOp = elementwise_op(builtin.OR)
XorOp = elementwise_op(builtin.XOR)
Atan2Op = elementwise_op(builtin.ATAN2)


def elementwise(primitive: Primitive, *operands: SSAValue | Operation) -> GraphOp:
    """A new ``graph.<primitive>`` op of ``operands``."""
    return elementwise_op(primitive)(*operands)


def is_elementwise_op(
    op: Operation, *kinds: Primitive
) -> TypeGuard[UnaryOp | BinaryOp]:
    """Whether ``op`` is the graph op of a primitive (of one of ``kinds``)."""
    return isinstance(op, UnaryOp | BinaryOp) and (not kinds or op.KIND in kinds)


@irdl_op_definition
class CompareOp(GraphOp):
    """``%m = graph.cmp lt, %x, %y : T``: an elementwise comparison to bool."""

    name = "graph.cmp"

    T: ClassVar = VarConstraint("T", base(TensorType))
    predicate = prop_def(ComparisonPredicateAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(TensorType)

    assembly_format = (
        "$predicate `,` $lhs `,` $rhs attr-dict `:` "
        "custom<ComparisonType>(type($lhs), type($result))"
    )
    custom_directives = (ComparisonType,)

    def __init__(
        self,
        predicate: ComparisonPredicate | str,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
    ):
        lhs = SSAValue.get(lhs)
        super().__init__(
            operands=[lhs, rhs],
            properties={
                "predicate": ComparisonPredicateAttr(ComparisonPredicate(predicate))
            },
            result_types=[tensor_type(lhs).with_element_type(IntegerType(1))],
        )

    def verify_(self) -> None:
        expected = tensor_type(self.lhs).with_element_type(IntegerType(1))
        if self.result.type != expected:
            raise VerifyException(f"result type must be {expected}")


@irdl_op_definition
class SelectOp(GraphOp):
    """``%z = graph.select %cond, %a, %b : T``: ``np.where`` on same shapes."""

    name = "graph.select"

    T: ClassVar = VarConstraint("T", base(TensorType))
    condition = operand_def(TensorType)
    true_value = operand_def(T)
    false_value = operand_def(T)
    result = result_def(T)

    assembly_format = (
        "$condition `,` $true_value `,` $false_value attr-dict `:` "
        "type($condition) `,` type($result)"
    )

    def __init__(
        self,
        condition: SSAValue | Operation,
        true_value: SSAValue | Operation,
        false_value: SSAValue | Operation,
    ):
        true_value = SSAValue.get(true_value)
        super().__init__(
            operands=[condition, true_value, false_value],
            result_types=[true_value.type],
        )

    def verify_(self) -> None:
        condition = tensor_type(self.condition)
        result = tensor_type(self.result)
        if not is_bool_type(condition.element_type):
            raise VerifyException("select condition must be a bool (i1) tensor")
        if condition.dims != result.dims:
            raise VerifyException(
                f"select condition shape {shape_text(condition.dims)} differs "
                f"from the value shape {shape_text(result.dims)}"
            )


@irdl_op_definition
class CastOp(GraphOp):
    """``%y = graph.cast %x : T1 -> T2``: element type conversion (NumPy astype)."""

    name = "graph.cast"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue | Operation, element_type: Attribute):
        value = SSAValue.get(value)
        super().__init__(
            operands=[value],
            result_types=[tensor_type(value).with_element_type(element_type)],
        )

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        if source.dims != result.dims:
            raise VerifyException("cast must not change the shape")


# --------------------------------------------------------------------------
# Sources: constants and iota
# --------------------------------------------------------------------------


def scalar_attr(
    value: npt.ArrayLike, element_type: Attribute
) -> FloatAttr | IntegerAttr:
    """The value of a splat ``graph.constant`` of ``element_type``: ``value``
    (a number or a 0-d array) converted as ``np.asarray(value, dtype)``
    converts it, so the IR holds what the program computes with (``0.1``
    rounded to f32, a float truncated to an integer, ``-1`` as ``true``).
    Raises ``OverflowError`` for a Python int out of an integer type's range.
    """
    scalar = np.asarray(value, dtype(element_type).numpy)
    if is_float_type(element_type):
        return FloatAttr(float(scalar), element_type)
    return IntegerAttr(int(scalar), element_type)


@irdl_op_definition
class ConstantOp(GraphOp):
    """A constant: a scalar splatted over a (possibly symbolic) shape, or a
    small dense literal of static shape.

    ``%c = graph.constant 5.000000e-01 : f32 -> !graph.tensor<[N], f32>``
    ``%c = graph.constant dense<[1, 2]> : tensor<2xi64> -> !graph.tensor<[2], i64>``
    """

    name = "graph.constant"

    value = prop_def(base(FloatAttr) | base(IntegerAttr) | DenseIntOrFPElementsAttr)
    result = result_def(TensorType)

    assembly_format = "$value attr-dict `->` type($result)"

    def __init__(self, value: Attribute, result_type: TensorType):
        super().__init__(properties={"value": value}, result_types=[result_type])

    @classmethod
    def splat(cls, value: npt.ArrayLike, result_type: TensorType) -> ConstantOp:
        """``value`` at every index of ``result_type``, converted to its
        element type as ``scalar_attr`` converts it."""
        return cls(scalar_attr(value, result_type.element_type), result_type)

    @classmethod
    def dense(cls, array: np.ndarray) -> ConstantOp:
        """A dense literal holding ``array``, of its static shape and of the
        element type of its dtype (``irc.dtypes.dtype``)."""
        element_type = dtype(array.dtype).ir_type
        wide = np.float64 if is_float_type(element_type) else np.int64
        literal = DenseIntOrFPElementsAttr.from_list(
            BuiltinTensorType(element_type, array.shape),
            array.astype(wide).ravel().tolist(),
        )
        return cls(literal, TensorType(array.shape, element_type))

    @property
    def is_splat(self) -> bool:
        return not isinstance(self.value, DenseIntOrFPElementsAttr)

    def literal(self) -> np.ndarray:
        """The constant's elements in its element type's NumPy dtype: the
        whole array of a dense literal, or a 0-d array holding a splat's
        scalar (whatever the result's possibly symbolic shape)."""
        numpy_dtype = dtype(tensor_type(self.result).element_type).numpy
        if isinstance(self.value, DenseIntOrFPElementsAttr):
            values = np.array(self.value.get_values(), numpy_dtype)
            return values.reshape(self.value.get_shape())
        return np.array(self.value.value.data, numpy_dtype)

    def verify_(self) -> None:
        result = tensor_type(self.result)
        if isinstance(self.value, DenseIntOrFPElementsAttr):
            value_type = self.value.get_element_type()
            literal_shape = tuple(self.value.get_shape())
            if literal_shape != result.dims:
                raise VerifyException(
                    f"dense literal of shape {shape_text(literal_shape)} does not "
                    f"match result shape {shape_text(result.dims)}"
                )
        else:
            value_type = self.value.type
        if value_type != result.element_type:
            raise VerifyException(
                f"constant of type {value_type} cannot produce a tensor of "
                f"{result.element_type}"
            )


@irdl_op_definition
class IotaOp(GraphOp):
    """``%i = graph.iota [0] : !graph.tensor<[N], i64>``: indices along an axis.

    With a result rank above one, the indices are broadcast along the other
    axes (as ``np.arange`` followed by a broadcast).
    """

    name = "graph.iota"

    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)

    assembly_format = "custom<SingleAxis>($axis) attr-dict `:` type($result)"
    custom_directives = (SingleAxis,)

    def __init__(self, axis: int, result_type: TensorType):
        super().__init__(
            properties={"axis": IntegerAttr(axis, i64)}, result_types=[result_type]
        )

    def verify_(self) -> None:
        result = tensor_type(self.result)
        _check_axes([self.axis.value.data], result.rank, "iota axis")
        if is_bool_type(result.element_type):
            raise VerifyException("iota cannot produce bool indices")


@irdl_op_definition
class DimOp(GraphOp):
    """``%n = graph.dim D*N : !graph.tensor<[], f32>``: the value of a
    symbolic expression as a rank-0 tensor (``x.sum() / x.shape[0]``)."""

    name = "graph.dim"

    value = prop_def(SymExprAttr)
    result = result_def(TensorType)

    assembly_format = "custom<SymExprValue>($value) attr-dict `:` type($result)"
    custom_directives = (SymExprValue,)

    def __init__(self, value: Dim | str, element_type: Attribute):
        super().__init__(
            properties={"value": SymExprAttr.get(value)},
            result_types=[TensorType([], element_type)],
        )

    def verify_(self) -> None:
        result = tensor_type(self.result)
        if result.rank != 0 or is_bool_type(result.element_type):
            raise VerifyException("graph.dim produces a rank-0 number tensor")


# --------------------------------------------------------------------------
# Shape ops
# --------------------------------------------------------------------------


@irdl_op_definition
class BroadcastOp(GraphOp):
    """``%y = graph.broadcast %x : T1 -> T2``: ``np.broadcast_to`` semantics.

    Dims are aligned from the right; each input dim equals the output dim or
    is 1, and the output may add leading dims.
    """

    name = "graph.broadcast"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue | Operation, shape: Iterable[Dim | str]):
        value = SSAValue.get(value)
        super().__init__(
            operands=[value], result_types=[tensor_type(value).with_shape(shape)]
        )

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        if source.element_type != result.element_type:
            raise VerifyException("broadcast must not change the element type")
        if source.rank > result.rank:
            raise VerifyException(
                f"cannot broadcast rank {source.rank} to rank {result.rank}"
            )
        offset = result.rank - source.rank
        for index, dim in enumerate(source.dims):
            target = result.dims[offset + index]
            if dim != 1 and not _dims_equal(self, dim, target):
                raise VerifyException(
                    f"cannot broadcast {shape_text(source.dims)} to "
                    f"{shape_text(result.dims)}: dim {index} is {dim}, "
                    f"neither 1 nor {target}"
                )


@irdl_op_definition
class ReshapeOp(GraphOp):
    """``%y = graph.reshape %x : T1 -> T2``: same elements, row-major order."""

    name = "graph.reshape"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue | Operation, shape: Iterable[Dim | str]):
        value = SSAValue.get(value)
        super().__init__(
            operands=[value], result_types=[tensor_type(value).with_shape(shape)]
        )

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        if source.element_type != result.element_type:
            raise VerifyException("reshape must not change the element type")
        source_size, result_size = product(source.dims), product(result.dims)
        if not _dims_equal(self, source_size, result_size):
            raise VerifyException(
                f"cannot reshape {shape_text(source.dims)} ({source_size} "
                f"elements) to {shape_text(result.dims)} ({result_size} elements)"
            )


@irdl_op_definition
class ReduceOp(GraphOp):
    """``%s = graph.reduce sum %x [1] : T1 -> T2``: reduce over a set of axes.

    The result either drops the reduced axes or keeps them as 1 (keepdims):
    the result type says which.
    """

    name = "graph.reduce"

    kind = prop_def(ReductionKindAttr)
    axes = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$kind $input custom<I64List>($axes) attr-dict `:` type($input) `->` "
        "type($result)"
    )
    custom_directives = (I64List,)

    def __init__(
        self,
        kind: ReductionKind | str,
        value: SSAValue | Operation,
        axes: Sequence[int],
        keepdims: bool = False,
    ):
        value = SSAValue.get(value)
        source = tensor_type(value)
        super().__init__(
            operands=[value],
            properties={
                "kind": ReductionKindAttr(ReductionKind(kind)),
                "axes": _i64_array(sorted(axes)),
            },
            result_types=[
                source.with_shape(reduced_shape(source.dims, axes, keepdims))
            ],
        )

    @property
    def axis_list(self) -> tuple[int, ...]:
        return self.axes.get_values()

    @property
    def keepdims(self) -> bool:
        return tensor_type(self.result).rank == tensor_type(self.input).rank

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        _check_axes(self.axis_list, source.rank, "reduction axis")
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(
                f"graph.reduce computes {', '.join(REDUCE_KINDS)}; "
                f"{self.kind.data} is graph.argmax"
            )
        if is_bool_type(source.element_type) and self.kind.data in (
            ReductionKind.SUM,
            ReductionKind.PROD,
        ):
            raise VerifyException(
                f"{self.kind.data} is not defined on bool tensors; cast them first"
            )
        if list(self.axis_list) != sorted(self.axis_list):
            raise VerifyException("reduction axes must be sorted")
        keepdims = result.rank == source.rank and bool(self.axis_list)
        expected = reduced_shape(source.dims, self.axis_list, keepdims)
        if result.dims != tuple(expected) or result.element_type != source.element_type:
            raise VerifyException(
                f"reducing {shape_text(source.dims)} over "
                f"{shape_text(self.axis_list)} gives "
                f"{source.with_shape(expected)}, not {result}"
            )


def reduced_shape(
    dims: Sequence[SymExpr], axes: Iterable[int], keepdims: bool
) -> list[SymExpr]:
    axes = set(axes)
    if keepdims:
        return [SymExpr.const(1) if i in axes else d for i, d in enumerate(dims)]
    return [d for i, d in enumerate(dims) if i not in axes]


@irdl_op_definition
class ArgMaxOp(GraphOp):
    """``%i = graph.argmax %x [1] : T1 -> T2``: index of the first maximum
    along one axis, as i64; keepdims is read off the result rank."""

    name = "graph.argmax"

    axis = prop_def(IntegerAttr[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$input custom<SingleAxis>($axis) attr-dict `:` type($input) `->` type($result)"
    )
    custom_directives = (SingleAxis,)

    def __init__(self, value: SSAValue | Operation, axis: int, keepdims: bool = False):
        value = SSAValue.get(value)
        source = tensor_type(value)
        shape = reduced_shape(source.dims, [axis], keepdims)
        super().__init__(
            operands=[value],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[TensorType(shape, i64)],
        )

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        axis = self.axis.value.data
        _check_axes([axis], source.rank, "argmax axis")
        keepdims = result.rank == source.rank
        expected = TensorType(reduced_shape(source.dims, [axis], keepdims), i64)
        if result != expected:
            raise VerifyException(f"argmax result must be {expected}, not {result}")


#: The kinds ``graph.scan`` takes: the folds whose running value NumPy
#: gives (``np.cumsum``, ``np.cumprod``).
SCAN_KINDS: tuple[ReductionKind, ...] = (ReductionKind.SUM, ReductionKind.PROD)


@irdl_op_definition
class ScanOp(GraphOp):
    """``%c = graph.scan sum %x [1] : T``: the inclusive scan (running sum or
    product) along one axis, ``np.cumsum``/``np.cumprod``: element ``i`` of
    the axis combines elements ``0..i``. The result has the operand's type
    (capture casts to NumPy's accumulation type first); 16-bit floats
    accumulate in float32 and round once per element, as ``graph.reduce``."""

    name = "graph.scan"

    T: ClassVar = VarConstraint("T", base(TensorType))
    kind = prop_def(ReductionKindAttr)
    axis = prop_def(IntegerAttr[I64])
    input = operand_def(T)
    result = result_def(T)

    assembly_format = (
        "$kind $input custom<SingleAxis>($axis) attr-dict `:` type($result)"
    )
    custom_directives = (SingleAxis,)

    def __init__(
        self, kind: ReductionKind | str, value: SSAValue | Operation, axis: int
    ):
        value = SSAValue.get(value)
        super().__init__(
            operands=[value],
            properties={
                "kind": ReductionKindAttr(ReductionKind(kind)),
                "axis": IntegerAttr(axis, i64),
            },
            result_types=[value.type],
        )

    @property
    def axis_index(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        source = tensor_type(self.input)
        _check_axes([self.axis_index], source.rank, "scan axis")
        if self.kind.data not in SCAN_KINDS:
            raise VerifyException(
                f"graph.scan computes {', '.join(SCAN_KINDS)}, not {self.kind.data}"
            )
        if is_bool_type(source.element_type):
            raise VerifyException(
                f"a {self.kind.data} scan is not defined on bool tensors; cast them "
                "first (NumPy accumulates them in int64)"
            )


@irdl_op_definition
class TransposeOp(GraphOp):
    """``%y = graph.transpose %x [1, 0] : T1 -> T2``: result dim i is input
    dim ``permutation[i]`` (``np.transpose`` semantics)."""

    name = "graph.transpose"

    permutation = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$input custom<I64List>($permutation) attr-dict `:` type($input) `->` "
        "type($result)"
    )
    custom_directives = (I64List,)

    def __init__(self, value: SSAValue | Operation, permutation: Sequence[int]):
        value = SSAValue.get(value)
        source = tensor_type(value)
        super().__init__(
            operands=[value],
            properties={"permutation": _i64_array(permutation)},
            result_types=[source.with_shape(source.dims[p] for p in permutation)],
        )

    @property
    def perm(self) -> tuple[int, ...]:
        return self.permutation.get_values()

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        if sorted(self.perm) != list(range(source.rank)):
            raise VerifyException(
                f"{shape_text(self.perm)} is not a permutation of {source.rank} axes"
            )
        expected = source.with_shape(source.dims[p] for p in self.perm)
        if result != expected:
            raise VerifyException(f"transpose result must be {expected}, not {result}")


def window_ranges(
    offsets: Sequence[SymExpr], strides: Sequence[int], sizes: Sequence[SymExpr]
) -> list[tuple[SymExpr, SymExpr]]:
    """Per axis, the lowest and the highest index of the elements ``offset +
    k * stride`` for ``k < size`` (the highest one below the lowest when the
    size is 0): the window ``graph.slice`` reads and ``graph.insert_slice``
    writes."""
    ranges = []
    for offset, stride, size in zip(offsets, strides, sizes):
        last = offset + (size - 1) * stride
        ranges.append((offset, last) if stride > 0 else (last, offset))
    return ranges


def window_in_bounds(
    facts: Facts,
    ranges: Sequence[tuple[SymExpr, SymExpr]],
    extents: Sequence[SymExpr],
) -> bool:
    """Whether ``facts`` prove every window range inside its extent."""
    return all(
        facts.prove_le(0, low) and facts.prove_lt(high, extent)
        for (low, high), extent in zip(ranges, extents)
    )


@irdl_op_definition
class SliceOp(GraphOp):
    """``%y = graph.slice %x [0, 2] [1, 2] : T1 -> T2``: a strided window.

    Along axis i the result takes ``result.dims[i]`` elements of the input at
    ``offsets[i] + k * strides[i]``. Offsets may be symbolic; strides are
    non-zero integers (negative ones walk backwards, as ``x[::-1]``).
    Bounds that cannot be proven at compile time are stated by guards.
    """

    name = "graph.slice"

    offsets = prop_def(ArrayAttr[SymExprAttr])
    strides = prop_def(DenseArrayBase[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$input custom<SymExprList>($offsets) custom<I64List>($strides) attr-dict "
        "`:` type($input) `->` type($result)"
    )
    custom_directives = (SymExprList, I64List)

    def __init__(
        self,
        value: SSAValue | Operation,
        offsets: Sequence[Dim | str],
        sizes: Sequence[Dim | str],
        strides: Sequence[int],
    ):
        value = SSAValue.get(value)
        super().__init__(
            operands=[value],
            properties={
                "offsets": expr_array(offsets),
                "strides": _i64_array(strides),
            },
            result_types=[tensor_type(value).with_shape(sizes)],
        )

    @property
    def offset_list(self) -> tuple[SymExpr, ...]:
        return tuple(o.data for o in self.offsets.data)

    @property
    def stride_list(self) -> tuple[int, ...]:
        return self.strides.get_values()

    def index_ranges(self) -> list[tuple[SymExpr, SymExpr]]:
        """The lowest and the highest index the slice reads along each axis
        (for a slice of size 0, the highest is one below the lowest)."""
        return window_ranges(
            self.offset_list, self.stride_list, tensor_type(self.result).dims
        )

    def provably_in_bounds(self) -> bool:
        """Whether every index the slice reads provably lies inside its
        operand, under the guards in scope."""
        extents = tensor_type(self.input).dims
        return provable_in_scope(
            self, lambda facts: window_in_bounds(facts, self.index_ranges(), extents)
        )

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        if result.element_type != source.element_type:
            raise VerifyException("slice must not change the element type")
        if (
            not len(self.offset_list)
            == len(self.stride_list)
            == source.rank
            == result.rank
        ):
            raise VerifyException(
                f"slice of a rank-{source.rank} tensor needs {source.rank} offsets, "
                f"strides and result dims"
            )
        for axis, stride in enumerate(self.stride_list):
            if stride == 0:
                raise VerifyException(f"slice stride of axis {axis} is zero")
        if window_in_bounds(NO_FACTS, self.index_ranges(), source.dims):
            return
        facts = facts_in_scope(self)
        for axis, ((low, high), extent) in enumerate(
            zip(self.index_ranges(), source.dims)
        ):
            if facts.prove_lt(low, 0) or facts.prove_lt(extent, high + 1):
                raise VerifyException(
                    f"slice of axis {axis} reads [{low}, {high}], outside "
                    f"[0, {extent - 1}]"
                )


@irdl_op_definition
class InsertSliceOp(GraphOp):
    """``%y = graph.insert_slice %v into %x [0, 2] [1, 2] : T1 -> T2``: ``x``
    with a strided window replaced by ``v`` (MLIR's ``tensor.insert_slice``;
    NumPy's ``x[a:b, ::2] = v`` as a value).

    Along axis i, element ``k`` of the source lands at ``offsets[i] + k *
    strides[i]`` of the destination; every other element is the
    destination's. Offsets, strides and their bounds follow ``graph.slice``:
    the window ``graph.slice %y`` with the same offsets and strides reads is
    exactly the one written, and it must lie inside the destination.
    """

    name = "graph.insert_slice"

    T: ClassVar = VarConstraint("T", base(TensorType))
    offsets = prop_def(ArrayAttr[SymExprAttr])
    strides = prop_def(DenseArrayBase[I64])
    source = operand_def(TensorType)
    dest = operand_def(T)
    result = result_def(T)

    assembly_format = (
        "$source `into` $dest custom<SymExprList>($offsets) custom<I64List>($strides) "
        "attr-dict `:` type($source) `->` type($dest)"
    )
    custom_directives = (SymExprList, I64List)

    def __init__(
        self,
        source: SSAValue | Operation,
        dest: SSAValue | Operation,
        offsets: Sequence[Dim | str],
        strides: Sequence[int],
    ):
        dest = SSAValue.get(dest)
        super().__init__(
            operands=[source, dest],
            properties={
                "offsets": expr_array(offsets),
                "strides": _i64_array(strides),
            },
            result_types=[dest.type],
        )

    @property
    def offset_list(self) -> tuple[SymExpr, ...]:
        return tuple(o.data for o in self.offsets.data)

    @property
    def stride_list(self) -> tuple[int, ...]:
        return self.strides.get_values()

    def index_ranges(self) -> list[tuple[SymExpr, SymExpr]]:
        """The lowest and the highest index written along each axis (for a
        window of size 0, the highest is one below the lowest)."""
        return window_ranges(
            self.offset_list, self.stride_list, tensor_type(self.source).dims
        )

    def provably_in_bounds(self) -> bool:
        """Whether every index the window writes provably lies inside the
        destination, under the guards in scope."""
        extents = tensor_type(self.dest).dims
        return provable_in_scope(
            self, lambda facts: window_in_bounds(facts, self.index_ranges(), extents)
        )

    def covers_destination(self) -> bool:
        """Whether the window is the whole destination, in order."""
        return tensor_type(self.source) == tensor_type(self.dest) and all(
            offset == 0 and stride == 1
            for offset, stride in zip(self.offset_list, self.stride_list)
        )

    def verify_(self) -> None:
        source, dest = tensor_type(self.source), tensor_type(self.dest)
        if source.element_type != dest.element_type:
            raise VerifyException(
                f"insert_slice source element type {source.element_type} differs "
                f"from the destination's {dest.element_type}"
            )
        if (
            not len(self.offset_list)
            == len(self.stride_list)
            == source.rank
            == (dest.rank)
        ):
            raise VerifyException(
                f"insert_slice into a rank-{dest.rank} tensor needs a rank-"
                f"{dest.rank} source and {dest.rank} offsets and strides"
            )
        for axis, stride in enumerate(self.stride_list):
            if stride == 0:
                raise VerifyException(f"insert_slice stride of axis {axis} is zero")
        facts = facts_in_scope(self)
        for axis, ((low, high), extent) in enumerate(
            zip(self.index_ranges(), dest.dims)
        ):
            if facts.prove_lt(high, low):
                continue  # an empty window writes nothing
            if facts.prove_lt(low, 0) or facts.prove_lt(extent, high + 1):
                raise VerifyException(
                    f"insert_slice into axis {axis} writes [{low}, {high}], "
                    f"outside [0, {extent - 1}]"
                )


@irdl_op_definition
class ConcatOp(GraphOp):
    """``%y = graph.concat %a, %b [0] : (T1, T2) -> T3``: join along one axis."""

    name = "graph.concat"

    axis = prop_def(IntegerAttr[I64])
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$inputs custom<SingleAxis>($axis) attr-dict `:` "
        "custom<InputTypes>(ref($inputs), type($inputs)) `->` type($result)"
    )
    custom_directives = (SingleAxis, InputTypes)

    def __init__(self, values: Sequence[SSAValue | Operation], axis: int):
        values = [SSAValue.get(v) for v in values]
        first = tensor_type(values[0])
        length = sum((tensor_type(v).dims[axis] for v in values), SymExpr.const(0))
        shape = list(first.dims)
        shape[axis] = length
        super().__init__(
            operands=[values],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[first.with_shape(shape)],
        )

    def verify_(self) -> None:
        result = tensor_type(self.result)
        axis = self.axis.value.data
        _check_axes([axis], result.rank, "concat axis")
        if not self.inputs:
            raise VerifyException("concat needs at least one operand")
        total = SymExpr.const(0)
        for index, value in enumerate(self.inputs):
            part = tensor_type(value)
            if part.rank != result.rank or part.element_type != result.element_type:
                raise VerifyException(
                    f"concat operand {index} has type {part}, incompatible with {result}"
                )
            for dim_index, (dim, expected) in enumerate(zip(part.dims, result.dims)):
                if dim_index != axis and not _dims_equal(self, dim, expected):
                    raise VerifyException(
                        f"concat operand {index} has dim {dim_index} = {dim}, "
                        f"expected {expected}"
                    )
            total = total + part.dims[axis]
        if not _dims_equal(self, total, result.dims[axis]):
            raise VerifyException(
                f"concat result has {result.dims[axis]} along axis {axis}, "
                f"operands add up to {total}"
            )


@irdl_op_definition
class TakeOp(GraphOp):
    """``%y = graph.take %table, %idx [0] : (T, I) -> R``: ``np.take`` along an
    axis: the result shape is ``T[:axis] + I + T[axis+1:]``. Indices must be in
    range (negative indices are not wrapped)."""

    name = "graph.take"

    axis = prop_def(IntegerAttr[I64])
    table = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$table `,` $indices custom<SingleAxis>($axis) attr-dict `:` "
        "functional-type(operands, $result)"
    )
    custom_directives = (SingleAxis,)

    def __init__(
        self, table: SSAValue | Operation, indices: SSAValue | Operation, axis: int
    ):
        table, indices = SSAValue.get(table), SSAValue.get(indices)
        table_type = tensor_type(table)
        shape = (
            table_type.dims[:axis]
            + tensor_type(indices).dims
            + table_type.dims[axis + 1 :]
        )
        super().__init__(
            operands=[table, indices],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[table_type.with_shape(shape)],
        )

    def verify_(self) -> None:
        table, indices = tensor_type(self.table), tensor_type(self.indices)
        axis = self.axis.value.data
        _check_axes([axis], table.rank, "take axis")
        if not is_int_type(indices.element_type):
            raise VerifyException(
                f"take indices must be i32 or i64, got {indices.element_type}"
            )
        expected = table.with_shape(
            table.dims[:axis] + indices.dims + table.dims[axis + 1 :]
        )
        if self.result.type != expected:
            raise VerifyException(f"take result must be {expected}")


@irdl_op_definition
class MatmulOp(GraphOp):
    """``%c = graph.matmul %a, %b : (T1, T2) -> T3``: ``a @ b`` on rank >= 2.

    The last two dims multiply as matrices (``[.., M, K] @ [.., K, N]``);
    leading batch dims broadcast as in NumPy. Capture reshapes 1-D operands.
    """

    name = "graph.matmul"

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` "
        "type($result)"
    )

    #: The element kinds matmul is defined on (``irc.dtypes.DType.kind``).
    ELEMENT_KINDS: ClassVar[frozenset[str]] = frozenset("if")

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs, rhs = SSAValue.get(lhs), SSAValue.get(rhs)
        lhs_type, rhs_type = tensor_type(lhs), tensor_type(rhs)
        batch = broadcast_shapes(lhs_type.dims[:-2], rhs_type.dims[:-2])
        shape = [*batch, lhs_type.dims[-2], rhs_type.dims[-1]]
        super().__init__(operands=[lhs, rhs], result_types=[lhs_type.with_shape(shape)])

    def verify_(self) -> None:
        lhs, rhs = tensor_type(self.lhs), tensor_type(self.rhs)
        result = tensor_type(self.result)
        if lhs.rank < 2 or rhs.rank < 2:
            raise VerifyException("matmul operands must have rank >= 2")
        if not lhs.element_type == rhs.element_type == result.element_type:
            raise VerifyException("matmul operands and result must share a type")
        verify_element_kind(self.name, lhs.element_type, self.ELEMENT_KINDS)
        if not _dims_equal(self, lhs.dims[-1], rhs.dims[-2]):
            raise VerifyException(
                f"matmul contraction dims differ: {lhs.dims[-1]} (lhs) vs "
                f"{rhs.dims[-2]} (rhs)"
            )
        try:
            batch = broadcast_shapes(lhs.dims[:-2], rhs.dims[:-2])
        except ShapeError as err:
            raise VerifyException(str(err)) from err
        expected = [*batch, lhs.dims[-2], rhs.dims[-1]]
        if list(result.dims) != expected:
            raise VerifyException(
                f"matmul result shape must be {shape_text(expected)}, "
                f"not {shape_text(result.dims)}"
            )


def broadcast_shapes(
    lhs: Sequence[SymExpr], rhs: Sequence[SymExpr], facts: Facts = NO_FACTS
) -> list[SymExpr]:
    """NumPy's broadcasting of two shapes; raises ``ShapeError`` on a mismatch.

    Two symbolic dims are compatible only when they are provably equal (or
    one is the constant 1): broadcasting ``N`` against ``M`` is an error.
    """
    rank = max(len(lhs), len(rhs))
    padded_lhs = [SymExpr.const(1)] * (rank - len(lhs)) + list(lhs)
    padded_rhs = [SymExpr.const(1)] * (rank - len(rhs)) + list(rhs)
    shape = []
    for a, b in zip(padded_lhs, padded_rhs):
        if a == b or b == 1:
            shape.append(a)
        elif a == 1:
            shape.append(b)
        elif facts.prove_eq(a, b):
            shape.append(a)
        else:
            raise ShapeError(
                f"shapes {shape_text(lhs)} and {shape_text(rhs)} do not "
                f"broadcast: {a} vs {b} (declare them equal, or broadcast "
                "explicitly)"
            )
    return shape


@irdl_op_definition
class ScatterAddOp(GraphOp):
    """``%t = graph.scatter_add %updates, %idx [0] : (U, I) -> T``: the
    adjoint of ``graph.take``: zeros of type ``T`` to which each slice of
    ``updates`` along ``axis`` is added at its index (``np.add.at``), so
    duplicate indices accumulate. ``U`` is ``T[:axis] + I + T[axis+1:]``, the
    type of ``take`` of a ``T`` by ``I``; indices must lie in
    ``[0, T.dims[axis])``, as ``take``'s do.
    """

    name = "graph.scatter_add"

    axis = prop_def(IntegerAttr[I64])
    updates = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$updates `,` $indices custom<SingleAxis>($axis) attr-dict `:` "
        "functional-type(operands, $result)"
    )
    custom_directives = (SingleAxis,)

    #: The element kinds scatter_add accumulates (``irc.dtypes.DType.kind``).
    ELEMENT_KINDS: ClassVar[frozenset[str]] = frozenset("if")

    def __init__(
        self,
        updates: SSAValue | Operation,
        indices: SSAValue | Operation,
        axis: int,
        result_type: TensorType,
    ):
        super().__init__(
            operands=[updates, indices],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[result_type],
        )

    def verify_(self) -> None:
        result, indices = tensor_type(self.result), tensor_type(self.indices)
        axis = self.axis.value.data
        _check_axes([axis], result.rank, "scatter_add axis")
        if not is_int_type(indices.element_type):
            raise VerifyException(
                f"scatter_add indices must be i32 or i64, got {indices.element_type}"
            )
        verify_element_kind(self.name, result.element_type, self.ELEMENT_KINDS)
        expected = result.with_shape(
            result.dims[:axis] + indices.dims + result.dims[axis + 1 :]
        )
        if self.updates.type != expected:
            raise VerifyException(
                f"scatter_add updates must be {expected} (take's result type for "
                f"this result and these indices), not {self.updates.type}"
            )


# --------------------------------------------------------------------------
# Structured control flow (jax.lax semantics; docs/control-flow.md)
#
# Three region ops and their terminator. Each region is isolated from above:
# values enter only as operands, which become the entry block's arguments,
# so that every region is a self-contained graph body (as a fusion.kernel's
# is) that passes and the fusion pass can treat as a straight-line function.
# --------------------------------------------------------------------------

#: The type of a predicate and of graph.for's iteration index.
PREDICATE_TYPE = TensorType([], IntegerType(1))
INDEX_TYPE = TensorType([], i64)


def _type_list(types: Iterable[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


def _verify_region(
    op: Operation,
    region: Region,
    region_name: str,
    argument_types: Sequence[Attribute],
    yield_types: Sequence[Attribute],
) -> None:
    """``region`` takes ``argument_types`` and yields ``yield_types``."""
    where = f"{op.name} {region_name} region"
    block = region.block
    actual_arguments = [arg.type for arg in block.args]
    if actual_arguments != list(argument_types):
        raise VerifyException(
            f"{where} takes {_type_list(actual_arguments)} but must take "
            f"{_type_list(argument_types)}"
        )
    terminator = block.last_op
    if not isinstance(terminator, YieldOp):
        raise VerifyException(f"{where} must end with graph.yield")
    yielded = [value.type for value in terminator.values]
    if yielded != list(yield_types):
        raise VerifyException(
            f"{where} yields {_type_list(yielded)} but must yield "
            f"{_type_list(yield_types)}"
        )


def _verify_predicate_type(op: Operation, what: str, value_type: Attribute) -> None:
    if value_type != PREDICATE_TYPE:
        raise VerifyException(
            f"{op.name} {what} must be a 0-d bool tensor {PREDICATE_TYPE}, "
            f"not {value_type}"
        )


class ControlFlowOp(IRDLOperation):
    """Base of the region ops: without effects of their own (an unused one may
    be deleted, as a ``Pure`` op may) and canonicalised by the patterns of
    ``irc.passes.graph_canonicalization``."""

    traits = traits_def(
        IsolatedFromAbove(), RecursiveMemoryEffect(), GraphCanonicalization()
    )


@irdl_op_definition
class CondOp(ControlFlowOp):
    """``irc.cond(pred, true_fn, false_fn, *operands)``::

        %r = graph.cond %p (%a) : !graph.tensor<[], i1>, (T) -> (R) {
        ^bb0(%x: T):
          graph.yield %u : R
        } else {
        ^bb0(%x: T):
          graph.yield %v : R
        }

    Runs the first region when ``pred`` (a 0-d i1 tensor) is true, the
    second otherwise, on the operands; both take the operands' types and
    yield the result types.
    """

    name = "graph.cond"

    pred = operand_def(TensorType)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    then_region = region_def("single_block")
    else_region = region_def("single_block")

    assembly_format = (
        "$pred ` ` `(` $inputs `)` `:` type($pred) `,` "
        "custom<InputTypes>(ref($inputs), type($inputs)) `->` `(` type($outputs) `)` "
        "attr-dict-with-keyword $then_region `else` $else_region"
    )
    custom_directives = (InputTypes,)

    def __init__(
        self,
        pred: SSAValue,
        inputs: Sequence[SSAValue],
        then_region: Region,
        else_region: Region,
        result_types: Sequence[Attribute],
    ):
        super().__init__(
            operands=[pred, inputs],
            result_types=[result_types],
            regions=[then_region, else_region],
        )

    def verify_(self) -> None:
        _verify_predicate_type(self, "predicate", self.pred.type)
        inputs = [value.type for value in self.inputs]
        outputs = [value.type for value in self.outputs]
        _verify_region(self, self.then_region, "then", inputs, outputs)
        _verify_region(self, self.else_region, "else", inputs, outputs)


@irdl_op_definition
class WhileOp(ControlFlowOp):
    """``irc.while_loop(cond_fn, body_fn, init)``::

        %r:2 = graph.while (%a, %b) : (T0, T1) cond {
        ^bb0(%x: T0, %y: T1):
          graph.yield %p : !graph.tensor<[], i1>
        } body {
        ^bb0(%x: T0, %y: T1):
          graph.yield %x2, %y2 : T0, T1
        }

    While ``cond`` yields true on the carries, ``body`` replaces them; the
    results are the last carries. Carries keep their types. A loop that
    ``unroll-while`` unrolled has the attribute ``unrolled`` (its factor:
    each run of its body is that many of the user's iterations).
    """

    name = "graph.while"

    T: ClassVar = RangeVarConstraint("T", RangeOf(base(TensorType)))
    inputs = var_operand_def(T)
    outputs = var_result_def(T)
    cond_region = region_def("single_block")
    body_region = region_def("single_block")

    assembly_format = (
        "` ` `(` $inputs `)` `:` custom<InputTypes>(ref($inputs), type($inputs)) "
        "attr-dict-with-keyword `cond` $cond_region `body` $body_region"
    )
    custom_directives = (InputTypes,)

    def __init__(
        self, inputs: Sequence[SSAValue], cond_region: Region, body_region: Region
    ):
        super().__init__(
            operands=[inputs],
            result_types=[[value.type for value in inputs]],
            regions=[cond_region, body_region],
        )

    def verify_(self) -> None:
        carries = [value.type for value in self.inputs]
        _verify_region(self, self.cond_region, "cond", carries, [PREDICATE_TYPE])
        _verify_region(self, self.body_region, "body", carries, carries)


#: The attribute of a ``graph.while`` that ``unroll-while`` unrolled.
UNROLLED_ATTRIBUTE = "unrolled"


def unroll_factor(loop: WhileOp) -> int:
    """How many of the user's iterations one run of ``loop``'s body is."""
    factor = loop.attributes.get(UNROLLED_ATTRIBUTE)
    return factor.value.data if isinstance(factor, IntegerAttr) else 1


MAX_TRIP_COUNT = 2**63 - 1
"""The most iterations a graph.for may have: its index is an i64."""


@irdl_op_definition
class ForOp(ControlFlowOp):
    """A counted loop: ``irc.scan(f, init, xs)`` and ``irc.fori_loop``::

        %r:2 = graph.for N carries (%c) : (T) xs (%xs) : (!graph.tensor<[N, D], f32>)
            -> (T, !graph.tensor<[N, E], f32>) {
        ^bb0(%i: !graph.tensor<[], i64>, %c0: T, %x: !graph.tensor<[D], f32>):
          graph.yield %c1, %y : T, !graph.tensor<[E], f32>
        }

    ``length`` iterations (a symbolic expression), each on the carries and
    one slice of every ``xs`` along its leading axis (which must be
    ``length``), yielding the next carries and one slice of every ``ys``;
    the results are the last carries, then the ``ys`` stacked along a new
    leading axis of size ``length``. The first block argument is the
    iteration index (0 to length-1, or length-1 down to 0 with ``reverse``,
    as ``lax.scan(reverse=True)``), which is also the slice taken and
    written.
    """

    name = "graph.for"

    length = prop_def(SymExprAttr)
    reverse = opt_prop_def(UnitAttr)
    carries = var_operand_def(TensorType)
    xs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = (
        "custom<SymExprValue>($length) (`reverse` $reverse^)? "
        "`carries` ` ` `(` $carries `)` `:` custom<InputTypes>(ref($carries), type($carries)) "
        "`xs` ` ` `(` $xs `)` `:` custom<InputTypes>(ref($xs), type($xs)) "
        "`->` `(` type($outputs) `)` attr-dict-with-keyword $body"
    )
    custom_directives = (SymExprValue, InputTypes)

    def __init__(
        self,
        length: Dim,
        carries: Sequence[SSAValue],
        xs: Sequence[SSAValue],
        body: Region,
        ys_types: Sequence[TensorType],
        reverse: bool = False,
    ):
        """``ys_types`` are the stacked types (leading dim ``length``)."""
        properties: dict[str, Attribute] = {"length": SymExprAttr.get(length)}
        if reverse:
            properties["reverse"] = UnitAttr()
        super().__init__(
            operands=[carries, xs],
            result_types=[[*(value.type for value in carries), *ys_types]],
            properties=properties,
            regions=[body],
        )

    @property
    def trip_count(self) -> SymExpr:
        return self.length.data

    @property
    def is_reverse(self) -> bool:
        return self.reverse is not None

    @property
    def carry_results(self) -> Sequence[SSAValue]:
        return self.outputs[: len(self.carries)]

    @property
    def ys(self) -> Sequence[SSAValue]:
        return self.outputs[len(self.carries) :]

    def verify_(self) -> None:
        length = self.trip_count
        if NO_FACTS.prove_lt(length, SymExpr.const(0)):
            raise VerifyException(f"graph.for length {length} is negative")
        count = length.constant
        if count is not None and count > MAX_TRIP_COUNT:
            raise VerifyException(
                f"graph.for length {length} is more than {MAX_TRIP_COUNT}, the "
                "most iterations its i64 index counts; split the loop in two"
            )
        carries = [value.type for value in self.carries]
        slices = [self._slice_type(index, value) for index, value in enumerate(self.xs)]
        outputs = [value.type for value in self.outputs]
        if len(outputs) < len(carries) or outputs[: len(carries)] != carries:
            raise VerifyException(
                f"graph.for results {_type_list(outputs)} must begin with the "
                f"carries' types {_type_list(carries)}"
            )
        ys_slices = [self._ys_slice_type(t) for t in outputs[len(carries) :]]
        _verify_region(
            self,
            self.body,
            "body",
            [INDEX_TYPE, *carries, *slices],
            carries + ys_slices,
        )

    def _slice_type(self, index: int, value: SSAValue) -> TensorType:
        xs_type = tensor_type(value)
        if xs_type.rank == 0 or not _dims_equal(self, xs_type.dims[0], self.trip_count):
            raise VerifyException(
                f"graph.for xs {index} has type {xs_type}, whose leading dim must "
                f"be the length {self.trip_count}"
            )
        return xs_type.with_shape(xs_type.dims[1:])

    def _ys_slice_type(self, ys_type: Attribute) -> TensorType:
        if (
            not isinstance(ys_type, TensorType)
            or ys_type.rank == 0
            or not _dims_equal(self, ys_type.dims[0], self.trip_count)
        ):
            raise VerifyException(
                f"graph.for ys result {ys_type} must have the length "
                f"{self.trip_count} as its leading dim"
            )
        return ys_type.with_shape(ys_type.dims[1:])


@irdl_op_definition
class YieldOp(IRDLOperation):
    """``graph.yield %a, %b : T1, T2``: what a region of graph.cond,
    graph.while or graph.for gives back to its op."""

    name = "graph.yield"

    values = var_operand_def(TensorType)

    traits = lazy_traits_def(
        lambda: (HasParent(CondOp, WhileOp, ForOp), IsTerminator(), Pure())
    )

    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])


#: The region ops, for passes that treat them together.
CONTROL_FLOW_OPS: tuple[type[ControlFlowOp], ...] = (CondOp, WhileOp, ForOp)


def yield_of(block: Block) -> YieldOp:
    """The ``graph.yield`` ending ``block``, a verified region op's block."""
    terminator = block.last_op
    assert isinstance(terminator, YieldOp), "verified"
    return terminator


#: The dialect's ops: the graph op of every primitive, now and declared later,
#: and the others.
_OPERATIONS: list[type[Operation]] = [
    CompareOp,
    SelectOp,
    CastOp,
    ConstantOp,
    IotaOp,
    DimOp,
    BroadcastOp,
    ReshapeOp,
    ReduceOp,
    ArgMaxOp,
    ScanOp,
    TransposeOp,
    SliceOp,
    InsertSliceOp,
    ConcatOp,
    TakeOp,
    MatmulOp,
    ScatterAddOp,
    CondOp,
    WhileOp,
    ForOp,
    YieldOp,
]
on_declare(lambda primitive: _OPERATIONS.append(elementwise_op(primitive)))

Graph = Dialect("graph", _OPERATIONS, [TensorType])
