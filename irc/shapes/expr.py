"""Symbolic integer expressions in canonical form: :class:`SymExpr`.

A dim is an ``int`` or a :class:`SymExpr` over named symbols: ``N``, ``B*H``,
``(N + 127) floordiv 128``. Verifiers compare dims structurally, so a
:class:`SymExpr` is kept in one canonical form, built once at construction: a
polynomial with integer coefficients over *atoms*, where an atom is a symbol
or a ``floordiv``, ``mod``, ``max`` or ``min`` of canonical expressions (an
:class:`Op`). Equal canonical forms have equal values under every binding;
the converse cannot hold in general, so whatever needs more asks
:class:`~irc.shapes.Facts`, which proves what the declared facts about the
symbols allow.

Two conventions keep the algebra sound:

- ``floordiv`` and ``mod`` follow Python: the quotient rounds towards minus
  infinity and the remainder has the sign of the divisor;
- symbols are sizes, so a symbolic divisor is assumed positive (``ceildiv`` and
  nested ``floordiv`` rely on it); constant divisors may have either sign.

This module holds the normal form (monomials, their order, the terms of a
:class:`SymExpr`), the arithmetic on it (``+ - * // % **``, ``ceildiv``,
:func:`smax`, :func:`smin`, exact division), substitution, evaluation,
printing (``str`` and :meth:`SymExpr.to_python`) and :func:`parse_expr`,
which reads the syntax of :mod:`irc.shapes.parse` back into the normal form.
Every operation keeps within the caps of :mod:`irc.shapes.limits`.

The underscored functions (``add``, ``mul``, ``floordiv``, ``top_atoms``,
...) and the terms ``SymExpr._terms`` are the interface of the normal form to
the prover and the facts of :mod:`irc.shapes`, not to the rest of irc.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import keyword
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import NoReturn, Protocol, TypeAlias

from irc.shapes.errors import ShapeError, TooLarge
from irc.shapes.limits import (
    MAX_COEF_BITS,
    MAX_COEF_DIGITS,
    MAX_CONSTANT_EXPONENT,
    MAX_DEGREE,
    MAX_EXPONENT,
    MAX_PRODUCT_WORK,
    MAX_WEIGHT,
    check_coefficient,
    check_terms,
    constant_too_large,
    too_high,
    too_long,
    too_much_work,
)
from irc.shapes.parse import IDENTIFIER, RESERVED, Primaries, parse_with

# --------------------------------------------------------------------------
# Atoms and monomials
# --------------------------------------------------------------------------

DIVMOD = ("floordiv", "mod")
_KIND_RANK = {"floordiv": 0, "mod": 1, "max": 2, "min": 3}


class Op:
    """A non-polynomial atom: ``floordiv``/``mod`` of (numerator, divisor), or
    ``max``/``min`` of two or more arguments. Arguments are canonical and, for
    ``max``/``min``, sorted, so structural equality is value equality of the
    canonical forms."""

    __slots__ = ("_hash", "_key", "args", "kind", "weight")

    def __init__(self, kind: str, args: tuple[SymExpr, ...]) -> None:
        self.kind = kind
        self.args = args
        self._hash = hash((kind, args))
        self._key: tuple[int, int, str] | None = None
        self.weight = 1 + sum(_weight(arg) for arg in args)

    @property
    def key(self) -> tuple[int, int, str]:
        """Sort key: after every symbol, by kind, then by printed text (the
        text is injective on canonical atoms, so the order is total)."""
        if self._key is None:
            self._key = (1, _KIND_RANK[self.kind], _format_op(self, python=False))
        return self._key

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Op)
            and self._hash == other._hash
            and self.kind == other.kind
            and self.args == other.args
        )

    def __hash__(self) -> int:
        return self._hash


Atom: TypeAlias = "str | Op"
Mono: TypeAlias = "tuple[tuple[Atom, int], ...]"
Poly: TypeAlias = "dict[Mono, int]"
_Terms: TypeAlias = "tuple[tuple[Mono, int], ...]"


def _atom_key(atom: Atom) -> tuple[int, str] | tuple[int, int, str]:
    return (0, atom) if isinstance(atom, str) else atom.key


@functools.lru_cache(maxsize=16384)
def mono_key(mono: Mono) -> tuple[int, tuple[object, ...]]:
    """Higher degree first, then lexicographic on the sorted atoms, each
    repeated as often as its power.

    This is a monomial order (compatible with multiplication), which the
    division algorithm needs; it is also the printing order, so sums print
    as ``M*N + 2*N - 1``. The key pairs each atom with its negated power
    rather than repeating it: for equal degrees that compares the same way
    (a higher power of an atom puts it where the other monomial has a later
    atom), at a cost independent of the degree."""
    degree = 0
    atoms = []
    for atom, power in mono:
        degree += power
        atoms.append((_atom_key(atom), -power))
    return -degree, tuple(atoms)


def _mono_degree(mono: Mono) -> int:
    return sum(power for _, power in mono)


def _mono_mul(a: Mono, b: Mono) -> Mono:
    """``a * b``. Multiplied into the longer monomial, whose atoms it mostly
    keeps, so the atoms seldom need sorting again."""
    if not a:
        return b
    if not b:
        return a
    if len(a) < len(b):
        a, b = b, a
    powers = dict(a)
    grown = False
    for atom, power in b:
        if atom in powers:
            powers[atom] += power
        else:
            powers[atom] = power
            grown = True
    if not grown:  # the atoms of `a`, in their order
        return tuple(powers.items())
    return tuple(sorted(powers.items(), key=lambda item: _atom_key(item[0])))


def _mono_div(a: Mono, b: Mono) -> Mono | None:
    """``a / b`` when ``b`` divides ``a``, else None."""
    powers = dict(a)
    for atom, power in b:
        left = powers.get(atom, 0) - power
        if left < 0:
            return None
        powers[atom] = left
    return tuple((atom, powers[atom]) for atom, _ in a if powers[atom])


def accumulate(
    acc: Poly, terms: Iterable[tuple[Mono, int]], scale: int = 1, by: Mono = ()
) -> None:
    """``acc += scale * by * terms``, dropping terms that cancel."""
    for mono, coef in terms:
        key = _mono_mul(mono, by)
        value = acc.get(key, 0) + scale * coef
        if value:
            acc[key] = value
        else:
            acc.pop(key, None)


def _poly_mul(a: Iterable[tuple[Mono, int]], b: Poly) -> Poly:
    acc: Poly = {}
    for mono, coef in a:
        accumulate(acc, b.items(), coef, mono)
    return acc


# --------------------------------------------------------------------------
# SymExpr
# --------------------------------------------------------------------------


class SymExpr:
    """An immutable, hashable symbolic integer expression in canonical form.

    Build one with :meth:`const`, :meth:`symbol`, :func:`parse_expr` or
    :func:`as_expr`, then combine with ``+ - * // %``, :meth:`ceildiv`,
    :func:`smax` and :func:`smin`. A constant expression equals and hashes
    like its ``int``. ``__index__`` is deliberately missing, so that a
    symbolic dim is never silently used as a Python int.
    """

    __slots__ = ("_hash", "_symbols", "_terms", "_text", "_weight")

    _terms: _Terms
    _hash: int | None
    _text: str | None
    _symbols: frozenset[str] | None
    _weight: int | None

    def __init__(self) -> None:
        raise TypeError(
            "build a SymExpr with SymExpr.const, SymExpr.symbol, parse_expr or as_expr"
        )

    @classmethod
    def _new(cls, terms: _Terms) -> SymExpr:
        self = object.__new__(cls)
        self._terms = terms
        # Hashed on demand: hashing is linear in the size, which would make
        # a long sum built term by term quadratic.
        self._hash = None
        self._text = None
        self._symbols = None
        self._weight = None
        return self

    # ----- construction ---------------------------------------------------

    @staticmethod
    def const(value: int) -> SymExpr:
        """The constant ``value`` (any integral number but ``bool``)."""
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ShapeError(f"a constant dim must be an int, not {value!r}")
        return const_expr(int(value))

    @staticmethod
    def symbol(name: str) -> SymExpr:
        """The symbol ``name``: an identifier that is neither one of the
        keywords of shape expressions nor a Python keyword, because symbol
        names reach emitted Python source."""
        if not isinstance(name, str) or not IDENTIFIER.fullmatch(name):
            raise ShapeError(
                f"invalid symbol name {name!r}: expected an identifier "
                "[A-Za-z_][A-Za-z0-9_]*"
            )
        if name in RESERVED:
            raise ShapeError(
                f"invalid symbol name {name!r}: it is a keyword of shape expressions"
            )
        if keyword.iskeyword(name):
            raise ShapeError(f"invalid symbol name {name!r}: it is a Python keyword")
        return internal_symbol(name)

    # ----- inspection -----------------------------------------------------

    @property
    def is_constant(self) -> bool:
        return not self._terms or (len(self._terms) == 1 and not self._terms[0][0])

    @property
    def constant(self) -> int | None:
        """The value if the expression is constant, else None."""
        if not self._terms:
            return 0
        if len(self._terms) == 1 and not self._terms[0][0]:
            return self._terms[0][1]
        return None

    @property
    def symbol_name(self) -> str | None:
        """The name if the expression is one symbol alone (``N``, not ``2*N``)."""
        if len(self._terms) == 1:
            mono, coef = self._terms[0]
            if coef == 1 and len(mono) == 1 and mono[0][1] == 1:
                atom = mono[0][0]
                if isinstance(atom, str):
                    return atom
        return None

    @property
    def symbols(self) -> frozenset[str]:
        """Every symbol the expression mentions, inside atoms too."""
        if self._symbols is None:
            names: set[str] = set()
            for atom in top_atoms(self):
                if isinstance(atom, str):
                    names.add(atom)
                else:
                    for arg in atom.args:
                        names |= arg.symbols
            self._symbols = frozenset(names)
        return self._symbols

    def _single_op(self) -> Op | None:
        """The atom if the expression is exactly one ``Op`` atom."""
        if len(self._terms) == 1:
            mono, coef = self._terms[0]
            if coef == 1 and len(mono) == 1 and mono[0][1] == 1:
                atom = mono[0][0]
                if isinstance(atom, Op):
                    return atom
        return None

    # ----- arithmetic -----------------------------------------------------

    def __add__(self, other: SymExpr | int) -> SymExpr:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else add(self, rhs)

    __radd__ = __add__

    def __sub__(self, other: SymExpr | int) -> SymExpr:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else add(self, -rhs)

    def __rsub__(self, other: SymExpr | int) -> SymExpr:
        lhs = _coerce(other)
        return NotImplemented if lhs is None else add(lhs, -self)

    def __mul__(self, other: SymExpr | int) -> SymExpr:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else mul(self, rhs)

    __rmul__ = __mul__

    def __neg__(self) -> SymExpr:
        return SymExpr._new(tuple((mono, -coef) for mono, coef in self._terms))

    def __floordiv__(self, other: SymExpr | int) -> SymExpr:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else floordiv(self, rhs)

    def __rfloordiv__(self, other: SymExpr | int) -> SymExpr:
        lhs = _coerce(other)
        return NotImplemented if lhs is None else floordiv(lhs, self)

    def __mod__(self, other: SymExpr | int) -> SymExpr:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else mod(self, rhs)

    def __rmod__(self, other: SymExpr | int) -> SymExpr:
        lhs = _coerce(other)
        return NotImplemented if lhs is None else mod(lhs, self)

    def __pow__(self, exponent: int) -> SymExpr:
        if isinstance(exponent, bool) or not isinstance(exponent, int):
            raise ShapeError(f"exponent must be an int, not {exponent!r}")
        return _checked_power(self, exponent)

    def ceildiv(self, other: SymExpr | int) -> SymExpr:
        """``ceil(self / other)``, as ``(self + other - 1) floordiv other``
        for a positive (or symbolic) divisor."""
        return _ceildiv(self, as_expr(other))

    def exact_div(
        self, other: SymExpr | int, facts: _DivisibilityFacts | None = None
    ) -> SymExpr:
        """``self / other`` when the division is provably exact.

        Exact polynomial division needs no facts (``(N*768).exact_div(64)``
        is ``12*N``); with ``facts`` the declared divisibility is used too
        (``N.exact_div(16)`` is ``N floordiv 16`` under ``N mod 16 == 0``).
        Raises :class:`ShapeError` saying why otherwise."""
        divisor = as_expr(other)
        if divisor == 0:
            raise ShapeError(f"cannot divide {self} by 0")
        quotient = _exact_quotient(self, divisor)
        if quotient is not None:
            return quotient
        if facts is not None and facts.prove_divisible(self, divisor):
            return facts.simplify(floordiv(self, divisor))
        reason = f"{self} is not divisible by {divisor}"
        if facts is not None and not facts.is_empty:
            raise ShapeError(f"{reason} under the facts {facts}")
        if divisor.is_constant and self.symbols:
            example = f"{min(self.symbols)} mod {divisor} == 0"
            raise ShapeError(
                f"{reason}; declare a fact such as '{example}' if it holds"
            )
        raise ShapeError(reason)

    # ----- evaluation and rewriting ---------------------------------------

    def evaluate(self, binding: Mapping[str, int]) -> int:
        """The value under ``binding``; every symbol needs an int value."""
        missing = sorted(self.symbols - binding.keys())
        if missing:
            raise ShapeError(
                f"cannot evaluate {self}: no value for {', '.join(missing)}"
            )
        values: dict[str, int] = {}
        for name in self.symbols:
            value = binding[name]
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise ShapeError(
                    f"cannot evaluate {self}: {name} = {value!r} is not an int"
                )
            values[name] = int(value)
        return _evaluate(self, values)

    def substitute(self, mapping: Mapping[str, SymExpr | int | str]) -> SymExpr:
        """Replace symbols by expressions, then re-canonicalise."""
        if not self.symbols & mapping.keys():
            return self
        values = {name: as_expr(value) for name, value in mapping.items()}
        return substitute_expr(self, values)

    def to_python(self) -> str:
        """Python expression text (``//``, ``%``, ``max()``, ``min()``, bare
        symbol names) for launchers; it evaluates like :meth:`evaluate`."""
        return _format(self, python=True)

    # ----- protocols ------------------------------------------------------

    def __str__(self) -> str:
        if self._text is None:
            self._text = _format(self, python=False)
        return self._text

    def __repr__(self) -> str:
        return f"SymExpr('{self}')"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SymExpr):
            return self is other or (
                hash(self) == hash(other) and self._terms == other._terms
            )
        if isinstance(other, numbers.Integral):
            return self.constant == other
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            value = self.constant
            self._hash = hash(self._terms) if value is None else hash(value)
        return self._hash

    def __int__(self) -> int:
        value = self.constant
        if value is None:
            raise ShapeError(f"{self} is symbolic, not an int")
        return value

    def __reduce__(self) -> tuple[Callable[[str], SymExpr], tuple[str]]:
        # Hashes of strings differ between processes: rebuild from the text.
        return (parse_expr, (str(self),))

    def __copy__(self) -> SymExpr:
        return self

    def __deepcopy__(self, memo: object) -> SymExpr:
        return self


Dim: TypeAlias = int | SymExpr


class _DivisibilityFacts(Protocol):
    """What :meth:`SymExpr.exact_div` asks of :class:`~irc.shapes.Facts`."""

    @property
    def is_empty(self) -> bool: ...

    def prove_divisible(self, e: SymExpr, k: SymExpr) -> bool: ...

    def simplify(self, e: SymExpr) -> SymExpr: ...


def from_poly(poly: Mapping[Mono, int], subject: str = "an expression") -> SymExpr:
    """The canonical expression of ``poly``, refused if over the caps on the
    number of terms and the size of coefficients (the caller checks the
    degree, which only products raise)."""
    check_terms(len(poly), subject)
    if poly:
        check_coefficient(max(max(poly.values()), -min(poly.values())), subject)
    monos = sorted(poly, key=mono_key)
    return SymExpr._new(tuple((mono, poly[mono]) for mono in monos if poly[mono]))


def const_expr(value: int) -> SymExpr:
    if value.bit_length() > MAX_COEF_BITS:
        raise constant_too_large()
    return SymExpr._new((((), value),) if value else ())


def internal_symbol(name: str) -> SymExpr:
    """A symbol without validating the name (internal names need not be
    identifiers: that is what keeps them from clashing with a user's)."""
    return from_atom(name)


def from_atom(atom: Atom) -> SymExpr:
    return SymExpr._new(((((atom, 1),), 1),))


_ZERO = const_expr(0)
ONE = const_expr(1)


def _coerce(value: object) -> SymExpr | None:
    if isinstance(value, SymExpr):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return const_expr(int(value))
    return None


def top_atoms(e: SymExpr) -> list[Atom]:
    return list(dict.fromkeys(atom for mono, _ in e._terms for atom, _ in mono))


def has_ops(e: SymExpr) -> bool:
    return any(isinstance(atom, Op) for atom in top_atoms(e))


def _weight(e: SymExpr) -> int:
    """About how long ``e`` is written out: one per term, plus each atom as
    often as its power, an operation weighing one more than its arguments."""
    if e._weight is None:
        e._weight = sum(
            1
            + sum(
                power * (1 if isinstance(atom, str) else atom.weight)
                for atom, power in mono
            )
            for mono, _ in e._terms
        )
    return e._weight


def _degree(e: SymExpr) -> int:
    """The total degree: that of the first term, as terms are sorted by
    decreasing degree."""
    return _mono_degree(e._terms[0][0]) if e._terms else 0


# How many terms `add` places one by one rather than re-sorting all.
_FEW_TERMS = 8


def add(a: SymExpr, b: SymExpr) -> SymExpr:
    if not b._terms:
        return a
    if not a._terms:
        return b
    if len(a._terms) < len(b._terms):
        a, b = b, a
    if len(b._terms) > _FEW_TERMS:
        acc = dict(a._terms)
        accumulate(acc, b._terms)
        return from_poly(acc, "a sum")
    # A few terms are placed by binary search, so that a long sum built one
    # term at a time (as parsers do) takes linear time, not quadratic.
    terms = list(a._terms)
    for mono, coef in b._terms:
        key = mono_key(mono)
        index = bisect.bisect_left(terms, key, key=_term_key)
        if index < len(terms) and terms[index][0] == mono:
            coef += terms[index][1]
            if coef:
                terms[index] = (mono, coef)
            else:
                del terms[index]
        else:
            terms.insert(index, (mono, coef))
        check_coefficient(coef, "a sum")
    check_terms(len(terms), "a sum")
    return SymExpr._new(tuple(terms))


def _term_key(term: tuple[Mono, int]) -> tuple[int, tuple[object, ...]]:
    return mono_key(term[0])


def mul(a: SymExpr, b: SymExpr) -> SymExpr:
    """``a * b``, refused before any work when it would take too many
    products of terms or have too high a degree."""
    if not a._terms or not b._terms:
        return _ZERO
    m, n = len(a._terms), len(b._terms)
    if m * n > MAX_PRODUCT_WORK:
        raise too_much_work(f"multiplying expressions of {m} and {n} terms")
    degree = _degree(a) + _degree(b)
    if degree > MAX_DEGREE:
        raise too_high(degree, "a product")
    product = from_poly(_poly_mul(a._terms, dict(b._terms)), "a product")
    # A product of two terms weighs at most the sum of their weights.
    bound = n * _weight(a) + m * _weight(b)
    if bound > MAX_WEIGHT and _weight(product) > MAX_WEIGHT:
        raise too_long("a product")
    return product


def expand_power(base: SymExpr, exponent: int) -> SymExpr:
    """``base ** exponent`` by repeated squaring: at most two products per bit
    of the exponent, each checked against the caps as it is computed, so a
    power far too large to expand is refused at little cost."""
    value = base.constant
    if value is not None:
        # |value|**exponent has more than (bit_length - 1) * exponent bits.
        if (abs(value).bit_length() - 1) * exponent >= MAX_COEF_BITS:
            raise TooLarge(
                _power_text(base, exponent), f"has more than {MAX_COEF_BITS} bits"
            )
        return const_expr(value**exponent)
    if exponent == 0:
        return ONE
    degree = _degree(base) * exponent
    if degree > MAX_DEGREE:
        raise too_high(degree, _power_text(base, exponent))
    result = base
    try:
        for bit in bin(exponent)[3:]:
            result = mul(result, result)
            if bit == "1":
                result = mul(result, base)
    except TooLarge as err:
        raise TooLarge(_power_text(base, exponent), err.excess) from None
    return result


def _power_text(base: SymExpr, exponent: int) -> str:
    """``base**exponent`` for a message, the base shortened if long."""
    text = str(base)
    if len(text) > 40:
        text = f"({text[:36]} ...)"
    elif not _is_primary(base):
        text = f"({text})"
    return f"{text}**{exponent}"


def _checked_power(base: SymExpr, exponent: int) -> SymExpr:
    if exponent < 0:
        raise ShapeError(f"negative exponent {exponent}: dims are integers")
    limit = MAX_CONSTANT_EXPONENT if base.is_constant else MAX_EXPONENT
    if exponent > limit:
        raise ShapeError(f"exponent {exponent} is too large (at most {limit})")
    return expand_power(base, exponent)


def coefficient_gcd(e: SymExpr) -> int:
    """The gcd of all coefficients (0 for the zero expression)."""
    return math.gcd(*(coef for _, coef in e._terms))


def scale_down(e: SymExpr, factor: int) -> SymExpr:
    return SymExpr._new(tuple((mono, coef // factor) for mono, coef in e._terms))


def leading_coef(e: SymExpr) -> int:
    return e._terms[0][1] if e._terms else 0


def constant_term(e: SymExpr) -> int:
    if e._terms and not e._terms[-1][0]:
        return e._terms[-1][1]
    return 0


# --------------------------------------------------------------------------
# Division, modulo, max and min
# --------------------------------------------------------------------------


def _divmod_poly(p: SymExpr, q: SymExpr) -> tuple[SymExpr, SymExpr]:
    """``(s, r)`` with ``p == q*s + r``, by the division algorithm over the
    integers with floor division of leading coefficients (``q``'s leading
    coefficient must be positive).

    With a constant ``q = c`` every coefficient of ``r`` lies in ``[0, c)``,
    which makes ``p floordiv c`` and ``p mod c`` canonical; with a symbolic
    ``q`` the terms of ``r`` that the leading term of ``q`` divides have
    coefficients in ``[0, lc(q))``."""
    (lead, lead_coef), tail = q._terms[0], q._terms[1:]
    work: Poly = dict(p._terms)
    # The monomials of `work`, largest first in the monomial order. Keys are
    # injective, so an entry's monomial is only compared with an equal one.
    # An entry whose monomial has cancelled out since is skipped when popped.
    pending = [(mono_key(mono), mono) for mono in work]
    heapq.heapify(pending)
    quotient: Poly = {}
    remainder: Poly = {}
    work_done = 0
    while pending:
        mono = heapq.heappop(pending)[1]
        coef = work.pop(mono, 0)
        if not coef:
            continue
        factor = _mono_div(mono, lead)
        if factor is None:
            remainder[mono] = coef
            check_terms(len(remainder), "a remainder")
            continue
        times, rest = divmod(coef, lead_coef)
        if rest:
            remainder[mono] = rest
            check_terms(len(remainder), "a remainder")
        if not times:
            continue
        quotient[factor] = times
        check_terms(len(quotient), "a quotient")
        check_coefficient(times, "a quotient")
        work_done += len(tail)
        if work_done > MAX_PRODUCT_WORK:
            raise too_much_work(f"dividing by an expression of {len(q._terms)} terms")
        # The tail of q times factor is below mono in the monomial order, so
        # it only changes terms not yet visited.
        for tail_mono, tail_coef in tail:
            key = _mono_mul(tail_mono, factor)
            value = work.get(key, 0) - times * tail_coef
            if not value:
                work.pop(key, None)
                continue
            if key not in work:
                heapq.heappush(pending, (mono_key(key), key))
            work[key] = value
    return from_poly(quotient, "a quotient"), from_poly(remainder, "a remainder")


def _exact_quotient(p: SymExpr, q: SymExpr) -> SymExpr | None:
    """``p / q`` when it is a polynomial with integer coefficients."""
    if leading_coef(q) < 0:
        p, q = -p, -q
    quotient, remainder = _divmod_poly(p, q)
    return quotient if not remainder._terms else None


def _division_by_zero(p: SymExpr, kind: str) -> NoReturn:
    raise ShapeError(f"division by zero: {p} {kind} 0")


def floordiv(p: SymExpr, q: SymExpr) -> SymExpr:
    if not q._terms:
        _division_by_zero(p, "floordiv")
    if q._terms[0][1] < 0:
        p, q = -p, -q
    quotient, remainder = _divmod_poly(p, q)
    if not remainder._terms:
        return quotient
    return add(quotient, _floordiv_atom(remainder, q))


def _floordiv_atom(r: SymExpr, q: SymExpr) -> SymExpr:
    """``r floordiv q`` for a reduced ``r`` and a positive ``q``."""
    if r.is_constant and q.is_constant:
        return const_expr(int(r) // int(q))
    common = math.gcd(coefficient_gcd(r), coefficient_gcd(q))
    if common > 1:
        r, q = scale_down(r, common), scale_down(q, common)
    symbols = _common_symbols(r, q)
    if symbols:
        # floor(s*a / (s*b)) == floor(a / b) for a nonzero size s (at s = 0
        # the original divides by zero): ``(-M*M) floordiv (M*N)``, a row of
        # a reshape, is ``(-M) floordiv N``, which the prover bounds by -M.
        return floordiv(_divide_out(r, symbols), _divide_out(q, symbols))
    inner, shift = _floordiv_plus_constant(r)
    if inner is not None:
        # floor((floor(a / b) + k) / q) == floor((a + k*b) / (b*q)) for an
        # integer k and a positive q: nested divisions of sizes (a slice of
        # a slice with steps) become one, so their bounds compare.
        a, b = inner.args
        return floordiv(add(a, mul(const_expr(shift), b)), mul(b, q))
    return from_atom(Op("floordiv", (r, q)))


def _common_symbols(a: SymExpr, b: SymExpr) -> dict[str, int]:
    """The symbols (not other atoms: only sizes have a known sign) that
    divide every term of ``a`` and ``b``, with the least power in which
    each appears."""
    common: dict[str, int] | None = None
    for mono, _ in (*a._terms, *b._terms):
        powers = {atom: power for atom, power in mono if isinstance(atom, str)}
        if common is None:
            common = powers
        else:
            common = {
                atom: min(power, powers[atom])
                for atom, power in common.items()
                if atom in powers
            }
        if not common:
            return {}
    return common or {}


def _divide_out(e: SymExpr, symbols: Mapping[str, int]) -> SymExpr:
    """``e`` divided by the product of ``symbols``' powers, which divides
    each of its terms."""
    poly: Poly = {}
    for mono, coef in e._terms:
        reduced = []
        for atom, power in mono:
            left = power - (symbols.get(atom, 0) if isinstance(atom, str) else 0)
            if left:
                reduced.append((atom, left))
        poly[tuple(reduced)] = coef
    return from_poly(poly)


def _floordiv_plus_constant(r: SymExpr) -> tuple[Op | None, int]:
    """``(atom, k)`` when ``r`` is ``atom + k`` for a floordiv atom and an
    integer ``k`` (0 included), else ``(None, 0)``."""
    constant = sum(coef for mono, coef in r._terms if not mono)
    rest = SymExpr._new(tuple(term for term in r._terms if term[0]))
    inner = rest._single_op()
    if inner is None or inner.kind != "floordiv":
        return None, 0
    return inner, constant


def mod(p: SymExpr, q: SymExpr) -> SymExpr:
    if not q._terms:
        _division_by_zero(p, "mod")
    if q._terms[0][1] < 0:
        return -mod(-p, -q)
    _, r = _divmod_poly(p, q)
    if not r._terms:
        return _ZERO
    if r.is_constant and q.is_constant:
        return const_expr(int(r) % int(q))
    common = math.gcd(coefficient_gcd(r), coefficient_gcd(q))
    if common > 1:
        r, q = scale_down(r, common), scale_down(q, common)
    inner = r._single_op()
    if (
        inner is not None
        and inner.kind == "mod"
        and _exact_quotient(inner.args[1], q) is not None
    ):
        # (a mod b) mod q == a mod q when q divides b.
        result = mod(inner.args[0], q)
    else:
        result = from_atom(Op("mod", (r, q)))
    return mul(const_expr(common), result) if common > 1 else result


def _ceildiv(p: SymExpr, q: SymExpr) -> SymExpr:
    if not q._terms:
        _division_by_zero(p, "ceildiv")
    if q.is_constant and int(q) < 0:
        return -floordiv(-p, q)
    return floordiv(add(p, add(q, const_expr(-1))), q)


def minmax(kind: str, args: Iterable[SymExpr]) -> SymExpr:
    """Canonical n-ary ``max``/``min``: nested ones of the same kind are
    flattened, and of two arguments that differ by a constant only the
    winner stays (so ``max(N, N + 2)`` is ``N + 2``); the rest are sorted.
    Flattening is what makes the printed, binary and nested form
    ``max(a, max(b, c))`` parse back to the same atom."""
    # Two arguments differ by a constant when their terms but the constant
    # one agree: keyed by those, each argument meets its rival in one step.
    kept: dict[_Terms, SymExpr] = {}
    for arg in args:
        inner = arg._single_op()
        for candidate in inner.args if inner and inner.kind == kind else (arg,):
            terms = candidate._terms
            variable = terms[:-1] if terms and not terms[-1][0] else terms
            rival = kept.get(variable)
            if rival is None or (
                constant_term(candidate) > constant_term(rival)
                if kind == "max"
                else constant_term(candidate) < constant_term(rival)
            ):
                kept[variable] = candidate
    if len(kept) == 1:
        return next(iter(kept.values()))
    return from_atom(Op(kind, tuple(sorted(kept.values(), key=str))))


def smax(a: SymExpr | int, b: SymExpr | int, *more: SymExpr | int) -> SymExpr:
    """Symbolic ``max`` of dims (folded when the arguments differ by a
    constant)."""
    return minmax("max", [as_expr(x) for x in (a, b, *more)])


def smin(a: SymExpr | int, b: SymExpr | int, *more: SymExpr | int) -> SymExpr:
    """Symbolic ``min`` of dims (folded when the arguments differ by a
    constant)."""
    return minmax("min", [as_expr(x) for x in (a, b, *more)])


def apply_op(kind: str, args: list[SymExpr]) -> SymExpr:
    if kind == "floordiv":
        return floordiv(args[0], args[1])
    if kind == "mod":
        return mod(args[0], args[1])
    return minmax(kind, args)


def map_atoms(
    e: SymExpr,
    on_symbol: Callable[[str], SymExpr],
    on_op: Callable[[Op], SymExpr],
) -> SymExpr:
    """Rebuild ``e`` with every top-level atom replaced by an expression."""
    total: Poly = {}
    for mono, coef in e._terms:
        term = const_expr(coef)
        for atom, power in mono:
            value = on_symbol(atom) if isinstance(atom, str) else on_op(atom)
            term = mul(term, expand_power(value, power))
        accumulate(total, term._terms)
        check_terms(len(total), "a sum")
    return from_poly(total, "a sum")


def substitute_expr(e: SymExpr, values: Mapping[str, SymExpr]) -> SymExpr:
    def on_op(op: Op) -> SymExpr:
        return apply_op(op.kind, [substitute_expr(arg, values) for arg in op.args])

    def on_symbol(name: str) -> SymExpr:
        return values[name] if name in values else internal_symbol(name)

    if not e.symbols & values.keys():
        return e
    return map_atoms(e, on_symbol, on_op)


def _evaluate(e: SymExpr, binding: Mapping[str, int]) -> int:
    total = 0
    for mono, coef in e._terms:
        value = coef
        for atom, power in mono:
            value *= _evaluate_atom(atom, binding) ** power
        total += value
    return total


def _evaluate_atom(atom: Atom, binding: Mapping[str, int]) -> int:
    if isinstance(atom, str):
        return binding[atom]
    values = [_evaluate(arg, binding) for arg in atom.args]
    if atom.kind == "max":
        return max(values)
    if atom.kind == "min":
        return min(values)
    numerator, divisor = values
    if divisor == 0:
        shown = ", ".join(f"{name} = {binding[name]}" for name in sorted(binding))
        raise ShapeError(
            f"division by zero evaluating {_format_op(atom, python=False)} with {shown}"
        )
    return numerator // divisor if atom.kind == "floordiv" else numerator % divisor


def as_expr(d: int | str | SymExpr) -> SymExpr:
    """A dim as a :class:`SymExpr`: ints become constants, strings are
    parsed (so ``"N"`` and ``"N*4"`` both work)."""
    if isinstance(d, str):
        return parse_expr(d)
    value = _coerce(d)
    if value is None:
        raise ShapeError(f"not a dim: {d!r} (expected an int, a str or a SymExpr)")
    return value


def as_dim(d: int | str | SymExpr) -> Dim:
    """A dim in its plainest form: an ``int`` when it is constant."""
    value = as_expr(d)
    constant = value.constant
    return value if constant is None else constant


# --------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------


def _format(e: SymExpr, python: bool) -> str:
    if not e._terms:
        return "0"
    parts = []
    for index, (mono, coef) in enumerate(e._terms):
        first = index == 0
        body = _format_term(mono, abs(coef), python, lead_minus=first and coef < 0)
        if first:
            parts.append(f"-{body}" if coef < 0 else body)
        else:
            parts.append(f" - {body}" if coef < 0 else f" + {body}")
    return "".join(parts)


def _format_term(mono: Mono, coef: int, python: bool, lead_minus: bool) -> str:
    factors = [str(coef)] if coef != 1 or not mono else []
    # A floordiv/mod in a product, or after a leading minus, needs
    # parentheses: `-N floordiv 4` would read as `(-N) floordiv 4`.
    wrap = lead_minus or len(factors) + sum(power for _, power in mono) > 1
    for atom, power in mono:
        text = _format_atom(atom, python)
        if wrap and isinstance(atom, Op) and atom.kind in DIVMOD:
            text = f"({text})"
        factors.extend([text] * power)
    return "*".join(factors)


def _format_atom(atom: Atom, python: bool) -> str:
    if isinstance(atom, str):
        return atom
    if not python and atom._key is not None:
        return atom._key[2]
    return _format_op(atom, python)


def _text(e: SymExpr, python: bool) -> str:
    return e.to_python() if python else str(e)


def _format_op(op: Op, python: bool) -> str:
    if op.kind in ("max", "min"):
        texts = [_text(arg, python) for arg in op.args]
        if python:
            return f"{op.kind}({', '.join(texts)})"
        # Binary and right-nested, the form the xDSL-side parser reads.
        text = texts[-1]
        for arg_text in reversed(texts[:-1]):
            text = f"{op.kind}({arg_text}, {text})"
        return text
    numerator, divisor = op.args
    num_text = _text(numerator, python)
    if not _is_primary(numerator):
        num_text = f"({num_text})"
    div_text = _text(divisor, python)
    if not _is_primary(divisor):
        div_text = f"({div_text})"
    spelling = {"floordiv": "//", "mod": "%"} if python else _SPELLING
    return f"{num_text} {spelling[op.kind]} {div_text}"


_SPELLING = {"floordiv": "floordiv", "mod": "mod"}


def _is_primary(e: SymExpr) -> bool:
    """Whether ``e`` prints as an operand of ``floordiv``/``mod`` with no
    parentheses: a non-negative constant, a symbol, or a max/min. Anything
    else gets them, even where precedence would not need them, so that
    ``(3*N) floordiv 4`` reads unambiguously."""
    constant = e.constant
    if constant is not None:
        return constant >= 0
    if len(e._terms) != 1:
        return False
    mono, coef = e._terms[0]
    if coef != 1 or len(mono) != 1 or mono[0][1] != 1:
        return False
    atom = mono[0][0]
    return isinstance(atom, str) or atom.kind in ("max", "min")


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------


def parse_expr(text: str) -> SymExpr:
    """Parse a shape expression: what ``str(SymExpr)`` prints, plus Python's
    ``//``, ``%`` and ``**``; raises :class:`ShapeError` with the column of
    the problem."""
    if not isinstance(text, str):
        raise ShapeError(f"a shape expression must be a str, not {text!r}")
    return _parse_cached(text)


def _literal(digits: str) -> SymExpr:
    """The constant that ``digits`` spell, refused before ``int()``, which
    raises ``ValueError`` past 4300 digits."""
    if len(digits.lstrip("0")) > MAX_COEF_DIGITS:
        raise constant_too_large()
    return const_expr(int(digits))


_PRIMARIES = Primaries(integer=_literal, symbol=SymExpr.symbol, call=minmax)


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str) -> SymExpr:
    return parse_with(text, _PRIMARIES)
