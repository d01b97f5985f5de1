"""The caps that keep symbolic dims small expressions.

An exponent of ``**`` is at most ``_MAX_EXPONENT`` (``_MAX_CONSTANT_EXPONENT``
on a constant base); a canonical polynomial has at most ``_MAX_TERMS`` terms, total degree
``_MAX_DEGREE`` and coefficients of ``_MAX_COEF_BITS`` bits; products and
divisions take at most ``_MAX_PRODUCT_WORK`` products of terms; nested powers
of ``max``, ``floordiv``, ... are bounded in length by ``_MAX_WEIGHT``. The
``_check_*`` functions raise, and the ``_too_*`` functions build, the
:class:`~irc.shapes.errors._TooLarge` error of a cap, so that an operation
over a cap is refused at a bounded cost, before or while doing the work, and
no text, such as ``((A + B)**64)**64``, can hang the parser.
"""

from __future__ import annotations

from irc.shapes.errors import _TooLarge

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
# The weight of a product (see `irc.shapes.expr._weight`), about its length written out: the
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
