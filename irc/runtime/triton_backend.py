"""Running the emitted Triton source: on a GPU, or under Triton's interpreter.

``load_source(source, interpret=...)`` makes the source of
``irc.backend.triton.emit_module`` a live module (cached; interpreted
whatever imported triton first, compiled only where triton was not
imported to interpret: ``TritonModeError``); ``Launcher`` binds its
``ENTRY`` launcher to a device and calls it on NumPy arrays or torch
tensors; ``run`` does so once; ``run_triton`` is the triton level's
interpreter for ``irc.testing``; ``launch_configurations`` says what a
module's launches were configured with, and
``share_launch_configurations`` gives every rank rank 0's.
torch and triton are imported on first use: importing irc must stay cheap.

See docs/lowering.md, section "Running the emitted module".
"""

from __future__ import annotations

import hashlib
import linecache
import logging
import os
import threading
import types
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from irc.errors import AllocationError, BindingError, IrcError
from irc.runtime.arrays import (
    available_host_memory,
    check_torch_tensor,
    input_to_torch,
    to_numpy,
)
from irc.runtime.standalone import fix_interpreter_comparisons, triton_mode

_MODULES: dict[tuple[str, bool], types.ModuleType] = {}
#: Set by ``load_source`` on each module: whether its kernels are interpreted.
_MODE_ATTRIBUTE = "__irc_interpreted__"
_LOCK = threading.RLock()


@contextmanager
def _interpret_mode(interpret: bool) -> Iterator[None]:
    """``TRITON_INTERPRET`` set for the block (and the previous value back
    after it). Triton reads it when a kernel is defined, and the interpreter
    reads it again while running some ``tl`` functions, so interpreted runs
    hold it too. Interpreting where triton was imported to compile, its
    standard library is interpreted for the block as well."""
    with _LOCK:
        previous = os.environ.get("TRITON_INTERPRET")
        os.environ["TRITON_INTERPRET"] = "1" if interpret else "0"
        try:
            if interpret and triton_mode() is False:
                with _interpreted_standard_library():
                    yield
            else:
                yield
        finally:
            if previous is None:
                del os.environ["TRITON_INTERPRET"]
            else:
                os.environ["TRITON_INTERPRET"] = previous


#: The interpreted stand-ins of a compiling Triton's standard library
#: functions, made once (by the function they stand for).
_INTERPRETED_STANDARD_LIBRARY: dict[Any, Any] = {}


@contextmanager
def _interpreted_standard_library() -> Iterator[None]:
    """Triton's ``@triton.jit`` standard library (``tl.sum``, ``tl.max``,
    ``tl.zeros_like``, ...), made compiled functions when triton was
    imported to compile, replaced for the block by interpreted ones, in
    ``triton.language`` and in the modules whose functions call each
    other: how a process that imported triton first (torch's exporters
    do) still runs irc's kernels on Triton's interpreter."""
    import triton.language as tl
    from triton.language import math, standard
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    replaced: list[tuple[types.ModuleType, str, Any]] = []
    for module in (tl, standard, math):
        for name, value in list(vars(module).items()):
            if isinstance(value, JITFunction):
                stand_in = _INTERPRETED_STANDARD_LIBRARY.get(value)
                if stand_in is None:
                    stand_in = InterpretedFunction(value.fn)
                    _INTERPRETED_STANDARD_LIBRARY[value] = stand_in
                replaced.append((module, name, value))
                setattr(module, name, stand_in)
    try:
        yield
    finally:
        for module, name, value in replaced:
            setattr(module, name, value)


class TritonModeError(IrcError):
    """Triton was imported in this process to interpret kernels, so it
    cannot compile them: its standard library (``tl.sum``, ``tl.max``, ...)
    is made of ``@triton.jit`` functions, interpreted ones when
    ``TRITON_INTERPRET`` was set at import."""


