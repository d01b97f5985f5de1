"""irc-opt on hostile input text: it never hangs, never prints a traceback,
never reports an internal error, and locates every diagnostic.

First the cases found by mutating irc's IR (each once a hang, a traceback or
an internal error), each a located diagnostic in milliseconds; then the
dominance check on its own; then the mutation fuzzer of ``irc_opt_fuzz``
over the FileCheck inputs of every level, bounded for CI:
``IRC_FUZZ_EXAMPLES=2000 pytest tests/test_irc_opt_robustness.py -s`` runs
more mutants (``IRC_FUZZ_SEED`` picks other ones) and prints the counts.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import irc_opt_fuzz
import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith, cf, func
from xdsl.utils.exceptions import ParseError

from irc.cli import irc_opt
from irc.dominance import DominanceError, verify_dominance
from irc.ir import parse_module, print_module, verify_module
from irc.parsing import MAX_INTEGER_DIGITS, MAX_NESTING, IrcParser

REPOSITORY = Path(__file__).resolve().parent.parent
TENSOR = "!graph.tensor<[N], f32>"
#: How long a case may take in-process: the hangs took seconds to hours.
FAST = 0.5
#: How long a case that runs a loop up to the reference interpreter's budget
#: (``MAX_LOOP_OPS``, about half a second idle, 3.4 s once on a CI machine
#: shared with three fuzzers) may take in-process: well under the 8 and 18 s
#: of the hangs the budget fixed.
LOOP_BUDGET = 6.0


@dataclass(frozen=True)
class Outcome:
    status: int
    out: str
    err: str
    seconds: float


RunIrcOpt = Callable[..., Outcome]


@pytest.fixture(scope="module", autouse=True)
def _warm(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Import what irc-opt imports lazily, so that timings measure the run."""
    path = tmp_path_factory.mktemp("warm") / "warm.mlir"
    path.write_text(
        function(f"%y = graph.add %x, %x : {TENSOR}", arguments=f"%x: {TENSOR}")
    )
    with contextlib.redirect_stdout(io.StringIO()):
        assert irc_opt.main([str(path), "-p", "canonicalize,cse"]) == 0


@pytest.fixture
def run_irc_opt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> RunIrcOpt:
    """Run irc-opt in-process on ``data`` (text or bytes) in ``input.mlir``."""
    monkeypatch.chdir(tmp_path)

    def run(data: str | bytes, *args: str) -> Outcome:
        path = Path("input.mlir")
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        capsys.readouterr()
        started = time.perf_counter()
        status = irc_opt.main([str(path), *args])
        seconds = time.perf_counter() - started
        captured = capsys.readouterr()
        return Outcome(status, captured.out, captured.err, seconds)

    return run


def assert_located(
    outcome: Outcome, head: str, message: str, within: float = FAST
) -> None:
    """Exit status 1, quickly (``within`` seconds), one located diagnostic
    ``head: error: message...`` (``head`` a pattern), no traceback and no
    internal error."""
    assert outcome.status == 1, outcome
    assert outcome.seconds < within, outcome.seconds
    assert "Traceback" not in outcome.err
    assert "internal error" not in outcome.err
    first = outcome.err.splitlines()[0]
    assert re.match(f"{head}: error: {re.escape(message)}", first), first[:300]


def function(*body: str, arguments: str = "") -> str:
    lines = "".join(f"  {line}\n" for line in body)
    return f"func.func @f({arguments}) {{\n{lines}  func.return\n}}\n"


# Strings -----------------------------------------------------------------


@pytest.mark.parametrize("length", [24, 30, 200, 100_000])
def test_unclosed_string_is_located_at_once(
    run_irc_opt: RunIrcOpt, length: int
) -> None:
    """xDSL's string pattern backtracks exponentially on an unclosed string
    (30 characters took over 20 s)."""
    text = function(f'sym.guard N <= 8, "{"a" * length}')
    outcome = run_irc_opt(text, "-p", "canonicalize")
    assert_located(outcome, "input.mlir:2:21", "string literal is not closed")


