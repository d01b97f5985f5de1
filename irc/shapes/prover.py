"""What the declared facts let irc prove about expressions.

Everything here works under a :class:`Context`: an interval per symbol
(``[1, inf)`` unless the facts say more, as symbols are sizes) and relations
``g >= 0`` between them. Under a context,

- :func:`bounds_of` gives an interval containing every value of an expression,
  interval arithmetic refined by shifting atoms to their lower bounds and by
  multiplying out constant ``floordiv``\\ s;
- :func:`nonneg` proves ``e >= 0`` from bounds, from a relation, or by case
  splits on the ``max``/``min`` atoms of ``e`` (and on those of a floor
  quotient's numerator), last with a floor quotient bounded by its
  numerator (:class:`_CaseSplit`);
- :func:`refine` simplifies an expression's atoms with what those prove.

Proofs are sound, not complete: ``False`` means "not proven". A step that
would go over a cap of :mod:`irc.shapes.limits` gives up on that step
(losing proofs, never soundness), and a search is bounded by
``_MAX_SPLIT_TRIES``. :class:`~irc.shapes.Facts` builds the context from
its facts and asks these questions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import NamedTuple

from irc.shapes.errors import TooLarge
from irc.shapes.expr import (
    DIVMOD,
    Atom,
    Mono,
    Op,
    Poly,
    SymExpr,
    accumulate,
    add,
    apply_op,
    const_expr,
    floordiv,
    from_atom,
    from_poly,
    has_ops,
    internal_symbol,
    map_atoms,
    minmax,
    mod,
    mono_key,
    mul,
    top_atoms,
)
from irc.shapes.intervals import (
    INF,
    Bound,
    Interval,
    divisor_interval,
    floordiv_interval,
    imul,
    ipow,
    meet,
    mod_interval,
    xadd,
    xceildiv,
    xfloordiv,
)
from irc.shapes.limits import MAX_TERMS

#: The interval of a symbol that nothing is declared about: symbols are sizes.
_SIZE: tuple[int, float] = (1, INF)


class Context:
    """What bounds and refinement may assume: an interval per symbol
    (``[1, inf)`` by default: symbols are sizes) and relations ``g >= 0``."""

    def __init__(
        self,
        env: Mapping[str, Interval] | None = None,
        relations: tuple[SymExpr, ...] = (),
    ) -> None:
        self.env = env or {}
        self.relations = relations
        self.cache: dict[Op, Interval] = {}

    def symbol(self, name: str) -> Interval:
        return self.env.get(name, _SIZE)


def _poly_interval(
    terms: Iterable[tuple[Mono, int]], atom_interval: Callable[[Atom], Interval]
) -> Interval:
    low: Bound = 0
    high: Bound = 0
    for mono, coef in terms:
        term: Interval = (coef, coef)
        for atom, power in mono:
            term = imul(term, ipow(atom_interval(atom), power))
        low, high = xadd(low, term[0]), xadd(high, term[1])
    return low, high


def _atom_interval(atom: Atom, ctx: Context) -> Interval:
    if isinstance(atom, str):
        return ctx.symbol(atom)
    cached = ctx.cache.get(atom)
    if cached is None:
        intervals = [bounds_of(arg, ctx) for arg in atom.args]
        if atom.kind == "max":
            cached = max(i[0] for i in intervals), max(i[1] for i in intervals)
        elif atom.kind == "min":
            cached = min(i[0] for i in intervals), min(i[1] for i in intervals)
        elif atom.kind == "floordiv":
            cached = floordiv_interval(intervals[0], divisor_interval(intervals[1]))
        else:
            cached = mod_interval(intervals[0], divisor_interval(intervals[1]))
        ctx.cache[atom] = cached
    return cached


def _is_nonlinear(e: SymExpr) -> bool:
    return bool(e._terms) and mono_key(e._terms[0][0])[0] < -1


def bounds_of(e: SymExpr, ctx: Context) -> Interval:
    """An interval containing every value of ``e`` that ``ctx`` allows.

    Plain interval arithmetic loses the correlation between terms, so two
    sound refinements are intersected with it: shifting every atom to its
    lower bound (so ``M*N - N`` is seen as ``m*n + m >= 0`` in the shifted
    atoms), and multiplying out constant floordivs (``4*(N floordiv 4)`` is
    ``N - N mod 4``)."""

    def atom_interval(atom: Atom) -> Interval:
        return _atom_interval(atom, ctx)

    best = _refined_interval(e, atom_interval)
    try:
        scaled, scale = _eliminate_floordivs(e)
    except TooLarge:  # then the plain refinement must do
        return best
    if scale > 1:
        low, high = _refined_interval(scaled, atom_interval)
        best = meet(best, (xceildiv(low, scale), xfloordiv(high, scale)))
    return best


def _refined_interval(
    e: SymExpr, atom_interval: Callable[[Atom], Interval]
) -> Interval:
    plain = _poly_interval(e._terms, atom_interval)
    if not _is_nonlinear(e):
        return plain
    shifts: dict[Atom, int] = {}
    for atom in top_atoms(e):
        low = atom_interval(atom)[0]
        if isinstance(low, int) and low:
            shifts[atom] = low
    if not shifts:
        return plain
    # Expanding the shifted monomials multiplies the number of terms by
    # `power + 1` per shifted atom: past the cap, plain bounds must do.
    size = 0
    for mono, _ in e._terms:
        size += math.prod(power + 1 for atom, power in mono if atom in shifts)
        if size > MAX_TERMS:
            return plain
    shifted: Poly = {}
    for mono, coef in e._terms:
        accumulate(shifted, _shifted_expansion(mono, coef, shifts))

    def shifted_interval(atom: Atom) -> Interval:
        low, high = atom_interval(atom)
        shift = shifts.get(atom, 0)
        return xadd(low, -shift), xadd(high, -shift)

    return meet(plain, _poly_interval(shifted.items(), shifted_interval))


def _shifted_expansion(
    mono: Mono, coef: int, shifts: Mapping[Atom, int]
) -> list[tuple[Mono, int]]:
    """The terms of ``coef * mono`` with each atom ``x`` of ``shifts``
    replaced by ``x + shifts[x]``, expanded by the binomial theorem (distinct
    atoms, in the order of ``mono``, so every monomial comes out sorted)."""
    terms: list[tuple[Mono, int]] = [((), coef)]
    for atom, power in mono:
        shift = shifts.get(atom, 0)
        if not shift:
            terms = [((*m, (atom, power)), c) for m, c in terms]
            continue
        choices = [
            (((atom, k),) if k else (), math.comb(power, k) * shift ** (power - k))
            for k in range(power + 1)
        ]
        terms = [(m + mk, c * ck) for m, c in terms for mk, ck in choices]
    return terms


def _eliminate_floordivs(e: SymExpr) -> tuple[SymExpr, int]:
    """``(c * e, c)`` with every top-level ``F = num floordiv k`` (constant
    ``k``, appearing linearly) replaced through ``k*F == num - num mod k``.
    The largest quotients go first: a numerator may hold the others
    (``2*((A*B + 1) floordiv 2)`` with ``A`` and ``B`` quotients themselves),
    and once it is multiplied out its terms cancel theirs (``A*B + 1 -
    2*((A*B + 1) floordiv 2)`` is ``(A*B + 1) mod 2``); taken first, ``A``
    would come back inside the numerator in another form."""
    scale = 1
    quotients = [
        atom
        for atom in top_atoms(e)
        if isinstance(atom, Op) and atom.kind == "floordiv" and atom.args[1].is_constant
    ]
    for atom in sorted(quotients, key=lambda q: -q.weight):
        if atom not in top_atoms(e):  # cancelled by an earlier one
            continue
        split = _split_linear(e, atom)
        if split is None:
            continue
        cofactor, rest = split
        numerator, divisor = atom.args
        remainder = add(numerator, -mod(numerator, divisor))
        e = add(mul(rest, divisor), mul(cofactor, remainder))
        scale *= int(divisor)
    return e, scale


def _split_linear(e: SymExpr, atom: Atom) -> tuple[SymExpr, SymExpr] | None:
    """``(g, rest)`` with ``e == atom*g + rest``, if ``atom`` only appears
    with power 1."""
    cofactor: Poly = {}
    rest: Poly = {}
    for mono, coef in e._terms:
        powers = dict(mono)
        if atom not in powers:
            rest[mono] = coef
        elif powers[atom] == 1:
            cofactor[tuple(item for item in mono if item[0] != atom)] = coef
        else:
            return None
    return from_poly(cofactor), from_poly(rest)


def nonneg(e: SymExpr, ctx: Context) -> bool:
    """Whether ``e >= 0`` is provable: from bounds, from a declared relation,
    or by case splits on the ``max``/``min`` atoms of ``e`` (see
    :class:`_CaseSplit`)."""
    return _CaseSplit(ctx).prove(e)


def _nonneg_directly(e: SymExpr, ctx: Context) -> bool:
    """Whether ``e >= 0`` follows from bounds alone, or as ``e >= g >= 0``
    for a declared relation ``g >= 0``."""
    if e == 0 or bounds_of(e, ctx)[0] >= 0:
        return True
    return any(bounds_of(add(e, -g), ctx)[0] >= 0 for g in ctx.relations)


# How many expressions one proof's case splits may try in all: enough for
# the nested max/min that shapes hold, small enough that a query that cannot
# be proven stays cheap (it is asked for every max/min pair `refine` meets).
_MAX_SPLIT_TRIES = 96


class _CaseSplit:
    """One search for a proof of ``e >= 0`` through its ``max``/``min`` atoms.

    Interval bounds see ``max(M, N) - min(M, N)`` as two unrelated atoms, and
    ``max(a, b) <= c`` needs both ``a <= c`` and ``b <= c``, which no single
    bound expresses. So an atom that ``e`` holds linearly, with a cofactor
    ``g`` of known sign, is replaced by each of its arguments in turn, using
    ``g*max(x, y) == max(g*x, g*y)`` for ``g >= 0`` (a ``min`` for ``g <= 0``):

    - where the atom acts as a ``min`` in ``e`` (``R - max(...)``, ``R +
      min(...)``: a ``max`` on the left of ``<=``, a ``min`` on the right),
      ``e`` is the least of the cases, so *every* case must be proven; that
      split loses nothing, so it is taken first;
    - where it acts as a ``max`` (``max(...) - L``, ``R - min(...)``), ``e``
      is at least each case, so *one* proven case suffices; the most
      promising are tried first (see :func:`_promise`).

    A floor quotient of a numerator that holds such an atom is split alike,
    into the quotients of the cases (:func:`_quotient_extremum`). When no
    split proves ``e``, a floor quotient by a symbolic divisor is replaced
    by a bound in terms of its numerator (:func:`_quotient_weakenings`), a
    weaker claim tried last.

    Cases are proven the same way, recursively. Each split trades an atom
    for strictly smaller arguments, so the search ends; ``_MAX_SPLIT_TRIES``
    bounds its cost, and what failed is remembered. Giving up only loses
    proofs, never soundness."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.tries_left = _MAX_SPLIT_TRIES
        self.failed: set[SymExpr] = set()

    def prove(self, e: SymExpr) -> bool:
        """Whether ``e >= 0`` is proven within what is left of the budget."""
        if e in self.failed or self.tries_left <= 0:
            return False
        self.tries_left -= 1
        try:
            if _nonneg_directly(e, self.ctx) or self._split(e):
                return True
        except TooLarge:  # a step of the proof would be too large
            pass
        self.failed.add(e)
        return False

    def _split(self, e: SymExpr) -> bool:
        options: list[_Case] = []
        for every, cases in _minmax_splits(e, self.ctx):
            if every:
                return all(self.prove(case.value) for case in cases)
            options.extend(cases)
        options.sort(key=_promise)
        if any(self.prove(case.value) for case in options):
            return True
        # Last, as it loses precision: a quotient bounded by its numerator.
        return any(self.prove(weaker) for weaker in _quotient_weakenings(e, self.ctx))


