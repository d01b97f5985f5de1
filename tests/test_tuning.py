"""Launch configurations chosen per bucket of the sizes (the prelude's
``_IrcTuner``): the buckets, the cost model, measurement, and the winners
kept in the tuning directory for every later process.

Every configuration a measurement tries is checked against NumPy at the
edges of the buckets (1, 2^k - 1, 2^k, 2^k + 1): measuring launches each
candidate on a real call, so a wrong candidate would be a wrong result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from suite_programs import SUITE

import irc
from irc import cache as compile_cache
from irc.backend.triton.prelude import (
    _irc_bucket,
    _irc_launch_tile,
    _irc_launch_warps,
    _irc_tuning_directory,
)
from irc.runtime import triton_backend

#: Row lengths at the edges of the buckets of the row kernels' block, whose
#: chosen sizes run from 128 to 8192 lanes.
ROW_EDGES = (1, 2, 15, 16, 17, 127, 128, 129, 8191, 8192, 8193)
RTOL, ATOL = 2e-5, 1e-6


@pytest.fixture(autouse=True)
def _own_tuning(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Each test keeps what it measures in a directory of its own."""
    monkeypatch.setenv("IRC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("IRC_CACHE", raising=False)
    monkeypatch.delenv("IRC_TUNE", raising=False)
    return tmp_path / "tuning"


def _module(compiled: irc.Compiled) -> types.ModuleType:
    return triton_backend.load_source(compiled.triton_source, interpret=True)


def _fresh_tuner(compiled: irc.Compiled, runs: int | None = None) -> Any:
    """The compiled module's tuner with nothing decided (modules are shared
    by the process's tests); ``runs`` timed launches per candidate."""
    tuner = _module(compiled)._IRC_TUNER
    tuner.chosen.clear()
    tuner.trials.clear()
    tuner.running.clear()
    tuner.measured = 0
    if runs is not None:
        tuner.RUNS = runs
    return tuner


@pytest.fixture(scope="module")
def layer_norm() -> irc.Compiled:
    return SUITE["layer_norm"].compile()


@pytest.fixture(scope="module")
def matmul() -> irc.Compiled:
    return irc.compile(
        lambda a, b: np.tanh(a @ b),
        irc.TensorSpec(("M", "K"), "float32"),
        irc.TensorSpec(("K", "N"), "float32"),
    )


def _check_layer_norm(compiled: irc.Compiled, rows: int, length: int) -> None:
    program = SUITE["layer_norm"]
    call = program.inputs(np.random.default_rng(length), N=rows, D=length)
    expected = program.function(*call.args)
    got = compiled(*call.args, backend="interpret")
    np.testing.assert_allclose(
        got, expected, rtol=RTOL, atol=ATOL, err_msg=f"D = {length}"
    )


# --------------------------------------------------------------------------
# Buckets and the tuning directory
# --------------------------------------------------------------------------


def _next_power_of_two(size: int) -> int:
    return 1 << (size - 1).bit_length()


@given(st.integers(1, 1 << 40), st.integers(1, 1 << 40))
def test_two_sizes_share_a_bucket_when_their_power_of_two_and_alignment_agree(
    a: int, b: int
) -> None:
    same = _next_power_of_two(a) == _next_power_of_two(b) and (a % 16 == 0) == (
        b % 16 == 0
    )
    assert (_irc_bucket(a) == _irc_bucket(b)) == same


def test_a_power_of_two_ends_its_bucket() -> None:
    """2^k - 1 and 2^k round up alike (they part only where 2^k is a
    multiple of 16); 2^k + 1 starts the next bucket; 1 is alone."""
    for k in range(2, 14):
        below, edge, above = (_irc_bucket(n) for n in (2**k - 1, 2**k, 2**k + 1))
        assert below >> 1 == edge >> 1 == 2**k and above >> 1 == 2 ** (k + 1)
        assert (below == edge) == (k < 4) and edge != above
    assert _irc_bucket(1) == 2 and len({_irc_bucket(n) for n in (1, 2, 3)}) == 3


@pytest.mark.parametrize(
    "environment",
    [
        {},
        {"IRC_CACHE_DIR": "~/elsewhere"},
        {"IRC_CACHE_DIR": "", "XDG_CACHE_HOME": "/tmp/xdg"},
        {"IRC_CACHE": "0"},
        {"IRC_CACHE": " 0 ", "IRC_CACHE_DIR": "/tmp/x"},
    ],
)
def test_the_tuning_directory_is_in_the_compile_cache_directory(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str]
) -> None:
    """Emitted modules cannot import irc, so the prelude spells the compile
    cache's rule again: they must agree."""
    for name in ("IRC_CACHE", "IRC_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    directory = compile_cache.cache_directory()
    expected = None if directory is None else str(directory / "tuning")
    assert _irc_tuning_directory() == expected


# --------------------------------------------------------------------------
# The cost model
# --------------------------------------------------------------------------


@pytest.mark.parametrize("length", ROW_EDGES)
def test_the_cost_model_gives_each_bucket_its_power_of_two_block(
    layer_norm: irc.Compiled, length: int
) -> None:
    _fresh_tuner(layer_norm)
    _check_layer_norm(layer_norm, 3, length)
    ((_kernel, chosen),) = layer_norm.launch_configurations("interpret").items()
    ((buckets, config),) = chosen.items()
    block = _irc_launch_tile(length, 128, 8192)
    assert buckets[0] == _irc_bucket(length)  # the block's extent comes first
    assert config == (block, _irc_launch_warps(block), 3)


def test_a_kernel_without_a_chosen_tile_launches_with_its_declared_warps_and_stages(
    matmul: irc.Compiled,
) -> None:
    _fresh_tuner(matmul)
    a, b = np.ones((5, 7), np.float32), np.ones((7, 3), np.float32)
    np.testing.assert_allclose(matmul(a, b, backend="interpret"), np.tanh(a @ b))
    ((_kernel, chosen),) = matmul.launch_configurations("interpret").items()
    assert list(chosen.values()) == [(4, 3)]  # the tile pass's, for fp32 FMA


# --------------------------------------------------------------------------
# Measurement, at the edges of the buckets
# --------------------------------------------------------------------------


def _measure_until_decided(
    compiled: irc.Compiled, check: Any, key_count: int = 1
) -> Any:
    """Calls ``check`` (a call checked against NumPy) until the tuner has
    decided ``key_count`` keys; the tuner."""
    tuner = _module(compiled)._IRC_TUNER
    for _ in range(200):
        check()
        if len(tuner.chosen) >= key_count and not tuner.trials:
            return tuner
    raise AssertionError("the measurement never decided")


@pytest.mark.parametrize("length", ROW_EDGES)
def test_every_candidate_a_measurement_launches_is_right_at_the_bucket_edges(
    layer_norm: irc.Compiled, monkeypatch: pytest.MonkeyPatch, length: int
) -> None:
    monkeypatch.setenv("IRC_TUNE", "measure")
    tuner = _fresh_tuner(layer_norm, runs=0)
    launched: list[tuple[int, ...]] = []
    start = tuner.start

    def recording_start(key: tuple[Any, ...]) -> tuple[int, ...]:
        launched.append(config := start(key))
        return config

    monkeypatch.setattr(tuner, "start", recording_start)
    _measure_until_decided(layer_norm, lambda: _check_layer_norm(layer_norm, 2, length))
    key = next(iter(tuner.chosen))
    candidates = tuner.candidates(key)
    assert launched == candidates  # each tried once (runs=0), the model's first
    assert len(candidates) > 1 and tuner.chosen[key] in candidates
    assert tuner.measured == len(candidates)
    blocks = {c[0] for c in candidates}
    assert all(128 <= b <= 8192 and b & (b - 1) == 0 for b in blocks)


@pytest.mark.parametrize("size", [1, 15, 16, 17, 33])
def test_a_matmul_s_measured_warps_and_stages_are_right_at_the_bucket_edges(
    matmul: irc.Compiled, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    monkeypatch.setenv("IRC_TUNE", "measure")
    tuner = _fresh_tuner(matmul, runs=0)
    rng = np.random.default_rng(size)
    a = rng.standard_normal((size, size + 1)).astype(np.float32)
    b = rng.standard_normal((size + 1, 17)).astype(np.float32)

    def check() -> None:
        got = matmul(a, b, backend="interpret")
        np.testing.assert_allclose(got, np.tanh(a @ b), rtol=1e-5, atol=1e-6)

    _measure_until_decided(matmul, check)
    (key,) = tuner.chosen
    assert tuner.measured == len(tuner.candidates(key)) == 9  # 3 warps x 3 stages


def test_a_measurement_shared_by_threads_decides_once_and_stays_right(
    layer_norm: irc.Compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IRC_TUNE", "measure")
    tuner = _fresh_tuner(layer_norm, runs=2)
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(12):
                _check_layer_norm(layer_norm, 2, 300)
        except BaseException as error:  # reported below
            failures.append(error)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not failures, failures
    assert len(tuner.chosen) == 1 and not tuner.trials and not tuner.running


# --------------------------------------------------------------------------
# What is kept, and who reads it
# --------------------------------------------------------------------------


def _entries(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))]


def test_a_measured_winner_is_kept_and_read_back_instead_of_measuring(
    layer_norm: irc.Compiled, monkeypatch: pytest.MonkeyPatch, _own_tuning: Path
) -> None:
    monkeypatch.setenv("IRC_TUNE", "measure")
    tuner = _fresh_tuner(layer_norm, runs=1)
    _measure_until_decided(layer_norm, lambda: _check_layer_norm(layer_norm, 2, 129))
    (entry,) = _entries(_own_tuning)
    (key,) = tuner.chosen
    assert tuple(entry["config"]) == tuner.chosen[key]
    assert entry["buckets"] == list(key[1:]) and entry["device"] == "triton-interpreter"
    assert [tuple(c) for c in entry["candidates"]] == tuner.candidates(key)
    # A process that has decided nothing (a fresh tuner) reads it back.
    tuner = _fresh_tuner(layer_norm)
    _check_layer_norm(layer_norm, 2, 129)
    assert tuner.measured == 0 and tuner.chosen == {key: tuple(entry["config"])}


def test_an_entry_that_does_not_read_is_measured_again_and_overwritten(
    layer_norm: irc.Compiled, monkeypatch: pytest.MonkeyPatch, _own_tuning: Path
) -> None:
    monkeypatch.setenv("IRC_TUNE", "measure")
    _fresh_tuner(layer_norm, runs=0)
    _measure_until_decided(layer_norm, lambda: _check_layer_norm(layer_norm, 2, 40))
    (path,) = _own_tuning.glob("*.json")
    entry = json.loads(path.read_text())
    not_a_candidate = {**entry, "config": [100, 4, 3]}  # not a power of two
    for broken in (
        "{not json",
        json.dumps({"format": 1, "config": [0, -1, 3]}),
        json.dumps(not_a_candidate),
    ):
        path.write_text(broken)
        tuner = _fresh_tuner(layer_norm, runs=0)
        _measure_until_decided(layer_norm, lambda: _check_layer_norm(layer_norm, 2, 40))
        assert tuner.measured > 0
        (entry,) = _entries(_own_tuning)
        assert entry["format"] == 1 and min(entry["config"]) > 0


def test_a_kernel_names_its_entries_by_its_code_and_the_sizes_it_allows() -> None:
    """Kernels that differ only in the largest block they allow (a tile
    option) are kept apart; the same kernel captured from other source
    lines (its comments name them) is the same entry."""

    def digests(compiled: irc.Compiled) -> list[str]:
        return [spec[0] for spec in _module(compiled)._IRC_TUNING.values()]

    from irc.lowering.pipeline import DEFAULT_PIPELINE

    program = SUITE["softmax"]
    default = program.compile()
    smaller = program.compile(
        pipeline=DEFAULT_PIPELINE.replace(",tile,", ",tile{max-row-block=1024},")
    )
    assert "max-row-block=1024" not in DEFAULT_PIPELINE
    assert digests(default) != digests(smaller)
    moved: dict[str, Any] = {}
    source = "def softmax(x):\n    e = np.exp(x - x.max(axis=-1, keepdims=True))\n"
    source += "    return e / e.sum(axis=-1, keepdims=True)\n"
    exec(compile("\n" * 40 + source, "elsewhere.py", "exec"), {"np": np}, moved)
    elsewhere = irc.compile(moved["softmax"], irc.TensorSpec(("N", "D"), "float32"))
    assert "graph.reduce max at elsewhere.py:42" in elsewhere.triton_source
    assert digests(elsewhere) == digests(default)


def test_a_candidate_that_fails_to_launch_is_out_and_the_call_still_right(
    layer_norm: irc.Compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A candidate Triton refuses (on a GPU: too much shared memory, say)
    leaves the measurement, which decides among the others; the call that
    tried it launches the cost model's configuration."""
    monkeypatch.setenv("IRC_TUNE", "measure")
    tuner = _fresh_tuner(layer_norm, runs=1)
    module = _module(layer_norm)
    (name,) = module._IRC_TUNING
    kernel = getattr(module, name)
    run = kernel.run
    refused: list[int] = []

    def refusing(*args: Any, **options: Any) -> Any:
        if options["num_warps"] == 4:  # the cost model's is 2 (512 lanes)
            refused.append(options["num_warps"])
            raise RuntimeError("out of resources")
        return run(*args, **options)

    monkeypatch.setattr(kernel, "run", refusing)
    _measure_until_decided(layer_norm, lambda: _check_layer_norm(layer_norm, 2, 300))
    (config,) = tuner.chosen.values()
    assert refused and config[1] != 4
    assert tuner.modelled(next(iter(tuner.chosen)))[1] == 2


def test_a_write_removes_what_killed_writers_of_its_entry_left(
    layer_norm: irc.Compiled, monkeypatch: pytest.MonkeyPatch, _own_tuning: Path
) -> None:
    """Temporary files of the entry older than the compile cache's
    ``ORPHAN_AGE`` go; a fresh one (a writer at work) and another entry's
    stay."""
    monkeypatch.setenv("IRC_TUNE", "measure")
    tuner = _fresh_tuner(layer_norm, runs=0)
    _check_layer_norm(layer_norm, 2, 40)
    (key,) = tuner.trials
    path, _ = tuner._entry_path(key)
    _own_tuning.mkdir(parents=True)
    name = Path(path).name
    old, fresh, other = (
        _own_tuning / f".{name}.old.tmp",
        _own_tuning / f".{name}.fresh.tmp",
        _own_tuning / ".another.json.old.tmp",
    )
    for orphan in (old, fresh, other):
        orphan.write_text("{")
    long_ago = os.stat(old).st_mtime - compile_cache.ORPHAN_AGE - 60
    for orphan in (old, other):
        os.utime(orphan, (long_ago, long_ago))
    _measure_until_decided(layer_norm, lambda: _check_layer_norm(layer_norm, 2, 40))
    assert not old.exists() and fresh.exists() and other.exists()
    assert Path(path).exists()


def test_without_a_cache_nothing_is_kept(
    layer_norm: irc.Compiled, monkeypatch: pytest.MonkeyPatch, _own_tuning: Path
) -> None:
    monkeypatch.setenv("IRC_TUNE", "measure")
    monkeypatch.setenv("IRC_CACHE", "0")
    _fresh_tuner(layer_norm, runs=0)
    _measure_until_decided(layer_norm, lambda: _check_layer_norm(layer_norm, 2, 40))
    assert not _own_tuning.exists()


def test_a_directory_that_cannot_be_written_is_a_warning_not_an_error(
    layer_norm: irc.Compiled, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("IRC_CACHE_DIR", str(blocker))  # tuning/ cannot be made
    monkeypatch.setenv("IRC_TUNE", "measure")
    tuner = _fresh_tuner(layer_norm, runs=0)
    with pytest.warns(UserWarning, match="could not keep the launch configuration"):
        _measure_until_decided(layer_norm, lambda: _check_layer_norm(layer_norm, 2, 40))
    assert len(tuner.chosen) == 1


def test_a_distributed_run_does_not_measure(
    layer_norm: irc.Compiled, monkeypatch: pytest.MonkeyPatch, _own_tuning: Path
) -> None:
    """Ranks that measured each for itself could choose differently (and
    sum in different orders): with more than one rank, each uses what is
    kept, else the cost model, alike on every rank."""
    import torch.distributed as dist

    monkeypatch.setenv("IRC_TUNE", "measure")
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_world_size", lambda group=None: 2)
    tuner = _fresh_tuner(layer_norm, runs=0)
    _check_layer_norm(layer_norm, 2, 300)
    (key,) = tuner.chosen
    assert tuner.measured == 0 and tuner.chosen[key] == tuner.modelled(key)
    assert not _own_tuning.exists()


SECOND_PROCESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    sys.path.insert(0, {tests!r})
    from suite_programs import SUITE
    from irc.runtime import triton_backend

    program = SUITE["layer_norm"]
    compiled = program.compile()
    call = program.inputs(np.random.default_rng(0), N=2, D={length})
    tuner = triton_backend.load_source(compiled.triton_source, interpret=True)._IRC_TUNER
    tuner.RUNS = 1
    calls = 0
    while not tuner.chosen or tuner.trials:
        got = compiled(*call.args, backend="interpret")
        np.testing.assert_allclose(got, program.function(*call.args), rtol=2e-5, atol=1e-6)
        calls += 1
    chosen = compiled.launch_configurations("interpret")
    print(json.dumps({{"measured": tuner.measured, "calls": calls,
                      "chosen": [[list(b), list(c)] for k in chosen.values() for b, c in k.items()]}}))
    """
)


def _in_a_process(length: int, directory: Path) -> dict[str, Any]:
    environment = dict(os.environ)
    environment.update(
        IRC_CACHE_DIR=str(directory), IRC_TUNE="measure", TRITON_INTERPRET="1"
    )
    script = SECOND_PROCESS.format(tests=str(Path(__file__).parent), length=length)
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_winner_measured_in_one_process_is_what_the_next_process_launches(
    tmp_path: Path,
) -> None:
    first = _in_a_process(257, tmp_path)
    assert first["measured"] > 0 and first["calls"] > 1
    second = _in_a_process(257, tmp_path)
    assert second == {"measured": 0, "calls": 1, "chosen": first["chosen"]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (entry,) = _entries(tmp_path / "tuning")
    assert [entry["buckets"], entry["config"]] == first["chosen"][0]


def test_launch_configurations_are_those_of_a_triton_backend(
    layer_norm: irc.Compiled,
) -> None:
    with pytest.raises(irc.IrcError, match="not of 'reference'"):
        layer_norm.launch_configurations("reference")


@pytest.fixture(autouse=True)
def _restore_runs() -> Iterator[None]:
    """Tests may shorten a module's measurement; the next test gets the
    prelude's default."""
    yield
    for module in list(triton_backend._MODULES.values()):
        tuner = getattr(module, "_IRC_TUNER", None)
        if tuner is not None and "RUNS" in vars(tuner):
            del tuner.RUNS


@pytest.mark.slow  # compiles every candidate of three kernels for an H100
def test_every_candidate_compiles_and_launches_on_triton_s_real_path(
    tmp_path: Path,
) -> None:
    """``tests/fake_gpu_tuning.py``: a measurement under the fake driver
    launches each candidate once through Triton's binder and compiler for
    sm_90, with the tiles, warps and stages the tuner listed."""
    from fake_gpu_suite import run_compiling
    from fake_gpu_tuning import __file__ as script

    out = tmp_path / "report.json"
    completed = run_compiling([script, str(out)], timeout=900)
    assert completed.returncode == 0, completed.stderr[-4000:]
    for name, report in json.loads(out.read_text()).items():
        ((key, candidates),) = report["candidates"].items()
        assert report["calls"] == len(report["launches"]) == len(candidates) > 1
        (constexprs,) = report["specs"].values()
        launched = [
            [
                *(run["constexprs"][c] for c in constexprs),
                run["num_warps"],
                run["num_stages"],
            ]
            for run in report["launches"]
        ]
        assert launched == candidates, (name, key)
        assert all(run["sm_90_cubin"] for run in report["launches"]), name
