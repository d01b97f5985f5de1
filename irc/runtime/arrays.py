"""Arrays crossing the API: NumPy arrays and torch tensors in, the same kind
out. Every backend converts through here."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from irc.errors import BindingError


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
