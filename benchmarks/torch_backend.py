"""The torch backend against TorchInductor on the Hugging Face models of
``irc.testing.models``: one training step (forward, backward, SGD) per model.

For each model and backend, in a fresh process (caches off):

- ``compile_s``: the first step's seconds less a later step's, that is
  Dynamo, AOTAutograd and the backend's compilation of the forward and the
  backward;
- ``kernels``: the kernels one step launches: irc's ``num_kernels`` of the
  forward and backward it compiled, Inductor's generated kernels (C++ on a
  CPU, Triton on a GPU);
- ``graph_breaks``: Dynamo's graph breaks;
- ``fallback_ops``: for irc, the ATen ops that ran eagerly;
- ``compilations``: irc's compilations over two steps at different sizes
  (one per graph: the second size reuses them).

irc runs its kernels on its reference interpreter here (``runtime``), so
its step time is not a kernel speed: see ``gpu.py`` for speed on a GPU.

    python benchmarks/torch_backend.py                 # every model, both backends
    python benchmarks/torch_backend.py --only gpt2 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

BACKENDS = ("irc", "inductor")


def measure(name: str, backend: str) -> dict[str, Any]:
    """In this (fresh) process: one model's numbers for one backend."""
    import torch

    import irc.torch
    from irc.testing.models import SIZES, build, loss, tokens

    model = build(name, head=True).train()
    if backend == "irc":
        compiled = torch.compile(
            model, backend="irc", dynamic=True, options={"runtime": "reference"}
        )
    else:
        compiled = torch.compile(model, dynamic=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(batch: int, sequence: int) -> float:
        begin = time.perf_counter()
        loss(compiled, tokens(batch, sequence)).backward()
        optimizer.step()
        optimizer.zero_grad()
        return time.perf_counter() - begin

    first = step(*SIZES[0])
    step(*SIZES[1])
    steady = min(step(*SIZES[0]) for _ in range(3))
    graph_breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
    if backend == "irc":
        kernels = irc.torch.counters["kernels"]
        extra = {
            "fallback_ops": sum(irc.torch.fallback_ops.values()),
            "compilations": irc.torch.counters["compilations"],
        }
    else:
        from torch._inductor import metrics

        kernels, extra = metrics.generated_kernel_count, {}
    return {
        "model": name,
        "backend": backend,
        "compile_s": round(first - steady, 2),
        "step_s": round(steady, 3),
        "kernels": kernels,
        "graph_breaks": graph_breaks,
        **extra,
    }


def run_child(name: str, backend: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as cache:
        env = {
            **os.environ,
            "TORCHINDUCTOR_CACHE_DIR": cache,
            "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
            "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
            "IRC_CACHE": "0",
        }
        done = subprocess.run(
            [sys.executable, __file__, "--child", name, backend],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        return {"model": name, "backend": backend, "error": done.stderr[-400:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    from irc.testing.models import MODELS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(MODELS))
    parser.add_argument("--json", help="write the rows to this file")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(*args.child)))
        return
    rows = [run_child(name, b) for name in args.only or MODELS for b in BACKENDS]
    columns = ("model", "backend", "compile_s", "step_s", "kernels", "graph_breaks")
    print(" | ".join((*columns, "fallback_ops", "compilations")))
    for row in rows:
        if "error" in row:
            print(f"{row['model']} | {row['backend']} | error: {row['error']}")
            continue
        cells = [str(row.get(c, "")) for c in columns]
        cells += [str(row.get("fallback_ops", "-")), str(row.get("compilations", "-"))]
        print(" | ".join(cells))
    if args.json:
        with open(args.json, "w") as file:
            json.dump(rows, file, indent=1)


if __name__ == "__main__":
    main()
