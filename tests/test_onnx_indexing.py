"""ONNX's ScatterElements, ScatterND, TopK, NonZero and BitShift on irc.

Models with a symbolic dim compile once and match ONNX's reference
evaluator at two sizes, on the reference backend and the Triton
interpreter: scatters replacing, adding and reducing (repeated indices
included where the reduction defines them), TopK of both orders with ties
and infinities, shifts by amounts past the width. NonZero folds an input
known at import time; the forms irc refuses say why.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import irc.onnx  # noqa: E402
from irc.errors import IrcError  # noqa: E402
from irc.onnx import UnsupportedOnnxOp  # noqa: E402
from irc.onnx.indexing import TOP_K_LIMIT  # noqa: E402

RNG = np.random.default_rng(0)
BACKENDS = ["reference", "interpret"]


def single_node(
    node: Any, inputs: list[Any], outputs: list[Any], initializers: tuple = ()
) -> Any:
    graph = helper.make_graph([node], "g", inputs, outputs, list(initializers))
    built = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(built)
    return built


def tensor_info(name: str, element: int, dims: list[Any]) -> Any:
    return helper.make_tensor_value_info(name, element, dims)


def check_at_sizes(built: Any, backend: str, calls: list[list[np.ndarray]]) -> None:
    """Compiled once, ``built`` matches ONNX's reference at each call."""
    if backend == "interpret":
        pytest.importorskip("torch")
    compiled = irc.onnx.load(built).compile()
    evaluator = ReferenceEvaluator(built)
    names = [i.name for i in built.graph.input]
    for arguments in calls:
        expected = evaluator.run(None, dict(zip(names, arguments)))
        actual = compiled(*arguments, backend=backend)
        actual = list(actual) if isinstance(actual, tuple) else [actual]
        for got, want in zip(actual, expected):
            assert np.asarray(got).dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements_along_a_symbolic_axis(backend: str, reduction: str) -> None:
    """Indices along the symbolic axis 0 (negative ones from its end);
    every reduction but replacement meets a repeated index."""
    node = helper.make_node(
        "ScatterElements", ["data", "indices", "updates"], ["y"], axis=0,
        reduction=reduction,
    )  # fmt: skip
    built = single_node(
        node,
        [
            tensor_info("data", TensorProto.FLOAT, ["N", 3]),
            tensor_info("indices", TensorProto.INT64, [2, 3]),
            tensor_info("updates", TensorProto.FLOAT, [2, 3]),
        ],
        [tensor_info("y", TensorProto.FLOAT, ["N", 3])],
    )
    calls = []
    for n in (4, 7):
        data = RNG.integers(-4, 5, (n, 3)).astype(np.float32)
        repeated = [1, -1, 2] if reduction != "none" else [1, -2, 0]
        indices = np.array([[0, -1, 2], repeated])
        updates = RNG.integers(-4, 5, (2, 3)).astype(np.float32)
        calls.append([data, indices, updates])
    check_at_sizes(built, backend, calls)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("reduction", ["none", "add", "min"])
def test_scatter_nd_writes_slices_of_a_symbolic_count(
    backend: str, reduction: str
) -> None:
    """``K`` index tuples of depth 1 write rows of ``[N, 2, 3]`` data;
    replacement gets distinct rows, the reductions a repeated one."""
    node = helper.make_node(
        "ScatterND", ["data", "indices", "updates"], ["y"], reduction=reduction
    )
    built = single_node(
        node,
        [
            tensor_info("data", TensorProto.INT64, [6, 2, 3]),
            tensor_info("indices", TensorProto.INT64, ["K", 1]),
            tensor_info("updates", TensorProto.INT64, ["K", 2, 3]),
        ],
        [tensor_info("y", TensorProto.INT64, [6, 2, 3])],
    )
    calls = []
    for count in (2, 4):
        rows = RNG.permutation(6)[:count]
        if reduction != "none":
            rows[-1] = rows[0]
        data = RNG.integers(-9, 10, (6, 2, 3))
        updates = RNG.integers(-9, 10, (count, 2, 3))
        from_end = rows - 6 * (rows % 2)  # odd rows counted from the end
        calls.append([data, from_end.reshape(count, 1), updates])
    check_at_sizes(built, backend, calls)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("largest", [1, 0])
