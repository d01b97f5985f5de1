"""``fuse``: group a function's graph ops into ``fusion.kernel`` ops.

XLA-style producer-into-consumer fusion, decided in one walk over each
function body from the last op to the first: an op joins its users' kernel,
is duplicated or recomputed in each kernel using it, is stored by the first
of them (multi-output fusion), or roots a kernel of its own. What a kernel
admits follows the contracts of ``irc.dialects.fusion`` (``ADMISSIONS``);
sibling reduction kernels then merge (``merge_sibling_reductions``).

Entry points: ``FusePass`` (``fuse``), ``fuse_block`` and ``fuse_nested``.
See docs/lowering.md, section "fusion: which ops become one kernel".
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from irc.dialects.fusion import (
    ELEMENTWISE_OPS,
    IDIOM_ATTRIBUTE,
    INDEXING_OPS,
    LAYOUT_OPS,
    REDUCTION_OPS,
    ROW_OPS,
    SCAN_OPS,
    AttentionChain,
    KernelOp,
    RowStructure,
    Shape,
    YieldOp,
    contract_violation,
    is_dense_constant,
    is_source,
    kernel_idioms,
    loads_operand_tiles,
    shape_of,
)
from irc.dialects.graph import (
    CONTROL_FLOW_OPS,
    BroadcastOp,
    MatmulOp,
    ReduceOp,
    ScanOp,
    WhileOp,
)
from irc.dialects.graph import YieldOp as RegionYieldOp
from irc.dialects.kernel_kind import (
    ATTENTION,
    ATTENTION_BACKWARD,
    MATMUL,
    POINTWISE,
    REDUCTION,
    KernelKind,
    KindTable,
)
from irc.dialects.sym import GuardOp, facts_in_scope, shape_text
from irc.lowering.device_control_flow import device_while
from irc.lowering.saved_activations import plan_saved_activations
from irc.lowering.scatter_add import decompose_scatter_adds
from irc.lowering.score_walks import WalkPlan, plan_score_walks
from irc.passes.while_unrolling import check_factor, unroll_cheap_loops
from irc.source_locations import source_location

# --------------------------------------------------------------------------
# Groups
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """A group's kind (``kernel``) and what anchors it.

    ``shape`` is a pointwise group's iteration space, a reduction group's
    row shape X (with ``rows`` its row structure and ``row_results`` the
    result shapes of its reductions so far; ``scans`` when its row ops are
    scans), or a matmul group's result shape (with ``matmul`` its matmul;
    where its epilogue ends in layout ops, ``fusion.EpilogueLayout``, the
    shape they give the result); an attention group's is its second
    matmul's (``matmul``), with ``chain`` the chain it computes and
    ``between`` the ops from the first matmul to the second one's lhs,
    which it takes whole; an attention-backward group's (``walk``) is its
    last matmul's.
    """

    kernel: KernelKind
    shape: Shape
    rows: RowStructure | None = None
    row_results: tuple[Shape, ...] = ()
    matmul: MatmulOp | None = None
    scans: bool = False
    chain: AttentionChain | None = None
    between: frozenset[Operation] = frozenset()
    walk: WalkPlan | None = None

    @property
    def matmuls(self) -> tuple[MatmulOp, ...]:
        """The matmuls whose operand sides the group loads."""
        if self.chain is not None:
            return (self.chain.scores, self.chain.output)
        return () if self.matmul is None else (self.matmul,)

    @staticmethod
    def of(op: Operation) -> Kind:
        """The kind of a group rooted at ``op``: its own nature."""
        if isinstance(op, REDUCTION_OPS):
            return Kind.reduction(op)
        if isinstance(op, SCAN_OPS):
            return Kind.scan(op)
        if isinstance(op, MatmulOp):
            return Kind(MATMUL, shape_of(op.result), matmul=op)
        return Kind(POINTWISE, shape_of(op.results[0]))

    @staticmethod
    def scan(op: Operation) -> Kind:
        """The kind of a reduction group of scans with ``op``: it yields
        values of the rows' shape only."""
        rows = RowStructure.of(op)
        return Kind(REDUCTION, rows.shape, rows, scans=True)

    @staticmethod
    def reduction(op: Operation, joined: Kind | None = None) -> Kind:
        """The kind of a reduction group with ``op`` (joining ``joined``)."""
        rows = RowStructure.of(op)
        results = joined.row_results if joined is not None else ()
        return Kind(REDUCTION, rows.shape, rows, (*results, shape_of(op.results[0])))

    def output_shapes(self) -> tuple[Shape, ...]:
        """The shapes the kernel contract lets the group yield."""
        if self.walk is not None:
            return tuple(shape_of(op.result) for op in self.walk.accumulations)
        if self.rows is not None and not self.scans:
            return (self.shape, *self.rows.reduced_shapes())
        return (self.shape, *self.row_results)


@dataclass(eq=False)
class KeptOut:
    """An op that was not fused (or not duplicated) into ``groups``, and
    why; the reason of the kernel that the op formed tells it.

    ``split`` means the op's users are in all of ``groups``: it was fused
    into none of them rather than refused by one.
    """

    op: Operation
    groups: tuple[Group, ...]
    why: str
    verb: str = "fused"
    split: bool = False
    #: Why a split op was not recomputed in each of ``groups`` instead.
    detail: str = ""


@dataclass(eq=False)
class Saved:
    """A member whose result its group stores for ``readers``, the other
    groups using it, and why it is stored rather than recomputed there."""

    op: Operation
    readers: tuple[Group, ...]
    why: str


@dataclass(eq=False)
class Group:
    """A kernel in the making.

    ``members`` are original ops (the kernel gets clones of them); an op
    that is duplicated is a member of several groups. ``root`` is the first
    member placed, hence the last in block order; ``operand_side`` holds the
    members feeding a matmul group's matmul. ``yielded`` are the values
    read outside the group: the root's results (its users all come later,
    outside) and those of members the function returns (a joined op has
    all its other users inside).
    """

    root: Operation
    kind: Kind
    members: set[Operation] = field(default_factory=set)
    operand_side: set[Operation] = field(default_factory=set)
    yielded: list[SSAValue] = field(default_factory=list)
    kept_out: list[KeptOut] = field(default_factory=list)
    #: Members whose result this group stores for other groups to read
    #: (each joined the earliest of its users' groups).
    saved_for: list[Saved] = field(default_factory=list)
    #: The roots of the consumer groups that joined this one
    #: (``merge_pointwise_consumers``).
    absorbed: list[Operation] = field(default_factory=list)
    name: str = ""


def broadcasts_to(shape: Shape, target: Shape) -> bool:
    """Whether NumPy broadcasting can stretch ``shape`` to ``target``."""
    if len(shape) > len(target):
        return False
    tail = target[len(target) - len(shape) :]
    return all(dim == 1 or dim == other for dim, other in zip(shape, tail))


# --------------------------------------------------------------------------
# Planning: which op goes into which group
# --------------------------------------------------------------------------

#: The most elementwise ops a recomputed chain is followed through.
CHAIN_LIMIT = 64

