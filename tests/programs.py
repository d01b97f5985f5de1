"""Programs shared by several tests: plain NumPy functions and how to
compile them."""

import numpy as np

import irc

N_EMBD, N_HEAD = 16, 2


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(variance + eps) + b


def linear(x, w, b):
    return x @ w + b


def ffn(x, c_fc, c_proj):
    return linear(gelu(linear(x, **c_fc)), **c_proj)


def attention(q, k, v, mask):
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def mha(x, c_attn, c_proj, n_head):
    x = linear(x, **c_attn)
    qkv = np.split(x, 3, axis=-1)
    qkv_heads = [np.split(part, n_head, axis=-1) for part in qkv]
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10
    out_heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]
    return linear(np.hstack(out_heads), **c_proj)


def transformer_block(x, mlp, attn, ln_1, ln_2, n_head):
    x = x + mha(layer_norm(x, **ln_1), **attn, n_head=n_head)
    return x + ffn(layer_norm(x, **ln_2), **mlp)


def _linear_spec(n_in, n_out):
    return {
        "w": irc.TensorSpec((n_in, n_out), "float32"),
        "b": irc.TensorSpec((n_out,), "float32"),
    }


def _norm_spec():
    return {
        "g": irc.TensorSpec((N_EMBD,), "float32"),
        "b": irc.TensorSpec((N_EMBD,), "float32"),
    }


def weights(rng):
    """Random weights for the block, as nested dicts."""

    def linear_weights(n_in, n_out):
        return {
            "w": (rng.standard_normal((n_in, n_out)) * 0.2).astype(np.float32),
            "b": (rng.standard_normal(n_out) * 0.1).astype(np.float32),
        }

    def norm():
        return {
            "g": (1 + 0.1 * rng.standard_normal(N_EMBD)).astype(np.float32),
            "b": (0.1 * rng.standard_normal(N_EMBD)).astype(np.float32),
        }

    return {
        "mlp": {
            "c_fc": linear_weights(N_EMBD, 4 * N_EMBD),
            "c_proj": linear_weights(4 * N_EMBD, N_EMBD),
        },
        "attn": {
            "c_attn": linear_weights(N_EMBD, 3 * N_EMBD),
            "c_proj": linear_weights(N_EMBD, N_EMBD),
        },
        "ln_1": norm(),
        "ln_2": norm(),
    }


def transformer_stack(x, layers, n_head):
    """``len(layers)`` blocks, each with its weights; the residual stream is
    kept in float32 between them (a block computes in float64 from
    ``np.sqrt(d)``, a NumPy float64, as NumPy promotes it), so that every
    layer computes the same thing on its own tensors."""
    for weights in layers:
        x = transformer_block(x, **weights, n_head=n_head).astype(np.float32)
    return x


def block_specs():
    """The specs of the block's weights, as nested dicts."""
    return {
        "mlp": {
            "c_fc": _linear_spec(N_EMBD, 4 * N_EMBD),
            "c_proj": _linear_spec(4 * N_EMBD, N_EMBD),
        },
        "attn": {
            "c_attn": _linear_spec(N_EMBD, 3 * N_EMBD),
            "c_proj": _linear_spec(N_EMBD, N_EMBD),
        },
        "ln_1": _norm_spec(),
        "ln_2": _norm_spec(),
    }


def compile_block():
    """The block compiled with the sequence length symbolic."""
    x = irc.TensorSpec(("seq", N_EMBD), "float32")
    return irc.compile(transformer_block, x, **block_specs(), n_head=N_HEAD)


def compile_stack(layers, pipeline=None):
    """A stack of ``layers`` blocks compiled with the sequence length
    symbolic (``pipeline``: irc.compile's default if None)."""
    x = irc.TensorSpec(("seq", N_EMBD), "float32")
    options = {} if pipeline is None else {"pipeline": pipeline}
    return irc.compile(
        transformer_stack, x, [block_specs()] * layers, n_head=N_HEAD, **options
    )
