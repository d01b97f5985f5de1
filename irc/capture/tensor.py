"""The proxies that stand for arrays and symbolic sizes while a function is
traced.

Python operators are routed through NumPy's own ufuncs (``x + y`` is
``np.add(x, y)``) and methods through NumPy's functions (``x.sum()`` is
``np.sum(x)``), so both reach the same handlers via ``__array_ufunc__`` and
``__array_function__``: operator semantics are NumPy's by construction. The
handlers live in ``irc.capture.numpy_api`` and register themselves in the
tables below.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.ir import BlockArgument, SSAValue

from irc.capture.trace import (
    call_in_progress,
    current_instruction,
    current_trace,
    is_irc_file,
    is_user_frame,
    looks_up,
    tracing_error,
    user_frame,
)
from irc.dialects.graph import TensorType
from irc.dialects.sym import product
from irc.dtypes import DType, dtype
from irc.errors import IrcError
from irc.shapes import SymExpr

if TYPE_CHECKING:
    from irc.capture.views import View

#: NumPy ufunc -> handler(*inputs, **kwargs) for ``method == "__call__"``.
UFUNC_HANDLERS: dict[np.ufunc, Callable[..., Any]] = {}
#: NumPy ufunc -> handler(array, axis, keepdims) for ``method == "reduce"``.
UFUNC_REDUCE_HANDLERS: dict[np.ufunc, Callable[..., Any]] = {}
#: NumPy ufunc -> handler(array, indices, values) for ``method == "at"``.
UFUNC_AT_HANDLERS: dict[np.ufunc, Callable[..., Any]] = {}
#: NumPy function -> handler(*args, **kwargs).
FUNCTION_HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {}


def call_handler(name: str, handler: Callable[..., Any], args: tuple, kwargs: dict):
    """Call a handler, refusing arguments it does not take by name (NumPy
    options irc does not support, such as ``where=`` or ``casting=``)."""
    try:
        inspect.signature(handler).bind(*args, **kwargs)
    except TypeError as err:
        raise tracing_error(f"{name}: {err}; irc does not support it") from None
    return handler(*args, **kwargs)


def _overridden(values: Sequence[Any]) -> bool:
    """Whether an operand takes over the NumPy protocols from traced arrays
    (``irc.capture.writes.MaskRead``)."""
    return any(getattr(type(v), "irc_overrides_tensors", False) for v in values)


def _dispatch_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    if _overridden(inputs):
        return NotImplemented
    out = kwargs.pop("out", None)
    if out is not None:
        from irc.capture.writes import into_out

        return into_out(ufunc, method, inputs, kwargs, out)
    name = f"np.{ufunc.__name__}"
    if method == "__call__" and ufunc in UFUNC_HANDLERS:
        result = call_handler(name, UFUNC_HANDLERS[ufunc], inputs, kwargs)
        return _unshared(result, inputs)
    if method == "reduce" and ufunc in UFUNC_REDUCE_HANDLERS:
        result = call_handler(
            f"{name}.reduce", UFUNC_REDUCE_HANDLERS[ufunc], inputs, kwargs
        )
        return _unshared(result, inputs)
    if method == "at" and ufunc in UFUNC_AT_HANDLERS:
        return call_handler(f"{name}.at", UFUNC_AT_HANDLERS[ufunc], inputs, kwargs)
    name = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    raise tracing_error(
        f"{name} is not supported by irc on traced arrays; supported ufuncs: "
        f"{', '.join(supported_ufuncs())}"
    )


#: NumPy functions whose results are views of their operand (the others
#: return new arrays, even where irc computes nothing: ``np.clip`` without
#: bounds, a ``np.concatenate`` of one array).
VIEW_FUNCTIONS: frozenset[Callable[..., Any]] = frozenset(
    {
        np.reshape,
        np.transpose,
        np.swapaxes,
        np.expand_dims,
        np.squeeze,
        np.broadcast_to,
        np.split,
        np.ravel,
    }
)


def _unshared(result: Any, inputs: Sequence[Any]) -> Any:
    """``result`` as a new array where the handler returned an operand or a
    view of one (NumPy's result shares no memory with the operands)."""
    if isinstance(result, list | tuple):
        return type(result)(_unshared(r, inputs) for r in result)
    if isinstance(result, Tensor) and (
        result.view is not None or any(result is i for i in _leaves(inputs))
    ):
        from irc.capture.views import copy

        return copy(result)
    return result


def _leaves(values: Any) -> Iterator[Any]:
    """``values`` and what their lists and tuples hold."""
    for value in values:
        if isinstance(value, list | tuple):
            yield from _leaves(value)
        else:
            yield value


def supported_ufuncs() -> list[str]:
    """The NumPy ufuncs irc captures, read from the handler table so that
    messages cannot name one it lacks nor leave one out (a primitive's
    reference ufunc from outside NumPy, such as SciPy's, is not listed)."""
    names = (f"np.{u.__name__}" for u in UFUNC_HANDLERS)
    return sorted(n for n in names if getattr(np, n[3:], None) in UFUNC_HANDLERS)


def supported_functions() -> list[str]:
    """The NumPy functions irc captures, named where NumPy exports them
    (``np.linalg.norm``), read from the handler table as the ufuncs are."""
    return sorted({_qualified(f) for f in FUNCTION_HANDLERS})


def _supported_functions() -> str:
    """For messages: the functions, then the ufuncs (``np.exp``), which are
    captured too and would otherwise read as missing."""
    return (
        f"{', '.join(supported_functions())}; supported ufuncs: "
        f"{', '.join(supported_ufuncs())}"
    )


#: Where a symbolic size is taken as it is, for messages.
SIZE_TAKERS = (
    "np.arange, np.empty, np.eye, np.full, np.ones, np.tri and np.zeros "
    "(written np.<name> in the traced code), reshape and slicing"
)


def _captured(callee: Any) -> bool:
    try:
        return callee is not None and callee in FUNCTION_HANDLERS
    except TypeError:  # unhashable
        return False


def outside_irc(subject: str, need: str, message: str, alternatives: str) -> IrcError:
    """The error for a traced value (``subject``: ``"the symbolic size N"``,
    ``"a traced array"``) that code outside irc needs as ``need`` (``"an
    int"``): called from the proxy's conversion methods (``__index__``,
    ``__array__``). NumPy's C code (``np.random.rand(x.shape[0])``) has no
    frame, so the function is named from the user's line (the call it is
    making); ``message`` is the error when that is unknown."""
    frame = sys._getframe(2)  # the caller of the conversion method
    by_irc = False  # an irc handler needed the value, not NumPy's code
    while frame is not None and not is_user_frame(frame):
        by_irc = by_irc or is_irc_file(frame.f_code.co_filename)
        frame = frame.f_back
    call = call_in_progress(frame)
    if call is None or message.startswith(f"{call.text}() "):  # len(x)
        return tracing_error(message)
    if by_irc:
        return tracing_error(f"{call.text}(): {message}")
    if call.is_numpy_random():
        return tracing_error(
            f"{call.text}() was given {subject}: random numbers cannot be traced "
            "(irc has no random-number ops, and a function is traced once, so "
            "its random values would be fixed in the IR). Pass the random "
            "values in as an argument, or leave the op out of the traced "
            "function (a dropout with p = 0 is the identity)"
        )
    from irc.capture.intercept import CREATION

    for name in CREATION:
        if call.callee is not None and call.callee is vars(np).get(name):
            return tracing_error(
                f"{call.text}() is NumPy's own np.{name}, which needs {need} "
                f"where it was given {subject}: irc takes symbolic sizes in "
                f"np.{name} where the traced code looks it up as np.{name} (not "
                "through a name imported before the trace, nor getattr)"
            )
    if _captured(call.callee):
        return tracing_error(
            f"{call.text}() is captured by irc when one of its arguments is a "
            f"traced array; with none, NumPy's own code ran and needs {need} "
            f"where it was given {subject}; {alternatives}"
        )
    if call.is_numpy():
        return tracing_error(
            f"{call.text}() is not supported by irc on traced values: NumPy's "
            f"own code needs {need} where it was given {subject}; {alternatives}"
        )
    return tracing_error(f"{call.text}() was given {subject}: {message}")


#: The bytecode of ``a[key]``: NumPy's own indexing of a constant array
#: asks a traced key for an int or an array.
_SUBSCRIPTS = frozenset({"BINARY_SUBSCR", "BINARY_SLICE"})


def constant_indexed_by(subject: str) -> IrcError | None:
    """The error for a NumPy array indexed or sliced by ``subject`` (a
    symbolic size or a traced array), when that is what the user's line is
    doing: NumPy cannot, and irc can only index a traced array."""
    frame = user_frame()
    instruction = None if frame is None else current_instruction(frame)
    if instruction is None or not (
        instruction.opname in _SUBSCRIPTS
        or (instruction.opname == "BINARY_OP" and instruction.argrepr == "[]")
    ):
        return None
    return tracing_error(
        f"a NumPy array (or another container that is not a traced array) is "
        f"indexed or sliced by {subject}, which it cannot read at trace time; "
        "pass the array as an argument (an irc.TensorSpec) so that irc indexes "
        "the traced array"
    )


def _qualified(function: Callable[..., Any]) -> str:
    """``np.linalg.norm`` rather than ``np.norm``."""
    module = getattr(function, "__module__", "numpy") or "numpy"
    prefix = "np" if module == "numpy" or module.startswith("numpy._") else module
    prefix = prefix.replace("numpy.", "np.")
    return f"{prefix}.{function.__name__}"


class Tensor:
    """A traced array: an SSA value of the graph function being captured.

    ``weak`` marks values that stand for Python scalars (results of
    arithmetic on symbolic sizes such as ``1 / x.shape[0]``): as in NumPy 2,
    they take the dtype of the arrays they meet.

    Writes (``x[i] = v``, ``x += v``) give the array a new value. An array
    that shares memory with others (a view, or an array a view was taken
    of) has a ``view`` (``irc.capture.views``): its value is recomputed from
    the shared base when a write through another alias changed it
    (``version`` is the base's version it was computed at). ``argument``
    marks a function argument, whose writes are returned for the caller.
    """

    __slots__ = ("_value", "argument", "trace", "version", "view", "weak")

    def __init__(self, value: SSAValue, weak: bool = False):
        self.trace = current_trace()
        self._value = value
        self.weak = weak
        self.view: View | None = None
        self.version = 0
        self.argument = isinstance(value, BlockArgument)

    @property
    def value(self) -> SSAValue:
        """The array's SSA value now (after the writes through its aliases)."""
        view = self.view
        if view is not None and self.version != view.storage.version:
            self._value = view.current()
            self.version = view.storage.version
        return self._value

    def set_value(self, value: SSAValue) -> None:
        """Rebind the array to ``value`` (``irc.capture.views.assign``)."""
        self._value = value

    # ----- properties ---------------------------------------------------
    @property
    def type(self) -> TensorType:
        value_type = self.value.type
        assert isinstance(value_type, TensorType)
        return value_type

    @property
    def dtype(self) -> np.dtype:
        return self.irc_dtype.numpy

    @property
    def irc_dtype(self) -> DType:
        return dtype(self.type.element_type)

    @property
    def shape(self) -> tuple[int | SymDim, ...]:
        return tuple(dim_proxy(d) for d in self.type.dims)

    @property
    def ndim(self) -> int:
        return self.type.rank

    @property
    def size(self) -> int | SymDim:
        return dim_proxy(product(self.type.dims))

    @property
    def T(self) -> Tensor:
        return np.transpose(self)

    # ----- NumPy protocols ----------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kw: Any):
        return _dispatch_ufunc(ufunc, method, inputs, kw)

    def __array_function__(self, func: Callable, types: Any, args: tuple, kw: dict):
        if _overridden(list(_leaves(args))):
            return NotImplemented
        handler = FUNCTION_HANDLERS.get(func)
        if handler is None:
            raise tracing_error(
                f"{_qualified(func)} is not supported by irc on traced arrays; "
                f"supported functions: {_supported_functions()}"
            )
        result = call_handler(_qualified(func), handler, args, kw)
        return result if func in VIEW_FUNCTIONS else _unshared(result, args)

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes a Tensor lacks: NumPy's array methods
        # irc does not capture. Protocol probes (dunders) and lookups that
        # are not the user's own ``x.name`` (NumPy's C code probing for
        # ``.capsule``, ``hasattr``) stay AttributeErrors.
        frame = sys._getframe(1)
        if name.startswith("__") or not (
            is_user_frame(frame) and looks_up(frame, name)
        ):
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            )
        raise tracing_error(
            f"the array method .{name}() is not supported by irc on traced arrays"
        )

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        indexing = constant_indexed_by("a traced array")
        if indexing is not None:
            raise indexing
        frame = user_frame()
        instruction = current_instruction(frame) if frame is not None else None
        if instruction is not None and instruction.opname == "STORE_SUBSCR":
            raise tracing_error(
                "a traced array cannot be written into a NumPy array (buf[...] = "
                "v): NumPy made that array (its sizes are all static), and it holds "
                "numbers, not traced values; make the buffer a traced array, e.g. "
                "buf = np.zeros_like(v, shape=(...)) for a traced v"
            )
        raise outside_irc(
            "a traced array",
            "a NumPy array",
            "a traced array cannot be converted to a NumPy array: its values are "
            "not known while the function is captured",
            f"supported functions: {_supported_functions()}",
        )

    def __setitem__(self, key: Any, value: Any) -> None:
        from irc.capture.writes import setitem

        setitem(self, key, value)

    def copy(self, order: str = "C") -> Tensor:
        from irc.capture.views import copy

        return copy(self)

    # ----- data-dependent Python: refused, pointing to np.where and irc.cond --
    def __bool__(self) -> bool:
        raise outside_irc(
            "a traced array",
            "a truth value",
            "Python control flow on array values (if/while/and/or/not on a traced "
            "array) cannot be captured: the values are not known at trace time; "
            "use np.where(condition, a, b) to select values, or irc.cond (on a "
            "scalar bool: x.sum() > 0, (x > 0).any(), (x > 0).all()), "
            "irc.while_loop, irc.fori_loop or irc.scan for control flow on traced "
            "values (docs/control-flow.md)",
            f"supported functions: {_supported_functions()}",
        )

    def __int__(self) -> int:
        raise outside_irc(
            "a traced array",
            "an int",
            "int() of a traced array needs its value, unknown at trace time; keep "
            "it an array (use .astype(np.int64))",
            f"supported functions: {_supported_functions()}",
        )

    def __float__(self) -> float:
        raise outside_irc(
            "a traced array",
            "a float",
            "float() of a traced array needs its value, unknown at trace time; "
            "keep it an array (use .astype(np.float32))",
            f"supported functions: {_supported_functions()}",
        )

    __index__ = __int__

    def __len__(self) -> int:
        if not self.type.rank:
            raise tracing_error("len() of a rank-0 array")
        first = self.type.dims[0]
        if first.is_constant:
            return int(first)
        raise outside_irc(
            "a traced array",
            "its length",
            f"len() of an array whose first dim is symbolic ({first}) has no int "
            "value; use x.shape[0]",
            f"supported functions: {_supported_functions()}",
        )

    def __iter__(self) -> Iterator[Tensor]:
        """Unrolled over a static first dim; over a symbolic one the loop
        must be captured as one, which Python's ``for`` is not."""
        if self.type.rank and not self.type.dims[0].is_constant:
            raise tracing_error(
                f"iterating over a traced array whose first dim is symbolic "
                f"({self.type.dims[0]}) would unroll an unknown number of steps; "
                "write the loop with irc.scan (to carry a value across the rows "
                "and stack per-row results) or irc.fori_loop (for i in range(n)), "
                "or use a whole-array op (x.sum(axis=0), np.cumsum, ...); "
                "docs/control-flow.md"
            )
        for index in range(len(self)):
            yield self[index]

    # ----- operators (NumPy semantics via ufuncs) -----------------------
    def __add__(self, other: Any) -> Tensor:
        return np.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return np.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return np.subtract(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return np.subtract(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return np.multiply(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return np.multiply(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return np.true_divide(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return np.true_divide(other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        return np.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return np.floor_divide(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return np.remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return np.remainder(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return np.power(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return np.power(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return np.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return np.matmul(other, self)

    def __and__(self, other: Any) -> Tensor:
        return np.bitwise_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return np.bitwise_and(other, self)

    def __or__(self, other: Any) -> Tensor:
        return np.bitwise_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return np.bitwise_or(other, self)

    def __xor__(self, other: Any) -> Tensor:
        return np.bitwise_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return np.bitwise_xor(other, self)

    # ----- in-place operators: NumPy's ufunc with out=self ----------------
    def _in_place(self, ufunc: Callable[..., Any], other: Any) -> Tensor:
        from irc.capture.writes import in_place

        return in_place(self, ufunc, other)

    def __iadd__(self, other: Any) -> Tensor:
        return self._in_place(np.add, other)

    def __isub__(self, other: Any) -> Tensor:
        return self._in_place(np.subtract, other)

    def __imul__(self, other: Any) -> Tensor:
        return self._in_place(np.multiply, other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self._in_place(np.true_divide, other)

    def __ifloordiv__(self, other: Any) -> Tensor:
        return self._in_place(np.floor_divide, other)

    def __imod__(self, other: Any) -> Tensor:
        return self._in_place(np.remainder, other)

    def __ipow__(self, other: Any) -> Tensor:
        return self._in_place(np.power, other)

    def __imatmul__(self, other: Any) -> Tensor:
        return self._in_place(np.matmul, other)

    def __iand__(self, other: Any) -> Tensor:
        return self._in_place(np.bitwise_and, other)

    def __ior__(self, other: Any) -> Tensor:
        return self._in_place(np.bitwise_or, other)

    def __ixor__(self, other: Any) -> Tensor:
        return self._in_place(np.bitwise_xor, other)

    def __neg__(self) -> Tensor:
        return np.negative(self)

    def __pos__(self) -> Tensor:
        return np.positive(self)

    def __abs__(self) -> Tensor:
        return np.absolute(self)

    def __invert__(self) -> Tensor:
        return np.invert(self)

    def __lt__(self, other: Any) -> Tensor:
        return np.less(self, other)

    def __le__(self, other: Any) -> Tensor:
        return np.less_equal(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return np.greater(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return np.greater_equal(self, other)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return np.equal(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return np.not_equal(self, other)

    __hash__ = object.__hash__

    def __getitem__(self, key: Any) -> Tensor:
        from irc.capture.layout import getitem

        return getitem(self, key)

    # ----- methods (NumPy semantics via NumPy's functions) ---------------
    def reshape(self, *shape: Any, order: str = "C") -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        return np.reshape(self, shape, order=order)

    def transpose(self, *axes: Any) -> Tensor:
        if len(axes) == 1 and isinstance(axes[0], tuple | list):
            axes = tuple(axes[0])
        return np.transpose(self, axes or None)

    def swapaxes(self, axis1: int, axis2: int) -> Tensor:
        return np.swapaxes(self, axis1, axis2)

    def astype(self, new_dtype: Any, copy: bool = True) -> Tensor:
        from irc.capture import ops, views

        result = ops.cast(self, dtype(new_dtype))
        return views.copy(result) if result is self and copy else result

    def sum(self, axis: Any = None, dtype: Any = None, **options: Any) -> Tensor:
        return np.sum(self, axis=axis, dtype=dtype, **options)

    def prod(self, axis: Any = None, dtype: Any = None, **options: Any) -> Tensor:
        return np.prod(self, axis=axis, dtype=dtype, **options)

    def cumsum(self, axis: Any = None, dtype: Any = None, **options: Any) -> Tensor:
        return np.cumsum(self, axis=axis, dtype=dtype, **options)

    def cumprod(self, axis: Any = None, dtype: Any = None, **options: Any) -> Tensor:
        return np.cumprod(self, axis=axis, dtype=dtype, **options)

    def max(self, axis: Any = None, **options: Any) -> Tensor:
        return np.max(self, axis=axis, **options)

    def min(self, axis: Any = None, **options: Any) -> Tensor:
        return np.min(self, axis=axis, **options)

    def mean(self, axis: Any = None, dtype: Any = None, **options: Any) -> Tensor:
        return np.mean(self, axis=axis, dtype=dtype, **options)

    def var(self, axis: Any = None, dtype: Any = None, **options: Any) -> Tensor:
        return np.var(self, axis=axis, dtype=dtype, **options)

    def std(self, axis: Any = None, dtype: Any = None, **options: Any) -> Tensor:
        return np.std(self, axis=axis, dtype=dtype, **options)

    def any(self, axis: Any = None, **options: Any) -> Tensor:
        return np.any(self, axis=axis, **options)

    def all(self, axis: Any = None, **options: Any) -> Tensor:
        return np.all(self, axis=axis, **options)

    def argmax(self, axis: Any = None, **options: Any) -> Tensor:
        return np.argmax(self, axis=axis, **options)

    def argmin(self, axis: Any = None, **options: Any) -> Tensor:
        return np.argmin(self, axis=axis, **options)

    def argsort(self, axis: Any = -1, **options: Any) -> Tensor:
        return np.argsort(self, axis=axis, **options)

    def sort(self, axis: Any = -1, **options: Any) -> None:
        """In place, as NumPy's method: a write of the whole array."""
        self[...] = np.sort(self, axis=axis, **options)

    def repeat(self, repeats: Any, axis: Any = None) -> Tensor:
        return np.repeat(self, repeats, axis=axis)

    def clip(self, min: Any = None, max: Any = None, **options: Any) -> Tensor:
        return np.clip(self, min, max, **options)

    def round(self, decimals: int = 0, out: Any = None) -> Tensor:
        return np.round(self, decimals, out)

    def squeeze(self, axis: Any = None) -> Tensor:
        return np.squeeze(self, axis=axis)

    def flatten(self) -> Tensor:
        return np.reshape(self, (-1,)).copy()  # always a copy in NumPy

    def ravel(self) -> Tensor:
        return np.reshape(self, (-1,))

    def __repr__(self) -> str:
        return f"<traced array {self.type}>"


class SymDim:
    """A symbolic size (``x.shape[0]`` when that dim is ``N``).

    Arithmetic with ints stays symbolic (``x.shape[0] * 4``, ``N // 2``) and
    can be used wherever NumPy takes a size. Anything else (true division,
    floats, arrays, NumPy functions) turns it into a traced scalar that
    behaves like the Python int it stands for.
    """

    __slots__ = ("expr",)

    def __init__(self, expr: SymExpr):
        self.expr = expr

    def _symbolic(self, other: Any, combine: Callable[[SymExpr, SymExpr], SymExpr]):
        if isinstance(other, SymDim):
            return dim_proxy(combine(self.expr, other.expr))
        if isinstance(other, int) and not isinstance(other, bool):
            return dim_proxy(combine(self.expr, SymExpr.const(other)))
        return NotImplemented

    def __add__(self, other: Any) -> Any:
        result = self._symbolic(other, lambda a, b: a + b)
        return np.add(self, other) if result is NotImplemented else result

    def __radd__(self, other: Any) -> Any:
        result = self._symbolic(other, lambda a, b: b + a)
        return np.add(other, self) if result is NotImplemented else result

    def __sub__(self, other: Any) -> Any:
        result = self._symbolic(other, lambda a, b: a - b)
        return np.subtract(self, other) if result is NotImplemented else result

    def __rsub__(self, other: Any) -> Any:
        result = self._symbolic(other, lambda a, b: b - a)
        return np.subtract(other, self) if result is NotImplemented else result

    def __mul__(self, other: Any) -> Any:
        result = self._symbolic(other, lambda a, b: a * b)
        return np.multiply(self, other) if result is NotImplemented else result

    def __rmul__(self, other: Any) -> Any:
        result = self._symbolic(other, lambda a, b: b * a)
        return np.multiply(other, self) if result is NotImplemented else result

    def __floordiv__(self, other: Any) -> Any:
        result = self._symbolic(other, lambda a, b: a // b)
        return np.floor_divide(self, other) if result is NotImplemented else result

    def __rfloordiv__(self, other: Any) -> Any:
        result = self._symbolic(other, lambda a, b: b // a)
        return np.floor_divide(other, self) if result is NotImplemented else result

    def __mod__(self, other: Any) -> Any:
        result = self._symbolic(other, lambda a, b: a % b)
        return np.remainder(self, other) if result is NotImplemented else result

    def __rmod__(self, other: Any) -> Any:
        result = self._symbolic(other, lambda a, b: b % a)
        return np.remainder(other, self) if result is NotImplemented else result

    def __neg__(self) -> Any:
        return dim_proxy(-self.expr)

    def __pos__(self) -> SymDim:
        return self

    def __truediv__(self, other: Any) -> Tensor:
        return np.true_divide(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return np.true_divide(other, self)

    def __pow__(self, other: Any) -> Any:
        if isinstance(other, int) and not isinstance(other, bool):
            if other >= 0:
                return dim_proxy(self.expr**other)
            # Python: an int to a negative power is a float.
            return np.power(np.true_divide(1, self), -other)
        return np.power(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return np.power(other, self)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kw: Any):
        return _dispatch_ufunc(ufunc, method, inputs, kw)

    # ----- comparisons are decided at trace time, or refused ------------
    def _decide(self, other: Any, op: str) -> bool:
        from irc.capture.ops import decide

        return decide(self.expr, op, other)

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        if not isinstance(other, SymDim | int | float) or isinstance(other, bool):
            return NotImplemented
        return self._decide(other, "==")

    def __ne__(self, other: Any) -> bool:  # type: ignore[override]
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __lt__(self, other: Any) -> bool:
        return self._decide(other, "<")

    def __le__(self, other: Any) -> bool:
        return self._decide(other, "<=")

    def __gt__(self, other: Any) -> bool:
        return self._decide(other, ">")

    def __ge__(self, other: Any) -> bool:
        return self._decide(other, ">=")

    def __hash__(self) -> int:
        return hash(self.expr)

    def __index__(self) -> int:
        indexing = constant_indexed_by(f"the symbolic size {self.expr}")
        if indexing is not None:
            raise indexing
        raise outside_irc(
            f"the symbolic size {self.expr}",
            "an int",
            f"the symbolic size {self.expr} has no int value at trace time; irc "
            "functions (np.arange, np.ones, np.tri, reshape, slicing) accept it "
            "as it is",
            f"functions that take symbolic sizes: {SIZE_TAKERS}",
        )

    __int__ = __index__

    def __float__(self) -> float:
        raise outside_irc(
            f"the symbolic size {self.expr}",
            "a float",
            f"the symbolic size {self.expr} has no float value at trace time; "
            "arithmetic on it (x.shape[0] / 2, x.shape[0] * 0.5) gives a traced "
            "scalar instead",
            f"functions that take symbolic sizes: {SIZE_TAKERS}",
        )

    def __bool__(self) -> bool:
        return self._decide(0, "!=")

    def __repr__(self) -> str:
        return f"SymDim({self.expr})"

    def __str__(self) -> str:
        return str(self.expr)


def dim_proxy(expr: SymExpr) -> int | SymDim:
    """A plain ``int`` for constant dims, a ``SymDim`` otherwise."""
    return int(expr) if expr.is_constant else SymDim(expr)