#: What ``_Planner.offer`` returns: the group's kind with the op, or why the
#: group refuses the op.
Offer = Kind | str

#: What a group of each kernel kind admits: the planner's method giving the
#: group's kind with an op, or why the group refuses it (the kind's own
#: contract is checked after it, in ``_Planner.offer``).
ADMISSIONS: KindTable[Callable[[_Planner, Group, Operation], Offer]] = KindTable(
    "admission"
)


class _Planner:
    """Decides the groups of one function body (see the module docstring)."""

    def __init__(self, block: Block, walks: dict[MatmulOp, WalkPlan] | None = None):
        self.block = block
        #: The matmuls of attention-backward kernels (``plan_score_walks``),
        #: and each walk's group once its last matmul roots it.
        self.walks = walks or {}
        self.walk_groups: dict[WalkPlan, Group] = {}
        self.position = {op: index for index, op in enumerate(block.ops)}
        self.groups: list[Group] = []
        #: The groups each placed op is a member of.
        self.groups_of: dict[Operation, list[Group]] = {}
        #: The group that yields each placed op's results to others.
        self.home: dict[Operation, Group] = {}
        self.anywhere = self._computable_anywhere()
        self.duplicable = self._duplicable_ops() | self.anywhere
        #: Elementwise ops cloned into each group using them instead of
        #: being stored by one (rematerialised).
        self.recomputed: set[Operation] = set()
        #: Why a matmul ending an attention chain roots no attention group.
        self.unfused_chains: dict[MatmulOp, str] = {}
        #: The attention chains ending at each matmul, with the ops between.
        self.chains = self._attention_chains()
        #: What a joint function's backward reads from its forward.
        walked = (op for plan in self.walks.values() for op in plan.ops)
        self.saved_activations = plan_saved_activations(block, walked)

    def plan(self) -> list[Group]:
        for op in reversed(list(self.block.ops)):
            if _stays_outside(op):
                continue
            if not any(result.uses for result in op.results):
                self.block.erase_op(op)  # dead: any users were erased before
            elif op in self.duplicable:
                self._duplicate(op)
            else:
                self._place(op)
        return self.groups

    def _duplicable_ops(self) -> set[Operation]:
        """Sources, and layout ops reading only arguments, dense constants
        and duplicable ops: what any kernel can recompute for free."""
        duplicable: set[Operation] = set()

        def free(value: SSAValue) -> bool:
            owner = value.owner
            return (
                not isinstance(owner, Operation)  # an argument
                or is_dense_constant(owner)
                or owner in duplicable
            )

        for op in self.block.ops:
            if is_source(op) or (
                isinstance(op, LAYOUT_OPS) and all(map(free, op.operands))
            ):
                duplicable.add(op)
        return duplicable

    def _computable_anywhere(self) -> set[Operation]:
        """Sources and the elementwise and layout ops of them only (the
        ``1 / N`` that scales a mean's cotangent): values that need no
        memory, which any kernel computes at whatever index it reads."""
        anywhere: set[Operation] = set()
        for op in self.block.ops:
            if is_source(op) or (
                isinstance(op, (*ELEMENTWISE_OPS, *LAYOUT_OPS))
                and all(operand.owner in anywhere for operand in op.operands)
            ):
                anywhere.add(op)
        return anywhere

    def _attention_chains(self) -> dict[MatmulOp, Kind]:
        """The kind of an attention group rooted at each matmul that ends a
        chain whose ops between the matmuls can all be fused: none of them
        is used outside the chain (a copy of a duplicable op aside), so the
        scores and ``exp(x - max)`` are never stored."""
        kinds: dict[MatmulOp, Kind] = {}
        for op in self.block.ops:
            if not isinstance(op, MatmulOp):
                continue
            chain = AttentionChain.of(op)
            if isinstance(chain, str):
                continue
            between = self._between(chain)
            if isinstance(between, str):
                self.unfused_chains[op] = between
                continue
            shape = shape_of(op.result)
            statistics = tuple(shape_of(r.result) for r in chain.reductions)
            kinds[op] = Kind(
                ATTENTION,
                shape,
                row_results=statistics,
                matmul=op,
                chain=chain,
                between=between,
            )
        return kinds

    def _between(self, chain: AttentionChain) -> frozenset[Operation] | str:
        """The ops computing the chain's second matmul's lhs from its first
        matmul, the chain's reductions and what else is recomputable at
        each score (sources, a mask, a bias read at the score's index); or
        why they form no attention kernel (an anchor of the chain is used
        outside it, or the kernel would break the contract)."""
        anchors = {chain.scores, *chain.reductions}
        between: set[Operation] = set()
        pending = [chain.output.lhs]
        while pending:
            op = pending.pop().owner
            if not isinstance(op, Operation) or op in between or _stays_outside(op):
                continue
            recomputable = not isinstance(op, (MatmulOp, *ROW_OPS)) and (
                isinstance(op, (*ELEMENTWISE_OPS, *INDEXING_OPS)) or is_source(op)
            )
            if op in anchors or recomputable:
                between.add(op)
                if op is not chain.scores:
                    pending.extend(op.operands)
        # Users come later in block order: dropping an op used outside first
        # drops its producers used only by it.
        reachable = between | {chain.output}
        used_outside: list[Operation] = []
        for op in sorted(between, key=self.position.__getitem__, reverse=True):
            users = {use.operation for result in op.results for use in result.uses}
            if op in chain.reductions and self._read_after(users - between, chain):
                continue  # the kernel yields the rows' max and sums
            if op not in self.duplicable and not users <= between | {chain.output}:
                between.discard(op)
                if not users <= reachable:
                    used_outside.append(op)
        if not anchors <= between:
            if not used_outside:
                return "its matmul and reductions are not all between its matmuls"
            op = used_outside[0]  # the last in block order
            return f"{describe(op)} is also used outside it, so it is stored"
        ops = sorted(between | {chain.output}, key=self.position.__getitem__)
        problem = contract_violation(ATTENTION, ops, [chain.output.result])
        return frozenset(between) if problem is None else problem

    def _read_after(self, users: set[Operation], chain: AttentionChain) -> bool:
        """Whether ``users`` of a reduction of ``chain`` all come after its
        output matmul (a backward's): its attention kernel, placed there,
        is the first to compute the reduction, so it yields it to them."""
        output = self.position[chain.output]
        return all(self.position[user] > output for user in users)

    def _kind_of(self, op: Operation) -> Kind:
        """The kind of a group rooted at ``op``: its own nature, an
        attention group's for the last matmul of a chain."""
        if isinstance(op, MatmulOp) and op in self.chains:
            return self.chains[op]
        if isinstance(op, MatmulOp) and op in self.walks:
            return Kind(ATTENTION_BACKWARD, shape_of(op.result), walk=self.walks[op])
        return Kind.of(op)

    def _users(self, op: Operation) -> tuple[list[Group], list[Operation], bool]:
        """The groups using ``op``; the ops using it outside any group (they
        cannot read a kernel placed after them); whether it is returned."""
        groups: list[Group] = []
        outside: list[Operation] = []
        returned = False
        for result in op.results:
            for use in result.uses:
                user = use.operation
                if isinstance(user, func.ReturnOp | RegionYieldOp):
                    returned = True
                elif user in self.groups_of:
                    groups.extend(g for g in self.groups_of[user] if g not in groups)
                else:
                    outside.append(user)
        return groups, outside, returned

    # Placing ops ---------------------------------------------------------------

    def _place(self, op: Operation) -> None:
        """Join the users' group, or duplicate a layout op into several
        groups, or root a group.

        A layout op used by several groups is duplicated: it only changes
        how its operand is read, so a copy in each user costs nothing,
        whereas a kernel of its own would write a copy of its result (the
        q/k/v split of attention would need three)."""
        groups, outside, returned = self._users(op)
        walk = self.walks.get(op) if isinstance(op, MatmulOp) else None
        if walk is not None and walk in self.walk_groups and not outside:
            # Another matmul walking the same axis: its kernel's result too.
            group = self.walk_groups[walk]
            self._join(group, op, group.kind, home=True, returned=True)
        elif outside:
            self._root(op, [KeptOut(op, tuple(groups), _used_outside(outside))])
        elif len(groups) > 1 and isinstance(op, LAYOUT_OPS):
            self._duplicate(op)
        elif len(groups) > 1:
            not_recomputed = self._recompute(op, groups, returned)
            if not_recomputed is None:
                return
            if self._save_in_earliest(op, groups, not_recomputed):
                return
            why = f"its users are in {len(groups)} kernels"
            note = KeptOut(op, tuple(groups), why, split=True, detail=not_recomputed)
            self._root(op, [note])
        elif groups:
            offer = self.offer(groups[0], op, returned)
            if isinstance(offer, Kind):
                self._join(groups[0], op, offer, home=True, returned=returned)
            else:
                self._root(op, [KeptOut(op, (groups[0],), offer)])
        else:
            self._root(op, [])

    def _recompute(
        self, op: Operation, groups: Sequence[Group], returned: bool
    ) -> str | None:
        """Rematerialisation: clone an elementwise ``op`` into each group
        using it when all of them accept it, rather than storing its result
        for them. Its operands are then read by each of those groups, so
        the values that end up stored are the anchors' results (reductions,
        matmuls) and arguments, and a pointwise chain between them is
        recomputed where it is used (as in the backward kernels of a joint
        function, which read the forward's row statistics, not its
        pointwise intermediates). The arithmetic is not weighed (an
        elementwise op is memory-bound, so recomputing it costs less than
        writing and re-reading its result), the reads are: the chain, of
        ``CHAIN_LIMIT`` ops at most, may read one tensor of its shape
        (``exp(x - max)`` reads ``x``; a broadcast per-row value or bias is
        a small read), not two (``x @ w + residual`` is stored). For a
        forward value of a joint function that its backward uses, the
        min-cut of ``irc.lowering.saved_activations`` decides instead,
        weighing the whole graph: it recomputes such a chain when what it
        reads is saved anyway.

        Returns None when ``op`` was recomputed, else why it is stored."""
        if isinstance(op, ROW_OPS):
            return "it is a reduction"
        if isinstance(op, MatmulOp):
            return "it is a matmul"
        if not isinstance(op, ELEMENTWISE_OPS):
            return f"{op.name} is not elementwise"
        if returned:
            return "it is returned"
        reads = self._chain_reads(op)
        if reads is None:
            return f"its elementwise chain is longer than {CHAIN_LIMIT} ops"
        saved = self.saved_activations.saved.get(op)
        if saved is not None:
            return f"the min-cut of forward and backward saves it: {saved}"
        cut_recomputes = op in self.saved_activations.recomputed
        if len(reads) > 1 and not cut_recomputes:
            return f"it would read {len(reads)} tensors of its shape"
        offers = [self.offer(group, op, returned=False) for group in groups]
        refusals = [offer for offer in offers if isinstance(offer, str)]
        if refusals:
            return f"a kernel using it refuses it: {refusals[0]}"
        for group, offer in zip(groups, offers):
            assert isinstance(offer, Kind)
            self._join(group, op, offer, home=False, returned=False)
        self.recomputed.add(op)
        return None

    def _chain_reads(self, op: Operation) -> set[SSAValue] | None:
        """The distinct values of ``op``'s shape that its elementwise chain
        (through elementwise producers and broadcasts) reads: what a kernel
        recomputing ``op`` reads at that size. None for a chain of more
        than ``CHAIN_LIMIT`` ops, which is not followed (fusing would be
        quadratic in a long elementwise program) and not recomputed."""
        reads, complete = self._walk_chain(op, stop_at_saved=True)
        return reads if complete else None

    def _walk_chain(
        self, op: Operation, *, stop_at_saved: bool = False
    ) -> tuple[set[SSAValue], bool]:
        """The values of ``op``'s shape that its elementwise chain reads
        within its first ``CHAIN_LIMIT`` ops (walked from ``op`` up), and
        whether the chain ended within them; with ``stop_at_saved``, a
        value the min-cut of forward and backward saves is read, not
        walked through (a kernel recomputing ``op`` would read it)."""
        shape = shape_of(op.results[0])
        reads: set[SSAValue] = set()
        chain, seen = [op], {op}
        while chain:
            for operand in chain.pop().operands:
                owner = operand.owner
                if shape_of(operand) != shape or owner in self.anywhere:
                    continue
                saved = stop_at_saved and owner in self.saved_activations.saved
                if isinstance(owner, (*ELEMENTWISE_OPS, BroadcastOp)) and not saved:
                    if owner not in seen:
                        seen.add(owner)
                        chain.append(owner)
                else:
                    reads.add(operand)
            if len(seen) > CHAIN_LIMIT:
                return reads, False
        return reads, True

    def _reads_a_matmul(self, op: Operation) -> bool:
        """Whether an elementwise ``op`` reads a matmul's result through
        its elementwise chain: as the matmul's epilogue it is computed
        while that result is at hand, which a reduction kernel cannot.
        Only the chain's first ``CHAIN_LIMIT`` ops are looked at, so that
        the answer is the same for an op whatever lies beyond them (the
        residual adds of the tenth layer of a stack and of the first)."""
        reads, _ = self._walk_chain(op)
        return any(isinstance(value.owner, MatmulOp) for value in reads)

    def _save_in_earliest(
        self, op: Operation, groups: Sequence[Group], why: str
    ) -> bool:
        """Multi-output fusion: ``op`` joins the group of its users that
        stands first (its kernel is placed at its root, before every other
        user's kernel), which yields ``op``'s result to the others; a
        reduction read by several kernels of its rows (cross-entropy's max
        and sum of exponentials) is computed by the first of them."""
        earliest = min(groups, key=lambda group: self.position[group.root])
        if (
            earliest.kind.rows is not None
            and isinstance(op, ELEMENTWISE_OPS)
            and self._reads_a_matmul(op)
        ):
            return False  # rooted, it is the matmul's epilogue instead
        offer = self.offer(earliest, op, returned=True)
        if not isinstance(offer, Kind):
            return False
        self._join(earliest, op, offer, home=True, returned=True)
        readers = tuple(group for group in groups if group is not earliest)
        earliest.saved_for.append(Saved(op, readers, why))
        return True

    def _duplicate(self, op: Operation) -> None:
        """Clone ``op`` into every group using it that accepts it; give it a
        group of its own if the function returns it (and it cannot join its
        only user's group as an output) or a group refuses it."""
        groups, outside, returned = self._users(op)
        offers = {group: self.offer(group, op, returned=False) for group in groups}
        refused = [group for group, offer in offers.items() if isinstance(offer, str)]
        if returned and len(groups) == 1 and not refused and not outside:
            offer = self.offer(groups[0], op, returned=True)
            if isinstance(offer, Kind):
                self._join(groups[0], op, offer, home=True, returned=True)
                return
        for group, offer in offers.items():
            if isinstance(offer, Kind):
                self._join(group, op, offer, home=False, returned=False)
        if returned or refused or outside:
            kept = [KeptOut(op, (g,), str(offers[g]), "duplicated") for g in refused]
            if outside:
                kept.append(KeptOut(op, (), _used_outside(outside), "duplicated"))
            self._root(op, kept)

    def _root(self, op: Operation, kept_out: list[KeptOut]) -> None:
        group = Group(
            op, self._kind_of(op), yielded=list(op.results), kept_out=kept_out
        )
        group.members.add(op)
        self.groups.append(group)
        self.groups_of.setdefault(op, []).append(group)
        self.home[op] = group
        if group.kind.walk is not None:
            self.walk_groups[group.kind.walk] = group

    def _join(
        self, group: Group, op: Operation, kind: Kind, *, home: bool, returned: bool
    ) -> None:
        if (
            group.kind.matmuls
            and op not in group.kind.between
            and self._feeds_matmul(group, op)
        ):
            group.operand_side.add(op)
        group.kind = kind
        group.members.add(op)
        self.groups_of.setdefault(op, []).append(group)
        if home:
            self.home[op] = group
        if returned:
            group.yielded.extend(op.results)

    # What a group accepts ------------------------------------------------------

    def offer(self, group: Group, op: Operation, returned: bool) -> Offer:
        """The kind of ``group`` with ``op`` in it (yielding ``op``'s result
        when ``returned``), or why ``group`` refuses ``op``."""
        kind = ADMISSIONS[group.kind.kernel](self, group, op)
        if isinstance(kind, str):
            return kind
        if returned and kind.walk is not None:
            if not _of_accumulation(op, kind.walk):
                return (
                    "it is also returned, and an attention-backward kernel yields "
                    "only its matmuls' results and their epilogues' values"
                )
        elif returned and shape_of(op.results[0]) not in kind.output_shapes():
            return (
                f"it is also returned, and a {kind.kernel} kernel yields values of "
                f"shape {_shapes(kind.output_shapes())} only"
            )
        anchor = isinstance(op, (*ROW_OPS, MatmulOp))
        checked_whole = kind.chain is not None or kind.walk is not None
        if (anchor or (returned and kind.kernel is MATMUL)) and not checked_whole:
            # Only an anchor can break the contract, and a value a matmul
            # kernel yields: whatever joins later comes earlier in the
            # block, so it cannot use the anchor, and a matmul kernel yields
            # what it computes before its matmul only at the result's shape
            # (the tile covers no other). (An attention group's chain was
            # checked whole when it was found, an attention-backward
            # group's matmuls and cones when they were planned; what joins
            # them later is what their contracts admit, the epilogues
            # checked when they join, in merge_pointwise_consumers.)
            yielded = group.yielded + (list(op.results) if returned else [])
            ops = sorted(group.members | {op}, key=self.position.__getitem__)
            problem = contract_violation(kind.kernel, ops, yielded)
            if problem is not None:
                return problem
        return kind

    @ADMISSIONS.register(POINTWISE)
    def _pointwise_offer(self, group: Group, op: Operation) -> Offer:
        shape = group.kind.shape
        if isinstance(op, REDUCTION_OPS):
            rows = RowStructure.of(op)
            # Either form of the result: a reshape dropping the kept axes of
            # a keepdims reduction is a per-row consumer.
            if shape not in (rows.shape, *rows.reduced_shapes()):
                return (
                    f"it reduces {rows}, and neither its operand nor its result "
                    f"has the kernel's iteration shape {shape_text(shape)}"
                )
            return Kind.reduction(op)
        if isinstance(op, SCAN_OPS):
            if shape != shape_of(op.result):
                return (
                    f"it scans {shape_text(shape_of(op.result))}, not the kernel's "
                    f"iteration shape {shape_text(shape)}"
                )
            return Kind.scan(op)
        if isinstance(op, MatmulOp):
            result = shape_of(op.result)
            if op in self.walks:
                return (
                    "it belongs to an attention-backward kernel's walk, whose "
                    "epilogue joins that kernel afterwards where its contract "
                    "allows"
                )
            if shape == result:
                return self._kind_of(op)
            if op not in self.chains:
                # Its epilogue reads it through layout ops (a convolution's
                # split columns, a transpose): the kernel's contract says
                # whether each can be evaluated at the result tile.
                return Kind(MATMUL, shape, matmul=op)
            return (
                f"its result shape {shape_text(result)} is not the kernel's "
                f"iteration shape {shape_text(shape)}"
            )
        return group.kind

    @ADMISSIONS.register(REDUCTION)
    def _reduction_offer(self, group: Group, op: Operation) -> Offer:
        rows = group.kind.rows
        assert rows is not None
        if isinstance(op, MatmulOp):
            return "a reduction kernel never takes a matmul"
        if isinstance(op, ROW_OPS) and group.kind.scans != isinstance(op, SCAN_OPS):
            return (
                "a reduction and a scan do not share a kernel (the reduction's "
                "loop would need the scan's running carry)"
            )
        if isinstance(op, SCAN_OPS):
            other = RowStructure.of(op)
            if other != rows:
                return f"it scans {other}, the kernel {rows}"
            return group.kind
        if isinstance(op, REDUCTION_OPS):
            other = RowStructure.of(op)
            if other != rows:
                return f"it reduces {other}, the kernel {rows}"
            return Kind.reduction(op, group.kind)
        if op in self.anywhere:
            return group.kind
        # A per-row value may take either form of a reduction's result
        # (keepdims or not) before the reduction producing it has joined.
        allowed = (rows.shape, *rows.reduced_shapes())
        if isinstance(op, LAYOUT_OPS) and not any(
            shape_of(operand) in allowed for operand in op.operands
        ):
            # An index map of values of other shapes, which no op of a row
            # kernel computes: read from memory where its users read it.
            return group.kind
        if shape_of(op.results[0]) not in allowed:
            return (
                f"its shape {shape_text(shape_of(op.results[0]))} is neither the "
                f"rows' nor a reduction result's ({_shapes(allowed)})"
            )
        return group.kind

    @ADMISSIONS.register(ATTENTION)
    def _attention_offer(self, group: Group, op: Operation) -> Offer:
        """The chain's ops between its matmuls, then operand sides and an
        epilogue as a matmul group takes them."""
        if op in group.kind.between:
            return group.kind
        if isinstance(op, (MatmulOp, *ROW_OPS)):
            return (
                "an attention kernel holds only its chain's two matmuls and "
                "the reductions between them"
            )
        return self._matmul_offer(group, op)

    @ADMISSIONS.register(ATTENTION_BACKWARD)
    def _walk_offer(self, group: Group, op: Operation) -> Offer:
        """The walk's matmuls and cone, then what reads memory at a score
        or at an operand tile: layout ops, sources and elementwise ops of
        values other than the scores."""
        walk = group.kind.walk
        assert walk is not None
        if op in walk.ops:
            return group.kind
        if isinstance(op, (MatmulOp, *ROW_OPS)):
            return (
                "an attention-backward kernel holds only its walk's matmuls, "
                "and reduces nothing but them"
            )
        if isinstance(op, (*ELEMENTWISE_OPS, *LAYOUT_OPS)) or is_source(op):
            return group.kind
        return f"{op.name} cannot be read at a block of scores"

    @ADMISSIONS.register(MATMUL)
    def _matmul_offer(self, group: Group, op: Operation) -> Offer:
        if isinstance(op, MatmulOp):
            return "a matmul kernel holds only one matmul"
        if isinstance(op, ROW_OPS):
            return "a matmul kernel takes no reduction or scan"
        if self._feeds_matmul(group, op):
            if not loads_operand_tiles(op):
                return (
                    "it feeds the matmul's operands, where only layout ops, "
                    "concats, splats, casts and scalings by a constant go"
                )
            return group.kind
        if not (isinstance(op, (*ELEMENTWISE_OPS, *INDEXING_OPS)) or is_source(op)):
            return f"{op.name} cannot join a matmul's epilogue"
        shape = shape_of(op.results[0])
        if not self._broadcasts_to_epilogue(group, shape):
            return (
                f"its shape {shape_text(shape)} does not broadcast to the "
                "matmul's result or its epilogue's values"
            )
        return group.kind

    def _broadcasts_to_epilogue(self, group: Group, shape: Shape) -> bool:
        """Whether ``shape`` broadcasts to a value of ``group``'s epilogue:
        the result, its kernel's shape, or where layout ops put the result
        (looked through only when the first two fail)."""
        assert group.kind.matmul is not None
        result = shape_of(group.kind.matmul.result)
        if broadcasts_to(shape, result) or broadcasts_to(shape, group.kind.shape):
            return True
        return any(
            broadcasts_to(shape, shape_of(value))
            for member in group.members - group.operand_side
            for value in member.results
        )

    def _feeds_matmul(self, group: Group, op: Operation) -> bool:
        """Whether ``op`` is on the operand side of ``group``'s matmul."""
        return any(
            use.operation in group.kind.matmuls or use.operation in group.operand_side
            for result in op.results
            for use in result.uses
        )


