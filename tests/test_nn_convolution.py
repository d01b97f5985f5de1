"""Convolution, pooling and normalization: ``irc.nn``'s and NumPy's own
idiom (``sliding_window_view`` then ``einsum``), against PyTorch's (an
independent implementation): eagerly on arrays, captured with symbolic
batch and image sizes on the reference interpreter and Triton's, and
differentiated (against ``torch.autograd`` and finite differences)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from numpy.lib.stride_tricks import sliding_window_view

import irc
from irc import nn
from irc.errors import IrcError
from irc.testing import WINDOW_ACTIONS, check_grad, check_pass, programs

RNG = np.random.default_rng(0)


def _array(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _torch(*arrays: np.ndarray) -> list[torch.Tensor]:
    return [torch.from_numpy(a) for a in arrays]


#: (irc's form, PyTorch's form, input shape, weight shape): each a
#: convolution with its parameters.
CONVOLUTIONS: dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple, tuple]] = {
    "1d-stride-pad": (
        lambda x, w: nn.conv(x, w, strides=2, padding=1),
        lambda x, w: F.conv1d(x, w, stride=2, padding=1),
        (2, 3, 11),
        (4, 3, 3),
    ),
    "1d-same-dilated": (
        lambda x, w: nn.conv(x, w, padding="same", dilations=2),
        lambda x, w: F.conv1d(x, w, padding="same", dilation=2),
        (2, 3, 10),
        (4, 3, 3),
    ),
    "2d-groups-asymmetric": (
        lambda x, w: nn.conv(x, w, strides=(2, 1), padding=[(1, 0), (0, 2)], groups=2),
        lambda x, w: F.conv2d(F.pad(x, (0, 2, 1, 0)), w, stride=(2, 1), groups=2),
        (2, 4, 9, 8),
        (6, 2, 3, 2),
    ),
    "2d-depthwise": (
        lambda x, w: nn.conv(x, w, padding=1, groups=4),
        lambda x, w: F.conv2d(x, w, padding=1, groups=4),
        (2, 4, 7, 6),
        (4, 1, 3, 3),
    ),
    "2d-patchify": (
        lambda x, w: nn.conv(x, w, strides=4),
        lambda x, w: F.conv2d(x, w, stride=4),
        (1, 3, 8, 12),
        (5, 3, 4, 4),
    ),
    "3d": (
        lambda x, w: nn.conv(x, w, strides=(1, 2, 1), padding=1, dilations=(2, 1, 1)),
        lambda x, w: F.conv3d(x, w, stride=(1, 2, 1), padding=1, dilation=(2, 1, 1)),
        (1, 2, 6, 5, 4),
        (3, 2, 2, 3, 2),
    ),
    "2d-transposed": (
        lambda x, w: nn.conv_transpose(
            x, w, strides=2, padding=1, output_padding=1, groups=2
        ),
        lambda x, w: F.conv_transpose2d(
            x, w, stride=2, padding=1, output_padding=1, groups=2
        ),
        (2, 4, 5, 4),
        (4, 3, 3, 3),
    ),
    "1d-transposed-dilated": (
        lambda x, w: nn.conv_transpose(x, w, strides=3, padding=2, dilations=2),
        lambda x, w: F.conv_transpose1d(x, w, stride=3, padding=2, dilation=2),
        (2, 3, 6),
        (3, 2, 3),
    ),
}

#: (irc's form, PyTorch's form, input shape): each a pooling.
POOLINGS: dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple]] = {
    "max-padded": (
        lambda x: nn.max_pool(x, (3, 3), strides=2, padding=1),
        lambda x: F.max_pool2d(x, 3, 2, 1),
        (2, 3, 9, 8),
    ),
    "max-dilated-ceil": (
        lambda x: nn.max_pool(
            x, (3,), strides=2, padding=1, dilations=2, ceil_mode=True
        ),
        lambda x: F.max_pool1d(x, 3, 2, 1, dilation=2, ceil_mode=True),
        (2, 3, 10),
    ),
    "avg-counting-padding": (
        lambda x: nn.avg_pool(x, (3, 3), strides=2, padding=1),
        lambda x: F.avg_pool2d(x, 3, 2, 1),
        (2, 3, 9, 8),
    ),
    "avg-not-counting-padding-ceil": (
        lambda x: nn.avg_pool(
            x, (3, 2), strides=2, padding=1, ceil_mode=True, count_include_pad=False
        ),
        lambda x: F.avg_pool2d(
            x, (3, 2), 2, 1, ceil_mode=True, count_include_pad=False
        ),
        (2, 3, 8, 7),
    ),
    "avg-3d": (
        lambda x: nn.avg_pool(x, (2, 2, 2)),
        lambda x: F.avg_pool3d(x, 2),
        (1, 2, 4, 6, 4),
    ),
    "global-avg": (
        nn.global_avg_pool,
        lambda x: F.adaptive_avg_pool2d(x, 1),
        (2, 3, 5, 4),
    ),
    "global-max": (
        nn.global_max_pool,
        lambda x: F.adaptive_max_pool2d(x, 1),
        (2, 3, 5, 4),
    ),
}


@pytest.mark.parametrize("name", CONVOLUTIONS)
def test_convolution_matches_pytorch(name: str) -> None:
    ours, theirs, x_shape, w_shape = CONVOLUTIONS[name]
    x, w = _array(*x_shape), _array(*w_shape)
    expected = theirs(*_torch(x, w)).numpy()
    np.testing.assert_allclose(ours(x, w), expected, rtol=1e-5, atol=1e-5)
    # Batch and spatial sizes symbolic; the same program at two sizes.
    specs = [_spec_with_symbolic_sizes(x), irc.TensorSpec(w.shape, "float32")]
    compiled = irc.compile(ours, *specs)
    for grow in (0, 1):
        bigger = _array(
            x.shape[0] + grow, *x.shape[1:2], *(s + grow for s in x.shape[2:])
        )
        expected = theirs(*_torch(bigger, w)).numpy()
        got = compiled(bigger, w, backend="reference")
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", POOLINGS)
def test_pooling_matches_pytorch(name: str) -> None:
    ours, theirs, shape = POOLINGS[name]
    x = _array(*shape)
    np.testing.assert_allclose(
        ours(x), theirs(*_torch(x)).numpy(), rtol=1e-6, atol=1e-6
    )
    if "ceil" in name:  # ceil_mode with a stride needs known sizes (tested below)
        return
    compiled = irc.compile(ours, _spec_with_symbolic_sizes(x))
    bigger = _array(shape[0] + 1, shape[1], *(s + 2 for s in shape[2:]))
    np.testing.assert_allclose(
        compiled(bigger, backend="reference"),
        theirs(*_torch(bigger)).numpy(),
        rtol=1e-6,
        atol=1e-6,
    )


def test_normalizations_match_pytorch() -> None:
    x = _array(2, 4, 5, 3)
    scale, bias, mean = _array(4), _array(4), _array(4)
    variance = np.abs(_array(4)) + 0.5
    tx, ts, tb, tm, tv = _torch(x, scale, bias, mean, variance)
    cases = [
        (
            nn.batch_norm(x, scale, bias, mean, variance),
            F.batch_norm(tx, tm, tv, ts, tb),
        ),
        (nn.instance_norm(x, scale, bias), F.instance_norm(tx, weight=ts, bias=tb)),
        (nn.group_norm(x, 2, scale, bias), F.group_norm(tx, 2, ts, tb)),
    ]
    for ours, theirs in cases:
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-5, atol=1e-5)


def _spec_with_symbolic_sizes(x: np.ndarray) -> irc.TensorSpec:
    """``x``'s spec with the batch and every spatial size symbolic."""
    spatial = tuple(f"S{axis}" for axis in range(x.ndim - 2))
    return irc.TensorSpec(("N", x.shape[1], *spatial), "float32")


