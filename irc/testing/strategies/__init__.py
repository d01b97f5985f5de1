"""Hypothesis strategies for symbolic shapes, bindings and graph programs.

- ``symbolic_shapes``: shapes over a small pool of symbols and constants;
- ``bindings``, ``bindings_for``: values for the symbols, under facts;
- ``programs``: well-typed graph-level modules built from ``ACTIONS`` (and
  ``CONTROL_FLOW_ACTIONS`` or ``WINDOW_ACTIONS`` when asked), valid by construction, whose values
  stay finite on the inputs of ``irc.testing.inputs``, with given NumPy
  snippets spliced in (``patterns``) to steer them towards what a pass rewrites;
- ``head_programs``: one body run on H windows (``horizontal-fusion``);
- ``layer_programs``: one body as a stack of layers (``dedupe-kernels``).

See docs/testing.md, sections "The strategies" and "Programs".
"""

from __future__ import annotations

from irc.testing.strategies.control_flow import CONTROL_FLOW_ACTIONS
from irc.testing.strategies.generator import ACTIONS, DTYPES, programs
from irc.testing.strategies.heads import head_programs
from irc.testing.strategies.layers import layer_programs
from irc.testing.strategies.ranges import MAGNITUDE_LIMIT
from irc.testing.strategies.shapes import (
    STATIC_DIMS,
    SYMBOLS,
    bindings,
    bindings_for,
    symbolic_shapes,
)
from irc.testing.strategies.windows import WINDOW_ACTIONS

__all__ = [
    "ACTIONS",
    "CONTROL_FLOW_ACTIONS",
    "DTYPES",
    "MAGNITUDE_LIMIT",
    "STATIC_DIMS",
    "SYMBOLS",
    "WINDOW_ACTIONS",
    "bindings",
    "bindings_for",
    "head_programs",
    "layer_programs",
    "programs",
    "symbolic_shapes",
]
