"""Kernels of a stack of GPT-2 blocks, with and without ``dedupe-kernels``.

For stacks of 1, 4 and 12 GPT-2 blocks (``tests/programs.py``'s block,
the residual stream in float32 between layers, the sequence length
symbolic), compiled with irc's default pipeline ("after") and with it less
``dedupe-kernels`` ("before"), it reports:

- the ``@triton.jit`` functions the emitted module holds, and the launches
  per call;
- irc's compile time (``irc.compile``, capture to emitted source);
- the first call's Triton compile time for an H100 (sm_90): the call runs
  Triton's real launch path under ``irc.testing.fake_driver`` (no GPU), which
  compiles every kernel function it launches, once, to a cubin with Triton's
  compiler and ptxas, with an empty Triton cache (a fresh
  ``TRITON_CACHE_DIR``) each time.

Each measurement runs in a process of its own (Triton's in-memory caches and
irc's module cache would otherwise serve a second stack the first's
binaries), with irc's on-disk compile cache off.

    python benchmarks/layer_stack.py               # the table
    python benchmarks/layer_stack.py --layers 1 4  # fewer stacks
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import programs

from irc.api import DEFAULT_PIPELINE
from irc.dialects import triton

#: irc.compile's default pipeline without the deduplication.
BEFORE = ",".join(p for p in DEFAULT_PIPELINE.split(",") if p != "dedupe-kernels")
SEQ = 128


def measure(layers: int, pipeline: str) -> dict[str, Any]:
    import torch

    from irc.testing.fake_driver import fake_cuda

    start = time.perf_counter()
    compiled = programs.compile_stack(layers, pipeline)
    source = compiled.triton_source  # emitted
    irc_seconds = time.perf_counter() - start
    module = compiled.compilation.module("triton")
    functions = sum(isinstance(op, triton.KernelOp) for op in module.ops)
    rng = np.random.default_rng(0)
    weights = [programs.weights(rng) for _ in range(layers)]
    tensors = [_to_torch(w) for w in weights]
    x = torch.from_numpy(rng.standard_normal((SEQ, programs.N_EMBD)).astype(np.float32))
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TRITON_CACHE_DIR"] = cache
        with fake_cuda() as gpu:
            start = time.perf_counter()
            compiled(x, tensors, n_head=programs.N_HEAD, backend="triton")
            first_call = time.perf_counter() - start
        launches = len(gpu.launches)
    return {
        "layers": layers,
        "pipeline": "after" if pipeline == DEFAULT_PIPELINE else "before",
        "functions": functions,
        "launches": launches,
        "irc_compile_s": irc_seconds,
        "first_call_s": first_call,
        "source_lines": source.count("\n"),
    }


def _to_torch(tree: Any) -> Any:
    import torch

    if isinstance(tree, dict):
        return {key: _to_torch(value) for key, value in tree.items()}
    return torch.from_numpy(tree)


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| layers | pipeline | kernel functions | launches per call | irc compile (s) "
        "| first call, Triton for sm_90 (s) |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['layers']} | {row['pipeline']} | {row['functions']} | "
            f"{row['launches']} | {row['irc_compile_s']:.2f} | {row['first_call_s']:.2f} |"
        )
    return "\n".join(lines)


def measure_apart(layers: int, pipeline: str) -> dict[str, Any]:
    """``measure`` in a fresh process, with irc's compile cache off."""
    env = {**os.environ, "IRC_CACHE": "0"}
    env.pop("TRITON_INTERPRET", None)
    which = "after" if pipeline == DEFAULT_PIPELINE else "before"
    result = subprocess.run(
        [sys.executable, __file__, "--one", str(layers), which],
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"{layers} layers, {which}: failed\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, nargs="*", default=[1, 4, 12])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if os.environ.get("TRITON_INTERPRET") == "1":
        parser.error("unset TRITON_INTERPRET: this benchmark compiles kernels")
    if options.one:
        layers, which = options.one
        pipeline = DEFAULT_PIPELINE if which == "after" else BEFORE
        print(json.dumps(measure(int(layers), pipeline)))
        return
    rows = [
        measure_apart(layers, pipeline)
        for layers in options.layers
        for pipeline in (BEFORE, DEFAULT_PIPELINE)
    ]
    print(table(rows))
    if options.json is not None:
        options.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
