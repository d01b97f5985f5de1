"""Forward+backward of five losses: kernel launches, first-call compile time
and saved-activation bytes, next to TorchInductor's launches.

The losses (batch dim symbolic, float32) are a two-layer GELU MLP's mean
squared error, a layer norm's, a softmax cross-entropy over integer labels,
a causal attention head's mean squared error, and the training step of a
GPT-2-style block (``gpt2_block``: D = 64, four heads split as NumPy code
splits them, loss ``mean(block(x)**2)``, gradients of x and of all twelve
weights; the performance issue's target). Each is compiled as
``irc.compile(irc.value_and_grad(loss, argnums), *specs)`` through the
default pipeline, and reported with:

- ``kernels``: ``Compiled.num_kernels``, the launches per call, matmuls
  included (``matmuls``: the matmul kernels, some of which a launch of
  independent kernels runs together, ``combine-launches``); TorchInductor's figures for the same
  losses (its Triton kernels plus its extern matmul launches) are those of
  irc issue 11, measured with the batch dim dynamic and Triton codegen on
  the CPU (the issue quotes its first-call compile as 2-14 s per loss), and
  for the block those of irc issue 32 (28 Triton kernels, 36 matmuls);
- ``compile_s``: the first call's compile time, capture to the emitted
  Triton source (``triton_source``), the compile cache off; the minimum
  over ``--repeat`` fresh compiles. Triton's own JIT of the kernels is not
  included (it needs a GPU);
- ``saved_bytes``: the forward values the backward kernels read, in bytes
  at the binding ``BYTES_AT``. The loss is compiled once more as its joint
  function in ``vjp`` form (``autodiff{wrt=...}`` before the default
  pipeline, the loss's cotangent an argument); a kernel is a backward
  kernel when it depends on that cotangent, and a value is saved when a
  kernel that does not depend on it writes it and a backward kernel reads
  it (arguments are not counted: they are in memory anyway).

- ``kernel_io_bytes``: the bytes the step's kernels read and write at
  ``BYTES_AT``, each kernel reading each of its operands once and writing
  each of its results once (what the recompute-or-store choice weighs, the
  ideal traffic of those kernels; arguments, weights included, are read
  like any operand).

- with ``--inductor``, ``inductor_s``: TorchInductor's first-call compile
  of the same loss written in torch, measured here: the seconds from
  ``torch.compile(loss)`` to ``loss(*args).backward()`` having written the
  gradients (Dynamo's trace, AOTAutograd's joint graph and partition,
  Inductor's forward and backward code, their C++ compile, one run at small
  sizes), the symbolic dims marked dynamic (``mark_dynamic``), the other
  dims static as in the irc specs. Each loss runs in a fresh process with a
  fresh ``TORCHINDUCTOR_CACHE_DIR`` and the FX graph and AOTAutograd caches
  off; ``inductor_s`` is after a warm-up compile of an unrelated function in
  that process (imports, compile workers, toolchain checks paid),
  ``inductor_cold_s`` without it. On a CPU-only machine Inductor generates
  C++/OpenMP kernels, not Triton; its launches are counted from its output
  code (C++ kernel calls and ``extern_kernels`` calls).

    python benchmarks/autodiff.py                 # the table
    python benchmarks/autodiff.py --inductor      # and Inductor's compile
    python benchmarks/autodiff.py --json out.json # and the data
    python benchmarks/autodiff.py --only mlp --repeat 5
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gpu  # noqa: E402  (the float32 GPT-2 block and its torch translation)

import irc  # noqa: E402
from irc import pytree  # noqa: E402
from irc.api import DEFAULT_PIPELINE  # noqa: E402
from irc.dialects.fusion import KernelOp  # noqa: E402
from irc.dialects.graph import TensorType  # noqa: E402

D_MODEL, D_HIDDEN, HEAD_DIM = 1024, 4096, 64

#: The symbolic dims' values at which the saved bytes are counted: 4,096
#: rows (tokens of a batch; positions of the attention) and, for the
#: cross-entropy, whose vocabulary is symbolic too (``np.arange`` of a static
#: one would be a dense constant), 32,000 classes.
BYTES_AT = {"B": 4096, "T": 4096, "V": 32000}


def gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def mlp_loss(params, x, y):
    hidden = gelu(x @ params["w1"] + params["b1"])
    return ((hidden @ params["w2"] + params["b2"] - y) ** 2).mean()


def layer_norm_loss(params, x, target):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    y = params["g"] * (x - mean) / np.sqrt(variance + 1e-5) + params["b"]
    return ((y - target) ** 2).mean()


def cross_entropy_loss(logits, labels):
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
    onehot = labels[:, None] == np.arange(logits.shape[-1])
    return -np.mean(np.sum(np.where(onehot, logp, 0.0), axis=-1))


def attention_loss(q, k, v, target):
    scores = q @ k.T * q.shape[-1] ** -0.5
    scores = np.where(np.tri(q.shape[0]) == 0, -1e9, scores)
    e = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    p = e / np.sum(e, axis=-1, keepdims=True)
    return ((p @ v - target) ** 2).mean()


#: The GPT-2-style block of the training step: width and heads.
BLOCK_WIDTH, BLOCK_HEADS = 64, 4


def gpt2_block_loss(x, mlp, attn, ln_1, ln_2):
    block = gpu.gpt2_block_f32(x, mlp, attn, ln_1, ln_2, n_head=BLOCK_HEADS)
    return np.mean(block**2)


def spec(*dims: int | str, dtype: str = "float32") -> irc.TensorSpec:
    return irc.TensorSpec(dims, dtype)


def block_weight_specs(width: int) -> tuple[dict[str, Any], ...]:
    """The block's weights (``mlp``, ``attn``, ``ln_1``, ``ln_2``)."""

    def linear(n_in: int, n_out: int) -> dict[str, irc.TensorSpec]:
        return {"w": spec(n_in, n_out), "b": spec(n_out)}

    def norm() -> dict[str, irc.TensorSpec]:
        return {"g": spec(width), "b": spec(width)}

    return (
        {"c_fc": linear(width, 4 * width), "c_proj": linear(4 * width, width)},
        {"c_attn": linear(width, 3 * width), "c_proj": linear(width, width)},
        norm(),
        norm(),
    )


