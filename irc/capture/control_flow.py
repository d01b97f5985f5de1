"""Structured control flow on traced values, with jax.lax's semantics:
``irc.cond``, ``irc.switch`` (a tree of conds), ``irc.while_loop``,
``irc.fori_loop`` and ``irc.scan``.

A traced function has no Python ``if`` or ``for`` over data, so these take
the branches and loop bodies as functions and trace each of them once into
a region of ``graph.cond``, ``graph.while`` or ``graph.for``
(``irc.dialects.graph``; docs/control-flow.md). Each region is isolated from
above: a nested trace whose inputs are the region's block arguments. Values
a function closes over from the enclosing trace are found after it is
traced and become explicit operands (extra operands of a cond, extra carries
passed through unchanged by a loop), as JAX does with closed-over tracers.

Carries, operands and results are pytrees (``irc.pytree``) of arrays;
Python scalars and NumPy arrays become constants as NumPy gives them
(``np.asarray(0.0)`` is float64: write ``np.float32(0)`` for a float32
carry), except where a Python scalar (or a weak value, such as a loop
index) meets a carry of known type, which it takes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.ir import Block, Operation, Region, SSAValue

from irc import pytree
from irc.capture import ops
from irc.capture.layout import as_tensor, guard
from irc.capture.tensor import SymDim, Tensor
from irc.capture.trace import Trace, current_trace, tracing, tracing_error
from irc.capture.writes import MaskRead
from irc.dialects import graph
from irc.dialects.sym import shape_text
from irc.dtypes import dtype
from irc.errors import IrcShapeError, IrcTypeError
from irc.primitives.builtin import ADD
from irc.shapes import SymExpr

__all__ = ["cond", "fori_loop", "scan", "switch", "while_loop"]


# --------------------------------------------------------------------------
# Regions: a function traced on block arguments
# --------------------------------------------------------------------------


@dataclass
class _Region:
    """A function being traced into ``block``: what it returned (leaves not
    yet turned into yielded values) and the structure of its result."""

    trace: Trace
    block: Block
    leaves: list[Any]
    tree: pytree.TreeDef

    def yield_values(
        self, leaves: Sequence[Any], expected: Sequence[graph.TensorType | None]
    ) -> None:
        """End the block with ``graph.yield`` of ``leaves`` (made arrays
        inside the region, of the ``expected`` type where one is known)."""
        with tracing(self.trace):
            values = [
                _leaf_tensor(leaf, want).value
                for leaf, want in zip(leaves, expected, strict=True)
            ]
        self.block.add_op(graph.YieldOp(values))


def _trace_region(
    argument_types: Sequence[graph.TensorType],
    call: Callable[[list[Tensor]], Any],
) -> _Region:
    """Trace ``call`` on proxies of a new block's arguments, in a trace nested
    in the current one (so it knows the same facts about the symbols)."""
    block = Block(arg_types=argument_types)
    nested = Trace(block, current_trace().facts)
    with tracing(nested):
        result = call([Tensor(argument) for argument in block.args])
        leaves, tree = pytree.flatten(result)
        # NumPy values are arrays of their own dtype; Python scalars and weak
        # values wait for the type they meet (``_leaf_tensor``).
        leaves = [
            as_tensor(leaf) if isinstance(leaf, np.ndarray | np.generic) else leaf
            for leaf in leaves
        ]
    return _Region(nested, block, leaves, tree)


def _leaf_tensor(leaf: Any, expected: graph.TensorType | None) -> Tensor:
    """A returned leaf as a traced array; a Python scalar or weak value takes
    the ``expected`` element type, as NumPy's assignment would give it."""
    weak = ops.is_weak(leaf)
    if isinstance(leaf, SymDim):
        leaf = as_tensor(np.add(leaf, 0))
    if weak and expected is not None and expected.rank == 0:
        element = dtype(expected.element_type)
        if isinstance(leaf, Tensor):
            return ops.cast(leaf, element)
        return ops.splat(leaf, element, ())
    if isinstance(leaf, Tensor | np.ndarray | np.generic | bool | int | float):
        return as_tensor(leaf)
    if isinstance(leaf, MaskRead):
        raise leaf.escaped("returned by a function given to irc's control flow")
    raise tracing_error(
        f"a function given to irc's control flow returned a {type(leaf).__name__}; "
        "it must return arrays or Python scalars (or nested dicts, lists and "
        "tuples of them)"
    )


