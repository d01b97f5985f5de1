"""The emitted launcher's checks against the reference backend's.

Each host function of an emitted module becomes ``launch_<name>(*tensors)``,
which tests a whole call in one expression (count, ranks, dtypes, devices,
static dims, repeated symbols, guards, contiguity) and, when that test
fails, runs again on what ``admit_<name>(tensors)`` gives: the same checks
one at a time, raising the module's ``LaunchError`` with a message naming
what is wrong, or the tensors made contiguous when a strided view is all
that is wrong, or ``LaunchError('internal error: ...')`` when it finds
nothing. The two are printed separately, so they can drift apart, and
either can drift from ``irc.runtime.binding``, which the reference backend
checks calls with.

On random calls, right and wrong (argument count, rank, dtype, sizes that
break a static dim, a repeated symbol or a guard, symbols of size 0, each
tensor possibly a strided view), this checks that

- the launcher accepts a call exactly when the reference backend does
  (which raises ``BindingError`` otherwise), and then returns its results;
- a refused call's ``LaunchError`` is a precise one, never the internal
  error;
- the admission, called directly, raises the internal error exactly on the
  calls of contiguous tensors that the reference backend accepts, and
  returns contiguous copies of the same values for the other accepted
  calls: it finds every fault that the fast test finds, and none that the
  fast test does not.

Calls that only the launcher refuses (NumPy arrays, Python values, tensors
on two devices, sparse tensors) are checked for a precise ``LaunchError``.
Shapes are tiny (sizes 0 to 5): the accepted calls run on Triton's
interpreter.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
import pytest
import torch
from hypothesis import event, given, settings
from hypothesis import strategies as st

import irc
from irc import pytree
from irc.errors import BindingError
from irc.runtime import triton_backend

DTYPES = ("float32", "float64", "int32", "int64")


def _spec(*dims: int | str, dtype: str = "float32") -> irc.TensorSpec:
    return irc.TensorSpec(dims, dtype)


class Program(NamedTuple):
    """A function, the specs it is compiled for, and the declared facts."""

    function: Callable[..., Any]
    specs: tuple[irc.TensorSpec, ...]
    facts: tuple[str, ...] = ()


def add(x, y):
    return x + y


def scale(x, row):
    return x * row


def head(x):
    return x[:2] * 2.0  # guard 2 <= N


def window(x, y):
    return x[: y.shape[0]] - y  # guard M <= N


def bounded(x, y):
    return x[: y.shape[0]] * 3.0  # guard M <= N, and the facts


def tail(x):
    return x[1:] + 1.0  # [N - 1, D]: nothing to launch when N = 1


def pairs(x):
    return x.reshape(-1, 2).sum(1)  # needs the fact N mod 2 == 0


def declared_equal(x, y):
    return x + y  # broadcasts only because of the fact N == M


def matmul(x, w):
    return x @ w


def column_sums(i):
    return i.sum(0)


def mixed(s, x, i):
    return s * x + i.astype(np.float64)


def gather(ids, table, positions):
    return table[ids] + positions[: ids.shape[0]]  # guard N <= 4


def unused(x, y):
    return x * 2.0


def identity(x):
    return x


def empty(x, y):
    return x + y


PROGRAMS: dict[str, Program] = {
    "add": Program(add, (_spec("N", "D"), _spec("N", "D"))),
    "scale": Program(scale, (_spec("N", 3), _spec(1, 3))),
    "head": Program(head, (_spec("N", "D"),)),
    "window": Program(window, (_spec("N", "D"), _spec("M", "D"))),
    "bounded": Program(bounded, (_spec("N"), _spec("M")), ("M <= N", "N <= 4")),
    "tail": Program(tail, (_spec("N", "D"),)),
    "pairs": Program(pairs, (_spec("N", "D"),), ("N % 2 == 0",)),
    "declared_equal": Program(declared_equal, (_spec("N"), _spec("M")), ("N == M",)),
    "matmul": Program(matmul, (_spec("N", "K"), _spec("K", "M"))),
    "column_sums": Program(column_sums, (_spec("N", 2, dtype="int32"),)),
    "mixed": Program(
        mixed,
        (
            _spec(dtype="float64"),
            _spec("N", dtype="float64"),
            _spec("N", dtype="int64"),
        ),
    ),
    "gather": Program(
        gather, (_spec("N", dtype="int64"), _spec(5, "D"), _spec(4, "D"))
    ),
    "unused": Program(unused, (_spec("N"), _spec("N", 4))),
    "identity": Program(identity, (_spec("N", 2),)),
    "empty": Program(empty, (_spec(0, "D"), _spec(0, "D"))),
}


class Emitted(NamedTuple):
    """A compiled program and the launcher and admission of its emitted
    module."""

    compiled: irc.Compiled
    module: ModuleType
    launcher: Callable[..., Any]
    admission: Callable[[Sequence[Any]], Any]


@functools.cache
def emitted(name: str) -> Emitted:
    """The program compiled, its emitted module loaded for the interpreter,
    and the module's launcher and admission."""
    program = PROGRAMS[name]
    compiled = irc.compile(program.function, *program.specs, facts=program.facts)
    module = triton_backend.load_source(compiled.triton_source, interpret=True)
    launcher = getattr(module, module.ENTRY)
    admission = getattr(module, "admit_" + module.ENTRY.removeprefix("launch_"))
    return Emitted(compiled, module, launcher, admission)


