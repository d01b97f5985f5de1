"""``irc-opt model.onnx``: an xDSL frontend reading ONNX models as graph IR."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.frontend import Frontend

from irc.onnx.importer import load


@dataclass(frozen=True)
class OnnxFrontend(Frontend):
    """The graph-level module of an ONNX model (initializers as arguments)."""

    name = "onnx"

    def parse(
        self, ctx: Context, input: IO[bytes], input_name: str = "input"
    ) -> ModuleOp:
        return load(input.read()).module


def onnx_ir_text(data: bytes) -> str:
    """The graph IR of a serialised ONNX model, as text (what irc-opt parses)."""
    return str(load(data).module)