def _outer_values(block: Block) -> list[SSAValue]:
    """The values ``block``'s ops use that are defined outside it, in order
    of first use (nested region ops are isolated, so only the block's own
    ops can use them)."""
    found: dict[SSAValue, None] = {}
    for op in block.ops:
        for operand in op.operands:
            if not _defined_in(operand, block):
                found.setdefault(operand, None)
    return list(found)


def _defined_in(value: SSAValue, block: Block) -> bool:
    owner = value.owner
    return owner is block or (isinstance(owner, Operation) and owner.parent is block)


def _capture(block: Block, captured: Sequence[SSAValue], position: int) -> None:
    """Make ``captured`` block arguments of ``block`` from ``position`` on,
    in place of the outer values its ops used."""
    for offset, value in enumerate(captured):
        argument = block.insert_arg(value.type, position + offset)
        value.replace_uses_with_if(
            argument, lambda use: use.operation.parent_block() is block
        )


def _captured(*regions: _Region) -> list[SSAValue]:
    found: dict[SSAValue, None] = {}
    for region in regions:
        found.update(dict.fromkeys(_outer_values(region.block)))
    return list(found)


def _pass_through(block: Block, arguments: int, count: int, carries: int) -> None:
    """A loop body yields its ``count`` captured arguments (from block
    argument ``arguments`` on) unchanged, after its ``carries`` carries:
    they are carries that never change."""
    terminator = block.last_op
    assert isinstance(terminator, graph.YieldOp)
    values = list(terminator.values)
    values[carries:carries] = block.args[arguments : arguments + count]
    terminator.operands = values


def _yielded(region: _Region) -> list[SSAValue]:
    terminator = region.block.last_op
    assert isinstance(terminator, graph.YieldOp)
    return list(terminator.values)


# --------------------------------------------------------------------------
# Values in and out
# --------------------------------------------------------------------------


def _inputs(tree: Any, api: str, what: str) -> tuple[list[Tensor], pytree.TreeDef]:
    """The leaves of ``tree`` (operands or initial carries) as traced arrays
    of the enclosing trace."""
    leaves, treedef = pytree.flatten(tree)
    tensors = []
    for path, leaf in zip(pytree.leaf_paths(tree), leaves):
        if isinstance(leaf, SymDim):
            leaf = np.add(leaf, 0)
        if not isinstance(leaf, Tensor | np.ndarray | np.generic | bool | int | float):
            raise tracing_error(
                f"{api}: {what} {_path(path)}is a {type(leaf).__name__}; pass "
                "arrays or Python scalars (or nested dicts, lists and tuples of them)"
            )
        tensors.append(as_tensor(leaf))
    return tensors, treedef


def _path(path: str) -> str:
    return f"{path!r} " if path else ""


def _describe(value_type: graph.TensorType) -> str:
    return f"{dtype(value_type.element_type).name}{shape_text(value_type.dims)}"


def _check_structure(
    api: str, what: str, expected: pytree.TreeDef, got: pytree.TreeDef
) -> None:
    if expected != got:
        raise tracing_error(
            f"{api}: {what} has the structure {got}, but it must be {expected} "
            "(the same nesting of dicts, lists and tuples)",
            IrcTypeError,
        )


def _check_types(
    api: str,
    what: str,
    paths: Sequence[str],
    expected: Sequence[graph.TensorType],
    region: _Region,
    hint: str,
) -> None:
    for path, want, value in zip(paths, expected, _yielded(region)):
        have = value.type
        assert isinstance(have, graph.TensorType)
        if have != want:
            error = IrcShapeError if have.element_type == want.element_type else None
            raise tracing_error(
                f"{api}: {what} {_path(path)}is {_describe(have)} but must be "
                f"{_describe(want)}; {hint}",
                error or IrcTypeError,
            )


