"""NaN and Inf hunting: ``irc.compile(..., debug_nans=True)``.

A call whose outputs (gradients included) hold a NaN or an infinity raises
``irc.NonFiniteError`` naming where the first one they depend on appeared:
the op that made it from finite operands, with its level, Python line,
operands and element index (and loop iteration), or the argument that
already held it. Off, a compiled function's calls are the plain ones.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FloatAttr,
    IntAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

import irc
from irc import testing
from irc.dialects import graph as g
from irc.dialects import tile
from irc.dtypes import dtype
from irc.ir import default_context
from irc.lowering.pipeline import LEVEL_NAMES, LOWERING
from irc.passes.registry import get_all_passes
from irc.primitives import builtin as p
from irc.runtime import nans

F32 = "float32"


def line_of(function: Any, text: str) -> int:
    """The file line of the first line of ``function`` holding ``text``."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


# The seeds' case: an RNN cell whose gradient overflows ------------------------


def rnn_loss(w: Any, xs: Any) -> Any:
    """``h = h + 1e-6 * clip(exp(w*h + x))`` over the rows of ``xs``: the
    clip keeps the forward finite where ``exp`` overflows, but its gradient
    there is ``0 * inf``, a NaN, which the scan carries to ``dL/dw``."""

    def step(h: Any, x: Any) -> tuple[Any, None]:
        g = np.exp(w * h + x)
        return h + 1e-6 * np.clip(g, -1e3, 1e3), None

    h, _ = irc.scan(step, np.zeros_like(w), xs)
    return h.sum()


def rnn_loss_fori(w: Any, xs: Any) -> Any:
    """``rnn_loss`` as an ``irc.fori_loop`` indexing the rows itself."""

    def body(i: Any, h: Any) -> Any:
        g = np.exp(w * h + xs[i])
        return h + 1e-6 * np.clip(g, -1e3, 1e3)

    return irc.fori_loop(0, xs.shape[0], body, np.zeros_like(w)).sum()


def rnn_inputs() -> tuple[np.ndarray, np.ndarray]:
    """Inputs whose last rows make ``w*h + x`` pass 88.7, where float32's
    ``exp`` overflows (from row 45 on)."""
    w = np.full(4, 30.0, np.float32)
    xs = np.linspace(0, 100, 200, dtype=np.float32).reshape(50, 4)
    return w, xs


RNN_SPECS = (irc.TensorSpec((4,), F32), irc.TensorSpec((50, 4), F32))


@pytest.mark.parametrize("loss", [rnn_loss, rnn_loss_fori])
@pytest.mark.parametrize("backend", ["reference", "interpret"])
def test_a_nan_gradient_names_the_overflowing_exp(loss: Any, backend: str) -> None:
    compiled = irc.compile(irc.value_and_grad(loss), *RNN_SPECS, debug_nans=True)
    with pytest.raises(irc.NonFiniteError) as caught:
        compiled(*rnn_inputs(), backend=backend)
    origin = caught.value.origin
    assert isinstance(origin, nans.Origin)
    assert origin.op is not None and origin.op.name == "graph.exp"
    assert origin.location is not None
    assert origin.location.endswith(f":{line_of(loss, 'np.exp')}:13")
    assert origin.value == "inf"
    message = str(caught.value)
    assert "output 1 holds nan" in message  # the gradient, not the value
    assert f"backend {backend!r}" in message
    assert "graph.exp" in message and "(level graph)" in message
    assert "g = np.exp(w * h + x" in message  # the line's text
    # The backward loop runs in reverse: its first overflow is at row 49.
    assert "in iteration 49 of graph.for" in message
    assert "operand 0 (graph.add" in message and "at index (0,)" in message


def test_the_value_alone_stays_finite_and_raises_nothing() -> None:
    compiled = irc.compile(rnn_loss, *RNN_SPECS, debug_nans=True)
    assert np.isfinite(compiled(*rnn_inputs(), backend="reference"))


# The switch: off costs nothing, the environment variable, irc.jit --------------


def overflow(x: Any) -> Any:
    return np.exp(x) * 2


X = np.array([1.0, 100.0, 2.0], np.float32)


