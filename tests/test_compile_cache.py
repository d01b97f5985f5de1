"""The on-disk compile cache (``irc.cache``): a restored compilation is the
compilation, in this process and the next; corrupt and stale entries are
compiled again; concurrent processes share one directory.

tests/conftest.py turns the cache off for the session; each test here turns
it on in a temporary directory of its own."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from suite_programs import SIZES, SUITE

import irc
from irc import cache as compile_cache
from irc.analysis.launches import Launches
from irc.lowering.pipeline import LEVEL_NAMES
from irc.shapes.expr import SymExpr

TESTS = Path(__file__).resolve().parent


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


SPEC = irc.TensorSpec(("N", "D"), "float32")


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache on, in a fresh directory, logging its verdicts."""
    directory = tmp_path / "cache"
    monkeypatch.delenv(compile_cache.SWITCH_VARIABLE, raising=False)
    monkeypatch.setenv(compile_cache.DIR_VARIABLE, str(directory))
    irc.set_logs("cache")
    yield directory
    irc.set_logs(None)


def verdicts(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the disk cache said, per compilation: hit, miss, corrupt, written."""
    pattern = re.compile(r"compile cache (hit|miss)|entry (written)|\((corrupt|stale)")
    found = []
    for record in caplog.records:
        match = pattern.search(record.getMessage())
        if record.name == "irc.cache" and match:
            found.append(next(group for group in match.groups() if group))
    return found


def lowered(function=softmax, *specs, **kwargs) -> irc.Compiled:
    compiled = irc.compile(function, *(specs or (SPEC,)), **kwargs)
    compiled.triton_source  # noqa: B018  (lowers, emits and writes the entry)
    return compiled


def entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.json"))


def assert_same_compilation(restored: irc.Compiled, fresh: irc.Compiled) -> None:
    assert restored.levels == fresh.levels
    for level in fresh.levels:
        assert restored.ir(level) == fresh.ir(level)
        assert restored.ir(level, locations=True) == fresh.ir(level, locations=True)
        assert str(restored.module_at(level)) == str(fresh.module_at(level))
    assert restored.triton_source == fresh.triton_source
    assert restored.num_kernels == fresh.num_kernels


@pytest.mark.parametrize("name", ["layer_norm", "mlp", "causal_attention"])
def test_a_hit_is_the_same_compilation(name, cache_dir, caplog, monkeypatch):
    program = SUITE[name]
    with caplog.at_level(logging.INFO, "irc.cache"):
        first = program.compile()
        first.triton_source  # noqa: B018
        second = program.compile()
    assert verdicts(caplog) == ["miss", "written", "hit"]
    monkeypatch.setenv(compile_cache.SWITCH_VARIABLE, "0")
    assert_same_compilation(second, program.compile())
    for sizes in SIZES[name][1:3]:
        call = program.inputs(np.random.default_rng(0), **sizes)
        expected = program.function(*call.args, **call.kwargs)
        for backend in ("reference", "interpret"):
            got = second(*call.args, backend=backend, **call.kwargs)
            want = first(*call.args, backend=backend, **call.kwargs)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-6)


def test_a_restored_compilation_checks_its_guards(cache_dir):
    def head(x):
        return x[:2] * 2.0  # guard 2 <= N

    spec = irc.TensorSpec(("N",), "float32")
    lowered(head, spec)
    restored = irc.compile(head, spec)
    assert restored.restored
    np.testing.assert_allclose(restored(np.arange(3, dtype=np.float32)), [0, 2])
    with pytest.raises(irc.BindingError, match="N"):
        restored(np.ones(1, dtype=np.float32), backend="interpret")


def test_the_key_covers_pipeline_static_values_and_versions(
    cache_dir, caplog, monkeypatch
):
    def scaled(x, factor):
        return x * factor

    with caplog.at_level(logging.INFO, "irc.cache"):
        lowered(scaled, SPEC, 2.0)
        lowered(scaled, SPEC, 3.0)
        lowered(scaled, SPEC, 2.0, pipeline="canonicalize,fuse,tile,bufferize")
        monkeypatch.setattr(
            compile_cache, "versions", lambda: {"irc": "another", "xdsl": "0"}
        )
        lowered(scaled, SPEC, 2.0)
    assert verdicts(caplog) == ["miss", "written"] * 4
    assert len(entries(cache_dir)) == 4


def test_irc_cache_0_turns_it_off(cache_dir, monkeypatch):
    monkeypatch.setenv(compile_cache.SWITCH_VARIABLE, "0")
    lowered()
    assert not cache_dir.exists()


def test_the_default_location_honours_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.delenv(compile_cache.SWITCH_VARIABLE, raising=False)
    monkeypatch.delenv(compile_cache.DIR_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compile_cache.cache_directory() == tmp_path / "xdg" / "irc"
    lowered()
    assert len(entries(tmp_path / "xdg" / "irc")) == 1
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert compile_cache.cache_directory() == tmp_path / "home" / ".cache" / "irc"


def corrupt_by_truncating(path: Path) -> None:
    path.write_text(path.read_text()[:100])


def corrupt_a_level(path: Path) -> None:
    entry = json.loads(path.read_text())
    entry["payload"]["source"] += "\nraise SystemExit('loaded a corrupt entry')\n"
    path.write_text(json.dumps(entry))


def make_stale(path: Path) -> None:
    entry = json.loads(path.read_text())
    entry["format"] = compile_cache.FORMAT + 1
    path.write_text(json.dumps(entry))


def hold_another_key(path: Path) -> None:
    entry = json.loads(path.read_text())
    entry["key"] = "0" * 64
    path.write_text(json.dumps(entry))


@pytest.mark.parametrize(
    "damage", [corrupt_by_truncating, corrupt_a_level, make_stale, hold_another_key]
)
def test_a_damaged_entry_is_compiled_again_never_loaded(damage, cache_dir, caplog):
    fresh = lowered()
    (path,) = entries(cache_dir)
    damage(path)
    caplog.clear()
    with caplog.at_level(logging.INFO, "irc.cache"):
        rebuilt = lowered()
        restored = lowered()
    assert verdicts(caplog)[0] in ("corrupt", "stale")
    assert verdicts(caplog)[1:] == ["written", "hit"]
    assert not rebuilt.restored and restored.restored
    assert_same_compilation(restored, fresh)


def test_an_unwritable_cache_is_a_warning(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.delenv(compile_cache.SWITCH_VARIABLE, raising=False)
    monkeypatch.setenv(compile_cache.DIR_VARIABLE, str(blocker / "cache"))
    with caplog.at_level(logging.WARNING, "irc.cache"):
        compiled = lowered()
    assert "cannot write the compile cache entry" in caplog.text
    assert compiled.num_kernels >= 1


def test_jit_compiles_through_the_cache(cache_dir, caplog):
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    with caplog.at_level(logging.INFO, "irc.cache"):
        first = irc.jit(softmax, dims={"x": ("N", "D")})(x, backend="interpret")
        second = irc.jit(softmax, dims={"x": ("N", "D")})(x, backend="interpret")
    assert verdicts(caplog) == ["miss", "written", "hit"]
    np.testing.assert_array_equal(first, second)


#: A child process: compile the named suite programs (all when none is
#: named) to their emitted source, and print how many hit the cache.
CHILD = """
import json, sys
sys.path.insert(0, {tests!r})
import irc
from suite_programs import SIZES, SUITE
names = sys.argv[1:] or list(SUITE)
compiled = [SUITE[n].compile() for n in names]
sources = [c.triton_source for c in compiled]  # writes the entries
print(json.dumps({{n: c.restored for n, c in zip(names, compiled)}}))
"""


def start_child(cache: Path, *names: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        compile_cache.DIR_VARIABLE: str(cache),
        "PYTHONPATH": os.pathsep.join([str(TESTS.parent), str(TESTS)]),
    }
    env.pop(compile_cache.SWITCH_VARIABLE, None)
    code = CHILD.format(tests=str(TESTS))
    return subprocess.Popen(
        [sys.executable, "-c", code, *names],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def child_hits(process: subprocess.Popen[str]) -> dict[str, bool]:
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr[-3000:]
    return json.loads(stdout.splitlines()[-1])


def test_a_second_process_hits_for_every_suite_program(tmp_path):
    first = child_hits(start_child(tmp_path))
    assert not any(first.values())
    second = child_hits(start_child(tmp_path))
    assert second == dict.fromkeys(SUITE, True)


def test_concurrent_processes_share_one_entry(tmp_path):
    children = [start_child(tmp_path, "gpt2_block") for _ in range(3)]
    for child in children:
        child_hits(child)
    (entry,) = entries(tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]
    function_name = SUITE["gpt2_block"].function.__name__
    assert json.loads(entry.read_text())["function"] == function_name
    assert child_hits(start_child(tmp_path, "gpt2_block")) == {"gpt2_block": True}


def test_levels_are_stored_in_order():
    none = Launches(SymExpr.const(0))
    assert list(compile_cache.StoredLevels.of({}, "", none).texts) == []
    compiled = irc.compile(softmax, SPEC)
    stored = compile_cache.StoredLevels.of(
        {lv: compiled.module_at(lv) for lv in compiled.levels},
        compiled.triton_source,
        compiled.launches,
    )
    assert tuple(stored.texts) == LEVEL_NAMES
    again = compile_cache.StoredLevels.from_json(
        json.loads(json.dumps(stored.to_json()))
    )
    assert again.texts == stored.texts
    assert again.launches == compiled.launches
    assert str(again.module("loop")) == str(compiled.module_at("loop"))