def _types(tensors: Sequence[Tensor]) -> list[graph.TensorType]:
    return [tensor.type for tensor in tensors]


# --------------------------------------------------------------------------
# cond
# --------------------------------------------------------------------------


def cond(
    pred: Any,
    true_fun: Callable[..., Any],
    false_fun: Callable[..., Any],
    *operands: Any,
) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as
    ``jax.lax.cond``: ``pred`` is a scalar bool (a 0-d bool array, or a
    Python bool), both functions are traced and must return the same
    structure of arrays of the same dtypes and shapes (symbolic included)."""
    api = "irc.cond"
    predicate = _predicate(pred, api, "pred", integers=True)
    return _cond(api, predicate, (true_fun, false_fun), operands, "false_fun's result")


def _cond(
    api: str,
    predicate: Tensor,
    functions: tuple[Callable[..., Any], Callable[..., Any]],
    operands: tuple[Any, ...],
    second: str,
) -> Any:
    """A graph.cond choosing between ``functions`` (true, false) on the 0-d
    bool ``predicate``; ``second`` names the false function's result in
    errors (``irc.switch`` builds its tree of conds from this)."""
    true_fun, false_fun = functions
    inputs, tree = _inputs(operands, api, "operand")
    types = _types(inputs)

    def call(function: Callable[..., Any]) -> Callable[[list[Tensor]], Any]:
        return lambda proxies: function(*pytree.unflatten(tree, proxies))

    then_region = _trace_region(types, call(true_fun))
    else_region = _trace_region(types, call(false_fun))
    _check_structure(api, second, then_region.tree, else_region.tree)
    expected = _branch_types(then_region.leaves, else_region.leaves)
    then_region.yield_values(then_region.leaves, expected)
    else_region.yield_values(else_region.leaves, expected)
    result_types = [_tensor_type(value) for value in _yielded(then_region)]
    _check_types(
        api,
        second,
        _paths(then_region),
        result_types,
        else_region,
        "both branches must return the same dtypes and shapes (cast with "
        ".astype, or broadcast with np.broadcast_to)",
    )
    captured = _captured(then_region, else_region)
    for region in (then_region, else_region):
        _capture(region.block, captured, len(inputs))
    op = graph.CondOp(
        predicate.value,
        [*(tensor.value for tensor in inputs), *captured],
        Region(then_region.block),
        Region(else_region.block),
        result_types,
    )
    current_trace().emit(op)
    return pytree.unflatten(then_region.tree, [Tensor(r) for r in op.outputs])


def _predicate(pred: Any, api: str, what: str, integers: bool = False) -> Tensor:
    """``pred`` as a 0-d bool array of the current trace. With ``integers``
    (``lax.cond``'s rule, not ``lax.while_loop``'s), a scalar integer is a
    predicate too: ``pred != 0``."""
    if isinstance(pred, bool | np.bool_):
        return ops.splat(bool(pred), dtype(graph.PREDICATE_TYPE.element_type), ())
    if isinstance(pred, Tensor) and pred.type == graph.PREDICATE_TYPE:
        return pred
    if integers and _is_integer_scalar(pred):
        return ops.compare("ne", _integer_tensor(pred), 0)
    given = (
        f"a {_describe(pred.type)} array"
        if isinstance(pred, Tensor)
        else f"a {type(pred).__name__}"
    )
    kinds = (
        "a scalar bool or integer (a 0-d array or a Python scalar)"
        if integers
        else "a scalar bool (a 0-d bool array or a Python bool)"
    )
    raise tracing_error(
        f"{api}: {what} must be {kinds}, "
        f"got {given}; compare to make one (x.sum() > 0), reduce an array of "
        "bools with .any() or .all(), or index a single element",
        IrcTypeError,
    )


def _is_integer_scalar(value: Any) -> bool:
    """A Python int, a symbolic size (which stands for one), a NumPy integer
    scalar or 0-d array, or a traced 0-d integer array."""
    if isinstance(value, SymDim):
        return True
    if isinstance(value, Tensor):
        return value.type.rank == 0 and value.irc_dtype.kind in "iu"
    if isinstance(value, np.ndarray | np.generic):
        return value.ndim == 0 and value.dtype.kind in "iu"
    return isinstance(value, int)


def _integer_tensor(value: Any) -> Tensor:
    """An ``_is_integer_scalar`` value as a 0-d array of the current trace
    (a symbolic size as its value, ``graph.dim``)."""
    return as_tensor(np.add(value, 0) if isinstance(value, SymDim) else value)


def _branch_types(
    then_leaves: Sequence[Any], else_leaves: Sequence[Any]
) -> list[graph.TensorType | None]:
    """The type each result takes where one branch gives a traced array and
    the other a Python scalar (which takes that type); None elsewhere."""
    expected: list[graph.TensorType | None] = []
    for first, second in zip(then_leaves, else_leaves, strict=True):
        if isinstance(first, Tensor) and not first.weak and ops.is_weak(second):
            expected.append(first.type)
        elif isinstance(second, Tensor) and not second.weak and ops.is_weak(first):
            expected.append(second.type)
        else:
            expected.append(None)
    return expected


def _tensor_type(value: SSAValue) -> graph.TensorType:
    value_type = value.type
    assert isinstance(value_type, graph.TensorType), "graph values are tensors"
    return value_type


def _paths(region: _Region) -> list[str]:
    return pytree.leaf_paths(pytree.unflatten(region.tree, region.leaves))


# --------------------------------------------------------------------------
# switch: a balanced tree of conds
# --------------------------------------------------------------------------


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[index](*operands)``, as ``jax.lax.switch``: ``index`` is a
    scalar integer (a 0-d integer array, a Python int or a size), clamped into
    ``[0, len(branches) - 1]``; every branch is traced and must return the
    same structure of arrays of the same dtypes and shapes.

    It is a balanced binary tree of ``graph.cond`` on ``index < middle``
    (graph has no n-way op, and the conds' capture, canonicalisation,
    lowering and gradient rules then serve it unchanged): about
    ``log2(len(branches))`` decisions per call, and a constant index folds
    to its branch under ``canonicalize``."""
    api = "irc.switch"
    branches = list(branches)
    if not branches:
        raise tracing_error(f"{api}: branches is empty; pass at least one function")
    for position, branch in enumerate(branches):
        if not callable(branch):
            raise tracing_error(
                f"{api}: branches[{position}] is a {type(branch).__name__}, not a "
                "function",
                IrcTypeError,
            )
    clamped = _clamped_index(api, index, len(branches))
    return _switch_node(api, clamped, branches, 0, len(branches), operands)


