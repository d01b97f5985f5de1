"""The level-neutral core of the bounds checker: symbolic intervals of a
kernel's integer values, the proof that an access stays inside its buffer,
and the search for a binding that breaks it.

The tile levels (``loop.kernel``, ``memory.kernel`` and ``triton.kernel``)
compute with the ops of one dialect, :mod:`irc.dialects.tile`, so one
abstract interpreter over those ops serves all three levels; each level's
module (:mod:`.loop`, :mod:`.memory`, :mod:`.triton`) only says what its
accesses are and how large the buffers they touch are. This module imports
no dialect but ``tile`` (which every tile level may use) and ``sym``, so it
keeps to the layering rules of ``tests/test_layering.py``.

Every integer SSA value gets an :class:`Interval` of irc ``SymExpr`` bounds
over the kernel's symbols: a program id spans ``0 .. grid - 1``, a range
``0 .. BLOCK - 1``, an ``scf.for`` induction variable ``lb .. ub - 1``, and
arithmetic follows. A mask that is a conjunction of comparisons refines the
compared values for the access it guards: on every lane where the mask
holds, ``x < D`` holds of the ``x`` that the offset uses at that lane,
because tiles broadcast right-aligned by shape alone, so the lane of ``x``
that an elementwise chain reaches is the same through the mask and through
the offset; a ``select``'s condition refines its branches alike. Values
reached through anything else (a reduction, a loop's results, a load, an
op this module does not know) are unbounded: the checker may fail to prove
an access, never prove a wrong one.

The search for a counter-example evaluates the integer slice of an access
exactly, with narrow (i32) integers wrapping around as on the GPU: an
access whose index went through a wrap on an active lane is a counter-
example, reported with the op that wrapped and its values. Bindings past
``2**16`` and ``2**31`` are tried when an index is narrow.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeGuard

import numpy as np
from xdsl.dialects import scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from irc.dialects.sym import GuardOp
from irc.dialects.tile import (
    BinaryOp,
    BlockSizeOp,
    CastOp,
    CompareOp,
    ConstantOp,
    ProgramIdOp,
    RangeOp,
    ReduceOp,
    SelectOp,
    SizeOp,
    SplatOp,
    TiledKernelOp,
    TileShapedType,
    UnaryOp,
    enclosing_op,
)
from irc.shapes import Fact, Facts, ShapeError, SymExpr, as_expr, smax, smin
from irc.source_locations import source_location

#: CUDA's limits on the programs of a launch, per grid axis.
GRID_LIMITS = (2**31 - 1, 65535, 65535)

#: How deep the backward slice of an index may go before its value counts
#: as unbounded (hostile IR could otherwise exhaust Python's stack).
_MAX_DEPTH = 200

#: Select branches narrowed by their condition per access (see
#: ``KernelIntervals._branch``).
_MAX_NARROWED_BRANCHES = 256

#: Program ids and loop iterations tried per binding in the search for a
#: counter-example, and bindings of the symbols tried.
_MAX_PROGRAMS = 64
_MAX_ITERATIONS = 8
_MAX_BINDINGS = 24
_MAX_RUNS = 2048

#: Small values a symbol takes in the search for a counter-example.
_TRIAL_VALUES = (1, 2, 3, 5, 17, 1025)


class Interval(NamedTuple):
    """``low <= x <= high`` for every lane and binding; None: unbounded."""

    low: SymExpr | None
    high: SymExpr | None

    def __str__(self) -> str:
        low = "-inf" if self.low is None else str(self.low)
        high = "+inf" if self.high is None else str(self.high)
        return f"[{low}, {high}]"


UNBOUNDED = Interval(None, None)

#: The bounds a mask puts on the values it compares.
Constraints = Mapping[SSAValue, Sequence[Interval]]


@dataclass(frozen=True)
class Access:
    """One load or store: its index operands (one per dim of ``extents``,
    or one flat offset into a buffer of ``extents[0]`` elements), its mask,
    and how to name the buffer it touches."""

    op: Operation
    verb: str
    indices: tuple[SSAValue, ...]
    extents: tuple[SymExpr, ...]
    mask: SSAValue | None
    buffer: str


@dataclass(frozen=True)
class BoundsViolation:
    """An access not proven in bounds (or a grid too large): the op and
    what is wrong, with a breaking binding when one was found."""

    op: Operation
    message: str

    def __str__(self) -> str:
        where = source_location(self.op)
        return self.message if where is None else f"{where}: {self.message}"


def footprint(shape: Sequence[SymExpr], strides: Sequence[SymExpr]) -> SymExpr:
    """The number of elements a strided buffer spans from offset 0: the
    largest offset, ``sum((size - 1) * stride)``, plus one (0 when a dim is
    0)."""
    if any(as_expr(d) == 0 for d in shape):
        return as_expr(0)
    last = sum(
        ((as_expr(d) - 1) * as_expr(s) for d, s in zip(shape, strides, strict=True)),
        as_expr(0),
    )
    return last + 1


def facts_of(ops: Sequence[Operation]) -> Facts | None:
    """The facts of the ``sym.guard`` ops in the blocks around each op of
    ``ops`` (and in their own bodies, for a kernel); None when they
    contradict each other (such code never runs)."""
    found: list[Fact] = []
    for op in ops:
        for region in op.regions:
            for block in region.blocks:
                found.extend(g.fact.fact for g in block.ops if isinstance(g, GuardOp))
        block = op.parent_block()
        while block is not None:
            found.extend(g.fact.fact for g in block.ops if isinstance(g, GuardOp))
            parent = block.parent_op()
            block = parent.parent_block() if parent is not None else None
    try:
        return Facts(found)
    except ShapeError:
        return None


def grid_violations(kernel: TiledKernelOp, facts: Facts) -> list[BoundsViolation]:
    """The grid axes beyond CUDA's limits: static ones too large, and
    symbolic ones provably too large for every binding."""
    found = []
    for axis, (size, limit) in enumerate(zip(kernel.grid_exprs, GRID_LIMITS)):
        value = size.constant
        too_large = value > limit if value is not None else facts.prove_lt(limit, size)
        if too_large:
            found.append(
                BoundsViolation(
                    kernel,
                    f"{kernel.name} @{kernel.kernel_name} grid axis {axis} has "
                    f"{size} programs, beyond CUDA's limit of {limit} on that axis",
                )
            )
    return found


def _plus(a: SymExpr | None, b: SymExpr | None) -> SymExpr | None:
    return None if a is None or b is None else a + b


def _minus(a: SymExpr | None, b: SymExpr | None) -> SymExpr | None:
    return None if a is None or b is None else a - b


def _times(a: SymExpr | None, b: SymExpr | None) -> SymExpr | None:
    return None if a is None or b is None else a * b


def _integer_width(type_: Attribute) -> int | None:
    element = type_.element_type if isinstance(type_, TileShapedType) else type_
    return element.width.data if isinstance(element, IntegerType) else None


def _shape(value: SSAValue) -> tuple[int, ...]:
    type_ = value.type
    return type_.dims if isinstance(type_, TileShapedType) else ()


class KernelIntervals:
    """The abstract interpreter of one kernel's integer values under
    ``facts``; ``symbol_args`` gives the kernel arguments that carry a
    symbol's value (a ``triton.kernel``'s trailing integers); ``grid``, the
    grid its program ids range over, when not the kernel's (a piece of a
    combined kernel has its own)."""

    def __init__(
        self,
        kernel: TiledKernelOp,
        facts: Facts,
        symbol_args: Mapping[SSAValue, SymExpr] | None = None,
        grid: Sequence[SymExpr] | None = None,
    ):
        self.kernel = kernel
        self.facts = facts
        self.grid = kernel.grid_exprs if grid is None else tuple(grid)
        self.symbol_args = dict(symbol_args or {})
        self._plain: dict[SSAValue, Interval] = {}
        self._proofs: dict[tuple[SymExpr, SymExpr], bool] = {}
        self._divisible: dict[tuple[SymExpr, SymExpr], bool] = {}
        self._ranges: dict[SymExpr, tuple[int | None, int | None]] = {}
        self._floors: dict[tuple[SymExpr, SymExpr], SymExpr] = {}
        self._active: dict[tuple[Fact, ...], KernelIntervals] = {}
        self._divisor_cache: list[SymExpr] | None = None
        #: Select branches left to narrow in the current access's proof.
        self._branch_budget = _MAX_NARROWED_BRANCHES

    # ----- proofs ---------------------------------------------------------

    def le(self, a: SymExpr, b: SymExpr) -> bool:
        """Whether ``a <= b`` is proven (memoised: the same bounds recur)."""
        difference = b - a
        if (value := difference.constant) is not None:
            return value >= 0
        key = (a, b)
        if key not in self._proofs:
            self._proofs[key] = self.facts.prove_le(a, b)
        return self._proofs[key]

    def divides(self, k: SymExpr, e: SymExpr) -> bool:
        """Whether ``k`` provably divides ``e`` (memoised)."""
        key = (k, e)
        if key not in self._divisible:
            self._divisible[key] = self.facts.prove_divisible(e, k)
        return self._divisible[key]

    def settled(self, a: SymExpr, b: SymExpr) -> bool:
        """Whether ``a <= b`` is proven, directly or case by case on the
        residues of a symbol (see :func:`prove_by_residues`): the last
        step of an access's proof, worth the extra work."""
        return self.le(a, b) or prove_by_residues(self.facts, a, b)

    def nonnegative(self, e: SymExpr | None) -> bool:
        return e is not None and self.le(as_expr(0), e)

    def dividend(self, low: SymExpr | None) -> bool:
        """Whether a dividend's lower bound ``low`` is proven nonnegative,
        case by case on residues if need be: an index map divides the flat
        index of a negative-stride slice, ``N*N*N + 1 - 2*((N*N*N + 1)
        floordiv 2)`` at least, which only the cases of ``N``'s parity
        prove."""
        return low is not None and self.settled(as_expr(0), low)

    # ----- intervals ------------------------------------------------------

    def interval(
        self,
        value: SSAValue,
        refined: Constraints | None = None,
        memo: dict[SSAValue, Interval] | None = None,
        depth: int = 0,
    ) -> Interval:
        """The interval of ``value``, narrowed where ``refined`` (a mask's
        comparisons) bounds it or the values it is computed from along
        elementwise ops."""
        if not refined:
            if value not in self._plain:
                self._plain[value] = self._compute(value, None, {}, depth)
            return self._plain[value]
        if memo is None:
            memo = {}
        if value not in memo:
            computed = self._compute(value, refined, memo, depth)
            for bound in refined.get(value, ()):
                computed = self._meet(computed, bound)
            memo[value] = computed
        return memo[value]

    def _compute(
        self,
        value: SSAValue,
        refined: Constraints | None,
        memo: dict[SSAValue, Interval],
        depth: int,
    ) -> Interval:
        width = _integer_width(value.type)
        if depth > _MAX_DEPTH or width is None:
            return UNBOUNDED
        if isinstance(value, BlockArgument):
            return self._block_argument(value, refined, memo, depth)
        op = value.owner
        assert isinstance(op, Operation)

        def of(operand: SSAValue) -> Interval:
            return self.interval(operand, refined, memo, depth + 1)

        try:
            if isinstance(op, SelectOp):
                computed = self._select(op, refined, memo, depth)
            else:
                computed = self._op_interval(op, of, depth)
        except ShapeError:  # a bound too large to expand: no bound
            return UNBOUNDED
        if isinstance(op, ProgramIdOp):  # below CUDA's grid limits: no wrap
            return computed
        return self._without_wrapping(computed, width)

    def _without_wrapping(self, x: Interval, width: int) -> Interval:
        """``x`` as a narrow integer (``i32`` Triton index arithmetic) holds
        it: where ``x`` may leave the type's range the value wraps, which
        only lowers a value that is not negative (``x mod 2**32`` is at most
        ``x``), so its upper bound still holds and its lower bound becomes
        the type's (and the other way round). ``i64`` arithmetic on sizes
        does not wrap."""
        if width == 1 or width >= 64:
            return x
        half = 2 ** (width - 1)
        low_fits = x.low is not None and self._fits(x.low, -half, half - 1)
        high_fits = x.high is not None and self._fits(x.high, -half, half - 1)
        if low_fits and high_fits:
            return x
        if x.low is not None and self._within(x.low, 0, None):
            return Interval(as_expr(-half), x.high)
        if x.high is not None and self._within(x.high, None, 0):
            return Interval(x.low, as_expr(half - 1))
        return Interval(as_expr(-half), as_expr(half - 1))

    def _fits(self, e: SymExpr, low: int, high: int) -> bool:
        """Whether ``low <= e <= high`` for every binding: by the facts'
        interval arithmetic, or else by the prover (a guard on a product,
        ``N*D <= 2**30 - 1``, bounds ``(N - 1)*D`` only through it)."""
        if self._within(e, low, high):
            return True
        return self.le(as_expr(low), e) and self.le(e, as_expr(high))

    def _within(self, e: SymExpr, low: int | None, high: int | None) -> bool:
        """Whether ``low <= e <= high`` (None: no bound) for every binding,
        by the facts' interval arithmetic (memoised; no proof search: it
        runs on every narrow value)."""
        if e not in self._ranges:
            self._ranges[e] = self.facts.bounds(e)
        least, most = self._ranges[e]
        above = low is None or (least is not None and low <= least)
        below = high is None or (most is not None and most <= high)
        return above and below

    def _block_argument(
        self,
        arg: BlockArgument,
        refined: Constraints | None,
        memo: dict[SSAValue, Interval],
        depth: int,
    ) -> Interval:
        if arg in self.symbol_args:
            symbol = self.symbol_args[arg]
            return Interval(symbol, symbol)
        loop = arg.block.parent_op()
        if isinstance(loop, scf.ForOp) and arg.index == 0:
            # The loop's bounds are scalars, one value per program, so the
            # mask's refinements hold of them too.
            lower = self.interval(loop.lb, refined, memo, depth + 1)
            upper = self.interval(loop.ub, refined, memo, depth + 1)
            step = self.interval(loop.step, refined, memo, depth + 1)
            if step.low is None or not self.le(as_expr(1), step.low):
                return UNBOUNDED
            return Interval(lower.low, self._last_iteration(lower, upper, step))
        return UNBOUNDED

    def _last_iteration(
        self, lower: Interval, upper: Interval, step: Interval
    ) -> SymExpr | None:
        """The largest induction value: ``ub - step`` when the trip is an
        exact number of steps (a static K loop of a matmul), else below
        ``ub``."""
        first, last, stride = lower.low, upper.high, step.low
        known = first is not None and last is not None and stride is not None
        exact = lower.high == first and upper.low == last and step.high == stride
        if known and exact and self.divides(stride, last - first):
            return last - stride
        return _minus(upper.high, as_expr(1))

    def _op_interval(
        self, op: Operation, of: Callable[[SSAValue], Interval], depth: int
    ) -> Interval:
        if isinstance(op, ConstantOp):
            if isinstance(op.value, IntegerAttr):
                constant = as_expr(op.value.value.data)
                return Interval(constant, constant)
            return UNBOUNDED
        if isinstance(op, SizeOp):
            size = op.expr.data
            return Interval(size, size)
        if isinstance(op, ProgramIdOp):
            axis = op.axis.value.data
            if axis >= len(self.grid):
                return UNBOUNDED
            return Interval(as_expr(0), self.grid[axis] - 1)
        if isinstance(op, RangeOp):
            return Interval(as_expr(0), as_expr(max(_shape(op.result), default=1) - 1))
        if isinstance(op, BlockSizeOp):
            return Interval(as_expr(1), as_expr(_declared_block(op)))
        if isinstance(op, SplatOp):
            return of(op.input)
        if isinstance(op, CastOp):
            return self._cast(op, of(op.input))
        if isinstance(op, UnaryOp) and op.kind.data.name == "neg":
            x = of(op.input)
            return Interval(
                None if x.high is None else -x.high, None if x.low is None else -x.low
            )
        if isinstance(op, BinaryOp):
            if (whole := self._recomposed(op)) is not None:
                return of(whole)
            return self._binary(op.kind.data.name, of(op.lhs), of(op.rhs))
        if isinstance(op, ReduceOp) and op.kind.data.value in ("max", "min"):
            # The lanes of a reduction's input are not the access's lanes:
            # no refinement reaches through it.
            return self.interval(op.input, None, None, depth + 1)
        return UNBOUNDED

    def _recomposed(self, op: BinaryOp) -> SSAValue | None:
        """``x`` when ``op`` is ``(x rem m) + (x floordiv m)*m`` (in any
        order) for an ``m`` proven positive: an index split by a reshape and
        joined back by the next one, which is ``x`` on every lane (floor
        division and its remainder), even through narrow integers that
        wrap (each step is exact modulo ``2**width``). Interval arithmetic
        would lose up to ``m - 1`` between the two parts."""
        if op.kind.data.name != "add":
            return None
        for remainder, product in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            rem, mul = remainder.owner, product.owner
            if not (_is_binary(rem, "rem") and _is_binary(mul, "mul")):
                continue
            x, m = rem.lhs, rem.rhs
            for quotient, factor in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
                div = quotient.owner
                if (
                    _is_binary(div, "floordiv")
                    and div.lhs is x
                    and self._same_positive(m, div.rhs)
                    and self._same_positive(m, factor)
                ):
                    return x
        return None

    def _same_positive(self, a: SSAValue, b: SSAValue) -> bool:
        """Whether ``a`` and ``b`` are one value, proven positive: the same
        SSA value, or the same exactly known size."""
        known = self.interval(a)
        exact = known.low is not None and known.low == known.high
        if a is not b and not (exact and known == self.interval(b)):
            return False
        return known.low is not None and self.le(as_expr(1), known.low)

    def _select(
        self,
        op: SelectOp,
        refined: Constraints | None,
        memo: dict[SSAValue, Interval],
        depth: int,
    ) -> Interval:
        """Each branch where it is picked: the true branch's values narrowed
        by the condition's comparisons, the false branch's by the negation
        of a single one (``select(j < D, j, 0)`` gives ``j`` only on lanes
        where ``j < D``), as a mask narrows an access's; lanes broadcast
        alike through the condition and the branches."""
        when_true = self.refinements(op.condition, depth + 1)
        when_false = self._negated_refinements(op.condition, depth + 1)
        a = self._branch(op.on_true, refined, memo, when_true, depth)
        b = self._branch(op.on_false, refined, memo, when_false, depth)
        return Interval(
            None if a.low is None or b.low is None else smin(a.low, b.low),
            None if a.high is None or b.high is None else smax(a.high, b.high),
        )

    def _branch(
        self,
        value: SSAValue,
        refined: Constraints | None,
        memo: dict[SSAValue, Interval],
        added: Constraints,
        depth: int,
    ) -> Interval:
        """The interval of a select's branch ``value`` under ``refined`` and
        the condition's ``added`` bounds, in a memo of its own (its values
        are narrower there than elsewhere). Narrowed branches are budgeted
        per access: selects sharing their operands could otherwise take
        exponential time; past the budget a branch is not narrowed, which
        only loses precision."""
        if not added or self._branch_budget <= 0:
            return self.interval(value, refined, memo, depth + 1)
        self._branch_budget -= 1
        merged: dict[SSAValue, list[Interval]] = {
            key: list(bounds) for key, bounds in (refined or {}).items()
        }
        for key, bounds in added.items():
            merged.setdefault(key, []).extend(bounds)
        return self.interval(value, merged, {}, depth + 1)

    def _negated_refinements(self, condition: SSAValue, depth: int) -> Constraints:
        """What a condition that is one comparison says where it fails (its
        negation is a comparison too; that of a conjunction is not)."""
        while isinstance(condition.owner, SplatOp):
            condition = condition.owner.input
        compare = condition.owner
        if not isinstance(compare, CompareOp):
            return {}
        negated = _NEGATIONS.get(compare.kind.data.value)
        if negated is None:
            return {}
        return self._narrowed(self._bounds_of(compare, negated, depth), depth)

    def _cast(self, op: CastOp, x: Interval) -> Interval:
        """An integer cast keeps the value (a narrowing one up to wrapping,
        which ``_without_wrapping`` accounts for); a boolean becomes 0 or
        1; a float is unbounded."""
        source = _integer_width(op.input.type)
        if source is None or _integer_width(op.result.type) is None:
            return UNBOUNDED
        if source == 1:
            return Interval(as_expr(0), as_expr(1))
        return x

    def _binary(self, kind: str, a: Interval, b: Interval) -> Interval:
        if kind == "add":
            return Interval(_plus(a.low, b.low), _plus(a.high, b.high))
        if kind == "sub":
            return Interval(_minus(a.low, b.high), _minus(a.high, b.low))
        if kind == "mul":
            return self._product(a, b)
        if kind == "floordiv":
            return self._quotient(a, b)
        if kind == "rem":
            if self.dividend(a.low) and b.low is not None and self.le(1, b.low):
                return Interval(as_expr(0), _minus(b.high, as_expr(1)))
            return UNBOUNDED
        if kind in ("max", "min"):
            return _extremum(kind, a, b)
        return UNBOUNDED

    def _product(self, a: Interval, b: Interval) -> Interval:
        for x, factor in ((a, b), (b, a)):
            scaled = self._scaled(x, factor)
            if scaled is not None:
                return scaled
        if self.nonnegative(a.low) and self.nonnegative(b.low):
            return Interval(_times(a.low, b.low), _times(a.high, b.high))
        return UNBOUNDED

    def _scaled(self, x: Interval, factor: Interval) -> Interval | None:
        """``x`` times an exactly known ``factor`` of proven sign (a
        constant, or a size such as a stride ``N``), whatever the sign of
        ``x``: a nonnegative factor keeps the order of ``x``'s ends, a
        nonpositive one swaps them. A negative-step slice's index (``(N +
        1) floordiv 2 - 1 - 2*i``, of no proven sign) times its stride
        needs it; None when the factor is not such a value."""
        k = factor.low
        if k is None or k != factor.high:
            return None
        if self.nonnegative(k):
            return Interval(_times(x.low, k), _times(x.high, k))
        if self.nonnegative(-k):
            return Interval(_times(x.high, k), _times(x.low, k))
        return None

    def _quotient(self, a: Interval, b: Interval) -> Interval:
        if not self.dividend(a.low) or b.low is None or not self.le(1, b.low):
            return UNBOUNDED
        high = None if a.high is None else self._floor(a.high, b.low)
        low = as_expr(0) if b.high is None else self._floor(a.low, b.high)
        return Interval(low, high)

    def _floor(self, x: SymExpr, d: SymExpr) -> SymExpr:
        """:func:`floor_quotient` under the facts (memoised)."""
        key = (x, d)
        if key not in self._floors:
            self._floors[key] = floor_quotient(self.facts, x, d)
        return self._floors[key]

    # ----- masks ----------------------------------------------------------

    def refinements(self, mask: SSAValue | None, depth: int = 0) -> Constraints:
        """The bounds that the comparisons of ``mask`` (a conjunction of
        them) put on the values they compare, wherever the mask holds; a
        value known exactly (a size) is not narrowed."""
        if mask is None:
            return {}
        pairs = (
            pair
            for compare in _conjuncts(mask)
            for pair in self._bounds_of(compare, None, depth)
        )
        return self._narrowed(pairs, depth)

    def _narrowed(
        self, pairs: Iterable[tuple[SSAValue, Interval]], depth: int
    ) -> Constraints:
        """The bounds of ``pairs`` by value, leaving out the values known
        exactly (a size is not narrowed)."""
        refined: dict[SSAValue, list[Interval]] = {}
        for x, bound in pairs:
            known = self.interval(x, None, None, depth)
            if known.low is None or known.low != known.high:
                refined.setdefault(x, []).append(bound)
        return refined

    def _bounds_of(
        self, compare: CompareOp, predicate: str | None = None, depth: int = 0
    ) -> Iterator[tuple[SSAValue, Interval]]:
        """What ``compare`` holding (or ``predicate`` holding between its
        operands) says of each operand: ``x < y`` bounds ``x`` above by
        ``y``'s upper bound less one, ``y`` below by ``x``'s lower bound plus
        one."""
        predicate = predicate or compare.kind.data.value
        lhs, rhs = compare.lhs, compare.rhs
        if predicate in ("gt", "ge"):
            lhs, rhs = rhs, lhs
            predicate = "lt" if predicate == "gt" else "le"
        if predicate not in ("lt", "le", "eq"):
            return
        gap = as_expr(1 if predicate == "lt" else 0)
        small = self.interval(lhs, None, None, depth)
        large = self.interval(rhs, None, None, depth)
        equal = predicate == "eq"
        yield lhs, Interval(large.low if equal else None, _minus(large.high, gap))
        yield rhs, Interval(_plus(small.low, gap), small.high if equal else None)

    def _meet(self, current: Interval, bound: Interval) -> Interval:
        """``current`` narrowed by what a comparison says (``bound``)."""
        return Interval(
            self._tighter(current.low, bound.low, lower=True),
            self._tighter(current.high, bound.high, lower=False),
        )

    def _tighter(
        self, current: SymExpr | None, bound: SymExpr | None, lower: bool
    ) -> SymExpr | None:
        """The tighter of two ends that both hold: ``current`` only when it is
        proven tighter, else the comparison's ``bound``, which is what masks
        are written to enforce (a ``min`` of both would hold too, but
        defeats the prover's later steps, such as a division)."""
        if bound is None:
            return current
        if current is None or current == bound:
            return bound
        tighter = self.le(bound, current) if lower else self.le(current, bound)
        return current if tighter else bound

    # ----- accesses -------------------------------------------------------

    def check(self, access: Access) -> BoundsViolation | None:
        """None when every lane of ``access`` whose mask holds stays inside
        its buffer, for every program, iteration and binding the facts
        allow; otherwise the violation, with a counter-example if one of
        the small bindings tried gives one."""
        if any(self.le(size, as_expr(0)) for size in self.grid):
            return None  # an empty grid: no program ever runs
        try:
            unproven = self._unproven(access)
        except ShapeError as error:  # a bound too large to compare
            return BoundsViolation(
                access.op,
                f"{access.op.name} may {access.verb.removesuffix('s')} out of bounds "
                f"of {access.buffer}: its bounds are too large to prove ({error})",
            )
        if not unproven or self._never_active(access.mask):
            return None
        active = self._while_active(access)
        if active is not None and not active._unproven(access):
            return None
        return self._violation(access, unproven)

    def _unproven(self, access: Access) -> list[tuple[int, Interval]]:
        """The dims of ``access`` not proven in bounds, with their
        intervals."""
        self._branch_budget = _MAX_NARROWED_BRANCHES
        refined = self.refinements(access.mask)
        memo: dict[SSAValue, Interval] = {}
        unproven = []
        for dim, (index, extent) in enumerate(
            zip(access.indices, access.extents, strict=True)
        ):
            bound = self.interval(index, refined, memo)
            inside = (
                bound.low is not None
                and bound.high is not None
                and self.settled(as_expr(0), bound.low)
                and self.settled(bound.high + 1, extent)
            )
            if not inside:
                unproven.append((dim, bound))
        return unproven

    def _while_active(self, access: Access) -> KernelIntervals | None:
        """This analysis under the facts that hold whenever ``access`` runs
        on a lane of its mask, if they add any: a divisor ``d >= 0`` of the
        kernel (``N - 1``) is at least 1 when it divides a bound ``S`` of the
        mask, of an enclosing loop or of a grid axis exactly (``x < S``,
        ``x >= 0``, ``S = d * Q``), since ``d = 0`` leaves no lane, no
        iteration or no program. A pointwise kernel over ``[N, N - 1]``
        divides its flat index by ``N - 1`` only on lanes below ``N*N -
        N``; a row kernel over ``[M, N - 1]`` its program id only in a grid
        of ``M*(N - 1)``, or its rows only in a loop below ``M*(N - 1)``. A
        comparison of two exactly known scalars (``N - 2 >= 0``, the guard
        of a slice at an offset) is itself such a fact."""
        mask = access.mask
        totals = [*self._strict_bounds(mask), *self._trip_bounds(access.op)]
        added = [
            Fact(divisor, ">=", as_expr(1))
            for divisor in self._divisors()
            if not self.le(as_expr(1), divisor)
            and self.nonnegative(divisor)
            and any(_divides(divisor, total) for total in totals)
        ]
        added += self._exact_comparisons(mask)
        if not added:
            return None
        key = tuple(added)
        if key not in self._active:
            try:
                facts = Facts([*self.facts, *added])
            except ShapeError:  # together they exclude every lane: not used
                return None
            self._active[key] = KernelIntervals(
                self.kernel, facts, self.symbol_args, self.grid
            )
        return self._active[key]

    def _exact_comparisons(self, mask: SSAValue | None) -> list[Fact]:
        """The comparisons of ``mask`` between exactly known values, as facts
        over the symbols, leaving out those the facts already prove."""
        if mask is None:
            return []
        found = []
        for compare in _conjuncts(mask):
            relation = _FACT_RELATIONS.get(compare.kind.data.value)
            lhs, rhs = self.interval(compare.lhs), self.interval(compare.rhs)
            exact = (
                lhs.low is not None
                and lhs.low == lhs.high
                and rhs.low is not None
                and rhs.low == rhs.high
            )
            if relation is None or not exact:
                continue
            fact = Fact(lhs.low, relation, rhs.low)
            if not self._proves(fact):
                found.append(fact)
        return found

    def _proves(self, fact: Fact) -> bool:
        """Whether the facts already prove ``fact`` (an order between
        exact values: equality is left to the refined facts)."""
        gap = as_expr(1 if fact.op in ("<", ">") else 0)
        if fact.op in ("<", "<="):
            return self.le(fact.lhs + gap, fact.rhs)
        if fact.op in (">", ">="):
            return self.le(fact.rhs + gap, fact.lhs)
        return False

    def _never_active(self, mask: SSAValue | None) -> bool:
        """Whether a comparison of ``mask`` is false on every lane (``x <
        0`` with ``x >= 0``: the slice of an empty dim)."""
        if mask is None:
            return False
        for compare in _conjuncts(mask):
            predicate = compare.kind.data.value
            lhs, rhs = compare.lhs, compare.rhs
            if predicate in ("gt", "ge"):
                lhs, rhs = rhs, lhs
            if predicate not in ("lt", "gt", "le", "ge"):
                continue
            small, large = self.interval(lhs).low, self.interval(rhs).high
            if small is None or large is None:
                continue
            strict = predicate in ("lt", "gt")
            if self.le(large + (0 if strict else 1), small):
                return True
        return False

    def _strict_bounds(self, mask: SSAValue | None) -> Iterator[SymExpr]:
        """The grid's sizes and those ``S`` of the comparisons ``x < S`` of
        ``mask`` with ``x >= 0``: a lane is active only if each ``S >= 1``."""
        yield from self.grid
        if mask is None:
            return
        for compare in _conjuncts(mask):
            predicate = compare.kind.data.value
            lhs, rhs = compare.lhs, compare.rhs
            if predicate == "gt":
                lhs, rhs = rhs, lhs
            elif predicate != "lt":
                continue
            size = self.interval(rhs)
            exact = size.low is not None and size.low == size.high
            if exact and self.nonnegative(self.interval(lhs).low):
                yield size.low

    def _trip_bounds(self, op: Operation) -> Iterator[SymExpr]:
        """The exactly known bounds ``S`` of the ``scf.for`` loops around
        ``op`` that count up from ``lb >= 0``, through a ``min`` of them
        (``min(start + 16, M)``, the rows of a program): an iteration runs
        only if ``0 <= lb < ub <= S``, so only if each ``S >= 1``."""
        loop = enclosing_op(op, scf.ForOp)
        while loop is not None and self.kernel.is_ancestor(loop):
            if self.nonnegative(self.interval(loop.lb).low):
                yield from self._upper_operands(loop.ub)
            loop = enclosing_op(loop, scf.ForOp)

    def _upper_operands(self, bound: SSAValue) -> Iterator[SymExpr]:
        """The exactly known values that ``bound`` is at most: itself, or
        the operands of the ``min`` it is."""
        known = self.interval(bound)
        if known.low is not None and known.low == known.high:
            yield known.low
            return
        op = bound.owner
        if isinstance(op, BinaryOp) and op.kind.data.name == "min":
            yield from self._upper_operands(op.lhs)
            yield from self._upper_operands(op.rhs)

    def _divisors(self) -> list[SymExpr]:
        """The exactly known divisors of the kernel's ``floordiv`` and
        ``rem`` ops."""
        if self._divisor_cache is not None:
            return self._divisor_cache
        found: dict[SymExpr, None] = {}
        for op in self.kernel.walk():
            if isinstance(op, BinaryOp) and op.kind.data.name in (
                "floordiv",
                "rem",
            ):
                known = self.interval(op.rhs)
                if known.low is not None and known.low == known.high:
                    found.setdefault(known.low, None)
        self._divisor_cache = list(found)
        return self._divisor_cache

    def _violation(
        self, access: Access, unproven: list[tuple[int, Interval]]
    ) -> BoundsViolation:
        op = access.op
        flat = len(access.extents) == 1 and len(access.indices) == 1
        counter = find_counter_example(self, access)
        if counter is not None and counter.wraps:
            what = "an offset" if flat else "an index"
            return BoundsViolation(
                op,
                f"{op.name} {access.verb} {access.buffer} at {what} that wraps "
                f"around: {counter.text}",
            )
        if counter is not None:
            return BoundsViolation(
                op,
                f"{op.name} {access.verb} out of bounds of {access.buffer}: "
                f"{counter.text}",
            )
        parts = []
        for dim, bound in unproven:
            what = "offset" if flat else f"index {dim}"
            parts.append(
                f"{what} in {bound}, not proven within [0, {access.extents[dim]})"
            )
        return BoundsViolation(
            op,
            f"{op.name} may {access.verb.removesuffix('s')} out of bounds of "
            f"{access.buffer}: {'; '.join(parts)} (no counter-example found "
            "among small bindings)",
        )


