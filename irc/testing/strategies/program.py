"""The program under construction, and the draws it is built from.

:class:`Choices` makes the few kinds of choice a program is built from (one
of some options, a flag, an integer) out of Hypothesis draws, so that they
shrink towards the first option. :class:`Program` is ``@main`` as it grows:
its block, the values made so far with the range of each (see
:mod:`~irc.testing.strategies.ranges`), the symbols its arguments bind and
the guards stated so far, with the facts they prove. It draws dims, shapes
and element types, picks earlier values, adds arguments and ops, and
finishes the module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from irc.dialects import graph as g
from irc.dialects import sym
from irc.dtypes import BOOL, FLOAT32, INT32, DType, dtype
from irc.shapes import Fact, Facts, SymExpr
from irc.testing.strategies.ranges import _input_range, _magnitude, _Range
from irc.testing.strategies.shapes import STATIC_DIMS

_Draw = Callable[[st.SearchStrategy[Any]], Any]
_T = TypeVar("_T")


@dataclass(frozen=True)
class ProgramOptions:
    """What a program is built from: see :func:`~irc.testing.programs`."""

    symbols: tuple[str, ...]
    dtypes: tuple[DType, ...]
    max_rank: int
    smooth: bool
    max_value: int


class Choices:
    """The choices a program makes, each one or more Hypothesis draws; every
    draw of the steps of a program goes through them."""

    def __init__(self, draw: _Draw) -> None:
        self.draw = draw

    def one_of(self, options: Sequence[_T]) -> _T:
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

    def permutation(self, count: int) -> list[int]:
        """An order of ``range(count)``."""
        return self.draw(st.permutations(range(count)))

    def samples(self, options: Sequence[_T], count: int) -> list[_T]:
        """``count`` of ``options``, each drawn alone."""
        return self.draw(
            st.lists(st.sampled_from(options), min_size=count, max_size=count)
        )


class Program:
    """``@main`` as it is built op by op from Hypothesis draws, keeping a
    value range for every SSA value and the facts stated by its guards."""

    def __init__(self, choices: Choices, options: ProgramOptions) -> None:
        self.choices = choices
        self.options = options
        self.block = Block()
        self.values: list[SSAValue] = []
        self.ranges: dict[SSAValue, _Range] = {}
        self.bound: list[str] = []  # symbols that some argument dim is alone
        self.guards: list[Fact] = []
        self.facts = Facts()

    def dim(self, for_argument: bool = False) -> SymExpr:
        """A symbol (five times in six, when one may be used) or a static
        size. Only symbols an argument binds may be used, unless the dim is
        for a new argument, which then binds it: a new argument introduces
        a new symbol a third of the time. Symbols come first, so that
        failing programs shrink to symbolic shapes."""
        fresh = [s for s in self.options.symbols if s not in self.bound]
        names = list(self.bound)
        if for_argument and fresh and (not names or self.choices.integer(0, 2) == 2):
            names = fresh
        if names and self.choices.integer(0, 5) < 5:
            return SymExpr.symbol(self.choices.one_of(names))
        return SymExpr.const(self.choices.one_of(STATIC_DIMS))

    def shape(
        self, min_rank: int, max_rank: int, for_argument: bool = False
    ) -> list[SymExpr]:
        rank = self.choices.integer(min_rank, max(min_rank, max_rank))
        return [self.dim(for_argument) for _ in range(rank)]

    def element(self, kinds: str) -> DType:
        """An element type of one of ``kinds`` ("b", "i", "f")."""
        options = [d for d in self.options.dtypes if d.kind in kinds]
        if not options:
            options = [d for d in (FLOAT32, INT32, BOOL) if d.kind in kinds]
        return self.choices.one_of(options)

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
        if unused and self.choices.integer(0, 3) < 3:
            candidates = unused
        if not candidates:
            return None
        return candidates[-1 - self.choices.integer(0, len(candidates) - 1)]

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
        top = self.options.max_rank if max_rank is None else max_rank
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
        return dim.evaluate({s: self.options.max_value for s in dim.symbols})

    def smallest(self, dim: SymExpr) -> int:
        return dim.evaluate({s: 1 for s in dim.symbols})

    def nonempty(self, dim: SymExpr) -> bool:
        """Whether ``dim >= 1`` follows from the guards (symbols are >= 1)."""
        return self.facts.prove_le(1, dim)

    def add_guard(self, fact: Fact, reason: str | None) -> None:
        """A ``sym.guard`` of ``fact``, which later steps may rely on."""
        self.block.add_op(
            sym.GuardOp(sym.FactAttr(fact.lhs, fact.op, fact.rhs), reason)
        )
        self.guards.append(fact)
        self.facts = Facts(self.guards)

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
