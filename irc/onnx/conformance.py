"""ONNX's backend node tests on irc: import each test model, compile it, run
it on a backend and compare with the expected outputs that ship with the
``onnx`` package (``onnx.backend.test.case.node``). Used by
``tests/test_onnx_node_conformance.py`` and ``benchmarks/onnx_conformance.py``.
"""

from __future__ import annotations

import functools
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irc.errors import IrcError
from irc.onnx import require_onnx
from irc.onnx.converters import CONVERTERS, STATIC_OPERANDS
from irc.onnx.importer import load

#: The outcomes of one test, in the order of the table.
OUTCOMES = ("passed", "mismatch", "refused", "crashed")


@dataclass(frozen=True)
class NodeTest:
    name: str
    op_type: str
    model: Any
    data_sets: Sequence[tuple[Sequence[np.ndarray], Sequence[np.ndarray]]]
    rtol: float
    atol: float


@dataclass(frozen=True)
class Outcome:
    test: NodeTest
    outcome: str
    detail: str = ""


def node_tests(
    op_types: Iterable[str] | None = None, *, every_operator: bool = False
) -> list[NodeTest]:
    """The single-node tests of the operators irc covers, of every operator
    (``every_operator``: the uncovered ones are refused, naming the
    operator) or of ``op_types``; the ``_expanded`` variants test ONNX
    function bodies and are left out."""
    require_onnx()
    wanted = set(CONVERTERS if op_types is None else op_types)
    tests = []
    for case in _all_cases():
        if case.model is None or len(case.model.graph.node) != 1:
            continue
        op_type = case.model.graph.node[0].op_type
        chosen = op_type in wanted or (every_operator and op_types is None)
        if chosen and not case.name.endswith("_expanded"):
            tests.append(
                NodeTest(
                    case.name, op_type, case.model, case.data_sets, case.rtol, case.atol
                )
            )
    return sorted(tests, key=lambda t: t.name)


@functools.cache
def _all_cases() -> list[Any]:
    """ONNX builds its cases once per process (its list is global)."""
    from onnx.backend.test.case import node

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return list(node.collect_testcases(None))


def run_node_test(test: NodeTest, backend: str = "reference") -> Outcome:
    """Import, compile and run ``test``; ``refused`` is a clear irc error."""
    node = test.model.graph.node[0]
    static = {
        node.input[p]
        for p in STATIC_OPERANDS.get(node.op_type, ())
        if p < len(node.input)
    }
    names = [value_info.name for value_info in test.model.graph.input]
    try:
        for inputs, expected in test.data_sets:
            values = dict(zip(names, inputs))
            bound = {n: _array(v) for n, v in values.items() if n in static}
            compiled = load(test.model, constants=bound).compile()
            arguments = [_array(v) for n, v in values.items() if n not in static]
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                actual = compiled(*arguments, backend=backend)
            actual = list(actual) if isinstance(actual, tuple) else [actual]
            problem = _compare(
                actual, [_array(e) for e in expected], test.rtol, test.atol
            )
            if problem:
                return Outcome(test, "mismatch", problem)
    except IrcError as err:
        return Outcome(test, "refused", str(err).splitlines()[0])
    except Exception as err:  # a bug in irc: reported, not hidden
        return Outcome(test, "crashed", f"{type(err).__name__}: {err}")
    return Outcome(test, "passed")


def _array(value: Any) -> np.ndarray:
    from onnx import numpy_helper

    if isinstance(value, np.ndarray | np.generic):
        return np.asarray(value)
    if hasattr(value, "HasField"):  # a TensorProto
        return numpy_helper.to_array(value)
    raise IrcError(f"a {type(value).__name__} value: irc imports tensors only")


def _compare(
    actual: Sequence[Any], expected: Sequence[np.ndarray], rtol: float, atol: float
) -> str:
    for index, (got, want) in enumerate(zip(actual, expected)):
        got = np.asarray(got)
        if got.dtype != want.dtype:
            return f"output {index} is {got.dtype}, expected {want.dtype}"
        if got.shape != want.shape:
            return f"output {index} has shape {got.shape}, expected {want.shape}"
        if want.dtype.kind in "fc":
            close = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            close = got == want
        if not np.all(close):
            return f"output {index} differs in {int(np.sum(~close))} elements"
    return ""


def table(outcomes: Sequence[Outcome]) -> str:
    """A Markdown table of the outcomes per covered operator, with their
    totals, and the totals over every operator when uncovered ones ran."""
    per_op: dict[str, Counter[str]] = {}
    for outcome in outcomes:
        per_op.setdefault(outcome.test.op_type, Counter())[outcome.outcome] += 1
    lines = ["| operator | tests | " + " | ".join(OUTCOMES) + " |"]
    lines.append("|---" * (len(OUTCOMES) + 2) + "|")
    covered: Counter[str] = Counter()
    every: Counter[str] = Counter()
    for op_type in sorted(per_op):
        counts = per_op[op_type]
        every.update(counts)
        if op_type in CONVERTERS:
            covered.update(counts)
            lines.append(_row(op_type, counts))
    lines.append(_row("**covered operators**", covered, bold=True))
    if every != covered:
        uncovered = len(set(per_op) - set(CONVERTERS))
        lines.append(
            _row(f"**{uncovered} uncovered operators**", every - covered, True)
        )
        lines.append(_row("**all operators**", every, bold=True))
    return "\n".join(lines)


def _row(label: str, counts: Counter[str], bold: bool = False) -> str:
    cells = [str(sum(counts.values())), *(str(counts[o]) for o in OUTCOMES)]
    if bold:
        cells = [f"**{cell}**" for cell in cells]
    return f"| {label} | " + " | ".join(cells) + " |"
