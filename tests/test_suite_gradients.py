"""The gradients of every suite program (tests/suite_programs.py), the GPT-2
block included, against central finite differences: each program captured
in float64 and differentiated with respect to all its float arguments by
``irc.testing.check_grad``."""

from __future__ import annotations

from typing import Any

import pytest
from suite_programs import SUITE

import irc
from irc import pytree
from irc.testing import check_grad


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
