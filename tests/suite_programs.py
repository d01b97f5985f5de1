"""A suite of small NumPy programs that exercise each kind of fused kernel.

Each entry of ``SUITE`` says everything a test needs to compile and run it:
the plain NumPy ``function``, ``specs()`` giving the ``TensorSpec`` and
static arguments ``irc.compile`` takes, ``inputs(rng, **sizes)`` giving
concrete NumPy arguments for one binding of the symbols (small by default,
so that interpreters run them quickly), and ``kernels``, the number of
``fusion.kernel`` ops the ``fuse`` pass is expected to form (the reason is
in ``note``). The functions are ordinary NumPy: calling one on the arrays
``inputs`` returns the expected results.

    program = SUITE["softmax"]
    compiled = program.compile()
    call = program.inputs(np.random.default_rng(0))
    np.testing.assert_allclose(
        compiled(*call.args, **call.kwargs, backend="reference"),
        program.function(*call.args, **call.kwargs),
        rtol=1e-5,
    )
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np
import programs

import irc
from irc import pytree

F32 = "float32"


class Call(NamedTuple):
    """Positional and keyword arguments of one call (specs or arrays)."""

    args: tuple[Any, ...]
    kwargs: Mapping[str, Any] = MappingProxyType({})

    def to_torch(self) -> Call:
        """The same call with every NumPy array a torch CPU tensor."""
        import torch

        def convert(leaf: Any) -> Any:
            if isinstance(leaf, np.ndarray):
                return torch.from_numpy(np.ascontiguousarray(leaf))
            return leaf

        args, kwargs = pytree.map_leaves(convert, (list(self.args), dict(self.kwargs)))
        return Call(tuple(args), kwargs)


class SuiteProgram(NamedTuple):
    """One program of the suite and how to compile, feed and check it."""

    function: Callable[..., Any]
    #: The arguments for ``irc.compile``: TensorSpecs and static values.
    specs: Callable[[], Call]
    #: ``inputs(rng, **sizes)``: concrete arguments (arrays and the same
    #: static values) for the binding ``sizes`` (defaults are small).
    inputs: Callable[..., Call]
    #: How many ``fusion.kernel`` ops ``fuse`` forms.
    kernels: int
    #: Why that many.
    note: str

    def compile(self, **options: Any) -> irc.Compiled:
        """``irc.compile`` of the function on its specs (``options`` such as
        ``pipeline`` are passed on)."""
        call = self.specs()
        return irc.compile(self.function, *call.args, **options, **call.kwargs)


def _normal(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _spec(*dims: int | str, dtype: str = F32) -> irc.TensorSpec:
    return irc.TensorSpec(dims, dtype)


# --------------------------------------------------------------------------
# Elementwise and row-wise programs
# --------------------------------------------------------------------------


def elementwise_broadcast(x, y, z):
    """NumPy broadcasting of [N, D] with [1, D] and [N, 1] operands."""
    return np.where(x > z, x * y, np.tanh(x - z)) + 1.5 * y


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def layer_norm(x, g, b):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(variance + 1e-5) + b


def rms_norm(x, g):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g


def log_softmax(x):
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


def logsumexp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return m + np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


def l2_normalize(x):
    return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + 1e-12)


def cross_entropy(logits, labels):
    """Mean negative log-likelihood of integer labels."""
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
    onehot = labels[:, None] == np.arange(logits.shape[-1])
    return -np.mean(np.sum(np.where(onehot, logp, 0.0), axis=-1))


def _rows(rng: np.random.Generator, N: int = 3, D: int = 8) -> np.ndarray:
    return _normal(rng, N, D, scale=2.0)


def _row_program(function: Callable[..., Any], note: str) -> SuiteProgram:
    """A program of one [N, D] argument."""
    return SuiteProgram(
        function,
        lambda: Call((_spec("N", "D"),)),
        lambda rng, N=3, D=8: Call((_rows(rng, N, D),)),
        1,
        note,
    )


# --------------------------------------------------------------------------
# Matmul programs
# --------------------------------------------------------------------------

D_MODEL, D_HIDDEN = 16, 32


def gelu(x):
    """tanh-GELU; Python-float constants keep float32 float32 (NEP 50)."""
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def gelu_linear(x, w, b):
    return gelu(x @ w + b)


def mlp(x, w1, b1, w2, b2):
    return gelu(x @ w1 + b1) @ w2 + b2


def swiglu(x, w_gate, w_up, w_down):
    gate = x @ w_gate
    return (gate / (1 + np.exp(-gate)) * (x @ w_up)) @ w_down


def causal_attention(q, k, v):
    """One head: masked scaled dot-product attention."""
    scores = q @ k.T * q.shape[-1] ** -0.5
    scores = np.where(np.tri(q.shape[0]) == 0, -1e9, scores)
    return softmax(scores) @ v


# --------------------------------------------------------------------------
# Layout programs
# --------------------------------------------------------------------------

N_HEADS, HEAD_DIM = 12, 64
ROTARY_DIM = 16
VOCAB, MAX_POSITIONS = 50, 32


def head_split(x):
    return x.reshape(x.shape[0], N_HEADS, HEAD_DIM).transpose(1, 0, 2)


def rotary(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[:, half:], x[:, :half]], axis=-1)
    return x * cos + rotated * sin


def embedding(ids, wte, wpe):
    return wte[ids] + wpe[: ids.shape[0]]


def adam_step(p, g, m, v):
    """Adam's update with its constants baked in; returns the new state."""
    m_new = 0.9 * m + 0.1 * g
    v_new = 0.999 * v + 0.001 * g * g
    p_new = p - 1e-3 * m_new / (np.sqrt(v_new) + 1e-8)
    return p_new, m_new, v_new