ADMISSIONS.check_complete()


def _used_outside(users: Sequence[Operation]) -> str:
    return f"its result is also used by {users[0].name}, outside kernels"


def _stays_outside(op: Operation) -> bool:
    """Guards, dense constants, the return and foreign ops keep their place;
    so do control-flow ops and their yields (their regions are fused on
    their own, as function bodies)."""
    return (
        isinstance(op, (GuardOp, RegionYieldOp, *CONTROL_FLOW_OPS))
        or is_dense_constant(op)
        or op.dialect_name() != "graph"
    )


def _shapes(shapes: Iterable[Shape]) -> str:
    return ", ".join(shape_text(s) for s in dict.fromkeys(shapes))


# --------------------------------------------------------------------------
# Reasons
# --------------------------------------------------------------------------


def describe(op: Operation) -> str:
    """``graph.exp %e at softmax.py:3``: the op's name, its result's name in
    the IR text if it had one, and the Python line that made it if known."""
    text = op.name
    if isinstance(op, ReduceOp | ScanOp):
        text += f" {op.kind.data}"
    hints = [r.name_hint for r in op.results if r.name_hint]
    if hints:
        text += " %" + hints[0]
    if (location := source_location(op, short=True)) is not None:
        text += f" at {location}"
    return text


def _op_names(ops: Sequence[Operation]) -> str:
    """Op names in order of first appearance, with counts: ``graph.sub,
    graph.broadcast x2``."""
    counts = Counter(op.name for op in ops)
    return ", ".join(
        name if counts[name] == 1 else f"{name} x{counts[name]}" for name in counts
    )


