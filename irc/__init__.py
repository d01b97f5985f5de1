"""irc: a multi-level IR tensor compiler in pure Python, built on xDSL.

Capture a NumPy-style function with symbolic dims, inspect its IR, run it::

    import numpy as np
    import irc

    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    c = irc.compile(softmax, irc.TensorSpec(("N", "D"), "float32"))
    print(c.ir("graph"))
    y = c(np.random.rand(3, 5).astype(np.float32))
    c.save("softmax_artifact")          # runs where only torch and triton are
    c = irc.load("softmax_artifact")
"""

from irc import nn, primitives, viz
from irc.api import Compiled, Jitted, compile, jit, load, trace
from irc.autodiff import grad, value_and_grad, vjp
from irc.capture.control_flow import cond, fori_loop, scan, while_loop
from irc.capture.numpy_api import erf, rsqrt, sigmoid
from irc.capture.specs import TensorSpec
from irc.errors import (
    AllocationError,
    BindingError,
    ConstantArrayWarning,
    ExecutionError,
    IrcError,
    IrcShapeError,
    IrcTypeError,
    TracingError,
)
from irc.logs import set_logs


def __getattr__(name: str) -> object:
    """``irc.onnx`` on first use: it is optional (``irc[onnx]``)."""
    if name == "onnx":
        import irc.onnx

        return irc.onnx
    raise AttributeError(f"module 'irc' has no attribute {name!r}")


__all__ = [
    "AllocationError",
    "BindingError",
    "Compiled",
    "ConstantArrayWarning",
    "ExecutionError",
    "IrcError",
    "IrcShapeError",
    "IrcTypeError",
    "Jitted",
    "TensorSpec",
    "TracingError",
    "compile",
    "cond",
    "erf",
    "fori_loop",
    "grad",
    "jit",
    "load",
    "nn",
    "primitives",
    "rsqrt",
    "scan",
    "set_logs",
    "sigmoid",
    "trace",
    "value_and_grad",
    "viz",
    "vjp",
    "while_loop",
]