# --------------------------------------------------------------------------
# The GPT-2 block of tests/programs.py
# --------------------------------------------------------------------------


def _linear_specs(n_in: int, n_out: int) -> dict[str, irc.TensorSpec]:
    return {"w": _spec(n_in, n_out), "b": _spec(n_out)}


def _block_specs() -> Call:
    n = programs.N_EMBD
    norm = {"g": _spec(n), "b": _spec(n)}
    return Call(
        (_spec("seq", n),),
        {
            "mlp": {
                "c_fc": _linear_specs(n, 4 * n),
                "c_proj": _linear_specs(4 * n, n),
            },
            "attn": {
                "c_attn": _linear_specs(n, 3 * n),
                "c_proj": _linear_specs(n, n),
            },
            "ln_1": norm,
            "ln_2": dict(norm),
            "n_head": programs.N_HEAD,
        },
    )


def _block_inputs(rng: np.random.Generator, seq: int = 5) -> Call:
    x = _normal(rng, seq, programs.N_EMBD)
    return Call((x,), {**programs.weights(rng), "n_head": programs.N_HEAD})


# --------------------------------------------------------------------------
# The suite
# --------------------------------------------------------------------------

SUITE: dict[str, SuiteProgram] = {
    "elementwise_broadcast": SuiteProgram(
        elementwise_broadcast,
        lambda: Call((_spec("N", "D"), _spec(1, "D"), _spec("N", 1))),
        lambda rng, N=3, D=8: Call(
            (_normal(rng, N, D), _normal(rng, 1, D), _normal(rng, N, 1))
        ),
        1,
        "elementwise ops and broadcasts of size-1 dims fuse into one pointwise kernel",
    ),
    "softmax": _row_program(
        softmax, "max and sum share the row structure: one reduction kernel"
    ),
    "layer_norm": SuiteProgram(
        layer_norm,
        lambda: Call((_spec("N", "D"), _spec("D"), _spec("D"))),
        lambda rng, N=3, D=8: Call(
            (_rows(rng, N, D), _normal(rng, D), _normal(rng, D))
        ),
        1,
        "mean and variance are reductions of the same rows: one kernel",
    ),
    "rms_norm": SuiteProgram(
        rms_norm,
        lambda: Call((_spec("N", "D"), _spec("D"))),
        lambda rng, N=3, D=8: Call((_rows(rng, N, D), _normal(rng, D))),
        1,
        "one row reduction and its elementwise epilogue",
    ),
    "log_softmax": _row_program(
        log_softmax, "max and sum share the row structure: one reduction kernel"
    ),
    "logsumexp": _row_program(
        logsumexp, "max and sum share the row structure; the result is [N, 1]"
    ),
    "l2_normalize": _row_program(
        l2_normalize, "one row reduction broadcast back onto its rows"
    ),
    "cross_entropy": SuiteProgram(
        cross_entropy,
        lambda: Call((_spec("N", "V"), _spec("N", dtype="int64"))),
        lambda rng, N=4, V=10: Call(
            (_rows(rng, N, V), rng.integers(0, V, N).astype(np.int64))
        ),
        2,
        "the row reductions over V (max, sum, picking the label) form one "
        "kernel; the mean over N reduces other rows, so it is a second one",
    ),
    "gelu_linear": SuiteProgram(
        gelu_linear,
        lambda: Call((_spec("N", D_MODEL), _spec(D_MODEL, D_HIDDEN), _spec(D_HIDDEN))),
        lambda rng, N=5: Call(
            (
                _normal(rng, N, D_MODEL),
                _normal(rng, D_MODEL, D_HIDDEN, scale=0.3),
                _normal(rng, D_HIDDEN, scale=0.1),
            )
        ),
        1,
        "bias and GELU are the matmul's elementwise epilogue",
    ),
    "mlp": SuiteProgram(
        mlp,
        lambda: Call(
            (
                _spec("N", D_MODEL),
                _spec(D_MODEL, D_HIDDEN),
                _spec(D_HIDDEN),
                _spec(D_HIDDEN, D_MODEL),
                _spec(D_MODEL),
            )
        ),
        lambda rng, N=5: Call(
            (
                _normal(rng, N, D_MODEL),
                _normal(rng, D_MODEL, D_HIDDEN, scale=0.3),
                _normal(rng, D_HIDDEN, scale=0.1),
                _normal(rng, D_HIDDEN, D_MODEL, scale=0.2),
                _normal(rng, D_MODEL, scale=0.1),
            )
        ),
        2,
        "one matmul + epilogue kernel per layer: GELU cannot be a prologue of "
        "the second matmul, whose operand side takes layout ops and casts only",
    ),
    "swiglu": SuiteProgram(
        swiglu,
        lambda: Call(
            (
                _spec("N", D_MODEL),
                _spec(D_MODEL, D_HIDDEN),
                _spec(D_MODEL, D_HIDDEN),
                _spec(D_HIDDEN, D_MODEL),
            )
        ),
        lambda rng, N=5: Call(
            (
                _normal(rng, N, D_MODEL),
                _normal(rng, D_MODEL, D_HIDDEN, scale=0.3),
                _normal(rng, D_MODEL, D_HIDDEN, scale=0.3),
                _normal(rng, D_HIDDEN, D_MODEL, scale=0.2),
            )
        ),
        3,
        "x @ w_up takes SiLU(gate) * . as its epilogue; x @ w_gate is a second "
        "matmul, which that kernel cannot hold, and the down projection a third",
    ),
    "causal_attention": SuiteProgram(
        causal_attention,
        lambda: Call((_spec("S", HEAD_DIM),) * 3),
        lambda rng, S=6: Call(tuple(_normal(rng, S, HEAD_DIM) for _ in range(3))),
        1,
        "q @ k.T, scale, mask, softmax and @ v in one attention kernel (online "
        "softmax over blocks of keys)",
    ),
    "head_split": SuiteProgram(
        head_split,
        lambda: Call((_spec("N", N_HEADS * HEAD_DIM),)),
        lambda rng, N=3: Call((_normal(rng, N, N_HEADS * HEAD_DIM),)),
        1,
        "a returned layout op of an argument needs one copy kernel",
    ),
    "rotary": SuiteProgram(
        rotary,
        lambda: Call((_spec("S", ROTARY_DIM),) * 3),
        lambda rng, S=4: Call(tuple(_normal(rng, S, ROTARY_DIM) for _ in range(3))),
        1,
        "slices and the concatenation are index maps inside one pointwise kernel",
    ),
    "embedding": SuiteProgram(
        embedding,
        lambda: Call(
            (
                _spec("N", dtype="int64"),
                _spec(VOCAB, D_MODEL),
                _spec(MAX_POSITIONS, D_MODEL),
            )
        ),
        lambda rng, N=6: Call(
            (
                rng.integers(0, VOCAB, N).astype(np.int64),
                _normal(rng, VOCAB, D_MODEL),
                _normal(rng, MAX_POSITIONS, D_MODEL),
            )
        ),
        1,
        "the gather and the slice of wpe (guarded N <= 32) fuse with the add",
    ),
    "adam_step": SuiteProgram(
        adam_step,
        lambda: Call((_spec("N"),) * 4),
        lambda rng, N=7: Call(
            (
                _normal(rng, N),
                _normal(rng, N),
                _normal(rng, N, scale=0.1),
                np.abs(_normal(rng, N, scale=0.1)),
            )
        ),
        1,
        "one pointwise kernel with three outputs (p, m and v)",
    ),
    "gpt2_block": SuiteProgram(
        programs.transformer_block,
        _block_specs,
        _block_inputs,
        7,
        "see tests/test_fuse.py::test_gpt2_block",
    ),
}


