"""The errors of the shape algebra.

:class:`ShapeError` is what every module of :mod:`irc.shapes` raises for a
user-caused problem; :class:`TooLarge`, one kind of it, says that an
expression went over one of the caps of :mod:`irc.shapes.limits`, so that the
modules that can do without a result (a proof, a simplification) catch it and
give up instead.
"""

from __future__ import annotations

from irc.errors import IrcShapeError


class ShapeError(IrcShapeError):
    """A user-caused error in a symbolic shape: bad text, an impossible
    division, a missing binding, contradictory facts or an expression too
    large to expand. It is a ``ValueError`` and an ``IrcError``; its message
    says what was wrong and why."""


class TooLarge(ShapeError):
    """An expression over one of the caps on canonical polynomials.

    ``args`` are the subject (``"a product"``, ``"(A + B)**64"``) and how it
    exceeds the cap, so that a power can restate an error of one of its
    products about itself (and the error pickles)."""

    def __init__(self, subject: str, excess: str) -> None:
        super().__init__(subject, excess)

    @property
    def excess(self) -> str:
        return self.args[1]

    def __str__(self) -> str:
        return (
            f"shape expression too large: {self.args[0]} {self.excess}; "
            "symbolic dims are meant to be small expressions"
        )
