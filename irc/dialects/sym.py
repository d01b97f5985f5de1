"""The sym dialect: symbolic sizes and the facts about them, for every level.

Every level of irc speaks of sizes that are expressions over named symbols
(``N``, ``4*seq + 1``, ``(N + 127) floordiv 128``): tensor and buffer shapes,
strides, offsets, grids. This dialect is their one home, as MLIR's builtin
and affine attributes serve all of MLIR's dialects:

- ``#sym.expr<4*N + 1>`` (``SymExprAttr``): one expression of
  ``irc.shapes.SymExpr``, in the syntax ``str(SymExpr)`` prints;
- ``#sym.fact<N mod 16 == 0>`` (``FactAttr``): one ``irc.shapes.Fact``;
- ``sym.guard N <= 1024, "reason"`` (``GuardOp``): a fact that could not be
  proven at compile time. Code after it may assume the fact; the runtime
  checks it, with the values of the symbols, before running anything. It is
  the same op at every level that has one (graph, fusion, loop, memory,
  triton);
- ``facts_in_scope``: the facts of the guards enclosing an op, which
  verifiers and passes use to prove what the shapes alone do not.

It depends on nothing in irc but ``irc.shapes`` (the algebra), so that no
level imports another to speak of sizes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar, cast

from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.ir import Attribute, Data, Dialect, Operation, ParametrizedAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from irc.shapes import Dim, Fact, Facts, ShapeError, SymExpr, as_expr, smax, smin

# --------------------------------------------------------------------------
# Symbolic expressions inside xDSL's parser and printer
# --------------------------------------------------------------------------

#: How deeply parentheses, unary minus signs and ``max``/``min`` calls may
#: nest in a shape expression. The parser below recurses once per level, so
#: without a cap hostile text would exhaust Python's stack; real shapes stay
#: far below it.
MAX_EXPR_NESTING = 64


def parse_sym_expr(parser: AttrParser) -> SymExpr:
    """Parse a symbolic dimension expression from xDSL's token stream.

    The grammar is ``irc.shapes.parse_expr``'s, with its precedence (a
    property test checks that the two agree), and ``str(SymExpr)`` prints
    it: ``+`` and ``-``; then ``*``, ``floordiv``, ``ceildiv`` and ``mod``;
    then unary ``-`` and ``+``; then ``e ** k`` for an integer constant
    ``k``; integers, symbol names, ``max(a, b, ...)``, ``min(a, b, ...)``
    and parentheses. Exponents are capped as ``SymExpr ** k`` caps them,
    nesting at ``MAX_EXPR_NESTING`` levels, so that no text can hang the
    parser or overflow its stack.
    """
    start = parser.pos
    try:
        return _parse_sum(parser, 0)
    except ShapeError as err:
        parser.raise_error(f"invalid shape expression: {err}", start, parser.pos)


def _parse_sum(parser: AttrParser, depth: int) -> SymExpr:
    value = _parse_product(parser, depth)
    while True:
        if parser.parse_optional_punctuation("+"):
            value = value + _parse_product(parser, depth)
        elif parser.parse_optional_punctuation("-"):
            value = value - _parse_product(parser, depth)
        else:
            return value


_PRODUCT_KEYWORDS: dict[str, Callable[[SymExpr, SymExpr], SymExpr]] = {
    "floordiv": lambda a, b: a // b,
    "ceildiv": lambda a, b: a.ceildiv(b),
    "mod": lambda a, b: a % b,
}


def _parse_product(parser: AttrParser, depth: int) -> SymExpr:
    value, star = _parse_unary(parser, depth)
    while True:
        if star or parser.parse_optional_punctuation("*"):
            rhs, star = _parse_unary(parser, depth)
            value = value * rhs
        elif keyword := parser.parse_optional_keyword_in(_PRODUCT_KEYWORDS):
            rhs, star = _parse_unary(parser, depth)
            value = _PRODUCT_KEYWORDS[keyword](value, rhs)
        else:
            return value


# xDSL's lexer reads `**` as two `*` tokens, and one token of lookahead
# cannot tell `a * b` from `a ** b` before taking the first `*`. So a unary
# term says whether it took the `*` of a product that follows it.


def _parse_unary(parser: AttrParser, depth: int) -> tuple[SymExpr, bool]:
    """A unary term, and whether it consumed the ``*`` after it."""
    if depth > MAX_EXPR_NESTING:
        parser.raise_error(
            f"shape expression nested more than {MAX_EXPR_NESTING} levels deep"
        )
    if parser.parse_optional_punctuation("-"):
        value, star = _parse_unary(parser, depth + 1)
        return -value, star
    if parser.parse_optional_punctuation("+"):
        return _parse_unary(parser, depth + 1)
    return _parse_power(parser, depth)


def _parse_power(parser: AttrParser, depth: int) -> tuple[SymExpr, bool]:
    base = _parse_atom(parser, depth)
    if not parser.parse_optional_punctuation("*"):
        return base, False
    if not parser.parse_optional_punctuation("*"):
        return base, True  # the `*` of a product
    start = parser.pos
    exponent, star = _parse_unary(parser, depth + 1)
    if exponent.constant is None:
        parser.raise_error(
            "invalid shape expression: the exponent must be an integer constant",
            start,
            parser.pos,
        )
    try:
        return base**exponent.constant, star
    except ShapeError as err:
        parser.raise_error(f"invalid shape expression: {err}", start, parser.pos)


def _parse_atom(parser: AttrParser, depth: int) -> SymExpr:
    if (value := parser.parse_optional_integer(False, False)) is not None:
        return SymExpr.const(value)
    if parser.parse_optional_punctuation("("):
        inner = _parse_sum(parser, depth + 1)
        parser.parse_punctuation(")")
        return inner
    for name, combine in (("max", smax), ("min", smin)):
        if parser.parse_optional_keyword(name):
            args = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, lambda: _parse_sum(parser, depth + 1)
            )
            if len(args) < 2:
                parser.raise_error(f"{name}() needs at least two arguments")
            return functools.reduce(combine, args)
    name = parser.parse_optional_identifier()
    if name is None or name in _PRODUCT_KEYWORDS:
        parser.raise_error("expected a shape expression (integer, symbol or '(')")
    return SymExpr.symbol(name)


def parse_sym_expr_list(parser: AttrParser) -> list[SymExpr]:
    """Parse ``[e1, e2, ...]``."""
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parse_sym_expr(parser)
    )


def shape_text(dims: Iterable[SymExpr | int]) -> str:
    """``[4*N, 2]``: a shape (or a list of axes) as every level spells it,
    in types, in ops and in error messages."""
    return "[" + ", ".join(str(d) for d in dims) + "]"


def product(dims: Iterable[SymExpr | int]) -> SymExpr:
    """The number of elements of a shape: the product of its dims."""
    total = SymExpr.const(1)
    for dim in dims:
        total = total * dim
    return total


@irdl_attr_definition
class SymExprAttr(Data[SymExpr]):
    """One symbolic dimension or index, e.g. ``#sym.expr<4*N + 1>``."""

    name = "sym.expr"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> SymExpr:
        with parser.in_angle_brackets():
            return parse_sym_expr(parser)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data}>")

    @staticmethod
    def get(value: Dim | str) -> SymExprAttr:
        return SymExprAttr(as_expr(value))


