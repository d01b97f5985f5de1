"""The Triton backend: a triton-level module as the source of a Python module.

``emit_module(module)`` prints what the runtime (``irc.runtime.triton_backend``)
loads and runs: the prelude's helpers it uses, one ``@triton.jit`` function
per ``triton.kernel``, one launcher and admission per host function, and the
``KERNELS`` and ``ENTRY`` tables. The module imports torch and triton and
nothing of irc; every name and text that reaches it is sanitised.
Importing this package imports neither torch nor triton (only ``prelude``
does, and the emitter reads its source without importing it).

See docs/lowering.md, section "The emitted module".
"""

from irc.backend.triton.emit import emit_module
from irc.backend.triton.errors import EmitError

__all__ = ["EmitError", "emit_module"]
