"""``irc.torch``: PyTorch models in, through ``torch.compile``.

``torch.compile(model, backend="irc")`` works once irc is installed (the
``torch_dynamo_backends`` entry point names :func:`backend`), and
``torch.compile(model, backend=irc.torch.backend)`` is the same. The ATen
graphs AOTAutograd hands over are converted by :mod:`irc.torch.aten`
(:class:`FxFunction`) and compiled by ``irc.compile``, once per graph for
every size Dynamo's symbols admit. :func:`coverage` lists a model's ops and
those irc does not convert. See docs/torch.md.
"""

from irc.torch.aten import UnsupportedAtenOp
from irc.torch.compiler import Coverage, backend, counters, coverage, fallback_ops
from irc.torch.importer import FxFunction

__all__ = [
    "Coverage",
    "FxFunction",
    "UnsupportedAtenOp",
    "backend",
    "counters",
    "coverage",
    "fallback_ops",
]