#: The largest period :func:`prove_by_residues` splits a symbol by, how
#: many symbols it tries, and how many residue cases one proof may take in
#: all, nested splits included (enough for two symbols of period 8).
_MAX_PERIOD = 64
_MAX_SPLIT_SYMBOLS = 3
_MAX_RESIDUE_CASES = 256
_CONSTANT_DIVISOR = re.compile(r"(?:floordiv|mod) (\d+)\b")


def prove_by_residues(facts: Facts, a: SymExpr, b: SymExpr) -> bool:
    """Whether ``a <= b`` holds for each residue ``r`` of one symbol ``N``
    modulo a period ``p`` of the constant divisors in them, ``N = p*K + r
    - p`` with ``K >= 1``: the floor divisions become polynomial there.
    The prover does not compose nested divisions (``4*((N + 1) floordiv 2 +
    1) floordiv 2) - 4 <= N - 1``, a slice of a slice), but proves each
    residue's case. The periods tried are the divisors' least common
    multiple and, for nested divisions, their product. A case that still
    holds another symbol's divisions is split again on that symbol's
    residues: a negative-step slice of a slice of both ``N`` and ``M``
    needs ``2*((N + 1) floordiv 2) + 2 >= 4*((N + 3) floordiv 4)`` and the
    same for ``M`` in one sum."""
    return _ResidueSplit().prove(facts, a, b, frozenset())


