"""Symbolic expressions (``SymExpr``) as Python text, on the host and in
kernels: ``ExprRenderer``, shared by the kernel and launcher printers.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from irc.backend.triton.errors import EmitError
from irc.shapes import SymExpr

_ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}


@dataclass(frozen=True)
class ExprRenderer:
    """Prints a ``SymExpr`` as Python over given variable names.

    The expression's own Python text (``SymExpr.to_python``) is parsed with
    ``ast`` and rebuilt from a whitelist of node kinds (integers, the
    symbols, ``+ - * // %``, unary minus, ``max``/``min``), so nothing but
    arithmetic on the named variables can come out. On the host, Python's
    own ``//``, ``%``, ``max`` and ``min`` are exactly ``SymExpr.evaluate``;
    in a kernel (``in_kernel``), each symbol is first cast to ``index_type``
    (``tl.cast(s_N, tl.int64)``), and floor division and modulo go through
    prelude helpers with Python's semantics (Triton's round toward zero).
    """

    names: Mapping[str, str]
    in_kernel: bool = False
    index_type: str = "tl.int64"

    def render(self, expr: SymExpr) -> str:
        tree = ast.parse(expr.to_python(), mode="eval")
        return self._node(tree.body)

    def _node(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return str(node.value)
        if isinstance(node, ast.Name) and node.id in self.names:
            name = self.names[node.id]
            return f"tl.cast({name}, {self.index_type})" if self.in_kernel else name
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return f"(-{self._node(node.operand)})"
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("max", "min")
            and node.args
            and not node.keywords
        ):
            return self._minmax(node.func.id, node.args)
        raise EmitError(f"unexpected {type(node).__name__} in a symbolic expression")

    def _binary(self, node: ast.BinOp) -> str:
        operator = _ARITHMETIC.get(type(node.op))
        if operator is not None:
            return f"({self._node(node.left)} {operator} {self._node(node.right)})"
        if not isinstance(node.op, ast.FloorDiv | ast.Mod):
            raise EmitError(
                f"unexpected operator {type(node.op).__name__} in a symbolic expression"
            )
        if not self.in_kernel:
            symbol = "//" if isinstance(node.op, ast.FloorDiv) else "%"
            return f"({self._node(node.left)} {symbol} {self._node(node.right)})"
        helper = (
            "_irc_floordiv_i" if isinstance(node.op, ast.FloorDiv) else "_irc_rem_i"
        )
        return f"{helper}({self._operand(node.left)}, {self._operand(node.right)})"

    def _operand(self, node: ast.expr) -> str:
        """A helper's argument: a constant subexpression as a typed scalar
        (the helpers compute on tensors, not Python ints)."""
        text = self._node(node)
        if any(isinstance(n, ast.Name) for n in ast.walk(node)):
            return text
        return f"tl.full([], {text}, {self.index_type})"

    def _minmax(self, kind: str, args: list[ast.expr]) -> str:
        if not self.in_kernel:
            return f"{kind}({', '.join(self._node(a) for a in args)})"
        function = "tl.maximum" if kind == "max" else "tl.minimum"
        result = self._operand(args[0])
        for arg in args[1:]:
            result = f"{function}({result}, {self._operand(arg)})"
        return result