ROWS = [{"N": 1, "D": 1}, {"N": 3, "D": 7}, {"N": 4, "D": 1024}, {"N": 2, "D": 1100}]

#: Bindings per program, for the end-to-end and launch tests: every symbol
#: at 1, at a non-power of two, at a power of two that fills the default
#: tiles exactly (no masked tail), and
#: past one tile where that is cheap (1100 > the 1024-lane row block: a
#: looped reduction with a masked tail; 67 > the 64-row matmul block; 1500 >
#: the 1024-element pointwise block).
SIZES: dict[str, list[dict[str, int]]] = {
    "elementwise_broadcast": [
        {"N": 1, "D": 1},
        {"N": 3, "D": 7},
        {"N": 4, "D": 64},
        {"N": 5, "D": 33},
    ],
    "softmax": ROWS,
    "layer_norm": ROWS,
    "rms_norm": ROWS,
    "log_softmax": ROWS,
    "logsumexp": ROWS,
    "l2_normalize": ROWS,
    "cross_entropy": [
        {"N": 1, "V": 1},
        {"N": 4, "V": 10},
        {"N": 8, "V": 1024},
        {"N": 3, "V": 1030},
    ],
    "gelu_linear": [{"N": 1}, {"N": 5}, {"N": 64}, {"N": 67}],
    "mlp": [{"N": 1}, {"N": 5}, {"N": 64}, {"N": 67}],
    "swiglu": [{"N": 1}, {"N": 5}, {"N": 64}, {"N": 67}],
    "causal_attention": [{"S": 1}, {"S": 6}, {"S": 64}, {"S": 67}],
    "head_split": [{"N": 1}, {"N": 3}, {"N": 8}],
    "rotary": [{"S": 1}, {"S": 4}, {"S": 16}, {"S": 9}],
    "embedding": [{"N": 1}, {"N": 6}, {"N": 16}, {"N": 32}],
    "adam_step": [{"N": 1}, {"N": 7}, {"N": 1024}, {"N": 1500}],
    "gpt2_block": [{"seq": 1}, {"seq": 5}, {"seq": 16}, {"seq": 11}],
}
