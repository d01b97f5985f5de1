"""Launches on two fake GPUs: a script run by ``test_devices_and_processes.py``
in a process that compiles Triton kernels (the test process interprets them).

Under ``fake_cuda(devices=2)`` (``irc.testing.fake_driver``: Triton's real
launch path, no GPU; device 1's memory stands in as ``meta`` tensors), the
emitted launcher of a softmax program is called on each device while the
other is current, and on the current one; the report records, per call, the
device each launch ran on, the outputs' devices, the current device before
and after, and how often the launcher switched devices.

    python tests/fake_gpu_devices.py report.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

import irc
from irc.runtime import triton_backend
from irc.testing.fake_driver import FakeCudaDriver, compiled_kernels, fake_cuda


def program(x: Any, y: Any) -> Any:
    """A softmax plus an addend: a row kernel reading both inputs."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) + y


def call(gpu: FakeCudaDriver, launch: Any, inputs: int, current: int) -> dict[str, Any]:
    """The launcher on tensors of fake device ``inputs`` while ``current`` is
    the driver's current device."""
    device = gpu.torch_device(inputs)
    tensors = [torch.empty(64, 32, device=device) for _ in range(2)]
    gpu.set_current_device(current)
    switches = _count_switches(gpu)
    start = len(gpu.launches)
    outputs = launch(*tensors)
    return {
        "inputs": inputs,
        "current_before": current,
        "current_after": gpu.current,
        "launched_on": [launch.device for launch in gpu.launches[start:]],
        "outputs_on": [str(o.device) for o in outputs],
        "switches": switches["count"],
    }


def _count_switches(gpu: FakeCudaDriver) -> dict[str, int]:
    """Counts the device contexts entered from now on (the launcher's guard)."""
    counter = {"count": 0}
    interface = gpu.get_device_interface()
    entered = type(interface).device

    def counted(self: Any, device: Any) -> Any:
        counter["count"] += 1
        return entered(self, device)

    interface.device = counted.__get__(interface)  # type: ignore[method-assign]
    return counter


def main(out: Path) -> None:
    spec = irc.TensorSpec(("N", "D"), "float32")
    source = irc.compile(program, spec, spec).triton_source
    report: dict[str, Any] = {"calls": []}
    with fake_cuda(devices=2) as gpu:
        module = triton_backend.load_source(source, interpret=False)
        launch = getattr(module, module.ENTRY)
        for inputs, current in ((1, 0), (0, 1), (0, 0), (1, 1), (1, 0)):
            report["calls"].append(call(gpu, launch, inputs, current))
        report["binaries"] = {
            str(device): sum(
                len(compiled_kernels(kernel, device))
                for kernel, _, _ in module.KERNELS.values()
            )
            for device in (0, 1)
        }
        gpu.set_current_device(0)
        mixed = [torch.empty(64, 32), torch.empty(64, 32, device="meta")]
        try:
            launch(*mixed)
            report["mixed"] = "launched"
        except module.LaunchError as error:
            report["mixed"] = str(error)
        report["kernels"] = len(module.KERNELS)
    out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
