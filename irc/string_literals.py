"""String literals that hold non-ASCII text read back as strings.

xDSL 0.75 prints a string literal byte by byte from its UTF-8 encoding,
escaping every byte outside printable ASCII (``"é"`` prints as
``"\\C3\\A9"``), but its lexer (``MLIRLexer._lex_string_literal`` in
``xdsl/utils/mlir_lexer.py``) classifies a literal with an escape as a
string only when the bytes it stands for are ASCII, and as a *bytes*
literal otherwise, though its docstring says "STRING_LIT when the payload
can be decoded as UTF-8". So a file name, a reason or a symbol name with a
non-ASCII character (``/home/josé/model.py``) printed by xDSL does not parse
back: a location is "Unexpected location syntax", a ``reason`` property
"string literal expected", a quoted ``@"..."`` name a bytes attribute.

This module makes the lexer do what its docstring says: a literal whose
bytes are valid UTF-8 is a string, any other stays a bytes literal. The
printer's form is unchanged (every level's text stays ASCII), and every
text xDSL read before reads the same, except a UTF-8 bytes literal, which
xDSL prints exactly as the string it decodes to (the two have one
spelling, so only one of them can read back; irc has no bytes attributes).
Importing ``irc`` applies it, once, to ``MLIRLexer`` itself, so every
parser of the process (``irc.ir.parse_module``, ``irc-opt``'s, and lexers
derived from xDSL's) gets it.
"""

from __future__ import annotations

from xdsl.utils.lexer import Position, Token
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind, StringLiteral

_original = MLIRLexer._lex_string_literal


def _lex_string_literal(self: MLIRLexer, start_pos: Position) -> MLIRToken:
    token = _original(self, start_pos)
    if token.kind is not MLIRTokenKind.BYTES_LIT:
        return token
    try:
        StringLiteral.from_span(token.span).bytes_contents.decode("utf-8")
    except UnicodeDecodeError:
        return token
    return Token(MLIRTokenKind.STRING_LIT, token.span)


def install() -> None:
    """Apply the fix to ``MLIRLexer`` (idempotent)."""
    if getattr(MLIRLexer._lex_string_literal, "__irc_utf8__", False):
        return
    _lex_string_literal.__irc_utf8__ = True  # type: ignore[attr-defined]
    MLIRLexer._lex_string_literal = _lex_string_literal  # type: ignore[method-assign]


install()
