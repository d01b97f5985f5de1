"""A trace changes nothing outside itself (``irc.capture.intercept``).

Threads that trace while another runs plain NumPy, NumPy's own code inside
a trace, the ``numpy`` module after a trace (also one that raised), and
NumPy functions irc does not capture (``np.random``) inside a trace: a clear
``TracingError``, never a crash. ``IRC_THREAD_ITERATIONS`` sets how many
traces each thread runs (50 by default; the issue's measure used 200).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import types
from pathlib import Path

import numpy as np
import pytest

import irc
from irc.ir import print_module

ITERATIONS = int(os.environ.get("IRC_THREAD_ITERATIONS", "50"))
THREADS = 4

#: The names irc intercepts, and NumPy's own functions for them.
NAMES = ("zeros", "ones", "empty", "full", "arange", "tri", "eye")
ORIGINALS = {name: vars(np)[name] for name in NAMES}
SPEC = irc.TensorSpec(("N", 4), "float32")


def creations(x):
    """Every intercepted function, with symbolic sizes."""
    n = x.shape[0]
    a = np.zeros((n, 4), np.float32) + np.ones((n, 4), dtype=np.float32)
    b = np.empty((n, 4), np.float32) + np.full((n, 4), 2.0, np.float32)
    c = np.arange(n, dtype=np.float32)[:, None] * np.arange(1, 2 * n + 1, 2)[:, None]
    d = np.tri(n, dtype=np.float32) @ x + np.eye(n, dtype=np.float32) @ x
    return a + b + c + d


def plain_numpy():
    """Every intercepted function, and NumPy code that calls them inside
    NumPy (Python helpers and the C of np.random), on static sizes."""
    rng = np.random.default_rng(7)
    state = np.random.RandomState(3)
    return [
        np.zeros((3, 4)).tolist(),
        np.ones((2, 2), np.int32).tolist(),
        np.empty((0, 3)).shape,
        np.empty((2, 3), np.float32).dtype.name,
        np.full((2, 3), 7.0).tolist(),
        np.arange(5).tolist(),
        np.arange(1, 10, 3, dtype=np.float32).tolist(),
        np.tri(3, k=1).tolist(),
        np.eye(3, 4, 1).tolist(),
        np.identity(3).tolist(),  # np.eye and np.zeros inside NumPy
        np.linspace(0, 1, 5).tolist(),
        np.diag([1, 2]).tolist(),  # np.zeros inside NumPy
        np.kron(np.eye(2), np.ones((1, 2))).tolist(),
        rng.random(3).tolist(),  # np.empty inside np.random's C code
        state.rand(3).tolist(),
        [getattr(np, name) is ORIGINALS[name] for name in NAMES],
    ]


def _traced_ir() -> tuple[str, str]:
    module = irc.trace(creations, SPEC)
    return print_module(module), print_module(module, locations=True)


def _numpy_is_plain() -> None:
    assert type(np) is types.ModuleType
    for name in NAMES:
        assert getattr(np, name) is ORIGINALS[name], name
        assert vars(np)[name] is ORIGINALS[name], name


def test_a_numpy_thread_sees_numpy_while_threads_trace():
    lone = _traced_ir()
    expected = plain_numpy()
    problems: list[str] = []
    start = threading.Barrier(THREADS + 1)

    def tracer() -> None:
        start.wait()
        for _ in range(ITERATIONS):
            try:
                if _traced_ir() != lone:
                    problems.append("a concurrent trace gave different IR")
            except Exception as err:  # reported below, with the others
                problems.append(f"trace: {type(err).__name__}: {err}")

    tracers = [threading.Thread(target=tracer) for _ in range(THREADS)]
    rounds = 0

    def numpy_user() -> None:
        nonlocal rounds
        start.wait()
        while rounds < 3 or any(t.is_alive() for t in tracers):
            rounds += 1
            try:
                got = plain_numpy()
            except Exception as err:
                problems.append(f"numpy: {type(err).__name__}: {err}")
                return
            if got != expected:
                problems.extend(
                    f"numpy: {g} != {e}" for g, e in zip(got, expected) if g != e
                )
                return

    user = threading.Thread(target=numpy_user)
    for thread in [*tracers, user]:
        thread.start()
    for thread in [*tracers, user]:
        thread.join(timeout=300)
    assert not problems, problems[:5]
    assert rounds >= 3
    _numpy_is_plain()


def test_concurrent_compiles_give_the_ir_of_a_lone_compile():
    def levels() -> tuple[str, ...]:
        compiled = irc.compile(creations, SPEC)
        return (
            compiled.ir("graph", locations=True),
            compiled.ir("loop"),
            compiled.ir("triton"),
            compiled.triton_source,
        )

    lone = levels()
    results: list[object] = []

    def compile_twice() -> None:
        for _ in range(2):
            try:
                results.append(levels())
            except Exception as err:
                results.append(err)

    threads = [threading.Thread(target=compile_twice) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert len(results) == 2 * THREADS
    assert all(result == lone for result in results), results


def test_numpy_is_unchanged_after_a_trace_and_after_one_that_raised():
    irc.trace(creations, SPEC)
    _numpy_is_plain()

    def unsupported(x):
        return np.zeros((x.shape[0], 4)) + np.fft.fft(x)

    with pytest.raises(irc.TracingError, match="np.fft.fft"):
        irc.trace(unsupported, SPEC)
    _numpy_is_plain()

    def user_bug(x):
        np.zeros(x.shape[0])
        raise ValueError("the user's own error")

    with pytest.raises(ValueError, match="the user's own error"):
        irc.trace(user_bug, SPEC)
    _numpy_is_plain()

    def nested(x):
        inner = irc.trace(lambda y: np.ones(y.shape[0]) * y[:, 0], SPEC)
        assert inner is not None
        return np.ones((x.shape[0], 4), np.float32) * x

    irc.trace(nested, SPEC)
    _numpy_is_plain()


def test_only_the_traced_code_sees_irc_functions():
    seen: dict[str, object] = {}

    def other_thread() -> None:
        seen["thread"] = np.zeros is ORIGINALS["zeros"]
        seen["thread_value"] = np.zeros(2).tolist()

    def traced(x):
        seen["traced"] = np.zeros is ORIGINALS["zeros"]
        seen["getattr"] = getattr(np, "zeros") is ORIGINALS["zeros"]  # noqa: B009
        # NumPy's own code, run from the traced function, gets NumPy's
        # functions: np.identity calls np.eye, which calls np.zeros.
        seen["identity"] = np.identity(2).tolist()
        seen["random"] = np.random.default_rng(0).random(2).tolist()
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        return x * np.arange(x.shape[1], dtype=np.float32)

    irc.trace(traced, SPEC)
    assert seen == {
        "traced": False,  # irc's own, which takes symbolic sizes
        "getattr": True,
        "identity": np.identity(2).tolist(),
        "random": np.random.default_rng(0).random(2).tolist(),
        "thread": True,
        "thread_value": [0.0, 0.0],
    }


def test_a_kept_irc_function_is_numpy_outside_the_trace():
    kept = {}

    def traced(x):
        kept["zeros"] = np.zeros
        return np.zeros((x.shape[0], 4), np.float32) + x

    irc.trace(traced, SPEC)
    assert kept["zeros"] is not ORIGINALS["zeros"]
    np.testing.assert_array_equal(kept["zeros"]((2, 3), np.int32), np.zeros((2, 3)))
    assert kept["zeros"]((2,)).dtype == np.float64


#: Run in a subprocess, so that a crash fails the test instead of pytest.
_UNSUPPORTED = textwrap.dedent(
    """
    import numpy as np
    import irc

    rng = np.random.default_rng(0)
    cases = {
        "rand": lambda x: x * (np.random.rand(x.shape[0]) > 0)[:, None],
        "generator": lambda x: x * np.random.default_rng().random(x.shape[0])[:, None],
        "kept_generator": lambda x: x + rng.normal(size=x.shape),
        "array": lambda x: np.random.permutation(x),
        "linalg": lambda x: np.linalg.inv(x),
        "identity": lambda x: np.identity(x.shape[0]) @ x,
        "linspace": lambda x: np.linspace(0, 1, x.shape[0]),
        # np.asarray and np.ascontiguousarray are intercepted; this is NumPy's.
        "asfortranarray": lambda x: np.asfortranarray(x),
        "getattr": lambda x: getattr(np, "zeros")((x.shape[0], 4)),
    }
    for name, function in cases.items():
        try:
            irc.trace(function, irc.TensorSpec(("N", 4), "float32"))
            print(name, "|", "no error")
        except irc.TracingError as err:
            print(name, "|", str(err).splitlines()[0])
    print("alive")
    """
)


def _run_alone(script: Path, source: str) -> str:
    """``source`` run as ``script`` in a process of its own, so that a crash
    fails the test instead of killing pytest; its standard output."""
    script.write_text(source)
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_unsupported_numpy_in_a_trace_is_a_clear_error_not_a_crash(tmp_path):
    script = tmp_path / "unsupported.py"
    lines = _run_alone(script, _UNSUPPORTED).splitlines()
    assert lines[-1] == "alive"
    errors = dict(line.split(" | ", 1) for line in lines[:-1])
    random = "random numbers cannot be traced"
    assert "np.random.rand() was given the symbolic size N" in errors["rand"]
    assert random in errors["rand"] and "as an argument" in errors["rand"]
    generator = "np.random.default_rng().random() was given the symbolic size N"
    assert generator in errors["generator"]
    assert random in errors["kept_generator"]
    assert "rng.normal()" in errors["kept_generator"]
    assert "np.random.permutation() was given a traced array" in errors["array"]
    assert "np.linalg.inv is not supported" in errors["linalg"]
    assert "supported functions: np.all, np.amax" in errors["linalg"]
    assert "np.identity() is not supported by irc" in errors["identity"]
    assert "np.eye" in errors["identity"]  # the alternative
    assert "np.linspace()" in errors["linspace"]
    assert "np.asfortranarray()" in errors["asfortranarray"]
    assert "symbolic size N" in errors["getattr"]
    for line in errors.values():
        assert line.startswith(str(script)), line  # the user's line


#: Every public function of np.random and method of a Generator, given a
#: symbolic size (positionally and as ``size=``) and a traced array.
_RANDOM_SWEEP = textwrap.dedent(
    """
    import collections
    import numpy as np
    import irc

    rng = np.random.default_rng(0)
    public = [n for n in dir(np.random) if not n.startswith("_") and n != "test"]
    functions = [getattr(np.random, n) for n in public]
    functions += [getattr(rng, n) for n in dir(rng) if not n.startswith("_")]
    functions = [f for f in functions if callable(f) and not isinstance(f, type)]
    arguments = [
        lambda x: ((x.shape[0],), {}),
        lambda x: ((), {"size": x.shape[0]}),
        lambda x: ((x,), {}),
    ]
    outcomes = collections.Counter()
    for function in functions:
        for make in arguments:

            def traced(x):
                args, kwargs = make(x)
                function(*args, **kwargs)
                return x

            try:
                irc.trace(traced, irc.TensorSpec(("N", 4), "float32"))
                outcomes["traced"] += 1
            except irc.TracingError as err:
                outcomes["random" if "random numbers" in str(err) else "irc"] += 1
            except Exception:  # NumPy's own error for these arguments
                outcomes["numpy"] += 1
    print("swept", len(functions), dict(outcomes))
    print("alive")
    """
)


def test_every_np_random_function_in_a_trace_is_an_error_not_a_crash(tmp_path):
    *_, swept, alive = _run_alone(
        tmp_path / "random_sweep.py", _RANDOM_SWEEP
    ).splitlines()
    assert alive == "alive"
    _, count, outcomes = swept.split(" ", 2)
    assert int(count) > 50
    assert "'random':" in outcomes
    assert "'irc':" not in outcomes  # every irc error says why random fails


def test_traced_code_imported_by_name_is_told_to_write_np_dot():
    from numpy import zeros  # before the trace: NumPy's own

    def traced(x):
        return zeros((x.shape[0], 4)) + x

    with pytest.raises(irc.TracingError, match=r"zeros\(\) is NumPy's own np.zeros"):
        irc.trace(traced, SPEC)

    def imported_inside(x):
        from numpy import zeros  # during the trace: irc's

        return zeros((x.shape[0], 4), np.float32) + x

    irc.trace(imported_inside, SPEC)


def test_assignment_into_an_argument_is_returned_for_the_caller():
    def traced(x):
        x[0] = 1
        return x

    (function,) = irc.trace(traced, SPEC).ops
    assert len(function.function_type.outputs) == 2  # the result, the new x
