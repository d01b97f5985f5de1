"""How much a program's float results are off by its own rounding.

A pass may reorder float arithmetic (a tiled matmul adds K in blocks, a row
reduction across lanes): the result then rounds differently, by about as
much as the program's rounding error, which grows with the size of the
reductions. A fixed tolerance either misses miscompiles or reports such a
correct pass as changing the results (a two-layer MLP over 512 features in
float32: 93.3292 before ``tile``, 93.3326 after). So the checker measures the
rounding error itself: the same program with every float narrower than
float64 widened to float64 is, to float32's eyes, exact; the largest
difference between the program's results and its widened twin's, per
output, is the rounding error a reordering may change a result by.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue
from xdsl.rewriter import Rewriter

from irc.dtypes import dtype
from irc.errors import IrcError
from irc.ir import verify_module
from irc.testing.interpreters import run_module

_NARROW_FLOATS = (Float16Type, BFloat16Type, Float32Type)


def rounding_errors(
    module: ModuleOp,
    inputs: Sequence[Sequence[np.ndarray]],
    outputs: Sequence[Sequence[np.ndarray]],
) -> list[float] | None:
    """Per output, the largest ``|result - exact|`` over the runs (finite
    elements only; 0 for integer outputs), where ``outputs``
    are ``module``'s results on ``inputs``; None when the module computes
    in float64 only or its widened twin does not run."""
    twin = widened(module)
    if twin is None:
        return None
    errors = [0.0] * len(outputs[0])
    for arrays, results in zip(inputs, outputs):
        wide_inputs = [_widen_array(a) for a in arrays]
        try:
            exact = run_module(twin, wide_inputs)
        except (IrcError, ArithmeticError, ValueError):
            return None
        for index, (result, truth) in enumerate(zip(results, exact)):
            errors[index] = max(errors[index], _largest_error(result, truth))
    return errors


def widened(module: ModuleOp) -> ModuleOp | None:
    """A copy of ``module`` computing in float64 wherever it computes in a
    narrower float (types, constants, casts); None when there is nothing
    to widen or the copy does not verify."""
    twin = module.clone()
    changed = False
    for op in twin.walk():
        for name, attribute in op.properties.items():
            wide = _widen(attribute)
            changed |= wide is not attribute
            op.properties[name] = wide
        for value in [
            *op.results,
            *(a for r in op.regions for b in r.blocks for a in b.args),
        ]:
            changed |= _retype(value)
    if not changed:
        return None
    try:
        verify_module(twin)
    except Exception:  # a widened op its verifier refuses: no measurement
        return None
    return twin


def _retype(value: SSAValue) -> bool:
    wide = _widen(value.type)
    if wide is value.type:
        return False
    Rewriter.replace_value_with_new_type(value, wide)
    return True


def _widen(attribute: Attribute) -> Attribute:
    """``attribute`` with every narrow float type in it made float64 (the
    same object when there is none)."""
    if isinstance(attribute, _NARROW_FLOATS):
        return Float64Type()
    if isinstance(attribute, DenseIntOrFPElementsAttr):
        element = attribute.get_element_type()
        if not isinstance(element, _NARROW_FLOATS):
            return attribute
        return DenseIntOrFPElementsAttr.from_list(
            TensorType(Float64Type(), attribute.get_shape()),
            [float(v) for v in attribute.get_values()],
        )
    if isinstance(attribute, ArrayAttr):
        items = [_widen(a) for a in attribute.data]
        if all(new is old for new, old in zip(items, attribute.data)):
            return attribute
        return ArrayAttr(items)
    if isinstance(attribute, ParametrizedAttribute):
        parameters = tuple(_widen(p) for p in attribute.parameters)
        if all(new is old for new, old in zip(parameters, attribute.parameters)):
            return attribute
        return type(attribute).new(parameters)
    return attribute


def _widen_array(array: np.ndarray) -> np.ndarray:
    if dtype(array.dtype).kind == "f" and array.dtype != np.float64:
        return array.astype(np.float64)
    return array


def _largest_error(result: np.ndarray, truth: np.ndarray) -> float:
    if dtype(result.dtype).kind != "f":
        return 0.0
    with np.errstate(all="ignore"):
        error = np.abs(result.astype(np.float64) - truth.astype(np.float64))
    finite = error[np.isfinite(error)]
    return float(finite.max()) if finite.size else 0.0
