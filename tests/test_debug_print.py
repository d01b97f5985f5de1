"""``irc.debug.print`` and ``irc.debug.callback``: ordered host effects that
survive the graph passes, fusion, autodiff and control flow, run between
kernels on every backend (docs/debugging.md, "Printing from traced code")."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import irc
from irc.dialects.debug import PrintOp
from irc.ir import parse_module, print_module
from irc.passes.registry import get_all_passes
from irc.testing.interpreters import run_module

BACKENDS = ("reference", "interpret")


def softmax_with_print(x: Any) -> Any:
    m = x.max(axis=-1, keepdims=True)
    irc.debug.print("max {} total {total}", m, total=x.sum())
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_inside_softmax(backend: str, capsys: pytest.CaptureFixture[str]):
    c = irc.compile(softmax_with_print, irc.TensorSpec(("N", "D"), "float32"))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    capsys.readouterr()
    np.testing.assert_allclose(c(x, backend=backend), _softmax(x), rtol=1e-6)
    assert _lines(capsys) == ["max [[2.]", " [5.]] total 15.0"]


def test_print_is_a_kernel_boundary():
    """The printed max is stored by its own kernel, read by the print
    between launches; the rest of the softmax is still one kernel."""
    c = irc.compile(softmax_with_print, irc.TensorSpec(("N", "D"), "float32"))
    fusion = c.ir("fusion")
    assert fusion.count("fusion.kernel") == 3
    assert "its result is also used by debug.print, outside kernels" in fusion
    launcher = c.triton_source.split("def launch_softmax_with_print")[1]
    order = [line.split("(")[0].strip() for line in launcher.splitlines()]
    debug = order.index("_irc_debug")
    assert order.index("kernel_k1.run") < debug < order.index("kernel_k2.run")


def scan_with_print(xs: Any) -> Any:
    def step(h: Any, x: Any) -> tuple[Any, Any]:
        h = h + x
        irc.debug.print("h={}", h)
        return h, h * 2

    return irc.scan(step, np.zeros_like(xs[0]), xs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_in_scan_body(backend: str, capsys: pytest.CaptureFixture[str]):
    c = irc.compile(scan_with_print, irc.TensorSpec(("T", 2), "float32"))
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    capsys.readouterr()
    h, ys = c(xs, backend=backend)
    np.testing.assert_allclose(h, xs.sum(0))
    np.testing.assert_allclose(ys, 2 * np.cumsum(xs, 0))
    assert _lines(capsys) == ["h=[0. 1.]", "h=[2. 4.]", "h=[6. 9.]"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_in_fori_loop_and_cond(backend: str, capsys: pytest.CaptureFixture[str]):
    def f(x: Any) -> Any:
        def body(i: Any, v: Any) -> Any:
            irc.debug.print("i={} v={}", i, v)
            return v * 2

        v = irc.fori_loop(0, 2, body, x)
        return irc.cond(
            v.sum() > 0,
            lambda v: (irc.debug.print("positive"), v)[1],
            lambda v: (irc.debug.print("not positive"), -v)[1],
            v,
        )

    c = irc.compile(f, irc.TensorSpec((2,), "float32"))
    capsys.readouterr()
    np.testing.assert_allclose(c(np.ones(2, np.float32), backend=backend), [4, 4])
    assert _lines(capsys) == ["i=0 v=[1. 1.]", "i=1 v=[2. 2.]", "positive"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_in_while_loop_runs_once_an_iteration(
    backend: str, capsys: pytest.CaptureFixture[str]
):
    """A print is an effect: the loop is not unrolled (its copies would
    print for iterations past the exit), and it prints each iteration once."""

    def f(x: Any) -> Any:
        def body(state: Any) -> Any:
            v, k = state
            irc.debug.print("k={}", k)
            return v * 2, k + 1

        return irc.while_loop(lambda s: s[1] < 3, body, (x, np.int32(0)))[0]

    c = irc.compile(f, irc.TensorSpec((2,), "float32"))
    assert "unrolled" not in c.ir("fusion")
    capsys.readouterr()
    np.testing.assert_allclose(c(np.ones(2, np.float32), backend=backend), [8, 8])
    assert _lines(capsys) == ["k=0", "k=1", "k=2"]


def rnn_loss(w: Any, xs: Any) -> Any:
    def step(h: Any, x: Any) -> tuple[Any, None]:
        h = np.tanh(w * h + x)
        irc.debug.print("h={}", h)
        return h, None

    h, _ = irc.scan(step, np.zeros_like(w), xs)
    irc.debug.print("loss={}", h.sum())
    return h.sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_under_value_and_grad(backend: str, capsys: pytest.CaptureFixture[str]):
    """The forward prints once per call; the backward pass's copies of the
    loop body (run again to stack the carries, then in reverse inside the
    backward loop) print with a ``[backward]`` prefix."""
    specs = irc.TensorSpec((2,), "float32"), irc.TensorSpec((2, 2), "float32")
    c = irc.compile(irc.value_and_grad(rnn_loss), *specs)
    w = np.full(2, 0.5, np.float32)
    xs = np.array([[0.0, 1.0], [1.0, 0.0]], np.float32)
    capsys.readouterr()
    value, grad = c(w, xs, backend=backend)
    lines = _lines(capsys)
    forward = [line for line in lines if not line.startswith("[backward] ")]
    assert forward[0].startswith("h=[0.") and forward[1].startswith("h=[")
    assert forward[2] == f"loss={np.float32(value)}"
    assert len(forward) == 3
    backward = ["[backward] " + line for line in forward[:2]]
    assert lines[3:] == backward + backward[::-1]
    assert np.isfinite(grad).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_under_grad(backend: str, capsys: pytest.CaptureFixture[str]):
    def loss(x: Any) -> Any:
        y = (x * x).sum()
        irc.debug.print("y={}", y)
        return y

    c = irc.compile(irc.grad(loss), irc.TensorSpec((3,), "float32"))
    capsys.readouterr()
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(c(x, backend=backend), 2 * x)
    assert _lines(capsys) == ["y=5.0"]


def _run_pass(text: str, name: str) -> str:
    module = parse_module(text)
    get_all_passes()[name]()().apply(irc.ir.default_context(), module)
    return print_module(module)


def test_cse_keeps_two_identical_prints():
    def f(x: Any) -> Any:
        irc.debug.print("x={}", x)
        irc.debug.print("x={}", x)
        return x + 1

    c = irc.compile(f, irc.TensorSpec((2,), "float32"))
    graph = c.ir("graph")
    assert graph.count("debug.print") == 2
    assert _run_pass(graph, "cse").count("debug.print") == 2


def test_canonicalize_keeps_print_of_unused_value(capsys: pytest.CaptureFixture[str]):
    def f(x: Any) -> Any:
        unused = np.exp(x)
        irc.debug.print("exp={}", unused)
        return x

    c = irc.compile(f, irc.TensorSpec((2,), "float32"))
    assert "graph.exp" in c.ir("graph")
    assert _run_pass(c.ir("graph"), "canonicalize").count("debug.print") == 1
    capsys.readouterr()
    c(np.zeros(2, np.float32), backend="interpret")
    assert _lines(capsys) == ["exp=[1. 1.]"]


def test_ir_round_trips_and_runs_at_every_level(capsys: pytest.CaptureFixture[str]):
    c = irc.compile(scan_with_print, irc.TensorSpec(("T", 2), "float32"))
    xs = np.ones((2, 2), np.float32)
    for level in ("graph", "fusion", "loop", "memory"):
        text = c.ir(level)
        module = parse_module(text)
        assert print_module(module) == text, level
        capsys.readouterr()
        run_module(module, [xs])
        assert _lines(capsys) == ["h=[1. 1.]", "h=[2. 2.]"], level


def test_backward_mark_round_trips():
    specs = irc.TensorSpec((2,), "float32"), irc.TensorSpec((2, 2), "float32")
    text = irc.compile(irc.value_and_grad(rnn_loss), *specs).ir("graph")
    module = parse_module(text)
    marks = [op.is_backward for op in module.walk() if isinstance(op, PrintOp)]
    assert True in marks and False in marks
    assert print_module(module) == text


@pytest.mark.parametrize("backend", BACKENDS)
def test_callback_collects_values(backend: str):
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def f(x: Any) -> Any:
        y = x * 2
        irc.debug.callback(lambda a, b: seen.append((a, b)), y, b=x.sum())
        return y + 1

    c = irc.compile(f, irc.TensorSpec(("N",), "float32"))
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(c(x, backend=backend), 2 * x + 1)
    np.testing.assert_allclose(c(x + 1, backend=backend), 2 * x + 3)
    assert len(seen) == 2
    assert all(isinstance(a, np.ndarray) for pair in seen for a in pair)
    np.testing.assert_allclose(seen[0][0], 2 * x)
    np.testing.assert_allclose(seen[1][1], (x + 1).sum())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_kept_callback_value_is_the_value_it_was_given(backend: str):
    """The buffer a callback's value was read from is reused by a later
    kernel (``a``'s by ``c``); the array the callback kept is its own copy."""
    seen: list[np.ndarray] = []

    def f(x: Any, w: Any) -> Any:
        a = np.tanh(x @ w)
        irc.debug.callback(seen.append, a)
        b = np.tanh(a @ w)
        c = np.tanh(b @ w)
        return np.tanh(c @ w)

    specs = irc.TensorSpec((2, 4), "float32"), irc.TensorSpec((4, 4), "float32")
    compiled = irc.compile(f, *specs)
    rng = np.random.default_rng(0)
    x, w = (rng.standard_normal(s).astype(np.float32) for s in ((2, 4), (4, 4)))
    compiled(x, w, backend=backend)
    np.testing.assert_allclose(seen[-1], np.tanh(x @ w), rtol=1e-5, atol=1e-6)


def test_unknown_callback_id_is_a_clear_error():
    def f(x: Any) -> Any:
        irc.debug.callback(print, x)
        return x + 1

    text = irc.compile(f, irc.TensorSpec((2,), "float32")).ir("graph")
    key = text.split('debug.callback "')[1].split('"')[0]
    unknown = parse_module(text.replace(key, "never-registered"))
    assert "never-registered" in print_module(unknown)
    with pytest.raises(irc.ExecutionError, match="never-registered"):
        run_module(unknown, [np.ones(2, np.float32)])


def test_eager_print_and_callback(capsys: pytest.CaptureFixture[str]):
    seen: list[Any] = []
    capsys.readouterr()
    softmax_with_print(np.zeros((1, 2), np.float32))
    irc.debug.callback(seen.append, np.ones(2))
    assert _lines(capsys) == ["max [[0.]] total 0.0"]
    assert len(seen) == 1


def test_absent_prints_cost_nothing():
    """A program without prints compiles to the same launcher as before:
    no debug helper is emitted."""
    c = irc.compile(_softmax, irc.TensorSpec(("N", "D"), "float32"))
    assert "_irc_debug" not in c.triton_source
