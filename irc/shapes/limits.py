"""The caps that keep symbolic dims small expressions.

An exponent of ``**`` is at most ``MAX_EXPONENT`` (``MAX_CONSTANT_EXPONENT``
on a constant base); a canonical polynomial has at most ``MAX_TERMS`` terms, total degree
``MAX_DEGREE`` and coefficients of ``MAX_COEF_BITS`` bits; products and
divisions take at most ``MAX_PRODUCT_WORK`` products of terms; nested powers
of ``max``, ``floordiv``, ... are bounded in length by ``MAX_WEIGHT``. The
``_check_*`` functions raise, and the ``_too_*`` functions build, the
:class:`~irc.shapes.errors.TooLarge` error of a cap, so that an operation
over a cap is refused at a bounded cost, before or while doing the work, and
no text, such as ``((A + B)**64)**64``, can hang the parser.
"""

from __future__ import annotations

from irc.shapes.errors import TooLarge

# Caps that keep hostile text (`(N + M)**10000`) from hanging the parser.
MAX_EXPONENT = 64
MAX_CONSTANT_EXPONENT = 1024
# Caps on the size of a canonical polynomial. Symbolic dims are small
# expressions, yet `((A + B)**64)**64` or a long product of sums would expand
# into astronomically many terms; each cap is checked before or while the
# work that could exceed it is done, so refusing an expression costs little.
#
# The number of monomials of one polynomial.
MAX_TERMS = 4096
# The total degree of a monomial, its atoms' powers summed (`N*N*M` has
# degree 3): as high as one `**` may raise a symbol.
MAX_DEGREE = MAX_EXPONENT
# The bit length of a coefficient, far below the length that Python refuses
# to convert to decimal text (4300 digits), so every expression prints.
MAX_COEF_BITS = 8192
# The decimal digits of 2**MAX_COEF_BITS: a literal with more is too large.
MAX_COEF_DIGITS = len(str(2**MAX_COEF_BITS))
# Pairs of terms multiplied by one product or division: an `m`-term times an
# `n`-term polynomial takes `m*n`, refused before any is computed.
MAX_PRODUCT_WORK = 65536
# The weight of a product (see `irc.shapes.expr._weight`), about its length written out: the
# caps above bound it for polynomials in symbols, but not once powers of
# `max`, `floordiv`, ... nest, as in `max(max(N, 1)**64, 2)**64`.
MAX_WEIGHT = 2**20


def check_terms(count: int, subject: str) -> None:
    if count > MAX_TERMS:
        raise TooLarge(subject, f"has more than {MAX_TERMS} terms")


def check_coefficient(coef: int, subject: str) -> None:
    if coef.bit_length() > MAX_COEF_BITS:
        raise TooLarge(subject, f"has a coefficient of more than {MAX_COEF_BITS} bits")


# The errors of the caps that callers check themselves, as their subjects
# take some work to write.


def too_high(degree: int, subject: str) -> TooLarge:
    return TooLarge(subject, f"has total degree {degree}, more than {MAX_DEGREE}")


def too_long(subject: str) -> TooLarge:
    return TooLarge(
        subject,
        f"is longer than {MAX_WEIGHT} symbols, constants and operations written out",
    )


def too_much_work(subject: str) -> TooLarge:
    return TooLarge(subject, f"takes more than {MAX_PRODUCT_WORK} products of terms")


def constant_too_large() -> TooLarge:
    return TooLarge("a constant", f"has more than {MAX_COEF_BITS} bits")
