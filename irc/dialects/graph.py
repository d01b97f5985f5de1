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
  properties; ``keepdims`` is not stored, it is read off the result type.
- Facts about symbols that could not be proven at compile time are
  ``graph.guard`` ops; later passes may assume them, the runtime checks them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Data,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from irc.shapes import Dim, Facts, ShapeError, SymExpr, as_expr, smax, smin

# --------------------------------------------------------------------------
# Symbolic expressions inside xDSL's parser and printer
# --------------------------------------------------------------------------

_BINARY_KEYWORDS = ("floordiv", "ceildiv", "mod")


def parse_sym_expr(parser: AttrParser) -> SymExpr:
    """Parse a symbolic dimension expression from xDSL's token stream.

    The grammar is the one ``str(SymExpr)`` prints: ``+ - *`` with the usual
    precedence, ``floordiv``/``ceildiv``/``mod`` at the precedence of ``*``,
    ``max(a, b)``, ``min(a, b)``, integers, symbol names and parentheses.
    """
    start = parser.pos
    try:
        return _parse_sum(parser)
    except ShapeError as err:
        parser.raise_error(f"invalid shape expression: {err}", start, parser.pos)


def _parse_sum(parser: AttrParser) -> SymExpr:
    value = (
        -_parse_product(parser)
        if parser.parse_optional_punctuation("-")
        else _parse_product(parser)
    )
    while True:
        if parser.parse_optional_punctuation("+"):
            value = value + _parse_product(parser)
        elif parser.parse_optional_punctuation("-"):
            value = value - _parse_product(parser)
        else:
            return value


def _parse_product(parser: AttrParser) -> SymExpr:
    # `**` lexes as two `*` tokens, so the power binds to the last factor
    # only: the product is kept as `done * last`.
    done, last = SymExpr.const(1), _parse_atom(parser)
    while True:
        if parser.parse_optional_punctuation("*"):
            if parser.parse_optional_punctuation("*"):
                last = _power(last, parser.parse_integer(False, False))
            else:
                done, last = done * last, _parse_atom(parser)
        elif parser.parse_optional_keyword("floordiv"):
            done, last = SymExpr.const(1), (done * last) // _parse_atom(parser)
        elif parser.parse_optional_keyword("ceildiv"):
            done, last = SymExpr.const(1), (done * last).ceildiv(_parse_atom(parser))
        elif parser.parse_optional_keyword("mod"):
            done, last = SymExpr.const(1), (done * last) % _parse_atom(parser)
        else:
            return done * last


def _power(value: SymExpr, exponent: int) -> SymExpr:
    result = SymExpr.const(1)
    for _ in range(exponent):
        result = result * value
    return result


def _parse_atom(parser: AttrParser) -> SymExpr:
    if parser.parse_optional_punctuation("-"):
        return -_parse_atom(parser)
    if (value := parser.parse_optional_integer(False, False)) is not None:
        return SymExpr.const(value)
    if parser.parse_optional_punctuation("("):
        inner = _parse_sum(parser)
        parser.parse_punctuation(")")
        return inner
    for name, combine in (("max", smax), ("min", smin)):
        if parser.parse_optional_keyword(name):
            parser.parse_punctuation("(")
            lhs = _parse_sum(parser)
            parser.parse_punctuation(",")
            rhs = _parse_sum(parser)
            parser.parse_punctuation(")")
            return combine(lhs, rhs)
    name = parser.parse_optional_identifier()
    if name is None or name in _BINARY_KEYWORDS:
        parser.raise_error("expected a shape expression (integer, symbol or '(')")
    return SymExpr.symbol(name)


def parse_sym_expr_list(parser: AttrParser) -> list[SymExpr]:
    """Parse ``[e1, e2, ...]``."""
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parse_sym_expr(parser)
    )


def print_dim_list(printer: Printer, dims: Iterable[SymExpr | int]) -> None:
    printer.print_string("[" + ", ".join(str(d) for d in dims) + "]")