def test_unclosed_string_as_the_first_token() -> None:
    """``printf '"x' | irc-opt`` printed a traceback: xDSL's parser reads its
    first token when it is made."""
    completed = subprocess.run(
        [sys.executable, "-m", "irc.cli.irc_opt"],
        input=b'"x',
        capture_output=True,
        cwd=REPOSITORY,
        check=False,
        timeout=60,
    )
    assert completed.returncode == 1
    assert completed.stderr.decode().startswith(
        "stdin:1:1: error: string literal is not closed"
    ), completed.stderr
    assert b"Traceback" not in completed.stderr


def test_invalid_escape_is_located(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(function('sym.guard N <= 8, "a\\qb"'))
    assert_located(outcome, "input.mlir:2:23", "invalid escape sequence")


def test_strings_with_escapes_still_parse_and_print_back() -> None:
    text = print_module(parse_module(function('sym.guard N <= 8, "t\\t\\"q\\"\\0A"')))
    assert 'sym.guard N <= 8, "t\\09\\22q\\22\\0A"' in text  # as xDSL prints them
    assert print_module(parse_module(text)) == text


# Numbers -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("literal", "column"),
    [("9" * 5000, 23), ("0x" + "f" * 4000, 23)],
    ids=["decimal", "hexadecimal"],
)
def test_huge_integer_is_located(
    run_irc_opt: RunIrcOpt, literal: str, column: int
) -> None:
    """Python refuses ``int()`` of more than 4,300 digits (a ``ValueError``
    inside xDSL's parser)."""
    outcome = run_irc_opt(function(f"%0 = arith.constant {literal} : i64"))
    assert_located(outcome, f"input.mlir:2:{column}", "number of")


def test_longest_integer_is_an_ordinary_value_error(run_irc_opt: RunIrcOpt) -> None:
    literal = "9" * MAX_INTEGER_DIGITS
    outcome = run_irc_opt(function(f"%0 = arith.constant {literal} : i64"))
    assert_located(outcome, "input.mlir:2:23", "invalid attribute value: Integer")


def test_huge_integer_type_width_is_located(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(function(f"%0 = arith.constant 1 : i{'9' * 5000}"))
    assert_located(outcome, "input.mlir:2:27", "number of 5000 digits")


def test_float_too_large_for_its_type_is_located(run_irc_opt: RunIrcOpt) -> None:
    """``struct.pack`` of 1e300 as f32 raised ``OverflowError``."""
    literal = "dense<[1.0, 1.0e300]> : tensor<2xf32>"
    text = function(f"%0 = graph.constant {literal} -> !graph.tensor<[2], f32>")
    outcome = run_irc_opt(text)
    assert_located(outcome, "input.mlir:2:23", "invalid attribute value: float")


def test_malformed_complex_number_is_located(run_irc_opt: RunIrcOpt) -> None:
    """xDSL asserted the ``)`` of a complex number (an ``AssertionError``)."""
    literal = "dense<[(1.0, 2.0, 3.0)]> : tensor<1xcomplex<f32>>"
    text = function(f'"test.op"() {{a = {literal}}} : () -> ()')
    outcome = run_irc_opt(text, "--allow-unregistered-dialect")
    assert_located(outcome, "input.mlir:2:36", "')' expected")


def test_huge_splat_is_refused(run_irc_opt: RunIrcOpt) -> None:
    """xDSL stores every element of a splat (a second a million)."""
    text = function("%0 = arith.constant dense<1> : tensor<1000000000xi32>")
    outcome = run_irc_opt(text)
    assert_located(outcome, "input.mlir:2:28", "dense literal stands for 1000000000")


# Nesting -----------------------------------------------------------------


def regions(depth: int) -> str:
    opening = '"scf.execute_region"() ({\n' * depth
    closing = '"scf.yield"() : () -> ()\n}) : () -> ()\n' * depth
    return function(opening + closing)


def test_nested_regions_are_located(run_irc_opt: RunIrcOpt) -> None:
    """About 110 nested regions reached Python's recursion limit."""
    outcome = run_irc_opt(regions(200))
    line = MAX_NESTING + 1  # the function's body is the first region
    assert_located(outcome, f"input.mlir:{line}:25", "region nested more than 64")


def test_regions_as_deep_as_allowed_go_through_the_pipeline(
    run_irc_opt: RunIrcOpt,
) -> None:
    outcome = run_irc_opt(regions(MAX_NESTING - 1), "-p", "canonicalize,cse")
    assert (outcome.status, outcome.err) == (0, "")
    outcome = run_irc_opt(regions(MAX_NESTING - 1), "--print-op-generic")
    assert (outcome.status, outcome.err) == (0, "")


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("[" * 2000 + "]" * 2000, "attribute"),
        ("{b = " * 2000 + "1" + "}" * 2000, "attribute"),
        ("tuple<" * 2000 + "i32" + ">" * 2000, "type"),
        (
            "dense<" + "[" * 2000 + "1" + "]" * 2000 + "> : tensor<1xi32>",
            "tensor literal",
        ),
        ("affine_map<(d0) -> (" + "(" * 3000 + "d0" + ")" * 3000 + ")>", "input"),
    ],
    ids=["arrays", "dictionaries", "types", "dense", "affine"],
)
def test_deep_attributes_are_located(
    run_irc_opt: RunIrcOpt, value: str, what: str
) -> None:
    text = f'"builtin.module"() ({{}}) {{a = {value}}} : () -> ()\n'
    outcome = run_irc_opt(text)
    assert_located(outcome, r"input.mlir:1:\d+", "")
    assert f"error: {what} nested" in outcome.err, outcome.err


