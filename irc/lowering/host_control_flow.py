"""``bufferize`` of structured control flow: ``graph.cond``, ``graph.while``
and ``graph.for`` (holding loop kernels) become host ``scf.if``,
``scf.while`` and ``scf.for`` over buffers.

The rule (docs/lowering.md, "Control flow"): decisions run on the host, in
the launcher. A predicate computed on the device is a 0-d ``i1`` buffer that
the host reads with ``memory.read_scalar`` (one device->host read per
decision); a trip count is ``memory.size`` of its symbolic expression,
evaluated from the call's symbols, so one compiled module serves every size.

Buffers:

- every buffer a region needs (its kernels' outputs, its constants, the
  predicate, the iteration index) is allocated once, before the outermost
  control-flow op, never per iteration or per branch taken; it lives until
  the function returns, so no buffer a loop touches is reused outside it
  while the loop runs. Inside the body, a dead temporary gives its buffer
  to a later one of the same type (``FunctionBufferizer.lower_block``);
- a loop carry has two buffers, swapped each iteration (ping-pong): the
  loop's ``iter_args`` are ``(current..., next...)`` and the body yields
  ``(next..., current...)``. The initial carries are copied into the first
  buffers on entry (``memory.copy``), so the body never writes into a
  buffer it does not own; a carry the body computes is written by its
  kernel straight into the next buffer, one it passes on unchanged is
  copied there;
- a ``graph.cond`` writes its results into buffers allocated before the
  ``scf.if``, from either branch;
- ``graph.for``'s ``xs`` are read and its ``ys`` written one row per
  iteration through ``memory.row`` views; the iteration index, when the
  body reads it, is written into a 0-d buffer by ``memory.write_scalar``;
- a loop result the function returns is copied once, after the loop, into a
  buffer of its own (the caller's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from irc.dialects import graph, loop, memory

if TYPE_CHECKING:
    from irc.lowering.loop_to_memory import FunctionBufferizer


class HostControlFlow:
    """Lowers the control-flow ops of one function for ``bufferizer``,
    which lowers the ops of their regions (kernels, constants) as it lowers
    the function's own."""

    def __init__(self, bufferizer: FunctionBufferizer):
        self.bufferizer = bufferizer

    # The ops -----------------------------------------------------------

    def lower(self, op: Operation) -> None:
        """Emit ``op``'s host form into the bufferizer's current block and
        map its results to their buffers."""
        if isinstance(op, graph.CondOp):
            self._lower_cond(op)
        elif isinstance(op, graph.WhileOp):
            self._lower_while(op)
        else:
            assert isinstance(op, graph.ForOp)
            self._lower_for(op)

    def _lower_cond(self, op: graph.CondOp) -> None:
        b = self.bufferizer
        results = [b.storage_of(r) for r in op.outputs]
        inputs = [b.buffers[v] for v in op.inputs]
        predicate = b.emit(memory.ReadScalarOp(b.buffers[op.pred]), op)
        predicate.results[0].name_hint = "decision"
        branches = []
        for region in (op.then_region, op.else_region):
            block = Block()
            self.lower_region(region.block, block, inputs, results)
            block.add_op(scf.YieldOp())
            branches.append(Region(block))
        b.emit(scf.IfOp(predicate.results[0], [], branches[0], branches[1]), op)
        b.buffers.update(zip(op.outputs, results, strict=True))

    def _lower_while(self, op: graph.WhileOp) -> None:
        b = self.bufferizer
        carries = self._carries(op, op.inputs, op.body_region.block)
        predicate = b.region_storage(op.cond_region.block.last_op.operands[0])
        before = Block(arg_types=carries.types)
        self.lower_region(
            op.cond_region.block, before, carries.current(before.args), [predicate]
        )
        decision = b.emit(memory.ReadScalarOp(predicate), op, into=before)
        decision.results[0].name_hint = "decision"
        before.add_op(scf.ConditionOp(decision.results[0], *before.args))
        after = Block(arg_types=carries.types)
        self.lower_region(
            op.body_region.block,
            after,
            carries.current(after.args),
            carries.following(after.args),
        )
        after.add_op(scf.YieldOp(*carries.swapped(after.args)))
        host = b.emit(
            scf.WhileOp(carries.initial, carries.types, [before], [after]), op
        )
        self._map_carries(op.outputs, carries.current(host.results))

    def _lower_for(self, op: graph.ForOp) -> None:
        b = self.bufferizer
        body = op.body.block
        carries = self._carries(op, op.carries, body, first=1)
        stacked = [b.storage_of(y) for y in op.ys]
        index_argument = body.args[0]
        index_buffer = b.region_storage(index_argument) if index_argument.uses else None
        length = op.trip_count
        bounds = [
            b.emit(memory.SizeOp(value, i64), op).results[0] for value in (0, length, 1)
        ]
        bounds[1].name_hint = "trips"
        host_body = Block(arg_types=[i64, *carries.types])
        step, carried = host_body.args[0], host_body.args[1:]
        index: SSAValue = step
        if op.is_reverse:
            last = b.emit(memory.SizeOp(length - 1, i64), op).results[0]
            index = b.emit(arith.SubiOp(last, step), op, into=host_body).results[0]
        if index_buffer is not None:
            b.emit(memory.WriteScalarOp(index, index_buffer), op, into=host_body)
        rows = [
            b.emit(memory.RowOp(x, index), op, into=host_body).results[0]
            for x in (*(b.buffers[x] for x in op.xs), *stacked)
        ]
        xs_rows, ys_rows = rows[: len(op.xs)], rows[len(op.xs) :]
        index_input = index_buffer if index_buffer is not None else index_argument
        self.lower_region(
            body,
            host_body,
            [index_input, *carries.current(carried), *xs_rows],
            [*carries.following(carried), *ys_rows],
        )
        host_body.add_op(scf.YieldOp(*carries.swapped(carried)))
        host = b.emit(scf.ForOp(*bounds, carries.initial, host_body), op)
        self._map_carries(op.carry_results, carries.current(host.results))
        b.buffers.update(zip(op.ys, stacked, strict=True))

    # Carries -----------------------------------------------------------

    def _carries(
        self, op: Operation, initial: Sequence[SSAValue], body: Block, first: int = 0
    ) -> _Carries:
        """The buffers of a loop's carries (whose block arguments in
        ``body`` start at ``first``): two allocated once per carry the body
        changes, the initial value copied into the first; a carry the body
        passes on unchanged is not carried at all (its initial buffer is
        read in place)."""
        b = self.bufferizer
        yielded = body.last_op.operands
        carries = _Carries([])
        for position, value in enumerate(initial):
            if yielded[position] is body.args[first + position]:
                carries.slots.append(b.buffers[value])
                b.keep_alive(value)  # the loop's result is this buffer
                continue
            current = b.region_storage(value, hint="carry")
            following = b.region_storage(value, hint="carry_next")
            b.emit(memory.CopyOp(b.buffers[value], current), op)
            carries.slots.append((current, following))
        return carries

    def _map_carries(
        self, results: Sequence[SSAValue], finals: Sequence[SSAValue]
    ) -> None:
        """The loop's last carries stand for its results; a returned one is
        copied into a buffer of the caller's."""
        b = self.bufferizer
        for result, final in zip(results, finals, strict=True):
            if isinstance(final.owner, scf.WhileOp | scf.ForOp):
                final.name_hint = result.name_hint
            if result in b.returned:
                own = b.region_storage(result)
                b.emit(memory.CopyOp(final, own), result.owner)
                final = own
            b.buffers[result] = final

    # Regions -----------------------------------------------------------

    def lower_region(
        self,
        old: Block,
        new: Block,
        arguments: Sequence[SSAValue],
        destinations: Sequence[SSAValue],
    ) -> None:
        """Lower the ops of region body ``old`` into ``new``, its arguments
        standing for ``arguments``, so that what it yields ends up in
        ``destinations``: a kernel (or ``graph.cond``) result is written by
        its kernel where it is first yielded, anything else is copied there."""
        b = self.bufferizer
        terminator = old.last_op
        assert isinstance(terminator, graph.YieldOp), "verified by graph"
        yielded = list(terminator.values)
        targets: dict[SSAValue, SSAValue] = {}
        for value, destination in zip(yielded, destinations, strict=True):
            if (
                isinstance(value.owner, loop.KernelOp | graph.CondOp)
                and value.owner.parent_block() is old
            ):
                targets.setdefault(value, destination)
        b.buffers.update(zip(old.args, arguments, strict=True))
        with b.inside(new, targets):
            b.lower_block(old)
            for value, destination in zip(yielded, destinations, strict=True):
                if b.buffers[value] is not destination:
                    b.emit(memory.CopyOp(b.buffers[value], destination), terminator)