class _Reasons:
    """Writes each kernel's reason once every group is named."""

    def __init__(self, planner: _Planner):
        self.planner = planner

    def __call__(self, group: Group) -> str:
        ordered = sorted(group.members, key=self.planner.position.__getitem__)
        own = [op for op in ordered if self.planner.home.get(op) is group]
        copies = [op for op in ordered if self.planner.home.get(op) is not group]
        recomputed = [op for op in copies if op in self.planner.recomputed]
        duplicated = [op for op in copies if op not in self.planner.recomputed]
        parts = [self._anchor(group, own)]
        parts.extend(self._joined(group, own))
        if duplicated:
            parts.append(f"duplicated here: {_op_names(duplicated)}")
        if recomputed:
            parts.append(
                f"recomputed here, not stored: {_op_names(recomputed)} "
                "(elementwise, its users are in several kernels)"
            )
        parts.extend(map(self._saved, group.saved_for))
        parts.extend(
            f"{describe(root)} joined with its kernel: it reads only this "
            "kernel's values and arguments"
            for root in group.absorbed
        )
        parts.extend(self._kept_out(note) for note in group.kept_out)
        unfused = self.planner.unfused_chains
        parts.extend(
            f"no attention kernel with the matmul -> row reduction -> "
            f"{describe(op)} chain: {unfused[op]}"
            for op in own
            if isinstance(op, MatmulOp) and op in unfused
        )
        return "; ".join(parts)

    def _saved(self, saved: Saved) -> str:
        readers = sorted(saved.readers, key=lambda g: self.planner.position[g.root])
        names = ", ".join(g.name for g in readers)
        return f"{describe(saved.op)} stored for {names} (not recomputed: {saved.why})"

    def _anchor(self, group: Group, own: Sequence[Operation]) -> str:
        kind = group.kind
        if kind.rows is not None:
            reductions = [op for op in own if isinstance(op, ROW_OPS)]
            anchors = ", ".join(describe(r) for r in reductions)
            what = "scan" if kind.scans else "reduction"
            return f"row {what} {kind.rows} ({anchors})"
        if kind.chain is not None:
            return _attention_anchor(kind.chain)
        if kind.walk is not None:
            return _walk_anchor(kind.walk)
        if kind.matmul is not None:
            lhs, rhs = (shape_of(v) for v in kind.matmul.operands)
            result = shape_of(kind.matmul.result)
            stored = (
                "" if kind.shape == result else f" stored as {shape_text(kind.shape)}"
            )
            return (
                f"matmul {shape_text(lhs)} x {shape_text(rhs)} -> "
                f"{shape_text(result)}{stored} ({describe(kind.matmul)})"
            )
        return f"pointwise over {shape_text(kind.shape)} ({describe(group.root)})"

    def _joined(self, group: Group, own: Sequence[Operation]) -> list[str]:
        """What joined the anchor, by the side of it they are on."""
        kind = group.kind
        # Dependents through every member: a duplicated broadcast links a
        # reduction to the ops using its result.
        members = sorted(group.members, key=self.planner.position.__getitem__)
        if kind.rows is not None:
            anchors = [op for op in own if isinstance(op, ROW_OPS)]
            before = _dependencies(own, anchors)
            after = _dependents(members, anchors)
            labels = ("producers", "consumers", "side inputs")
        elif kind.chain is not None:
            return _attention_joined(group, own)
        elif kind.walk is not None:
            walk = kind.walk
            cone = [op for op in own if op in walk.ops - set(walk.accumulations)]
            return (
                [f"recomputed per block of scores: {_op_names(cone)}"] if cone else []
            )
        elif kind.matmul is not None:
            anchors = [kind.matmul]
            before, after = group.operand_side, _dependents(members, anchors)
            labels = ("prologue", "epilogue", "epilogue inputs")
        else:
            rest = [op for op in own if op is not group.root]
            return [f"fused: {_op_names(rest)}"] if rest else []
        rest = [op for op in own if op not in anchors]
        sides = (
            [op for op in rest if op in before],
            [op for op in rest if op in after and op not in before],
            [op for op in rest if op not in before and op not in after],
        )
        return [
            f"{label}: {_op_names(ops)}" for label, ops in zip(labels, sides) if ops
        ]

    def _kept_out(self, note: KeptOut) -> str:
        groups = sorted(note.groups, key=lambda g: self.planner.position[g.root])
        names = ", ".join(g.name for g in groups)
        if note.split:
            text = f"{describe(note.op)} not {note.verb}: {note.why} ({names})"
            return f"{text}, not recomputed: {note.detail}" if note.detail else text
        target = f" into {names}" if names else ""
        return f"{describe(note.op)} not {note.verb}{target}: {note.why}"


