"""The bounds checker (``irc.analysis.bounds``): every suite program and
generated program is proven in bounds at the loop, memory and triton
levels; each index mutation of issue 16 (a dropped load or store mask, a
grid axis one too large, a ``lt`` bound made ``le``, swapped index
operands) is flagged at each level with the access, the buffer and a
binding that breaks it; on suite programs and their mutants it agrees with
the memory interpreter's own access checks; ``check_pass`` blames the pass
that makes an access out of bounds. The irc-opt flag is tested in
``tests/filecheck/irc-opt/check-bounds*.mlir``.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

import pytest
from bounds_mutations import MUTATIONS
from hypothesis import HealthCheck, given, settings
from suite_programs import SUITE
from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irc import testing
from irc.analysis.bounds import BoundsViolation, check_bounds
from irc.analysis.bounds.core import (
    Interval,
    KernelIntervals,
    facts_of,
    floor_quotient,
)
from irc.dialects import memory
from irc.ir import default_context, parse_module, print_module, verify_module
from irc.shapes import Facts, SymExpr, parse_expr
from irc.testing import PassCheckError
from irc.testing.semantics import resolve_passes

LEVELS = ("loop", "memory", "triton")

#: A counter-example as the checker reports it: the binding, the program
#: id, and then the lane and what it reads or writes.
COUNTER_EXAMPLE = re.compile(
    r"out of bounds of .+: with (\w+ = \d+)(, \w+ = \d+)*, program id \[\d+(, \d+)*\]"
    r".*, lane \[(\d+(, \d+)*)?\] (reads|writes) (offset -?\d+, outside \[0, \d+\)|"
    r"index \[-?\d+(, -?\d+)*\], outside the shape \[\d+(, \d+)*\])$"
)


@functools.cache
def suite_ir(name: str, level: str) -> str:
    return SUITE[name].compile().ir(level)


def violations_of(text: str) -> list[BoundsViolation]:
    module = parse_module(text)
    verify_module(module)
    return check_bounds(module)


# Programs in bounds ---------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", sorted(SUITE))
def test_every_suite_program_is_in_bounds(name: str, level: str) -> None:
    assert violations_of(suite_ir(name, level)) == []


_PIPELINE = resolve_passes("fuse,tile,bufferize,lower-memory-to-triton")


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(testing.programs())
def test_generated_programs_are_in_bounds_at_every_level(module: ModuleOp) -> None:
    """Each pass of the pipeline leaves a module whose kernels are proven in
    bounds (graph and fusion modules have none)."""
    ctx = default_context()
    lowered = module.clone()
    for step in _PIPELINE:
        step.apply(ctx, lowered)
        found = check_bounds(lowered)
        assert not found, f"after {step.name}: {found[0]}\n{print_module(lowered)}"


#: Graph programs whose kernels need more than interval arithmetic: a
#: divisor that may be 0 when no lane is active (``N - 1``, ``(N + 1)
#: floordiv 2 - 1``), nested floor divisions (a slice of a slice), an empty
#: dim (no lane at all), a row kernel over ``N - 1`` rows.
HARD_PROGRAMS = {
    "divisor N - 1": ("[N, N]", "graph.slice %x [0, 1] [1, 1]", "[N, N - 1]"),
    "nested slices": (
        "[N, N]",
        "graph.slice %x [0, 0] [1, 2]",
        "[N, (N + 1) floordiv 2]",
        "graph.slice %y [0, 0] [1, 2]",
        "[N, ((N + 1) floordiv 2 + 1) floordiv 2]",
    ),
    "empty dim": ("[N, 1, N]", "graph.slice %x [0, 1, 0] [1, 1, 1]", "[N, 0, N]"),
    "a reversed odd-stride slice of a reshaped cube": (
        "[N, N, N]",
        "graph.reshape %x",
        "[N*N*N]",
        "graph.slice %y [N*N*N - 1] [-2]",
        "[(N*N*N + 1) floordiv 2]",
    ),
    "rows over N - 1": (
        "[M, N, K]",
        "graph.slice %x [0, 1, 0] [1, 1, 1]",
        "[M, N - 1, K]",
        "graph.reduce sum %y [2]",
        "[M, N - 1]",
    ),
}


def _graph_program(source: str, first: str, middle: str, *rest: str) -> str:
    """``func @main(%x: source) { %y = first : ... -> middle; ... }``, with
    a row sum at the end, so that some kernel is a reduction."""
    lines = [
        f"%y = {first} : !graph.tensor<{source}, f32> -> !graph.tensor<{middle}, f32>"
    ]
    result = middle
    if rest:
        second, result = rest
        lines.append(
            f"%z = {second} : !graph.tensor<{middle}, f32> -> !graph.tensor<{result}, f32>"
        )
    last = "%z" if rest else "%y"
    body = "\n  ".join(lines)
    return (
        f"func.func @main(%x: !graph.tensor<{source}, f32>) -> "
        f"!graph.tensor<{result}, f32> {{\n  {body}\n  %e = graph.exp {last} : "
        f"!graph.tensor<{result}, f32>\n  func.return %e : !graph.tensor<{result}, f32>\n}}\n"
    )


@pytest.mark.parametrize("name", sorted(HARD_PROGRAMS))
def test_hard_kernels_are_proven_in_bounds(name: str) -> None:
    module = parse_module(_graph_program(*HARD_PROGRAMS[name]))
    verify_module(module)
    ctx = default_context()
    for step in _PIPELINE:
        step.apply(ctx, module)
        found = check_bounds(module)
        assert not found, f"after {step.name}: {found[0]}\n{print_module(module)}"


#: A read of ``%a1`` at ``N - 2`` under the mask ``N - 2 >= 0``: found by
#: Hypothesis, where the mask compares exactly known values (no lane, no
#: iteration) and proves the read in bounds only as a fact of the symbols.
GUARDED_BY_EXACT_VALUES = """
func.func @main(%a0: !graph.tensor<[N], f32>, %a1: !graph.tensor<[N - 1], f32>) -> !graph.tensor<[1], f32> {
  %0 = graph.insert_slice %a1 into %a0 [1] [1] : !graph.tensor<[N - 1], f32> -> !graph.tensor<[N], f32>
  %1 = graph.slice %0 [N - 1] [1] : !graph.tensor<[N], f32> -> !graph.tensor<[1], f32>
  func.return %1 : !graph.tensor<[1], f32>
}
"""


def _proven_at_every_step(text: str) -> None:
    module = parse_module(text)
    ctx = default_context()
    for step in _PIPELINE:
        step.apply(ctx, module)
        found = check_bounds(module)
        assert not found, f"after {step.name}: {found[0]}\n{print_module(module)}"


def test_a_mask_of_exact_values_is_a_fact_of_the_access() -> None:
    _proven_at_every_step(GUARDED_BY_EXACT_VALUES)


def test_the_same_read_without_its_mask_is_flagged() -> None:
    module = parse_module(GUARDED_BY_EXACT_VALUES)
    ctx = default_context()
    for step in _PIPELINE[:2]:  # fuse, tile
        step.apply(ctx, module)
    text = print_module(module)
    masked = [
        line for line in text.splitlines() if "loop.read" in line and "mask" in line
    ]
    assert len(masked) == 1
    unmasked = masked[0].split(" mask ")[0] + " : " + masked[0].split(" : ", 1)[1]
    unmasked = unmasked.replace(" mask i1", "")
    found = violations_of(text.replace(masked[0], unmasked))
    (violation,) = found
    assert violation.message.startswith("loop.read reads out of bounds of %a1")
    assert "with N = 1," in violation.message  # %a1 is empty: offset -1


#: A scatter-add into ``[N, N, N - 1]``, found by Hypothesis: a program walks
#: 16 rows of the ``N*N*(N - 1)`` up to ``min(16*pid + 16, N*N*N - N*N)``
#: and splits each row's index by ``N - 1``, which is 0 at ``N = 1``, when
#: the loop runs no iteration.
ROWS_SPLIT_BY_A_DIVISOR_THAT_MAY_BE_ZERO = """
func.func @main(%a0: !graph.tensor<[N, N, N], f32>, %a1: !graph.tensor<[N], i32>) -> !graph.tensor<[N, N, N - 1], f32> {
  %0 = graph.slice %a0 [0, 0, 1] [1, 1, 1] : !graph.tensor<[N, N, N], f32> -> !graph.tensor<[N, N, N - 1], f32>
  %1 = graph.dim N : !graph.tensor<[], i32>
  %2 = graph.broadcast %1 : !graph.tensor<[], i32> -> !graph.tensor<[N], i32>
  %3 = graph.rem %a1, %2 : !graph.tensor<[N], i32>
  %4 = graph.scatter_add %0, %3 [0] : (!graph.tensor<[N, N, N - 1], f32>, !graph.tensor<[N], i32>) -> !graph.tensor<[N, N, N - 1], f32>
  func.return %4 : !graph.tensor<[N, N, N - 1], f32>
}
"""


def test_a_loop_bound_is_a_fact_of_the_accesses_in_its_body() -> None:
    _proven_at_every_step(ROWS_SPLIT_BY_A_DIVISOR_THAT_MAY_BE_ZERO)


# Strided slices of reshapes -------------------------------------------------------

#: Programs the checker once failed to prove in bounds (found by fuzzing
#: ``check_pass``), with the pipeline that lowered them to the access it
#: could not prove: a reshape's index split by ``M`` and joined back
#: (``(x rem M) + (x floordiv M)*M``) lost up to ``M - 1``; a slice at row
#: ``N*N - 1`` of a reshape divides by ``N*N`` with the remainder ``-N``,
#: which the prover bounds below by ``-inf`` unless the quotient is taken as
#: ``-ceil``; a reversed slice's row (of no proven sign) times its stride
#: ``N`` was left unbounded.
STRIDED_SLICES_OF_RESHAPES = {
    "a step-2 slice of two reshapes": (
        """
