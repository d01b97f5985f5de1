"""``check_pass`` over every registered pass, the metamorphic check, and a
planted miscompile that ``check_pass``, ``check_semantics`` and
``irc-opt --check-semantics`` must all catch with a readable, shrunk
counter-example.

Each property check runs at least ``EXAMPLES`` programs (more when the
Hypothesis profile asks for more: ``IRC_HYPOTHESIS_PROFILE=extended``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import settings
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter
from xdsl.transforms.canonicalize import CanonicalizePass

import irc
from irc import testing
from irc.cli import irc_opt
from irc.dialects import graph as g
from irc.errors import IrcError
from irc.interpreters.graph import find_function
from irc.ir import parse_module, print_module
from irc.passes.registry import get_all_passes
from irc.testing import PassCheckError

EXAMPLES = max(300, settings.default.max_examples)

SUB = """\
func.func @main(%x: !graph.tensor<[N, 2], f32>, %y: !graph.tensor<[N, 2], f32>) -> !graph.tensor<[N, 2], f32> {
  %0 = graph.sub %x, %y : !graph.tensor<[N, 2], f32>
  %1 = graph.mul %0, %0 : !graph.tensor<[N, 2], f32>
  %2 = graph.sub %1, %0 : !graph.tensor<[N, 2], f32>
  func.return %2 : !graph.tensor<[N, 2], f32>
}
"""


@dataclass(frozen=True)
class SwapSubDiv(ModulePass):
    """A wrong pass: computes ``y - x`` for ``x - y`` and ``y / x`` for
    ``x / y``."""

    name = "swap-sub-div"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            if isinstance(inner, g.SubOp | g.DivOp):
                inner.operands = [inner.rhs, inner.lhs]


def body_ops(text: str) -> list[str]:
    """The op names in ``@main`` of a module's text, its return excepted."""
    block = find_function(parse_module(text)).body.block
    return [op.name for op in block.ops][:-1]


# Every pass keeps the meaning of programs -----------------------------------


#: A lowering pass takes the level above as input: it is checked after the
#: passes that produce that level, from graph programs.
LOWERED_FROM = {
    "tile": "fuse",
    "bufferize": "fuse,tile",
    "dedupe-kernels": "fuse,tile,bufferize",
    "lower-memory-to-triton": "fuse,tile,bufferize",
    "combine-launches": "fuse,tile,bufferize,lower-memory-to-triton",
}
#: The sharding passes act on a program over a mesh: each generated
#: program's arguments are split over a mesh of one rank (every conversion
#: the partition makes runs, trivially; tests/test_sharding.py checks
#: partitioned programs on two simulated ranks against the global ones).
_ANNOTATE = 'annotate-sharding{mesh="data=1" arguments="*data"}'
PIPELINES = {
    "annotate-sharding": _ANNOTATE,
    "propagate-sharding": f"{_ANNOTATE},propagate-sharding",
    "partition": f"{_ANNOTATE},partition",
}
#: Passes whose output runs on the Triton interpreter (each example emits a
#: module and interprets its kernels): fewer examples.
TRITON_LEVEL = {"lower-memory-to-triton", "lower-to-triton", "combine-launches"}


#: Passes that change few of the default programs, with programs they act on:
#: ``auto-mixed-precision`` needs float32 matmuls, and smooth programs (a
#: comparison of a rounded value flips near a tie); ``horizontal-fusion``
#: needs identical computations holding a matmul on windows of one tensor;
#: ``dedupe-kernels`` needs them on different tensors, as layers have them,
#: and ``combine-launches`` independent kernels, as layers side by side
#: have them; ``unroll-while`` needs while loops.
PROGRAMS = {
    "unroll-while": lambda: testing.programs(
        actions=("while", "for", "cond", "binary", "unary", "reduce", "broadcast")
    ),
    "dedupe-kernels": testing.layer_programs,
    "combine-launches": testing.layer_programs,
    "horizontal-fusion": lambda: testing.head_programs(
        dtypes=("float32",),
        actions=("matmul", "binary", "unary", "reduce", "broadcast", "transpose"),
    ),
    "auto-mixed-precision": lambda: testing.programs(
        smooth=True,
        dtypes=("float32", "int32"),
        actions=("matmul", "binary", "unary", "reduce", "broadcast", "transpose"),
    ),
}