@dataclass(frozen=True)
class Loss:
    function: Callable[..., Any]
    #: The positional arguments differentiated (``value_and_grad``'s).
    argnums: tuple[int, ...]
    specs: tuple[Any, ...]
    #: TorchInductor's launches for the same loss (irc issue 11): Triton
    #: kernels and extern matmuls.
    inductor_kernels: int
    inductor_matmuls: int


LOSSES: dict[str, Loss] = {
    "mlp": Loss(
        mlp_loss,
        (0,),
        (
            {
                "w1": spec(D_MODEL, D_HIDDEN),
                "b1": spec(D_HIDDEN),
                "w2": spec(D_HIDDEN, D_MODEL),
                "b2": spec(D_MODEL),
            },
            spec("B", D_MODEL),
            spec("B", D_MODEL),
        ),
        6,
        5,
    ),
    "layer_norm": Loss(
        layer_norm_loss,
        (0, 1),
        (
            {"g": spec(D_MODEL), "b": spec(D_MODEL)},
            spec("B", D_MODEL),
            spec("B", D_MODEL),
        ),
        5,
        0,
    ),
    "cross_entropy": Loss(
        cross_entropy_loss, (0,), (spec("B", "V"), spec("B", dtype="int64")), 3, 0
    ),
    "attention": Loss(
        attention_loss,
        (0, 1, 2),
        tuple(spec("T", HEAD_DIM) for _ in range(4)),
        5,
        6,
    ),
    "gpt2_block": Loss(
        gpt2_block_loss,
        (0, 1, 2, 3, 4),
        (spec("T", BLOCK_WIDTH), *block_weight_specs(BLOCK_WIDTH)),
        28,
        36,
    ),
}


def compile_seconds(loss: Loss, repeat: int) -> tuple[float, irc.Compiled]:
    """The fastest of ``repeat`` fresh compiles to the emitted source."""
    best, compiled = math.inf, None
    for _ in range(repeat):
        begin = time.perf_counter()
        compiled = irc.compile(
            irc.value_and_grad(loss.function, loss.argnums), *loss.specs
        )
        assert compiled.triton_source  # compiled on first use
        best = min(best, time.perf_counter() - begin)
    assert compiled is not None
    return best, compiled


def differentiated_arguments(loss: Loss) -> list[int]:
    """The indices, among the captured function's flattened arguments, of
    the leaves of the arguments ``argnums`` names."""
    indices, position = [], 0
    for number, argument in enumerate(loss.specs):
        leaves = len(pytree.flatten(argument)[0])
        if number in loss.argnums:
            indices.extend(range(position, position + leaves))
        position += leaves
    return indices


