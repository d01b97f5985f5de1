"""Which keys an attention kernel's rows see: the range fact of a causal mask.

An attention kernel (``irc.lowering.fusion_to_loop.attention``) walks the
keys in blocks. When its exponent ``x`` masks every key ``j`` past the
query row ``i`` with a *fill* that makes the term exactly zero after the
exponential, the keys past a block's last row are never needed, and the
walk of the program with rows ``[r, r + BLOCK_M)`` stops at
``min(keys, r + BLOCK_M)``: the fully masked blocks are never loaded.

The mask must be a comparison of two iotas, the rows' and the keys'
(``np.tri`` captures as ``iota(1) <= iota(0)``), through casts, broadcasts
and comparisons with constants (``np.tri(S) == 0``), that selects a
constant fill ``f <= FILL_LIMIT`` for the keys past the row
(``np.where(tri == 0, -1e9, s)``). This is decided by evaluating ``x``'s
ops on each side of the comparison (:func:`_side`: each value is a known
constant, the data plus a known constant offset, or unknown).

Skipping is exact (the results equal those of the walk over every key) when
each skipped term's exponential is exactly 0 and no skipped term is the
row's max: float32's ``exp`` is 0 below -103.97, so when every row's max
over its kept keys is above ``f + 104``. With ``FILL_LIMIT`` at -1e8 that
holds unless scores reach -1e8. A select never reads the scores it masks,
so NaN or infinite scores past the row do not reach the result in NumPy
either. An *additive* mask (``s + (1 - tri) * -1e10``, GPT-2's) is not
skipped: NumPy's ``NaN + -1e10`` is NaN, so a non-finite score past the row
makes the whole row NaN, which a walk that skips it would not see (for the
same reason ``data * 0`` is not taken to be 0: ``inf * 0`` is NaN). Every
row keeps its key 0 (``0 <= i``), so no row is left with no key; the mask
``j < i``, which leaves row 0 none, is not skipped.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from irc.dialects import fusion
from irc.dialects import graph as g
from irc.primitives.builtin import ADD, DIV, MUL, SUB
from irc.primitives.declaration import Primitive

#: A fill at or below this is taken to make its masked terms exactly 0
#: after the exponential (see the module docstring for when that holds):
#: -1e9 and -1e10, the fills of common code, are; -1e4 is not, as scores
#: near -2e4 would make the masked terms the row's max.
FILL_LIMIT = -1e8


@dataclass(frozen=True)
class _Known:
    """A value on one side of the mask: the constant ``constant``, or the
    data (the scores, a bias read from memory) plus ``offset``."""

    constant: float | None = None
    offset: float | None = None

    @property
    def is_fill(self) -> bool:
        """A constant fill: data plus an offset is not one, since the data
        may be NaN or infinite."""
        return self.constant is not None and self.constant <= FILL_LIMIT


_DATA = _Known(offset=0.0)

_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}
#: The arithmetic whose constants fold and whose offsets are followed.
_ARITHMETIC = (ADD, SUB, MUL, DIV)
#: A comparison ``a pred b`` as ``b pred' a``.
_SWAPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def skips_keys_past_the_row(chain: fusion.AttentionChain) -> bool:
    """Whether the chain's exponent masks every key past its row with a
    fill (see the module docstring)."""
    for mask in _row_key_comparisons(chain):
        # The mask's truth where the key is past the row: "key > row" or
        # not "key <= row". (Other relations keep other keys.)
        past_the_row = {"gt": True, "le": False}.get(_key_predicate(mask, chain))
        if past_the_row is None:
            continue
        masked = _side(chain.exponent, mask, past_the_row)
        if masked is not None and masked.is_fill:
            return True
    return False


def _row_key_comparisons(chain: fusion.AttentionChain) -> list[g.CompareOp]:
    """The comparisons of the rows' iota with the keys' that the exponent's
    elementwise chain (through broadcasts) reads."""
    found: list[g.CompareOp] = []
    pending, seen = [chain.exponent], set()
    while pending:
        op = pending.pop().owner
        if not isinstance(op, Operation) or op in seen:
            continue
        seen.add(op)
        if isinstance(op, g.CompareOp) and _key_predicate(op, chain) is not None:
            found.append(op)
        elif fusion.is_elementwise(op) or isinstance(op, g.BroadcastOp):
            pending.extend(op.operands)
    return found


def _key_predicate(compare: g.CompareOp, chain: fusion.AttentionChain) -> str | None:
    """``pred`` of ``compare`` as ``key pred row`` when it compares the
    keys' iota with the rows' (right-aligned with the scores), else None."""
    rank = len(chain.keys.shape)
    axes = [_iota_axis(v, rank, chain) for v in compare.operands]
    predicate = compare.predicate.data.value
    if axes == [rank - 1, rank - 2]:
        return predicate
    if axes == [rank - 2, rank - 1]:
        return _SWAPPED[predicate]
    return None


def _iota_axis(value: SSAValue, rank: int, chain: fusion.AttentionChain) -> int | None:
    """The scores' axis that ``value``, an iota through casts, counts along
    (right-aligned: broadcasting adds leading axes), if its extent is the
    scores' there."""
    op = value.owner
    while isinstance(op, g.CastOp):
        op = op.operands[0].owner
    if not isinstance(op, g.IotaOp):
        return None
    dims = fusion.shape_of(op.result)
    axis = op.axis.value.data + rank - len(dims)
    if axis < 0 or dims[op.axis.value.data] != chain.keys.shape[axis]:
        return None
    return axis


