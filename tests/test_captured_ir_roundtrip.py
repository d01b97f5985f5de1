"""Captured IR is valid irc-opt input: irc-opt re-prints it identically, and
re-prints its own output identically, with and without locations."""

import subprocess
import sys
from pathlib import Path

import pytest
from programs import compile_block, softmax

import irc


def _irc_opt(path: Path, *flags: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "irc.cli.irc_opt", str(path), *flags],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _compiled_programs():
    softmax_c = irc.compile(softmax, irc.TensorSpec(("N", "D"), "float32"))
    yield "softmax", softmax_c
    yield "gpt2_block", compile_block()


@pytest.mark.parametrize("locations", [False, True])
def test_irc_opt_reprints_captured_ir_identically(tmp_path, locations):
    flags = ("--print-debuginfo",) if locations else ()
    for name, compiled in _compiled_programs():
        text = compiled.ir("graph", locations=locations)
        first = tmp_path / f"{name}.mlir"
        first.write_text(text)
        printed = _irc_opt(first, *flags)
        assert printed == text, name
        second = tmp_path / f"{name}.again.mlir"
        second.write_text(printed)
        assert _irc_opt(second, *flags) == printed, name
