"""Strategies for symbolic shapes and for the values of their symbols.

:func:`symbolic_shapes` draws shapes over a small pool of symbols and static
dims; :func:`bindings` and :func:`bindings_for` draw values for symbols under
facts (a module's guards): nine times in ten, when the facts allow one, a
binding that does not set every symbol to 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from irc.shapes import SymExpr
from irc.testing.sampling import (
    MAX_SYMBOL_VALUE,
    FactLike,
    enumerate_bindings,
    module_bindings,
)

#: The symbols programs and shapes use by default.
SYMBOLS: tuple[str, ...] = ("N", "M", "K")
#: The static dims programs and shapes use besides symbols.
STATIC_DIMS: tuple[int, ...] = (1, 2, 3, 4)


def symbolic_shapes(
    symbols: Sequence[str] = SYMBOLS,
    *,
    min_rank: int = 0,
    max_rank: int = 3,
    static_dims: Sequence[int] = STATIC_DIMS,
) -> st.SearchStrategy[tuple[SymExpr, ...]]:
    """Shapes whose dims are symbols or static sizes: ``(N, 4)``, ``(M,)``."""
    dims = [SymExpr.symbol(s) for s in symbols] + [
        SymExpr.const(d) for d in static_dims
    ]
    return st.lists(st.sampled_from(dims), min_size=min_rank, max_size=max_rank).map(
        tuple
    )


def bindings(
    symbols: Iterable[str] = SYMBOLS,
    *,
    facts: Iterable[FactLike] = (),
    max_value: int = MAX_SYMBOL_VALUE,
) -> st.SearchStrategy[dict[str, int]]:
    """Values in ``[1, max_value]`` for ``symbols`` under which every fact
    (``"N mod 2 == 0"``, an ``irc.shapes.Fact`` or a ``sym.fact``) holds,
    nine times in ten one with a value above 1; shrinks towards small
    values."""
    found = enumerate_bindings(symbols, facts, max_value=max_value)
    return _prefer_some_size(found)


def bindings_for(
    module: ModuleOp, *, max_value: int = MAX_SYMBOL_VALUE
) -> st.SearchStrategy[dict[str, int]]:
    """Bindings under which ``module``'s entry function can be called: its
    guards hold and its argument dims are non-negative.

    Nine times in ten (and when shrinking) one that does not bind every
    symbol to 1, if the guards allow one: under all-ones bindings every
    shape is all ones, and most wrong axes, broadcasts or transposes go
    unnoticed."""
    return _prefer_some_size(module_bindings(module, max_value=max_value))


def _prefer_some_size(found: list[dict[str, int]]) -> st.SearchStrategy[dict[str, int]]:
    """A binding of ``found`` (smallest first), nine times in ten one with
    a symbol above 1 if there is one."""
    sized = [b for b in found if any(v != 1 for v in b.values())]
    if not sized or len(sized) == len(found):
        return st.sampled_from(found).map(dict)
    return (
        st.integers(0, 9)
        .flatmap(lambda choice: st.sampled_from(sized if choice < 9 else found))
        .map(dict)
    )
