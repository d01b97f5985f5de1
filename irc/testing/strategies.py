"""Hypothesis strategies for symbolic shapes, bindings and graph programs.

- :func:`symbolic_shapes`: shapes over a small pool of symbols and constants;
- :func:`bindings`, :func:`bindings_for`: values for the symbols, under facts
  (a module's guards);
- :func:`programs`: well-typed graph-level modules, one ``func.func @main``
  whose body uses every graph op.

Programs are built op by op from the values made so far, the way capture
builds them: operands get explicit ``graph.cast`` and ``graph.broadcast``
ops, shapes are valid by construction (a reshape regroups the factors of the
input's dims, a slice stays within bounds, a matmul's operands share their
contraction dim, ``take`` indices are reduced modulo the table's extent).

Every value carries an interval that holds for every input of
``irc.testing.inputs``, and each op is built so that it stays in its domain
on that interval: ``log`` and ``rsqrt`` of ``abs(x) + 1`` unless ``x`` is
known positive, ``sqrt`` of ``abs(x)``, division by ``abs(y) + 1`` unless
``y`` is bounded away from zero, integer powers with exponents in
``[0, 2]``, ``exp`` of ``tanh(x)`` when ``x`` could overflow it. When a
result could grow beyond ``MAGNITUDE_LIMIT`` (a sum over many elements, a
chain of products), the operands are squashed first (``tanh`` for floats,
``rem`` by a small constant for integers). So results are finite, NaN-free
and exactly representable where they must be, and a mismatch means a bug,
not a rounding accident at the edge of a domain.

A program is a sequence of *actions* (``ACTIONS``), each adding one op and
the casts, broadcasts and domain guards it needs. Hypothesis shrinks the
number of actions, their kinds and their operand choices, so a failing
program shrinks to a few ops over fresh arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
)
from xdsl.dialects.builtin import TensorType as LiteralType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from irc.dialects import graph as g
from irc.dialects import sym
from irc.dtypes import (
    BFLOAT16,
    BOOL,
    FLOAT16,
    FLOAT32,
    FLOAT64,
    INT32,
    INT64,
    DType,
    dtype,
    is_bool_type,
)
from irc.errors import IrcError
from irc.shapes import Fact, Facts, ShapeError, SymExpr
from irc.testing.sampling import (
    FLOAT_INPUT_RANGE,
    INT_INPUT_RANGE,
    MAX_SYMBOL_VALUE,
    FactLike,
    enumerate_bindings,
    module_bindings,
)

__all__ = [
    "ACTIONS",
    "DTYPES",
    "MAGNITUDE_LIMIT",
    "STATIC_DIMS",
    "SYMBOLS",
    "bindings",
    "bindings_for",
    "programs",
    "symbolic_shapes",
]

#: The symbols programs and shapes use by default.
SYMBOLS: tuple[str, ...] = ("N", "M", "K")
#: The static dims programs and shapes use besides symbols.
STATIC_DIMS: tuple[int, ...] = (1, 2, 3, 4)
#: Element types, simplest first (failing programs shrink towards float32).
DTYPES: tuple[DType, ...] = (FLOAT32, INT32, BOOL, FLOAT16, BFLOAT16, INT64, FLOAT64)
#: Results are kept below this magnitude (well inside float16's 65504).
MAGNITUDE_LIMIT = 1e4

#: What one step of a program can do; ``binary`` first, as failing programs
#: shrink towards the first entry.
ACTIONS: tuple[str, ...] = (
    "binary",
    "unary",
    "compare",
    "select",
    "cast",
    "constant",
    "iota",
    "dim",
    "broadcast",
    "reshape",
    "reduce",
    "argmax",
    "transpose",
    "slice",
    "concat",
    "take",
    "matmul",
    "guard",
)

_ELEMENTWISE = ("binary", "unary")
#: A step that takes the previous step's action (and op) again.
REPEAT = "repeat"
_FLOAT_CONSTANTS = (1.0, 0.0, -1.0, 0.5, 2.0, -2.5, 3.0)
_INT_CONSTANTS = (1, 0, -1, 2, 3, -7)
_BOOL_CONSTANTS = (1, 0)
_MAX_DENSE_ELEMENTS = 16
#: Integers are squashed into ``[0, _INT_SQUASH)`` by ``rem``.
_INT_SQUASH = 8

_Range = tuple[float, float]
_Draw = Callable[[st.SearchStrategy[Any]], Any]

# --------------------------------------------------------------------------
# Shapes and bindings
# --------------------------------------------------------------------------


def symbolic_shapes(
    symbols: Sequence[str] = SYMBOLS,
    *,
    min_rank: int = 0,
    max_rank: int = 3,
    static_dims: Sequence[int] = STATIC_DIMS,
) -> st.SearchStrategy[tuple[SymExpr, ...]]:
    """Shapes whose dims are symbols or static sizes: ``(N, 4)``, ``(M,)``."""
    dims = [SymExpr.symbol(s) for s in symbols] + [
        SymExpr.const(d) for d in static_dims
    ]
    return st.lists(st.sampled_from(dims), min_size=min_rank, max_size=max_rank).map(
        tuple
    )


def bindings(
    symbols: Iterable[str] = SYMBOLS,
    *,
    facts: Iterable[FactLike] = (),
    max_value: int = MAX_SYMBOL_VALUE,
) -> st.SearchStrategy[dict[str, int]]:
    """Values in ``[1, max_value]`` for ``symbols`` under which every fact
    (``"N mod 2 == 0"``, an ``irc.shapes.Fact`` or a ``sym.fact``) holds,
    nine times in ten one with a value above 1; shrinks towards small
    values."""
    found = enumerate_bindings(symbols, facts, max_value=max_value)
    return _prefer_some_size(found)


def bindings_for(
    module: ModuleOp, *, max_value: int = MAX_SYMBOL_VALUE
) -> st.SearchStrategy[dict[str, int]]:
    """Bindings under which ``module``'s entry function can be called: its
    guards hold and its argument dims are non-negative.

    Nine times in ten (and when shrinking) one that does not bind every
    symbol to 1, if the guards allow one: under all-ones bindings every
    shape is all ones, and most wrong axes, broadcasts or transposes go
    unnoticed."""
    return _prefer_some_size(module_bindings(module, max_value=max_value))


def _prefer_some_size(found: list[dict[str, int]]) -> st.SearchStrategy[dict[str, int]]:
    """A binding of ``found`` (smallest first), nine times in ten one with
    a symbol above 1 if there is one."""
    sized = [b for b in found if any(v != 1 for v in b.values())]
    if not sized or len(sized) == len(found):
        return st.sampled_from(found).map(dict)
    return (
        st.integers(0, 9)
        .flatmap(lambda choice: st.sampled_from(sized if choice < 9 else found))
        .map(dict)
    )


# --------------------------------------------------------------------------
# Value ranges of the elementwise ops
# --------------------------------------------------------------------------


def _magnitude(value_range: _Range) -> float:
    return max(abs(value_range[0]), abs(value_range[1]))


def _span(values: Iterable[float]) -> _Range:
    items = list(values)
    return min(items), max(items)


def _union(*ranges: _Range) -> _Range:
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def _bitwise_range(lhs: _Range, rhs: _Range, kind: str) -> _Range:
    if kind == "b":
        return 0.0, 1.0
    bound = 2.0 ** math.ceil(math.log2(max(_magnitude(lhs), _magnitude(rhs)) + 1))
    return -bound, bound


def _unary_range(op: type[g.UnaryOp], x: _Range, kind: str) -> _Range:
    """The range of ``op`` on ``x``, whose domain the caller ensured."""
    lo, hi = x
    if op is g.NegOp:
        return -hi, -lo
    if op is g.AbsOp:
        return (0.0 if lo < 0 < hi else min(abs(lo), abs(hi))), _magnitude(x)
    if op is g.NotOp:
        return (0.0, 1.0) if kind == "b" else (-hi - 1, -lo - 1)
    monotone: dict[type[g.UnaryOp], Callable[[float], float]] = {
        g.ExpOp: math.exp,
        g.LogOp: math.log,
        g.SqrtOp: math.sqrt,
        g.FloorOp: math.floor,
    }
    if op in monotone:
        return monotone[op](lo), monotone[op](hi)
    if op is g.RsqrtOp:
        return 1 / math.sqrt(hi), 1 / math.sqrt(lo)
    if op is g.SigmoidOp:
        return 0.0, 1.0
    return -1.0, 1.0  # tanh, erf, sin, cos


def _binary_range(op: type[g.BinaryOp], a: _Range, b: _Range, kind: str) -> _Range:
    """The range of ``op`` on ``a`` and ``b``, whose domain the caller
    ensured (divisors exclude zero, powers are handled by the caller)."""
    corners = [(x, y) for x in a for y in b]
    if op is g.AddOp:
        return a[0] + b[0], a[1] + b[1]
    if op is g.SubOp:
        return a[0] - b[1], a[1] - b[0]
    if op is g.MulOp:
        return _span(x * y for x, y in corners)
    if op is g.DivOp:
        return _span(x / y for x, y in corners)
    if op is g.FloorDivOp:
        return _span(math.floor(x / y) for x, y in corners)
    if op is g.RemOp:
        return (0.0, b[1]) if b[0] > 0 else (b[0], 0.0)
    if op is g.MaximumOp:
        return max(a[0], b[0]), max(a[1], b[1])
    if op is g.MinimumOp:
        return min(a[0], b[0]), min(a[1], b[1])
    return _bitwise_range(a, b, kind)  # and, or, xor


def _growth(op: type[g.BinaryOp], a: float, b: float) -> float:
    """A bound on ``|op(x, y)|`` for ``|x| <= a`` and ``|y| <= b``, after the
    domain fixes (which add at most 1 to a magnitude)."""
    if op in (g.MulOp, g.PowOp):
        return (a + 1) * (b + 1)
    if op in (g.DivOp, g.FloorDivOp):
        return 2 * a + 1
    if op is g.RemOp:
        return b + 1
    return 2 * max(a, b) + 2


def _input_range(kind: str) -> _Range:
    if kind == "f":
        return -FLOAT_INPUT_RANGE, FLOAT_INPUT_RANGE
    if kind == "i":
        return float(-INT_INPUT_RANGE), float(INT_INPUT_RANGE)
    return 0.0, 1.0


# --------------------------------------------------------------------------
# Shape helpers
# --------------------------------------------------------------------------


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


# --------------------------------------------------------------------------
# The program builder
# --------------------------------------------------------------------------


class _Builder:
    """Builds one ``@main`` op by op from Hypothesis draws, keeping a value
    range for every SSA value and the facts stated by its guards."""

    def __init__(
        self,
        draw: _Draw,
        *,
        symbols: Sequence[str],
        dtypes: Sequence[DType],
        max_rank: int,
        smooth: bool,
        max_value: int,
    ):
        self.draw = draw
        self.symbols = tuple(symbols)
        self.dtypes = tuple(dtypes)
        self.max_rank = max_rank
        self.smooth = smooth
        self.max_value = max_value
        self.block = Block()
        self.values: list[SSAValue] = []
        self.ranges: dict[SSAValue, _Range] = {}
        self.bound: list[str] = []  # symbols that some argument dim is alone
        self.guards: list[Fact] = []
        self.facts = Facts()
        # The previous step, which a "repeat" step takes again.
        self.last_action = "binary"
        self.repeating = False
        self.last_op: dict[str, type[Operation]] = {}

    # Drawing ---------------------------------------------------------------

    def one_of(self, options: Sequence[Any]) -> Any:
        """One of ``options``, close to uniformly: Hypothesis draws the
        simplest choice (index 0) far more often than the others, so the
        index is the sum of two draws modulo the count, which is 0 only
        when both draws are simple or the sum wraps. Both shrink towards 0,
        so failures still shrink towards the first option."""
        count = len(options)
        if count == 1:
            return options[0]
        first = self.draw(st.integers(0, count - 1))
        second = self.draw(st.integers(0, count - 1))
        return options[(first + second) % count]

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def dim(self, for_argument: bool = False) -> SymExpr:
        """A symbol (five times in six, when one may be used) or a static
        size. Only symbols an argument binds may be used, unless the dim is
        for a new argument, which then binds it: a new argument introduces
        a new symbol a third of the time. Symbols come first, so that
        failing programs shrink to symbolic shapes."""
        fresh = [s for s in self.symbols if s not in self.bound]
        names = list(self.bound)
        if for_argument and fresh and (not names or self.integer(0, 2) == 2):
            names = fresh
        if names and self.integer(0, 5) < 5:
            return SymExpr.symbol(self.one_of(names))
        return SymExpr.const(self.one_of(STATIC_DIMS))

    def shape(
        self, min_rank: int, max_rank: int, for_argument: bool = False
    ) -> list[SymExpr]:
        rank = self.integer(min_rank, max(min_rank, max_rank))
        return [self.dim(for_argument) for _ in range(rank)]

    def element(self, kinds: str) -> DType:
        """An element type of one of ``kinds`` ("b", "i", "f")."""
        options = [d for d in self.dtypes if d.kind in kinds]
        if not options:
            options = [d for d in (FLOAT32, INT32, BOOL) if d.kind in kinds]
        return self.one_of(options)

    # Values ----------------------------------------------------------------

    def kind(self, value: SSAValue) -> str:
        return dtype(g.tensor_type(value).element_type).kind

    def pick(
        self, accept: Callable[[g.TensorType], bool] = lambda t: True
    ) -> SSAValue | None:
        """A value made so far, or None if none is acceptable.

        Three times in four it is a result nothing uses yet: otherwise most
        ops would compute values that never reach a result, and a pass that
        breaks them would go unnoticed. The most recent values come first,
        so that failing programs shrink into chains.
        """
        candidates = [v for v in self.values if accept(g.tensor_type(v))]
        unused = [
            v for v in candidates if not v.uses and not isinstance(v, BlockArgument)
        ]
        if unused and self.integer(0, 3) < 3:
            candidates = unused
        if not candidates:
            return None
        return candidates[-1 - self.integer(0, len(candidates) - 1)]

    def pick_or_new(
        self,
        accept: Callable[[g.TensorType], bool],
        kinds: str,
        min_rank: int,
        max_rank: int | None = None,
    ) -> SSAValue:
        """An acceptable value, or a new argument of one of ``kinds`` (its
        rank from ``min_rank`` to ``max_rank``)."""
        found = self.pick(accept)
        if found is not None:
            return found
        top = self.max_rank if max_rank is None else max_rank
        shape = self.shape(min_rank, top, for_argument=True)
        return self.new_argument(g.TensorType(shape, self.element(kinds).ir_type))

    def new_argument(self, tensor: g.TensorType) -> SSAValue:
        index = len(self.block.args)
        argument = self.block.insert_arg(tensor, index)
        argument.name_hint = f"a{index}"
        for dim in tensor.dims:
            name = dim.symbol_name
            if name is not None and name not in self.bound:
                self.bound.append(name)
        self.ranges[argument] = _input_range(self.kind(argument))
        self.values.append(argument)
        return argument

    def emit(self, op: Operation, value_range: _Range) -> SSAValue:
        self.block.add_op(op)
        result = op.results[0]
        self.ranges[result] = (float(value_range[0]), float(value_range[1]))
        self.values.append(result)
        return result

    def magnitude(self, value: SSAValue) -> float:
        return _magnitude(self.ranges[value])

    def largest(self, dim: SymExpr) -> int:
        """``dim`` at the largest binding (every dim made here grows with its
        symbols)."""
        return dim.evaluate({s: self.max_value for s in dim.symbols})

    def smallest(self, dim: SymExpr) -> int:
        return dim.evaluate({s: 1 for s in dim.symbols})

    def nonempty(self, dim: SymExpr) -> bool:
        """Whether ``dim >= 1`` follows from the guards (symbols are >= 1)."""
        return self.facts.prove_le(1, dim)

    # Coercions -------------------------------------------------------------

    def cast(self, value: SSAValue, target: DType) -> SSAValue:
        lo, hi = self.ranges[value]
        if target.kind == "b":
            value_range = (0.0, 1.0)
        elif target.kind == "i" and self.kind(value) == "f":
            value_range = (math.floor(lo), math.ceil(hi))
        else:
            value_range = (lo, hi)
        return self.emit(g.CastOp(value, target.ir_type), value_range)

    def as_kind(self, value: SSAValue, kinds: str) -> SSAValue:
        """``value``, cast to an element type of ``kinds`` if needed."""
        if self.kind(value) in kinds:
            return value
        return self.cast(value, self.element(kinds))

    def operand(self, kinds: str, discontinuous: bool = False) -> SSAValue:
        """A value of one of ``kinds``, cast if need be.

        In ``smooth`` programs no float is cast to an integer or a bool, and
        the operands of ops that jump where a float crosses a threshold
        (``discontinuous``: comparisons, ``floordiv``, ...) are never floats.
        """
        if self.smooth:
            if discontinuous:
                kinds = kinds.replace("f", "") or "i"
            if "f" not in kinds:
                return self.pick_or_new(
                    lambda t: dtype(t.element_type).kind in kinds, kinds, 0
                )
        value = self.pick()
        assert value is not None, "the first argument exists from the start"
        return self.as_kind(value, kinds)

    def broadcastable(
        self, source: Sequence[SymExpr], target: Sequence[SymExpr]
    ) -> bool:
        if len(source) > len(target):
            return False
        aligned = target[len(target) - len(source) :]
        return all(
            s == 1 or s == t or self.facts.prove_eq(s, t)
            for s, t in zip(source, aligned)
        )

    def match(self, value: SSAValue, target: g.TensorType) -> SSAValue | None:
        """``value`` cast and broadcast to ``target``, if its shape allows
        (and, in ``smooth`` programs, unless that casts a float to a
        non-float)."""
        source = g.tensor_type(value)
        if not self.broadcastable(source.dims, target.dims):
            return None
        target_kind = dtype(target.element_type).kind
        if self.smooth and self.kind(value) == "f" and target_kind != "f":
            return None
        if source.element_type != target.element_type:
            value = self.cast(value, dtype(target.element_type))
        if source.dims != target.dims:
            value = self.emit(g.BroadcastOp(value, target.dims), self.ranges[value])
        return value

    def splat(self, number: float, tensor: g.TensorType) -> SSAValue:
        element = dtype(tensor.element_type)
        scalar = np.asarray(number).astype(element.numpy)
        attribute: Attribute
        if element.kind == "f":
            attribute = FloatAttr(float(scalar), tensor.element_type)
        else:
            attribute = IntegerAttr(int(scalar), tensor.element_type)
        return self.emit(g.ConstantOp(attribute, tensor), (float(scalar),) * 2)

    def constant_values(self, kind: str) -> tuple[float, ...]:
        if kind == "f":
            return _FLOAT_CONSTANTS
        return _INT_CONSTANTS if kind == "i" else _BOOL_CONSTANTS

    def dense(self, tensor: g.TensorType, shape: tuple[int, ...]) -> SSAValue:
        element = dtype(tensor.element_type)
        count = math.prod(shape)
        numbers = self.draw(
            st.lists(
                st.sampled_from(self.constant_values(element.kind)),
                min_size=count,
                max_size=count,
            )
        )
        array = np.asarray(numbers).astype(element.numpy)
        wide = np.float64 if element.kind == "f" else np.int64
        literal = DenseIntOrFPElementsAttr.from_list(
            LiteralType(tensor.element_type, shape), array.astype(wide).tolist()
        )
        value_range = _span(array.astype(np.float64).tolist() or [0.0])
        return self.emit(g.ConstantOp(literal, tensor), value_range)

    def constant(self, tensor: g.TensorType) -> SSAValue:
        """A splat, or a dense literal when the shape is static and small."""
        shape = tensor.static_shape
        if (
            self.flag()
            and shape is not None
            and math.prod(shape) <= _MAX_DENSE_ELEMENTS
        ):
            return self.dense(tensor, shape)
        kind = dtype(tensor.element_type).kind
        return self.splat(self.one_of(self.constant_values(kind)), tensor)

    def operand_like(self, value: SSAValue) -> SSAValue:
        """A second operand of ``value``'s type (see :meth:`operand_of`)."""
        return self.operand_of(g.tensor_type(value))

    def operand_of(self, tensor: g.TensorType) -> SSAValue:
        """A value of type ``tensor``: a new argument (first, so that failing
        programs shrink to ops over fresh arguments), an earlier value made
        to fit, or a constant."""
        source = self.one_of(("argument", "value", "constant"))
        if source == "value":
            other = self.pick()
            matched = None if other is None else self.match(other, tensor)
            if matched is not None:
                return matched
        if source == "constant":
            return self.constant(tensor)
        return self.new_argument(tensor)

    # Domains and magnitudes ------------------------------------------------

    def squash(self, value: SSAValue, unit: bool = False) -> SSAValue:
        """``value`` mapped into ``[-1, 1]`` (floats, by tanh) or into
        ``[0, 8)`` (``[0, 2)`` if ``unit``; integers, by rem)."""
        kind = self.kind(value)
        modulus = 2 if unit else _INT_SQUASH
        if kind == "b" or (kind == "i" and self.magnitude(value) < modulus):
            return value
        if kind == "f":
            if self.magnitude(value) <= 1:
                return value
            return self.emit(g.TanhOp(value), (-1.0, 1.0))
        divisor = self.splat(modulus, g.tensor_type(value))
        return self.emit(g.RemOp(value, divisor), (0.0, modulus - 1.0))

    def positive(self, value: SSAValue, minimum: float) -> SSAValue:
        """``value`` if it is at least ``minimum``, else ``abs(value) + 1``."""
        if self.ranges[value][0] >= minimum:
            return value
        absolute = self.emit(g.AbsOp(value), (0.0, self.magnitude(value)))
        one = self.splat(1, g.tensor_type(value))
        return self.emit(g.AddOp(absolute, one), (1.0, self.magnitude(value) + 1))

    def nonzero(self, value: SSAValue) -> SSAValue:
        """``value`` if it is bounded away from 0, else ``abs(value) + 1``
        or, half of the time, its negation: divisors of both signs, as
        ``rem`` and ``floordiv`` round differently for each."""
        margin = 0.5 if self.kind(value) == "f" else 1.0
        lo, hi = self.ranges[value]
        if lo >= margin or hi <= -margin:
            return value
        value = self.positive(value, margin)
        if not self.flag():
            return value
        lo, hi = self.ranges[value]
        return self.emit(g.NegOp(value), (-hi, -lo))

    # Elementwise actions ---------------------------------------------------

    def unary_ops(self) -> list[type[g.UnaryOp]]:
        return [op for op in g.UNARY_OPS if not (self.smooth and op is g.FloorOp)]

    def do_unary(self) -> bool:
        op = self.op_class("unary", self.unary_ops())
        kinds = {g.NegOp: "if", g.AbsOp: "bif", g.NotOp: "bi"}.get(op, "f")
        value = self.operand(kinds)
        if op is g.ExpOp and self.ranges[value][1] > math.log(MAGNITUDE_LIMIT):
            value = self.squash(value)
        elif op in (g.LogOp, g.RsqrtOp):
            value = self.positive(value, 0.01)
        elif op is g.SqrtOp and self.ranges[value][0] < 0:
            value = self.emit(g.AbsOp(value), (0.0, self.magnitude(value)))
        value_range = _unary_range(op, self.ranges[value], self.kind(value))
        self.emit(op(value), value_range)
        return True

    def do_binary(self) -> bool:
        op = self.op_class("binary", g.BINARY_OPS)
        if op in (g.AndOp, g.OrOp, g.XorOp):
            kinds = "bi"
        else:
            kinds = "f" if op is g.DivOp else "if"
        lhs = self.operand(kinds, discontinuous=op in (g.FloorDivOp, g.RemOp))
        self.binary(op, lhs, self.operand_like(lhs))
        return True

    def binary(self, op: type[g.BinaryOp], lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """``op(lhs, rhs)``, squashing the operands first if the result could
        grow too large, and keeping divisors and powers in their domains."""
        if _growth(op, self.magnitude(lhs), self.magnitude(rhs)) > MAGNITUDE_LIMIT:
            lhs, rhs = self.squash(lhs), self.squash(rhs)
        if op is g.PowOp:
            return self.power(lhs, rhs)
        if op in (g.DivOp, g.FloorDivOp, g.RemOp):
            rhs = self.nonzero(rhs)
        kind = self.kind(lhs)
        value_range = _binary_range(op, self.ranges[lhs], self.ranges[rhs], kind)
        return self.emit(op(lhs, rhs), value_range)

    def power(self, base: SSAValue, exponent: SSAValue) -> SSAValue:
        """``base ** exponent`` kept finite: a small non-negative integer
        exponent takes any base; otherwise integer exponents are brought
        into ``[0, 2]`` and float bases made positive."""
        constant = _splat_number(exponent)
        if constant in (0, 1, 2, 3):
            power = int(constant)  # type: ignore[arg-type]
            if self.magnitude(base) ** power > MAGNITUDE_LIMIT:
                base = self.squash(base)
            lo, hi = self.ranges[base]
            values = [lo**power, hi**power] + ([0.0] if lo < 0 < hi else [])
            return self.emit(g.PowOp(base, exponent), _span(values))
        if self.kind(base) == "i":
            if not 0 <= self.ranges[exponent][0] <= self.ranges[exponent][1] <= 2:
                three = self.splat(3, g.tensor_type(exponent))
                exponent = self.emit(g.RemOp(exponent, three), (0.0, 2.0))
            if (
                max(self.magnitude(base), 1) ** self.ranges[exponent][1]
                > MAGNITUDE_LIMIT
            ):
                base = self.squash(base)
            bound = max(self.magnitude(base), 1) ** self.ranges[exponent][1]
            return self.emit(g.PowOp(base, exponent), (-bound, bound))
        base = self.positive(base, 0.5)
        growth = self.magnitude(exponent) * math.log(max(self.magnitude(base), 2.0))
        if growth > math.log(MAGNITUDE_LIMIT):
            exponent = self.squash(exponent)
        corners = [b**e for b in self.ranges[base] for e in self.ranges[exponent]]
        return self.emit(g.PowOp(base, exponent), _span(corners))

    def do_compare(self) -> bool:
        lhs = self.operand("bif", discontinuous=True)
        predicate = self.one_of(list(g.ComparisonPredicate))
        self.emit(g.CompareOp(predicate, lhs, self.operand_like(lhs)), (0.0, 1.0))
        return True

    def condition(self, tensor: g.TensorType) -> SSAValue:
        """A bool tensor of ``tensor``'s shape: an earlier one made to fit,
        or a new comparison (of non-floats in ``smooth`` programs)."""
        if self.flag():
            found = self.pick(is_bool)
            target = tensor.with_element_type(BOOL.ir_type)
            matched = None if found is None else self.match(found, target)
            if matched is not None:
                return matched
        kind = dtype(tensor.element_type).kind
        element = self.element("bi") if self.smooth and kind == "f" else None
        target = (
            tensor if element is None else tensor.with_element_type(element.ir_type)
        )
        lhs = self.operand_of(target)
        predicate = self.one_of(list(g.ComparisonPredicate))
        return self.emit(
            g.CompareOp(predicate, lhs, self.operand_of(target)), (0.0, 1.0)
        )

    def do_select(self) -> bool:
        value = self.operand("bif")
        other = self.operand_like(value)
        condition = self.condition(g.tensor_type(value))
        value_range = _union(self.ranges[value], self.ranges[other])
        self.emit(g.SelectOp(condition, value, other), value_range)
        return True

    def do_cast(self) -> bool:
        value = self.operand("bif")
        kinds = "f" if self.smooth and self.kind(value) == "f" else "bif"
        target = self.element(kinds)
        source = value.owner
        if isinstance(source, g.CastOp) and self.flag():  # a round trip
            original = dtype(g.tensor_type(source.input).element_type)
            target = original if original.kind in kinds else target
        self.cast(value, target)
        return True

    # Sources ---------------------------------------------------------------

    def do_constant(self) -> bool:
        element = self.element("bif")
        tensor = g.TensorType(self.shape(0, self.max_rank), element.ir_type)
        self.constant(tensor)
        return True

    def do_iota(self) -> bool:
        shape = self.shape(1, self.max_rank)
        axis = self.integer(0, len(shape) - 1)
        element = self.element("if")
        top = max(self.largest(shape[axis]) - 1, 0)
        self.emit(g.IotaOp(axis, g.TensorType(shape, element.ir_type)), (0.0, top))
        return True

    def do_dim(self) -> bool:
        first, second = self.dim(), self.dim()
        form = self.one_of(("plain", "sum", "product", "minus one", "half"))
        expr = {
            "plain": first,
            "sum": first + second,
            "product": first * second,
            "minus one": first - 1,
            "half": first // 2,
        }[form]
        element = self.element("if")
        value_range = (self.smallest(expr), self.largest(expr))
        self.emit(g.DimOp(expr, element.ir_type), value_range)
        return True

    # Shape actions ---------------------------------------------------------

    def do_broadcast(self) -> bool:
        value = self.operand("bif")
        source = g.tensor_type(value)
        if (
            1 <= source.rank < self.max_rank
            and not any(d == 1 for d in source.dims)
            and self.flag()
        ):
            # Most shapes are symbolic, with no 1 to expand: make one
            # (``[N, M]`` to ``[N, 1, M]``), as capture does for ``x[:, None]``.
            dims = list(source.dims)
            dims.insert(self.integer(0, len(dims)), SymExpr.const(1))
            value = self.emit(g.ReshapeOp(value, dims), self.ranges[value])
            source = g.tensor_type(value)
        lead = self.integer(0, max(0, self.max_rank - source.rank))
        shape = [self.dim() for _ in range(lead)]
        for dim in source.dims:
            equal = [
                d
                for d in (SymExpr.symbol(s) for s in self.bound)
                if d != dim and self.facts.prove_eq(d, dim)
            ]
            if dim == 1 and self.flag():
                shape.append(self.dim())
            elif equal and self.flag():
                shape.append(self.one_of(equal))
            else:
                shape.append(dim)
        self.emit(g.BroadcastOp(value, shape), self.ranges[value])
        return True

    def do_reshape(self) -> bool:
        value = self.operand("bif")
        factors = [f for d in g.tensor_type(value).dims for f in _factors(d)]
        order = self.draw(st.permutations(range(len(factors))))
        groups: list[list[SymExpr]] = []
        for index in order:
            if not groups or self.flag():
                groups.append([])
            groups[-1].append(factors[index])
        shape = [sym.product(group) for group in groups]
        if self.flag():
            shape.insert(self.integer(0, len(shape)), SymExpr.const(1))
        while len(shape) > self.max_rank:
            shape[-2:] = [shape[-2] * shape[-1]]
        self.emit(g.ReshapeOp(value, shape), self.ranges[value])
        return True

    def do_reduce(self) -> bool:
        kind = self.one_of(list(g.ReductionKind))
        counting = kind in (g.ReductionKind.SUM, g.ReductionKind.PROD)
        value = self.operand("if" if counting else "bif")
        dims = g.tensor_type(value).dims
        allowed = [i for i, d in enumerate(dims) if counting or self.nonempty(d)]
        # One axis half of the time (the common case, and the one where a
        # wrong axis keeps the result type), any subset otherwise.
        if allowed and self.flag():
            axes = [self.one_of(allowed)]
        else:
            axes = [i for i in allowed if self.flag()]
        count = math.prod(self.largest(dims[i]) for i in axes)
        if (
            kind == g.ReductionKind.SUM
            and self.magnitude(value) * count > MAGNITUDE_LIMIT
        ):
            value = self.squash(value)
        if kind == g.ReductionKind.PROD and self.magnitude(value) > 1:
            value = self.squash(value, unit=True)
        lo, hi = self.ranges[value]
        if kind == g.ReductionKind.SUM:
            value_range = (min(0.0, lo * count), max(0.0, hi * count))
        elif kind == g.ReductionKind.PROD:
            value_range = (-1.0, 1.0)
        else:
            value_range = (lo, hi)
        keepdims = self.flag()
        self.emit(g.ReduceOp(kind, value, axes, keepdims), value_range)
        return True

    def do_argmax(self) -> bool:
        value = self.operand("bif", discontinuous=True)
        dims = g.tensor_type(value).dims
        axes = [i for i, d in enumerate(dims) if self.nonempty(d)]
        if not axes:
            return False
        axis = self.one_of(axes)
        top = self.largest(dims[axis]) - 1
        self.emit(g.ArgMaxOp(value, axis, self.flag()), (0.0, top))
        return True

    def do_transpose(self) -> bool:
        value = self.operand("bif")
        permutation = self.draw(st.permutations(range(g.tensor_type(value).rank)))
        self.emit(g.TransposeOp(value, permutation), self.ranges[value])
        return True

    def slice_axis(self, extent: SymExpr) -> tuple[SymExpr, SymExpr, int]:
        """(offset, size, stride) of an in-bounds window of one axis."""
        modes = ["full", "every other"]
        if self.nonempty(extent):
            modes += ["reversed", "reversed every other", "drop first", "last"]
        if extent.is_constant and int(extent) >= 1:
            modes.append("static")
        mode = self.one_of(modes)
        half = (extent + 1) // 2
        if mode == "static":
            return self.static_window(int(extent))
        windows = {
            "full": (SymExpr.const(0), extent, 1),
            "every other": (SymExpr.const(0), half, 2),
            "reversed": (extent - 1, extent, -1),
            "reversed every other": (extent - 1, half, -2),
            "drop first": (SymExpr.const(1), extent - 1, 1),
            "last": (extent - 1, SymExpr.const(1), 1),
        }
        return windows[mode]

    def static_window(self, extent: int) -> tuple[SymExpr, SymExpr, int]:
        stride = self.one_of((1, 2, -1, -2, 3))
        offset = self.integer(0, extent - 1)
        if stride > 0:
            most = (extent - 1 - offset) // stride + 1
        else:
            most = offset // -stride + 1
        size = self.integer(0, most)
        return SymExpr.const(offset), SymExpr.const(size), stride

    def do_slice(self) -> bool:
        value = self.pick_or_new(lambda t: t.rank >= 1, "bif", 1)
        windows = [self.slice_axis(d) for d in g.tensor_type(value).dims]
        offsets, sizes, strides = zip(*windows)
        self.emit(g.SliceOp(value, offsets, sizes, strides), self.ranges[value])
        return True

    def do_concat(self) -> bool:
        value = self.pick_or_new(lambda t: t.rank >= 1, "bif", 1)
        tensor = g.tensor_type(value)
        axis = self.integer(0, tensor.rank - 1)
        parts = [value]
        for _ in range(self.integer(1, 2)):
            source = self.one_of(("same", "argument", "constant"))
            dims = list(tensor.dims)
            dims[axis] = self.dim(for_argument=source == "argument")
            if source == "same":
                parts.append(value)
            elif source == "argument":
                parts.append(self.new_argument(tensor.with_shape(dims)))
            else:
                parts.append(self.constant(tensor.with_shape(dims)))
        value_range = _union(*(self.ranges[p] for p in parts))
        self.emit(g.ConcatOp(parts, axis), value_range)
        return True

    def do_take(self) -> bool:
        table = self.operand("bif")
        dims = g.tensor_type(table).dims
        axes = [i for i, d in enumerate(dims) if self.nonempty(d)]
        if not axes:
            return False
        axis = self.one_of(axes)
        index_rank = max(0, self.max_rank - len(dims) + 1)
        indices = self.pick_or_new(
            lambda t: dtype(t.element_type).kind == "i" and t.rank <= index_rank,
            "i",
            0,
            index_rank,
        )
        indices = self.in_range(indices, dims[axis])
        self.emit(g.TakeOp(table, indices, axis), self.ranges[table])
        return True

    def in_range(self, indices: SSAValue, extent: SymExpr) -> SSAValue:
        """``indices rem extent``: every index in ``[0, extent)``."""
        tensor = g.tensor_type(indices)
        if extent.is_constant:
            divisor = self.splat(int(extent), tensor)
        else:
            size = (self.smallest(extent), self.largest(extent))
            divisor = self.emit(g.DimOp(extent, tensor.element_type), size)
            if tensor.rank:
                divisor = self.emit(g.BroadcastOp(divisor, tensor.dims), size)
        top = self.largest(extent) - 1
        return self.emit(g.RemOp(indices, divisor), (0.0, top))

    def do_matmul(self) -> bool:
        lhs = self.operand("if")
        tensor = g.tensor_type(lhs)
        if tensor.rank < 2:
            shape = [SymExpr.const(1)] * (2 - tensor.rank) + list(tensor.dims)
            lhs = self.emit(g.ReshapeOp(lhs, shape), self.ranges[lhs])
            tensor = g.tensor_type(lhs)
        count = self.largest(tensor.dims[-1])
        if self.magnitude(lhs) * max(self.magnitude(lhs), INT_INPUT_RANGE) * count > (
            MAGNITUDE_LIMIT
        ):
            lhs = self.squash(lhs)
        rhs = self.matmul_rhs(lhs)
        bound = self.magnitude(lhs) * self.magnitude(rhs) * count
        self.emit(g.MatmulOp(lhs, rhs), (-bound, bound))
        return True

    def matmul_rhs(self, lhs: SSAValue) -> SSAValue:
        """``lhs`` transposed, or a new argument ``[batch..., K, P]``."""
        tensor = g.tensor_type(lhs)
        if self.flag():
            permutation = list(range(tensor.rank))
            permutation[-2:] = permutation[:-3:-1]
            return self.emit(g.TransposeOp(lhs, permutation), self.ranges[lhs])
        batch = list(tensor.dims[:-2])
        layout = self.one_of(("same batch", "no batch", "unit batch"))
        if layout == "no batch":
            batch = []
        elif layout == "unit batch":
            batch = [SymExpr.const(1)] * len(batch)
        shape = [*batch, tensor.dims[-1], self.dim(for_argument=True)]
        return self.new_argument(tensor.with_shape(shape))

    # Guards ----------------------------------------------------------------

    def do_guard(self) -> bool:
        if not self.bound:
            return False
        name = self.one_of(self.bound)
        symbol = SymExpr.symbol(name)
        others = [SymExpr.symbol(s) for s in self.bound if s != name]
        forms = ["upper", "lower", "even", "one"] + (["equal"] if others else [])
        form = self.one_of(forms)
        fact = {
            "upper": lambda: Fact(symbol, "<=", self.max_value),
            "lower": lambda: Fact(symbol, ">=", 2),
            "even": lambda: Fact(symbol % 2, "==", 0),
            "one": lambda: Fact(symbol, "==", 1),
            "equal": lambda: Fact(symbol, "==", self.one_of(others)),
        }[form]()
        try:
            enumerate_bindings(
                self.bound, [*self.guards, fact], max_value=self.max_value
            )
        except IrcError:
            return False  # no size satisfies it together with the earlier guards
        reason = "generated" if self.flag() else None
        self.block.add_op(
            sym.GuardOp(sym.FactAttr(fact.lhs, fact.op, fact.rhs), reason)
        )
        self.guards.append(fact)
        self.facts = Facts(self.guards)
        return True

    # The function ----------------------------------------------------------

    def op_class(self, action: str, options: Sequence[type[Operation]]) -> Any:
        """The op a step of ``action`` adds: the previous one's again in a
        repeated step (``neg(neg(x))``), else one of ``options``."""
        if self.repeating and action in self.last_op:
            return self.last_op[action]
        self.last_op[action] = self.one_of(options)
        return self.last_op[action]

    def act(self, action: str) -> None:
        """Take one step; "repeat" takes the previous step's action again
        (on its result, as unused values come first): the op-of-op chains
        that canonicalisation patterns rewrite. An action that does not
        apply here adds a binary op."""
        self.repeating = action == REPEAT
        if self.repeating:
            action = self.last_action
        self.last_action = action
        if not getattr(self, "do_" + action)():
            self.do_binary()

    def finish(self, result_count: int) -> ModuleOp:
        """``@main`` returning the newest value and up to ``result_count - 1``
        others (those nothing uses first), in a verified module."""
        results = [self.values[-1]]
        for _ in range(result_count - 1):
            value = self.pick()
            if value is not None and value not in results:
                results.append(value)
        self.block.add_op(func.ReturnOp(*results))
        function_type = ([a.type for a in self.block.args], [r.type for r in results])
        module = ModuleOp([func.FuncOp("main", function_type, Region(self.block))])
        module.verify()
        return module


def is_bool(tensor: g.TensorType) -> bool:
    return is_bool_type(tensor.element_type)


def _splat_number(value: SSAValue) -> float | None:
    """The number a splat constant holds, else None."""
    op = value.owner
    if isinstance(op, g.ConstantOp) and op.is_splat:
        return float(op.value.value.data)  # type: ignore[union-attr]
    return None


# --------------------------------------------------------------------------
# Programs
# --------------------------------------------------------------------------


def _another_step(draw: _Draw, steps: int, max_ops: int) -> bool:
    """Whether a program that took ``steps`` steps takes one more.

    A flag before each step, rather than a count drawn up front, lets
    Hypothesis shrink a program by deleting any one step (its flag and its
    draws); the flag shrinks to "stop". Hypothesis also *generates* its
    simplest choice (zero) far more often than a uniform draw would, so
    "stop" takes two zeros in a row for the first three steps (programs of
    one or two ops are rare but reachable by shrinking), and after that a
    draw below ``256 // max_ops`` besides.
    """
    first = draw(st.integers(0, 255))
    second = draw(st.integers(0, 255))
    if first == 0 and second == 0:
        return False
    return steps < 3 or first >= 256 // max_ops


def _dtype_list(dtypes: Iterable[DType | str]) -> tuple[DType, ...]:
    chosen = tuple(dtype(d) for d in dtypes)
    if not chosen:
        raise IrcError("programs() needs at least one dtype")
    return chosen


def _action_list(actions: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(actions)
    unknown = [a for a in chosen if a not in ACTIONS]
    if unknown or not chosen:
        raise IrcError(
            f"unknown program actions {unknown or '(none given)'}; choose from "
            f"{', '.join(ACTIONS)}"
        )
    return chosen


def programs(
    *,
    min_ops: int = 1,
    max_ops: int = 8,
    max_results: int = 3,
    symbols: Sequence[str] = SYMBOLS,
    dtypes: Iterable[DType | str] = DTYPES,
    max_rank: int = 3,
    actions: Iterable[str] = ACTIONS,
    smooth: bool = False,
    max_value: int = MAX_SYMBOL_VALUE,
) -> st.SearchStrategy[ModuleOp]:
    """Verified graph-level modules holding one ``func.func @main``.

    ``@main`` starts with one argument (a shape of ``symbols`` and static
    dims, an element type of ``dtypes``) and takes ``min_ops`` to
    ``max_ops`` steps, each an action of ``actions`` (see ``ACTIONS``) that
    adds one graph op plus the casts, broadcasts, domain guards and new
    arguments it needs; it returns 1 to ``max_results`` values, the newest
    first. Every op runs in its domain on the inputs of
    :func:`irc.testing.inputs` under bindings with symbols up to
    ``max_value``.

    ``smooth=True`` keeps floats away from ops that jump when a float
    crosses a threshold (comparisons, ``floor``, ``floordiv``, ``rem``,
    ``argmax``, float-to-integer casts): use it for passes that may change
    float rounding, whose results then differ only within a tolerance.
    """
    if not 1 <= min_ops <= max_ops or max_results < 1 or max_rank < 1:
        raise IrcError(
            "programs() needs 1 <= min_ops <= max_ops, max_results >= 1 and "
            "max_rank >= 1"
        )
    dtype_list, action_list = _dtype_list(dtypes), _action_list(actions)
    # Elementwise steps twice as often: they hold most of the ops (25 of 41);
    # one step in seven repeats the previous one.
    weighted = action_list + tuple(a for a in action_list if a in _ELEMENTWISE)
    weighted += (REPEAT,) * max(1, len(weighted) // 6)

    @st.composite
    def draw_program(draw: _Draw) -> ModuleOp:
        builder = _Builder(
            draw,
            symbols=symbols,
            dtypes=dtype_list,
            max_rank=max_rank,
            smooth=smooth,
            max_value=max_value,
        )
        # The first argument has rank >= 1 and mostly symbolic dims: every
        # step starts from it or from what was built on it.
        shape = builder.shape(1, max_rank, for_argument=True)
        builder.new_argument(
            g.TensorType(shape, draw(st.sampled_from(dtype_list)).ir_type)
        )
        steps = 0
        while steps < min_ops or (
            steps < max_ops and _another_step(draw, steps, max_ops)
        ):
            builder.act(draw(st.sampled_from(weighted)))
            steps += 1
        return builder.finish(draw(st.integers(1, max_results)))

    return draw_program()