def _attention_anchor(chain: AttentionChain) -> str:
    """What an attention kernel computes, and why it is one kernel."""
    scores, output = chain.scores, chain.output
    lhs, rhs = (shape_text(shape_of(v)) for v in scores.operands)
    keys = shape_text(chain.keys.shape)
    reductions = ", ".join(describe(r) for r in chain.reductions)
    return (
        f"attention: matmul {lhs} x {rhs} -> {keys} ({describe(scores)}), its "
        f"rows reduced along the key axis ({reductions}), contracted along the "
        f"keys by matmul {keys} x {shape_text(shape_of(output.rhs))} -> "
        f"{shape_text(shape_of(output.result))} ({describe(output)}); one "
        "kernel (matmul -> row reduction -> matmul): it walks the keys in "
        "blocks with a running max m, rescaling the sums and the second "
        "product by exp(m_old - m_new) as m grows, and applies the per-row "
        f"factors after the walk, so the {keys} scores never reach memory"
    )


def _of_accumulation(op: Operation, walk: WalkPlan) -> bool:
    """Whether ``op`` is one of ``walk``'s matmuls or computes from one
    through elementwise and layout ops (an epilogue, which the kernel's
    contract checks), within ``CHAIN_LIMIT`` ops."""
    pending, seen = [op], {op}
    while pending and len(seen) <= CHAIN_LIMIT:
        current = pending.pop()
        if current in walk.accumulations:
            return True
        if isinstance(current, (*ELEMENTWISE_OPS, *LAYOUT_OPS)):
            owners = {o.owner for o in current.operands} - seen
            found = [owner for owner in owners if isinstance(owner, Operation)]
            seen.update(found)
            pending.extend(found)
    return False


