"""The :func:`programs` strategy: well-typed graph-level modules.

A program is a sequence of steps, each taking an action of :data:`ACTIONS`
(or :data:`~irc.testing.strategies.steps.REPEAT`, the previous step's
again) that a family of steps carries out. Hypothesis shrinks the number of
steps, their actions and their operand choices, so a failing program
shrinks to a few ops over fresh arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from irc.dialects import graph as g
from irc.dtypes import (
    BFLOAT16,
    BOOL,
    FLOAT16,
    FLOAT32,
    FLOAT64,
    INT32,
    INT64,
    DType,
    dtype,
)
from irc.errors import IrcError
from irc.testing.sampling import MAX_SYMBOL_VALUE
from irc.testing.strategies.control_flow import CONTROL_FLOW_ACTIONS, ControlFlowSteps
from irc.testing.strategies.domains import Domains
from irc.testing.strategies.elementwise import ElementwiseSteps
from irc.testing.strategies.guards import GuardSteps
from irc.testing.strategies.layout import LayoutSteps
from irc.testing.strategies.operands import Operands
from irc.testing.strategies.patterns import (
    PATTERN,
    Pattern,
    PatternSteps,
    pattern_arity,
)
from irc.testing.strategies.program import Choices, Program, ProgramOptions, _Draw
from irc.testing.strategies.reductions import ReductionSteps
from irc.testing.strategies.shapes import SYMBOLS
from irc.testing.strategies.sources import SourceSteps
from irc.testing.strategies.steps import REPEAT, StepMemory
from irc.testing.strategies.windows import WINDOW_ACTIONS, WindowSteps

#: Element types, simplest first (failing programs shrink towards float32).
DTYPES: tuple[DType, ...] = (FLOAT32, INT32, BOOL, FLOAT16, BFLOAT16, INT64, FLOAT64)

#: What one step of a program can do; ``binary`` first, as failing programs
#: shrink towards the first entry.
ACTIONS: tuple[str, ...] = (
    "binary",
    "unary",
    "compare",
    "select",
    "cast",
    "constant",
    "iota",
    "dim",
    "broadcast",
    "reshape",
    "reduce",
    "argmax",
    "transpose",
    "slice",
    "insert_slice",
    "concat",
    "take",
    "matmul",
    "guard",
    "scan",
    "scatter_add",
)

_ELEMENTWISE = ("binary", "unary")


class _Stepper:
    """Takes the steps of one program, each by the method of its family
    named after its action."""

    def __init__(self, program: Program, patterns: Sequence[Pattern] = ()) -> None:
        operands = Operands(program)
        domains = Domains(program, operands)
        self.memory = StepMemory()
        elementwise = ElementwiseSteps(program, operands, domains, self.memory)
        sources = SourceSteps(program, operands, domains)
        layout = LayoutSteps(program, operands, domains)
        reductions = ReductionSteps(program, operands, domains)
        guards = GuardSteps(program, operands, domains)
        control_flow = ControlFlowSteps(program, operands, domains)
        windows = WindowSteps(program, operands, domains)
        self.patterns = PatternSteps(program, operands, domains, patterns)
        self.fallback = elementwise.binary
        self.steps: dict[str, Callable[[], bool]] = {
            "binary": elementwise.binary,
            "unary": elementwise.unary,
            "compare": elementwise.compare,
            "select": elementwise.select,
            "cast": elementwise.cast,
            "constant": sources.constant,
            "iota": sources.iota,
            "dim": sources.dim,
            "broadcast": layout.broadcast,
            "reshape": layout.reshape,
            "reduce": reductions.reduce,
            "argmax": reductions.argmax,
            "transpose": layout.transpose,
            "slice": layout.slice,
            "insert_slice": layout.insert_slice,
            "concat": layout.concat,
            "take": layout.take,
            "matmul": reductions.matmul,
            "guard": guards.guard,
            "scan": reductions.scan,
            "scatter_add": layout.scatter_add,
            "convolve": windows.convolve,
            "pool": windows.pool,
            "cond": control_flow.cond,
            "for": control_flow.for_,
            "while": control_flow.while_,
            PATTERN: self.patterns.pattern,
        }

    @property
    def pattern_pending(self) -> int:
        """1 while a program with patterns holds none: it will take one
        more step, a pattern, last (so that every program holds one)."""
        return int(bool(self.patterns.patterns) and not self.patterns.taken)

    def take(self, action: str) -> None:
        """Take one step; "repeat" takes the previous step's action again
        (on its result, as unused values come first): the op-of-op chains
        that canonicalisation patterns rewrite. An action that does not
        apply here adds a binary op."""
        if not self.steps[self.memory.begin(action)]():
            self.fallback()


def _another_step(draw: _Draw, steps: int, max_ops: int) -> bool:
    """Whether a program that took ``steps`` steps takes one more.

    A flag before each step, rather than a count drawn up front, lets
    Hypothesis shrink a program by deleting any one step (its flag and its
    draws); the flag shrinks to "stop". Hypothesis also *generates* its
    simplest choice (zero) far more often than a uniform draw would, so
    "stop" takes two zeros in a row for the first three steps (programs of
    one or two ops are rare but reachable by shrinking), and after that a
    draw below ``256 // max_ops`` besides.
    """
    first = draw(st.integers(0, 255))
    second = draw(st.integers(0, 255))
    if first == 0 and second == 0:
        return False
    return steps < 3 or first >= 256 // max_ops


def _dtype_list(dtypes: Iterable[DType | str]) -> tuple[DType, ...]:
    chosen = tuple(dtype(d) for d in dtypes)
    if not chosen:
        raise IrcError("programs() needs at least one dtype")
    return chosen


def _action_list(actions: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(actions)
    known = ACTIONS + CONTROL_FLOW_ACTIONS + WINDOW_ACTIONS
    unknown = [a for a in chosen if a not in known]
    if unknown or not chosen:
        raise IrcError(
            f"unknown program actions {unknown or '(none given)'}; choose from "
            f"{', '.join(known)}"
        )
    return chosen


def _pattern_list(patterns: Iterable[Pattern]) -> tuple[Pattern, ...]:
    chosen = tuple(patterns)
    for pattern in chosen:
        pattern_arity(pattern)  # raises for what cannot be a pattern
    return chosen


def programs(
    *,
    min_ops: int = 1,
    max_ops: int = 8,
    max_results: int = 3,
    symbols: Sequence[str] = SYMBOLS,
    dtypes: Iterable[DType | str] = DTYPES,
    max_rank: int = 3,
    actions: Iterable[str] = ACTIONS,
    smooth: bool = False,
    max_value: int = MAX_SYMBOL_VALUE,
    patterns: Iterable[Pattern] = (),
) -> st.SearchStrategy[ModuleOp]:
    """Verified graph-level modules holding one ``func.func @main``.

    ``@main`` starts with one argument (a shape of ``symbols`` and static
    dims, an element type of ``dtypes``) and takes ``min_ops`` to
    ``max_ops`` steps, each an action of ``actions`` (see ``ACTIONS``) that
    adds one graph op plus the casts, broadcasts, domain guards and new
    arguments it needs (``CONTROL_FLOW_ACTIONS`` add graph.cond, graph.for
    and graph.while, ``WINDOW_ACTIONS`` convolutions and poolings, when
    asked for); it returns 1 to ``max_results`` values, the newest
    first. Every op runs in its domain on the inputs of
    :func:`irc.testing.inputs` under bindings with symbols up to
    ``max_value``.

    ``smooth=True`` keeps floats away from ops that jump when a float
    crosses a threshold (comparisons, ``floor``, ``floordiv``, ``rem``,
    ``argmax``, float-to-integer casts): use it for passes that may change
    float rounding, whose results then differ only within a tolerance.

    ``patterns`` steers programs towards what a pass rewrites: NumPy
    snippets over tensors of one type (``lambda x: x * 2``), each traced as
    :func:`irc.trace` captures a function and spliced into ``@main`` by a
    step of its own, on earlier values and new arguments. Every program
    holds at least one: its last step splices one if no other step did.
    """
    if not 1 <= min_ops <= max_ops or max_results < 1 or max_rank < 1:
        raise IrcError(
            "programs() needs 1 <= min_ops <= max_ops, max_results >= 1 and "
            "max_rank >= 1"
        )
    dtype_list, action_list = _dtype_list(dtypes), _action_list(actions)
    pattern_list = _pattern_list(patterns)
    # Elementwise steps twice as often: they hold most of the ops (25 of 41);
    # one step in seven repeats the previous one.
    weighted = action_list + tuple(a for a in action_list if a in _ELEMENTWISE)
    weighted += (REPEAT,) * max(1, len(weighted) // 6)
    # Pattern steps as often as each elementwise action.
    weighted += (PATTERN,) * (2 if pattern_list else 0)

    options = ProgramOptions(
        symbols=tuple(symbols),
        dtypes=dtype_list,
        max_rank=max_rank,
        smooth=smooth,
        max_value=max_value,
    )

    @st.composite
    def draw_program(draw: _Draw) -> ModuleOp:
        program = Program(Choices(draw), options)
        stepper = _Stepper(program, pattern_list)
        # The first argument has rank >= 1 and mostly symbolic dims: every
        # step starts from it or from what was built on it.
        shape = program.shape(1, max_rank, for_argument=True)
        program.new_argument(
            g.TensorType(shape, draw(st.sampled_from(dtype_list)).ir_type)
        )
        taken = 0
        # Steps count the pattern step still pending (see pattern_pending).
        while (steps := taken + stepper.pattern_pending) < min_ops or (
            steps < max_ops and _another_step(draw, steps, max_ops)
        ):
            stepper.take(draw(st.sampled_from(weighted)))
            taken += 1
        if stepper.pattern_pending:
            stepper.take(PATTERN)
        return program.finish(draw(st.integers(1, max_results)))

    return draw_program()
