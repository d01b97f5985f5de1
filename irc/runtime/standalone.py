"""The loader of a saved irc artefact, runnable without irc.

``Compiled.save`` copies this file, unchanged, into every artefact it writes
as the artefact's ``__init__.py``, so the artefact directory is a Python
package whose ``load()`` gives the saved function as a callable. It imports
only the standard library, NumPy, torch and Triton, never irc or xDSL::

    import sys
    sys.path.insert(0, "/path/to")       # the directory holding the artefact
    import softmax_artifact              # the artefact's directory name
    f = softmax_artifact.load()          # or load(interpret=True)
    y = f(x)                             # NumPy in, NumPy out; torch, torch

A call flattens its arguments by the saved structure (dicts, lists and
tuples, as ``irc.pytree``), checks the static values against the saved ones
(``TypeError`` for another structure, ``ValueError`` for another static
value), converts the arrays to torch tensors on the kernels' device and
calls the emitted launcher (``kernels.py``), which checks the call itself:
count, dtypes, ranks, sizes, symbols and guards, raising its ``LaunchError``
(a ``ValueError``) naming the argument, axis, symbol and values. The results
come back in the structure the function returned them.

Kernels run on a CUDA GPU (``interpret=False``) or under Triton's
interpreter on the CPU (``interpret=True``); by default, the interpreter
when ``TRITON_INTERPRET=1`` or no GPU is there. Triton fixes when it is
imported whether its standard library is interpreted, so interpreting sets
``TRITON_INTERPRET=1`` for the process, and a process can interpret or
compile, not both. irc's runtime uses ``fix_interpreter_comparisons`` from
here too, so both run the interpreter alike.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

MANIFEST = "manifest.json"
KERNELS = "kernels.py"


def load(directory: str | os.PathLike[str] | None = None, *, interpret: Any = None):
    """The saved function of the artefact in ``directory`` (by default the
    one this file is in) as a callable."""
    here = Path(directory) if directory is not None else Path(__file__).parent
    return SavedFunction(here, interpret)


class SavedFunction:
    """A saved function, callable on NumPy arrays or torch tensors."""

    def __init__(self, directory: Path, interpret: bool | None):
        self.directory = directory
        self.manifest = json.loads((directory / MANIFEST).read_text("utf-8"))
        self.interpret = _choose_mode(interpret)
        self.kernels = _load_kernels(directory / KERNELS, self.interpret)
        self.launch = getattr(self.kernels, self.kernels.ENTRY)
        self.in_tree = self.manifest["in_tree"]
        self.out_tree = self.manifest["out_tree"]
        self.static = {
            int(leaf): decode_static(value)
            for leaf, value in self.manifest["static_leaves"].items()
        }
        self.leaf_names = self.manifest["leaf_names"]
        import torch

        self._torch = torch
        self.device = torch.device("cpu") if self.interpret else _gpu_device()

    def __repr__(self) -> str:
        mode = "interpreted" if self.interpret else "on the GPU"
        return f"<saved irc function {self.manifest['function']} ({mode})>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves: list[Any] = []
        if not flatten_as(self.in_tree, (list(args), dict(kwargs)), leaves):
            raise TypeError(
                f"{self.manifest['function']}: the arguments' structure differs from "
                f"the one saved: expected {tree_text(self.in_tree)}"
            )
        tensors = []
        for index, leaf in enumerate(leaves):
            if index in self.static:
                self._check_static(index, leaf)
            else:
                tensors.append(self._to_device(leaf))
        torch_in = any(isinstance(leaf, self._torch.Tensor) for leaf in leaves)
        if self.interpret:
            with np.errstate(all="ignore"):  # NumPy's values, not warnings
                outputs = self.launch(*tensors)
        else:
            outputs = self.launch(*tensors)
        if not torch_in:
            outputs = [to_numpy(o) for o in outputs]
        return unflatten(self.out_tree, iter(outputs))

    def _check_static(self, index: int, value: Any) -> None:
        expected = self.static[index]
        if not same_static(value, expected):
            raise ValueError(
                f"static argument {self.leaf_names[index]!r} was {expected!r} when "
                f"saved but is {value!r} now; save a compilation for it"
            )

    def _to_device(self, value: Any) -> Any:
        torch = self._torch
        if not isinstance(value, torch.Tensor):
            value = to_torch(np.asarray(value))
        return value if value.device == self.device else value.to(self.device)


def _choose_mode(interpret: bool | None) -> bool:
    """Whether kernels are interpreted: as asked, else as triton was
    imported, else ``TRITON_INTERPRET``, else whether a GPU is there."""
    imported = triton_mode()
    if interpret is None:
        if imported is not None:
            interpret = imported
        elif os.environ.get("TRITON_INTERPRET") == "1":
            interpret = True
        else:
            import torch

            interpret = not torch.cuda.is_available()
    if imported is not None and imported != interpret:
        raise RuntimeError(
            "triton was imported in this process to "
            f"{'interpret' if imported else 'compile'} kernels, which fixes how its "
            "standard library runs; load the artefact in a separate process"
        )
    if interpret:
        os.environ["TRITON_INTERPRET"] = "1"
    import triton.language  # noqa: F401  (imported for the mode chosen)

    if interpret:
        fix_interpreter_comparisons()
    return interpret


def _gpu_device() -> Any:
    """The torch device of Triton's active driver (a CUDA GPU, or the
    stand-in of a driver set with ``triton.runtime.driver.set_active``)."""
    import torch
    from triton.runtime import driver

    try:
        device = driver.active.get_active_torch_device()
    except RuntimeError as error:  # Triton found no active driver
        raise RuntimeError(
            f"no GPU for Triton ({error}); load(interpret=True) runs the kernels "
            "under Triton's interpreter"
        ) from None
    # torch's current CUDA device, as the launch itself runs on the current one.
    return torch.device("cuda") if device.type == "cuda" else device


def triton_mode() -> bool | None:
    """How this process's Triton runs kernels: True (interpreted), False
    (compiled), None (triton not imported yet)."""
    if "triton" not in sys.modules:
        return None
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction

    return isinstance(tl.sum, InterpretedFunction)


def _load_kernels(path: Path, interpret: bool) -> Any:
    """The emitted module, imported from its file (Triton reads the kernels'
    source from it), once per content and mode."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    name = f"irc_artifact_{digest}_{'interpret' if interpret else 'gpu'}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# Arguments and results ---------------------------------------------------