class _ResidueSplit:
    """One proof by residues, within ``_MAX_RESIDUE_CASES`` cases in all."""

    def __init__(self) -> None:
        self.cases_left = _MAX_RESIDUE_CASES

    def prove(
        self, facts: Facts, a: SymExpr, b: SymExpr, split: frozenset[str]
    ) -> bool:
        """Whether every residue of some symbol not yet ``split`` proves
        ``a <= b``."""
        divisors = [int(d) for d in _CONSTANT_DIVISOR.findall(f"{a} {b}")]
        if not divisors:
            return False
        periods = dict.fromkeys((math.lcm(*divisors), math.prod(divisors)))
        names = sorted((a - b).symbols - split)[:_MAX_SPLIT_SYMBOLS]
        for period in (p for p in periods if p <= _MAX_PERIOD):
            for name in names:
                if self.cases_left < period:
                    return False
                if all(
                    self._case(facts, a, b, name, period, r, split)
                    for r in range(period)
                ):
                    return True
        return False

    def _case(
        self,
        facts: Facts,
        a: SymExpr,
        b: SymExpr,
        name: str,
        period: int,
        residue: int,
        split: frozenset[str],
    ) -> bool:
        self.cases_left -= 1
        quotient = f"{name}_by_{period}_irc"
        value = SymExpr.symbol(quotient) * period + (residue - period)
        given = [
            Fact(f.lhs.substitute({name: value}), f.op, f.rhs.substitute({name: value}))
            for f in facts
        ]
        try:
            case = Facts([*given, Fact(value, ">=", as_expr(1))])
        except ShapeError:  # no binding has this residue
            return True
        a, b = a.substitute({name: value}), b.substitute({name: value})
        done = split | {name, quotient}
        return case.prove_le(a, b) or self.prove(case, a, b, done)


