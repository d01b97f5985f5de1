"""irc-opt's registry, its diagnostics on bad input, and its debugging flags.

Most tests call ``main(argv)`` in-process (an ``irc-opt`` process takes
about half a second to start and run a pass, ``benchmarks/startup.py``); one
runs the installed console script to check the whole path from the shell,
one what a fresh process imports.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.parser import Parser
from xdsl.passes import ModulePass

from irc.cli import irc_opt
from irc.dialects.graph import ReduceOp, ReshapeOp
from irc.dialects.sym import MAX_EXPR_NESTING
from irc.passes.registry import get_all_dialects, get_all_passes

REPOSITORY = Path(__file__).resolve().parent.parent

TYPE = "!graph.tensor<[N, 4], f32>"
VALID = f"""\
func.func @f(%x: {TYPE}) -> {TYPE} {{
  %y = graph.add %x, %x : {TYPE}
  %z = graph.add %x, %x : {TYPE}
  %w = graph.mul %y, %z : {TYPE}
  func.return %w : {TYPE}
}}
"""
INVALID_ADD = """\
func.func @f(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[M], f32>) {
  %z = "graph.add"(%x, %y) : (!graph.tensor<[N], f32>, !graph.tensor<[M], f32>) -> !graph.tensor<[N], f32>
  func.return
}
"""


@dataclass(frozen=True)
class Outcome:
    status: int
    out: str
    err: str


RunIrcOpt = Callable[..., Outcome]


@pytest.fixture
def run_irc_opt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> RunIrcOpt:
    """Run irc-opt in-process on a text (written to ``input.mlir`` in the
    current directory), or on the arguments alone when the text is None."""
    monkeypatch.chdir(tmp_path)

    def run(text: str | None, *args: str) -> Outcome:
        argv = list(args)
        if text is not None:
            Path("input.mlir").write_text(text)
            argv.insert(0, "input.mlir")
        status = irc_opt.main(argv)
        captured = capsys.readouterr()
        return Outcome(status, captured.out, captured.err)

    return run


def assert_error(outcome: Outcome, head: str, caret_line: str | None = None) -> None:
    """Exit status 1, no traceback, a first stderr line starting with
    ``head`` and, when given, the caret line under the quoted source."""
    assert outcome.status == 1, outcome
    assert "Traceback" not in outcome.err
    lines = outcome.err.splitlines()
    assert lines[0].startswith(head), outcome.err
    if caret_line is not None:
        assert caret_line in lines[1:], outcome.err


# Registry --------------------------------------------------------------------


def test_registry_names_match_the_passes() -> None:
    for name, factory in get_all_passes().items():
        pass_class = factory()
        assert issubclass(pass_class, ModulePass)
        assert pass_class.name == name


def test_registry_names_match_the_dialects() -> None:
    for name, factory in get_all_dialects().items():
        assert factory().name == name


# Diagnostics -----------------------------------------------------------------


def test_valid_input_is_transformed_and_printed(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(VALID, "-p", "cse")
    assert (outcome.status, outcome.err) == (0, "")
    assert outcome.out.count("graph.add") == 1


def test_unparsable_text(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(VALID.replace(f"%x : {TYPE}", "%x : !graph.tensor<[N]>", 1))
    assert_error(
        outcome,
        "input.mlir:2:44: error: Expected ','",
        "                                           ^",
    )


def test_verifier_error_points_at_the_op_name(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(INVALID_ADD)
    assert_error(
        outcome,
        "input.mlir:2:9: error: 'graph.add' op operand 'rhs' at position 1 does "
        "not verify:",
        "        ^^^^^^^^^",
    )


def test_bad_shape_expression(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(VALID.replace("[N, 4]", "[N +, 4]", 1))
    assert_error(
        outcome,
        "input.mlir:1:36: error: expected a shape expression (integer, symbol or '(')",
    )


def test_unsupported_element_type_is_a_parse_error_at_the_type(
    run_irc_opt: RunIrcOpt,
) -> None:
    outcome = run_irc_opt(VALID.replace("f32", "i8", 1))
    assert_error(
        outcome,
        "input.mlir:1:40: error: unsupported element type i8 in graph.tensor",
        " " * 39 + "^^",
    )


def test_huge_exponent_is_an_error_at_the_exponent(run_irc_opt: RunIrcOpt) -> None:
    # Multiplying N out 100000 times used to take for ever.
    outcome = run_irc_opt(VALID.replace("[N, 4]", "[N ** 100000, 4]", 1))
    assert_error(
        outcome,
        "input.mlir:1:38: error: invalid shape expression: exponent 100000 is too "
        "large (at most 64)",
        " " * 37 + "^" * 6,
    )


def test_expression_too_large_to_expand_is_an_error(run_irc_opt: RunIrcOpt) -> None:
    # Each exponent is small, but expanding the power of a power is not.
    outcome = run_irc_opt(VALID.replace("[N, 4]", "[((N + M) ** 64) ** 64, 4]", 1))
    assert outcome.status == 1 and "Traceback" not in outcome.err
    assert "input.mlir:1:" in outcome.err
    assert "shape expression too large" in outcome.err


@pytest.mark.parametrize(
    "nested",
    [
        "(" * 3000 + "N" + ")" * 3000,
        "-" * 3000 + "N",
        "max(1, " * 3000 + "N" + ")" * 3000,
    ],
    ids=["parentheses", "signs", "max"],
)
def test_deeply_nested_shape_expression_is_an_error(
    run_irc_opt: RunIrcOpt, nested: str
) -> None:
    # 3000 levels used to overflow Python's stack inside xDSL's parser.
    outcome = run_irc_opt(VALID.replace("[N, 4]", f"[{nested}, 4]", 1))
    assert_error(outcome, "input.mlir:1:")
    message = f"error: shape expression nested more than {MAX_EXPR_NESTING} levels"
    assert message in outcome.err.splitlines()[0]


def test_compare_of_non_tensors_is_an_error_at_the_type(
    run_irc_opt: RunIrcOpt,
) -> None:
    text = (
        "func.func @f(%x: i32) {\n  %0 = graph.cmp lt, %x, %x : i32\n  func.return\n}\n"
    )
    outcome = run_irc_opt(text)
    assert_error(
        outcome,
        "input.mlir:2:31: error: graph.cmp compares !graph.tensor values, not i32",
        " " * 30 + "^",
    )


@pytest.mark.parametrize(
    "line",
    [
        "%0 = graph.cmp lt, %i, %i : i32",
        "%0 = graph.constant 1 : i32 -> i32",
        "%0 = graph.iota [0, 1] : !graph.tensor<[N], i64>",
        "%0 = graph.iota [0] : i32",
        "%0 = graph.dim N : i32",
        "%0 = graph.reduce sum %i [0] : i32 -> i32",
        f"%0 = graph.reduce sum %x [{2**64}] : {TYPE} -> !graph.tensor<[4], f32>",
        f"%0 = graph.argmax %x [] : {TYPE} -> !graph.tensor<[4], i64>",
        "%0 = graph.transpose %i [0] : i32 -> i32",
        f"%0 = graph.slice %x [0, 0] [1, 1.5] : {TYPE} -> {TYPE}",
        "%0 = graph.slice %i [0] [1] : i32 -> i32",
        f"%0 = graph.concat %x, %x [0] : ({TYPE}) -> {TYPE}",
        f"%0 = graph.concat %x [0] : ({TYPE}, {TYPE}) -> {TYPE}",
        f"%0 = graph.take %x, %i [0] : ({TYPE}) -> {TYPE}",
        "%0 = graph.take %i, %i [0] : (i32, i32) -> i32",
        f"%0 = graph.matmul %x, %i : ({TYPE}, i32) -> {TYPE}",
        'sym.guard N, "no comparison"',
        "sym.guard N == 2 ** 5000",
    ],
)
def test_malformed_custom_syntax_is_a_diagnostic(
    run_irc_opt: RunIrcOpt, line: str
) -> None:
    text = f"func.func @f(%x: {TYPE}, %i: i32) {{\n  {line}\n  func.return\n}}\n"
    outcome = run_irc_opt(text)
    assert_error(outcome, "input.mlir:2:")
    assert "internal error" not in outcome.err


def test_unknown_pass(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(VALID, "-p", "cse,frobnicate")
    assert_error(
        outcome,
        "pass-pipeline:1:5: error: unknown pass 'frobnicate'; known passes: "
        "annotate-sharding, auto-mixed-precision, autodiff, bufferize, "
        "canonicalize, combine-launches, cse, dce, dedupe-kernels, fuse, "
        "horizontal-fusion, lower-memory-to-triton, "
        "lower-to-triton, partition, propagate-sharding, tile, unroll-while",
        "    ^^^^^^^^^^",
    )


def test_bad_pass_option(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(VALID, "-p", "cse,canonicalize{fold=1}")
    assert_error(
        outcome,
        "pass-pipeline:1:5: error: invalid options for pass 'canonicalize': "
        'Provided arguments ["fold"] not found in expected arguments []',
        "    ^^^^^^^^^^^^",
    )


def test_malformed_pipeline(run_irc_opt: RunIrcOpt) -> None:
    # xDSL raises an ArgSpecParseError here, which derives from BaseException.
    outcome = run_irc_opt(VALID, "-p", "cse{")
    assert_error(outcome, "irc-opt: error: Error parsing pass pipeline specification:")
    assert outcome.err.splitlines()[1:] == [
        "pass-pipeline:1:5",
        "cse{",
        "    ^",
        "    Expected argument name here",
    ]


def test_missing_input_file(run_irc_opt: RunIrcOpt, tmp_path: Path) -> None:
    missing = tmp_path / "missing.mlir"
    outcome = run_irc_opt(None, str(missing))
    assert (outcome.status, outcome.err) == (
        1,
        f"{missing}: error: cannot open input file: No such file or directory\n",
    )


def test_split_input_file_counts_lines_in_the_whole_file(
    run_irc_opt: RunIrcOpt,
) -> None:
    text = VALID + "// -----\n\n" + INVALID_ADD
    outcome = run_irc_opt(text, "--split-input-file")
    assert_error(outcome, "input.mlir:10:9: error: 'graph.add' op")
    assert outcome.out.count("graph.mul") == 1  # the first chunk is still printed


def test_missing_closing_brace_points_at_the_open_region(
    run_irc_opt: RunIrcOpt,
) -> None:
    outcome = run_irc_opt(VALID.removesuffix("}\n"))
    brace = VALID.index("{\n")
    assert_error(
        outcome,
        f"input.mlir:1:{brace + 1}: error: region is not closed: the input ends "
        "before its '}'",
        " " * brace + "^",
    )


def test_stray_token_in_a_region_notes_where_it_opened(
    run_irc_opt: RunIrcOpt,
) -> None:
    stray = VALID.replace("  func.return", "  )\n  func.return")
    outcome = run_irc_opt(VALID + "// -----\n" + stray, "--split-input-file")
    assert_error(
        outcome,
        "input.mlir:12:3: error: expected an operation, a block label or the '}' "
        "closing the region",
        "  ^",
    )
    brace = VALID.index("{\n")
    assert f"input.mlir:8:{brace + 1}: note: the region opened here" in outcome.err


def test_undefined_value_is_an_error_at_its_use(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(VALID.replace("graph.mul %y, %z", "graph.mul %u, %v"))
    assert_error(
        outcome,
        "input.mlir:4:18: error: use of undefined value %u: no op or block "
        "argument in scope defines it (%v too)",
        "                 ^^",
    )


def test_unknown_op_is_an_error_at_its_name(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(VALID.replace("graph.mul", "graph.mull"))
    assert_error(
        outcome,
        "input.mlir:4:8: error: operation graph.mull is not registered: the graph "
        "dialect has no such op; did you mean graph.mul?",
        "       ^^^^^^^^^^",
    )


def test_op_of_an_unknown_dialect_is_an_error_at_its_name(
    run_irc_opt: RunIrcOpt,
) -> None:
    op = f'%w = "foo.mul"(%y, %z) : ({TYPE}, {TYPE}) -> {TYPE}'
    outcome = run_irc_opt(VALID.replace(f"%w = graph.mul %y, %z : {TYPE}", op))
    assert_error(
        outcome,
        "input.mlir:4:8: error: operation foo.mul is not registered: there is no "
        "dialect 'foo' (known: arith, builtin,",
        "       ^^^^^^^^^",
    )


# Input formats ---------------------------------------------------------------


def test_frontend_flag_names_the_format_of_any_file(
    run_irc_opt: RunIrcOpt,
) -> None:
    Path("ir.txt").write_text(VALID)
    outcome = run_irc_opt(None, "ir.txt", "-f", "mlir", "-p", "cse")
    assert (outcome.status, outcome.err) == (0, "")
    assert outcome.out.count("graph.add") == 1
    outcome = run_irc_opt(None, "ir.txt")
    assert outcome.err == (
        "ir.txt: error: Unrecognized file extension 'txt': name the input's "
        "format with -f mlir or -f onnx\n"
    )


def test_the_docs_name_every_input_format() -> None:
    """docs/irc-opt.md's row of ``-f`` lists the formats irc-opt reads."""
    docs = (REPOSITORY / "docs" / "irc-opt.md").read_text()
    row = next(line for line in docs.splitlines() if line.startswith("| `-f`"))
    documented = set(re.findall(r"`(\w+)`", row))
    main = irc_opt.IrcOptMain(args=[])
    assert set(main.available_frontends) <= documented, row


