"""``unroll-while``: a while loop's decision read back once every few iterations.

A ``graph.while`` runs on the host: each iteration reads its predicate back
from the device, a sync that drains the GPU's queue. This pass makes one
host iteration run ``factor`` of the loop's, the predicate staying on the
device between decisions. The body applies the loop's body once (the host
has just seen the condition hold), then ``factor - 1`` more times, each kept
only while the condition still holds::

    c1 = body(c);  alive = cond(c1)
    c2 = select(alive, body(c1), c1);  alive = alive & cond(c2)
    ...
    yield select(alive, body(c[factor-1]), c[factor-1]), alive

and the condition becomes ``alive & cond(c)``, ``alive`` a new carry that is
true on entry. Every state is tested once, by one evaluation of the
condition, so the loop's results are the original's exactly (a condition
that rounds differently in two kernels cannot make it run once more). Once
the condition fails, the selects keep the carries and ``alive`` stays
false, so the host's next decision ends the loop.

The cost: up to ``factor - 1`` applications of the body whose results are
dropped. So only cheap loops are unrolled: a condition and a body without
control flow, matmuls or convolutions, or effects (a debug print, a
collective), and at most ``MAX_BODY_OPS`` ops
(``fuse`` then makes the copies a kernel or two: one row kernel computes
every test of a full reduction's condition).

``fuse`` runs this first (its option ``while-factor``), so that the graph
level keeps the user's loop (what the reference backend runs and
``debug_nans`` counts iterations of); ``unroll-while`` runs it alone, to see
or test it. An unrolled loop is marked (``graph.UNROLLED_ATTRIBUTE``) and
not unrolled again. Entry points: ``UnrollWhilePass`` and ``unroll_cheap_loops``; see
docs/lowering.md, "Control flow: where each decision runs".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from irc.dialects import graph as g
from irc.errors import IrcError
from irc.primitives.declaration import primitive

#: The most ops a loop's condition and body may hold together to be
#: unrolled: each copy is compiled, and run past the exit.
MAX_BODY_OPS = 64

#: Ops too costly to run past a loop's exit.
_COSTLY = (g.MatmulOp,)


@dataclass(frozen=True)
class UnrollWhilePass(ModulePass):
    """Run ``factor`` iterations of each cheap ``graph.while`` per host
    decision (see the module docstring); ``factor=1`` leaves loops alone."""

    name = "unroll-while"

    factor: int = 8

    def __post_init__(self) -> None:
        # Checked when the pass is built, so that irc-opt reports a bad
        # option at the pass in -p.
        check_factor(self.factor, "unroll-while option factor")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        unroll_cheap_loops(op, self.factor)


def check_factor(factor: object, option: str) -> None:
    """Refuse an unroll factor that is not a positive integer."""
    if not isinstance(factor, int) or factor < 1:
        raise IrcError(f"{option}={factor} must be a positive integer")


def unroll_cheap_loops(
    module: ModuleOp,
    factor: int,
    keep: Callable[[g.WhileOp], bool] = lambda loop: False,
) -> None:
    """Unroll every cheap ``graph.while`` of ``module`` not unrolled yet by
    ``factor`` (1: leave them), but those ``keep`` holds for."""
    if factor == 1:
        return
    for loop in [w for w in module.walk() if isinstance(w, g.WhileOp)]:
        if is_cheap(loop) and g.unroll_factor(loop) == 1 and not keep(loop):
            unroll(loop, factor)


def is_cheap(loop: g.WhileOp) -> bool:
    """Whether running ``loop``'s body past its exit costs little and does
    nothing but compute: its condition and body hold no control flow, no
    matmul (a convolution is one), no op with an effect (a debug print or
    callback would run for iterations the loop never ran, a collective
    would communicate for them), and at most ``MAX_BODY_OPS`` ops."""
    ops = [*loop.cond_region.block.ops, *loop.body_region.block.ops]
    return len(ops) <= MAX_BODY_OPS and all(
        is_side_effect_free(op) and not isinstance(op, (*g.CONTROL_FLOW_OPS, *_COSTLY))
        for op in ops
    )


def unroll(loop: g.WhileOp, factor: int) -> None:
    """Replace ``loop`` by the loop that runs ``factor`` of its iterations
    per decision, with a carry ``alive``."""
    predicate = g.ConstantOp.splat(True, g.PREDICATE_TYPE)
    Rewriter.insert_op(predicate, InsertPoint.before(loop))
    types = [*(v.type for v in loop.inputs), g.PREDICATE_TYPE]
    unrolled = g.WhileOp(
        [*loop.inputs, predicate.result],
        Region(_condition_block(loop, types)),
        Region(_body_block(loop, types, factor)),
    )
    unrolled.location = loop.location
    unrolled.attributes[g.UNROLLED_ATTRIBUTE] = IntegerAttr(factor, i64)
    Rewriter.replace_op(loop, unrolled, unrolled.outputs[:-1])


def _condition_block(loop: g.WhileOp, types: Sequence[g.TensorType]) -> Block:
    """``alive & cond(c)``."""
    block = Block(arg_types=types)
    *carries, alive = block.args
    holds = _inline(loop.cond_region.block, carries, block)[0]
    _yield(block, [_and(block, alive, holds)])
    return block


def _body_block(loop: g.WhileOp, types: Sequence[g.TensorType], factor: int) -> Block:
    """``factor`` applications of the body, each after the first kept where
    the condition held on the state before it."""
    block = Block(arg_types=types)
    carries = _inline(loop.body_region.block, block.args[:-1], block)
    alive = _inline(loop.cond_region.block, carries, block)[0]
    for step in range(1, factor):
        applied = _inline(loop.body_region.block, carries, block)
        carries = [
            new if new is old else _select(block, alive, new, old)
            for new, old in zip(applied, carries, strict=True)
        ]
        if step < factor - 1:
            holds = _inline(loop.cond_region.block, carries, block)[0]
            alive = _and(block, alive, holds)
    _yield(block, [*carries, alive])
    return block


def _inline(block: Block, arguments: Sequence[SSAValue], into: Block) -> list[SSAValue]:
    """Clone the ops of ``block`` (a region's) at the end of ``into`` on
    ``arguments``; the values its ``graph.yield`` gives."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, arguments, strict=True))
    for op in block.ops:
        if isinstance(op, g.YieldOp):
            return [mapping.get(v, v) for v in op.operands]
        into.add_op(op.clone(value_mapper=mapping))
    raise AssertionError("a verified region ends with graph.yield")


def _and(block: Block, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    op = g.elementwise_op(primitive("and"))(lhs, rhs)
    block.add_op(op)
    return op.results[0]


def _select(block: Block, keep: SSAValue, new: SSAValue, old: SSAValue) -> SSAValue:
    """``new`` where ``keep`` (0-d) holds, else ``old``."""
    shape = g.tensor_type(new).dims
    if shape:
        spread = g.BroadcastOp(keep, shape)
        block.add_op(spread)
        keep = spread.result
    select = g.SelectOp(keep, new, old)
    block.add_op(select)
    return select.result


def _yield(block: Block, values: Sequence[SSAValue]) -> None:
    block.add_op(g.YieldOp(values))
