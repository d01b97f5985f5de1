"""Devices, memory and processes (issue 33, item 5).

- Strided inputs are read as they are up to the launcher, which copies what
  its row-major kernels cannot index once, sized first and logged; a copy
  that cannot fit is an ``irc.AllocationError`` saying what and how big,
  never a bare ``MemoryError`` (the issue's case: a broadcast of 2**31
  float32 elements, in a process whose address space is capped).
- A launch runs on its inputs' device whatever device is current: the
  emitted launcher's guard, under the fake CUDA driver with two devices
  (``tests/fake_gpu_devices.py``, in a process that compiles kernels).
- The on-disk compile cache under 8 spawned processes compiling the same and
  different programs while entries are torn and writers killed mid-write:
  every load is a correct program or a miss.
- The torch backend compiled and called from several threads at once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import irc
from irc import cache as compile_cache
from irc.runtime.triton_backend import move_to

TESTS = Path(__file__).resolve().parent
SPEC = irc.TensorSpec(("N",), "float32")


def scaled_sum(x: Any) -> Any:
    return (x * 2.0).sum()


def shifted(x: Any, y: Any) -> Any:
    return x * 2.0 + y


def run_python(
    code: str, timeout: int = 240, **env: str
) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter with the repository on its path."""
    environment = {**os.environ, **env}
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(TESTS), str(TESTS.parent), environment.get("PYTHONPATH", "")]
    )
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=timeout,
    )


# 1. Strided inputs -------------------------------------------------------------


@pytest.fixture(scope="module")
def summed() -> irc.Compiled:
    return irc.compile(scaled_sum, SPEC)


def test_a_broadcast_too_large_for_memory_is_refused_before_copying(summed) -> None:
    """A broadcast of 2**40 float32 elements (4 TiB, one element in memory)
    reaches the launcher uncopied; the row-major copy its kernels need is
    sized against the host memory available and refused at once."""
    x = np.broadcast_to(np.float32(1), (2**40,))
    with pytest.raises(irc.AllocationError) as refused:
        summed(x, backend="interpret")
    message = str(refused.value)
    assert "row-major copy of argument 0" in message, message
    assert "strides (0,)" in message and "4,398,046,511,104 bytes" in message
    assert "host memory" in message and "contiguous array" in message