def _side(value: SSAValue, mask: g.CompareOp, truth: bool) -> _Known | None:
    """``value`` where ``mask`` is ``truth``: known, or None."""
    op = value.owner
    if op is mask:
        return _Known(constant=float(truth))
    if isinstance(op, g.ConstantOp) and op.is_splat:
        return _Known(constant=float(op.literal().item()))
    if isinstance(op, g.CastOp | g.BroadcastOp):
        return _side(op.operands[0], mask, truth)
    if isinstance(op, g.SelectOp):
        condition = _side(op.operands[0], mask, truth)
        if condition is None or condition.constant is None:
            return None
        return _side(op.operands[1 if condition.constant else 2], mask, truth)
    if isinstance(op, g.CompareOp):
        lhs, rhs = (_side(v, mask, truth) for v in op.operands)
        if lhs is None or rhs is None or None in (lhs.constant, rhs.constant):
            return None
        compare = _COMPARE[op.predicate.data.value]
        return _Known(constant=float(compare(lhs.constant, rhs.constant)))
    if g.is_elementwise_op(op, *_ARITHMETIC):
        lhs, rhs = (_side(v, mask, truth) for v in op.operands)
        if lhs is None or rhs is None:
            return None
        return _arithmetic(op.KIND, lhs, rhs)
    if not isinstance(op, Operation) or isinstance(
        op, (g.MatmulOp, *fusion.LAYOUT_OPS)
    ):
        return _DATA  # the scores, or data read from memory
    return None  # computed some other way: not followed


def _arithmetic(kind: Primitive, lhs: _Known, rhs: _Known) -> _Known | None:
    """``lhs op rhs`` where each is known: constants fold; the data's offset
    moves by an added or subtracted constant, and scales by a positive
    one (the data times 0 is not 0: NaN and infinities are data)."""
    if lhs.constant is not None and rhs.constant is not None:
        if kind is DIV and rhs.constant == 0:
            return None
        return _Known(constant=float(kind.numpy(lhs.constant, rhs.constant)))
    data, other = (lhs, rhs) if lhs.offset is not None else (rhs, lhs)
    if data.offset is None:
        return None
    if other.offset is not None:  # data + data (a bias)
        return _Known(offset=data.offset + other.offset) if kind is ADD else None
    constant = other.constant
    assert constant is not None
    if kind is ADD or (kind is SUB and data is lhs):
        shift = constant if kind is ADD else -constant
        return _Known(offset=data.offset + shift)
    if kind is MUL and constant > 0:
        return _Known(offset=data.offset * constant)
    if kind is DIV and data is lhs and constant > 0:
        return _Known(offset=data.offset / constant)
    return None
