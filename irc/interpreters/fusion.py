"""The NumPy reference interpreter of the fusion level.

A ``fusion.kernel`` runs its body with the graph interpreter's
implementations: the kernel's operands bind its block arguments and
``fusion.yield`` returns its results. The symbol binding of the enclosing
function call stays in force inside kernels, so graph ops evaluate their
symbolic shapes exactly as they do at the graph level, and a fused module
gives the same results as the graph module it came from, bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)

from irc.dialects.fusion import KernelOp, YieldOp
from irc.interpreters.graph import call_function, graph_interpreter


@register_impls
class FusionFunctions(InterpreterFunctions):
    """Runs ``fusion.kernel`` ops (their bodies hold graph ops)."""

    @impl(KernelOp)
    def run_kernel(
        self, interpreter: Interpreter, op: KernelOp, args: PythonValues
    ) -> PythonValues:
        return interpreter.run_ssacfg_region(op.body, args, op.kernel_name)

    @impl_terminator(YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


def fusion_interpreter(module: ModuleOp) -> Interpreter:
    """An xDSL interpreter that runs fusion-level (and graph-level) ``module``."""
    interpreter = graph_interpreter(module)
    interpreter.register_implementations(FusionFunctions())
    return interpreter


def run_fusion(
    module: ModuleOp, inputs: Sequence[np.ndarray], function_name: str | None = None
) -> list[np.ndarray]:
    """Run ``function_name`` (default: the first public function) of a
    verified fusion-level ``module`` on ``inputs``, as ``run_graph`` runs a
    graph-level one: same binding of symbols, same checks, fresh arrays."""
    outputs = call_function(
        fusion_interpreter(module),
        module,
        inputs,
        function_name,
        "fusion, graph and func ops",
    )
    return [np.array(output, copy=True) for output in outputs]
