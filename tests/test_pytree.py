"""Property tests of ``irc.pytree``: ``call_flattener`` against ``flatten``,
``call_dispatcher`` against ``call_flattener``, and the
``flatten``/``unflatten`` round trip.

``call_flattener(treedef)`` is generated straight-line code that a compiled
function runs on every call instead of ``flatten`` and a ``TreeDef``
comparison, so it must agree with them exactly: the same leaves (the same
objects, in the same order) for a call of the compiled structure, and None
for any other structure, however small the difference (a leaf that became a
container, a dict key added, dropped, renamed or moved, a list that became a
tuple, one item more or less). The calls here are random trees of dicts
(with string and other hashable keys), lists, tuples, namedtuples (which
``flatten`` keeps whole, as leaves) and plain leaves, and mutations of them.
"""

from __future__ import annotations

import re
from collections import OrderedDict, defaultdict, namedtuple
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from irc import pytree

Pair = namedtuple("Pair", "first second")

#: Leaves that are not containers. Floats exclude NaN, so that ``==`` on
#: trees (the round trip) means what it says.
scalars = st.one_of(
    st.integers(-3, 3),
    st.text(max_size=2),
    st.none(),
    st.floats(allow_nan=False, width=16),
    st.builds(object),
)

#: Dict keys: strings (keyword-like or not) and other hashable values. No
#: bools or floats: ``True == 1 == 1.0`` would make two keys one.
keys = st.one_of(
    st.text(min_size=1, max_size=3),
    st.integers(-2, 2),
    st.tuples(st.integers(0, 2)),
    st.none(),
)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    small = {"max_size": 3}
    return st.one_of(
        st.lists(children, **small),
        st.lists(children, **small).map(tuple),
        st.dictionaries(keys, children, **small),
        st.builds(Pair, children, children),  # a leaf, whatever it holds
    )


trees = st.recursive(scalars, _containers, max_leaves=12)
call_trees = st.tuples(
    st.lists(trees, max_size=3),
    st.dictionaries(st.text(min_size=1, max_size=3), trees, max_size=3),
)


def _leaves_are(got: list[Any] | None, expected: list[Any]) -> bool:
    """Whether ``got`` holds exactly the objects ``expected`` holds, in order."""
    return (
        got is not None
        and len(got) == len(expected)
        and all(a is b for a, b in zip(got, expected))
    )


def _same_tree(a: Any, b: Any) -> bool:
    """Equal trees with the same container types at every node, the leaves
    compared by ``==`` (namedtuples included)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same_tree(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and not hasattr(a, "_fields"):
        return len(a) == len(b) and all(_same_tree(x, y) for x, y in zip(a, b))
    return a == b


def _call(
    flattener: pytree.CallFlattener, tree: tuple[list[Any], dict[Any, Any]]
) -> list[Any] | None:
    args, kwargs = tree
    return flattener(tuple(args), kwargs)


@given(call_trees)
def test_call_flattener_matches_flatten(tree: tuple[list[Any], dict[str, Any]]) -> None:
    """A call of the compiled structure gives ``flatten``'s leaves, the same
    objects in the same order, whether args come as a tuple or a list."""
    expected, treedef = pytree.flatten(tree)
    flattener = pytree.call_flattener(treedef)
    assert _leaves_are(_call(flattener, tree), expected)
    assert _leaves_are(flattener(list(tree[0]), tree[1]), expected)


@given(call_trees, call_trees)
def test_call_flattener_agrees_with_treedef_equality(
    compiled: tuple[list[Any], dict[str, Any]],
    called: tuple[list[Any], dict[str, Any]],
) -> None:
    """For two unrelated calls, the flattener of one accepts the other
    exactly when ``flatten`` gives both the same ``TreeDef``."""
    _, treedef = pytree.flatten(compiled)
    leaves, called_treedef = pytree.flatten(called)
    got = _call(pytree.call_flattener(treedef), called)
    if called_treedef == treedef:
        assert _leaves_are(got, leaves)
    else:
        assert got is None


# --------------------------------------------------------------------------
# Mutations: one change to one node, which always changes the structure
# --------------------------------------------------------------------------

Path = tuple[Any, ...]


def _nodes(tree: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every node of ``tree`` with its path (indices and dict keys)."""
    yield path, tree
    if isinstance(tree, dict):
        for key, child in tree.items():
            yield from _nodes(child, (*path, key))
    elif isinstance(tree, list | tuple) and not hasattr(tree, "_fields"):
        for index, child in enumerate(tree):
            yield from _nodes(child, (*path, index))


