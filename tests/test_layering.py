"""The package's import graph follows its levels.

Data flows one way, capture -> graph -> fusion -> loop -> memory -> triton ->
source, and each level's knowledge stays in its level:

- a level's dialect imports no dialect of a lower level;
- a module of one level (its dialect, its passes, its interpreter, the
  backend of the triton level) imports the dialects of that level's IR only,
  and the level-neutral modules; a lowering imports those of the two levels
  it connects.

The modules around the levels (the API, the driver and the record it fills,
the compile cache, artefacts, pictures, logs, the runtime) import each other
one way too: no import cycle passes through them.

The test reads every import statement of the package (``ast``), those inside
functions and ``TYPE_CHECKING`` blocks included, so a broken rule is reported
as the import that breaks it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "irc"

LEVELS = ("graph", "fusion", "loop", "memory", "triton")

#: The dialects whose ops and types a module at each level holds: fusion
#: kernels hold graph ops, loop functions graph tensors and constants, the
#: kernels of the three tile levels compute with the ``tile`` dialect's ops
#: (memory kernels on loop's tiles; a memory function states its signature,
#: for the runtime, in the graph tensor types its buffers hold), and the
#: triton level keeps memory's host schedule.
LEVEL_DIALECTS: dict[str, frozenset[str]] = {
    "graph": frozenset({"graph"}),
    "fusion": frozenset({"fusion", "graph"}),
    "loop": frozenset({"loop", "tile", "graph"}),
    "memory": frozenset({"memory", "loop", "tile", "graph"}),
    "triton": frozenset({"triton", "memory", "tile"}),
}

#: The level of each dialect module (``tile``: the compute of the tile
#: levels, first used by the loop level).
DIALECT_LEVELS: dict[str, str] = {
    "graph": "graph",
    "fusion": "fusion",
    "loop": "loop",
    "tile": "loop",
    "memory": "memory",
    "triton": "triton",
}

#: Modules every level may use: symbolic sizes, elementwise kinds, the
#: primitives' declarations, element types, errors, the shape algebra.
NEUTRAL = (
    "irc.dialects.sym",
    "irc.dialects.debug",
    "irc.dialects.collective",
    "irc.dialects.elementwise",
    "irc.dialects.kernel_kind",
    "irc.dialects.syntax",
    "irc.interpreters.sym",
    "irc.interpreters.debug",
    "irc.interpreters.collective",
    "irc.primitives",
    "irc.dtypes",
    "irc.errors",
    "irc.shapes",
)

#: The levels of each module that belongs to levels: passes and
#: interpreters to one, lowerings to the two they connect.
MODULE_LEVELS: dict[str, tuple[str, ...]] = {
    "irc.passes.graph_canonicalization": ("graph",),
    "irc.passes.auto_mixed_precision": ("graph",),
    "irc.passes.horizontal_fusion": ("graph",),
    "irc.passes.while_unrolling": ("graph",),
    "irc.passes.collective_canonicalization": ("graph",),
    "irc.passes.sharding_annotation": ("graph",),
    "irc.passes.sharding_propagation": ("graph",),
    "irc.passes.partition": ("graph",),
    "irc.passes.kernel_deduplication": ("memory",),
    "irc.passes.combo_kernels": ("triton",),
    "irc.interpreters.graph": ("graph",),
    "irc.interpreters.fusion": ("fusion",),
    "irc.interpreters.loop": ("loop",),
    "irc.interpreters.memory": ("memory",),
    "irc.lowering.graph_to_fusion": ("graph", "fusion"),
    "irc.lowering.scatter_add": ("graph",),
    "irc.lowering.score_walks": ("graph", "fusion"),
    # What a joint function's backward reads: decided for fuse, in the op
    # families fuse admits.
    "irc.lowering.saved_activations": ("graph", "fusion"),
    # Which control flow runs inside one kernel: asked by fuse and by tile.
    "irc.lowering.device_control_flow": ("fusion",),
    "irc.lowering.loop_to_memory": ("loop", "memory"),
    "irc.lowering.host_control_flow": ("loop", "memory"),
    "irc.lowering.memory_to_triton": ("memory", "triton"),
    # The bounds checker: its core reads the tile ops all three kernel
    # dialects share, and each level's module the accesses of its own.
    "irc.analysis.bounds.core": ("loop",),
    "irc.analysis.bounds.loop": ("loop",),
    "irc.analysis.bounds.memory": ("memory",),
    "irc.analysis.bounds.triton": ("triton",),
    # Launches per call, counted from memory's host schedule.
    "irc.analysis.launches": ("memory",),
}

#: Packages all of whose modules share their levels (a lowering's connect
#: two).
PACKAGE_LEVELS: dict[str, tuple[str, ...]] = {
    "irc.backend.triton": ("triton",),
    "irc.passes.autodiff": ("graph",),
    "irc.lowering.fusion_to_loop": ("fusion", "loop"),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield module_name(path), path


def imports(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """``(module, line)`` for every irc module that ``path`` imports, with
    ``from package import module`` resolved to the module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0]
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                is_module = (PACKAGE.parent / Path(*candidate.split("."))).with_suffix(
                    ".py"
                ).exists() or (PACKAGE.parent / Path(*candidate.split("."))).is_dir()
                yield (candidate if is_module else base), node.lineno


