"""Every level's IR is valid irc-opt input: for each suite program, the text
of ``c.ir(level)`` re-parses, verifies and re-prints identically, in custom
and in generic form, with and without locations; names, strings and file
names with any characters (quotes, backslashes, line breaks, non-ASCII)
read back as they were, or are refused by the verifier where the text
spells them as identifiers; and irc-opt's ``lower-to-triton`` from the
graph text emits the module the API emits."""

from __future__ import annotations

import functools
import io
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from control_flow_programs import PROGRAMS as CONTROL_FLOW
from hypothesis import given, settings
from hypothesis import strategies as st
from suite_programs import SUITE
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

import irc
from irc.ir import parse_module, print_module
from irc.lowering.pipeline import LEVEL_NAMES


def assert_reprints_identically(text: str, locations: bool) -> None:
    """``text`` parses, verifies and prints back to itself, in custom and
    in generic form."""
    module = parse_module(text)
    module.verify()
    assert print_module(module, locations=locations) == text
    generic = print_module(module, generic=True, locations=locations)
    assert print_module(parse_module(generic), locations=locations) == text


@pytest.fixture(scope="module")
def compiled() -> dict[str, irc.Compiled]:
    return {name: program.compile() for name, program in SUITE.items()}


@pytest.mark.parametrize("level", LEVEL_NAMES)
@pytest.mark.parametrize("name", sorted(SUITE))
def test_level_reprints_identically(
    compiled: dict[str, irc.Compiled], name: str, level: str
) -> None:
    assert_reprints_identically(compiled[name].ir(level), locations=False)


def test_irc_opt_emits_what_the_api_emits(
    compiled: dict[str, irc.Compiled], tmp_path: Path
) -> None:
    softmax = compiled["softmax"]
    source = tmp_path / "softmax.mlir"
    source.write_text(softmax.ir("graph", locations=True))  # for the comments
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "irc.cli.irc_opt",
            str(source),
            "-p",
            "canonicalize,cse,lower-to-triton",
            "-t",
            "triton",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip("\n") == softmax.triton_source.rstrip("\n")


@pytest.mark.parametrize("level", LEVEL_NAMES)
@pytest.mark.parametrize("name", sorted(SUITE))
def test_level_with_locations_reprints_identically(
    compiled: dict[str, irc.Compiled], name: str, level: str
) -> None:
    """With ``locations=True`` (``--print-debuginfo``) too: the locations of
    kernel arguments, of ops inside ``scf.for`` and of every op re-parse."""
    assert_reprints_identically(
        compiled[name].ir(level, locations=True), locations=True
    )


@pytest.fixture(scope="module")
def control_flow_compiled() -> dict[str, irc.Compiled]:
    return {name: program.compile() for name, program in CONTROL_FLOW.items()}


@pytest.mark.parametrize("locations", [False, True])
@pytest.mark.parametrize("level", LEVEL_NAMES)
@pytest.mark.parametrize("name", sorted(CONTROL_FLOW))
def test_control_flow_level_reprints_identically(
    control_flow_compiled: dict[str, irc.Compiled],
    name: str,
    level: str,
    locations: bool,
) -> None:
    """The programs with control flow (graph.cond/while/for at the graph,
    fusion and loop levels, scf over buffers in the host functions below),
    with and without locations."""
    text = control_flow_compiled[name].ir(level, locations=locations)
    assert_reprints_identically(text, locations=locations)


# Names, strings and file names a user (or a mutated input) can put into IR:
# quotes, backslashes, escapes that look like xDSL's, line breaks, control
# characters, non-ASCII text, IR punctuation.
HOSTILE = [
    'a"b',
    "a\\b",
    "a\\22b",
    "a\nb\rc",
    "a\tb\x00c\x7f",
    "josé ✓ 名前",
    '"\\"\n',
    'loc("x":1:2)',
    "} {",
    "#x %0 @k ^bb0",
    " ",
    "",
]


def _literal(text: str) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_string_literal(text)
    return stream.getvalue()


def _round_trips(text: str) -> ModuleOp:
    """``text`` parses and verifies, and what it prints (with and without
    locations, custom and generic) re-parses and re-prints identically."""
    module = parse_module(text)
    module.verify()
    for locations in (False, True):
        printed = print_module(module, locations=locations)
        again = parse_module(printed)
        again.verify()
        assert print_module(again, locations=locations) == printed
        generic = print_module(module, generic=True, locations=locations)
        assert print_module(parse_module(generic), locations=locations) == printed
    return module


def _substitute(text: str, pattern: str, replacement: str) -> str:
    changed = re.sub(pattern, lambda _: replacement, text)
    assert changed != text, pattern
    return changed