def _replace(tree: Any, path: Path, new: Any) -> Any:
    """``tree`` with the node at ``path`` replaced by ``new`` (a copy of
    every container on the way, dict order kept)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {k: _replace(v, rest, new) if k == head else v for k, v in tree.items()}
    items = [_replace(v, rest, new) if i == head else v for i, v in enumerate(tree)]
    return items if isinstance(tree, list) else tuple(items)


def _fresh_key(existing: dict[Any, Any], string: bool) -> Any:
    """A key not in ``existing`` (a string if ``string``)."""
    candidates = (f"new{i}" for i in range(len(existing) + 1))
    if not string:
        candidates = (1000 + i for i in range(len(existing) + 1))
    return next(k for k in candidates if k not in existing)


Mutation = tuple[str, Any]  # what changed, and the node's replacement


def _sequence_mutations(
    node: list[Any] | tuple[Any, ...], root: bool
) -> list[Mutation]:
    """A list or tuple with one item more or less; a tuple as a list and the
    other way round, or as a namedtuple (a leaf) of the same length."""
    kind = type(node)
    changed = [("length", kind([*node, "extra"]))]
    if node:
        changed.append(("length", kind(node[:-1])))
    if not root:  # the positional arguments are a sequence of any kind
        if isinstance(node, list):
            changed.append(("list/tuple", tuple(node)))
        else:
            changed.append(("list/tuple", list(node)))
            fields = [f"f{i}" for i in range(len(node))]
            changed.append(("namedtuple", namedtuple("Named", fields)(*node)))
    return changed


def _dict_mutations(node: dict[Any, Any], root: bool) -> list[Mutation]:
    """A dict with a key added, dropped, renamed, or the keys in another
    order; keyword arguments keep string keys."""
    items = list(node.items())
    changed = [("key added", {**node, _fresh_key(node, string=root): "extra"})]
    if items:
        changed.append(("key dropped", dict(items[1:])))
        renamed = _fresh_key(node, string=root or isinstance(items[0][0], str))
        changed.append(("key renamed", dict([(renamed, items[0][1]), *items[1:]])))
        if not root:
            changed.append(("dict/list", list(node.values())))
    if len(items) >= 2:
        changed.append(("keys reordered", dict(reversed(items))))
        changed.append(("keys reordered", dict([*items[1:], items[0]])))
    return changed


def _mutations(path: Path, node: Any) -> list[Mutation]:
    """Replacements for the node at ``path`` that change the call's
    structure. The root's two children (args, kwargs) keep their kinds."""
    root = len(path) == 1
    if isinstance(node, dict):
        changed = _dict_mutations(node, root)
    elif isinstance(node, list | tuple) and not hasattr(node, "_fields"):
        changed = _sequence_mutations(node, root)
    else:  # a leaf, namedtuples included
        containers = [[], (), {}, [node], (node,), {"k": node}, OrderedDict(k=node)]
        return [("leaf/container", c) for c in containers]
    if not root:
        changed.append(("container/leaf", object()))
    return changed


@st.composite
def mutated_calls(
    draw: Callable[..., Any],
) -> tuple[tuple[list[Any], dict[str, Any]], tuple[list[Any], dict[Any, Any]]]:
    """A call tree and a copy with one node changed so that its structure
    differs. The kind of change is drawn first, among those the tree allows,
    so that each kind is tried as often as the others."""
    tree = draw(call_trees)
    candidates: dict[str, list[tuple[Path, Any]]] = {}
    for path, node in _nodes(tree):
        if path:  # not the (args, kwargs) pair itself
            for kind, new in _mutations(path, node):
                candidates.setdefault(kind, []).append((path, new))
    kind = draw(st.sampled_from(sorted(candidates)))
    path, new = draw(st.sampled_from(candidates[kind]))
    return tree, _replace(tree, path, new)


