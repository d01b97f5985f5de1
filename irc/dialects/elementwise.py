"""The elementwise attributes every level shares: kinds, predicates, reductions.

An elementwise function (``exp``, ``add``...) is the same function at every
level: a ``graph.exp`` op, a ``tile.unary exp`` on tiles, the same under
``memory`` and ``triton``. Below the graph level its kind is an
``ElementwiseKindAttr`` (``#elementwise<kind exp>`` in generic form, a bare
``exp`` in the ops' own syntax) naming a primitive declared in
``irc.primitives``, which says everything else about it.

Comparisons (``ComparisonPredicate``, NumPy's function in ``COMPARISONS``)
and reductions (``ReductionKind``, folding a primitive over an axis, with
its row in ``REDUCTIONS``) are fixed sets, kept here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Data, Dialect, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum

from irc.errors import IrcError
from irc.primitives.declaration import Primitive, primitive


@irdl_attr_definition
class ElementwiseKindAttr(Data[Primitive], SpacedOpaqueSyntaxAttribute):
    """A primitive as a property of the tile-level ops, by name."""

    name = "elementwise.kind"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Primitive:
        position = parser.pos
        name = parser.parse_optional_identifier_or_str_literal()
        if name is None:
            parser.raise_error("expected an elementwise kind (an identifier)")
        try:
            return primitive(name)
        except IrcError as error:
            parser.raise_error(str(error), position, parser.pos)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_identifier_or_string_literal(self.data.name)


# --------------------------------------------------------------------------
# Comparisons
# --------------------------------------------------------------------------


class ComparisonPredicate(StrEnum):
    """What an elementwise comparison tests (its row in ``COMPARISONS``)."""

    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"

    @property
    def numpy(self) -> Callable[..., np.ndarray]:
        return COMPARISONS[self]


@irdl_attr_definition
class ComparisonPredicateAttr(
    EnumAttribute[ComparisonPredicate], SpacedOpaqueSyntaxAttribute
):
    """A ``ComparisonPredicate`` as a property of the comparison ops."""

    name = "elementwise.predicate"


#: The reference semantics of every comparison (NaN compares false, and
#: ``ne`` true, as in NumPy).
COMPARISONS: dict[ComparisonPredicate, Callable[..., np.ndarray]] = {
    ComparisonPredicate.EQ: np.equal,
    ComparisonPredicate.NE: np.not_equal,
    ComparisonPredicate.LT: np.less,
    ComparisonPredicate.LE: np.less_equal,
    ComparisonPredicate.GT: np.greater,
    ComparisonPredicate.GE: np.greater_equal,
}


# --------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------


class ReductionKind(StrEnum):
    """What a reduction computes over an axis (its row in ``REDUCTIONS``);
    ``argmax`` is the index of the first maximum (NaN counting as the
    largest), the others are folds of an elementwise kind."""

    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"
    ARGMAX = "argmax"

    @property
    def semantics(self) -> Reduction:
        return REDUCTIONS[self]


@irdl_attr_definition
class ReductionKindAttr(EnumAttribute[ReductionKind], SpacedOpaqueSyntaxAttribute):
    """A ``ReductionKind`` as a property of the reduction ops."""

    name = "elementwise.reduction"


@dataclass(frozen=True)
class Reduction:
    """One row of ``REDUCTIONS``."""

    #: NumPy's reduction, taking ``axis`` (and ``dtype`` if it ``widens``).
    numpy: Callable[..., np.ndarray]
    #: The name of the primitive that combines two partial results; None
    #: for argmax, which keeps an index too.
    combine_name: str | None
    #: Whether 16-bit floats accumulate in float32 (``compute_dtype``), as
    #: NumPy's sums and products do, and round once at the end.
    widens: bool

    @property
    def combine(self) -> Primitive | None:
        return None if self.combine_name is None else primitive(self.combine_name)


#: The reference semantics of every reduction.
REDUCTIONS: dict[ReductionKind, Reduction] = {
    ReductionKind.SUM: Reduction(np.sum, "add", widens=True),
    ReductionKind.PROD: Reduction(np.prod, "mul", widens=True),
    ReductionKind.MAX: Reduction(np.max, "max", widens=False),
    ReductionKind.MIN: Reduction(np.min, "min", widens=False),
    ReductionKind.ARGMAX: Reduction(np.argmax, None, widens=False),
}

Elementwise = Dialect(
    "elementwise",
    [],
    [ElementwiseKindAttr, ComparisonPredicateAttr, ReductionKindAttr],
)