def floor_quotient(facts: Facts, x: SymExpr, d: SymExpr) -> SymExpr:
    """``x floordiv d`` for a divisor ``d >= 1``, in whichever of its two
    exact forms ``facts`` simplify to fewer divisions: ``x floordiv d``
    itself, or ``-((d - 1 - x) floordiv d)`` (``floor(x/d) ==
    -ceil(-x/d)``). A quotient by a symbolic divisor keeps what the divisor
    does not divide as its remainder, which may be negative:
    ``(N*N*N - N) floordiv (N*N)`` is ``N + (-N) floordiv (N*N)``, which the
    prover bounds by intervals only, below by ``-inf``, although ``-N``
    lies in ``[-N*N, 0)``; in the other form the remainder is ``N - 1``,
    inside ``[0, N*N)``, and the quotient folds to ``N - 1``."""
    quotient = x // d
    if not _division_count(quotient):
        return quotient
    other = -((d - 1 - x) // d)
    forms = (quotient, *map(facts.simplify, (quotient, other)))
    return min(forms, key=_division_count)  # the first of equally simple ones


def _division_count(e: SymExpr) -> int:
    """How many floor divisions ``e`` holds, as printed."""
    return str(e).count("floordiv")


def _divides(divisor: SymExpr, total: SymExpr) -> bool:
    """Whether ``total`` is ``divisor`` times a polynomial."""
    try:
        total.exact_div(divisor)
    except ShapeError:
        return False
    return True


def _extremum(kind: str, a: Interval, b: Interval) -> Interval:
    """``max``/``min`` of two intervals: each end is that of the ends where
    both are known; one known end still bounds ``max`` below and ``min``
    above."""
    pick = smax if kind == "max" else smin

    def end(x: SymExpr | None, y: SymExpr | None, one_suffices: bool) -> SymExpr | None:
        if x is not None and y is not None:
            return pick(x, y)
        return (x if x is not None else y) if one_suffices else None

    return Interval(
        end(a.low, b.low, kind == "max"), end(a.high, b.high, kind == "min")
    )


#: The predicate that holds where each one fails (``eq`` fails where
#: ``ne`` holds, which bounds nothing).
_NEGATIONS = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "ne": "eq"}

