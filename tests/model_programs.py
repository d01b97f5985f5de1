"""Model code in the style of public pure-NumPy implementations, written as
their authors write NumPy: a Llama-style block (RMSNorm, RoPE from cos/sin
tables, grouped-query attention, SwiGLU, a KV cache filled in prefill), a
Mamba-style block (projections by einsum, a causal depthwise convolution
written with slices into a buffer, a selective scan) and the activations and
layers of a NumPy ML library. Nothing here knows about irc: the tests
compile these functions as written and compare with NumPy running them.
"""

from __future__ import annotations

import numpy as np

# ----- a Llama-style block --------------------------------------------------

DIM, N_HEADS, N_KV_HEADS, HIDDEN, MAX_SEQ = 16, 4, 2, 32, 16
HEAD_DIM = DIM // N_HEADS
N_REP = N_HEADS // N_KV_HEADS


def silu(x):
    return x * (1 / (1 + np.exp(-x)))


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def rms_norm(x, weight, eps=1e-6):
    return x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps) * weight


def rotary_tables(seq, theta=10000.0):
    """The cos/sin tables a Llama implementation precomputes (NumPy only:
    the tables are passed to the compiled block as arguments)."""
    freqs = 1.0 / theta ** (np.arange(0, HEAD_DIM, 2)[: HEAD_DIM // 2] / HEAD_DIM)
    angles = np.outer(np.arange(seq), freqs)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def apply_rotary(xq, xk, cos, sin):
    """Rotate (real, imaginary) pairs of the last axis, as the complex
    multiplication of Llama's RoPE written in real arithmetic."""
    # The shape tuple concatenated, as model code writes it (symbolic dims in it).
    q_pairs = xq.reshape(xq.shape[:-1] + (-1, 2))  # noqa: RUF005
    k_pairs = xk.reshape(xk.shape[:-1] + (-1, 2))  # noqa: RUF005
    q_re, q_im = np.split(q_pairs, 2, axis=-1)
    k_re, k_im = np.split(k_pairs, 2, axis=-1)
    q_re, q_im = q_re.squeeze(-1), q_im.squeeze(-1)
    k_re, k_im = k_re.squeeze(-1), k_im.squeeze(-1)
    cos = np.expand_dims(cos, axis=1)  # (seq, 1, head_dim / 2): one per head
    sin = np.expand_dims(sin, axis=1)
    q_out = np.stack([q_re * cos - q_im * sin, q_re * sin + q_im * cos], axis=-1)
    k_out = np.stack([k_re * cos - k_im * sin, k_re * sin + k_im * cos], axis=-1)
    return q_out.reshape(xq.shape), k_out.reshape(xk.shape)


def llama_attention(x, wq, wk, wv, wo, cos, sin, cache_k, cache_v, start_pos):
    seq = x.shape[0]
    xq = (x @ wq).reshape(seq, N_HEADS, HEAD_DIM)
    xk = (x @ wk).reshape(seq, N_KV_HEADS, HEAD_DIM)
    xv = (x @ wv).reshape(seq, N_KV_HEADS, HEAD_DIM)
    xq, xk = apply_rotary(xq, xk, cos, sin)

    cache_k[start_pos : start_pos + seq] = xk
    cache_v[start_pos : start_pos + seq] = xv
    keys = cache_k[: start_pos + seq]
    values = cache_v[: start_pos + seq]

    keys = np.repeat(keys, N_REP, axis=1)  # grouped-query attention
    values = np.repeat(values, N_REP, axis=1)

    xq = xq.transpose(1, 0, 2)  # (heads, seq, head_dim)
    keys = keys.transpose(1, 0, 2)
    values = values.transpose(1, 0, 2)
    scores = xq @ keys.transpose(0, 2, 1) / np.sqrt(HEAD_DIM)
    mask = np.triu(np.full((seq, seq), float("-inf")), k=1)
    scores = scores + mask
    out = softmax(scores) @ values
    return out.transpose(1, 0, 2).reshape(seq, -1) @ wo


def swiglu(x, w1, w2, w3):
    return (silu(x @ w1) * (x @ w3)) @ w2


def llama_block(x, params, cos, sin, cache_k, cache_v, start_pos=0):
    """One prefill step of a Llama block; fills ``cache_k``/``cache_v``
    (``(MAX_SEQ, N_KV_HEADS, HEAD_DIM)``) in place, as a Llama forward does."""
    attention = params["attention"]
    h = x + llama_attention(
        rms_norm(x, params["attention_norm"]),
        attention["wq"],
        attention["wk"],
        attention["wv"],
        attention["wo"],
        cos,
        sin,
        cache_k,
        cache_v,
        start_pos,
    )
    ffn = params["feed_forward"]
    return h + swiglu(rms_norm(h, params["ffn_norm"]), ffn["w1"], ffn["w2"], ffn["w3"])


def llama_weights(rng):
    def matrix(n_in, n_out):
        return (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)

    def norm():
        return (1 + 0.1 * rng.standard_normal(DIM)).astype(np.float32)

    return {
        "attention": {
            "wq": matrix(DIM, DIM),
            "wk": matrix(DIM, N_KV_HEADS * HEAD_DIM),
            "wv": matrix(DIM, N_KV_HEADS * HEAD_DIM),
            "wo": matrix(DIM, DIM),
        },
        "attention_norm": norm(),
        "feed_forward": {
            "w1": matrix(DIM, HIDDEN),
            "w2": matrix(HIDDEN, DIM),
            "w3": matrix(DIM, HIDDEN),
        },
        "ffn_norm": norm(),
    }


# ----- a Mamba-style block --------------------------------------------------

D_MODEL, D_INNER, D_STATE, D_CONV, DT_RANK = 8, 16, 4, 4, 2


def softplus(x):
    return np.log1p(np.exp(x))


def causal_depthwise_conv(x, weight, bias):
    """``x`` (seq, channels) convolved along seq with one ``weight[:, k]``
    filter per channel, left-padded so that output t sees inputs <= t."""
    seq, channels = x.shape
    width = weight.shape[1]
    padded = np.zeros((seq + width - 1, channels), dtype=x.dtype)
    padded[width - 1 :] = x
    out = np.zeros_like(x)
    for k in range(width):
        out += padded[k : k + seq] * weight[:, k]
    out += bias
    return out


def selective_scan_cumsum(u, delta, A, B, C, D):
    """h_t = exp(delta_t A) h_(t-1) + delta_t B_t u_t, y_t = C_t . h_t + D u_t,
    in closed form with cumulative sums in log space (the parallel-scan
    formulation of NumPy Mamba ports)."""
    log_decay = np.einsum("ld,dn->ldn", delta, A)
    drive = np.einsum("ld,ln,ld->ldn", delta, B, u)
    total = np.cumsum(log_decay, axis=0)
    h = np.exp(total) * np.cumsum(drive * np.exp(-total), axis=0)
    return np.einsum("ldn,ln->ld", h, C) + u * D


def mamba_block(x, params):
    xz = np.einsum("ld,de->le", x, params["in_proj"])
    u, z = np.split(xz, 2, axis=-1)
    u = silu(causal_depthwise_conv(u, params["conv_weight"], params["conv_bias"]))
    projected = u @ params["x_proj"]
    delta, B, C = np.split(projected, [DT_RANK, DT_RANK + D_STATE], axis=-1)
    delta = softplus(delta @ params["dt_proj_weight"] + params["dt_proj_bias"])
    A = -np.exp(params["A_log"])
    y = selective_scan_cumsum(u, delta, A, B, C, params["D"])
    return (y * silu(z)) @ params["out_proj"]


def mamba_block_einops(x, params):
    """The Mamba block with its projections and the scan's broadcasts
    written with einops, as Mamba ports that use it do."""
    import einops

    xz = einops.einsum(x, params["in_proj"], "l d, d e -> l e")
    u, z = einops.rearrange(xz, "l (two e) -> two l e", two=2)
    u = silu(causal_depthwise_conv(u, params["conv_weight"], params["conv_bias"]))
    projected = einops.einsum(u, params["x_proj"], "l e, e n -> l n")
    delta, B, C = np.split(projected, [DT_RANK, DT_RANK + D_STATE], axis=-1)
    delta = softplus(delta @ params["dt_proj_weight"] + params["dt_proj_bias"])
    A = -np.exp(params["A_log"])
    log_decay = einops.rearrange(delta, "l d -> l d 1") * A
    drive = einops.rearrange(delta * u, "l d -> l d 1") * einops.rearrange(
        B, "l n -> l 1 n"
    )
    total = np.cumsum(log_decay, axis=0)
    h = np.exp(total) * np.cumsum(drive * np.exp(-total), axis=0)
    y = einops.reduce(h * einops.rearrange(C, "l n -> l 1 n"), "l d n -> l d", "sum")
    y = y + u * params["D"]
    return einops.einsum(y * silu(z), params["out_proj"], "l e, e d -> l d")


def selective_scan_loop(u, delta, A, B, C, D):
    """The recurrence itself over a static number of steps, batched over a
    leading axis, each step's output written into a buffer."""
    batch, steps, d_inner = u.shape
    h = np.zeros((batch, d_inner, A.shape[1]), dtype=u.dtype)
    ys = np.zeros((batch, steps, d_inner), dtype=u.dtype)
    for t in range(steps):
        decay = np.exp(delta[:, t, :, None] * A)
        h = decay * h + (delta[:, t] * u[:, t])[:, :, None] * B[:, t, None, :]
        ys[:, t] = np.einsum("bdn,bn->bd", h, C[:, t])
    return ys + u * D


def mamba_weights(rng):
    def matrix(n_in, n_out, scale=1.0):
        return (scale * rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(
            np.float32
        )

    return {
        "in_proj": matrix(D_MODEL, 2 * D_INNER),
        "conv_weight": (0.5 * rng.standard_normal((D_INNER, D_CONV))).astype(
            np.float32
        ),
        "conv_bias": (0.1 * rng.standard_normal(D_INNER)).astype(np.float32),
        "x_proj": matrix(D_INNER, DT_RANK + 2 * D_STATE),
        "dt_proj_weight": matrix(DT_RANK, D_INNER),
        "dt_proj_bias": (0.1 * rng.standard_normal(D_INNER) - 1).astype(np.float32),
        "A_log": np.log(np.tile(np.arange(1, D_STATE + 1), (D_INNER, 1))).astype(
            np.float32
        ),
        "D": np.ones(D_INNER, dtype=np.float32),
        "out_proj": matrix(D_INNER, D_MODEL),
    }


# ----- activations and layers of a NumPy ML library -------------------------


class LeakyReLU:
    def __init__(self, alpha=0.3):
        self.alpha = alpha

    def fn(self, z):
        _z = z.copy()
        _z[z < 0] = _z[z < 0] * self.alpha
        return _z

    def grad(self, x):
        out = np.ones_like(x)
        out[x < 0] *= self.alpha
        return out


class ELU:
    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def fn(self, z):
        return np.where(z > 0, z, self.alpha * (np.exp(z) - 1))

    def grad(self, x):
        return np.where(x > 0, np.ones_like(x), self.fn(x) + self.alpha)


class SoftPlus:
    def fn(self, z):
        return np.log(np.exp(z) + 1)

    def grad(self, x):
        exp_x = np.exp(x)
        return exp_x / (exp_x + 1)


class HardSigmoid:
    def fn(self, z):
        return np.clip((0.2 * z) + 0.5, 0.0, 1.0)

    def grad(self, x):
        return np.where((x >= -2.5) & (x <= 2.5), 0.2, 0)


def layer_norm_forward(X, scaler, intercept, epsilon=1e-5):
    """Forward pass over the last axis; returns what the backward pass needs."""
    mean = X.mean(axis=-1, keepdims=True)
    centered = X - mean
    var = (centered**2).mean(axis=-1, keepdims=True)
    inv_std = 1.0 / np.sqrt(var + epsilon)
    normed = centered * inv_std
    return scaler * normed + intercept, (normed, inv_std)


def layer_norm_backward(dLdy, scaler, normed, inv_std):
    """The hand-written gradient of ``layer_norm_forward``."""
    n_features = dLdy.shape[-1]
    dIntercept = dLdy.sum(axis=0)
    dScaler = np.sum(dLdy * normed, axis=0)
    dnormed = dLdy * scaler
    dX = (
        (1.0 / n_features)
        * inv_std
        * (
            n_features * dnormed
            - dnormed.sum(axis=-1, keepdims=True)
            - normed * np.sum(dnormed * normed, axis=-1, keepdims=True)
        )
    )
    return dX, dScaler, dIntercept


def layer_norm_train_step(X, scaler, intercept, dLdy):
    y, (normed, inv_std) = layer_norm_forward(X, scaler, intercept)
    dX, dScaler, dIntercept = layer_norm_backward(dLdy, scaler, normed, inv_std)
    return y, dX, dScaler, dIntercept
