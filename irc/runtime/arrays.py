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
    bfloat16 through its bits, which NumPy cannot take from torch)."""
    if is_torch_tensor(value):
        tensor = value.detach().cpu()
        if str(tensor.dtype) == "torch.bfloat16":
            import torch

            return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return tensor.numpy()
    if isinstance(value, np.ndarray | np.generic):
        return np.asarray(value)
    raise BindingError(
        f"argument {name!r} must be a NumPy array or a torch tensor, got "
        f"{type(value).__name__}"
    )


def to_torch(array: np.ndarray) -> Any:
    """A result as a torch tensor of the same dtype and shape (rank 0 too)."""
    import torch

    array = np.asarray(array, order="C")
    if array.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)
