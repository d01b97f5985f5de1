"""Nested containers of arguments (dicts, lists, tuples): flattening to
leaves with their paths, and rebuilding from leaves.

irc flattens a captured function's arguments and results with these, so
weights passed as ``{"attn": {"w": ...}}`` become named function arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TreeDef:
    """The structure of a nested container, without its leaves."""

    kind: str  # "leaf", "dict", "list" or "tuple"
    keys: tuple[Any, ...] = ()
    children: tuple[TreeDef, ...] = ()

    def __str__(self) -> str:
        """``{x: *, w: [*, *]}``: the structure, a ``*`` per leaf."""
        if self.kind == "leaf":
            return "*"
        if self.kind == "dict":
            items = (f"{k}: {c}" for k, c in zip(self.keys, self.children))
            return "{" + ", ".join(items) + "}"
        inner = ", ".join(str(c) for c in self.children)
        return f"[{inner}]" if self.kind == "list" else f"({inner})"


LEAF = TreeDef("leaf")
#: What ``flatten`` may descend into (a namedtuple is a leaf).
CONTAINERS = (dict, list, tuple)


def flatten(tree: Any) -> tuple[list[Any], TreeDef]:
    """The leaves of ``tree`` in a deterministic order, and its structure.

    Dict keys are visited in insertion order, which Python preserves, so the
    order matches the order a user wrote them in.
    """
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> TreeDef:
    if isinstance(tree, dict):
        keys = tuple(tree)
        return TreeDef("dict", keys, tuple(_flatten(tree[k], leaves) for k in keys))
    if isinstance(tree, list | tuple) and not _is_namedtuple(tree):
        kind = "list" if isinstance(tree, list) else "tuple"
        return TreeDef(kind, (), tuple(_flatten(item, leaves) for item in tree))
    leaves.append(tree)
    return LEAF


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def unflatten(treedef: TreeDef, leaves: Sequence[Any]) -> Any:
    iterator = iter(leaves)
    tree = _unflatten(treedef, iterator)
    if next(iterator, _END) is not _END:
        raise ValueError("too many leaves for the tree structure")
    return tree


_END = object()


def _unflatten(treedef: TreeDef, leaves: Iterator[Any]) -> Any:
    if treedef.kind == "leaf":
        return next(leaves)
    children = [_unflatten(child, leaves) for child in treedef.children]
    if treedef.kind == "dict":
        return dict(zip(treedef.keys, children))
    return children if treedef.kind == "list" else tuple(children)


def leaf_paths(tree: Any, prefix: str = "") -> list[str]:
    """A readable path per leaf, in flatten order: ``params.attn.w``, ``xs.0``."""
    if isinstance(tree, dict):
        return [p for key in tree for p in leaf_paths(tree[key], _join(prefix, key))]
    if isinstance(tree, list | tuple) and not _is_namedtuple(tree):
        return [
            p for i, item in enumerate(tree) for p in leaf_paths(item, _join(prefix, i))
        ]
    return [prefix]


def _join(prefix: str, key: Any) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


def map_leaves(function: Callable[[Any], Any], tree: Any) -> Any:
    leaves, treedef = flatten(tree)
    return unflatten(treedef, [function(leaf) for leaf in leaves])
