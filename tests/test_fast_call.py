"""The public call's fast path on a Triton backend, and its fallbacks.

A call of torch tensors in the compiled structure goes straight to the
emitted launcher: one generated function flattens it and tests what the
launcher does not (the structure, dicts' keys in any order, ``requires_grad``,
the first tensor's kind of device, the static values), and the launcher
checks the rest (dense layout among it, and copies strided views). Anything else, and any call the launcher refuses,
takes the general path, which converts what it can (NumPy arrays, dict
subclasses, tensors on another device) and raises the precise error. Each test makes a
good call first (so that the fast path is bound and has been taken), then
one that must fall back, and checks that the fallback's result or message is
the general path's, word for word, and NumPy's values. Everything runs on
Triton's interpreter backend at two bindings of the symbols.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import irc
from irc.errors import BindingError
from irc.runtime import triton_backend

BACKEND = "interpret"
BINDINGS = (2, 5)


def affine(x: Any, params: Any, scale: float) -> Any:
    h = x * params["w"] + params["b"]["bias"]
    return {"y": h * scale, "total": h.sum(axis=0)}


@pytest.fixture(scope="module")
def compiled() -> irc.Compiled:
    params = {
        "w": irc.TensorSpec((3,), "float32"),
        "b": {"bias": irc.TensorSpec((3,), "float32")},
    }
    return irc.compile(affine, irc.TensorSpec(("N", 3), "float32"), params, 2.0)


def _arguments(rows: int, seed: int = 0) -> tuple[Any, dict[str, Any], float]:
    rng = np.random.default_rng(seed)
    x, w, bias = (rng.standard_normal(s).astype(np.float32) for s in ((rows, 3), 3, 3))
    return (
        torch.from_numpy(x),
        {"w": torch.from_numpy(w), "b": {"bias": torch.from_numpy(bias)}},
        2.0,
    )


def _numpy_of(args: tuple[Any, ...]) -> Any:
    x, params, scale = args
    arrays = {"w": params["w"].numpy(), "b": {"bias": params["b"]["bias"].numpy()}}
    return affine(x.numpy(), arrays, scale)


def _check_values(result: Any, args: tuple[Any, ...]) -> None:
    expected = _numpy_of(args)
    assert result.keys() == expected.keys()
    for key, value in expected.items():
        assert isinstance(result[key], torch.Tensor)
        np.testing.assert_allclose(result[key].numpy(), value, rtol=1e-6, atol=1e-6)


@pytest.fixture
def general_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the calls that take the general path (``Launcher.__call__``)."""
    calls: list[int] = []
    general = triton_backend.Launcher.__call__

    def counted(self: Any, arrays: Any) -> Any:
        calls.append(len(arrays))
        return general(self, arrays)

    monkeypatch.setattr(triton_backend.Launcher, "__call__", counted)
    yield calls


def _general_message(compiled: irc.Compiled, *args: Any, **kwargs: Any) -> str:
    """The message of the general path alone, for a call that fails."""
    launcher = triton_backend.Launcher(
        triton_backend.load_source(compiled.triton_source, interpret=True),
        compiled.compilation.input_names,
        interpret=True,
    )
    with pytest.raises(BindingError) as refused:
        compiled._caller.general_triton_call(launcher)(args, kwargs)
    return str(refused.value)


def _refused(compiled: irc.Compiled, *args: Any) -> str:
    """A call after a good one: it must fall back and fail as the general path."""
    good = _arguments(BINDINGS[0])
    _check_values(compiled(*good, backend=BACKEND), good)
    with pytest.raises(BindingError) as refused:
        compiled(*args, backend=BACKEND)
    message = str(refused.value)
    assert message == _general_message(compiled, *args)
    return message


@pytest.mark.parametrize("rows", BINDINGS)
def test_a_good_call_takes_the_fast_path(
    compiled: irc.Compiled, general_calls: list[int], rows: int
) -> None:
    for seed in range(2):
        args = _arguments(rows, seed)
        _check_values(compiled(*args, backend=BACKEND), args)
    assert general_calls == []