def _clamped_index(api: str, index: Any, count: int) -> Tensor:
    """``index`` as a 0-d integer array clamped into ``[0, count - 1]``."""
    if isinstance(index, bool | np.bool_) or (
        isinstance(index, Tensor) and index.type == graph.PREDICATE_TYPE
    ):
        index = as_tensor(index).astype(np.int32)  # JAX converts a bool index too
    if not _is_integer_scalar(index):
        given = (
            f"a {_describe(index.type)} array"
            if isinstance(index, Tensor)
            else f"a {type(index).__name__}"
        )
        raise tracing_error(
            f"{api}: index must be a scalar integer (a 0-d integer array, a "
            f"Python int or a size), got {given}; cast a float index with "
            ".astype(np.int32)",
            IrcTypeError,
        )
    index = _integer_tensor(index)
    low = ops.select(ops.compare("lt", index, 0), 0, index)
    return ops.select(ops.compare("gt", low, count - 1), count - 1, low)


def _switch_node(
    api: str,
    index: Tensor,
    branches: Sequence[Callable[..., Any]],
    low: int,
    high: int,
    operands: tuple[Any, ...],
) -> Any:
    """``branches[index](*operands)`` for ``low <= index < high``."""
    if high - low == 1:
        return branches[low](*operands)
    middle = (low + high) // 2
    predicate = ops.compare("lt", index, middle)

    def half(start: int, stop: int) -> Callable[..., Any]:
        # ``index`` is closed over: the nested cond captures it as an operand.
        return lambda *values: _switch_node(api, index, branches, start, stop, values)

    return _cond(
        api,
        predicate,
        (half(low, middle), half(middle, high)),
        operands,
        f"branches[{middle}]'s result (against branches[{low}]'s)",
    )