class _Case(NamedTuple):
    """``e`` with a ``max``/``min`` atom replaced by its argument ``arg``."""

    value: SymExpr
    arg: SymExpr


def _minmax_splits(e: SymExpr, ctx: Context) -> list[tuple[bool, list[_Case]]]:
    """For each ``max``/``min`` atom that ``e`` holds linearly with a cofactor
    of known sign: whether ``e >= 0`` needs every case to hold (or any one),
    and the cases, ``e`` with the atom replaced by each argument. A floor
    quotient whose numerator holds such an atom counts as one (see
    :func:`_quotient_extremum`)."""
    splits = []
    for atom in top_atoms(e):
        if not isinstance(atom, Op):
            continue
        if atom.kind in ("max", "min"):
            kind, args = atom.kind, atom.args
        elif (extremum := _quotient_extremum(atom, ctx)) is not None:
            kind, args = extremum
        else:
            continue
        split = _signed_split(e, atom, ctx)
        if split is None:
            continue
        cofactor, rest, sign = split
        # g*max(...) is the max of the g*args for g >= 0, their min for g <= 0.
        every = (kind == "max") != (sign > 0)
        try:
            cases = [_Case(add(rest, mul(cofactor, arg)), arg) for arg in args]
        except TooLarge:  # no split on this atom, then
            continue
        splits.append((every, cases))
    return splits