@dataclass
class _Carries:
    """A loop's carries on the host: each is a pair of buffers (current,
    next) swapped every iteration, carried as the host loop's values
    ``(current..., next...)``, or a buffer the loop only reads."""

    slots: list[SSAValue | tuple[SSAValue, SSAValue]]

    @property
    def _pairs(self) -> list[tuple[SSAValue, SSAValue]]:
        return [slot for slot in self.slots if isinstance(slot, tuple)]

    @property
    def initial(self) -> list[SSAValue]:
        """The host loop's initial values."""
        pairs = self._pairs
        return [current for current, _ in pairs] + [following for _, following in pairs]

    @property
    def types(self) -> list[Attribute]:
        return [value.type for value in self.initial]

    def current(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """Each carry's current buffer, given the host loop's values."""
        return self._pick(values, 0)

    def following(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """Each carry's next buffer, given the host loop's values."""
        return self._pick(values, len(self._pairs))

    def swapped(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """What the host loop's body yields: next and current swapped."""
        count = len(self._pairs)
        return [*values[count:], *values[:count]]

    def _pick(self, values: Sequence[SSAValue], start: int) -> list[SSAValue]:
        picked: list[SSAValue] = []
        position = start
        for slot in self.slots:
            if isinstance(slot, tuple):
                picked.append(values[position])
                position += 1
            else:
                picked.append(slot)
        return picked
