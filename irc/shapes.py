"""Symbolic dimension algebra, shared by every IR level.

A dim is an ``int`` or a :class:`SymExpr` over named symbols: ``N``, ``B*H``,
``(N + 127) floordiv 128``. Verifiers compare dims structurally, so a
:class:`SymExpr` is kept in one canonical form, built once at construction: a
polynomial with integer coefficients over *atoms*, where an atom is a symbol
or a ``floordiv``, ``mod``, ``max`` or ``min`` of canonical expressions. Equal
canonical forms have equal values under every binding; the converse cannot
hold in general, so whatever needs more asks :class:`Facts`, which proves what
the declared facts about the symbols allow.

Two conventions keep the algebra sound:

- ``floordiv`` and ``mod`` follow Python: the quotient rounds towards minus
  infinity and the remainder has the sign of the divisor;
- symbols are sizes, so a symbolic divisor is assumed positive (``ceildiv`` and
  nested ``floordiv`` rely on it); constant divisors may have either sign.

Text syntax (printed by ``str``, read by :func:`parse_expr`): ``+ - *`` with
the usual precedence, ``floordiv``/``mod``/``ceildiv`` at the precedence of
``*``, ``max(a, b)``, ``min(a, b)``, integers, symbols and parentheses, which
the xDSL lexer can delimit inside a type. Powers print as repeated factors
(``N*N``); :func:`parse_expr` also reads ``**``, ``//`` and ``%``.

Symbolic dims are small expressions, and the algebra keeps them so: a
canonical polynomial has at most 4096 terms, total degree 64 and coefficients
of 8192 bits, and nested powers of ``max``, ``floordiv``, ... are bounded in
length too. An operation that would exceed a cap raises :class:`ShapeError`
at a bounded cost, before or while doing the work, so that no text, such as
``((A + B)**64)**64``, can hang the parser.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import keyword
import math
import numbers
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple, NoReturn, TypeAlias

from irc.errors import IrcShapeError

__all__ = [
    "Dim",
    "Fact",
    "Facts",
    "ShapeError",
    "SymExpr",
    "as_dim",
    "as_expr",
    "parse_expr",
    "smax",
    "smin",
]


class ShapeError(IrcShapeError):
    """A user-caused error in a symbolic shape: bad text, an impossible
    division, a missing binding, contradictory facts or an expression too
    large to expand. It is a ``ValueError`` and an ``IrcError``; its message
    says what was wrong and why."""


class _TooLarge(ShapeError):
    """An expression over one of the caps on canonical polynomials.

    ``args`` are the subject (``"a product"``, ``"(A + B)**64"``) and how it
    exceeds the cap, so that a power can restate an error of one of its
    products about itself (and the error pickles)."""

    def __init__(self, subject: str, excess: str) -> None:
        super().__init__(subject, excess)

    @property
    def excess(self) -> str:
        return self.args[1]

    def __str__(self) -> str:
        return (
            f"shape expression too large: {self.args[0]} {self.excess}; "
            "symbolic dims are meant to be small expressions"
        )


# --------------------------------------------------------------------------
# Atoms and monomials
# --------------------------------------------------------------------------

_DIVMOD = ("floordiv", "mod")
_KIND_RANK = {"floordiv": 0, "mod": 1, "max": 2, "min": 3}
_RESERVED = frozenset({"floordiv", "mod", "ceildiv", "max", "min"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Caps that keep hostile text (`(N + M)**10000`) from hanging the parser.
_MAX_EXPONENT = 64
_MAX_CONSTANT_EXPONENT = 1024
# Caps on the size of a canonical polynomial. Symbolic dims are small
# expressions, yet `((A + B)**64)**64` or a long product of sums would expand
# into astronomically many terms; each cap is checked before or while the
# work that could exceed it is done, so refusing an expression costs little.
#
# The number of monomials of one polynomial.
_MAX_TERMS = 4096
# The total degree of a monomial, its atoms' powers summed (`N*N*M` has
# degree 3): as high as one `**` may raise a symbol.
_MAX_DEGREE = _MAX_EXPONENT
# The bit length of a coefficient, far below the length that Python refuses
# to convert to decimal text (4300 digits), so every expression prints.
_MAX_COEF_BITS = 8192
# The decimal digits of 2**_MAX_COEF_BITS: a literal with more is too large.
_MAX_COEF_DIGITS = len(str(2**_MAX_COEF_BITS))
# Pairs of terms multiplied by one product or division: an `m`-term times an
# `n`-term polynomial takes `m*n`, refused before any is computed.
_MAX_PRODUCT_WORK = 65536
# The weight of a product (see `_weight`), about its length written out: the
# caps above bound it for polynomials in symbols, but not once powers of
# `max`, `floordiv`, ... nest, as in `max(max(N, 1)**64, 2)**64`.
_MAX_WEIGHT = 2**20


def _check_terms(count: int, subject: str) -> None:
    if count > _MAX_TERMS:
        raise _TooLarge(subject, f"has more than {_MAX_TERMS} terms")


def _check_coefficient(coef: int, subject: str) -> None:
    if coef.bit_length() > _MAX_COEF_BITS:
        raise _TooLarge(
            subject, f"has a coefficient of more than {_MAX_COEF_BITS} bits"
        )


# The errors of the caps that callers check themselves, as their subjects
# take some work to write.


def _too_high(degree: int, subject: str) -> _TooLarge:
    return _TooLarge(subject, f"has total degree {degree}, more than {_MAX_DEGREE}")


def _too_long(subject: str) -> _TooLarge:
    return _TooLarge(
        subject,
        f"is longer than {_MAX_WEIGHT} symbols, constants and operations written out",
    )


def _too_much_work(subject: str) -> _TooLarge:
    return _TooLarge(subject, f"takes more than {_MAX_PRODUCT_WORK} products of terms")


def _constant_too_large() -> _TooLarge:
    return _TooLarge("a constant", f"has more than {_MAX_COEF_BITS} bits")


class _Op:
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
            isinstance(other, _Op)
            and self._hash == other._hash
            and self.kind == other.kind
            and self.args == other.args
        )

    def __hash__(self) -> int:
        return self._hash


_Atom: TypeAlias = "str | _Op"
_Mono: TypeAlias = "tuple[tuple[_Atom, int], ...]"
_Poly: TypeAlias = "dict[_Mono, int]"
_Terms: TypeAlias = "tuple[tuple[_Mono, int], ...]"


def _atom_key(atom: _Atom) -> tuple[int, str] | tuple[int, int, str]:
    return (0, atom) if isinstance(atom, str) else atom.key


@functools.lru_cache(maxsize=16384)
def _mono_key(mono: _Mono) -> tuple[int, tuple[object, ...]]:
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


def _mono_degree(mono: _Mono) -> int:
    return sum(power for _, power in mono)


def _mono_mul(a: _Mono, b: _Mono) -> _Mono:
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


def _mono_div(a: _Mono, b: _Mono) -> _Mono | None:
    """``a / b`` when ``b`` divides ``a``, else None."""
    powers = dict(a)
    for atom, power in b:
        left = powers.get(atom, 0) - power
        if left < 0:
            return None
        powers[atom] = left
    return tuple((atom, powers[atom]) for atom, _ in a if powers[atom])


def _accumulate(
    acc: _Poly, terms: Iterable[tuple[_Mono, int]], scale: int = 1, by: _Mono = ()
) -> None:
    """``acc += scale * by * terms``, dropping terms that cancel."""
    for mono, coef in terms:
        key = _mono_mul(mono, by)
        value = acc.get(key, 0) + scale * coef
        if value:
            acc[key] = value
        else:
            acc.pop(key, None)


def _poly_mul(a: Iterable[tuple[_Mono, int]], b: _Poly) -> _Poly:
    acc: _Poly = {}
    for mono, coef in a:
        _accumulate(acc, b.items(), coef, mono)
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
        return _const(int(value))

    @staticmethod
    def symbol(name: str) -> SymExpr:
        """The symbol ``name``: an identifier that is neither one of the
        keywords of shape expressions nor a Python keyword, because symbol
        names reach emitted Python source."""
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
            raise ShapeError(
                f"invalid symbol name {name!r}: expected an identifier "
                "[A-Za-z_][A-Za-z0-9_]*"
            )
        if name in _RESERVED:
            raise ShapeError(
                f"invalid symbol name {name!r}: it is a keyword of shape expressions"
            )
        if keyword.iskeyword(name):
            raise ShapeError(f"invalid symbol name {name!r}: it is a Python keyword")
        return _symbol(name)

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
        return _bare_symbol(self)

    @property
    def symbols(self) -> frozenset[str]:
        """Every symbol the expression mentions, inside atoms too."""
        if self._symbols is None:
            names: set[str] = set()
            for atom in _top_atoms(self):
                if isinstance(atom, str):
                    names.add(atom)
                else:
                    for arg in atom.args:
                        names |= arg.symbols
            self._symbols = frozenset(names)
        return self._symbols

    def _single_op(self) -> _Op | None:
        """The atom if the expression is exactly one ``_Op`` atom."""
        if len(self._terms) == 1:
            mono, coef = self._terms[0]
            if coef == 1 and len(mono) == 1 and mono[0][1] == 1:
                atom = mono[0][0]
                if isinstance(atom, _Op):
                    return atom
        return None

    # ----- arithmetic -----------------------------------------------------

    def __add__(self, other: SymExpr | int) -> SymExpr:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else _add(self, rhs)

    __radd__ = __add__

    def __sub__(self, other: SymExpr | int) -> SymExpr:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else _add(self, -rhs)

    def __rsub__(self, other: SymExpr | int) -> SymExpr:
        lhs = _coerce(other)
        return NotImplemented if lhs is None else _add(lhs, -self)

    def __mul__(self, other: SymExpr | int) -> SymExpr:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else _mul(self, rhs)

    __rmul__ = __mul__

    def __neg__(self) -> SymExpr:
        return SymExpr._new(tuple((mono, -coef) for mono, coef in self._terms))

    def __floordiv__(self, other: SymExpr | int) -> SymExpr:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else _floordiv(self, rhs)

    def __rfloordiv__(self, other: SymExpr | int) -> SymExpr:
        lhs = _coerce(other)
        return NotImplemented if lhs is None else _floordiv(lhs, self)

    def __mod__(self, other: SymExpr | int) -> SymExpr:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else _mod(self, rhs)

    def __rmod__(self, other: SymExpr | int) -> SymExpr:
        lhs = _coerce(other)
        return NotImplemented if lhs is None else _mod(lhs, self)

    def __pow__(self, exponent: int) -> SymExpr:
        if isinstance(exponent, bool) or not isinstance(exponent, int):
            raise ShapeError(f"exponent must be an int, not {exponent!r}")
        return _checked_power(self, exponent)

    def ceildiv(self, other: SymExpr | int) -> SymExpr:
        """``ceil(self / other)``, as ``(self + other - 1) floordiv other``
        for a positive (or symbolic) divisor."""
        return _ceildiv(self, as_expr(other))

    def exact_div(self, other: SymExpr | int, facts: Facts | None = None) -> SymExpr:
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
            return facts.simplify(_floordiv(self, divisor))
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
        return _substitute(self, values)

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


def _from_poly(poly: Mapping[_Mono, int], subject: str = "an expression") -> SymExpr:
    """The canonical expression of ``poly``, refused if over the caps on the
    number of terms and the size of coefficients (the caller checks the
    degree, which only products raise)."""
    _check_terms(len(poly), subject)
    if poly:
        _check_coefficient(max(max(poly.values()), -min(poly.values())), subject)
    monos = sorted(poly, key=_mono_key)
    return SymExpr._new(tuple((mono, poly[mono]) for mono in monos if poly[mono]))


def _const(value: int) -> SymExpr:
    if value.bit_length() > _MAX_COEF_BITS:
        raise _constant_too_large()
    return SymExpr._new((((), value),) if value else ())


def _symbol(name: str) -> SymExpr:
    """A symbol without validating the name (internal names need not be
    identifiers: that is what keeps them from clashing with a user's)."""
    return _from_atom(name)


def _from_atom(atom: _Atom) -> SymExpr:
    return SymExpr._new(((((atom, 1),), 1),))


_ZERO = _const(0)
_ONE = _const(1)


def _coerce(value: object) -> SymExpr | None:
    if isinstance(value, SymExpr):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return _const(int(value))
    return None


def _top_atoms(e: SymExpr) -> list[_Atom]:
    return list(dict.fromkeys(atom for mono, _ in e._terms for atom, _ in mono))


def _has_ops(e: SymExpr) -> bool:
    return any(isinstance(atom, _Op) for atom in _top_atoms(e))


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


# How many terms `_add` places one by one rather than re-sorting all.
_FEW_TERMS = 8


def _add(a: SymExpr, b: SymExpr) -> SymExpr:
    if not b._terms:
        return a
    if not a._terms:
        return b
    if len(a._terms) < len(b._terms):
        a, b = b, a
    if len(b._terms) > _FEW_TERMS:
        acc = dict(a._terms)
        _accumulate(acc, b._terms)
        return _from_poly(acc, "a sum")
    # A few terms are placed by binary search, so that a long sum built one
    # term at a time (as parsers do) takes linear time, not quadratic.
    terms = list(a._terms)
    for mono, coef in b._terms:
        key = _mono_key(mono)
        index = bisect.bisect_left(terms, key, key=_term_key)
        if index < len(terms) and terms[index][0] == mono:
            coef += terms[index][1]
            if coef:
                terms[index] = (mono, coef)
            else:
                del terms[index]
        else:
            terms.insert(index, (mono, coef))
        _check_coefficient(coef, "a sum")
    _check_terms(len(terms), "a sum")
    return SymExpr._new(tuple(terms))


def _term_key(term: tuple[_Mono, int]) -> tuple[int, tuple[object, ...]]:
    return _mono_key(term[0])


def _mul(a: SymExpr, b: SymExpr) -> SymExpr:
    """``a * b``, refused before any work when it would take too many
    products of terms or have too high a degree."""
    if not a._terms or not b._terms:
        return _ZERO
    m, n = len(a._terms), len(b._terms)
    if m * n > _MAX_PRODUCT_WORK:
        raise _too_much_work(f"multiplying expressions of {m} and {n} terms")
    degree = _degree(a) + _degree(b)
    if degree > _MAX_DEGREE:
        raise _too_high(degree, "a product")
    product = _from_poly(_poly_mul(a._terms, dict(b._terms)), "a product")
    # A product of two terms weighs at most the sum of their weights.
    bound = n * _weight(a) + m * _weight(b)
    if bound > _MAX_WEIGHT and _weight(product) > _MAX_WEIGHT:
        raise _too_long("a product")
    return product


def _power(base: SymExpr, exponent: int) -> SymExpr:
    """``base ** exponent`` by repeated squaring: at most two products per bit
    of the exponent, each checked against the caps as it is computed, so a
    power far too large to expand is refused at little cost."""
    value = base.constant
    if value is not None:
        # |value|**exponent has more than (bit_length - 1) * exponent bits.
        if (abs(value).bit_length() - 1) * exponent >= _MAX_COEF_BITS:
            raise _TooLarge(
                _power_text(base, exponent), f"has more than {_MAX_COEF_BITS} bits"
            )
        return _const(value**exponent)
    if exponent == 0:
        return _ONE
    degree = _degree(base) * exponent
    if degree > _MAX_DEGREE:
        raise _too_high(degree, _power_text(base, exponent))
    result = base
    try:
        for bit in bin(exponent)[3:]:
            result = _mul(result, result)
            if bit == "1":
                result = _mul(result, base)
    except _TooLarge as err:
        raise _TooLarge(_power_text(base, exponent), err.excess) from None
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
    limit = _MAX_CONSTANT_EXPONENT if base.is_constant else _MAX_EXPONENT
    if exponent > limit:
        raise ShapeError(f"exponent {exponent} is too large (at most {limit})")
    return _power(base, exponent)


def _content(e: SymExpr) -> int:
    """The gcd of all coefficients (0 for the zero expression)."""
    return math.gcd(*(coef for _, coef in e._terms))


def _scale_down(e: SymExpr, factor: int) -> SymExpr:
    return SymExpr._new(tuple((mono, coef // factor) for mono, coef in e._terms))


def _leading_coef(e: SymExpr) -> int:
    return e._terms[0][1] if e._terms else 0


def _constant_term(e: SymExpr) -> int:
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
    work: _Poly = dict(p._terms)
    # The monomials of `work`, largest first in the monomial order. Keys are
    # injective, so an entry's monomial is only compared with an equal one.
    # An entry whose monomial has cancelled out since is skipped when popped.
    pending = [(_mono_key(mono), mono) for mono in work]
    heapq.heapify(pending)
    quotient: _Poly = {}
    remainder: _Poly = {}
    work_done = 0
    while pending:
        mono = heapq.heappop(pending)[1]
        coef = work.pop(mono, 0)
        if not coef:
            continue
        factor = _mono_div(mono, lead)
        if factor is None:
            remainder[mono] = coef
            _check_terms(len(remainder), "a remainder")
            continue
        times, rest = divmod(coef, lead_coef)
        if rest:
            remainder[mono] = rest
            _check_terms(len(remainder), "a remainder")
        if not times:
            continue
        quotient[factor] = times
        _check_terms(len(quotient), "a quotient")
        _check_coefficient(times, "a quotient")
        work_done += len(tail)
        if work_done > _MAX_PRODUCT_WORK:
            raise _too_much_work(f"dividing by an expression of {len(q._terms)} terms")
        # The tail of q times factor is below mono in the monomial order, so
        # it only changes terms not yet visited.
        for tail_mono, tail_coef in tail:
            key = _mono_mul(tail_mono, factor)
            value = work.get(key, 0) - times * tail_coef
            if not value:
                work.pop(key, None)
                continue
            if key not in work:
                heapq.heappush(pending, (_mono_key(key), key))
            work[key] = value
    return _from_poly(quotient, "a quotient"), _from_poly(remainder, "a remainder")


def _exact_quotient(p: SymExpr, q: SymExpr) -> SymExpr | None:
    """``p / q`` when it is a polynomial with integer coefficients."""
    if _leading_coef(q) < 0:
        p, q = -p, -q
    quotient, remainder = _divmod_poly(p, q)
    return quotient if not remainder._terms else None


def _division_by_zero(p: SymExpr, kind: str) -> NoReturn:
    raise ShapeError(f"division by zero: {p} {kind} 0")


def _floordiv(p: SymExpr, q: SymExpr) -> SymExpr:
    if not q._terms:
        _division_by_zero(p, "floordiv")
    if q._terms[0][1] < 0:
        p, q = -p, -q
    quotient, remainder = _divmod_poly(p, q)
    if not remainder._terms:
        return quotient
    return _add(quotient, _floordiv_atom(remainder, q))


def _floordiv_atom(r: SymExpr, q: SymExpr) -> SymExpr:
    """``r floordiv q`` for a reduced ``r`` and a positive ``q``."""
    if r.is_constant and q.is_constant:
        return _const(int(r) // int(q))
    common = math.gcd(_content(r), _content(q))
    if common > 1:
        r, q = _scale_down(r, common), _scale_down(q, common)
    inner = r._single_op()
    if inner is not None and inner.kind == "floordiv":
        # floor(floor(a / b) / q) == floor(a / (b*q)) for a positive q.
        return _floordiv(inner.args[0], _mul(inner.args[1], q))
    return _from_atom(_Op("floordiv", (r, q)))


def _mod(p: SymExpr, q: SymExpr) -> SymExpr:
    if not q._terms:
        _division_by_zero(p, "mod")
    if q._terms[0][1] < 0:
        return -_mod(-p, -q)
    _, r = _divmod_poly(p, q)
    if not r._terms:
        return _ZERO
    if r.is_constant and q.is_constant:
        return _const(int(r) % int(q))
    common = math.gcd(_content(r), _content(q))
    if common > 1:
        r, q = _scale_down(r, common), _scale_down(q, common)
    inner = r._single_op()
    if (
        inner is not None
        and inner.kind == "mod"
        and _exact_quotient(inner.args[1], q) is not None
    ):
        # (a mod b) mod q == a mod q when q divides b.
        result = _mod(inner.args[0], q)
    else:
        result = _from_atom(_Op("mod", (r, q)))
    return _mul(_const(common), result) if common > 1 else result


def _ceildiv(p: SymExpr, q: SymExpr) -> SymExpr:
    if not q._terms:
        _division_by_zero(p, "ceildiv")
    if q.is_constant and int(q) < 0:
        return -_floordiv(-p, q)
    return _floordiv(_add(p, _add(q, _const(-1))), q)


def _minmax(kind: str, args: Iterable[SymExpr]) -> SymExpr:
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
                _constant_term(candidate) > _constant_term(rival)
                if kind == "max"
                else _constant_term(candidate) < _constant_term(rival)
            ):
                kept[variable] = candidate
    if len(kept) == 1:
        return next(iter(kept.values()))
    return _from_atom(_Op(kind, tuple(sorted(kept.values(), key=str))))


def smax(a: SymExpr | int, b: SymExpr | int, *more: SymExpr | int) -> SymExpr:
    """Symbolic ``max`` of dims (folded when the arguments differ by a
    constant)."""
    return _minmax("max", [as_expr(x) for x in (a, b, *more)])


def smin(a: SymExpr | int, b: SymExpr | int, *more: SymExpr | int) -> SymExpr:
    """Symbolic ``min`` of dims (folded when the arguments differ by a
    constant)."""
    return _minmax("min", [as_expr(x) for x in (a, b, *more)])


def _apply_op(kind: str, args: list[SymExpr]) -> SymExpr:
    if kind == "floordiv":
        return _floordiv(args[0], args[1])
    if kind == "mod":
        return _mod(args[0], args[1])
    return _minmax(kind, args)


def _map_atoms(
    e: SymExpr,
    on_symbol: Callable[[str], SymExpr],
    on_op: Callable[[_Op], SymExpr],
) -> SymExpr:
    """Rebuild ``e`` with every top-level atom replaced by an expression."""
    total: _Poly = {}
    for mono, coef in e._terms:
        term = _const(coef)
        for atom, power in mono:
            value = on_symbol(atom) if isinstance(atom, str) else on_op(atom)
            term = _mul(term, _power(value, power))
        _accumulate(total, term._terms)
        _check_terms(len(total), "a sum")
    return _from_poly(total, "a sum")


def _substitute(e: SymExpr, values: Mapping[str, SymExpr]) -> SymExpr:
    def on_op(op: _Op) -> SymExpr:
        return _apply_op(op.kind, [_substitute(arg, values) for arg in op.args])

    def on_symbol(name: str) -> SymExpr:
        return values[name] if name in values else _symbol(name)

    if not e.symbols & values.keys():
        return e
    return _map_atoms(e, on_symbol, on_op)


def _evaluate(e: SymExpr, binding: Mapping[str, int]) -> int:
    total = 0
    for mono, coef in e._terms:
        value = coef
        for atom, power in mono:
            value *= _evaluate_atom(atom, binding) ** power
        total += value
    return total


def _evaluate_atom(atom: _Atom, binding: Mapping[str, int]) -> int:
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


def _format_term(mono: _Mono, coef: int, python: bool, lead_minus: bool) -> str:
    factors = [str(coef)] if coef != 1 or not mono else []
    # A floordiv/mod in a product, or after a leading minus, needs
    # parentheses: `-N floordiv 4` would read as `(-N) floordiv 4`.
    wrap = lead_minus or len(factors) + sum(power for _, power in mono) > 1
    for atom, power in mono:
        text = _format_atom(atom, python)
        if wrap and isinstance(atom, _Op) and atom.kind in _DIVMOD:
            text = f"({text})"
        factors.extend([text] * power)
    return "*".join(factors)


def _format_atom(atom: _Atom, python: bool) -> str:
    if isinstance(atom, str):
        return atom
    if not python and atom._key is not None:
        return atom._key[2]
    return _format_op(atom, python)


def _text(e: SymExpr, python: bool) -> str:
    return e.to_python() if python else str(e)


def _format_op(op: _Op, python: bool) -> str:
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


class _Token(NamedTuple):
    kind: str  # "int", "name", "op" or "end"
    text: str
    column: int


_TOKEN = re.compile(
    r"(?P<space>\s+)|(?P<int>[0-9]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|//|[-+*%(),])"
)
_PRODUCT_OPS = frozenset({"*", "//", "%", "floordiv", "mod", "ceildiv"})


def parse_expr(text: str) -> SymExpr:
    """Parse a shape expression: what ``str(SymExpr)`` prints, plus Python's
    ``//``, ``%`` and ``**``; raises :class:`ShapeError` with the column of
    the problem."""
    if not isinstance(text, str):
        raise ShapeError(f"a shape expression must be a str, not {text!r}")
    return _parse_cached(text)


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str) -> SymExpr:
    try:
        return _Parser(text).parse()
    except RecursionError:
        raise ShapeError(
            f"cannot parse shape expression {text[:40]!r}...: nested too deeply"
        ) from None


class _Parser:
    """Recursive descent with Python's precedences: sums of products of
    signed powers of primaries."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = self._tokenize()
        self.index = 0

    def _tokenize(self) -> list[_Token]:
        tokens = []
        position = 0
        while position < len(self.text):
            match = _TOKEN.match(self.text, position)
            if match is None:
                char = self.text[position]
                self.fail(f"unexpected character {char!r}", position + 1)
            if match.lastgroup != "space":
                assert match.lastgroup is not None
                tokens.append(_Token(match.lastgroup, match.group(), position + 1))
            position = match.end()
        tokens.append(_Token("end", "", len(self.text) + 1))
        return tokens

    def fail(self, message: str, column: int) -> NoReturn:
        raise ShapeError(
            f"cannot parse shape expression {self.text!r}: {message} at column {column}"
        )

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def advance(self) -> _Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def is_op(self, text: str) -> bool:
        token = self.peek()
        return token.kind == "op" and token.text == text

    def expect(self, text: str, what: str) -> None:
        if not self.is_op(text):
            self.fail(f"expected {what}", self.peek().column)
        self.advance()

    def parse(self) -> SymExpr:
        value = self.sum()
        token = self.peek()
        if token.kind != "end":
            self.fail(f"unexpected {token.text!r}", token.column)
        return value

    def sum(self) -> SymExpr:
        value = self.product()
        while self.is_op("+") or self.is_op("-"):
            token = self.advance()
            rhs = self.product()
            try:
                value = _add(value, rhs if token.text == "+" else -rhs)
            except ShapeError as err:
                self.fail(str(err), token.column)
        return value

    def product(self) -> SymExpr:
        value = self.unary()
        while (token := self.peek()).kind != "end" and token.text in _PRODUCT_OPS:
            self.advance()
            rhs = self.unary()
            try:
                value = _combine(token.text, value, rhs)
            except ShapeError as err:
                self.fail(str(err), token.column)
        return value

    def unary(self) -> SymExpr:
        if self.is_op("-"):
            self.advance()
            return -self.unary()
        if self.is_op("+"):
            self.advance()
            return self.unary()
        return self.power()

    def power(self) -> SymExpr:
        base = self.primary()
        if not self.is_op("**"):
            return base
        token = self.advance()
        exponent = self.unary().constant
        if exponent is None:
            self.fail("the exponent must be an integer constant", token.column)
        try:
            return _checked_power(base, exponent)
        except ShapeError as err:
            self.fail(str(err), token.column)

    def primary(self) -> SymExpr:
        token = self.advance()
        if token.kind == "int":
            # Refused before int(), which raises ValueError past 4300 digits.
            if len(token.text.lstrip("0")) > _MAX_COEF_DIGITS:
                self.fail(str(_constant_too_large()), token.column)
            try:
                return _const(int(token.text))
            except ShapeError as err:
                self.fail(str(err), token.column)
        if token.kind == "name" and token.text in ("max", "min"):
            return self.call(token)
        if token.kind == "name" and token.text not in _RESERVED:
            try:
                return SymExpr.symbol(token.text)
            except ShapeError as err:
                self.fail(str(err), token.column)
        if token.kind == "op" and token.text == "(":
            value = self.sum()
            self.expect(")", "')'")
            return value
        self.fail("expected a term", token.column)

    def call(self, name: _Token) -> SymExpr:
        self.expect("(", f"'(' after {name.text!r}")
        args = [self.sum()]
        while self.is_op(","):
            self.advance()
            args.append(self.sum())
        self.expect(")", "',' or ')'")
        if len(args) < 2:
            self.fail(f"{name.text}() needs at least two arguments", name.column)
        return _minmax(name.text, args)


def _combine(op: str, lhs: SymExpr, rhs: SymExpr) -> SymExpr:
    if op == "*":
        return _mul(lhs, rhs)
    if op in ("//", "floordiv"):
        return _floordiv(lhs, rhs)
    if op in ("%", "mod"):
        return _mod(lhs, rhs)
    return _ceildiv(lhs, rhs)


# --------------------------------------------------------------------------
# Interval bounds
# --------------------------------------------------------------------------

# A bound is an int or, for an unbounded side, a float infinity; floats never
# meet ints in arithmetic (only in comparisons), so large ints stay exact.
_Bound: TypeAlias = "int | float"
_Interval: TypeAlias = "tuple[_Bound, _Bound]"
_INF = math.inf
_SIZE: tuple[int, float] = (1, _INF)


class _Context:
    """What bounds and refinement may assume: an interval per symbol
    (``[1, inf)`` by default: symbols are sizes) and relations ``g >= 0``."""

    def __init__(
        self,
        env: Mapping[str, _Interval] | None = None,
        relations: tuple[SymExpr, ...] = (),
    ) -> None:
        self.env = env or {}
        self.relations = relations
        self.cache: dict[_Op, _Interval] = {}

    def symbol(self, name: str) -> _Interval:
        return self.env.get(name, _SIZE)


def _xadd(a: _Bound, b: _Bound) -> _Bound:
    if isinstance(a, float):
        return a
    if isinstance(b, float):
        return b
    return a + b


def _xmul(a: _Bound, b: _Bound) -> _Bound:
    if a == 0 or b == 0:
        return 0
    if isinstance(a, float) or isinstance(b, float):
        return _INF if (a > 0) == (b > 0) else -_INF
    return a * b


def _xpow(a: _Bound, power: int) -> _Bound:
    if isinstance(a, float):
        return -_INF if a < 0 and power % 2 else _INF
    return a**power


def _xfloordiv(a: _Bound, b: _Bound) -> _Bound:
    """``floor(a / b)`` for ``b >= 1``."""
    if isinstance(a, float):
        return a
    if isinstance(b, float):
        return 0 if a >= 0 else -1
    return a // b


def _xceildiv(a: _Bound, b: int) -> _Bound:
    return a if isinstance(a, float) else -(-a // b)


def _imul(x: _Interval, y: _Interval) -> _Interval:
    products = [_xmul(a, b) for a in x for b in y]
    return min(products), max(products)


def _ipow(x: _Interval, power: int) -> _Interval:
    if power == 1:
        return x
    low, high = x
    ends = (_xpow(low, power), _xpow(high, power))
    if power % 2 == 0 and low < 0 < high:
        return 0, max(ends)
    return min(ends), max(ends)


def _meet(x: _Interval, y: _Interval) -> _Interval:
    return max(x[0], y[0]), min(x[1], y[1])


def _divisor_interval(x: _Interval) -> _Interval:
    """Symbolic divisors are assumed positive."""
    low = max(x[0], 1)
    return low, max(x[1], low)


def _floordiv_interval(num: _Interval, den: _Interval) -> _Interval:
    # floor(n / d) is monotone in n and, for d > 0, in d: corners suffice.
    values = [_xfloordiv(n, d) for n in num for d in den]
    return min(values), max(values)


def _mod_interval(num: _Interval, den: _Interval) -> _Interval:
    if num[0] >= 0 and num[1] < den[0]:
        return num  # always below the divisor: the mod is the identity
    top = _xadd(den[1], -1)
    if num[0] >= 0:
        top = min(top, num[1])
    return 0, top


def _poly_interval(
    terms: Iterable[tuple[_Mono, int]], atom_interval: Callable[[_Atom], _Interval]
) -> _Interval:
    low: _Bound = 0
    high: _Bound = 0
    for mono, coef in terms:
        term: _Interval = (coef, coef)
        for atom, power in mono:
            term = _imul(term, _ipow(atom_interval(atom), power))
        low, high = _xadd(low, term[0]), _xadd(high, term[1])
    return low, high


def _atom_interval(atom: _Atom, ctx: _Context) -> _Interval:
    if isinstance(atom, str):
        return ctx.symbol(atom)
    cached = ctx.cache.get(atom)
    if cached is None:
        intervals = [_bounds(arg, ctx) for arg in atom.args]
        if atom.kind == "max":
            cached = max(i[0] for i in intervals), max(i[1] for i in intervals)
        elif atom.kind == "min":
            cached = min(i[0] for i in intervals), min(i[1] for i in intervals)
        elif atom.kind == "floordiv":
            cached = _floordiv_interval(intervals[0], _divisor_interval(intervals[1]))
        else:
            cached = _mod_interval(intervals[0], _divisor_interval(intervals[1]))
        ctx.cache[atom] = cached
    return cached


def _is_nonlinear(e: SymExpr) -> bool:
    return bool(e._terms) and _mono_key(e._terms[0][0])[0] < -1


def _bounds(e: SymExpr, ctx: _Context) -> _Interval:
    """An interval containing every value of ``e`` that ``ctx`` allows.

    Plain interval arithmetic loses the correlation between terms, so two
    sound refinements are intersected with it: shifting every atom to its
    lower bound (so ``M*N - N`` is seen as ``m*n + m >= 0`` in the shifted
    atoms), and multiplying out constant floordivs (``4*(N floordiv 4)`` is
    ``N - N mod 4``)."""

    def atom_interval(atom: _Atom) -> _Interval:
        return _atom_interval(atom, ctx)

    best = _refined_interval(e, atom_interval)
    try:
        scaled, scale = _eliminate_floordivs(e)
    except _TooLarge:  # then the plain refinement must do
        return best
    if scale > 1:
        low, high = _refined_interval(scaled, atom_interval)
        best = _meet(best, (_xceildiv(low, scale), _xfloordiv(high, scale)))
    return best


def _refined_interval(
    e: SymExpr, atom_interval: Callable[[_Atom], _Interval]
) -> _Interval:
    plain = _poly_interval(e._terms, atom_interval)
    if not _is_nonlinear(e):
        return plain
    shifts: dict[_Atom, int] = {}
    for atom in _top_atoms(e):
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
        if size > _MAX_TERMS:
            return plain
    shifted: _Poly = {}
    for mono, coef in e._terms:
        _accumulate(shifted, _shifted_expansion(mono, coef, shifts))

    def shifted_interval(atom: _Atom) -> _Interval:
        low, high = atom_interval(atom)
        shift = shifts.get(atom, 0)
        return _xadd(low, -shift), _xadd(high, -shift)

    return _meet(plain, _poly_interval(shifted.items(), shifted_interval))


def _shifted_expansion(
    mono: _Mono, coef: int, shifts: Mapping[_Atom, int]
) -> list[tuple[_Mono, int]]:
    """The terms of ``coef * mono`` with each atom ``x`` of ``shifts``
    replaced by ``x + shifts[x]``, expanded by the binomial theorem (distinct
    atoms, in the order of ``mono``, so every monomial comes out sorted)."""
    terms: list[tuple[_Mono, int]] = [((), coef)]
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
    ``k``, appearing linearly) replaced through ``k*F == num - num mod k``."""
    scale = 1
    for atom in _top_atoms(e):
        if not (
            isinstance(atom, _Op)
            and atom.kind == "floordiv"
            and atom.args[1].is_constant
        ):
            continue
        split = _split_linear(e, atom)
        if split is None:
            continue
        cofactor, rest = split
        numerator, divisor = atom.args
        remainder = _add(numerator, -_mod(numerator, divisor))
        e = _add(_mul(rest, divisor), _mul(cofactor, remainder))
        scale *= int(divisor)
    return e, scale


def _split_linear(e: SymExpr, atom: _Atom) -> tuple[SymExpr, SymExpr] | None:
    """``(g, rest)`` with ``e == atom*g + rest``, if ``atom`` only appears
    with power 1."""
    cofactor: _Poly = {}
    rest: _Poly = {}
    for mono, coef in e._terms:
        powers = dict(mono)
        if atom not in powers:
            rest[mono] = coef
        elif powers[atom] == 1:
            cofactor[tuple(item for item in mono if item[0] != atom)] = coef
        else:
            return None
    return _from_poly(cofactor), _from_poly(rest)


def _nonneg(e: SymExpr, ctx: _Context) -> bool:
    """Whether ``e >= 0`` is provable: from bounds, from a declared relation,
    or by case splits on the ``max``/``min`` atoms of ``e`` (see
    :class:`_CaseSplit`)."""
    return _CaseSplit(ctx).prove(e)


def _nonneg_directly(e: SymExpr, ctx: _Context) -> bool:
    """Whether ``e >= 0`` follows from bounds alone, or as ``e >= g >= 0``
    for a declared relation ``g >= 0``."""
    if e == 0 or _bounds(e, ctx)[0] >= 0:
        return True
    return any(_bounds(_add(e, -g), ctx)[0] >= 0 for g in ctx.relations)


# How many expressions one proof's case splits may try in all: enough for
# the nested max/min that shapes hold, small enough that a query that cannot
# be proven stays cheap (it is asked for every max/min pair `_refine` meets).
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

    Cases are proven the same way, recursively. Each split trades an atom
    for strictly smaller arguments, so the search ends; ``_MAX_SPLIT_TRIES``
    bounds its cost, and what failed is remembered. Giving up only loses
    proofs, never soundness."""

    def __init__(self, ctx: _Context) -> None:
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
        except _TooLarge:  # a step of the proof would be too large
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
        return any(self.prove(case.value) for case in options)


class _Case(NamedTuple):
    """``e`` with a ``max``/``min`` atom replaced by its argument ``arg``."""

    value: SymExpr
    arg: SymExpr


def _minmax_splits(e: SymExpr, ctx: _Context) -> list[tuple[bool, list[_Case]]]:
    """For each ``max``/``min`` atom that ``e`` holds linearly with a cofactor
    of known sign: whether ``e >= 0`` needs every case to hold (or any one),
    and the cases, ``e`` with the atom replaced by each argument."""
    splits = []
    for atom in _top_atoms(e):
        if not (isinstance(atom, _Op) and atom.kind in ("max", "min")):
            continue
        split = _split_linear(e, atom)
        if split is None:
            continue
        cofactor, rest = split
        sign = _sign(cofactor, ctx)
        if sign == 0:
            continue
        # g*max(...) is the max of the g*args for g >= 0, their min for g <= 0.
        every = (atom.kind == "max") != (sign > 0)
        try:
            cases = [_Case(_add(rest, _mul(cofactor, arg)), arg) for arg in atom.args]
        except _TooLarge:  # no split on this atom, then
            continue
        splits.append((every, cases))
    return splits


def _sign(e: SymExpr, ctx: _Context) -> int:
    """1 if ``e >= 0`` by bounds, -1 if ``e <= 0``, else 0 (unknown)."""
    low, high = _bounds(e, ctx)
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
        1 + (sum(_size(arg) for arg in atom.args) if isinstance(atom, _Op) else 0)
        for atom in _top_atoms(e)
    )


# --------------------------------------------------------------------------
# Refinement under bounds
# --------------------------------------------------------------------------


def _refine(e: SymExpr, ctx: _Context) -> SymExpr:
    """Simplify the atoms of ``e`` bottom-up with what ``ctx`` proves: a
    ``max``/``min`` argument dominated by another is dropped, a ``floordiv``
    with a provably constant quotient folds, and so does the ``mod``."""
    if not _has_ops(e):
        return e
    return _map_atoms(e, _symbol, lambda op: _refine_op(op, ctx))


def _refine_op(op: _Op, ctx: _Context) -> SymExpr:
    args = [_refine(arg, ctx) for arg in op.args]
    if op.kind in ("max", "min"):
        return _prune_minmax(op.kind, args, ctx)
    built = _apply_op(op.kind, args)
    return _map_atoms(built, _symbol, lambda inner: _fold_divmod(inner, ctx))


def _fold_divmod(op: _Op, ctx: _Context) -> SymExpr:
    if op.kind not in _DIVMOD:
        return _from_atom(op)
    numerator, divisor = op.args
    quotient = _known_quotient(numerator, divisor, ctx)
    if quotient is None:
        return _from_atom(op)
    if op.kind == "floordiv":
        return _const(quotient)
    return _add(numerator, _mul(divisor, _const(-quotient)))


def _known_quotient(numerator: SymExpr, divisor: SymExpr, ctx: _Context) -> int | None:
    low, high = _floordiv_interval(
        _bounds(numerator, ctx), _divisor_interval(_bounds(divisor, ctx))
    )
    if low == high and isinstance(low, int):
        return low
    below = _add(_add(divisor, -numerator), _const(-1))
    if _nonneg(numerator, ctx) and _nonneg(below, ctx):
        return 0
    return None


def _prune_minmax(kind: str, args: list[SymExpr], ctx: _Context) -> SymExpr:
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
            if _nonneg(_add(larger, -smaller), ctx):
                alive.remove(i)
                break
    return _minmax(kind, [args[i] for i in alive])


def _unlift(e: SymExpr, back: Mapping[str, tuple[str, int]]) -> SymExpr:
    """Undo :meth:`Facts._prepare`'s lifting ``N = k * N'``: ``k**j * N'**j``
    becomes ``N**j`` where the coefficient allows, ``N' = N floordiv k``
    elsewhere."""
    if not back or not e.symbols & back.keys():
        return e
    total: _Poly = {}
    for mono, coef in e._terms:
        factors = []
        for atom, power in mono:
            if isinstance(atom, _Op):
                args = [_unlift(arg, back) for arg in atom.args]
                factors.append(_power(_apply_op(atom.kind, args), power))
            elif atom in back:
                name, k = back[atom]
                whole = 0
                while whole < power and coef % k == 0:
                    coef //= k
                    whole += 1
                original = _symbol(name)
                quotient = _floordiv(original, _const(k))
                factors.append(
                    _mul(_power(original, whole), _power(quotient, power - whole))
                )
            else:
                factors.append(_power(_symbol(atom), power))
        term = _const(coef)
        for factor in factors:
            term = _mul(term, factor)
        _accumulate(total, term._terms)
        _check_terms(len(total), "a sum")
    return _from_poly(total, "a sum")


# --------------------------------------------------------------------------
# Facts
# --------------------------------------------------------------------------

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
    difference = _add(fact.lhs, -fact.rhs)
    if fact.op == "==":
        return True, difference
    if fact.op in ("<=", "<"):
        difference = -difference
    if fact.op in (">", "<"):  # strict, on integers: one more
        difference = _add(difference, _const(-1))
    return False, difference


def _contradiction(fact: Fact) -> NoReturn:
    raise ShapeError(f"contradictory facts: {fact} can never hold")


def _bare_symbol(e: SymExpr) -> str | None:
    if len(e._terms) == 1:
        mono, coef = e._terms[0]
        if coef == 1 and len(mono) == 1 and mono[0][1] == 1:
            atom = mono[0][0]
            if isinstance(atom, str):
                return atom
    return None


def _solvable_symbol(d: SymExpr) -> str | None:
    """A symbol ``s`` with ``d == ±s + rest`` and no ``s`` in ``rest`` (the
    largest name, for determinism), so that ``d == 0`` defines ``s``."""
    candidates: set[str] = set()
    blocked: set[str] = set()
    for mono, coef in d._terms:
        for atom, _ in mono:
            if isinstance(atom, _Op):
                blocked |= _from_atom(atom).symbols
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
            d = _substitute(d, subst)
            name = _solvable_symbol(d)
            if name is None:
                unsolved.append((fact, d))
                continue
            sign = dict(d._terms)[((name, 1),)]
            value = _mul(_add(d, _mul(_const(-sign), _symbol(name))), _const(-sign))
            subst = {k: _substitute(v, {name: value}) for k, v in subst.items()}
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
    if len(mono) != 1 or mono[0][1] != 1 or not isinstance(mono[0][0], _Op):
        return None
    op = mono[0][0]
    name = _bare_symbol(op.args[0])
    if op.kind != "mod" or name is None or not op.args[1].is_constant:
        return None
    return name, int(op.args[1])


def _normal_relation(d: SymExpr, equality: bool, fact: Fact) -> SymExpr:
    """Divide ``d >= 0`` (rounding the constant the tight way) or ``d ==
    0`` by the content of its non-constant part; an equality also gets a
    positive leading coefficient."""
    constant = _constant_term(d)
    part = _add(d, _const(-constant))
    content = _content(part)
    if equality:
        if constant % content:
            _contradiction(fact)
        d = _add(_scale_down(part, content), _const(constant // content))
        return -d if _leading_coef(d) < 0 else d
    return _add(_scale_down(part, content), _const(constant // content))


def _split_relation(g: SymExpr, op: str) -> Fact:
    """``g op 0`` written with positive terms on each side: ``N >= M``."""
    positive: _Poly = {mono: coef for mono, coef in g._terms if coef > 0}
    negative: _Poly = {mono: -coef for mono, coef in g._terms if coef < 0}
    return Fact(_from_poly(positive), op, _from_poly(negative))


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
            inequalities.append((Fact(_symbol(name), ">=", 1), _add(value, _const(-1))))
        self.low: dict[str, int] = {}
        self.high: dict[str, int] = {}
        self.div: dict[str, int] = {}
        self.ge: list[SymExpr] = []
        self.eq: list[SymExpr] = []
        for fact, d in unsolved:
            self._add_equality(fact, _substitute(d, self.subst))
        for fact, d in inequalities:
            self._add_inequality(fact, _substitute(d, self.subst))
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
            Fact(_symbol(name), "==", low)
            for name, low in self.low.items()
            if self.high.get(name) == low
        ]

    def interval(self, name: str) -> _Interval:
        high = self.high.get(name)
        return self.low.get(name, 1), _INF if high is None else high


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
        env: dict[str, _Interval] = {}
        self._back: dict[str, tuple[str, int]] = {}
        for name in knowledge.low:
            low, high = knowledge.interval(name)
            k = knowledge.div.get(name, 1)
            if k == 1:
                env[name] = (low, high)
                continue
            fresh = f"{name}/{k}"  # not an identifier: clashes with no symbol
            lifted[name] = _mul(_const(k), _symbol(fresh))
            env[fresh] = (low // k, _xfloordiv(high, k))
            self._back[fresh] = (name, k)
        self._rewrite = dict(lifted)
        for name, value in knowledge.subst.items():
            self._rewrite[name] = _substitute(value, lifted)
        self._ctx = _Context(env)

    def _digest_relations(self, knowledge: _Knowledge) -> None:
        """Drop general relations that the bounds already prove, reject those
        that they refute, and hand the rest to proofs (in lifted form)."""
        relations: list[SymExpr] = []
        for equality, kept in ((False, knowledge.ge), (True, knowledge.eq)):
            survivors = []
            for g in dict.fromkeys(kept):
                lifted = self._prepare(g)
                low, high = _bounds(lifted, self._ctx)
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
        self._ctx = _Context(self._ctx.env, tuple(relations))

    @staticmethod
    def _canonical(knowledge: _Knowledge) -> tuple[Fact, ...]:
        facts = [
            Fact(_symbol(name), "==", value)
            for name, value in sorted(knowledge.subst.items())
        ]
        for name in sorted(knowledge.low):
            low, high = knowledge.interval(name)
            if low > 1:
                facts.append(Fact(_symbol(name), ">=", low))
            if not isinstance(high, float):
                facts.append(Fact(_symbol(name), "<=", high))
            k = knowledge.div.get(name, 1)
            if k > 1:
                facts.append(Fact(_mod(_symbol(name), _const(k)), "==", 0))
        for op, relations in ((">=", knowledge.ge), ("==", knowledge.eq)):
            facts.extend(
                _split_relation(g, op) for g in sorted(set(relations), key=str)
            )
        return tuple(facts)

    # ----- proving --------------------------------------------------------

    def _prepare(self, e: SymExpr) -> SymExpr:
        """``e`` rewritten by definitions and lifted divisibility, then
        refined under the bounds; what every query works on."""
        return _refine(_substitute(e, self._rewrite), self._ctx)

    def simplify(self, e: SymExpr | int | str) -> SymExpr:
        """An expression equal to ``e`` under the facts, simplified with
        them: ``N mod 16`` is 0 under ``N mod 16 == 0``, ``max(N, 1)`` is
        ``N``, a defined symbol is replaced by its definition (``e`` itself
        where that would be too large)."""
        e = as_expr(e)
        try:
            return _unlift(self._prepare(e), self._back)
        except _TooLarge:
            return e

    def bounds(self, e: SymExpr | int | str) -> tuple[int | None, int | None]:
        """An interval containing ``e`` (None: unbounded on that side)."""
        e = as_expr(e)
        try:
            prepared = self._prepare(e)
        except _TooLarge:  # sound, if weaker: every symbol is at least 1
            prepared = e
        low, high = _bounds(prepared, self._ctx)
        return (
            None if isinstance(low, float) else low,
            None if isinstance(high, float) else high,
        )

    def prove_le(self, a: SymExpr | int | str, b: SymExpr | int | str) -> bool:
        """Whether ``a <= b`` holds for every binding satisfying the facts
        (False means "not proven", not "false")."""
        difference = _add(as_expr(b), -as_expr(a))
        try:
            return _nonneg(self._prepare(difference), self._ctx)
        except _TooLarge:  # a proof step would be too large
            return False

    def prove_lt(self, a: SymExpr | int | str, b: SymExpr | int | str) -> bool:
        """Whether ``a < b`` is proven."""
        return self.prove_le(_add(as_expr(a), _ONE), b)

    def prove_eq(self, a: SymExpr | int | str, b: SymExpr | int | str) -> bool:
        """Whether ``a == b`` is proven."""
        difference = _add(as_expr(a), -as_expr(b))
        try:
            return self._is_zero(self._prepare(difference))
        except _TooLarge:
            return False

    def _is_zero(self, d: SymExpr) -> bool:
        if d == 0 or _bounds(d, self._ctx) == (0, 0):
            return True
        return _nonneg(d, self._ctx) and _nonneg(-d, self._ctx)

    def prove_divisible(self, e: SymExpr | int | str, k: SymExpr | int | str) -> bool:
        """Whether ``k`` provably divides ``e``."""
        divisor = as_expr(k)
        if divisor == 0:
            raise ShapeError(f"divisibility of {e} by 0 is undefined")
        remainder = _mod(as_expr(e), divisor)
        try:
            return self._is_zero(self._prepare(remainder))
        except _TooLarge:
            return False

    # ----- per-symbol queries ---------------------------------------------

    def lower_bound(self, name: str) -> int:
        """The least value ``name`` may take (1 unless declared higher)."""
        low, _ = self.bounds(_symbol(name))
        return 1 if low is None else max(low, 1)

    def upper_bound(self, name: str) -> int | None:
        """The largest value ``name`` may take, None if unbounded."""
        return self.bounds(_symbol(name))[1]

    def divisor(self, name: str) -> int:
        """The largest ``k`` known to divide ``name`` (1 if none)."""
        return _content(_substitute(_symbol(name), self._rewrite)) or 1

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
        lowered = {_bare_symbol(f.lhs) for f in self._facts if f.op in (">=", "==")} - {
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