def expr_array(values: Iterable[Dim | str]) -> ArrayAttr[SymExprAttr]:
    """Dims (or offsets, strides) as an array attribute of expressions."""
    return ArrayAttr(SymExprAttr.get(v) for v in values)


# --------------------------------------------------------------------------
# Custom directives of the ops' declarative assembly formats
# --------------------------------------------------------------------------
#
# An op of any level that holds expressions as properties spells them as
# its types do (``N*4``, ``[N, 4*D]``), not as attributes
# (``#sym.expr<N*4>``): its ``assembly_format`` names one of these
# directives, ``custom<SymExprList>($offsets)``, and lists it in its
# ``custom_directives``.


@irdl_custom_directive
class SymExprValue(CustomDirective):
    """``4*N + 1``: one expression, a ``SymExprAttr`` property."""

    value: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.value.set(state, SymExprAttr(parse_sym_expr(parser)))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_string(str(_attr_of(self.value, op, SymExprAttr).data))


@irdl_custom_directive
class SymExprList(CustomDirective):
    """``[N, 4*D]``: a list of expressions, an ``ArrayAttr`` of ``SymExprAttr``
    property, spelt as ``shape_text`` spells shapes."""

    values: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.values.set(state, expr_array(parse_sym_expr_list(parser)))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        values = _attr_of(self.values, op, ArrayAttr)
        printer.print_string(shape_text(cast(SymExprAttr, v).data for v in values))


@irdl_custom_directive
class SymFact(CustomDirective):
    """``N mod 16 == 0``: a ``FactAttr`` property, as ``str(FactAttr)``
    prints it."""

    fact: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.fact.set(state, parse_fact(parser))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_string(str(_attr_of(self.fact, op, FactAttr)))


_AttrT = TypeVar("_AttrT", bound=Attribute)


def _attr_of(
    variable: AttributeVariable, op: IRDLOperation, kind: type[_AttrT]
) -> _AttrT:
    """The attribute ``variable`` names on ``op``, of the type its op's
    constraint guarantees (the ops print only what they verified)."""
    attr = variable.get(op)
    assert isinstance(attr, kind), f"{op.name}: {variable.name} is {attr}"
    return attr


