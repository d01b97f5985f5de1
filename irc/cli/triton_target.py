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
from xdsl.utils.target import Target

from irc.cli.diagnostics import Failure, Report


@dataclass(frozen=True)
class TritonTarget(Target):
    """The ``triton`` target of ``irc-opt``: Python source for Triton."""

    name = "triton"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        """Write the source; a module the emitter refuses (one not lowered to
        the triton level, say) is the input's fault, reported as a
        diagnostic rather than as a crash of irc-opt."""
        from irc.backend.triton import EmitError, emit_module

        try:
            output.write(emit_module(module))
        except EmitError as error:
            raise Failure(Report(f"cannot emit Triton source: {error}")) from error