def saved_bytes(loss: Loss) -> tuple[int, list[str]]:
    """The bytes at ``BYTES_AT`` of the forward values the backward kernels
    of the loss's joint function (``vjp`` form) read, and those values'
    types."""
    wrt = ",".join(map(str, differentiated_arguments(loss)))
    compiled = irc.compile(
        loss.function, *loss.specs, pipeline=f"autodiff{{wrt={wrt}}},{DEFAULT_PIPELINE}"
    )
    saved = saved_for_backward(compiled)
    total = sum(tensor_bytes(value, BYTES_AT) for value in saved)
    return total, [str(value) for value in saved]


def saved_for_backward(compiled: irc.Compiled) -> list[TensorType]:
    """The types of the forward values the backward kernels of a joint
    function in ``vjp`` form (``autodiff{wrt=...}``, the loss's cotangent
    its last argument) read: a kernel is a backward kernel when it depends
    on the cotangent, and a value is saved when a kernel that does not
    writes it and a backward kernel reads it (arguments are not counted:
    they are in memory anyway)."""
    function = next(
        op for op in compiled.module_at("fusion").walk() if op.name == "func.func"
    )
    block = function.body.blocks[0]
    backward = {block.args[-1]}
    saved: dict[Any, None] = {}
    for kernel in block.ops:
        if not isinstance(kernel, KernelOp):
            continue
        if any(value in backward for value in kernel.operands):
            backward.update(kernel.results)
            saved.update(
                dict.fromkeys(
                    value
                    for value in kernel.operands
                    if value not in backward and isinstance(value.owner, KernelOp)
                )
            )
    return [value.type for value in saved]


def kernel_io_bytes(compiled: irc.Compiled) -> int:
    """The bytes at ``BYTES_AT`` that the kernels of ``compiled`` read (each
    distinct operand once) and write (each result once)."""
    total = 0
    for kernel in compiled.module_at("fusion").walk():
        if isinstance(kernel, KernelOp):
            values = [*dict.fromkeys(kernel.operands), *kernel.results]
            total += sum(
                tensor_bytes(value.type, BYTES_AT)
                for value in values
                if isinstance(value.type, TensorType)
            )
    return total


def tensor_bytes(tensor: TensorType, sizes: dict[str, int]) -> int:
    """The bytes of ``tensor`` with its symbolic dims at ``sizes``."""
    elements = math.prod(dim.evaluate(sizes) for dim in tensor.dims)
    return elements * tensor.element_type.bitwidth // 8


def measure(names: Sequence[str], repeat: int) -> dict[str, dict[str, Any]]:
    results = {}
    for name in names:
        loss = LOSSES[name]
        seconds, compiled = compile_seconds(loss, repeat)
        kinds = [
            op.kind_name
            for op in compiled.module_at("fusion").walk()
            if isinstance(op, KernelOp)
        ]
        total, values = saved_bytes(loss)
        results[name] = {
            "kernels": compiled.num_kernels,
            "matmuls": kinds.count("matmul"),
            "compile_s": seconds,
            "saved_bytes": total,
            "saved_values": values,
            "kernel_io_bytes": kernel_io_bytes(compiled),
            "inductor_kernels": loss.inductor_kernels + loss.inductor_matmuls,
            "inductor_matmuls": loss.inductor_matmuls,
        }
    return results


# TorchInductor, measured here (--inductor): the same four losses in torch,
# each compiled in a fresh process with Inductor's caches off.

#: The sizes of the torch losses' symbolic dims: small (the dims are marked
#: dynamic, so Inductor's code does not depend on them) and distinct, so that
#: Dynamo's duck sizing does not unify two of them.
TORCH_SIZES = {"B": 8, "T": 12, "V": 40}

INDUCTOR_ENV = {
    "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
    "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
}