_FACT_RELATIONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "=="}
"""The fact each comparison predicate states when it holds (``ne`` states
none that facts can hold)."""


def _is_binary(op: Operation | None, kind: str) -> TypeGuard[BinaryOp]:
    return isinstance(op, BinaryOp) and op.kind.data.name == kind


def _conjuncts(mask: SSAValue) -> list[CompareOp]:
    """The comparisons a mask is the conjunction of (``and``, or ``mul`` and
    ``min`` of booleans, and splats of them); others are not used."""
    found: list[CompareOp] = []
    pending = [mask]
    while pending:
        value = pending.pop()
        op = value.owner
        if isinstance(op, CompareOp):
            found.append(op)
        elif isinstance(op, SplatOp):
            pending.append(op.input)
        elif _is_conjunction(op):
            assert isinstance(op, BinaryOp)
            pending.extend((op.lhs, op.rhs))
    return found


def _is_conjunction(op: Operation | None) -> bool:
    """Whether ``op`` is a lanewise ``and`` of booleans (``mul`` and ``min``
    of i1 are too)."""
    return (
        isinstance(op, BinaryOp)
        and op.kind.data.name in ("and", "mul", "min")
        and _integer_width(op.result.type) == 1
    )


# --------------------------------------------------------------------------
# Counter-examples: the kernel's integer slice evaluated exactly
# --------------------------------------------------------------------------