def test_off_the_calls_are_the_plain_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(nans.ENVIRONMENT_VARIABLE, raising=False)
    compiled = irc.compile(overflow, irc.TensorSpec(("N",), F32))
    assert type(compiled._calls) is dict  # no checking wrapper to run
    result = compiled(X, backend="reference")
    assert np.isinf(result[1]) and np.isfinite(result[[0, 2]]).all()


def test_the_environment_variable_turns_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(nans.ENVIRONMENT_VARIABLE, "1")
    with pytest.raises(irc.NonFiniteError, match="graph.exp"):
        irc.compile(overflow, irc.TensorSpec(("N",), F32))(X, backend="reference")
    # An explicit debug_nans=False wins over the environment.
    compiled = irc.compile(overflow, irc.TensorSpec(("N",), F32), debug_nans=False)
    assert np.isinf(compiled(X, backend="reference")[1])
    monkeypatch.setenv(nans.ENVIRONMENT_VARIABLE, "0")
    assert np.isinf(irc.compile(overflow, irc.TensorSpec(("N",), F32))(X)[1])


def test_jit_takes_the_option() -> None:
    jitted = irc.jit(overflow, dims={"x": ("N",)}, debug_nans=True)
    with pytest.raises(irc.NonFiniteError, match=r"made inf at index \(1,\)"):
        jitted(X, backend="reference")


def test_the_error_is_an_irc_error() -> None:
    assert issubclass(irc.NonFiniteError, irc.IrcError)
    assert "NonFiniteError" in irc.__all__


# What is named ----------------------------------------------------------------


def test_the_message_names_level_line_operands_and_index() -> None:
    def ratio(x: Any, y: Any) -> Any:
        return (x + 1) / y

    compiled = irc.compile(
        ratio, irc.TensorSpec((2, 3), F32), irc.TensorSpec((2, 3), F32), debug_nans=True
    )
    x = np.ones((2, 3), np.float32)
    y = np.ones((2, 3), np.float32)
    y[1, 2] = 0
    with pytest.raises(irc.NonFiniteError) as caught:
        compiled(x, y, backend="reference")
    message = str(caught.value)
    assert "output 0 holds inf at index (1, 2)" in message
    assert f"graph.div in @ratio at {__file__}:{line_of(ratio, '/ y')}" in message
    assert "(level graph) made inf at index (1, 2) from finite operands" in message
    assert "operand 0 (graph.add" in message and "= 2.0 at index (1, 2)" in message
    assert "operand 1 (%y) = 0.0 at index (1, 2)" in message


def test_an_argument_that_holds_a_nan_is_named() -> None:
    compiled = irc.compile(overflow, irc.TensorSpec(("N",), F32), debug_nans=True)
    x = np.array([1.0, np.nan], np.float32)
    with pytest.raises(irc.NonFiniteError) as caught:
        compiled(x, backend="reference")
    assert caught.value.origin.argument == "x"
    assert "argument 'x' already holds nan at index (1,)" in str(caught.value)


def test_a_discarded_non_finite_value_is_not_blamed() -> None:
    """``where`` drops ``log(0)``; the infinity in the output is exp's."""

    def safe_log_plus_exp(x: Any) -> Any:
        return np.where(x > 0, np.log(x), 0) + np.exp(x * 100)

    compiled = irc.compile(
        safe_log_plus_exp, irc.TensorSpec(("N",), F32), debug_nans=True
    )
    compiled(np.array([0.0, 0.5], np.float32), backend="reference")  # finite
    with pytest.raises(irc.NonFiniteError) as caught:
        compiled(np.array([0.0, 2.0], np.float32), backend="reference")
    assert caught.value.origin.op.name == "graph.exp"


def test_a_branch_of_cond_is_named() -> None:
    def branchy(x: Any, flag: Any) -> Any:
        return irc.cond(flag, lambda v: np.log(v - 5), lambda v: v, x)

    compiled = irc.compile(
        branchy, irc.TensorSpec((2,), F32), irc.TensorSpec((), "bool"), debug_nans=True
    )
    x = np.array([1.0, 9.0], np.float32)
    assert np.isfinite(compiled(x, np.array(False), backend="reference")).all()
    with pytest.raises(irc.NonFiniteError) as caught:
        compiled(x, np.array(True), backend="reference")
    assert caught.value.origin.op.name == "graph.log"
    assert "in the then branch of graph.cond" in str(caught.value)


