"""``irc.nn``: the composite functions, each defined once as a decomposition.

Written in NumPy, so they trace into graph IR inside a captured function
(where fusion makes each one kernel with what surrounds it) and compute
eagerly on NumPy arrays. The frontends build them from here: the ONNX
importer's ``Gelu``, ``Elu``, ``Softmax``, ``LayerNormalization``... and the
torch importer's ATen activations and normalizations. What a kernel needs whole is a primitive instead
(``irc.sigmoid``, ``irc.erf``, ``irc.rsqrt``; docs/primitives.md).
"""

from irc.nn.activations import (
    SELU_ALPHA,
    SELU_SCALE,
    celu,
    elu,
    gelu,
    hard_sigmoid,
    hard_swish,
    leaky_relu,
    log_softmax,
    mish,
    relu,
    selu,
    silu,
    softmax,
    softplus,
    softsign,
    thresholded_relu,
)
from irc.nn.convolution import (
    avg_pool,
    avg_pool_backward,
    conv,
    conv_input_gradient,
    conv_transpose,
    conv_transpose_input_gradient,
    conv_transpose_weight_gradient,
    conv_weight_gradient,
    global_avg_pool,
    global_max_pool,
    max_pool,
    max_pool_backward,
    max_pool_with_indices,
)
from irc.nn.indexing import scatter_rows
from irc.nn.normalization import batch_norm, group_norm, instance_norm, layer_norm

__all__ = [
    "SELU_ALPHA",
    "SELU_SCALE",
    "avg_pool",
    "avg_pool_backward",
    "batch_norm",
    "celu",
    "conv",
    "conv_input_gradient",
    "conv_transpose",
    "conv_transpose_input_gradient",
    "conv_transpose_weight_gradient",
    "conv_weight_gradient",
    "elu",
    "gelu",
    "global_avg_pool",
    "global_max_pool",
    "group_norm",
    "hard_sigmoid",
    "hard_swish",
    "instance_norm",
    "layer_norm",
    "leaky_relu",
    "log_softmax",
    "max_pool",
    "max_pool_backward",
    "max_pool_with_indices",
    "mish",
    "relu",
    "scatter_rows",
    "selu",
    "silu",
    "softmax",
    "softplus",
    "softsign",
    "thresholded_relu",
]
