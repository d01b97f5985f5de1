"""The debug dialect: ordered host-side effects that show values while a
program runs (``irc.debug.print``, ``irc.debug.callback``), at every level.

- ``debug.print "x = {}" (%x) : T`` formats its values (NumPy arrays) with
  a Python format string, as ``jax.debug.print`` does, and prints the line;
- ``debug.callback "id" (%x) : T`` calls the Python callable registered
  under ``id`` (``irc.interpreters.debug``) with its values.

Each operand may carry a keyword name (``names``: ``""`` for a positional
value), so ``{name}`` fields work; ``backward`` marks a copy that autodiff
made in a backward pass (its line is printed with a ``[backward]`` prefix).

The rule (docs/debugging.md, "Printing from traced code"): a debug op is a
host op, never part of a kernel. Its operands are materialized (stored by
the kernels that compute them), and it runs in the host code between
launches, after the kernels that make its values, in source order relative
to every other debug op. The same op (with tensor, then buffer operands)
lives at every level, as ``sym.guard`` does.

Its ``DebugEffect`` is a write to the world: dead-code elimination, CSE and
canonicalization never erase, merge or reorder it, and the control-flow ops
holding one (whose effects are their regions') are not dead either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, StringAttr, UnitAttr
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind
from xdsl.utils.exceptions import VerifyException


class DebugEffect(MemoryEffect):
    """A write to no value in particular (the program's output): what keeps
    a debug op alive, unmerged and in order through xDSL's and irc's
    passes."""

    @classmethod
    def get_effects(cls, op: Operation) -> set[EffectInstance]:
        return {EffectInstance(MemoryEffectKind.WRITE)}


class DebugOp(IRDLOperation):
    """What ``debug.print`` and ``debug.callback`` share: the values shown,
    their keyword names and the backward-pass mark."""

    values = var_operand_def()
    names = opt_prop_def(ArrayAttr[StringAttr])
    backward = opt_prop_def(UnitAttr)

    traits = traits_def(DebugEffect())
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        properties: dict[str, Attribute],
        values: Sequence[SSAValue],
        names: Sequence[str] = (),
    ):
        if any(names):
            properties["names"] = ArrayAttr([StringAttr(n) for n in names])
        super().__init__(operands=[values], properties=properties)

    @property
    def keywords(self) -> list[str]:
        """Each value's keyword name, ``""`` for a positional one."""
        if self.names is None:
            return [""] * len(self.values)
        return [name.data for name in self.names.data]

    @property
    def is_backward(self) -> bool:
        return self.backward is not None

    @property
    def action(self) -> tuple[str, str]:
        """What the op does, as the runtimes spell it: ``("print", format)``
        or ``("callback", id)``."""
        raise NotImplementedError

    def mark_backward(self) -> None:
        """Mark this op as a copy run by a backward pass."""
        self.backward = UnitAttr()

    def verify_(self) -> None:
        if self.names is not None and len(self.names.data) != len(self.values):
            raise VerifyException(
                f"{self.name} has {len(self.values)} values but "
                f"{len(self.names.data)} names"
            )


@irdl_op_definition
class PrintOp(DebugOp):
    """``debug.print "x = {}" (%x) : T``: print the values, formatted by a
    Python format string, when the program runs."""

    name = "debug.print"

    format = prop_def(StringAttr)

    assembly_format: ClassVar[str] = (
        "$format `(` $values `)` attr-dict `:` type($values)"
    )

    def __init__(
        self, format: str, values: Sequence[SSAValue], names: Sequence[str] = ()
    ):
        super().__init__({"format": StringAttr(format)}, values, names)

    @property
    def action(self) -> tuple[str, str]:
        return "print", self.format.data


@irdl_op_definition
class CallbackOp(DebugOp):
    """``debug.callback "id" (%x) : T``: call the Python callable registered
    under ``id`` with the values (NumPy arrays) when the program runs."""

    name = "debug.callback"

    callback = prop_def(StringAttr)

    assembly_format: ClassVar[str] = (
        "$callback `(` $values `)` attr-dict `:` type($values)"
    )

    def __init__(
        self, callback: str, values: Sequence[SSAValue], names: Sequence[str] = ()
    ):
        super().__init__({"callback": StringAttr(callback)}, values, names)

    @property
    def action(self) -> tuple[str, str]:
        return "callback", self.callback.data


#: The debug ops.
DEBUG_OPS = (PrintOp, CallbackOp)

Debug = Dialect("debug", [PrintOp, CallbackOp], [])
