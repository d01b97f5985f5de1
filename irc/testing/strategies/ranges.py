"""Value ranges: an interval that holds every value of an SSA value on the
inputs of ``irc.testing.inputs``.

A range is ``(low, high)`` in floats. Each primitive's rule for its
result's range, and the bound on how far it can grow (which decides when
operands are squashed so that results stay below :data:`MAGNITUDE_LIMIT`),
are in its declaration (``TestDomain``, ``irc.primitives``).
"""

from __future__ import annotations

from irc.primitives.declaration import Range as _Range
from irc.primitives.ranges import magnitude as _magnitude
from irc.primitives.ranges import span as _span
from irc.testing.sampling import FLOAT_INPUT_RANGE, INT_INPUT_RANGE

#: Results are kept below this magnitude (well inside float16's 65504).
MAGNITUDE_LIMIT = 1e4

__all__ = ["MAGNITUDE_LIMIT", "_Range", "_input_range", "_magnitude", "_span", "_union"]


def _union(*ranges: _Range) -> _Range:
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def _input_range(kind: str) -> _Range:
    if kind == "f":
        return -FLOAT_INPUT_RANGE, FLOAT_INPUT_RANGE
    if kind == "i":
        return float(-INT_INPUT_RANGE), float(INT_INPUT_RANGE)
    return 0.0, 1.0