@pytest.mark.parametrize("level", LEVEL_NAMES)
def test_hostile_names_in_text_round_trip(
    compiled: dict[str, irc.Compiled], level: str
) -> None:
    """Kernel names, function names, reasons and file names in locations
    with any characters print as IR that reads back to the same values."""
    text = compiled["softmax"].ir(level, locations=True)
    for hostile in HOSTILE:
        quoted = _literal(hostile)
        changed = _substitute(text, r"@softmax\b", "@" + quoted)
        changed = _substitute(changed, r'loc\("[^"]*"', "loc(" + quoted)
        if level != "graph":
            kernel_name = _literal(hostile + ".k0")  # not the function's name
            changed = _substitute(changed, r"@k0\b", "@" + kernel_name)
            changed = _substitute(changed, r'reason "[^"]*"', "reason " + quoted)
        ops = list(_round_trips(changed).walk())
        functions = [op for op in ops if isinstance(op, FuncOp)]
        assert [f.sym_name.data for f in functions] == [hostile]
        files = {
            op.location.filename.data
            for op in ops
            if isinstance(op.location, FileLineColLoc)
        }
        assert files == {hostile}
        kernels = [op for op in ops if op.name.endswith(".kernel")]
        assert bool(kernels) == (level != "graph")
        for kernel in kernels:
            assert kernel.get_attr_or_prop("sym_name") == StringAttr(hostile + ".k0")
            assert kernel.get_attr_or_prop("reason") == StringAttr(hostile)


_HOSTILE_SOURCE = """
def {function}({x}, {y}):
    e = np.exp({x} - {x}.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True) + {y}
"""


@pytest.mark.parametrize(
    "filename",
    ['/tmp/a"b\\c/mod\nule.py', "/home/josé/名前 ✓.py", "<string \\22>"],
)
def test_captured_hostile_names_round_trip(filename: str) -> None:
    """A function defined in a file with a hostile name, with non-ASCII
    function and argument names, compiles to IR that round-trips at every
    level (the file name is in locations and, at fusion and below, in the
    kernels' reasons)."""
    namespace: dict[str, object] = {"np": np}
    source = _HOSTILE_SOURCE.format(function="función", x="χ", y="y_é")
    exec(compile(source, filename, "exec"), namespace)
    spec = irc.TensorSpec(("N", "D"), "float32")
    program = irc.compile(namespace["función"], spec, spec)
    for level in LEVEL_NAMES:
        for locations in (False, True):
            text = program.ir(level, locations=locations)
            module = _round_trips(text)
            assert print_module(module, locations=locations) == text
        files = {
            op.location.filename.data
            for op in parse_module(program.ir(level, locations=True)).walk()
            if isinstance(op.location, FileLineColLoc)
        }
        assert filename in files, level


@settings(max_examples=15, deadline=None)
@given(name=st.text(max_size=12), reason=st.text(max_size=40))
def test_any_kernel_name_and_reason_round_trip(name: str, reason: str) -> None:
    """Any text as a triton kernel's name and reason reads back."""
    text = _triton_softmax()
    text = _substitute(text, r"@k0\b", "@" + _literal(name))
    text = _substitute(text, r'reason "[^"]*"', "reason " + _literal(reason))
    module = _round_trips(text)
    kernel = module.body.block.first_op
    assert kernel is not None
    assert kernel.get_attr_or_prop("sym_name") == StringAttr(name)
    assert kernel.get_attr_or_prop("reason") == StringAttr(reason)


@functools.cache
def _triton_softmax() -> str:
    return SUITE["softmax"].compile().ir("triton", locations=True)


@pytest.mark.parametrize("level", ["loop", "memory", "triton"])
@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('symbols = ["D"]', 'symbols = ["a b"]', "invalid symbol name 'a b'"),
        ('symbols = ["D"]', 'symbols = ["if"]', "it is a Python keyword"),
        ("BLOCK_R = 8192", '"a\\"b" = 8192', "invalid tile name 'a\"b'"),
    ],
)
def test_names_the_text_cannot_spell_are_refused(
    compiled: dict[str, irc.Compiled], level: str, old: str, new: str, message: str
) -> None:
    """A kernel's symbols and tiles are spelt as bare identifiers (and
    reach Triton source): the generic form can carry any string there,
    which the verifier refuses, naming it."""
    generic = print_module(parse_module(compiled["softmax"].ir(level)), generic=True)
    module = parse_module(_substitute(generic, re.escape(old), new))
    with pytest.raises(VerifyException, match=re.escape(message)):
        module.verify()
