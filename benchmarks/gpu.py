"""irc against torch on a CUDA GPU, for every program of the test suite.

For each NumPy program of ``tests/suite_programs.py`` at realistic sizes
(4096 rows of 1024 and 4096 features; 4096 x 1024 x 4096 matmuls; a GPT-2
small block over 1024 tokens) this times, with ``triton.testing.do_bench``:

- ``irc``: the emitted launcher of ``irc.compile``'s program (its kernels
  plus the launcher's own Python: binding, guards, allocation, launches);
- ``irc call``: the same through ``Compiled.__call__(..., backend="triton")``
  (plus irc's argument checks);
- ``eager`` and ``compiled``: a line-by-line torch translation of the same
  NumPy program, run eagerly and through ``torch.compile`` (Inductor).

It reports milliseconds, achieved GB/s (bytes of the inputs and outputs over
the time; for the embedding, the rows read rather than the whole tables),
TFLOP/s for the matmul programs, compile times, and the largest difference
between irc's results and torch's eager ones. Everything is float32 (as the
suite is); irc's matmuls use ``input_precision="ieee"`` and torch's default
keeps TF32 off, so both compute true float32 products.

    python benchmarks/gpu.py                       # all programs
    python benchmarks/gpu.py --out results.json    # and results.json + .md
    python benchmarks/gpu.py --only softmax mlp    # some programs
    python benchmarks/gpu.py --check-translations  # CPU: torch vs NumPy

It needs a CUDA GPU (and exits with a message saying so without one),
except ``--check-translations``, which checks on the CPU at small sizes that
each torch translation computes what its NumPy program does. A full run
is sized for well under 8 minutes on an H200, most of it in torch.compile;
once ``--budget`` seconds have passed, the remaining programs skip
torch.compile.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# Compile times are of compiling, not of reading irc's on-disk cache.
os.environ.setdefault("IRC_CACHE", "0")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import programs as gpt2
import suite_programs as suite

import irc
from irc import pytree

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
    got: Any, expected: Any, tolerance: tuple[float, float]
) -> tuple[float, bool]:
    """The largest absolute difference and whether every element is within
    ``atol + rtol * |expected|``."""
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
        ok &= bool(torch.all(difference <= atol + rtol * e.abs()))
    return worst, ok


def bench(function: Callable[[], Any]) -> float:
    import triton.testing

    return float(
        triton.testing.do_bench(function, warmup=25, rep=100, return_mode="median")
    )


def timed(function: Callable[[], Any]) -> tuple[Any, float]:
    import torch

    start = time.perf_counter()
    result = function()
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
    import torch

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
    except Exception as error:  # a failing program is a result: go on
        row["irc_error"] = f"{type(error).__name__}: {error}"
        traceback.print_exc()
    row["eager_ms"] = bench(lambda: translation(*args, **kwargs))
    if not use_compile:
        row["compiled_error"] = "skipped (time budget or --no-compile)"
        return
    try:
        inductor = torch.compile(translation, dynamic=False)
        _, row["torch_compile_s"] = timed(lambda: inductor(*args, **kwargs))
        row["compiled_ms"] = bench(lambda: inductor(*args, **kwargs))
    except Exception as error:
        row["compiled_error"] = f"{type(error).__name__}: {error}"
        traceback.print_exc()


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

COLUMNS = (
    ("program", "program"),
    ("sizes", "sizes"),
    ("kernels", "kernels"),
    ("irc ms", "irc_ms"),
    ("irc call ms", "irc_call_ms"),
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
        if ms:
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


def summary_line(row: dict[str, Any]) -> str:
    row = derived(row)
    parts = [f"{title}={cell(key, row.get(key))}" for title, key in COLUMNS]
    errors = [row[k] for k in ("irc_error", "compiled_error") if k in row]
    return "  ".join(parts + errors)


def markdown(rows: Sequence[dict[str, Any]], header: str) -> str:
    lines = [header, "", "| " + " | ".join(t for t, _ in COLUMNS) + " |"]
    lines.append("|" + "---|" * len(COLUMNS))
    for row in map(derived, rows):
        lines.append("| " + " | ".join(cell(k, row.get(k)) for _, k in COLUMNS) + " |")
    errors = [
        f"- {row['program']} {cell('sizes', row['sizes'])}: {row[k]}"
        for row in rows
        for k in ("irc_error", "compiled_error")
        if k in row and not row[k].startswith("skipped")
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
        for g, e in zip(as_list(got), as_list(expected)):
            try:
                np.testing.assert_allclose(g.numpy(), e, rtol=1e-5, atol=1e-5)
                assert g.numpy().dtype == np.asarray(e).dtype, (
                    f"dtype {g.numpy().dtype} != {np.asarray(e).dtype}"
                )
            except AssertionError as error:
                failures += 1
                print(f"{program.name}: MISMATCH {error}")
                break
        else:
            print(f"{program.name}: ok")
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


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, help="write JSON here and markdown beside it (.md)"
    )
    parser.add_argument(
        "--only", nargs="*", default=(), help="programs to run (default all)"
    )
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument(
        "--budget",
        type=float,
        default=300.0,
        help="seconds after which the remaining programs skip torch.compile",
    )
    parser.add_argument(
        "--check-translations",
        action="store_true",
        help="check the torch translations against NumPy on the CPU, and exit",
    )
    options = parser.parse_args(argv)

    if options.check_translations:
        sys.exit(1 if check_translations() else 0)
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
            "with --check-translations."
        )

    translations = torch_translations()
    selected = [p for p in programs() if not options.only or p.name in options.only]
    unknown = set(options.only) - {p.name for p in programs()}
    if unknown:
        sys.exit(
            f"unknown programs: {sorted(unknown)}; choose from {sorted(suite.SUITE)}"
        )
    info = machine()
    print(f"{info['gpu']}, torch {info['torch']}, triton {info['triton']}", flush=True)
    start = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for program in selected:
        use_compile = (
            not options.no_compile and time.perf_counter() - start < options.budget
        )
        try:
            rows += run_program(program, translations[program.name], use_compile)
        except Exception as error:  # report it, go on
            traceback.print_exc()
            rows.append(
                {
                    "program": program.name,
                    "sizes": program.sizes[0],
                    "irc_error": f"{type(error).__name__}: {error}",
                    "bytes": 0,
                }
            )
    elapsed = time.perf_counter() - start
    header = (
        f"irc vs torch on {info['gpu']} (torch {info['torch']}, triton "
        f"{info['triton']}), float32, median of triton.testing.do_bench; "
        f"{elapsed:.0f} s in all"
    )
    table = markdown(rows, header)
    print("\n" + table)
    if options.out:
        results = {
            "machine": info,
            "seconds": elapsed,
            "rows": [derived(r) for r in rows],
        }
        options.out.write_text(json.dumps(results, indent=2, default=str) + "\n")
        options.out.with_suffix(".md").write_text(table)
        print(f"wrote {options.out} and {options.out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
