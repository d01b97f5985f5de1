"""irc.analysis.min_cut against networkx, the maximum-flow library it
stands in for (networkx is torch's dependency, so the test extra has it)."""

from __future__ import annotations

import math

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irc.analysis.min_cut import FlowNetwork

Edge = tuple[int, int, int | None]


@st.composite
def networks(draw: st.DrawFn) -> tuple[int, list[Edge]]:
    """A node count and edges between distinct nodes, some unbounded; the
    source is node 0, the sink the last."""
    count = draw(st.integers(2, 9))
    node = st.integers(0, count - 1)
    capacity = st.one_of(st.none(), st.integers(0, 30))
    edge = st.tuples(node, node, capacity).filter(lambda e: e[0] != e[1])
    return count, draw(st.lists(edge, max_size=30))


def reference(count: int, edges: list[Edge]) -> float | None:
    """networkx's minimum cut capacity; None when no cut is finite."""
    graph = nx.DiGraph()
    graph.add_nodes_from(range(count))
    for tail, head, capacity in edges:
        amount = math.inf if capacity is None else capacity
        if graph.has_edge(tail, head):
            graph[tail][head]["capacity"] += amount
        else:
            graph.add_edge(tail, head, capacity=amount)
    try:
        return nx.minimum_cut_value(graph, 0, count - 1)
    except nx.NetworkXUnbounded:
        return None


@settings(max_examples=300, deadline=None)
@given(networks())
def test_the_minimum_cut_is_networkxs(network: tuple[int, list[Edge]]) -> None:
    """Its capacity is networkx's, and it is a cut of that capacity: the
    edges from its source side to the rest add up to it, none unbounded."""
    count, edges = network
    flow: FlowNetwork[int] = FlowNetwork()
    for tail, head, capacity in edges:
        flow.add_edge(tail, head, capacity)
    expected = reference(count, edges)
    if expected is None:
        with pytest.raises(ValueError, match="unbounded"):
            flow.min_cut(0, count - 1)
        return
    cut = flow.min_cut(0, count - 1)
    assert cut.capacity == expected
    assert 0 in cut.source_side and count - 1 not in cut.source_side
    crossing = [
        capacity
        for tail, head, capacity in edges
        if tail in cut.source_side and head not in cut.source_side
    ]
    assert None not in crossing
    assert sum(crossing) == cut.capacity


def test_a_sink_out_of_reach_is_cut_by_nothing() -> None:
    flow: FlowNetwork[str] = FlowNetwork()
    flow.add_edge("s", "a", 3)
    cut = flow.min_cut("s", "t")
    assert cut.capacity == 0
    assert cut.source_side == {"s", "a"}


def test_a_negative_capacity_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        FlowNetwork().add_edge("s", "t", -1)
