"""einops on traced arrays (irc's einops backend), against einops on NumPy
at two bindings of the symbols, on the reference interpreter and on the
Triton interpreter backend. Skipped when einops is not installed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import irc

einops = pytest.importorskip("einops")
pytest.importorskip("torch")  # the Triton interpreter backend runs on torch

from einops import einsum, pack, rearrange, reduce, repeat, unpack  # noqa: E402

F32 = "float32"
BINDINGS = ({"N": 2, "M": 3}, {"N": 5, "M": 1})
BACKENDS = ("reference", "interpret")

Shape = tuple[Any, ...]


def _leaves(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def check(
    function: Callable[..., Any],
    shapes: Sequence[Shape],
    dtype: str = F32,
    facts: Sequence[str] = (),
    bindings: Sequence[dict[str, int]] = BINDINGS,
) -> irc.Compiled:
    compiled = irc.compile(
        function, *(irc.TensorSpec(s, dtype) for s in shapes), facts=facts
    )
    for seed, binding in enumerate(bindings):
        rng = np.random.default_rng(seed)
        arrays = [
            rng.standard_normal(
                [binding[d] if isinstance(d, str) else d for d in s]
            ).astype(dtype)
            for s in shapes
        ]
        expected = _leaves(function(*arrays))
        for backend in BACKENDS:
            got = _leaves(compiled(*arrays, backend=backend))
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                where = f"{backend} at {binding}"
                assert g.shape == e.shape, (where, g.shape, e.shape)
                assert g.dtype == e.dtype, (where, g.dtype, e.dtype)
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=where)
    return compiled


def _pack_unpack(x, y):
    packed, shapes = pack([x, y], "b *")
    first, second = unpack(packed, shapes, "b *")
    return packed, first, second


CASES: dict[str, tuple[Callable[..., Any], list[Shape]]] = {
    "split heads": (lambda x: rearrange(x, "b (h d) -> b h d", h=12), [("N", 768)]),
    "merge": (lambda x: rearrange(x, "b h d -> b (h d)"), [("N", "M", 4)]),
    "symbolic split": (
        lambda x: rearrange(
            rearrange(x, "b h d -> (b h) d"), "(b h) d -> b h d", h=x.shape[1]
        ),
        [("N", "M", 4)],
    ),
    "permute": (lambda x: rearrange(x, "b h d -> d b h"), [("N", "M", 4)]),
    "heads to batch": (
        lambda x: rearrange(x, "b n (h d) -> (b h) n d", h=2),
        [(2, "N", 6)],
    ),
    "ellipsis": (lambda x: rearrange(x, "... d -> d ..."), [("N", "M", 4)]),
    "list of arrays": (
        lambda x, y: rearrange([x, y], "s b d -> b s d"),
        [("N", 3), ("N", 3)],
    ),
    "sum": (lambda x: reduce(x, "b h d -> b d", "sum"), [("N", "M", 4)]),
    "mean": (lambda x: reduce(x, "b h d -> b d", "mean"), [("N", "M", 4)]),
    "max": (lambda x: reduce(x, "b h d -> h", "max"), [("N", "M", 4)]),
    "min pooling": (
        lambda x: reduce(x, "b (h h2) -> b h", "min", h2=2),
        [("N", 6)],
    ),
    "prod keep axis": (lambda x: reduce(x, "b d -> b 1", "prod"), [("N", 3)]),
    "any": (lambda x: reduce(x > 0, "b d -> b", "any"), [("N", 3)]),
    "all": (lambda x: reduce(x < 1, "b h d -> h", "all"), [("N", "M", 4)]),
    "repeat": (lambda x: repeat(x, "b d -> b r d", r=3), [("N", 4)]),
    "repeat symbolic": (
        lambda x: repeat(x, "b d -> b d n", n=x.shape[0]),
        [("N", 4)],
    ),
    "repeat merged": (lambda x: repeat(x, "b d -> (r b) d", r=2), [("N", 4)]),
    "einsum": (
        lambda x, y: einsum(x, y, "b i d, b j d -> b i j"),
        [("N", "M", 4), ("N", 3, 4)],
    ),
    "pack and unpack": (_pack_unpack, [("N", 4), ("N", 2, 3)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_einops_matches_numpy(name: str) -> None:
    function, shapes = CASES[name]
    check(function, shapes)


def test_symbolic_split_follows_the_shape_algebra() -> None:
    """``N*768`` split by ``h=12`` is ``[N, 12, 64]``; a symbolic length
    splits with a divisibility fact, and without one says why, at the line."""
    compiled = check(lambda x: rearrange(x, "b (h d) -> b h d", h=12), [("N", 768)])
    assert "!graph.tensor<[N, 12, 64], f32>" in compiled.ir("graph")
    check(
        lambda x: rearrange(x, "b (h d) -> b h d", h=4),
        [("N", "M")],
        facts=["M % 4 == 0"],
        bindings=[{"N": 2, "M": 8}, {"N": 3, "M": 4}],
    )
    with pytest.raises(irc.IrcShapeError, match=r"cannot reshape \(N, M\)") as info:
        irc.compile(
            lambda x: rearrange(x, "b (h d) -> b h d", h=4),
            irc.TensorSpec(("N", "M"), F32),
        )
    assert str(info.value).startswith(f"{__file__}:")


def test_repeat_is_a_broadcast() -> None:
    text = irc.compile(
        lambda x: repeat(x, "b d -> b r d", r=3), irc.TensorSpec(("N", 4), F32)
    ).ir("graph")
    assert "graph.broadcast" in text
    assert "!graph.tensor<[N, 3, 4], f32>" in text


def test_mean_of_ints_is_refused_as_einops_refuses_it_on_numpy() -> None:
    def mean(x):
        return reduce(x, "b d -> b", "mean")

    message = "reduce_mean is not available for non-floating tensors"
    with pytest.raises(NotImplementedError, match=message):
        mean(np.ones((2, 3), np.int32))
    with pytest.raises(NotImplementedError, match=message):
        irc.compile(mean, irc.TensorSpec(("N", 3), "int32"))
