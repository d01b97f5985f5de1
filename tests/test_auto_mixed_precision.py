"""``auto-mixed-precision``: the pass keeps the exact meaning of generated
programs (``check_pass`` within the rounding error of the program before and
after it), a planted miscompile is still caught at that tolerance, the
tolerance follows the low type's epsilon and the reduction length, the
policy table decides where each op computes, ``irc.compile`` and
``irc.jit`` take the option, the suite programs agree with NumPy on the
reference and Triton-interpreter backends, and an MLP trains in float16
with dynamic loss scaling (``irc.training``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import ml_dtypes
import numpy as np
import pytest
from hypothesis import settings
from suite_programs import SIZES, SUITE
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

import irc
from irc import pytree, testing, training
from irc.dialects import graph as g
from irc.errors import IrcError
from irc.interpreters.graph import find_function
from irc.ir import parse_module, print_module
from irc.passes.auto_mixed_precision import (
    LOW_TYPES,
    POLICY_ATTRIBUTE,
    AutoMixedPrecisionPass,
)
from irc.testing import PassCheckError
from irc.testing.semantics import compare_outputs, precision_slack

EXAMPLES = max(200, settings.default.max_examples)
LOW = ("bf16", "f16")

#: Generated programs rich in float32 matmuls (listed twice: drawn twice as
#: often, as the pass leaves a program without one as it is); smooth, as a
#: comparison (or floor, argmax) of a rounded value flips near a tie, which
#: no tolerance on floats covers.
AMP_ACTIONS = (
    "matmul",
    "matmul",
    "binary",
    "unary",
    "reduce",
    "broadcast",
    "transpose",
    "reshape",
    "select",
    "cast",
    "constant",
    "slice",
    "concat",
    "take",
    "scan",
)


def amp_programs() -> Any:
    return testing.programs(
        smooth=True, dtypes=("float32", "int32", "bfloat16"), actions=AMP_ACTIONS
    )


def run_pass(text: str, dtype: str = "bf16") -> ModuleOp:
    module = parse_module(text)
    AutoMixedPrecisionPass(dtype=dtype).apply(Context(), module)
    return module


def element_types(module: ModuleOp, op_type: type) -> list[str]:
    """The result element types of the ops of ``op_type`` in ``@main``."""
    body = find_function(module).body.block
    return [
        str(g.tensor_type(op.results[0]).element_type)
        for op in body.ops
        if isinstance(op, op_type)
    ]


LINEAR = """\
func.func @main(%x: !graph.tensor<[N, K], f32>, %w: !graph.tensor<[K, 4], f32>) -> !graph.tensor<[N, 4], f32> {
  %y = graph.matmul %x, %w : (!graph.tensor<[N, K], f32>, !graph.tensor<[K, 4], f32>) -> !graph.tensor<[N, 4], f32>
  func.return %y : !graph.tensor<[N, 4], f32>
}
"""

EPILOGUE = """\
func.func @main(%x: !graph.tensor<[N, 8], f32>, %w: !graph.tensor<[8, 8], f32>, %b: !graph.tensor<[N, 8], f32>) -> !graph.tensor<[N, 8], f32> {
  %h = graph.matmul %x, %w : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[N, 8], f32>
  %a = graph.sub %h, %b : !graph.tensor<[N, 8], f32>
  %t = graph.tanh %a : !graph.tensor<[N, 8], f32>
  %z = graph.matmul %t, %w : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[N, 8], f32>
  func.return %z : !graph.tensor<[N, 8], f32>
}
"""


# check_pass at the precision-aware tolerance ---------------------------------


@pytest.mark.parametrize("dtype", LOW)
def test_check_pass_on_generated_programs(dtype: str) -> None:
    report = testing.check_pass(
        f"auto-mixed-precision{{dtype={dtype}}}",
        amp_programs(),
        max_examples=EXAMPLES,
    )
    assert sum(report.changed_by.values()) >= EXAMPLES // 10, report


@dataclass(frozen=True)
class SwappedEpilogue(ModulePass):
    """A wrong mixed-precision pass: the pass, then the operands of every
    16-bit ``graph.sub`` swapped."""

    name = "swapped-epilogue"
    changes_precision: ClassVar[bool] = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        AutoMixedPrecisionPass().apply(ctx, op)
        for inner in list(op.walk()):
            if isinstance(inner, g.SubOp) and "bf16" in str(inner.result.type):
                inner.operands = [inner.rhs, inner.lhs]


def test_a_miscompile_is_caught_at_the_precision_aware_tolerance() -> None:
    with pytest.raises(PassCheckError, match="changed the results") as caught:
        testing.check_pass(SwappedEpilogue(), [EPILOGUE], max_examples=20)
    assert "the program's rounding error included" in str(caught.value)


def slack_and_error(dtype: str, k: int) -> tuple[float, float]:
    """For ``LINEAR`` at ``K = k``: the precision slack, and how far the
    mixed-precision results are from the float32 ones."""
    before = parse_module(LINEAR)
    after = run_pass(LINEAR, dtype)
    rng = np.random.default_rng(k)
    arrays = [
        rng.standard_normal(shape).astype(np.float32) for shape in [(8, k), (k, 4)]
    ]
    expected, actual = (
        testing.run_module(before, arrays),
        testing.run_module(after, arrays),
    )
    slack = precision_slack(before, after, [arrays], [expected], [actual])
    assert slack is not None
    error = float(np.abs(expected[0].astype(np.float64) - actual[0]).max())
    return slack[0], error


def test_the_tolerance_follows_the_epsilon_and_the_reduction_length() -> None:
    bf16_short, bf16_error = slack_and_error("bf16", 4)
    bf16_long, _ = slack_and_error("bf16", 512)
    f16_short, _ = slack_and_error("f16", 4)
    # bf16 keeps 8 bits, f16 11: about 8 times less rounding.
    assert f16_short * 3 < bf16_short
    # Rounding errors add up over the contraction: a longer K allows more.
    assert bf16_short * 3 < bf16_long
    # The slack covers the mixed-precision error, which float32's
    # tolerance alone does not.
    assert bf16_error <= bf16_short
    assert bf16_error > testing.DEFAULT_TOLERANCES["float32"].atol * 10


def test_the_slack_of_an_unchanged_program_is_float32_rounding() -> None:
    module = parse_module(LINEAR)
    arrays = testing.inputs(module, {"N": 8, "K": 64}, 0)
    outputs = testing.run_module(module, arrays)
    (slack,) = precision_slack(module, module, [arrays], [outputs], [outputs]) or [1.0]
    assert slack < 1e-5


# The policy ------------------------------------------------------------------


def test_matmuls_and_their_epilogue_run_low_results_in_the_callers_dtype() -> None:
    module = run_pass(EPILOGUE)
    assert element_types(module, g.MatmulOp) == ["bf16", "bf16"]
    assert element_types(module, g.SubOp) == ["bf16"]
    assert element_types(module, g.TanhOp) == ["bf16"]
    function = find_function(module)
    assert [str(t) for t in function.function_type.outputs] == [
        "!graph.tensor<[N, 8], f32>"
    ]
    assert module.attributes[POLICY_ATTRIBUTE].data == "bf16"


def test_reductions_and_exponentials_stay_float32() -> None:
    module = run_pass(
        """\