def dialect_of(module: str) -> str | None:
    prefix = "irc.dialects."
    if not module.startswith(prefix) or module.startswith(NEUTRAL):
        return None
    return module.removeprefix(prefix).split(".")[0]


def levels_of(module: str) -> tuple[str, ...] | None:
    if (dialect := dialect_of(module)) is not None:
        return (DIALECT_LEVELS[dialect],)
    if module in MODULE_LEVELS:
        return MODULE_LEVELS[module]
    for package, levels in PACKAGE_LEVELS.items():
        if module == package or module.startswith(package + "."):
            return levels
    return None


def dialect_violations() -> list[str]:
    found = []
    for name, path in modules():
        own = dialect_of(name)
        if own is None:
            continue
        level = LEVELS.index(DIALECT_LEVELS[own])
        for imported, line in imports(name, path):
            other = dialect_of(imported)
            if other is not None and LEVELS.index(DIALECT_LEVELS[other]) > level:
                found.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line}: the {own} dialect "
                    f"imports {imported}, a lower level's ({DIALECT_LEVELS[other]})"
                )
    return found


def level_violations() -> list[str]:
    found = []
    for name, path in modules():
        levels = levels_of(name)
        if levels is None:
            continue
        allowed = frozenset().union(*(LEVEL_DIALECTS[level] for level in levels))
        for imported, line in imports(name, path):
            dialect = dialect_of(imported)
            interpreted = imported.removeprefix("irc.interpreters.")
            if imported.startswith("irc.interpreters.") and interpreted in LEVELS:
                dialect = interpreted
            if dialect is not None and dialect not in allowed:
                found.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line}: {name} "
                    f"({' to '.join(levels)}) imports {imported}; it may use only "
                    f"the dialects {sorted(allowed)} and the level-neutral modules"
                )
    return found


def test_no_dialect_imports_a_lower_levels() -> None:
    assert dialect_violations() == []


def test_level_modules_import_only_their_levels() -> None:
    assert level_violations() == []


def test_every_dialect_and_level_module_is_classified() -> None:
    """A new dialect or level module must say where it belongs, or the rules
    above would not see it."""
    dialects = {
        module_name(p).removeprefix("irc.dialects.")
        for p in (PACKAGE / "dialects").glob("*.py")
        if p.name != "__init__.py"
    }
    neutral = {n.removeprefix("irc.dialects.") for n in NEUTRAL}
    assert dialects - neutral == set(DIALECT_LEVELS)
    for directory in ("lowering", "passes", "interpreters"):
        for path in (PACKAGE / directory).rglob("*.py"):
            name = module_name(path)
            unclassified = levels_of(name) is None and not name.startswith(NEUTRAL)
            if unclassified and name not in _DRIVERS:
                pytest.fail(f"{name} belongs to no level in tests/test_layering.py")


