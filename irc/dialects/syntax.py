"""Custom directives that the assembly formats of several levels share.

xDSL's declarative formats (``assembly_format``) spell most of irc's ops;
where a syntax needs more than the standard directives, an op names a
custom directive (``custom<InputTypes>(ref($inputs), type($inputs))``) and
lists it in its ``custom_directives``. The directives of one concern live
with it (symbolic expressions in ``irc.dialects.sym``, kernel kinds in
``irc.dialects.kernel_kind``, a dialect's own in its module); this module
holds those of no level in particular.
"""

from __future__ import annotations

from xdsl.irdl import IRDLOperation
from xdsl.irdl.declarative_assembly_format import (
    CustomDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    VariadicOperandVariable,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer


@irdl_custom_directive
class InputTypes(CustomDirective):
    """``(T1, T2)``: the types of a variadic operand parsed before them, one
    per operand.

    xDSL's own directives check the count only once the whole op is parsed,
    and report a mismatch after it; this one reports it at the types.
    """

    inputs: VariadicOperandVariable
    types: TypeDirective

    def parse(self, parser: Parser, state: ParsingState) -> None:
        start = parser.pos
        types = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_type
        )
        operands = state.operands[self.inputs.index]
        count = 0 if operands is None else len(operands)
        if len(types) != count:
            parser.raise_error(
                f"{state.op_type.name} has {count} inputs but {len(types)} input types",
                start,
                parser.pos,
            )
        self.types.set(state, types)

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        with printer.in_parens():
            printer.print_list(self.types.get(op), printer.print_attribute)
