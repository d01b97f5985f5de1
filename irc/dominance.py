"""SSA dominance, which xDSL 0.75's verifier does not check.

xDSL's parser accepts a value used before its definition (it resolves
forward references when the definition comes), and ``Operation.verify``
never looks at where an operand is defined; passes then fail on such IR
with errors that are no diagnostic (a ``KeyError`` in a pass that maps
values in program order). :func:`verify_dominance` is MLIR's dominance
check: every operand must be defined where it dominates its use,

- by an op earlier in the same block, or by an op earlier in a block that
  encloses the use (through the regions of the ops in between), or
- by a block argument of the use's block or of a block that encloses it,
- and, across the blocks of one region, in a block that dominates the
  use's block in the region's control flow (uses in unreachable blocks are
  not checked, as in MLIR).

An op's results do not dominate the op itself nor its regions. As in MLIR,
the bodies of ``builtin.module`` and of unregistered ops are graph regions:
there the order of ops does not matter, only that the definition's block
encloses the use.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, UnregisteredOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.utils.exceptions import VerifyException


class DominanceError(VerifyException):
    """An operand that does not dominate its use: ``op``'s operand number
    ``operand`` (the value ``value``)."""

    def __init__(self, message: str, op: Operation, operand: int, value: SSAValue):
        super().__init__(message)
        self.op = op
        self.operand = operand
        self.value = value


def value_name(value: SSAValue) -> str:
    """How a message names a value: ``%name`` when it has a name hint."""
    return "a value" if value.name_hint is None else f"%{value.name_hint}"


def verify_dominance(root: Operation) -> None:
    """Raise a :class:`DominanceError` for the first operand in ``root``
    (in program order) that does not dominate its use."""
    checker = _Checker()
    for op in root.walk():
        for index, value in enumerate(op.operands):
            problem = checker.problem(value, op)
            if problem is not None:
                raise DominanceError(
                    f"operand #{index} ({value_name(value)}) {problem}",
                    op,
                    index,
                    value,
                )


class _Checker:
    """Answers whether a value dominates a use, caching each block's op
    order and each region's block dominators."""

    def __init__(self) -> None:
        self._order: dict[Block, dict[Operation, int]] = {}
        self._dominators: dict[Region, dict[Block, frozenset[Block]]] = {}

    def problem(self, value: SSAValue, user: Operation) -> str | None:
        """Why ``value`` does not dominate its use by ``user``, or None."""
        if isinstance(value, OpResult):
            definer: Operation | None = value.op
            block = value.op.parent_block()
        elif isinstance(value, BlockArgument):
            definer, block = None, value.block
        else:
            return "is not the result of an op nor a block argument"
        if block is None or block.parent is None:
            return "is defined outside the module (by an op or block not in it)"
        region = block.parent
        # The ancestor of the use (the user or an op enclosing it) that is
        # in the definition's region.
        ancestor: Operation | None = user
        while ancestor is not None and ancestor.parent_region() is not region:
            ancestor = ancestor.parent_op()
        if ancestor is None:
            return (
                "is defined in a region that does not enclose this use: use "
                "a value defined above it"
            )
        if definer is ancestor:
            return (
                "is a result of this op"
                if definer is user
                else "is a result of an op that encloses this use"
            ) + ": an op's results are defined only after it"
        if _is_graph_region(region):
            return None
        use_block = ancestor.parent_block()
        assert use_block is not None, "the ancestor is in the region"
        if use_block is block:
            if definer is None:
                return None
            order = self._block_order(block)
            if order[definer] < order[ancestor]:
                return None
            return "is used before it is defined: move its definition above this use"
        dominators = self._region_dominators(region)
        if use_block not in dominators or block in dominators[use_block]:
            return None  # an unreachable use, or a dominating definition
        return (
            "is defined in a block that does not dominate this use: every "
            "path to this use must pass through its definition"
        )

    def _block_order(self, block: Block) -> dict[Operation, int]:
        if block not in self._order:
            self._order[block] = {op: index for index, op in enumerate(block.ops)}
        return self._order[block]

    def _region_dominators(self, region: Region) -> dict[Block, frozenset[Block]]:
        """The dominators of each block reachable from the region's entry."""
        if region not in self._dominators:
            self._dominators[region] = _dominators(region)
        return self._dominators[region]


def _is_graph_region(region: Region) -> bool:
    return isinstance(region.parent, ModuleOp | UnregisteredOp)


def _dominators(region: Region) -> dict[Block, frozenset[Block]]:
    """Each reachable block's dominators, by the iterative data-flow
    algorithm over the blocks in reverse postorder (a few passes for
    structured code)."""
    blocks = list(region.blocks)
    if not blocks:
        return {}
    entry = blocks[0]
    successors = {
        block: [
            s
            for s in (block.last_op.successors if block.last_op is not None else ())
            if s.parent is region
        ]
        for block in blocks
    }
    order: list[Block] = []  # postorder, iteratively
    seen, stack = {entry}, [(entry, iter(successors[entry]))]
    while stack:
        block, pending = stack[-1]
        following = next(pending, None)
        if following is None:
            order.append(block)
            stack.pop()
        elif following not in seen:
            seen.add(following)
            stack.append((following, iter(successors[following])))
    order.reverse()
    predecessors: dict[Block, list[Block]] = {block: [] for block in order}
    for block in order:
        for following in successors[block]:
            predecessors[following].append(block)
    everything = frozenset(order)
    dominators = {block: everything for block in order}
    dominators[entry] = frozenset({entry})
    changed = True
    while changed:
        changed = False
        for block in order[1:]:
            new = frozenset({block}).union(
                frozenset.intersection(*(dominators[p] for p in predecessors[block]))
            )
            if new != dominators[block]:
                dominators[block], changed = new, True
    return dominators