# Start-up --------------------------------------------------------------------


def test_version_names_irc_and_xdsl(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        irc_opt.main(["--version"])
    assert exit_.value.code == 0
    version = importlib.metadata.version
    assert capsys.readouterr().out == (
        f"irc-opt {version('irc')}, built on xDSL {version('xdsl')}\n"
    )


#: What irc-opt imports only when a run needs it: the capture of Python code
#: and the API, ``ml_dtypes`` (bfloat16 arrays: most of a second to import),
#: the runtime's torch and triton.
HEAVY = ("irc.api", "irc.capture", "ml_dtypes", "torch", "triton")


def test_start_up_imports_only_what_the_run_needs(tmp_path: Path) -> None:
    """``--version``, ``--help`` and graph passes, in a fresh interpreter,
    import none of :data:`HEAVY` (the times are ``benchmarks/startup.py``'s
    to measure, never asserted)."""
    path = tmp_path / "input.mlir"
    path.write_text(VALID)
    script = (
        "import sys\n"
        "from irc.cli import irc_opt\n"
        "for argv in (['--version'], ['--help']):\n"
        "    try:\n"
        "        irc_opt.main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"assert irc_opt.main([{str(path)!r}, '-p', 'canonicalize,cse']) == 0\n"
        f"print(sorted(set({HEAVY!r}) & set(sys.modules)))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert completed.stdout.splitlines()[-1] == "[]", completed.stdout[-2000:]


# Internal errors (bugs in a pass or a dialect) -------------------------------


@dataclass(frozen=True)
class CrashingPass(ModulePass):
    name = "crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise ZeroDivisionError("boom")


@dataclass(frozen=True)
class BreakingPass(ModulePass):
    """Makes every reduction invalid, or adds an invalid op of its own."""

    name = "break"

    add_op: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for reduce in [o for o in op.walk() if isinstance(o, ReduceOp)]:
            if self.add_op:
                reduce.parent_block().insert_op_before(
                    ReshapeOp(reduce.input, ["M"]), reduce
                )
            else:
                reduce.properties["axes"] = DenseArrayBase.from_list(i64, [5])


@irdl_op_definition
class CrashingOp(IRDLOperation):
    name = "test.crash"

    @classmethod
    def parse(cls, parser: Parser) -> CrashingOp:
        raise KeyError("oops")


@pytest.fixture
def with_crashing_extensions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make irc-opt know a pass and an op that raise plain exceptions."""
    passes = {
        **get_all_passes(),
        "crash": lambda: CrashingPass,
        "break": lambda: BreakingPass,
    }
    dialects = {**get_all_dialects(), "test": lambda: Dialect("test", [CrashingOp])}
    monkeypatch.setattr(irc_opt, "get_all_passes", lambda: passes)
    monkeypatch.setattr(irc_opt, "get_all_dialects", lambda: dialects)


@pytest.mark.usefixtures("with_crashing_extensions")
def test_exception_in_a_pass(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(VALID, "-p", "cse,crash")
    assert_error(
        outcome,
        "input.mlir: error: internal error in pass 'crash': ZeroDivisionError: boom",
    )
    note = outcome.err.splitlines()[1]
    assert note.startswith(f"note: raised at {__file__}:")
    assert note.endswith("rerun with --traceback for the Python traceback")


@pytest.mark.usefixtures("with_crashing_extensions")
def test_exception_in_a_parser_points_at_the_op(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt("func.func @f() {\n  test.crash\n  func.return\n}\n")
    assert_error(
        outcome,
        "input.mlir:2:3: error: internal error in the parser: KeyError: 'oops'",
    )


REDUCE = """\
func.func @f(%x: !graph.tensor<[N, 4], f32>) -> !graph.tensor<[N], f32> {
  %s = graph.reduce sum %x [1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N], f32>
  func.return %s : !graph.tensor<[N], f32>
}
"""


@pytest.mark.usefixtures("with_crashing_extensions")
def test_invalid_ir_from_a_pass_is_blamed_on_it(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(REDUCE, "-p", "break")
    assert_error(
        outcome,
        "input.mlir:2:8: error: 'graph.reduce' op reduction axis 5 is out of "
        "range for rank 2 (after pass 'break')",
    )


@pytest.mark.usefixtures("with_crashing_extensions")
def test_invalid_op_made_by_a_pass_is_shown_in_the_ir(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(REDUCE, "-p", "break{add-op=true}")
    assert_error(
        outcome,
        "input.mlir: error: 'graph.reshape' op cannot reshape [N, 4] (4*N "
        "elements) to [M] (M elements) (after pass 'break')",
    )
    assert '"graph.reshape"(%x)' in outcome.err  # the IR, the op underlined


@pytest.mark.usefixtures("with_crashing_extensions")
def test_traceback_flag_lets_internal_errors_raise(run_irc_opt: RunIrcOpt) -> None:
    with pytest.raises(ZeroDivisionError):
        run_irc_opt(VALID, "-p", "crash", "--traceback")


# --verify-diagnostics --------------------------------------------------------


def test_expected_error_matches(run_irc_opt: RunIrcOpt) -> None:
    text = INVALID_ADD.replace(
        "  %z", "  // expected-error@+1 {{'graph.add' op}}\n  %z"
    )
    outcome = run_irc_opt(text, "--verify-diagnostics")
    assert (outcome.status, outcome.out, outcome.err) == (0, "", "")


def test_expected_error_on_the_wrong_line(run_irc_opt: RunIrcOpt) -> None:
    text = INVALID_ADD.replace("  %z", "  // expected-error {{'graph.add' op}}\n  %z")
    outcome = run_irc_opt(text, "--verify-diagnostics")
    assert outcome.status == 1
    errors = [line for line in outcome.err.splitlines() if ": error: " in line]
    assert errors == [
        "input.mlir:3:9: error: unexpected error: 'graph.add' op operand 'rhs' at "
        "position 1 does not verify:",
        "input.mlir:2:3: error: expected error \"'graph.add' op\" was not produced",
    ]


def test_expected_error_not_produced(run_irc_opt: RunIrcOpt) -> None:
    text = VALID.replace("%w =", "// expected-error@+1 {{nope}}\n  %w =")
    outcome = run_irc_opt(text, "--verify-diagnostics")
    assert_error(
        outcome, 'input.mlir:4:3: error: expected error "nope" was not produced'
    )


def test_verify_diagnostics_without_annotations_prints_to_stdout(
    run_irc_opt: RunIrcOpt,
) -> None:
    # As xdsl-opt does, for tests that pipe the diagnostic into filecheck.
    outcome = run_irc_opt(INVALID_ADD, "--verify-diagnostics")
    assert (outcome.status, outcome.err) == (0, "")
    assert outcome.out.startswith("input.mlir:2:9: error: 'graph.add' op")


# --print-ir-after-all --------------------------------------------------------


def test_print_ir_after_all(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(VALID, "-p", "cse,dce", "--print-ir-after-all")
    assert outcome.status == 0
    headers = [
        line for line in outcome.err.splitlines() if line.startswith("// -----//")
    ]
    assert headers == [
        "// -----// IR Dump After cse //----- //",
        "// -----// IR Dump After dce //----- //",
    ]
    after_cse, after_dce = outcome.err.split(headers[1])
    assert after_cse.count("graph.add") == 1
    assert after_dce.strip() == outcome.out.strip()


# The console script ----------------------------------------------------------


def test_console_script_exits_with_a_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(INVALID_ADD)
    completed = subprocess.run(
        [str(Path(sys.executable).with_name("irc-opt")), str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 1
    assert completed.stderr.startswith(
        f"{path}:2:9: error: 'graph.add' op operand 'rhs' at position 1 does not "
        "verify:"
    )
    assert "Traceback" not in completed.stderr


def test_a_reader_that_goes_away_ends_irc_opt_quietly(tmp_path: Path) -> None:
    """``irc-opt ... | head``: when the pipe's reader closes it, irc-opt
    stops with status 141 (as Unix tools killed by SIGPIPE) and no Python
    traceback (there was one)."""
    path = tmp_path / "many.mlir"
    path.write_text(
        "\n// -----\n".join(
            f"func.func @f{i}(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {{\n"
            f"  %y = graph.exp %x : !graph.tensor<[N], f32>\n"
            f"  func.return %y : !graph.tensor<[N], f32>\n}}"
            for i in range(2000)
        )
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "irc.cli.irc_opt", str(path), "--split-input-file"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read(64)  # then the reader goes away
    process.stdout.close()
    err = process.stderr.read()
    assert process.wait(timeout=120) == 141
    assert b"Traceback" not in err, err.decode()[-2000:]