class _Unknown(Exception):
    """A value the concrete evaluation cannot compute (a load's result)."""


class _TooLarge(Exception):
    """A value beyond what int64 arrays hold exactly (a product of several
    symbols bound near ``2**31``): this binding is skipped."""


_ConcreteValue = np.ndarray | int

#: Magnitudes the evaluation computes exactly in int64 (with room to spare
#: for the float estimate that guards them).
_EXACT_LIMIT = 2**62

#: Values a symbol takes in the search for an index that wraps around in a
#: narrow (i32) type: just past ``2**16``, where a product of two sizes
#: passes ``2**32``, and just past ``2**31``, which i32 cannot hold.
_WRAP_TRIAL_VALUES = (2**16 + 1, 2**31 + 1)


class CounterExample(NamedTuple):
    """A binding, program, iteration and lane that break an access, as
    text; ``wraps`` when the lane's index went through a narrow integer
    op that wrapped around (whatever the index it ended at)."""

    text: str
    wraps: bool = False


class _Wrap(NamedTuple):
    """A narrow integer op whose exact result left its type: the operand
    values, the exact result and the wrapped one, lane by lane."""

    op: Operation
    operands: tuple[np.ndarray, ...]
    exact: np.ndarray
    wrapped: np.ndarray
    width: int


@dataclass
class _Env:
    """Concrete values of a kernel's integer slice, and, for each value
    computed through a wrap, the number of the first wrap (in
    ``_Concrete.wraps``) on each lane, -1 where none; a value without an
    entry never wrapped."""

    values: dict[SSAValue, _ConcreteValue]
    taints: dict[SSAValue, np.ndarray]

    def copy(self) -> _Env:
        return _Env(dict(self.values), dict(self.taints))


def _symbols_of(intervals: KernelIntervals, access: Access) -> list[str]:
    names: set[str] = set()
    for expr in (*intervals.grid, *access.extents, *intervals.symbol_args.values()):
        names |= expr.symbols
    for op in intervals.kernel.walk():
        if isinstance(op, SizeOp):
            names |= op.expr.data.symbols
    return sorted(names)