def test_another_size_binding_after_a_good_call(
    compiled: irc.Compiled, general_calls: list[int]
) -> None:
    for rows in (*BINDINGS, *reversed(BINDINGS)):
        args = _arguments(rows, seed=rows)
        _check_values(compiled(*args, backend=BACKEND), args)
    assert general_calls == []


def test_results_are_fresh_tensors(compiled: irc.Compiled) -> None:
    args = _arguments(BINDINGS[1])
    first, second = (compiled(*args, backend=BACKEND) for _ in range(2))
    for key in first:
        assert first[key].data_ptr() != second[key].data_ptr()
    assert first["y"].data_ptr() != args[0].data_ptr()
    first["y"].fill_(0.0)  # no result is another's storage
    _check_values(second, args)


def test_dicts_in_another_key_order_take_the_fast_path(
    compiled: irc.Compiled, general_calls: list[int]
) -> None:
    x, params, scale = _arguments(BINDINGS[0])
    reordered = {"b": params["b"], "w": params["w"]}
    _check_values(compiled(x, reordered, scale, backend=BACKEND), (x, params, scale))
    assert general_calls == []


def test_dict_subclasses_take_the_general_path(
    compiled: irc.Compiled, general_calls: list[int]
) -> None:
    """A dict subclass may insert a key on lookup (``defaultdict``): only the
    general path, which lists its keys, reads one."""
    x, params, scale = _arguments(BINDINGS[1])
    for kind in (OrderedDict, lambda items: defaultdict(list, items)):
        given = kind(params)
        _check_values(compiled(x, given, scale, backend=BACKEND), (x, params, scale))
        assert list(given) == ["w", "b"]
    assert general_calls == [3, 3]


def test_a_changed_structure_falls_back_to_its_message(compiled: irc.Compiled) -> None:
    x, params, scale = _arguments(BINDINGS[0])
    message = _refused(compiled, x, {"w": params["w"]}, scale)
    assert "'params' must be a dict with keys 'w', 'b': missing key 'b'" in message
    message = _refused(compiled, x, {**params, "b": params["b"]["bias"]}, scale)
    assert "'params.b' must be a dict with keys 'bias'" in message


def test_a_wrong_dtype_after_a_good_call(compiled: irc.Compiled) -> None:
    x, params, scale = _arguments(BINDINGS[1])
    wrong = {**params, "w": params["w"].double()}
    message = _refused(compiled, x, wrong, scale)
    assert (
        "argument 'params_w' has dtype float64 but the function expects float32"
        in message
    )


def test_a_wrong_size_after_a_good_call(compiled: irc.Compiled) -> None:
    x, params, scale = _arguments(BINDINGS[1])
    wrong = {**params, "w": torch.zeros(4)}
    message = _refused(compiled, x, wrong, scale)
    assert "argument 'params_w' axis 0: expected size 3, got 4" in message


def test_another_device_after_a_good_call(compiled: irc.Compiled) -> None:
    x, params, scale = _arguments(BINDINGS[0])
    # The first tensor (the fast path's test) and another one (the launcher's).
    for args in (
        (x.to("meta"), params, scale),
        (x, {**params, "w": params["w"].to("meta")}, scale),
    ):
        message = _refused(compiled, *args)
        assert "is a torch tensor on device meta" in message


def test_requires_grad_after_a_good_call(compiled: irc.Compiled) -> None:
    x, params, scale = _arguments(BINDINGS[0])
    message = _refused(compiled, x.requires_grad_(), params, scale)
    assert "requires_grad=True" in message and "x.detach()" in message


def test_another_static_value_after_a_good_call(compiled: irc.Compiled) -> None:
    x, params, _ = _arguments(BINDINGS[0])
    message = _refused(compiled, x, params, 3.0)
    assert "static argument 'scale' was 2.0 when compiled but is 3.0 now" in message
    message = _refused(compiled, x, params, np.float64(2.0))  # equal, another type
    assert "static argument 'scale' was 2.0 when compiled" in message


