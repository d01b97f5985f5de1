"""NumPy's views of traced arrays, functionalised.

In NumPy a basic slice, ``.T``, a reshape, ``squeeze``/``expand_dims`` and
``x[...]`` share their operand's memory: a write through any of them is
seen through all. Graph values never change, so capture keeps that sharing
as torch's functionalisation does:

- the arrays that share memory share one :class:`Storage`, which holds the
  current value of their *base* (the array the first view was taken of) and
  a version that counts the writes into it;
- each of them holds a :class:`View`: the storage and the steps (windows,
  reshapes, transposes, broadcasts) that lead from the base to it;
- a write into one of them makes a new value of the base (each step undone
  in turn: a window becomes a ``graph.insert_slice`` into its parent) and
  bumps the version; every other alias recomputes its value from the new
  base on its next use (``Tensor.value``).

Copies (arithmetic, advanced indexing, ``astype``, ``np.copy``) are new
traced arrays with no storage: writes into them are seen by no one else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from irc.capture.tensor import Tensor
from irc.capture.trace import current_trace, tracing_error
from irc.dialects import graph
from irc.shapes import SymExpr


def _emit(op: Operation) -> SSAValue:
    return current_trace().emit(op).results[0]


def _dims(value: SSAValue) -> tuple[SymExpr, ...]:
    return graph.tensor_type(value).dims


class ViewStep:
    """One step from an array to a view of it: ``forward`` computes the view
    from the array's value; ``backward`` the array's value after the view
    was written (``None`` for a read-only step)."""

    #: Whether a view through this step is NumPy's view for certain (a
    #: reshape of a non-contiguous view may be a copy in NumPy).
    exact: bool = True

    def forward(self, parent: SSAValue) -> SSAValue:
        raise NotImplementedError

    def backward(self, parent: SSAValue, child: SSAValue) -> SSAValue | None:
        raise NotImplementedError

    def keeps_contiguity(self, parent_dims: Sequence[SymExpr]) -> bool:
        """Whether a C-contiguous array stays C-contiguous through the step."""
        raise NotImplementedError


@dataclass(frozen=True)
class Window(ViewStep):
    """A strided window, one ``(offset, size, stride)`` per axis: a basic
    slice or an int index (of size 1, before the axis is dropped)."""

    offsets: tuple[SymExpr, ...]
    sizes: tuple[SymExpr, ...]
    strides: tuple[int, ...]

    def is_whole(self, parent_dims: Sequence[SymExpr]) -> bool:
        return all(
            offset == 0 and stride == 1 and size == extent
            for offset, size, stride, extent in zip(
                self.offsets, self.sizes, self.strides, parent_dims
            )
        )

    def forward(self, parent: SSAValue) -> SSAValue:
        if self.is_whole(_dims(parent)):
            return parent
        return _emit(graph.SliceOp(parent, self.offsets, self.sizes, self.strides))

    def backward(self, parent: SSAValue, child: SSAValue) -> SSAValue:
        if self.is_whole(_dims(parent)):
            return child
        return _emit(graph.InsertSliceOp(child, parent, self.offsets, self.strides))

    def keeps_contiguity(self, parent_dims: Sequence[SymExpr]) -> bool:
        # Contiguous: unit strides, size-1 axes, then one partial axis, then
        # whole axes (``cache[a:b]``, ``x[i]``, ``x[i, a:b]``).
        partial = False
        for offset, size, stride, extent in zip(
            self.offsets, self.sizes, self.strides, parent_dims
        ):
            whole = offset == 0 and stride == 1 and size == extent
            if partial and not whole:
                return False
            if stride != 1 and size != 1:
                return False
            partial = partial or size != 1
        return True


@dataclass(frozen=True)
class Reshape(ViewStep):
    """A reshape (squeeze and expand_dims included) to ``dims``."""

    dims: tuple[SymExpr, ...]
    exact: bool = True

    def forward(self, parent: SSAValue) -> SSAValue:
        if _dims(parent) == self.dims:
            return parent
        return _emit(graph.ReshapeOp(parent, self.dims))

    def backward(self, parent: SSAValue, child: SSAValue) -> SSAValue:
        if _dims(parent) == self.dims:
            return child
        return _emit(graph.ReshapeOp(child, _dims(parent)))

    def keeps_contiguity(self, parent_dims: Sequence[SymExpr]) -> bool:
        return True


@dataclass(frozen=True)
class Transpose(ViewStep):
    permutation: tuple[int, ...]

    def forward(self, parent: SSAValue) -> SSAValue:
        return _emit(graph.TransposeOp(parent, self.permutation))

    def backward(self, parent: SSAValue, child: SSAValue) -> SSAValue:
        inverse = [
            self.permutation.index(axis) for axis in range(len(self.permutation))
        ]
        return _emit(graph.TransposeOp(child, inverse))

    def keeps_contiguity(self, parent_dims: Sequence[SymExpr]) -> bool:
        return False


@dataclass(frozen=True)
class Broadcast(ViewStep):
    """``np.broadcast_to``: a read-only view."""

    dims: tuple[SymExpr, ...]

    def forward(self, parent: SSAValue) -> SSAValue:
        from irc.capture.ops import broadcast_to

        return broadcast_to(Tensor(parent), self.dims).value

    def backward(self, parent: SSAValue, child: SSAValue) -> None:
        return None

    def keeps_contiguity(self, parent_dims: Sequence[SymExpr]) -> bool:
        return False


class Storage:
    """The memory that a base array and its views share: the base's current
    value, and how many writes it has seen."""

    __slots__ = ("value", "version")

    def __init__(self, value: SSAValue):
        self.value = value
        self.version = 0


@dataclass(frozen=True)
class View:
    """A traced array as a view: its storage and the steps from the base."""

    storage: Storage
    steps: tuple[ViewStep, ...] = ()

    #: Whether the view is C-contiguous (a reshape of it is NumPy's view).
    contiguous: bool = True

    @property
    def read_only(self) -> bool:
        return any(isinstance(step, Broadcast) for step in self.steps)

    @property
    def exact(self) -> bool:
        return all(step.exact for step in self.steps)

    def values(self, steps: int | None = None) -> list[SSAValue]:
        """The value after each of the first ``steps`` steps (all of them by
        default), from the base's on."""
        values = [self.storage.value]
        for step in self.steps[:steps]:
            values.append(step.forward(values[-1]))
        return values

    def current(self) -> SSAValue:
        """This view's value, from the storage's current one."""
        if not self.exact:
            raise tracing_error(
                "this array is a reshape of a non-contiguous view, which NumPy "
                "makes a copy or a view depending on the strides, and the array "
                "it was taken from has been written since; irc cannot tell which "
                "NumPy would give. Make the choice explicit: .copy() the view "
                "before reshaping it, or reshape after the writes"
            )
        return self.values()[-1]

    def write(self, new: SSAValue) -> None:
        """Make ``new`` this view's value: the base gets a new value."""
        if self.read_only:
            raise tracing_error(
                "assignment into a read-only view (the result of np.broadcast_to): "
                "NumPy raises 'assignment destination is read-only'; write into "
                "a copy, np.broadcast_to(x, shape).copy()"
            )
        if not self.exact:
            raise tracing_error(
                "assignment into a reshape of a non-contiguous view: NumPy makes "
                "it a copy or a view depending on the strides, so whether the "
                "write reaches the original array is not known to irc; .copy() "
                "it first (a write that must not reach the original), or write "
                "into the original array through a slice"
            )
        parents = self.values(max(len(self.steps) - 1, 0))
        for step, parent in zip(reversed(self.steps), reversed(parents)):
            written = step.backward(parent, new)
            assert written is not None, "read-only steps are refused above"
            new = written
        self.storage.value = new
        self.storage.version += 1


