"""Passes from outside irc: a package declaring one in the ``irc.passes``
entry-point group, and ``irc-opt --load-pass-plugin`` files and modules.

The package is made the way pip leaves an installed one (a module and its
``.dist-info`` with ``entry_points.txt``) in a directory put on the path, so
the discovery under test is ``importlib.metadata``'s own.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from irc import testing
from irc.passes.plugins import PluginError, installed_passes, load_plugin
from irc.passes.registry import get_all_passes

#: A correct pass: it swaps the operands of every ``graph.add``.
USER_PASS = """
from dataclasses import dataclass

from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern,
)

from irc.dialects import graph


class _Swap(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.AddOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, graph.AddOp(op.rhs, op.lhs))


@dataclass(frozen=True)
class SwapAddOperands(ModulePass):
    name = "swap-add-operands"

    def apply(self, ctx, op) -> None:
        # Once over the module: the new adds are not visited again.
        PatternRewriteWalker(_Swap(), apply_recursively=False).rewrite_module(op)
"""

PROGRAM = """\
func.func @main(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %s = graph.add %x, %y : !graph.tensor<[N], f32>
  func.return %s : !graph.tensor<[N], f32>
}
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``user_passes`` installed as pip installs a package."""
    (tmp_path / "user_passes.py").write_text(USER_PASS)
    info = tmp_path / "user_passes-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: user-passes\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[irc.passes]\nswap-add-operands = user_passes:SwapAddOperands\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def irc_opt(*args: str, path: Path | None = None, stdin: str = PROGRAM):
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "irc.cli.irc_opt", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_an_installed_pass_runs_from_irc_opt(installed: Path) -> None:
    run = irc_opt("-p", "swap-add-operands", path=installed)
    assert run.returncode == 0, run.stderr
    assert "graph.add %y, %x" in run.stdout


def test_an_installed_pass_runs_from_check_pass(installed: Path) -> None:
    assert "swap-add-operands" in get_all_passes()
    testing.check_pass("swap-add-operands", max_examples=30)
    # After canonicalize, cse may rightly find nothing: only the plugin's
    # pass must have changed programs.
    testing.check_pass(
        "canonicalize,swap-add-operands,cse",
        max_examples=10,
        require_change=["swap-add-operands"],
    )


def test_irc_passes_win_a_clash_of_names(installed: Path) -> None:
    (installed / "user_passes-1.0.dist-info" / "entry_points.txt").write_text(
        "[irc.passes]\ncse = user_passes:SwapAddOperands\n"
    )
    assert get_all_passes()["cse"]().__module__.startswith("xdsl.")


def test_an_entry_point_must_name_its_pass(installed: Path) -> None:
    (installed / "user_passes-1.0.dist-info" / "entry_points.txt").write_text(
        "[irc.passes]\nswap = user_passes:SwapAddOperands\n"
        "broken = user_passes:Missing\n"
    )
    passes = installed_passes()
    with pytest.raises(PluginError, match="names pass 'swap-add-operands'; an entry"):
        passes["swap"]()
    with pytest.raises(
        PluginError, match="cannot load the pass of entry point 'broken'"
    ):
        passes["broken"]()


def test_load_pass_plugin_from_a_file_and_a_module(tmp_path: Path) -> None:
    plugin = tmp_path / "my_plugin.py"
    plugin.write_text(USER_PASS)
    by_file = irc_opt("--load-pass-plugin", str(plugin), "-p", "swap-add-operands")
    assert by_file.returncode == 0, by_file.stderr
    assert "graph.add %y, %x" in by_file.stdout
    by_module = irc_opt(
        "--load-pass-plugin", "my_plugin", "-p", "swap-add-operands", path=tmp_path
    )
    assert by_module.returncode == 0, by_module.stderr
    assert set(load_plugin(str(plugin))) == {"swap-add-operands"}


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (None, "no such file"),
        ("x = 1\n", "defines no ModulePass subclass with a name"),
        ("def broken(:\n", "cannot load pass plugin .*: SyntaxError"),
        (
            USER_PASS.replace('"swap-add-operands"', '"cse"'),
            "defines pass 'cse', which is already registered",
        ),
    ],
)
def test_a_bad_plugin_is_a_diagnostic(
    tmp_path: Path, source: str | None, message: str
) -> None:
    plugin = tmp_path / "plugin.py"
    if source is not None:
        plugin.write_text(source)
    run = irc_opt("--load-pass-plugin", str(plugin), "-p", "cse")
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.stderr.startswith(f"{plugin}: error: ")
    assert re.search(message, run.stderr), run.stderr