#: The facts every symbol satisfies anyway (each is a size, at least 1).
NO_FACTS = Facts()


def facts_in_scope(op: Operation) -> Facts:
    """The facts stated by the ``sym.guard`` ops in the blocks enclosing
    ``op``.

    Collecting them scans every enclosing block, so callers ask for them
    only where a relation does not hold without facts (see
    ``provable_in_scope``): verifying many ops stays linear when their shapes
    agree on their own. Raises ``VerifyException`` when the guards contradict
    each other.
    """
    facts: list[Fact] = []
    block = op.parent_block()
    while block is not None:
        facts.extend(g.fact.fact for g in block.ops if isinstance(g, GuardOp))
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    try:
        return Facts(facts)
    except ShapeError as err:
        raise VerifyException(
            f"the guards in scope contradict each other: {err}"
        ) from err


def provable_in_scope(op: Operation, claim: Callable[[Facts], bool]) -> bool:
    """Whether ``claim`` proves true without facts or, failing that, under
    the guards in scope of ``op`` (only then collected)."""
    return claim(NO_FACTS) or claim(facts_in_scope(op))


# --------------------------------------------------------------------------
# Facts and guards
# --------------------------------------------------------------------------

#: The comparisons a fact may make, as ``irc.shapes.Fact.op`` spells them.
FACT_RELATIONS = ("==", "<", "<=", ">", ">=")


@irdl_attr_definition
class FactAttr(ParametrizedAttribute):
    """An ``irc.shapes.Fact`` as an attribute: ``#sym.fact<N mod 16 == 0>``.

    The sides are ``SymExprAttr`` parameters and the relation one of
    ``FACT_RELATIONS`` (a fact ``a != b`` is stated as ``a < b`` or
    ``a > b``).
    """

    name = "sym.fact"

    lhs: SymExprAttr
    relation: StringAttr
    rhs: SymExprAttr

    def __init__(self, lhs: Dim | str, relation: str, rhs: Dim | str):
        super().__init__(
            SymExprAttr.get(lhs), StringAttr(relation), SymExprAttr.get(rhs)
        )

    @staticmethod
    def from_fact(fact: Fact) -> FactAttr:
        return FactAttr(fact.lhs, fact.op, fact.rhs)

    @property
    def fact(self) -> Fact:
        return Fact(self.lhs.data, self.relation.data, self.rhs.data)

    def holds(self, binding: Mapping[str, int]) -> bool | None:
        """Whether ``binding`` satisfies the fact; None if a symbol is
        unbound."""
        return self.fact.holds(binding)

    def __str__(self) -> str:
        return str(self.fact)

    def verify(self) -> None:
        if self.relation.data not in FACT_RELATIONS:
            raise VerifyException(
                "a fact compares with ==, <, <=, > or >=; state `a != b` as "
                "`a < b` or `a > b`"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return parse_fact(parser).parameters

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self}>")


def parse_fact(parser: AttrParser) -> FactAttr:
    """``lhs <relation> rhs``, as ``str(FactAttr)`` prints it."""
    lhs = parse_sym_expr(parser)
    return FactAttr(lhs, _parse_relation(parser), parse_sym_expr(parser))


def _parse_relation(parser: AttrParser) -> str:
    # The lexer splits `<=`, `>=` and `==` into single-character tokens.
    for first in ("<", ">"):
        if parser.parse_optional_punctuation(first):
            return first + "=" if parser.parse_optional_punctuation("=") else first
    if parser.parse_optional_punctuation("="):
        parser.parse_punctuation("=", " in '=='")
        return "=="
    parser.raise_error("expected a comparison: ==, <, <=, > or >=")


@irdl_op_definition
class GuardOp(IRDLOperation):
    """``sym.guard N mod 16 == 0, "reason"``: a fact about symbols that
    could not be proven at compile time.

    Code after it may assume the fact; the runtime checks it before running
    anything and raises an error naming the symbols and their values. Not
    pure: it must survive dead-code elimination.
    """

    name = "sym.guard"

    fact = prop_def(FactAttr)
    reason = opt_prop_def(StringAttr)

    assembly_format = "custom<SymFact>($fact) (`,` $reason^)? attr-dict"
    custom_directives = (SymFact,)

    def __init__(self, fact: FactAttr, reason: str | None = None):
        properties: dict[str, Attribute] = {"fact": fact}
        if reason:
            properties["reason"] = StringAttr(reason)
        super().__init__(properties=properties)


Sym = Dialect("sym", [GuardOp], [SymExprAttr, FactAttr])
