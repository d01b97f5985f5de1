"""Bad inputs to a compiled function: each is a clear irc error or NumPy's
own answer, on the reference backend and on Triton's interpreter.

Every case is one row of ``CASES``: a compiled function, the arguments of
the call, and what must come of it, either ``Error(type, words...)`` (an
irc error of that type whose message holds every word: what is wrong,
which argument, how to fix it) or ``Answer(function)`` (the value NumPy
computes from the same arguments). The triton backend runs the same
launcher as the interpreter; without a GPU it is exercised through
``tests/fake_gpu_suite.py`` only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
import torch

import irc
from irc.errors import AllocationError, BindingError, IrcError, TracingError

#: np.matrix warns that it is not recommended, which is the point here.
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")

BACKENDS = ("reference", "interpret")


class Error(NamedTuple):
    kind: type[IrcError]
    words: tuple[str, ...]


class Answer(NamedTuple):
    numpy: Callable[..., Any]


def error(kind: type[IrcError], *words: str) -> Error:
    return Error(kind, words)


def _double(x):
    return x * 2.0


def _scale(x, s):
    return x * s


def _outer(x):
    return x[:, None] * x[None, :]


@functools.cache
def _compiled(name: str) -> irc.Compiled:
    vector = irc.TensorSpec(("N",), "float32")
    if name == "double":
        return irc.compile(_double, vector)
    if name == "scale_nan":
        return irc.compile(_scale, vector, float("nan"))
    if name == "outer":
        return irc.compile(_outer, vector)
    raise KeyError(name)


_X = np.arange(4, dtype=np.float32)
_HUGE = 2**20  # an outer product of 4 TiB


class Case(NamedTuple):
    program: str
    arguments: Callable[[], tuple[Any, ...]]
    expected: Error | Answer


CASES: dict[str, Case] = {
    "masked array": Case(
        "double",
        lambda: (np.ma.masked_array(_X, mask=[0, 1, 0, 0]),),
        error(BindingError, "'x'", "masked array", "np.ma.filled"),
    ),
    "np.matrix": Case(
        "double",
        lambda: (np.asmatrix(_X),),
        error(BindingError, "'x'", "np.matrix", "np.asarray"),
    ),
    "big-endian array": Case(
        "double", lambda: (_X.astype(">f4"),), Answer(lambda x: x * np.float32(2))
    ),
    "little-endian array (explicit)": Case(
        "double", lambda: (_X.astype("<f4"),), Answer(lambda x: x * np.float32(2))
    ),
    "reversed view": Case(
        "double", lambda: (_X[::-1],), Answer(lambda x: x * np.float32(2))
    ),
    "read-only array": Case(
        "double",
        lambda: (np.frombuffer(_X.tobytes(), np.float32),),
        Answer(lambda x: x * np.float32(2)),
    ),
    "torch meta tensor": Case(
        "double",
        lambda: (torch.empty(4, device="meta"),),
        error(BindingError, "'x'", "meta", "no data"),
    ),
    "sparse torch tensor": Case(
        "double",
        lambda: (torch.arange(4.0).to_sparse(),),
        error(BindingError, "'x'", "layout", "to_dense"),
    ),
    "list": Case(
        "double",
        lambda: ([1.0, 2.0],),
        error(BindingError, "'x' must be an array or a value, got a list of 2 items"),
    ),
    "None": Case(
        "double",
        lambda: (None,),
        error(BindingError, "'x'", "NumPy array or a torch tensor", "NoneType"),
    ),
    "wrong dtype": Case(
        "double",
        lambda: (_X.astype(np.float64),),
        error(BindingError, "'x'", "float64", "convert"),
    ),
    "object array": Case(
        "double",
        lambda: (_X.astype(object),),
        error(BindingError, "'x'", "dtype", "convert"),
    ),
    "NaN static argument": Case(
        "scale_nan",
        lambda: (_X, float("nan")),
        Answer(lambda x, s: x * np.float32(s)),
    ),
    "NaN static argument as np.float64": Case(
        "scale_nan",
        lambda: (_X, np.float64("nan")),
        error(BindingError, "static argument 's'"),  # another type than compiled
    ),
    "other static argument": Case(
        "scale_nan", lambda: (_X, 1.0), error(BindingError, "static argument 's'")
    ),
    "allocation past memory": Case(
        "outer",
        lambda: (np.ones(_HUGE, np.float32),),
        error(AllocationError, "could not allocate", "1048576", "smaller sizes"),
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input(name: str, backend: str) -> None:
    case = CASES[name]
    compiled = _compiled(case.program)
    arguments = case.arguments()
    if isinstance(case.expected, Error):
        with pytest.raises(case.expected.kind) as caught:
            compiled(*arguments, backend=backend)
        message = str(caught.value)
        for word in case.expected.words:
            assert word in message, message
        return
    got = compiled(*arguments, backend=backend)
    plain = [np.asarray(a) if isinstance(a, np.ndarray) else a for a in arguments]
    np.testing.assert_array_equal(np.asarray(got), case.expected.numpy(*plain))


# irc.jit -------------------------------------------------------------------


@irc.jit
def _plus_one(x):
    return x + 1.0


@irc.jit
def _rows(x):
    return x.shape[0] * x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("function", "argument", "described"),
    [
        (_plus_one, [1.0, 2.0], "'x' is list of numbers"),
        (_plus_one, None, "'x' is None"),
        (_rows, None, "'x' is None"),
        (_rows, (1.0, 2.0), "'x' is tuple of numbers"),
    ],
)
def test_jit_non_array(function: Any, argument: Any, described: str, backend: str):
    """A list or None where an array was meant: the user's function fails
    on it while tracing, and the error names the argument and the fix."""
    with pytest.raises(TracingError) as caught:
        function(argument, backend=backend)
    message = str(caught.value)
    assert described in message and "np.asarray" in message, message


def test_jit_scalar_static_is_numpy_answer() -> None:
    assert _plus_one(3.0, backend="reference") == 4.0


def test_jit_nan_static_compiles_once() -> None:
    @irc.jit
    def scale(x, s):
        return x * s

    for _ in range(3):
        got = scale(_X, float("nan"), backend="reference")
        assert np.isnan(got).all()
    assert len(scale.cache) == 1


# take indices ----------------------------------------------------------------


def _gather(table, ids):
    return table[ids]


@functools.cache
def _gather_compiled() -> irc.Compiled:
    return irc.compile(
        _gather, irc.TensorSpec(("V", 2), "float32"), irc.TensorSpec(("K",), "int64")
    )


@functools.cache
def _bounded_gather_compiled() -> irc.Compiled:
    """With guards that bound every extent, kernels index in i32."""
    return irc.compile(
        _gather,
        irc.TensorSpec(("V", 2), "float32"),
        irc.TensorSpec(("K",), "int64"),
        facts=["V <= 1024", "K <= 1024"],
    )


# The rule for take's indices (docs/capture.md): negative ones wrap as in
# NumPy on every backend; one outside [-V, V) is an error on the reference
# backend (the debug mode) and undefined in compiled kernels, which mask it
# and read 0 rather than memory outside the table.


@pytest.mark.parametrize("backend", BACKENDS)
def test_take_wraps_negative_indices_as_numpy(backend: str) -> None:
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    ids = np.array([-1, -4, 0, 3, -2])
    for compiled in (_gather_compiled(), _bounded_gather_compiled()):
        result = np.asarray(compiled(table, ids, backend=backend))
        np.testing.assert_array_equal(result, table[ids])


@pytest.mark.parametrize("index", [4, -5, 2**32 + 1, -(2**32) - 1])
def test_take_index_out_of_range_is_an_error_on_the_reference_backend(
    index: int,
) -> None:
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    with pytest.raises(irc.ExecutionError) as caught:
        _gather_compiled()(table, np.array([index]), backend="reference")
    assert "out of range" in str(caught.value)


@pytest.mark.parametrize("index", [4, -5, 2**32 + 1, -(2**32) - 1])
def test_kernels_never_read_outside_the_table(index: int) -> None:
    """Also where the kernel indexes in i32: the range is checked before
    the ids narrow (2**32 + 1 would otherwise read row 1)."""
    table = np.arange(1, 9, dtype=np.float32).reshape(4, 2)
    for compiled in (_gather_compiled(), _bounded_gather_compiled()):
        result = np.asarray(compiled(table, np.array([index]), backend="interpret"))
        np.testing.assert_array_equal(result, np.zeros((1, 2), np.float32))