def test_deep_type_in_a_signature_is_located(run_irc_opt: RunIrcOpt) -> None:
    nested = "tuple<" * 2000 + "i32" + ">" * 2000
    outcome = run_irc_opt(function(arguments=f"%x: {nested}"))
    assert_located(outcome, r"input.mlir:1:\d+", "")
    assert "type nested more than 64 levels" in outcome.err


# Bytes -------------------------------------------------------------------


def test_undecodable_byte_is_located(run_irc_opt: RunIrcOpt) -> None:
    data = b"func.func @f() {\n  func.return \xff\n}\n"
    outcome = run_irc_opt(data)
    assert_located(outcome, "input.mlir:2:15", "input is not UTF-8 text")
    assert "0xff" in outcome.err


def test_undecodable_chunk_does_not_stop_the_others(run_irc_opt: RunIrcOpt) -> None:
    data = b"func.func @f() {\n  func.return\n}\n// -----\n\xc3"
    outcome = run_irc_opt(data, "--split-input-file")
    assert outcome.status == 1
    assert "func.func @f()" in outcome.out
    assert outcome.err.startswith("input.mlir:5:1: error: input is not UTF-8 text")


# Dominance ---------------------------------------------------------------


@pytest.mark.parametrize("label", ["^0", "^12"])
def test_a_block_name_xdsl_cannot_keep_is_located(
    run_irc_opt: RunIrcOpt, label: str
) -> None:
    """Found by the fuzzer (an internal error: xDSL raised a bare
    ValueError for ``^0``); MLIR's grammar takes such labels, so the
    message says what irc wants instead."""
    text = (
        f'"func.func"() <{{sym_name = "f", function_type = () -> ()}}> ({{\n'
        f"{label}:\n"
        '  "func.return"() : () -> ()\n'
        "}) : () -> ()\n"
    )
    outcome = run_irc_opt(text, "-p", "canonicalize")
    assert_located(outcome, "input.mlir:2:1", f"block label '{label}'")
    assert "'^bb0'" in outcome.err


def test_block_names_xdsl_keeps_still_parse(run_irc_opt: RunIrcOpt) -> None:
    for label in ("^bb0", "^entry", "^_x"):
        text = (
            '"func.func"() <{sym_name = "f", function_type = () -> ()}> ({\n'
            f"{label}:\n"
            '  "func.return"() : () -> ()\n'
            "}) : () -> ()\n"
        )
        assert run_irc_opt(text, "-p", "canonicalize").status == 0


