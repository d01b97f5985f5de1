"""ONNX's convolution, pooling and normalization operators on irc.

A small ResNet written in torch (a stride-2 convolution with batch norm,
max pooling, a basic residual block, global average pooling and a linear
head) exported by ``torch.onnx.export`` with dynamic batch and image sizes
imports with those sizes symbolic, compiles once, and matches onnxruntime at
two batch sizes and two image sizes on the reference backend and at one on
the Triton interpreter. So do grouped, depthwise and dilated convolutions
and transposed convolutions; the forms irc refuses say what to change.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

from onnx import TensorProto, helper  # noqa: E402
from test_onnx_import import export_torch  # noqa: E402

import irc  # noqa: E402
import irc.onnx  # noqa: E402
from irc.onnx import UnsupportedOnnxOp  # noqa: E402

RNG = np.random.default_rng(0)
IMAGE_AXES = {0: "batch", 2: "height", 3: "width"}


def randomize_batch_norms(module: torch.nn.Module) -> None:
    """Running statistics and affines away from the identity, so that a
    dropped or misread batch norm shows."""
    generator = torch.Generator().manual_seed(1)
    for norm in module.modules():
        if isinstance(norm, torch.nn.BatchNorm2d):
            with torch.no_grad():
                size = norm.num_features
                norm.running_mean.copy_(torch.randn(size, generator=generator))
                norm.running_var.copy_(torch.rand(size, generator=generator) + 0.5)
                norm.weight.copy_(torch.randn(size, generator=generator))
                norm.bias.copy_(torch.randn(size, generator=generator))


class ResNet(torch.nn.Module):
    def __init__(self, channels: int = 4, classes: int = 10):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(
            nn.Conv2d(3, channels, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(channels),
            nn.ReLU(),
            nn.MaxPool2d(3, 2, 1),
        )
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.norm1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(channels)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(channels, classes)

    def forward(self, image):  # type: ignore[no-untyped-def]
        x = self.stem(image)
        y = torch.relu(self.norm1(self.conv1(x)))
        x = torch.relu(x + self.norm2(self.conv2(y)))
        return self.head(torch.flatten(self.pool(x), 1))


def op_types(exported: bytes) -> set[str]:
    return {node.op_type for node in onnx.load_from_string(exported).graph.node}


def compare(exported: bytes, shapes, backend: str = "reference", facts=()) -> None:  # type: ignore[no-untyped-def]
    """Compile ``exported`` once (under ``facts``); at each input shape,
    irc's output is onnxruntime's."""
    f = irc.onnx.load(exported)
    compiled = f.compile(facts=facts)
    session = ort.InferenceSession(exported)
    for shape in shapes:
        x = RNG.standard_normal(shape).astype(np.float32)
        (expected,) = session.run(None, {"image": x})
        actual = compiled(x, *f.weights, backend=backend)
        assert actual.shape == expected.shape
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="module")
def resnet() -> bytes:
    """The ResNet by the TorchScript exporter, which in eval mode folds each
    batch norm into the convolution before it unless told to preserve the
    module as it is (its mode stays eval: inference batch norms)."""
    torch.manual_seed(0)
    module = ResNet().eval()
    randomize_batch_norms(module)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module, (torch.zeros(2, 3, 16, 16),), buffer, dynamo=False,
            input_names=["image"], dynamic_axes={"image": IMAGE_AXES},
            opset_version=17, training=torch.onnx.TrainingMode.PRESERVE,
        )  # fmt: skip
    return buffer.getvalue()


def test_resnet_imports_with_symbolic_batch_and_image_sizes(resnet: bytes) -> None:
    assert {
        "Conv", "BatchNormalization", "MaxPool", "GlobalAveragePool", "Relu", "Add"
    } <= op_types(resnet)  # fmt: skip
    f = irc.onnx.load(resnet)
    assert f.specs[0] == irc.TensorSpec(("batch", 3, "height", "width"), "float32")
    assert "-> !graph.tensor<[batch, 10], f32>" in str(f.module)


def test_resnet_matches_onnxruntime_at_two_batch_and_image_sizes(
    resnet: bytes,
) -> None:
    compare(resnet, [(2, 3, 16, 16), (3, 3, 16, 16), (2, 3, 20, 28), (1, 3, 33, 17)])


def test_resnet_matches_onnxruntime_on_the_triton_interpreter(resnet: bytes) -> None:
    compare(resnet, [(1, 3, 16, 16)], backend="interpret")


def test_resnet_exported_by_dynamo_matches_onnxruntime() -> None:
    """The dynamo exporter folds the batch norms into the convolutions and
    writes the global pooling as a ReduceMean."""
    torch.manual_seed(0)
    module = ResNet().eval()
    randomize_batch_norms(module)
    example = (torch.zeros(2, 3, 16, 16),)
    exported = export_torch(module, example, {"image": IMAGE_AXES}, dynamo=True)
    assert {"Conv", "MaxPool", "Add", "Gemm"} <= op_types(exported)
    compare(exported, [(2, 3, 16, 16), (3, 3, 20, 28)])


class GroupedAndDilated(torch.nn.Module):
    """A depthwise, a grouped dilated and a strided dilated convolution."""

    def __init__(self) -> None:
        super().__init__()
        nn = torch.nn
        self.depthwise = nn.Conv2d(4, 8, 3, padding=1, groups=4)
        self.grouped = nn.Conv2d(8, 6, 3, padding=2, dilation=2, groups=2)
        self.dilated = nn.Conv2d(6, 5, (3, 2), stride=(2, 1), dilation=(1, 3))

    def forward(self, image):  # type: ignore[no-untyped-def]
        return self.dilated(torch.tanh(self.grouped(self.depthwise(image))))


def test_grouped_depthwise_and_dilated_convolutions_match_onnxruntime() -> None:
    torch.manual_seed(0)
    example = (torch.zeros(2, 4, 12, 12),)
    exported = export_torch(
        GroupedAndDilated().eval(), example, {"image": IMAGE_AXES}, dynamo=False
    )
    groups = {
        next(a.i for a in node.attribute if a.name == "group")
        for node in onnx.load_from_string(exported).graph.node
        if node.op_type == "Conv"
    }
    assert groups == {4, 2, 1}
    compare(exported, [(2, 4, 12, 12), (1, 4, 9, 15)])


class Upsampling(torch.nn.Module):
    """Transposed convolutions: strided with output padding and groups,
    and dilated and padded."""

    def __init__(self) -> None:
        super().__init__()
        nn = torch.nn
        self.up = nn.ConvTranspose2d(
            4, 6, 3, stride=2, padding=1, output_padding=1, groups=2
        )
        self.wide = nn.ConvTranspose2d(6, 3, (2, 3), stride=(1, 3), dilation=2)

    def forward(self, image):  # type: ignore[no-untyped-def]
        return self.wide(torch.relu(self.up(image)))


def test_transposed_convolutions_match_onnxruntime() -> None:
    torch.manual_seed(0)
    example = (torch.zeros(2, 4, 5, 6),)
    exported = export_torch(
        Upsampling().eval(), example, {"image": IMAGE_AXES}, dynamo=False
    )
    assert "ConvTranspose" in op_types(exported)
    compare(exported, [(2, 4, 5, 6), (1, 4, 7, 3)])


# ----- models built node by node ------------------------------------------------


def single_node(node, inputs, output_type=TensorProto.FLOAT, opset=21):  # type: ignore[no-untyped-def]
    infos = [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs]
    outputs = [helper.make_tensor_value_info(o, output_type, None) for o in node.output]
    graph = helper.make_graph([node], "g", infos, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize(
    "attributes",
    [
        {"strides": [2, 3], "output_shape": [10, 12]},  # grows the output
        {"strides": [2, 2], "output_shape": [6, 7]},  # crops it
        {"strides": [2, 2], "output_shape": [6, 7], "auto_pad": "SAME_UPPER"},
        {"strides": [3, 2], "auto_pad": "SAME_LOWER"},
        {"strides": [2, 2], "auto_pad": "SAME_UPPER", "output_padding": [1, 0]},
    ],
    ids=["grow", "crop", "same_upper_shape", "same_lower", "same_upper_padding"],
)
def test_conv_transpose_output_shape_and_auto_pad_match_onnxruntime(
    attributes: dict,
) -> None:
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attributes)
    model = single_node(
        node,
        [("x", TensorProto.FLOAT, [1, 2, 4, 4]), ("w", TensorProto.FLOAT, [2, 3, 4, 4]),
         ("b", TensorProto.FLOAT, [3])],
    )  # fmt: skip
    inputs = [
        RNG.standard_normal(shape).astype(np.float32)
        for shape in [(1, 2, 4, 4), (2, 3, 4, 4), (3,)]
    ]
    (expected,) = ort.InferenceSession(model.SerializeToString()).run(
        None, dict(zip("xwb", inputs))
    )
    actual = irc.onnx.load(model).compile()(*inputs, backend="reference")
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opset", [18, 21])
def test_group_normalization_per_group_at_opset_18_per_channel_at_21(
    opset: int,
) -> None:
    """Opset 18's scale and bias hold one value per group, opset 21's one
    per channel."""
    per = 2 if opset == 18 else 6
    node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)
    model = single_node(
        node,
        [("x", TensorProto.FLOAT, ["N", 6, 5]), ("s", TensorProto.FLOAT, [per]),
         ("b", TensorProto.FLOAT, [per])],
        opset=opset,
    )  # fmt: skip
    x = RNG.standard_normal((3, 6, 5)).astype(np.float32)
    scale, bias = RNG.standard_normal((2, per)).astype(np.float32)
    (expected,) = ort.InferenceSession(model.SerializeToString()).run(
        None, {"x": x, "s": scale, "b": bias}
    )
    grouped = x.reshape(3, 2, 15)
    normalized = (grouped - grouped.mean(-1, keepdims=True)) / np.sqrt(
        grouped.var(-1, keepdims=True) + 1e-5
    )
    channel_scale = np.repeat(scale, 6 // per)[:, None]
    channel_bias = np.repeat(bias, 6 // per)[:, None]
    by_hand = normalized.reshape(x.shape) * channel_scale + channel_bias
    np.testing.assert_allclose(expected, by_hand, rtol=1e-4, atol=1e-5)
    actual = irc.onnx.load(model).compile()(x, scale, bias, backend="reference")
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)


def test_pooling_with_symbolic_sizes_and_onnx_defaults() -> None:
    """ONNX's strides default to 1 (PyTorch's to the kernel) and
    AveragePool's divisor leaves padding out unless count_include_pad."""
    nodes = [
        helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[2, 3]),
        helper.make_node(
            "AveragePool", ["m"], ["a"], kernel_shape=[3, 3], pads=[1, 0, 1, 2]
        ),
        helper.make_node("GlobalMaxPool", ["a"], ["y"]),
    ]
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, "H", "W"])
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    a_info = helper.make_tensor_value_info("a", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "g", [x_info], [y_info, a_info])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    compiled = irc.onnx.load(model).compile()
    session = ort.InferenceSession(model.SerializeToString())
    for shape in [(1, 2, 6, 7), (2, 2, 9, 5)]:
        x = RNG.standard_normal(shape).astype(np.float32)
        expected = session.run(None, {"x": x})
        actual = compiled(x, backend="reference")
        assert actual[1].shape == (shape[0], 2, shape[2] - 1, shape[3] - 2)
        for got, want in zip(actual, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


class Upsampler(torch.nn.Module):
    """A U-Net decoder's step: reflection padding, a convolution, nearest
    upsampling by 2 (symbolic image sizes stay symbolic) and a bilinear
    resize to a fixed size."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, image):  # type: ignore[no-untyped-def]
        x = torch.nn.functional.pad(image, (1, 1, 2, 0), mode="reflect")
        x = torch.nn.functional.interpolate(self.conv(x), scale_factor=2.0)
        x = torch.nn.functional.pad(x, (0, 1, 1, 0), mode="replicate")
        return torch.nn.functional.interpolate(
            x[:, :, :8, :8], size=(5, 11), mode="bilinear", align_corners=False
        )


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
def test_pad_and_resize_match_onnxruntime(dynamo: bool) -> None:
    exported = export_torch(
        Upsampler().eval(),
        torch.zeros(2, 3, 7, 9),
        {"image": IMAGE_AXES},
        dynamo=dynamo,
    )
    assert {"Pad", "Resize"} <= op_types(exported)
    with pytest.raises(irc.IrcShapeError, match=r"needs height >= 3: declare"):
        irc.onnx.load(exported).compile()
    facts = ["height >= 3", "width >= 2"]  # reflection padding by 2 and 1
    compare(exported, [(2, 3, 7, 9), (1, 3, 9, 6)], facts=facts)
    compare(exported, [(1, 3, 6, 8)], backend="interpret", facts=facts)


def test_resize_forms_that_keep_sizes_symbolic_or_say_why_not() -> None:
    """Nearest by an integer scale repeats elements, whatever the size;
    linear resampling of a symbolic axis has no taps to compute."""
    scales = helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 3, 2])
    modes = [
        {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
        {"coordinate_transformation_mode": "half_pixel"},
        {"coordinate_transformation_mode": "pytorch_half_pixel",
         "nearest_mode": "round_prefer_ceil"},
    ]  # fmt: skip
    for attributes in modes:
        node = helper.make_node("Resize", ["x", "", "scales"], ["y"], **attributes)
        x_info = helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, ["N", 2, "H", "W"]
        )
        y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        graph = helper.make_graph([node], "g", [x_info], [y_info], [scales])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        compiled = irc.onnx.load(model).compile()
        session = ort.InferenceSession(model.SerializeToString())
        for shape in [(1, 2, 3, 4), (2, 2, 5, 2)]:
            x = RNG.standard_normal(shape).astype(np.float32)
            (expected,) = session.run(None, {"x": x})
            np.testing.assert_array_equal(compiled(x, backend="reference"), expected)
    linear = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear")
    graph = helper.make_graph([linear], "g", [x_info], [y_info], [scales])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    with pytest.raises(UnsupportedOnnxOp, match=r"linear resampling of the symbolic"):
        irc.onnx.load(model).capture()


def test_pad_and_resampling_export_and_match_onnxruntime() -> None:
    """irc's padding modes and gathers export as ONNX operators."""

    def program(x):  # type: ignore[no-untyped-def]
        padded = np.pad(x, ((0, 0), (2, 3)), mode="reflect")
        return np.pad(padded, ((1, 1), (0, 0)), mode="wrap")[:, ::2].repeat(2, axis=0)

    compiled = irc.compile(program, irc.TensorSpec(("N", 6), "float32"))
    session = ort.InferenceSession(irc.onnx.export(compiled).SerializeToString())
    for rows in (2, 5):
        x = RNG.standard_normal((rows, 6)).astype(np.float32)
        (actual,) = session.run(None, {session.get_inputs()[0].name: x})
        np.testing.assert_array_equal(actual, program(x))


def test_refused_forms_say_what_to_change() -> None:
    training = helper.make_node(
        "BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "mean", "var"],
        training_mode=1,
    )  # fmt: skip
    vectors = [(n, TensorProto.FLOAT, [2]) for n in "sbmv"]
    model = single_node(training, [("x", TensorProto.FLOAT, [1, 2, 3]), *vectors])
    with pytest.raises(UnsupportedOnnxOp, match=r"training_mode=1.*eval mode"):
        irc.onnx.load(model).capture()
    indices = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2])
    model = single_node(indices, [("x", TensorProto.FLOAT, [1, 2, 6])])
    with pytest.raises(UnsupportedOnnxOp, match=r"Indices output.*remove"):
        irc.onnx.load(model).capture()
    same = helper.make_node(
        "ConvTranspose", ["x", "w"], ["y"], output_shape=[9], strides=[2]
    )
    model = single_node(
        same,
        [("x", TensorProto.FLOAT, [1, 2, "L"]), ("w", TensorProto.FLOAT, [2, 3, 3])],
    )
    with pytest.raises(UnsupportedOnnxOp, match=r"symbolic input size.*explicit pads"):
        irc.onnx.load(model).capture()


