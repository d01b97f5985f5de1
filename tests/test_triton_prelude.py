"""The prelude's helpers (``irc.backend.triton.prelude``), called directly.

Each ``@triton.jit`` helper runs inside a small kernel of this module under
Triton's interpreter (``TRITON_INTERPRET=1``, set by ``conftest.py``), on the
operands NumPy is particular about (NaN, infinities, signed zeros, negative
divisors, division by zero), against NumPy itself; the host helpers are
called as the launchers call them. ``test_emit_triton.py`` checks the same
semantics through emitted modules; here a failure names the helper.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
prelude = pytest.importorskip("irc.backend.triton.prelude")

from irc.runtime import triton_backend  # noqa: E402

# The interpreter's comparisons fixed, as for emitted modules.
triton_backend.import_triton(interpret=True)

#: The helpers compute with infinities and NaN on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BLOCK = 1024
RNG = np.random.default_rng(7)
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, -3.0, 7.25, -7.25, 1e30, -1e-30]
SPECIAL += [np.inf, -np.inf, np.nan, 64.0, -63.0, 0.25]


@triton.jit
def _unary(x_ptr, out_ptr, n, HELPER: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=1)
    tl.store(out_ptr + offsets, HELPER(x), mask=mask)


@triton.jit
def _binary(a_ptr, b_ptr, out_ptr, n, HELPER: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask, other=1)
    b = tl.load(b_ptr + offsets, mask=mask, other=1)
    tl.store(out_ptr + offsets, HELPER(a, b), mask=mask)


@triton.jit
def _int_power(a_ptr, b_ptr, out_ptr, n, BITS: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask, other=1)
    b = tl.load(b_ptr + offsets, mask=mask, other=1)
    tl.store(out_ptr + offsets, prelude._irc_pow_i(a, b, BITS), mask=mask)


@triton.jit
def _row_reductions(x_ptr, max_ptr, min_ptr, arg_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + rows * C + cols)
    out = tl.arange(0, R)
    tl.store(max_ptr + out, prelude._irc_max_f(x, 1))
    tl.store(min_ptr + out, prelude._irc_min_f(x, 1))
    index = tl.broadcast_to(cols, [R, C])
    tl.store(arg_ptr + out, prelude._irc_argmax(x, index, 1, C))


def unary(helper, x: np.ndarray, out_dtype: torch.dtype | None = None) -> np.ndarray:
    source = torch.from_numpy(x)
    out = torch.empty(x.shape, dtype=out_dtype or source.dtype)
    _unary[(1,)](source, out, x.size, helper, BLOCK)
    return out.numpy()


def binary(helper, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = torch.empty(a.shape, dtype=torch.from_numpy(a).dtype)
    _binary[(1,)](torch.from_numpy(a), torch.from_numpy(b), out, a.size, helper, BLOCK)
    return out.numpy()


def float_pairs(numpy_type: type) -> tuple[np.ndarray, np.ndarray]:
    """Every special value against every other, then random values."""
    special = np.array(SPECIAL)
    a = np.concatenate([np.repeat(special, len(special)), RNG.normal(0, 5, 200)])
    b = np.concatenate([np.tile(special, len(special)), RNG.normal(0, 5, 200)])
    with np.errstate(over="ignore"):
        return a.astype(numpy_type), b.astype(numpy_type)


def assert_same(got: np.ndarray, want: np.ndarray, rtol: float = 0.0) -> None:
    """Equal dtypes; NaN where NaN, zeros of the same sign, values equal or
    (with ``rtol``) close."""
    assert got.dtype == want.dtype
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.signbit(got[got == 0]), np.signbit(want[got == 0]))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


@pytest.mark.parametrize("numpy_type", [np.int32, np.int64])
def test_integer_floor_division_and_remainder_are_numpys(numpy_type: type) -> None:
    a = RNG.integers(-50, 51, 300).astype(numpy_type)
    b = RNG.integers(-9, 10, 300).astype(numpy_type)
    info = np.iinfo(numpy_type)
    a[:6], b[:6] = [7, -7, 7, -7, info.min, info.max], [2, 2, -2, 0, 3, 0]
    with np.errstate(all="ignore"):
        want_div, want_rem = np.floor_divide(a, b), np.remainder(a, b)
    assert_same(binary(prelude._irc_floordiv_i, a, b), want_div)
    assert_same(binary(prelude._irc_rem_i, a, b), want_rem)


@pytest.mark.parametrize("numpy_type", [np.float32, np.float64])
def test_float_division_floor_division_and_remainder_are_numpys(
    numpy_type: type,
) -> None:
    a, b = float_pairs(numpy_type)
    with np.errstate(all="ignore"):
        want = np.divide(a, b), np.floor_divide(a, b), np.remainder(a, b)
    assert_same(binary(prelude._irc_div, a, b), want[0])
    assert_same(binary(prelude._irc_floordiv_f, a, b), want[1])
    assert_same(binary(prelude._irc_rem_f, a, b), want[2])


@pytest.mark.parametrize("numpy_type", [np.float32, np.float64])
def test_float_power_is_numpys(numpy_type: type) -> None:
    a, b = float_pairs(numpy_type)
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    # Integer exponents below 64 by exact repeated squaring; the rest (and
    # float64 rounding of the squarings) within a few ulps.
    assert_same(binary(prelude._irc_pow_f, a, b), want, rtol=2e-7)


@pytest.mark.parametrize(("numpy_type", "bits"), [(np.int32, 31), (np.int64, 63)])
def test_integer_power_wraps_as_numpys(numpy_type: type, bits: int) -> None:
    a = RNG.integers(-20, 21, 300).astype(numpy_type)
    b = RNG.integers(0, 70, 300).astype(numpy_type)
    b[:3] = [-1, -5, 0]
    with np.errstate(all="ignore"):
        want = np.power(a, np.maximum(b, 0))
    want[:2] = 0  # a negative exponent gives 0 (NumPy raises)
    out = torch.empty(a.shape, dtype=torch.from_numpy(a).dtype)
    _int_power[(1,)](torch.from_numpy(a), torch.from_numpy(b), out, a.size, bits, BLOCK)
    assert_same(out.numpy(), want)


@pytest.mark.parametrize("numpy_type", [np.float32, np.float64])
def test_tanh_is_close_to_numpys_and_exact_at_zero(numpy_type: type) -> None:
    x = np.concatenate([np.array(SPECIAL), RNG.normal(0, 3, 200), [1e-5, -1e-5]])
    x = x.astype(numpy_type)
    assert_same(unary(prelude._irc_tanh, x), np.tanh(x), rtol=3e-7)


def test_special_values_are_built_from_their_bits() -> None:
    for numpy_type in (np.float16, np.float32, np.float64):
        x = np.zeros(3, numpy_type)
        assert np.isnan(unary(prelude._irc_nan, x)).all()
        assert (unary(prelude._irc_inf, x) == np.inf).all()


def test_bfloat16_rounding_is_to_nearest_even() -> None:
    """float32 -> bfloat16 as ml_dtypes rounds it: halfway cases to even,
    overflow to infinity, NaN stays NaN."""
    bits = [0x3F808000, 0x3F818000, 0x3F808001, 0x3F80FFFF, 0x7F7FFFFF, 0xFFC00001]
    x = np.concatenate(
        [
            np.array(bits, dtype=np.uint32).view(np.float32),
            np.array(SPECIAL, dtype=np.float32),
            RNG.normal(0, 9, 200).astype(np.float32),
        ]
    )
    out = torch.empty(x.shape, dtype=torch.bfloat16)
    _unary[(1,)](torch.from_numpy(x), out, x.size, prelude._irc_to_bf16, BLOCK)
    got = out.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    want = x.astype(ml_dtypes.bfloat16)
    nan = np.isnan(x)
    assert np.isnan(got[nan].astype(np.float32)).all()
    np.testing.assert_array_equal(got[~nan].view(np.uint16), want[~nan].view(np.uint16))


def test_row_max_min_and_argmax_propagate_nan_as_numpy_does() -> None:
    rows, cols = 8, 16
    x = RNG.normal(0, 1, (rows, cols)).astype(np.float32)
    x[1, 3] = np.nan
    x[2, [4, 9]] = np.nan
    x[3, [2, 11]] = x[3].max() + 1  # ties: the first lane
    x[4] = -np.inf
    x[5, 0] = np.inf
    maxima, minima = (torch.empty(rows) for _ in range(2))
    argmax = torch.empty(rows, dtype=torch.int32)
    _row_reductions[(1,)](torch.from_numpy(x), maxima, minima, argmax, rows, cols)
    assert_same(maxima.numpy(), x.max(axis=1))
    assert_same(minima.numpy(), x.min(axis=1))
    np.testing.assert_array_equal(argmax.numpy(), x.argmax(axis=1))


# --------------------------------------------------------------------------
# Host helpers
# --------------------------------------------------------------------------


def test_tensor_checks_name_the_argument_and_what_is_wrong() -> None:
    device = torch.device("cpu")
    x = torch.zeros(2, 3)
    check = prelude._irc_tensor
    assert check([x], 0, "x", 2, "[N, 3]", torch.float32, device) is x
    cases = [
        (
            ([1.0], 0, "x", 2, "[N, 3]", torch.float32),
            "must be a torch tensor, got float",
        ),
        (([x], 0, "x", 3, "[N, 3, 4]", torch.float32), "has rank 2 (shape (2, 3))"),
        (([x], 0, "x", 2, "[N, 3]", torch.int64), "has dtype float32 but the function"),
        (
            ([x.to_sparse()], 0, "x", 2, "[N, 3]", torch.float32),
            "is a sparse_coo tensor but the kernels read dense (strided) tensors",
        ),
    ]
    for arguments, message in cases:
        with pytest.raises(prelude.LaunchError, match=re.escape(message)):
            check(*arguments, device)
    with pytest.raises(prelude.LaunchError, match="argument 'x' is on meta"):
        check(
            [torch.zeros(2, 3, device="meta")],
            0,
            "x",
            2,
            "[N, 3]",
            torch.float32,
            device,
        )
    assert prelude._irc_device([1.0]) == device  # no tensor: where kernels run


def test_a_call_is_admitted_contiguous_or_reported_as_an_internal_error() -> None:
    """``_irc_contiguous`` ends an admission that found no fault: strided
    views come back as contiguous copies, and a call of contiguous tensors
    (which the launcher's test should have accepted) is irc's bug."""
    x, y = torch.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(3, 2).t()
    x_copy, y_copy = prelude._irc_contiguous((x, y))
    assert x_copy is x
    assert y_copy.is_contiguous() and torch.equal(y_copy, y)
    with pytest.raises(prelude.LaunchError, match="internal error: the launcher"):
        prelude._irc_contiguous((x, y_copy))


def test_dims_symbols_guards_and_grids_are_refused_with_their_values() -> None:
    x = torch.zeros(4, 0)
    LaunchError = prelude.LaunchError
    assert prelude._irc_symbol(x, "x", 0, "N") == 4
    with pytest.raises(
        LaunchError, match="symbol M would be 0; symbolic dims are sizes"
    ):
        prelude._irc_symbol(x, "x", 1, "M")
    with pytest.raises(
        LaunchError, match="axis 0: expected size 5, got 4; this dim is static"
    ):
        prelude._irc_static_dim(x, "x", 0, 5)
    with pytest.raises(
        LaunchError, match="symbol N is 4 here but 3 from argument 'y' axis 1"
    ):
        prelude._irc_same_symbol(x, "x", 0, "N", 3, "argument 'y' axis 1")
    with pytest.raises(
        LaunchError, match=re.escape("takes 2 argument(s) (x, y) but was called with 1")
    ):
        prelude._irc_count([x], 2, "x, y")
    values = prelude._irc_values(("M", 2, ""), ("N", 4, " (from argument 'x' axis 0)"))
    assert values == "M = 2, N = 4 (from argument 'x' axis 0)"
    assert prelude._irc_values() == "no symbols"
    with pytest.raises(
        LaunchError, match="guard `N <= 3` does not hold with N = 4: why"
    ):
        prelude._irc_guard_failed("N <= 3", "N = 4", ": why")
    with pytest.raises(
        LaunchError, match="@k would launch 70000 programs along axis 1"
    ):
        prelude._irc_check_grid("k", (1, 70000, 1), (2**31 - 1, 65535, 65535))
    prelude._irc_check_grid("k", (0, 1, 1), (2**31 - 1, 65535, 65535))  # empty: fine


def test_constants_and_workspace_slices() -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    constant = prelude._irc_constant(array.tobytes(), torch.float32, (2, 3))
    np.testing.assert_array_equal(constant.numpy(), array)
    assert prelude._irc_constant(b"", torch.int64, (0, 2)).shape == (0, 2)
    workspace = torch.zeros(512, dtype=torch.uint8)
    view = prelude._irc_view(workspace, 256, torch.float32, (2, 3), (3, 1))
    view.fill_(1.5)  # the interpreter's: a view of the workspace
    assert workspace[256:280].view(torch.float32).tolist() == [1.5] * 6
    assert workspace[:256].eq(0).all() and workspace[280:].eq(0).all()


def test_allocation_names_the_buffer_it_could_not_allocate() -> None:
    buffer = prelude._irc_allocate("buffer 'y'", (2, 3), (3, 1), torch.float32, "cpu")
    assert buffer.shape == (2, 3) and buffer.stride() == (3, 1)
    huge = (2**20, 2**20)  # 4 TiB of float32
    with pytest.raises(prelude.AllocationFailed) as failed:
        prelude._irc_allocate("buffer 'y'", huge, (2**20, 1), torch.float32, "cpu")
    message = str(failed.value)
    assert message.startswith("could not allocate buffer 'y' (shape (1048576, 1048576)")
    assert "4,398,046,511,104 bytes" in message and "smaller sizes" in message
    assert isinstance(failed.value, MemoryError)
