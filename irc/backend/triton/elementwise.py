"""The Triton text of a primitive (its declaration's ``TritonSpelling``) and
of a comparison.

A spelling takes the element type and the operands' texts and returns the
expression's text; a missing entry means the primitive has no meaning
there, which the printer reports as an ``EmitError``. 16-bit floats compute
in float32 and round once (see ``irc.primitives.spelling``).
"""

from __future__ import annotations

from xdsl.ir import Attribute

from irc.backend.triton.errors import EmitError
from irc.backend.triton.typenames import element_kind
from irc.dialects.elementwise import ComparisonPredicate
from irc.dtypes import dtype
from irc.primitives.declaration import Primitive, Spelling


def _spelling(kind: Primitive, element: Attribute) -> Spelling | None:
    spellings = kind.triton
    family = element_kind(element)
    if family == "f":
        is_f64 = dtype(element).bits == 64
        return spellings.float64 if is_f64 and spellings.float64 else spellings.floats
    return spellings.integers if family == "i" else spellings.bools


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


def elementwise_text(kind: Primitive, element: Attribute, *operands: str) -> str:
    """``tile.unary``/``tile.binary`` of ``kind`` on ``element`` values
    named ``operands``."""
    spelling = _spelling(kind, element)
    if spelling is None:
        arity = "unary" if len(operands) == 1 else "binary"
        raise EmitError(f"{arity} {kind.name!r} on {element} has no Triton spelling")
    return spelling(element, *operands)
