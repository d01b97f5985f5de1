"""Capture of NumPy-style functions: what is supported, checked against NumPy
on the reference backend at several bindings of the symbols."""

import re

import numpy as np
import pytest
import torch

import irc
import irc.api

F32 = "float32"


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _inputs(rng, specs, binding):
    arrays = []
    for spec in specs:
        shape = tuple(binding[d] if isinstance(d, str) else d for d in spec.shape)
        if spec.dtype.kind == "f":
            arrays.append(rng.standard_normal(shape).astype(spec.dtype.numpy))
        elif spec.dtype.kind == "i":
            arrays.append(rng.integers(-5, 6, shape).astype(spec.dtype.numpy))
        else:
            arrays.append(rng.random(shape) < 0.5)
    return arrays


def _check(function, specs, bindings, rtol=1e-6, **static):
    compiled = irc.compile(function, *specs, **static)
    rng = np.random.default_rng(0)
    for binding in bindings:
        arrays = _inputs(rng, specs, binding)
        expected = function(*arrays, **static)
        result = compiled(*arrays, backend="reference", **static)
        for got, want in zip(
            result if isinstance(result, list | tuple) else [result],
            expected if isinstance(expected, list | tuple) else [expected],
        ):
            want = np.asarray(want)
            assert got.shape == want.shape, (binding, got.shape, want.shape)
            assert got.dtype == want.dtype, (binding, got.dtype, want.dtype)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)
    return compiled


# ----- the softmax of the "Done when" ----------------------------


def test_softmax_ir_shows_the_symbols():
    compiled = irc.compile(softmax, irc.TensorSpec(("N", "D"), F32))
    text = compiled.ir("graph")
    assert "!graph.tensor<[N, D], f32>" in text
    assert "graph.reduce max" in text and "graph.reduce sum" in text
    assert "!graph.tensor<[N, 1], f32>" in text


@pytest.mark.parametrize("n, d", [(1, 1), (1, 5), (4, 1), (3, 7), (16, 33)])
def test_softmax_matches_numpy(n, d):
    compiled = irc.compile(softmax, irc.TensorSpec(("N", "D"), F32))
    x = np.random.default_rng(n * 100 + d).standard_normal((n, d)).astype(np.float32)
    np.testing.assert_allclose(compiled(x, backend="reference"), softmax(x), rtol=1e-6)


def test_locations_name_the_python_lines():
    compiled = irc.compile(softmax, irc.TensorSpec(("N", "D"), F32))
    text = compiled.ir("graph", locations=True)
    assert f'loc("{__file__}":' in text
    lines = {int(m) for m in re.findall(r'test_capture.py":(\d+):', text)}
    first = softmax.__code__.co_firstlineno
    # the function (func.func, func.return) and its two body lines
    assert lines == {first, first + 1, first + 2}


# ----- NumPy coverage -------------------------------------------------------

N, D = irc.TensorSpec(("N",), F32), irc.TensorSpec(("N", "D"), F32)
ND_BINDINGS = [{"N": 1, "D": 1}, {"N": 3, "D": 5}, {"N": 6, "D": 4}]

