"""The bounds checker: every load and store of loop, memory and triton IR
stays inside its buffer, for every binding of the symbols.

:func:`check_bounds` returns, for a module at any of those levels, the
accesses it cannot prove in bounds (:class:`BoundsViolation`: the op, the
buffer, and a binding, program id, iteration and lane that break it when
one is found), and the grids beyond CUDA's limits. The proof is
:mod:`.core`'s symbolic interval analysis with irc's shape prover
(``irc.shapes.Facts``) under the guards' facts; see docs/irc-opt.md
(``--check-bounds``) and docs/testing.md (``check_pass``).

Layout: the checker spans three levels, and each level's knowledge stays
in its level (``tests/test_layering.py``): :mod:`.core` works on the ops
the tile levels share (``irc.dialects.tile``) and the shape algebra, and one module per level (:mod:`.loop`, :mod:`.memory`,
:mod:`.triton`) says what its accesses and buffers are, importing only its
level's dialects. This package's ``__init__`` drives the three by name, as
the pipeline drives the lowerings.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from irc.analysis.bounds import loop, memory, triton
from irc.analysis.bounds.core import BoundsViolation, Interval
from irc.shapes import ShapeError

__all__ = ["BoundsViolation", "Interval", "check_bounds"]


def check_bounds(module: ModuleOp) -> list[BoundsViolation]:
    """Every access of ``module``'s loop, memory and triton kernels not
    proven inside its buffer, and every grid beyond CUDA's limits."""
    found: list[BoundsViolation] = []
    for level in (loop, memory, triton):
        try:
            found.extend(level.check_module(module))
        except ShapeError as error:  # a buffer's footprint too large to expand
            name = level.__name__.rpartition(".")[2]
            found.append(
                BoundsViolation(
                    module, f"the {name} kernels' sizes are too large to check: {error}"
                )
            )
    return found
