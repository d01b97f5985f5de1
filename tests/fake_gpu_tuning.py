"""Every configuration a measurement tries, launched on Triton's real path and
compiled for an H100 (``irc.testing.fake_driver``, no GPU needed).

Under ``IRC_TUNE=measure`` a call in an undecided bucket launches the next
candidate configuration (tile sizes, warps, stages): here each program is
called until its tuner has decided, one launch per candidate, so that every
candidate goes through Triton's binder and compiler for sm_90, as on a GPU.
The report lists, per program, the candidates the tuner listed and, per
launch, the constexprs, warps and stages Triton compiled and whether its
binary is an sm_90 cubin. A script run in a subprocess (Triton compiles
here; the test process interprets): ``test_tuning.py`` reads its report.

    python tests/fake_gpu_tuning.py REPORT.json
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any

import numpy as np
import torch
from suite_programs import SUITE

import irc
from irc.runtime import triton_backend
from irc.testing.fake_driver import compiled_kernels, fake_cuda

ELF_MAGIC = b"\x7fELF"


def _matmul() -> tuple[irc.Compiled, list[Any]]:
    compiled = irc.compile(
        lambda a, b: np.tanh(a @ b),
        irc.TensorSpec(("M", "K"), "float32"),
        irc.TensorSpec(("K", "N"), "float32"),
    )
    return compiled, [torch.ones(17, 33), torch.ones(33, 16)]


def _row_program(name: str, length: int) -> tuple[irc.Compiled, list[Any]]:
    program = SUITE[name]
    call = program.inputs(np.random.default_rng(0), N=3, D=length)
    args, _ = call.to_torch()
    return program.compile(), list(args)


def measure(name: str, compiled: irc.Compiled, args: list[Any]) -> dict[str, Any]:
    module = triton_backend.load_source(compiled.triton_source, interpret=False)
    tuner = module._IRC_TUNER
    tuner.RUNS = 0  # one launch per candidate: each compiled once
    with fake_cuda() as gpu:
        calls = 0
        while not tuner.chosen or tuner.trials:
            compiled(*args, backend="triton")
            calls += 1
            assert calls < 100, f"{name}: the measurement never decided"
    binaries = {
        digest: binary
        for function, _, _ in module.KERNELS.values()
        for digest, binary in compiled_kernels(function).items()
    }
    launches = []
    for launch in gpu.launches:
        binary = binaries[launch.metadata.hash]
        cubin = binary.asm.get("cubin", b"")
        launches.append(
            {
                "kernel": launch.kernel,
                "constexprs": {
                    k: v for k, v in launch.args.items() if k.startswith("c_")
                },
                "num_warps": launch.metadata.num_warps,
                "num_stages": launch.metadata.num_stages,
                "sm_90_cubin": ".target sm_90" in binary.asm.get("ptx", "")
                and cubin[:4] == ELF_MAGIC,
            }
        )
    return {
        "candidates": {
            str(key): [list(c) for c in tuner.candidates(key)] for key in tuner.chosen
        },
        "specs": {k: list(v[5]) for k, v in module._IRC_TUNING.items()},
        "launches": launches,
        "calls": calls,
    }


def main(out: str) -> None:
    os.environ["IRC_TUNE"] = "measure"
    os.environ["IRC_CACHE_DIR"] = tempfile.mkdtemp(prefix="irc-tuning-")
    report = {
        "matmul": measure("matmul", *_matmul()),
        "layer_norm": measure("layer_norm", *_row_program("layer_norm", 129)),
        "softmax": measure("softmax", *_row_program("softmax", 8193)),
    }
    with open(out, "w") as file:
        json.dump(report, file)


if __name__ == "__main__":
    main(sys.argv[1])
