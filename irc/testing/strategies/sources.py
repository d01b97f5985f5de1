"""Steps whose op takes no operand: ``constant``, ``iota`` and ``dim``."""

from __future__ import annotations

from irc.dialects import graph as g
from irc.testing.strategies.steps import Steps


class SourceSteps(Steps):
    """Splat or small dense constants, ``graph.iota``, and ``graph.dim`` of
    ``N``, ``N + M``, ``N*M``, ``N - 1`` or ``N floordiv 2``."""

    def constant(self) -> bool:
        element = self.program.element("bif")
        tensor = g.TensorType(
            self.program.shape(0, self.options.max_rank), element.ir_type
        )
        self.operands.constant(tensor)
        return True

    def iota(self) -> bool:
        shape = self.program.shape(1, self.options.max_rank)
        axis = self.choices.integer(0, len(shape) - 1)
        element = self.program.element("if")
        top = max(self.program.largest(shape[axis]) - 1, 0)
        self.program.emit(
            g.IotaOp(axis, g.TensorType(shape, element.ir_type)), (0.0, top)
        )
        return True

    def dim(self) -> bool:
        first, second = self.program.dim(), self.program.dim()
        form = self.choices.one_of(("plain", "sum", "product", "minus one", "half"))
        expr = {
            "plain": first,
            "sum": first + second,
            "product": first * second,
            "minus one": first - 1,
            "half": first // 2,
        }[form]
        element = self.program.element("if")
        value_range = (self.program.smallest(expr), self.program.largest(expr))
        self.program.emit(g.DimOp(expr, element.ir_type), value_range)
        return True
