"""Symbol bindings and NumPy inputs for running a module on random data.

This module does not need Hypothesis: ``irc-opt --check-semantics`` draws
from it with a NumPy generator, and the strategies of
``irc.testing.strategies`` wrap it.

Inputs have moderate magnitudes (floats in ``[-FLOAT_INPUT_RANGE,
FLOAT_INPUT_RANGE]``, integers in ``[-INT_INPUT_RANGE, INT_INPUT_RANGE]``):
the program generator builds its ops knowing these ranges, which is how
every generated op stays in its domain (no log of a negative, no overflow
to inf) for every input this module produces.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from irc.dialects.graph import TensorType
from irc.dialects.sym import FactAttr, GuardOp
from irc.dtypes import dtype
from irc.errors import IrcError
from irc.interpreters.graph import find_function
from irc.shapes import Fact, SymExpr
from irc.testing.interpreters import entry_signature

#: Symbols take values in ``[1, MAX_SYMBOL_VALUE]``: big enough for every
#: size-dependent path (empty slices, broadcasting of 1, several tiles of a
#: reduction), small enough for the interpreter to be quick.
MAX_SYMBOL_VALUE = 5
#: Floating-point inputs are drawn from ``[-FLOAT_INPUT_RANGE, FLOAT_INPUT_RANGE]``.
FLOAT_INPUT_RANGE = 4.0
#: Integer inputs are drawn from ``[-INT_INPUT_RANGE, INT_INPUT_RANGE]``.
INT_INPUT_RANGE = 10
#: Above this many candidate bindings, admissible ones are sampled, not listed.
_MAX_ENUMERATED = 50_000
_SAMPLES = 2_000

FactLike = Fact | FactAttr | str


def as_fact(fact: FactLike) -> Fact:
    """A :class:`irc.shapes.Fact` from a fact, a ``sym.fact`` attribute or
    its text (``"N mod 2 == 0"``)."""
    if isinstance(fact, Fact):
        return fact
    return fact.fact if isinstance(fact, FactAttr) else Fact.parse(fact)


def enumerate_bindings(
    symbols: Iterable[str],
    facts: Iterable[FactLike] = (),
    *,
    max_value: int = MAX_SYMBOL_VALUE,
    nonnegative: Iterable[SymExpr] = (),
) -> list[dict[str, int]]:
    """Every binding of ``symbols`` to ``[1, max_value]`` under which each
    fact holds and each dim in ``nonnegative`` is at least 0, smallest
    first (so that a strategy sampling from the list shrinks to small sizes).

    With too many symbols to list every candidate, a deterministic sample
    of the admissible ones; if the sample holds none, the first admissible
    ones in order (so a binding is found whenever one exists). Raises
    ``IrcError`` when there is none.
    """
    names = sorted(set(symbols))
    checks = [as_fact(f) for f in facts]
    dims = list(nonnegative)

    def admissible(binding: dict[str, int]) -> bool:
        return all(f.holds(binding) for f in checks) and all(
            d.evaluate(binding) >= 0 for d in dims
        )

    found = [b for b in _candidates(names, max_value) if admissible(b)]
    if not found and max_value ** len(names) > _MAX_ENUMERATED:
        # The sample missed the (rare) admissible bindings: list them all,
        # stopping once there are as many as a sample would hold.
        every = (b for b in _all_candidates(names, max_value) if admissible(b))
        found = list(itertools.islice(every, _SAMPLES))
    if not found:
        stated = "; ".join(str(f) for f in checks) or "none"
        raise IrcError(
            f"no binding of {', '.join(names)} to sizes in [1, {max_value}] "
            f"satisfies the facts ({stated}) with every dim non-negative"
        )
    return sorted(found, key=lambda b: (sum(b.values()), list(b.values())))


def _all_candidates(names: Sequence[str], max_value: int) -> Iterable[dict[str, int]]:
    values = range(1, max_value + 1)
    return (
        dict(zip(names, combo))
        for combo in itertools.product(values, repeat=len(names))
    )


def _candidates(names: Sequence[str], max_value: int) -> Iterable[dict[str, int]]:
    """Every binding of ``names`` to ``[1, max_value]``, or a deterministic
    sample of them when there are too many."""
    if max_value ** len(names) <= _MAX_ENUMERATED:
        return _all_candidates(names, max_value)
    rng = np.random.default_rng(0)
    return (
        {name: int(rng.integers(1, max_value + 1)) for name in names}
        for _ in range(_SAMPLES)
    )


def module_bindings(
    module: ModuleOp, *, max_value: int = MAX_SYMBOL_VALUE
) -> list[dict[str, int]]:
    """The bindings under which ``module``'s entry function can be called:
    its arguments' symbols in ``[1, max_value]``, its guards true and every
    argument dim non-negative; smallest first."""
    arg_types = entry_signature(module)
    dims = [d for t in arg_types for d in t.dims]
    symbols = set().union(*(d.symbols for d in dims))
    guards = [g.fact for g in find_function(module).walk() if isinstance(g, GuardOp)]
    return enumerate_bindings(symbols, guards, max_value=max_value, nonnegative=dims)


def inputs(module: ModuleOp, binding: Mapping[str, int], seed: int) -> list[np.ndarray]:
    """Random arguments for ``module``'s entry function under ``binding``,
    the same for the same module, binding and seed.

    The random generator is seeded with ``seed`` and a digest of the
    signature and the binding, so that one seed (the 0 Hypothesis likes to
    draw) gives unrelated inputs to different programs, not one pattern.

    Floats are uniform in ``[-FLOAT_INPUT_RANGE, FLOAT_INPUT_RANGE]``, each
    argument rounded to halves on a coin flip so that ties and exact
    equalities (``cmp eq``, ``argmax``, ``maximum``) occur; integers are
    uniform in ``[-INT_INPUT_RANGE, INT_INPUT_RANGE]``, each argument in
    ``[0, 1]`` instead with probability 1/4 (valid indices into any
    non-empty axis, so that a given program with index arguments runs on
    some draws); bools are fair coins.
    """
    signature = entry_signature(module)
    key = repr(([str(t) for t in signature], sorted(binding.items())))
    rng = np.random.default_rng([seed, zlib.crc32(key.encode())])
    return [random_array(t, binding, rng) for t in signature]


def random_array(
    tensor: TensorType, binding: Mapping[str, int], rng: np.random.Generator
) -> np.ndarray:
    """One argument of type ``tensor`` under ``binding`` (see :func:`inputs`)."""
    shape = tuple(dim.evaluate(binding) for dim in tensor.dims)
    if any(size < 0 for size in shape):
        raise IrcError(
            f"argument type {tensor} has a negative dim under the binding "
            f"{dict(binding)}"
        )
    element = dtype(tensor.element_type)
    if element.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if element.kind == "i":
        low, high = (
            (0, 1) if rng.random() < 0.25 else (-INT_INPUT_RANGE, INT_INPUT_RANGE)
        )
        return np.asarray(rng.integers(low, high + 1, shape), dtype=element.numpy)
    values = rng.uniform(-FLOAT_INPUT_RANGE, FLOAT_INPUT_RANGE, shape)
    if rng.random() < 0.5:
        values = np.round(values * 2) / 2
    return np.asarray(values).astype(element.numpy)