func.func @main(%a0: !graph.tensor<[M, N, N], f32>) -> !graph.tensor<[N, (M*N + 1) floordiv 2], f32> {
  %0 = graph.reshape %a0 : !graph.tensor<[M, N, N], f32> -> !graph.tensor<[N, N, M], f32>
  %1 = graph.reshape %0 : !graph.tensor<[N, N, M], f32> -> !graph.tensor<[N, M*N], f32>
  %2 = graph.neg %1 : !graph.tensor<[N, M*N], f32>
  %3 = graph.slice %2 [0, 0] [1, 2] : !graph.tensor<[N, M*N], f32> -> !graph.tensor<[N, (M*N + 1) floordiv 2], f32>
  func.return %3 : !graph.tensor<[N, (M*N + 1) floordiv 2], f32>
}
""",
        "fuse,tile",
    ),
    "a slice at row N*N - 1 of a reshape": (
        """
func.func @main(%a0: !graph.tensor<[N, N, N], f32>, %a1: !graph.tensor<[N*N, N, 1], f32>) -> !graph.tensor<[1, N, 1], f32> {
  %0 = graph.neg %a0 : !graph.tensor<[N, N, N], f32>
  %1 = graph.reshape %0 : !graph.tensor<[N, N, N], f32> -> !graph.tensor<[N*N, N, 1], f32>
  %2 = graph.add %1, %a1 : !graph.tensor<[N*N, N, 1], f32>
  %3 = graph.slice %2 [N*N - 1, 0, 0] [1, 1, 1] : !graph.tensor<[N*N, N, 1], f32> -> !graph.tensor<[1, N, 1], f32>
  func.return %3 : !graph.tensor<[1, N, 1], f32>
}
""",
        "fuse,tile,bufferize",
    ),
    "a step -2 slice of a step 2 slice": (
        """
