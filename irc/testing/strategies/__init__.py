"""Hypothesis strategies for symbolic shapes, bindings and graph programs.

- :func:`symbolic_shapes`: shapes over a small pool of symbols and constants;
- :func:`bindings`, :func:`bindings_for`: values for the symbols, under facts
  (a module's guards);
- :func:`programs`: well-typed graph-level modules, one ``func.func @main``
  whose body uses every graph op.

Programs are built op by op from the values made so far, the way capture
builds them: operands get explicit ``graph.cast`` and ``graph.broadcast``
ops, shapes are valid by construction (a reshape regroups the factors of the
input's dims, a slice stays within bounds, a matmul's operands share their
contraction dim, ``take`` indices are reduced modulo the table's extent).

Every value carries an interval that holds for every input of
``irc.testing.inputs``, and each op is built so that it stays in its domain
on that interval: ``log`` and ``rsqrt`` of ``abs(x) + 1`` unless ``x`` is
known positive, ``sqrt`` of ``abs(x)``, division by ``abs(y) + 1`` unless
``y`` is bounded away from zero, integer powers with exponents in
``[0, 2]``, ``exp`` of ``tanh(x)`` when ``x`` could overflow it. When a
result could grow beyond ``MAGNITUDE_LIMIT`` (a sum over many elements, a
chain of products), the operands are squashed first (``tanh`` for floats,
``rem`` by a small constant for integers). So results are finite, NaN-free
and exactly representable where they must be, and a mismatch means a bug,
not a rounding accident at the edge of a domain.

A program is a sequence of *actions* (``ACTIONS``), each adding one op and
the casts, broadcasts and domain guards it needs. Hypothesis shrinks the
number of actions, their kinds and their operand choices, so a failing
program shrinks to a few ops over fresh arguments.

The names below are the package's interface; its modules are:

- :mod:`~irc.testing.strategies.shapes`: shapes and bindings;
- :mod:`~irc.testing.strategies.ranges`: value ranges of the elementwise ops;
- :mod:`~irc.testing.strategies.program`: the draws and the ``@main`` under
  construction;
- :mod:`~irc.testing.strategies.operands`: operands of a kind or a type,
  constants;
- :mod:`~irc.testing.strategies.domains`: values brought into an op's domain;
- :mod:`~irc.testing.strategies.steps`: what the families of steps share;
- one module per family of steps: :mod:`~irc.testing.strategies.elementwise`,
  :mod:`~irc.testing.strategies.sources`,
  :mod:`~irc.testing.strategies.layout`,
  :mod:`~irc.testing.strategies.reductions`,
  :mod:`~irc.testing.strategies.guards`,
  :mod:`~irc.testing.strategies.control_flow` (``CONTROL_FLOW_ACTIONS``,
  which ``programs`` takes only when asked: ``actions=ACTIONS +
  CONTROL_FLOW_ACTIONS``);
- :mod:`~irc.testing.strategies.generator`: :func:`programs`, which takes
  the steps;
- :mod:`~irc.testing.strategies.heads`: :func:`head_programs`, one
  generated body run on H side-by-side windows of a tensor (what
  ``horizontal-fusion`` batches).
"""

from __future__ import annotations

from irc.testing.strategies.control_flow import CONTROL_FLOW_ACTIONS
from irc.testing.strategies.generator import ACTIONS, DTYPES, programs
from irc.testing.strategies.heads import head_programs
from irc.testing.strategies.ranges import MAGNITUDE_LIMIT
from irc.testing.strategies.shapes import (
    STATIC_DIMS,
    SYMBOLS,
    bindings,
    bindings_for,
    symbolic_shapes,
)

__all__ = [
    "ACTIONS",
    "CONTROL_FLOW_ACTIONS",
    "DTYPES",
    "MAGNITUDE_LIMIT",
    "STATIC_DIMS",
    "SYMBOLS",
    "bindings",
    "bindings_for",
    "head_programs",
    "programs",
    "symbolic_shapes",
]
