"""Saved artefacts: ``Compiled.save(path)`` and ``irc.load(path)`` write and
read a compilation's record (``irc.compilation``).

An artefact is a directory (not a zip: Triton reads a kernel's source from
its file, a directory is importable as it is, and every part can be read
and diffed with ordinary tools)::

    softmax_artifact/
        __init__.py       the loader, runnable without irc (irc.runtime.standalone)
        kernels.py        the emitted module: Triton kernels and the launcher
        manifest.json     versions, function, symbols, facts, guards, input and
                          output specs, argument structure, static values
        ir/graph.mlir     the IR of every level, and ir/<level>.loc.mlir with
        ...               each op's location

Where only torch and Triton are installed, ``import softmax_artifact;
softmax_artifact.load()(x)`` runs it: the launcher checks the call and its
guards itself. With irc installed, ``irc.load(path)`` gives a ``Compiled``
restored from what ``read`` reads back, on every backend (the reference backend runs the saved
graph IR), with its ``ir(level)``, ``triton_source``, ``num_kernels`` and
``launches``.

Static arguments are saved by value when they are ``None``, a ``bool``,
``int``, ``float``, ``complex`` or ``str``, a NumPy array or a NumPy scalar;
a compilation with a static argument of another type cannot be saved (the
artefact could not check it).
"""

from __future__ import annotations

import base64
import importlib.metadata
import json
import platform
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from irc import pytree
from irc.analysis.launches import Launches
from irc.cache import versions
from irc.capture import Captured, TensorSpec
from irc.compilation import Compilation, StoredLevels
from irc.errors import IrcError
from irc.shapes import Facts

#: The layout of an artefact; ``irc.load`` refuses another.
FORMAT = 2
MANIFEST = "manifest.json"
KERNELS = "kernels.py"
LOADER = "__init__.py"
IR_DIRECTORY = "ir"


def save(compiled: Compilation, path: str | Path) -> Path:
    """Write ``compiled``, lowered and emitted, as an artefact directory at
    ``path`` (replacing an artefact already there) and return its path."""
    target = Path(path)
    if target.exists() and not (target / MANIFEST).is_file():
        raise IrcError(
            f"cannot save to {str(target)!r}: it exists and is not an irc artefact "
            "(no manifest.json); choose a new path or remove it"
        )
    manifest = _manifest(compiled)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        _write(staging, compiled, manifest)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _write(directory: Path, compiled: Compilation, manifest: dict[str, Any]) -> None:
    assert compiled.source is not None
    loader = resources.files("irc.runtime").joinpath("standalone.py")
    (directory / LOADER).write_text(loader.read_text("utf-8"), encoding="utf-8")
    (directory / KERNELS).write_text(compiled.source, encoding="utf-8")
    levels = directory / IR_DIRECTORY
    levels.mkdir()
    for level in compiled.levels:
        (levels / f"{level}.mlir").write_text(compiled.ir(level), encoding="utf-8")
        located = compiled.ir(level, locations=True)
        (levels / f"{level}.loc.mlir").write_text(located, encoding="utf-8")
    text = json.dumps(manifest, indent=2) + "\n"
    (directory / MANIFEST).write_text(text, encoding="utf-8")


def _manifest(compiled: Compilation) -> dict[str, Any]:
    captured = compiled.captured
    inputs = [
        {"name": name, "shape": list(spec.shape), "dtype": spec.dtype.name}
        for name, spec in zip(compiled.input_names, captured.specs, strict=True)
    ]
    return {
        "format": FORMAT,
        "function": captured.function_name,
        "versions": {
            **versions(),
            "torch": _installed("torch"),
            "python": platform.python_version(),
        },
        "levels": list(compiled.levels),
        "launches": compiled.launches.to_json(),
        "symbols": sorted({d for s in captured.specs for d in s.shape if _named(d)}),
        "facts": str(captured.facts),
        "guards": _guards(compiled),
        "inputs": inputs,
        "outputs": _outputs(compiled),
        "in_tree": tree_to_json(captured.in_tree),
        "out_tree": tree_to_json(captured.out_tree),
        "leaf_names": list(captured.leaf_names),
        "static_leaves": {
            str(index): encode_static(captured.leaf_names[index], value)
            for index, value in captured.static_leaves.items()
        },
    }


def _named(dim: int | str) -> bool:
    return isinstance(dim, str)


