"""Control-flow programs called on the ``triton`` backend through Triton's
real JIT launch path, under ``irc.testing.fake_driver`` (no GPU needed).

The RNN scan of ``control_flow_programs`` is a host loop over ``T`` (its
body a matmul, so it does not fit one kernel): each call binds, specialises
and compiles its kernels for an H100, then launches them ``T`` times from the
launcher's Python ``for``, on compiled-kernel arguments (pointers into the
workspace, row views of ``xs`` and of the stacked states, the carries'
ping-pong buffers). Its row update is a device loop: one launch of one
kernel whose ``for`` over the rows Triton compiles, and so are the halving
of a vector until its norm is below 1 and Newton's square root over at most
4096 elements (a ``while`` inside one program, which decides on the
device); a cond of pointwise branches is one kernel that reads the
predicate another kernel wrote. The fake driver records
the launches instead of running them, so the results hold no values, but
their shapes and dtypes are the launcher's. No program has a
data-dependent decision: a decision would read a predicate no kernel ran to
compute (the halving's is the kernel's own).

A script, as ``fake_gpu_suite.py`` is, since the test process interprets
kernels (``test_control_flow_lowering.py`` runs it in a subprocess).
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import torch
from control_flow_programs import PROGRAMS, sizes_of_call
from fake_gpu_suite import _launch_records, _outputs

from irc.runtime import triton_backend
from irc.testing.fake_driver import FakeCudaDriver, compiled_kernels, fake_cuda

LENGTHS = (1, 4)


#: The programs run on the launch path.
NAMES = (
    "rnn",
    "row_update",
    "halve_to_unit_norm",
    "newton_sqrt_bounded",
    "halve_or_shift",
)


def launch(name: str, gpu: FakeCudaDriver) -> dict[str, Any]:
    program = PROGRAMS[name]
    compiled = program.compile()
    module = triton_backend.load_source(compiled.triton_source, interpret=False)
    calls = []
    for length in LENGTHS:
        args = program.inputs(np.random.default_rng(length), length)
        start = len(gpu.launches)
        result = compiled(*(torch.from_numpy(a) for a in args), backend="triton")
        binaries = {
            digest: binary
            for kernel, _, _ in module.KERNELS.values()
            for digest, binary in compiled_kernels(kernel).items()
        }
        calls.append(
            {
                "length": length,
                "numpy": _outputs(program.reference(*args)),
                "outputs": _outputs(result),
                "launches": _launch_records(gpu, start, binaries),
                "expected": compiled.launches.evaluate(**sizes_of_call(compiled, args)),
            }
        )
    return {
        "per_call": str(compiled.launches),
        "sites": compiled.launch_sites,
        "calls": calls,
    }


def launch_control_flow() -> dict[str, Any]:
    report: dict[str, Any] = {}
    with fake_cuda() as gpu:
        for name in NAMES:
            try:
                report[name] = launch(name, gpu)
            except Exception:
                report[name] = {"error": traceback.format_exc()}
    return report


if __name__ == "__main__":
    # python tests/fake_gpu_control_flow.py REPORT.json
    Path(sys.argv[1]).write_text(json.dumps(launch_control_flow()))
