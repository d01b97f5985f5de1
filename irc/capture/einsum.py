"""``np.einsum`` on traced arrays, lowered to existing graph ops.

The subscripts are parsed as NumPy parses them: explicit (``'ij,jk->ik'``)
or implicit output (the labels that appear exactly once, in the order of
their character codes: ``'Ba,aC'`` gives ``'BC'``), ``...`` for broadcast
batch dims (right-aligned across the operands, first in an implicit output),
and NumPy's interleaved form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.

Lowering, operand by operand:

- a label repeated in one operand (``'ii->i'``, the trace ``'ii'``) keeps
  the diagonal: a ``graph.select`` on an iota equality mask, then a sum
  over the repeated axis;
- a dim of size 1 broadcasts against the label's size elsewhere, as in
  NumPy (``graph.broadcast``);
- labels needed neither by the output nor by a later operand are summed out
  first (``graph.reduce sum``);
- operands are contracted pairwise, left to right (``optimize=`` is accepted
  and ignored): labels shared and summed become the K of a batched
  ``graph.matmul`` (after a ``graph.transpose`` and ``graph.reshape`` to
  ``[batch..., M, K]`` and ``[batch..., K, N]``); with none summed, the pair
  is a broadcasting ``graph.mul``;
- the last result is summed over what the output lacks and transposed to the
  output's order.

Dtypes: the operands promote as for ``np.multiply``, Python scalars
included (NumPy's einsum converts them to arrays, so they are not weak);
integer results keep their type (no widening to int64 as ``np.sum`` does);
bools compute logic (``or`` of ``and``s), here as int64 compared with 0.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irc.capture import layout
from irc.capture.ops import binary, broadcast_to, cast, compare, dtype_of, emit, select
from irc.capture.tensor import Tensor
from irc.capture.trace import current_trace, tracing_error
from irc.dialects import graph, sym
from irc.dtypes import BOOL, INT64, DType, promote
from irc.dtypes import dtype as to_dtype
from irc.errors import IrcShapeError
from irc.primitives.builtin import MUL
from irc.shapes import SymExpr

#: NumPy's labels, in the order an implicit output sorts them.
_LETTERS = string.ascii_uppercase + string.ascii_lowercase
_ELLIPSIS = "..."


@dataclass(frozen=True)
class _Term:
    """A traced array whose axes are named by distinct labels."""

    tensor: Tensor
    labels: tuple[str, ...]


def einsum(
    *operands: Any,
    out: Any = None,
    dtype: Any = None,
    order: str = "K",
    casting: str = "safe",
    optimize: Any = False,
) -> Tensor:
    """``np.einsum``: ``order`` does not change values and ``optimize`` is
    ignored (the operands are contracted pairwise, left to right)."""
    if out is not None:
        raise tracing_error("np.einsum(..., out=...) is not supported")
    subscripts, arrays = _subscripts(operands)
    tensors = [layout.as_tensor(a) for a in arrays]
    inputs, output = parse(subscripts, [t.type.rank for t in tensors])
    element = _element_type(tensors, dtype, casting)
    # NumPy's bool einsum is logic: or of ands, computed here as counts.
    compute = INT64 if element == BOOL else element
    terms = [
        _diagonal(_Term(cast(t, compute), labels)) for t, labels in zip(tensors, inputs)
    ]
    sizes = _label_sizes(terms)
    terms = [_broadcast(term, sizes) for term in terms]
    result = terms[0]
    for index, term in enumerate(terms[1:], 1):
        later = {label for t in terms[index + 1 :] for label in t.labels}
        keep = later | set(output)
        result = _contract(result, term, keep, sizes)
    result = _sum_out(result, set(output))
    tensor = layout.transpose(
        result.tensor, [result.labels.index(label) for label in output]
    )
    return compare("ne", tensor, 0) if element == BOOL else tensor


# ----- parsing -------------------------------------------------------------


def _subscripts(operands: Sequence[Any]) -> tuple[str, list[Any]]:
    """The subscripts and the arrays, from either of NumPy's call forms."""
    if not operands:
        raise tracing_error("np.einsum needs subscripts and at least one operand")
    if isinstance(operands[0], str):
        if len(operands) < 2:
            raise tracing_error("np.einsum needs at least one operand")
        return operands[0], list(operands[1:])
    # Interleaved: array, sublist, array, sublist, ..., [output sublist].
    arrays = list(operands[0::2])
    sublists = list(operands[1::2])
    output = None
    if len(operands) % 2:
        output = arrays.pop()
    text = ",".join(_sublist_text(s) for s in sublists)
    if output is not None:
        text += "->" + _sublist_text(output)
    return text, arrays


