"""NumPy's advanced integer indexing (several index arrays, NumPy's
placement of the index axes), writes through index arrays (the last
repeated index wins, so ``x[idx] += v`` adds once) and ``np.add.at`` (which
accumulates), against NumPy; their gradients against finite differences and
analytic formulas; and ``irc.grad`` of functions of arrays with derived
dims (``N*4``, ``N - 1``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irc
from irc.testing import check_grad

F64 = "float64"
BACKENDS = ("reference", "interpret")
SLOW = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def spec(*shape: int | str, dtype: str = F64) -> irc.TensorSpec:
    return irc.TensorSpec(shape, dtype)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def ops_of(compiled: Any) -> str:
    return compiled.ir("graph")


def finite_differences(
    f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6
) -> np.ndarray:
    gradient = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        gradient[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return gradient


# Reads -------------------------------------------------------------------------


def cross_entropy(logits: Any, labels: Any) -> Any:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -logp[np.arange(logits.shape[0]), labels].mean()


def one_hot_cross_entropy(logits: Any, labels: Any) -> Any:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    onehot = labels[:, None] == np.arange(logits.shape[-1])
    return -np.where(onehot, logp, 0.0).sum(axis=-1).mean()


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_cross_entropy_idiom_and_its_gradient(backend: str) -> None:
    value = irc.compile(cross_entropy, spec("B", "V"), spec("B", dtype="int64"))
    grad = irc.compile(
        irc.grad(cross_entropy), spec("B", "V"), spec("B", dtype="int64")
    )
    # A batch index (np.arange along the result axis) is one-hot: a select and
    # a row sum that fuse with the softmax; no take, no scatter.
    text = ops_of(grad)
    assert "graph.take" not in text and "graph.scatter_add" not in text
    # ... as many kernels as the one-hot written by hand
    by_hand = irc.compile(
        irc.grad(one_hot_cross_entropy), spec("B", "V"), spec("B", dtype="int64")
    )
    assert grad.num_kernels == by_hand.num_kernels
    for batch, classes in ((3, 5), (6, 11)):
        logits = rng(batch).standard_normal((batch, classes))
        labels = rng(batch).integers(-classes, classes, batch)  # negative wrap
        shifted = logits - logits.max(-1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
        want = -logp[np.arange(batch), labels].mean()
        np.testing.assert_allclose(value(logits, labels, backend=backend), want)
        onehot = np.zeros_like(logits)
        onehot[np.arange(batch), labels] = 1
        expected = (np.exp(logp) - onehot) / batch  # softmax - onehot, averaged
        np.testing.assert_allclose(
            grad(logits, labels, backend=backend), expected, atol=1e-12
        )


def test_batch_indices_are_found_through_reshapes_and_casts() -> None:
    def read(x: Any, idx: Any) -> Any:
        rows = np.arange(x.shape[0])
        return (
            x[rows[:, None], idx],  # [B, K]: a batch index along axis 0
            x[rows.astype(np.int32), idx[:, 0]],
            x[rows[::-1], idx[:, 0]],  # reversed: not a batch index (a take)
        )

    compiled = irc.compile(read, spec("B", "V"), spec("B", "K", dtype="int64"))
    text = ops_of(compiled)
    assert text.count("graph.take") == 1, text
    for batch in (2, 5):
        x = rng(batch).standard_normal((batch, 6))
        idx = rng(batch).integers(-6, 6, (batch, 3))
        for got, want in zip(compiled(x, idx, backend="reference"), read(x, idx)):
            np.testing.assert_array_equal(got, want)


KEYS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "x[i, j]": lambda x, i, j: x[i, j],
    "x[i, :, j]": lambda x, i, j: x[i, :, j],  # separated: index axes first
    "x[:, i, j]": lambda x, i, j: x[:, i, j],  # adjacent: in place
    "x[i, j, 1:]": lambda x, i, j: x[i, j, 1:],
    "x[i, 1, j]": lambda x, i, j: x[i, 1, j],  # an int is an advanced index
    "x[1, :, j]": lambda x, i, j: x[1, :, j],  # ... so these are separated
    "x[i, None, j]": lambda x, i, j: x[i, None, j],  # None separates too
    "x[None, :, i, j]": lambda x, i, j: x[None, :, i, j],
    "x[..., i, j]": lambda x, i, j: x[..., i, j],
    "x[i, ..., j]": lambda x, i, j: x[i, ..., j],
    "x[i[:, None], j]": lambda x, i, j: x[i[:, None], j],  # broadcast to 2-D
    "x[:, j][:, None, :, i]": lambda x, i, j: x[:, j][:, None, :, i],
}


@pytest.mark.parametrize("name", KEYS)
def test_several_index_arrays_follow_numpys_placement(name: str) -> None:
    key = KEYS[name]
    compiled = irc.compile(
        key, spec("A", 4, "C"), spec("K", dtype="int64"), spec("K", dtype="int64")
    )
    for size in (2, 5):
        x = rng(size).standard_normal((4, 4, 5))
        i = rng(size).integers(-4, 4, size)
        j = rng(size + 1).integers(-4, 4, size)
        want = key(x, i, j)
        got = compiled(x, i, j, backend="reference")
        assert got.shape == want.shape, name
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_arrays_of_any_rank_on_both_backends(backend: str) -> None:
    def read(x: Any, i: Any, j: Any) -> Any:
        return x[i], x[:, j], x[i[..., None], j], x[i, :, j[0] % 3]

    compiled = irc.compile(
        read, spec("A", "B", 3), spec(2, "K", dtype="int32"), spec("K", dtype="int64")
    )
    for size in (1, 4):
        x = rng(size).standard_normal((5, 6, 3))
        i = rng(size).integers(-5, 5, (2, size)).astype(np.int32)
        j = rng(size + 1).integers(-6, 6, size)
        for got, want in zip(compiled(x, i, j, backend=backend), read(x, i, j)):
            np.testing.assert_array_equal(got, want)


@st.composite
def indexing_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], list[Any], Any]:
    """An array shape, a key of slices, ints, None and 1-3 index arrays of
    broadcastable shapes (values in NumPy's range, negatives too)."""
    rank = draw(st.integers(2, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    index_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    kinds = draw(
        st.lists(
            st.sampled_from(["array", "slice", "int"]), min_size=rank, max_size=rank
        )
    )
    if "array" not in kinds:
        kinds[draw(st.integers(0, rank - 1))] = "array"
    key: list[Any] = []
    for extent, kind in zip(shape, kinds):
        if kind == "array":
            # a trailing part of the index shape, some dims 1: broadcasting
            dims = index_shape[draw(st.integers(0, len(index_shape))) :]
            dims = tuple(d if draw(st.booleans()) else 1 for d in dims)
            seed = draw(st.integers(0, 2**16))
            key.append(np.random.default_rng(seed).integers(-extent, extent, dims))
        elif kind == "int":
            key.append(draw(st.integers(-extent, extent - 1)))
        else:
            start = draw(st.integers(0, extent - 1))
            key.append(slice(start, None, draw(st.sampled_from([1, 2]))))
    if draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), None)
    values = np.random.default_rng(draw(st.integers(0, 99))).standard_normal(shape)
    return shape, key, values


def _keyed(key: list[Any]) -> Callable[[Any, tuple[Any, ...]], tuple[Any, ...]]:
    """The key with its index arrays replaced by the given ones, in order."""

    def keyed(indices: tuple[Any, ...]) -> tuple[Any, ...]:
        it = iter(indices)
        return tuple(next(it) if isinstance(k, np.ndarray) else k for k in key)

    return keyed


def _x_spec(shape: tuple[int, ...], symbolic: bool) -> irc.TensorSpec:
    return spec(*(f"D{a}" for a in range(len(shape))) if symbolic else shape)


@SLOW
@given(indexing_cases(), st.booleans())
def test_reads_equal_numpys_for_random_keys(case: Any, symbolic: bool) -> None:
    shape, key, x = case
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    keyed = _keyed(key)

    def read(x: Any, *indices: Any) -> Any:
        return x[keyed(indices)]

    specs = [_x_spec(shape, symbolic)] + [spec(*a.shape, dtype="int64") for a in arrays]
    got = irc.compile(read, *specs)(x, *arrays, backend="reference")
    want = x[tuple(key)]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@SLOW
@given(indexing_cases(), st.sampled_from(["set", "add once", "add.at"]))
def test_writes_equal_numpys_for_random_keys(case: Any, how: str) -> None:
    # The index ranges are small, so positions repeat often: the last
    # update wins for x[key] = v and x[key] += v, np.add.at accumulates.
    shape, key, x = case
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    keyed = _keyed(key)
    v = rng(len(arrays)).standard_normal(x[tuple(key)].shape)

    def write(x: Any, v: Any, *indices: Any) -> Any:
        if how == "set":
            x[keyed(indices)] = v
        elif how == "add once":
            x[keyed(indices)] += v
        else:
            np.add.at(x, keyed(indices), v)
        return x

    specs = [spec(*shape), spec(*v.shape)]
    specs += [spec(*a.shape, dtype="int64") for a in arrays]
    got = irc.compile(write, *specs)(x.copy(), v, *arrays, backend="reference")
    np.testing.assert_allclose(got, write(x.copy(), v, *arrays))


def test_symbolic_dims_serve_every_size() -> None:
    def read(x: Any, i: Any, j: Any) -> Any:
        return x[i, :, j] * 2

    compiled = irc.compile(
        read,
        spec("A", "B", "C"),
        spec("K", "L", dtype="int64"),
        spec("L", dtype="int64"),
    )
    for a, b, c, k, m in ((2, 3, 4, 1, 2), (5, 1, 3, 3, 4)):
        x = rng(a).standard_normal((a, b, c))
        i, j = rng(k).integers(-a, a, (k, m)), rng(m).integers(-c, c, m)
        np.testing.assert_array_equal(
            compiled(x, i, j, backend="reference"), x[i, :, j] * 2
        )


# Out of range --------------------------------------------------------------------


def test_out_of_range_indices() -> None:
    def gather(x: Any, i: Any, j: Any) -> Any:
        return x[i, j]

    compiled = irc.compile(
        gather, spec(3, 4), spec(2, dtype="int64"), spec(2, dtype="int64")
    )
    x = np.arange(12.0).reshape(3, 4)
    i, j = np.array([0, 2]), np.array([1, 4])  # 4 is past axis 1 (NumPy raises)
    with pytest.raises(IndexError):
        x[i, j]
    # the linear index of a bad component is -1: the reference reports it ...
    with pytest.raises(irc.ExecutionError, match="out of range"):
        compiled(x, i, j, backend="reference")
    # ... and the kernels mask it (reading 0), never another element
    np.testing.assert_array_equal(compiled(x, i, j, backend="interpret"), [1.0, 0.0])
    # one-hot reads (a batch index) match no position: 0 everywhere
    batch = irc.compile(
        lambda x, j: x[np.arange(3), j], spec(3, 4), spec(3, dtype="int64")
    )
    np.testing.assert_array_equal(
        batch(x, np.array([1, 7, -1]), backend="reference"), [1.0, 0.0, 11.0]
    )
    # np.add.at: the reference reports it, the kernels add nothing there
    added = irc.compile(add_at, spec(3, 4), spec(2, dtype="int64"), spec(2, 4))
    rows, ones = np.array([1, 3]), np.ones((2, 4))
    with pytest.raises(irc.ExecutionError, match="out of range"):
        added(x.copy(), rows, ones, backend="reference")
    want = x.copy()
    want[1] += 1
    np.testing.assert_array_equal(
        added(x.copy(), rows, ones, backend="interpret"), want
    )
    # a write (one-hot) writes nothing at an index out of range, on every backend
    written = irc.compile(set_last_wins, spec(3, 4), spec(2, dtype="int64"), spec(2, 4))
    want = x.copy()
    want[1] = 1
    for backend in BACKENDS:
        got = written(x.copy(), rows, ones, backend=backend)
        np.testing.assert_array_equal(got, want)
    # constant indices are checked when captured, as NumPy's IndexError
    with pytest.raises(irc.IrcShapeError, match="out of bounds"):
        irc.trace(lambda x: x[[0, 1], [2, 4]], spec(3, 4))


# Writes ------------------------------------------------------------------------


def set_last_wins(x: Any, i: Any, v: Any) -> Any:
    x[i] = v
    return x


def add_once(x: Any, i: Any, v: Any) -> Any:
    x[i] += v  # Python's read, add, write: a repeated index adds once
    return x


def add_at(x: Any, i: Any, v: Any) -> Any:
    np.add.at(x, i, v)  # repeated indices accumulate
    return x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("write", [set_last_wins, add_once, add_at])
def test_writes_through_an_index_array(write: Callable[..., Any], backend: str) -> None:
    compiled = irc.compile(write, spec("N", 3), spec("K", dtype="int64"), spec("K", 3))
    for size in (4, 7):
        x = rng(size).standard_normal((size, 3))
        i = np.array([1, -1, 1, 0, 1])  # 1 three times, -1 and 0 once
        v = rng(size + 1).standard_normal((5, 3))
        want = write(x.copy(), i, v)
        np.testing.assert_allclose(compiled(x, i, v, backend=backend), want)


def test_numpys_add_once_and_add_at_differ_on_repeats() -> None:
    x, i, v = np.zeros(3), np.array([1, 1]), np.array([2.0, 3.0])
    once = irc.compile(add_once, spec(3), spec(2, dtype="int64"), spec(2))
    accumulated = irc.compile(add_at, spec(3), spec(2, dtype="int64"), spec(2))
    np.testing.assert_array_equal(once(x.copy(), i, v, backend="reference"), [0, 3, 0])
    np.testing.assert_array_equal(accumulated(x, i, v, backend="reference"), [0, 5, 0])


WRITES: dict[str, tuple[Callable[[Any, Any, Any], tuple], str]] = {
    "x[i, :, j] = v": (lambda x, i, j: (i, slice(None), j), "set"),
    "x[i, j] += v": (lambda x, i, j: (i, j), "add"),
    "x[:, i, j] = v": (lambda x, i, j: (slice(None), i, j), "set"),
    "x[arange, i] = v": (lambda x, i, j: (np.arange(x.shape[0])[:, None], i), "set"),
    "x[arange, i] += v": (lambda x, i, j: (np.arange(x.shape[0])[:, None], i), "add"),
    "add.at(x, (i, :, j), v)": (lambda x, i, j: (i, slice(None), j), "at"),
    "add.at(x, (i, j), v)": (lambda x, i, j: (i, j), "at"),
    "add.at(x, (arange, i), v)": (
        lambda x, i, j: (np.arange(x.shape[0])[:, None], i),
        "at",
    ),
    "add.at(x, (:, i), v)": (lambda x, i, j: (slice(None), i), "at"),
}


def _written(name: str) -> Callable[..., Any]:
    key_of, how = WRITES[name]

    def written(x: Any, i: Any, j: Any, v: Any) -> Any:
        x = x.copy()
        key = key_of(x, i, j)
        if how == "set":
            x[key] = v
        elif how == "add":
            x[key] += v
        else:
            np.add.at(x, key, v)
        return x

    return written


@pytest.mark.parametrize("name", WRITES)
def test_writes_with_several_index_arrays(name: str) -> None:
    written = _written(name)
    x = rng().standard_normal((3, 3, 4))
    i, j = np.array([0, 2, 0, -1]), np.array([1, 1, 1, 2])  # (0, 1) twice
    shape = x[WRITES[name][0](x, i, j)].shape
    v = rng(1).standard_normal(shape)
    compiled = irc.compile(
        written,
        spec(3, 3, 4),
        spec(4, dtype="int64"),
        spec(4, dtype="int64"),
        spec(*shape),
    )
    np.testing.assert_allclose(
        compiled(x, i, j, v, backend="reference"), written(x, i, j, v), err_msg=name
    )


@SLOW
@given(
    st.integers(1, 5),
    st.integers(1, 6),
    st.lists(st.integers(-5, 4), min_size=1, max_size=8),
    st.sampled_from([set_last_wins, add_once, add_at]),
)
def test_random_repeated_writes_equal_numpys(
    rows: int, count: int, raw: list[int], write: Callable[..., Any]
) -> None:
    i = np.array([r % rows - rows * (r < 0) for r in raw])  # in [-rows, rows)
    v = rng(count).standard_normal((len(raw), 2))
    x = rng(rows).standard_normal((rows, 2))
    compiled = irc.compile(
        write, spec("N", 2), spec(len(raw), dtype="int64"), spec(len(raw), 2)
    )
    np.testing.assert_allclose(
        compiled(x.copy(), i, v, backend="reference"), write(x.copy(), i, v)
    )


def test_writes_keep_the_dtype_and_bools() -> None:
    def write(x: Any, flags: Any, i: Any) -> Any:
        x[i, i] = 2.7  # cast unsafely, as NumPy assigns
        flags[i, 0] = True
        return x, flags

    compiled = irc.compile(
        write,
        spec(3, 3, dtype="int32"),
        spec(3, 2, dtype="bool"),
        spec(2, dtype="int64"),
    )
    x, flags, i = np.zeros((3, 3), np.int32), np.zeros((3, 2), bool), np.array([2, 0])
    want = write(x.copy(), flags.copy(), i)
    for got, expected in zip(compiled(x, flags, i, backend="reference"), want):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


# Gradients -----------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_of_a_gather_is_a_scatter_add(backend: str) -> None:
    def loss(x: Any, i: Any, j: Any) -> Any:
        return (x[i, :, j] ** 2).sum()

    grad = irc.compile(
        irc.grad(loss),
        spec("A", 2, "C"),
        spec("K", dtype="int64"),
        spec("K", dtype="int64"),
    )
    assert "graph.scatter_add" in ops_of(grad)
    x = rng().standard_normal((3, 2, 4))
    i, j = np.array([0, 2, 2, -3]), np.array([1, 3, 3, 1])  # repeats accumulate
    want = np.zeros_like(x)
    np.add.at(want, (i, slice(None), j), 2 * x[i, :, j])
    np.testing.assert_allclose(grad(x, i, j, backend=backend), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradients_of_writes(backend: str) -> None:
    def loss(x: Any, v: Any, i: Any) -> Any:
        y = x.copy()
        y[i, 1:] = v  # repeats: the last wins, the others get no gradient
        z = x * 1.0
        np.add.at(z, (i, 0), v[:, 0] ** 2)
        return (y**2).sum() + (z**3).sum()

    grad = irc.compile(
        irc.grad(loss, argnums=(0, 1)),
        spec("N", 3),
        spec("K", 2),
        spec("K", dtype="int64"),
    )
    x, v = rng().standard_normal((4, 3)), rng(1).standard_normal((3, 2))
    i = np.array([2, 0, 2])
    dx, dv = grad(x, v, i, backend=backend)
    for got, argument, position in ((dx, x, 0), (dv, v, 1)):

        def f(value: np.ndarray, position: int = position) -> float:
            args = [x.copy(), v.copy()]
            args[position] = value
            return float(loss(args[0], args[1], i))

        np.testing.assert_allclose(got, finite_differences(f, argument), atol=1e-6)


@SLOW
@given(indexing_cases())
def test_the_gradient_of_a_read_is_numpys_add_at(case: Any) -> None:
    # d/dx sum(x[key] * w) adds w at each position the key names.
    shape, key, x = case
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    keyed = _keyed(key)
    w = rng(len(arrays)).standard_normal(x[tuple(key)].shape)

    def loss(x: Any, w: Any, *indices: Any) -> Any:
        return (x[keyed(indices)] * w).sum()

    specs = [spec(*shape), spec(*w.shape)]
    specs += [spec(*a.shape, dtype="int64") for a in arrays]
    got = irc.compile(irc.grad(loss), *specs)(x, w, *arrays, backend="reference")
    want = np.zeros_like(x)
    np.add.at(want, tuple(key), w)
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_gradients_against_finite_differences_by_check_grad() -> None:
    i, j = np.array([0, 2, 2, -1]), np.array([[1], [3]])
    check_grad(lambda x: np.sin(x[i, :, j]).sum() * 1.5, spec(3, 2, 4), max_examples=4)
    check_grad(
        lambda x: (x[np.arange(3), [2, 0, 2]] ** 3).sum(), spec(3, 4), max_examples=4
    )


# irc.grad of functions of arrays with derived dims ---------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_a_function_of_derived_dims(backend: str) -> None:
    def inner(y: Any) -> Any:
        return (np.sin(y) ** 2).sum()

    def outer(x: Any) -> Any:
        flat = x.reshape(-1)  # [4*N]
        tail = x[1:, 0]  # [N - 1]
        odd = x[::2, 1]  # [(N + 1) floordiv 2]
        return (
            irc.grad(inner)(flat),
            irc.value_and_grad(inner)(tail),
            irc.grad(inner)(odd),
        )

    compiled = irc.compile(outer, spec("N", 4))
    for size in (2, 5):
        x = rng(size).standard_normal((size, 4))
        flat, (value, tail), odd = compiled(x, backend=backend)
        np.testing.assert_allclose(odd, np.sin(2 * x[::2, 1]))
        np.testing.assert_allclose(flat, np.sin(2 * x.reshape(-1)))
        np.testing.assert_allclose(value, (np.sin(x[1:, 0]) ** 2).sum())
        np.testing.assert_allclose(tail, np.sin(2 * x[1:, 0]))


def test_vjp_of_a_function_of_a_derived_dim() -> None:
    def outer(x: Any, u: Any) -> Any:
        out, pullback = irc.vjp(lambda y: np.sin(y).reshape(2, -1), x.reshape(-1))
        return out, pullback(u)[0]

    compiled = irc.compile(outer, spec("N", 4), spec(2, "2*N"))
    for size in (1, 3):
        x, u = (
            rng(size).standard_normal((size, 4)),
            rng(9).standard_normal((2, 2 * size)),
        )
        out, cotangent = compiled(x, u, backend="reference")
        np.testing.assert_allclose(out, np.sin(x).reshape(2, -1))
        np.testing.assert_allclose(cotangent, np.cos(x.reshape(-1)) * u.reshape(-1))


def test_grad_inside_a_capture_keeps_only_the_facts_it_can_state() -> None:
    # The enclosing capture knows M >= 2; the inner function has no M.
    def outer(x: Any, w: Any) -> Any:
        return irc.grad(lambda y: (y**2).sum())(x) + w.sum()

    compiled = irc.compile(outer, spec("N"), spec("M"), facts=["M >= 2"])
    np.testing.assert_allclose(
        compiled(np.arange(3.0), np.ones(2), backend="reference"),
        2 * np.arange(3.0) + 2,
    )


# What stays refused --------------------------------------------------------------


def test_refusals_name_the_alternative() -> None:
    with pytest.raises(irc.IrcTypeError, match="integer type"):
        irc.trace(lambda x, f: x[f, f], spec(3, 3), spec(2))
    with pytest.raises(irc.TracingError, match="boolean mask combined"):
        irc.trace(lambda x, m: x[m, [0, 1]], spec(2, 3), spec(2, dtype="bool"))
