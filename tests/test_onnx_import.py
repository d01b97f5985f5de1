"""``irc.onnx.load``: ONNX models as graph IR with symbolic dims.

A small transformer written in torch and exported by both of torch's ONNX
exporters (dynamic batch and sequence axes) imports, compiles, and matches
onnxruntime at two sizes on the reference backend and the Triton
interpreter. Beyond it: dim_params become (sanitised) symbols, a shape
subgraph (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) folds into a
symbolic reshape, initializers are arguments or constants, and the errors a
user can cause say what and where.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

import irc  # noqa: E402
import irc.onnx  # noqa: E402
from irc.cli import irc_opt  # noqa: E402
from irc.errors import IrcError  # noqa: E402
from irc.onnx import UnsupportedOnnxOp  # noqa: E402
from irc.testing import models  # noqa: E402

RNG = np.random.default_rng(0)


def model(nodes, inputs, outputs, initializers=(), opset=17):  # type: ignore[no-untyped-def]
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    built = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(built)
    return built


def run_onnxruntime(built, *inputs: np.ndarray) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    session = ort.InferenceSession(built.SerializeToString())
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))


def flatten_model():  # type: ignore[no-untyped-def]
    """``reshape(x, [shape(x)[0], -1]) * w``, as exporters write it."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["rows"], axis=0),
        helper.make_node("Unsqueeze", ["rows", "axis0"], ["rows1"]),
        helper.make_node("Concat", ["rows1", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),
        helper.make_node("Mul", ["flat", "w"], ["y"]),
    ]
    initializers = [
        helper.make_tensor("zero", TensorProto.INT64, [], [0]),
        helper.make_tensor("axis0", TensorProto.INT64, [1], [0]),
        helper.make_tensor("minus_one", TensorProto.INT64, [1], [-1]),
        helper.make_tensor("w", TensorProto.FLOAT, [12], np.arange(12.0)),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch size", 3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch size", 12])
    return model(nodes, [x], [y], initializers)


def test_dim_params_become_sanitised_symbols_and_shape_subgraphs_fold() -> None:
    f = irc.onnx.load(flatten_model())
    assert f.specs[0] == irc.TensorSpec(("batch_size", 3, 4), "float32")
    text = str(f.module)
    assert "graph.reshape %x : !graph.tensor<[batch_size, 3, 4], f32> -> " in text
    assert "!graph.tensor<[batch_size, 12], f32>" in text
    for shape_op in ("graph.take", "graph.concat", "graph.dim"):
        assert shape_op not in text


@pytest.mark.parametrize("backend", ["reference", "interpret"])
def test_folded_reshape_matches_onnxruntime_at_two_sizes(backend: str) -> None:
    if backend == "interpret":
        pytest.importorskip("torch")
    built = flatten_model()
    f = irc.onnx.load(built)
    compiled = f.compile()
    for batch in (1, 5):
        x = RNG.standard_normal((batch, 3, 4)).astype(np.float32)
        (expected,) = run_onnxruntime(built, x)
        actual = compiled(x, *f.weights, backend=backend)
        np.testing.assert_allclose(actual, expected, rtol=1e-6)