@irdl_attr_definition
class SymExprAttr(Data[SymExpr]):
    """One symbolic dimension or index, e.g. ``#graph.expr<N * 4 + 1>``."""

    name = "graph.expr"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> SymExpr:
        with parser.in_angle_brackets():
            return parse_sym_expr(parser)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data}>")

    @staticmethod
    def get(value: Dim | str) -> SymExprAttr:
        return SymExprAttr(as_expr(value))


def _expr_array(values: Iterable[Dim | str]) -> ArrayAttr[SymExprAttr]:
    return ArrayAttr(SymExprAttr.get(v) for v in values)


# --------------------------------------------------------------------------
# Element types and the tensor type
# --------------------------------------------------------------------------

ELEMENT_TYPES: tuple[Attribute, ...] = (
    IntegerType(1),
    IntegerType(32),
    IntegerType(64),
    Float16Type(),
    BFloat16Type(),
    Float32Type(),
    Float64Type(),
)


def is_float_type(element_type: Attribute) -> bool:
    return isinstance(
        element_type, Float16Type | BFloat16Type | Float32Type | Float64Type
    )


def is_bool_type(element_type: Attribute) -> bool:
    return element_type == IntegerType(1)


def is_int_type(element_type: Attribute) -> bool:
    """Integer types proper (bool is its own kind, as in NumPy)."""
    return isinstance(element_type, IntegerType) and element_type.width.data > 1


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
        super().__init__(_expr_array(shape), element_type)

    @property
    def dims(self) -> tuple[SymExpr, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def rank(self) -> int:
        return len(self.shape.data)

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
        return (_expr_array(dims), element_type)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        print_dim_list(printer, self.dims)
        printer.print_string(", ")
        printer.print_attribute(self.element_type)
        printer.print_string(">")

    def verify(self) -> None:
        if self.element_type not in ELEMENT_TYPES:
            raise VerifyException(_element_type_error(self.element_type))
        for dim in self.dims:
            if _NO_FACTS.prove_lt(dim, SymExpr.const(0)):
                raise VerifyException(f"dim {dim} of {self.name} is negative")


_NO_FACTS = Facts()


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


def _shape_text(dims: Iterable[SymExpr]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def _check_axes(axes: Sequence[int], rank: int, what: str) -> None:
    for axis in axes:
        if not 0 <= axis < rank:
            raise VerifyException(f"{what} {axis} is out of range for rank {rank}")
    if len(set(axes)) != len(axes):
        raise VerifyException(f"{what} list {list(axes)} repeats an axis")


def facts_in_scope(op: Operation) -> Facts:
    """The facts stated by guard ops in the blocks enclosing ``op``.

    Only used on verifiers' slow paths (when a shape relation does not hold
    in the fact-free canonical form), so a linear scan is fine.
    """
    facts: list[str] = []
    block = op.parent_block()
    while block is not None:
        facts.extend(str(g.fact) for g in block.ops if isinstance(g, GuardOp))
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return Facts(facts)


def _dims_equal(op: Operation, lhs: SymExpr, rhs: SymExpr) -> bool:
    return lhs == rhs or facts_in_scope(op).prove_eq(lhs, rhs)


# --------------------------------------------------------------------------
# Enumerations
# --------------------------------------------------------------------------


class ReductionKind(StrEnum):
    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"


@irdl_attr_definition
class ReductionKindAttr(EnumAttribute[ReductionKind], SpacedOpaqueSyntaxAttribute):
    name = "graph.reduction_kind"


class ComparisonPredicate(StrEnum):
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"


@irdl_attr_definition
class ComparisonPredicateAttr(
    EnumAttribute[ComparisonPredicate], SpacedOpaqueSyntaxAttribute
):
    name = "graph.predicate"


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
    """Base of the value-semantic graph ops (all side-effect free)."""

    traits = traits_def(Pure(), GraphCanonicalization())


class UnaryOp(GraphOp):
    """``%y = graph.<fn> %x : T``: an elementwise function of one tensor."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)

    assembly_format = "$input attr-dict `:` type($result)"

    #: Which element kinds the function is defined on.
    FLOATS_ONLY: ClassVar[bool] = True

    def __init__(self, value: SSAValue | Operation):
        value = SSAValue.get(value)
        super().__init__(operands=[value], result_types=[value.type])

    #: Whether the function is defined on bool tensors.
    ALLOWS_BOOL: ClassVar[bool] = False
    #: Whether the function is defined on floating-point tensors.
    ALLOWS_FLOAT: ClassVar[bool] = True

    def verify_(self) -> None:
        element_type = tensor_type(self.input).element_type
        allowed = (
            is_float_type(element_type)
            if self.FLOATS_ONLY
            else (
                is_int_type(element_type)
                or (self.ALLOWS_BOOL and is_bool_type(element_type))
                or (self.ALLOWS_FLOAT and is_float_type(element_type))
            )
        )
        if not allowed:
            raise VerifyException(
                f"{self.name} is not defined on {element_type} tensors; cast the "
                "operand first"
            )


@irdl_op_definition
class NegOp(UnaryOp):
    """Elementwise negation."""

    name = "graph.neg"

    FLOATS_ONLY: ClassVar[bool] = False


@irdl_op_definition
class AbsOp(UnaryOp):
    """Elementwise absolute value."""

    name = "graph.abs"

    FLOATS_ONLY: ClassVar[bool] = False
    ALLOWS_BOOL: ClassVar[bool] = True


@irdl_op_definition
class ExpOp(UnaryOp):
    """Elementwise e**x."""

    name = "graph.exp"


@irdl_op_definition
class LogOp(UnaryOp):
    """Elementwise natural logarithm."""

    name = "graph.log"


@irdl_op_definition
class SqrtOp(UnaryOp):
    """Elementwise square root."""

    name = "graph.sqrt"


@irdl_op_definition
class RsqrtOp(UnaryOp):
    """Elementwise 1/sqrt(x)."""

    name = "graph.rsqrt"


@irdl_op_definition
class TanhOp(UnaryOp):
    """Elementwise hyperbolic tangent."""

    name = "graph.tanh"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """Elementwise 1/(1+exp(-x))."""

    name = "graph.sigmoid"


@irdl_op_definition
class ErfOp(UnaryOp):
    """Elementwise error function."""

    name = "graph.erf"


@irdl_op_definition
class SinOp(UnaryOp):
    """Elementwise sine."""

    name = "graph.sin"


@irdl_op_definition
class CosOp(UnaryOp):
    """Elementwise cosine."""

    name = "graph.cos"


@irdl_op_definition
class FloorOp(UnaryOp):
    """Elementwise rounding towards -inf."""

    name = "graph.floor"


@irdl_op_definition
class NotOp(UnaryOp):
    """Elementwise logical (bool) or bitwise (ints) not."""

    name = "graph.not"

    FLOATS_ONLY: ClassVar[bool] = False
    ALLOWS_BOOL: ClassVar[bool] = True
    ALLOWS_FLOAT: ClassVar[bool] = False


UNARY_OPS: tuple[type[UnaryOp], ...] = (
    NegOp,
    AbsOp,
    ExpOp,
    LogOp,
    SqrtOp,
    RsqrtOp,
    TanhOp,
    SigmoidOp,
    ErfOp,
    SinOp,
    CosOp,
    FloorOp,
    NotOp,
)


class BinaryOp(GraphOp):
    """``%z = graph.<fn> %x, %y : T``: operands and result share one type."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    #: Whether the op is defined on bool tensors (logical ops) or not.
    ALLOWS_BOOL: ClassVar[bool] = False
    #: Whether the op is defined on integer tensors.
    ALLOWS_INT: ClassVar[bool] = True
    #: Whether the op is defined on floating-point tensors.
    ALLOWS_FLOAT: ClassVar[bool] = True

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        element_type = tensor_type(self.lhs).element_type
        if is_bool_type(element_type) and not self.ALLOWS_BOOL:
            raise VerifyException(
                f"{self.name} is not defined on bool tensors; cast them first"
            )
        if is_int_type(element_type) and not self.ALLOWS_INT:
            raise VerifyException(
                f"{self.name} is not defined on integer tensors; cast them first"
            )
        if is_float_type(element_type) and not self.ALLOWS_FLOAT:
            raise VerifyException(
                f"{self.name} is not defined on floating-point tensors"
            )


@irdl_op_definition
class AddOp(BinaryOp):
    """Elementwise sum."""

    name = "graph.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """Elementwise difference."""

    name = "graph.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """Elementwise product."""

    name = "graph.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """Elementwise true division (floats only)."""

    name = "graph.div"

    ALLOWS_INT: ClassVar[bool] = False


@irdl_op_definition
class FloorDivOp(BinaryOp):
    """Elementwise floor division (Python ``//``)."""

    name = "graph.floordiv"


@irdl_op_definition
class RemOp(BinaryOp):
    """Elementwise modulo with the divisor's sign (Python ``%``)."""

    name = "graph.rem"


@irdl_op_definition
class PowOp(BinaryOp):
    """Elementwise power."""

    name = "graph.pow"


@irdl_op_definition
class MaximumOp(BinaryOp):
    """Elementwise maximum (NaN-propagating)."""

    name = "graph.maximum"


@irdl_op_definition
class MinimumOp(BinaryOp):
    """Elementwise minimum (NaN-propagating)."""

    name = "graph.minimum"


@irdl_op_definition
class AndOp(BinaryOp):
    """Elementwise logical (bool) or bitwise (ints) and."""

    name = "graph.and"

    ALLOWS_BOOL: ClassVar[bool] = True
    ALLOWS_FLOAT: ClassVar[bool] = False


@irdl_op_definition
class OrOp(BinaryOp):
    """Elementwise logical (bool) or bitwise (ints) or."""

    name = "graph.or"

    ALLOWS_BOOL: ClassVar[bool] = True
    ALLOWS_FLOAT: ClassVar[bool] = False


@irdl_op_definition
class XorOp(BinaryOp):
    """Elementwise logical (bool) or bitwise (ints) exclusive or."""

    name = "graph.xor"

    ALLOWS_BOOL: ClassVar[bool] = True
    ALLOWS_FLOAT: ClassVar[bool] = False


BINARY_OPS: tuple[type[BinaryOp], ...] = (
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    FloorDivOp,
    RemOp,
    PowOp,
    MaximumOp,
    MinimumOp,
    AndOp,
    OrOp,
    XorOp,
)


@irdl_op_definition
class CompareOp(GraphOp):
    """``%m = graph.cmp lt, %x, %y : T``: an elementwise comparison to bool."""

    name = "graph.cmp"

    T: ClassVar = VarConstraint("T", base(TensorType))
    predicate = prop_def(ComparisonPredicateAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(TensorType)

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

    @classmethod
    def parse(cls, parser: Parser) -> CompareOp:
        predicate = ComparisonPredicateAttr.parse_parameter(parser)
        parser.parse_punctuation(",")
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        operand_type = parser.parse_type()
        lhs, rhs = parser.resolve_operands([lhs, rhs], [operand_type] * 2, parser.pos)
        op = cls(predicate, lhs, rhs)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.predicate.data}, ")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)

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
                f"select condition shape {_shape_text(condition.dims)} differs "
                f"from the value shape {_shape_text(result.dims)}"
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

    @property
    def is_splat(self) -> bool:
        return not isinstance(self.value, DenseIntOrFPElementsAttr)

    def verify_(self) -> None:
        result = tensor_type(self.result)
        if isinstance(self.value, DenseIntOrFPElementsAttr):
            value_type = self.value.get_element_type()
            literal_shape = tuple(self.value.get_shape())
            if literal_shape != result.dims:
                raise VerifyException(
                    f"dense literal of shape {list(literal_shape)} does not match "
                    f"result shape {_shape_text(result.dims)}"
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

    axis = prop_def(IntegerAttr[IntegerType])
    result = result_def(TensorType)

    def __init__(self, axis: int, result_type: TensorType):
        super().__init__(
            properties={"axis": IntegerAttr(axis, i64)}, result_types=[result_type]
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" [{self.axis.value.data}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> IotaOp:
        axes = _int_list(parser)
        if len(axes) != 1:
            parser.raise_error("graph.iota takes exactly one axis")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        return cls.create(
            properties={"axis": IntegerAttr(axes[0], i64)},
            result_types=[parser.parse_type()],
            attributes=attributes,
        )

    def verify_(self) -> None:
        result = tensor_type(self.result)
        _check_axes([self.axis.value.data], result.rank, "iota axis")
        if is_bool_type(result.element_type):
            raise VerifyException("iota cannot produce bool indices")


@irdl_op_definition
class DimOp(GraphOp):
    """``%n = graph.dim N * D : !graph.tensor<[], f32>``: the value of a
    symbolic expression as a rank-0 tensor (``x.sum() / x.shape[0]``)."""

    name = "graph.dim"

    value = prop_def(SymExprAttr)
    result = result_def(TensorType)

    def __init__(self, value: Dim | str, element_type: Attribute):
        super().__init__(
            properties={"value": SymExprAttr.get(value)},
            result_types=[TensorType([], element_type)],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.value.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> DimOp:
        value = parse_sym_expr(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        return cls.create(
            properties={"value": SymExprAttr(value)},
            result_types=[result_type],
            attributes=attributes,
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
                    f"cannot broadcast {_shape_text(source.dims)} to "
                    f"{_shape_text(result.dims)}: dim {index} is {dim}, "
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
        if not _dims_equal(self, product(source.dims), product(result.dims)):
            raise VerifyException(
                f"cannot reshape {_shape_text(source.dims)} "
                f"({product(source.dims)} elements) to {_shape_text(result.dims)} "
                f"({product(result.dims)} elements)"
            )


def product(dims: Iterable[SymExpr | int]) -> SymExpr:
    total = SymExpr.const(1)
    for dim in dims:
        total = total * dim
    return total


class _AxesOp(GraphOp):
    """Shared custom syntax for ops whose property is a list of axes:
    ``graph.<op> <axes...> %x [keyword list] : T1 -> T2``."""

    def _print_input_and_types(self, printer: Printer, value: SSAValue) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(value.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.results[0].type)

    @staticmethod
    def _parse_types(
        parser: Parser,
    ) -> tuple[dict[str, Attribute], Attribute, Attribute]:
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        input_type = parser.parse_type()
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        return attributes, input_type, result_type


def _int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
    )


def _axes_attr(axes: Iterable[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(axes))


@irdl_op_definition
class ReduceOp(_AxesOp):
    """``%s = graph.reduce sum %x [1] : T1 -> T2``: reduce over a set of axes.

    The result either drops the reduced axes or keeps them as 1 (keepdims):
    the result type says which.
    """

    name = "graph.reduce"

    kind = prop_def(ReductionKindAttr)
    axes = prop_def(DenseArrayBase)
    input = operand_def(TensorType)
    result = result_def(TensorType)

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
                "axes": _axes_attr(sorted(axes)),
            },
            result_types=[
                source.with_shape(reduced_shape(source.dims, axes, keepdims))
            ],
        )

    @property
    def axis_list(self) -> tuple[int, ...]:
        return tuple(self.axes.get_values())

    @property
    def keepdims(self) -> bool:
        return tensor_type(self.result).rank == tensor_type(self.input).rank

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} ")
        printer.print_operand(self.input)
        printer.print_string(" " + str(list(self.axis_list)))
        self._print_input_and_types(printer, self.input)

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        kind = ReductionKindAttr.parse_parameter(parser)
        operand = parser.parse_unresolved_operand()
        axes = _int_list(parser)
        attributes, input_type, result_type = cls._parse_types(parser)
        value = parser.resolve_operand(operand, input_type)
        op = cls.create(
            operands=[value],
            properties={"kind": ReductionKindAttr(kind), "axes": _axes_attr(axes)},
            result_types=[result_type],
            attributes=attributes,
        )
        return op

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        _check_axes(self.axis_list, source.rank, "reduction axis")
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
                f"reducing {_shape_text(source.dims)} over {list(self.axis_list)} "
                f"gives {source.with_shape(expected)}, not {result}"
            )


def reduced_shape(
    dims: Sequence[SymExpr], axes: Iterable[int], keepdims: bool
) -> list[SymExpr]:
    axes = set(axes)
    if keepdims:
        return [SymExpr.const(1) if i in axes else d for i, d in enumerate(dims)]
    return [d for i, d in enumerate(dims) if i not in axes]


@irdl_op_definition
class ArgMaxOp(_AxesOp):
    """``%i = graph.argmax %x [1] : T1 -> T2``: index of the first maximum
    along one axis, as i64; keepdims is read off the result rank."""

    name = "graph.argmax"

    axis = prop_def(IntegerAttr[IntegerType])
    input = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, value: SSAValue | Operation, axis: int, keepdims: bool = False):
        value = SSAValue.get(value)
        source = tensor_type(value)
        shape = reduced_shape(source.dims, [axis], keepdims)
        super().__init__(
            operands=[value],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[TensorType(shape, i64)],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(f" [{self.axis.value.data}]")
        self._print_input_and_types(printer, self.input)

    @classmethod
    def parse(cls, parser: Parser) -> ArgMaxOp:
        operand = parser.parse_unresolved_operand()
        axes = _int_list(parser)
        if len(axes) != 1:
            parser.raise_error("graph.argmax takes exactly one axis")
        attributes, input_type, result_type = cls._parse_types(parser)
        return cls.create(
            operands=[parser.resolve_operand(operand, input_type)],
            properties={"axis": IntegerAttr(axes[0], i64)},
            result_types=[result_type],
            attributes=attributes,
        )

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        axis = self.axis.value.data
        _check_axes([axis], source.rank, "argmax axis")
        keepdims = result.rank == source.rank
        expected = TensorType(reduced_shape(source.dims, [axis], keepdims), i64)
        if result != expected:
            raise VerifyException(f"argmax result must be {expected}, not {result}")


@irdl_op_definition
class TransposeOp(_AxesOp):
    """``%y = graph.transpose %x [1, 0] : T1 -> T2``: result dim i is input
    dim ``permutation[i]`` (``np.transpose`` semantics)."""

    name = "graph.transpose"

    permutation = prop_def(DenseArrayBase)
    input = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, value: SSAValue | Operation, permutation: Sequence[int]):
        value = SSAValue.get(value)
        source = tensor_type(value)
        super().__init__(
            operands=[value],
            properties={"permutation": _axes_attr(permutation)},
            result_types=[source.with_shape(source.dims[p] for p in permutation)],
        )

    @property
    def perm(self) -> tuple[int, ...]:
        return tuple(self.permutation.get_values())

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(" " + str(list(self.perm)))
        self._print_input_and_types(printer, self.input)

    @classmethod
    def parse(cls, parser: Parser) -> TransposeOp:
        operand = parser.parse_unresolved_operand()
        permutation = _int_list(parser)
        attributes, input_type, result_type = cls._parse_types(parser)
        return cls.create(
            operands=[parser.resolve_operand(operand, input_type)],
            properties={"permutation": _axes_attr(permutation)},
            result_types=[result_type],
            attributes=attributes,
        )

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        if sorted(self.perm) != list(range(source.rank)):
            raise VerifyException(
                f"{list(self.perm)} is not a permutation of {source.rank} axes"
            )
        expected = source.with_shape(source.dims[p] for p in self.perm)
        if result != expected:
            raise VerifyException(f"transpose result must be {expected}, not {result}")


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
    strides = prop_def(DenseArrayBase)
    input = operand_def(TensorType)
    result = result_def(TensorType)

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
                "offsets": _expr_array(offsets),
                "strides": _axes_attr(strides),
            },
            result_types=[tensor_type(value).with_shape(sizes)],
        )

    @property
    def offset_list(self) -> tuple[SymExpr, ...]:
        return tuple(o.data for o in self.offsets.data)

    @property
    def stride_list(self) -> tuple[int, ...]:
        return tuple(self.strides.get_values())

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(" ")
        print_dim_list(printer, self.offset_list)
        printer.print_string(" " + str(list(self.stride_list)))
        _AxesOp._print_input_and_types(self, printer, self.input)  # type: ignore[arg-type]

    @classmethod
    def parse(cls, parser: Parser) -> SliceOp:
        operand = parser.parse_unresolved_operand()
        offsets = parse_sym_expr_list(parser)
        strides = _int_list(parser)
        attributes, input_type, result_type = _AxesOp._parse_types(parser)
        return cls.create(
            operands=[parser.resolve_operand(operand, input_type)],
            properties={
                "offsets": _expr_array(offsets),
                "strides": _axes_attr(strides),
            },
            result_types=[result_type],
            attributes=attributes,
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
        facts = None
        for axis, (offset, stride, size, extent) in enumerate(
            zip(self.offset_list, self.stride_list, result.dims, source.dims)
        ):
            if stride == 0:
                raise VerifyException(f"slice stride of axis {axis} is zero")
            last = offset + (size - 1) * stride
            low, high = (offset, last) if stride > 0 else (last, offset)
            facts = facts or facts_in_scope(self)
            if _provably_false(facts, 0, low) or _provably_false(
                facts, high + 1, extent
            ):
                raise VerifyException(
                    f"slice of axis {axis} reads [{low}, {high}], outside "
                    f"[0, {extent - 1}]"
                )


def _provably_false(facts: Facts, lhs: SymExpr | int, rhs: SymExpr | int) -> bool:
    """Whether ``lhs <= rhs`` is provably false (i.e. ``rhs < lhs`` holds)."""
    return facts.prove_lt(as_expr(rhs), as_expr(lhs))


@irdl_op_definition
class ConcatOp(GraphOp):
    """``%y = graph.concat %a, %b [0] : (T1, T2) -> T3``: join along one axis."""

    name = "graph.concat"

    axis = prop_def(IntegerAttr[IntegerType])
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)

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

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(f" [{self.axis.value.data}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_list((v.type for v in self.inputs), printer.print_attribute)
        printer.print_string(") -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ConcatOp:
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        axes = _int_list(parser)
        if len(axes) != 1:
            parser.raise_error("graph.concat takes exactly one axis")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        input_types = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_type
        )
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        return cls.create(
            operands=parser.resolve_operands(operands, input_types, parser.pos),
            properties={"axis": IntegerAttr(axes[0], i64)},
            result_types=[result_type],
            attributes=attributes,
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

    axis = prop_def(IntegerAttr[IntegerType])
    table = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)

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

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.table)
        printer.print_string(", ")
        printer.print_operand(self.indices)
        printer.print_string(f" [{self.axis.value.data}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_attribute(self.table.type)
        printer.print_string(", ")
        printer.print_attribute(self.indices.type)
        printer.print_string(") -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> TakeOp:
        table = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        indices = parser.parse_unresolved_operand()
        axes = _int_list(parser)
        if len(axes) != 1:
            parser.raise_error("graph.take takes exactly one axis")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_type
        )
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        return cls.create(
            operands=parser.resolve_operands([table, indices], types, parser.pos),
            properties={"axis": IntegerAttr(axes[0], i64)},
            result_types=[result_type],
            attributes=attributes,
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

    T: ClassVar = VarConstraint("T", base(TensorType))
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` "
        "type($result)"
    )

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
        if is_bool_type(lhs.element_type):
            raise VerifyException("matmul is not defined on bool tensors")
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
                f"matmul result shape must be {_shape_text(expected)}, "
                f"not {_shape_text(result.dims)}"
            )


def broadcast_shapes(
    lhs: Sequence[SymExpr], rhs: Sequence[SymExpr], facts: Facts | None = None
) -> list[SymExpr]:
    """NumPy's broadcasting of two shapes; raises ``ShapeError`` on a mismatch.

    Two symbolic dims are compatible only when they are provably equal (or
    one is the constant 1): broadcasting ``N`` against ``M`` is an error.
    """
    facts = facts or Facts()
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
                f"shapes {_shape_text(lhs)} and {_shape_text(rhs)} do not "
                f"broadcast: {a} vs {b} (declare them equal, or broadcast "
                "explicitly)"
            )
    return shape


# --------------------------------------------------------------------------
# Guards
# --------------------------------------------------------------------------


@irdl_attr_definition
class FactAttr(ParametrizedAttribute):
    """A relation between two symbolic expressions, ``N mod 16 == 0``."""

    name = "graph.fact"

    lhs: SymExprAttr
    predicate: ComparisonPredicateAttr
    rhs: SymExprAttr

    _SPELLING: ClassVar[dict[ComparisonPredicate, str]] = {
        ComparisonPredicate.EQ: "==",
        ComparisonPredicate.LT: "<",
        ComparisonPredicate.LE: "<=",
        ComparisonPredicate.GT: ">",
        ComparisonPredicate.GE: ">=",
    }

    def __init__(
        self, lhs: Dim | str, predicate: ComparisonPredicate | str, rhs: Dim | str
    ):
        if predicate in self._SPELLING.values():
            predicate = next(p for p, s in self._SPELLING.items() if s == predicate)
        super().__init__(
            SymExprAttr.get(lhs),
            ComparisonPredicateAttr(ComparisonPredicate(predicate)),
            SymExprAttr.get(rhs),
        )

    def __str__(self) -> str:
        return f"{self.lhs.data} {self._SPELLING[self.predicate.data]} {self.rhs.data}"

    def verify(self) -> None:
        if self.predicate.data not in self._SPELLING:
            raise VerifyException(
                "a fact compares with ==, <, <=, > or >=; state `a != b` as "
                "`a < b` or `a > b`"
            )

    def holds(self, binding: dict[str, int]) -> bool:
        lhs, rhs = self.lhs.data.evaluate(binding), self.rhs.data.evaluate(binding)
        return _COMPARE[self.predicate.data](lhs, rhs)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return parse_fact(parser).parameters

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self}>")


_COMPARE: dict[ComparisonPredicate, Callable[[int, int], bool]] = {
    ComparisonPredicate.EQ: lambda a, b: a == b,
    ComparisonPredicate.LT: lambda a, b: a < b,
    ComparisonPredicate.LE: lambda a, b: a <= b,
    ComparisonPredicate.GT: lambda a, b: a > b,
    ComparisonPredicate.GE: lambda a, b: a >= b,
}


def parse_fact(parser: AttrParser) -> FactAttr:
    lhs = parse_sym_expr(parser)
    return FactAttr(lhs, _parse_comparator(parser), parse_sym_expr(parser))


def _parse_comparator(parser: AttrParser) -> ComparisonPredicate:
    # The lexer splits `<=`, `>=` and `==` into single-character tokens.
    if parser.parse_optional_punctuation("<"):
        if parser.parse_optional_punctuation("="):
            return ComparisonPredicate.LE
        return ComparisonPredicate.LT
    if parser.parse_optional_punctuation(">"):
        if parser.parse_optional_punctuation("="):
            return ComparisonPredicate.GE
        return ComparisonPredicate.GT
    if parser.parse_optional_punctuation("="):
        parser.parse_punctuation("=", " in '=='")
        return ComparisonPredicate.EQ
    parser.raise_error("expected a comparison: ==, <, <=, > or >=")


@irdl_op_definition
class GuardOp(IRDLOperation):
    """``graph.guard N mod 16 == 0, "reason"``: a fact about symbols that
    could not be proven at compile time.

    Code after it may assume the fact; the runtime checks it before running
    anything and raises an error naming the symbols and their values. Not
    pure: it must survive dead-code elimination.
    """

    name = "graph.guard"

    fact = prop_def(FactAttr)
    reason = opt_prop_def(StringAttr)

    def __init__(self, fact: FactAttr, reason: str | None = None):
        properties: dict[str, Attribute] = {"fact": fact}
        if reason:
            properties["reason"] = StringAttr(reason)
        super().__init__(properties=properties)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.fact}")
        if self.reason is not None:
            printer.print_string(", ")
            printer.print_string_literal(self.reason.data)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> GuardOp:
        fact = parse_fact(parser)
        reason = None
        if parser.parse_optional_punctuation(","):
            reason = parser.parse_str_literal()
        op = cls(fact, reason)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


Graph = Dialect(
    "graph",
    [
        *UNARY_OPS,
        *BINARY_OPS,
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
        TransposeOp,
        SliceOp,
        ConcatOp,
        TakeOp,
        MatmulOp,
        GuardOp,
    ],
    [
        SymExprAttr,
        TensorType,
        ReductionKindAttr,
        ComparisonPredicateAttr,
        FactAttr,
    ],
)
