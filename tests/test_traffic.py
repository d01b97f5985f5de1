"""benchmarks/traffic.py counts what kernels load and store (requested, and
distinct as an L2 would serve re-reads), and its sampled grids estimate the
full run.

The benchmark runs only some program ids of large grids; these tests run
it at small bindings both ways and require the same bytes, and check the
counts against what a program must move (each input read once, each output
written once, for kernels that read each element once).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import traffic

PROGRAMS = {p.name: p for p in traffic.gpu.programs()}


@given(
    size=st.integers(1, 10_000),
    samples=st.integers(1, 8),
    full_limit=st.integers(0, 64),
    window=st.integers(1, 40),
)
def test_sampled_programs_stand_for_the_whole_axis(
    size: int, samples: int, full_limit: int, window: int
) -> None:
    sampled = traffic.sampled_axis(size, samples, full_limit, window)
    ids = [i for i, _ in sampled]
    assert ids == sorted(set(ids)), "program ids repeat or are out of order"
    assert ids[0] >= 0 and ids[-1] < size
    assert sum(w for _, w in sampled) == pytest.approx(size)
    if size <= full_limit:
        assert ids == list(range(size))


@pytest.mark.parametrize(
    ("name", "sizes", "window", "tolerance"),
    [
        # 4 column blocks a row block: a period dividing the window.
        ("elementwise_broadcast", {"N": 150, "D": 512}, 4, 0.0),
        ("softmax", {"N": 40, "D": 300}, 4, 0.0),
        ("head_split", {"N": 50}, 4, 0.0),
        # 3 column blocks a row block, the last one lighter: approximate.
        ("elementwise_broadcast", {"N": 600, "D": 300}, 32, 0.03),
        # 12 blocks of 64 queries, each reading the keys up to its last row:
        # affine in the program id, sampled symmetrically about the middle.
        ("causal_attention", {"S": 760}, 2, 0.0),
    ],
)
def test_sampled_grids_estimate_the_full_run(
    name: str, sizes: dict[str, int], window: int, tolerance: float
) -> None:
    program = PROGRAMS[name]
    sampled = traffic.measure_traffic(program, sizes, 2, 4, window)
    full = traffic.measure_traffic(program, sizes, full_limit=sys.maxsize)
    assert any(k["programs_run"] < k["programs"] for k in sampled["kernels"].values())
    for kernel, counts in full["kernels"].items():
        assert counts["programs_run"] == counts["programs"]
        for key in ("loaded", "stored", "distinct_loaded", "distinct_stored"):
            # A broadcast operand's part that only interior programs read
            # counts for their weight: distinct bytes are within 1%.
            rel = max(tolerance, 0.01) if key.startswith("distinct") else tolerance
            assert sampled["kernels"][kernel][key] == pytest.approx(
                counts[key], rel=rel, abs=1e-6
            ), (kernel, key)


@pytest.mark.parametrize(
    ("name", "sizes"),
    [
        ("adam_step", {"N": 5000}),
        ("head_split", {"N": 37}),
        ("elementwise_broadcast", {"N": 33, "D": 130}),
    ],
)
def test_kernels_reading_each_element_once_move_the_ideal(
    name: str, sizes: dict[str, int]
) -> None:
    """A pointwise kernel reads each input element once and writes each
    output element once: exactly the ideal (the broadcast operands of
    elementwise_broadcast are read once per block row or column, so a
    little more)."""
    row = traffic.measure_traffic(PROGRAMS[name], sizes, full_limit=sys.maxsize)
    if name == "elementwise_broadcast":
        assert 1.0 < row["ratio"] < 1.2, row
    else:
        assert row["bytes"] == row["ideal"], row


def test_distinct_bytes_count_each_address_once_per_launch() -> None:
    """The attention kernel requests k and v once per block of 64 queries,
    but touches each element of q, k, v and the output once: its distinct
    bytes are the ideal, and the requested bytes several times it."""
    row = traffic.measure_traffic(
        PROGRAMS["causal_attention"], {"S": 300}, full_limit=sys.maxsize
    )
    (kernel,) = row["kernels"].values()
    assert kernel["distinct_loaded"] == 3 * 300 * 64 * 4
    assert kernel["distinct_stored"] == 300 * 64 * 4
    assert row["dram"] == row["ideal"] and row["fits_l2"]
    assert row["ratio"] > 2


def test_distinct_bytes_of_a_pointwise_kernel_are_its_requests() -> None:
    row = traffic.measure_traffic(PROGRAMS["adam_step"], {"N": 5000})
    assert row["dram"] == row["bytes"] == row["ideal"]
