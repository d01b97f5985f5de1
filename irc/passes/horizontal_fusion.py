"""``horizontal-fusion``: identical per-head computations as one batched one.

A program that runs the same code on H equal slices of a tensor (attention
heads, row blocks) holds H copies of one subgraph. This pass matches the
copies from their seed slices (``match_heads``) and computes them once over
a new leading axis of size H, as ``vmap`` would (``rewrite_heads``, with an
op's ``BATCHING_RULES``); by default only heads holding a ``graph.matmul``.

Entry points: ``HorizontalFusionPass`` (``horizontal-fusion``) and
``fuse_heads``. See docs/lowering.md, section "graph: identical heads as
one".
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i64
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue, Use
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from irc.dialects import graph as g
from irc.dialects.sym import expr_array

__all__ = ["BATCHING_RULES", "HorizontalFusionPass", "fuse_heads"]


# --------------------------------------------------------------------------
# What a position of the heads matches
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Shared:
    """One value that every head uses."""

    value: SSAValue


@dataclass(frozen=True)
class Sliced:
    """H slices of one tensor, side by side along ``axis``: head h's window
    starts where head h-1's ends."""

    slices: tuple[g.SliceOp, ...]
    axis: int

    @property
    def source(self) -> SSAValue:
        return self.slices[0].input


@dataclass(eq=False)
class Batched:
    """H ops computing the same function of matched operands."""

    ops: tuple[Operation, ...]
    operands: tuple[Shared | Sliced | Batched, ...]


Match = Shared | Sliced | Batched


class _Refused(Exception):
    """The heads do not match (the message says where)."""


# --------------------------------------------------------------------------
# Seeds
# --------------------------------------------------------------------------


def _window_axis(first: g.SliceOp, other: g.SliceOp) -> int | None:
    """The one axis along which ``other``'s offset differs from ``first``'s,
    if the slices are alike otherwise (one tensor, unit strides, one type)."""
    if (
        other.input != first.input
        or other.result.type != first.result.type
        or set(first.stride_list) | set(other.stride_list) != {1}
    ):
        return None
    differing = [
        axis
        for axis, (a, b) in enumerate(zip(first.offset_list, other.offset_list))
        if a != b
    ]
    return differing[0] if len(differing) == 1 else None


def _as_sliced(values: Sequence[SSAValue]) -> Sliced | None:
    """``values`` as windows of one tensor side by side in order, if they
    are."""
    ops = [v.owner for v in values if isinstance(v, OpResult)]
    if len(ops) != len(values) or not all(isinstance(op, g.SliceOp) for op in ops):
        return None
    slices = tuple(op for op in ops if isinstance(op, g.SliceOp))
    axis = _window_axis(slices[0], slices[1])
    if axis is None:
        return None
    width = g.tensor_type(slices[0].result).dims[axis]
    start = slices[0].offset_list[axis]
    for head, op in enumerate(slices[1:], 1):
        if _window_axis(slices[0], op) != axis:
            return None
        if op.offset_list[axis] != start + width * head:
            return None
    return Sliced(slices, axis)


def _seeds(block: Block) -> Iterator[Sliced]:
    """The longest runs of side-by-side slices of each value of ``block``,
    then their equal consecutive parts (a flat split of q, k and v into
    heads is one run, whose heads are its thirds)."""
    sources: list[SSAValue] = [*block.args]
    sources += [r for op in block.ops for r in op.results]
    for source in sources:
        users = (u.operation for u in source.uses)
        slices = [
            op
            for op in dict.fromkeys(users)
            if isinstance(op, g.SliceOp) and op.parent_block() is block
        ]
        for start in slices:
            if any(_as_sliced([o.result, start.result]) for o in slices):
                continue  # a run starts before this slice
            run = [start]
            while extension := _next_in_run(run, slices):
                run.append(extension)
            for heads in range(len(run), 1, -1):
                if len(run) % heads == 0:
                    for part in range(0, len(run), heads):
                        chunk = [o.result for o in run[part : part + heads]]
                        if sliced := _as_sliced(chunk):
                            yield sliced


def _next_in_run(run: list[g.SliceOp], slices: Sequence[g.SliceOp]) -> g.SliceOp | None:
    """The slice of ``slices`` right after the last of ``run``, along the
    run's axis, if any."""
    last = run[-1]
    for other in slices:
        pair = _as_sliced([last.result, other.result])
        if other not in run and pair and (len(run) == 1 or _continues(run, pair)):
            return other
    return None


