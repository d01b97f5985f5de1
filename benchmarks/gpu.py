"""irc against torch on a CUDA GPU: the suite's programs, the training
steps and the torch backend's models, in one run.

Three sections (``--sections``, all by default), each a table:

- ``suite``: each NumPy program of ``tests/suite_programs.py`` at realistic
  sizes (4096 rows of 1024 and 4096 features; 4096 x 1024 x 4096 matmuls; a
  GPT-2 small block over 1024 tokens);
- ``training``: the losses of ``benchmarks/autodiff.py`` (an MLP, a layer
  norm, a cross-entropy, a causal attention head and the GPT-2-style
  block's training step), their value and gradients, at 4096 rows (and
  32,000 classes): irc's ``value_and_grad`` (one joint program) against
  torch autograd, eager and through ``torch.compile`` (AOTAutograd's
  partitioned forward and backward);
- ``models``: one training step (loss, backward, SGD) of each Hugging Face
  model of ``irc.testing.models`` (small configs, batch 8 of 16 tokens):
  ``torch.compile(model, backend="irc")`` against eager and Inductor, with
  both compilers' kernels and compile seconds (the first step's less a
  steady one's), and the first losses compared.

For the first two this times, with ``triton.testing.do_bench``:

- ``irc``: the emitted launcher of ``irc.compile``'s program (its kernels
  plus the launcher's own Python: binding, guards, allocation, launches);
- ``irc call``: the same through ``Compiled.__call__(..., backend="triton")``
  (plus irc's argument checks);
- ``eager`` and ``compiled``: a line-by-line torch translation of the same
  NumPy program, run eagerly and through ``torch.compile`` (Inductor).

It reports milliseconds, achieved GB/s (bytes of the inputs and outputs over
the time; for the embedding, the rows read rather than the whole tables),
TFLOP/s for the matmul programs (a training step's counted as three times
its forward's), compile times, and the largest difference between irc's
results and torch's eager ones. Everything is float32 (as the suite is);
irc's matmuls use ``input_precision="ieee"`` and torch's default keeps TF32
off, so both compute true float32 products.

    python benchmarks/gpu.py                       # everything
    python benchmarks/gpu.py --out results.json    # and results.json + .md
    python benchmarks/gpu.py --only softmax gpt2_block llama
    python benchmarks/gpu.py --sections training models
    python benchmarks/gpu.py --tune                # and measured launch configs
    python benchmarks/gpu.py --check               # CPU: the translations

It needs a CUDA GPU (and exits with a message saying so without one),
except ``--check``, which checks on the CPU at small sizes that each torch
translation computes what its NumPy program does (for the losses: their
values and gradients, against irc's), and trains each model one step
through irc (its NumPy interpreter) and eagerly, with the same loss. A full
run is meant to end within ten minutes on an H200: once ``--budget``
seconds have passed, the remaining programs skip torch.compile, and once
``--limit`` seconds have, they are skipped (a row saying so)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# Compile times are of compiling, not of reading irc's on-disk cache or
# Inductor's (its FX graph and AOTAutograd caches; set before torch loads).
os.environ.setdefault("IRC_CACHE", "0")
os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
os.environ.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "0")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import programs as gpt2
import suite_programs as suite

import irc
from irc import pytree

#: When the run started (this module's import): ``--limit`` counts from here.
STARTED = time.perf_counter()
F32 = "float32"


# --------------------------------------------------------------------------
# The GPT-2 block in float32
# --------------------------------------------------------------------------


def _attention_f32(q, k, v, mask):
    return gpt2.softmax(q @ k.T / math.sqrt(q.shape[-1]) + mask) @ v


def _mha_f32(x, c_attn, c_proj, n_head):
    x = gpt2.linear(x, **c_attn)
    qkv = np.split(x, 3, axis=-1)
    qkv_heads = [np.split(part, n_head, axis=-1) for part in qkv]
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10
    heads = [_attention_f32(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]
    return gpt2.linear(np.hstack(heads), **c_proj)


def gpt2_block_f32(x, mlp, attn, ln_1, ln_2, n_head):
    """``tests/programs.py``'s ``transformer_block`` with Python-float
    constants. There the attention scale ``np.sqrt(d)`` and GELU's
    ``np.sqrt(2 / np.pi)`` are float64 NumPy scalars, which NumPy 2 (NEP 50)
    does not demote: the scores, the MLP and everything after them are
    float64, and irc, following NumPy, computes them so. A float32 GPU
    benchmark wants the float32 block."""
    x = x + _mha_f32(gpt2.layer_norm(x, **ln_1), **attn, n_head=n_head)
    hidden = suite.gelu(gpt2.linear(gpt2.layer_norm(x, **ln_2), **mlp["c_fc"]))
    return x + gpt2.linear(hidden, **mlp["c_proj"])


# --------------------------------------------------------------------------
# Torch translations of the suite's NumPy programs (imported lazily: torch)
# --------------------------------------------------------------------------


def torch_translations() -> dict[str, Callable[..., Any]]:
    """Each program written with torch ops, one NumPy call to one torch
    call, so that eager torch and Inductor see the same computation."""
    import torch

    def elementwise_broadcast(x, y, z):
        return torch.where(x > z, x * y, torch.tanh(x - z)) + 1.5 * y

    def softmax(x):
        e = torch.exp(x - torch.amax(x, dim=-1, keepdim=True))
        return e / torch.sum(e, dim=-1, keepdim=True)

    def layer_norm(x, g, b):
        mean = torch.mean(x, dim=-1, keepdim=True)
        variance = torch.var(x, dim=-1, keepdim=True, unbiased=False)
        return g * (x - mean) / torch.sqrt(variance + 1e-5) + b

    def rms_norm(x, g):
        return x / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + 1e-6) * g

    def log_softmax(x):
        shifted = x - torch.amax(x, dim=-1, keepdim=True)
        return shifted - torch.log(torch.sum(torch.exp(shifted), dim=-1, keepdim=True))

    def logsumexp(x):
        m = torch.amax(x, dim=-1, keepdim=True)
        return m + torch.log(torch.sum(torch.exp(x - m), dim=-1, keepdim=True))

    def l2_normalize(x):
        return x / torch.sqrt(torch.sum(x * x, dim=-1, keepdim=True) + 1e-12)

    def cross_entropy(logits, labels):
        shifted = logits - torch.amax(logits, dim=-1, keepdim=True)
        logp = shifted - torch.log(torch.sum(torch.exp(shifted), dim=-1, keepdim=True))
        onehot = labels[:, None] == torch.arange(logits.shape[-1], device=logits.device)
        return -torch.mean(torch.sum(torch.where(onehot, logp, 0.0), dim=-1))

    def gelu(x):
        return (
            0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
        )

    def gelu_linear(x, w, b):
        return gelu(x @ w + b)

    def mlp(x, w1, b1, w2, b2):
        return gelu(x @ w1 + b1) @ w2 + b2

    def swiglu(x, w_gate, w_up, w_down):
        gate = x @ w_gate
        return (gate / (1 + torch.exp(-gate)) * (x @ w_up)) @ w_down

    def causal_attention(q, k, v):
        scores = q @ k.T * q.shape[-1] ** -0.5
        lower = torch.tril(torch.ones(q.shape[0], q.shape[0], device=q.device))
        scores = torch.where(lower == 0, -1e9, scores)
        return softmax(scores) @ v

    def head_split(x):
        # .contiguous(): NumPy's transpose is a view too, but irc returns
        # a new array, so torch is timed making the same copy.
        heads = x.reshape(x.shape[0], suite.N_HEADS, suite.HEAD_DIM)
        return heads.transpose(0, 1).contiguous()

    def rotary(x, cos, sin):
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[:, half:], x[:, :half]], dim=-1)
        return x * cos + rotated * sin

    def embedding(ids, wte, wpe):
        return wte[ids] + wpe[: ids.shape[0]]

    def adam_step(p, g, m, v):
        m_new = 0.9 * m + 0.1 * g
        v_new = 0.999 * v + 0.001 * g * g
        p_new = p - 1e-3 * m_new / (torch.sqrt(v_new) + 1e-8)
        return p_new, m_new, v_new

    def block_layer_norm(x, g, b, eps=1e-5):
        mean = torch.mean(x, dim=-1, keepdim=True)
        variance = torch.var(x, dim=-1, keepdim=True, unbiased=False)
        return g * (x - mean) / torch.sqrt(variance + eps) + b

    def linear(x, w, b):
        return x @ w + b

    def attention(q, k, v, mask):
        return softmax(q @ k.T / math.sqrt(q.shape[-1]) + mask) @ v

    def mha(x, c_attn, c_proj, n_head):
        x = linear(x, **c_attn)
        qkv = torch.chunk(x, 3, dim=-1)
        qkv_heads = [torch.chunk(part, n_head, dim=-1) for part in qkv]
        ones = torch.ones(x.shape[0], x.shape[0], device=x.device, dtype=x.dtype)
        causal_mask = (1 - torch.tril(ones)) * -1e10
        heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]
        return linear(torch.hstack(heads), **c_proj)

    def gpt2_block(x, mlp, attn, ln_1, ln_2, n_head):
        x = x + mha(block_layer_norm(x, **ln_1), **attn, n_head=n_head)
        hidden = gelu(linear(block_layer_norm(x, **ln_2), **mlp["c_fc"]))
        return x + linear(hidden, **mlp["c_proj"])

    return {
        "elementwise_broadcast": elementwise_broadcast,
        "softmax": softmax,
        "layer_norm": layer_norm,
        "rms_norm": rms_norm,
        "log_softmax": log_softmax,
        "logsumexp": logsumexp,
        "l2_normalize": l2_normalize,
        "cross_entropy": cross_entropy,
        "gelu_linear": gelu_linear,
        "mlp": mlp,
        "swiglu": swiglu,
        "causal_attention": causal_attention,
        "head_split": head_split,
        "rotary": rotary,
        "embedding": embedding,
        "adam_step": adam_step,
        "gpt2_block": gpt2_block,
    }


# --------------------------------------------------------------------------
# The benchmark programs: specs, sizes, inputs
# --------------------------------------------------------------------------


@dataclass
class Program:
    """A suite program at benchmark scale.

    ``specs`` are what ``irc.compile`` gets (symbolic where the suite's are,
    with the suite's small static feature sizes scaled up); ``make(sizes,
    rand)`` builds one call's arguments from ``rand(*shape, scale=)`` (an
    array factory) and an integer factory; ``flops(sizes)`` counts the
    multiply-adds of the matmul programs (0: report no TFLOP/s).
    """

    name: str
    specs: suite.Call
    sizes: list[dict[str, int]]
    small: dict[str, int]
    make: Callable[[Mapping[str, int], Any], suite.Call]
    tolerance: tuple[float, float] = (1e-4, 1e-5)
    flops: Callable[[Mapping[str, int]], float] = lambda sizes: 0.0
    bytes_moved: Callable[[Mapping[str, int]], int] | None = None
    #: The NumPy program (default: the suite's).
    function: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        if self.function is None:
            self.function = suite.SUITE[self.name].function


def spec(*dims: int | str, dtype: str = F32) -> irc.TensorSpec:
    return irc.TensorSpec(dims, dtype)


D_MODEL, D_HIDDEN = 1024, 4096
HEAD_DIM = suite.HEAD_DIM
N_EMBD, N_HEAD = 768, 12
VOCAB, POSITIONS = 50257, 1024
ROTARY = 128
ROW_SIZES = [{"N": 4096, "D": 1024}, {"N": 4096, "D": 4096}]
#: Matmul programs: (N x D_MODEL) @ (D_MODEL x D_HIDDEN) and back.
MATMUL_SIZES = [{"N": 4096}]
#: Matmul tolerance: K up to 4096 float32 products summed in another order.
MATMUL_TOLERANCE = (1e-3, 1e-3)


class Factory:
    """Random arguments for one call, NumPy on the host or torch on a
    device."""

    def __init__(self, device: str | None, seed: int = 0):
        self.device = device
        self.rng = np.random.default_rng(seed)

    def __call__(self, *shape: int, scale: float = 1.0) -> Any:
        array = (self.rng.standard_normal(shape, dtype=np.float32) * scale).astype(
            np.float32
        )
        return self._out(array)

    def integers(self, high: int, *shape: int) -> Any:
        return self._out(self.rng.integers(0, high, shape).astype(np.int64))

    def _out(self, array: np.ndarray) -> Any:
        if self.device is None:
            return array
        import torch

        return torch.from_numpy(array).to(self.device)


def _rows(name: str, *extra: str) -> Program:
    """A row program of x [N, D] and per-feature vectors [D]."""
    return Program(
        name,
        suite.Call((spec("N", "D"), *(spec("D") for _ in extra))),
        ROW_SIZES,
        {"N": 3, "D": 7},
        lambda s, r: suite.Call(
            (r(s["N"], s["D"], scale=2.0), *(r(s["D"]) for _ in extra))
        ),
    )


def _linear(n_in: int, n_out: int) -> dict[str, irc.TensorSpec]:
    return {"w": spec(n_in, n_out), "b": spec(n_out)}


def _block_call(s: Mapping[str, int], r: Any, n: int, n_head: int) -> suite.Call:
    def linear(n_in: int, n_out: int) -> dict[str, Any]:
        return {"w": r(n_in, n_out, scale=n_in**-0.5), "b": r(n_out, scale=0.1)}

    def norm() -> dict[str, Any]:
        return {"g": r(n, scale=0.1) + 1, "b": r(n, scale=0.1)}

    weights = {
        "mlp": {"c_fc": linear(n, 4 * n), "c_proj": linear(4 * n, n)},
        "attn": {"c_attn": linear(n, 3 * n), "c_proj": linear(n, n)},
        "ln_1": norm(),
        "ln_2": norm(),
        "n_head": n_head,
    }
    return suite.Call((r(s["seq"], n),), weights)


def _block_specs(n: int, n_head: int) -> suite.Call:
    def norm() -> dict[str, irc.TensorSpec]:
        return {"g": spec(n), "b": spec(n)}

    return suite.Call(
        (spec("seq", n),),
        {
            "mlp": {"c_fc": _linear(n, 4 * n), "c_proj": _linear(4 * n, n)},
            "attn": {"c_attn": _linear(n, 3 * n), "c_proj": _linear(n, n)},
            "ln_1": norm(),
            "ln_2": norm(),
            "n_head": n_head,
        },
    )


def _block_flops(s: Mapping[str, int], n: int = N_EMBD) -> float:
    seq = s["seq"]
    linears = 2 * seq * n * (3 * n + n + 4 * n + 4 * n)
    attention = 2 * 2 * seq * seq * n  # q @ k.T and @ v over all heads
    return float(linears + attention)


def programs(small: bool = False) -> list[Program]:
    """The benchmark programs (``small``: the sizes of the CPU check, with
    the suite's own small feature sizes)."""
    d_model, d_hidden = (
        (suite.D_MODEL, suite.D_HIDDEN) if small else (D_MODEL, D_HIDDEN)
    )
    n_embd, n_head = (gpt2.N_EMBD, gpt2.N_HEAD) if small else (N_EMBD, N_HEAD)
    vocab, positions = (
        (suite.VOCAB, suite.MAX_POSITIONS) if small else (VOCAB, POSITIONS)
    )
    rotary = suite.ROTARY_DIM if small else ROTARY
    matmul_flops = lambda s: 2.0 * s["N"] * d_model * d_hidden  # noqa: E731
    return [
        Program(
            "elementwise_broadcast",
            suite.Call((spec("N", "D"), spec(1, "D"), spec("N", 1))),
            [{"N": 4096, "D": 4096}],
            {"N": 3, "D": 7},
            lambda s, r: suite.Call((r(s["N"], s["D"]), r(1, s["D"]), r(s["N"], 1))),
        ),
        _rows("softmax"),
        _rows("layer_norm", "g", "b"),
        _rows("rms_norm", "g"),
        _rows("log_softmax"),
        _rows("logsumexp"),
        _rows("l2_normalize"),
        Program(
            "cross_entropy",
            suite.Call((spec("N", "V"), spec("N", dtype="int64"))),
            [{"N": 4096, "V": 32000}],
            {"N": 4, "V": 10},
            lambda s, r: suite.Call(
                (r(s["N"], s["V"], scale=2.0), r.integers(s["V"], s["N"]))
            ),
        ),
        Program(
            "gelu_linear",
            suite.Call((spec("N", d_model), spec(d_model, d_hidden), spec(d_hidden))),
            MATMUL_SIZES,
            {"N": 5},
            lambda s, r: suite.Call(
                (
                    r(s["N"], d_model),
                    r(d_model, d_hidden, scale=d_model**-0.5),
                    r(d_hidden, scale=0.1),
                )
            ),
            MATMUL_TOLERANCE,
            matmul_flops,
        ),
        Program(
            "mlp",
            suite.Call(
                (
                    spec("N", d_model),
                    spec(d_model, d_hidden),
                    spec(d_hidden),
                    spec(d_hidden, d_model),
                    spec(d_model),
                )
            ),
            MATMUL_SIZES,
            {"N": 5},
            lambda s, r: suite.Call(
                (
                    r(s["N"], d_model),
                    r(d_model, d_hidden, scale=d_model**-0.5),
                    r(d_hidden, scale=0.1),
                    r(d_hidden, d_model, scale=d_hidden**-0.5),
                    r(d_model, scale=0.1),
                )
            ),
            MATMUL_TOLERANCE,
            lambda s: 2 * matmul_flops(s),
        ),
        Program(
            "swiglu",
            suite.Call(
                (
                    spec("N", d_model),
                    spec(d_model, d_hidden),
                    spec(d_model, d_hidden),
                    spec(d_hidden, d_model),
                )
            ),
            MATMUL_SIZES,
            {"N": 5},
            lambda s, r: suite.Call(
                (
                    r(s["N"], d_model),
                    r(d_model, d_hidden, scale=d_model**-0.5),
                    r(d_model, d_hidden, scale=d_model**-0.5),
                    r(d_hidden, d_model, scale=d_hidden**-0.5),
                )
            ),
            MATMUL_TOLERANCE,
            lambda s: 3 * matmul_flops(s),
        ),
        Program(
            "causal_attention",
            suite.Call((spec("S", HEAD_DIM),) * 3),
            [{"S": 2048}, {"S": 4096}],
            {"S": 6},
            lambda s, r: suite.Call(tuple(r(s["S"], HEAD_DIM) for _ in range(3))),
            MATMUL_TOLERANCE,
            lambda s: 4.0 * s["S"] * s["S"] * HEAD_DIM,
        ),
        Program(
            "head_split",
            suite.Call((spec("N", suite.N_HEADS * suite.HEAD_DIM),)),
            [{"N": 32768}],
            {"N": 3},
            lambda s, r: suite.Call((r(s["N"], suite.N_HEADS * suite.HEAD_DIM),)),
        ),
        Program(
            "rotary",
            suite.Call((spec("S", rotary),) * 3),
            [{"S": 65536}],
            {"S": 4},
            lambda s, r: suite.Call(tuple(r(s["S"], rotary) for _ in range(3))),
        ),
        Program(
            "embedding",
            suite.Call(
                (spec("N", dtype="int64"), spec(vocab, n_embd), spec(positions, n_embd))
            ),
            [{"N": positions}],
            {"N": 6},
            lambda s, r: suite.Call(
                (r.integers(vocab, s["N"]), r(vocab, n_embd), r(positions, n_embd))
            ),
            # ids, the N rows gathered from each table, the output
            bytes_moved=lambda s: s["N"] * (8 + 3 * 4 * n_embd),
        ),
        Program(
            "adam_step",
            suite.Call((spec("N"),) * 4),
            [{"N": 1 << 24}],
            {"N": 7},
            lambda s, r: suite.Call(
                (r(s["N"]), r(s["N"]), r(s["N"], scale=0.1), abs(r(s["N"], scale=0.1)))
            ),
        ),
        Program(
            "gpt2_block",
            _block_specs(n_embd, n_head),
            [{"seq": 1024}],
            {"seq": 5},
            lambda s, r: _block_call(s, r, n_embd, n_head),
            MATMUL_TOLERANCE,
            lambda s: _block_flops(s, n_embd),
            function=gpt2_block_f32,
        ),
    ]


# --------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, tuple | list) else [value]


def nbytes(value: Any) -> int:
    return sum(
        leaf.numel() * leaf.element_size()
        for leaf in pytree.flatten(value)[0]
        if hasattr(leaf, "element_size")
    )


def tensor_leaves(compiled: irc.Compiled, call: suite.Call) -> list[Any]:
    """The launcher's arguments: the call's tensor leaves in the compiled
    order (static leaves such as ``n_head`` are baked in)."""
    leaves, _ = pytree.flatten((list(call.args), dict(call.kwargs)))
    static = compiled.captured.static_leaves
    return [leaf for i, leaf in enumerate(leaves) if i not in static]


def max_error(
    got: Any, expected: Any, tolerance: tuple[float, float], scaled_atol: bool = False
) -> tuple[float, bool]:
    """The largest absolute difference and whether every element is within
    ``atol + rtol * |expected|`` (``atol`` times the array's largest
    magnitude, at least 1, with ``scaled_atol``)."""
    import torch

    worst, ok = 0.0, True
    got_leaves, expected_leaves = as_list(got), as_list(expected)
    if len(got_leaves) != len(expected_leaves):
        return math.inf, False
    rtol, atol = tolerance
    for g, e in zip(got_leaves, expected_leaves):
        if tuple(g.shape) != tuple(e.shape) or g.dtype != e.dtype:
            return math.inf, False
        g, e = g.double(), e.double()
        difference = (g - e).abs()
        worst = max(worst, float(difference.max()) if difference.numel() else 0.0)
        scale = _scale(e.abs().max().item() if e.numel() else 0.0, scaled_atol)
        ok &= bool(torch.all(difference <= atol * scale + rtol * e.abs()))
    return worst, ok


def _scale(largest: float, scaled: bool) -> float:
    """What an absolute tolerance is multiplied by: the array's largest
    magnitude (at least 1) when it is relative to it, else 1."""
    return max(1.0, largest) if scaled else 1.0


def bench(function: Callable[[], Any]) -> float:
    """Milliseconds per call: ``triton.testing.do_bench``'s median on a GPU;
    on the CPU (``--check``), the median of three calls."""
    import torch

    if not torch.cuda.is_available():
        times = [timed(function)[1] for _ in range(3)]
        return 1e3 * sorted(times)[1]
    import triton.testing

    return float(
        triton.testing.do_bench(function, warmup=25, rep=100, return_mode="median")
    )


def timed(function: Callable[[], Any]) -> tuple[Any, float]:
    import torch

    start = time.perf_counter()
    result = function()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result, time.perf_counter() - start


def run_program(
    program: Program, translation: Callable[..., Any], use_compile: bool
) -> list[dict[str, Any]]:
    """Time one program at each of its sizes; one row per size. irc
    compiles once for all sizes (they bind its symbols); torch.compile
    specialises to each shape (``dynamic=False``), as irc's Triton kernels
    specialise on the integer arguments Triton specialises."""
    import torch

    from irc.runtime import triton_backend

    start = time.perf_counter()
    compiled = irc.compile(
        program.function, *program.specs.args, **program.specs.kwargs
    )
    source = compiled.triton_source
    irc_compile_s = time.perf_counter() - start
    module = triton_backend.load_source(source, interpret=False)
    launcher = getattr(module, module.ENTRY)
    rows: list[dict[str, Any]] = []
    for sizes in program.sizes:
        row: dict[str, Any] = {
            "program": program.name,
            "sizes": dict(sizes),
            "kernels": compiled.num_kernels,
            "irc_compile_s": irc_compile_s,
        }
        rows.append(row)
        call = program.make(sizes, Factory("cuda"))
        measure(row, program, compiled, launcher, translation, call, use_compile)
        del call
        torch.cuda.empty_cache()
        print(summary_line(row), flush=True)
    return rows


def measure(
    row: dict[str, Any],
    program: Program,
    compiled: irc.Compiled,
    launcher: Callable[..., Any],
    translation: Callable[..., Any],
    call: suite.Call,
    use_compile: bool,
) -> None:
    """Fill ``row`` with the times of one call of every implementation."""

    args, kwargs = call.args, dict(call.kwargs)
    tensors = tensor_leaves(compiled, call)
    expected = translation(*args, **kwargs)
    row["bytes"] = (
        program.bytes_moved(row["sizes"])
        if program.bytes_moved
        else nbytes(tensors) + nbytes(expected)
    )
    row["flops"] = program.flops(row["sizes"])
    try:
        got, row["irc_first_call_s"] = timed(
            lambda: compiled(*args, **kwargs, backend="triton")
        )
        row["max_abs_error"], row["matches_torch"] = max_error(
            got, expected, program.tolerance
        )
        row["irc_ms"] = bench(lambda: launcher(*tensors))
        row["irc_call_ms"] = bench(lambda: compiled(*args, **kwargs, backend="triton"))
        if TUNE:
            time_tuned(row, compiled, lambda: launcher(*tensors))
    except Exception as error:  # a failing program is a result: go on
        row["irc_error"] = f"{type(error).__name__}: {error}"
        traceback.print_exc()
    time_torch(row, translation, lambda f: f(*args, **kwargs), use_compile)


#: Whether ``--tune`` asked for each program's launch configurations to be
#: measured (``IRC_TUNE=measure``) after it is timed with the cost model's.
TUNE = False


def time_tuned(
    row: dict[str, Any],
    compiled: irc.Compiled,
    run: Callable[[], Any],
    backend: str = "triton",
) -> None:
    """Fill ``row`` with the time of ``run`` (a call of ``compiled``) once
    its launch configurations are measured (docs/lowering.md, "Launch
    configurations"): ``irc_tuned_ms``, the calls the measurement took and
    the configuration each kernel chose per bucket."""
    from irc.runtime import triton_backend

    module = triton_backend.load_source(
        compiled.triton_source, interpret=backend == "interpret"
    )
    tuner = module._IRC_TUNER
    previous = os.environ.get("IRC_TUNE")
    os.environ["IRC_TUNE"] = "measure"
    try:
        with tuner.lock:
            tuner.chosen.clear()
        calls = 0
        while calls == 0 or tuner.trials:
            run()
            calls += 1
            if calls > 1000:
                raise RuntimeError("the measurement did not decide in 1000 calls")
    finally:
        if previous is None:
            del os.environ["IRC_TUNE"]
        else:
            os.environ["IRC_TUNE"] = previous
    row["irc_tuned_ms"] = bench(run)
    row["tuning_calls"] = calls
    row["launch_configurations"] = {
        kernel: {str(list(buckets)): list(config) for buckets, config in chosen.items()}
        for kernel, chosen in compiled.launch_configurations(backend).items()
    }


def time_torch(
    row: dict[str, Any],
    function: Callable[..., Any],
    call: Callable[[Callable[..., Any]], Any],
    use_compile: bool,
) -> None:
    """Fill ``row`` with the times of ``call(function)``, eagerly and with
    ``function`` through ``torch.compile`` (unless not ``use_compile``)."""
    import torch

    row["eager_ms"] = bench(lambda: call(function))
    if not use_compile:
        row["compiled_error"] = "skipped (time budget or --no-compile)"
        return
    try:
        inductor = torch.compile(function, dynamic=False)
        _, row["torch_compile_s"] = timed(lambda: call(inductor))
        row["compiled_ms"] = bench(lambda: call(inductor))
    except Exception as error:
        row["compiled_error"] = f"{type(error).__name__}: {error}"
        traceback.print_exc()


# --------------------------------------------------------------------------
# Training steps: the losses of benchmarks/autodiff.py, forward and backward
# --------------------------------------------------------------------------

#: The losses' symbolic dims at benchmark scale: 4096 rows (tokens; the
#: attention's positions) and, for the cross-entropy, 32,000 classes.
TRAINING_SIZES = {"B": 4096, "T": 4096, "V": 32000}
#: Gradients sum thousands of float32 products in another order than torch,
#: so an element whose exact value is near 0 (a difference of large terms)
#: differs by float32's rounding at its gradient's scale, not its own: the
#: absolute tolerance is relative to each array's largest magnitude
#: (``scaled_atol``). Measured on the GPT-2 block's step at T = 12, against
#: float64: irc's and torch's float32 gradients each err by up to 2.3e-5 of
#: their array's largest element (irc less than torch on every array).
TRAINING_TOLERANCE = (2e-3, 1e-4)


def training_losses() -> dict[str, Any]:
    """``benchmarks/autodiff.py``'s losses (imported here: it imports this
    module for the float32 GPT-2 block)."""
    import autodiff

    return autodiff.LOSSES


def run_training(name: str, use_compile: bool) -> list[dict[str, Any]]:
    """One loss's training step (its value and the gradients of its
    ``argnums``) timed for irc's ``value_and_grad`` (one joint program),
    eager torch autograd and ``torch.compile`` (AOTAutograd's forward and
    backward); one row."""
    import autodiff
    import torch

    from irc.runtime import triton_backend

    loss = training_losses()[name]
    row: dict[str, Any] = {
        "program": f"{name} step",
        "sizes": _used_sizes(loss.specs, TRAINING_SIZES),
        "flops": 3 * _forward_flops(name, TRAINING_SIZES),
    }
    function, arguments, wrt = autodiff.torch_loss(
        name, TRAINING_SIZES, device="cuda", dynamic=False
    )
    detached = pytree.map_leaves(lambda leaf: leaf.detach(), arguments)

    def step(loss_function: Callable[..., Any]) -> list[Any]:
        value = loss_function(*arguments)
        return [value.detach(), *torch.autograd.grad(value, wrt)]

    expected = step(function)
    try:  # a failing step is a result: torch's times are still taken
        start = time.perf_counter()
        compiled = irc.compile(
            irc.value_and_grad(loss.function, loss.argnums), *loss.specs
        )
        module = triton_backend.load_source(compiled.triton_source, interpret=False)
        row["irc_compile_s"] = time.perf_counter() - start
        row["kernels"] = compiled.num_kernels
        launcher = getattr(module, module.ENTRY)
        tensors = tensor_leaves(compiled, suite.Call(tuple(detached), {}))
        row["bytes"] = nbytes(tensors) + nbytes(expected)
        got, row["irc_first_call_s"] = timed(
            lambda: compiled(*detached, backend="triton")
        )
        row["max_abs_error"], row["matches_torch"] = max_error(
            pytree.flatten(got)[0], expected, TRAINING_TOLERANCE, scaled_atol=True
        )
        row["irc_ms"] = bench(lambda: launcher(*tensors))
        row["irc_call_ms"] = bench(lambda: compiled(*detached, backend="triton"))
    except Exception as error:
        row["irc_error"] = f"{type(error).__name__}: {error}"
        traceback.print_exc()
    time_torch(row, function, step, use_compile)
    print(summary_line(row), flush=True)
    return [row]


def _used_sizes(specs: Any, sizes: Mapping[str, int]) -> dict[str, int]:
    """The entries of ``sizes`` that ``specs`` use."""
    used = {
        dim
        for leaf in pytree.flatten(specs)[0]
        for dim in leaf.shape
        if isinstance(dim, str)
    }
    return {name: value for name, value in sizes.items() if name in used}


def _forward_flops(name: str, sizes: Mapping[str, int]) -> float:
    """The forward's matmul FLOPs of loss ``name`` (a step's are about three
    times as many: the backward takes two matmuls per forward one); 0 for
    the losses without matmuls."""
    import autodiff

    if name == "mlp":
        return 2.0 * 2 * sizes["B"] * autodiff.D_MODEL * autodiff.D_HIDDEN
    if name == "attention":
        return 4.0 * sizes["T"] * sizes["T"] * autodiff.HEAD_DIM
    if name == "gpt2_block":
        return _block_flops({"seq": sizes["T"]}, autodiff.BLOCK_WIDTH)
    return 0.0


# --------------------------------------------------------------------------
# The torch backend's models: one training step through torch.compile
# --------------------------------------------------------------------------

#: A training step's batch and sequence length (GPT-2's config has 16
#: positions); the models are ``irc.testing.models``' small configs, so the
#: step times are mostly launch and framework overhead.
MODEL_STEP = (8, 16)
MODEL_COLUMNS = (
    ("model", "program"),
    ("batch, seq", "sizes"),
    ("irc kernels", "kernels"),
    ("inductor kernels", "inductor_kernels"),
    ("irc compile s", "irc_compile_s"),
    ("inductor compile s", "torch_compile_s"),
    ("irc ms", "irc_ms"),
    ("eager ms", "eager_ms"),
    ("compiled ms", "compiled_ms"),
    ("vs eager", "speedup_eager"),
    ("vs compiled", "speedup_compiled"),
    ("loss |err|", "max_abs_error"),
    ("ok", "matches_torch"),
)


def run_model(
    name: str, use_compile: bool, device: str = "cuda"
) -> list[dict[str, Any]]:
    """One training step (the model's loss, its backward, an SGD step) of
    model ``name`` on ``device``: ``torch.compile(backend="irc")`` (kernels
    on the GPU, ``runtime="auto"``; irc's NumPy interpreter on the CPU, for
    ``--check``), eager, and Inductor (skipped when not ``use_compile``).
    Each builds the same seeded model; the first step's loss is compared
    with eager's, and its seconds less a steady step's are the compile
    time."""
    import torch

    import irc.torch
    from irc.testing.models import build, example

    runtime = "auto" if device == "cuda" else "reference"
    x = example(name, *MODEL_STEP).to(device)
    row: dict[str, Any] = {
        "program": name,
        "sizes": dict(zip(("batch", "seq"), MODEL_STEP)),
    }
    backends = ("irc", "eager", "compiled") if use_compile else ("irc", "eager")
    first_losses: dict[str, float] = {}
    for backend in backends:
        torch._dynamo.reset()
        irc.torch.counters.clear()
        model = build(name, head=True).to(device).train()
        if backend == "compiled":
            from torch._inductor import metrics

            metrics.reset()  # its kernel count is per process otherwise
        if backend == "irc":
            forward = torch.compile(
                model, backend="irc", dynamic=True, options={"runtime": runtime}
            )
        elif backend == "compiled":
            forward = torch.compile(model, dynamic=True)
        else:
            forward = model
        try:
            first_losses[backend] = _model_steps(name, backend, forward, model, x, row)
        except Exception as error:  # a failing backend is a result: go on
            row[f"{backend}_error"] = f"{type(error).__name__}: {error}"
            traceback.print_exc()
        if backend == "irc":
            row["kernels"] = irc.torch.counters["kernels"]
        elif backend == "compiled":
            from torch._inductor import metrics

            row["inductor_kernels"] = metrics.generated_kernel_count
    if "irc" in first_losses and "eager" in first_losses:
        error = abs(first_losses["irc"] - first_losses["eager"])
        row["max_abs_error"] = error
        row["matches_torch"] = error <= 1e-3 * max(1.0, abs(first_losses["eager"]))
    print(summary_line(row, MODEL_COLUMNS), flush=True)
    return [row]


def _model_steps(
    name: str,
    backend: str,
    forward: Any,
    model: Any,
    x: Any,
    row: dict[str, Any],
) -> float:
    """Time ``backend``'s training step into ``row``; returns the first
    step's loss."""
    import torch

    from irc.testing.models import loss

    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step() -> Any:
        value = loss(forward, x)
        value.backward()
        optimizer.step()
        optimizer.zero_grad()
        return value.detach()

    first, first_s = timed(step)
    row[f"{backend}_ms"] = bench(step)
    if backend != "eager":
        key = "irc_compile_s" if backend == "irc" else "torch_compile_s"
        row[key] = first_s - row[f"{backend}_ms"] * 1e-3
    return float(first)


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

COLUMNS = (
    ("program", "program"),
    ("sizes", "sizes"),
    ("kernels", "kernels"),
    ("irc ms", "irc_ms"),
    ("irc call ms", "irc_call_ms"),
    ("irc tuned ms", "irc_tuned_ms"),
    ("eager ms", "eager_ms"),
    ("compiled ms", "compiled_ms"),
    ("irc GB/s", "irc_gbs"),
    ("eager GB/s", "eager_gbs"),
    ("compiled GB/s", "compiled_gbs"),
    ("irc TFLOP/s", "irc_tflops"),
    ("vs eager", "speedup_eager"),
    ("vs compiled", "speedup_compiled"),
    ("max |err|", "max_abs_error"),
    ("ok", "matches_torch"),
)


def derived(row: dict[str, Any]) -> dict[str, Any]:
    """GB/s, TFLOP/s and speed-ups from a row's times."""
    out = dict(row)
    for kind in ("irc", "eager", "compiled"):
        ms = row.get(f"{kind}_ms")
        if ms and row.get("bytes"):
            out[f"{kind}_gbs"] = row["bytes"] / (ms * 1e-3) / 1e9
    if row.get("irc_ms"):
        if row.get("flops"):
            out["irc_tflops"] = row["flops"] / (row["irc_ms"] * 1e-3) / 1e12
        for kind in ("eager", "compiled"):
            if row.get(f"{kind}_ms"):
                out[f"speedup_{kind}"] = row[f"{kind}_ms"] / row["irc_ms"]
    return out


def cell(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if key == "sizes":
        return " ".join(f"{k}={v}" for k, v in value.items())
    if key == "matches_torch":
        return "yes" if value else "NO"
    if key == "max_abs_error":
        return f"{value:.1e}"
    if key.startswith("speedup"):
        return f"{value:.2f}x"
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:.0f}"
    return str(value)


Columns = Sequence[tuple[str, str]]


#: What failed in a row, by implementation.
ERROR_KEYS = ("irc_error", "eager_error", "compiled_error")


def _errors(row: Mapping[str, Any]) -> list[str]:
    return [row[k] for k in ERROR_KEYS if k in row]


def summary_line(row: dict[str, Any], columns: Columns = COLUMNS) -> str:
    row = derived(row)
    parts = [f"{title}={cell(key, row.get(key))}" for title, key in columns]
    return "  ".join(parts + _errors(row))


def markdown(
    rows: Sequence[dict[str, Any]], header: str, columns: Columns = COLUMNS
) -> str:
    lines = [header, "", "| " + " | ".join(t for t, _ in columns) + " |"]
    lines.append("|" + "---|" * len(columns))
    for row in map(derived, rows):
        lines.append("| " + " | ".join(cell(k, row.get(k)) for _, k in columns) + " |")
    errors = [
        f"- {row['program']} {cell('sizes', row['sizes'])}: {error}"
        for row in rows
        for error in _errors(row)
        if not error.startswith("skipped")
    ]
    if errors:
        lines += ["", "Errors:", "", *errors]
    return "\n".join(lines) + "\n"


def machine() -> dict[str, Any]:
    import torch
    import triton

    return {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": sys.version.split()[0],
    }


# --------------------------------------------------------------------------
# The CPU check of the translations
# --------------------------------------------------------------------------


def check_translations() -> int:
    """Each torch translation against its NumPy program, on the CPU, at the
    suite's small sizes; returns the number of mismatches."""
    import torch

    translations = torch_translations()
    failures = 0
    for program in programs(small=True):
        call = program.make(program.small, Factory(None))
        expected = program.function(*call.args, **call.kwargs)
        tensors = pytree.map_leaves(
            lambda leaf: (
                torch.from_numpy(leaf) if isinstance(leaf, np.ndarray) else leaf
            ),
            (list(call.args), dict(call.kwargs)),
        )
        got = translations[program.name](*tensors[0], **tensors[1])
        failures += not _agrees(program.name, as_list(got), as_list(expected))
        suite_function = suite.SUITE[program.name].function
        if program.function is not suite_function:
            # A float32 variant: the same values as the suite's program.
            np.testing.assert_allclose(
                program.function(*call.args, **call.kwargs),
                suite_function(*call.args, **call.kwargs),
                rtol=1e-4,
                atol=1e-5,
            )
    return failures


def check_training_translations() -> int:
    """Each loss's torch translation, value and gradients by autograd,
    against irc's ``value_and_grad`` of its NumPy loss (reference
    interpreter), on the CPU at ``autodiff.TORCH_SIZES``; returns the
    number of mismatches."""
    import autodiff
    import torch

    failures = 0
    for name, loss in training_losses().items():
        torch.manual_seed(0)
        function, arguments, wrt = autodiff.torch_loss(name, dynamic=False)
        value = function(*arguments)
        expected = [value, *torch.autograd.grad(value, wrt)]
        arrays = pytree.map_leaves(lambda leaf: leaf.detach().numpy(), arguments)
        step = irc.compile(irc.value_and_grad(loss.function, loss.argnums), *loss.specs)
        got = pytree.flatten(step(*arrays, backend="reference"))[0]
        failures += not _agrees(
            f"{name} step",
            got,
            [e.detach().numpy() for e in expected],
            TRAINING_TOLERANCE,
            scaled_atol=True,
        )
    return failures


def check_models() -> int:
    """One training step of every model through irc (its NumPy
    interpreter) and eagerly, on the CPU, by ``run_model``: the first
    losses must agree; returns the number of mismatches."""
    from irc.testing.models import MODELS

    failures = 0
    for name in MODELS:
        (row,) = run_model(name, use_compile=False, device="cpu")
        failures += not row.get("matches_torch", False)
    return failures


def _agrees(
    name: str,
    got: Sequence[Any],
    expected: Sequence[Any],
    tolerance: tuple[float, float] = (1e-5, 1e-5),
    scaled_atol: bool = False,
) -> bool:
    """Whether each of ``got`` equals its ``expected`` (values within
    ``tolerance``, rtol and atol, ``atol`` times the array's largest
    magnitude with ``scaled_atol``; dtypes alike); prints the verdict."""
    if len(got) != len(expected):
        print(f"{name}: MISMATCH {len(got)} results, expected {len(expected)}")
        return False
    for g, e in zip(got, expected):
        g = g.numpy() if hasattr(g, "numpy") else np.asarray(g)
        try:
            rtol, atol = tolerance
            largest = float(np.max(np.abs(e))) if np.size(e) else 0.0
            np.testing.assert_allclose(
                g, e, rtol=rtol, atol=atol * _scale(largest, scaled_atol)
            )
            assert g.dtype == np.asarray(e).dtype, (
                f"dtype {g.dtype} != {np.asarray(e).dtype}"
            )
        except AssertionError as error:
            print(f"{name}: MISMATCH {error}")
            return False
    print(f"{name}: ok")
    return True


#: The sections of a run: each runs its names, one row per size.
SECTIONS = ("suite", "training", "models")


def section_names(section: str) -> list[str]:
    from irc.testing.models import MODELS

    if section == "suite":
        return [p.name for p in programs()]
    if section == "training":
        return list(training_losses())
    return list(MODELS)


def run_section(
    section: str, names: Sequence[str], options: argparse.Namespace
) -> Iterator[dict[str, Any]]:
    """The rows of every name of ``section`` in ``names``, as they are
    measured, each marked with its section; torch.compile is skipped once
    ``options.budget`` seconds have passed since ``STARTED``, and everything
    once ``options.limit`` have."""
    translations = torch_translations()
    suite_programs = {p.name: p for p in programs()}
    for name in names:
        elapsed = time.perf_counter() - STARTED
        if elapsed > options.limit:
            skipped = f"skipped (the time limit, {options.limit:.0f} s, was spent)"
            yield {
                "program": name,
                "sizes": {},
                "irc_error": skipped,
                "section": section,
            }
            continue
        use_compile = not options.no_compile and elapsed < options.budget
        try:
            if section == "suite":
                found = run_program(
                    suite_programs[name], translations[name], use_compile
                )
            elif section == "training":
                found = run_training(name, use_compile)
            else:
                found = run_model(name, use_compile)
        except Exception as error:  # report it, go on
            traceback.print_exc()
            found = [{"program": name, "sizes": {}, "irc_error": f"{error!r}"}]
        for row in found:
            yield {**row, "section": section}


TITLES = {
    "suite": "The suite's programs",
    "training": "Training steps (benchmarks/autodiff.py's losses, value and gradients)",
    "models": "The torch backend's models: one training step (loss, backward, SGD)",
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, help="write JSON here and markdown beside it (.md)"
    )
    parser.add_argument(
        "--sections",
        nargs="*",
        choices=SECTIONS,
        default=SECTIONS,
        help="what to run (default all): the suite's programs, the training "
        "steps, the torch backend's models",
    )
    parser.add_argument(
        "--only", nargs="*", default=(), help="programs, losses or models to run"
    )
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument(
        "--budget",
        type=float,
        default=330.0,
        help="seconds after which the remaining programs skip torch.compile",
    )
    parser.add_argument(
        "--limit",
        type=float,
        default=540.0,
        help="seconds after which the remaining programs are skipped",
    )
    parser.add_argument(
        "--check-translations",
        "--check",
        action="store_true",
        help="check on the CPU, and exit: the torch translations against "
        "NumPy and irc, and one training step of each model through irc",
    )
    parser.add_argument(
        "--tune",
        action="store_true",
        help="also time each suite program after measuring its launch "
        "configurations (IRC_TUNE=measure), beside the cost model's",
    )
    options = parser.parse_args(argv)
    global TUNE
    TUNE = options.tune

    if options.check_translations:
        failures = check_translations() + check_training_translations()
        sys.exit(1 if failures + check_models() else 0)
    try:
        import torch
        import triton  # noqa: F401
    except ImportError as error:
        sys.exit(f"benchmarks/gpu.py needs torch and triton: {error}")
    if not torch.cuda.is_available():
        sys.exit(
            "benchmarks/gpu.py needs a CUDA GPU, and torch sees none "
            "(torch.cuda.is_available() is False); nothing was measured. "
            "On a CPU-only machine, run benchmarks/compile_time.py, or this script "
            "with --check."
        )
    chosen = {
        section: [
            n for n in section_names(section) if not options.only or n in options.only
        ]
        for section in options.sections
    }
    known = {n for section in SECTIONS for n in section_names(section)}
    unknown = set(options.only) - known
    if unknown:
        sys.exit(f"unknown names: {sorted(unknown)}; choose from {sorted(known)}")
    info = machine()
    print(f"{info['gpu']}, torch {info['torch']}, triton {info['triton']}", flush=True)
    rows: list[dict[str, Any]] = []
    for section, names in chosen.items():
        for row in run_section(section, names, options):
            rows.append(row)
            # Written after every row: a run stopped from outside keeps them.
            report(rows, list(chosen), info, options.out)
    table = report(rows, list(chosen), info, options.out)
    print("\n" + table)
    if options.out:
        print(f"wrote {options.out} and {options.out.with_suffix('.md')}")


def report(
    rows: Sequence[dict[str, Any]],
    sections: Sequence[str],
    info: Mapping[str, Any],
    out: Path | None,
) -> str:
    """The tables of ``rows`` so far, one per section, also written to
    ``out`` (JSON) and beside it (markdown) when given."""
    elapsed = time.perf_counter() - STARTED
    tables = [
        f"irc vs torch on {info['gpu']} (torch {info['torch']}, triton "
        f"{info['triton']}), float32, median of triton.testing.do_bench; "
        f"{elapsed:.0f} s in all"
    ]
    for section in sections:
        columns = MODEL_COLUMNS if section == "models" else COLUMNS
        mine = [row for row in rows if row["section"] == section]
        tables.append(markdown(mine, f"### {TITLES[section]}", columns))
    table = "\n\n".join(tables)
    if out:
        results = {
            "machine": info,
            "seconds": elapsed,
            "rows": list(map(derived, rows)),
        }
        out.write_text(json.dumps(results, indent=2, default=str) + "\n")
        out.with_suffix(".md").write_text(table)
    return table


if __name__ == "__main__":
    main()
