"""``irc.testing.check_grad``: the autodiff pass against central finite
differences over generated float64 programs, and a planted wrong VJP rule
that it must catch with a shrunk counter-example.

The property check runs at least ``EXAMPLES`` programs (more when the
Hypothesis profile asks for more: ``IRC_HYPOTHESIS_PROFILE=extended``).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from xdsl.dialects.builtin import ModuleOp

import irc
from irc import testing
from irc.dialects import graph as g
from irc.errors import IrcError
from irc.interpreters.graph import find_function
from irc.ir import parse_module
from irc.passes.autodiff import VJP_RULES, vjp_rule
from irc.primitives import primitives
from irc.primitives.gradients import identity
from irc.testing import (
    PassCheckError,
    check_grad,
    differentiable_programs,
    grad_inputs,
)

EXAMPLES = max(200, settings.default.max_examples)


def test_generated_programs_have_the_gradients_of_finite_differences() -> None:
    check_grad(max_examples=EXAMPLES)


def test_generated_programs_cover_every_differentiable_op() -> None:
    seen: Counter[str] = Counter()

    # 1,500 programs: with 25 unary kinds, fewer may miss one.
    @settings(max_examples=1500, deadline=None, database=None, derandomize=True)
    @given(differentiable_programs())
    def collect(module: ModuleOp) -> None:
        seen.update(op.name for op in find_function(module).body.block.ops)

    collect()
    # Smooth programs leave out the roundings (they jump where floats cross
    # integers) and arctan2 (it jumps across its branch cut): their rules
    # are checked on functions of their own below.
    jumping = {"graph.floor", "graph.ceil", "graph.trunc", "graph.rint", "graph.atan2"}
    ops = [*VJP_RULES, *(g.elementwise_op(kind) for kind in primitives())]
    differentiable = {op.name for op in ops if vjp_rule(op)} - jumping
    assert differentiable - set(seen) == set(), seen


F64 = "float64"


def _positive(x):
    return np.abs(x) + 0.5


@pytest.mark.parametrize(
    ("name", "function", "specs"),
    [
        ("arctan2 off its cut", lambda y, x: np.arctan2(y, _positive(x)), 2),
        ("roundings are flat", lambda x: np.ceil(x) + np.trunc(x) + np.rint(x) + x, 1),
        ("cumsum along rows", lambda x: np.cumsum(x * x, axis=1), 1),
        ("cumsum along columns", lambda x: np.cumsum(np.sin(x), axis=0), 1),
        ("cumprod of positives", lambda x: np.cumprod(_positive(x), axis=-1), 1),
        (
            "log1p expm1 log2 log10",
            lambda x: (
                np.log1p(x * x)
                + np.expm1(x)
                + np.log2(_positive(x)) * np.log10(_positive(x))
            ),
            1,
        ),
        ("sinh cosh arctan", lambda x: np.sinh(x) * np.cosh(x) + np.arctan(x), 1),
        (
            "arcsin arccos inside (-1, 1)",
            lambda x: np.arcsin(np.tanh(x) * 0.9) + np.arccos(np.tanh(x) * 0.5),
            1,
        ),
    ],
)
def test_rules_of_ops_smooth_programs_leave_out(name, function, specs) -> None:
    spec = irc.TensorSpec(("N", 3), F64)
    testing.check_grad(function, *([spec] * specs), max_examples=25)


def _write_rows(x, v):
    out = x.copy()
    out[1:3] = v * 2
    out[:, 0] += v[0, 0]
    return out


def test_the_rules_of_writes_into_arrays() -> None:
    """``insert_slice``: the written window's cotangent goes to the value
    written, the rest to the array written into."""
    testing.check_grad(
        _write_rows,
        irc.TensorSpec(("N", 3), F64),
        irc.TensorSpec((2, 3), F64),
        facts=["N >= 3"],
        max_examples=25,
    )


@pytest.fixture(scope="module")
def planted_failure() -> PassCheckError:
    """``sub``'s rule with the sign of its second operand's cotangent lost."""
    wrong = dataclasses.replace(g.SubOp.KIND, gradient=(identity, identity))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(g.SubOp, "KIND", wrong)
        with pytest.raises(PassCheckError) as caught:
            check_grad(max_examples=EXAMPLES)
    return caught.value


def test_a_wrong_rule_is_caught(planted_failure: PassCheckError) -> None:
    report = str(planted_failure)
    assert re.match(
        r"the gradient of argument \d+ differs from central finite differences\n"
        r"along a random unit direction: autodiff gives \S+, finite differences",
        report,
    )
    assert "the joint function (autodiff):" in report


def test_the_counter_example_is_shrunk(planted_failure: PassCheckError) -> None:
    body = [
        op.name for op in find_function(parse_module(planted_failure.program)).walk()
    ]
    assert body.count("graph.sub") == 1, planted_failure.program
    assert len(body) <= 4, planted_failure.program  # func, sub, maybe one more, return


def test_the_counter_example_reproduces(planted_failure: PassCheckError) -> None:
    program = parse_module(planted_failure.program)
    report = str(planted_failure)
    binding = ast.literal_eval(re.search(r"binding: (\{.*\})", report).group(1))
    seed = int(re.search(r"inputs: seed (\d+)", report).group(1))
    arrays, cotangents = grad_inputs(program, binding, seed)
    assert [a.shape for a in arrays] == [
        tuple(d.evaluate(binding) for d in t.dims)
        for t in find_function(program).function_type.inputs.data
    ]
    assert any(c is not None for c in cotangents)


def test_a_function_with_specs() -> None:
    def loss(x: Any, w: Any) -> Any:
        return np.tanh(x @ w).sum(axis=0)

    check_grad(
        loss,
        irc.TensorSpec(("N", 3), "float64"),
        irc.TensorSpec((3, "M"), "float64"),
        max_examples=10,
    )


def test_programs_must_be_float64() -> None:
    with pytest.raises(IrcError, match="in float64, but argument 0 is"):
        check_grad(lambda x: x * 2, irc.TensorSpec(("N",), "float32"), max_examples=1)
