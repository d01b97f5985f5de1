"""Host-side cost of a call on the ``triton`` backend, without a GPU.

Under ``irc.testing.fake_driver`` a launch runs Triton's real Python path
(binder, specialisation, cache lookup, global checks, launcher) but no
kernel, so what is timed is exactly the Python a GPU call spends before and
around its kernels. Per suite program (``tests/suite_programs.py``), at one
binding of its symbols:

- ``irc launcher``: the emitted launcher with every kernel replaced by a
  no-op, i.e. irc's own binding, checks, allocations and grids;
- ``dispatch/launch``: Triton's dispatch of one launch (``JITFunction.run``:
  binder, cache key and lookup, global checks, the launcher object; the
  fake driver records nothing here), from the launcher with real kernels
  minus the no-op launcher, divided by the launches;
- ``irc public``: ``compiled(*tensors, backend="triton")`` with no-op
  kernels: irc's own Python per public call (pytree, conversions, launcher);
- ``public``: the same call with real kernels, everything a call costs on
  the host;
- ``public - dispatch``: ``public`` less the launches' dispatch, which
  should agree with ``irc public``.

Tensors are torch CPU tensors standing in for device memory; torch's CPU
allocator is cheaper than its CUDA caching allocator (about 1 us against
2-4 us per ``torch.empty``), so a GPU adds a little per allocation.

    python benchmarks/launch_overhead.py                # the table
    python benchmarks/launch_overhead.py --only softmax mlp --json out.json

Each figure is the minimum over ``--repeat`` rounds of ``--number`` calls,
in microseconds. The process compiles Triton kernels (for the fake H100),
so it must not have ``TRITON_INTERPRET=1`` set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import timeit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from suite_programs import SIZES, SUITE  # noqa: E402

from irc import pytree  # noqa: E402
from irc.runtime import triton_backend  # noqa: E402
from irc.testing.fake_driver import fake_cuda  # noqa: E402

#: The binding timed per program: the one whose sizes are multiples of 16
#: (the specialisation a GPU launch of real sizes gets).
BINDING = 2


class _NoOpKernel:
    """Stands for a ``@triton.jit`` function: ``kernel[grid](*args)`` does
    nothing."""

    def __getitem__(self, grid: Any) -> _NoOpKernel:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        return None


@contextmanager
def no_op_kernels(module: Any) -> Iterator[None]:
    """Every kernel of a loaded module replaced by a no-op for the block."""
    saved = {name: module.__dict__[name] for name in module.KERNELS}
    module.__dict__.update(dict.fromkeys(saved, _NoOpKernel()))
    try:
        yield
    finally:
        module.__dict__.update(saved)


def best_us(call: Callable[[], Any], number: int, repeat: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6


def measure(name: str, number: int, repeat: int) -> dict[str, Any]:
    program = SUITE[name]
    compiled = program.compile()
    sizes = SIZES[name][BINDING]
    call = program.inputs(np.random.default_rng(0), **sizes)
    args, kwargs = call.to_torch()
    tensors, _ = pytree.flatten((args, kwargs))
    tensors = [t for t in tensors if hasattr(t, "data_ptr")]
    module = triton_backend.load_source(compiled.triton_source, interpret=False)
    launcher = getattr(module, module.ENTRY)

    def public() -> Any:
        return compiled(*args, backend="triton", **kwargs)

    public()  # compiles the kernels and binds the backend
    kernels = compiled.num_kernels
    launcher_us = best_us(lambda: launcher(*tensors), number, repeat)
    public_us = best_us(public, number, repeat)
    with no_op_kernels(module):
        irc_launcher_us = best_us(lambda: launcher(*tensors), number, repeat)
        irc_public_us = best_us(public, number, repeat)
    dispatch_us = (launcher_us - irc_launcher_us) / kernels
    return {
        "program": name,
        "sizes": sizes,
        "kernels": kernels,
        "arguments": len(tensors),
        "irc_launcher_us": irc_launcher_us,
        "dispatch_per_launch_us": dispatch_us,
        "irc_public_us": irc_public_us,
        "public_us": public_us,
        "public_minus_dispatch_us": public_us - kernels * dispatch_us,
    }


COLUMNS = [
    ("program", "program", "{}"),
    ("kernels", "kernels", "{}"),
    ("arguments", "args", "{}"),
    ("irc_launcher_us", "irc launcher", "{:.1f}"),
    ("dispatch_per_launch_us", "dispatch/launch", "{:.1f}"),
    ("irc_public_us", "irc public", "{:.1f}"),
    ("public_us", "public", "{:.1f}"),
    ("public_minus_dispatch_us", "public - dispatch", "{:.1f}"),
]


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| " + " | ".join(title for _, title, _ in COLUMNS) + " |",
        "|" + "|".join("---" for _ in COLUMNS) + "|",
    ]
    for row in rows:
        cells = [form.format(row[key]) for key, _, form in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=sorted(SUITE))
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    if os.environ.get("TRITON_INTERPRET") == "1":
        parser.error("unset TRITON_INTERPRET: this benchmark compiles kernels")
    with fake_cuda(record=False):
        rows = [measure(name, options.number, options.repeat) for name in options.only]
    print(table(rows))
    if options.json is not None:
        options.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
