"""The Triton backend: a triton-level module as the source of a Python module.

``emit_module(module)`` prints what the runtime (``irc.runtime.triton_backend``)
loads and runs:

- ``import torch``, ``import triton``, ``import triton.language as tl`` and
  the prelude's helpers that the module uses (``@triton.jit`` helpers that
  give the ops NumPy's semantics where Triton's differ, and the launchers'
  checks), copied from ``prelude``;
- one ``@triton.jit`` function per ``triton.kernel``, headed by comments
  holding the kernel's ``reason`` (which names the Python source lines of
  its ops); each op is one statement, so the kernel reads like the IR
  (``kernel``);
- one launcher per host function, ``def launch_<name>(*tensors)``, which
  checks and binds a call, allocates, launches the kernels and returns a
  tuple of tensors, and its admission ``admit_<name>(tensors)``, which
  raises the module's ``LaunchError`` (a ``ValueError``) saying why a call
  was refused, or copies the tensors that are strided views (``launcher``);
- ``KERNELS`` (the ``@triton.jit`` function's name -> the function, its
  ``ASTSource`` signature and constexprs: enough for ``triton.compile``)
  and ``ENTRY``, the name of the first host function's launcher (``emit``).

The emitted module is self-contained: it imports torch and triton, nothing
of irc. Hostile IR cannot inject code into it. Every name that reaches the
source is sanitised to ``[A-Za-z_][A-Za-z0-9_]*`` behind a prefix that says
what it is (``p_`` pointer, ``s_`` symbol, ``c_`` constexpr, ``v`` value,
``t_`` tensor argument, ``kernel_``, ``launch_``), deduplicated where
sanitising makes two names equal; text (reasons, locations, argument names
in messages) reaches the source only as comment lines reduced to printable
ASCII or as ``repr``-quoted literals of such text (``names``); symbolic
expressions are parsed back with ``ast`` and rebuilt from a whitelist of
node kinds (``expressions``); numbers are printed from their values; dense
constants travel as ``bytes`` literals.

The modules:

==================  ========================================================
``emit``            ``emit_module``: the module's sections, in order
``kernel``          ``KernelEmitter`` and the ops' Triton spellings
``launcher``        ``LauncherEmitter``: bind, check, allocate, launch, refuse
``expressions``     ``ExprRenderer``: symbolic expressions as Python
``names``           sanitised names and text, ``Namer``
``typenames``       element types as ``tl``, signatures and torch spell them
``prelude``         the helpers, a real module (imports torch and triton)
``pruning``         the prelude definitions a module uses, as source text
``errors``          ``EmitError``
==================  ========================================================

Importing this package imports neither torch nor triton; only ``prelude``
does, and the emitter reads that file's source without importing it.
"""

from irc.backend.triton.emit import emit_module
from irc.backend.triton.errors import EmitError

__all__ = ["EmitError", "emit_module"]
