"""The control-flow ops of the graph dialect (graph.cond, graph.while,
graph.for and graph.yield): built from Python, they verify, print, and
re-parse to the same text in custom and generic form; their verifiers
reject mismatched regions with messages that say what is wrong (the
textual cases are tests/filecheck/dialects/graph/control-flow*.mlir)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from xdsl.dialects.builtin import IntegerType, ModuleOp, f32, i64
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from irc.dialects import graph as g
from irc.ir import parse_module, print_module, verify_module
from irc.shapes import SymExpr


def _vector(*dims: str | int) -> g.TensorType:
    return g.TensorType(list(dims), f32)


def _region(
    argument_types: Sequence[g.TensorType],
    body: Callable[[Block, Sequence[SSAValue]], Sequence[SSAValue]],
) -> Region:
    """A one-block region on ``argument_types`` whose ``graph.yield`` yields
    what ``body`` returns (after adding its ops to the block)."""
    block = Block(arg_types=argument_types)
    block.add_op(g.YieldOp(body(block, block.args)))
    return Region(block)


def _function(
    argument_types: Sequence[g.TensorType],
    build: Callable[[Block, Sequence[SSAValue]], Sequence[SSAValue]],
) -> ModuleOp:
    block = Block(arg_types=argument_types)
    results = build(block, block.args)
    block.add_op(ReturnOp(*results))
    function = FuncOp(
        "f", (list(argument_types), [value.type for value in results]), Region(block)
    )
    return ModuleOp([function])


def _add(block: Block, a: SSAValue, b: SSAValue) -> SSAValue:
    op = g.AddOp(a, b)
    block.add_op(op)
    return op.result


def _cond_module() -> ModuleOp:
    vector = _vector("N")

    def build(block: Block, args: Sequence[SSAValue]) -> Sequence[SSAValue]:
        pred, x = args
        doubled = _region([vector], lambda b, xs: [_add(b, xs[0], xs[0])])
        same = _region([vector], lambda b, xs: [xs[0]])
        op = g.CondOp(pred, [x], doubled, same, [vector])
        block.add_op(op)
        return list(op.outputs)

    return _function([g.PREDICATE_TYPE, vector], build)


def _scan_module(reverse: bool) -> ModuleOp:
    row, rows = _vector("D"), _vector("N", "D")

    def build(block: Block, args: Sequence[SSAValue]) -> Sequence[SSAValue]:
        init, xs = args

        def step(b: Block, values: Sequence[SSAValue]) -> Sequence[SSAValue]:
            total = _add(b, values[1], values[2])
            return [total, total]

        body = _region([g.INDEX_TYPE, row, row], step)
        op = g.ForOp("N", [init], [xs], body, [rows], reverse=reverse)
        block.add_op(op)
        return list(op.outputs)

    return _function([row, rows], build)


def _while_module() -> ModuleOp:
    vector = _vector("N")

    def build(block: Block, args: Sequence[SSAValue]) -> Sequence[SSAValue]:
        (x,) = args

        def never(b: Block, values: Sequence[SSAValue]) -> Sequence[SSAValue]:
            false = g.ConstantOp.splat(False, g.PREDICATE_TYPE)
            b.add_op(false)
            return [false.result]

        cond = _region([vector], never)
        body = _region([vector], lambda b, values: [_add(b, values[0], values[0])])
        op = g.WhileOp([x], cond, body)
        block.add_op(op)
        return list(op.outputs)

    return _function([vector], build)


MODULES: dict[str, Callable[[], ModuleOp]] = {
    "cond": _cond_module,
    "scan": lambda: _scan_module(reverse=False),
    "reverse_scan": lambda: _scan_module(reverse=True),
    "while": _while_module,
}


@pytest.mark.parametrize("name", sorted(MODULES))
@pytest.mark.parametrize("generic", [False, True])
def test_built_ops_verify_and_reparse_identically(name: str, generic: bool) -> None:
    module = MODULES[name]()
    verify_module(module)
    text = print_module(module, generic=generic)
    reparsed = parse_module(text)
    verify_module(reparsed)
    assert print_module(reparsed, generic=generic) == text
    assert print_module(reparsed) == print_module(module)


def test_for_accessors_split_carries_and_ys() -> None:
    module = _scan_module(reverse=True)
    (loop,) = [op for op in module.walk() if isinstance(op, g.ForOp)]
    assert loop.trip_count == SymExpr.symbol("N")
    assert loop.is_reverse
    assert [v.type for v in loop.carry_results] == [_vector("D")]
    assert [v.type for v in loop.ys] == [_vector("N", "D")]
    assert "graph.for N reverse carries" in print_module(module)


def test_for_ys_must_stack_along_the_length() -> None:
    row = _vector("D")

    def build(block: Block, args: Sequence[SSAValue]) -> Sequence[SSAValue]:
        body = _region([g.INDEX_TYPE, row], lambda b, values: [values[1], values[1]])
        op = g.ForOp("N", [args[0]], [], body, [_vector("M", "D")])
        block.add_op(op)
        return list(op.outputs)

    with pytest.raises(VerifyException, match="must have the length N as its leading"):
        verify_module(_function([row], build))


def test_cond_branches_must_yield_the_same_symbolic_shapes() -> None:
    n, m = _vector("N"), _vector("M")

    def build(block: Block, args: Sequence[SSAValue]) -> Sequence[SSAValue]:
        pred, x, y = args
        first = _region([n, m], lambda b, values: [values[0]])
        second = _region([n, m], lambda b, values: [values[1]])
        op = g.CondOp(pred, [x, y], first, second, [n])
        block.add_op(op)
        return list(op.outputs)

    with pytest.raises(
        VerifyException, match=r"else region yields \(!graph.tensor<\[M\], f32>\)"
    ):
        verify_module(_function([g.PREDICATE_TYPE, n, m], build))


def test_the_predicate_is_a_scalar_bool() -> None:
    vector = _vector("N")
    bools = g.TensorType(["N"], IntegerType(1))

    def build(block: Block, args: Sequence[SSAValue]) -> Sequence[SSAValue]:
        pred, x = args
        op = g.CondOp(
            pred,
            [x],
            _region([vector], lambda b, values: [values[0]]),
            _region([vector], lambda b, values: [values[0]]),
            [vector],
        )
        block.add_op(op)
        return list(op.outputs)

    with pytest.raises(VerifyException, match="predicate must be a 0-d bool tensor"):
        verify_module(_function([bools, vector], build))


def test_while_carries_keep_their_types() -> None:
    scalar = g.TensorType([], i64)
    vector = _vector("N")

    def build(block: Block, args: Sequence[SSAValue]) -> Sequence[SSAValue]:
        x, count = args
        cond = _region([vector, scalar], lambda b, values: [values[1]])
        body = _region([vector, scalar], lambda b, values: [values[0], values[1]])
        op = g.WhileOp([x, count], cond, body)
        block.add_op(op)
        return list(op.outputs)

    with pytest.raises(VerifyException, match=r"graph.while cond region yields"):
        verify_module(_function([vector, scalar], build))