def test_the_torch_backend_takes_the_option() -> None:
    torch = pytest.importorskip("torch")

    def model(x: Any) -> Any:
        return torch.exp(x) * 2

    compiled = torch.compile(
        model,
        backend="irc",
        options={"debug_nans": True, "runtime": "reference", "fallback": False},
    )
    with pytest.raises(irc.NonFiniteError, match="graph.exp"):
        compiled(torch.tensor([1.0, 100.0]))


# Generated programs with a planted NaN ----------------------------------------

PLANTED = FileLineColLoc(StringAttr("planted.py"), IntAttr(7), IntAttr(1))


def float_ops(module: ModuleOp) -> list[Operation]:
    """The ops of ``module`` with one float result a NaN can be planted on."""
    return [
        op
        for op in module.walk()
        if len(op.results) == 1
        and isinstance(op.results[0].type, g.TensorType)
        and dtype(op.results[0].type.element_type).kind == "f"
        and not isinstance(op, g.ConstantOp)
    ]


def plant_nan(op: Operation) -> Operation:
    """Make every use of ``op``'s result a use of ``result + 0/0`` instead;
    the ``0/0``, the op that makes the NaN, is returned."""
    result = op.results[0]
    uses = list(result.uses)
    zero = g.ConstantOp.splat(0.0, result.type)
    nan = g.elementwise(p.DIV, zero.result, zero.result)
    nan.location = PLANTED
    poisoned = g.elementwise(p.ADD, result, nan.result)
    Rewriter.insert_op([zero, nan, poisoned], InsertPoint.after(op))
    for use in uses:
        use.operation.operands[use.index] = poisoned.result
    return nan


@settings(
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    testing.cases(
        testing.programs(actions=testing.ACTIONS + testing.CONTROL_FLOW_ACTIONS)
    ),
    st.data(),
)
def test_a_planted_nan_is_named(case: testing.Case, data: st.DataObject) -> None:
    module = case.module.clone()
    planted, origin, reached = hunt_planted(
        module, float_ops(module), plant_nan, case, data
    )
    if not reached:
        assert origin is None  # the NaN was compared, cast or selected away
        return
    assert origin is not None and origin.op is planted, origin
    assert origin.location == "planted.py:7:1"


# A NaN planted at a lower level ------------------------------------------------


def lowered(module: ModuleOp, level: str) -> ModuleOp:
    """A copy of graph-level ``module`` lowered to ``level`` by the default
    lowering passes."""
    module = module.clone()
    passes, ctx = get_all_passes(), default_context()
    for names in LOWERING[: LEVEL_NAMES.index(level)]:
        for name in names:
            passes[name]()().apply(ctx, module)
    return module


def tile_float_ops(module: ModuleOp) -> list[Operation]:
    """The ops inside kernels with one float result (a tile or a scalar)."""
    return [
        op
        for kernel in module.walk()
        if isinstance(kernel, tile.TiledKernelOp)
        for op in kernel.body.walk()
        if len(op.results) == 1
        and not isinstance(op, tile.ConstantOp)
        and dtype(tile.element_of(op.results[0].type)).kind == "f"
    ]


def plant_tile_nan(op: Operation) -> Operation:
    """``plant_nan`` with the tile ops of the loop and memory levels: every
    use of ``op``'s result becomes one of ``result + 0/0``; the ``0/0`` (a
    scalar ``tile.binary div``) is returned."""
    result = op.results[0]
    uses = list(result.uses)
    zero = tile.ConstantOp(FloatAttr(0.0, tile.element_of(result.type)))
    nan = tile.BinaryOp(p.DIV, zero.result, zero.result)
    poisoned = tile.BinaryOp(p.ADD, result, nan.result)
    Rewriter.insert_op([zero, nan, poisoned], InsertPoint.after(op))
    for use in uses:
        use.operation.operands[use.index] = poisoned.result
    return nan


