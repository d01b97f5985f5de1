"""``torch.compile(backend="irc")`` on convolutional models: convolution,
pooling, batch and group normalization, forward and backward, against
eager, compiled once for every batch and image size."""

from __future__ import annotations

import copy
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from test_torch_backend import RUNTIMES, _compiled  # noqa: E402

import irc.torch as irc_torch  # noqa: E402

nn = torch.nn
F = torch.nn.functional


class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 convolutions with batch norm, and the
    input added back."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: Any) -> Any:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + x)


class ResNet(nn.Module):
    """A small ResNet: a strided stem, max pooling, a residual block,
    global average pooling and a classifier."""

    def __init__(self, channels: int = 8, classes: int = 5) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.block = BasicBlock(channels)
        self.head = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, classes)

    def forward(self, x: Any) -> Any:
        x = self.pool(F.relu(self.bn(self.stem(x))))
        x = self.head(self.block(x))
        return self.fc(torch.flatten(x, 1))


def _resnet() -> ResNet:
    torch.manual_seed(0)
    model = ResNet()
    with torch.no_grad():  # running statistics that are not the defaults
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 1.5)
    return model


#: (batch, image side): two of each, compiled once.
IMAGES = ((2, 16), (3, 12))

#: The runtimes, a training step's kernels being slow on Triton's
#: interpreter (30 to 60 s on a 2-core machine).
TRAINING_RUNTIMES = [
    pytest.param(runtime, marks=pytest.mark.slow) if runtime == "interpret" else runtime
    for runtime in RUNTIMES
]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_resnet_matches_eager_in_inference_with_one_compilation(
    runtime: str,
) -> None:
    model = _resnet().eval()
    compiled = _compiled(model, runtime)
    with torch.no_grad():
        for batch, side in IMAGES:
            x = torch.randn(batch, 3, side, side)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    # one graph from Dynamo (no recompilation), compiled once by irc
    assert irc_torch.counters["graphs"] == 1
    assert irc_torch.counters["compilations"] == 1
    assert not irc_torch.fallback_ops


def _step(model: Any, x: Any, labels: Any) -> Any:
    loss = F.cross_entropy(model(x), labels)
    loss.backward()
    return loss


@pytest.mark.parametrize("runtime", TRAINING_RUNTIMES)
def test_a_resnet_trains_as_eager_does(runtime: str) -> None:
    """Training mode: batch norm normalizes by the batch's statistics and
    updates its running ones; the gradients of every parameter, the SGD
    step and the running statistics match eager's."""
    model = _resnet().train()
    reference = copy.deepcopy(model)
    compiled = _compiled(model, runtime)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    for batch, side in IMAGES:
        x = torch.randn(batch, 3, side, side)
        labels = torch.randint(0, 5, (batch,))
        loss = _step(compiled, x, labels)
        expected = _step(reference, x, labels)
        torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-5)
        for (name, weight), want in zip(
            model.named_parameters(), reference.parameters()
        ):
            torch.testing.assert_close(
                weight.grad, want.grad, rtol=1e-4, atol=1e-5, msg=name
            )
        optimizer.step()
        reference_optimizer.step()
        optimizer.zero_grad()
        reference_optimizer.zero_grad()
    for weight, want in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(weight, want, rtol=1e-4, atol=1e-5)
    for buffer, want in zip(model.buffers(), reference.buffers()):
        torch.testing.assert_close(buffer, want, rtol=1e-4, atol=1e-5)
    assert irc_torch.counters["compilations"] == 2  # a forward and a backward
    assert not irc_torch.fallback_ops