# ----- a ResNet-style CNN, as NumPy code writes it ---------------------------


def conv2d(x: Any, w: Any, stride: int = 1) -> Any:
    """The im2col of NumPy CNN code: sliding windows of the padded input,
    contracted with the kernel."""
    k = w.shape[-1]
    padded = np.pad(x, ((0, 0), (0, 0), (k // 2, k // 2), (k // 2, k // 2)))
    windows = sliding_window_view(padded, (k, k), axis=(2, 3))[:, :, ::stride, ::stride]
    return np.einsum("nchwij,ocij->nohw", windows, w)


def batch_norm(x: Any, scale: Any, shift: Any) -> Any:
    return x * scale[:, None, None] + shift[:, None, None]


def max_pool(x: Any) -> Any:
    """3x3 windows with stride 2 and padding 1."""
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    return sliding_window_view(padded, (3, 3), axis=(2, 3))[:, :, ::2, ::2].max(
        axis=(-2, -1)
    )


def resnet(x: Any, stem: Any, conv_a: Any, conv_b: Any, bn: Any, head: Any) -> Any:
    h = np.maximum(batch_norm(conv2d(x, stem, stride=2), bn[0], bn[1]), 0)
    h = max_pool(h)
    r = np.maximum(batch_norm(conv2d(h, conv_a), bn[2], bn[3]), 0)
    h = np.maximum(batch_norm(conv2d(r, conv_b), bn[4], bn[5]) + h, 0)
    return h.mean(axis=(2, 3)) @ head


def resnet_loss(x: Any, *params: Any) -> Any:
    return np.sum(resnet(x, *params) ** 2)


def torch_resnet(x, stem, conv_a, conv_b, bn, head):
    def norm(y, i):
        return y * bn[i][:, None, None] + bn[i + 1][:, None, None]

    h = F.relu(norm(F.conv2d(x, stem, stride=2, padding=1), 0))
    h = F.max_pool2d(h, 3, 2, 1)
    r = F.relu(norm(F.conv2d(h, conv_a, padding=1), 2))
    h = F.relu(norm(F.conv2d(r, conv_b, padding=1), 4) + h)
    return h.mean((2, 3)) @ head


CHANNELS = 4
RESNET_PARAMS = [
    _array(CHANNELS, 3, 3, 3) * 0.5,
    _array(CHANNELS, CHANNELS, 3, 3) * 0.3,
    _array(CHANNELS, CHANNELS, 3, 3) * 0.3,
    _array(6, CHANNELS),
    _array(CHANNELS, 5),
]
RESNET_SPECS = (
    irc.TensorSpec(("N", 3, "H", "W"), "float32"),
    *(irc.TensorSpec(p.shape, "float32") for p in RESNET_PARAMS),
)


@pytest.mark.parametrize(
    "backend", ["reference", pytest.param("interpret", marks=pytest.mark.slow)]
)
def test_a_numpy_resnet_compiles_as_written(backend: str) -> None:
    """One compilation serves two batch sizes and two image sizes, forward
    and gradient, and matches NumPy and torch.autograd."""
    forward = irc.compile(resnet, *RESNET_SPECS)
    gradient = irc.compile(
        irc.grad(resnet_loss, argnums=(0, 1, 2, 3, 4, 5)), *RESNET_SPECS
    )
    for shape in [(2, 3, 12, 12), (3, 3, 10, 14)]:
        x = _array(*shape)
        np.testing.assert_allclose(
            forward(x, *RESNET_PARAMS, backend=backend),
            resnet(x, *RESNET_PARAMS),
            rtol=1e-4,
            atol=1e-4,
        )
        leaves = [torch.tensor(a, requires_grad=True) for a in (x, *RESNET_PARAMS)]
        (torch_resnet(*leaves) ** 2).sum().backward()
        grads = gradient(x, *RESNET_PARAMS, backend=backend)
        for ours, leaf in zip(grads, leaves, strict=True):
            expected = leaf.grad.numpy()
            np.testing.assert_allclose(
                ours, expected, rtol=1e-3, atol=1e-4 * np.abs(expected).max()
            )


def test_irc_nn_gradients_match_finite_differences() -> None:
    def program(x: Any, w: Any) -> Any:
        y = nn.conv(x, w, strides=2, padding=1, groups=2)
        y = nn.max_pool(y, (3,), strides=1, padding=1) + nn.avg_pool(
            y, (3,), strides=1, padding=1, count_include_pad=False
        )
        return nn.conv_transpose(y, w[:, :1], strides=2)

    check_grad(
        program,
        irc.TensorSpec(("N", 4, "L"), "float64"),
        irc.TensorSpec((4, 2, 3), "float64"),
        facts=["L >= 3"],
        max_examples=5,
    )


# ----- the kernels -------------------------------------------------------------


def conv_block(x: Any, w: Any, b: Any) -> Any:
    return nn.relu(nn.conv(x, w, b, padding=1))


CONV_BLOCK_SPECS = (
    irc.TensorSpec(("N", 8, "H", "W"), "float32"),
    irc.TensorSpec((16, 8, 3, 3), "float32"),
    irc.TensorSpec((16,), "float32"),
)


def test_a_convolution_is_one_matmul_kernel_reading_its_input_in_place() -> None:
    """Implicit GEMM: the padded windows are the matmul's operand tiles,
    loaded through masks from the input (no im2col matrix is stored); the
    bias and the ReLU are its epilogue, stored as ``[N, O, H, W]``."""
    compiled = irc.compile(conv_block, *CONV_BLOCK_SPECS)
    fusion_ir = compiled.ir("fusion")
    (matmul_kernel,) = [
        line
        for line in fusion_ir.splitlines()
        if "fusion.kernel" in line and "matmul" in line
    ]
    assert "(%x, %w, %b)" in matmul_kernel  # the input itself, not a copy
    assert "epilogue: graph.reshape, graph.add, graph.maximum" in matmul_kernel
    assert compiled.num_kernels == 1
    x, w, b = _array(2, 8, 7, 9), _array(16, 8, 3, 3), _array(16)
    expected = F.relu(F.conv2d(*_torch(x, w, b), padding=1)).numpy()
    np.testing.assert_allclose(
        compiled(x, w, b, backend="interpret"), expected, rtol=1e-4, atol=1e-4
    )


def patch_embedding(image: Any, w: Any, b: Any) -> Any:
    """A ViT's: stride = kernel, then a row per patch."""
    y = nn.conv(image, w, b, strides=4)
    return y.reshape(y.shape[0], y.shape[1], -1).transpose(0, 2, 1)


def test_a_patch_embedding_reads_its_patches_by_reshape_and_stores_rows() -> None:
    """Windows that tile the image are a reshape and a transpose of it, not
    one slice per kernel offset; the rows a transpose makes of the output
    are the matmul kernel's store, not a second kernel. Gradients too."""
    specs = (
        irc.TensorSpec(("N", 3, 8, 12), "float32"),
        irc.TensorSpec((5, 3, 4, 4), "float32"),
        irc.TensorSpec((5,), "float32"),
    )
    compiled = irc.compile(patch_embedding, *specs)
    (kernel,) = [
        line for line in compiled.ir("fusion").splitlines() if "fusion.kernel" in line
    ]
    assert "stored as [N, 6, 5]" in kernel and "graph.slice" not in kernel
    image, w, b = _array(2, 3, 8, 12), _array(5, 3, 4, 4), _array(5)
    expected = F.conv2d(*_torch(image, w, b), stride=4).flatten(2).transpose(1, 2)
    for backend in ("reference", "interpret"):
        np.testing.assert_allclose(
            compiled(image, w, b, backend=backend), expected, rtol=1e-5, atol=1e-5
        )
    check_grad(
        patch_embedding,
        *(irc.TensorSpec(spec.shape, "float64") for spec in specs),
        max_examples=3,
    )


#: Window programs (``irc.testing``'s ``convolve`` and ``pool`` steps) with
#: the steps they meet in models.
WINDOW_PROGRAM_ACTIONS = (*WINDOW_ACTIONS, "binary", "unary", "reduce", "transpose")


def test_window_programs_keep_their_meaning_down_to_triton() -> None:
    """The lowering pipeline, on convolutions and poolings of every drawn
    kernel, stride, dilation and padding, over symbolic lengths: the
    matmuls loading their windows through concats and slices (implicit
    GEMM) compute what the graph does."""
    check_pass(
        "fuse,tile,bufferize,lower-memory-to-triton",
        programs(actions=WINDOW_PROGRAM_ACTIONS, dtypes=("float32", "int32")),
        max_examples=30,
    )


#: Whether a convolution of each element type runs on tensor cores.
SM90_ELEMENTS = {"float32": False, "bfloat16": True}


@pytest.fixture(scope="module")
def sm90_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from fake_gpu_suite import run_compiling

    out = tmp_path_factory.mktemp("conv_sm90") / "report.json"
    completed = run_compiling([__file__, str(out)], timeout=900)
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("element", sorted(SM90_ELEMENTS))
def test_convolution_compiles_for_h100(
    element: str, sm90_report: dict[str, Any]
) -> None:
    """Every kernel an sm_90 cubin; the bfloat16 convolution's matmul on
    tensor cores (float32 accumulation), float32's on FMA."""
    result = sm90_report[element]
    assert "error" not in result, result.get("error")
    launches = result["launches"]
    assert len(launches) == 1
    assert all(launch["sm_90"] and launch["cubin_bytes"] > 0 for launch in launches)
    tensor_cores = sum(launch["wgmma"] + launch["mma"] for launch in launches)
    assert (tensor_cores > 0) == SM90_ELEMENTS[element], launches


def _sm90_report() -> dict[str, Any]:
    import torch
    from fake_gpu_suite import h100_launches

    report: dict[str, Any] = {}
    for element in SM90_ELEMENTS:
        try:
            specs = [irc.TensorSpec(s.shape, element) for s in CONV_BLOCK_SPECS]
            compiled = irc.compile(conv_block, *specs)
            dtype = getattr(torch, element)
            tensors = [
                torch.zeros(shape, dtype=dtype)
                for shape in [(2, 8, 16, 16), (16, 8, 3, 3), (16,)]
            ]
            report[element] = {"launches": h100_launches(compiled, tensors)}
        except Exception as error:  # reported, and failed, by the test
            report[element] = {"error": f"{type(error).__name__}: {error}"}
    return report


# ----- gradients and torch's pooling indices, eagerly ----------------------------------


@pytest.mark.parametrize(
    ("strides", "padding", "dilations", "groups", "size"),
    [(1, 1, 1, 1, 9), (2, 1, 1, 2, 9), (2, 0, 2, 1, 10), (3, 2, 1, 1, 11)],
)
def test_conv_gradients_match_torch(
    strides: int, padding: int, dilations: int, groups: int, size: int
) -> None:
    x, w = _array(2, 4, size, size - 1), _array(6, 4 // groups, 3, 2)
    options = {"stride": strides, "padding": padding, "dilation": dilations}
    options["groups"] = groups
    grad = _array(*F.conv2d(*_torch(x, w), **options).shape)
    ours = {"strides": strides, "padding": padding, "dilations": dilations}
    ours["groups"] = groups
    np.testing.assert_allclose(
        nn.conv_input_gradient(grad, w, x.shape[2:], **ours),
        torch.nn.grad.conv2d_input(x.shape, *_torch(w, grad), **options).numpy(),
        rtol=1e-4, atol=1e-4,
    )  # fmt: skip
    np.testing.assert_allclose(
        nn.conv_weight_gradient(grad, x, w.shape[2:], **ours),
        torch.nn.grad.conv2d_weight(_torch(x)[0], w.shape, *_torch(grad), **options),
        rtol=1e-4, atol=1e-4,
    )  # fmt: skip


def test_conv_transpose_gradients_match_torch() -> None:
    x, w = _array(2, 4, 5, 6), _array(4, 3, 3, 2)
    options = {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}
    tx, tw = (torch.from_numpy(a).requires_grad_() for a in (x, w))
    y = F.conv_transpose2d(tx, tw, **options)
    grad = _array(*y.shape)
    y.backward(torch.from_numpy(grad))
    ours = {"strides": 2, "padding": 1, "groups": 2}
    np.testing.assert_allclose(
        nn.conv_transpose_input_gradient(
            grad, w, x.shape[2:], output_padding=1, **ours
        ),
        tx.grad.numpy(), rtol=1e-4, atol=1e-4,
    )  # fmt: skip
    np.testing.assert_allclose(
        nn.conv_transpose_weight_gradient(grad, x, w.shape[2:], **ours),
        tw.grad.numpy(), rtol=1e-4, atol=1e-4,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("kernel", "strides", "padding", "dilations", "ceil_mode"),
    [((2, 2), 2, 0, 1, False), ((3, 3), 2, 1, 1, True), ((3, 2), 1, 1, (2, 1), False)],
)
def test_max_pool_with_indices_and_backward_match_torch(
    kernel: tuple[int, int],
    strides: int,
    padding: int,
    dilations: Any,
    ceil_mode: bool,
) -> None:
    # rounded to a few values: many ties, the first in the window wins
    x = np.round(_array(2, 3, 9, 8)).astype(np.float32)
    x[0, 0, :3, :3] = -5.0  # a window of ties all below the padding's
    options = {"stride": strides, "padding": padding, "dilation": dilations}
    tx = torch.from_numpy(x).requires_grad_()
    values, indices = F.max_pool2d(
        tx, kernel, **options, ceil_mode=ceil_mode, return_indices=True
    )
    ours = {"strides": strides, "padding": padding, "dilations": dilations}
    ours["ceil_mode"] = ceil_mode
    got_values, got_indices = nn.max_pool_with_indices(x, kernel, **ours)
    np.testing.assert_array_equal(got_values, values.detach().numpy())
    np.testing.assert_array_equal(got_indices, indices.numpy())
    assert got_indices.dtype == np.int64
    grad = _array(*values.shape)
    values.backward(torch.from_numpy(grad))
    np.testing.assert_allclose(
        nn.max_pool_backward(grad, got_indices, x.shape[2:], kernel, **ours),
        tx.grad.numpy(), rtol=1e-6, atol=1e-6,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("padding", "ceil_mode", "count_include_pad", "divisor_override"),
    [(0, False, True, None), (1, True, False, None), (1, True, True, None),
     (1, False, True, 3)],
)  # fmt: skip
def test_avg_pool_backward_matches_torch(
    padding: int, ceil_mode: bool, count_include_pad: bool, divisor_override: Any
) -> None:
    x = _array(2, 3, 9, 8)
    options = {"padding": padding, "ceil_mode": ceil_mode}
    options["count_include_pad"] = count_include_pad
    options["divisor_override"] = divisor_override
    tx = torch.from_numpy(x).requires_grad_()
    y = F.avg_pool2d(tx, 3, 2, **options)
    grad = _array(*y.shape)
    y.backward(torch.from_numpy(grad))
    np.testing.assert_allclose(
        nn.avg_pool(x, (3, 3), strides=2, **options), y.detach().numpy(),
        rtol=1e-6, atol=1e-6,
    )  # fmt: skip
    np.testing.assert_allclose(
        nn.avg_pool_backward(grad, x.shape[2:], (3, 3), strides=2, **options),
        tx.grad.numpy(), rtol=1e-6, atol=1e-6,
    )  # fmt: skip


# ----- errors a user can make --------------------------------------------------


def test_convolution_explains_mismatched_channels_and_groups() -> None:
    with pytest.raises(IrcError, match="3 groups do not divide 4 input"):
        nn.conv(_array(1, 4, 5), _array(6, 2, 3), groups=3)
    with pytest.raises(IrcError, match="2 input channels per group"):
        nn.conv(_array(1, 4, 5), _array(6, 2, 3))
    with pytest.raises(IrcError, match="input has rank 2.*rank 4"):
        nn.conv(_array(4, 5), _array(6, 4, 3, 3))
    with pytest.raises(IrcError, match="does not fit"):
        nn.conv(_array(1, 4, 2), _array(6, 4, 3))


def test_stride_dependent_sizes_need_known_sizes() -> None:
    spec = irc.TensorSpec(("N", 3, "L"), "float32")
    # whether the last window starts in the padding after the input depends
    # on the size
    with pytest.raises(
        IrcError,
        match=r"ceil_mode, a kernel of 2 \(dilation 1\), stride 2 and padding 1",
    ):
        irc.compile(
            lambda x: nn.max_pool(x, (2,), strides=2, padding=1, ceil_mode=True), spec
        )
    with pytest.raises(IrcError, match="'same' with stride 2 needs the spatial sizes"):
        irc.compile(
            lambda x, w: nn.conv(x, w, strides=2, padding="same"),
            spec,
            irc.TensorSpec((3, 3, 3), "float32"),
        )


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize(
    "function", [np.convolve, np.correlate], ids=lambda f: f.__name__
)
def test_convolve_and_correlate_are_numpys(
    function: Callable[..., Any], mode: str
) -> None:
    """1-D, every mode, a symbolic signal and a static window, and a static
    operand shorter than the window (NumPy swaps them)."""

    def slide(a: Any, v: Any) -> Any:
        return function(a, v, mode)

    for window in (1, 4):
        compiled = irc.compile(
            slide,
            irc.TensorSpec(("N",), "float32"),
            irc.TensorSpec((window,), "float32"),
            facts=[f"N >= {window}"],
        )
        for length in (window, 9):
            a, v = _array(length), _array(window)
            np.testing.assert_allclose(
                compiled(a, v, backend="reference"), slide(a, v), rtol=1e-5, atol=1e-5
            )
    short, long = _array(2), _array(5)
    compiled = irc.compile(
        slide, irc.TensorSpec((2,), "float32"), irc.TensorSpec((5,), "float32")
    )
    np.testing.assert_allclose(
        compiled(short, long, backend="reference"), slide(short, long), rtol=1e-5
    )


def test_convolve_needs_to_know_the_longer_operand() -> None:
    with pytest.raises(IrcError, match="which operand is longer.*facts"):
        irc.compile(
            np.convolve,
            irc.TensorSpec(("N",), "float32"),
            irc.TensorSpec((3,), "float32"),
        )


def test_sliding_window_view_is_numpys() -> None:
    def windows(x: Any) -> Any:
        return (
            sliding_window_view(x, 3, axis=-1),
            sliding_window_view(x, (2, 2), axis=(0, 1))[::2],
        )

    compiled = irc.compile(windows, irc.TensorSpec(("N", "M"), "float32"))
    x = _array(5, 4)
    for ours, expected in zip(
        compiled(x, backend="reference"), windows(x), strict=True
    ):
        np.testing.assert_array_equal(ours, expected)
    with pytest.raises(IrcError, match="writeable=True"):
        irc.compile(
            lambda x: sliding_window_view(x, 2, writeable=True),
            irc.TensorSpec(("N",), "float32"),
        )


if __name__ == "__main__":
    # python tests/test_nn_convolution.py REPORT.json (compiles: not interpreted)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    Path(sys.argv[1]).write_text(json.dumps(_sm90_report()))