def import_triton(interpret: bool) -> None:
    """Import triton for ``interpret``, or check that it can: interpreting
    works whatever mode triton was imported in (its standard library is
    swapped for interpreted functions while kernels run), compiling needs
    triton imported to compile."""
    mode = triton_mode()
    if mode is None:
        with _interpret_mode(interpret):
            import triton.language  # noqa: F401
        mode = triton_mode()
    if interpret:
        fix_interpreter_comparisons()
        return
    if mode:
        raise TritonModeError(
            "cannot compile Triton kernels: triton was imported in this process to "
            "interpret them (TRITON_INTERPRET=1 at import), which makes its "
            "standard library (tl.sum, tl.max, ...) interpreted functions; compile "
            "in a separate process, or unset TRITON_INTERPRET"
        )


def load_source(source: str, *, interpret: bool) -> types.ModuleType:
    """The emitted ``source`` as a live module, its kernels interpreted
    (``interpret=True``) or compiled by Triton for the GPU on first launch.

    The source is registered with ``linecache`` under a name of its own so
    that Triton (which reads a kernel's source with ``inspect``) and
    tracebacks see it, without writing a file. Raises ``TritonModeError``
    when triton was imported in this process for the other mode.
    """
    import_triton(interpret)
    digest = hashlib.sha256(source.encode()).hexdigest()
    key = (digest, interpret)
    with _LOCK:
        cached = _MODULES.get(key)
        if cached is not None:
            return cached
        mode = "interpret" if interpret else "gpu"
        name = f"irc_triton_{digest[:16]}_{mode}"
        filename = f"<{name}>"
        linecache.cache[filename] = (
            len(source),
            None,  # no modification time: linecache.checkcache keeps it
            source.splitlines(keepends=True),
            filename,
        )
        module = types.ModuleType(name)
        module.__file__ = filename
        module.__dict__[_MODE_ATTRIBUTE] = interpret
        # dont_inherit: the module runs as written, not under this file's
        # ``from __future__ import annotations``, which would turn the
        # kernels' parameter annotations into strings Triton cannot read.
        code = compile(source, filename, "exec", dont_inherit=True)
        with _interpret_mode(interpret):
            exec(code, module.__dict__)
        if "_IRC_BEFORE_COPY" in module.__dict__:
            module.__dict__["_IRC_BEFORE_COPY"] = before_copy
        _MODULES[key] = module
        return module


#: A launch configuration per bucket of a kernel's sizes (the prelude's
#: ``_IrcTuner``): the buckets (``_irc_bucket`` of the chosen tiles'
#: extents, then of the grid axes and symbols) to the chosen tiles' sizes,
#: then warps and stages.
Configurations = dict[str, dict[tuple[int, ...], tuple[int, ...]]]


def launch_configurations(module: types.ModuleType) -> Configurations:
    """What the kernels of a loaded module were launched with so far, per
    kernel (its Python name in the module) and bucket, as its tuner
    decided (a measurement under way is not listed yet)."""
    tuner = getattr(module, "_IRC_TUNER", None)
    chosen: Configurations = {}
    if tuner is None:
        return chosen
    with tuner.lock:
        for (kernel, *buckets), config in tuner.chosen.items():
            chosen.setdefault(kernel, {})[tuple(buckets)] = config
    return chosen


def share_launch_configurations(module: types.ModuleType) -> None:
    """Make every rank of this ``torch.distributed`` job launch a loaded
    module's kernels as rank 0 decided so far (a collective: every rank
    calls it, at the same point of the program)."""
    from irc.runtime.distributed import initialized

    if not initialized():
        raise IrcError(
            "sharing launch configurations is a collective of a torch.distributed "
            "job: call torch.distributed.init_process_group first (and on every rank)"
        )
    tuner = getattr(module, "_IRC_TUNER", None)
    if tuner is not None:
        tuner.share()


#: Where the launchers' copies are reported (INFO).
COPY_LOGGER = "irc.launch"