class WhisperFront(nn.Module):
    """Whisper's encoder front: two 1-d convolutions with GELU, the second
    strided."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(6, 8, 3, padding=1)
        self.conv2 = nn.Conv1d(8, 8, 3, stride=2, padding=1)

    def forward(self, x: Any) -> Any:
        return F.gelu(self.conv2(F.gelu(self.conv1(x))))


#: name: (a module, an input at two sizes: (batch, channels, *spatial)).
LAYERS = {
    "whisper_front": (WhisperFront, [(2, 6, 15), (3, 6, 22)]),
    "depthwise": (lambda: nn.Conv2d(6, 6, 3, padding=1, groups=6), [(2, 6, 7, 9)]),
    "grouped_strided": (
        lambda: nn.Conv2d(6, 4, 3, stride=2, padding=1, groups=2),
        [(2, 6, 9, 11), (3, 6, 8, 7)],
    ),
    "dilated": (lambda: nn.Conv2d(3, 4, 3, dilation=2, padding=1), [(2, 3, 9, 11)]),
    "transposed": (
        lambda: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
        [(2, 4, 5, 7), (3, 4, 6, 4)],
    ),
    "transposed_grouped_dilated": (
        lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2, dilation=2),
        [(2, 4, 5, 7)],
    ),
    "conv3d": (lambda: nn.Conv3d(2, 3, 2, stride=2, padding=1), [(2, 2, 5, 6, 7)]),
    "avg_pool": (
        lambda: nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False),
        [(2, 3, 9, 11), (3, 3, 12, 10)],
    ),
    "avg_pool_counting_padding": (
        lambda: nn.AvgPool2d(3, 2, padding=1),
        [(2, 3, 9, 11), (3, 3, 12, 10)],
    ),
    "max_pool_dilated": (
        lambda: nn.MaxPool2d(3, 2, padding=1, dilation=2),
        [(2, 3, 9, 11), (3, 3, 12, 10)],
    ),
    "max_pool_ceil": (
        lambda: nn.MaxPool2d(2, 2, ceil_mode=True),
        [(2, 3, 9, 11), (3, 3, 12, 10)],
    ),
    "max_pool3d": (lambda: nn.MaxPool3d(2, 2, padding=1), [(2, 3, 5, 6, 7)]),
    "adaptive_avg_pool": (lambda: nn.AdaptiveAvgPool2d(1), [(2, 3, 9, 11)]),
    "group_norm": (lambda: nn.GroupNorm(2, 6), [(2, 6, 5, 7), (3, 6, 4, 9)]),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_a_layer_matches_eager_forward_and_backward(name: str) -> None:
    """Each layer's output and the gradients of its input and parameters,
    at each size, from one compilation of the forward and one of the
    backward."""
    make, shapes = LAYERS[name]
    torch.manual_seed(0)
    model = make()
    reference = copy.deepcopy(model)
    compiled = _compiled(model, "reference", fallback=False)
    for shape in shapes:
        x = torch.randn(*shape, requires_grad=True)
        x_reference = x.detach().clone().requires_grad_()
        got, expected = compiled(x), reference(x_reference)
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
        cotangent = torch.randn_like(expected)
        got.backward(cotangent)
        expected.backward(cotangent)
        torch.testing.assert_close(x.grad, x_reference.grad, rtol=1e-4, atol=1e-5)
        for weight, want in zip(model.parameters(), reference.parameters()):
            torch.testing.assert_close(weight.grad, want.grad, rtol=1e-4, atol=1e-4)
    assert irc_torch.counters["compilations"] == 2


def test_max_pooling_indices_are_torchs_and_route_the_gradient() -> None:
    """Ties (integer-valued inputs), NaNs and -inf: the indices are torch's
    (the first maximum in the window wins, a NaN over numbers), and the
    backward sends each gradient to the element its index names."""

    def pool(x: Any) -> Any:
        values, indices = F.max_pool2d(x, 3, 2, padding=1, return_indices=True)
        return values * 2, indices

    compiled = _compiled(pool, fallback=False)
    for batch, side in ((2, 7), (3, 10)):
        x = torch.randint(-2, 3, (batch, 3, side, side + 2)).float()
        x[0, 0, 0, :3] = float("nan")
        x[1, 1] = -float("inf")
        x.requires_grad_()
        x_reference = x.detach().clone().requires_grad_()
        (values, indices), (want_values, want_indices) = compiled(x), pool(x_reference)
        torch.testing.assert_close(values, want_values, equal_nan=True)
        assert indices.dtype == torch.int64
        assert torch.equal(indices, want_indices)
        cotangent = torch.randn_like(values)
        values.backward(cotangent)
        want_values.backward(cotangent)
        torch.testing.assert_close(x.grad, x_reference.grad)
    assert irc_torch.counters["compilations"] == 2


@pytest.mark.parametrize(
    ("layer", "op", "form"),
    [
        # windows of 2 or 3 elements, overlapping: not an average pooling
        (
            lambda: nn.AdaptiveAvgPool2d(3),
            "aten._adaptive_avg_pool2d.default",
            "an output size of 3 that does not divide",
        ),
        # whether the last window starts in the padding depends on the size
        (
            lambda: nn.AvgPool2d(2, 2, padding=1, ceil_mode=True),
            "aten.avg_pool2d.default",
            "ceil_mode, a kernel of 2 (dilation 1), stride 2 and padding 1",
        ),
    ],
)
def test_a_pooling_irc_refuses_runs_eagerly_and_names_the_form(
    layer: Any, op: str, form: str
) -> None:
    model = layer()
    x = torch.randn(2, 3, 8, 10)
    torch.testing.assert_close(_compiled(model)(x), model(x))
    assert irc_torch.fallback_ops[op] == 1
    with pytest.raises(Exception, match="not supported by irc") as error:
        _compiled(model, fallback=False)(x)
    assert form in str(error.value)
