"""Writes into traced arrays (item, slice, masked and augmented assignment,
``out=``), with NumPy's result for every name that sees the array, the
caller's arrays included: checked against NumPy at two or more bindings of
the symbols, on the reference interpreters and on the Triton interpreter
backend, with the kernel counts fusion promises and the errors for what
NumPy does that irc cannot follow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import irc

F32, I64, I32 = "float32", "int64", "int32"
BACKENDS = ("reference", "interpret")


def _array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> Any:
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    return rng.integers(-5, 6, shape).astype(dtype)


def check(
    function: Callable[..., Any],
    specs: Sequence[irc.TensorSpec],
    bindings: Sequence[dict[str, int]],
    kernels: int | None = None,
    **static: Any,
) -> irc.Compiled:
    """Compile ``function`` once and compare it with NumPy at each binding on
    each backend: values, shapes and dtypes of every output."""
    compiled = irc.compile(function, *specs, **static)
    if kernels is not None:
        assert compiled.num_kernels == kernels, compiled.ir("fusion")
    rng = np.random.default_rng(0)
    for binding in bindings:
        arrays = [
            _array(
                rng,
                tuple(binding[d] if isinstance(d, str) else d for d in spec.shape),
                str(spec.dtype.numpy),
            )
            for spec in specs
        ]
        after_numpy = [a.copy() for a in arrays]
        expected = function(*after_numpy, **static)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for backend in BACKENDS:
            given = [a.copy() for a in arrays]
            got = compiled(*given, backend=backend, **static)
            got = got if isinstance(got, tuple) else (got,)
            assert len(got) == len(expected)
            for index, (g, e) in enumerate(zip(got, expected)):
                e = np.asarray(e)
                where = f"{backend} at {binding}, output {index}"
                assert g.dtype == e.dtype, where
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=where)
            for index, (array, want) in enumerate(zip(given, after_numpy)):
                where = f"{backend} at {binding}, argument {index} after the call"
                np.testing.assert_array_equal(array, want, err_msg=where)
    return compiled


def spec(*dims: str | int, dtype: str = F32) -> irc.TensorSpec:
    return irc.TensorSpec(dims, dtype)


ND = [{"N": 3, "D": 4}, {"N": 6, "D": 5}]
N = [{"N": 3}, {"N": 7}]


# ----- item and slice assignment -------------------------------------------------


def test_item_and_slice_assignment():
    def f(x, v):
        y = x.copy()
        y[0] = 1.5
        y[-1, 0] = -2
        y[:, 1:3] = v
        y[1:, -1] = v[:-1, 0]
        return y

    check(f, [spec("N", 4), spec("N", 2)], N, kernels=1)


def test_symbolic_bounds_and_broadcast_value():
    def f(x, row):
        y = x.copy()
        n = x.shape[0]
        y[1 : n - 1] = row  # (D,) broadcast over rows
        y[n - 1 :, :2] = 0
        y[None, 0] = row[None, None]  # leading size-1 dims of the value dropped
        return y

    check(f, [spec("N", "D"), spec("D")], ND, kernels=1)


def test_strided_and_reversed_windows():
    def f(x, v):
        y = x.copy()
        y[::2, 0] = 7.0  # static extent 6: rows 0, 2, 4
        y[::-1, 1] = v
        return y

    check(f, [spec(6, 3), spec(6)], [{}])

    def g(x, v):
        y = x.copy()
        y[::-1] = v  # symbolic extent
        return y

    check(g, [spec("N"), spec("N")], N)


def test_assignment_casts_as_numpy_does():
    def f(x, i):
        y = i.copy()
        y[0] = 2.7  # a float into ints: truncated
        y[1:] = x[1:] * 3  # a float array into ints: cast unsafely, as astype
        b = x > 0
        b[0] = 5  # an int into bools: True
        return y, b

    check(f, [spec("N"), spec("N", dtype=I32)], N)


def test_writes_into_views_reach_the_base():
    def f(x):
        y = x.copy()
        row = y[1]
        col = y.T[2]
        y[1, 2] = 100.0  # seen through row and col
        col[0] = -1.0  # seen through y
        row *= 2  # seen through y and col
        return y, row, col

    check(f, [spec("N", 4)], N)


def test_reshape_and_squeeze_views_alias():
    def f(x):
        y = x.copy()
        flat = y.reshape(-1)
        column = np.expand_dims(y, 0)[0, :, 1]
        flat[0] = 9.0
        column += 1
        sq = y[None].squeeze(0)
        sq[-1] = 0.0
        return y, flat, column

    check(f, [spec("N", 3)], N)


def test_copies_do_not_alias():
    def f(x):
        y = x.copy()
        copies = (
            np.copy(y),
            y.astype(np.float32),
            y + 0,
            y[[0, 1]],
            y.flatten(),
            np.concatenate([y]),
            +y,
        )
        y[...] = 0.0
        return (y, *copies)

    check(f, [spec("N", 2)], [{"N": 2}, {"N": 5}])


def test_basic_index_views_alias_split_parts():
    def f(x):
        y = x.copy()
        first, second = np.split(y, 2, axis=1)
        second[:] = 1.0
        return y, first

    check(f, [spec("N", 4)], N)


# ----- augmented assignment ----------------------------------------------------------


def test_augmented_assignment_keeps_the_left_dtype():
    def f(x, i):
        y = x.copy()
        y *= i  # float32 *= int64 stays float32, as in NumPy
        j = i.copy()
        j += 2
        j //= 3
        j %= 4
        j **= 2
        j &= 7
        j |= 8
        j ^= 1
        y -= 1
        y /= 2
        y **= 2
        return y, j

    check(f, [spec("N"), spec("N", dtype=I64)], N)


def test_augmented_assignment_of_a_slice_and_matmul():
    def f(x, w):
        y = x.copy()
        y[1:] += x[:-1]
        y[:, 0] -= 1
        y @= w
        return y

    check(f, [spec("N", 3), spec(3, 3)], N)


def test_out_argument_writes_into_a_traced_array():
    def f(x):
        y = np.zeros_like(x)
        np.add(x, 1, out=y)
        np.multiply(y[1:], 2, out=y[1:])
        return y

    check(f, [spec("N")], N)


def test_copyto_with_casting_and_where():
    def f(x, i):
        y = np.zeros_like(x)
        np.copyto(y, i)  # int64 into float32: same_kind allows it
        np.copyto(y[1:], x[1:] * 2, where=x[1:] > 0)
        return y

    check(f, [spec("N"), spec("N", dtype=I64)], N)

    def g(i, x):
        j = i.copy()
        np.copyto(j, x)
        return j

    with pytest.raises(irc.IrcTypeError, match="casting='same_kind'"):
        irc.compile(g, spec("N", dtype=I64), spec("N"))


def test_out_into_a_numpy_array_is_refused():
    def f(x):
        out = np.zeros(3, np.float32)
        np.add(x, 1, out=out)
        return out

    with pytest.raises(irc.TracingError, match="one traced array as out="):
        irc.compile(f, spec(3))


def test_a_float_result_into_an_int_array_is_numpys_ufunc_type_error():
    def f(i):
        j = i.copy()
        j += 1.5
        return j

    with pytest.raises(irc.IrcTypeError, match=r"casting='same_kind'") as info:
        irc.compile(f, spec("N", dtype=I64))
    assert "test_array_writes.py" in str(info.value) and "j += 1.5" in str(info.value)

    def g(i):
        j = i.copy()
        j /= 2
        return j

    with pytest.raises(irc.IrcTypeError, match="float64.*int64"):
        irc.compile(g, spec("N", dtype=I64))


def test_an_in_place_result_must_keep_the_shape():
    def f(x, y):
        z = x.copy()
        z += y
        return z

    with pytest.raises(irc.IrcShapeError, match="non-broadcastable output operand"):
        irc.compile(f, spec("N", 1), spec("N", 3))


# ----- masked assignment -------------------------------------------------------------


def test_relu_and_leaky_relu_by_masked_write():
    def relu(x):
        y = x.copy()
        y[y < 0] = 0
        return y

    def leaky_in_place(x, alpha=0.1):
        y = x.copy()
        y[y < 0] *= alpha
        return y

    def leaky_numpy_style(z, alpha=0.01):
        _z = z.copy()
        _z[z < 0] = _z[z < 0] * alpha
        return _z

    for function in (relu, leaky_in_place, leaky_numpy_style):
        compiled = check(function, [spec("N", "D")], ND, kernels=1)
        assert "graph.select" in compiled.ir("graph")


def test_a_constant_numpy_mask():
    def f(x):
        y = x.copy()
        y[np.array([True, False, True])] = 0.0  # rows 0 and 2
        return y

    check(f, [spec(3, "D")], [{"D": 2}, {"D": 5}])


def test_in_place_on_a_masked_read_casts_as_numpy_does():
    def halved(i):
        j = i.copy()
        j[j > 0] //= 2
        return j

    check(halved, [spec("N", dtype=I64)], N)

    def scaled(i):
        j = i.copy()
        j[j > 0] *= 0.5  # NumPy: the product does not cast back to int64
        return j

    with pytest.raises(irc.IrcTypeError, match="casting='same_kind'"):
        irc.compile(scaled, spec("N", dtype=I64))


def test_masked_write_of_rows_and_combined_reads():
    def f(x, keep, a, b):
        y = x.copy()
        y[~keep] = -1.0  # a mask of the leading dim selects rows
        m = a > b
        c = a.copy()
        c[m] = a[m] - b[m] * 2  # reads under the same mask combine
        flags = np.zeros_like(a, dtype=bool)
        flags[m] = np.exp(a[m]) > 1.5  # ufuncs and comparisons of reads
        return y, c, flags

    check(f, [spec("N", "D"), spec("N", dtype="bool"), spec("N"), spec("N")], ND)


# ----- buffers built in the trace ----------------------------------------------------


def test_buffer_rows_in_a_static_loop_are_one_kernel():
    def f(x):
        buf = np.zeros((3, x.shape[1]), x.dtype)
        for i in range(3):
            buf[i] = x[i] * (i + 1)
        return buf

    compiled = check(f, [spec("N", "D")], ND, kernels=1)
    assert compiled.ir("graph").count("graph.insert_slice") == 3


def test_a_window_at_symbolic_offsets_from_the_end():
    def f(cache, k):
        updated = cache.copy()
        updated[cache.shape[0] - k.shape[0] :] = k  # the last L rows
        updated[-1, -2:] += 1.0
        return updated

    check(f, [spec("S", 3), spec("L", 3)], [{"S": 4, "L": 2}, {"S": 9, "L": 4}])


def test_kv_cache_written_by_slice_assignment_in_prefill():
    def prefill(q, k, v, start=2):
        length, dim = k.shape
        cache_k = np.zeros((start + length, dim), k.dtype)
        cache_v = np.zeros((start + length, dim), v.dtype)
        cache_k[start : start + length] = k
        cache_v[start : start + length] = v
        scores = q @ cache_k.T * dim**-0.5
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return scores / scores.sum(axis=-1, keepdims=True) @ cache_v, cache_k

    check(
        prefill,
        [spec("L", "D"), spec("L", "D"), spec("L", "D")],
        [{"L": 3, "D": 4}, {"L": 5, "D": 8}],
        start=2,
    )


# ----- writes into arguments: the caller's arrays change, as in NumPy -------------


def test_a_kv_cache_passed_in_is_updated_in_place():
    def decode(cache_k, cache_v, q, k, v, pos=3):
        cache_k[pos] = k
        cache_v[pos] += v  # through a view of an argument too
        keys = cache_k[: pos + 1]
        scores = np.exp(keys @ q - (keys @ q).max())
        return scores @ cache_v[: pos + 1] / scores.sum()

    compiled = check(
        decode,
        [spec("S", "D"), spec("S", "D"), spec("D"), spec("D"), spec("D")],
        [{"S": 4, "D": 2}, {"S": 9, "D": 5}],
        pos=3,
    )
    assert compiled.captured.written_inputs == [0, 1]


def test_argument_writes_reach_torch_tensors_and_views():
    torch = pytest.importorskip("torch")

    def f(x, y):
        x[0] = 1.0
        row = y[1]
        row *= 2
        return x.sum()

    compiled = irc.compile(f, spec("N"), spec("N", 2))
    for backend in BACKENDS:
        x, y = torch.zeros(3), torch.ones(3, 2)
        total = compiled(x, y, backend=backend)
        assert float(total) == 1.0
        assert x.tolist() == [1.0, 0.0, 0.0]
        assert y.tolist() == [[1.0, 1.0], [2.0, 2.0], [1.0, 1.0]]


def test_an_update_in_place_that_returns_nothing():
    def update(cache, k, pos=1):
        cache[pos : pos + k.shape[0]] = k

    compiled = irc.compile(update, spec("S", 2), spec("L", 2), pos=1)
    for backend in BACKENDS:
        cache = np.zeros((5, 2), np.float32)
        assert (
            compiled(cache, np.ones((3, 2), np.float32), backend=backend, pos=1) is None
        )
        assert cache[:, 0].tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]


def test_jitted_functions_update_their_arguments_at_every_size():
    @irc.jit
    def accumulate(cache, k):
        cache[: k.shape[0]] += k
        return cache[0]

    for rows in (2, 3):
        for backend in BACKENDS:
            cache = np.zeros((4, 2), np.float32)
            first = accumulate(cache, np.ones((rows, 2), np.float32), backend=backend)
            assert first.tolist() == [1.0, 1.0]
            assert cache.sum() == 2 * rows


def test_a_read_only_argument_that_is_written_is_a_binding_error():
    def f(x):
        x += 1
        return x

    compiled = irc.compile(f, spec("N"))
    x = np.zeros(3, np.float32)
    x.flags.writeable = False
    with pytest.raises(irc.BindingError, match="argument 'x' is a read-only array"):
        compiled(x, backend="reference")


def test_causal_depthwise_conv_written_with_slices_into_a_buffer():
    def causal_conv(x, w):
        steps, width = x.shape[0], w.shape[0]
        padded = np.zeros((steps + width - 1, x.shape[1]), x.dtype)
        padded[width - 1 :] = x
        out = np.zeros_like(x)
        for k in range(width):
            out += padded[k : k + steps] * w[k]
        return out

    check(
        causal_conv,
        [spec("T", "C"), spec(3, "C")],
        [{"T": 4, "C": 2}, {"T": 9, "C": 3}],
        kernels=1,
    )


def test_output_buffer_filled_by_column_blocks():
    def f(x, w1, w2):
        out = np.empty((x.shape[0], 4), x.dtype)
        out[:, :2] = x @ w1
        out[:, 2:] = np.tanh(x @ w2)
        return out

    check(f, [spec("N", 3), spec(3, 2), spec(3, 2)], N)


# ----- what irc refuses, and how it says so -----------------------------------------


def _refused(function: Callable[..., Any], *specs: irc.TensorSpec, match: str) -> str:
    with pytest.raises(irc.IrcError, match=match) as info:
        irc.compile(function, *specs)
    message = str(info.value)
    assert "test_array_writes.py:" in message, message  # the user's line
    assert "does not support item assignment" not in message
    return message


def test_boolean_mask_reads_used_elsewhere_are_refused():
    def summed(x):
        return x[x > 0].sum()

    assert "np.where" in _refused(summed, spec("N"), match="boolean-mask read")

    def other_mask(x):
        y = x.copy()
        y[x > 0] = y[x < 0] * 2
        return y

    _refused(other_mask, spec("N"), match="under another mask")

    def array_value(x, v):
        y = x.copy()
        y[x > 0] = v
        return y

    _refused(array_value, spec("N"), spec("N"), match="as many elements as the mask")

    def returned(x):
        return x[x > 0]

    with pytest.raises(irc.TracingError, match="np.where"):
        irc.compile(returned, spec("N"))


def test_writes_through_an_index_array_are_numpys():
    # The last of repeated indices wins (tests/test_advanced_indexing.py).
    def f(x, idx):
        y = x.copy()
        y[idx] = np.arange(3.0)
        return y

    compiled = irc.compile(f, spec("N"), spec(3, dtype=I64))
    x, idx = np.ones(4, np.float32), np.array([2, -1, 2])
    np.testing.assert_array_equal(compiled(x, idx, backend="reference"), f(x, idx))


def test_writes_into_a_broadcast_view_are_numpys_read_only_error():
    def f(x):
        y = np.broadcast_to(x.copy(), (3, x.shape[0]))
        y[0] = 1.0
        return y

    _refused(f, spec("N"), match="read-only")

    def g(x):  # a broadcast view sees writes to its base
        base = x.copy()
        view = np.broadcast_to(base, (2, x.shape[0]))
        base[0] = 5.0
        return view

    check(g, [spec("N")], N)


def test_a_reshape_of_a_strided_view_is_refused_where_numpy_may_copy():
    def f(x):
        y = x.copy()
        flat = y[:, :2].reshape(-1)  # NumPy: a copy, but not for every stride
        y[0, 0] = 1.0
        return flat

    _refused(f, spec("N", 4), match="copy or a view")


def test_a_value_of_the_wrong_shape_is_refused():
    def f(x, v):
        y = x.copy()
        y[0] = v
        return y

    _refused(f, spec("N", 3), spec(2, 3), match=r"cannot assign an array of shape")


def test_writing_a_traced_array_into_a_numpy_array_says_what_to_do():
    def f(x):
        buf = np.zeros((2, 3), np.float32)  # static sizes: NumPy's own array
        buf[0] = x
        return buf

    message = _refused(f, spec(3), match="NumPy array")
    assert "zeros_like" in message


# ----- the law: a write is NumPy's, for any basic key -----------------------------

_ROW_BOUNDS = st.one_of(st.none(), st.integers(-4, 5))
_ROW_KEYS = st.one_of(
    st.integers(-5, 4),
    st.builds(slice, _ROW_BOUNDS, _ROW_BOUNDS, st.sampled_from([None, 1, 2])),
)
_COLUMN_KEYS = st.one_of(
    st.integers(-4, 3),
    st.builds(
        slice,
        st.one_of(st.none(), st.integers(-4, 4)),
        st.one_of(st.none(), st.integers(-4, 4)),
        st.sampled_from([None, 1, 2, -1, -2]),
    ),
)


def _unclamped(key: slice, sizes: Sequence[int]) -> bool:
    """Whether ``key``'s bounds need no clamping at any of ``sizes``."""
    for size in sizes:
        start, stop = (
            default if bound is None else bound + size if bound < 0 else bound
            for bound, default in ((key.start, 0), (key.stop, size))
        )
        if not 0 <= start <= stop <= size:
            return False
    return True


