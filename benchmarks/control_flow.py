"""Kernel launches and host decisions per call of programs with loops.

Each program is compiled with the default pipeline and called on Triton's
interpreter (CPU) at one size; every kernel launch
(``InterpretedFunction.run``) and every device->host read of a decision
(``torch.Tensor.item``, the launcher's ``memory.read_scalar``) is counted.
A launch is what the GPU would run; a read is a sync, which waits for every
kernel before it and leaves the GPU idle while the host decides. Counts, not
times: they are the same on a GPU. Beside them, the launches irc states
(``Compiled.launches``: an expression of the sizes and of a while loop's
host iterations) and the launch sites its host function holds.

    python benchmarks/control_flow.py
    python benchmarks/control_flow.py --json out.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
import triton.runtime.interpreter as interpreter

import irc

F32 = "float32"


class Loop(NamedTuple):
    """A program, its specs, and its arguments at the measured size."""

    function: Callable[..., Any]
    specs: tuple[irc.TensorSpec, ...]
    arguments: Callable[[], tuple[np.ndarray, ...]]
    size: str


def row_update(buf: Any, x: Any, w: Any) -> Any:
    def update(i: Any, buf: Any) -> Any:
        buf[i] = 0.5 * buf[i] + x[i] * w
        return buf

    return irc.fori_loop(0, x.shape[0], update, buf)


def halve_until_small(x: Any) -> Any:
    return irc.while_loop(lambda x: np.sqrt((x * x).sum()) >= 1.0, lambda x: x * 0.5, x)


def running_sums(xs: Any) -> Any:
    def add(total: Any, x: Any) -> Any:
        total = total + x
        return total, total

    return irc.scan(add, np.zeros_like(xs[0]), xs)[1]


def rnn(xs: Any, h: Any, w: Any) -> Any:
    def cell(h: Any, x: Any) -> Any:
        h = np.tanh(h @ w + x)
        return h, h

    return irc.scan(cell, h, xs)[0]


def _rows(*shapes: tuple[int, ...]) -> Callable[[], tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(0)
    return lambda: tuple(rng.standard_normal(s).astype(F32) for s in shapes)


ROWS = 64
#: A norm of 0.9 * 2**20: 20 halvings.
HALVINGS = 20
LOOPS = {
    "row update, fori_loop over N rows": Loop(
        row_update,
        (irc.TensorSpec(("N", 16), F32),) * 2 + (irc.TensorSpec((16,), F32),),
        _rows((ROWS, 16), (ROWS, 16), (16,)),
        f"N = {ROWS}",
    ),
    "halve until the norm is below 1, while_loop": Loop(
        halve_until_small,
        (irc.TensorSpec(("N",), F32),),
        lambda: (np.full(4, 0.45 * 2.0**HALVINGS, np.float32),),
        f"{HALVINGS} iterations",
    ),
    "running sums, scan over N rows": Loop(
        running_sums,
        (irc.TensorSpec(("N", 16), F32),),
        _rows((ROWS, 16)),
        f"N = {ROWS}",
    ),
    "RNN cell with a matmul, scan over T rows": Loop(
        rnn,
        (
            irc.TensorSpec(("T", 16), F32),
            irc.TensorSpec((16,), F32),
            irc.TensorSpec((16, 16), F32),
        ),
        _rows((ROWS, 16), (16,), (16, 16)),
        f"T = {ROWS}",
    ),
}


@contextmanager
def counted() -> Iterator[Counter[str]]:
    """Count kernel launches and host reads while the block runs."""
    counts: Counter[str] = Counter()
    run, item = interpreter.InterpretedFunction.run, torch.Tensor.item

    def counted_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        counts["launches"] += 1
        return run(self, *args, **kwargs)

    def counted_item(self: torch.Tensor) -> Any:
        counts["reads"] += 1
        return item(self)

    interpreter.InterpretedFunction.run = counted_run  # type: ignore[method-assign]
    torch.Tensor.item = counted_item  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        interpreter.InterpretedFunction.run = run  # type: ignore[method-assign]
        torch.Tensor.item = item  # type: ignore[method-assign]


def measure(loop: Loop) -> dict[str, int]:
    compiled = irc.compile(loop.function, *loop.specs)
    arguments = loop.arguments()
    compiled(*arguments, backend="interpret")  # compile the kernels first
    with counted() as counts:
        compiled(*arguments, backend="interpret")
    return {
        "launch_sites": compiled.launch_sites,
        "stated": str(compiled.launches),
        "launches": counts["launches"],
        "reads": counts["reads"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures here")
    options = parser.parse_args()
    rows = {name: measure(loop) for name, loop in LOOPS.items()}
    print(
        "| program | size | launch sites | launches per call, stated | counted "
        "| host reads per call |"
    )
    print("|---|---|---:|---|---:|---:|")
    for name, row in rows.items():
        print(
            f"| {name} | {LOOPS[name].size} | {row['launch_sites']} | "
            f"`{row['stated']}` | {row['launches']} | {row['reads']} |"
        )
    if options.json:
        options.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
