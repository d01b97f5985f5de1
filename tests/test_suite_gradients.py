"""The gradients of every suite program (tests/suite_programs.py), the GPT-2
block included, against central finite differences: each program captured
in float64 and differentiated with respect to all its float arguments by
``irc.testing.check_grad``; and each joint function lowered to Triton and
run on Triton's interpreter."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from suite_programs import SUITE

import irc
from irc import pytree
from irc.api import DEFAULT_PIPELINE
from irc.ir import parse_module
from irc.testing import check_grad, compare_outputs, run_module


def in_float64(leaf: Any) -> Any:
    if isinstance(leaf, irc.TensorSpec) and leaf.dtype.kind == "f":
        return irc.TensorSpec(leaf.shape, "float64")
    return leaf


@pytest.mark.parametrize("name", sorted(SUITE))
def test_suite_program_gradients(name: str) -> None:
    call = SUITE[name].specs()
    args, kwargs = pytree.map_leaves(in_float64, (list(call.args), dict(call.kwargs)))
    module = irc.trace(SUITE[name].function, *args, **kwargs)
    check_grad([module], max_examples=4 if name == "gpt2_block" else 15)


@pytest.mark.parametrize("name", sorted(SUITE))
def test_suite_joint_functions_run_on_the_triton_interpreter(name: str) -> None:
    """The joint function of each suite program, compiled by the default
    pipeline after ``autodiff``, computes on Triton's interpreter what the
    reference interpreter computes."""
    program = SUITE[name]
    call = program.specs()
    compiled = irc.compile(
        program.function,
        *call.args,
        pipeline=f"autodiff,{DEFAULT_PIPELINE}",
        **call.kwargs,
    )
    concrete = program.inputs(np.random.default_rng(0))
    leaves, _ = pytree.flatten((list(concrete.args), dict(concrete.kwargs)))
    arrays = [leaf for leaf in leaves if isinstance(leaf, np.ndarray)]
    generator = np.random.default_rng(1)
    cotangents = [
        generator.standard_normal(result.shape).astype(result.dtype)
        for result in run_module(
            irc.trace(program.function, *call.args, **call.kwargs), arrays
        )
        if result.dtype.kind == "f"
    ]
    expected = run_module(compiled.module, arrays + cotangents)
    actual = run_module(parse_module(compiled.ir("triton")), arrays + cotangents)
    assert compare_outputs(expected, actual, rtol=1e-4, atol=1e-4) is None