@settings(max_examples=40, deadline=None)
@given(
    rows=_ROW_KEYS,
    columns=_COLUMN_KEYS,
    row_value=st.booleans(),
    augmented=st.booleans(),
)
def test_basic_writes_match_numpy(rows, columns, row_value, augmented):
    """``y[rows, columns] = v`` (or ``+= v``) on an (N, 4) array, ``v`` a
    scalar or a row broadcast over the window, at N = 5 and N = 7, gives
    NumPy's array. Row bounds are those irc takes on a symbolic axis without
    a failing guard: within ``[-N, N]`` and in order (NumPy would clamp)."""
    assume(isinstance(rows, int) or _unclamped(rows, (5, 7)))
    width = len(range(4)[columns]) if isinstance(columns, slice) else None
    use_row = row_value and width is not None

    def f(x, v):
        y = x.copy()
        value = v[:width] if use_row else v[0]
        if augmented:
            y[rows, columns] += value
        else:
            y[rows, columns] = value
        return y

    check(f, [spec("N", 4), spec(4)], [{"N": 5}, {"N": 7}])


def _scatter_rows(table: Any, rows: Any, updates: Any) -> Any:
    table = table.copy()
    np.add.at(table, rows, updates)
    return table * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_add_at_accumulates_repeated_rows_as_numpy_does(backend: str) -> None:
    compiled = irc.compile(
        _scatter_rows, spec("N", "D"), spec("K", dtype=I64), spec("K", "D")
    )
    rng = np.random.default_rng(0)
    for n, d, k in ((3, 4, 5), (6, 2, 9)):
        table = rng.standard_normal((n, d)).astype(np.float32)
        rows = rng.integers(-n, n, k)  # repeated, and counted from the end
        updates = rng.standard_normal((k, d)).astype(np.float32)
        got = compiled(table, rows, updates, backend=backend)
        want = _scatter_rows(table, rows, updates)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_add_at_into_a_numpy_array_says_what_to_do() -> None:
    def function(rows: Any) -> Any:
        table = np.zeros((4, 2), np.float32)
        np.add.at(table, rows, 1.0)
        return table

    with pytest.raises(
        irc.TracingError, match=r"np\.add\.at writes into a traced array"
    ):
        irc.compile(function, spec("K", dtype=I64))


def test_add_at_of_a_slice_adds_once_per_position() -> None:
    def function(table: Any) -> Any:
        np.add.at(table, slice(0, 2), 1.0)
        return table

    compiled = irc.compile(function, spec("N", "D"))
    table = np.zeros((3, 2), np.float32)
    np.testing.assert_array_equal(
        compiled(table.copy(), backend="reference"), function(table)
    )
