"""``IRC_LOGS`` and ``IRC_DUMP_DIR``: what a compilation logs per topic and
what it dumps, read when each compilation starts."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from suite_programs import SUITE
from xdsl.passes import ModulePass

import irc
from irc import cache as compile_cache
from irc import logs
from irc.lowering.pipeline import DEFAULT_PIPELINE, LEVEL_NAMES
from irc.passes.registry import get_all_passes


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


SPEC = irc.TensorSpec(("N", "D"), "float32")


@pytest.fixture(autouse=True)
def no_logs_chosen(monkeypatch):
    """Each test starts with neither variable set and no ``set_logs``."""
    monkeypatch.delenv(logs.LOGS_VARIABLE, raising=False)
    monkeypatch.delenv(logs.DUMP_VARIABLE, raising=False)
    irc.set_logs(None)
    yield
    irc.set_logs(None)


def messages(caplog, topic: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == f"irc.{topic}"]


def compile_and_lower(function=softmax, *specs, **kwargs) -> irc.Compiled:
    compiled = irc.compile(function, *(specs or (SPEC,)), **kwargs)
    compiled.triton_source  # noqa: B018  (lowers and emits)
    return compiled


def test_nothing_is_logged_or_dumped_by_default(caplog, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with caplog.at_level(logging.DEBUG):
        compile_and_lower()
    assert not [r for r in caplog.records if r.name.startswith("irc.")]
    assert not list(tmp_path.iterdir())


def test_passes_logs_every_pass_with_its_time(caplog, monkeypatch):
    monkeypatch.setenv(logs.LOGS_VARIABLE, "passes")
    with caplog.at_level(logging.INFO, logger="irc"):
        compile_and_lower()
    lines = messages(caplog, "passes")
    assert [line.split(":")[0] for line in lines] == DEFAULT_PIPELINE.split(",")
    assert all(re.fullmatch(r"[\w-]+: \d+\.\d\d ms", line) for line in lines)
    assert not messages(caplog, "graph")  # only the topics asked for


@pytest.mark.parametrize("level", LEVEL_NAMES)
def test_a_level_topic_logs_that_levels_ir(caplog, monkeypatch, level):
    monkeypatch.setenv(logs.LOGS_VARIABLE, level)
    with caplog.at_level(logging.INFO, logger="irc"):
        compiled = compile_and_lower()
    (logged,) = messages(caplog, level)
    assert logged == f"{level} IR:\n{compiled.ir(level)}"


def test_ir_is_every_level_and_source_the_emitted_module(caplog, monkeypatch):
    monkeypatch.setenv(logs.LOGS_VARIABLE, "ir, source")
    with caplog.at_level(logging.INFO, logger="irc"):
        compiled = compile_and_lower()
    for level in LEVEL_NAMES:
        assert len(messages(caplog, level)) == 1
    assert messages(caplog, "source") == [f"emitted module:\n{compiled.triton_source}"]


@pytest.mark.parametrize("name", ["mlp", "causal_attention", "cross_entropy"])
def test_kernels_names_each_kernel_its_kind_and_reason(caplog, monkeypatch, name):
    monkeypatch.setenv(logs.LOGS_VARIABLE, "kernels")
    program = SUITE[name]
    with caplog.at_level(logging.INFO, logger="irc"):
        compiled = program.compile()
        compiled.ir("triton")
    (logged,) = messages(caplog, "kernels")
    header, *kernels = logged.splitlines()
    assert header == f"{compiled.num_kernels} kernel(s)"
    fusion_ir = compiled.ir("fusion")
    for line in kernels:
        symbol, kind = re.match(r"  @(\w+) (\w+): ", line).groups()
        assert f"fusion.kernel @{symbol} {kind} " in fusion_ir
        assert line.split(": ", 1)[1] in fusion_ir  # the reason, as in the IR


def test_guards_lists_the_facts_and_the_unproven_guards(caplog, monkeypatch):
    monkeypatch.setenv(logs.LOGS_VARIABLE, "guards")

    def first_half(x):
        return np.split(x, 2, axis=0)[0]

    with caplog.at_level(logging.INFO, logger="irc"):
        irc.compile(
            first_half, irc.TensorSpec(("N", 4), "float32"), facts=["N % 2 == 0"]
        )
        irc.compile(softmax, SPEC)
    guarded, proven = messages(caplog, "guards")
    assert guarded.startswith("first_half: facts declared: ")
    assert "N mod 2 == 0" in guarded.splitlines()[0]
    assert "guard N mod 2 == 0" in guarded
    assert proven.splitlines() == [
        "softmax: facts declared: none",
        "  no guards: every shape fact was proven at compile time",
    ]


def test_cache_tells_jit_compiling_from_reusing(caplog, monkeypatch):
    monkeypatch.setenv(logs.LOGS_VARIABLE, "cache")
    jitted = irc.jit(softmax, dims={"x": ("N", None)})
    with caplog.at_level(logging.INFO, logger="irc"):
        jitted(np.ones((2, 3), np.float32), backend="reference")
        jitted(np.ones((5, 3), np.float32), backend="reference")  # a plan: silent
        jitted(x=np.ones((2, 3), np.float32), backend="reference")  # a new structure
        jitted(np.ones((2, 4), np.float32), backend="reference")  # a new static dim
    assert messages(caplog, "cache") == [
        "softmax: compiling for x=TensorSpec(('N', 3), 'float32')",
        "softmax: reusing the compilation for x=TensorSpec(('N', 3), 'float32')",
        "softmax: compiling for x=TensorSpec(('N', 4), 'float32')",
    ]


@pytest.fixture
def cache_on(tmp_path, monkeypatch):
    """The on-disk compile cache on, in a fresh directory (tests/conftest.py
    turns it off for the session)."""
    monkeypatch.delenv(compile_cache.SWITCH_VARIABLE, raising=False)
    monkeypatch.setenv(compile_cache.DIR_VARIABLE, str(tmp_path / "cache"))


def test_a_cache_hit_says_what_it_skipped_and_logs_what_it_holds(
    caplog, monkeypatch, cache_on
):
    monkeypatch.setenv(logs.LOGS_VARIABLE, "passes,kernels,ir,source")
    with caplog.at_level(logging.INFO, logger="irc"):
        compile_and_lower()
    cold = {topic: messages(caplog, topic) for topic in logs.TOPICS}
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="irc"):
        warm = compile_and_lower()
    assert warm.restored
    (hit,) = messages(caplog, "passes")
    skipped = DEFAULT_PIPELINE.replace(",", ", ")
    assert hit == (
        "softmax: compile cache hit: restored every level and the emitted "
        f"module; no pass ran (skipped: {skipped})"
    )
    (kernels,) = messages(caplog, "kernels")
    header, *lines = kernels.splitlines()
    assert header == "1 kernel(s) (restored: fuse did not run)"
    assert lines == cold["kernels"][0].splitlines()[1:]
    for topic in (*LEVEL_NAMES, "source"):
        assert messages(caplog, topic) == cold[topic]


def test_a_cache_hit_of_a_short_pipeline_also_skipped_the_default_lowering(
    caplog, monkeypatch, cache_on
):
    monkeypatch.setenv(logs.LOGS_VARIABLE, "passes")
    compile_and_lower(pipeline="canonicalize")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="irc"):
        compile_and_lower(pipeline="canonicalize")
    (hit,) = messages(caplog, "passes")
    assert hit.endswith("(skipped: canonicalize, the default lowering)")


def test_a_loaded_artefact_says_no_pass_ran(caplog, monkeypatch, tmp_path):
    saved = compile_and_lower().save(tmp_path / "softmax")
    monkeypatch.setenv(logs.LOGS_VARIABLE, "passes,kernels")
    with caplog.at_level(logging.INFO, logger="irc"):
        irc.load(saved)
    assert messages(caplog, "passes") == [
        "softmax: restored from a saved artefact: no pass ran"
    ]
    assert messages(caplog, "kernels")[0].startswith("1 kernel(s) (restored")


def test_the_documented_passes_are_the_default_pipeline():
    """docs/debugging.md's example of ``IRC_LOGS=passes`` lists the passes
    that run, and cannot go stale when the pipeline changes."""
    text = (Path(__file__).parent.parent / "docs" / "debugging.md").read_text()
    logged = re.findall(r"^\[irc\.passes\] ([\w-]+): \d", text, re.M)
    assert logged == DEFAULT_PIPELINE.split(",")
    (hit,) = re.findall(r"^\[irc\.passes\] softmax: compile cache hit.*$", text, re.M)
    assert f"(skipped: {DEFAULT_PIPELINE.replace(',', ', ')})" in hit


def test_set_logs_overrides_the_variable_until_reset(caplog, monkeypatch):
    monkeypatch.setenv(logs.LOGS_VARIABLE, "passes")
    irc.set_logs(["kernels"])
    with caplog.at_level(logging.INFO, logger="irc"):
        compile_and_lower()
        irc.set_logs(None)
        compile_and_lower()
    assert len(messages(caplog, "kernels")) == 1
    assert len(messages(caplog, "passes")) == len(DEFAULT_PIPELINE.split(","))


def test_all_is_every_topic():
    assert logs.parse_topics("all") == frozenset(logs.TOPICS)
    assert logs.parse_topics("ir,passes") == frozenset({*LEVEL_NAMES, "passes"})


def test_an_unknown_topic_is_an_error_listing_the_topics(monkeypatch):
    monkeypatch.setenv(logs.LOGS_VARIABLE, "passes,fusion_decisions")
    with pytest.raises(
        irc.IrcError, match="unknown log topic 'fusion_decisions'"
    ) as err:
        irc.compile(softmax, SPEC)
    assert "the topics are: all, cache, fusion, graph, guards, ir, kernels" in str(
        err.value
    )
    with pytest.raises(irc.IrcError, match="unknown log topic 'x'"):
        irc.set_logs("x")


def test_records_reach_stderr_without_a_logging_setup():
    """A script that configured no logging still sees the records (pytest's
    own handlers are out of the way in a subprocess)."""
    script = (
        "import numpy as np, irc\n"
        "irc.compile(lambda x: x + 1, irc.TensorSpec(('N',), 'float32'))\n"
    )
    env = {**os.environ, logs.LOGS_VARIABLE: "passes"}
    run = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stderr.splitlines()[0].startswith("[irc.passes] canonicalize: ")


def test_dump_dir_holds_every_level_the_source_and_the_pass_times(
    tmp_path, monkeypatch
):
    monkeypatch.setenv(logs.DUMP_VARIABLE, str(tmp_path / "dumps"))
    compiled = compile_and_lower()
    also = compile_and_lower()
    first, second = sorted((tmp_path / "dumps").iterdir(), key=lambda p: p.name[-1])
    assert first.name.startswith("softmax-") and first != second
    files = {p.name for p in first.iterdir()}
    assert files == {f"{lv}.mlir" for lv in LEVEL_NAMES} | {"kernels.py", "passes.txt"}
    for level in LEVEL_NAMES:
        assert (first / f"{level}.mlir").read_text() == compiled.ir(level)
    assert (second / "kernels.py").read_text() == also.triton_source
    passes = (first / "passes.txt").read_text().splitlines()
    assert [line.split(":")[0] for line in passes] == DEFAULT_PIPELINE.split(",")


def test_dump_dir_is_complete_when_compile_returns(tmp_path, monkeypatch):
    """Lowering is lazy, but not with a dump asked for: every level is on
    disk before the first call."""
    monkeypatch.setenv(logs.DUMP_VARIABLE, str(tmp_path))
    irc.compile(softmax, SPEC)
    (dump,) = tmp_path.iterdir()
    files = {p.name for p in dump.iterdir()}
    assert files == {f"{lv}.mlir" for lv in LEVEL_NAMES} | {"kernels.py", "passes.txt"}


def test_a_cache_hit_dumps_every_level_and_that_no_pass_ran(
    tmp_path, monkeypatch, cache_on
):
    monkeypatch.setenv(logs.DUMP_VARIABLE, str(tmp_path / "dumps"))
    cold = irc.compile(softmax, SPEC)
    warm = irc.compile(softmax, SPEC)
    assert warm.restored and not cold.restored
    dump = max((tmp_path / "dumps").iterdir(), key=lambda p: int(p.name.split("-")[-1]))
    for level in LEVEL_NAMES:
        assert (dump / f"{level}.mlir").read_text() == cold.ir(level)
    assert (dump / "kernels.py").read_text() == cold.triton_source
    (line,) = (dump / "passes.txt").read_text().splitlines()
    assert line.startswith("softmax: compile cache hit: ")


def test_an_unwritable_dump_dir_is_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(logs.DUMP_VARIABLE, str(Path(blocker) / "dumps"))
    with pytest.raises(irc.IrcError, match="cannot create the dump directory"):
        irc.compile(softmax, SPEC)


@dataclass(frozen=True)
class FailingPass(ModulePass):
    name = "fail-here"

    def apply(self, ctx, op) -> None:
        raise RuntimeError("planted failure")


def test_a_failed_lowering_still_dumps_the_levels_it_reached(tmp_path, monkeypatch):
    monkeypatch.setenv(logs.DUMP_VARIABLE, str(tmp_path))
    registry = get_all_passes()
    passes = [registry[name]()() for name in ("canonicalize", "fuse")]
    compiled = irc.compile(softmax, SPEC, pipeline=[*passes, FailingPass()])
    (dump,) = tmp_path.iterdir()
    # dumped at compile time, the failure kept for where a lower level is needed
    assert {p.name for p in dump.iterdir()} == {
        "graph.mlir",
        "fusion.mlir",
        "passes.txt",
    }
    assert "fusion.kernel @k0" in (dump / "fusion.mlir").read_text()
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(compiled(x, backend="reference"), softmax(x))
    with pytest.raises(RuntimeError, match="planted failure"):
        compiled.num_kernels  # noqa: B018
