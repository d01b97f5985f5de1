"""The Triton spelling of every elementwise kind and comparison
(``irc.dialects.elementwise``).

``SPELLINGS`` has one row per ``ElementwiseKind``: how ``triton.unary`` and
``triton.binary`` of that kind are written for each element kind it is
defined on, with NumPy's semantics (see ``SEMANTICS``). A spelling takes the
element type and the operands' texts and returns the expression's text; a
missing entry means the kind has no meaning there, which the printer
reports as an ``EmitError``.

16-bit floats compute in float32 and round once to their type, which is
what NumPy (and ml_dtypes for bfloat16) does. It is also what keeps the
interpreter right: Triton 3.9's interpreter holds bfloat16 blocks as their
uint16 bits, so it negates, compares and multiplies the bits, and it
truncates float32 -> bfloat16 instead of rounding to nearest even;
``_irc_to_bf16`` rounds with integer arithmetic that both the interpreter
and the GPU run the same way. float32 division and square roots are the
correctly rounded ``tl.div_rn``/``tl.sqrt_rn`` (the defaults are
approximate on GPUs); float64 has no such variants and needs none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Attribute

from irc.backend.triton.errors import EmitError
from irc.backend.triton.typenames import element_kind, is_half
from irc.dialects.elementwise import ComparisonPredicate, ElementwiseKind
from irc.dtypes import dtype

#: ``(element type, *operand texts) -> text``.
Spelling = Callable[..., str]


def wide(x: str, element: Attribute) -> str:
    """``x`` as float32 if it is a 16-bit float."""
    return f"{x}.to(tl.float32)" if is_half(element) else x


def narrow(x: str, element: Attribute) -> str:
    """A float32 ``x`` rounded (to nearest even) to a 16-bit ``element``."""
    if dtype(element).name == "bfloat16":
        return f"_irc_to_bf16({x})"
    if dtype(element).name == "float16":
        return f"{x}.to(tl.float16)"
    return x


def _in_f32(text: Callable[..., str]) -> Spelling:
    """``text`` of the operands, computed in float32 for 16-bit floats."""

    def spell(element: Attribute, *operands: str) -> str:
        return narrow(text(*(wide(x, element) for x in operands)), element)

    return spell


def _in_f64(template: str) -> Callable[[str], str]:
    """``template`` of the operand computed in float64 and rounded once back
    to its type (Triton's float32 functions are approximate on GPUs)."""
    return lambda x: template.format(f"{x}.to(tl.float64)") + f".to({x}.dtype)"


def _as_is(text: Callable[..., str]) -> Spelling:
    """``text`` of the operands, in their own type."""
    return lambda element, *operands: text(*operands)


def _infix(operator: str) -> Callable[[str, str], str]:
    return lambda a, b: f"({a} {operator} {b})"


def _call(function: str) -> Callable[..., str]:
    return lambda *operands: f"{function}({', '.join(operands)})"


def _nan_first(comparison: str) -> Spelling:
    """NumPy's maximum (``>``) or minimum (``<``) of floats: the first
    operand when it is NaN or wins, else the second (which decides the sign
    of a zero result); float16's loop keeps the first on ties."""

    def spell(element: Attribute, a: str, b: str) -> str:
        order = comparison + ("=" if dtype(element).name == "float16" else "")
        wa, wb = wide(a, element), wide(b, element)
        return f"tl.where(({wa} {order} {wb}) | ({wa} != {wa}), {a}, {b})"

    return spell


def _int_pow(element: Attribute, a: str, b: str) -> str:
    return f"_irc_pow_i({a}, {b}, {dtype(element).bits - 1})"


@dataclass(frozen=True)
class TritonSpelling:
    """One kind's spellings by element kind (``floats``: float16, bfloat16
    and float32, and float64 unless ``float64`` differs)."""

    floats: Spelling | None = None
    float64: Spelling | None = None
    integers: Spelling | None = None
    bools: Spelling | None = None

    def for_element(self, element: Attribute) -> Spelling | None:
        kind = element_kind(element)
        if kind == "f":
            is_f64 = dtype(element).bits == 64
            return self.float64 if is_f64 and self.float64 else self.floats
        return self.integers if kind == "i" else self.bools


_K = ElementwiseKind
_NEGATE = _as_is(lambda x: f"(-{x})")
_ABS = _as_is(_call("tl.abs"))
_INVERT = _as_is(lambda x: f"(~{x})")

#: How each elementwise kind is written in Triton.
SPELLINGS: dict[ElementwiseKind, TritonSpelling] = {
    _K.NEG: TritonSpelling(_in_f32(lambda x: f"(-{x})"), integers=_NEGATE),
    _K.ABS: TritonSpelling(
        _in_f32(_call("tl.abs")), integers=_ABS, bools=_as_is(lambda x: x)
    ),
    _K.EXP: TritonSpelling(_in_f32(_call("tl.exp"))),
    _K.LOG: TritonSpelling(_in_f32(_call("tl.log"))),
    _K.SQRT: TritonSpelling(
        _in_f32(_call("tl.sqrt_rn")), float64=_as_is(_call("tl.sqrt"))
    ),
    _K.RSQRT: TritonSpelling(
        _in_f32(lambda x: f"tl.div_rn(1.0, tl.sqrt_rn({x}))"),
        float64=_as_is(lambda x: f"(1.0 / tl.sqrt({x}))"),
    ),
    _K.TANH: TritonSpelling(_in_f32(_call("_irc_tanh"))),
    _K.SIGMOID: TritonSpelling(
        _in_f32(lambda x: f"tl.div_rn(1.0, 1.0 + tl.exp(-{x}))"),
        float64=_as_is(lambda x: f"(1.0 / (1.0 + tl.exp(-{x})))"),
    ),
    _K.ERF: TritonSpelling(
        _in_f32(lambda x: f"tl.erf({x}.to(tl.float64)).to({x}.dtype)")
    ),
    _K.SIN: TritonSpelling(_in_f32(_call("tl.sin"))),
    _K.COS: TritonSpelling(_in_f32(_call("tl.cos"))),
    _K.FLOOR: TritonSpelling(_in_f32(_call("tl.floor"))),
    _K.CEIL: TritonSpelling(_in_f32(_call("tl.ceil"))),
    _K.TRUNC: TritonSpelling(_in_f32(_call("_irc_trunc"))),
    _K.RINT: TritonSpelling(_in_f32(_call("_irc_rint"))),
    _K.LOG1P: TritonSpelling(_in_f32(_call("_irc_log1p"))),
    _K.EXPM1: TritonSpelling(_in_f32(_call("_irc_expm1"))),
    _K.LOG2: TritonSpelling(_in_f32(_in_f64("tl.log2({})"))),
    _K.LOG10: TritonSpelling(_in_f32(_in_f64("(tl.log({}) * 0.4342944819032518)"))),
    _K.SINH: TritonSpelling(_in_f32(_call("_irc_sinh"))),
    _K.COSH: TritonSpelling(_in_f32(_call("_irc_cosh"))),
    _K.ATAN: TritonSpelling(_in_f32(_call("_irc_atan"))),
    _K.ASIN: TritonSpelling(_in_f32(_call("_irc_asin"))),
    _K.ACOS: TritonSpelling(_in_f32(_call("_irc_acos"))),
    _K.NOT: TritonSpelling(integers=_INVERT, bools=_INVERT),
    _K.ADD: TritonSpelling(
        _in_f32(_infix("+")), integers=_as_is(_infix("+")), bools=_as_is(_infix("|"))
    ),
    _K.SUB: TritonSpelling(_in_f32(_infix("-")), integers=_as_is(_infix("-"))),
    _K.MUL: TritonSpelling(
        _in_f32(_infix("*")), integers=_as_is(_infix("*")), bools=_as_is(_infix("&"))
    ),
    _K.DIV: TritonSpelling(_in_f32(_call("_irc_div"))),
    _K.FLOORDIV: TritonSpelling(
        _in_f32(_call("_irc_floordiv_f")), integers=_as_is(_call("_irc_floordiv_i"))
    ),
    _K.REM: TritonSpelling(
        _in_f32(_call("_irc_rem_f")), integers=_as_is(_call("_irc_rem_i"))
    ),
    _K.POW: TritonSpelling(_in_f32(_call("_irc_pow_f")), integers=_int_pow),
    _K.MAX: TritonSpelling(
        _nan_first(">"),
        integers=_as_is(_call("tl.maximum")),
        bools=_as_is(_infix("|")),
    ),
    _K.MIN: TritonSpelling(
        _nan_first("<"),
        integers=_as_is(_call("tl.minimum")),
        bools=_as_is(_infix("&")),
    ),
    _K.AND: TritonSpelling(integers=_as_is(_infix("&")), bools=_as_is(_infix("&"))),
    _K.OR: TritonSpelling(integers=_as_is(_infix("|")), bools=_as_is(_infix("|"))),
    _K.XOR: TritonSpelling(integers=_as_is(_infix("^")), bools=_as_is(_infix("^"))),
    _K.ATAN2: TritonSpelling(_in_f32(_call("_irc_atan2"))),
}


#: Each comparison as a Python operator, which Triton reads as NumPy's
#: comparison on the operands (in float32 for 16-bit floats).
COMPARISON_OPERATORS: dict[ComparisonPredicate, str] = {
    ComparisonPredicate.EQ: "==",
    ComparisonPredicate.NE: "!=",
    ComparisonPredicate.LT: "<",
    ComparisonPredicate.LE: "<=",
    ComparisonPredicate.GT: ">",
    ComparisonPredicate.GE: ">=",
}


def elementwise_text(kind: ElementwiseKind, element: Attribute, *operands: str) -> str:
    """``triton.unary``/``triton.binary`` of ``kind`` on ``element`` values
    named ``operands``."""
    spelling = SPELLINGS[kind].for_element(element)
    if spelling is None:
        arity = "unary" if len(operands) == 1 else "binary"
        raise EmitError(f"{arity} {kind.value!r} on {element} has no Triton spelling")
    return spelling(element, *operands)