def torch_loss(
    name: str,
    sizes: dict[str, int] = TORCH_SIZES,
    device: str = "cpu",
    dynamic: bool = True,
) -> tuple[Callable[..., Any], tuple[Any, ...], list[Any]]:
    """The torch version of loss ``name``: the function, its arguments (the
    static dims of ``LOSSES``' specs, the symbolic ones at ``sizes``, marked
    dynamic if ``dynamic``, on ``device``) and the tensors differentiated
    (``argnums``' leaves, with ``requires_grad``)."""
    import torch

    def gelu_t(x: Any) -> Any:
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
        return 0.5 * x * (1 + torch.tanh(inner))

    def mlp_t(params: dict[str, Any], x: Any, y: Any) -> Any:
        hidden = gelu_t(x @ params["w1"] + params["b1"])
        return ((hidden @ params["w2"] + params["b2"] - y) ** 2).mean()

    def layer_norm_t(params: dict[str, Any], x: Any, target: Any) -> Any:
        mean = x.mean(dim=-1, keepdim=True)
        variance = x.var(dim=-1, keepdim=True, unbiased=False)
        y = params["g"] * (x - mean) / torch.sqrt(variance + 1e-5) + params["b"]
        return ((y - target) ** 2).mean()

    def cross_entropy_t(logits: Any, labels: Any) -> Any:
        shifted = logits - logits.amax(dim=-1, keepdim=True)
        logp = shifted - torch.log(torch.exp(shifted).sum(dim=-1, keepdim=True))
        classes = torch.arange(logits.shape[-1], device=logits.device)
        onehot = labels[:, None] == classes
        return -torch.where(onehot, logp, 0.0).sum(dim=-1).mean()

    def attention_t(q: Any, k: Any, v: Any, target: Any) -> Any:
        scores = q @ k.T * q.shape[-1] ** -0.5
        causal = torch.tril(torch.ones(q.shape[0], q.shape[0], device=q.device))
        scores = torch.where(causal == 0, -1e9, scores)
        e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
        p = e / e.sum(dim=-1, keepdim=True)
        return ((p @ v - target) ** 2).mean()

    block_t = gpu.torch_translations()["gpt2_block"]

    def gpt2_block_t(x: Any, mlp: Any, attn: Any, ln_1: Any, ln_2: Any) -> Any:
        return (block_t(x, mlp, attn, ln_1, ln_2, n_head=BLOCK_HEADS) ** 2).mean()

    functions = {
        "mlp": mlp_t,
        "layer_norm": layer_norm_t,
        "cross_entropy": cross_entropy_t,
        "attention": attention_t,
        "gpt2_block": gpt2_block_t,
    }
    loss = LOSSES[name]
    arguments = pytree.map_leaves(
        lambda leaf: torch_argument(leaf, sizes, device, dynamic), loss.specs
    )
    wrt = [
        leaf for number in loss.argnums for leaf in pytree.flatten(arguments[number])[0]
    ]
    for leaf in wrt:
        leaf.requires_grad_(True)
    return functions[name], arguments, wrt


def torch_argument(
    tensor_spec: irc.TensorSpec, sizes: dict[str, int], device: str, dynamic: bool
) -> Any:
    """A random tensor of ``tensor_spec``'s dtype on ``device``, its symbolic
    dims at ``sizes`` (and marked dynamic if ``dynamic``)."""
    import torch

    shape = [sizes.get(dim, dim) for dim in tensor_spec.shape]
    if str(tensor_spec.dtype) == "int64":
        tensor = torch.randint(0, sizes["V"], shape, device=device)
    else:
        dtype = getattr(torch, str(tensor_spec.dtype))
        tensor = torch.randn(shape, dtype=dtype, device=device)
    for axis, dim in enumerate(tensor_spec.shape):
        if dynamic and isinstance(dim, str):
            torch._dynamo.mark_dynamic(tensor, axis)
    return tensor


def warm_up_inductor() -> None:
    """Compiles, runs and differentiates an unrelated function, so that
    Inductor's imports, its compile workers and the C++ toolchain checks are
    paid before the measured compile."""
    import torch

    a = torch.randn(5, 3, requires_grad=True)
    torch.compile(lambda t: (t.sin() * 2).sum())(a).backward()
    torch._dynamo.reset()


def inductor_child(name: str, warm: bool) -> dict[str, Any]:
    """In this (fresh) process: the seconds from ``torch.compile`` of the
    torch loss ``name`` to its gradients existing, on its first call, and the
    launches of the forward and backward code Inductor generated."""
    import torch

    function, arguments, wrt = torch_loss(name)
    if warm:
        warm_up_inductor()
    cache = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])
    before = set(cache.rglob("*.py"))
    begin = time.perf_counter()
    torch.compile(function)(*arguments).backward()
    seconds = time.perf_counter() - begin
    assert all(leaf.grad is not None for leaf in wrt)
    generated = sorted(set(cache.rglob("*.py")) - before)
    return {"seconds": seconds, **launches(generated)}


