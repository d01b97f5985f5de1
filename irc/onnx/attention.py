"""ONNX's ``Attention`` (opsets 23 to 25) as NumPy operations.

The primary output is written as ``softmax(where(allowed, q @ k^T * scale
[+ mask], -inf)) @ v``: the matmul -> elementwise -> softmax -> matmul
chain that fusion makes one flash-attention kernel (see
``irc.dialects.fusion.AttentionChain``), with the causal mask without a
cache as ``np.tri``'s select, the form whose fully masked key blocks the
kernel skips (``irc/lowering/fusion_to_loop/key_bounds.py``). The semantics
are those of ``onnx.reference.ops.op_attention``: 3-D inputs split into
heads, grouped-query attention repeats each key/value head over its group,
the past keys and values are prepended (``present_key``/``present_value``),
causal masking is aligned so that a query sees the past and its own
position, a mask shorter than the keys is padded with masked keys, and a
query row with no allowed key gives zeros.

That last rule is written ``where(isnan(p), 0, p)`` on the softmax ``p``,
the guard torch's exporters write, which the attention kernel applies once
per row after its walk: a row whose every key is masked is all -inf, so its
softmax is NaN. ONNX's reference decides it on the masks alone; the two
differ only on a row that has an allowed key but a NaN or infinite score
(zeros here, NaN there), the price of not storing the masks' per-row
reduction in a kernel of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from irc import nn
from irc.onnx.converters import (
    Node,
    Value,
    arange,
    converts,
    full,
    numpy_dtype,
    optional_operand,
    rank_of,
    shape_of,
    tensor,
    traced_or_numpy,
    unsupported,
)

#: ``qk_matmul_output_mode``: which scores the optional 4th output holds.
RAW, SOFTCAPPED, BIASED, PROBABILITIES = 0, 1, 2, 3

tri = traced_or_numpy("tri", np.tri)


@dataclass(frozen=True)
class Scores:
    """The stages of the scores that the outputs read: ``raw`` (``q @ k^T``
    scaled), ``capped`` (after softcap), ``biased`` (masked: the softmax's
    operand); ``masked`` when a row may have no allowed key (not when the
    causal mask alone applies, which leaves every query its own key)."""

    raw: Value
    capped: Value
    biased: Value
    masked: bool


@converts("Attention")
def attention(node: Node, operands: list[Value]) -> list[Value]:
    query, key, value = (tensor(o) for o in operands[:3])
    mask, past_key, past_value, nonpad = (
        optional_operand(operands, p) for p in range(3, 7)
    )
    split = rank_of(query) == 3
    if split:
        query, key, value = _split_heads(node, query, key, value)
    elif rank_of(query) != 4:
        raise unsupported(
            node, f"rank-{rank_of(query)} inputs", "Q, K and V are 3-D or 4-D"
        )
    key, value = _with_past(node, key, value, past_key, past_value, nonpad)
    present_key, present_value = key, value
    key, value = _shared_heads(node, query, key), _shared_heads(node, query, value)
    offset = _causal_offset(query, past_key, nonpad)
    scores = _scores(node, query, key, mask, offset, nonpad)
    probabilities = _probabilities(node, scores, query.dtype)
    output = np.matmul(probabilities, value)
    if split:
        batch, heads, rows, columns = shape_of(output)
        output = np.reshape(np.swapaxes(output, 1, 2), [batch, rows, heads * columns])
    outputs = [output, present_key, present_value]
    if _wants_scores(node):
        outputs.append(_scores_output(node, scores, probabilities, query.dtype))
    return outputs


def _with_past(
    node: Node,
    key: Value,
    value: Value,
    past_key: Value,
    past_value: Value,
    nonpad: Value,
) -> tuple[Value, Value]:
    """The keys and values after the past ones (the internal cache)."""
    if (past_key is None) != (past_value is None):
        raise unsupported(node, "only one of past_key and past_value", "give both")
    if past_key is None:
        return key, value
    if nonpad is not None:
        raise unsupported(
            node, "both nonpad_kv_seqlen and past_key", "use one kind of key cache"
        )
    return (
        np.concatenate([past_key, key], axis=2),
        np.concatenate([past_value, value], axis=2),
    )


def _split_heads(
    node: Node, query: Value, key: Value, value: Value
) -> tuple[Value, Value, Value]:
    """``[batch, sequence, heads * size]`` as ``[batch, heads, sequence,
    size]``, by the ``q_num_heads`` and ``kv_num_heads`` attributes."""
    q_heads, kv_heads = node.attr("q_num_heads"), node.attr("kv_num_heads")
    if q_heads is None or kv_heads is None:
        raise unsupported(
            node,
            "3-D inputs without q_num_heads and kv_num_heads",
            "give both attributes, which say how to split the hidden size into heads",
        )
    return (
        _heads(node, query, q_heads),
        _heads(node, key, kv_heads),
        _heads(node, value, kv_heads),
    )


def _heads(node: Node, x: Value, heads: int) -> Value:
    batch, sequence, hidden = shape_of(x)
    if not isinstance(hidden, int) or hidden % heads:
        raise unsupported(
            node,
            f"a hidden size {hidden} that {heads} heads do not divide",
            "make the hidden size a static multiple of the head count",
        )
    return np.swapaxes(np.reshape(x, [batch, sequence, heads, hidden // heads]), 1, 2)


def _shared_heads(node: Node, query: Value, key: Value) -> Value:
    """Grouped-query attention: each of ``key``'s heads serves a group of
    consecutive query heads."""
    q_heads, kv_heads = shape_of(query)[1], shape_of(key)[1]
    if q_heads == kv_heads:
        return key
    if (
        not isinstance(q_heads, int)
        or not isinstance(kv_heads, int)
        or q_heads % kv_heads
    ):
        raise unsupported(
            node,
            f"{q_heads} query heads over {kv_heads} key/value heads",
            "the query heads must be a static multiple of the key/value heads",
        )
    return np.repeat(key, q_heads // kv_heads, axis=1)


def _causal_offset(query: Value, past_key: Value, nonpad: Value) -> Any:
    """How many keys precede the query block: the past's length, each
    batch's valid keys less the queries (``[batch, 1, 1, 1]``), or 0."""
    if past_key is not None:
        return shape_of(past_key)[2]
    if nonpad is not None:
        return np.reshape(nonpad, [-1, 1, 1, 1]) - shape_of(query)[2]
    return 0