def _quotient_extremum(
    atom: Op, ctx: Context
) -> tuple[str, tuple[SymExpr, ...]] | None:
    """``q floordiv d`` for a divisor ``d >= 1`` as a ``max``/``min`` of
    quotients, when its numerator ``q`` holds a ``max``/``min`` atom
    linearly with a cofactor of known sign: a floor quotient by a positive
    divisor is nondecreasing in its numerator, so ``(r + g*min(x, y))
    floordiv d`` is ``min((r + g*x) floordiv d, (r + g*y) floordiv d)`` for
    ``g >= 0`` (a ``max`` for ``g <= 0``, and the other way round for a
    ``max``), exactly. A tile's last row, ``min(16*((P + 15) floordiv 16),
    P) - 1``, divided by a row's length needs it: only its second
    argument gives a quotient that folds."""
    if atom.kind != "floordiv":
        return None
    numerator, divisor = atom.args
    if bounds_of(divisor, ctx)[0] < 1:
        return None
    for inner in top_atoms(numerator):
        if not (isinstance(inner, Op) and inner.kind in ("max", "min")):
            continue
        split = _signed_split(numerator, inner, ctx)
        if split is None:
            continue
        cofactor, rest, sign = split
        kind = inner.kind if sign > 0 else _OTHER_EXTREMUM[inner.kind]
        try:
            quotients = tuple(
                floordiv(add(rest, mul(cofactor, arg)), divisor) for arg in inner.args
            )
        except TooLarge:
            continue
        return kind, quotients
    return None


