"""Programs with structured control flow (``irc.cond``, ``irc.while_loop``,
``irc.fori_loop``, ``irc.scan``), each beside a plain Python/NumPy
``reference`` that computes the same thing with Python's own ``if`` and
``for``.

Each entry of ``PROGRAMS`` gives the traced ``function``, its ``specs()``
for ``irc.compile`` (symbolic dims where the program allows them), and
``inputs(rng, size)``: concrete arguments for one size, on which
``reference(*inputs)`` is the expected result. ``sizes`` are the sizes the
tests run (several, so that one compilation serves more than one binding).
The end-to-end tests of the lowering import them too.

    program = PROGRAMS["rnn"]
    compiled = program.compile()
    args = program.inputs(np.random.default_rng(0), 3)
    np.testing.assert_allclose(
        compiled(*args, backend="reference")[1], program.reference(*args)[1], rtol=1e-5
    )
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from xdsl.dialects.func import FuncOp

import irc
from irc.runtime.binding import bind_arguments

F32 = "float32"


class ControlFlowProgram(NamedTuple):
    function: Callable[..., Any]
    reference: Callable[..., Any]
    specs: Callable[[], tuple[Any, ...]]
    inputs: Callable[[np.random.Generator, int], tuple[Any, ...]]
    sizes: tuple[int, ...] = (1, 3, 6)
    facts: tuple[str, ...] = ()

    def compile(self) -> irc.Compiled:
        return irc.compile(self.function, *self.specs(), facts=self.facts)


# ----- for i in range(steps): x = x * 0.9 if x.sum() > 0 else x + 1.0 --------


def decay_or_grow(x: Any, steps: Any) -> Any:
    """The classic example, ``steps`` a traced 0-d int64 (a graph.while)."""

    def step(i: Any, x: Any) -> Any:
        return irc.cond(x.sum() > 0, lambda x: x * 0.9, lambda x: x + 1.0, x)

    return irc.fori_loop(0, steps, step, x)


def decay_or_grow_reference(x: np.ndarray, steps: np.ndarray) -> np.ndarray:
    for _ in range(int(steps)):
        x = x * 0.9 if x.sum() > 0 else x + 1.0
    return x


def _decay_or_grow_inputs(rng: np.random.Generator, size: int) -> tuple[Any, ...]:
    x = (rng.standard_normal(4) - 1.0).astype(np.float32)
    return x, np.int64(size)


# ----- an RNN (tanh cell) over a symbolic sequence length ----------------------


def rnn(h0: Any, xs: Any, w: Any, u: Any) -> Any:
    """``h = tanh(h @ w + x @ u)`` over the rows of ``xs``: the last state and
    every state (scan's ys)."""

    def cell(h: Any, x: Any) -> Any:
        h = np.tanh(h @ w + x @ u)
        return h, h

    return irc.scan(cell, h0, xs)


def rnn_reference(
    h0: np.ndarray, xs: np.ndarray, w: np.ndarray, u: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    h, states = h0, []
    for x in xs:
        h = np.tanh(h @ w + x @ u)
        states.append(h)
    return h, np.stack(states)


def rnn_specs(element: str = F32) -> tuple[Any, ...]:
    return (
        irc.TensorSpec(("H",), element),
        irc.TensorSpec(("T", "D"), element),
        irc.TensorSpec(("H", "H"), element),
        irc.TensorSpec(("D", "H"), element),
    )


def rnn_inputs(
    rng: np.random.Generator, size: int, element: type = np.float32
) -> tuple[Any, ...]:
    hidden, features = 3, 2

    def normal(*shape: int) -> np.ndarray:
        return (0.5 * rng.standard_normal(shape)).astype(element)

    return (
        normal(hidden),
        normal(size, features),
        normal(hidden, hidden),
        normal(features, hidden),
    )


def rnn_loss(h0: Any, xs: Any, w: Any, u: Any) -> Any:
    """A scalar of every state, for gradients."""
    last, states = rnn(h0, xs, w, u)
    return (states * states).sum() + last.sum()


# ----- Newton's iteration for sqrt(a) until a tolerance is met ------------------

NEWTON_TOLERANCE = 1e-5
NEWTON_MAX_ITERATIONS = 100


def newton_sqrt(a: Any) -> Any:
    """``y <- (y + a / y) / 2`` from ``y = a`` until ``|y*y - a| <= tol * a``
    everywhere (or 100 iterations); returns the root and the iteration count."""

    def unconverged(state: Any) -> Any:
        y, count = state
        error = np.abs(y * y - a) - NEWTON_TOLERANCE * a
        return (error.max() > 0) & (count < NEWTON_MAX_ITERATIONS)

    def step(state: Any) -> Any:
        y, count = state
        return 0.5 * (y + a / y), count + 1

    return irc.while_loop(unconverged, step, (a, np.int64(0)))


def newton_sqrt_reference(a: np.ndarray) -> tuple[np.ndarray, np.int64]:
    y, count = a, np.int64(0)
    while (np.abs(y * y - a) - NEWTON_TOLERANCE * a).max() > 0 and (
        count < NEWTON_MAX_ITERATIONS
    ):
        y, count = 0.5 * (y + a / y), count + 1
    return y, count


def _newton_inputs(rng: np.random.Generator, size: int) -> tuple[Any, ...]:
    return (rng.uniform(0.5, 10.0 ** (size % 4 + 1), size).astype(np.float32),)


# ----- greedy decoding of a tiny model with a fixed maximum length -------------

DECODE_LENGTH = 5


def greedy_decode(token: Any, h: Any, embed: Any, u: Any, out: Any) -> Any:
    """From ``token``: ``h = tanh(embed[token] + h @ u)``, the next token the
    argmax of ``h @ out``, ``DECODE_LENGTH`` times; returns the tokens."""

    def step(state: Any, _: Any) -> Any:
        token, h = state
        h = np.tanh(np.take(embed, token, axis=0) + h @ u)
        token = np.argmax(h @ out)
        return (token, h), token

    _, tokens = irc.scan(step, (token, h), None, length=DECODE_LENGTH)
    return tokens


def greedy_decode_reference(
    token: np.ndarray, h: np.ndarray, embed: np.ndarray, u: np.ndarray, out: np.ndarray
) -> np.ndarray:
    tokens = []
    for _ in range(DECODE_LENGTH):
        h = np.tanh(embed[token] + h @ u)
        token = np.argmax(h @ out)
        tokens.append(token)
    return np.array(tokens, np.int64)


def _decode_inputs(rng: np.random.Generator, size: int) -> tuple[Any, ...]:
    vocabulary, hidden = size + 2, 4
    return (
        np.int64(rng.integers(vocabulary)),
        rng.standard_normal(hidden).astype(np.float32),
        rng.standard_normal((vocabulary, hidden)).astype(np.float32),
        rng.standard_normal((hidden, hidden)).astype(np.float32),
        rng.standard_normal((hidden, vocabulary)).astype(np.float32),
    )


# ----- np.cumsum as a scan -------------------------------------------------------


def scan_cumsum(xs: Any) -> Any:
    """The running sums of the rows of ``xs``: ``np.cumsum(xs, axis=0)``."""

    def add(total: Any, x: Any) -> Any:
        total = total + x
        return total, total

    _, sums = irc.scan(add, np.zeros_like(xs[0]), xs)
    return sums


def cumsum_reference(xs: np.ndarray) -> np.ndarray:
    return np.cumsum(xs, axis=0)


def _cumsum_inputs(rng: np.random.Generator, size: int) -> tuple[Any, ...]:
    return (rng.standard_normal((size, 3)).astype(np.float32),)


# ----- for i in range(N): buf[i] = 0.5 * buf[i] + x[i] * w ---------------------


def row_update(buf: Any, x: Any, w: Any) -> Any:
    """Row ``i`` of the carry, updated from itself and from row ``i`` of a
    closed-over input, for every row: a device loop (one launch)."""

    def update(i: Any, buf: Any) -> Any:
        buf[i] = 0.5 * buf[i] + x[i] * w
        return buf

    return irc.fori_loop(0, x.shape[0], update, buf)


def row_update_reference(buf: np.ndarray, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    buf = buf.copy()
    for i in range(x.shape[0]):
        buf[i] = 0.5 * buf[i] + x[i] * w
    return buf


def _row_update_inputs(rng: np.random.Generator, size: int) -> tuple[Any, ...]:
    buf, x = (rng.standard_normal((size, 3)).astype(np.float32) for _ in range(2))
    return buf, x, rng.standard_normal(3).astype(np.float32)


# ----- halve a vector until its norm is below 1 (a device while loop) ---------


def halve_to_unit_norm(x: Any) -> Any:
    """Halve ``x`` until its norm is below 1: a static vector that fits one
    program, so the whole loop runs in one kernel (no host decision)."""
    return irc.while_loop(
        lambda x: np.sqrt((x * x).sum()) >= 1.0, lambda x: x * np.float32(0.5), x
    )


def halve_to_unit_norm_reference(x: np.ndarray) -> np.ndarray:
    while np.sqrt((x * x).sum()) >= 1.0:
        x = x * np.float32(0.5)
    return x


def _halve_inputs(rng: np.random.Generator, size: int) -> tuple[Any, ...]:
    # Norms about 2**size: that many halvings, give or take one.
    return ((2.0**size / 16) * rng.standard_normal(256).astype(np.float32),)


# ----- halve or shift by the sign of the sum (a device cond) ------------------


def halve_or_shift(x: Any, y: Any) -> Any:
    """A cond whose branches are pointwise: one kernel reads the predicate
    and computes the taken branch (no host decision)."""
    return irc.cond(
        x.sum() > 0,
        lambda v, w: (v * 0.5, w),
        lambda v, w: (v + 1.0, w * v),
        x,
        y,
    )


def halve_or_shift_reference(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    if x.sum() > 0:
        return x * np.float32(0.5), y
    return x + np.float32(1.0), y * x


def _halve_or_shift_inputs(rng: np.random.Generator, size: int) -> tuple[Any, ...]:
    sign = 1.0 if size % 2 else -1.0
    x = sign * np.abs(rng.standard_normal(size)).astype(np.float32)
    return x, rng.standard_normal(size).astype(np.float32)


PROGRAMS: dict[str, ControlFlowProgram] = {
    "decay_or_grow": ControlFlowProgram(
        decay_or_grow,
        decay_or_grow_reference,
        lambda: (irc.TensorSpec((4,), F32), irc.TensorSpec((), "int64")),
        _decay_or_grow_inputs,
        sizes=(0, 1, 4, 9),
    ),
    "rnn": ControlFlowProgram(rnn, rnn_reference, rnn_specs, rnn_inputs),
    "newton_sqrt": ControlFlowProgram(
        newton_sqrt,
        newton_sqrt_reference,
        lambda: (irc.TensorSpec(("N",), F32),),
        _newton_inputs,
    ),
    # The same loop over at most 4096 elements (a declared fact) fits one
    # program: it runs on the device, its counter a whole carry.
    "newton_sqrt_bounded": ControlFlowProgram(
        newton_sqrt,
        newton_sqrt_reference,
        lambda: (irc.TensorSpec(("N",), F32),),
        _newton_inputs,
        sizes=(1, 3, 128, 129),
        facts=("N <= 4096",),
    ),
    "halve_or_shift": ControlFlowProgram(
        halve_or_shift,
        halve_or_shift_reference,
        lambda: (irc.TensorSpec(("N",), F32), irc.TensorSpec(("N",), F32)),
        _halve_or_shift_inputs,
        sizes=(1, 2, 1500),
    ),
    "greedy_decode": ControlFlowProgram(
        greedy_decode,
        greedy_decode_reference,
        lambda: (
            irc.TensorSpec((), "int64"),
            irc.TensorSpec((4,), F32),
            irc.TensorSpec(("V", 4), F32),
            irc.TensorSpec((4, 4), F32),
            irc.TensorSpec((4, "V"), F32),
        ),
        _decode_inputs,
    ),
    "cumsum": ControlFlowProgram(
        scan_cumsum,
        cumsum_reference,
        lambda: (irc.TensorSpec(("N", 3), F32),),
        _cumsum_inputs,
    ),
    "row_update": ControlFlowProgram(
        row_update,
        row_update_reference,
        lambda: (
            irc.TensorSpec(("N", 3), F32),
            irc.TensorSpec(("N", 3), F32),
            irc.TensorSpec((3,), F32),
        ),
        _row_update_inputs,
        sizes=(1, 3, 6, 400),  # 400 rows: 1200 lanes, two programs
    ),
    "halve_to_unit_norm": ControlFlowProgram(
        halve_to_unit_norm,
        halve_to_unit_norm_reference,
        lambda: (irc.TensorSpec((256,), F32),),
        _halve_inputs,
        sizes=(0, 1, 5, 12),
    ),
}


def sizes_of_call(compiled: irc.Compiled, args: tuple[Any, ...]) -> dict[str, int]:
    """The symbols' values in a call of ``compiled`` on ``args``, as the
    runtime binds them."""
    (function,) = (
        op for op in compiled.module_at("graph").ops if isinstance(op, FuncOp)
    )
    return bind_arguments(function, [np.asarray(a) for a in args])
