"""Symbolic dimension algebra, shared by every IR level.

A dim is an ``int`` or a :class:`SymExpr` over named symbols: ``N``, ``B*H``,
``(N + 127) floordiv 128``. A :class:`SymExpr` is immutable, hashable and
kept in one canonical form, so that equal canonical forms are equal dims and
verifiers compare dims structurally; :func:`parse_expr` reads what ``str``
prints. :class:`Facts` holds declared relations between symbols
(:class:`Fact`: ``N >= 1``, ``N mod 16 == 0``, ``N == M``) and proves what
follows from them, soundly but not completely. Every user-caused problem
(bad text, an impossible division, contradictory facts, an expression too
large to expand) raises :class:`ShapeError`, a ``ValueError`` and an
``irc.IrcShapeError``. See docs/shapes.md.

The names below are the package's interface; its modules, each depending
only on those before it, are:

- :mod:`~irc.shapes.errors`: :class:`ShapeError` and the error of a cap;
- :mod:`~irc.shapes.limits`: the caps that keep expressions small;
- :mod:`~irc.shapes.parse`: the text syntax, independent of the algebra;
- :mod:`~irc.shapes.expr`: :class:`SymExpr`, its canonical form, arithmetic,
  evaluation, printing and :func:`parse_expr`;
- :mod:`~irc.shapes.intervals`: interval arithmetic with infinite ends;
- :mod:`~irc.shapes.prover`: bounds, proofs of ``e >= 0`` and simplification
  under a context of symbol intervals and relations;
- :mod:`~irc.shapes.facts`: :class:`Fact` and :class:`Facts`.

What one module uses of another (the polynomial form, the interval
helpers, the caps) has public names there: the package's inner interface.
A name with a leading underscore is used by its own module only.
"""

from __future__ import annotations

from irc.shapes.errors import ShapeError
from irc.shapes.expr import Dim, SymExpr, as_dim, as_expr, parse_expr, smax, smin
from irc.shapes.facts import Fact, Facts

__all__ = [
    "Dim",
    "Fact",
    "Facts",
    "ShapeError",
    "SymExpr",
    "as_dim",
    "as_expr",
    "parse_expr",
    "smax",
    "smin",
]
