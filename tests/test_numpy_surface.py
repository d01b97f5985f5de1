"""NumPy's layout, reduction and einsum functions on traced arrays: values,
shapes and dtypes as NumPy gives them, at two bindings of the symbols, on
the reference interpreter and on the Triton interpreter backend; what cannot
be captured is an error that says what to write instead."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irc

pytest.importorskip("torch")  # the Triton interpreter backend runs on torch

F32 = "float32"
BINDINGS = ({"N": 2, "M": 3, "B": 2}, {"N": 5, "M": 1, "B": 3})
BACKENDS = ("reference", "interpret")
TABLE = np.arange(12.0, dtype=np.float32)

Shape = tuple[Any, ...]


def _array(rng: np.random.Generator, shape: Sequence[int], dtype: str) -> np.ndarray:
    kind = np.dtype(dtype).kind
    if kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if kind == "i":
        return rng.integers(-3, 4, shape).astype(dtype)
    return rng.random(shape) < 0.5


def _concrete(shape: Shape, binding: dict[str, int]) -> tuple[int, ...]:
    return tuple(binding[d] if isinstance(d, str) else d for d in shape)


def check(
    function: Callable[..., Any],
    shapes: Sequence[Shape],
    dtype: str = F32,
    backends: Sequence[str] = BACKENDS,
    bindings: Sequence[dict[str, int]] = BINDINGS,
) -> irc.Compiled:
    """Compile once with symbolic dims; compare with NumPy at each binding."""
    compiled = irc.compile(function, *(irc.TensorSpec(s, dtype) for s in shapes))
    for seed, binding in enumerate(bindings):
        rng = np.random.default_rng(seed)
        arrays = [_array(rng, _concrete(s, binding), dtype) for s in shapes]
        expected = np.asarray(function(*arrays))
        for backend in backends:
            got = compiled(*arrays, backend=backend)
            where = f"{backend} at {binding}"
            assert got.shape == expected.shape, (where, got.shape, expected.shape)
            assert got.dtype == expected.dtype, (where, got.dtype, expected.dtype)
            np.testing.assert_allclose(
                got, expected, rtol=1e-5, atol=1e-5, err_msg=where
            )
    return compiled


# ----- einsum ----------------------------------------------------------------

EINSUM: dict[str, tuple[str, list[Shape]]] = {
    "matmul": ("ij,jk->ik", [("N", 4), (4, "M")]),
    "implicit": ("ij,jk", [("N", 4), (4, "M")]),
    "implicit order by code": ("Ba,aC", [("N", 3), (3, "M")]),
    "batched": ("bij,bjk->bik", [("B", "N", 3), ("B", 3, 5)]),
    "attention scores": ("bhqd,bhkd->bhqk", [(2, "B", "N", 4), (2, "B", "N", 4)]),
    "diagonal": ("ii->i", [("N", "N")]),
    "trace": ("ii", [("N", "N")]),
    "diagonal kept": ("iij->ij", [("N", "N", 2)]),
    "transpose": ("ij->ji", [("N", 3)]),
    "outer": ("i,j->ij", [("N",), ("M",)]),
    "ellipsis": ("...ij,...jk", [("B", "N", 3), (3, 4)]),
    "ellipsis explicit": ("...ij->...j", [("B", "N", 3)]),
    "three operands": ("ij,jk,kl->il", [("N", 3), (3, 4), (4, "M")]),
    "full contraction": ("ij,ij->", [("N", 3), ("N", 3)]),
    "sum": ("ij->", [("N", 3)]),
    "elementwise": ("ij,ij->ij", [("N", 3), ("N", 3)]),
    "broadcast size 1": ("ij,ij->ij", [("N", 1), ("N", 3)]),
    "summed before contracting": ("ijk,jl->il", [("N", 3, 2), (3, "M")]),
}


@pytest.mark.parametrize("name", sorted(EINSUM))
def test_einsum(name: str) -> None:
    subscripts, shapes = EINSUM[name]
    check(lambda *xs: np.einsum(subscripts, *xs), shapes)


@pytest.mark.parametrize("dtype", ["int32", "bool", "float64"])
def test_einsum_dtypes_follow_numpy(dtype: str) -> None:
    # ints keep their width (no int64 accumulator), bools are logic
    check(lambda a, b: np.einsum("ij,jk->ik", a, b), [("N", 3), (3, "M")], dtype)
    check(lambda a: np.einsum("ij->i", a), [("N", 3)], dtype)


def test_einsum_promotes_and_takes_python_scalars_as_arrays() -> None:
    # NumPy's einsum makes an array of a Python float: float64, not weak.
    check(lambda a: np.einsum("i,->i", a, 2.0), [("N",)])
    check(lambda a: np.einsum("ij,j->i", a, np.arange(3, dtype=np.int64)), [("N", 3)])
    check(lambda a: np.einsum("ij->i", a, dtype=np.float64), [("N", 3)])


def test_einsum_interleaved_form_and_optimize() -> None:
    check(
        lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2], optimize=True),
        [("N", 3), (3, "M")],
    )
    check(lambda a: np.einsum(a, [Ellipsis, 1]), [("N", 3)])


def test_einsum_lowers_to_existing_graph_ops() -> None:
    text = irc.compile(
        lambda a, b: np.einsum("bij,bjk->bik", a, b),
        irc.TensorSpec(("B", "N", 3), F32),
        irc.TensorSpec(("B", 3, "M"), F32),
    ).ir("graph")
    assert "graph.matmul" in text
    plain = irc.compile(
        lambda a, b: np.einsum("ij,jk->ik", a, b),
        irc.TensorSpec(("N", 3), F32),
        irc.TensorSpec((3, "M"), F32),
    ).ir("graph")
    assert re.findall(r"= (graph\.\w+)", plain) == ["graph.matmul"]
    assert "!graph.tensor<[B, N, M], f32>" in text
    diagonal = irc.compile(
        lambda a: np.einsum("ii->i", a), irc.TensorSpec(("N", "N"), F32)
    ).ir("graph")
    assert "graph.iota" in diagonal and "graph.select" in diagonal
    assert "graph.reduce sum" in diagonal


@st.composite
def einsum_problems(draw: st.DrawFn) -> tuple[str, list[Shape], dict[str, int]]:
    """Random subscripts over a few labels (repeated ones too: diagonals),
    with static or symbolic sizes per label."""
    labels = "ijk"
    terms = draw(
        st.lists(
            st.lists(st.sampled_from(labels), min_size=1, max_size=3),
            min_size=1,
            max_size=3,
        )
    )
    used = sorted({label for term in terms for label in term})
    output = draw(
        st.permutations(used).map(lambda p: p[: draw(st.integers(0, len(p)))])
    )
    sizes = {label: draw(st.integers(1, 3)) for label in used}
    symbolic = {label: draw(st.booleans()) for label in used}
    shapes = [
        tuple(label.upper() if symbolic[label] else sizes[label] for label in term)
        for term in terms
    ]
    subscripts = ",".join("".join(t) for t in terms) + "->" + "".join(output)
    return subscripts, shapes, {label.upper(): sizes[label] for label in used}


@settings(max_examples=60, deadline=None)
@given(einsum_problems())
def test_einsum_agrees_with_numpy_on_random_subscripts(problem) -> None:
    subscripts, shapes, binding = problem
    check(
        lambda *xs: np.einsum(subscripts, *xs),
        shapes,
        backends=("reference",),
        bindings=[binding],
    )


# ----- layout and reductions -------------------------------------------------

FUNCTIONS: dict[str, tuple[Callable[..., Any], list[Shape], str]] = {
    "expand_dims tuple": (lambda x: np.expand_dims(x, (0, 2)), [("N", 3)], F32),
    "expand_dims negative": (lambda x: np.expand_dims(x, (-1, 0)), [("N", 3)], F32),
    "repeat axis": (lambda x: np.repeat(x, 3, axis=0), [("N", 3)], F32),
    "repeat flat": (lambda x: np.repeat(x, 2), [("N", 3)], F32),
    "repeat method": (lambda x: x.repeat(2, axis=1), [("N", 3)], F32),
    "repeat symbolic": (lambda x: np.repeat(x, x.shape[0], axis=1), [("N", 3)], F32),
    "repeat per element": (
        lambda x: np.repeat(x, [1, 0, 2], axis=1),
        [("N", 3)],
        "int32",
    ),
    "tile": (lambda x: np.tile(x, (2, 1, 3)), [("N", 3)], F32),
    "tile int": (lambda x: np.tile(x, 2), [("N", 3)], "bool"),
    "tile symbolic": (lambda x: np.tile(x, (x.shape[0], 1)), [("N", 3)], F32),
    "flip all": (lambda x: np.flip(x), [("N", 3)], F32),
    "flip axis": (lambda x: np.flip(x, 1), [("N", 3)], F32),
    "flip axes": (lambda x: np.flip(x, (0, -1)), [("N", "M")], "int32"),
    "argmin": (lambda x: np.argmin(x), [("N", 3)], F32),
    "argmin axis": (lambda x: np.argmin(x, axis=0), [("N", 3)], F32),
    "argmin ints": (
        lambda x: np.argmin(x, axis=1, keepdims=True),
        [("N", 3)],
        "int32",
    ),
    "argmin bools": (lambda x: np.argmin(x, axis=1), [("N", 3)], "bool"),
    "argmin method": (lambda x: x.argmin(axis=0, keepdims=True), [("N", 3)], F32),
    "outer": (lambda x, y: np.outer(x, y), [("N",), ("M",)], F32),
    "outer matrices": (lambda x, y: np.outer(x, y), [("N", 2), ("M",)], "int32"),
    "outer scalar": (lambda x: np.outer(x, 2.0), [("N",)], F32),
    "pad": (lambda x: np.pad(x, 1), [("N", 3)], F32),
    "pad pairs": (
        lambda x: np.pad(x, ((0, 2), (1, 3)), constant_values=-1.5),
        [("N", 3)],
        F32,
    ),
    "pad symbolic": (
        lambda x: np.pad(x, ((x.shape[0], 0), (1, 1)), constant_values=2.5),
        [("N", 3)],
        "int32",
    ),
    "pad edge": (lambda x: np.pad(x, 2, mode="edge"), [("N", 3)], F32),
    "pad reflect": (
        lambda x: np.pad(x, ((0, 0), (2, 1)), mode="reflect"),
        [("N", 3)],
        F32,
    ),
    "pad reflect twice over": (
        lambda x: np.pad(x, ((0, 0), (5, 7)), mode="reflect"),
        [("N", 3)],
        "int32",
    ),
    "pad symmetric": (
        lambda x: np.pad(x, ((1, 1), (4, 2)), mode="symmetric"),
        [("N", 3)],
        F32,
    ),
    "pad wrap": (lambda x: np.pad(x, ((1, 0), (7, 2)), mode="wrap"), [("N", 3)], F32),
    "norm": (lambda x: np.linalg.norm(x), [("N", 3)], F32),
    "norm axis": (lambda x: np.linalg.norm(x, axis=1), [("N", 3)], F32),
    "norm 2": (lambda x: np.linalg.norm(x, 2, axis=0), [("N", 3)], "int32"),
    "norm vector": (lambda x: np.linalg.norm(x, 2), [("N",)], F32),
    "norm fro": (
        lambda x: np.linalg.norm(x, "fro", keepdims=True),
        [("N", 3)],
        F32,
    ),
    "norm fro axes": (
        lambda x: np.linalg.norm(x, "fro", axis=(0, 2)),
        [("N", 3, "M")],
        F32,
    ),
    "broadcast_to constant": (
        lambda x: x + np.broadcast_to(np.arange(3, dtype=np.float32), (x.shape[0], 3)),
        [("N", 3)],
        F32,
    ),
    "broadcast_to traced": (
        lambda x: np.broadcast_to(x, (2, x.shape[0], 3)),
        [("N", 3)],
        F32,
    ),
    "ascontiguousarray": (lambda x: np.ascontiguousarray(x), [("N", 3)], F32),
    "ascontiguousarray dtype": (
        lambda x: np.ascontiguousarray(x, dtype=np.float64),
        [("N", 3)],
        "int32",
    ),
    "sum where": (lambda x: np.sum(x, axis=1, where=x > 0), [("N", 3)], F32),
    "sum where ints": (lambda x: x.sum(where=x != 1), [("N", 3)], "int32"),
    "sum initial": (lambda x: np.sum(x, initial=2.5), [("N", 3)], "int32"),
    "sum where initial": (
        lambda x: np.sum(x, axis=0, where=x < 0, initial=1.0),
        [("N", 3)],
        F32,
    ),
    "prod where": (lambda x: x.prod(axis=1, where=x > -1), [("N", 3)], F32),
    "max initial": (lambda x: np.max(x, axis=0, initial=0.5), [("N", 3)], F32),
    "min where initial": (
        lambda x: np.min(x, axis=1, where=x < 1, initial=3),
        [("N", 3)],
        F32,
    ),
    "amax where initial": (
        lambda x: np.amax(x, where=[True, False, True], initial=-10),
        [("N", 3)],
        "int32",
    ),
    "max bools initial": (lambda x: x.max(axis=1, initial=False), [("N", 3)], "bool"),
    "any": (lambda x: np.any(x), [("N", 3)], "int32"),
    "any axis keepdims": (
        lambda x: np.any(x, axis=1, keepdims=True),
        [("N", 3)],
        "int32",
    ),
    "any method where": (lambda x: x.any(axis=0, where=x < 0), [("N", 3)], "int32"),
    "any floats": (lambda x: (x > 1).any(-1), [("N", 3)], F32),
    "all": (lambda x: np.all(x), [("N", 3)], "bool"),
    "all axes": (lambda x: np.all(x, axis=(0, 1)), [("N", 3, "M")], "int32"),
    "all method": (lambda x: x.all(axis=0, keepdims=True), [("N", 3)], "bool"),
    "all where": (
        lambda x: np.all(x, axis=1, where=[True, False, True]),
        [("N", 3)],
        "int32",
    ),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_function_matches_numpy(name: str) -> None:
    function, shapes, dtype = FUNCTIONS[name]
    check(function, shapes, dtype)


def test_any_and_all_count_nan_as_true_and_make_conditions() -> None:
    """NumPy's truth of an element is ``x != 0``; a reduced comparison is
    the scalar bool ``irc.cond`` asks for (its error advises .any()/.all())."""

    def function(x: Any) -> Any:
        flags = (np.any(x, axis=1), np.all(x, axis=1))
        return flags, irc.cond((x > 1).any(), lambda: x, lambda: -x)

    compiled = irc.compile(function, irc.TensorSpec(("N", 3), F32))
    nan = np.nan
    x = np.array([[nan, 0, 0], [nan, 1, -1], [0, 0, 0], [0.5, 2, 0]], np.float32)
    for backend in BACKENDS:
        (any_, all_), chosen = compiled(x, backend=backend)
        np.testing.assert_array_equal(any_, [True, True, False, True])
        np.testing.assert_array_equal(all_, [False, True, False, False])
        np.testing.assert_array_equal(chosen, x)
        np.testing.assert_array_equal(compiled(x - 5, backend=backend)[1], 5 - x)


@pytest.mark.parametrize("function", [np.argmin, np.argmax])
def test_argmin_returns_the_first_minimum_and_the_first_nan(function) -> None:
    nan = np.nan
    rows = np.array(
        [
            [3.0, 1.0, 1.0, 5.0],
            [nan, 0.0, nan, -1.0],
            [2.0, 2.0, 2.0, 2.0],
            [-0.0, 0.0, -np.inf, -np.inf],
            [np.inf, nan, -np.inf, 0.0],
        ],
        np.float32,
    )
    compiled = irc.compile(
        lambda x: (function(x, axis=1), function(x, axis=0), function(x)),
        irc.TensorSpec(("N", 4), F32),
    )
    for count in (2, 5):
        for backend in BACKENDS:
            got = compiled(rows[:count], backend=backend)
            expected = (
                function(rows[:count], 1),
                function(rows[:count], 0),
                function(rows[:count]),
            )
            for g, e in zip(got, expected):
                np.testing.assert_array_equal(g, e, err_msg=f"{backend}, N={count}")


_ARGMIN = irc.compile(
    lambda x: (np.argmin(x, axis=0), np.argmin(x, axis=1), np.argmin(x)),
    irc.TensorSpec(("N", 3), F32),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.sampled_from([-1.0, 0.0, -0.0, 1.0, np.nan, -np.inf]),
            min_size=3,
            max_size=3,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_argmin_agrees_with_numpy_on_ties_and_nans(rows: list[list[float]]) -> None:
    x = np.array(rows, np.float32)
    got = _ARGMIN(x, backend="reference")
    expected = np.argmin(x, axis=0), np.argmin(x, axis=1), np.argmin(x)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_argmin_of_the_least_int() -> None:
    # -x overflows at the least int32; the order-reversing map does not.
    least = np.iinfo(np.int32).min
    x = np.array([[5, least, least], [least, 0, 7]], np.int32)
    compiled = irc.compile(
        lambda x: np.argmin(x, axis=1), irc.TensorSpec(("N", 3), "int32")
    )
    for backend in BACKENDS:
        np.testing.assert_array_equal(compiled(x, backend=backend), [1, 0])


def test_repeat_and_tile_build_broadcasts_not_copies() -> None:
    text = irc.compile(
        lambda x: np.tile(np.repeat(x, 2, axis=1), (3, 1)),
        irc.TensorSpec(("N", 3), F32),
    ).ir("graph")
    assert "graph.broadcast" in text and "graph.take" not in text
    assert "!graph.tensor<[3*N, 6], f32>" in text


# ----- what cannot be captured says what to write --------------------------------


def _len(x):
    return len(x)


def _slice_constant(x):
    return x + TABLE[: x.shape[0]]


def _index_constant(x):
    return TABLE[x.astype(np.int64)]


ERRORS: dict[str, tuple[Callable[..., Any], type[Exception], str]] = {
    "len of a symbolic dim": (
        _len,
        irc.TracingError,
        r"len\(\).*symbolic.*x\.shape\[0\]",
    ),
    "slicing a constant by a size": (
        _slice_constant,
        irc.TracingError,
        r"NumPy array .* is indexed or sliced by the symbolic size N.*pass the "
        r"array as an argument",
    ),
    "indexing a constant by a traced array": (
        _index_constant,
        irc.TracingError,
        r"indexed or sliced by a traced array.*pass the array as an argument",
    ),
    "max where without initial": (
        lambda x: np.max(x, where=x > 0),
        irc.TracingError,
        r"np\.max\(\.\.\., where=\.\.\.\) needs initial=",
    ),
    "where of ints": (
        lambda x: np.sum(x, where=x.astype(np.int32)),
        irc.IrcTypeError,
        r"where= must be a bool mask, got int32",
    ),
    "where wider than the array": (
        lambda x: np.sum(x, where=np.ones((2, 1, 3), bool)),
        irc.IrcShapeError,
        r"cannot broadcast an array of shape \(2, 1, 3\) to \(N, 3\)",
    ),
    "pad mode": (
        lambda x: np.pad(x, 1, mode="mean"),
        irc.TracingError,
        r"mode='mean'.*not supported.*'constant', 'edge', 'reflect'",
    ),
    "pad reflect past a symbolic size": (
        lambda x: np.pad(x, ((2, 0), (0, 0)), mode="reflect"),
        irc.IrcShapeError,
        r"pads an axis of symbolic size N by \(2, 0\), which needs N >= 3: "
        r"declare the fact 'N >= 3'",
    ),
    "pad per-axis values": (
        lambda x: np.pad(x, 1, constant_values=((1, 2), (3, 4))),
        irc.TracingError,
        r"constant_values must be one scalar",
    ),
    "pad widths": (
        lambda x: np.pad(x, ((1, 2), (3, 4), (5, 6))),
        irc.IrcShapeError,
        r"pad widths .* do not fit an array of rank 2",
    ),
    "norm order": (
        lambda x: np.linalg.norm(x, np.inf),
        irc.TracingError,
        r"ord=inf\) is not supported.*matrix norms: ord=None or 'fro'",
    ),
    "spectral norm": (
        lambda x: np.linalg.norm(x, 2, axis=(0, 1)),
        irc.TracingError,
        r"ord=2\) is not supported",
    ),
    "vector fro": (
        lambda x: np.linalg.norm(x, "fro", axis=1),
        irc.TracingError,
        r"ord='fro'\) is not supported.*vector norms",
    ),
    "repeat traced counts": (
        lambda x: np.repeat(x, x.astype(np.int64)),
        irc.TracingError,
        r"traced repeats gives a shape that depends on the data",
    ),
    "repeat counts per element": (
        lambda x: np.repeat(x, [1, 2], axis=0),
        irc.IrcShapeError,
        r"one count per element needs a static axis of 2 elements, got an axis of "
        r"size N",
    ),
    "einsum operand count": (
        lambda x: np.einsum("ij,jk", x),
        irc.IrcShapeError,
        r"np\.einsum\('ij,jk'\): 2 operand subscripts for 1 operands",
    ),
    "einsum output label": (
        lambda x: np.einsum("ij->k", x),
        irc.IrcShapeError,
        r"output label 'k' names no operand's axis",
    ),
    "einsum rank": (
        lambda x: np.einsum("i->i", x),
        irc.IrcShapeError,
        r"operand 0 has rank 2 but its subscripts 'i' name 1 axes",
    ),
    "einsum dropped ellipsis": (
        lambda x: np.einsum("...j->j", x),
        irc.IrcShapeError,
        r"'\.\.\.' covers dims that the output drops",
    ),
    "einsum label": (
        lambda x: np.einsum("i.j", x),
        irc.IrcShapeError,
        r"'\.' is not a label",
    ),
    "einsum sizes": (
        lambda x: np.einsum("ij,ij", x, x.T),
        irc.IrcShapeError,
        r"label 'i' has sizes N and 3 in different operands",
    ),
    "einsum diagonal sizes": (
        lambda x: np.einsum("ii->i", x),
        irc.IrcShapeError,
        r"'i' repeated in one operand names axes of sizes N and 3",
    ),
    "einsum casting": (
        lambda x: np.einsum("ij->i", x, dtype=np.float16),
        irc.TracingError,
        r"cannot cast float32 to float16 under casting='safe'",
    ),
    "einsum out": (
        lambda x: np.einsum("ij->i", x, out=x),
        irc.TracingError,
        r"out=\.\.\.\) is not supported",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_say_what_to_write(name: str) -> None:
    function, error, message = ERRORS[name]
    with pytest.raises(error, match=message) as info:
        irc.compile(function, irc.TensorSpec(("N", 3), F32))
    # Every error names the user's line.
    assert re.match(rf"{re.escape(__file__)}:\d+: ", str(info.value))
