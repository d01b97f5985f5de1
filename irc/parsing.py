"""xDSL's parser, bounded so that no input text can hang it or crash it.

``IrcLexer`` checks string literals in one linear scan (xDSL's pattern
backtracks exponentially on an unclosed string), bounds the digits of a
number and reads UTF-8 literals as strings; ``IrcParser`` bounds nesting
(``MAX_NESTING``) and splats (``MAX_SPLAT_ELEMENTS``), and reports values
that do not fit their type, operands defined inside their op's own regions,
undefined values at their first use, unknown ops at their name and an
unclosed region at its ``{``. Every failure is a ``ParseError`` at a place
in the input, saying what is wrong and how to fix it.

See docs/irc-opt.md, section "Hostile input".
"""

from __future__ import annotations

import difflib
import math
import re
import struct
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyDenseElement,
    AnyFloat,
    ComplexType,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerType,
    ModuleOp,
    RankedStructure,
    ShapedType,
)
from xdsl.ir import (
    Attribute,
    AttributeInvT,
    Block,
    Operation,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.parser import Parser
from xdsl.parser.core import ForwardDeclaredValue, UnresolvedOperand
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import (
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
)
from xdsl.utils.lexer import Input, Position, Span, Token
from xdsl.utils.mlir_lexer import (
    KIND_BY_PUNCTUATION_SPELLING,
    MLIRLexer,
    MLIRToken,
    MLIRTokenKind,
    StringLiteral,
)

if TYPE_CHECKING:
    from xdsl.dialects.builtin import LocationAttr
    from xdsl.parser import Argument

MAX_NESTING = 64
"""How deeply regions, attributes and types may nest in irc's input text
(together: a type inside an attribute inside a region is three levels).
irc's own IR nests less than ten levels deep. xDSL's parser takes 5 to 10
Python frames a level, so about 100 levels reach Python's recursion limit;
64 levels keep the parser and the recursive walks after it (verifier,
printer, passes) well inside it."""

MAX_INTEGER_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 4300)() or 4300
"""The most decimal digits an integer literal may have: Python's limit on
converting digits to ``int`` (4,300 unless the process changed it)."""

MAX_HEX_DIGITS = math.floor(MAX_INTEGER_DIGITS / math.log10(16))
"""The most hexadecimal digits of a ``0x`` literal: a value that prints in
at most :data:`MAX_INTEGER_DIGITS` decimal digits."""

MAX_SPLAT_ELEMENTS = 1 << 20
"""The most elements a ``dense<...>`` literal may stand for beyond those it
spells out: xDSL stores every element of a splat (``dense<1.0> :
tensor<1000000000xf32>``), a second a million."""

_STRING_RUN = re.compile(r'[^"\\\n\v\f]*')
"""Characters that stand for themselves in a string literal."""

_ESCAPE = re.compile(r'["nt\\]|[0-9A-Fa-f]{2}')
"""What may follow a backslash in a string literal (xDSL's escapes)."""

_DIGIT_RUN = re.compile(r"[0-9]+")

_SPELLINGS = {kind: spelling for spelling, kind in KIND_BY_PUNCTUATION_SPELLING.items()}

_UNDEFINED_VALUES = "values used but not defined"
"""How xDSL's last check of a module (after all of it parsed) begins."""

_TEXTS = (MLIRTokenKind.STRING_LIT, MLIRTokenKind.BYTES_LIT, MLIRTokenKind.AT_IDENT)
"""Tokens whose digits are text, never converted to ``int``."""