def _scores(
    node: Node, query: Value, key: Value, mask: Value, offset: Any, nonpad: Value
) -> Scores:
    """The scores at each stage, masked by every constraint: the mask
    (padded to the keys), the valid keys, the window and causality."""
    root = _scale_root(node, query)
    raw = np.matmul(query * root, np.swapaxes(key, -1, -2) * root)
    capped = raw
    softcap = node.attr("softcap", 0.0)
    if softcap > 0:
        capped = np.tanh(capped / softcap) * softcap
    rows, keys = shape_of(query)[2], shape_of(key)[2]
    allowed: list[Value] = []
    biased = capped
    if mask is not None:
        mask = _padded(mask, keys)
        if np.dtype(mask.dtype) == np.bool_:
            allowed.append(mask)
        else:
            mask = mask.astype(query.dtype)
            biased = biased + mask
            allowed.append(np.not_equal(mask, -np.inf))
    row = np.reshape(arange(rows), [rows, 1]) + offset
    column = np.reshape(arange(keys), [1, keys])
    if nonpad is not None:
        allowed.append(np.less(column, np.reshape(nonpad, [-1, 1, 1, 1])))
    allowed.extend(_window(node, row, column))
    guarded = bool(allowed)
    if node.attr("is_causal", 0):
        allowed.append(_causal(rows, keys, offset, row, column))
    for condition in allowed:
        biased = np.where(condition, biased, -np.inf)
    return Scores(raw, capped, biased, guarded)


def _causal(rows: Any, keys: Any, offset: Any, row: Value, column: Value) -> Value:
    """Key ``j`` is allowed to query ``i`` when ``j <= i + offset``; with a
    constant offset, as ``np.tri``, whose iotas attention kernels recognise
    to skip the key blocks past their last row."""
    if isinstance(offset, int):
        return tri(rows, keys, offset, dtype=bool)
    return np.less_equal(column, row)


def _scale_root(node: Node, query: Value) -> Any:
    """The square root of the factor of ``q @ k^T``, in the inputs' type:
    ONNX scales q and k each by it (rounding them in 16-bit types), and
    attention kernels load operands scaled by a constant."""
    scale = node.attr("scale")
    if scale is None:
        size = shape_of(query)[-1]
        if not isinstance(size, int):
            raise unsupported(
                node,
                f"a symbolic head size {size} and no scale",
                "give the scale attribute, or make the head size static",
            )
        scale = 1 / math.sqrt(size)
    return np.asarray(math.sqrt(scale)).astype(query.dtype)


def _padded(mask: Value, keys: Any) -> Value:
    """A mask over fewer keys than there are, the rest masked out (as
    ONNX pads it). A symbolic length other than the keys' expression is
    taken to cover them: reshaped to it (proven by the model's facts, else
    guarded), so the scores and the mask have one shape, as fusion needs."""
    dims = shape_of(mask)
    missing = keys - dims[-1]
    if not isinstance(missing, int):
        return np.reshape(mask, [*dims[:-1], keys])
    if missing <= 0:
        return mask
    fill = False if np.dtype(mask.dtype) == np.bool_ else -np.inf
    padding = full([*dims[:-1], missing], fill, mask.dtype)
    return np.concatenate([mask, padding], axis=-1)


def _window(node: Node, row: Value, column: Value) -> list[Value]:
    """The sliding window's bounds around each query's position (opset 25;
    -1 leaves a side open)."""
    left, right = node.attr("left_window_size", -1), node.attr("right_window_size", -1)
    bounds = []
    if left >= 0:
        bounds.append(np.greater_equal(column, row - left))
    if right >= 0:
        bounds.append(np.less_equal(column, row + right))
    return bounds


def _probabilities(node: Node, scores: Scores, dtype: Any) -> Value:
    """The softmax over the keys, in ``softmax_precision`` where given,
    zero on the rows masked whole, rounded to the inputs' type."""
    biased = scores.biased
    precision = node.attr("softmax_precision")
    if precision is not None:
        biased = biased.astype(numpy_dtype(precision))
    probabilities = nn.softmax(biased, -1)
    if scores.masked:
        probabilities = np.where(np.isnan(probabilities), 0.0, probabilities)
    return probabilities.astype(dtype)


def _wants_scores(node: Node) -> bool:
    outputs = node.proto.output
    return len(outputs) > 3 and bool(outputs[3])


def _scores_output(
    node: Node, scores: Scores, probabilities: Value, dtype: Any
) -> Value:
    """The optional 4th output, at the stage ``qk_matmul_output_mode`` says."""
    mode = node.attr("qk_matmul_output_mode", RAW)
    stages = {
        RAW: scores.raw,
        SOFTCAPPED: scores.capped,
        BIASED: scores.biased,
        PROBABILITIES: probabilities,
    }
    if mode not in stages:
        raise unsupported(node, f"qk_matmul_output_mode={mode}", "use 0 to 3")
    return stages[mode].astype(dtype)