def _walk_anchor(walk: WalkPlan) -> str:
    """What an attention-backward kernel computes, and why it is one."""
    matmuls = ", ".join(
        f"{shape_text(shape_of(op.lhs))} x {shape_text(shape_of(op.rhs))} "
        f"({describe(op)})"
        for op in walk.accumulations
    )
    scores = [op for op in walk.ops if isinstance(op, MatmulOp)]
    scores = [op for op in scores if op not in walk.accumulations]
    return (
        f"attention backward: matmul {matmuls} contracting scores that each "
        f"block recomputes from {len(scores)} matmul(s) of a head dim, so no "
        "score-shaped tensor is stored"
    )


def _attention_joined(group: Group, own: Sequence[Operation]) -> list[str]:
    """What joined an attention kernel, by where it is."""
    kind = group.kind
    assert kind.chain is not None
    anchors = {kind.chain.output, kind.chain.scores, *kind.chain.reductions}
    after = _dependents(own, [kind.chain.output])
    rest = [op for op in own if op not in anchors]
    sides = (
        [op for op in rest if op in group.operand_side],
        [op for op in rest if op in kind.between],
        [op for op in rest if op in after],
        [
            op
            for op in rest
            if op not in group.operand_side
            and op not in kind.between
            and op not in after
        ],
    )
    labels = ("prologue", "between the matmuls", "epilogue", "epilogue inputs")
    return [f"{label}: {_op_names(ops)}" for label, ops in zip(labels, sides) if ops]


def _dependents(
    ops: Sequence[Operation], anchors: Sequence[Operation]
) -> set[Operation]:
    """The ops of ``ops`` (in order) that use an anchor's result, transitively."""
    reached = {v for op in anchors for v in op.results}
    found: set[Operation] = set()
    for op in ops:
        if op not in anchors and any(v in reached for v in op.operands):
            found.add(op)
            reached.update(op.results)
    return found


def _dependencies(
    ops: Sequence[Operation], anchors: Sequence[Operation]
) -> set[Operation]:
    """The ops of ``ops`` (in order) that an anchor uses, transitively."""
    needed = {v.owner for op in anchors for v in op.operands}
    found: set[Operation] = set()
    for op in reversed(ops):
        if op in needed and op not in anchors:
            found.add(op)
            needed.update(v.owner for v in op.operands)
    return found


# --------------------------------------------------------------------------
# Building the kernels
# --------------------------------------------------------------------------