def before_copy(index: int, tensor: Any, size: int) -> None:
    """Run by an emitted launcher before it copies argument ``index`` (a
    view its row-major kernels cannot index) to ``size`` bytes of row-major
    memory: a copy in host memory larger than what is available is an
    ``AllocationError`` at once (Linux overcommits: the allocation would
    succeed and the copy be killed by the OOM killer when it touches the
    pages); every copy is logged by ``COPY_LOGGER``."""
    shape, strides = tuple(tensor.shape), tuple(tensor.stride())
    if tensor.device.type == "cpu":
        available = available_host_memory()
        if available is not None and size > available:
            raise AllocationError(
                f"could not allocate a row-major copy of argument {index} (shape "
                f"{shape}, strides {strides}, {tensor.dtype}, {size:,} bytes), which "
                f"the kernels need as they read row-major memory: only "
                f"{available:,} bytes of host memory are available; pass a "
                "contiguous array or call with smaller sizes"
            )
    logging.getLogger(COPY_LOGGER).info(
        "argument %d (shape %s, strides %s, %s) copied to row-major memory for the "
        "kernels: %s bytes",
        index,
        shape,
        strides,
        tensor.dtype,
        f"{size:,}",
    )


def gpu_device() -> Any | None:
    """The torch device Triton launches kernels on, from its active driver:
    a CUDA GPU, or the stand-in of a driver set with
    ``triton.runtime.driver.driver.set_active`` (``irc.testing.fake_driver``);
    None when there is none (no GPU, no torch, or triton imported to
    interpret). Imports triton for compiling only when torch sees a GPU."""
    try:
        import torch
    except ImportError:
        return None
    mode = triton_mode()
    if mode is None and not torch.cuda.is_available():
        return None
    if mode:
        return None
    import_triton(interpret=False)
    from triton.runtime import driver

    try:
        return driver.active.get_active_torch_device()
    except RuntimeError:  # Triton found no active driver
        return None


class Launcher:
    """The ``ENTRY`` launcher of a loaded module, bound to the device its
    kernels run on: what every call on a Triton backend runs.

    Built once per compiled function and backend, so that a call does only
    what the launcher cannot: NumPy arrays become torch tensors (zero-copy
    where possible) and tensors move to the device (the GPU, or the CPU for
    the interpreter). Binding the symbols and checking the call (count,
    dtypes, ranks, sizes, guards) is the launcher's own, in plain Python;
    its ``LaunchError`` is re-raised as ``BindingError``.
    """

    def __init__(
        self, module: types.ModuleType, names: Sequence[str], *, interpret: bool
    ):
        if module.ENTRY is None:
            raise BindingError("the module has no host function to call")
        if getattr(module, _MODE_ATTRIBUTE, interpret) != interpret:
            loaded = "interpreted" if not interpret else "compiled"
            raise IrcError(
                f"the module was loaded with {loaded} kernels; load the source again "
                f"with interpret={interpret}"
            )
        import torch

        device = torch.device("cpu") if interpret else gpu_device()
        if device is None:
            raise IrcError(
                "the 'triton' backend needs a CUDA GPU, torch with CUDA and triton "
                "imported for compiling; use backend='interpret' (Triton's "
                "interpreter on the CPU) or 'reference'"
            )
        if device.type == "cuda":
            # torch's current CUDA device when a call moves an array, as the
            # launch itself runs on the current device.
            device = torch.device("cuda")
        self.device = device
        self.interpret = interpret
        self.names = list(names)
        self.launch = getattr(module, module.ENTRY)
        #: The launcher run on tensors it may take as they are: the entry
        #: itself for compiled kernels, under the interpreter's settings
        #: for interpreted ones. It raises the module's own errors.
        self.launch_given = self._interpreted if interpret else self.launch
        self.launch_error: type[Exception] = module.LaunchError
        #: A module that allocates nothing defines no AllocationFailed.
        self.allocation_failed: Any = getattr(module, "AllocationFailed", ())
        self._tensor = torch.Tensor
        self._strided = torch.strided
        #: Where tensors may stay as they are: on a CUDA device for a GPU
        #: (the launcher checks that all are on one), else on the CPU.
        self._on_cuda = device.type == "cuda"
        #: The tensor attribute that says so.
        self.device_flag = "is_cuda" if self._on_cuda else "is_cpu"

    def __call__(self, arrays: Sequence[Any]) -> tuple[tuple[Any, ...], bool]:
        """The results of a call on ``arrays`` (NumPy arrays or torch
        tensors), as torch tensors on the device, and whether any argument
        was a torch tensor."""
        tensor, on_cuda, strided = self._tensor, self._on_cuda, self._strided
        tensors = [
            a
            if isinstance(a, tensor)
            and a.layout is strided
            and (a.is_cuda if on_cuda else a.is_cpu)
            else self._to_device(a, i)
            for i, a in enumerate(arrays)
        ]
        # Torch in gives torch out; the first argument settles the usual case.
        torch_in = (bool(arrays) and isinstance(arrays[0], tensor)) or any(
            isinstance(a, tensor) for a in arrays
        )
        try:
            return self.launch_given(*tensors), torch_in
        except self.launch_error as error:
            raise BindingError(str(error)) from error
        except self.allocation_failed as error:
            raise AllocationError(str(error)) from error

    def _interpreted(self, *tensors: Any) -> tuple[Any, ...]:
        # The interpreter computes with NumPy: overflow, NaN and division by
        # zero are values, as in the reference interpreters, not warnings.
        with _interpret_mode(True), np.errstate(all="ignore"):
            return self.launch(*tensors)

    def _to_device(self, value: Any, index: int) -> Any:
        """A NumPy array or tensor on the launcher's device, with its strides
        where it stays on its device (the launcher copies what the kernels
        cannot read, sized and logged)."""
        name = self.names[index] if index < len(self.names) else f"arg{index}"
        if not isinstance(value, self._tensor):
            array = to_numpy(value, name)
            try:
                value = input_to_torch(array, name)
            except TypeError as err:  # a dtype torch has not (objects, strings)
                raise BindingError(
                    f"argument {name!r} has dtype {array.dtype}, which torch (and "
                    "irc) cannot compute with; convert it to a numeric dtype first"
                ) from err
        else:
            check_torch_tensor(value, name)
        return move_to(value, self.device, name)


