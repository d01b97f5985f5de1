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
  should agree with ``irc public``;
- ``device guard``: ``irc launcher`` less the same launcher without its
  device guard (the test that the inputs are on the device Triton launches
  on, ``_irc_launch_device``), i.e. what the guard costs a call whose inputs
  are on the current device: the driver's lookup, its current device, a
  dict lookup and a comparison of torch devices (docs/performance.md).

Tensors are torch CPU tensors standing in for device memory; torch's CPU
allocator is cheaper than its CUDA caching allocator (about 1 us against
2-4 us per ``torch.empty``), so a GPU adds a little per allocation.

    python benchmarks/launch_overhead.py                # the table
    python benchmarks/launch_overhead.py --only softmax mlp --json out.json

Each figure is the best over ``--repeat`` rounds of ``--number`` calls, in
microseconds, the rounds of the four calls of a program interleaved (a
noisy stretch of a shared machine then slows all four alike). The process compiles Triton kernels (for the fake H100),
so it must not have ``TRITON_INTERPRET=1`` set.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
import types
from collections.abc import Callable
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
    """Stands for a ``@triton.jit`` function: a launch
    (``kernel.run(*args, grid=..., warmup=False, **options)``) does nothing."""

    def run(self, *args: Any, grid: Any, warmup: bool, **options: Any) -> None:
        return None


def no_op_module(module: types.ModuleType, source: str) -> types.ModuleType:
    """A second copy of a loaded module (its launchers bound to the copy's
    globals) whose every kernel is a no-op."""
    copy = types.ModuleType(f"{module.__name__}_no_op")
    code = compile(source, module.__file__ or "<irc>", "exec", dont_inherit=True)
    exec(code, copy.__dict__)
    copy.__dict__.update(dict.fromkeys(copy.KERNELS, _NoOpKernel()))
    return copy


#: The emitted device guard (``LauncherEmitter._device_guard``): its test
#: and the two lines under it, which a call on the current device skips.
GUARD_TEST = "    if not _IRC_INTERPRETED and device != _irc_launch_device():\n"


def without_device_guard(source: str) -> str:
    """``source`` with its launchers' device guards removed."""
    lines = source.splitlines(keepends=True)
    kept: list[str] = []
    skip = 0
    for line in lines:
        if skip:
            skip -= 1
        elif line == GUARD_TEST:
            skip = 2
        else:
            kept.append(line)
    return "".join(kept)


def interleaved_best_us(
    calls: dict[str, Callable[[], Any]], number: int, repeat: int
) -> dict[str, float]:
    """Each call's best time in microseconds over ``repeat`` rounds of
    ``number`` calls, the rounds of all calls interleaved: a noisy stretch of
    the machine hits every call alike instead of one figure."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(repeat):
        for name, call in calls.items():
            start = time.perf_counter()
            for _ in range(number):
                call()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return {name: seconds * 1e6 for name, seconds in best.items()}


def measure(name: str, number: int, repeat: int) -> dict[str, Any]:
    program = SUITE[name]
    compiled = program.compile()
    sizes = SIZES[name][BINDING]
    call = program.inputs(np.random.default_rng(0), **sizes)
    args, kwargs = call.to_torch()
    tensors, _ = pytree.flatten((args, kwargs))
    tensors = [t for t in tensors if hasattr(t, "data_ptr")]
    source = compiled.triton_source
    module = triton_backend.load_source(source, interpret=False)
    launcher = getattr(module, module.ENTRY)
    no_ops = no_op_module(module, source)
    unguarded = no_op_module(module, without_device_guard(source))
    if (
        unguarded.__dict__[unguarded.ENTRY].__code__
        == no_ops.__dict__[no_ops.ENTRY].__code__
    ):
        raise SystemExit(f"{name}: no device guard found in the emitted launcher")
    # The same compiled function bound to the no-op module: the public call
    # with every kernel a no-op.
    no_op_compiled = copy.copy(compiled)
    input_names = compiled.compilation.input_names
    no_op_compiled._calls = {
        "triton": compiled._caller.triton_call(
            triton_backend.Launcher(no_ops, input_names, interpret=False)
        )
    }
    compiled(*args, backend="triton", **kwargs)  # compiles the kernels
    timed = interleaved_best_us(
        {
            "launcher": lambda: launcher(*tensors),
            "public": lambda: compiled(*args, backend="triton", **kwargs),
            "irc_launcher": lambda: getattr(no_ops, no_ops.ENTRY)(*tensors),
            "irc_public": lambda: no_op_compiled(*args, backend="triton", **kwargs),
            "unguarded": lambda: getattr(unguarded, unguarded.ENTRY)(*tensors),
        },
        number,
        repeat,
    )
    kernels = compiled.num_kernels
    dispatch_us = (timed["launcher"] - timed["irc_launcher"]) / kernels
    return {
        "program": name,
        "sizes": sizes,
        "kernels": kernels,
        "arguments": len(tensors),
        "irc_launcher_us": timed["irc_launcher"],
        "dispatch_per_launch_us": dispatch_us,
        "irc_public_us": timed["irc_public"],
        "public_us": timed["public"],
        "public_minus_dispatch_us": timed["public"] - kernels * dispatch_us,
        "device_guard_us": timed["irc_launcher"] - timed["unguarded"],
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
    ("device_guard_us", "device guard", "{:.2f}"),
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
    parser.add_argument("--number", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=50)
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
