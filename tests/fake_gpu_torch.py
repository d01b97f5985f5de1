"""``torch.compile(model, backend="irc", options={"runtime": "triton"})``
through Triton's real JIT launch path, under ``irc.testing.fake_driver``
(no GPU needed): what CUDA tensors take on a GPU.

A model named on the command line trains one step at each of two batch
sizes: every kernel of its forward and backward graphs is specialised,
compiled for an H100 with Triton's compiler and ptxas, and launched through
the fake driver, which records the launch instead of running it. Results
hold no values, but their shapes, dtypes and strides are the launcher's.
Triton must compile kernels in this process, so it is a script run in a
subprocess (``run_compiling``); it prints a JSON report that
``tests/test_torch_backend.py`` checks.

    python tests/fake_gpu_torch.py mlp
"""

from __future__ import annotations

import json
import sys
from typing import Any

import torch

import irc.torch
from irc.testing.fake_driver import fake_cuda
from irc.testing.models import MODELS, build, loss, tokens

BATCHES = (3, 7)


def mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(8, 16),
        torch.nn.GELU(),
        torch.nn.LayerNorm(16),
        torch.nn.Linear(16, 4),
        torch.nn.LogSoftmax(-1),
    )


def layout(tensor: torch.Tensor) -> dict[str, Any]:
    return {
        "shape": list(tensor.shape),
        "stride": list(tensor.stride()),
        "dtype": str(tensor.dtype),
    }


def train_step(name: str, model: torch.nn.Module, compiled: Any, batch: int) -> Any:
    """One training step; the (forward) result whose layout is compared."""
    if name == "mlp":
        result = compiled(torch.randn(batch, 8))
        result.sum().backward()
        return result
    value = loss(compiled, tokens(batch, 5))
    value.backward()
    return value


def report(name: str) -> dict[str, Any]:
    model = mlp() if name == "mlp" else build(name, head=True).train()
    compiled = torch.compile(
        model, backend="irc", dynamic=True, options={"runtime": "triton"}
    )
    steps = []
    with fake_cuda() as gpu:
        for batch in BATCHES:
            before = len(gpu.launches)
            result = train_step(name, model, compiled, batch)
            eager = train_step(name, model, model, batch)
            gradients = [p.grad is not None for p in model.parameters()]
            model.zero_grad(set_to_none=True)
            steps.append(
                {
                    "launches": len(gpu.launches) - before,
                    "result": layout(result),
                    "eager": layout(eager),
                    "gradients": all(gradients),
                }
            )
    return {
        "steps": steps,
        "kernels": irc.torch.counters["kernels"],
        "compilations": irc.torch.counters["compilations"],
        "fallback_ops": sum(irc.torch.fallback_ops.values()),
    }


if __name__ == "__main__":
    (name,) = sys.argv[1:]
    if name != "mlp" and name not in MODELS:
        sys.exit(f"unknown model {name!r}: mlp or one of {', '.join(MODELS)}")
    print(json.dumps(report(name)))