func.func @main(%a0: !graph.tensor<[N, N, N], f32>) -> !graph.tensor<[N, (N + 3) floordiv 4, N], f32> {
  %0 = graph.neg %a0 : !graph.tensor<[N, N, N], f32>
  %1 = graph.slice %0 [0, 0, 0] [1, 2, 1] : !graph.tensor<[N, N, N], f32> -> !graph.tensor<[N, (N + 1) floordiv 2, N], f32>
  %2 = graph.slice %1 [0, (N + 1) floordiv 2 - 1, 0] [1, -2, 1] : !graph.tensor<[N, (N + 1) floordiv 2, N], f32> -> !graph.tensor<[N, (N + 3) floordiv 4, N], f32>
  func.return %2 : !graph.tensor<[N, (N + 3) floordiv 4, N], f32>
}
""",
        "fuse,tile,bufferize",
    ),
}


def _lowered(program: str, pipeline: str) -> str:
    module = parse_module(program)
    ctx = default_context()
    for step in resolve_passes(pipeline):
        step.apply(ctx, module)
    return print_module(module)


# Floor quotients bounded by their numerators -----------------------------------

#: More programs the checker failed to prove in bounds (found by fuzzing
#: ``check_pass``, with the pipeline that lowered them): a slice at row
#: ``M - 1`` of an ``[N, M]`` tensor reshaped to ``[M, N]`` reads row ``(x +
#: (M - 1)*N) floordiv M`` of the input, at least ``N + (-N) floordiv M``,
#: which the prover bounded below by ``-inf`` although ``(-N) floordiv M``
#: is at least ``-N``; a scatter-add walks 16 rows of ``P = N*C*((N + 1)
#: floordiv 2)`` up to ``min(16*pid + 16, P)`` and divides each by ``N*C``,
#: which the prover saw through the ``min`` only once a quotient of a ``min``
#: was taken as the ``min`` of the quotients.
QUOTIENTS_OF_ROWS = {
    "the last row of a reshape": (
        """
func.func @main(%a0: !graph.tensor<[N, M], f32>, %a1: !graph.tensor<[M, N], f32>) -> !graph.tensor<[1, N], f32> {
  %0 = graph.reshape %a0 : !graph.tensor<[N, M], f32> -> !graph.tensor<[M, N], f32>
  %1 = graph.add %0, %a1 : !graph.tensor<[M, N], f32>
  %2 = graph.slice %1 [M - 1, 0] [1, 1] : !graph.tensor<[M, N], f32> -> !graph.tensor<[1, N], f32>
  func.return %2 : !graph.tensor<[1, N], f32>
}
""",
        "fuse,tile",
    ),
    "the last row of a reshaped scatter-add, twice": (
        """
func.func @main(%a0: !graph.tensor<[N, M], f32>, %a1: !graph.tensor<[N, M], f32>, %a2: !graph.tensor<[N, M], f32>, %a3: !graph.tensor<[N], i32>, %a4: !graph.tensor<[N, M], f32>, %a0_1: !graph.tensor<[N, M], f32>, %a1_1: !graph.tensor<[N, M], f32>, %a2_1: !graph.tensor<[N, M], f32>, %a3_1: !graph.tensor<[N], i32>, %a4_1: !graph.tensor<[N, M], f32>) -> (!graph.tensor<[1, N], f32>, !graph.tensor<[1, N], f32>) {
  %0 = graph.add %a0, %a1 : !graph.tensor<[N, M], f32>
  %1 = graph.add %0, %a2 : !graph.tensor<[N, M], f32>
  %2 = graph.dim N : !graph.tensor<[], i32>
  %3 = graph.broadcast %2 : !graph.tensor<[], i32> -> !graph.tensor<[N], i32>
  %4 = graph.rem %a3, %3 : !graph.tensor<[N], i32>
  %5 = graph.scatter_add %1, %4 [0] : (!graph.tensor<[N, M], f32>, !graph.tensor<[N], i32>) -> !graph.tensor<[N, M], f32>
  %6 = graph.add %5, %a4 : !graph.tensor<[N, M], f32>
  %7 = graph.reshape %6 : !graph.tensor<[N, M], f32> -> !graph.tensor<[M, N], f32>
  %8 = graph.slice %7 [M - 1, 0] [1, 1] : !graph.tensor<[M, N], f32> -> !graph.tensor<[1, N], f32>
  %9 = graph.add %a0_1, %a1_1 : !graph.tensor<[N, M], f32>
  %10 = graph.add %9, %a2_1 : !graph.tensor<[N, M], f32>
  %11 = graph.dim N : !graph.tensor<[], i32>
  %12 = graph.broadcast %11 : !graph.tensor<[], i32> -> !graph.tensor<[N], i32>
  %13 = graph.rem %a3_1, %12 : !graph.tensor<[N], i32>
  %14 = graph.scatter_add %10, %13 [0] : (!graph.tensor<[N, M], f32>, !graph.tensor<[N], i32>) -> !graph.tensor<[N, M], f32>
  %15 = graph.add %14, %a4_1 : !graph.tensor<[N, M], f32>
  %16 = graph.reshape %15 : !graph.tensor<[N, M], f32> -> !graph.tensor<[M, N], f32>
  %17 = graph.slice %16 [M - 1, 0] [1, 1] : !graph.tensor<[M, N], f32> -> !graph.tensor<[1, N], f32>
  func.return %8, %17 : !graph.tensor<[1, N], f32>, !graph.tensor<[1, N], f32>
}
""",
        "fuse,tile,bufferize,dedupe-kernels",
    ),
    "a scatter-add into a step-2 slice, twice": (
        """
func.func @main(%a0: !graph.tensor<[N, M, K], f32>, %a1: !graph.tensor<[N], i32>, %a2: !graph.tensor<[K], i32>, %a0_1: !graph.tensor<[N, M, K], f32>, %a1_1: !graph.tensor<[N], i32>, %a2_1: !graph.tensor<[K], i32>) -> (!graph.tensor<[(N + 1) floordiv 2, (M + 1) floordiv 2, N], f32>, !graph.tensor<[(N + 1) floordiv 2, (M + 1) floordiv 2, N], f32>) {
  %0 = graph.slice %a0 [0, 0, 0] [2, 2, 1] : !graph.tensor<[N, M, K], f32> -> !graph.tensor<[(N + 1) floordiv 2, (M + 1) floordiv 2, K], f32>
  %1 = graph.dim N : !graph.tensor<[], i32>
  %2 = graph.broadcast %1 : !graph.tensor<[], i32> -> !graph.tensor<[K], i32>
  %3 = graph.rem %a2, %2 : !graph.tensor<[K], i32>
  %4 = graph.scatter_add %0, %3 [2] : (!graph.tensor<[(N + 1) floordiv 2, (M + 1) floordiv 2, K], f32>, !graph.tensor<[K], i32>) -> !graph.tensor<[(N + 1) floordiv 2, (M + 1) floordiv 2, N], f32>
  %5 = graph.slice %a0_1 [0, 0, 0] [2, 2, 1] : !graph.tensor<[N, M, K], f32> -> !graph.tensor<[(N + 1) floordiv 2, (M + 1) floordiv 2, K], f32>
  %6 = graph.dim N : !graph.tensor<[], i32>
  %7 = graph.broadcast %6 : !graph.tensor<[], i32> -> !graph.tensor<[K], i32>
  %8 = graph.rem %a2_1, %7 : !graph.tensor<[K], i32>
  %9 = graph.scatter_add %5, %8 [2] : (!graph.tensor<[(N + 1) floordiv 2, (M + 1) floordiv 2, K], f32>, !graph.tensor<[K], i32>) -> !graph.tensor<[(N + 1) floordiv 2, (M + 1) floordiv 2, N], f32>
  func.return %4, %9 : !graph.tensor<[(N + 1) floordiv 2, (M + 1) floordiv 2, N], f32>, !graph.tensor<[(N + 1) floordiv 2, (M + 1) floordiv 2, N], f32>
}
""",
        "fuse,tile,bufferize,dedupe-kernels",
    ),
}


# Common factors and residues of two symbols ---------------------------------------

#: Two more (found by the third hour of fuzzing ``check_pass``): a slice at
#: row ``N - 1`` of a scatter-add's ``[M, N, M]`` output reshaped to ``[1,
#: N, M*M]`` reads row ``M + (-M*M) floordiv (M*N)`` at least, which is
#: ``M + (-M) floordiv N >= 0`` once the common factor ``M`` is cancelled; a
#: step -2 slice of a step 2 slice in two dims starts its offset at ``M*N*(2*((N
#: + 1) floordiv 2) + 2 - 4*((N + 3) floordiv 4)) + (the same in M)``, whose
#: parts are nonnegative residue by residue of ``N`` and of ``M``, both.
COMMON_FACTORS_AND_RESIDUES = {
    "a slice at row N - 1 of a reshaped scatter-add": (
        """