def test_the_issues_broadcast_is_an_allocation_error_where_memory_runs_out() -> None:
    """The issue's input, ``np.broadcast_to(np.float32(1), (2**31,))``, in a
    process whose address space is capped at 2 GiB above what it uses: the
    8 GiB copy fails to allocate for real, and the call raises
    ``irc.AllocationError`` naming the copy and its size."""
    completed = run_python(
        """
        import resource
        import numpy as np
        import irc

        def scaled_sum(x):
            return (x * 2.0).sum()

        compiled = irc.compile(scaled_sum, irc.TensorSpec(("N",), "float32"))
        small = np.ones(5, np.float32)
        assert float(compiled(small, backend="interpret")) == 10.0
        with open("/proc/self/status") as status:
            used = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmSize:"))
        cap = used + 2**31
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        x = np.broadcast_to(np.float32(1), (2**31,))
        try:
            compiled(x, backend="interpret")
        except irc.AllocationError as error:
            print("ALLOCATION", error)
        except MemoryError as error:
            print("BARE", type(error).__name__, error)
        """,
        IRC_CACHE="0",
        TRITON_INTERPRET="1",
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    line = completed.stdout.strip().splitlines()[-1]
    assert line.startswith("ALLOCATION"), line
    assert "argument 0" in line and "8,589,934,592 bytes" in line, line


@pytest.mark.parametrize(
    "kind", ["transposed", "broadcast", "reversed", "read_only", "sliced"]
)
def test_strided_inputs_give_numpys_values_and_each_copy_is_logged(
    kind, caplog
) -> None:
    """Each kind of strided input computes NumPy's result; the launcher logs
    the copy it makes (logger ``irc.launch``), and makes none for a
    contiguous input (a read-only array is viewed, not copied)."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal((6, 4)).astype(np.float32)
    x = {
        "transposed": np.ascontiguousarray(base.T).T,
        "broadcast": np.broadcast_to(base[:1], (6, 4)),
        "reversed": base[::-1],
        "read_only": base.copy(),
        "sliced": base[:, ::2],
    }[kind]
    if kind == "read_only":
        x.flags.writeable = False
    y = rng.standard_normal((6, 4 if kind != "sliced" else 2)).astype(np.float32)
    compiled = irc.compile(shifted, *[irc.TensorSpec(("N", "D"), "float32")] * 2)
    with caplog.at_level(logging.INFO, logger="irc.launch"):
        got = compiled(x, y, backend="interpret")
    np.testing.assert_allclose(got, x * 2.0 + y, rtol=1e-6)
    copies = [r.getMessage() for r in caplog.records if r.name == "irc.launch"]
    if kind == "read_only":
        assert copies == []
    else:  # reversed: copied before the launcher, torch cannot view it
        where = "argument 'x'" if kind == "reversed" else "argument 0"
        assert len(copies) == 1 and copies[0].startswith(f"{where} (shape (6,")
        assert f"{x.size * 4:,} bytes" in copies[0]


def test_a_broadcast_moves_to_another_device_as_its_distinct_elements() -> None:
    """Moving a broadcast to a device sends one element per broadcast axis
    and broadcasts again there (``Tensor.to`` would send all 2**31)."""
    import torch

    x = torch.from_numpy(np.ones(3, np.float32)).reshape(3, 1).expand(3, 2**31)
    moved = move_to(x, torch.device("meta"), "x")
    assert moved.device.type == "meta" and moved.shape == x.shape
    assert moved.stride() == (1, 0)
    assert moved.untyped_storage().nbytes() == 3 * 4


# 2. The launch device ----------------------------------------------------------


@pytest.fixture(scope="module")
def devices_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from fake_gpu_suite import run_compiling

    out = tmp_path_factory.mktemp("fake_gpu_devices") / "report.json"
    completed = run_compiling([str(TESTS / "fake_gpu_devices.py"), str(out)], 300)
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(out.read_text())


def test_kernels_launch_on_the_inputs_device_whatever_is_current(devices_report):
    """Inputs on device 1 while device 0 is current (and the reverse) launch
    on the inputs' device, allocate the outputs there, and leave the current
    device as it was; inputs on the current device switch nothing."""
    calls = devices_report["calls"]
    assert [c["inputs"] for c in calls] == [1, 0, 0, 1, 1]
    for call in calls:
        where = f"inputs on {call['inputs']}, {call['current_before']} current"
        launched = call["launched_on"]
        assert launched and set(launched) == {call["inputs"]}, where
        stand_in = "meta" if call["inputs"] == 1 else "cpu"
        assert set(call["outputs_on"]) == {stand_in}, where
        assert call["current_after"] == call["current_before"], where
        assert call["switches"] == int(call["inputs"] != call["current_before"]), where
    # Each device compiled its own binaries (Triton caches them per device).
    assert devices_report["binaries"] == {"0": 1, "1": 1}
    assert "move them to one device" in devices_report["mixed"]


# 3. The compile cache under concurrent processes -----------------------------

#: Worker processes compiling at once (the issue's 8), and rounds per worker.
WORKERS = 8
ROUNDS = 3


def softmax(x: Any) -> Any:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def affine_of(factor: float) -> Any:
    """A program of its own per worker (the factor is a constant in its IR,
    so in its key), defined at one place so only the factor differs."""

    def affine(x: Any) -> Any:
        return x * factor + 1.0

    return affine


def worker_programs(worker: int) -> dict[str, Any]:
    """What ``worker`` compiles: a program every worker compiles and one of
    its own."""
    return {"softmax": softmax, "own": affine_of(float(worker + 2))}


def compiled_texts(function: Any) -> dict[str, str]:
    """A compilation as text: the IR of every level and the emitted module."""
    compiled = irc.compile(function, irc.TensorSpec(("N", "D"), "float32"))
    texts = {"source": compiled.triton_source}
    for level in ("graph", "fusion", "loop", "memory", "triton"):
        texts[level] = compiled.ir(level)
    return texts


class _Verdicts(logging.Handler):
    """The compile cache's verdicts (hit, miss, rejected), as logged."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "compile cache hit" in message:
            self.seen.append("hit")
        elif "compile cache miss" in message:
            self.seen.append("miss")
        elif "compiling again" in message or "unreadable" in message:
            self.seen.append("rejected")


def cache_worker(worker: int, directory: str, rounds: Any, results: Any) -> None:
    """Compile this worker's programs through the cache once per round, the
    rounds in step with the other workers and the parent (``rounds``, a
    barrier, at each round's start and end), each time comparing the result,
    level by level, with a compilation made with the cache off."""
    os.environ[compile_cache.DIR_VARIABLE] = directory
    verdicts = _Verdicts()
    logging.getLogger("irc.cache").addHandler(verdicts)
    logging.getLogger("irc.cache").setLevel(logging.INFO)
    irc.set_logs("cache")
    programs = worker_programs(worker)
    names = list(programs)
    report: dict[str, Any] = {"worker": worker, "wrong": [], "verdicts": []}
    fresh: dict[str, dict[str, str]] = {}
    for round_ in range(ROUNDS):
        rounds.wait(timeout=600)
        random.Random(worker * 10 + round_).shuffle(names)
        for name in names:
            os.environ.pop(compile_cache.SWITCH_VARIABLE, None)
            before = len(verdicts.seen)
            through_cache = compiled_texts(programs[name])
            report["verdicts"].append([round_, name, verdicts.seen[before:]])
            if name not in fresh:
                os.environ[compile_cache.SWITCH_VARIABLE] = "0"
                fresh[name] = compiled_texts(programs[name])
            expected = fresh[name]
            wrong = [
                level for level in expected if through_cache[level] != expected[level]
            ]
            if wrong:
                report["wrong"].append([round_, name, wrong])
        rounds.wait(timeout=600)
    results.put(report)


def killed_writer(directory: str, mid_write: Any) -> None:
    """Compile softmax through the cache, missing it whatever it holds, and
    stop in the middle of writing its entry (half the text written and
    flushed) until SIGKILLed."""
    os.environ[compile_cache.DIR_VARIABLE] = directory
    os.environ.pop(compile_cache.SWITCH_VARIABLE, None)
    real_fdopen = os.fdopen

    class HalfWriter:
        def __init__(self, stream: Any) -> None:
            self.stream = stream

        def __enter__(self) -> HalfWriter:
            return self

        def __exit__(self, *exception: Any) -> None:
            self.stream.close()

        def write(self, text: str) -> None:
            self.stream.write(text[: len(text) // 2])
            self.stream.flush()
            mid_write.set()
            time.sleep(600)  # killed here

    compile_cache.os.fdopen = lambda *a, **k: HalfWriter(real_fdopen(*a, **k))
    # Always a miss: a worker may have written the shared entry already, and a
    # hit would never reach the write this process is to be killed in.
    compile_cache.Entry.load = lambda self: None
    compiled = irc.compile(softmax, irc.TensorSpec(("N", "D"), "float32"))
    assert compiled.triton_source  # writes the entry, and stops half-way


def tear(entry: Path, how: int) -> None:
    """Damage an entry in place, as a torn write or a failing disk would."""
    data = entry.read_bytes()
    if not data:  # torn already
        return
    if how == 0:  # truncated
        entry.write_bytes(data[: len(data) // 3])
    elif how == 1:  # a byte of the payload changed
        middle = len(data) // 2
        entry.write_bytes(
            data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1 :]
        )
    else:  # emptied
        entry.write_bytes(b"")


def keep_tearing(entry: Path, stop: threading.Event) -> None:
    """Tear ``entry`` again and again until ``stop``."""
    how = 0
    while not stop.wait(0.05):
        with contextlib.suppress(OSError):  # missing, or renamed over meanwhile
            tear(entry, how % 3)
        how += 1


@pytest.mark.slow
def test_the_compile_cache_holds_under_8_processes_torn_and_killed_writes(tmp_path):
    """8 spawned processes compile, through one cache directory, a program
    they share and one of their own, in three rounds. In round 1 a ninth
    process is SIGKILLed half-way through writing the shared entry; then
    every entry is torn (truncated, a byte flipped, emptied); during round 2
    the shared entry keeps being torn; round 3 runs undisturbed. Every
    compilation, hit or miss, equals one made with the cache off at every
    level and in its emitted module; each worker's own entry, torn before
    round 2, is rejected there (never loaded) and hit in round 3; the killed
    writer's temporary file is removed by the next write of its entry."""
    directory = tmp_path / "cache"
    context = multiprocessing.get_context("spawn")
    rounds = context.Barrier(WORKERS + 1)
    results = context.Queue()
    workers = [
        context.Process(target=cache_worker, args=(w, str(directory), rounds, results))
        for w in range(WORKERS)
    ]
    mid_write = context.Event()
    victim = context.Process(target=killed_writer, args=(str(directory), mid_write))
    for process in (*workers, victim):
        process.start()
    try:
        rounds.wait(timeout=600)  # round 1 starts
        assert mid_write.wait(timeout=600), "the writer never got half-way"
        os.kill(victim.pid, signal.SIGKILL)
        victim.join(timeout=30)
        assert victim.exitcode == -signal.SIGKILL
        rounds.wait(timeout=600)  # round 1 ends: every live writer is done
        [orphan] = directory.glob(".*.tmp")  # the killed writer's
        os.utime(orphan, (time.time() - 2 * compile_cache.ORPHAN_AGE,) * 2)
        shared = directory / (orphan.name[1:].split(".json.")[0] + ".json")
        entries = sorted(directory.glob("*.json"))
        assert len(entries) == 1 + WORKERS and shared in entries
        for index, entry in enumerate(entries):
            tear(entry, index % 3)
        stop = threading.Event()
        tearer = threading.Thread(target=keep_tearing, args=(shared, stop))
        rounds.wait(timeout=600)  # round 2 starts
        tearer.start()
        rounds.wait(timeout=600)  # round 2 ends
        stop.set()
        tearer.join()
        rounds.wait(timeout=600)  # round 3 starts
        rounds.wait(timeout=600)  # round 3 ends
        reports = sorted(
            (results.get(timeout=60) for _ in workers), key=lambda r: r["worker"]
        )
        for process in workers:
            process.join(timeout=60)
        assert [process.exitcode for process in workers] == [0] * WORKERS
    finally:  # nothing outlives the test, whatever failed
        for process in (*workers, victim):
            if process.is_alive():
                process.kill()
    assert [r["wrong"] for r in reports] == [[]] * WORKERS
    for report in reports:
        own = {
            round_: found for round_, name, found in report["verdicts"] if name == "own"
        }
        assert own[1] == ["rejected"] and own[2] == ["hit"], report
    verdicts = [v for r in reports for _, _, found in r["verdicts"] for v in found]
    assert verdicts.count("hit") >= WORKERS and verdicts.count("rejected") >= WORKERS
    assert not orphan.exists()


# 4. The torch backend under threads ---------------------------------------------

#: Threads compiling and calling at once.
THREADS = 4


def _model(index: int) -> Any:
    """A small model per thread (a width and an activation of its own), the
    last two threads sharing one model and its compilation."""
    import torch

    torch.manual_seed(index)
    width = 8 + 4 * min(index, THREADS - 2)
    activation = (torch.nn.GELU, torch.nn.ReLU, torch.nn.Tanh)[index % 3]
    return torch.nn.Sequential(
        torch.nn.Linear(6, width), activation(), torch.nn.Linear(width, 3)
    ).eval()


def at_once(task: Callable[[int], Any], timeout: float = 600) -> list[Any]:
    """``task(i)`` in ``THREADS`` threads started together (a barrier), their
    results in thread order; any thread's exception fails the test, with
    every thread's."""
    start = threading.Barrier(THREADS)
    results: list[Any] = [None] * THREADS
    failures: list[str] = []

    def work(index: int) -> None:
        try:
            start.wait(timeout=60)
            results[index] = task(index)
        except BaseException as error:  # reported by the test's thread
            failures.append(f"thread {index}: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    assert failures == []
    return results


def test_the_torch_backend_compiles_and_calls_from_threads_at_once() -> None:
    """Threads each compile a model with ``torch.compile(backend="irc")`` and
    call it at two batch sizes, three times each, all at once (two threads
    share one compiled model): every result equals eager's."""
    import torch

    import irc.torch  # noqa: F401  (registers the backend)

    models = [_model(i) for i in range(THREADS - 1)]
    models.append(models[-1])
    compiled = [torch.compile(m, backend="irc", dynamic=True) for m in models]

    def work(index: int) -> None:
        for round_ in range(3):
            for batch in (2, 5):
                x = torch.randn(
                    batch, 6, generator=torch.Generator().manual_seed(round_)
                )
                with torch.no_grad():
                    got, expected = compiled[index](x), models[index](x)
                torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)

    at_once(work)


def test_a_compiled_function_first_called_from_threads_at_once() -> None:
    """Threads making the first calls of one ``irc.compile`` result at once:
    the first binding lowers and emits it, once (before, the threads that
    did not start the lowering found no triton level: ``KeyError``)."""
    rows = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    expected = np.exp(rows - rows.max(axis=-1, keepdims=True))
    expected /= expected.sum(axis=-1, keepdims=True)
    for _ in range(2):
        compiled = irc.compile(softmax, irc.TensorSpec(("N", "D"), "float32"))
        results = at_once(lambda _, c=compiled: c(rows, backend="interpret"))
        for got in results:
            np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_a_fresh_compilation_lowered_from_threads_at_once() -> None:
    """Threads asking a fresh ``irc.compile`` result for its lower levels at
    once: the driver lowers and emits it once, under its lock (before, the
    threads that did not start the lowering found no triton level)."""
    for _ in range(2):
        compiled = irc.compile(softmax, irc.TensorSpec(("N", "D"), "float32"))
        seen = at_once(
            lambda _, c=compiled: (c.ir("triton"), c.triton_source, c.num_kernels)
        )
        assert len(set(seen)) == 1