def shared(tensor: Tensor) -> View:
    """``tensor``'s view, made the base of a new storage if it has none."""
    if tensor.view is None:
        tensor.view = View(Storage(tensor.value))
        tensor.version = 0
    return tensor.view


def view_of(parent: Tensor, step: ViewStep) -> Tensor:
    """A traced array that views ``parent`` through ``step``."""
    base = shared(parent)
    contiguous = base.contiguous and step.keeps_contiguity(parent.type.dims)
    child = Tensor(step.forward(parent.value))
    child.view = View(base.storage, (*base.steps, step), contiguous)
    child.version = base.storage.version
    return child


def copy(tensor: Tensor) -> Tensor:
    """A traced array with ``tensor``'s value that shares nothing with it
    (``np.copy``: the SSA value is shared, which is free; memory is not)."""
    result = Tensor(tensor.value, weak=tensor.weak)
    result.argument = False
    return result


def assign(tensor: Tensor, new: SSAValue) -> None:
    """Make ``new`` (of ``tensor``'s type) the value of ``tensor``, and of the
    part of every alias that shares its memory."""
    assert new.type == tensor.type, "writes keep the type"
    if tensor.trace is not current_trace():
        raise tracing_error(
            "an array of the enclosing function is written inside a function "
            "given to irc.cond, irc.while_loop, irc.fori_loop or irc.scan (x[i] = v "
            "or x += v on an array it closes over): the regions of control flow "
            "only compute values; return the new array instead (as a carry, or a "
            "branch's result)"
        )
    if tensor.argument:
        shared(tensor)  # the write is the caller's: count it (written_arguments)
    if tensor.view is not None:
        tensor.view.write(new)
        tensor.version = tensor.view.storage.version
    tensor.set_value(new)


def written_arguments(arguments: Sequence[Tensor]) -> list[tuple[int, SSAValue]]:
    """The arguments written into (directly or through a view), by position,
    with their final values: NumPy would have changed the caller's arrays,
    so the compiled function returns these values too and its caller
    copies them back (as ``torch.compile`` does with input mutations)."""
    written = []
    for position, argument in enumerate(arguments):
        view = argument.view
        if view is not None and view.storage.version > 0:
            written.append((position, view.storage.value))
    return written
