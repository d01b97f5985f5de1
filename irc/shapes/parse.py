"""The text syntax of shape expressions: tokens, precedence and errors.

``+ - *`` with the usual precedence, ``floordiv``/``mod``/``ceildiv`` at the
precedence of ``*``, ``max(a, b)``, ``min(a, b)``, integers, symbols and
parentheses, which the xDSL lexer can delimit inside a type; Python's ``**``,
``//`` and ``%`` are read too. ``str(SymExpr)`` prints this syntax (powers as
repeated factors, ``N*N``).

The grammar knows nothing of the canonical form: :func:`parse_with` builds its
value with the operators of the :class:`_Expression` it is given and a
:class:`Primaries` for the integers, symbols and ``max``/``min`` calls, so
that :mod:`irc.shapes.expr`, which defines :func:`~irc.shapes.parse_expr`,
uses it without an import cycle. Every error is a
:class:`~irc.shapes.ShapeError` naming the text and the column of the
problem; an error of an operator is reported at the operator's column.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, NamedTuple, NoReturn, Protocol, TypeVar

from irc.shapes.errors import ShapeError

#: The words of the syntax, which no symbol may be named.
RESERVED = frozenset({"floordiv", "mod", "ceildiv", "max", "min"})
#: What a symbol's name looks like.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_E = TypeVar("_E", bound="_Expression")


class _Expression(Protocol):
    """What the parser needs of the values it builds: the operators of the
    syntax, and whether a value is a constant (an exponent must be)."""

    @property
    def constant(self) -> int | None: ...

    def __add__(self: _E, other: _E) -> _E: ...

    def __sub__(self: _E, other: _E) -> _E: ...

    def __neg__(self: _E) -> _E: ...

    def __mul__(self: _E, other: _E) -> _E: ...

    def __floordiv__(self: _E, other: _E) -> _E: ...

    def __mod__(self: _E, other: _E) -> _E: ...

    def __pow__(self: _E, exponent: int) -> _E: ...

    def ceildiv(self: _E, other: _E) -> _E: ...


@dataclass(frozen=True)
class Primaries(Generic[_E]):
    """How the parser makes the values that its operators combine; each may
    raise :class:`~irc.shapes.ShapeError`, reported at the token's column."""

    #: The constant that a literal's decimal digits spell.
    integer: Callable[[str], _E]
    #: The symbol of a name that is not reserved.
    symbol: Callable[[str], _E]
    #: ``max`` or ``min`` (the first argument) of two or more values.
    call: Callable[[str, list[_E]], _E]


class _Token(NamedTuple):
    kind: str  # "int", "name", "op" or "end"
    text: str
    column: int


_TOKEN = re.compile(
    r"(?P<space>\s+)|(?P<int>[0-9]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|//|[-+*%(),])"
)
_PRODUCT_OPS = frozenset({"*", "//", "%", "floordiv", "mod", "ceildiv"})


def parse_with(text: str, primaries: Primaries[_E]) -> _E:
    """The value of the shape expression ``text``, built with ``primaries``
    and the operators of their values."""
    try:
        return _Parser(text, primaries).parse()
    except RecursionError:
        raise ShapeError(
            f"cannot parse shape expression {text[:40]!r}...: nested too deeply"
        ) from None


class _Parser(Generic[_E]):
    """Recursive descent with Python's precedences: sums of products of
    signed powers of primaries."""

    def __init__(self, text: str, primaries: Primaries[_E]) -> None:
        self.text = text
        self.primaries = primaries
        self.tokens = self._tokenize()
        self.index = 0

    def _tokenize(self) -> list[_Token]:
        tokens = []
        position = 0
        while position < len(self.text):
            match = _TOKEN.match(self.text, position)
            if match is None:
                char = self.text[position]
                self.fail(f"unexpected character {char!r}", position + 1)
            if match.lastgroup != "space":
                assert match.lastgroup is not None
                tokens.append(_Token(match.lastgroup, match.group(), position + 1))
            position = match.end()
        tokens.append(_Token("end", "", len(self.text) + 1))
        return tokens

    def fail(self, message: str, column: int) -> NoReturn:
        raise ShapeError(
            f"cannot parse shape expression {self.text!r}: {message} at column {column}"
        )

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def advance(self) -> _Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def is_op(self, text: str) -> bool:
        token = self.peek()
        return token.kind == "op" and token.text == text

    def expect(self, text: str, what: str) -> None:
        if not self.is_op(text):
            self.fail(f"expected {what}", self.peek().column)
        self.advance()

    def parse(self) -> _E:
        value = self.sum()
        token = self.peek()
        if token.kind != "end":
            self.fail(f"unexpected {token.text!r}", token.column)
        return value

    def sum(self) -> _E:
        value = self.product()
        while self.is_op("+") or self.is_op("-"):
            token = self.advance()
            rhs = self.product()
            try:
                value = value + rhs if token.text == "+" else value - rhs
            except ShapeError as err:
                self.fail(str(err), token.column)
        return value

    def product(self) -> _E:
        value = self.unary()
        while (token := self.peek()).kind != "end" and token.text in _PRODUCT_OPS:
            self.advance()
            rhs = self.unary()
            try:
                value = _combine(token.text, value, rhs)
            except ShapeError as err:
                self.fail(str(err), token.column)
        return value

    def unary(self) -> _E:
        if self.is_op("-"):
            self.advance()
            return -self.unary()
        if self.is_op("+"):
            self.advance()
            return self.unary()
        return self.power()

    def power(self) -> _E:
        base = self.primary()
        if not self.is_op("**"):
            return base
        token = self.advance()
        exponent = self.unary().constant
        if exponent is None:
            self.fail("the exponent must be an integer constant", token.column)
        try:
            return base**exponent
        except ShapeError as err:
            self.fail(str(err), token.column)

    def primary(self) -> _E:
        token = self.advance()
        if token.kind == "int":
            try:
                return self.primaries.integer(token.text)
            except ShapeError as err:
                self.fail(str(err), token.column)
        if token.kind == "name" and token.text in ("max", "min"):
            return self.call(token)
        if token.kind == "name" and token.text not in RESERVED:
            try:
                return self.primaries.symbol(token.text)
            except ShapeError as err:
                self.fail(str(err), token.column)
        if token.kind == "op" and token.text == "(":
            value = self.sum()
            self.expect(")", "')'")
            return value
        self.fail("expected a term", token.column)

    def call(self, name: _Token) -> _E:
        self.expect("(", f"'(' after {name.text!r}")
        args = [self.sum()]
        while self.is_op(","):
            self.advance()
            args.append(self.sum())
        self.expect(")", "',' or ')'")
        if len(args) < 2:
            self.fail(f"{name.text}() needs at least two arguments", name.column)
        return self.primaries.call(name.text, args)


def _combine(op: str, lhs: _E, rhs: _E) -> _E:
    if op == "*":
        return lhs * rhs
    if op in ("//", "floordiv"):
        return lhs // rhs
    if op in ("%", "mod"):
        return lhs % rhs
    return lhs.ceildiv(rhs)