def _continues(run: list[g.SliceOp], pair: Sliced) -> bool:
    """Whether ``pair`` (the run's last slice and another) steps along the
    run's axis."""
    return _window_axis(run[0], run[1]) == pair.axis


# --------------------------------------------------------------------------
# Matching the heads in lockstep
# --------------------------------------------------------------------------


def _ancestor_in(block: Block, op: Operation) -> Operation | None:
    """``op`` or the op enclosing it that is directly in ``block``."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        if parent is None:
            return None
        op = parent
    return op


def _users_in(block: Block, op: Operation) -> set[Operation]:
    return {
        user
        for result in op.results
        for use in result.uses
        if (user := _ancestor_in(block, use.operation)) is not None
    }


def _forward(block: Block, op: Operation) -> set[Operation]:
    """``op`` and every op of ``block`` that depends on it."""
    seen: set[Operation] = set()
    work = [op]
    while work:
        current = work.pop()
        if current not in seen:
            seen.add(current)
            work.extend(_users_in(block, current))
    return seen


class _Matcher:
    """Matches tuples of per-head values, remembering which op is at which
    position of which head."""

    def __init__(self, block: Block) -> None:
        self.block = block
        self.memo: dict[tuple[SSAValue, ...], Match] = {}
        self.position: dict[Operation, tuple[tuple[SSAValue, ...], int]] = {}
        self.batched: list[Batched] = []
        self.sliced: list[Sliced] = []

    def match(self, values: tuple[SSAValue, ...]) -> Match:
        if values in self.memo:
            return self.memo[values]
        found: Match
        if all(v == values[0] for v in values):
            found = Shared(values[0])
        elif (sliced := _as_sliced(values)) is not None:
            self._claim(values, sliced.slices)
            self.sliced.append(sliced)
            found = sliced
        else:
            found = self._match_ops(values)
        self.memo[values] = found
        return found

    def _claim(self, values: tuple[SSAValue, ...], ops: Sequence[Operation]) -> None:
        for head, op in enumerate(ops):
            if self.position.setdefault(op, (values, head)) != (values, head):
                raise _Refused(f"{op.name} would be in two heads or positions")

    def _match_ops(self, values: tuple[SSAValue, ...]) -> Match:
        ops = [v.owner for v in values if isinstance(v, OpResult)]
        if len(ops) != len(values):
            raise _Refused("distinct block arguments at one position")
        first = ops[0]
        if not isinstance(first, g.GraphOp) or first.regions:
            raise _Refused(f"{first.name} is not a pure op without regions")
        if len(set(map(id, ops))) != len(ops) or any(
            op.parent_block() is not self.block for op in ops
        ):
            raise _Refused(f"{first.name}: the heads share it or it is elsewhere")
        for op in ops[1:]:
            if not _same_computation(first, op):
                raise _Refused(f"{first.name} and {op.name} differ")
        operands = tuple(
            self.match(tuple(op.operands[index] for op in ops))
            for index in range(len(first.operands))
        )
        if all(isinstance(m, Shared) for m in operands):
            # Pure ops of one function of one set of operands: one value
            # (each head's constants, when cse has not merged them).
            return Shared(values[0])
        if batching_rule(first) is None:
            raise _Refused(f"{first.name} has no batching rule")
        self._claim(values, ops)
        batched = Batched(tuple(ops), operands)
        self.batched.append(batched)
        return batched


def _same_computation(a: Operation, b: Operation) -> bool:
    """Whether ``a`` and ``b`` compute the same function of their operands."""
    return (
        a.name == b.name
        and a.properties == b.properties
        and a.attributes == b.attributes
        and a.result_types == b.result_types
        and len(a.operands) == len(b.operands)
        and [o.type for o in a.operands] == [o.type for o in b.operands]
    )


# --------------------------------------------------------------------------
# Batching rules: one op on [H, *shape] operands
# --------------------------------------------------------------------------

#: Ops computing each element from the same index of operands of its shape.
_ELEMENTWISE_OPS = (g.UnaryOp, g.BinaryOp, g.CompareOp, g.SelectOp, g.CastOp)


class _Builder:
    """Inserts the batched ops before one point, remembers the batched
    value of each match, and where in the block each inserted op would
    rather be (``places``: the block index of the op it stands for)."""

    def __init__(self, heads: int, anchor: InsertPoint, order: dict[Operation, int]):
        self.heads = heads
        self.anchor = anchor
        self.order = order
        self.values: dict[int, SSAValue] = {}
        self.places: dict[Operation, int] = {}

    def insert(
        self, op: Operation, location: Operation, place: Operation | None = None
    ) -> SSAValue:
        """Insert ``op`` at ``location``'s source location, to be placed
        where ``place`` (by default ``location``) was."""
        op.location = location.location
        Rewriter.insert_op(op, self.anchor)
        self.places[op] = self.order.get(place or location, len(self.order))
        return op.results[0]

    def batched(self, match: Sliced | Batched) -> SSAValue:
        return self.values[id(match)]

    def broadcast(self, match: Match, user: Operation) -> SSAValue:
        """The batched value of ``match``, a shared value broadcast to
        ``[H, *shape]``."""
        if not isinstance(match, Shared):
            return self.batched(match)
        return self.shared(match.value, user)

    def shared(self, value: SSAValue, user: Operation) -> SSAValue:
        """``value`` broadcast to ``[H, *shape]``. The broadcast sinks
        through the elementwise ops computing ``value`` (a cast of the
        causal mask): fusion recomputes them inside the kernel of their
        user, where an unbatched value of another shape would be a kernel
        of its own."""
        key = id(value)
        if key in self.values:
            return self.values[key]
        shape = [self.heads, *g.tensor_type(value).dims]
        producer = value.owner
        if isinstance(producer, _ELEMENTWISE_OPS):
            operands = [self.shared(o, producer) for o in producer.operands]
            op = type(producer).create(
                operands=operands,
                result_types=[g.tensor_type(value).with_shape(shape)],
                properties=dict(producer.properties),
                attributes=dict(producer.attributes),
            )
            batched = self.insert(op, producer)
        else:
            batched = self.insert(g.BroadcastOp(value, shape), user)
        self.values[key] = batched
        return batched

    def padded(self, match: Sliced | Batched, rank: int, user: Operation) -> SSAValue:
        """The batched value of ``match`` with heads of rank ``rank``: unit
        dims after the head axis, where NumPy's broadcasting pads each head
        on the left."""
        value = self.batched(match)
        dims = g.tensor_type(value).dims
        missing = rank + 1 - len(dims)
        if missing <= 0:
            return value
        shape = [dims[0], *([1] * missing), *dims[1:]]
        return self.insert(g.ReshapeOp(value, shape), user)


Rule = Callable[
    [Operation, Sequence[Match], _Builder], tuple[list[SSAValue], dict[str, Attribute]]
]


def _elementwise(
    op: Operation, operands: Sequence[Match], build: _Builder
) -> tuple[list[SSAValue], dict[str, Attribute]]:
    return [build.broadcast(m, op) for m in operands], dict(op.properties)


def _single_input(
    shift: Callable[[Operation], dict[str, Attribute]],
) -> Rule:
    """A rule for an op of one batched input whose axis-valued properties
    ``shift`` moves past the head axis."""

    def rule(
        op: Operation, operands: Sequence[Match], build: _Builder
    ) -> tuple[list[SSAValue], dict[str, Attribute]]:
        return [build.broadcast(operands[0], op)], {**op.properties, **shift(op)}

    return rule


def _axis_after_heads(op: Operation) -> dict[str, Attribute]:
    axis = op.properties["axis"]
    assert isinstance(axis, IntegerAttr)
    return {"axis": IntegerAttr(axis.value.data + 1, i64)}


def _reduce_axes(op: Operation) -> dict[str, Attribute]:
    assert isinstance(op, g.ReduceOp)
    return {"axes": _i64s(a + 1 for a in op.axes.get_values())}


def _permutation(op: Operation) -> dict[str, Attribute]:
    assert isinstance(op, g.TransposeOp)
    return {"permutation": _i64s([0, *(p + 1 for p in op.perm)])}


def _slice_window(op: Operation) -> dict[str, Attribute]:
    assert isinstance(op, g.SliceOp)
    return {
        "offsets": expr_array([0, *op.offset_list]),
        "strides": _i64s([1, *op.stride_list]),
    }


def _broadcast(
    op: Operation, operands: Sequence[Match], build: _Builder
) -> tuple[list[SSAValue], dict[str, Attribute]]:
    # A shared input makes the whole position shared: this one is batched.
    (source,) = operands
    assert not isinstance(source, Shared)
    return [build.padded(source, g.tensor_type(op.results[0]).rank, op)], {}


def _concat(
    op: Operation, operands: Sequence[Match], build: _Builder
) -> tuple[list[SSAValue], dict[str, Attribute]]:
    values = [build.broadcast(m, op) for m in operands]
    return values, _axis_after_heads(op)


def _matmul(
    op: Operation, operands: Sequence[Match], build: _Builder
) -> tuple[list[SSAValue], dict[str, Attribute]]:
    # A shared operand stays unbatched: matmul broadcasts it over the heads.
    rank = g.tensor_type(op.results[0]).rank
    values = [
        m.value if isinstance(m, Shared) else build.padded(m, rank, op)
        for m in operands
    ]
    return values, {}


#: How each op kind runs on batched operands: the operands and properties of
#: the batched op (its result type is the op's with a leading head axis).
BATCHING_RULES: dict[type[Operation], Rule] = {
    **dict.fromkeys(_ELEMENTWISE_OPS, _elementwise),
    g.BroadcastOp: _broadcast,
    g.ReshapeOp: _single_input(lambda op: {}),
    g.TransposeOp: _single_input(_permutation),
    g.ReduceOp: _single_input(_reduce_axes),
    g.ArgMaxOp: _single_input(_axis_after_heads),
    g.ScanOp: _single_input(_axis_after_heads),
    g.SliceOp: _single_input(_slice_window),
    g.ConcatOp: _concat,
    g.MatmulOp: _matmul,
}


def batching_rule(op: Operation) -> Rule | None:
    """The rule of ``op``'s class or of the nearest base that has one (a
    primitive's op takes ``UnaryOp``'s or ``BinaryOp``'s)."""
    return next(
        (BATCHING_RULES[c] for c in type(op).__mro__ if c in BATCHING_RULES), None
    )


