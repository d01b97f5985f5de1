"""Where things are in ``irc-opt``'s inputs, for diagnostics to point at.

xDSL keeps neither: its parser drops the position of each operation, and
its pipeline parser the position of each pass name. Without them a
verifier error or an unknown pass could not be reported at a line and
column, nor matched by an ``expected-error`` annotation.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.ir import Operation
from xdsl.utils.arg_spec import PipelineLexer, SpecTokenKind
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.lexer import Span

from irc.errors import IrcError
from irc.parsing import IrcParser


class LocatingParser(IrcParser):
    """A parser that remembers where each operation's name is in the input.

    It also turns an attribute or type that fails its own checks while
    being built into a parse error at the op being parsed, and remembers
    which op a crashing custom parser was parsing.
    """

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int):
        super().__init__(ctx, text, name)
        self.line_offset = line_offset
        self.op_spans: dict[Operation, Span[str]] = {}
        self._crash_span: Span[str] | None = None

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = super().parse_operation()
        except ParseError:
            raise
        except (DiagnosticException, IrcError) as error:
            # An attribute or type that fails its own verifier while being
            # built: report it at the op being parsed, not as a crash.
            raise ParseError(self._line_span(start), str(error)) from error
        except Exception:
            if self._crash_span is None:  # the innermost op sees it first
                self._crash_span = self._line_span(start)
            raise
        self.op_spans[op] = self._name_span(op.name, start)
        return op

    def crash_span(self) -> Span[str]:
        """Where to report an exception that escaped the parser (a bug): the
        op whose custom parser raised it, else the parser's position."""
        return self._crash_span or self._line_span(self.pos)

    def _span(self, start: int, end: int) -> Span[str]:
        return Span(start, end, self.lexer.input, self.line_offset)

    def _name_span(self, name: str, start: int) -> Span[str]:
        """The op's name, which comes after its result list: MLIR reports an
        op's errors there."""
        line_end = self.lexer.input.get_end_of_line(start)  # not the whole input
        found = self.lexer.input.content.find(name, start, line_end)
        if found < 0:
            return self._span(start, start + 1)
        return self._span(found, found + len(name))

    def _line_span(self, start: int) -> Span[str]:
        """From ``start`` up to the parser's position, within start's line."""
        line_end = self.lexer.input.get_end_of_line(start)
        return self._span(start, max(start + 1, min(self.pos, line_end)))


def pass_name_spans(pipeline: str) -> list[Span[str]]:
    """Where each pass name is in a pipeline that ``parse_pipeline`` accepts:
    an identifier at brace depth 0, first or after a comma."""
    lexer = PipelineLexer(pipeline)
    spans, depth, expect_name = [], 0, True
    while (token := lexer.lex()).kind is not SpecTokenKind.EOF:
        if token.kind is SpecTokenKind.L_BRACE:
            depth += 1
        elif token.kind is SpecTokenKind.R_BRACE:
            depth -= 1
        elif token.kind is SpecTokenKind.COMMA and depth == 0:
            expect_name = True
        elif token.kind is SpecTokenKind.IDENT and expect_name:
            spans.append(token.span)
            expect_name = False
    return spans
