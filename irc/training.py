"""Dynamic loss scaling for float16 training, in the one compiled step.

Under ``irc.compile(..., mixed_precision="f16")`` the backward matmuls run in
float16, whose smallest normal number is 6.1e-5: small gradients flush to
zero. Loss scaling multiplies the loss by a large scale before
differentiating, so that the gradients are large enough for float16, and
divides them by it afterwards (in float32: ``auto-mixed-precision`` keeps
division there). A scale too large overflows them to infinity instead; the
dynamic scale of ``torch.cuda.amp.GradScaler`` adapts:

- a step whose gradients are not all finite changes nothing (parameters and
  optimiser state stay) and halves the scale (``backoff_factor``);
- after ``growth_interval`` finite steps in a row the scale doubles
  (``growth_factor``).

Everything is data flow (``np.where`` on an all-finite flag, no Python
``if`` on values), so the decision runs inside the compiled program and the
same functions run on NumPy arrays too::

    step = irc.training.loss_scaled_step(loss, adam_update)
    compiled = irc.compile(step, params, opt_state, irc.training.scaler_specs(),
                           x_spec, y_spec, mixed_precision="f16")
    scaler = irc.training.initial_scaler()
    loss, params, opt_state, scaler = compiled(params, opt_state, scaler, x, y)

See docs/mixed-precision.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from irc import pytree
from irc.autodiff import value_and_grad
from irc.capture.specs import TensorSpec

__all__ = [
    "LossScaling",
    "all_finite",
    "initial_scaler",
    "loss_scaled_step",
    "scaled_value_and_grad",
    "scaler_specs",
    "update_scaler",
    "where_finite",
]

#: The loss scale state: ``scale`` (float32, rank 0) and ``good_steps``
#: (int32, rank 0: finite steps since the scale last changed).
Scaler = dict[str, Any]

#: An optimiser update: ``(params, gradients, state) -> (params, state)``.
Update = Callable[[Any, Any, Any], tuple[Any, Any]]


@dataclass(frozen=True)
class LossScaling:
    """How the scale adapts (``torch.cuda.amp.GradScaler``'s defaults)."""

    growth_factor: float = 2.0
    backoff_factor: float = 0.5
    growth_interval: int = 2000


def initial_scaler(scale: float = 2.0**16) -> Scaler:
    """The scaler state to start from: ``scale`` and no good steps yet."""
    return {"scale": np.float32(scale), "good_steps": np.int32(0)}


def scaler_specs() -> Scaler:
    """The ``TensorSpec`` s of the scaler state, for ``irc.compile``."""
    return {"scale": TensorSpec((), "float32"), "good_steps": TensorSpec((), "int32")}


def scaled_value_and_grad(
    loss: Callable[..., Any],
) -> Callable[..., tuple[Any, Any]]:
    """``f(params, scale, *batch) -> (loss, gradients)``: the gradients of
    ``loss(params, *batch)`` with respect to ``params``, computed from the
    loss times ``scale`` and divided by ``scale`` again."""

    def scaled_loss(params: Any, scale: Any, *batch: Any) -> tuple[Any, Any]:
        value = loss(params, *batch)
        return value * scale, value

    def value_and_unscaled_grad(params: Any, scale: Any, *batch: Any) -> Any:
        (_, value), gradients = value_and_grad(scaled_loss, has_aux=True)(
            params, scale, *batch
        )
        leaves, tree = pytree.flatten(gradients)
        return value, pytree.unflatten(tree, [g / scale for g in leaves])

    return value_and_unscaled_grad


def all_finite(tree: Any) -> Any:
    """A rank-0 bool: whether every element of every array in ``tree`` is
    finite (``max |x|`` is NaN or infinite exactly when one is not)."""
    leaves, _ = pytree.flatten(tree)
    finite: Any = np.True_  # no leaves, or only empty ones: nothing non-finite
    for leaf in leaves:
        if 0 not in getattr(leaf, "shape", ()):  # an empty array's max fails
            finite = finite & np.isfinite(np.max(np.abs(leaf)))
    return finite


def where_finite(finite: Any, new: Any, old: Any) -> Any:
    """``new`` where ``finite`` holds, else ``old``, leaf by leaf (two trees
    of one structure)."""
    new_leaves, tree = pytree.flatten(new)
    old_leaves, _ = pytree.flatten(old)
    return pytree.unflatten(
        tree, [np.where(finite, n, o) for n, o in zip(new_leaves, old_leaves)]
    )


def update_scaler(
    scaler: Scaler, finite: Any, scaling: LossScaling = LossScaling()
) -> Scaler:
    """The scaler after a step: backed off after a non-finite step, grown
    after ``growth_interval`` finite ones in a row."""
    scale, good_steps = scaler["scale"], scaler["good_steps"]
    counted = np.where(finite, good_steps + 1, 0)
    grow = counted >= scaling.growth_interval
    grown = np.where(grow, scale * scaling.growth_factor, scale)
    return {
        "scale": np.where(finite, grown, scale * scaling.backoff_factor),
        "good_steps": np.where(grow, 0, counted),
    }


def loss_scaled_step(
    loss: Callable[..., Any], update: Update, scaling: LossScaling = LossScaling()
) -> Callable[..., tuple[Any, Any, Any, Scaler]]:
    """A training step with dynamic loss scaling:
    ``step(params, state, scaler, *batch) -> (loss, params, state, scaler)``,
    where ``update(params, gradients, state) -> (params, state)`` is the
    optimiser. A step with a non-finite gradient returns ``params`` and
    ``state`` as they were."""

    def step(params: Any, state: Any, scaler: Scaler, *batch: Any) -> Any:
        value, gradients = scaled_value_and_grad(loss)(params, scaler["scale"], *batch)
        finite = all_finite(gradients)
        new_params, new_state = update(params, gradients, state)
        return (
            value,
            where_finite(finite, new_params, params),
            where_finite(finite, new_state, state),
            update_scaler(scaler, finite, scaling),
        )

    return step
