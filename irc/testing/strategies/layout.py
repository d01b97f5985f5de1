"""Steps that move data: ``broadcast``, ``reshape``, ``transpose``,
``slice``, ``insert_slice``, ``concat`` and ``take``.

Shapes are valid by construction: a broadcast expands 1s (reshaped in first
where the source has none) and symbols the guards prove equal, a reshape
regroups the factors of the input's dims, a slice (and the window an insert_slice writes) stays within bounds, and
``take`` indices are reduced modulo the table's extent.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from irc.dialects import graph as g
from irc.dialects import sym
from irc.dtypes import dtype
from irc.primitives import builtin as p
from irc.shapes import ShapeError, SymExpr
from irc.testing.strategies.ranges import MAGNITUDE_LIMIT, _union
from irc.testing.strategies.steps import Steps


class LayoutSteps(Steps):
    """The data-movement steps of ``program``."""

    def broadcast(self) -> bool:
        value = self._with_unit_dim(self.operands.operand("bif"))
        source = g.tensor_type(value)
        lead = self.choices.integer(0, max(0, self.options.max_rank - source.rank))
        shape = [self.program.dim() for _ in range(lead)]
        shape += [self._broadcast_dim(dim) for dim in source.dims]
        self.program.emit(g.BroadcastOp(value, shape), self.program.ranges[value])
        return True

    def _with_unit_dim(self, value: SSAValue) -> SSAValue:
        """``value``, or half of the time, when its shape has no 1 to expand
        (most shapes are symbolic), ``value`` reshaped to have one (``[N, M]``
        to ``[N, 1, M]``), as capture does for ``x[:, None]``."""
        source = g.tensor_type(value)
        if (
            1 <= source.rank < self.options.max_rank
            and not any(d == 1 for d in source.dims)
            and self.choices.flag()
        ):
            dims = list(source.dims)
            dims.insert(self.choices.integer(0, len(dims)), SymExpr.const(1))
            return self.program.emit(
                g.ReshapeOp(value, dims), self.program.ranges[value]
            )
        return value

    def _broadcast_dim(self, dim: SymExpr) -> SymExpr:
        """What a broadcast makes of ``dim``: a 1 may become any dim, a
        symbol one that the guards prove equal to it."""
        equal = [
            d
            for d in (SymExpr.symbol(s) for s in self.program.bound)
            if d != dim and self.program.facts.prove_eq(d, dim)
        ]
        if dim == 1 and self.choices.flag():
            return self.program.dim()
        if equal and self.choices.flag():
            return self.choices.one_of(equal)
        return dim

    def reshape(self) -> bool:
        value = self.operands.operand("bif")
        factors = [f for d in g.tensor_type(value).dims for f in _factors(d)]
        order = self.choices.permutation(len(factors))
        groups: list[list[SymExpr]] = []
        for index in order:
            if not groups or self.choices.flag():
                groups.append([])
            groups[-1].append(factors[index])
        shape = [sym.product(group) for group in groups]
        if self.choices.flag():
            shape.insert(self.choices.integer(0, len(shape)), SymExpr.const(1))
        while len(shape) > self.options.max_rank:
            shape[-2:] = [shape[-2] * shape[-1]]
        self.program.emit(g.ReshapeOp(value, shape), self.program.ranges[value])
        return True

    def transpose(self) -> bool:
        value = self.operands.operand("bif")
        permutation = self.choices.permutation(g.tensor_type(value).rank)
        self.program.emit(g.TransposeOp(value, permutation), self.program.ranges[value])
        return True

    def slice(self) -> bool:
        value = self.program.pick_or_new(lambda t: t.rank >= 1, "bif", 1)
        windows = [self._slice_axis(d) for d in g.tensor_type(value).dims]
        offsets, sizes, strides = zip(*windows)
        self.program.emit(
            g.SliceOp(value, offsets, sizes, strides), self.program.ranges[value]
        )
        return True

    def _slice_axis(self, extent: SymExpr) -> tuple[SymExpr, SymExpr, int]:
        """(offset, size, stride) of an in-bounds window of one axis."""
        modes = ["full", "every other"]
        if self.program.nonempty(extent):
            modes += ["reversed", "reversed every other", "drop first", "last"]
        if extent.is_constant and int(extent) >= 1:
            modes.append("static")
        mode = self.choices.one_of(modes)
        half = (extent + 1) // 2
        if mode == "static":
            return self._static_window(int(extent))
        windows = {
            "full": (SymExpr.const(0), extent, 1),
            "every other": (SymExpr.const(0), half, 2),
            "reversed": (extent - 1, extent, -1),
            "reversed every other": (extent - 1, half, -2),
            "drop first": (SymExpr.const(1), extent - 1, 1),
            "last": (extent - 1, SymExpr.const(1), 1),
        }
        return windows[mode]

    def _static_window(self, extent: int) -> tuple[SymExpr, SymExpr, int]:
        stride = self.choices.one_of((1, 2, -1, -2, 3))
        offset = self.choices.integer(0, extent - 1)
        if stride > 0:
            most = (extent - 1 - offset) // stride + 1
        else:
            most = offset // -stride + 1
        size = self.choices.integer(0, most)
        return SymExpr.const(offset), SymExpr.const(size), stride

    def insert_slice(self) -> bool:
        """``dest`` with a window replaced by a new argument, a constant or
        a window of ``dest`` itself (a write of what was read, as
        ``x[a:b] += 0`` captures)."""
        dest = self.program.pick_or_new(lambda t: t.rank >= 1, "bif", 1)
        tensor = g.tensor_type(dest)
        windows = [self._slice_axis(d) for d in tensor.dims]
        offsets, sizes, strides = zip(*windows)
        window = tensor.with_shape(sizes)
        source = self.choices.one_of(("argument", "constant", "own window"))
        if source == "argument":
            value = self.program.new_argument(window)
        elif source == "constant":
            value = self.operands.constant(window)
        else:
            value = self.program.emit(
                g.SliceOp(dest, offsets, sizes, strides), self.program.ranges[dest]
            )
        value_range = _union(self.program.ranges[dest], self.program.ranges[value])
        self.program.emit(g.InsertSliceOp(value, dest, offsets, strides), value_range)
        return True

    def concat(self) -> bool:
        value = self.program.pick_or_new(lambda t: t.rank >= 1, "bif", 1)
        tensor = g.tensor_type(value)
        axis = self.choices.integer(0, tensor.rank - 1)
        parts = [value]
        for _ in range(self.choices.integer(1, 2)):
            source = self.choices.one_of(("same", "argument", "constant"))
            dims = list(tensor.dims)
            dims[axis] = self.program.dim(for_argument=source == "argument")
            if source == "same":
                parts.append(value)
            elif source == "argument":
                parts.append(self.program.new_argument(tensor.with_shape(dims)))
            else:
                parts.append(self.operands.constant(tensor.with_shape(dims)))
        value_range = _union(*(self.program.ranges[p] for p in parts))
        self.program.emit(g.ConcatOp(parts, axis), value_range)
        return True

    def take(self) -> bool:
        table = self.operands.operand("bif")
        dims = g.tensor_type(table).dims
        axes = [i for i, d in enumerate(dims) if self.program.nonempty(d)]
        if not axes:
            return False
        axis = self.choices.one_of(axes)
        index_rank = max(0, self.options.max_rank - len(dims) + 1)
        indices = self.program.pick_or_new(
            lambda t: dtype(t.element_type).kind == "i" and t.rank <= index_rank,
            "i",
            0,
            index_rank,
        )
        indices = self._in_range(indices, dims[axis])
        self.program.emit(g.TakeOp(table, indices, axis), self.program.ranges[table])
        return True

    def scatter_add(self) -> bool:
        """Updates scattered along one of their axes (whose length is the
        count of indices) into a new extent, with in-range indices that may
        repeat; operands are squashed when the sums could grow too large."""
        updates = self.operands.operand("if")
        dims = g.tensor_type(updates).dims
        if not dims:
            return False
        axis = self.choices.integer(0, len(dims) - 1)
        count = dims[axis]
        extent = self.program.dim()
        if not self.program.nonempty(extent):
            return False
        if self.program.magnitude(updates) * self.program.largest(count) > (
            MAGNITUDE_LIMIT
        ):
            updates = self.domains.squash(updates)
        indices = self.program.pick_or_new(
            lambda t: dtype(t.element_type).kind == "i" and t.dims == (count,),
            "i",
            1,
            1,
        )
        if g.tensor_type(indices).dims != (count,):
            indices = self.program.new_argument(
                g.TensorType([count], g.tensor_type(indices).element_type)
            )
        indices = self._in_range(indices, extent)
        result = g.tensor_type(updates).with_shape(
            [*dims[:axis], extent, *dims[axis + 1 :]]
        )
        lo, hi = self.program.ranges[updates]
        repeats = self.program.largest(count)
        self.program.emit(
            g.ScatterAddOp(updates, indices, axis, result),
            (min(0.0, lo * repeats), max(0.0, hi * repeats)),
        )
        return True

    def _in_range(self, indices: SSAValue, extent: SymExpr) -> SSAValue:
        """``indices rem extent``: every index in ``[0, extent)``."""
        tensor = g.tensor_type(indices)
        if extent.is_constant:
            divisor = self.operands.splat(int(extent), tensor)
        else:
            size = (self.program.smallest(extent), self.program.largest(extent))
            divisor = self.program.emit(g.DimOp(extent, tensor.element_type), size)
            if tensor.rank:
                divisor = self.program.emit(g.BroadcastOp(divisor, tensor.dims), size)
        top = self.program.largest(extent) - 1
        return self.program.emit(g.elementwise(p.REM, indices, divisor), (0.0, top))


def _prime_factors(value: int) -> list[int]:
    factors, divisor = [], 2
    while value > 1:
        while value % divisor == 0:
            factors.append(divisor)
            value //= divisor
        divisor += 1
    return factors


def _factors(dim: SymExpr) -> list[SymExpr]:
    """Dims whose product is ``dim``: its symbols, the primes of its
    constant factor, and whatever is left (``N - 1``) as one factor. A
    reshape may regroup them freely: the element count stays provably equal."""
    if dim.is_constant:
        value = int(dim)
        return (
            [SymExpr.const(p) for p in _prime_factors(value)] if value != 0 else [dim]
        )
    factors: list[SymExpr] = []
    rest = dim
    for name in sorted(dim.symbols):
        symbol = SymExpr.symbol(name)
        while True:
            try:
                quotient = rest.exact_div(symbol)
            except ShapeError:
                break
            factors.append(symbol)
            rest = quotient
    return factors + (_factors(rest) if rest.is_constant else [rest])