def test_an_expression_dim_param_is_a_symbol_with_a_declared_fact() -> None:
    nodes = [
        helper.make_node("Reshape", ["x", "flat"], ["rows"]),
        helper.make_node("Add", ["rows", "y"], ["z"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "N"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["2*N"])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["2*N"])
    flat = helper.make_tensor("flat", TensorProto.INT64, [1], [-1])
    f = irc.onnx.load(model(nodes, [x, y], [z], [flat]))
    assert f.specs[1] == irc.TensorSpec(("y_0",), "float32")
    assert f.facts == ["y_0 == 2*N"]
    compiled = f.compile()
    x_value = RNG.standard_normal((2, 3)).astype(np.float32)
    y_value = RNG.standard_normal(6).astype(np.float32)
    np.testing.assert_allclose(
        compiled(x_value, y_value, backend="reference"), x_value.ravel() + y_value
    )
    with pytest.raises(irc.BindingError, match="y_0 == 2"):
        compiled(x_value, y_value[:5], backend="reference")


def test_initializers_are_arguments_by_default_or_constants() -> None:
    built = flatten_model()
    as_arguments = irc.onnx.load(built)
    assert as_arguments.input_names == ["x", "w"]
    assert [w.shape for w in as_arguments.weights] == [(12,)]
    # The integer initializers describe the shape: always constants.
    assert set(as_arguments.constants) == {"zero", "axis0", "minus_one"}
    baked = irc.onnx.load(built, initializers="constants")
    assert baked.input_names == ["x"] and baked.weights == ()
    assert "graph.constant dense<" in str(baked.module)
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(
        baked.compile()(x, backend="reference"), run_onnxruntime(built, x)[0]
    )


def test_called_on_numpy_arrays_the_model_runs_eagerly() -> None:
    built = flatten_model()
    f = irc.onnx.load(built)
    x = RNG.standard_normal((3, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(f(x, *f.weights), run_onnxruntime(built, x)[0])


def test_a_path_loads_and_irc_compile_accepts_the_function(tmp_path: Path) -> None:
    path = tmp_path / "flatten.onnx"
    onnx.save(flatten_model(), path)
    f = irc.onnx.load(path)
    compiled = irc.compile(f, *f.specs)
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(
        compiled(x, *f.weights, backend="reference"), f(x, *f.weights)
    )


def test_an_unsupported_operator_is_named_when_loading() -> None:
    nodes = [helper.make_node("Det", ["x"], ["y"], name="determinant")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [])
    with pytest.raises(UnsupportedOnnxOp, match=r"node 0 'determinant'.*Det is not"):
        irc.onnx.load(model(nodes, [x], [y]))


def test_a_shape_computed_from_data_is_a_clear_error() -> None:
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="dynamic")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    shape = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", 2])
    built = model(nodes, [x, shape], [y])
    with pytest.raises(
        IrcError, match=r"node 0 'dynamic' \(Reshape\).*known at compile"
    ):
        irc.onnx.load(built).capture()
    # Bound to a value at load time, the input is a constant.
    bound = irc.onnx.load(built, constants={"shape": np.array([-1, 2])})
    assert bound.input_names == ["x"]
    assert "-> !graph.tensor<[2*N, 2], f32>" in str(bound.module)


def test_unsupported_element_types_and_bad_files_are_clear_errors(
    tmp_path: Path,
) -> None:
    nodes = [helper.make_node("Abs", ["x"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.UINT8, [3])
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, [3])
    with pytest.raises(IrcError, match="element type UINT8 is not supported"):
        irc.onnx.load(model(nodes, [x], [y]))
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"not a model")
    with pytest.raises(IrcError, match="does not parse"):
        irc.onnx.load(garbage)
    with pytest.raises(IrcError, match="cannot read the ONNX model"):
        irc.onnx.load(tmp_path / "missing.onnx")


def test_without_onnx_installed_the_error_says_how_to_install_it() -> None:
    with (
        mock.patch.dict(sys.modules, {"onnx": None}),
        pytest.raises(IrcError, match=r"pip install 'irc\[onnx\]'"),
    ):
        irc.onnx.load(b"")


def test_import_irc_does_not_import_onnx() -> None:
    script = "import sys, irc; assert 'onnx' not in sys.modules; irc.onnx.load"
    subprocess.run([sys.executable, "-c", script], check=True)


def test_irc_opt_reads_an_onnx_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "flatten.onnx"
    onnx.save(flatten_model(), path)
    assert irc_opt.main([str(path), "-p", "fuse"]) == 0
    assert "fusion.kernel @k0 pointwise" in capsys.readouterr().out
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"garbage")
    assert irc_opt.main([str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}: error: ") and "Traceback" not in err


# ----- a transformer exported by torch ---------------------------------------


def transformer_onnx(dynamo: bool) -> bytes:
    torch = pytest.importorskip("torch")

    class Block(torch.nn.Module):
        def __init__(self, width: int = 32, heads: int = 4):
            super().__init__()
            self.embedding = torch.nn.Embedding(50, width)
            self.norm1 = torch.nn.LayerNorm(width)
            self.norm2 = torch.nn.LayerNorm(width)
            self.qkv = torch.nn.Linear(width, 3 * width)
            self.project = torch.nn.Linear(width, width)
            self.up = torch.nn.Linear(width, 4 * width)
            self.down = torch.nn.Linear(4 * width, width)
            self.heads = heads

        def forward(self, tokens):  # type: ignore[no-untyped-def]
            x = self.embedding(tokens)
            batch, seq, width = x.shape
            q, k, v = self.qkv(self.norm1(x)).split(width, dim=-1)
            split = (batch, seq, self.heads, width // self.heads)
            q, k, v = (t.reshape(split).transpose(1, 2) for t in (q, k, v))
            scores = q @ k.transpose(-2, -1) / (width // self.heads) ** 0.5
            causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool))
            attention = scores.masked_fill(~causal, float("-inf")).softmax(-1)
            y = (attention @ v).transpose(1, 2).reshape(batch, seq, width)
            x = x + self.project(y)
            gelu = torch.nn.functional.gelu(self.up(self.norm2(x)))
            return x + self.down(gelu)

    torch.manual_seed(0)
    example = (torch.zeros(2, 5, dtype=torch.long),)
    dynamic = {"tokens": {0: "batch", 1: "seq"}}
    return export_torch(Block().eval(), example, dynamic, dynamo)


def export_torch(module, example, dynamic, dynamo: bool) -> bytes:  # type: ignore[no-untyped-def]
    """``irc.testing.models.export_onnx``, skipped without torch (or, for the
    dynamo exporter, onnxscript)."""
    pytest.importorskip("torch")
    if dynamo:
        pytest.importorskip("onnxscript")
    return models.export_onnx(module, example, dynamic, dynamo)


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
def test_torch_shape_arithmetic_folds(dynamo: bool) -> None:
    """expand(b, -1, -1), new_zeros(b, t).view(-1, 1) and arange(t), which
    exporters write with Shape, Equal, Where, ConstantOfShape and Range over
    the dynamic sizes."""
    torch = pytest.importorskip("torch")

    class ShapeArithmetic(torch.nn.Module):
        def forward(self, x, y):  # type: ignore[no-untyped-def]
            batch, length = x.shape
            expanded = y.unsqueeze(0).expand(batch, -1, -1)
            column = x.new_zeros(batch, length).view(-1, 1)
            ramp = torch.arange(length).float() + x[0]
            return expanded.sum(-1) + x[:, :1], column * 2, ramp

    example = (torch.zeros(2, 5), torch.zeros(4, 3))
    dynamic = {"x": {0: "b", 1: "t"}, "y": {}}
    exported = export_torch(ShapeArithmetic(), example, dynamic, dynamo)
    f = irc.onnx.load(exported)
    assert "graph.take" not in str(f.module)  # no shape arithmetic is left
    compiled = f.compile()
    session = ort.InferenceSession(exported)
    y = RNG.random((4, 3)).astype(np.float32)
    for shape in [(2, 5), (3, 7)]:
        x = RNG.random(shape).astype(np.float32)
        expected = session.run(None, {"x": x, "y": y})
        actual_outputs = compiled(x, y, *f.weights, backend="reference")
        for actual, want in zip(actual_outputs, expected, strict=True):
            np.testing.assert_allclose(actual, want, rtol=1e-6)


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
def test_torch_exported_transformer_matches_onnxruntime(dynamo: bool) -> None:
    exported = transformer_onnx(dynamo)
    f = irc.onnx.load(exported)
    assert f.specs[0] == irc.TensorSpec(("batch", "seq"), "int64")
    compiled = f.compile()
    graph_ir = compiled.ir("graph")
    assert "-> !graph.tensor<[batch, seq, 32], f32>" in graph_ir
    session = ort.InferenceSession(exported)
    for shape, backend in [((2, 5), "reference"), ((3, 7), "reference"),
                           ((2, 5), "interpret"), ((1, 3), "interpret")]:  # fmt: skip
        tokens = RNG.integers(0, 50, shape).astype(np.int64)
        (expected,) = session.run(None, {"tokens": tokens})
        actual = compiled(tokens, *f.weights, backend=backend)
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)


def test_an_embedding_lookup_runs_eagerly_and_compiled():
    """A Gather from a float initializer (a weight argument) by int64 token
    ids: called on NumPy arrays, and compiled, it is onnxruntime's."""
    from onnx import TensorProto, helper, numpy_helper

    table = np.random.default_rng(0).standard_normal((10, 4)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "tokens"], ["y"], axis=0)],
        "embed",
        [helper.make_tensor_value_info("tokens", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 4])],
        [numpy_helper.from_array(table, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    f = irc.onnx.load(model)
    tokens = np.array([[1, -2, 3], [0, 9, 9]], np.int64)
    expected = np.take(table, tokens, axis=0)
    np.testing.assert_array_equal(f(tokens, *f.weights), expected)
    compiled = f.compile()
    np.testing.assert_array_equal(
        compiled(tokens, *f.weights, backend="reference"), expected
    )