#: Modules of those directories that drive several levels by name, without
#: importing their dialects (the pipeline, the pass registry and the passes
#: from outside irc it lists).
_DRIVERS = frozenset(
    {
        "irc.lowering",
        "irc.passes",
        "irc.interpreters",
        "irc.lowering.pipeline",
        "irc.passes.plugins",
        "irc.passes.registry",
    }
)


def test_the_rules_see_a_broken_import(tmp_path: Path) -> None:
    """The checker reports an upward import of a dialect: a graph-level
    module importing the loop dialect."""
    source = tmp_path / "probe.py"
    source.write_text("from irc.dialects import loop\nfrom irc.dialects.sym import x\n")
    found = [m for m, _ in imports("irc.probe", source)]
    assert found == ["irc.dialects.loop", "irc.dialects.sym"]
    assert dialect_of("irc.dialects.loop") == "loop"
    assert dialect_of("irc.dialects.sym") is None


def test_a_lowering_package_connects_its_two_levels() -> None:
    """Every module of a lowering split into a package gets both levels."""
    for name in ("irc.lowering.fusion_to_loop", "irc.lowering.fusion_to_loop.tiler"):
        assert levels_of(name) == ("fusion", "loop")


def import_graph() -> dict[str, set[str]]:
    """Per module of the package, the modules of the package it imports
    (a name imported from a package counts as an import of the package)."""
    paths = dict(modules())

    def owner(imported: str) -> str | None:
        while imported and imported not in paths:
            imported = imported.rpartition(".")[0]
        return imported or None

    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        found = {owner(imported) for imported, _ in imports(name, path)}
        graph[name] = {m for m in found if m is not None and m != name}
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one
    module, each sorted: every import cycle lies within one (Tarjan)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for imported in graph.get(module, ()):
            if imported not in order:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], order[imported])
        if low[module] == order[module]:
            component = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(component) > 1:
                found.append(sorted(component))

    for module in graph:
        if module not in order:
            visit(module)
    return found


def is_driver_side(module: str) -> bool:
    """The modules around the levels: the package's own top-level modules
    (``irc.api``, ``irc.driver``, ``irc.compilation``, ``irc.cache``,
    ``irc.artifact``, ``irc.viz``, ``irc.logs``, ...), the runtime and the
    pipeline."""
    return (
        module.count(".") <= 1 and not (PACKAGE / module.split(".")[-1]).is_dir()
    ) or module.startswith(("irc.runtime", "irc.lowering.pipeline"))


def test_no_import_cycle_passes_through_the_driver_side() -> None:
    graph = import_graph()
    for module in ("irc.api", "irc.artifact", "irc.viz", "irc.driver"):
        assert is_driver_side(module) and module in graph
    assert [c for c in cycles(graph) if any(map(is_driver_side, c))] == []


def test_the_cycle_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    """A cycle closed by an import inside a function body is a cycle."""
    source = tmp_path / "probe.py"
    source.write_text("def save():\n    from irc.api import Compiled\n")
    graph = import_graph()
    graph["irc.probe"] = {m for m, _ in imports("irc.probe", source)}
    graph["irc.api"] = graph["irc.api"] | {"irc.probe"}
    assert ["irc.api", "irc.probe"] in cycles(graph)


def test_the_readme_layout_table_names_every_module() -> None:
    """Each top-level module and package of ``irc`` has its row (or a
    mention) in the README's layout table, so a newcomer finds it there."""
    readme = (PACKAGE.parent / "README.md").read_text()
    section = readme[readme.index("## Layout") :].splitlines()
    first = next(i for i, line in enumerate(section) if line.startswith("|"))
    rows = []
    for line in section[first:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    table = "\n".join(rows)
    entries = sorted(
        path.name
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__")
        or (path.is_dir() and (path / "__init__.py").exists())
    )
    missing = [
        name
        for name in entries
        if f"`irc/{name}" not in table and f"`irc/{name}/" not in table
    ]
    assert not missing, missing