#: The checks that take minutes on a 2-core machine (generated programs
#: through several passes, each parsed back): the ``slow`` step of CI.
SLOW_CHECKS = {"tile", "bufferize", "dedupe-kernels", "horizontal-fusion"}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow) if name in SLOW_CHECKS else name
        for name in sorted(get_all_passes())
    ],
)
def test_registered_pass(name: str) -> None:
    pipeline = PIPELINES.get(name) or ",".join(
        filter(None, [LOWERED_FROM.get(name), name])
    )
    examples = max(30, EXAMPLES // 10) if name in TRITON_LEVEL else EXAMPLES
    programs = PROGRAMS[name]() if name in PROGRAMS else None
    testing.check_pass(pipeline, programs, max_examples=examples)


def test_canonicalize_cse_pipeline() -> None:
    testing.check_pass("canonicalize,cse", max_examples=EXAMPLES)


def test_metamorphic_symbolic_and_static_agree() -> None:
    testing.check_metamorphic(max_examples=EXAMPLES)


def test_metamorphic_after_the_pipeline() -> None:
    testing.check_metamorphic("canonicalize,cse", max_examples=EXAMPLES)


# A planted miscompile --------------------------------------------------------


@pytest.fixture(scope="module")
def planted_failure() -> PassCheckError:
    with pytest.raises(PassCheckError) as caught:
        testing.check_pass(SwapSubDiv(), max_examples=EXAMPLES)
    return caught.value


def test_check_pass_catches_the_planted_pass(planted_failure: PassCheckError) -> None:
    report = str(planted_failure)
    assert report.startswith("pass 'swap-sub-div' changed the results\noutput 0 (")
    assert re.search(r"worst at index \(.*\): before \S+, after \S+", report)
    assert f"binding: {planted_failure.binding}" in report
    assert f"inputs: seed {planted_failure.seed} " in report
    assert f"program:\n{planted_failure.program}" in report
    assert f"after the pass:\n{planted_failure.after}" in report


def test_the_counter_example_is_shrunk(planted_failure: PassCheckError) -> None:
    before = body_ops(planted_failure.program)
    assert len(before) <= 3, planted_failure.program
    assert {"graph.sub", "graph.div"} & set(before)
    assert planted_failure.after is not None
    assert body_ops(planted_failure.after) == before  # same ops, operands swapped


def test_the_counter_example_reproduces(planted_failure: PassCheckError) -> None:
    program = parse_module(planted_failure.program)
    assert planted_failure.binding is not None and planted_failure.seed is not None
    arrays = testing.inputs(program, planted_failure.binding, planted_failure.seed)
    after = program.clone()
    SwapSubDiv().apply(Context(), after)
    before_out = testing.run_module(program, arrays)
    assert testing.compare_outputs(before_out, testing.run_module(after, arrays))


def test_given_programs_and_pipelines_name_the_culprit() -> None:
    with pytest.raises(PassCheckError) as caught:
        testing.check_pass(
            [CanonicalizePass(), SwapSubDiv()], programs=[SUB], max_examples=20
        )
    assert caught.value.headline == (
        "pass 'canonicalize,swap-sub-div' changed the results"
    )
    assert "first wrong after pass 'swap-sub-div' of the pipeline" in str(caught.value)


def test_check_semantics_catches_the_planted_pass() -> None:
    module = parse_module(SUB)
    testing.check_semantics(module, "canonicalize,cse")
    with pytest.raises(PassCheckError) as caught:
        testing.check_semantics(module, [CanonicalizePass(), SwapSubDiv()])
    error = caught.value
    assert error.headline == "pass 'swap-sub-div' changed the results"
    assert error.details[0].startswith("output 0 (float32, shape (")
    assert "graph.sub %y, %x" in (error.after or "")


# Other ways a pass can break a program --------------------------------------


@dataclass(frozen=True)
class CrashOnSub(ModulePass):
    name = "crash-on-sub"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if any(isinstance(inner, g.SubOp) for inner in op.walk()):
            raise ZeroDivisionError("boom")


@dataclass(frozen=True)
class BreakReductions(ModulePass):
    """Leaves every reduction with an axis out of range."""

    name = "break-reductions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if isinstance(inner, g.ReduceOp):
                inner.properties["axes"] = DenseArrayBase.from_list(i64, [7])


@irdl_op_definition
class MarkerOp(IRDLOperation):
    name = "unknown.marker"


@dataclass(frozen=True)
class AddMarker(ModulePass):
    """Adds an op of a dialect the parser does not know."""

    name = "add-marker"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        block = find_function(op).body.block
        block.insert_op_before(MarkerOp(), block.first_op)


REDUCE = """\
func.func @main(%x: !graph.tensor<[N, 3], f32>) -> !graph.tensor<[N], f32> {
  %0 = graph.reduce sum %x [1] : !graph.tensor<[N, 3], f32> -> !graph.tensor<[N], f32>
  func.return %0 : !graph.tensor<[N], f32>
}
"""


@pytest.mark.parametrize(
    ("bad_pass", "program", "headline"),
    [
        (CrashOnSub(), SUB, "pass 'crash-on-sub' crashed: ZeroDivisionError: boom"),
        (
            BreakReductions(),
            REDUCE,
            "pass 'break-reductions' produced IR that does not verify: reduction "
            "axis 7 is out of range for rank 2",
        ),
        (AddMarker(), SUB, "the IR after pass 'add-marker' does not parse back:"),
    ],
)
def test_broken_passes_are_reported(
    bad_pass: ModulePass, program: str, headline: str
) -> None:
    with pytest.raises(PassCheckError) as caught:
        testing.check_pass(bad_pass, programs=[program], max_examples=5)
    assert caught.value.headline.startswith(headline), caught.value.headline


def test_bad_arguments_are_user_errors() -> None:
    with pytest.raises(
        IrcError, match="invalid pass pipeline 'cse,nope'.*known passes"
    ):
        testing.check_pass("cse,nope")
    with pytest.raises(IrcError, match="invalid pass pipeline 'cse{'"):
        testing.check_pass("cse{")
    with pytest.raises(IrcError, match="given program 1 is not valid IR"):
        testing.check_pass("cse", programs=[SUB, "func.func @main("])


# Comparison and specialisation ----------------------------------------------


def test_floats_compare_within_the_dtype_tolerance() -> None:
    before = [np.array([1.0, 2.0, np.nan, np.inf], np.float32)]
    close = [np.array([1.000001, 2.0, np.nan, np.inf], np.float32)]
    assert testing.compare_outputs(before, close) is None
    far = [np.array([1.0, 2.5, np.nan, np.inf], np.float32)]
    assert testing.compare_outputs(before, far) == (
        "output 0 (float32, shape (4,)): 1 of 4 elements differ (beyond "
        "rtol=1e-05, atol=1e-05); worst at index (1,): before 2.0, after 2.5"
    )
    nan_moved = [np.array([np.nan, 2.0, 3.0, np.inf], np.float32)]
    assert "2 of 4 elements differ" in (
        testing.compare_outputs(before, nan_moved) or ""
    )
    bf16 = np.dtype(ml_dtypes.bfloat16)
    assert (
        testing.compare_outputs([np.array([1.0], bf16)], [np.array([1.0078125], bf16)])
        is None
    )


def test_integers_and_bools_compare_exactly() -> None:
    assert testing.compare_outputs(
        [np.array([[1, 5], [3, 4]], np.int32)], [np.array([[1, 2], [3, 5]], np.int32)]
    ) == (
        "output 0 (int32, shape (2, 2)): 2 of 4 elements differ (exact "
        "comparison); worst at index (0, 1): before 5, after 2"
    )
    assert "exact comparison" in (
        testing.compare_outputs([np.array(True)], [np.array(False)]) or ""
    )
    assert testing.compare_outputs(
        [np.zeros(2, np.int64)], [np.zeros(2, np.int32)]
    ) == ("output 0 has dtype int32, was int64")
    assert testing.compare_outputs([], [np.zeros(1)]) == (
        "the number of results changed from 0 to 1"
    )


def test_exact_float_comparison_tells_signed_zeros_apart() -> None:
    zero, negative_zero = [np.array([0.0, 1.0])], [np.array([-0.0, 1.0])]
    assert testing.compare_outputs(zero, negative_zero) is None
    assert "1 of 2 elements differ" in (
        testing.compare_outputs(zero, negative_zero, rtol=0, atol=0) or ""
    )
    nan = [np.array([np.nan])]
    assert testing.compare_outputs(nan, nan, rtol=0, atol=0) is None


def test_specialize_replaces_every_symbol() -> None:
    module = parse_module(
        """
        func.func @main(%x: !graph.tensor<[N, M], f32>) -> !graph.tensor<[N], f32> {
          sym.guard N <= M
          %0 = graph.slice %x [0, M - 1] [1, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, 1], f32>
          %1 = graph.reshape %0 : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N], f32>
          %2 = graph.dim N * M : !graph.tensor<[], f32>
          %3 = graph.broadcast %2 : !graph.tensor<[], f32> -> !graph.tensor<[N], f32>
          %4 = graph.add %1, %3 : !graph.tensor<[N], f32>
          func.return %4 : !graph.tensor<[N], f32>
        }
        """
    )
    static = testing.specialize(module, {"N": 2, "M": 3})
    static.verify()
    text = print_module(static)
    assert "N" not in text and "M " not in text, text
    assert "sym.guard 2 <= 3" in text
    assert "graph.slice %x [0, 2] [1, 1]" in text
    assert "graph.dim 6 :" in text
    arrays = testing.inputs(module, {"N": 2, "M": 3}, 0)
    expected = testing.run_module(module, arrays)
    np.testing.assert_array_equal(testing.run_module(static, arrays)[0], expected[0])
    assert math.isclose(float(expected[0][0] - arrays[0][0, 2]), 6.0)


# irc-opt --check-semantics ---------------------------------------------------


@pytest.fixture
def with_planted_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make irc-opt know the planted pass (never registered for real)."""
    passes = {**get_all_passes(), "swap-sub-div": lambda: SwapSubDiv}
    monkeypatch.setattr(irc_opt, "get_all_passes", lambda: passes)


def run_irc_opt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *args: str
) -> tuple[int, str, str]:
    path = tmp_path / "input.mlir"
    path.write_text(text)
    status = irc_opt.main([str(path), *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.usefixtures("with_planted_pass")
def test_irc_opt_check_semantics_names_the_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run_irc_opt(
        tmp_path,
        capsys,
        SUB,
        "-p",
        "canonicalize,swap-sub-div,cse",
        "--check-semantics",
    )
    assert (status, out) == (1, "")
    assert "Traceback" not in err
    lines = err.splitlines()
    assert lines[0] == (
        f"{tmp_path / 'input.mlir'}: error: pass 'swap-sub-div' changed the "
        "results (--check-semantics)"
    )
    assert lines[1].startswith("note: output 0 (float32, shape (")
    assert re.fullmatch(r"note: binding: \{'N': [1-5]\}", lines[2])
    assert re.fullmatch(r"note: inputs: seed \d+ \(irc\.testing\.inputs.*", lines[3])
    assert lines[4] == "note: the IR before the pass:"
    assert "note: the IR after the pass:" in lines
    assert "graph.sub %y, %x" in err


def test_irc_opt_check_semantics_passes_correct_pipelines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checked = run_irc_opt(
        tmp_path, capsys, SUB, "-p", "canonicalize,cse", "--check-semantics"
    )
    plain = run_irc_opt(tmp_path, capsys, SUB, "-p", "canonicalize,cse")
    assert checked == plain
    assert checked[0] == 0


def test_irc_opt_check_semantics_needs_a_runnable_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = SUB.replace("func.func @main", "func.func private @main")
    status, _, err = run_irc_opt(
        tmp_path, capsys, text, "-p", "cse", "--check-semantics"
    )
    assert status == 1
    assert err.startswith(  # at the function the interpreter looked at
        f"{tmp_path / 'input.mlir'}:1:1: error: 'func.func' op: --check-semantics "
        "cannot run the input: the module has no public function to run"
    )


F32_MATMUL_TO_F64 = """\
func.func @main(%a0: !graph.tensor<[K, K], f32>, %a1: !graph.tensor<[K, K], f32>) -> !graph.tensor<[K, K], f64> {
  %0 = graph.matmul %a0, %a1 : (!graph.tensor<[K, K], f32>, !graph.tensor<[K, K], f32>) -> !graph.tensor<[K, K], f32>
  %1 = graph.neg %0 : !graph.tensor<[K, K], f32>
  %2 = graph.cast %1 : !graph.tensor<[K, K], f32> -> !graph.tensor<[K, K], f64>
  func.return %2 : !graph.tensor<[K, K], f64>
}
"""


def test_results_compare_at_the_working_precision() -> None:
    """A float64 result computed through float32 arithmetic is only as close
    as float32: the lowering sums the matmul in another order."""
    module = parse_module(F32_MATMUL_TO_F64)
    assert testing.semantics.working_precision(module) == "float32"
    testing.check_pass("fuse,tile", programs=[module], max_examples=20)


def _wide_mlp() -> ModuleOp:
    """A two-layer MLP over 512 features: its float32 sums round by ~1e-3
    at results of ~100, so tiling them in another order changes results by
    more than float32's default tolerance."""

    def mlp(x, w1, b1, w2, b2):
        return np.maximum(x @ w1 + b1, 0) @ w2 + b2

    def f32(*shape):
        return irc.TensorSpec(shape, "float32")

    return irc.compile(
        mlp, f32("N", 512), f32(512, 512), f32(512), f32(512, 64), f32(64)
    ).module


def test_a_reordering_pass_is_judged_by_the_programs_own_rounding() -> None:
    module = _wide_mlp()
    checker = testing.semantics.SemanticsChecker(module, runs=2)
    assert checker.rounding is not None and checker.rounding[0] > 1e-5
    testing.check_semantics(module, "fuse,tile,bufferize")  # correct: accepted
    with pytest.raises(PassCheckError, match="pass 'tile' changed the results"):
        testing.check_semantics(module, "fuse,tile", rtol=1e-5, atol=1e-5)


def test_the_rounding_allowance_still_catches_a_miscompile() -> None:
    module = parse_module(F32_MATMUL_TO_F64.replace("graph.neg %0", "graph.abs %0"))
    with pytest.raises(PassCheckError, match="pass 'abs-to-neg' changed the results"):
        testing.check_semantics(module, [AbsToNeg()])


@dataclass(frozen=True)
class AbsToNeg(ModulePass):
    """Replaces every ``abs`` with ``neg``: wrong wherever a value is
    positive."""

    name = "abs-to-neg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            if isinstance(inner, g.AbsOp):
                Rewriter.replace_op(inner, g.NegOp(inner.operands[0]))


def test_irc_opt_tolerance_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = print_module(_wide_mlp())
    accepted = run_irc_opt(
        tmp_path, capsys, text, "-p", "fuse,tile", "--check-semantics"
    )
    assert accepted[0] == 0, accepted[2]
    status, _, err = run_irc_opt(
        tmp_path, capsys, text, "-p", "fuse,tile", "--check-semantics", "--rtol", "1e-5"
    )
    assert status == 1 and "pass 'tile' changed the results" in err
    assert "beyond rtol=1e-05" in err
    with pytest.raises(SystemExit) as exited:
        run_irc_opt(tmp_path, capsys, text, "--atol", "nan")
    assert exited.value.code == 2
    assert "expected a non-negative number, got 'nan'" in capsys.readouterr().err


# Honest checks: a pass that never fires is reported ---------------------------


@dataclass(frozen=True)
class NeverMatches(ModulePass):
    """A pattern for an op the generated programs never hold."""

    name = "never-matches"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            if inner.name == "graph.frobnicate":  # no such op
                raise AssertionError("unreachable")


def test_a_pass_that_never_fires_fails_the_check() -> None:
    with pytest.raises(PassCheckError) as caught:
        testing.check_pass(NeverMatches(), max_examples=20)
    assert caught.value.headline.startswith(
        "pass 'never-matches' changed none of the 20 programs checked, so the check "
        "proves nothing about what it does"
    )
    assert "changed by each pass: never-matches 0" in caught.value.program
    assert "programs=programs(patterns=[lambda x: x * 2])" in caught.value.headline
    report = testing.check_pass(NeverMatches(), max_examples=20, require_change=False)
    assert report.examples == 20 and report.changed_by["never-matches"] == 0


def test_a_lowering_checked_on_the_wrong_level_is_reported() -> None:
    """bufferize on graph programs (not after fuse,tile) does nothing."""
    with pytest.raises(PassCheckError, match="pass 'bufferize' changed none"):
        testing.check_pass("bufferize", max_examples=10)


def test_the_report_counts_changes_per_pass_and_op_kinds() -> None:
    report = testing.check_pass("fuse,tile", max_examples=30)
    assert report.examples >= 30
    assert 0 < report.changed_by["tile"] <= report.changed_by["fuse"] <= report.examples
    assert report.op_kinds["graph.constant"] > 0
    assert "func.return" not in report.op_kinds
    text = str(report)
    assert text.startswith("check_pass fuse,tile: ")
    assert f"fuse {report.changed_by['fuse']}, tile {report.changed_by['tile']}" in text
    assert "graph.constant (" in text


def test_require_change_can_name_the_passes_that_must_fire() -> None:
    report = testing.check_pass(
        [NeverMatches(), SwapAddOperandsForTest()],
        max_examples=20,
        require_change=["swap-add-for-test"],
    )
    assert report.changed_by["never-matches"] == 0
    with pytest.raises(PassCheckError, match="pass 'never-matches' changed none"):
        testing.check_pass(
            [NeverMatches(), SwapAddOperandsForTest()],
            max_examples=20,
            require_change=["never-matches"],
        )


@dataclass(frozen=True)
class SwapAddOperandsForTest(ModulePass):
    name = "swap-add-for-test"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            if isinstance(inner, g.AddOp):
                Rewriter.replace_op(inner, g.AddOp(inner.rhs, inner.lhs))


# Patterns: programs steered towards what a pass rewrites ----------------------


def _is_two(value: SSAValue) -> bool:
    constant = value.owner
    return (
        isinstance(constant, g.ConstantOp)
        and constant.is_splat
        and float(constant.literal()) == 2
    )


class _DoubleToAdd(RewritePattern):
    """``x * 2`` to ``x + x``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: g.MulOp, rewriter: PatternRewriter) -> None:
        if _is_two(op.rhs):
            rewriter.replace(op, g.AddOp(op.lhs, op.lhs))


class _DoubleToIncrement(RewritePattern):
    """A wrong rewrite: ``x * 2`` to ``x + 1``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: g.MulOp, rewriter: PatternRewriter) -> None:
        if _is_two(op.rhs):
            one = g.ConstantOp.splat(1, g.tensor_type(op.lhs))
            rewriter.replace(op, [one, g.AddOp(op.lhs, one.result)])


@dataclass(frozen=True)
class DoubleToAdd(ModulePass):
    name = "double-to-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_DoubleToAdd()).rewrite_module(op)


@dataclass(frozen=True)
class DoubleToIncrement(ModulePass):
    name = "double-to-increment"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_DoubleToIncrement()).rewrite_module(op)


def test_a_pattern_pass_fires_on_every_program_with_its_pattern() -> None:
    report = testing.check_pass(
        DoubleToAdd(), testing.programs(patterns=[lambda x: x * 2]), max_examples=100
    )
    assert report.changed_by["double-to-add"] == report.examples >= 100


def test_a_wrong_pattern_rewrite_is_caught_and_shrinks_to_the_pattern() -> None:
    with pytest.raises(PassCheckError) as caught:
        testing.check_pass(
            DoubleToIncrement(),
            testing.programs(patterns=[lambda x: x * 2]),
            max_examples=100,
        )
    assert caught.value.headline == "pass 'double-to-increment' changed the results"
    assert body_ops(caught.value.program) == ["graph.constant", "graph.mul"]
