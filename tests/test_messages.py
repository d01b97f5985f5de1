"""Clear messages where a user goes wrong: a call of another structure than
the compiled one (in words, at the argument), a fact about a symbol nothing
binds, an undecidable comparison (with the fact that decides it, for the API
in use), a Triton backend without torch, an array in place of a TensorSpec,
what ``irc.jit`` offers of its latest compilation, and a returned boolean-mask
read (at the line that took it)."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import warnings

import numpy as np
import pytest

import irc
from irc import ConstantArrayWarning
from irc.capture import MAX_CONSTANT_ELEMENTS
from irc.capture.tensor import FUNCTION_HANDLERS, UFUNC_HANDLERS

F32 = "float32"


def affine(x, params, *, shift=None):
    out = x * params["w"] + params["b"]
    return out if shift is None else out + shift


@pytest.fixture(scope="module")
def compiled():
    spec = irc.TensorSpec((), F32)
    return irc.compile(affine, irc.TensorSpec(("N",), F32), {"w": spec, "b": spec})


X = np.arange(3, dtype=np.float32)
ONE = np.float32(1)
W = np.array(2, np.float32)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((X,), {}, "expected 2 positional arguments (x, params), got 1"),
        (
            (X, {"w": W}),
            {},
            "'params' must be a dict with keys 'w', 'b': missing key 'b'",
        ),
        (
            (X, {"w": W, "b": W, "c": W}),
            {},
            "'params' must be a dict with keys 'w', 'b': unexpected key 'c'",
        ),
        (
            (X, [W, W]),
            {},
            "'params' must be a dict with keys 'w', 'b', got a list of 2",
        ),
        (
            (X, {"w": W, "b": {"q": W}}),
            {},
            "'params.b' must be an array or a value, got a dict with keys 'q'",
        ),
        ((X, {"w": W, "b": W}), {"shift": W}, "unexpected keyword argument 'shift'"),
        (
            ([1.0, 2.0], {"w": W, "b": W}),
            {},
            "'x' must be an array or a value, got a list",
        ),
    ],
)
@pytest.mark.parametrize("backend", ["reference", "interpret"])
def test_a_call_of_another_structure_is_described_in_words(
    compiled, backend, args, kwargs, message
):
    with pytest.raises(irc.BindingError) as raised:
        compiled(*args, backend=backend, **kwargs)
    text = str(raised.value)
    assert text.startswith("the arguments do not have the structure affine() was")
    assert text.endswith(message) or message in text


@pytest.mark.parametrize("backend", ["reference", "interpret"])
def test_dicts_are_matched_by_key_not_order(compiled, backend):
    swapped = compiled(X, {"b": ONE, "w": W}, backend=backend)
    np.testing.assert_array_equal(swapped, X * 2 + 1)


def test_keyword_arguments_are_matched_by_name_not_order():
    def f(x, *, a, b):
        return x * a + b

    spec = irc.TensorSpec((), F32)
    c = irc.compile(f, irc.TensorSpec(("N",), F32), a=spec, b=spec)
    np.testing.assert_array_equal(c(X, b=ONE, a=W, backend="reference"), X * 2 + 1)
    with pytest.raises(irc.BindingError, match="missing keyword argument 'b'"):
        c(X, a=W, backend="reference")


def test_jit_names_a_missing_argument():
    jitted = irc.jit(affine)
    with pytest.raises(irc.IrcError, match="missing a required argument: 'params'"):
        jitted(X)


def test_a_fact_about_a_symbol_no_argument_has_is_a_compile_time_error():
    with pytest.raises(irc.TracingError) as raised:
        irc.compile(lambda x: x * 2, irc.TensorSpec(("N",), F32), facts=["K <= 8"])
    assert str(raised.value) == (
        "the fact 'K <= 8' names K, which no argument's shape has (the symbols "
        "are: N); name a dim of an argument K or drop the fact"
    )


def first_two_if_long(x):
    return x[:2] if x.shape[0] >= 2 else x


def test_an_undecidable_comparison_names_the_fact_that_decides_it():
    with pytest.raises(irc.TracingError) as raised:
        irc.compile(first_two_if_long, irc.TensorSpec(("N",), F32))
    assert "cannot decide 'N >= 2' at trace time" in str(raised.value)
    assert "irc.compile(..., facts=['N >= 2'])" in str(raised.value)
    decided = irc.compile(
        first_two_if_long, irc.TensorSpec(("N",), F32), facts=["N >= 2"]
    )
    assert decided(X, backend="reference").shape == (2,)


def test_under_jit_the_hint_names_jits_facts():
    jitted = irc.jit(first_two_if_long, dims={"x": ("N",)})
    with pytest.raises(irc.TracingError, match=r"irc\.jit\(facts=\['N >= 2'\]\)"):
        jitted(X)
    assert irc.jit(first_two_if_long, dims={"x": ("N",)}, facts=["N >= 2"])(
        X
    ).shape == (2,)


def test_a_triton_backend_without_torch_says_what_to_install(monkeypatch):
    compiled = irc.compile(lambda x: x * 2, irc.TensorSpec(("N",), F32))
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "torch" else real(name, *a),
    )
    with pytest.raises(irc.IrcError) as raised:
        compiled(X, backend="interpret")
    assert (
        "backend 'interpret' runs the emitted Triton module, which needs torch"
        in str(raised.value)
    )
    assert "pip install torch==2.13.0 triton" in str(raised.value)
    np.testing.assert_array_equal(compiled(X, backend="reference"), X * 2)


def test_an_array_in_place_of_a_spec_is_a_constant_and_says_so():
    table = np.ones((2, 2), np.float32)
    with pytest.warns(ConstantArrayWarning) as caught:
        irc.compile(lambda x, t: x @ t, irc.TensorSpec(("N", 2), F32), table)
    (warning,) = caught
    assert warning.filename == __file__  # at the user's call
    assert str(warning.message) == (
        "argument 't' is an array, not an irc.TensorSpec: it is compiled in as a "
        "constant, and every call must pass an equal array; pass "
        "irc.TensorSpec((2, 2), 'float32') to make it an input (irc.jit does so for "
        "every array)"
    )


def test_a_large_array_in_place_of_a_spec_is_an_error():
    big = np.zeros(MAX_CONSTANT_ELEMENTS + 1, np.float32)
    with pytest.raises(
        irc.TracingError, match="argument 'big' is an array of 1,048,577"
    ):
        irc.compile(lambda x, big: x + big, irc.TensorSpec((big.size,), F32), big)


def test_static_values_other_than_arrays_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        irc.compile(lambda x, k: x * k, irc.TensorSpec(("N",), F32), 3)


def test_jit_offers_what_compiled_does():
    jitted = irc.jit(lambda x: np.exp(x) * 2)
    with pytest.raises(irc.IrcError, match=r"nothing compiled yet: call <lambda>\(\)"):
        _ = jitted.num_kernels
    jitted(X, backend="reference")
    latest = jitted.latest
    assert isinstance(latest, irc.Compiled)
    assert jitted.num_kernels == latest.num_kernels == 1
    assert jitted.levels == ("graph", "fusion", "loop", "memory", "triton")
    assert jitted.triton_source == latest.triton_source
    assert jitted.ir("loop") == latest.ir("loop")


def test_a_symbolic_dim_of_size_zero_is_a_clear_error():
    compiled = irc.compile(lambda x: x * 2, irc.TensorSpec(("N",), F32))
    for backend in ("reference", "interpret"):
        with pytest.raises(
            irc.BindingError, match="symbol N would be 0; symbolic dims"
        ):
            compiled(np.ones(0, np.float32), backend=backend)


def _named(listing: str) -> list[str]:
    return [name.strip() for name in listing.split(",")]


def test_the_supported_functions_listed_exist_in_numpy_and_are_captured():
    """The list in the message is the handler tables: every name is one
    NumPy has (np.linalg.norm, not np.norm) and irc captures, ufuncs too."""
    with pytest.raises(irc.TracingError) as raised:
        irc.compile(lambda x: np.partition(x, 1), irc.TensorSpec(("N",), F32))
    message = str(raised.value).splitlines()[0]  # not the user's line shown
    functions, ufuncs = message.split("supported functions: ")[1].split(
        "; supported ufuncs: "
    )
    captured = {**FUNCTION_HANDLERS, **UFUNC_HANDLERS}
    for name in _named(functions) + _named(ufuncs):
        owner, _, attribute = name.rpartition(".")
        module = functools.reduce(getattr, owner.split(".")[1:], np)
        assert getattr(module, attribute) in captured, name
    assert {"np.linalg.norm", "np.any", "np.all"} <= set(_named(functions))
    assert {"np.exp", "np.tanh", "np.maximum"} <= set(_named(ufuncs))


@pytest.mark.parametrize(
    ("function", "specs", "fact"),
    [
        (
            lambda x, y: x.reshape(y.shape),
            (("N", "M"), ("K",)),
            "M*N == K",
        ),
        (lambda x, y: x + y, (("N",), ("M",)), "N == M"),
        (lambda x, y: x * y, (("B", "N"), ("M",)), "N == M"),
        (lambda x, y: x @ y, (("B", "K"), ("M", 4)), "K == M"),
    ],
)
def test_shape_mismatches_show_the_fact_that_makes_them_equal(function, specs, fact):
    arguments = [irc.TensorSpec(shape, F32) for shape in specs]
    with pytest.raises(irc.IrcShapeError) as raised:
        irc.compile(function, *arguments)
    assert f"declare it: irc.compile(..., facts=[{fact!r}])" in str(raised.value)
    irc.compile(function, *arguments, facts=[fact])  # the advice works


def test_constant_mismatches_offer_no_fact():
    with pytest.raises(irc.IrcShapeError) as raised:
        irc.compile(
            lambda x, y: x + y, irc.TensorSpec((3,), F32), irc.TensorSpec((4,), F32)
        )
    assert "facts=" not in str(raised.value)


def rows_summed(x):
    total = 0
    for row in x:
        total = total + row
    return total


def test_a_python_loop_over_a_symbolic_dim_points_to_scan_and_fori_loop():
    with pytest.raises(irc.TracingError) as raised:
        irc.compile(rows_summed, irc.TensorSpec(("N", 3), F32))
    message = str(raised.value)
    assert "for row in x" in message  # the user's line
    assert "first dim is symbolic (N)" in message
    assert "irc.scan" in message and "irc.fori_loop" in message
    # Over a static first dim the loop unrolls, as before.
    compiled = irc.compile(rows_summed, irc.TensorSpec((2, "M"), F32))
    np.testing.assert_array_equal(
        compiled(np.ones((2, 3), np.float32), backend="reference"), [2, 2, 2]
    )


def test_the_cond_advice_to_reduce_with_any_or_all_works():
    with pytest.raises(irc.IrcTypeError, match=r"with \.any\(\) or \.all\(\)"):
        irc.compile(
            lambda x: irc.cond(x > 0, lambda: x, lambda: -x),
            irc.TensorSpec(("N",), F32),
        )
    compiled = irc.compile(
        lambda x: irc.cond((x > 0).all(), lambda: x, lambda: -x),
        irc.TensorSpec(("N",), F32),
    )
    np.testing.assert_array_equal(compiled(-X - 1, backend="reference"), X + 1)


def positives_doubled(x):
    positives = x[x > 0]
    doubled = positives * 2
    return doubled


def _line_of(function, text: str) -> int:
    """The number of ``function``'s first line that holds ``text``."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_a_returned_boolean_mask_read_names_the_line_that_took_it():
    """Its size is the data's, so it cannot be returned; the error is found
    at the return, where the running line is the caller's irc.compile, so
    it names the line that took the read instead."""
    with pytest.raises(irc.TracingError) as raised:
        irc.compile(positives_doubled, irc.TensorSpec(("N",), F32))
    message = str(raised.value)
    line = _line_of(positives_doubled, "x[x > 0]")
    assert message.startswith(f"{__file__}:{line}: the boolean-mask read x[mask]")
    assert message.endswith("\n    positives = x[x > 0]")
    assert "returned (output 0)" in message
    for advice in ("np.where(mask, x, fill)", "x[mask] = v", "np.sum(x, where=mask)"):
        assert advice in message
    # The advice works.
    spec = irc.TensorSpec(("N",), F32)
    values = np.array([1, -2, 3], np.float32)
    kept = irc.compile(lambda x: np.where(x > 0, x * 2, 0), spec)
    np.testing.assert_array_equal(kept(values, backend="reference"), [2, 0, 6])
    summed = irc.compile(lambda x: np.sum(x * 2, where=x > 0), spec)
    assert summed(values, backend="reference") == 8


def positives_if_any(x):
    return irc.cond(
        (x > 0).any(),
        lambda v: v[v > 0],
        lambda v: v,
        x,
    )


def test_a_boolean_mask_read_a_branch_returns_names_its_line():
    with pytest.raises(irc.TracingError) as raised:
        irc.compile(positives_if_any, irc.TensorSpec(("N",), F32))
    line = _line_of(positives_if_any, "v[v > 0]")
    assert str(raised.value).startswith(
        f"{__file__}:{line}: the boolean-mask read x[mask] taken here is returned "
        "by a function given to irc's control flow"
    )