# --------------------------------------------------------------------------
# while_loop
# --------------------------------------------------------------------------


def while_loop(
    cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any
) -> Any:
    """``val = init_val; while cond_fun(val): val = body_fun(val)``, as
    ``jax.lax.while_loop``: the carry keeps its structure, dtypes and
    shapes. As in JAX, reverse mode goes through it only where no
    derivative flows through a float carry (the input reaching just the
    predicate or integer carries: the trip count counts as a constant);
    otherwise use ``irc.fori_loop`` with static bounds, or ``irc.scan``."""
    api = "irc.while_loop"
    inits, tree = _inputs(init_val, api, "init_val leaf")
    types = _types(inits)
    paths = pytree.leaf_paths(init_val)

    def call(function: Callable[[Any], Any]) -> Callable[[list[Tensor]], Any]:
        return lambda proxies: function(pytree.unflatten(tree, proxies))

    cond_region = _trace_region(types, call(cond_fun))
    if len(cond_region.leaves) != 1 or cond_region.tree != pytree.LEAF:
        raise tracing_error(
            f"{api}: cond_fun must return a scalar bool, got the structure "
            f"{cond_region.tree}",
            IrcTypeError,
        )
    with tracing(cond_region.trace):
        predicate = _predicate(cond_region.leaves[0], api, "cond_fun's result")
    cond_region.block.add_op(graph.YieldOp([predicate.value]))
    body_region = _trace_region(types, call(body_fun))
    _check_structure(api, "body_fun's result", tree, body_region.tree)
    body_region.yield_values(body_region.leaves, types)
    _check_carries(api, "body_fun's result", paths, types, body_region)
    captured = _captured(cond_region, body_region)
    for region in (cond_region, body_region):
        _capture(region.block, captured, len(inits))
    _pass_through(body_region.block, len(inits), len(captured), len(inits))
    op = graph.WhileOp(
        [*(tensor.value for tensor in inits), *captured],
        Region(cond_region.block),
        Region(body_region.block),
    )
    current_trace().emit(op)
    results = [Tensor(r) for r in op.outputs[: len(inits)]]
    return pytree.unflatten(tree, results)


def _check_carries(
    api: str,
    what: str,
    paths: Sequence[str],
    types: Sequence[graph.TensorType],
    region: _Region,
) -> None:
    """A loop body's yielded carries have the initial carries' types."""
    _check_types(
        api,
        what,
        paths,
        types,
        region,
        "a carry keeps its dtype and shape from one iteration to the next "
        "(cast with .astype, or give init_val the type the body computes)",
    )


# --------------------------------------------------------------------------
# scan and fori_loop: graph.for
# --------------------------------------------------------------------------


def scan(
    f: Callable[[Any, Any], Any],
    init: Any,
    xs: Any = None,
    length: int | SymDim | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
) -> tuple[Any, Any]:
    """``jax.lax.scan``: ``carry = init; for x in xs: carry, y = f(carry, x)``,
    returning the last carry and the ``y``s stacked along a new leading axis.
    ``xs`` is a pytree of arrays sliced along their leading axis, whose
    length (an int or a symbolic size) must be the same for every leaf;
    without ``xs``, ``length`` gives the trip count and ``f`` gets None.
    ``reverse=True`` runs from the last slice to the first (the ``y``s stay
    in the order of ``xs``). A ``y`` leaf may be None (no output).

    ``unroll`` (a positive int, or a bool: True for all iterations, False
    for one) is checked as JAX checks it and otherwise only a hint: irc
    keeps one ``graph.for`` iteration per step whatever it says, so the
    results are the same as without it (docs/control-flow.md)."""
    api = "irc.scan"
    _check_unroll(api, unroll)
    carries, carry_tree = _inputs(init, api, "init leaf")
    sequences, xs_tree = ([], None) if xs is None else _inputs(xs, api, "xs leaf")
    paths = [] if xs is None else pytree.leaf_paths(xs)
    trip_count = _scan_length(api, sequences, paths, length)

    def step(index: Tensor, carry: Any, x: Any) -> Any:
        return f(carry, x)

    return _counted_loop(
        api,
        trip_count,
        (carries, carry_tree, pytree.leaf_paths(init)),
        (sequences, xs_tree),
        step,
        reverse,
    )