_OTHER_EXTREMUM = {"max": "min", "min": "max"}


def _quotient_weakenings(e: SymExpr, ctx: Context) -> Iterator[SymExpr]:
    """Lower bounds of ``e``, each with a floor quotient ``F = q floordiv
    d`` by a symbolic divisor ``d >= 1``, which ``e == r + g*F`` holds
    linearly with a cofactor ``g`` of known sign, replaced through ``min(q,
    0) <= F <= max(q, -1)``: a nonnegative ``q`` is divided down towards 0,
    a negative one stays between ``q`` and ``-1``. So ``e >= r + g*min(q,
    0)`` for ``g >= 0``, and ``e >= r + g*max(q, -1)`` for ``g <= 0``,
    which the case splits then take apart. Interval arithmetic bounds ``F``
    by ``q``'s interval only: ``N + (-N) floordiv M`` is at least ``N - N``,
    which it cannot see. Quotients by a constant are multiplied out exactly
    by :func:`bounds_of` instead."""
    for atom in top_atoms(e):
        if not (
            isinstance(atom, Op)
            and atom.kind == "floordiv"
            and not atom.args[1].is_constant
            and bounds_of(atom.args[1], ctx)[0] >= 1
        ):
            continue
        split = _signed_split(e, atom, ctx)
        if split is None:
            continue
        cofactor, rest, sign = split
        numerator = atom.args[0]
        if sign > 0:
            bound = minmax("min", [numerator, const_expr(0)])
        else:
            bound = minmax("max", [numerator, const_expr(-1)])
        try:
            weaker = add(rest, mul(cofactor, bound))
        except TooLarge:  # no weakening of this quotient, then
            continue
        yield weaker