@given(mutated_calls())
def test_call_flattener_refuses_other_structures(
    calls: tuple[tuple[list[Any], dict[str, Any]], tuple[list[Any], dict[Any, Any]]],
) -> None:
    """One changed node anywhere in the call (a leaf made a container or the
    reverse, a dict key added, dropped, renamed or reordered, a list made a
    tuple, a length changed) makes the compiled flattener return None."""
    tree, mutated = calls
    _, treedef = pytree.flatten(tree)
    _, mutated_treedef = pytree.flatten(mutated)
    assert mutated_treedef != treedef  # the mutation did change the structure
    assert _call(pytree.call_flattener(treedef), mutated) is None


def test_call_flattener_namedtuple_is_a_leaf() -> None:
    """A namedtuple stands where a leaf was compiled, whole; a tuple of the
    same length does not stand where a namedtuple (a leaf) was."""
    pair = Pair([1], {"a": 2})
    _, treedef = pytree.flatten(([pair], {}))
    flattener = pytree.call_flattener(treedef)
    other = Pair(3, 4)
    got = flattener((other,), {})
    assert got is not None and got[0] is other
    assert flattener(((3, 4),), {}) is None
    _, tuple_treedef = pytree.flatten(([(1, 2)], {}))
    assert pytree.call_flattener(tuple_treedef)((Pair(1, 2),), {}) is None


def test_call_flattener_keys_by_value_not_literal() -> None:
    """Dict keys of any hashable kind, including ones whose ``repr`` is not
    a literal, match by equality."""
    key = frozenset({1, 2})
    tree = ([{key: 1, (0, "a"): 2, None: 3}], {"kw": {0: 4}})
    leaves, treedef = pytree.flatten(tree)
    assert _call(pytree.call_flattener(treedef), tree) == leaves == [1, 2, 3, 4]


@given(trees)
def test_call_flattener_rejects_a_treedef_that_is_not_a_call(tree: Any) -> None:
    """Only the structure of ``(list(args), dict(kwargs))`` has a flattener."""
    _, treedef = pytree.flatten(tree)
    kinds = [c.kind for c in treedef.children]
    assume(treedef.kind != "tuple" or kinds != ["list", "dict"])
    with pytest.raises(ValueError, match="is not the structure of"):
        pytree.call_flattener(treedef)


@pytest.mark.parametrize(
    "tree",
    [1, [[], {}], ([], {}, 1), ({}, []), ((), {}), ([], [])],
    ids=["leaf", "list", "triple", "swapped", "tuple-args", "list-kwargs"],
)
def test_call_flattener_rejects_near_calls(tree: Any) -> None:
    """Structures one step from a call's are refused too."""
    _, treedef = pytree.flatten(tree)
    with pytest.raises(ValueError, match="is not the structure of"):
        pytree.call_flattener(treedef)


# --------------------------------------------------------------------------
# flatten / unflatten
# --------------------------------------------------------------------------


@given(trees)
def test_unflatten_inverts_flatten(tree: Any) -> None:
    """Rebuilding from the leaves gives the same tree, container types and
    dict order included, holding the very same leaf objects."""
    leaves, treedef = pytree.flatten(tree)
    rebuilt = pytree.unflatten(treedef, leaves)
    assert _same_tree(rebuilt, tree)
    again, retreedef = pytree.flatten(rebuilt)
    assert retreedef == treedef
    assert _leaves_are(again, leaves)


def _reversed_dicts(tree: Any) -> Any:
    """``tree`` with every dict's keys in reverse order."""
    if isinstance(tree, dict):
        return {k: _reversed_dicts(tree[k]) for k in reversed(list(tree))}
    if pytree.is_sequence(tree):
        return type(tree)(_reversed_dicts(item) for item in tree)
    return tree


@given(call_trees, call_trees)
def test_call_flattener_in_any_key_order_is_reorder_like(
    compiled: tuple[list[Any], dict[str, Any]],
    called: tuple[list[Any], dict[str, Any]],
) -> None:
    """With ``any_key_order``, the flattener accepts a call exactly when
    ``reorder_like`` puts it in the compiled structure, and gives the leaves
    of the reordered call: for a call of the compiled structure with every
    dict reversed, the compiled call's own leaves."""
    expected, treedef = pytree.flatten(compiled)
    flattener = pytree.call_flattener(treedef, any_key_order=True)
    args, kwargs = _reversed_dicts(compiled)
    assert _leaves_are(flattener(tuple(args), kwargs), expected)
    got = _call(flattener, called)
    reordered = pytree.reorder_like((called[0], called[1]), treedef)
    if reordered is None:
        assert got is None
    else:
        assert _leaves_are(got, pytree.flatten(reordered)[0])