def launches(paths: Sequence[Path]) -> dict[str, Any]:
    """The C++ kernel and extern kernel calls of Inductor's output code (the
    generated modules with a ``call``: the forward's and the backward's)."""
    cpp, extern = 0, []
    modules = 0
    for path in paths:
        text = path.read_text()
        if "def call(" not in text:
            continue
        modules += 1
        cpp += len(re.findall(r"^\s+cpp_fused\w*\(", text, re.M))
        extern += re.findall(r"^\s+extern_kernels\.(\w+)\(", text, re.M)
    return {"modules": modules, "cpp_kernels": cpp, "extern": extern}


def measure_inductor(name: str, warm: bool, timeout: float) -> dict[str, Any]:
    """``inductor_child`` in a fresh Python process, with a fresh Inductor
    cache directory and the FX graph and AOTAutograd caches off."""
    with tempfile.TemporaryDirectory(prefix="inductor-") as cache:
        env = {**os.environ, **INDUCTOR_ENV, "TORCHINDUCTOR_CACHE_DIR": cache}
        command = [sys.executable, __file__, "--inductor-child", name]
        if warm:
            command.append("--warm")
        done = subprocess.run(
            command,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    return json.loads(done.stdout.splitlines()[-1])


def add_inductor(results: dict[str, dict[str, Any]], timeout: float) -> None:
    """Adds to each loss's result Inductor's first-call compile seconds in a
    fresh process (``inductor_cold_s``), the same after a warm-up compile of
    an unrelated function (``inductor_s``) and its launches."""
    for name, result in results.items():
        cold = measure_inductor(name, warm=False, timeout=timeout)
        warm = measure_inductor(name, warm=True, timeout=timeout)
        result["inductor_cold_s"] = cold["seconds"]
        result["inductor_s"] = warm["seconds"]
        result["inductor_measured"] = {
            key: warm[key] for key in ("modules", "cpp_kernels", "extern")
        }


def size_text(count: int) -> str:
    """``144.0 MiB``, ``32.0 KiB``."""
    if count >= 2**20:
        return f"{count / 2**20:.1f} MiB"
    return f"{count / 2**10:.1f} KiB"


def table(results: dict[str, dict[str, Any]]) -> str:
    inductor = all("inductor_s" in r for r in results.values())
    header = "| loss | kernels (matmuls) | Inductor (extern matmuls) | compile |"
    rule = "|---|---:|---:|---:|"
    if inductor:
        header += " Inductor compile (measured here, C++ backend) | irc / Inductor |"
        rule += "---:|---:|"
    rows = [header + " saved activations | kernel I/O |", rule + "---:|---:|"]
    for name, r in results.items():
        row = (
            f"| {name} | {r['kernels']} ({r['matmuls']}) | "
            f"{r['inductor_kernels']} ({r['inductor_matmuls']}) | "
            f"{r['compile_s'] * 1000:.0f} ms |"
        )
        if inductor:
            row += (
                f" {r['inductor_s']:.1f} s ({r['inductor_cold_s']:.1f} s cold) |"
                f" {r['compile_s'] / r['inductor_s']:.3f} |"
            )
        saved, moved = size_text(r["saved_bytes"]), size_text(r["kernel_io_bytes"])
        rows.append(row + f" {saved} | {moved} |")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", nargs="+", choices=sorted(LOSSES), default=list(LOSSES)
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--inductor",
        action="store_true",
        help="also time torch.compile's first call of each loss (needs torch)",
    )
    parser.add_argument("--inductor-timeout", type=float, default=600.0)
    parser.add_argument(
        "--inductor-child", choices=sorted(LOSSES), help=argparse.SUPPRESS
    )
    parser.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inductor_child:
        print(json.dumps(inductor_child(args.inductor_child, args.warm)))
        return
    os.environ["IRC_CACHE"] = "0"  # a first call compiles
    results = measure(args.only, args.repeat)
    if args.inductor:
        add_inductor(results, args.inductor_timeout)
    print(table(results))
    print(
        f"\nsaved bytes and kernel I/O at {BYTES_AT}; Python {platform.python_version()}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"
    )
    if args.inductor:
        print_inductor_launches(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


def print_inductor_launches(results: dict[str, dict[str, Any]]) -> None:
    import torch

    print(f"torch {torch.__version__}; Inductor's launches (forward + backward):")
    for name, r in results.items():
        m = r["inductor_measured"]
        print(
            f"  {name}: {m['cpp_kernels']} C++ kernels, extern {m['extern']} "
            f"({m['modules']} output modules)"
        )


if __name__ == "__main__":
    main()
