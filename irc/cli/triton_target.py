"""``irc-opt -t triton``: print a triton-level module as Triton Python source.

The module after ``-p lower-to-triton`` (or ``lower-memory-to-triton`` on
memory-level input) is printed by ``irc.backend.triton.emit_module``:
the ``@triton.jit`` kernels, one launcher per host function, ``KERNELS`` and
``ENTRY``. The emitter is imported when the target is used, not when
``irc-opt`` starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.target import Target

from irc.cli.diagnostics import OpError, op_in_traceback


@dataclass(frozen=True)
class TritonTarget(Target):
    """The ``triton`` target of ``irc-opt``: Python source for Triton."""

    name = "triton"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        """Write the source; a module the emitter refuses (one not lowered to
        the triton level, say) is the input's fault, reported as a
        diagnostic at the op it could not print rather than as a crash of
        irc-opt."""
        from irc.backend.triton import EmitError, emit_module

        try:
            output.write(emit_module(module))
        except EmitError as error:
            raise OpError(
                f"cannot emit Triton source: {error}", _op_being_emitted(error, module)
            ) from error


def _op_being_emitted(error: BaseException, module: ModuleOp) -> Operation | None:
    """The innermost op of ``module`` that the emitter was printing when it
    raised ``error`` (see ``op_in_traceback``)."""
    return op_in_traceback(error, lambda op: _is_in(op, module))


def _is_in(op: Operation, module: ModuleOp) -> bool:
    """Whether ``op`` is inside ``module`` (not the module itself)."""
    ancestor = op.parent_op()
    while ancestor is not None and ancestor is not module:
        ancestor = ancestor.parent_op()
    return ancestor is module
