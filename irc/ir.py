"""Reading, checking and writing irc IR: the context with every dialect irc
knows, the bounded parser and the full verifier (xDSL's and dominance)
shared by the API and ``irc-opt``, and the printer settings."""

from __future__ import annotations

import io

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, TypeAttribute
from xdsl.printer import Printer

from irc.dominance import verify_dominance
from irc.parsing import IrcParser


def default_context() -> Context:
    """A context where every dialect irc-opt knows can be parsed."""
    from irc.passes.registry import get_all_dialects

    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def parse_module(
    text: str, ctx: Context | None = None, name: str = "<text>"
) -> ModuleOp:
    """Parse IR text (custom or generic form) into a module (not verified:
    see :func:`verify_module`). Any text either parses or raises a
    ``ParseError`` at its place, quickly (see ``irc.parsing``)."""
    return IrcParser(ctx or default_context(), text, name).parse_module()


def verify_module(op: Operation) -> None:
    """Verify IR as ``irc-opt`` does: xDSL's verifier (each op's own checks)
    and then SSA dominance, which xDSL does not check (every operand is
    defined before its use, see ``irc.dominance``). Raises a
    ``VerifyException`` (a ``DominanceError`` for dominance)."""
    op.verify()
    verify_dominance(op)


class _Printer(Printer):
    """xDSL's printer, but for ``scf.while``'s custom format, which prints its
    type with xDSL's ``print_operation_type`` and so its location twice under
    ``print_debuginfo`` (after the type, where its parser does not read it,
    and after the op as every op's): the location is printed once, at the
    end."""

    def print_operation_type(self, op: Operation) -> None:
        if isinstance(op, scf.WhileOp) and not self.print_generic_format:
            self.print_function_type(op.operand_types, op.result_types)
        else:
            super().print_operation_type(op)


def print_module(
    module: ModuleOp,
    *,
    locations: bool = False,
    generic: bool = False,
    properties_as_attributes: bool = False,
) -> str:
    """The module's text exactly as ``irc-opt`` prints it; ``locations``,
    ``generic`` and ``properties_as_attributes`` are its
    ``--print-debuginfo``, ``--print-op-generic`` and ``--print-no-properties``."""
    stream = io.StringIO()
    printer = _Printer(
        stream=stream,
        print_debuginfo=locations,
        print_generic_format=generic,
        print_properties_as_attributes=properties_as_attributes,
    )
    printer.print_op(module)
    stream.write("\n")
    return stream.getvalue()


def used_dialects(module: ModuleOp) -> set[str]:
    """The dialects whose ops or types ``module`` holds (a function that
    only returns its argument is at its level through the argument's type)."""
    used: set[str] = set()
    for op in module.walk():
        used.add(op.dialect_name())
        values = [
            *op.results,
            *(a for r in op.regions for b in r.blocks for a in b.args),
        ]
        for value in values:
            name = getattr(value.type, "name", "")
            if isinstance(value.type, TypeAttribute) and "." in name:
                used.add(name.split(".", 1)[0])
    return used