def _array(shape: Sequence[int], dtype: str) -> np.ndarray:
    """Small exact values; integers are 0 or 1, valid indices into any table
    of two rows or more (``gather``'s static table has five)."""
    size = int(np.prod(shape, dtype=np.int64))
    if dtype.startswith("int"):
        values = np.arange(size) % 2
    else:
        values = np.arange(size) % 7 - 3.0
    return values.reshape(shape).astype(dtype)


#: A flag that is rarely set and shrinks to unset.
rarely = st.integers(0, 5).map(lambda n: n == 5)


@st.composite
def calls(
    draw: Callable[..., Any], specs: Sequence[irc.TensorSpec]
) -> list[np.ndarray]:
    """Arrays for one call: mostly of the specs' ranks, dtypes and static
    dims under one drawn binding of the symbols, each of which may be wrong:
    the count, an argument's dtype or rank, one axis's size, a symbol of
    size 0, symbols bound alike (to meet guards such as ``N == M``)."""
    symbols = sorted({d for s in specs for d in s.shape if isinstance(d, str)})
    sizes = st.integers(1, 5) if not draw(rarely) else st.integers(0, 5)
    binding = {s: draw(sizes) for s in symbols}
    if symbols and draw(rarely):
        binding = dict.fromkeys(symbols, binding[symbols[0]])
    count = len(specs)
    if draw(rarely):
        count = draw(st.integers(0, len(specs) + 1))
    arrays = []
    for index in range(count):
        spec = specs[index] if index < len(specs) else draw(st.sampled_from(specs))
        dtype = spec.dtype.name
        if draw(rarely):
            dtype = draw(st.sampled_from(DTYPES))
        shape = [binding[d] if isinstance(d, str) else d for d in spec.shape]
        if shape and draw(rarely):
            axis = draw(st.integers(0, len(shape) - 1))
            shape[axis] = draw(st.integers(0, 5))
        if draw(rarely):
            if shape and draw(st.booleans()):
                shape.pop(draw(st.integers(0, len(shape) - 1)))
            else:
                shape.insert(draw(st.integers(0, len(shape))), draw(st.integers(1, 3)))
        arrays.append(_array(shape, dtype))
    return arrays


def _reference(compiled: irc.Compiled, arrays: Sequence[np.ndarray]) -> Any:
    """The reference backend's results as a list, or its ``BindingError``."""
    try:
        result = compiled(*arrays, backend="reference")
    except BindingError as err:
        return err
    return pytree.flatten(result)[0]


def _launch(program: Emitted, tensors: Sequence[Any]) -> Any:
    """The launcher's results, or its ``LaunchError`` (anything else it
    raises fails the test)."""
    try:
        with np.errstate(all="ignore"):
            return list(program.launcher(*tensors))
    except program.module.LaunchError as err:
        return err


def _admission_message(program: Emitted, tensors: Sequence[Any]) -> str:
    """The message of the ``LaunchError`` the admission raises (it does for
    any call of contiguous tensors)."""
    with pytest.raises(program.module.LaunchError) as caught:
        program.admission(tuple(tensors))
    return str(caught.value)