def _check_unroll(api: str, unroll: Any) -> None:
    """``jax.lax.scan``'s rule: a bool, or an int of at least 1."""
    if isinstance(unroll, bool | np.bool_):
        return
    message = f"{api}: unroll must be a bool or a positive int, got {unroll!r}"
    if not isinstance(unroll, int | np.integer):
        raise tracing_error(message, IrcTypeError)
    if unroll < 1:
        raise tracing_error(message)


def _scan_length(
    api: str,
    sequences: Sequence[Tensor],
    paths: Sequence[str],
    length: int | SymDim | None,
) -> SymExpr:
    """The trip count: ``length`` or the leading dim every ``xs`` leaf shares."""
    facts = current_trace().facts
    trip_count = None if length is None else ops.as_size(length, f"{api} length")
    for path, sequence in zip(paths, sequences):
        if sequence.type.rank == 0:
            raise tracing_error(
                f"{api}: xs leaf {_path(path)}is a 0-d array; xs are sliced along "
                "their leading axis, so each must have one",
                IrcShapeError,
            )
        leading = sequence.type.dims[0]
        if trip_count is None:
            trip_count = leading
        elif not (leading == trip_count or facts.prove_eq(leading, trip_count)):
            raise tracing_error(
                f"{api}: xs leaf {_path(path)}has the leading dim {leading}, but "
                f"the length is {trip_count}; every xs leaf must have the same "
                "leading dim (the number of iterations)",
                IrcShapeError,
            )
    if trip_count is None:
        raise tracing_error(
            f"{api}: without xs, pass length= (an int or a symbolic size such as "
            "x.shape[0]) to say how many iterations to run",
            IrcShapeError,
        )
    return trip_count


def fori_loop(
    lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any
) -> Any:
    """``val = init_val; for i in range(lower, upper): val = body_fun(i, val)``,
    as ``jax.lax.fori_loop``. With bounds that are ints or symbolic sizes
    (``x.shape[0]``) it is a counted loop (``graph.for``, differentiable as
    a scan); with a bound that is a traced 0-d integer array it is a while
    loop (differentiable as ``while_loop`` is). ``i`` behaves as a Python
    int in arithmetic (its dtype does not promote the arrays it meets). A
    symbolic trip count is a size: ``upper < lower`` there breaks a guard
    at call time rather than running no iterations (static bounds run
    none, as ``range`` does)."""
    api = "irc.fori_loop"
    if _is_size(lower) and _is_size(upper):
        return _static_fori_loop(api, lower, upper, body_fun, init_val)
    return _traced_fori_loop(api, lower, upper, body_fun, init_val)


def _is_size(value: Any) -> bool:
    return isinstance(value, SymDim) or (
        isinstance(value, int | np.integer) and not isinstance(value, bool)
    )


def _static_fori_loop(
    api: str, lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any
) -> Any:
    start = ops.as_dim(lower, f"{api} lower")
    trip_count = ops.as_dim(upper, f"{api} upper") - start
    constant = trip_count.constant
    if constant is not None:
        trip_count = SymExpr.const(max(constant, 0))  # range() of no items
    elif not current_trace().facts.prove_le(SymExpr.const(0), trip_count):
        guard(trip_count, ">=", 0, f"{api} upper >= lower")
    carries, tree = _inputs(init_val, api, "init_val leaf")

    def step(index: Tensor, carry: Any, x: Any) -> Any:
        if start != 0:
            offset = ops.emit(graph.DimOp(start, index.type.element_type))
            index = ops.binary(ADD, index, offset)
        return body_fun(Tensor(index.value, weak=True), carry), None

    final, _ = _counted_loop(
        api,
        trip_count,
        (carries, tree, pytree.leaf_paths(init_val)),
        ([], None),
        step,
        False,
    )
    return final


