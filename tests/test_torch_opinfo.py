"""The ATen converters on torch's own samples: every OpInfo entry (torch's
operator test database) named as an ATen op irc converts, on its first
float32 sample inputs, through ``torch.compile(backend="irc")`` against
eager. Inputs nobody here chose: scalars, empty tensors, negative dims,
int32 indices, legacy forms.

Each sample either matches eager (values, shape, dtype) or is refused with
an irc error that names the form, as ``REFUSED`` lists; a new refusal, an
internal error or a wrong value fails.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch.testing._internal needs it

from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

import irc.torch as irc_torch  # noqa: E402
from irc.torch.aten import CONVERTERS  # noqa: E402

SAMPLES_PER_OP = 12

#: The forms irc refuses, by OpInfo name: a text of the refusal's message.
REFUSED = {
    "index_put": "with a boolean mask",
    "scatter": "with reduce='multiply'",
    # an empty uint8 index (legacy): irc has no uint8, the op runs eagerly
    "gather": "irc does not convert aten.gather.default on uint8",
    # NumPy's max over an empty axis is an error, torch's an empty result
    "softmax": "which is empty",
    "log_softmax": "which is empty",
}

_CONVERTED = {name.split(".")[1] for name in CONVERTERS}
OPS = [op for op in op_db if not op.variant_test_name and op.name in _CONVERTED]


def _samples(op: Any) -> list[Any]:
    samples = op.sample_inputs("cpu", torch.float32, requires_grad=False)
    return list(samples)[:SAMPLES_PER_OP]


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_a_converted_op_matches_eager_on_torchs_samples(op: Any) -> None:
    for sample in _samples(op):
        arguments = (sample.input, *sample.args)
        function = functools.partial(op.op, **sample.kwargs)
        try:
            expected = function(*arguments)
        except Exception:  # a sample eager refuses (an error input)
            continue
        torch._dynamo.reset()
        irc_torch.fallback_ops.clear()
        options = {"runtime": "reference", "fallback": False}
        compiled = torch.compile(function, backend="irc", options=options)
        try:
            got = compiled(*arguments)
        except Exception as error:
            message = str(error)
            assert "internal error" not in message, message
            assert op.name in REFUSED and REFUSED[op.name] in message, message
            continue
        torch.testing.assert_close(got, expected, equal_nan=True, rtol=1e-4, atol=1e-5)


def test_the_samples_reach_many_converters() -> None:
    """The sweep is not vacuous: OpInfo names most of irc's converters."""
    assert len(OPS) >= 50