def test_use_before_def_is_located_with_its_definition(run_irc_opt: RunIrcOpt) -> None:
    """xDSL checks no dominance: this verified and then failed later passes
    with a ``KeyError``."""
    text = function(
        f"%y = graph.add %z, %x : {TENSOR}",
        f"%z = graph.add %x, %x : {TENSOR}",
        arguments=f"%x: {TENSOR}",
    )
    outcome = run_irc_opt(text, "-p", "fuse")
    assert_located(
        outcome,
        "input.mlir:2:8",
        "'graph.add' op operand #0 (%z) is used before it is defined",
    )
    assert "input.mlir:3:8: note: %z is defined here" in outcome.err


def test_use_of_a_later_value_inside_a_region(run_irc_opt: RunIrcOpt) -> None:
    text = """\
func.func @f(%x: i32) -> i32 {
  %r = scf.execute_region -> i32 {
    %s = arith.addi %later, %x : i32
    scf.yield %s : i32
  }
  %later = arith.addi %x, %x : i32
  func.return %r : i32
}
"""
    outcome = run_irc_opt(text)
    assert_located(
        outcome, "input.mlir:3:10", "'arith.addi' op operand #0 (%later) is used"
    )


def test_result_used_by_its_own_op(run_irc_opt: RunIrcOpt) -> None:
    text = function(f"%y = graph.add %y, %x : {TENSOR}", arguments=f"%x: {TENSOR}")
    outcome = run_irc_opt(text)
    assert_located(outcome, "input.mlir:2:8", "'graph.add' op operand #0 (%y) is a")


def test_operand_defined_in_the_ops_own_region(run_irc_opt: RunIrcOpt) -> None:
    """xDSL resolved the forward reference before the op was built, which
    kept a placeholder operand that crashed the verifier."""
    text = """\
func.func @f(%x: i32, %n: index) -> i32 {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %r = scf.for %i = %zero to %n step %one iter_args(%a = %init) -> (i32) {
    %init = arith.addi %x, %x : i32
    scf.yield %a : i32
  }
  func.return %r : i32
}
"""
    outcome = run_irc_opt(text)
    assert_located(outcome, "input.mlir:4:58", "operand #3 (%init) of 'scf.for'")


def cfg_module(returned: str) -> str:
    return f"""\
func.func @f(%c: i1, %x: i32) -> i32 {{
  cf.cond_br %c, ^a, ^b
^a:
  %y = arith.addi %x, %x : i32
  cf.br ^join
^b:
  cf.br ^join
^join:
  func.return {returned} : i32
^dead:
  %z = arith.addi %y, %y : i32
  func.return %z : i32
}}
"""


def cfg_context() -> Context:
    ctx = Context()
    for dialect in (func.Func, cf.Cf, arith.Arith):
        ctx.load_dialect(dialect)
    return ctx


def test_dominance_across_blocks_follows_the_control_flow() -> None:
    """A value of a block that does not dominate the use is refused; one of
    the entry block is visible everywhere; an unreachable block is not
    checked (as in MLIR)."""
    verify_module(IrcParser(cfg_context(), cfg_module("%x")).parse_module())
    module = IrcParser(cfg_context(), cfg_module("%y")).parse_module()
    module.verify()
    with pytest.raises(DominanceError, match="does not dominate this use") as error:
        verify_dominance(module)
    assert error.value.op.name == "func.return"


def test_verify_module_checks_dominance() -> None:
    module = parse_module(
        function(
            f"%y = graph.add %z, %x : {TENSOR}",
            f"%z = graph.add %x, %x : {TENSOR}",
            arguments=f"%x: {TENSOR}",
        )
    )
    module.verify()  # xDSL's verifier accepts it
    with pytest.raises(DominanceError, match=r"operand #0 \(%z\) is used before"):
        verify_module(module)