func.func @main(%x: !graph.tensor<[N, 8], f32>, %w: !graph.tensor<[8, 8], f32>) -> !graph.tensor<[N], f32> {
  %h = graph.matmul %x, %w : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[N, 8], f32>
  %e = graph.exp %h : !graph.tensor<[N, 8], f32>
  %s = graph.reduce sum %e [1] : !graph.tensor<[N, 8], f32> -> !graph.tensor<[N], f32>
  func.return %s : !graph.tensor<[N], f32>
}
"""
    )
    assert element_types(module, g.ExpOp) == ["f32"]
    assert element_types(module, g.ReduceOp) == ["f32"]
    casts = [op for op in module.walk() if isinstance(op, g.CastOp)]
    assert [c.attributes["amp"].data for c in casts] == [
        "graph.matmul",
        "graph.matmul",
        "graph.exp",
    ]


def test_float64_and_chosen_16_bit_programs_are_left_alone() -> None:
    for element in ("f64", "bf16"):
        text = LINEAR.replace("f32", element)
        assert print_module(run_pass(text)) == print_module(parse_module(text))


@pytest.mark.parametrize("dtype", LOW)
def test_the_pass_is_idempotent(dtype: str) -> None:
    once = run_pass(EPILOGUE, dtype)
    twice = once.clone()
    AutoMixedPrecisionPass(dtype=dtype).apply(Context(), twice)
    assert print_module(twice) == print_module(once)
    assert str(LOW_TYPES[dtype]) in print_module(once)


def test_an_unknown_low_type_is_refused() -> None:
    with pytest.raises(Exception, match="dtype=f8 is not a low type; use one of"):
        run_pass(LINEAR, "f8")


# irc.compile and irc.jit -----------------------------------------------------


def linear_relu(x: Any, w: Any, b: Any) -> Any:
    return np.maximum(x @ w + b, 0) @ w.T


SPECS = (
    irc.TensorSpec(("N", 16), "float32"),
    irc.TensorSpec((16, 16), "float32"),
    irc.TensorSpec((16,), "float32"),
)


def linear_inputs(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(n)
    return [
        rng.standard_normal((n, 16)).astype(np.float32),
        (rng.standard_normal((16, 16)) * 0.3).astype(np.float32),
        rng.standard_normal(16).astype(np.float32),
    ]


@pytest.mark.parametrize("dtype", LOW)
def test_compile_takes_the_option(dtype: str) -> None:
    compiled = irc.compile(linear_relu, *SPECS, mixed_precision=dtype)
    text = compiled.ir()
    assert f'{POLICY_ATTRIBUTE} = "{dtype}"' in text
    assert f"-> !graph.tensor<[N, 16], {dtype}>" in text
    for n in (1, 7):
        result = compiled(*linear_inputs(n), backend="reference")
        assert result.dtype == np.float32
        np.testing.assert_allclose(result, linear_relu(*linear_inputs(n)), atol=0.2)


def test_without_the_option_nothing_changes() -> None:
    assert POLICY_ATTRIBUTE not in irc.compile(linear_relu, *SPECS).ir()


def test_jit_takes_the_option() -> None:
    jitted = irc.jit(linear_relu, dims={"x": ("N", None)}, mixed_precision="f16")
    result = jitted(*linear_inputs(5), backend="reference")
    assert result.dtype == np.float32
    assert 'irc.mixed_precision = "f16"' in jitted.ir()


@pytest.mark.parametrize("bad", ["fp8", "float32", 16])
def test_a_bad_option_is_a_clear_error(bad: Any) -> None:
    with pytest.raises(IrcError, match=r"mixed_precision=.* use 'bf16' or 'f16'"):
        irc.compile(linear_relu, *SPECS, mixed_precision=bad)
    with pytest.raises(IrcError, match="use 'bf16' or 'f16'"):
        irc.jit(linear_relu, mixed_precision=bad)


# The suite programs against NumPy ---------------------------------------------

#: The suite programs with matmuls, and one without (unchanged by the pass).
SUITE_NAMES = (
    "gelu_linear",
    "mlp",
    "swiglu",
    "causal_attention",
    "gpt2_block",
    "softmax",
)


@pytest.fixture(scope="module")
def compiled_suite() -> dict[tuple[str, str | None], irc.Compiled]:
    return {}


def compiled_program(
    cache: dict[tuple[str, str | None], irc.Compiled], name: str, dtype: str | None
) -> irc.Compiled:
    if (name, dtype) not in cache:
        cache[name, dtype] = SUITE[name].compile(mixed_precision=dtype)
    return cache[name, dtype]


def results(value: Any) -> list[np.ndarray]:
    leaves = list(value) if isinstance(value, tuple | list) else [value]
    return [np.asarray(leaf) for leaf in leaves]


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", SUITE_NAMES)
def test_suite_programs_match_numpy_within_the_tolerance(
    name: str, dtype: str, compiled_suite: dict[tuple[str, str | None], irc.Compiled]
) -> None:
    program = SUITE[name]
    plain = compiled_program(compiled_suite, name, None)
    mixed = compiled_program(compiled_suite, name, dtype)
    assert (f"{dtype}>" in mixed.ir()) == (name != "softmax")
    for sizes in SIZES[name][:2]:
        call = program.inputs(np.random.default_rng(1), **sizes)
        arrays = [
            leaf
            for leaf in pytree.flatten((list(call.args), dict(call.kwargs)))[0]
            if isinstance(leaf, np.ndarray)
        ]
        before = testing.run_module(plain.module, arrays)
        after = testing.run_module(mixed.module, arrays)
        slack = precision_slack(plain.module, mixed.module, [arrays], [before], [after])
        assert slack is not None
        expected = results(program.function(*call.args, **call.kwargs))
        for backend in ("reference", "interpret"):
            got = results(mixed(*call.args, **call.kwargs, backend=backend))
            if backend == "reference":  # the arrays are the module's arguments
                for value, direct in zip(got, after):
                    np.testing.assert_array_equal(value, direct)
            problem = compare_outputs(expected, got, rounding=slack)
            assert problem is None, f"{name} at {sizes} on {backend}: {problem}"


def test_the_triton_interpreter_runs_bf16_as_the_reference_does() -> None:
    compiled = irc.compile(linear_relu, *SPECS, mixed_precision="bf16")
    arrays = linear_inputs(9)
    reference = compiled(*arrays, backend="reference")
    interpreted = compiled(*arrays, backend="interpret")
    step = float(ml_dtypes.finfo(ml_dtypes.bfloat16).eps)
    np.testing.assert_allclose(interpreted, reference, rtol=step, atol=step)


# Float16 training with dynamic loss scaling -----------------------------------

LEARNING_RATE = 0.05


def mlp_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    error = hidden @ params["w2"] + params["b2"] - y
    return (error**2).mean()


def momentum(
    params: dict[str, Any], gradients: dict[str, Any], velocity: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    new_velocity = {k: 0.9 * velocity[k] + gradients[k] for k in params}
    return {k: params[k] - LEARNING_RATE * new_velocity[k] for k in params}, (
        new_velocity
    )


def initial_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "w1": (rng.standard_normal((3, 16)) * 0.5).astype(np.float32),
        "b1": np.zeros(16, np.float32),
        "w2": (rng.standard_normal((16, 2)) * 0.5).astype(np.float32),
        "b2": np.zeros(2, np.float32),
    }


@pytest.fixture(scope="module")
def f16_step() -> irc.Compiled:
    params = initial_params(np.random.default_rng(0))
    specs = {k: irc.TensorSpec(v.shape, "float32") for k, v in params.items()}
    step = training.loss_scaled_step(
        mlp_loss, momentum, training.LossScaling(growth_interval=3)
    )
    return irc.compile(
        step,
        specs,
        dict(specs),
        training.scaler_specs(),
        irc.TensorSpec(("B", 3), "float32"),
        irc.TensorSpec(("B", 2), "float32"),
        mixed_precision="f16",
    )


def regression_batch(batch: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(batch).standard_normal((batch, 3)).astype(np.float32)
    y = np.stack([np.sin(x[:, 0]) + x[:, 1], x[:, 2] * x[:, 0]], axis=1)
    return x, y.astype(np.float32)


def test_the_step_is_one_float16_program(f16_step: irc.Compiled) -> None:
    text = f16_step.ir()
    assert text.count("func.func") == 1
    assert "f16>) -> !graph.tensor<[3, 16], f16>" in text  # a backward matmul


# The overflowing step computes inf * 0 = NaN on purpose: NumPy and Triton's
# interpreter warn about it.
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("backend", "batch"), [("interpret", 32), ("reference", 9)])
def test_an_overflowing_step_is_skipped_and_the_loss_falls(
    f16_step: irc.Compiled, backend: str, batch: int
) -> None:
    params = initial_params(np.random.default_rng(0))
    velocity = {k: np.zeros_like(v) for k, v in params.items()}
    x, y = regression_batch(batch)
    # 2**24 times the loss's gradient overflows float16 (max 65504).
    scaler = training.initial_scaler(2.0**24)
    loss, new_params, velocity, scaler = f16_step(
        params, velocity, scaler, x, y, backend=backend
    )
    for name in params:
        np.testing.assert_array_equal(new_params[name], params[name])
        assert not velocity[name].any()
    assert scaler["scale"] == 2.0**23 and scaler["good_steps"] == 0
    scaler = training.initial_scaler(2.0**10)
    losses = [float(loss)]
    for _ in range(10):
        loss, params, velocity, scaler = f16_step(
            params, velocity, scaler, x, y, backend=backend
        )
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0], losses
    # Ten finite steps at a growth interval of 3: the scale doubled 3 times.
    assert scaler["scale"] == 2.0**13 and scaler["good_steps"] == 1


def test_update_scaler_follows_grad_scaler() -> None:
    scaling = training.LossScaling(growth_interval=2)
    scaler = training.initial_scaler(8.0)
    finite_flags = [True, True, False, True]
    scales = []
    for finite in finite_flags:
        scaler = training.update_scaler(scaler, np.bool_(finite), scaling)
        scales.append((float(scaler["scale"]), int(scaler["good_steps"])))
    assert scales == [(8.0, 1), (16.0, 0), (8.0, 0), (8.0, 1)]


def test_all_finite_sees_nan_and_infinity() -> None:
    good = {"a": np.ones(3, np.float32), "b": np.zeros((2, 2), np.float32)}
    assert training.all_finite(good)
    for bad in (np.inf, -np.inf, np.nan):
        tree = {**good, "b": np.array([[0, bad], [0, 0]], np.float32)}
        assert not training.all_finite(tree)


def test_all_finite_of_no_leaves_or_empty_ones_is_true() -> None:
    def finite(a: Any, b: Any) -> Any:
        return training.all_finite({"a": a, "empty": b})

    compiled = irc.compile(
        finite, irc.TensorSpec(("N",), "float32"), irc.TensorSpec((0, 3), "float32")
    )
    empty = np.ones((0, 3), np.float32)
    assert bool(compiled(np.ones(3, np.float32), empty, backend="reference"))
    assert not bool(
        compiled(np.array([1, np.inf], np.float32), empty, backend="reference")
    )
    assert bool(training.all_finite({}))