def test_reorder_like_refuses_none_where_a_container_was() -> None:
    """None is a leaf value, not "no match": a None where the structure has
    an (empty) container is another structure (found by the property
    above: ``compiled=([[], 0], {})``, ``called=([None, None], {})``)."""
    _, treedef = pytree.flatten(([[], 0], {}))
    assert pytree.reorder_like(([None, None], {}), treedef) is None
    assert pytree.reorder_like(([[], None], {}), treedef) == ([[], None], {})
    _, keyed = pytree.flatten(([], {"a": {"b": 1}}))
    assert pytree.reorder_like(([], {"a": None}), keyed) is None


def test_call_flattener_in_any_key_order_reads_plain_dicts_only() -> None:
    """A dict subclass may insert the key it is asked for (``defaultdict``):
    it is another structure to the flattener, and stays as it was."""
    _, treedef = pytree.flatten(([{"a": 1, "b": 2}], {}))
    flattener = pytree.call_flattener(treedef, any_key_order=True)
    assert flattener(({"b": 2, "a": 1},), {}) == [1, 2]
    missing = defaultdict(int, {"a": 1, "c": 3})
    assert flattener((missing,), {}) is None
    assert flattener(({"a": 1, "c": 3},), {}) is None
    assert dict(missing) == {"a": 1, "c": 3}


@given(trees)
def test_unflattener_is_unflatten(tree: Any) -> None:
    """The generated rebuild of one structure gives ``unflatten``'s tree,
    holding the very same leaves, fresh mutable containers on every call."""
    leaves, treedef = pytree.flatten(tree)
    rebuild = pytree.unflattener(treedef)
    rebuilt = rebuild(leaves)
    assert _same_tree(rebuilt, pytree.unflatten(treedef, leaves))
    assert _leaves_are(pytree.flatten(rebuilt)[0], leaves)
    if treedef.kind in ("dict", "list"):
        assert rebuild(leaves) is not rebuilt


@given(call_trees, st.data())
def test_call_flattener_tests_leaves_and_keeps_some(
    tree: tuple[list[Any], dict[str, Any]], data: st.DataObject
) -> None:
    """``refuse_leaf`` sees every leaf, by its index in ``flatten`` order,
    and refuses the call when its condition holds; ``keep`` picks leaves."""
    leaves, treedef = pytree.flatten(tree)
    refused = data.draw(st.sets(st.integers(0, max(len(leaves) - 1, 0))))
    keep = data.draw(st.lists(st.integers(0, max(len(leaves) - 1, 0))))
    assume(len(leaves) > max([*refused, *keep], default=-1))
    seen: list[int] = []

    def refuse(index: int, leaf: str) -> str:
        seen.append(index)
        return f"{index} in _REFUSED"

    flattener = pytree.call_flattener(
        treedef, refuse_leaf=refuse, keep=keep, names={"_REFUSED": refused}
    )
    assert seen == list(range(len(leaves)))
    got = _call(flattener, tree)
    if refused:
        assert got is None
    else:
        assert _leaves_are(got, [leaves[i] for i in keep])


def _fast(leaves: list[str]) -> list[str]:
    """``call_dispatcher``'s lines after flattening, for the tests: the
    kept leaves, marked as the fast path's."""
    return [f"    return ('fast', [{''.join(leaf + ', ' for leaf in leaves)}])"]