ELEMENTWISE = {
    "exp": lambda x: np.exp(x),
    "log": lambda x: np.log(np.abs(x) + 1),
    "sqrt": lambda x: np.sqrt(np.abs(x)),
    "tanh": lambda x: np.tanh(x),
    "maximum": lambda x: np.maximum(x, 0.5),
    "minimum": lambda x: np.minimum(x, x * 2),
    "where": lambda x: np.where(x > 0, x, 0.1 * x),
    "clip": lambda x: np.clip(x, -0.5, 0.5),
    "pi": lambda x: x * np.pi + 2,
    "scalars": lambda x: 1 / (1 + x * x) - 3 * x,
    "pow": lambda x: x**2 + np.abs(x) ** 0.5,
    "operators": lambda x: -(x // 0.3) + (x % 0.7) + abs(x),
    "compare": lambda x: (x < 0) | (x >= 1) & ~(x == 0.5),
    "astype": lambda x: (x * 10).astype(np.int32).astype(np.float32),
    "sign_square": lambda x: np.sign(x) * np.square(x),
    "scalar_mean": lambda x: x - x.mean(),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise(name):
    _check(ELEMENTWISE[name], [D], ND_BINDINGS)


REDUCTIONS = {
    "sum": lambda x: x.sum(axis=0),
    "np_sum_all": lambda x: np.sum(x),
    "max": lambda x: np.max(x, axis=1, keepdims=True),
    "min": lambda x: x.min(axis=(0, 1)),
    "mean": lambda x: np.mean(x, axis=-1),
    "var": lambda x: x.var(axis=0, keepdims=True),
    "std": lambda x: np.std(x, axis=1),
    "prod": lambda x: np.prod(x, axis=1),
    "argmax": lambda x: np.argmax(x, axis=1),
    "ufunc_reduce": lambda x: np.add.reduce(x, axis=1),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    _check(REDUCTIONS[name], [D], ND_BINDINGS, rtol=1e-5)


LAYOUT = {
    "T": lambda x: x.T,
    "transpose": lambda x: np.transpose(x),
    "reshape": lambda x: x.reshape(-1),
    "reshape_back": lambda x: x.reshape(x.shape[0] * x.shape[1], 1).reshape(x.shape),
    "slice": lambda x: x[1:, ::2],
    "negative_index": lambda x: x[-1],
    "newaxis": lambda x: x[:, None, :] + x[None],
    "ellipsis": lambda x: x[..., 0],
    "concatenate": lambda x: np.concatenate([x, 2 * x], axis=1),
    "hstack": lambda x: np.hstack([x, x[:, :1]]),
    "vstack": lambda x: np.vstack([x, x]),
    "stack": lambda x: np.stack([x, x], axis=-1),
    "triu_tril": lambda x: np.triu(x) - np.tril(x, -1),
    "zeros_like": lambda x: np.zeros_like(x) + np.ones_like(x) * np.full_like(x, 3),
    "ones_sym": lambda x: x + np.ones((x.shape[0], 1), dtype=np.float32),
    "zeros_sym": lambda x: np.zeros(x.shape, dtype=np.float32) - x,
    "full_sym": lambda x: np.full((x.shape[1],), 2.5, dtype=np.float32) * x,
    "arange_sym": lambda x: x * np.arange(x.shape[1], dtype=np.float32),
    "arange_step": lambda x: np.arange(1, 2 * x.shape[0] + 1, 2),
    "tri_sym": lambda x: np.tri(x.shape[0], dtype=x.dtype) @ x,
    "eye": lambda x: np.eye(x.shape[0], dtype=np.float32) @ x,
    "matmul": lambda x: x @ x.T,
    "matvec": lambda x: x @ x[0],
    "size_scale": lambda x: x / x.shape[0] + x.size,
}


@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_layout(name):
    bindings = [{"N": 1, "D": 1}, {"N": 3, "D": 5}, {"N": 4, "D": 4}]
    if name == "slice":
        bindings = [b for b in bindings if b["N"] > 1]
    _check(LAYOUT[name], [D], bindings, rtol=1e-5)


def test_split_of_symbolic_dim_with_declared_divisibility():
    def halves(x):
        a, b = np.split(x, 2, axis=0)
        return a * b

    spec = irc.TensorSpec(("N", 3), F32)
    compiled = irc.compile(halves, spec, facts=["N % 2 == 0"])
    assert "sym.guard N mod 2 == 0" in compiled.ir("graph")
    for n in (2, 6):
        x = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)
        np.testing.assert_allclose(compiled(x, backend="reference"), halves(x))
    with pytest.raises(irc.BindingError, match="N mod 2 == 0"):
        compiled(np.zeros((3, 3), np.float32), backend="reference")


def test_split_of_symbolic_dim_needs_divisibility():
    with pytest.raises(irc.IrcShapeError, match="divisib"):
        irc.compile(lambda x: np.split(x, 2), irc.TensorSpec(("N",), F32))


def test_split_of_product_dim_is_provable():
    def heads(x):
        return np.stack(np.split(x, 4, axis=0))

    spec = irc.TensorSpec(("N",), F32)
    compiled = irc.compile(lambda x: heads(np.concatenate([x, x, x, x])), spec)
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_allclose(compiled(x, backend="reference"), heads(np.tile(x, 4)))


def test_take_and_embedding_lookup_with_guard():
    def embed(ids, wte, wpe):
        return wte[ids] + wpe[: ids.shape[0]]

    specs = [
        irc.TensorSpec(("N",), "int64"),
        irc.TensorSpec((10, 4), F32),
        irc.TensorSpec((8, 4), F32),
    ]
    compiled = irc.compile(embed, *specs)
    assert "graph.take" in compiled.ir("graph")
    assert "sym.guard N <= 8" in compiled.ir("graph")
    rng = np.random.default_rng(1)
    wte = rng.standard_normal((10, 4)).astype(np.float32)
    wpe = rng.standard_normal((8, 4)).astype(np.float32)
    for n in (1, 5, 8):
        ids = rng.integers(0, 10, n)
        np.testing.assert_allclose(
            compiled(ids, wte, wpe, backend="reference"), embed(ids, wte, wpe)
        )
    with pytest.raises(irc.BindingError, match="N <= 8"):
        compiled(np.zeros(9, np.int64), wte, wpe, backend="reference")


def test_np_take_axis():
    def gather(x, ids):
        return np.take(x, ids, axis=1)

    specs = [D, irc.TensorSpec(("K",), "int32")]
    compiled = irc.compile(gather, *specs)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    ids = np.array([3, 0, 0], np.int32)
    np.testing.assert_array_equal(compiled(x, ids, backend="reference"), gather(x, ids))


def test_mixed_dtypes_follow_numpy_promotion():
    def mixed(x, i, b):
        return x * i + b, i // 2 + b, x * 0.5, i * 0.5, i + 1, b + b

    specs = [
        irc.TensorSpec(("N",), "float16"),
        irc.TensorSpec(("N",), "int32"),
        irc.TensorSpec(("N",), "bool"),
    ]
    _check(mixed, specs, [{"N": 1}, {"N": 7}], rtol=1e-3)


def test_bfloat16_and_float64():
    specs = [irc.TensorSpec(("N",), "bfloat16"), irc.TensorSpec(("N",), "float64")]
    compiled = irc.compile(lambda a, b: (a * 2 + 1, b / 3), *specs)
    assert "bf16" in compiled.ir("graph") and "f64" in compiled.ir("graph")
    a = np.arange(4).astype(irc.api.np.dtype("float32")).astype(specs[0].dtype.numpy)
    b = np.arange(4, dtype=np.float64)
    got_a, got_b = compiled(a, b, backend="reference")
    assert got_a.dtype == specs[0].dtype.numpy
    np.testing.assert_allclose(got_a.astype(np.float32), a.astype(np.float32) * 2 + 1)
    np.testing.assert_allclose(got_b, b / 3)


def test_pytree_outputs_and_shape_arithmetic():
    def stats(x):
        n = x.shape[0]
        return {"total": x.sum(), "rows": [x[: n // 2], x[n // 2 :]]}

    compiled = irc.compile(stats, irc.TensorSpec(("N",), F32))
    x = np.arange(5, dtype=np.float32)
    result = compiled(x, backend="reference")
    assert set(result) == {"total", "rows"}
    np.testing.assert_allclose(result["total"], 10)
    np.testing.assert_array_equal(result["rows"][0], x[:2])
    np.testing.assert_array_equal(result["rows"][1], x[2:])


def test_shape_control_flow_is_evaluated_at_trace_time():
    def pick(x):
        if x.shape[1] == 4:
            return x * 2
        return x

    compiled = irc.compile(pick, irc.TensorSpec(("N", 4), F32))
    assert "graph.mul" in compiled.ir("graph")


def test_torch_in_gives_torch_out():
    torch = pytest.importorskip("torch")
    compiled = irc.compile(softmax, D)
    x = torch.randn(3, 4)
    result = compiled(x, backend="reference")
    assert isinstance(result, torch.Tensor)
    torch.testing.assert_close(result, torch.softmax(x, dim=-1))


def test_trace_returns_a_graph_module():
    module = irc.trace(softmax, D)
    assert module.ops.first.sym_name.data == "softmax"


# ----- errors a user can cause ------------------------------------------------


def test_data_dependent_control_flow_names_the_line_and_points_to_where():
    def bad(x):
        if x.sum() > 0:  # the line the error must name
            return x
        return -x

    with pytest.raises(irc.TracingError) as info:
        irc.compile(bad, N)
    message = str(info.value)
    assert f"{__file__}:{bad.__code__.co_firstlineno + 1}" in message
    assert "np.where" in message and "if x.sum() > 0" in message


def test_unsupported_numpy_function_is_named():
    with pytest.raises(irc.TracingError, match="np.fft.fft"):
        irc.compile(lambda x: np.fft.fft(x), N)
    with pytest.raises(irc.TracingError, match="np.convolve"):
        irc.compile(lambda x: np.convolve(x, x), N)


def test_broadcasting_unrelated_symbols_is_an_error():
    with pytest.raises(irc.IrcShapeError, match="do not broadcast: N vs M"):
        irc.compile(lambda a, b: a + b, N, irc.TensorSpec(("M",), F32))


def test_reshape_errors_say_why():
    with pytest.raises(irc.IrcShapeError, match="cannot reshape"):
        irc.compile(lambda x: x.reshape(-1, 3), N)
    spec = irc.TensorSpec(("N", 768), F32)
    compiled = irc.compile(lambda x: x.reshape(-1, 12, 64), spec)
    assert "[N, 12, 64]" in compiled.ir("graph")


def test_undecidable_shape_comparison_is_an_error():
    def branch(x):
        return x if x.shape[0] > 4 else -x

    with pytest.raises(irc.TracingError, match="cannot decide 'N > 4'"):
        irc.compile(branch, N)
    compiled = irc.compile(branch, N, facts=["N >= 5"])
    assert "graph.neg" not in compiled.ir("graph")


def test_bad_specs_and_arguments():
    with pytest.raises(irc.TracingError, match="not a valid symbol name"):
        irc.TensorSpec(("N?",), F32)
    with pytest.raises(irc.IrcTypeError, match="complex64"):
        irc.TensorSpec((3,), "complex64")
    with pytest.raises(irc.TracingError, match="do not fit"):
        irc.compile(lambda x: x, N, N)
    compiled = irc.compile(lambda x, y: x + y, N, N)
    with pytest.raises(irc.BindingError, match="N"):
        compiled(np.zeros(3, np.float32), np.zeros(4, np.float32), backend="reference")
    with pytest.raises(irc.BindingError, match="float32"):
        compiled(np.zeros(3, np.float64), np.zeros(3, np.float32), backend="reference")
    with pytest.raises(irc.IrcError, match="unknown backend"):
        compiled(np.zeros(3, np.float32), np.zeros(3, np.float32), backend="cuda")


def test_boolean_mask_indexing_points_to_where():
    with pytest.raises(irc.TracingError, match="np.where"):
        irc.compile(lambda x: x[x > 0], N)


# ----- jit ----------------------------------------------------------------------


def test_jit_compiles_once_per_static_signature():
    calls = []

    @irc.jit(dims={"x": ("N", None)})
    def scale(x, factor):
        calls.append(1)
        return x * factor

    for n in (1, 4, 9):
        x = np.ones((n, 3), np.float32)
        np.testing.assert_allclose(scale(x, 2.0, backend="reference"), x * 2)
    assert len(calls) == 1  # a new N does not re-trace
    scale(np.ones((2, 5), np.float32), 2.0, backend="reference")  # new static dim
    scale(np.ones((2, 5), np.float32), 3.0, backend="reference")  # new static value
    scale(np.ones((2, 5), np.float64), 3.0, backend="reference")  # new dtype
    assert len(calls) == 4
    assert "[N, 5]" in scale.ir("graph")


def test_jit_plans_skip_binding_for_calls_like_the_last(monkeypatch):
    """A call with the structure, array kinds, dtypes, ranks, static sizes
    and static values of an earlier one goes straight to its compiled
    function; any difference takes the full path (which compiles only when
    the specs differ)."""
    from collections import namedtuple

    Pair = namedtuple("Pair", "a b")

    @irc.jit(dims={"x": ("N", None), "p": {"w": (None,)}})
    def f(x, p, pair, scale=1.0):
        return x * p["w"] * scale + pair.a

    full_calls = []
    original = irc.api.Jitted._call_new

    def counting(self, *args):
        full_calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(irc.api.Jitted, "_call_new", counting)
    w = {"w": np.ones(3, np.float32)}
    pair = Pair(2.0, 3.0)
    for n in (1, 4, 2):
        x = np.full((n, 3), 2.0, np.float32)
        np.testing.assert_allclose(f(x, w, pair, backend="reference"), x + 2)
    assert len(full_calls) == 1 and len(f.cache) == 1
    x = np.ones((2, 3), np.float32)
    f(x, w, pair, scale=2.0, backend="reference")  # a new call structure
    f(torch.ones(2, 3), {"w": torch.ones(3)}, pair, backend="reference")  # torch
    f(x, w, Pair(5.0, 3.0), backend="reference")  # a new static value
    f(
        np.ones((2, 4), np.float32),
        {"w": np.ones(4, np.float32)},
        pair,
        backend="reference",
    )  # a new static size
    assert len(full_calls) == 5
    assert len(f.cache) == 4  # torch arrays of the same dtype share the specs


def test_jit_without_dims_is_static():
    @irc.jit
    def double(x):
        return x + x

    np.testing.assert_allclose(double(np.ones(3, np.float32)), np.full(3, 2.0))
    assert "!graph.tensor<[3], f32>" in double.ir("graph")


# ----- NumPy's indexing rules ---------------------------------------------------

INDEXING = {
    "int_then_newaxis": (lambda x: x[0, None], (3, 4, 5)),
    "int_newaxis_slice": (lambda x: x[1, None, ::2], (3, 4, 5)),
    "separated_advanced": (lambda x: x[0, :, [0, 1]], (2, 3, 4)),
    "adjacent_advanced": (lambda x: x[:, 0, [0, 1]], (2, 3, 4)),
    "array_then_newaxis": (lambda x: x[np.array([[0, 1], [1, 0]]), None], (2, 3, 5)),
    "negative_constant_indices": (lambda x: x[[-1, 0]], (3, 4)),
    "ellipsis_newaxis_int": (lambda x: x[..., None, 1], (3, 4)),
    "newaxis_slice_negative_int": (lambda x: x[None, 1:, -1], (3, 4)),
    "empty_slice": (lambda x: x[2:1], (3, 4)),
    "take_negative": (lambda x: np.take(x, [-1], axis=1), (3, 4)),
}


@pytest.mark.parametrize("name", sorted(INDEXING))
@pytest.mark.parametrize("symbolic", [False, True])
def test_indexing_follows_numpy(name, symbolic):
    function, shape = INDEXING[name]
    spec_shape = ("N", *shape[1:]) if symbolic else shape
    compiled = irc.compile(function, irc.TensorSpec(spec_shape, F32))
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    np.testing.assert_array_equal(compiled(x, backend="reference"), function(x))


def test_unprovable_bounds_become_guards():
    compiled = irc.compile(lambda x: (x[-5], x[3 : x.shape[0] - 1]), N)
    text = compiled.ir("graph")
    # The guard on the index makes N >= 5, which proves the slice's bounds.
    assert text.count("sym.guard") == 1 and "sym.guard N - 5 >= 0" in text
    x = np.arange(6, dtype=np.float32)
    a, b = compiled(x, backend="reference")
    np.testing.assert_array_equal(a, x[-5])
    np.testing.assert_array_equal(b, x[3:5])
    with pytest.raises(irc.BindingError, match="N - 5 >= 0"):
        compiled(np.arange(4, dtype=np.float32), backend="reference")
    sliced = irc.compile(lambda x: x[3 : x.shape[0] - 1], N)
    assert "sym.guard 3 <= N - 1" in sliced.ir("graph")


def test_split_points_are_checked():
    with pytest.raises(irc.IrcShapeError, match="in order"):
        irc.compile(lambda x: np.split(x, [2, 1]), irc.TensorSpec((4,), F32))
    compiled = irc.compile(lambda x: np.split(x, [2]), N)
    assert "sym.guard 2 <= N" in compiled.ir("graph")
    with pytest.raises(irc.TracingError, match="positive static int"):
        irc.compile(lambda x: np.split(x, 0), N)


def test_negative_sizes_are_refused_with_the_line():
    with pytest.raises(irc.IrcShapeError, match="must not be negative") as info:
        irc.compile(lambda x: np.ones((x.shape[0], -2)), N)
    assert __file__ in str(info.value)


def test_numpy_semantics_of_less_common_functions():
    integers = irc.TensorSpec(("N",), "int32")
    _check(lambda x: np.logical_not(x), [integers], [{"N": 5}])
    _check(lambda x: np.sign(x / x) + np.sign(x), [N], [{"N": 5}])
    _check(lambda x: np.dot(x, 2), [N], [{"N": 3}])
    _check(lambda x: x * x.shape[0] ** -1, [N], [{"N": 4}])
    with pytest.raises(irc.TracingError, match="reciprocal of integers"):
        irc.compile(np.reciprocal, integers)
    # shifts by amounts below 0 and past the width, as NumPy defines them
    _check(
        lambda x: np.left_shift(x, x % 40 - 4) + np.right_shift(-x, x % 40 - 4),
        [integers],
        [{"N": 64}],
    )
    with pytest.raises(irc.IrcError, match="np.left_shift is defined on integers"):
        irc.compile(lambda x: np.left_shift(x, 1), N)


# ----- errors name the line, whatever raised them ---------------------------------


@pytest.mark.parametrize(
    "function, error, message",
    [
        (lambda x: x.nonzero(), irc.TracingError, r"array method \.nonzero\(\)"),
        (lambda x: np.exp(x, where=x > 0), irc.TracingError, "np.exp: .*where"),
        (lambda x: x.max(where=x > 0), irc.TracingError, "needs initial="),
        (lambda x: x.shape[0] // 0, irc.IrcShapeError, "division by zero"),
        (lambda x: x.astype(np.int8), irc.IrcTypeError, "int8"),
        (lambda x: np.linalg.inv(x), irc.TracingError, "np.linalg.inv"),
    ],
)
def test_user_errors_name_the_line(function, error, message):
    with pytest.raises(error, match=message) as info:
        irc.compile(function, N)
    assert str(info.value).startswith(f"{__file__}:")


def test_comparing_a_size_with_a_fraction():
    compiled = irc.compile(lambda x: x if x.shape[0] < 2.5 else -x, N, facts=["N >= 3"])
    assert "graph.neg" in compiled.ir("graph")


# ----- calling -----------------------------------------------------------------


def test_static_array_arguments_are_compared_by_value():
    w = np.arange(4, dtype=np.float32)
    with pytest.warns(irc.ConstantArrayWarning, match="compiled in as a constant"):
        compiled = irc.compile(lambda x, w: x + w, irc.TensorSpec(("N", 4), F32), w)
    x = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(compiled(x, w.copy(), backend="reference"), x + w)
    with pytest.raises(irc.BindingError, match="static argument 'w'"):
        compiled(x, w + 1, backend="reference")


def test_torch_rank_zero_and_bfloat16():
    torch = pytest.importorskip("torch")
    total = irc.compile(lambda x: x.sum(), irc.TensorSpec(("N",), F32))
    assert total(torch.ones(3), backend="reference").shape == torch.Size([])
    double = irc.compile(lambda x: x * 2, irc.TensorSpec(("N",), "bfloat16"))
    result = double(torch.ones(3, dtype=torch.bfloat16), backend="reference")
    assert result.dtype == torch.bfloat16
    assert result.tolist() == [2.0, 2.0, 2.0]


def test_jit_binds_keyword_arguments():
    @irc.jit(dims={"x": ("N",)})
    def scaled(x, scale, shift=0.0):
        return x * scale + shift

    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(scaled(x, scale=2.0, backend="reference"), x * 2)
    np.testing.assert_allclose(scaled(x, 2.0, shift=1.0), x * 2 + 1)
    np.testing.assert_allclose(scaled(x=x, scale=2.0), x * 2)
    assert len(scaled.cache) == 2  # shift=1.0 is a new static value
    with pytest.raises(irc.IrcError, match="do not fit"):
        scaled(x)
    with pytest.raises(irc.IrcError, match="must be a dict"):
        irc.jit(lambda p: p["a"], dims={"p": ("N",)})({"a": x})


def test_a_spec_dim_may_be_an_expression_of_symbols():
    def flat_matmul(x, w):
        return x.reshape(-1) @ w

    compiled = irc.compile(
        flat_matmul, irc.TensorSpec(("N", "M")), irc.TensorSpec(("N*M", 4))
    )
    assert "!graph.tensor<[M*N, 4], f32>" in compiled.ir("graph")
    x, w = np.ones((2, 3), np.float32), np.ones((6, 4), np.float32)
    np.testing.assert_allclose(compiled(x, w, backend="reference"), flat_matmul(x, w))
    with pytest.raises(irc.BindingError, match="dim M\\*N is 6"):
        compiled(x, np.ones((5, 4), np.float32), backend="reference")


def test_a_constant_spec_expression_is_refused():
    with pytest.raises(irc.TracingError, match="give it as the int 6"):
        irc.TensorSpec(("2*3",))
