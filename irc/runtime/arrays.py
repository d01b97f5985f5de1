"""Arrays crossing the API: NumPy arrays and torch tensors in, the same kind
out. Every backend converts through here."""

from __future__ import annotations

import logging
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from irc.errors import AllocationError, BindingError


def is_torch_tensor(value: Any) -> bool:
    # By module name, so that torch is imported only when it is used.
    return type(value).__module__.startswith("torch")


def to_numpy(value: Any, name: str) -> np.ndarray:
    """An argument as a NumPy array (torch CPU tensors without a copy;
    bfloat16 through its bits, which NumPy cannot take from torch).

    What NumPy would not read as the plain array it shows is refused with a
    ``BindingError`` saying how to convert it: masked arrays (irc would read
    the masked values), ``np.matrix`` (always 2-D, ``*`` is a matrix
    product), torch tensors that hold no data on the CPU or a CUDA GPU
    (``meta``, sparse). Arrays in non-native byte order are converted, as
    NumPy's own operations read them."""
    if is_torch_tensor(value):
        return _torch_to_numpy(check_torch_tensor(value, name))
    if isinstance(value, np.ndarray | np.generic):
        check_numpy_array(value, name)
        array = np.asarray(value)
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
        return array
    raise BindingError(
        f"argument {name!r} must be a NumPy array or a torch tensor, got "
        f"{type(value).__name__}"
        + (
            "; convert it with np.asarray"
            if isinstance(value, list | tuple | int | float | complex | bool)
            else ""
        )
    )


def check_numpy_array(value: Any, name: str) -> None:
    """Refuse the ndarray subclasses whose values or meaning differ from
    the plain array irc would read."""
    if isinstance(value, np.ma.MaskedArray):
        raise BindingError(
            f"argument {name!r} is a NumPy masked array; irc computes on plain "
            "arrays and would ignore its mask: pass np.ma.filled(x, fill_value) "
            "(or x.data to drop the mask knowingly)"
        )
    if isinstance(value, np.matrix):
        raise BindingError(
            f"argument {name!r} is an np.matrix, whose operators and shapes are "
            "not NumPy's array semantics; pass np.asarray(x)"
        )


#: Torch devices whose tensors irc reads: the CPU, and CUDA GPUs.
TORCH_DEVICES = ("cpu", "cuda")


def check_torch_tensor(tensor: Any, name: str) -> Any:
    """``tensor``, if irc can read it: dense (strided), on the CPU or a CUDA
    GPU; else a ``BindingError`` saying how to convert it."""
    device = tensor.device.type
    if device not in TORCH_DEVICES:
        hint = (
            "a meta tensor has a shape and dtype but no data; pass a tensor with values"
            if device == "meta"
            else "move it with .cpu() or .cuda()"
        )
        raise BindingError(
            f"argument {name!r} is a torch tensor on device {tensor.device}; irc "
            f"reads tensors on the CPU or a CUDA GPU only: {hint}"
        )
    if str(tensor.layout) != "torch.strided":
        raise BindingError(
            f"argument {name!r} is a torch tensor with layout {tensor.layout}; irc "
            "reads dense tensors: pass x.to_dense()"
        )
    return tensor


def _torch_to_numpy(tensor: Any) -> np.ndarray:
    tensor = tensor.detach().cpu()
    if str(tensor.dtype) == "torch.bfloat16":
        import torch

        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.resolve_conj().resolve_neg().numpy()


def to_torch(array: np.ndarray) -> Any:
    """A result as a torch tensor of the same dtype and shape (rank 0 too)."""
    import torch

    array = np.asarray(array, order="C")
    if not array.flags.writeable:  # torch tensors are always writable
        array = array.copy()
    if array.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def input_to_torch(array: np.ndarray, name: str) -> Any:
    """An input array as a torch CPU tensor over the same memory, with its
    strides (a broadcast's zeros, a transpose's, a read-only array's): the
    launcher decides whether the kernels need a row-major copy and makes it
    sized and logged (the prelude's ``_irc_contiguous``), so an input is not
    copied twice, nor here where the launcher needs no copy. Only what torch
    cannot view (negative strides, ``x[::-1]``) is copied here, by
    ``contiguous_copy``."""
    import torch

    bf16 = array.dtype == ml_dtypes.bfloat16
    viewed = array.view(np.int16) if bf16 else array
    try:
        with warnings.catch_warnings():
            # torch warns that a read-only array makes a writable tensor:
            # kernels never write their inputs (a function that writes into
            # an argument returns its new value, which irc copies back).
            warnings.simplefilter("ignore", UserWarning)
            tensor = torch.from_numpy(viewed)
    except ValueError:  # negative strides, which torch tensors cannot have
        tensor = torch.from_numpy(contiguous_copy(viewed, name))
    return tensor.view(torch.bfloat16) if bf16 else tensor


def contiguous_copy(array: np.ndarray, name: str) -> np.ndarray:
    """A row-major copy of argument ``name``, sized first (larger than the
    host memory available, or failing to allocate, it is an
    ``AllocationError`` saying what, why and how big, never a bare
    ``MemoryError``) and logged by the logger ``irc.launch``."""
    size = array.size * array.dtype.itemsize
    what = (
        f"a row-major copy of argument {name!r} (shape {array.shape}, {array.dtype}, "
        f"strides {array.strides}, {size:,} bytes)"
    )
    available = available_host_memory()
    if available is not None and size > available:
        raise AllocationError(
            f"could not allocate {what}: only {available:,} bytes of host memory "
            "are available; pass a contiguous array or call with smaller sizes"
        )
    try:
        copy = np.ascontiguousarray(array)
    except MemoryError as error:
        raise AllocationError(
            f"could not allocate {what}: {error}; pass a contiguous array or call "
            "with smaller sizes"
        ) from None
    # Reported as the launcher reports its own copies (irc.runtime.triton_backend).
    logging.getLogger("irc.launch").info(
        "argument %r (shape %s, strides %s, %s) copied to row-major memory for the "
        "kernels: %s bytes",
        name,
        array.shape,
        array.strides,
        array.dtype,
        f"{size:,}",
    )
    return copy


def available_host_memory() -> int | None:
    """The bytes of host memory the system can still give (Linux's
    ``MemAvailable``), or None where it does not say. Checked before a copy:
    Linux overcommits, so an allocation too large fails only when the copy
    touches it, killed by the OOM killer rather than raising."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_writable(value: Any, name: str) -> None:
    """Refuse a caller's array that a function writing into its argument
    cannot update."""
    if is_torch_tensor(value):
        return
    if isinstance(value, np.ndarray) and value.flags.writeable:
        return
    what = "a read-only array" if isinstance(value, np.ndarray) else "a NumPy scalar"
    raise BindingError(
        f"argument {name!r} is {what}, but the function writes into it, which "
        "NumPy would do in the caller's array; pass a writable array (a copy: "
        "np.array(x))"
    )


def write_back(name: str, target: Any, value: Any) -> None:
    """Copy ``value``, the final value of argument ``name`` of a function
    that writes into it, into the caller's array ``target`` (checked by
    ``check_writable``), as NumPy would have left it."""
    if is_torch_tensor(target):
        import torch

        with torch.no_grad():
            target.copy_(value if is_torch_tensor(value) else to_torch(value))
        return
    np.copyto(target, to_numpy(value, name) if is_torch_tensor(value) else value)
