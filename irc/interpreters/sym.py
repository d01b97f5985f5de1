"""The sym dialect's ops for xDSL's interpreter, at every level.

``sym.guard`` does nothing when it runs: a function's guards are all checked
when the function is called, before any of its ops (see
``irc.runtime.binding.check_guards``), because the verifier lets ops rely on
any guard of their block, even a later one.
"""

from __future__ import annotations

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)

from irc.dialects.sym import GuardOp


@register_impls
class SymFunctions(InterpreterFunctions):
    """``sym.guard``: checked on the call, nothing to do in the body."""

    @impl(GuardOp)
    def run_guard(
        self, interpreter: Interpreter, op: GuardOp, args: PythonValues
    ) -> PythonValues:
        return ()