class _Builder:
    """Turns planned groups into ``fusion.kernel`` ops in place."""

    def __init__(self, planner: _Planner, first_index: int):
        self.planner = planner
        self.position = planner.position
        self.first_index = first_index

    def build(self, groups: Sequence[Group]) -> None:
        """Name the kernels ``k0``, ``k1``, ... in block order and place each
        where its root (its last op in block order) was. The order stays
        valid: a group reads another group's value only from that group's
        root (any other member has all its users inside its group), and the
        root precedes the reader."""
        groups = sorted(groups, key=lambda g: self.position[g.root])
        for index, group in enumerate(groups, self.first_index):
            group.name = f"k{index}"
        reasons = _Reasons(self.planner)
        replacements: dict[SSAValue, SSAValue] = {}
        for group in groups:
            kernel, outputs = self._kernel(group, reasons(group))
            self.planner.block.insert_op_before(kernel, group.root)
            replacements.update(zip(outputs, kernel.outputs))
        for original, result in replacements.items():
            original.replace_all_uses_with(result)
        # What is left of the originals only uses other originals.
        placed = sorted(self.planner.groups_of, key=self.position.__getitem__)
        for op in reversed(placed):
            self.planner.block.erase_op(op)

    def _kernel(self, group: Group, reason: str) -> tuple[KernelOp, list[SSAValue]]:
        """The kernel of ``group`` (clones of its members, its inputs in
        first-use order) and the original values its results stand for."""
        members = sorted(group.members, key=self.position.__getitem__)
        block = Block()
        inputs: list[SSAValue] = []
        mapping: dict[SSAValue, SSAValue] = {}
        for op in members:
            for operand in op.operands:
                if operand not in mapping:
                    argument = block.insert_arg(operand.type, len(block.args))
                    argument.name_hint = operand.name_hint
                    mapping[operand] = argument
                    inputs.append(operand)
            block.add_op(op.clone(mapping))
        # A root's results are read outside its group, a joined op's only
        # when it is returned: the yielded values are exactly those.
        outputs = sorted(group.yielded, key=lambda v: self.position[v.owner])
        _record_idioms(group.kind.kernel, list(block.ops))
        block.add_op(YieldOp([mapping[v] for v in outputs]))
        kernel = KernelOp(group.name, group.kind.kernel, inputs, Region(block), reason)
        return kernel, outputs


def _record_idioms(kind: KernelKind, ops: Sequence[Operation]) -> None:
    """Write on the kernel's reductions the idioms that compute them
    (online sums, centred sums, one-hot picks), so that ``tile`` reads the
    decision instead of making it again."""
    for op, idiom in kernel_idioms(kind, ops).items():
        op.attributes[IDIOM_ATTRIBUTE] = StringAttr(idiom)


def merge_sibling_reductions(planner: _Planner, groups: list[Group]) -> None:
    """Horizontal fusion: two reduction groups over the same rows, neither
    reading the other, become one kernel that reads the rows once (a max and
    an argmax of ``x``; ``x.mean(1)`` and ``(x * x).mean(1)``).

    The earlier group joins the later one, whose kernel stands at the later
    root, so every reader of the earlier group's results must come after it.
    """
    position = planner.position
    while True:
        reductions = sorted(
            (g for g in groups if g.kind.rows is not None),
            key=lambda g: position[g.root],
        )
        pair = next(
            (
                (first, second)
                for index, first in enumerate(reductions)
                for second in reductions[index + 1 :]
                if _can_merge(planner, first, second)
            ),
            None,
        )
        if pair is None:
            return
        first, second = pair
        _merge_into(planner, first, second)
        groups.remove(first)


def merge_pointwise_consumers(planner: _Planner, groups: list[Group]) -> None:
    """Multi-output fusion of a producer and its consumer: a pointwise group
    that reads only one other group's values (and arguments, and what it
    computes itself) joins that group, which then also yields what the
    pointwise group did. A layer norm's statistics and its normalized rows
    (stored apart when both are read by several kernels: the statistics by
    the backward, the rows by two matmuls) are then one kernel, and so is a
    matmul and the loss's cotangent computed from its result.

    The walk that forms the groups runs from the last op to the first, so
    an op used by several groups is placed before the group computing its
    operands exists; this is where a consumer finds its producer. The
    producer's kernel stands at its root, before the consumer's: the
    consumer reads nothing computed between them."""
    position = planner.position
    changed = True
    while changed:
        changed = False
        for consumer in sorted(groups, key=lambda g: position[g.root]):
            if consumer.kind.kernel is not POINTWISE:
                continue
            producer = _producer_to_join(planner, consumer)
            # An attention kernel's chain was checked whole when found: it
            # takes no epilogue after its last op.
            if producer is None or producer.kind.chain is not None:
                continue
            if _absorb(planner, producer, consumer):
                groups.remove(consumer)
                changed = True
                break


def _producer_to_join(planner: _Planner, consumer: Group) -> Group | None:
    """The group ``consumer`` may join: the one whose values it reads, if
    it reads one, or, if it reads several groups' values, the last of them
    when that one reads the others' values too (a layer norm's rows read
    the residual sum that the statistics' kernel reads, stored by the
    matmul whose epilogue computes it). Each of its ops must read them
    elementwise (a per-row value of a reduction broadcast along its rows,
    too): merged, those reads are at the tile or row the producer computes.
    Everything else it reads must be defined before that group's kernel."""
    reads: dict[Group, set[SSAValue]] = {}
    readers: list[tuple[Operation, Group]] = []
    outside: list[Operation] = []
    for member in consumer.members:
        for operand in member.operands:
            owner = operand.owner
            if not isinstance(owner, Operation) or owner in consumer.members:
                continue
            home = planner.home.get(owner)
            if home is None:
                if owner in planner.groups_of:
                    return None  # a copy of a duplicated op elsewhere
                outside.append(owner)  # a dense constant, control flow
                continue
            reads.setdefault(home, set()).add(operand)
            readers.append((member, home))
    if not reads:
        return None
    producer = max(reads, key=lambda group: planner.position[group.root])
    if producer is consumer:
        return None
    its_reads = {value for op in producer.members for value in op.operands}
    others = (values for group, values in reads.items() if group is not producer)
    if not all(values <= its_reads for values in others):
        return None
    if not all(
        _reads_in_place(member, home) and _reads_in_place(member, producer)
        for member, home in readers
    ):
        return None
    root = planner.position[producer.root]
    if any(planner.position[op] > root for op in outside):
        return None
    return producer


def _reads_in_place(reader: Operation, producer: Group) -> bool:
    """Whether ``reader`` reads a value of ``producer`` where the producer
    computes it: an elementwise op (its operands have its shape), or a
    broadcast of a reduction group's per-row value along the rows."""
    if isinstance(reader, ELEMENTWISE_OPS):
        return True
    if producer.kind.walk is not None:
        # An attention-backward kernel's epilogue, as a matmul's, may store
        # through layouts (its contract says which).
        return isinstance(reader, LAYOUT_OPS)
    return isinstance(reader, BroadcastOp) and producer.kind.rows is not None