def _sublist_text(sublist: Any) -> str:
    if not isinstance(sublist, list | tuple):
        raise tracing_error(
            f"np.einsum: expected a list of int labels, got {type(sublist).__name__}"
        )
    letters = []
    for item in sublist:
        if item is Ellipsis:
            letters.append(_ELLIPSIS)
        elif isinstance(item, int | np.integer) and 0 <= item < len(_LETTERS):
            letters.append(_LETTERS[item])
        else:
            raise tracing_error(
                f"np.einsum: a sublist label must be an int in [0, {len(_LETTERS)}) "
                f"or Ellipsis, got {item!r}"
            )
    return "".join(letters)


def parse(
    subscripts: str, ranks: Sequence[int]
) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    """The labels of each operand's axes and of the output's.

    The broadcast dims of ``...`` are labelled ``...0``, ``...1`` (from the
    left of the widest ellipsis; right-aligned in narrower ones)."""
    text = subscripts.replace(" ", "")
    if text.count("->") > 1:
        raise _error(subscripts, "'->' may appear only once")
    explicit = "->" in text
    inputs_text, _, output_text = text.partition("->")
    terms = inputs_text.split(",")
    if len(terms) != len(ranks):
        raise _error(
            subscripts,
            f"{len(terms)} operand subscripts for {len(ranks)} operands",
        )
    letters = [_letters(subscripts, term) for term in terms]
    widths = [
        rank - len(labels) + (_ELLIPSIS in labels)
        for rank, labels in zip(ranks, letters)
    ]
    for index, (labels, width, rank) in enumerate(zip(letters, widths, ranks)):
        if (width != 0 and _ELLIPSIS not in labels) or width < 0:
            raise _error(
                subscripts,
                f"operand {index} has rank {rank} but its subscripts "
                f"'{terms[index]}' name {len(labels) - (_ELLIPSIS in labels)} axes",
            )
    ellipsis_rank = max(widths, default=0)
    ellipsis = tuple(f"{_ELLIPSIS}{i}" for i in range(ellipsis_rank))
    inputs = [
        _expand(labels, ellipsis[ellipsis_rank - width :])
        for labels, width in zip(letters, widths)
    ]
    if explicit:
        output_letters = _letters(subscripts, output_text)
        output = _expand(output_letters, ellipsis)
        _check_output(subscripts, output_letters, inputs)
        if ellipsis and _ELLIPSIS not in output_letters:
            raise _error(
                subscripts,
                "the operands' '...' covers dims that the output drops; write "
                "'...' in the output (or name the dims with labels to sum them)",
            )
    else:
        counts = [label for labels in letters for label in labels]
        singles = sorted(
            (c for c in set(counts) if c != _ELLIPSIS and counts.count(c) == 1),
            key=_LETTERS.index,
        )
        output = (*ellipsis, *singles)
    return inputs, output


def _letters(subscripts: str, term: str) -> list[str]:
    if term.count(_ELLIPSIS) > 1:
        raise _error(subscripts, f"'{term}' has more than one ellipsis")
    labels: list[str] = []
    for index, part in enumerate(term.split(_ELLIPSIS)):
        if index:
            labels.append(_ELLIPSIS)
        for char in part:
            if char not in _LETTERS:
                raise _error(
                    subscripts,
                    f"'{char}' is not a label (labels are letters, and '...')",
                )
            labels.append(char)
    return labels


def _expand(labels: list[str], ellipsis: tuple[str, ...]) -> tuple[str, ...]:
    if _ELLIPSIS not in labels:
        return tuple(labels)
    position = labels.index(_ELLIPSIS)
    return (*labels[:position], *ellipsis, *labels[position + 1 :])


def _check_output(
    subscripts: str, output: list[str], inputs: list[tuple[str, ...]]
) -> None:
    seen = {label for labels in inputs for label in labels}
    for label in output:
        if output.count(label) > 1:
            raise _error(subscripts, f"the output names '{label}' more than once")
        if label != _ELLIPSIS and label not in seen:
            raise _error(
                subscripts, f"the output label '{label}' names no operand's axis"
            )


def _error(subscripts: str, reason: str) -> Exception:
    return tracing_error(f"np.einsum('{subscripts}'): {reason}", IrcShapeError)


# ----- dtypes --------------------------------------------------------------


def _element_type(tensors: Sequence[Tensor], requested: Any, casting: str) -> DType:
    element = dtype_of(tensors[0])
    for tensor in tensors[1:]:
        element = promote(element, dtype_of(tensor))
    if requested is None:
        return element
    target = to_dtype(requested)
    for tensor in tensors:
        if not np.can_cast(tensor.dtype, target.numpy, casting):
            raise tracing_error(
                f"np.einsum cannot cast {tensor.irc_dtype.name} to {target.name} "
                f"under casting='{casting}'; pass casting='unsafe' or a wider dtype"
            )
    return target


# ----- lowering ------------------------------------------------------------


