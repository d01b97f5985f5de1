"""Which reference interpreter runs a module: a registry of IR levels.

Every level of irc (graph today; fusion, loop, memory and triton as they
arrive) has a NumPy interpreter that serves as its oracle. The checkers of
``irc.testing`` never call one directly: they ask :func:`level_of` for the
level whose dialects cover a module's ops, so a pass that lowers a module
from one level to the next is checked by running the input with the first
level's interpreter and the output with the second's, on the same inputs.

A new level plugs in with one :func:`register_level` call next to its
interpreter; nothing else in ``irc.testing`` or ``irc-opt --check-semantics``
needs to change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from irc.dialects.collective import mesh_of
from irc.dialects.graph import TensorType
from irc.errors import IrcError
from irc.interpreters.collective import simulate
from irc.interpreters.fusion import run_fusion
from irc.interpreters.graph import find_function, run_graph
from irc.interpreters.loop import run_loop
from irc.interpreters.memory import memory_signature, run_memory
from irc.ir import used_dialects
from irc.runtime import triton_backend
from irc.runtime.binding import argument_types

Runner = Callable[[ModuleOp, Sequence[np.ndarray]], list[np.ndarray]]
Signature = Callable[[ModuleOp], list[TensorType]]

#: Dialects that every level embeds (modules, functions, the guards on
#: symbolic sizes, debug prints): they never decide which level a module is at.
SHARED_DIALECTS = frozenset(
    {"builtin", "func", "sym", "elementwise", "debug", "collective"}
)


@dataclass(frozen=True)
class Level:
    """One IR level and how to run a module at it.

    ``dialects`` are the dialects (besides the shared ones) whose ops the
    interpreter runs; ``run`` calls the module's entry function on NumPy
    arrays and returns its results; ``signature`` gives the entry's argument
    types, from which bindings and inputs are drawn.
    """

    name: str
    dialects: frozenset[str]
    run: Runner
    signature: Signature


_LEVELS: list[Level] = []


def register_level(level: Level) -> None:
    """Make ``level`` known to the checkers; a level registered again under
    the same name replaces the old entry (and keeps its place).

    Levels are tried in registration order, so register them from the
    highest (graph) down: a module is run at the first level that covers it.
    A module with collective ops runs on every rank of its mesh
    (``spmd_runner``).
    """
    level = dataclasses.replace(level, run=spmd_runner(level.run))
    for index, known in enumerate(_LEVELS):
        if known.name == level.name:
            _LEVELS[index] = level
            return
    _LEVELS.append(level)


def levels() -> tuple[Level, ...]:
    """The registered levels, in the order they are tried."""
    return tuple(_LEVELS)


def module_dialects(module: ModuleOp) -> set[str]:
    """The dialects of ``module``'s ops and types, builtin and func excepted."""
    return used_dialects(module) - SHARED_DIALECTS


def rank_inputs(inputs: Sequence[np.ndarray], rank: int) -> list[np.ndarray]:
    """Rank ``rank``'s inputs in a simulated run: the drawn inputs with
    their elements rolled by ``rank`` places (the same values, so the same
    domains, but a different array on every rank)."""
    return [
        np.roll(np.asarray(a), rank) if np.ndim(a) else np.asarray(a) for a in inputs
    ]


def spmd_runner(run: Runner) -> Runner:
    """``run`` for modules with collectives too: on every rank of the mesh,
    simulated in this process (``rank_inputs``), each result stacked over
    the ranks along a new leading axis (on a mesh of one rank, as they are:
    that rank's results are the program's)."""

    def run_everywhere(
        module: ModuleOp, inputs: Sequence[np.ndarray]
    ) -> list[np.ndarray]:
        mesh = mesh_of(module)
        if mesh is None:
            return run(module, inputs)
        if mesh.size == 1:  # one rank: its results are the program's
            return simulate(1, lambda rank: run(module, inputs))[0]
        per_rank = simulate(
            mesh.size, lambda rank: run(module, rank_inputs(inputs, rank))
        )
        return [np.stack(results) for results in zip(*per_rank, strict=True)]

    return run_everywhere


def level_of(module: ModuleOp) -> Level:
    """The first registered level whose interpreter runs every op of
    ``module``; raises ``IrcError`` naming the dialects none of them runs."""
    used = module_dialects(module)
    for level in _LEVELS:
        if used <= level.dialects:
            return level
    known = ", ".join(f"{lv.name} ({_names(lv.dialects)})" for lv in _LEVELS)
    raise IrcError(
        f"no reference interpreter runs a module with {_names(used)} ops; "
        f"registered levels: {known}"
    )


def run_module(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run ``module``'s entry function on ``inputs`` with its level's
    reference interpreter."""
    return level_of(module).run(module, inputs)


def entry_signature(module: ModuleOp) -> list[TensorType]:
    """The argument types of ``module``'s entry function, at its level."""
    return level_of(module).signature(module)


def _names(dialects: Iterable[str]) -> str:
    return ", ".join(sorted(dialects)) or "no"


def _graph_signature(module: ModuleOp) -> list[TensorType]:
    return argument_types(find_function(module))


register_level(Level("graph", frozenset({"graph"}), run_graph, _graph_signature))
register_level(
    Level("fusion", frozenset({"fusion", "graph"}), run_fusion, _graph_signature)
)
register_level(
    Level(
        "loop", frozenset({"loop", "tile", "graph", "scf"}), run_loop, _graph_signature
    )
)
register_level(
    Level(
        "memory",
        frozenset({"memory", "loop", "tile", "scf", "arith"}),
        run_memory,
        memory_signature,
    )
)
register_level(
    Level(
        "triton",
        frozenset({"triton", "memory", "tile", "scf", "arith"}),
        triton_backend.run_triton,
        memory_signature,
    )
)