def _absorb(planner: _Planner, producer: Group, consumer: Group) -> bool:
    """Offer ``consumer``'s members to ``producer`` from its root up, as
    the planner places ops; join them all if every one is accepted and
    the merged kernel keeps its contract."""
    trial = dataclasses.replace(producer, members=set(producer.members))
    members = sorted(consumer.members, key=planner.position.__getitem__, reverse=True)
    for member in members:
        yields = any(value in consumer.yielded for value in member.results)
        offer = planner.offer(trial, member, returned=yields)
        if isinstance(offer, str):
            return False
        trial.kind = offer
        trial.members.add(member)
    merged = {producer, consumer}
    yielded = [
        value
        for value in (*producer.yielded, *consumer.yielded)
        if _read_outside(planner, value, merged)
    ]
    ops = sorted(trial.members, key=planner.position.__getitem__)
    if contract_violation(trial.kind.kernel, ops, yielded):
        return False
    producer.kind = trial.kind
    producer.members = trial.members
    producer.yielded = yielded
    producer.operand_side |= consumer.operand_side
    # Why the consumer's root was a kernel of its own, and why an op of the
    # producer did not join the consumer alone, no longer hold.
    producer.kept_out = [
        n for n in producer.kept_out if not (n.groups and set(n.groups) <= merged)
    ]
    producer.kept_out.extend(n for n in consumer.kept_out if n.op is not consumer.root)
    producer.saved_for.extend(consumer.saved_for)
    producer.absorbed.extend((consumer.root, *consumer.absorbed))
    _rename_group(planner, consumer, producer)
    return True


def _can_merge(planner: _Planner, first: Group, second: Group) -> bool:
    if first.kind.rows != second.kind.rows:
        return False
    after = planner.position[second.root]
    for value in first.yielded:
        for use in value.uses:
            if _read_before(planner, use.operation, after, (first, second)):
                return False
    ops = sorted(first.members | second.members, key=planner.position.__getitem__)
    return contract_violation(REDUCTION, ops, [*first.yielded, *second.yielded]) is None


def _read_before(
    planner: _Planner, reader: Operation, position: int, merged: tuple[Group, Group]
) -> bool:
    """Whether ``reader`` (an op using a value of the merged groups) runs
    before ``position``: a kernel runs at its root, so a reader in another
    group runs where that group's root is; one inside the merged kernel
    reads the value there."""
    if isinstance(reader, func.ReturnOp | RegionYieldOp):
        return False
    groups = [g for g in planner.groups_of.get(reader, ()) if g not in merged]
    if reader not in planner.groups_of:
        return planner.position[reader] <= position
    return any(planner.position[g.root] <= position for g in groups)


def _read_outside(planner: _Planner, value: SSAValue, merged: set[Group]) -> bool:
    """Whether the return or an op of a group outside ``merged`` (a copy of
    a duplicated op, too) reads ``value``."""
    return any(
        use.operation not in planner.groups_of
        or not set(planner.groups_of[use.operation]) <= merged
        for use in value.uses
    )


def _merge_into(planner: _Planner, first: Group, second: Group) -> None:
    merged = {first, second}
    second.yielded.extend(v for v in first.yielded if _read_outside(planner, v, merged))
    second.members |= first.members
    second.kept_out.extend(first.kept_out)
    second.saved_for.extend(first.saved_for)

    second.kind = dataclasses.replace(
        second.kind,
        row_results=(*second.kind.row_results, *first.kind.row_results),
    )
    _rename_group(planner, first, second)


def _rename_group(planner: _Planner, old: Group, new: Group) -> None:
    """``new`` now holds ``old``'s members: every op, note and stored value
    naming ``old`` names ``new``."""

    # Reasons name the groups that read or refused an op.
    def renamed(groups: tuple[Group, ...]) -> tuple[Group, ...]:
        return tuple(dict.fromkeys(new if g is old else g for g in groups))

    for group in planner.groups:
        # A value that only the merged kernel reads is no longer stored.
        for saved in group.saved_for:
            saved.readers = tuple(g for g in renamed(saved.readers) if g is not group)
        group.saved_for = [saved for saved in group.saved_for if saved.readers]
        for note in group.kept_out:
            note.groups = renamed(note.groups)
    for op in old.members:
        if planner.home.get(op) is old:
            planner.home[op] = new
        homes = planner.groups_of.get(op, [])
        planner.groups_of[op] = [g for g in homes if g is not old]
        if new not in planner.groups_of[op]:
            planner.groups_of[op].append(new)


@dataclass(frozen=True)
class FusePass(ModulePass):
    """Group every function's graph ops into ``fusion.kernel`` ops.

    Afterwards a function body holds only ``sym.guard`` ops, dense
    ``graph.constant`` ops, kernels and its return; see the module docstring
    for how the groups are chosen.
    """

    name = "fuse"

    #: How many iterations of a cheap ``graph.while`` run per host decision
    #: (``irc.passes.while_unrolling``; 1: one, the loop as it is).
    while_factor: int = 8

    def __post_init__(self) -> None:
        check_factor(self.while_factor, "fuse option while-factor")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _refuse_calls(op)
        unroll_cheap_loops(op, self.while_factor, keep=_runs_on_device)
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp)]
        for function in functions:
            for block in function.body.blocks:
                fuse_nested(block)


def fuse_nested(block: Block, first_index: int = 0) -> int:
    """Fuse ``block`` and then, recursively, the region bodies of its
    control-flow ops, each as a function body of its own (they are isolated
    from above: what they read is a block argument); kernels are numbered
    from ``first_index`` on, in that order, so that names stay unique in the
    function. Returns the next free number."""
    next_index = first_index + len(fuse_block(block, first_index))
    for op in list(block.ops):
        if isinstance(op, CONTROL_FLOW_OPS):
            for region in op.regions:
                for inner in region.blocks:
                    next_index = fuse_nested(inner, next_index)
    return next_index


def _runs_on_device(loop: WhileOp) -> bool:
    """Whether ``loop``, fused as it is, runs inside one kernel
    (``device_while``): then it makes no host decision to save, and
    unrolling it would only make its body several kernels. Decided on a
    fused copy."""
    trial = loop.clone()
    for region in trial.regions:
        fuse_nested(region.block)
    found = device_while(trial, facts_in_scope(loop)) is not None
    trial.erase()
    return found


def _refuse_calls(module: ModuleOp) -> None:
    """Calls between functions run on the reference interpreter, but the
    lowering takes one function at a time: a call would reach the emitted
    module unlowered."""
    for op in module.walk():
        if isinstance(op, func.CallOp):
            caller = op.parent_op()
            while caller is not None and not isinstance(caller, func.FuncOp):
                caller = caller.parent_op()
            where = f" in @{caller.sym_name.data}" if caller else ""
            raise PassFailedException(
                f"fuse: func.call @{op.callee.string_value()}{where} is not "
                "supported: irc lowers each function on its own; inline the callee "
                "(a Python function called while tracing is inlined)"
            )


def fuse_block(block: Block, first_index: int = 0) -> list[KernelOp]:
    """Fuse the graph ops of ``block`` into kernels named ``k<first_index>``
    on; returns them in order."""
    decompose_scatter_adds(block)
    planner = _Planner(block, plan_score_walks(block))
    groups = planner.plan()
    merge_sibling_reductions(planner, groups)
    merge_pointwise_consumers(planner, groups)
    _Builder(planner, first_index).build(groups)
    return [op for op in block.ops if isinstance(op, KernelOp)]