def test_parse_module_raises_parse_errors_only() -> None:
    for text in ['"x', function(f'sym.guard N <= 8, "{"a" * 40}'), regions(200)]:
        started = time.perf_counter()
        with pytest.raises(ParseError):
            parse_module(text)
        assert time.perf_counter() - started < FAST


# Verifiers, passes and targets behind invalid or odd input ---------------


def test_crashing_verifier_behind_an_invalid_op(run_irc_opt: RunIrcOpt) -> None:
    """``func.return``'s verifier reads its function's type, which a
    function without ``function_type`` lacks (a ``KeyError``); the invalid
    function is what is reported."""
    text = """\
"builtin.module"() ({
  "func.func"() <{sym_name = "f", fun_type = () -> ()}> ({
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
"""
    outcome = run_irc_opt(text)
    assert_located(outcome, "input.mlir:2:4", "'func.func' op property 'function_type'")


def test_redefined_symbol_is_located_at_the_second_definition(
    run_irc_opt: RunIrcOpt,
) -> None:
    """xDSL reports it at the module, which an implicit module has no place
    for."""
    outcome = run_irc_opt(function() + function())
    assert_located(outcome, "input.mlir:4:1", "'func.func' op redefines symbol @f")
    assert "input.mlir:1:1: note: @f is first defined here" in outcome.err


