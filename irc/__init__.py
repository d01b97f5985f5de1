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

The names below are imported on first use (``irc.compile`` imports the
capture, the dialects and the compiler): importing all of irc takes about a
second, which a tool needing a small part of it (``irc-opt --version``, the
torch backend's registration) should not pay.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from irc import debug, nn, primitives, viz
    from irc.api import Compiled, Jitted, compile, jit, load, trace
    from irc.autodiff import grad, value_and_grad, vjp
    from irc.capture.control_flow import cond, fori_loop, scan, switch, while_loop
    from irc.capture.numpy_api import erf, rsqrt, sigmoid
    from irc.capture.specs import TensorSpec
    from irc.distributed import (
        Mesh,
        PartitionSpec,
        all_gather,
        all_to_all,
        auto_shard,
        axis_index,
        pbroadcast,
        pmax,
        pmean,
        pmin,
        ppermute,
        psum,
        psum_scatter,
        shard_map,
    )
    from irc.errors import (
        AllocationError,
        BindingError,
        ConstantArrayWarning,
        ExecutionError,
        IrcError,
        IrcShapeError,
        IrcTypeError,
        NonFiniteError,
        TracingError,
    )
    from irc.jacobians import hessian, jacfwd, jacrev, jvp
    from irc.logs import set_logs

#: The module defining each public name that is not a submodule.
_DEFINED_IN: dict[str, str] = {
    **dict.fromkeys(("Compiled", "Jitted", "compile", "jit", "load", "trace"), "api"),
    **dict.fromkeys(("grad", "value_and_grad", "vjp"), "autodiff"),
    **dict.fromkeys(
        ("cond", "fori_loop", "scan", "switch", "while_loop"), "capture.control_flow"
    ),
    **dict.fromkeys(("erf", "rsqrt", "sigmoid"), "capture.numpy_api"),
    "TensorSpec": "capture.specs",
    **dict.fromkeys(
        (
            "Mesh",
            "PartitionSpec",
            "all_gather",
            "all_to_all",
            "auto_shard",
            "axis_index",
            "pbroadcast",
            "pmax",
            "pmean",
            "pmin",
            "ppermute",
            "psum",
            "psum_scatter",
            "shard_map",
        ),
        "distributed",
    ),
    **dict.fromkeys(("hessian", "jacfwd", "jacrev", "jvp"), "jacobians"),
    **dict.fromkeys(
        (
            "AllocationError",
            "BindingError",
            "ConstantArrayWarning",
            "ExecutionError",
            "IrcError",
            "IrcShapeError",
            "IrcTypeError",
            "NonFiniteError",
            "TracingError",
        ),
        "errors",
    ),
    "set_logs": "logs",
}


def __getattr__(name: str) -> object:
    """A public name, or a submodule (``irc.nn``, ``irc.onnx``, which is
    optional: ``irc[onnx]``), imported on its first use and kept."""
    if name in _DEFINED_IN:
        value = getattr(importlib.import_module(f"irc.{_DEFINED_IN[name]}"), name)
    else:
        try:
            value = importlib.import_module(f"irc.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"irc.{name}":  # a submodule's own import failed
                raise
            raise AttributeError(f"module 'irc' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names too, before their first use (for completion)."""
    return sorted({*globals(), *__all__})


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
    "Mesh",
    "NonFiniteError",
    "PartitionSpec",
    "TensorSpec",
    "TracingError",
    "all_gather",
    "all_to_all",
    "auto_shard",
    "axis_index",
    "compile",
    "cond",
    "debug",
    "distributed",
    "erf",
    "fori_loop",
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jit",
    "jvp",
    "load",
    "nn",
    "pbroadcast",
    "pmax",
    "pmean",
    "pmin",
    "ppermute",
    "primitives",
    "psum",
    "psum_scatter",
    "rsqrt",
    "scan",
    "set_logs",
    "shard_map",
    "sigmoid",
    "switch",
    "trace",
    "value_and_grad",
    "viz",
    "vjp",
    "while_loop",
]