@pytest.mark.parametrize(
    ("compiled_value", "equal", "unequal"),
    [
        (2, 2, [3, 2.0, True, "2"]),
        ("gelu", "gelu", ["tanh", b"gelu"]),
        (None, None, [0]),
    ],
)
def test_plain_static_values_are_tested_as_the_general_path_does(
    compiled_value: Any, equal: Any, unequal: list[Any], general_calls: list[int]
) -> None:
    def shifted(x: Any, by: Any) -> Any:
        return x + (1.0 if by is None else len(str(by)))

    compiled = irc.compile(shifted, irc.TensorSpec(("N",), "float32"), compiled_value)
    x = torch.arange(3.0)
    expected = shifted(x.numpy(), compiled_value)
    np.testing.assert_array_equal(compiled(x, equal, backend=BACKEND).numpy(), expected)
    assert general_calls == []
    for value in unequal:
        with pytest.raises(BindingError, match="static argument 'by' was") as refused:
            compiled(x, value, backend=BACKEND)
        assert str(refused.value) == _general_message(compiled, x, value)


@pytest.mark.parametrize("leaf", ["x", "w"])
def test_a_sparse_tensor_after_a_good_call(compiled: irc.Compiled, leaf: str) -> None:
    x, params, scale = _arguments(BINDINGS[0])
    if leaf == "x":
        x = x.to_sparse()
    else:
        params = {**params, "w": params["w"].to_sparse()}
    message = _refused(compiled, x, params, scale)
    assert "layout torch.sparse_coo" in message


def test_strided_views_take_the_fast_path(
    compiled: irc.Compiled, general_calls: list[int]
) -> None:
    """The launcher copies a view that is not contiguous (a transpose, every
    other element) and computes on the copy."""
    x, params, scale = _arguments(BINDINGS[1])
    wide = torch.stack([params["w"], params["w"]], dim=1)
    args = (x.t().contiguous().t(), {**params, "w": wide[:, 0]}, scale)
    assert not args[0].is_contiguous() and not args[1]["w"].is_contiguous()
    _check_values(compiled(*args, backend=BACKEND), args)
    assert general_calls == []


def test_numpy_arrays_after_torch_tensors_take_the_general_path(
    compiled: irc.Compiled, general_calls: list[int]
) -> None:
    args = _arguments(BINDINGS[1])
    _check_values(compiled(*args, backend=BACKEND), args)
    x, params, scale = args
    arrays = (
        x.numpy(),
        {"w": params["w"].numpy(), "b": {"bias": params["b"]["bias"].numpy()}},
        scale,
    )
    result = compiled(*arrays, backend=BACKEND)
    assert general_calls == [3]
    for key, value in _numpy_of(args).items():
        assert isinstance(result[key], np.ndarray)
        np.testing.assert_allclose(result[key], value, rtol=1e-6, atol=1e-6)


#: One argument of a good call spoiled: what the fast path must hand over.
SPOILERS: dict[str, Callable[[torch.Tensor], Any]] = {
    "float64": lambda t: t.double(),
    "int32": lambda t: t.to(torch.int32),
    "one more axis": lambda t: t[None],
    "one element more": lambda t: torch.cat([t, t[..., :1]], dim=-1),
    "meta device": lambda t: t.to("meta"),
    "NumPy float64": lambda t: t.double().numpy(),
    "Python list": lambda t: t.tolist(),
    "a dict": lambda t: {"t": t},
    "None": lambda t: None,
}


@settings(max_examples=30, deadline=None)
@given(
    rows=st.sampled_from(BINDINGS),
    leaf=st.sampled_from(["x", "w", "bias"]),
    spoil=st.sampled_from(sorted(SPOILERS)),
)
def test_every_spoiled_call_fails_as_the_general_path(
    compiled: irc.Compiled, rows: int, leaf: str, spoil: str
) -> None:
    x, params, scale = _arguments(rows)
    if leaf == "x":
        x = SPOILERS[spoil](x)
    elif leaf == "w":
        params = {**params, "w": SPOILERS[spoil](params["w"])}
    else:
        params = {**params, "b": {"bias": SPOILERS[spoil](params["b"]["bias"])}}
    _refused(compiled, x, params, scale)