def test_top_k_of_rows_of_a_symbolic_count(backend: str, largest: int) -> None:
    """The 3 largest or smallest of each row, ties to the lower index,
    infinities included (one equal to what a taken element stands for)."""
    node = helper.make_node(
        "TopK", ["x", "k"], ["values", "indices"], axis=1, largest=largest
    )
    built = single_node(
        node,
        [tensor_info("x", TensorProto.FLOAT, ["B", 6])],
        [
            tensor_info("values", TensorProto.FLOAT, ["B", 3]),
            tensor_info("indices", TensorProto.INT64, ["B", 3]),
        ],
        [helper.make_tensor("k", TensorProto.INT64, [1], [3])],
    )
    calls = []
    for batch in (2, 5):
        x = RNG.integers(-2, 3, (batch, 6)).astype(np.float32)
        x[0] = [np.inf, -np.inf, 1, -np.inf, np.inf, 1]
        x[1] = [-np.inf] * 6
        calls.append([x])
    check_at_sizes(built, backend, calls)


def test_top_k_of_integers_along_a_symbolic_axis_guards_k() -> None:
    """k against a symbolic axis is a run-time guard; int32 elements at
    the least int32 (what a taken element stands for) rank correctly."""
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=0)
    built = single_node(
        node,
        [tensor_info("x", TensorProto.INT32, ["N"])],
        [
            tensor_info("values", TensorProto.INT32, [2]),
            tensor_info("indices", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor("k", TensorProto.INT64, [1], [2])],
    )
    least = np.iinfo(np.int32).min
    check_at_sizes(
        built,
        "reference",
        [[np.array([least, least, least], np.int32)], [np.arange(5, dtype=np.int32)]],
    )
    with pytest.raises(IrcError, match="k=2"):
        irc.onnx.load(built).compile()(np.array([7], np.int32), backend="reference")


def test_top_k_refuses_k_past_its_limit() -> None:
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"])
    k = TOP_K_LIMIT + 1
    built = single_node(
        node,
        [tensor_info("x", TensorProto.FLOAT, [2, 1000])],
        [
            tensor_info("values", TensorProto.FLOAT, [2, k]),
            tensor_info("indices", TensorProto.INT64, [2, k]),
        ],
        [helper.make_tensor("k", TensorProto.INT64, [1], [k])],
    )
    with pytest.raises(UnsupportedOnnxOp, match=f"k={k}"):
        irc.onnx.load(built).compile()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("element", [TensorProto.INT32, TensorProto.INT64])
def test_bit_shifts_by_any_amount(backend: str, direction: str, element: int) -> None:
    """Shifts by amounts below 0 and past the width (0, or -1 shifting a
    negative value right), of values of any sign, at two sizes."""
    node = helper.make_node("BitShift", ["x", "s"], ["y"], direction=direction)
    built = single_node(
        node,
        [tensor_info("x", element, ["N"]), tensor_info("s", element, ["N"])],
        [tensor_info("y", element, ["N"])],
    )
    dtype = helper.tensor_dtype_to_np_dtype(element)
    bits = np.iinfo(dtype).bits
    calls = []
    for n in (7, 40):
        x = RNG.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, n, dtype=dtype)
        shift = RNG.integers(-2, bits + 2, n).astype(dtype)
        shift[:3] = [bits - 1, bits, 0]
        calls.append([x, shift])
    check_at_sizes(built, backend, calls)


def test_non_zero_folds_an_input_known_at_import_time() -> None:
    node = helper.make_node("NonZero", ["mask"], ["y"])
    mask = np.array([[1, 0, 2], [0, 0, 3]], np.int64)
    built = single_node(
        node,
        [],
        [tensor_info("y", TensorProto.INT64, [2, None])],
        [onnx.numpy_helper.from_array(mask, "mask")],
    )
    result = irc.onnx.load(built).compile()(backend="reference")
    np.testing.assert_array_equal(result, np.array(np.nonzero(mask)))


def test_non_zero_of_data_known_at_run_time_is_refused() -> None:
    node = helper.make_node("NonZero", ["mask"], ["y"])
    built = single_node(
        node,
        [tensor_info("mask", TensorProto.BOOL, ["N"])],
        [tensor_info("y", TensorProto.INT64, [1, None])],
    )
    with pytest.raises(UnsupportedOnnxOp, match="depends on the data"):
        irc.onnx.load(built).compile()