class IrcLexer(MLIRLexer):
    """xDSL's lexer, with string literals checked in linear time and
    numbers bounded in length."""

    def lex(self) -> MLIRToken:
        token = super().lex()
        if len(token.span) > MAX_HEX_DIGITS and token.kind not in _TEXTS:
            self._check_digit_runs(token)
        return token

    def _lex_string_literal(self, start_pos: Position) -> MLIRToken:
        """Scan the string from its opening quote at ``start_pos`` to its
        closing quote, then let xDSL build the token (its pattern matches a
        well-formed string without backtracking)."""
        content, end = self.input.content, self.input.len
        pos = start_pos + 1
        while True:
            match = _STRING_RUN.match(content, pos)
            assert match is not None, "the pattern matches the empty string"
            pos = match.end()
            char = content[pos] if pos < end else None
            if char == '"':
                return _utf8_as_string(super()._lex_string_literal(start_pos))
            if char != "\\":
                raise ParseError(
                    Span(start_pos, pos, self.input),
                    "string literal is not closed: add a '\"' to end it on "
                    "this line (a string cannot span lines; write a line "
                    "break as \\n)",
                )
            escape = _ESCAPE.match(content, pos + 1)
            if escape is None:
                raise ParseError(
                    Span(pos, min(pos + 2, end), self.input),
                    "invalid escape sequence in string literal: after '\\' "
                    'write one of \\" \\\\ \\n \\t or two hexadecimal digits',
                )
            pos = escape.end()

    def _check_digit_runs(self, token: MLIRToken) -> None:
        """Reject a token holding more digits in a row than irc converts to
        an integer (in a literal, an integer type's width, a result index)."""
        text = token.span.text
        hexadecimal = token.kind is MLIRTokenKind.INTEGER_LIT and text[:2] in (
            "0x",
            "0X",
        )
        limit = MAX_HEX_DIGITS if hexadecimal else MAX_INTEGER_DIGITS
        runs = [text[2:]] if hexadecimal else _DIGIT_RUN.findall(text)
        for run in runs:
            digits = len(run)
            if digits > limit:
                kind = "hexadecimal " if hexadecimal else ""
                raise ParseError(
                    token.span,
                    f"number of {digits} {kind}digits is too long: irc reads "
                    f"at most {limit} {kind}digits; write a shorter value",
                )


def _utf8_as_string(token: MLIRToken) -> MLIRToken:
    """A literal whose bytes are UTF-8 as a string, not a bytes literal.

    xDSL 0.75 prints a string byte by byte from its UTF-8 encoding, escaping
    every byte outside printable ASCII (``"é"`` prints as ``"\\C3\\A9"``),
    but its lexer reads a literal with an escape as a string only when those
    bytes are ASCII, though its docstring says "when the payload can be
    decoded as UTF-8". Without this a file name, a reason or a quoted symbol
    name with a non-ASCII character (``/home/josé/model.py``) would not parse
    back. irc has no bytes attributes; a UTF-8 bytes literal has the same
    spelling as the string it decodes to.
    """
    if token.kind is not MLIRTokenKind.BYTES_LIT:
        return token
    try:
        StringLiteral.from_span(token.span).bytes_contents.decode("utf-8")
    except UnicodeDecodeError:
        return token
    return Token(MLIRTokenKind.STRING_LIT, token.span)