def _strided_view(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor``'s values in a view that is not contiguous: every other
    element of a buffer twice as long."""
    spread = torch.zeros((*tensor.shape[:-1], 2 * tensor.shape[-1]), dtype=tensor.dtype)
    view = spread[..., ::2]
    view.copy_(tensor)
    return view


def _check_admission(program: Emitted, tensors: Sequence[Any], accepted: bool) -> None:
    """The admission refuses what the reference backend refuses, precisely;
    of an accepted call, it says 'internal error' if its tensors are all
    contiguous, else gives them back contiguous, with the same values."""
    if not accepted or all(t.is_contiguous() for t in tensors):
        internal = "internal error" in _admission_message(program, tensors)
        assert internal == accepted
        return
    admitted = program.admission(tuple(tensors))
    assert len(admitted) == len(tensors)
    for tensor, copy in zip(tensors, admitted):
        assert copy.is_contiguous()
        assert torch.equal(copy, tensor)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@settings(max_examples=50)
@given(data=st.data())
def test_launcher_agrees_with_reference(name: str, data: st.DataObject) -> None:
    """The launcher accepts exactly the calls the reference backend accepts,
    then computes what it computes; a refusal is always a precise
    ``LaunchError``; the admission alone says 'internal error' exactly for
    the calls that the fast test should have accepted, or copies their
    strided views."""
    program = emitted(name)
    arrays = data.draw(calls(PROGRAMS[name].specs), label="arrays")
    tensors = [
        _strided_view(t) if t.numel() > 1 and data.draw(rarely, label="view") else t
        for t in (torch.from_numpy(a.copy()) for a in arrays)
    ]
    event("strided view" if not all(t.is_contiguous() for t in tensors) else "dense")
    expected = _reference(program.compiled, arrays)
    got = _launch(program, tensors)
    accepted = not isinstance(expected, BindingError)
    event("accepted" if accepted else "refused")
    if isinstance(got, Exception):
        assert "internal error" not in str(got), str(got)
        assert not accepted, f"the launcher refused a call the reference accepts: {got}"
    else:
        assert accepted, f"the launcher accepted a call refused with: {expected}"
        assert len(got) == len(expected)
        for result, reference in zip(got, expected):
            assert tuple(result.shape) == reference.shape
            assert result.numpy().dtype == reference.dtype
            np.testing.assert_allclose(result.numpy(), reference, rtol=1e-6)
    _check_admission(program, tensors, accepted)


def _foreign(kind: str, tensor: Any) -> Any:
    """``tensor`` as something the launcher must refuse."""
    if kind == "numpy":
        return tensor.numpy()
    if kind == "list":
        return tensor.tolist()
    if kind == "meta":
        return tensor.to("meta")
    if kind == "sparse":
        return tensor.to_sparse()
    return {"float": 1.5, "none": None}[kind]


@st.composite
def foreign_calls(
    draw: Callable[..., Any], specs: Sequence[irc.TensorSpec]
) -> tuple[str, list[Any]]:
    """A call with every argument right but one that is not a dense CPU
    torch tensor: a NumPy array, a Python value, a sparse tensor, or a
    tensor on the meta device (only beside a CPU tensor, so that the call
    never runs on meta)."""
    binding = {d: 2 for s in specs for d in s.shape if isinstance(d, str)}
    tensors: list[Any] = [
        torch.from_numpy(_array([binding.get(d, d) for d in s.shape], s.dtype.name))
        for s in specs
    ]
    index = draw(st.integers(0, len(tensors) - 1))
    kinds = ["numpy", "float", "none", "list"] + (["meta"] if len(tensors) > 1 else [])
    kinds += ["sparse"] if tensors[index].dim() >= 1 else []
    kind = draw(st.sampled_from(kinds))
    tensors[index] = _foreign(kind, tensors[index])
    return kind, tensors


@pytest.mark.parametrize("name", ["add", "mixed", "gather", "identity"])
@settings(max_examples=10)
@given(data=st.data())
def test_foreign_arguments_are_refused_precisely(
    name: str, data: st.DataObject
) -> None:
    """An argument that is not a torch tensor, one on another device, or a
    sparse one is refused by a precise ``LaunchError``, by the launcher and
    the admission alike."""
    program = emitted(name)
    kind, arguments = data.draw(foreign_calls(PROGRAMS[name].specs), label="call")
    got = _launch(program, arguments)
    assert isinstance(got, program.module.LaunchError)
    message = _admission_message(program, arguments)
    assert str(got) == message
    assert "internal error" not in message
    if kind == "meta":
        assert "is on meta but argument 0 is on cpu" in message or (
            "is on cpu but argument 0 is on meta" in message
        ), message
    elif kind == "sparse":
        assert "is a sparse_coo tensor but the kernels read dense" in message, message
    else:
        foreign = next(a for a in arguments if not isinstance(a, torch.Tensor))
        assert f"must be a torch tensor, got {type(foreign).__name__}" in message


@pytest.mark.parametrize(
    ("name", "shapes", "accepted"),
    [
        ("add", [(2, 3), (2, 3)], True),
        ("add", [(2, 3), (3, 3)], False),
        ("add", [(0, 3), (0, 3)], False),
        ("scale", [(4, 3), (1, 3)], True),
        ("scale", [(4, 3), (4, 3)], False),
        ("head", [(2, 1)], True),
        ("head", [(1, 1)], False),
        ("window", [(3, 2), (3, 2)], True),
        ("window", [(2, 2), (3, 2)], False),
        ("bounded", [(4,), (2,)], True),
        ("bounded", [(5,), (2,)], False),
        ("bounded", [(3,), (4,)], False),
        ("tail", [(1, 2)], True),
        ("pairs", [(4, 1)], True),
        ("pairs", [(3, 1)], False),
        ("declared_equal", [(3,), (3,)], True),
        ("declared_equal", [(3,), (2,)], False),
        ("gather", [(4,), (5, 2), (4, 2)], True),
        ("gather", [(5,), (5, 2), (4, 2)], False),
        ("empty", [(0, 2), (0, 2)], True),
        ("empty", [(1, 2), (1, 2)], False),
    ],
)
def test_known_calls(name: str, shapes: list[tuple[int, ...]], accepted: bool) -> None:
    """Hand-picked calls on each side of a static dim, a repeated symbol, a
    guard and a declared fact, so that both outcomes are sure to be seen."""
    specs = PROGRAMS[name].specs
    arrays = [_array(shape, s.dtype.name) for shape, s in zip(shapes, specs)]
    program = emitted(name)
    tensors = [torch.from_numpy(a.copy()) for a in arrays]
    expected = _reference(program.compiled, arrays)
    got = _launch(program, tensors)
    assert isinstance(expected, BindingError) is (not accepted), expected
    assert isinstance(got, Exception) is (not accepted), got
    assert ("internal error" in _admission_message(program, tensors)) is accepted


def sliced_matmul(x, w):
    return x[:8] @ w  # guard 8 <= N


SLICED = irc.compile(
    sliced_matmul,
    irc.TensorSpec(("N", "D"), "float32"),
    irc.TensorSpec(("D", 4), "float32"),
)
F32 = np.float32


@pytest.mark.parametrize(
    "arrays",
    [
        pytest.param([np.ones((9, 3), np.float64), np.ones((3, 4), F32)], id="dtype"),
        pytest.param([np.ones(9, F32), np.ones((3, 4), F32)], id="rank"),
        pytest.param([np.ones((9, 3), F32), np.ones((3, 5), F32)], id="static"),
        pytest.param([np.ones((9, 3), F32), np.ones((2, 4), F32)], id="symbol"),
        pytest.param([np.ones((9, 0), F32), np.ones((0, 4), F32)], id="empty"),
        pytest.param([np.ones((7, 3), F32), np.ones((3, 4), F32)], id="guard"),
    ],
)
def test_messages_match_the_reference_backend(arrays: list[np.ndarray]) -> None:
    """The launcher's refusals read as the reference backend's: the same
    words for the argument, axis, symbol, values and guard (a guard's
    location is spelled ``file:line`` by one, ``loc(...)`` by the other)."""
    messages = []
    for backend in ("reference", "interpret"):
        with pytest.raises(BindingError) as refused:
            SLICED(*arrays, backend=backend)
        messages.append(str(refused.value).split(" (sym.guard")[0].split(" (at ")[0])
    assert messages[0] == messages[1]