def test_declaration_is_refused_by_the_emitter(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt("func.func @f()\n", "-p", "lower-to-triton", "-t", "triton")
    assert_located(
        outcome, "input.mlir:1:1", "cannot emit Triton source: func.func @f is a"
    )


NEGATION = f"""\
func.func @f(%x: {TENSOR}) -> {TENSOR} {{
  %y = graph.neg %x : {TENSOR}
  func.return %y : {TENSOR}
}}
"""


def nested_module() -> str:
    """A module holding a module holding a pointwise function."""
    body = "".join(f"    {line}\n" for line in NEGATION.splitlines())
    return f"builtin.module {{\n  builtin.module {{\n{body}  }}\n}}\n"


def test_the_pipeline_lowers_a_nested_module_as_a_top_one(
    run_irc_opt: RunIrcOpt,
) -> None:
    """bufferize once skipped a nested module that fuse and tile had lowered,
    and lower-memory-to-triton retyped its tiles: an unverifiable module."""
    nested = run_irc_opt(nested_module(), "-p", "lower-to-triton")
    top = run_irc_opt(NEGATION, "-p", "lower-to-triton")
    assert nested.status == top.status == 0, nested.err
    assert "triton.kernel @" in top.out
    inner = nested.out.splitlines()[2:-2]  # within the two modules
    assert [line.removeprefix("  ") for line in inner] == top.out.splitlines()[1:-1]


def test_a_nested_module_is_refused_by_the_emitter(run_irc_opt: RunIrcOpt) -> None:
    outcome = run_irc_opt(nested_module(), "-p", "lower-to-triton", "-t", "triton")
    assert_located(
        outcome,
        "input.mlir:2:3",
        "cannot emit Triton source: a nested builtin.module",
    )


def test_check_semantics_refuses_huge_values(run_irc_opt: RunIrcOpt) -> None:
    tensor = "!graph.tensor<[100000000000], i64>"
    text = function(f"%0 = graph.iota [0] : {tensor}")
    outcome = run_irc_opt(text, "-p", "canonicalize", "--check-semantics")
    assert_located(
        outcome, "input.mlir:2:8", "--check-semantics cannot run the input: 'graph"
    )


SCALAR = "!graph.tensor<[], i64>"


def counted_loop(length: int) -> str:
    return f"""\
func.func @f(%c: {SCALAR}) -> {SCALAR} {{
  %r = graph.for {length} reverse carries (%c) : ({SCALAR}) xs () : () -> ({SCALAR}) {{
  ^bb0(%i: {SCALAR}, %s: {SCALAR}):
    graph.yield %i : {SCALAR}
  }}
  func.return %r : {SCALAR}
}}
"""


def test_check_semantics_refuses_a_loop_too_long_to_run(run_irc_opt: RunIrcOpt) -> None:
    """The reference interpreter ran all 2**31 iterations (hours)."""
    outcome = run_irc_opt(
        counted_loop(2**31), "-p", "canonicalize", "--check-semantics"
    )
    assert_located(
        outcome, "input.mlir:2:8", "'graph.for' op: --check-semantics cannot run the"
    )
    assert "would run 2147483648 iterations" in outcome.err


def test_check_semantics_stops_a_loop_that_never_ends(
    run_irc_opt: RunIrcOpt, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graph.while whose predicate stays true ran forever. At the real
    bound it stops in seconds; a lower one keeps the test within ``FAST``."""
    from irc.testing import semantics

    monkeypatch.setattr(semantics, "MAX_LOOP_ITERATIONS", 1000)
    text = f"""\
func.func @f(%c: {SCALAR}) -> {SCALAR} {{
  %r = graph.while (%c) : ({SCALAR}) cond {{
  ^bb0(%i: {SCALAR}):
    %z = graph.constant 0 -> {SCALAR}
    %p = graph.cmp gt, %i, %z : {SCALAR}
    graph.yield %p : !graph.tensor<[], i1>
  }} body {{
  ^bb0(%i: {SCALAR}):
    graph.yield %i : {SCALAR}
  }}
  func.return %r : {SCALAR}
}}
"""
    outcome = run_irc_opt(text, "-p", "canonicalize", "--check-semantics")
    assert_located(
        outcome, "input.mlir:2:8", "'graph.while' op: --check-semantics cannot run"
    )
    assert "has not ended after the 1000 loop iterations" in outcome.err


def loop_budget_message() -> str:
    from irc.interpreters.graph import MAX_LOOP_OPS

    return f"the loop has not ended after the {MAX_LOOP_OPS} ops in all"


def assert_stopped_at_the_while_loop(run_irc_opt: RunIrcOpt, text: str) -> None:
    """``--check-semantics`` on ``text`` stops its graph.while (line 2) by
    the loop budget, located, within ``LOOP_BUDGET``."""
    outcome = run_irc_opt(text, "-p", "canonicalize", "--check-semantics")
    assert_located(
        outcome,
        "input.mlir:2:10",
        "'graph.while' op: --check-semantics cannot run",
        within=LOOP_BUDGET,
    )
    assert loop_budget_message() in outcome.err


def test_check_semantics_stops_a_loop_of_vector_ops_that_never_ends(
    run_irc_opt: RunIrcOpt,
) -> None:
    """A counter decremented by 0 (found by the fuzzer, a hang): its
    100,000 iterations of adds over [N] took 8 seconds per run, more with
    several runs on a loaded machine; the ops the loops run are bounded."""
    i64, x = SCALAR, TENSOR
    text = f"""\
func.func @f(%a: {x}, %n: {i64}) -> {i64} {{
  %r:3 = graph.while (%n, %a, %a) : ({i64}, {x}, {x}) cond {{
  ^bb0(%i: {i64}, %x: {x}, %y: {x}):
    %z = graph.constant 0 -> {i64}
    %p = graph.cmp gt, %i, %z : {i64}
    graph.yield %p : !graph.tensor<[], i1>
  }} body {{
  ^bb0(%i: {i64}, %x: {x}, %y: {x}):
    %o = graph.constant 0 -> {i64}
    %j = graph.sub %i, %o : {i64}
    %x2 = graph.add %x, %y : {x}
    graph.yield %j, %x2, %y : {i64}, {x}, {x}
  }}
  func.return %r#0 : {i64}
}}
"""
    assert_stopped_at_the_while_loop(run_irc_opt, text)


def test_check_semantics_stops_a_loop_of_many_ops_that_never_ends(
    run_irc_opt: RunIrcOpt,
) -> None:
    """``i > 2**63`` (-2**63 as an i64) stays true (found by the fuzzer, a
    hang): 100,000 iterations of 14 ops (tanh, reductions) took 17 seconds
    per run."""
    i64, x = SCALAR, TENSOR
    f32 = "!graph.tensor<[], f32>"
    text = f"""\
func.func @f(%w: {x}, %n: {i64}) -> {i64} {{
  %r:2 = graph.while (%n, %w) : ({i64}, {x}) cond {{
  ^bb0(%i: {i64}, %v: {x}):
    %z = graph.constant 9223372036854775808 -> {i64}
    %p = graph.cmp gt, %i, %z : {i64}
    graph.yield %p : !graph.tensor<[], i1>
  }} body {{
  ^bb0(%i: {i64}, %v: {x}):
    %t = graph.tanh %v : {x}
    %s = graph.slice %v [0] [1] : {x} -> !graph.tensor<[1], f32>
    %m = graph.reduce sum %s [0] : !graph.tensor<[1], f32> -> {f32}
    %k = graph.reduce sum %t [0] : {x} -> {f32}
    %q = graph.add %m, %k : {f32}
    %qi = graph.cast %q : {f32} -> {i64}
    %o = graph.constant 1 -> {i64}
    %j = graph.sub %i, %o : {i64}
    %qq = graph.mul %qi, %qi : {i64}
    %j2 = graph.sub %j, %qq : {i64}
    graph.yield %j2, %v : {i64}, {x}
  }}
  func.return %r#0 : {i64}
}}
"""
    assert_stopped_at_the_while_loop(run_irc_opt, text)


def test_check_semantics_bounds_a_loop_over_large_tensors(
    run_irc_opt: RunIrcOpt,
) -> None:
    """An op counts once per ``ELEMENTS_PER_OP`` elements of its results:
    1,000 iterations of tanh over 2**20 elements stop within ``FAST``."""
    x = "!graph.tensor<[1024, 1024], f32>"
    text = f"""\
func.func @f(%w: {x}) -> {x} {{
  %r = graph.for 1000 carries (%w) : ({x}) xs () : () -> ({x}) {{
  ^bb0(%i: {SCALAR}, %v: {x}):
    %t = graph.tanh %v : {x}
    graph.yield %t : {x}
  }}
  func.return %r : {x}
}}
"""
    outcome = run_irc_opt(text, "-p", "canonicalize", "--check-semantics")
    assert_located(
        outcome, "input.mlir:2:8", "'graph.for' op: --check-semantics cannot run"
    )
    assert loop_budget_message() in outcome.err


def test_loop_of_thousands_of_iterations_runs_within_the_budget() -> None:
    """The budget leaves room for loops of a few thousand iterations of ten
    or so ops (graph.for 3000 here), as the checkers run them."""
    from irc.interpreters.graph import loop_limit, run_graph
    from irc.testing.semantics import MAX_LOOP_ITERATIONS

    x = "!graph.tensor<[4], f32>"
    body = "".join(f"    %t{k + 1} = graph.add %t{k}, %v : {x}\n" for k in range(9))
    text = f"""\
func.func @f(%w: {x}) -> {x} {{
  %r = graph.for 3000 carries (%w) : ({x}) xs () : () -> ({x}) {{
  ^bb0(%i: {SCALAR}, %v: {x}):
    %t0 = graph.mul %v, %v : {x}
{body}    graph.yield %t9 : {x}
  }}
  func.return %r : {x}
}}
"""
    module = parse_module(text)
    with loop_limit(MAX_LOOP_ITERATIONS):
        (result,) = run_graph(module, [np.zeros(4, np.float32)])
    assert result.shape == (4,)


def test_loop_longer_than_its_index_counts_is_located(run_irc_opt: RunIrcOpt) -> None:
    """The reference interpreter raised an OverflowError making the index
    of iteration 2**64 - 1 (an internal error)."""
    outcome = run_irc_opt(
        counted_loop(2**64), "-p", "canonicalize", "--check-semantics"
    )
    assert_located(
        outcome,
        "input.mlir:2:8",
        "'graph.for' op graph.for length 18446744073709551616",
    )


def test_check_semantics_locates_an_op_failing_on_every_draw(
    run_irc_opt: RunIrcOpt,
) -> None:
    """The interpreter's error lost the op on its way out: no line:col."""
    x, v = "!graph.tensor<[N, M], f32>", "!graph.tensor<[1, M], f32>"
    text = f"""\
func.func @f(%x: {x}, %v: {v}) -> {v} {{
  %y = graph.insert_slice %v into %x [N - 1, 0] [1, 1] : {v} -> {x}
  %r = graph.slice %y [N - 128, 0] [1, 1] : {x} -> {v}
  func.return %r : {v}
}}
"""
    outcome = run_irc_opt(text, "-p", "canonicalize", "--check-semantics")
    assert_located(
        outcome, "input.mlir:3:8", "'graph.slice' op: --check-semantics cannot run the"
    )


def test_check_semantics_locates_facts_no_small_size_satisfies(
    run_irc_opt: RunIrcOpt,
) -> None:
    """No op failed: the guards' facts leave nothing to draw (found by the
    fuzzer with no line:col); the diagnostic is at the first guard."""
    text = """\
func.func @f(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  sym.guard N >= 4294967296
  func.return %x : !graph.tensor<[N], f32>
}
"""
    outcome = run_irc_opt(text, "-p", "canonicalize", "--check-semantics")
    assert_located(
        outcome, "input.mlir:2:3", "'sym.guard' op: --check-semantics cannot run the"
    )


# The fuzzer --------------------------------------------------------------

FUZZ_EXAMPLES = int(os.environ.get("IRC_FUZZ_EXAMPLES", "300"))
FUZZ_SEED = int(os.environ.get("IRC_FUZZ_SEED", "0"))
#: A run that takes longer hangs (a run takes milliseconds; the worker
#: answers within this even on a loaded machine).
FUZZ_LIMIT = 20.0


def test_seeds_cover_every_level_in_both_forms() -> None:
    seeds = irc_opt_fuzz.seeds()
    levels = {irc_opt_fuzz.level_of(Path(s.name.split("#")[0])) for s in seeds} - {None}
    assert levels == {"graph", "fusion", "loop", "memory", "triton"}
    generic = irc_opt_fuzz.generic_seeds(seeds)
    assert len(generic) > len(seeds) / 2


def test_mutants_of_every_level_end_in_output_or_located_diagnostics() -> None:
    """Every mutant ends within the limit, with exit status 0, or 1 and
    located diagnostics: never a traceback, never an internal error."""
    worker = irc_opt_fuzz.Worker(limit=FUZZ_LIMIT)
    statuses: collections.Counter[int | None] = collections.Counter()
    failures: list[str] = []
    slowest = 0.0
    try:
        for index, mutant in enumerate(irc_opt_fuzz.mutants(FUZZ_EXAMPLES, FUZZ_SEED)):
            outcome = worker.run(mutant.data, mutant.seed.args)
            statuses[outcome.status] += 1
            slowest = max(slowest, outcome.seconds)
            if problems := outcome.problems():
                failures.append(
                    f"mutant {index} of seed {FUZZ_SEED} ({mutant.seed.name}, "
                    f"irc-opt {' '.join(mutant.seed.args)}, {mutant.mutations}): "
                    f"{'; '.join(problems)}\n{outcome.stderr[:2000]}\ninput: "
                    f"{mutant.data[:2000]!r}"
                )
    finally:
        worker.close()
    print(
        f"\n{FUZZ_EXAMPLES} mutants (seed {FUZZ_SEED}): exit status 0: "
        f"{statuses[0]}, 1: {statuses[1]}, other or none: "
        f"{FUZZ_EXAMPLES - statuses[0] - statuses[1]}; failures: {len(failures)}; "
        f"slowest run {slowest:.3f} s"
    )
    assert not failures, "\n\n".join(failures[:5])
