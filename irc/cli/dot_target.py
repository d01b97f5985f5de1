"""``irc-opt -t dot``: the module's functions as Graphviz DOT (``irc.viz``):
ops as nodes, values as edges labelled with their symbolic shapes, the
kernels ``fuse`` formed as clusters. Pipe it to ``dot -Tsvg`` for a picture."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target


@dataclass(frozen=True)
class DotTarget(Target):
    """The ``dot`` target of ``irc-opt``."""

    name = "dot"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from irc.viz import to_dot

        output.write(to_dot(module))