@given(call_trees, call_trees, st.data())
def test_call_dispatcher_is_its_flattener_then_the_lines(
    compiled: tuple[list[Any], dict[str, Any]],
    called: tuple[list[Any], dict[str, Any]],
    data: st.DataObject,
) -> None:
    """``call_dispatcher`` runs ``then``'s lines on exactly the leaves the
    flattener of the same arguments gives, and ``otherwise`` on the call
    itself where the flattener gives None."""
    leaves, treedef = pytree.flatten(compiled)
    refused = data.draw(st.sets(st.integers(0, max(len(leaves) - 1, 0))))
    keep = data.draw(st.lists(st.integers(0, max(len(leaves) - 1, 0))))
    assume(len(leaves) > max([*refused, *keep], default=-1))
    options: dict[str, Any] = {
        "refuse_leaf": lambda index, leaf: f"{index} in _REFUSED",
        "keep": keep,
        "names": {"_REFUSED": refused},
        "any_key_order": data.draw(st.booleans()),
    }
    flattener = pytree.call_flattener(treedef, **options)
    dispatch = pytree.call_dispatcher(
        treedef, then=_fast, otherwise=lambda a, k: ("slow", a, k), **options
    )
    for args, kwargs in (compiled, called):
        flattened = flattener(tuple(args), kwargs)
        got = dispatch(tuple(args), kwargs)
        if flattened is None:
            assert got[0] == "slow" and got[1] == tuple(args) and got[2] is kwargs
        else:
            assert got[0] == "fast" and _leaves_are(got[1], flattened)


def test_call_dispatcher_sends_a_leaf_its_test_cannot_ask_to_otherwise() -> None:
    """A leaf whose test raises ``AttributeError`` (a NumPy array asked for
    a tensor attribute) is not of the fast path: ``otherwise`` runs, once,
    and what it raises reaches the caller."""
    _, treedef = pytree.flatten(([1.0], {}))
    calls: list[Any] = []

    def otherwise(args: Any, kwargs: Any) -> Any:
        calls.append(args)
        raise KeyError("from otherwise")

    dispatch = pytree.call_dispatcher(
        treedef,
        then=_fast,
        otherwise=otherwise,
        refuse_leaf=lambda index, leaf: f"{leaf}.requires_grad",
    )
    with pytest.raises(KeyError, match="from otherwise"):
        dispatch((1.0,), {})
    assert calls == [(1.0,)]


@given(trees)
def test_unflatten_text_is_unflatten(tree: Any) -> None:
    """The expression ``unflatten_text`` gives, evaluated over a variable of
    any name with the names it added, is ``unflatten``'s tree."""
    leaves, treedef = pytree.flatten(tree)
    names: dict[str, Any] = {"_u0": "taken"}
    text = pytree.unflatten_text(treedef, names, "outputs")
    assert names["_u0"] == "taken"
    rebuilt = eval(text, {**names, "outputs": leaves})
    assert _same_tree(rebuilt, pytree.unflatten(treedef, leaves))


@given(trees)
def test_unflatten_refuses_extra_leaves(tree: Any) -> None:
    """A leaf more than the structure holds is an error, not dropped."""
    leaves, treedef = pytree.flatten(tree)
    with pytest.raises(ValueError, match="too many leaves"):
        pytree.unflatten(treedef, [*leaves, "extra"])


@given(trees)
def test_unflatten_refuses_missing_leaves(tree: Any) -> None:
    """A leaf fewer than the structure holds is a ValueError too (not a
    ``StopIteration`` escaping into the caller's iteration)."""
    leaves, treedef = pytree.flatten(tree)
    assume(leaves)
    with pytest.raises(ValueError, match="too few leaves"):
        pytree.unflatten(treedef, leaves[:-1])


@given(mutated_calls())
def test_a_changed_structure_is_reordered_or_described(
    calls: tuple[tuple[list[Any], dict[str, Any]], tuple[list[Any], dict[Any, Any]]],
) -> None:
    """A call whose dicts only list their keys in another order is put back
    in the compiled order, with the same leaves; any other change is
    described, at the path of a node that changed."""
    tree, mutated = calls
    leaves, treedef = pytree.flatten(tree)
    _, mutated_treedef = pytree.flatten(mutated)
    reordered = pytree.reorder_like(mutated, treedef)
    if reordered is not None:
        again, reordered_treedef = pytree.flatten(reordered)
        assert reordered_treedef == treedef
        assert _leaves_are(again, leaves)
    else:
        message = pytree.describe_mismatch(treedef, mutated_treedef)
        assert message != "the structure differs"
        assert re.search(r"must be|expected|missing|unexpected", message)
