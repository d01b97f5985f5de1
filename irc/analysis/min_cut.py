"""Minimum s-t cuts of small flow networks, by Dinic's maximum flow.

``fuse`` asks for one per joint function (``irc.lowering.saved_activations``):
a few hundred nodes per transformer block. Written here rather than taken
from networkx, whose import alone (about 0.2 s) costs more than fusing a
training step; the tests check it against networkx.

Capacities are integers, or ``None`` for an edge no cut may cross; the
network must have a cut of finite capacity.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

Node = TypeVar("Node", bound=Hashable)


@dataclass(frozen=True)
class Cut(Generic[Node]):
    """A minimum cut: its capacity, and the nodes on the source's side (the
    sink's side is the rest); the edges it crosses are those from the one
    side to the other."""

    capacity: int
    source_side: frozenset[Node]


class FlowNetwork(Generic[Node]):
    """A directed graph with edge capacities (parallel edges add up)."""

    def __init__(self) -> None:
        self._nodes: dict[Node, int] = {}
        # Edge ``e`` goes to ``_heads[e]``; ``e ^ 1`` is its residual twin.
        self._heads: list[int] = []
        self._capacities: list[int | None] = []
        self._outgoing: list[list[int]] = []

    def add_edge(self, tail: Node, head: Node, capacity: int | None) -> None:
        """An edge of ``capacity`` (``None``: unbounded) from ``tail`` to
        ``head``."""
        if capacity is not None and capacity < 0:
            raise ValueError(f"a capacity must not be negative, not {capacity}")
        for node, target, amount in ((tail, head, capacity), (head, tail, 0)):
            self._outgoing[self._index(node)].append(len(self._heads))
            self._heads.append(self._index(target))
            self._capacities.append(amount)

    def min_cut(self, source: Node, sink: Node) -> Cut[Node]:
        """A cut of least capacity separating ``sink`` from ``source``."""
        start, end = self._index(source), self._index(sink)
        finite = sum(c for c in self._capacities if c is not None)
        unbounded = finite + 1  # more than any cut of finite capacity
        residual = [unbounded if c is None else c for c in self._capacities]
        flow = 0
        while (levels := self._levels(residual, start)) and levels[end] >= 0:
            flow += self._blocking_flow(residual, levels, start, end)
        if flow >= unbounded:
            raise ValueError("every cut of this network crosses an unbounded edge")
        reached = self._levels(residual, start)
        side = frozenset(name for name, i in zip(self._nodes, reached) if i >= 0)
        return Cut(flow, side)

    def _index(self, node: Node) -> int:
        index = self._nodes.get(node)
        if index is None:
            index = self._nodes[node] = len(self._nodes)
            self._outgoing.append([])
        return index

    def _levels(self, residual: list[int], start: int) -> list[int]:
        """Each node's distance from ``start`` over edges with residual
        capacity (-1: unreachable)."""
        levels = [-1] * len(self._nodes)
        levels[start] = 0
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for edge in self._outgoing[node]:
                head = self._heads[edge]
                if residual[edge] > 0 and levels[head] < 0:
                    levels[head] = levels[node] + 1
                    queue.append(head)
        return levels

    def _blocking_flow(
        self, residual: list[int], levels: list[int], start: int, end: int
    ) -> int:
        """Augment along shortest paths until none is left at these levels."""
        next_edge = [0] * len(self._nodes)
        total = 0
        while True:
            path: list[int] = []
            node = start
            while node != end:
                outgoing = self._outgoing[node]
                while next_edge[node] < len(outgoing):
                    edge = outgoing[next_edge[node]]
                    head = self._heads[edge]
                    if residual[edge] > 0 and levels[head] == levels[node] + 1:
                        break
                    next_edge[node] += 1
                else:  # a dead end: retreat
                    if node == start:
                        return total
                    levels[node] = -1
                    node = self._heads[path.pop() ^ 1]
                    next_edge[node] += 1
                    continue
                path.append(edge)
                node = head
            pushed = min(residual[edge] for edge in path)
            for edge in path:
                residual[edge] -= pushed
                residual[edge ^ 1] += pushed
            total += pushed
