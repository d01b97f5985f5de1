"""Nested containers of arguments (dicts, lists, tuples): flattening to
leaves with their paths, and rebuilding from leaves.

irc flattens a captured function's arguments and results with these, so
weights passed as ``{"attn": {"w": ...}}`` become named function arguments.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
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
    if is_sequence(tree):
        kind = "list" if isinstance(tree, list) else "tuple"
        return TreeDef(kind, (), tuple(_flatten(item, leaves) for item in tree))
    leaves.append(tree)
    return LEAF


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def is_sequence(value: Any) -> bool:
    """Whether ``flatten`` descends into ``value`` as a list or tuple (a
    namedtuple is a leaf)."""
    return isinstance(value, list | tuple) and not _is_namedtuple(value)


def unflatten(treedef: TreeDef, leaves: Sequence[Any]) -> Any:
    iterator = iter(leaves)
    try:
        tree = _unflatten(treedef, iterator)
    except StopIteration:
        raise ValueError("too few leaves for the tree structure") from None
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


#: ``call_flattener``'s functions: ``(args, kwargs)`` -> leaves, or None.
CallFlattener = Callable[[Sequence[Any], Mapping[str, Any]], "list[Any] | None"]

#: ``refuse(index, variable)``: a Python condition on the variable holding
#: leaf ``index`` (in ``flatten`` order) of a generated flattener, true when
#: the flattener must give None for it.
LeafRefusal = Callable[[int, str], str]


def refuse_container(index: int, variable: str) -> str:
    """``call_flattener``'s default test of a leaf: a container there is
    another structure (a namedtuple is a leaf)."""
    return (
        f"isinstance({variable}, _CONTAINERS) and not (isinstance({variable}, "
        f"tuple) and hasattr({variable}, '_fields'))"
    )


def call_flattener(
    treedef: TreeDef,
    *,
    refuse_leaf: LeafRefusal = refuse_container,
    keep: Sequence[int] | None = None,
    names: Mapping[str, Any] | None = None,
    any_key_order: bool = False,
) -> CallFlattener:
    """A function giving the leaves of ``flatten((list(args), dict(kwargs)))``
    when that call tree has the structure ``treedef``, and None otherwise.

    It is generated once per structure as straight-line Python (one test per
    node, no recursion, no ``TreeDef`` built), because a compiled function
    flattens its arguments on every call: for a dozen weights in nested
    dicts that is about 2 us instead of ``flatten`` and a comparison's 15.
    ``refuse_leaf`` tests each leaf (more than its structure, for a caller's
    fast path; the names its conditions use are given in ``names``, none
    of them ``_k`` and digits, the flattener's own constants), and
    only the leaves at the indices ``keep`` are returned (all by default).
    With ``any_key_order``, a dict (a plain ``dict``, whose lookups cannot
    insert keys as a ``defaultdict``'s do) may list ``treedef``'s keys in
    any order, and the leaves are in ``treedef``'s order, as ``flatten`` of
    ``reorder_like`` gives them: the test is its size and a lookup per key,
    cheaper than comparing the keys in order.
    """
    emitter = _FlattenerEmitter(refuse_leaf, any_key_order, "return None")
    lines, kept = emitter.flatten(treedef, keep)
    lines.append(f"    return [{', '.join(kept)}]")
    if any_key_order:  # a key the call's dict lacks
        lines = ["    try:", *("    " + line for line in lines)]
        lines += ["    except KeyError:", "        return None"]
    return _define("flatten", lines, emitter, names)


def call_dispatcher(
    treedef: TreeDef,
    *,
    then: Callable[[Sequence[str]], list[str]],
    otherwise: Callable[[Sequence[Any], Mapping[str, Any]], Any],
    refuse_leaf: LeafRefusal = refuse_container,
    keep: Sequence[int] | None = None,
    names: Mapping[str, Any] | None = None,
    any_key_order: bool = False,
) -> Callable[[Sequence[Any], Mapping[str, Any]], Any]:
    """A function of ``(args, kwargs)`` that flattens the call as
    ``call_flattener`` does (same arguments) and then runs ``then``'s lines,
    given the Python variables holding the kept leaves, in the same
    function; a call ``call_flattener`` would give None for (or whose
    ``refuse_leaf`` test raises ``AttributeError``, as a NumPy array asked
    for a tensor attribute does) returns ``otherwise(args, kwargs)``.

    One generated function where a flattener and a caller would be two: a
    fast call path saves the frame, the list of leaves and its unpacking.
    ``then``'s lines are indented as a function body's (four spaces) and may
    use ``args``, ``kwargs``, ``_otherwise`` and the ``names``, to which
    ``then`` may add (it runs before they are read, as ``unflatten_text``
    adds the keys of the dicts it builds).
    """
    emitter = _FlattenerEmitter(refuse_leaf, any_key_order, "raise _Mismatch")
    lines, kept = emitter.flatten(treedef, keep)
    lines = [
        "    try:",
        *("    " + line for line in lines),
        "    except (_Mismatch, KeyError, AttributeError):",
        "        return _otherwise(args, kwargs)",
        *then(kept),
    ]
    names = {**(names or {}), "_Mismatch": _Mismatch, "_otherwise": otherwise}
    return _define("dispatch", lines, emitter, names)


class _Mismatch(Exception):
    """Raised inside a ``call_dispatcher`` function: the call has another
    structure."""


def _define(
    name: str,
    body: list[str],
    emitter: _FlattenerEmitter,
    names: Mapping[str, Any] | None,
) -> Any:
    """The function ``name(args, kwargs)`` with ``body``, defined in a
    namespace of the emitter's constants and ``names``."""
    namespace: dict[str, Any] = {
        "_CONTAINERS": CONTAINERS,
        **emitter.constants,
        **(names or {}),
    }
    exec("\n".join([f"def {name}(args, kwargs):", *body]), namespace)
    return namespace[name]


@dataclass
class _FlattenerEmitter:
    """The body of a ``call_flattener`` function, node by node."""

    refuse_leaf: LeafRefusal
    any_key_order: bool
    #: The statement for a call of another structure.
    mismatch: str
    leaves: list[str] = dataclass_field(default_factory=list)
    constants: dict[str, Any] = dataclass_field(default_factory=dict)
    _names: Iterator[int] = dataclass_field(default_factory=itertools.count)

    def flatten(
        self, treedef: TreeDef, keep: Sequence[int] | None
    ) -> tuple[list[str], list[str]]:
        """The lines flattening a call of structure ``treedef`` (the
        ``mismatch`` statement where it differs) and the variables of the
        leaves at the indices ``keep`` (all by default)."""
        if treedef.kind != "tuple" or [c.kind for c in treedef.children] != [
            "list",
            "dict",
        ]:
            raise ValueError(f"{treedef} is not the structure of (args, kwargs)")
        positional, keywords = treedef.children
        lines = [
            f"    if len(args) != {len(positional.children)}: {self.mismatch}",
            f"    if len(kwargs) != {len(keywords.children)}: {self.mismatch}",
        ]
        if keywords.children and not self.any_key_order:
            keys = self.constant(keywords.keys)
            lines.append(f"    if tuple(kwargs) != {keys}: {self.mismatch}")
        for index, child in enumerate(positional.children):
            lines += self.visit(child, f"args[{index}]")
        for key, child in zip(keywords.keys, keywords.children, strict=True):
            lines += self.visit(child, f"kwargs[{self.constant(key)}]")
        kept = self.leaves if keep is None else [self.leaves[i] for i in keep]
        return lines, kept

    def constant(self, value: Any) -> str:
        """A name for ``value`` in the function's namespace (dict keys may
        be any hashable value, so they are never printed as literals)."""
        name = f"_k{len(self.constants)}"
        self.constants[name] = value
        return name

    def visit(self, node: TreeDef, expression: str) -> list[str]:
        var = f"t{next(self._names)}"
        lines = [f"    {var} = {expression}"]
        count = len(node.children)
        if node.kind == "leaf":
            refused = self.refuse_leaf(len(self.leaves), var)
            self.leaves.append(var)
            return [*lines, f"    if {refused}: {self.mismatch}"]
        if node.kind == "dict":
            lines.append(f"    if {self._dict_refused(node, var)}: {self.mismatch}")
            items = [f"{var}[{self.constant(key)}]" for key in node.keys]
        else:
            kind = node.kind
            named = f" or hasattr({var}, '_fields')" if kind == "tuple" else ""
            lines.append(
                f"    if not isinstance({var}, {kind}){named} or len({var}) != "
                f"{count}: {self.mismatch}"
            )
            items = [f"{var}[{i}]" for i in range(count)]
        for child, item in zip(node.children, items, strict=True):
            lines += self.visit(child, item)
        return lines

    def _dict_refused(self, node: TreeDef, var: str) -> str:
        """The test that ``var`` is not the dict ``node``: its type and size,
        and its keys in order unless any order is accepted (the lookups of
        its items then find a missing key)."""
        count = len(node.children)
        if self.any_key_order:
            return f"type({var}) is not dict or len({var}) != {count}"
        keys = self.constant(node.keys)
        return (
            f"not isinstance({var}, dict) or len({var}) != {count} or "
            f"tuple({var}) != {keys}"
        )


def unflattener(treedef: TreeDef) -> Callable[[Sequence[Any]], Any]:
    """``unflatten`` for one structure, generated once as a single
    expression (a compiled function rebuilds its results on every call);
    the leaves must be as many as ``treedef`` has."""
    names: dict[str, Any] = {}
    exec(f"def unflatten(leaves):\n    return {unflatten_text(treedef, names)}", names)
    return names["unflatten"]


def unflatten_text(
    treedef: TreeDef, names: dict[str, Any], leaves: str = "leaves"
) -> str:
    """``unflatten(treedef, leaves)`` as one Python expression over the
    sequence variable ``leaves``; the dict keys it uses are added to
    ``names`` (as ``_u`` and digits: any hashable key, never a literal)."""
    indices = itertools.count()

    def build(node: TreeDef) -> str:
        if node.kind == "leaf":
            return f"{leaves}[{next(indices)}]"
        items = [build(child) for child in node.children]
        if node.kind == "dict":
            entries = []
            for key, item in zip(node.keys, items, strict=True):
                name = next(
                    f"_u{n}" for n in itertools.count() if f"_u{n}" not in names
                )
                names[name] = key
                entries.append(f"{name}: {item}")
            return "{" + ", ".join(entries) + "}"
        if node.kind == "list":
            return f"[{', '.join(items)}]"
        return f"({''.join(i + ', ' for i in items)})"

    return build(treedef)


def leaf_paths(tree: Any, prefix: str = "") -> list[str]:
    """A readable path per leaf, in flatten order: ``params.attn.w``, ``xs.0``."""
    if isinstance(tree, dict):
        return [p for key in tree for p in leaf_paths(tree[key], _join(prefix, key))]
    if is_sequence(tree):
        return [
            p for i, item in enumerate(tree) for p in leaf_paths(item, _join(prefix, i))
        ]
    return [prefix]


def _join(prefix: str, key: Any) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


def map_leaves(function: Callable[[Any], Any], tree: Any) -> Any:
    leaves, treedef = flatten(tree)
    return unflatten(treedef, [function(leaf) for leaf in leaves])


def reorder_like(tree: Any, treedef: TreeDef) -> Any | None:
    """``tree`` with every dict's items in ``treedef``'s key order, when it
    differs from ``treedef`` in nothing else (dicts are keyed, not ordered,
    to a caller); None otherwise."""
    reordered = _reordered(tree, treedef)
    return None if reordered is _MISMATCH else reordered


#: What ``_reordered`` gives for another structure (None is a leaf value).
_MISMATCH = object()


def _reordered(tree: Any, treedef: TreeDef) -> Any:
    if treedef.kind == "leaf":
        is_container = isinstance(tree, CONTAINERS) and not _is_namedtuple(tree)
        return _MISMATCH if is_container else tree
    if treedef.kind == "dict":
        if not isinstance(tree, dict) or set(tree) != set(treedef.keys):
            return _MISMATCH
        items = {
            k: _reordered(tree[k], c) for k, c in zip(treedef.keys, treedef.children)
        }
        return _MISMATCH if any(v is _MISMATCH for v in items.values()) else items
    kind = list if treedef.kind == "list" else tuple
    if (
        not isinstance(tree, kind)
        or _is_namedtuple(tree)
        or len(tree) != len(treedef.children)
    ):
        return _MISMATCH
    items = [_reordered(t, c) for t, c in zip(tree, treedef.children)]
    return _MISMATCH if any(item is _MISMATCH for item in items) else kind(items)


def describe_mismatch(
    expected: TreeDef, got: TreeDef, parameters: Sequence[str] = ()
) -> str:
    """In words, where a call's structure ``got`` first differs from the
    ``expected`` one (both of ``(list(args), dict(kwargs))``), naming the
    argument by its parameter (``parameters``, the positional ones in order)."""
    (positional, keywords), (given, given_keywords) = expected.children, got.children
    if len(given.children) != len(positional.children):
        names = ", ".join(parameters[: len(positional.children)])
        listed = f" ({names})" if names else ""
        return (
            f"expected {_count(len(positional.children), 'positional argument')}"
            f"{listed}, got {len(given.children)}"
        )
    for index, (want, have) in enumerate(zip(positional.children, given.children)):
        name = parameters[index] if index < len(parameters) else f"argument {index}"
        found = _first_difference(want, have, name)
        if found is not None:
            return found
    missing = [k for k in keywords.keys if k not in given_keywords.keys]
    unexpected = [k for k in given_keywords.keys if k not in keywords.keys]
    if missing:
        return f"missing keyword argument {', '.join(map(repr, missing))}"
    if unexpected:
        return f"unexpected keyword argument {', '.join(map(repr, unexpected))}"
    for key, want in zip(keywords.keys, keywords.children):
        have = given_keywords.children[given_keywords.keys.index(key)]
        found = _first_difference(want, have, str(key))
        if found is not None:
            return found
    return "the structure differs"


def _first_difference(want: TreeDef, have: TreeDef, path: str) -> str | None:
    if want.kind != have.kind:
        return f"{path!r} must be {_describe(want)}, got {_describe(have)}"
    if want.kind == "dict":
        missing = [k for k in want.keys if k not in have.keys]
        unexpected = [k for k in have.keys if k not in want.keys]
        if missing or unexpected:
            parts = [f"missing key {', '.join(map(repr, missing))}"] if missing else []
            parts += (
                [f"unexpected key {', '.join(map(repr, unexpected))}"]
                if unexpected
                else []
            )
            return f"{path!r} must be {_describe(want)}: {'; '.join(parts)}"
        pairs = [
            (k, c, have.children[have.keys.index(k)])
            for k, c in zip(want.keys, want.children)
        ]
    elif want.kind in ("list", "tuple"):
        if len(want.children) != len(have.children):
            return f"{path!r} must be {_describe(want)}, got {_describe(have)}"
        pairs = [
            (i, c, h) for i, (c, h) in enumerate(zip(want.children, have.children))
        ]
    else:
        return None
    for key, child, other in pairs:
        found = _first_difference(child, other, _join(path, key))
        if found is not None:
            return found
    return None


def _describe(node: TreeDef) -> str:
    if node.kind == "leaf":
        return "an array or a value"
    if node.kind == "dict":
        keys = ", ".join(map(repr, node.keys))
        return f"a dict with keys {keys}" if keys else "an empty dict"
    return f"a {node.kind} of {_count(len(node.children), 'item')}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