def flatten_as(tree: Mapping[str, Any], value: Any, leaves: list[Any]) -> bool:
    """Append ``value``'s leaves to ``leaves`` if it has the structure
    ``tree`` (``irc.pytree``'s, as the manifest writes it); else False."""
    kind = tree["kind"]
    if kind == "leaf":
        if _is_container(value):
            return False
        leaves.append(value)
        return True
    children = tree["children"]
    if kind == "dict":
        if not isinstance(value, dict) or list(value) != tree["keys"]:
            return False
        items = [value[k] for k in tree["keys"]]
    else:
        wanted = list if kind == "list" else tuple
        if not isinstance(value, wanted) or _is_namedtuple(value):
            return False
        if len(value) != len(children):
            return False
        items = list(value)
    return all(flatten_as(c, item, leaves) for c, item in zip(children, items))


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _is_container(value: Any) -> bool:
    return isinstance(value, dict | list) or (
        isinstance(value, tuple) and not _is_namedtuple(value)
    )


def unflatten(tree: Mapping[str, Any], leaves: Any) -> Any:
    kind = tree["kind"]
    if kind == "leaf":
        return next(leaves)
    children = [unflatten(c, leaves) for c in tree["children"]]
    if kind == "dict":
        return dict(zip(tree["keys"], children))
    return children if kind == "list" else tuple(children)