def _signed_split(
    e: SymExpr, atom: Op, ctx: Context
) -> tuple[SymExpr, SymExpr, int] | None:
    """``(g, r, sign of g)`` for ``e == r + g*atom`` with a cofactor ``g``
    of known sign (``atom`` held linearly); None otherwise."""
    split = _split_linear(e, atom)
    if split is None:
        return None
    cofactor, rest = split
    sign = _sign(cofactor, ctx)
    return None if sign == 0 else (cofactor, rest, sign)


def _sign(e: SymExpr, ctx: Context) -> int:
    """1 if ``e >= 0`` by bounds, -1 if ``e <= 0``, else 0 (unknown)."""
    low, high = bounds_of(e, ctx)
    if low >= 0:
        return 1
    return -1 if high <= 0 else 0


def _promise(case: _Case) -> tuple[int, int]:
    """Sort key for "one case suffices" choices: the case whose terms cancel
    most, then the one keeping the most structure. Choosing a bare symbol
    first strands the search: ``min(max(A, B), ...) <= max(A, B, ...)`` is
    proven by choosing ``max(A, B)`` on the left, not ``A`` on the right."""
    return len(case.value._terms), -_size(case.arg)


def _size(e: SymExpr) -> int:
    """How many atoms ``e`` holds, nested ones included."""
    return sum(
        1 + (sum(_size(arg) for arg in atom.args) if isinstance(atom, Op) else 0)
        for atom in top_atoms(e)
    )


# --------------------------------------------------------------------------
# Refinement under bounds
# --------------------------------------------------------------------------


def refine(e: SymExpr, ctx: Context) -> SymExpr:
    """Simplify the atoms of ``e`` bottom-up with what ``ctx`` proves: a
    ``max``/``min`` argument dominated by another is dropped, a ``floordiv``
    with a provably constant quotient folds, and so does the ``mod``."""
    if not has_ops(e):
        return e
    return map_atoms(e, internal_symbol, lambda op: _refine_op(op, ctx))


def _refine_op(op: Op, ctx: Context) -> SymExpr:
    args = [refine(arg, ctx) for arg in op.args]
    if op.kind in ("max", "min"):
        return _prune_minmax(op.kind, args, ctx)
    built = apply_op(op.kind, args)
    return map_atoms(built, internal_symbol, lambda inner: _fold_divmod(inner, ctx))


def _fold_divmod(op: Op, ctx: Context) -> SymExpr:
    if op.kind not in DIVMOD:
        return from_atom(op)
    numerator, divisor = op.args
    quotient = _known_quotient(numerator, divisor, ctx)
    if quotient is None:
        return from_atom(op)
    if op.kind == "floordiv":
        return const_expr(quotient)
    return add(numerator, mul(divisor, const_expr(-quotient)))


def _known_quotient(numerator: SymExpr, divisor: SymExpr, ctx: Context) -> int | None:
    low, high = floordiv_interval(
        bounds_of(numerator, ctx), divisor_interval(bounds_of(divisor, ctx))
    )
    if low == high and isinstance(low, int):
        return low
    below = add(add(divisor, -numerator), const_expr(-1))
    if nonneg(numerator, ctx) and nonneg(below, ctx):
        return 0
    return None


def _prune_minmax(kind: str, args: list[SymExpr], ctx: Context) -> SymExpr:
    """Drop each argument that provably loses to another surviving one (of
    two provably equal arguments, the later one stays)."""
    alive = list(range(len(args)))
    for i in range(len(args)):
        for j in alive:
            if j == i:
                continue
            smaller, larger = (
                (args[i], args[j]) if kind == "max" else (args[j], args[i])
            )
            if nonneg(add(larger, -smaller), ctx):
                alive.remove(i)
                break
    return minmax(kind, [args[i] for i in alive])