def hunt_planted(
    module: ModuleOp,
    candidates: list[Operation],
    plant: Any,
    case: testing.Case,
    data: st.DataObject,
) -> tuple[Operation, nans.Origin | None, bool]:
    """A NaN planted after one of ``candidates`` of ``module``: the planted
    op, what ``hunt`` names, and whether the NaN reached an output."""
    assume(candidates)
    # Drawn by position: an op's repr is its whole module, too long to print.
    position = data.draw(st.integers(0, len(candidates) - 1), label="op")
    planted = plant(candidates[position])
    module.verify()
    arrays = testing.inputs(case.module, case.binding, case.seed)
    outputs = testing.run_module(module, arrays)
    origin = nans.hunt(module, arrays)
    reached = any(nans.non_finite(np.asarray(o)) is not None for o in outputs)
    event("the NaN reached an output" if reached else "the NaN was dropped")
    return planted, origin, reached


@pytest.mark.parametrize("level", ["loop", "memory"])
@settings(
    deadline=None,
    max_examples=15,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(testing.cases(testing.programs()), st.data())
def test_a_nan_planted_at_a_lower_level_is_named(
    level: str, case: testing.Case, data: st.DataObject
) -> None:
    module = lowered(case.module, level)
    planted, origin, reached = hunt_planted(
        module, tile_float_ops(module), plant_tile_nan, case, data
    )
    if not reached:
        assert origin is None
        return
    assert origin is not None and origin.op is planted, origin
    assert origin.level == level and origin.value == "nan"
    assert any("program (" in where for where in origin.context)


def test_a_miscompiling_lowering_is_named_at_its_level(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ``tile`` pass that lowers ``exp(x)`` to ``x / 0``: the graph and
    fusion replays stay finite, the loop replay names the division."""
    tile_pass = get_all_passes()["tile"]()
    apply = tile_pass.apply

    def miscompile(self: Any, ctx: Context, module: ModuleOp) -> None:
        apply(self, ctx, module)
        for op in list(module.walk()):
            if isinstance(op, tile.UnaryOp) and op.kind.data.name == "exp":
                zero = tile.ConstantOp(FloatAttr(0.0, tile.element_of(op.result.type)))
                div = tile.BinaryOp(p.DIV, op.operands[0], zero.result)
                Rewriter.replace_op(op, [zero, div])

    monkeypatch.setattr(tile_pass, "apply", miscompile)

    def softplus(x: Any) -> Any:
        return np.log(1 + np.exp(x))

    compiled = irc.compile(softplus, irc.TensorSpec((3,), F32), debug_nans=True)
    with pytest.raises(irc.NonFiniteError) as caught:
        compiled(np.array([0.5, 1.0, 2.0], np.float32), backend="interpret")
    origin = caught.value.origin
    assert origin.level == "loop" and origin.op.name == "tile.binary"
    message = str(caught.value)
    assert "on the graph and fusion levels stay finite" in message
    assert "tile.binary in @softplus (level loop) made inf at index (0,)" in message
    assert "program (0, 0, 0) of loop.kernel @k0" in message


def test_an_unrolled_while_loop_is_reported_at_the_user_s_iteration() -> None:
    """``fuse`` runs 8 iterations of this cheap loop per run of its body,
    but the graph level, which the hunt replays, keeps the user's loop: the
    overflow is named at its own iteration, 38 (10**39 > float32's max)."""

    def grow(x: Any) -> Any:
        return irc.while_loop(
            lambda s: s[1] < 45, lambda s: (s[0] * 10.0, s[1] + 1), (x, np.int32(0))
        )[0]

    compiled = irc.compile(grow, irc.TensorSpec(("N",), "float32"), debug_nans=True)
    assert "unrolled = 8" in compiled.ir("fusion")
    with pytest.raises(irc.NonFiniteError) as caught:
        compiled(np.ones(3, np.float32), backend="interpret")
    message = str(caught.value)
    assert "graph.mul" in message and "(level graph)" in message
    assert "in iteration 38 of graph.while" in message
    # Replayed at the fusion level, the run of the unrolled body is named
    # with the iterations it holds.
    origin = nans.hunt(compiled.module_at("fusion"), [np.ones(3, np.float32)])
    assert origin is not None
    assert any(
        where.startswith("iterations 32 to 39 of graph.while")
        and "unrolled: 8 a run of its body" in where
        for where in origin.context
    ), origin.context