def tree_text(tree: Mapping[str, Any]) -> str:
    """``{x: *, w: [*, *]}``, as ``irc.pytree.TreeDef`` prints it."""
    kind = tree["kind"]
    if kind == "leaf":
        return "*"
    inner = [tree_text(c) for c in tree["children"]]
    if kind == "dict":
        return "{" + ", ".join(f"{k}: {c}" for k, c in zip(tree["keys"], inner)) + "}"
    return f"[{', '.join(inner)}]" if kind == "list" else f"({', '.join(inner)})"


def to_torch(array: np.ndarray) -> Any:
    """A NumPy array as a torch CPU tensor over its memory, strides kept (a
    broadcast stays a broadcast: the launcher copies what its kernels cannot
    read, sized first); bfloat16 through its bits. Only negative strides,
    which torch cannot view, are copied here."""
    import warnings

    import torch

    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    bf16 = array.dtype.name == "bfloat16"
    viewed = array.view(np.int16) if bf16 else array
    try:
        with warnings.catch_warnings():
            # A read-only array makes a writable tensor: kernels never write
            # their inputs.
            warnings.simplefilter("ignore", UserWarning)
            tensor = torch.from_numpy(viewed)
    except ValueError:  # negative strides
        tensor = torch.from_numpy(np.ascontiguousarray(viewed))
    return tensor.view(torch.bfloat16) if bf16 else tensor


def to_numpy(tensor: Any) -> np.ndarray:
    """A result tensor as a NumPy array (bfloat16 as ``ml_dtypes``')."""
    import torch

    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        import ml_dtypes

        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.numpy()


# Static values -----------------------------------------------------------


def decode_static(data: Mapping[str, Any]) -> Any:
    """A static value from its manifest form (``irc.artifact`` writes it)."""
    kind = data["kind"]
    if kind == "none":
        return None
    if kind in ("bool", "int", "str"):
        return {"bool": bool, "int": int, "str": str}[kind](data["value"])
    if kind == "float":
        return float(data["value"])
    if kind == "complex":
        return complex(data["value"])
    raw = base64.b64decode(data["data"])
    dtype = _numpy_dtype(data["dtype"])
    array = np.frombuffer(raw, dtype=dtype).reshape(data["shape"]).copy()
    return array if kind == "ndarray" else array[()]


def _numpy_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def same_static(value: Any, expected: Any) -> bool:
    """Whether a static argument equals the saved one, as irc checks it:
    the same type, arrays by dtype, shape and values, NaN equal to NaN."""
    if type(value) is not type(expected):
        return False
    if isinstance(value, np.ndarray):
        return value.dtype == expected.dtype and bool(
            np.array_equal(value, expected, equal_nan=value.dtype.kind in "fc")
        )
    if _is_nan(value) and _is_nan(expected):
        return True
    return bool(value == expected)


def _is_nan(value: Any) -> bool:
    if not isinstance(value, float | complex | np.floating | np.complexfloating):
        return False
    return bool(np.isnan(value))


# Triton's interpreter ----------------------------------------------------


_NUMPY_COMPARISONS = {
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
}


def fix_interpreter_comparisons() -> None:
    """Make the Triton 3.9 interpreter's comparisons yield ``int1`` handles.

    It gives a comparison's result the *operands'* dtype (``a < b`` on f64
    scalars is an "f64" handle holding bools), which goes unnoticed until
    such a scalar is broadcast to a block: the splat then makes float64 data
    and ``mask_row & mask_cols`` fails in NumPy. A scalar row mask combined
    with a block of column masks is common in tiled kernels, so the
    comparisons are replaced (same NumPy functions, same NaN behaviour as
    before, only the handle's dtype fixed). Idempotent."""
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    if getattr(builder, "_irc_comparisons_fixed", False):
        return
    for name in dir(builder):
        if name.startswith(("create_icmp", "create_fcmp")):
            compare = _NUMPY_COMPARISONS[name[-2:]]

            def fixed(self: Any, lhs: Any, rhs: Any, compare: Any = compare) -> Any:
                import triton.language as tl

                return interpreter.TensorHandle(compare(lhs.data, rhs.data), tl.int1)

            setattr(builder, name, fixed)
    builder._irc_comparisons_fixed = True
