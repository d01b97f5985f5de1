"""Facts about symbols: :class:`Fact`, one relation, and :class:`Facts`,
what a set of them proves.

A :class:`Fact` is ``lhs op rhs`` with ``==``, ``>=``, ``<=``, ``>`` or
``<``, parsed from text such as ``"N % 16 == 0"``. :class:`Facts` digests a
list of them (:class:`_Knowledge`): equalities that define a symbol become
substitutions, bounds on one symbol and divisibility by a constant are kept
per symbol, and any other relation is kept as ``g >= 0``; contradictory facts
raise :class:`~irc.shapes.ShapeError` when it is built. Its queries
(``simplify``, ``bounds``, ``prove_le``, ``prove_eq``, ``prove_divisible``,
...) rewrite an expression by the definitions and the divisibility (a symbol
``N`` divisible by ``k`` becomes ``k * N'``) and hand it to
:mod:`irc.shapes.prover`; ``check`` tells which facts a binding breaks.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import NoReturn

from irc.shapes.errors import ShapeError, TooLarge
from irc.shapes.expr import (
    ONE,
    Op,
    Poly,
    SymExpr,
    accumulate,
    add,
    apply_op,
    as_expr,
    coefficient_gcd,
    const_expr,
    constant_term,
    expand_power,
    floordiv,
    from_atom,
    from_poly,
    internal_symbol,
    leading_coef,
    mod,
    mul,
    parse_expr,
    scale_down,
    substitute_expr,
)
from irc.shapes.intervals import INF, Interval, xfloordiv
from irc.shapes.limits import check_terms
from irc.shapes.prover import Context, bounds_of, nonneg, refine

_COMPARATORS = ("==", ">=", "<=", ">", "<")
_COMPARISON = re.compile(r"==|>=|<=|!=|=|>|<")
_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
}


@dataclass(frozen=True)
class Fact:
    """One relation between dims, ``lhs op rhs``: ``N >= 1``, ``N mod 16 ==
    0``, ``N == M``, ``i < N``. The sides accept anything :func:`as_expr`
    does. :class:`Facts` yields its facts in canonical form, where ``op`` is
    ``==``, ``>=`` or ``<=``."""

    lhs: SymExpr
    op: str
    rhs: SymExpr

    def __post_init__(self) -> None:
        if self.op not in _COMPARATORS:
            raise ShapeError(
                f"a fact compares with {', '.join(_COMPARATORS)}, not {self.op!r}"
            )
        object.__setattr__(self, "lhs", as_expr(self.lhs))
        object.__setattr__(self, "rhs", as_expr(self.rhs))

    @staticmethod
    def parse(text: str) -> Fact:
        """``"N % 16 == 0"``, ``"N <= 2**31"``, ``"i < N"``, ..."""
        matches = list(_COMPARISON.finditer(text))
        if len(matches) != 1 or matches[0].group() not in _COMPARATORS:
            raise ShapeError(
                f"cannot parse fact {text!r}: expected exactly one comparison, "
                f"one of {', '.join(_COMPARATORS)}"
            )
        match = matches[0]
        try:
            lhs = parse_expr(text[: match.start()])
            rhs = parse_expr(text[match.end() :])
        except ShapeError as err:
            raise ShapeError(f"cannot parse fact {text!r}: {err}") from None
        return Fact(lhs, match.group(), rhs)

    @property
    def symbols(self) -> frozenset[str]:
        return self.lhs.symbols | self.rhs.symbols

    def holds(self, binding: Mapping[str, int]) -> bool | None:
        """Whether the binding satisfies the fact; None if a symbol is
        unbound."""
        if not self.symbols <= binding.keys():
            return None
        return _COMPARE[self.op](self.lhs.evaluate(binding), self.rhs.evaluate(binding))

    def __str__(self) -> str:
        return f"{self.lhs} {self.op} {self.rhs}"


def _zero_form(fact: Fact) -> tuple[bool, SymExpr]:
    """``(True, d)`` for ``d == 0`` or ``(False, d)`` for ``d >= 0``."""
    difference = add(fact.lhs, -fact.rhs)
    if fact.op == "==":
        return True, difference
    if fact.op in ("<=", "<"):
        difference = -difference
    if fact.op in (">", "<"):  # strict, on integers: one more
        difference = add(difference, const_expr(-1))
    return False, difference


def _contradiction(fact: Fact) -> NoReturn:
    raise ShapeError(f"contradictory facts: {fact} can never hold")


def _solvable_symbol(d: SymExpr) -> str | None:
    """A symbol ``s`` with ``d == ±s + rest`` and no ``s`` in ``rest`` (the
    largest name, for determinism), so that ``d == 0`` defines ``s``."""
    candidates: set[str] = set()
    blocked: set[str] = set()
    for mono, coef in d._terms:
        for atom, _ in mono:
            if isinstance(atom, Op):
                blocked |= from_atom(atom).symbols
            elif mono == ((atom, 1),) and coef in (1, -1):
                candidates.add(atom)
            else:
                blocked.add(atom)
    return max(candidates - blocked, default=None)


def _solve_equalities(
    equalities: list[tuple[Fact, SymExpr]],
) -> tuple[dict[str, SymExpr], list[tuple[Fact, SymExpr]]]:
    """Turn equalities that define a symbol (``N == M``, ``N == 2*M``,
    ``N == 4``) into substitutions whose values mention no substituted
    symbol; return them and the equalities left over."""
    subst: dict[str, SymExpr] = {}
    pending = equalities
    progress = True
    while progress:
        progress = False
        unsolved = []
        for fact, d in pending:
            d = substitute_expr(d, subst)
            name = _solvable_symbol(d)
            if name is None:
                unsolved.append((fact, d))
                continue
            sign = dict(d._terms)[((name, 1),)]
            value = mul(
                add(d, mul(const_expr(-sign), internal_symbol(name))), const_expr(-sign)
            )
            subst = {k: substitute_expr(v, {name: value}) for k, v in subst.items()}
            subst[name] = value
            progress = True
        pending = unsolved
    return subst, pending


def _linear_in_one(d: SymExpr) -> tuple[str, int, int] | None:
    """``(s, c, k)`` when ``d == c*s + k``."""
    found = None
    constant = 0
    for mono, coef in d._terms:
        if not mono:
            constant = coef
        elif found is None and len(mono) == 1 and mono[0][1] == 1:
            atom = mono[0][0]
            if not isinstance(atom, str):
                return None
            found = (atom, coef)
        else:
            return None
    return None if found is None else (found[0], found[1], constant)


def _divisibility(d: SymExpr) -> tuple[str, int] | None:
    """``(s, k)`` when ``d == c * (s mod k)`` for a constant ``k``."""
    if len(d._terms) != 1:
        return None
    mono, _ = d._terms[0]
    if len(mono) != 1 or mono[0][1] != 1 or not isinstance(mono[0][0], Op):
        return None
    op = mono[0][0]
    name = op.args[0].symbol_name
    if op.kind != "mod" or name is None or not op.args[1].is_constant:
        return None
    return name, int(op.args[1])


def _normal_relation(d: SymExpr, equality: bool, fact: Fact) -> SymExpr:
    """Divide ``d >= 0`` (rounding the constant the tight way) or ``d ==
    0`` by the content of its non-constant part; an equality also gets a
    positive leading coefficient."""
    constant = constant_term(d)
    part = add(d, const_expr(-constant))
    content = coefficient_gcd(part)
    if equality:
        if constant % content:
            _contradiction(fact)
        d = add(scale_down(part, content), const_expr(constant // content))
        return -d if leading_coef(d) < 0 else d
    return add(scale_down(part, content), const_expr(constant // content))


def _split_relation(g: SymExpr, op: str) -> Fact:
    """``g op 0`` written with positive terms on each side: ``N >= M``."""
    positive: Poly = {mono: coef for mono, coef in g._terms if coef > 0}
    negative: Poly = {mono: -coef for mono, coef in g._terms if coef < 0}
    return Fact(from_poly(positive), op, from_poly(negative))


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside parentheses (``max(N, M) >= 4`` is one)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part for part in parts if part.strip()]


class _Knowledge:
    """Facts digested: substitutions for defined symbols, bounds and
    divisors of the other symbols, and general relations."""

    def __init__(self, given: list[Fact]) -> None:
        equalities = []
        inequalities = []
        for fact in given:
            equality, d = _zero_form(fact)
            (equalities if equality else inequalities).append((fact, d))
        self.subst, unsolved = _solve_equalities(equalities)
        for name, value in self.subst.items():
            # A defined symbol is still a size.
            inequalities.append(
                (Fact(internal_symbol(name), ">=", 1), add(value, const_expr(-1)))
            )
        self.low: dict[str, int] = {}
        self.high: dict[str, int] = {}
        self.div: dict[str, int] = {}
        self.ge: list[SymExpr] = []
        self.eq: list[SymExpr] = []
        for fact, d in unsolved:
            self._add_equality(fact, substitute_expr(d, self.subst))
        for fact, d in inequalities:
            self._add_inequality(fact, substitute_expr(d, self.subst))
        self._tighten(given)

    def _add_equality(self, fact: Fact, d: SymExpr) -> None:
        if d.is_constant:
            if d != 0:
                _contradiction(fact)
            return
        divisible = _divisibility(d)
        if divisible is None:
            self.eq.append(_normal_relation(d, True, fact))
            return
        name, k = divisible
        self.div[name] = math.lcm(self.div.get(name, 1), k)

    def _add_inequality(self, fact: Fact, d: SymExpr) -> None:
        if d.is_constant:
            if int(d) < 0:
                _contradiction(fact)
            return
        linear = _linear_in_one(d)
        if linear is None:
            self.ge.append(_normal_relation(d, False, fact))
            return
        name, coef, constant = linear
        if coef > 0:  # coef*s + constant >= 0  <=>  s >= ceil(-constant/coef)
            self.low[name] = max(self.low.get(name, 1), -(constant // coef))
        else:
            bound = constant // -coef
            self.high[name] = min(self.high.get(name, bound), bound)

    def _tighten(self, given: list[Fact]) -> None:
        """Round bounds to multiples of the divisor; reject empty ranges."""
        for name in self.low.keys() | self.high.keys() | self.div.keys():
            k = self.div.get(name, 1)
            self.low[name] = -(-max(self.low.get(name, 1), 1) // k) * k
            if name in self.high:
                self.high[name] = self.high[name] // k * k
                if self.low[name] > self.high[name]:
                    about = [str(f) for f in given if name in f.symbols]
                    raise ShapeError(
                        f"contradictory facts: no value of {name} >= 1 satisfies "
                        f"{', '.join(about)}"
                    )

    def fixed(self) -> list[Fact]:
        """``s == v`` for every symbol whose bounds pin it to one value."""
        return [
            Fact(internal_symbol(name), "==", low)
            for name, low in self.low.items()
            if self.high.get(name) == low
        ]

    def interval(self, name: str) -> Interval:
        high = self.high.get(name)
        return self.low.get(name, 1), INF if high is None else high


def _unlift(e: SymExpr, back: Mapping[str, tuple[str, int]]) -> SymExpr:
    """Undo :meth:`Facts._prepare`'s lifting ``N = k * N'``: ``k**j * N'**j``
    becomes ``N**j`` where the coefficient allows, ``N' = N floordiv k``
    elsewhere."""
    if not back or not e.symbols & back.keys():
        return e
    total: Poly = {}
    for mono, coef in e._terms:
        factors = []
        for atom, power in mono:
            if isinstance(atom, Op):
                args = [_unlift(arg, back) for arg in atom.args]
                factors.append(expand_power(apply_op(atom.kind, args), power))
            elif atom in back:
                name, k = back[atom]
                whole = 0
                while whole < power and coef % k == 0:
                    coef //= k
                    whole += 1
                original = internal_symbol(name)
                quotient = floordiv(original, const_expr(k))
                factors.append(
                    mul(
                        expand_power(original, whole),
                        expand_power(quotient, power - whole),
                    )
                )
            else:
                factors.append(expand_power(internal_symbol(atom), power))
        term = const_expr(coef)
        for factor in factors:
            term = mul(term, factor)
        accumulate(total, term._terms)
        check_terms(len(total), "a sum")
    return from_poly(total, "a sum")


class Facts:
    """Declared facts about symbols, used to simplify and to prove.

    Any comparison of dims is accepted (``N >= 1``, ``N <= 2**31``, ``N mod 16
    == 0``, ``N == M``, ``N == 2*K``, ``i < N``); symbol bounds, constant
    divisibility and definitions of a symbol are used fully, other relations
    ``g >= 0`` as lower bounds in proofs. Every symbol is a size, so it is
    at least 1 even in ``Facts()``. Equal and hashed by content; ``str``
    lists the facts canonically and ``Facts(str(facts)) == facts``."""

    __slots__ = ("_back", "_ctx", "_facts", "_hash", "_rewrite")

    def __init__(self, facts: Iterable[str | Fact] | str = ()) -> None:
        given = _fact_list(facts)
        knowledge = _Knowledge(given)
        while fixed := knowledge.fixed():
            given = given + fixed
            knowledge = _Knowledge(given)
        self._lift(knowledge)
        self._digest_relations(knowledge)
        self._facts = self._canonical(knowledge)
        self._hash = hash(self._facts)

    def _lift(self, knowledge: _Knowledge) -> None:
        """Prepare the rewriting that proofs start with: defined symbols by
        their definitions, and a symbol ``N`` declared divisible by ``k`` by
        ``k * N'`` with a fresh ``N'``, so that divisibility becomes
        polynomial structure (``(16*N') mod 16`` is 0 with no facts)."""
        lifted: dict[str, SymExpr] = {}
        env: dict[str, Interval] = {}
        self._back: dict[str, tuple[str, int]] = {}
        for name in knowledge.low:
            low, high = knowledge.interval(name)
            k = knowledge.div.get(name, 1)
            if k == 1:
                env[name] = (low, high)
                continue
            fresh = f"{name}/{k}"  # not an identifier: clashes with no symbol
            lifted[name] = mul(const_expr(k), internal_symbol(fresh))
            env[fresh] = (low // k, xfloordiv(high, k))
            self._back[fresh] = (name, k)
        self._rewrite = dict(lifted)
        for name, value in knowledge.subst.items():
            self._rewrite[name] = substitute_expr(value, lifted)
        self._ctx = Context(env)

    def _digest_relations(self, knowledge: _Knowledge) -> None:
        """Drop general relations that the bounds already prove, reject those
        that they refute, and hand the rest to proofs (in lifted form)."""
        relations: list[SymExpr] = []
        for equality, kept in ((False, knowledge.ge), (True, knowledge.eq)):
            survivors = []
            for g in dict.fromkeys(kept):
                lifted = self._prepare(g)
                low, high = bounds_of(lifted, self._ctx)
                if (low > 0 or high < 0) if equality else high < 0:
                    fact = _split_relation(g, "==" if equality else ">=")
                    raise ShapeError(
                        f"contradictory facts: {fact} can never hold within the "
                        "bounds of its symbols"
                    )
                if low == high == 0 if equality else low >= 0:
                    continue
                survivors.append(g)
                relations.append(lifted)
                if equality:
                    relations.append(-lifted)
            kept[:] = survivors
        self._ctx = Context(self._ctx.env, tuple(relations))

    @staticmethod
    def _canonical(knowledge: _Knowledge) -> tuple[Fact, ...]:
        facts = [
            Fact(internal_symbol(name), "==", value)
            for name, value in sorted(knowledge.subst.items())
        ]
        for name in sorted(knowledge.low):
            low, high = knowledge.interval(name)
            if low > 1:
                facts.append(Fact(internal_symbol(name), ">=", low))
            if not isinstance(high, float):
                facts.append(Fact(internal_symbol(name), "<=", high))
            k = knowledge.div.get(name, 1)
            if k > 1:
                facts.append(Fact(mod(internal_symbol(name), const_expr(k)), "==", 0))
        for op, relations in ((">=", knowledge.ge), ("==", knowledge.eq)):
            facts.extend(
                _split_relation(g, op) for g in sorted(set(relations), key=str)
            )
        return tuple(facts)

    # ----- proving --------------------------------------------------------

    def _prepare(self, e: SymExpr) -> SymExpr:
        """``e`` rewritten by definitions and lifted divisibility, then
        refined under the bounds; what every query works on."""
        return refine(substitute_expr(e, self._rewrite), self._ctx)

    def simplify(self, e: SymExpr | int | str) -> SymExpr:
        """An expression equal to ``e`` under the facts, simplified with
        them: ``N mod 16`` is 0 under ``N mod 16 == 0``, ``max(N, 1)`` is
        ``N``, a defined symbol is replaced by its definition (``e`` itself
        where that would be too large)."""
        e = as_expr(e)
        try:
            return _unlift(self._prepare(e), self._back)
        except TooLarge:
            return e

    def bounds(self, e: SymExpr | int | str) -> tuple[int | None, int | None]:
        """An interval containing ``e`` (None: unbounded on that side)."""
        e = as_expr(e)
        try:
            prepared = self._prepare(e)
        except TooLarge:  # sound, if weaker: every symbol is at least 1
            prepared = e
        low, high = bounds_of(prepared, self._ctx)
        return (
            None if isinstance(low, float) else low,
            None if isinstance(high, float) else high,
        )

    def prove_le(self, a: SymExpr | int | str, b: SymExpr | int | str) -> bool:
        """Whether ``a <= b`` holds for every binding satisfying the facts
        (False means "not proven", not "false")."""
        difference = add(as_expr(b), -as_expr(a))
        try:
            return nonneg(self._prepare(difference), self._ctx)
        except TooLarge:  # a proof step would be too large
            return False

    def prove_lt(self, a: SymExpr | int | str, b: SymExpr | int | str) -> bool:
        """Whether ``a < b`` is proven."""
        return self.prove_le(add(as_expr(a), ONE), b)

    def prove_eq(self, a: SymExpr | int | str, b: SymExpr | int | str) -> bool:
        """Whether ``a == b`` is proven."""
        difference = add(as_expr(a), -as_expr(b))
        try:
            return self._is_zero(self._prepare(difference))
        except TooLarge:
            return False

    def _is_zero(self, d: SymExpr) -> bool:
        if d == 0 or bounds_of(d, self._ctx) == (0, 0):
            return True
        return nonneg(d, self._ctx) and nonneg(-d, self._ctx)

    def prove_divisible(self, e: SymExpr | int | str, k: SymExpr | int | str) -> bool:
        """Whether ``k`` provably divides ``e``."""
        divisor = as_expr(k)
        if divisor == 0:
            raise ShapeError(f"divisibility of {e} by 0 is undefined")
        remainder = mod(as_expr(e), divisor)
        try:
            return self._is_zero(self._prepare(remainder))
        except TooLarge:
            return False

    # ----- per-symbol queries ---------------------------------------------

    def lower_bound(self, name: str) -> int:
        """The least value ``name`` may take (1 unless declared higher)."""
        low, _ = self.bounds(internal_symbol(name))
        return 1 if low is None else max(low, 1)

    def upper_bound(self, name: str) -> int | None:
        """The largest value ``name`` may take, None if unbounded."""
        return self.bounds(internal_symbol(name))[1]

    def divisor(self, name: str) -> int:
        """The largest ``k`` known to divide ``name`` (1 if none)."""
        return (
            coefficient_gcd(substitute_expr(internal_symbol(name), self._rewrite)) or 1
        )

    # ----- checking bindings ----------------------------------------------

    def check(self, binding: Mapping[str, int]) -> list[str]:
        """The facts that ``binding`` violates, as readable text; facts about
        unbound symbols are skipped."""
        violations = []
        for fact in self._facts:
            try:
                holds = fact.holds(binding)
            except ShapeError as err:
                violations.append(f"{fact} (cannot evaluate: {err})")
                continue
            if holds is False:
                violations.append(f"{fact} ({_shown(fact.symbols, binding)})")
        lowered = {f.lhs.symbol_name for f in self._facts if f.op in (">=", "==")} - {
            None
        }
        for name in sorted(binding.keys() - lowered):
            value = binding[name]
            if isinstance(value, numbers.Integral) and value < 1:
                violations.append(f"{name} >= 1 ({name} = {value})")
        return violations

    # ----- protocols ------------------------------------------------------

    @property
    def is_empty(self) -> bool:
        """Whether nothing beyond "every symbol is at least 1" is known."""
        return not self._facts

    def __iter__(self) -> Iterator[Fact]:
        return iter(self._facts)

    def __str__(self) -> str:
        return ", ".join(str(fact) for fact in self._facts)

    def __repr__(self) -> str:
        return f"Facts({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Facts):
            return NotImplemented
        return self._facts == other._facts

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Facts], tuple[str]]:
        return (Facts, (str(self),))


def _fact_list(facts: Iterable[str | Fact] | str) -> list[Fact]:
    if isinstance(facts, str):
        facts = _split_top_level(facts)
    parsed = []
    for fact in facts:
        if isinstance(fact, str):
            parsed.append(Fact.parse(fact))
        elif isinstance(fact, Fact):
            parsed.append(fact)
        else:
            raise ShapeError(f"not a fact: {fact!r} (expected a str or a Fact)")
    return parsed


def _shown(names: Iterable[str], binding: Mapping[str, int]) -> str:
    return ", ".join(f"{name} = {binding[name]}" for name in sorted(names))
