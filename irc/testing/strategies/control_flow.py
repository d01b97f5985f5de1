"""Steps of structured control flow: ``cond``, ``for`` and ``while``.

Each adds one region op over values made so far, with small bodies whose
value ranges stay bounded however many times they run:

- ``cond``: on a predicate that is a new bool argument or a comparison of
  a symbolic size (``N > 2``), ``x + x`` in one branch and ``-x`` in the
  other;
- ``for``: a counted loop of 0 to 3 iterations, ``N`` or ``N - 1``; a float
  carry becomes ``c * 0.5 + v * 0.25`` (``v`` a second, pass-through carry,
  as a value closed over from outside becomes), other carries pass through;
  each iteration yields the new carry as a ys;
- ``while``: the same body with a counter that stops after 0 to 3
  iterations, so every program terminates.

The float bodies are smooth, so ``check_grad`` can run on programs with
``cond`` and ``for`` (``while`` has no reverse mode).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import i64
from xdsl.ir import Block, Region, SSAValue

from irc.dialects import graph as g
from irc.dialects.elementwise import ComparisonPredicate
from irc.dtypes import dtype
from irc.primitives import builtin as p
from irc.shapes import SymExpr
from irc.testing.strategies.ranges import _Range
from irc.testing.strategies.steps import Steps

#: The actions of this family (not in ``ACTIONS`` by default: the levels
#: below the graph lower them separately; pass them to ``programs``).
CONTROL_FLOW_ACTIONS: tuple[str, ...] = ("cond", "for", "while")


class ControlFlowSteps(Steps):
    """graph.cond, graph.for and graph.while over ``program``'s values."""

    def cond(self) -> bool:
        value = self.program.pick()
        assert value is not None, "the first argument exists from the start"
        if self.program.kind(value) == "b":
            return False
        pred = self._predicate()
        tensor = g.tensor_type(value)
        doubled = _region([tensor], lambda b, args: [_add(b, args[0], args[0])])
        negated = _region([tensor], lambda b, args: [_neg(b, args[0])])
        op = g.CondOp(pred, [value], doubled, negated, [tensor])
        lo, hi = self.program.ranges[value]
        reach = max(abs(lo), abs(hi))
        self.program.emit(op, (-2 * reach, 2 * reach))
        return True

    def _predicate(self) -> SSAValue:
        if self.program.bound and self.choices.flag():
            symbol = SymExpr.symbol(self.choices.one_of(self.program.bound))
            size = self.program.emit(
                g.DimOp(symbol, i64), (1.0, self.options.max_value)
            )
            two = self.program.emit(
                g.ConstantOp.splat(2, g.TensorType([], i64)), (2.0, 2.0)
            )
            return self.program.emit(
                g.CompareOp(ComparisonPredicate.GT, size, two), (0.0, 1.0)
            )
        return self.program.new_argument(g.PREDICATE_TYPE)

    def for_(self) -> bool:
        carry, invariant, value_range = self._carries()
        lengths: list[SymExpr] = [SymExpr.const(n) for n in (2, 0, 1, 3)]
        for name in self.program.bound:
            lengths += [SymExpr.symbol(name), SymExpr.symbol(name) - 1]
        length = self.choices.one_of(lengths)
        types = [g.tensor_type(carry), g.tensor_type(invariant)]

        def body(block: Block, args: Sequence[SSAValue]) -> list[SSAValue]:
            _, state, other = args
            new = _step(block, state, other)
            return [new, other, new]

        region = _region([g.INDEX_TYPE, *types], body)
        ys = types[0].with_shape([length, *types[0].dims])
        op = g.ForOp(length, [carry, invariant], [], region, [ys])
        self.program.emit(op, value_range)
        self._also(op.outputs[2], value_range)
        return True

    def while_(self) -> bool:
        carry, invariant, value_range = self._carries()
        trips = self.choices.one_of((2, 0, 1, 3))
        counter_type = g.TensorType([], i64)
        start = self.program.emit(g.ConstantOp.splat(0, counter_type), (0.0, 0.0))
        types = [counter_type, g.tensor_type(carry), g.tensor_type(invariant)]

        def keep_going(block: Block, args: Sequence[SSAValue]) -> list[SSAValue]:
            limit = g.ConstantOp.splat(trips, counter_type)
            block.add_op(limit)
            less = g.CompareOp(ComparisonPredicate.LT, args[0], limit.result)
            block.add_op(less)
            return [less.result]

        def body(block: Block, args: Sequence[SSAValue]) -> list[SSAValue]:
            counter, state, other = args
            one = g.ConstantOp.splat(1, counter_type)
            block.add_op(one)
            return [_add(block, counter, one.result), _step(block, state, other), other]

        op = g.WhileOp(
            [start, carry, invariant], _region(types, keep_going), _region(types, body)
        )
        self.program.emit(op, (0.0, float(trips)))
        self._also(op.outputs[1], value_range)
        return True

    def _carries(self) -> tuple[SSAValue, SSAValue, _Range]:
        """A carry, a pass-through carry of its type, and a range that holds
        for the carry after any number of iterations of ``_step``."""
        carry = self.program.pick()
        assert carry is not None, "the first argument exists from the start"
        invariant = self.operands.operand_like(carry)
        ranges = [self.program.ranges[carry], self.program.ranges[invariant]]
        reach = max(abs(bound) for value_range in ranges for bound in value_range)
        if self.program.kind(carry) != "f":
            return carry, invariant, ranges[0]
        return carry, invariant, (-reach, reach)

    def _also(self, value: SSAValue, value_range: _Range) -> None:
        """Another result of the op just added, for later steps to use."""
        self.program.ranges[value] = (float(value_range[0]), float(value_range[1]))
        self.program.values.append(value)


def _step(block: Block, state: SSAValue, other: SSAValue) -> SSAValue:
    """``state * 0.5 + other * 0.25`` on floats (bounded by the larger of the
    two magnitudes), ``state`` itself otherwise."""
    if dtype(g.tensor_type(state).element_type).kind != "f":
        return state
    half = _mul(block, state, _splat(block, 0.5, state))
    quarter = _mul(block, other, _splat(block, 0.25, other))
    return _add(block, half, quarter)


_Body = Callable[[Block, Sequence[SSAValue]], list[SSAValue]]


def _region(argument_types: Sequence[g.TensorType], body: _Body) -> Region:
    """A one-block region on ``argument_types`` yielding what ``body`` adds."""
    block = Block(arg_types=argument_types)
    block.add_op(g.YieldOp(body(block, block.args)))
    return Region(block)


def _splat(block: Block, number: float, like: SSAValue) -> SSAValue:
    op = g.ConstantOp.splat(number, g.tensor_type(like))
    block.add_op(op)
    return op.result


def _add(block: Block, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    op = g.elementwise(p.ADD, lhs, rhs)
    block.add_op(op)
    return op.result


def _mul(block: Block, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    op = g.elementwise(p.MUL, lhs, rhs)
    block.add_op(op)
    return op.result


def _neg(block: Block, value: SSAValue) -> SSAValue:
    op = g.elementwise(p.NEG, value)
    block.add_op(op)
    return op.result
