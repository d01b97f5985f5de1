"""ONNX in and out: ``irc.onnx.load`` reads an ONNX model as a capturable
function (graph IR with symbolic dims), ``irc.onnx.export`` writes irc's graph
level as an ONNX model.

``onnx`` (and ``onnxruntime``, for the tests) are the optional extra
``irc[onnx]``; they are imported when first needed.
"""

from __future__ import annotations

from types import ModuleType

from irc.errors import IrcError


def require_onnx() -> ModuleType:
    """The ``onnx`` package, or a clear error saying how to install it."""
    try:
        import onnx
    except ImportError:
        raise IrcError(
            "irc.onnx needs the onnx package, which is not installed: "
            "pip install 'irc[onnx]' (or pip install onnx onnxruntime)"
        ) from None
    return onnx


from irc.onnx.exporter import export  # noqa: E402
from irc.onnx.importer import OnnxFunction, UnsupportedOnnxOp, load  # noqa: E402

__all__ = ["OnnxFunction", "UnsupportedOnnxOp", "export", "load", "require_onnx"]