func.func @main(%a0: !graph.tensor<[N, M], f32>, %a1: !graph.tensor<[N], i32>) -> !graph.tensor<[1, 1, M*M], f32> {
  %0 = graph.broadcast %a0 : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, N, M], f32>
  %1 = graph.dim M : !graph.tensor<[], i32>
  %2 = graph.broadcast %1 : !graph.tensor<[], i32> -> !graph.tensor<[N], i32>
  %3 = graph.rem %a1, %2 : !graph.tensor<[N], i32>
  %4 = graph.scatter_add %0, %3 [0] : (!graph.tensor<[N, N, M], f32>, !graph.tensor<[N], i32>) -> !graph.tensor<[M, N, M], f32>
  %5 = graph.reshape %4 : !graph.tensor<[M, N, M], f32> -> !graph.tensor<[1, N, M*M], f32>
  %6 = graph.neg %5 : !graph.tensor<[1, N, M*M], f32>
  %7 = graph.slice %6 [0, N - 1, 0] [1, 1, 1] : !graph.tensor<[1, N, M*M], f32> -> !graph.tensor<[1, 1, M*M], f32>
  func.return %7 : !graph.tensor<[1, 1, M*M], f32>
}
""",
        "fuse,tile",
    ),
    "a step -2 slice of a step 2 slice in two dims": (
        """
func.func @main(%a0: !graph.tensor<[N, N, M], f32>) -> !graph.tensor<[(N + 3) floordiv 4, N, (M + 3) floordiv 4], f32> {
  %0 = graph.slice %a0 [0, 0, 0] [2, 1, 2] : !graph.tensor<[N, N, M], f32> -> !graph.tensor<[(N + 1) floordiv 2, N, (M + 1) floordiv 2], f32>
  %1 = graph.slice %0 [(N + 1) floordiv 2 - 1, 0, (M + 1) floordiv 2 - 1] [-2, 1, -2] : !graph.tensor<[(N + 1) floordiv 2, N, (M + 1) floordiv 2], f32> -> !graph.tensor<[(N + 3) floordiv 4, N, (M + 3) floordiv 4], f32>
  func.return %1 : !graph.tensor<[(N + 3) floordiv 4, N, (M + 3) floordiv 4], f32>
}
""",
        "fuse,tile,bufferize,lower-memory-to-triton",
    ),
}


#: One more (found by the eighth hour of fuzzing ``check_pass``): a step 2
#: slice in two dims, flattened into rows of ``A*B`` elements (``A = (N +
#: 1) floordiv 2``, ``B = (M + 1) floordiv 2``) and sliced again with step
#: 2, reads row ``(2*((A*B + 1) floordiv 2) - 2) floordiv (A*B)`` at most,
#: which is 0 as ``2*((A*B + 1) floordiv 2) <= A*B + 1``; the prover
#: multiplied out ``A`` and ``B`` before the quotient that holds them, whose
#: numerator then brought them back in another form.
QUOTIENTS_OF_QUOTIENTS = {
    "a step 2 slice of a flattened step 2 slice": (
        """
