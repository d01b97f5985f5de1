"""Scan programs called on the ``triton`` backend through Triton's real JIT
launch path, under ``irc.testing.fake_driver`` (no GPU needed): Triton's
binder specialises the arguments and its compiler builds each kernel for an
H100 (sm_90 PTX, a cubin from the bundled ptxas); the fake driver records
the launches instead of running them.

A script, as ``fake_gpu_suite.py`` is, since the test process interprets
kernels (``test_scan.py`` runs it in a subprocess and checks its report).
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from fake_gpu_suite import _launch_records, _outputs

import irc
from irc.runtime import triton_backend
from irc.testing.fake_driver import FakeCudaDriver, compiled_kernels, fake_cuda

#: name -> (function, dims, dtype): at ``SIZES``, a symbolic row of three
#: blocks (the carry), a static row of one tile, 16-bit and integer scans.
PROGRAMS: dict[str, tuple[Callable[..., Any], tuple[Any, ...], str]] = {
    "cumsum_exp": (lambda x: np.cumsum(np.exp(x), axis=1) * 2, ("N", "D"), "float32"),
    "cumprod_rows": (lambda x: np.cumprod(x, axis=0), ("N", 48), "float16"),
    "cumsum_ints": (lambda x: np.cumsum(x, axis=-1), ("N", "D"), "int32"),
    "cumsum_flat": (lambda x: np.cumsum(np.cumsum(x)), ("N", "D"), "float64"),
}
SIZES = ({"N": 3, "D": 16}, {"N": 2, "D": 2100})


def launch_program(gpu: FakeCudaDriver, name: str) -> dict[str, Any]:
    function, dims, dtype = PROGRAMS[name]
    compiled = irc.compile(function, irc.TensorSpec(dims, dtype))
    module = triton_backend.load_source(compiled.triton_source, interpret=False)
    calls = []
    for sizes in SIZES:
        shape = tuple(sizes[d] if isinstance(d, str) else d for d in dims)
        x = np.ones(shape, dtype=dtype)
        start = len(gpu.launches)
        result = compiled(torch.from_numpy(x), backend="triton")
        binaries = {
            digest: binary
            for kernel, _, _ in module.KERNELS.values()
            for digest, binary in compiled_kernels(kernel).items()
        }
        calls.append(
            {
                "sizes": sizes,
                "numpy": _outputs(function(x)),
                "outputs": _outputs(result),
                "launches": _launch_records(gpu, start, binaries),
            }
        )
    return {"kernels": compiled.num_kernels, "calls": calls}


def launch_scans() -> dict[str, Any]:
    report: dict[str, Any] = {}
    with fake_cuda() as gpu:
        for name in PROGRAMS:
            try:
                report[name] = launch_program(gpu, name)
            except Exception:
                report[name] = {"error": traceback.format_exc()}
    return report


if __name__ == "__main__":
    # python tests/fake_gpu_scans.py REPORT.json
    Path(sys.argv[1]).write_text(json.dumps(launch_scans()))
