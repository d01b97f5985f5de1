"""Every level's IR is valid irc-opt input: for each suite program, the text
of ``c.ir(level)`` re-parses, verifies and re-prints identically, in custom
and in generic form, and irc-opt's ``lower-to-triton`` from the graph text
emits the module the API emits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from suite_programs import SUITE

import irc
from irc.ir import parse_module, print_module
from irc.lowering.pipeline import LEVEL_NAMES


@pytest.fixture(scope="module")
def compiled() -> dict[str, irc.Compiled]:
    return {name: program.compile() for name, program in SUITE.items()}


@pytest.mark.parametrize("level", LEVEL_NAMES)
@pytest.mark.parametrize("name", sorted(SUITE))
def test_level_reprints_identically(
    compiled: dict[str, irc.Compiled], name: str, level: str
) -> None:
    text = compiled[name].ir(level)
    module = parse_module(text)
    module.verify()
    assert print_module(module) == text
    generic = print_module(module, generic=True)
    assert print_module(parse_module(generic)) == text


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