func.func @main(%a0: !graph.tensor<[N, N, M], f32>, %a1: !graph.tensor<[N, (N + 1) floordiv 2, (M + 1) floordiv 2], f32>, %a2: !graph.tensor<[N, (N + 1) floordiv 2, (M + 1) floordiv 2], f32>, %a3: !graph.tensor<[N, (N + 1) floordiv 2, (M + 1) floordiv 2], f32>) -> !graph.tensor<[N, (((M + 1) floordiv 2)*((N + 1) floordiv 2) + 1) floordiv 2], f32> {
  %0 = graph.neg %a0 : !graph.tensor<[N, N, M], f32>
  %1 = graph.slice %0 [0, 0, 0] [1, 2, 2] : !graph.tensor<[N, N, M], f32> -> !graph.tensor<[N, (N + 1) floordiv 2, (M + 1) floordiv 2], f32>
  %2 = graph.add %1, %a1 : !graph.tensor<[N, (N + 1) floordiv 2, (M + 1) floordiv 2], f32>
  %3 = graph.add %2, %a2 : !graph.tensor<[N, (N + 1) floordiv 2, (M + 1) floordiv 2], f32>
  %4 = graph.add %3, %a3 : !graph.tensor<[N, (N + 1) floordiv 2, (M + 1) floordiv 2], f32>
  %5 = graph.reshape %4 : !graph.tensor<[N, (N + 1) floordiv 2, (M + 1) floordiv 2], f32> -> !graph.tensor<[N*((M + 1) floordiv 2)*((N + 1) floordiv 2)], f32>
  %6 = graph.reshape %5 : !graph.tensor<[N*((M + 1) floordiv 2)*((N + 1) floordiv 2)], f32> -> !graph.tensor<[N, ((M + 1) floordiv 2)*((N + 1) floordiv 2)], f32>
  %7 = graph.slice %6 [0, 0] [1, 2] : !graph.tensor<[N, ((M + 1) floordiv 2)*((N + 1) floordiv 2)], f32> -> !graph.tensor<[N, (((M + 1) floordiv 2)*((N + 1) floordiv 2) + 1) floordiv 2], f32>
  func.return %7 : !graph.tensor<[N, (((M + 1) floordiv 2)*((N + 1) floordiv 2) + 1) floordiv 2], f32>
}
""",
        "fuse,tile,bufferize,lower-memory-to-triton",
    ),
}


#: Every false alarm found by fuzzing, with the pipeline that raised it.
FOUND_FALSE_ALARMS = {
    **STRIDED_SLICES_OF_RESHAPES,
    **QUOTIENTS_OF_ROWS,
    **COMMON_FACTORS_AND_RESIDUES,
    **QUOTIENTS_OF_QUOTIENTS,
}


@pytest.mark.parametrize(
    ("name", "size", "wrong"),
    [
        # The slice one row past the end: row N*N of the reshape.
        ("a slice at row N*N - 1 of a reshape", "N*N - 1", "N*N"),
        # The reversed slice from one row past its end.
        (
            "a step -2 slice of a step 2 slice",
            "(N + 1) floordiv 2 - 1",
            "(N + 1) floordiv 2",
        ),
        # The slice at row N of the reshape: row M of the scatter-add's output.
        ("a slice at row N - 1 of a reshaped scatter-add", "N - 1", "N"),
        # The reversed slice from one row past its end, in either dim.
        (
            "a step -2 slice of a step 2 slice in two dims",
            "(N + 1) floordiv 2 - 1",
            "(N + 1) floordiv 2",
        ),
        (
            "a step -2 slice of a step 2 slice in two dims",
            "(M + 1) floordiv 2 - 1",
            "(M + 1) floordiv 2",
        ),
    ],
)
def test_found_false_alarms_one_row_too_far_are_flagged(
    name: str, size: str, wrong: str
) -> None:
    """Soundness: the kernels above, started one row past the end of what
    they read, are flagged with a binding that breaks them."""
    text = _lowered(*FOUND_FALSE_ALARMS[name])
    line = f"tile.size {size} : i64"
    assert text.count(line) == 1, text
    found = violations_of(text.replace(line, f"tile.size {wrong} : i64"))
    assert found
    assert all(COUNTER_EXAMPLE.search(v.message) for v in found), found[0]


@pytest.mark.parametrize("name", sorted(FOUND_FALSE_ALARMS))
def test_found_false_alarms_pass_check_pass(name: str) -> None:
    program, pipeline = FOUND_FALSE_ALARMS[name]
    testing.check_pass(pipeline, programs=[program], max_examples=3)


@pytest.mark.parametrize("name", sorted(FOUND_FALSE_ALARMS))
def test_found_false_alarms_are_proven_at_every_level(name: str) -> None:
    _proven_at_every_step(FOUND_FALSE_ALARMS[name][0])


@pytest.mark.parametrize(
    ("name", "size", "wrong", "flagged", "broken", "binding"),
    [
        # The slice one row past the end: row M of the reshape, in row N of
        # the input (and of the other operand, at row M - 1 too).
        ("the last row of a reshape", "M - 1", "M", 2, 2, "M = 1, N = 1,"),
        # One row before the start: row -1 of the reshape at M = 1.
        ("the last row of a reshape", "M - 1", "M - 2", 2, 2, "M = 1, N = 1,"),
        (
            "the last row of a reshaped scatter-add, twice",
            "M - 1",
            "M",
            4,
            4,
            "M = 1, N = 1,",
        ),
        # The scatter-add's rows (program ids, delinearized over [(N + 1)
        # floordiv 2, (M + 1) floordiv 2, N]) with one row too many along
        # M: row (M + 1) floordiv 2 of the output, one past its last, and
        # row 2 * that of the input (past M at M = 1, from the fourth
        # program, at N = 3). The reads of the loop over K past its first
        # block of 8192 are flagged too, their counter-examples beyond the
        # small bindings tried.
        (
            "a scatter-add into a step-2 slice, twice",
            "(M + 1) floordiv 2",
            "(M + 1) floordiv 2 + 1",
            6,
            4,
            "K = 1, M = 1, N = 3,",
        ),
    ],
)
def test_quotients_of_rows_one_row_too_far_are_flagged(
    name: str, size: str, wrong: str, flagged: int, broken: int, binding: str
) -> None:
    """Soundness: the tiled kernels above, moved one row past what they
    read and write, are flagged, with a binding that breaks them where a
    small one does."""
    text = _lowered(QUOTIENTS_OF_ROWS[name][0], "fuse,tile")
    line = f"tile.size {size} : i64"
    assert line in text, text
    found = [
        v.message for v in violations_of(text.replace(line, f"tile.size {wrong} : i64"))
    ]
    assert len(found) == flagged, found
    shown = [m for m in found if COUNTER_EXAMPLE.search(m)]
    assert len(shown) == broken, found
    assert all(binding in m for m in shown), shown
    assert all(m in shown or "not proven within" in m for m in found)


# Mutations flagged ------------------------------------------------------------

#: The suite programs each mutation is tried on at every level (the grid:
#: row kernels of a program per row, whose rows are not masked; layer_norm
#: and rms_norm walk 16 rows a program up to min(16 * pid + 16, N), so a
#: program too many walks none and is harmless; the swap: kernels with two
#: accesses of one offset type, or a read of two differing dims, to
#: exchange: elementwise_broadcast's loads now differ in shape, [BLOCK_R,
#: BLOCK_C], [1, BLOCK_C] and [BLOCK_R, 1], and rotary's are all of one
#: half of a row at full masks, so that swapping two stays in bounds).
MUTATED_PROGRAMS = {
    "dropped load mask": (
        "softmax",
        "elementwise_broadcast",
        "mlp",
        "causal_attention",
    ),
    "dropped store mask": ("softmax", "layer_norm", "mlp", "rotary"),
    "grid one too large": ("softmax", "log_softmax", "logsumexp", "l2_normalize"),
    "lt turned into le": ("softmax", "elementwise_broadcast", "mlp", "head_split"),
    "swapped index operands": ("layer_norm", "rms_norm"),
}

#: Mutations only rows longer than a row kernel's largest block (8192 lanes)
#: reach, by level: at the memory and triton levels, layer norm's and RMS
#: norm's loads of different buffers with one offset type are in their loops
#: over the blocks after the first. No small binding shows them, so the checker reports them
#: unproven rather than with a counter-example.
UNREACHED_AT_SMALL_BINDINGS = {
    ("swapped index operands", "layer_norm", "memory"),
    ("swapped index operands", "layer_norm", "triton"),
    ("swapped index operands", "rms_norm", "memory"),
    ("swapped index operands", "rms_norm", "triton"),
}

#: The ops a mutation makes fail, by level: reads and writes.
ACCESS_VERBS = {
    "loop": ("loop.read reads", "loop.write writes"),
    "memory": ("memory.load reads", "memory.store writes"),
    "triton": ("triton.load reads", "triton.store writes"),
}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("kind", "name"),
    [(kind, name) for kind, names in MUTATED_PROGRAMS.items() for name in names],
)
def test_each_mutation_is_flagged(kind: str, name: str, level: str) -> None:
    if (kind, name, level) in UNREACHED_AT_SMALL_BINDINGS:
        pytest.skip(f"{kind} in {name} needs rows past 8192 lanes to show")
    mutated = MUTATIONS[kind](suite_ir(name, level), level)
    assert mutated is not None, f"no line of {name} at the {level} level to mutate"
    found = violations_of(mutated)
    assert found, f"{kind} not flagged:\n{mutated}"
    first = found[0].message
    assert COUNTER_EXAMPLE.search(first), first
    reads, writes = ACCESS_VERBS[level]
    expected = writes if kind == "dropped store mask" else reads
    assert any(v.message.startswith(expected) for v in found), first
    buffer_type = "!graph.tensor<[" if level == "loop" else "!memory.buffer<["
    assert buffer_type in first


@pytest.mark.parametrize(("kind", "name", "level"), sorted(UNREACHED_AT_SMALL_BINDINGS))
def test_a_mutation_past_the_first_block_is_reported_unproven(
    kind: str, name: str, level: str
) -> None:
    mutated = MUTATIONS[kind](suite_ir(name, level), level)
    assert mutated is not None
    found = violations_of(mutated)
    assert found, f"{kind} not flagged:\n{mutated}"
    assert all("not proven within" in v.message for v in found), found


def test_a_report_names_the_op_the_buffer_and_the_binding() -> None:
    """The dropped load mask of softmax's memory kernel: its first block
    (read once, before the loops over the blocks after it) reads past the
    row; the smallest binding shows it."""
    mutated = MUTATIONS["dropped load mask"](suite_ir("softmax", "memory"), "memory")
    assert mutated is not None
    (violation,) = violations_of(mutated)
    assert isinstance(violation.op, memory.LoadOp)
    assert str(violation) == (
        "memory.load reads out of bounds of argument 0 of @k0: "
        "!memory.buffer<[N, D], [D, 1], f32>: with D = 1, N = 1, program id [0], "
        "lane [1] reads offset 1, outside [0, 1)"
    )


def test_triton_reports_name_the_launched_buffer() -> None:
    mutated = MUTATIONS["dropped store mask"](suite_ir("softmax", "triton"), "triton")
    assert mutated is not None
    (violation,) = violations_of(mutated)
    assert violation.message.startswith(
        "triton.store writes out of bounds of %out of @k0 (operand 1 of its "
        "memory.launch: !memory.buffer<[N, D], [D, 1], f32>): with D = 1, N = 1"
    )


def test_an_access_through_loaded_values_is_reported_unproven() -> None:
    """An offset read from memory (a gather's indices, unchecked) has no
    bound: reported with the interval derived, never proven."""
    text = """
memory.kernel @k0 pointwise (%ids: !memory.buffer<[N], [1], i64>, %w: !memory.buffer<[50], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 2 grid [N] tiles {BLOCK = 1} symbols [N] reason "gather" {
  %pid = tile.program_id 0 : i64
  %i = memory.load %ids[%pid] : !memory.buffer<[N], [1], i64>[i64] -> i64
  %v = memory.load %w[%i] : !memory.buffer<[50], [1], f32>[i64] -> f32
  memory.store %v, %out[%pid] : f32, !memory.buffer<[N], [1], f32>[i64]
}
"""
    (violation,) = violations_of(text)
    assert violation.message == (
        "memory.load may read out of bounds of %w: !memory.buffer<[50], [1], f32>: "
        "offset in [-inf, +inf], not proven within [0, 50) (no counter-example "
        "found among small bindings)"
    )


def test_a_loop_from_a_loaded_bound_is_unbounded_below() -> None:
    text = """
memory.kernel @k0 pointwise (%x: !memory.buffer<[N], [1], i64>, %out: !memory.buffer<[N], [1], i64>) inputs 1 grid [1] tiles {} symbols [N] reason "loop" {
  %zero = tile.constant 0 : i64
  %one = tile.constant 1 : i64
  %n = tile.size N : i64
  %start = memory.load %x[%zero] : !memory.buffer<[N], [1], i64>[i64] -> i64
  scf.for %i = %start to %n step %one : i64 {
    %v = memory.load %x[%i] : !memory.buffer<[N], [1], i64>[i64] -> i64
  }
}
"""
    (violation,) = violations_of(text)
    assert "offset in [-inf, N - 1], not proven within [0, N)" in violation.message


def test_a_kernel_with_an_empty_grid_accesses_nothing() -> None:
    """A kernel over an empty tensor has no program: even an access that
    divides by its zero dim is not out of bounds."""
    text = """
memory.kernel @k0 pointwise (%x: !memory.buffer<[0, 0], [0, 1], f32>) inputs 1 grid [0] tiles {} symbols [] reason "empty" {
  %zero = tile.constant 0 : i64
  %pid = tile.program_id 0 : i64
  %row = tile.binary floordiv %pid, %zero : (i64, i64) -> i64
  %v = memory.load %x[%row] : !memory.buffer<[0, 0], [0, 1], f32>[i64] -> f32
}
"""
    assert violations_of(text) == []


# Grids --------------------------------------------------------------------------

_GRID_KERNEL = """
memory.kernel @k0 pointwise (%x: !memory.buffer<[4], [1], f32>) inputs 1 grid [{grid}] tiles {{BLOCK = 1}} symbols [N] reason "grid" {{
  %v = memory.load %x[%c] : !memory.buffer<[4], [1], f32>[i64] -> f32
}}
"""


def _grid_module(grid: str) -> str:
    kernel = _GRID_KERNEL.format(grid=grid)
    return kernel.replace("{\n", "{\n  %c = tile.constant 0 : i64\n", 1)


@pytest.mark.parametrize(
    ("grid", "axis", "limit"),
    [
        ("4294967296", 0, 2**31 - 1),
        ("2147483648", 0, 2**31 - 1),
        ("1, 65536", 1, 65535),
        ("1, 1, 65536", 2, 65535),
        ("N + 4294967296", 0, 2**31 - 1),
    ],
)
def test_grids_beyond_cudas_limits_are_rejected(
    grid: str, axis: int, limit: int
) -> None:
    (violation,) = violations_of(_grid_module(grid))
    assert f"grid axis {axis} has " in violation.message
    assert f"beyond CUDA's limit of {limit} on that axis" in violation.message


@pytest.mark.parametrize("grid", ["2147483647", "1, 65535, 65535", "N", "65536*N"])
def test_grids_within_or_possibly_within_the_limits_pass(grid: str) -> None:
    """A symbolic grid is rejected only when provably too large: the
    launcher sees its value."""
    assert violations_of(_grid_module(grid)) == []


# The intervals -------------------------------------------------------------------


def test_a_mask_bounds_the_values_it_compares() -> None:
    """softmax's row loop (over the blocks after the first, of at most 8192
    lanes): the column ``j + lane`` spans past D, its mask cuts it at
    ``D - 1``."""
    module = parse_module(suite_ir("softmax", "memory"))
    kernel = next(op for op in module.walk() if isinstance(op, memory.KernelOp))
    facts = facts_of([kernel])
    assert facts is not None
    intervals = KernelIntervals(kernel, facts)
    load = next(
        op
        for op in kernel.walk()
        if isinstance(op, memory.LoadOp) and isinstance(op.parent_op(), scf.ForOp)
    )
    assert load.mask is not None
    refined = intervals.refinements(load.mask)
    (column,) = refined
    d = SymExpr.symbol("D")
    n = SymExpr.symbol("N")
    assert intervals.interval(column) == Interval(SymExpr.const(1), d + 8190)
    assert intervals.interval(column, refined) == Interval(SymExpr.const(1), d - 1)
    assert intervals.interval(load.offset, refined) == Interval(
        SymExpr.const(1), n * d - 1
    )


def test_guards_are_facts_of_the_proof() -> None:
    """Without its guard ``N <= 32`` the embedding's position table would be
    read past its 32 rows (and its i32 offsets might wrap around)."""
    text = suite_ir("embedding", "memory")
    assert "sym.guard N <= 32" in text
    assert violations_of(text) == []
    unguarded = "\n".join(line for line in text.splitlines() if "sym.guard" not in line)
    found = [v.message for v in violations_of(unguarded + "\n")]
    # Both shown by a binding: row 32 of the table, and an i32 offset
    # that wraps around once N passes 2**31 / 16 (issue 33).
    table = "out of bounds of argument 2 of @k0: !memory.buffer<[32, 16], [16, 1], f32>"
    assert any(m.startswith("memory.load reads") and table in m for m in found)
    assert any("at an offset that wraps around" in m for m in found)


#: A memory kernel that splits its lane index ``i < N`` by ``M`` and joins
#: it back, ``(i rem M) + (i floordiv M)*M``, which is ``i`` again.
SPLIT_AND_JOINED = """
memory.kernel @k0 pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [(N + 127) floordiv 128] tiles {BLOCK = 128} symbols [M, N] reason "split and joined" {
  %n = tile.size N : i64
  %m = tile.size M : i64
  %c128 = tile.constant 128 : i64
  %pid = tile.program_id 0 : i64
  %base = tile.binary mul %pid, %c128 : (i64, i64) -> i64
  %lanes = tile.range "BLOCK" : !loop.tile<[128], i64>
  %i = tile.binary add %base, %lanes : (i64, !loop.tile<[128], i64>) -> !loop.tile<[128], i64>
  %mask = tile.cmp lt %i, %n : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i1>
  %r = tile.binary rem %i, %m : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i64>
  %q = tile.binary floordiv %i, %m : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i64>
  %qm = tile.binary mul %q, %m : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i64>
  %j = tile.binary add %r, %qm : (!loop.tile<[128], i64>, !loop.tile<[128], i64>) -> !loop.tile<[128], i64>
  %v = memory.load %x[%j] mask %mask : !memory.buffer<[N], [1], f32>[!loop.tile<[128], i64>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
  memory.store %v, %out[%i] mask %mask : !loop.tile<[128], f32>, !memory.buffer<[N], [1], f32>[!loop.tile<[128], i64>] mask !loop.tile<[128], i1>
}
"""


@pytest.mark.parametrize(
    "joined",
    ["%j = tile.binary add %r, %qm", "%j = tile.binary add %qm, %r"],
)
def test_an_index_split_and_joined_back_is_the_index(joined: str) -> None:
    text = SPLIT_AND_JOINED.replace("%j = tile.binary add %r, %qm", joined)
    assert violations_of(text) == []


def test_an_index_joined_back_by_another_size_is_flagged() -> None:
    """Soundness: ``(i rem M) + (i floordiv M)*N`` is not ``i`` (it passes
    ``N`` at ``M = 1``, ``N = 2``)."""
    text = SPLIT_AND_JOINED.replace(
        "%qm = tile.binary mul %q, %m", "%qm = tile.binary mul %q, %n"
    )
    (violation,) = violations_of(text)
    assert violation.message.endswith(
        "with M = 1, N = 2, program id [0], lane [1] reads offset 2, outside [0, 2)"
    )


#: Row ``N - 1 - 2*i`` of an ``[N, N]`` buffer for program ``i < N``: a
#: reversed step -2 slice that runs past row 0 (no sign is proven for the
#: row, its product with the stride ``N`` still has bounds).
REVERSED_ROWS = """
memory.kernel @k0 pointwise (%x: !memory.buffer<[N, N], [N, 1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [N] reason "reversed rows" {
  %n = tile.size N : i64
  %top = tile.size N - 1 : i64
  %c2 = tile.constant 2 : i64
  %i = tile.program_id 0 : i64
  %twice = tile.binary mul %i, %c2 : (i64, i64) -> i64
  %row = tile.binary sub %top, %twice : (i64, i64) -> i64
  %off = tile.binary mul %row, %n : (i64, i64) -> i64
  %v = memory.load %x[%off] : !memory.buffer<[N, N], [N, 1], f32>[i64] -> f32
  memory.store %v, %out[%i] : f32, !memory.buffer<[N], [1], f32>[i64]
}
"""


def test_a_product_with_a_size_keeps_the_bounds_of_a_signed_factor() -> None:
    module = parse_module(REVERSED_ROWS)
    kernel = next(op for op in module.walk() if isinstance(op, memory.KernelOp))
    facts = facts_of([kernel])
    assert facts is not None
    load = next(op for op in kernel.walk() if isinstance(op, memory.LoadOp))
    n = SymExpr.symbol("N")
    assert KernelIntervals(kernel, facts).interval(load.offset) == Interval(
        n - n * n, n * n - n
    )


def test_a_reversed_row_past_row_0_is_flagged() -> None:
    """Soundness: row ``N - 1 - 2*i`` is -1 at ``N = 2``, ``i = 1``."""
    (violation,) = violations_of(REVERSED_ROWS)
    assert violation.message.endswith(
        "with N = 2, program id [1], lane [] reads offset -2, outside [0, 4)"
    )


@pytest.mark.parametrize(
    ("numerator", "divisor", "quotient"),
    [
        ("N*N*N - N", "N*N", "N - 1"),  # the -ceil form folds
        ("-N", "N*N", "-1"),
        ("N*N*N - 1", "N*N", "N - 1"),  # the floordiv form folds
        ("M*N + M - 1", "M", "N"),  # exact up to a remainder in [0, M)
        ("N*N*N - N - 1", "N*N", "N + (-N - 1) floordiv (N*N)"),  # -1 or N - 1
    ],
)
def test_floor_quotients_take_their_simplest_exact_form(
    numerator: str, divisor: str, quotient: str
) -> None:
    x, d = parse_expr(numerator), parse_expr(divisor)
    result = floor_quotient(Facts(), x, d)
    assert result == parse_expr(quotient)
    for n, m in itertools.product(range(1, 6), range(1, 4)):
        binding = {"N": n, "M": m}
        assert result.evaluate(binding) == x.evaluate(binding) // d.evaluate(binding)


def test_facts_hold_within_reason() -> None:
    assert Facts().prove_lt("(N*D - 1) floordiv D", "N")


# check_pass -----------------------------------------------------------------------


@dataclass(frozen=True)
class DropStoreMasks(ModulePass):
    """A wrong pass: drops the mask of every ``memory.store``."""

    name = "drop-store-masks"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for store in list(op.walk()):
            if isinstance(store, memory.StoreOp) and store.mask is not None:
                bare = memory.StoreOp(store.value, store.buffer, store.offset)
                store.parent_block().insert_op_before(bare, store)
                store.parent_block().erase_op(store)


_ROW_SUM = """
func.func @main(%x: !graph.tensor<[N, 3], f32>) -> !graph.tensor<[N, 3], f32> {
  %e = graph.exp %x : !graph.tensor<[N, 3], f32>
  func.return %e : !graph.tensor<[N, 3], f32>
}
"""


def test_check_pass_blames_the_pass_that_goes_out_of_bounds() -> None:
    """The passes before the wrong one keep the program in bounds; the
    report names the wrong one, the access and a breaking binding."""
    passes = [*resolve_passes("fuse,tile,bufferize"), DropStoreMasks()]
    with pytest.raises(PassCheckError) as caught:
        testing.check_pass(passes, programs=[_ROW_SUM], max_examples=3)
    report = str(caught.value)
    assert caught.value.headline == (
        "pass 'drop-store-masks' made an access out of bounds (check_bounds)"
    )
    assert "memory.store writes out of bounds of %out" in report
    assert (
        "with N = 1, program id [0], lane [3] writes offset 3, outside [0, 3)" in report
    )


def test_check_pass_can_skip_the_bounds() -> None:
    testing.check_pass(
        "fuse,tile,bufferize", programs=[_ROW_SUM], max_examples=3, check_bounds=False
    )


def test_check_pass_blames_a_program_already_out_of_bounds() -> None:
    mutated = MUTATIONS["dropped store mask"](suite_ir("softmax", "memory"), "memory")
    assert mutated is not None
    with pytest.raises(PassCheckError) as caught:
        testing.check_pass("lower-memory-to-triton", programs=[mutated], max_examples=1)
    assert caught.value.headline.startswith(
        "the program accesses out of bounds before the pass"
    )
    assert "memory.store writes out of bounds of %out" in str(caught.value)


# Soundness against the memory interpreter ---------------------------------------

#: Small suite programs the memory interpreter runs quickly.
INTERPRETED = ("softmax", "elementwise_broadcast", "layer_norm", "mlp", "rotary")


@pytest.mark.parametrize("kind", ["none", *MUTATIONS])
@pytest.mark.parametrize("name", INTERPRETED)
def test_the_checker_agrees_with_the_memory_interpreter(name: str, kind: str) -> None:
    """The memory interpreter checks every access of a run. A module (a
    suite program's memory level, mutated or not) that it finds out of
    bounds on some small binding is one the checker rejects (soundness),
    and on these modules the converse holds too: each one rejected goes out
    of bounds on a small binding (a grid one too large is harmless where
    the mask covers the extra programs, and accepted)."""
    text = suite_ir(name, "memory")
    if (kind, name, "memory") in UNREACHED_AT_SMALL_BINDINGS:
        pytest.skip(f"{kind} in {name} needs rows past 8192 lanes to show")
    if kind != "none":
        text = MUTATIONS[kind](text, "memory")
        if text is None:
            pytest.skip(f"no {kind} for {name}")
    module = parse_module(text)
    verify_module(module)
    accepted = not check_bounds(module)
    out_of_bounds = []
    for binding in testing.module_bindings(module, max_value=5)[:8]:
        try:
            testing.run_module(module, testing.inputs(module, binding, 0))
        except Exception as error:
            if "which this launch already wrote" in str(error):
                # A mask widened by one lane also writes the next row's
                # first element (softmax's first block, whose load and store
                # share it): a race, not the checker's to find.
                continue
            if "out of bounds and not masked off" not in str(error):
                raise
            out_of_bounds.append(binding)
    assert accepted == (not out_of_bounds), (kind, name, out_of_bounds)