def _trial_values(
    facts: Facts, name: str, trials: Sequence[int], clamp: bool
) -> list[int]:
    """The smallest value of ``name`` the facts allow and each of ``trials``
    moved up to a multiple of its divisor, without repeats; one past its
    upper bound is left out, or (``clamp``) becomes the largest allowed
    value, where a wrap is likeliest."""
    low, high = facts.lower_bound(name), facts.upper_bound(name)
    step = facts.divisor(name)
    values: list[int] = []
    for trial in (low, *trials):
        value = -(-max(trial, low) // step) * step
        if clamp and high is not None and value > high:
            value = high // step * step
        fits = low <= value and (high is None or value <= high)
        if fits and value not in values:
            values.append(value)
    return values or [low]


def _bindings(
    facts: Facts, names: list[str], large: bool = False
) -> Iterator[dict[str, int]]:
    """Bindings of ``names`` that satisfy ``facts``, smallest first: small
    values, or (``large``) the smallest and large ones, where narrow index
    arithmetic wraps."""
    choices = [
        _trial_values(facts, name, _WRAP_TRIAL_VALUES, clamp=True)
        if large
        else _trial_values(facts, name, _TRIAL_VALUES, clamp=False)[:3]
        for name in names
    ]
    combos = sorted(itertools.product(*choices), key=lambda c: sum(map(abs, c)))
    tried = 0
    for combo in combos:
        binding = dict(zip(names, combo, strict=True))
        if facts.check(binding):
            continue
        yield binding
        tried += 1
        if tried == _MAX_BINDINGS:
            return


def _samples(count: int, limit: int) -> list[int]:
    """``0 .. count-1``, or its first and last ``limit // 2`` values."""
    if count <= limit:
        return list(range(count))
    half = limit // 2
    return [*range(half), *range(count - half, count)]


def _programs(grid: list[int], large: bool) -> Iterator[tuple[int, ...]]:
    """Program ids to try: the first ones in order or, for a large binding
    (where the last programs are the ones whose indices wrap), the first
    and last few of every axis, ``_MAX_PROGRAMS`` in all."""
    if not large or len(grid) <= 1:
        programs = itertools.product(*(_samples(g, _MAX_PROGRAMS) for g in grid))
        return itertools.islice(programs, _MAX_PROGRAMS)
    per_axis = max(2, int(_MAX_PROGRAMS ** (1 / len(grid))))
    return itertools.product(*(_samples(g, per_axis) for g in grid))


def _has_narrow_arithmetic(access: Access) -> bool:
    """Whether an index or the mask of ``access`` is computed through an
    integer op narrower than 64 bits (one that may wrap around)."""
    pending = [*access.indices, *([access.mask] if access.mask is not None else [])]
    seen: set[SSAValue] = set()
    while pending:
        value = pending.pop()
        if value in seen:
            continue
        seen.add(value)
        width = _integer_width(value.type)
        if width is not None and 1 < width < 64:
            return True
        if isinstance(value.owner, Operation):
            pending.extend(value.owner.operands)
    return False


def find_counter_example(
    intervals: KernelIntervals, access: Access
) -> CounterExample | None:
    """A binding, program id, iterations and lane at which ``access`` is
    out of bounds with its mask true, or reaches its index through a
    narrow integer op that wraps around, evaluated exactly; None if none
    of those tried is (or the index depends on loaded values). Small
    bindings come first; large ones follow when the index is computed in
    a narrow type."""
    stages = [False, True] if _has_narrow_arithmetic(access) else [False]
    names = _symbols_of(intervals, access)
    runs = 0
    for large in stages:
        for binding in _bindings(intervals.facts, names, large):
            try:
                grid = [g.evaluate(binding) for g in intervals.grid]
            except ShapeError:
                continue
            if any(g > limit for g, limit in zip(grid, GRID_LIMITS)):
                continue  # CUDA would not launch it (a grid violation)
            for program in _programs(grid, large):
                evaluator = _Concrete(intervals, binding, program)
                try:
                    for iterations in evaluator.iterations(access.op):
                        runs += 1
                        if runs > _MAX_RUNS:
                            return None
                        found = evaluator.breach(access, iterations)
                        if found is not None:
                            return found
                except _Unknown:
                    return None
                except _TooLarge:
                    break  # the next binding
    return None


def _first_taint(taints: Sequence[np.ndarray | None]) -> np.ndarray | None:
    """Lane by lane, the first wrap among ``taints`` (broadcast together)."""
    found: np.ndarray | None = None
    for taint in taints:
        if taint is None:
            continue
        found = taint if found is None else np.where(found >= 0, found, taint)
    return found


class _Concrete:
    """The integer slice of a kernel evaluated for one binding and program,
    with narrow integers wrapping around as they do on the GPU."""

    def __init__(
        self,
        intervals: KernelIntervals,
        binding: dict[str, int],
        program: tuple[int, ...],
    ):
        self.intervals = intervals
        self.binding = binding
        self.program = program
        self.wraps: list[_Wrap] = []

    def iterations(self, op: Operation) -> Iterator[_Env]:
        """Values of the induction variables of the loops around ``op``
        (a sample of each loop's iterations)."""
        loops = []
        parent = op.parent_op()
        while parent is not None and parent is not self.intervals.kernel:
            if isinstance(parent, scf.ForOp):
                loops.append(parent)
            parent = parent.parent_op()
        yield from self._nest(list(reversed(loops)), _Env({}, {}))

    def _nest(self, loops: list[scf.ForOp], env: _Env) -> Iterator[_Env]:
        if not loops:
            yield env
            return
        loop, rest = loops[0], loops[1:]
        scope = env.copy()
        bounds = (loop.lb, loop.ub, loop.step)
        lower, upper, step = (int(self.value(v, scope)) for v in bounds)
        if step <= 0:
            raise _Unknown
        # An induction variable from wrapped bounds is itself wrapped.
        taint = _first_taint([scope.taints.get(v) for v in bounds])
        values = range(lower, upper, step)
        induction = loop.body.block.args[0]
        for index in _samples(len(values), _MAX_ITERATIONS):
            inner = env.copy()
            inner.values[induction] = values[index]
            if taint is not None:
                inner.taints[induction] = taint
            yield from self._nest(rest, inner)

    def breach(self, access: Access, iterations: _Env) -> CounterExample | None:
        env = iterations.copy()
        indices = [np.asarray(self.value(i, env)) for i in access.indices]
        mask = (
            np.asarray(True)
            if access.mask is None
            else np.asarray(self.value(access.mask, env)).astype(bool)
        )
        extents = [e.evaluate(self.binding) for e in access.extents]
        arrays = np.broadcast_arrays(mask, *indices)
        operands = [
            *([access.mask] if access.mask is not None else []),
            *access.indices,
        ]
        taint = _first_taint([env.taints.get(v) for v in operands])
        if taint is not None:
            taint = np.broadcast_to(taint, arrays[0].shape)
            wrapped = arrays[0] & (taint >= 0)
            if wrapped.any():
                lane = tuple(int(i) for i in np.argwhere(wrapped)[0])
                values = [int(a[lane]) for a in arrays[1:]]
                wrap = self.wraps[int(taint[lane])]
                text = self._describe(access, iterations, lane, values, extents)
                shown = _wrap_text(wrap, lane, arrays[0].shape)
                return CounterExample(f"{text}{shown}", wraps=True)
        outside = np.zeros(arrays[0].shape, dtype=bool)
        for index, extent in zip(arrays[1:], extents, strict=True):
            # Indices stay below _EXACT_LIMIT; an extent may not (int64).
            outside |= (index < 0) | (index >= min(extent, _EXACT_LIMIT))
        outside &= arrays[0]
        if not outside.any():
            return None
        lane = tuple(int(i) for i in np.argwhere(outside)[0])
        values = [int(a[lane]) for a in arrays[1:]]
        return CounterExample(self._describe(access, iterations, lane, values, extents))

    def _describe(
        self,
        access: Access,
        iterations: _Env,
        lane: tuple[int, ...],
        values: list[int],
        extents: list[int],
    ) -> str:
        binding = ", ".join(f"{k} = {v}" for k, v in self.binding.items())
        program = ", ".join(str(p) for p in self.program)
        loops = "".join(
            f", {_value_name(iv, depth)} = {value}"
            for depth, (iv, value) in enumerate(iterations.values.items(), 1)
        )
        if len(values) == 1 and len(extents) == 1:
            where = f"offset {values[0]}, outside [0, {extents[0]})"
            if 0 <= values[0] < extents[0]:
                where = f"offset {values[0]} of [0, {extents[0]})"
        else:
            shown = ", ".join(map(str, values))
            bounds = ", ".join(map(str, extents))
            where = f"index [{shown}], outside the shape [{bounds}]"
            if all(0 <= v < e for v, e in zip(values, extents, strict=True)):
                where = f"index [{shown}] of the shape [{bounds}]"
        return (
            f"with {binding or 'no symbols'}, program id [{program}]{loops}, lane "
            f"{list(lane)} {access.verb.removesuffix('s')}s {where}"
        )

    def value(self, value: SSAValue, env: _Env) -> _ConcreteValue:
        if value in env.values:
            return env.values[value]
        if isinstance(value, BlockArgument):
            symbol = self.intervals.symbol_args.get(value)
            if symbol is None:
                raise _Unknown
            result: _ConcreteValue = _exact(symbol.evaluate(self.binding))
        else:
            op = value.owner
            assert isinstance(op, Operation)
            result = self._op_value(op, env)
            result = self._wrapped(op, result, env)
        env.values[value] = result
        return result

    def _wrapped(
        self, op: Operation, result: _ConcreteValue, env: _Env
    ) -> _ConcreteValue:
        """``result`` as the op's type holds it: a narrow integer wraps
        around (recorded, with the lanes it reaches); the lanes computed
        from a wrapped operand stay marked."""
        taint = self._inherited(op, env)
        width = _integer_width(op.results[0].type)
        # A program id is below CUDA's grid limits: it never wraps.
        narrow = width is not None and 1 < width < 64
        if narrow and not isinstance(op, ProgramIdOp):
            exact = np.asarray(result, dtype=np.int64)
            half = 2 ** (width - 1)
            wrapped = (exact + half) % (2 * half) - half
            changed = wrapped != exact
            if changed.any():
                number = len(self.wraps)
                operands = tuple(
                    np.asarray(env.values[v], dtype=np.int64)
                    for v in op.operands
                    if v in env.values
                )
                self.wraps.append(_Wrap(op, operands, exact, wrapped, width))
                own = np.where(changed, number, -1)
                taint = _first_taint([taint, own])
                result = wrapped if wrapped.ndim else int(wrapped)
        if taint is not None:
            env.taints[op.results[0]] = taint
        return result

    def _inherited(self, op: Operation, env: _Env) -> np.ndarray | None:
        """Which lanes of ``op``'s result come from a wrapped operand: a
        select's from its condition and the branch it picks."""
        if isinstance(op, SelectOp):
            on_true = env.taints.get(op.on_true)
            on_false = env.taints.get(op.on_false)
            picked = None
            if on_true is not None or on_false is not None:
                condition = np.asarray(env.values[op.condition]) != 0
                picked = np.where(
                    condition,
                    -1 if on_true is None else on_true,
                    -1 if on_false is None else on_false,
                )
            return _first_taint([env.taints.get(op.condition), picked])
        return _first_taint([env.taints.get(v) for v in op.operands])

    def _op_value(self, op: Operation, env: _Env) -> _ConcreteValue:
        def of(v: SSAValue) -> np.ndarray:
            return np.asarray(self.value(v, env), dtype=np.int64)

        if isinstance(op, ConstantOp) and not isinstance(op.value, FloatAttr):
            return int(op.value.value.data)
        if isinstance(op, SizeOp):
            return _exact(op.expr.data.evaluate(self.binding))
        if isinstance(op, ProgramIdOp):
            return self.program[op.axis.value.data]
        if isinstance(op, BlockSizeOp):
            return _declared_block(op)
        if isinstance(op, RangeOp):
            shape = _shape(op.result)
            return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        if isinstance(op, SplatOp | CastOp):
            value = of(op.input)
            return value != 0 if _integer_width(op.result.type) == 1 else value
        if isinstance(op, SelectOp):
            return np.where(of(op.condition) != 0, of(op.on_true), of(op.on_false))
        if isinstance(op, CompareOp):
            return op.kind.data.numpy(of(op.lhs), of(op.rhs))
        if isinstance(op, BinaryOp) and "i" in op.kind.data.domain:
            return _integer_binary(op, of(op.lhs), of(op.rhs))
        raise _Unknown


def _exact(value: int) -> int:
    """``value``, if the evaluation can hold it exactly."""
    if abs(value) >= _EXACT_LIMIT:
        raise _TooLarge
    return value


#: The integer operations whose result may exceed both operands in
#: magnitude (the others stay within them).
_GROWING = frozenset({"add", "sub", "mul", "pow"})


def _integer_binary(op: BinaryOp, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``op`` on integer lanes, exactly: a result beyond int64's reach (as
    a float estimate tells) is too large for this binding."""
    kind = op.kind.data
    if kind in ("floordiv", "rem") and (rhs == 0).any():
        raise _Unknown
    if kind.name in _GROWING:
        with np.errstate(all="ignore"):
            estimate = kind.numpy(lhs.astype(np.float64), rhs.astype(np.float64))
        if not np.all(np.abs(estimate) < _EXACT_LIMIT):
            raise _TooLarge
    try:
        return kind.numpy(lhs, rhs)
    except ValueError:  # a negative integer power
        raise _Unknown from None


def _wrap_text(wrap: _Wrap, lane: tuple[int, ...], shape: tuple[int, ...]) -> str:
    """What wrapped at ``lane`` of an access of ``shape``: the op, its
    operands' values there, the exact result and what the narrow type made
    of it (tiles broadcast right-aligned, so each reaches the lane)."""

    def at(array: np.ndarray) -> int:
        return int(np.broadcast_to(array, shape)[lane])

    op = wrap.op
    kind = ""
    if isinstance(op, BinaryOp):
        kind = f" {op.kind.data.name}"
    elif isinstance(op, SizeOp):
        kind = f" {op.expr.data}"
    hint = op.results[0].name_hint
    name = f"%{hint} = " if hint else ""
    operands = " and ".join(str(at(v)) for v in wrap.operands)
    of = f" of {operands}" if operands else ""
    where = source_location(op)
    place = f" ({where})" if where is not None else ""
    return (
        f", through {name}{op.name}{kind}{of}{place}, which is {at(wrap.exact)} "
        f"but wraps around to {at(wrap.wrapped)} in i{wrap.width}"
    )


def _value_name(value: SSAValue, depth: int) -> str:
    """An induction variable's name, or which loop it counts."""
    return f"%{value.name_hint}" if value.name_hint else f"the index of loop {depth}"


def _declared_block(op: BlockSizeOp) -> int:
    """The declared size of the tile ``op`` names (a launch chooses it or
    less: the lanes' bounds hold either way)."""
    kernel = enclosing_op(op, TiledKernelOp)
    assert kernel is not None, "verified: InsideKernel"
    return kernel.tile_sizes[op.block.data]