#: Ops that only move elements: batching nothing but these saves no work.
_LAYOUT_OPS = (g.SliceOp, g.ReshapeOp, g.TransposeOp, g.BroadcastOp)


def _i64s(values: Iterable[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


# --------------------------------------------------------------------------
# The rewrite
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class HeadMatch:
    """The heads of one seed, matched: every batched and sliced position,
    and where the batched ops go (right after ``last``)."""

    heads: int
    batched: tuple[Batched, ...]
    sliced: tuple[Sliced, ...]
    last: Operation


def match_heads(block: Block, seed: Sliced, require_matmul: bool = True) -> HeadMatch:
    """The heads of ``seed`` in ``block``, matched; raises ``_Refused``
    (also when ``require_matmul`` and no head holds a ``graph.matmul``)."""
    heads = len(seed.slices)
    reach = [_forward(block, op) for op in seed.slices]
    order = {op: index for index, op in enumerate(block.ops)}
    exits = []
    for head, ops in enumerate(reach):
        others = set().union(*(r for h, r in enumerate(reach) if h != head))
        own = ops - others
        exits.append(
            sorted(
                (op for op in own if not _users_in(block, op) <= own),
                key=order.__getitem__,
            )
        )
    if len({len(e) for e in exits}) != 1:
        raise _Refused("the heads have different numbers of results")
    matcher = _Matcher(block)
    for position in zip(*exits):
        if any(len(op.results) != 1 for op in position):
            raise _Refused("an exit has several results")
        matcher.match(tuple(op.results[0] for op in position))
    if all(isinstance(b.ops[0], _LAYOUT_OPS) for b in matcher.batched):
        raise _Refused("only layout ops would be batched")
    if require_matmul and not any(
        isinstance(b.ops[0], g.MatmulOp) for b in matcher.batched
    ):
        raise _Refused("no matmul in the heads: fusion already joins them")
    batched_ops = {op for b in matcher.batched for op in b.ops}
    for b in matcher.batched:
        for m in b.operands:
            if isinstance(m, Shared) and m.value.owner in batched_ops:
                raise _Refused(f"{m.value.owner.name} is shared and batched")
    last = max(batched_ops, key=order.__getitem__)
    return HeadMatch(heads, tuple(matcher.batched), tuple(matcher.sliced), last)


def _sliced_value(sliced: Sliced, heads: int, build: _Builder) -> SSAValue:
    """The windows of ``sliced`` as one ``[H, ...]`` tensor: the window
    covering them all, its axis split into heads and widths, the heads
    moved to the front."""
    first = sliced.slices[0]
    source_dims = g.tensor_type(sliced.source).dims
    dims = list(g.tensor_type(first.result).dims)
    axis = sliced.axis
    window = dims.copy()
    window[axis] = dims[axis] * heads
    value = sliced.source
    if any(o != 0 for o in first.offset_list) or list(source_dims) != window:
        value = build.insert(
            g.SliceOp(value, first.offset_list, window, [1] * len(dims)), first
        )
    split = [*dims[:axis], heads, *dims[axis:]]
    value = build.insert(g.ReshapeOp(value, split), first)
    if axis:
        order = [axis, *(a for a in range(len(split)) if a != axis)]
        value = build.insert(g.TransposeOp(value, order), first)
    return value


def _batched_op(batched: Batched, heads: int, build: _Builder) -> SSAValue:
    first = batched.ops[0]
    rule = batching_rule(first)
    assert rule is not None, "matched"
    operands, properties = rule(first, batched.operands, build)
    result = g.tensor_type(first.results[0])
    op = type(first).create(
        operands=operands,
        result_types=[result.with_shape([heads, *result.dims])],
        properties=properties,
        attributes=dict(first.attributes),
    )
    earliest = min(batched.ops, key=build.order.__getitem__)
    return build.insert(op, first, place=earliest)


def _head_of(value: SSAValue, head: int, build: _Builder, user: Operation) -> SSAValue:
    """Head ``head`` of a batched value, as the per-head tensor."""
    dims = g.tensor_type(value).dims
    window = build.insert(
        g.SliceOp(
            value, [head, *([0] * (len(dims) - 1))], [1, *dims[1:]], [1] * len(dims)
        ),
        user,
    )
    return build.insert(g.ReshapeOp(window, dims[1:]), user)


def _joined(value: SSAValue, axis: int, build: _Builder, user: Operation) -> SSAValue:
    """The heads of a batched value concatenated along ``axis``."""
    dims = g.tensor_type(value).dims
    order = [*range(1, axis + 1), 0, *range(axis + 1, len(dims))]
    if axis:
        value = build.insert(g.TransposeOp(value, order), user)
    joined = [*dims[1 : axis + 1], dims[0] * dims[axis + 1], *dims[axis + 2 :]]
    return build.insert(g.ReshapeOp(value, joined), user)


def _concat_run(user: Operation, results: Sequence[SSAValue]) -> int | None:
    """Where ``results`` sit, in order and side by side, among the operands
    of a ``graph.concat`` ``user``."""
    if not isinstance(user, g.ConcatOp):
        return None
    operands = list(user.operands)
    for start in range(len(operands) - len(results) + 1):
        if operands[start : start + len(results)] == list(results):
            return start
    return None


def rewrite_heads(found: HeadMatch) -> None:
    """Replace the matched heads by their batched form."""
    heads = found.heads
    next_op = found.last.next_op
    block = found.last.parent_block()
    assert next_op is not None and block is not None  # never the terminator
    order = {op: i for i, op in enumerate(block.ops)}
    build = _Builder(heads, InsertPoint.before(next_op), order)
    for sliced in found.sliced:
        build.values[id(sliced)] = _sliced_value(sliced, heads, build)
    groups = sorted(found.batched, key=lambda b: max(map(order.__getitem__, b.ops)))
    for batched in groups:
        build.values[id(batched)] = _batched_op(batched, heads, build)
    batched_ops = {op for b in groups for op in b.ops}
    joins: list[Operation] = []
    for batched in groups:
        joins += _replace_uses(batched, build, batched_ops)
    # Erased last: a join may be the op the batched ops are inserted before.
    for op in joins:
        Rewriter.erase_op(op)
    for op in sorted(batched_ops, key=order.__getitem__, reverse=True):
        Rewriter.erase_op(op)
    for sliced in found.sliced:
        for op in sliced.slices:
            if not op.result.uses:
                Rewriter.erase_op(op)
    _reschedule(block, order | build.places)


def _reschedule(block: Block, places: dict[Operation, int]) -> None:
    """Order ``block``'s ops so that each follows the ops it uses, each as
    near its place as that allows (ties in insertion order). The batched
    ops were inserted after the heads' last op, but in a joint function a
    head's backward ops, and the ops using them, come before the next
    head's forward ones: they move after the batched ops they now use,
    and each batched op moves up to where its earliest head's op was.
    Batching adds no cycle: a head's own ops use only its own ops and
    values that depend on no head. Ops with effects (``debug.print``, a
    loop holding one) keep their order."""
    ops = list(block.ops)
    index = {op: i for i, op in enumerate(ops)}
    waiting = {op: 0 for op in ops}
    users: dict[Operation, list[Operation]] = {op: [] for op in ops}
    effectful = [op for op in ops[:-1] if not is_side_effect_free(op)]
    for op in ops:
        used = {_ancestor_in(block, v.owner) for v in _operands_within(op)}
        for before in used & waiting.keys() - {op}:
            waiting[op] += 1
            users[before].append(op)
    for before, after in pairwise(effectful):
        waiting[after] += 1
        users[before].append(after)
    last = len(places) + len(ops)

    def entry(op: Operation) -> tuple[int, int, Operation]:
        place = last if op is block.last_op else places.get(op, last)
        return place, index[op], op

    ready = [entry(op) for op in ops if not waiting[op]]
    heapq.heapify(ready)
    scheduled: list[Operation] = []
    while ready:
        *_, op = heapq.heappop(ready)
        scheduled.append(op)
        for user in users[op]:
            waiting[user] -= 1
            if not waiting[user]:
                heapq.heappush(ready, entry(user))
    assert len(scheduled) == len(ops), "batching made a cycle"
    if scheduled == ops:
        return
    for op in ops:
        op.detach()
    for op in scheduled:
        block.add_op(op)


def _operands_within(op: Operation) -> Iterator[SSAValue]:
    """The values ``op`` and the ops in its regions use that are results of
    ops (block arguments need no scheduling)."""
    for inner in op.walk():
        for value in inner.operands:
            if isinstance(value, OpResult):
                yield value


def _replace_uses(
    batched: Batched, build: _Builder, inside: set[Operation]
) -> list[Operation]:
    """Point the uses of the heads' results outside the heads at the
    batched value: a concatenation of them all, in order, at a transpose
    and reshape of it, any other use at the head's slice of it. Returns the
    concatenations left without operands, to erase."""
    block = batched.ops[0].parent_block()
    assert block is not None
    value = build.batched(batched)
    results = [op.results[0] for op in batched.ops]
    order = {op: index for index, op in enumerate(block.ops)}
    outside = {u for op in batched.ops for u in _users_in(block, op)} - inside
    joins = []
    for user in sorted(outside, key=order.__getitem__):
        if (start := _concat_run(user, results)) is not None:
            assert isinstance(user, g.ConcatOp)
            joined = _joined(value, user.axis.value.data, build, user)
            operands = list(user.operands)
            operands[start : start + len(results)] = [joined]
            if len(operands) == 1:
                user.results[0].replace_all_uses_with(joined)
                joins.append(user)
                continue
            user.operands = operands
    kept = inside | set(joins)

    def elsewhere(use: Use) -> bool:
        return _ancestor_in(block, use.operation) not in kept

    for head, result in enumerate(results):
        if any(elsewhere(use) for use in result.uses):
            own = _head_of(value, head, build, batched.ops[head])
            result.replace_uses_with_if(own, elsewhere)
    return joins


def fuse_heads(block: Block, require_matmul: bool = True) -> int:
    """Batch every set of matching heads in ``block`` (holding a matmul,
    with ``require_matmul``); the number batched."""
    fused = 0
    changed = True
    while changed:
        changed = False
        for seed in list(_seeds(block)):
            try:
                found = match_heads(block, seed, require_matmul)
            except _Refused:
                continue
            rewrite_heads(found)
            fused += 1
            changed = True
            break
    return fused


@dataclass(frozen=True)
class HorizontalFusionPass(ModulePass):
    """Identical computations on side-by-side slices of one tensor (heads)
    become one computation over a leading head axis."""

    name = "horizontal-fusion"

    #: Batch only heads holding a matmul (see the module docstring).
    require_matmul: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = [b for inner in op.walk() for r in inner.regions for b in r.blocks]
        for block in blocks:
            fuse_heads(block, self.require_matmul)