def _installed(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _guards(compiled: Compilation) -> list[dict[str, str]]:
    """The facts the runtime checks at every call, with the reason."""
    from irc.dialects.sym import GuardOp

    return [
        {"fact": str(op.fact), "reason": op.reason.data if op.reason else ""}
        for op in compiled.module("graph").walk()
        if isinstance(op, GuardOp)
    ]


def _outputs(compiled: Compilation) -> list[dict[str, Any]]:
    """Each result's shape (symbols by name) and dtype."""
    from xdsl.dialects import func

    from irc.dtypes import dtype

    graph = compiled.module("graph")
    entry = next(op for op in graph.ops if isinstance(op, func.FuncOp))
    found = []
    for result in entry.function_type.outputs.data:
        shape = [d.constant if d.is_constant else str(d) for d in result.dims]
        found.append({"shape": shape, "dtype": dtype(result.element_type).name})
    return found


def tree_to_json(tree: pytree.TreeDef) -> dict[str, Any]:
    for key in tree.keys:
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise IrcError(
                f"cannot save a compilation whose arguments or results have a dict "
                f"key {key!r} of type {type(key).__name__}: an artefact records "
                "keys that are strings, numbers, booleans or None"
            )
    return {
        "kind": tree.kind,
        "keys": list(tree.keys),
        "children": [tree_to_json(child) for child in tree.children],
    }


def tree_from_json(data: dict[str, Any]) -> pytree.TreeDef:
    children = tuple(tree_from_json(child) for child in data["children"])
    if data["kind"] == "leaf":
        return pytree.LEAF
    return pytree.TreeDef(data["kind"], tuple(data["keys"]), children)


#: The static values an artefact records, by exact type.
_SCALARS = {type(None): "none", bool: "bool", int: "int", str: "str"}


def encode_static(name: str, value: Any) -> dict[str, Any]:
    """A static value in the manifest's form (``standalone.decode_static``
    reads it back to an equal value of the same type)."""
    kind = type(value)
    if kind in _SCALARS:
        return {"kind": _SCALARS[kind], "value": value}
    if kind is float or kind is complex:
        return {"kind": kind.__name__, "value": repr(value)}
    if kind is np.ndarray or isinstance(value, np.generic):
        array = np.asarray(value, order="C")  # a scalar stays of rank 0
        if array.dtype.kind in "OUSVMm":
            raise _unsaveable(name, value)
        return {
            "kind": "ndarray" if kind is np.ndarray else "numpy_scalar",
            "dtype": array.dtype.name,
            "shape": list(array.shape),
            "data": base64.b64encode(array.tobytes()).decode("ascii"),
        }
    raise _unsaveable(name, value)


def _unsaveable(name: str, value: Any) -> IrcError:
    return IrcError(
        f"cannot save a compilation with the static argument {name!r} = {value!r} "
        f"(a {type(value).__name__}): an artefact records static values that are "
        "None, bool, int, float, complex, str or numeric NumPy arrays and scalars; "
        "pass it as an array argument or as one of those types"
    )


def read(path: str | Path) -> tuple[Captured, StoredLevels]:
    """The captured function and the stored levels of the compilation saved
    at ``path`` (``Compiled.save``), which ``irc.load`` restores."""
    from irc.runtime.standalone import decode_static

    directory = Path(path)
    manifest_path = directory / MANIFEST
    if not manifest_path.is_file():
        raise IrcError(
            f"{str(directory)!r} is not an irc artefact: it has no {MANIFEST}; "
            "save one with Compiled.save(path)"
        )
    manifest = json.loads(manifest_path.read_text("utf-8"))
    if manifest.get("format") != FORMAT:
        raise IrcError(
            f"{str(directory)!r} is an irc artefact of format "
            f"{manifest.get('format')!r}; this irc reads format {FORMAT}: save it "
            "again with this irc"
        )
    levels = directory / IR_DIRECTORY
    stored = StoredLevels(
        {
            level: (
                (levels / f"{level}.mlir").read_text("utf-8"),
                (levels / f"{level}.loc.mlir").read_text("utf-8"),
            )
            for level in manifest["levels"]
        },
        (directory / KERNELS).read_text("utf-8"),
        Launches.from_json(manifest["launches"]),
    )
    captured = Captured(
        module=stored.module("graph"),
        function_name=manifest["function"],
        in_tree=tree_from_json(manifest["in_tree"]),
        specs=[TensorSpec(s["shape"], s["dtype"]) for s in manifest["inputs"]],
        leaf_names=list(manifest["leaf_names"]),
        static_leaves={
            int(index): decode_static(value)
            for index, value in manifest["static_leaves"].items()
        },
        out_tree=tree_from_json(manifest["out_tree"]),
        facts=Facts(manifest["facts"]) if manifest["facts"] else Facts(),
    )
    return captured, stored