def move_to(tensor: Any, device: Any, name: str) -> Any:
    """``tensor`` on ``device``. A broadcast (zero-stride) axis moves as one
    element and is broadcast again there: ``Tensor.to`` would send every
    repeated element. A failure to allocate on the device is an
    ``AllocationError`` naming the argument and its size."""
    if tensor.device == device or (
        device.index is None and tensor.device.type == device.type
    ):
        return tensor
    strides = tensor.stride()
    if any(s == 0 and n > 1 for n, s in zip(tensor.shape, strides)):
        distinct = tensor[
            tuple(
                slice(0, 1) if s == 0 and n > 1 else slice(None)
                for n, s in zip(tensor.shape, strides)
            )
        ]
    else:
        distinct = tensor
    try:
        moved = distinct.to(device)
    except RuntimeError as error:  # torch.OutOfMemoryError is a RuntimeError
        if "memory" not in str(error).lower():
            raise
        size = distinct.numel() * distinct.element_size()
        raise AllocationError(
            f"could not move argument {name!r} (shape {tuple(distinct.shape)}, "
            f"{distinct.dtype}, {size:,} bytes) to {device}: "
            f"{str(error).splitlines()[0]}; call with smaller sizes or free memory"
        ) from error
    return moved.expand(tensor.shape) if distinct is not tensor else moved


def run(
    module: types.ModuleType,
    arrays: Sequence[np.ndarray | Any],
    *,
    interpret: bool,
) -> list[Any]:
    """Call the ``ENTRY`` launcher of a loaded module on ``arrays`` (NumPy
    arrays or torch tensors); its results as torch tensors (on the CPU when
    interpreting). Raises ``BindingError`` for a call the compiled
    signature refuses (counts, dtypes, ranks, sizes, guards)."""
    names = [f"arg{i}" for i in range(len(arrays))]
    return list(Launcher(module, names, interpret=interpret)(arrays)[0])


# --------------------------------------------------------------------------
# The triton level's reference runner, for irc.testing
# --------------------------------------------------------------------------


def run_triton(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run a triton-level module's entry function on NumPy arrays: emit its
    source, run it under Triton's interpreter on CPU tensors, and return the
    results as NumPy arrays."""
    from irc.backend.triton import emit_module

    loaded = load_source(emit_module(module), interpret=True)
    results = run(loaded, inputs, interpret=True)
    return [to_numpy(r, f"result {i}").copy() for i, r in enumerate(results)]