def _diagonal(term: _Term) -> _Term:
    """Keep the diagonal of each label repeated in one operand."""
    labels = list(term.labels)
    tensor = term.tensor
    for position in reversed(range(len(labels))):
        first = labels.index(labels[position])
        if first == position:
            continue
        dims = tensor.type.dims
        if not current_trace().facts.prove_eq(dims[first], dims[position]):
            raise tracing_error(
                f"np.einsum: the label '{labels[position]}' repeated in one operand "
                f"names axes of sizes {dims[first]} and {dims[position]}; a "
                "diagonal needs equal sizes",
                IrcShapeError,
            )
        tensor = select(_equal_indices(dims, first, position), tensor, 0)
        tensor = emit(graph.ReduceOp("sum", tensor.value, [position]))
        del labels[position]
    return _Term(tensor, tuple(labels))


def _equal_indices(dims: Sequence[SymExpr], first: int, second: int) -> Tensor:
    """``i == j`` for axes ``first`` and ``second``, size 1 elsewhere."""
    one = SymExpr.const(1)
    grid = [d if axis in (first, second) else one for axis, d in enumerate(dims)]
    grid_type = graph.TensorType(grid, INT64.ir_type)
    i = emit(graph.IotaOp(first, grid_type))
    j = emit(graph.IotaOp(second, grid_type))
    return compare("eq", i, j)


def _label_sizes(terms: Sequence[_Term]) -> dict[str, SymExpr]:
    """Each label's size: its dims agree, or are 1 and broadcast."""
    facts = current_trace().facts
    sizes: dict[str, SymExpr] = {}
    for term in terms:
        for label, dim in zip(term.labels, term.tensor.type.dims):
            known = sizes.setdefault(label, dim)
            if known == 1:
                sizes[label] = dim
            elif dim != 1 and not facts.prove_eq(known, dim):
                name = "a '...' dim" if label.startswith(_ELLIPSIS) else f"'{label}'"
                raise tracing_error(
                    f"np.einsum: the label {name} has sizes {known} and {dim} "
                    "in different operands; make them equal (or declare a fact "
                    f"'{known} == {dim}')",
                    IrcShapeError,
                )
    return sizes


def _broadcast(term: _Term, sizes: dict[str, SymExpr]) -> _Term:
    dims = [sizes[label] for label in term.labels]
    return _Term(broadcast_to(term.tensor, dims), term.labels)


def _sum_out(term: _Term, needed: set[str]) -> _Term:
    """Sum over the labels that nothing needs any more."""
    axes = [i for i, label in enumerate(term.labels) if label not in needed]
    if not axes:
        return term
    tensor = emit(graph.ReduceOp("sum", term.tensor.value, axes))
    return _Term(tensor, tuple(label for label in term.labels if label in needed))


def _contract(
    lhs: _Term, rhs: _Term, keep: set[str], sizes: dict[str, SymExpr]
) -> _Term:
    """The product of two terms, summed over the shared labels not kept."""
    lhs = _sum_out(lhs, keep | set(rhs.labels))
    rhs = _sum_out(rhs, keep | set(lhs.labels))
    shared = [label for label in lhs.labels if label in rhs.labels]
    batch = [label for label in shared if label in keep]
    summed = [label for label in shared if label not in keep]
    left = [label for label in lhs.labels if label not in shared]
    right = [label for label in rhs.labels if label not in shared]
    labels = (*batch, *left, *right)
    if not summed:
        product = binary(
            MUL, _aligned(lhs, labels, sizes), _aligned(rhs, labels, sizes)
        )
        return _Term(product, labels)
    a = _grouped(lhs, (batch, left, summed), sizes)
    b = _grouped(rhs, (batch, summed, right), sizes)
    product = emit(graph.MatmulOp(a.value, b.value))
    dims = [sizes[label] for label in labels]
    return _Term(layout.reshape(product, dims), labels)


def _aligned(term: _Term, labels: Sequence[str], sizes: dict[str, SymExpr]) -> Tensor:
    """``term`` with its axes in the order of ``labels`` and size-1 axes for
    the labels it lacks, ready to broadcast."""
    present = [label for label in labels if label in term.labels]
    tensor = layout.transpose(
        term.tensor, [term.labels.index(label) for label in present]
    )
    one = SymExpr.const(1)
    dims = [sizes[label] if label in term.labels else one for label in labels]
    return layout.reshape(tensor, dims)


def _grouped(
    term: _Term,
    groups: tuple[Sequence[str], Sequence[str], Sequence[str]],
    sizes: dict[str, SymExpr],
) -> Tensor:
    """``term`` as ``[batch..., rows, columns]``: the batch labels as they
    are, each of the other two groups merged into one axis."""
    batch, rows, columns = groups
    order = [*batch, *rows, *columns]
    tensor = layout.transpose(
        term.tensor, [term.labels.index(label) for label in order]
    )
    dims = [
        *(sizes[label] for label in batch),
        sym.product(sizes[label] for label in rows),
        sym.product(sizes[label] for label in columns),
    ]
    return layout.reshape(tensor, dims)