class IrcParser(Parser):
    """xDSL's parser with :class:`IrcLexer` and bounded nesting.

    Construct it where a ``ParseError`` is caught: like xDSL's, it reads the
    first token when it is made.
    """

    def __init__(self, ctx: Context, text: str, name: str = "<unknown>"):
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(IrcLexer(Input(text, name)))
        self._nesting = 0
        self._forward_uses: dict[SSAValue, Span[str]] = {}
        self._dense_literals: list[tuple[Position, Position]] = []
        self._open_regions: list[Span[str]] = []  # the '{' of each, innermost last
        self._previous_token = self._current_token  # the token consumed last

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            module = super().parse_module(allow_implicit_module)
        except RecursionError as error:
            raise ParseError(
                self._here(),
                "input nested too deeply to parse (Python's recursion limit "
                "reached here): reduce the nesting of regions, attributes, "
                "types and expressions",
            ) from error
        except ParseError as error:
            if error.msg.startswith(_UNDEFINED_VALUES):
                raise self._undefined_value_error() from error
            raise
        self._check_forward_references(module)
        return module

    def _undefined_value_error(self) -> ParseError:
        """xDSL reports the values used but never defined at the end of the
        input: report the first use of the first, as MLIR does."""
        uses = sorted(
            (
                self._forward_uses[value]
                for values in self.forward_ssa_references.values()
                for value in values.values()
            ),
            key=lambda span: span.start,
        )
        first = uses[0].text
        others = ", ".join(dict.fromkeys(use.text for use in uses if use.text != first))
        also = f" ({others} too)" if others else ""
        return ParseError(
            uses[0],
            f"use of undefined value {first}: no op or block argument in "
            f"scope defines it{also}",
        )

    def _check_forward_references(self, module: ModuleOp) -> None:
        """xDSL resolves a forward reference when the value's definition is
        parsed, by replacing the uses of a placeholder; an op whose operand
        is defined inside the op's own regions (``scf.for ... iter_args(%a =
        %v) { %v = ... }``) is built only after that, and keeps the
        placeholder, which crashes what reads it later. Report it."""
        for op in module.walk():
            for index, operand in enumerate(op.operands):
                if isinstance(operand, ForwardDeclaredValue):
                    use = self._forward_uses[operand]
                    raise ParseError(
                        use,
                        f"operand #{index} ({use.text}) of '{op.name}' is "
                        "defined only inside the op's own regions, which its "
                        "operands cannot see: define it above the op",
                    )

    def resolve_operand(
        self, operand: UnresolvedOperand, type: AttributeInvT
    ) -> SSAValue[AttributeInvT]:
        value = super().resolve_operand(operand, type)
        if isinstance(value, ForwardDeclaredValue):
            self._forward_uses.setdefault(value, operand.span)
        return value

    def _consume_token(self, expected_kind: MLIRTokenKind | None = None) -> MLIRToken:
        """xDSL asserts the kind of the token it consumes, where some of its
        callers have not checked it (the ``)`` of a complex number in a
        ``dense`` literal): a parse error instead of an ``AssertionError``."""
        token = self._current_token
        if expected_kind is not None and token.kind is not expected_kind:
            spelling = _SPELLINGS.get(expected_kind, expected_kind.name.lower())
            self.raise_error(f"'{spelling}' expected", token.span)
        self._previous_token = token
        return super()._consume_token(expected_kind)

    def _get_op_by_name(self, name: str) -> type[Operation]:
        """xDSL reports an unknown op at the token after its name: report
        it at the name (just consumed), as MLIR does, saying what is known."""
        op_type = self.ctx.get_optional_op(
            name, dialect_stack=self._parser_state.dialect_stack
        )
        if op_type is None:
            raise ParseError(
                self._previous_token.span, _unknown_op_message(self.ctx, name)
            )
        return op_type

    @contextmanager
    def _nested(self, what: str) -> Iterator[None]:
        """One more level of nesting, at most :data:`MAX_NESTING`."""
        if self._nesting >= MAX_NESTING:
            raise ParseError(
                self._here(),
                f"{what} nested more than {MAX_NESTING} levels deep (regions, "
                "attributes and types together): irc reads at most "
                f"{MAX_NESTING} levels; flatten the IR",
            )
        self._nesting += 1
        try:
            yield
        finally:
            self._nesting -= 1

    def _here(self) -> Span[str]:
        """The next token, to point at."""
        token = self._current_token
        return Span(
            token.span.start,
            max(token.span.end, token.span.start + 1),
            self.lexer.input,
        )

    def parse_optional_region(
        self, arguments: Sequence[Argument] | None = None
    ) -> Region | None:
        if self._current_token.kind is not MLIRTokenKind.L_BRACE:
            return None
        self._open_regions.append(self._current_token.span)
        try:
            with self._nested("region"):
                return super().parse_optional_region(arguments)
        finally:
            self._open_regions.pop()

    def _parse_block(self) -> Block:
        """After a region's ops xDSL takes anything but its '}' for a block
        label, and reports " in block definition" where none is: say which
        region is left open instead."""
        if self._current_token.kind is not MLIRTokenKind.CARET_IDENT:
            raise self._unclosed_region_error()
        label = self._current_token
        name = label.text[1:]
        if not (Block.is_valid_name(name) or Block.is_default_block_name(name)):
            # MLIR's grammar takes ^0; xDSL keeps a block's name only if it
            # starts with a letter, '_', '$', '.' or '-', and raises a bare
            # ValueError otherwise.
            raise ParseError(
                label.span,
                f"block label '{label.text}': a block name must start with a "
                "letter or one of _$.- (irc keeps block names, as xDSL does); "
                "rename it, e.g. '^bb0'",
            )
        return super()._parse_block()

    def _unclosed_region_error(self) -> ParseError:
        """At the region's '{' when the input ends inside it, else at the
        token that is neither an op, a block label nor the '}'."""
        opened = self._open_regions[-1]
        token = self._current_token
        if token.kind is MLIRTokenKind.EOF:
            return ParseError(
                opened, "region is not closed: the input ends before its '}'"
            )
        return MultipleSpansParseError(
            token.span,
            "expected an operation, a block label or the '}' closing the region",
            None,
            [(opened, "the region opened here")],
        )

    def parse_optional_type(self) -> TypeAttribute | None:
        with self._nested("type"):
            return super().parse_optional_type()

    def _parse_tensor_literal(self):  # the nested lists of a dense literal
        with self._nested("tensor literal"):
            return super()._parse_tensor_literal()

    def _parse_location(self) -> LocationAttr:
        with self._nested("location"):
            return super()._parse_location()

    # Values that do not fit ------------------------------------------------

    def parse_optional_attribute(self) -> Attribute | None:
        start = self.pos
        with self._nested("attribute"), self._value_errors(start):
            return super().parse_optional_attribute()

    @contextmanager
    def _value_errors(self, start: Position) -> Iterator[None]:
        """Report a value that does not fit its type (xDSL raises
        ``OverflowError``, ``struct.error``, ``ValueError`` or a verifier
        error while it builds the attribute) at the attribute."""
        try:
            yield
        except ParseError:
            raise
        except (OverflowError, ValueError, struct.error, DiagnosticException) as error:
            end = max(self.pos, start + 1)
            raise ParseError(
                Span(start, end, self.lexer.input),
                f"invalid attribute value: {error}",
            ) from error

    def parse_dense_int_or_fp_elements_attr(
        self, type: RankedStructure[AnyDenseElement] | None
    ) -> DenseIntOrFPElementsAttr:
        start = self.pos
        self._dense_literals.append((start, self._literal_end(start)))
        try:
            if type is not None:
                self._check_dense_size(type)
            return super().parse_dense_int_or_fp_elements_attr(type)
        finally:
            self._dense_literals.pop()

    def _parse_dense_literal_type(
        self,
    ) -> RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType]:
        type = super()._parse_dense_literal_type()
        self._check_dense_size(type)
        return type

    def _literal_end(self, start: Position) -> Position:
        """Where the ``<...>`` at ``start`` ends (a linear scan)."""
        try:
            return self._raw_scan_balanced(start + 1) + 1
        except ParseError:  # unbalanced: xDSL's parser will say where
            return self.lexer.input.len

    def _check_dense_size(self, type: Attribute) -> None:
        """Refuse a dense literal that stands for many more elements than
        it spells out (a splat of a huge shape)."""
        start, end = self._dense_literals[-1]
        shape = type.get_shape() if isinstance(type, ShapedType) else ()
        count = math.prod(shape)
        if count > MAX_SPLAT_ELEMENTS and count > end - start:
            raise ParseError(
                Span(start, end, self.lexer.input),
                f"dense literal stands for {count} elements, more than the "
                f"{MAX_SPLAT_ELEMENTS} a splat may have in irc's input: spell "
                "the elements out or use a smaller shape",
            )


def _unknown_op_message(ctx: Context, name: str) -> str:
    """Why ``name`` is no op: its dialect lacks it (and which op of the
    dialect is spelled alike), or no such dialect is registered."""
    message = f"operation {name} is not registered"
    dialect_name, dot, op_name = name.partition(".")
    if not dot:
        return message
    dialect = ctx.get_optional_dialect(dialect_name)
    if dialect is None:
        known = ", ".join(sorted(ctx.registered_dialect_names))
        return f"{message}: there is no dialect '{dialect_name}' (known: {known})"
    ops = [op.name.partition(".")[2] for op in dialect.operations]
    alike = [
        f"{dialect_name}.{op}"
        for op in sorted(difflib.get_close_matches(op_name, ops, cutoff=0.75))
    ]
    hint = f"; did you mean {' or '.join(alike)}?" if alike else ""
    return f"{message}: the {dialect_name} dialect has no such op{hint}"