def _traced_fori_loop(
    api: str, lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any
) -> Any:
    bounds = [_bound(api, "lower", lower), _bound(api, "upper", upper)]
    counter_dtype = ops.result_dtype([lower, upper])
    start, stop = (ops.cast(b, counter_dtype) for b in bounds)

    def keep_going(state: Any) -> Any:
        return state[0] < stop

    def body(state: Any) -> Any:
        index, value = state
        return index + 1, body_fun(Tensor(index.value, weak=True), value)

    _, final = while_loop(keep_going, body, (start, init_val))
    return final


def _bound(api: str, name: str, bound: Any) -> Tensor:
    if _is_size(bound):
        return as_tensor(np.add(bound, 0) if isinstance(bound, SymDim) else bound)
    if (
        isinstance(bound, Tensor)
        and bound.type.rank == 0
        and bound.irc_dtype.kind == "i"
    ):
        return bound
    given = (
        f"a {_describe(bound.type)} array"
        if isinstance(bound, Tensor)
        else f"a {type(bound).__name__}"
    )
    raise tracing_error(
        f"{api}: {name} must be an int, a symbolic size (x.shape[0]) or a 0-d "
        f"integer array, got {given}",
        IrcTypeError,
    )


_Carries = tuple[list[Tensor], pytree.TreeDef, list[str]]
#: The xs leaves and their structure (None for no xs: the body gets None).
_Sequences = tuple[list[Tensor], pytree.TreeDef | None]


def _counted_loop(
    api: str,
    trip_count: SymExpr,
    carries: _Carries,
    sequences: _Sequences,
    step: Callable[[Tensor, Any, Any], Any],
    reverse: bool,
) -> tuple[Any, Any]:
    """A graph.for of ``trip_count`` iterations: ``step(index, carry, x)``
    returns ``(carry, y)``; returns the last carry and the stacked ys."""
    inits, carry_tree, paths = carries
    xs, xs_tree = sequences
    types = _types(inits)
    slice_types = [t.type.with_shape(t.type.dims[1:]) for t in xs]
    count = len(inits)

    def call(proxies: list[Tensor]) -> Any:
        index, rest = proxies[0], proxies[1:]
        carry = pytree.unflatten(carry_tree, rest[:count])
        x = None if xs_tree is None else pytree.unflatten(xs_tree, rest[count:])
        return step(Tensor(index.value, weak=True), carry, x)

    region = _trace_region([graph.INDEX_TYPE, *types, *slice_types], call)
    if region.tree.kind != "tuple" or len(region.tree.children) != 2:
        raise tracing_error(
            f"{api}: the body must return a pair (carry, y), got the structure "
            f"{region.tree}",
            IrcTypeError,
        )
    result_carry_tree, ys_tree = region.tree.children
    _check_structure(api, "the body's carry", carry_tree, result_carry_tree)
    carry_leaves, ys_leaves = region.leaves[:count], region.leaves[count:]
    present = [leaf is not None for leaf in ys_leaves]
    outputs = [*carry_leaves, *(leaf for leaf in ys_leaves if leaf is not None)]
    region.yield_values(outputs, [*types, *([None] * (len(outputs) - count))])
    _check_carries(api, "the body's carry", paths, types, region)
    ys_types = [
        _tensor_type(value).with_shape([trip_count, *_tensor_type(value).dims])
        for value in _yielded(region)[count:]
    ]
    captured = _captured(region)
    _capture(region.block, captured, 1 + count)
    _pass_through(region.block, 1 + count, len(captured), count)
    op = graph.ForOp(
        trip_count,
        [*(tensor.value for tensor in inits), *captured],
        [tensor.value for tensor in xs],
        Region(region.block),
        ys_types,
        reverse=reverse,
    )
    current_trace().emit(op)
    results = [Tensor(value) for value in op.outputs]
    ys = iter(results[count + len(captured) :])
    ys_results = [next(ys) if exists else None for exists in present]
    return (
        pytree.unflatten(carry_tree, results[:count]),
        pytree.unflatten(ys_tree, ys_results),
    )