# ----- Hugging Face models, as their users export them -----------------------


class LastHiddenState(torch.nn.Module):
    """A Hugging Face model's ``last_hidden_state``, in eval mode."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x).last_hidden_state


def _vit() -> torch.nn.Module:
    transformers = pytest.importorskip("transformers")
    config = transformers.ViTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, image_size=32, patch_size=8,
    )  # fmt: skip
    torch.manual_seed(0)
    return LastHiddenState(transformers.ViTModel(config, add_pooling_layer=False))


def _whisper_encoder() -> torch.nn.Module:
    transformers = pytest.importorskip("transformers")
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    config = transformers.WhisperConfig(
        d_model=32, encoder_layers=2, encoder_attention_heads=2,
        encoder_ffn_dim=64, num_mel_bins=8, max_source_positions=16,
    )  # fmt: skip
    torch.manual_seed(0)
    return LastHiddenState(WhisperEncoder(config))


#: (model, one input's shape): ViT's patch embedding is a
#: convolution with stride = kernel; Whisper's front two 1-d convolutions.
HF_MODELS = {
    "vit": (_vit, (3, 32, 32)),
    "whisper-encoder": (_whisper_encoder, (8, 32)),
}


@pytest.mark.parametrize(
    "dynamo", [False, pytest.param(True, marks=pytest.mark.slow)],
    ids=["torchscript", "dynamo"],
)  # fmt: skip
@pytest.mark.parametrize(
    "name", [pytest.param("vit", marks=pytest.mark.slow), "whisper-encoder"]
)
def test_hugging_face_vision_and_audio_encoders_match_onnxruntime(
    name: str, dynamo: bool
) -> None:
    build, shape = HF_MODELS[name]
    example = (torch.randn(2, *shape),)
    exported = export_torch(build(), example, {"x": {0: "batch"}}, dynamo)
    f = irc.onnx.load(exported)
    assert f.specs[0] == irc.TensorSpec(("batch", *shape), "float32")
    compiled = f.compile()
    session = ort.InferenceSession(exported)
    runs = [(2, "reference"), (3, "reference")]
    if not dynamo:
        runs.append((1, "interpret"))
    for batch, backend in runs:
        x = RNG.standard_normal((batch, *shape)).astype(np.float32)
        (expected,) = session.run(None, {"x": x})
        actual = compiled(x, *f.weights, backend=backend)
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)
        if batch == 2:  # called eagerly, on NumPy, as docs/onnx.md shows
            eager = f(x, *f.weights)
            np.testing.assert_allclose(eager, expected, rtol=1e-4, atol=1e-5)
