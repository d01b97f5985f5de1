"""Comparing what a module computes before and after passes.

The pieces here need no Hypothesis, so that ``irc-opt --check-semantics``
can use them without a test dependency:

- :func:`compare_outputs`: the tolerance rules (per-dtype ``rtol``/``atol``
  for floats, NaN where NaN, exact for integers and bools) and a readable
  description of the first mismatch, down to its worst element;
- :class:`PassCheckError`: the ``AssertionError`` every checker raises, with
  the program, the binding and the inputs' seed in its message;
- :class:`SemanticsChecker` and :func:`check_semantics`: run a module on a
  few random bindings and inputs, then after each pass again, and stop at
  the first pass that changes the results (pass-level bisection);
- :func:`specialize`: a module with its symbols replaced by constants, for
  the metamorphic check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue
from xdsl.passes import ModulePass, PassPipeline
from xdsl.rewriter import Rewriter
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from irc.dialects.sym import SymExprAttr
from irc.dtypes import dtype
from irc.errors import IrcError
from irc.interpreters.graph import LoopLimitError, loop_limit
from irc.ir import default_context, print_module, verify_module
from irc.passes.registry import get_all_passes
from irc.testing.interpreters import entry_signature, run_module
from irc.testing.rounding import rounding_errors
from irc.testing.sampling import (
    MAX_SYMBOL_VALUE,
    inputs,
    module_bindings,
    random_array,
)

# --------------------------------------------------------------------------
# Tolerances and comparison
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Tolerance:
    """``|after - before| <= atol + rtol * |before|`` counts as equal."""

    rtol: float
    atol: float


#: The default tolerance per float dtype: a few units in the last place at
#: magnitudes around 1, enough for passes that reassociate or fuse float
#: arithmetic, far too little to hide a wrong operand order.
DEFAULT_TOLERANCES: dict[str, Tolerance] = {
    "float16": Tolerance(1e-2, 1e-2),
    "bfloat16": Tolerance(5e-2, 5e-2),
    "float32": Tolerance(1e-5, 1e-5),
    "float64": Tolerance(1e-10, 1e-10),
}


def tolerance_for(
    element: np.dtype,
    rtol: float | None = None,
    atol: float | None = None,
    precision: str | None = None,
) -> Tolerance:
    """The tolerance for floats of ``element``, with explicit ``rtol`` and
    ``atol`` taking precedence over the defaults. ``precision`` is the
    program's working precision (:func:`working_precision`): a float64
    result computed through float32 arithmetic is only as close as float32."""
    default = DEFAULT_TOLERANCES[dtype(element).name]
    if precision is not None and DEFAULT_TOLERANCES[precision].rtol > default.rtol:
        default = DEFAULT_TOLERANCES[precision]
    return Tolerance(
        default.rtol if rtol is None else rtol, default.atol if atol is None else atol
    )


def working_precision(module: ModuleOp) -> str | None:
    """The least precise float dtype of the tensors in ``module`` (None
    without floats): passes may reassociate arithmetic at that precision."""
    names = set()
    for op in module.walk():
        for value in op.results:
            element = getattr(value.type, "element_type", None)
            if element is not None and dtype(element).kind == "f":
                names.add(dtype(element).name)
    return max(names, key=lambda n: DEFAULT_TOLERANCES[n].rtol, default=None)


def compare_outputs(
    before: Sequence[np.ndarray],
    after: Sequence[np.ndarray],
    rtol: float | None = None,
    atol: float | None = None,
    precision: str | None = None,
    rounding: Sequence[float] | None = None,
) -> str | None:
    """None when ``after`` matches ``before``; else what the first
    mismatching output differs in, with its worst element.

    Floats compare within :func:`tolerance_for` their dtype and must have
    NaN in the same places (infinities are equal only to themselves);
    integers and bools compare exactly; dtypes and shapes must be equal.
    ``rounding``, per output, is the program's own rounding error (see
    :func:`rounding_errors`): differences up to a few times it are allowed
    on top of the tolerance, as another order of the same float operations
    rounds differently by about as much.
    """
    if len(before) != len(after):
        return f"the number of results changed from {len(before)} to {len(after)}"
    for index, (expected, actual) in enumerate(zip(before, after)):
        measured = rounding is not None and index < len(rounding)
        slack = ROUNDING_FACTOR * rounding[index] if measured else 0.0
        problem = _compare_array(expected, actual, rtol, atol, precision, slack)
        if problem is not None:
            return f"output {index} {problem}"
    return None


#: How many times the program's own rounding error a pass may change a
#: result by (two evaluation orders each err by up to it, in either sign).
ROUNDING_FACTOR = 4.0


def _compare_array(
    expected: np.ndarray,
    actual: np.ndarray,
    rtol: float | None,
    atol: float | None,
    precision: str | None,
    slack: float = 0.0,
) -> str | None:
    if expected.dtype != actual.dtype:
        return f"has dtype {actual.dtype}, was {expected.dtype}"
    if expected.shape != actual.shape:
        return f"has shape {actual.shape}, was {expected.shape}"
    what = f"({expected.dtype}, shape {expected.shape})"
    if dtype(expected.dtype).kind != "f":
        wrong = expected != actual
        excess = np.abs(expected.astype(np.float64) - actual.astype(np.float64))
        rule = "exact comparison"
    else:
        tolerance = tolerance_for(expected.dtype, rtol, atol, precision)
        if slack:
            tolerance = Tolerance(tolerance.rtol, tolerance.atol + slack)
        wrong, excess = _float_mismatches(expected, actual, tolerance)
        rule = f"beyond rtol={tolerance.rtol:g}, atol={tolerance.atol:g}"
        if slack:
            rule += f", {ROUNDING_FACTOR:g}x the program's rounding error included"
    if not wrong.any():
        return None
    worst = np.unravel_index(np.argmax(np.where(wrong, excess, -np.inf)), wrong.shape)
    position = tuple(int(i) for i in worst)
    return (
        f"{what}: {int(wrong.sum())} of {wrong.size} elements differ ({rule}); "
        f"worst at index {position}: before {_scalar(expected, position)}, "
        f"after {_scalar(actual, position)}"
    )


def _float_mismatches(
    expected: np.ndarray, actual: np.ndarray, tolerance: Tolerance
) -> tuple[np.ndarray, np.ndarray]:
    """Which elements differ, and by how much beyond the tolerance (inf for
    a NaN or an infinity that the other side lacks)."""
    wide_expected = expected.astype(np.float64)
    wide_actual = actual.astype(np.float64)
    close = np.isclose(
        wide_actual,
        wide_expected,
        rtol=tolerance.rtol,
        atol=tolerance.atol,
        equal_nan=True,
    )
    if tolerance.rtol == tolerance.atol == 0:
        # Bit-equal, as far as a float's value goes: -0.0 is not 0.0.
        close &= np.isnan(wide_expected) | (
            np.signbit(wide_actual) == np.signbit(wide_expected)
        )
    with np.errstate(all="ignore"):
        excess = np.abs(wide_actual - wide_expected) - (
            tolerance.atol + tolerance.rtol * np.abs(wide_expected)
        )
    return ~close, np.where(np.isfinite(excess), excess, np.inf)


def _scalar(array: np.ndarray, position: tuple[int, ...]) -> str:
    value = array[position]
    return repr(value.item() if dtype(array.dtype).kind != "f" else float(value))


# --------------------------------------------------------------------------
# Failures
# --------------------------------------------------------------------------


class PassCheckError(AssertionError):
    """A pass broke a program: it crashed, left invalid IR, broke the
    print/parse round trip, or changed the results.

    ``str()`` is the whole report: what went wrong, the binding, the inputs'
    seed (``irc.testing.inputs(program, binding, seed)`` recreates the
    inputs), the program and, when there is one, the program after the
    pass. The attributes let tools lay the report out differently.
    """

    def __init__(
        self,
        headline: str,
        program: str,
        *,
        details: Sequence[str] = (),
        after: str | None = None,
        after_label: str = "after the pass",
        binding: Mapping[str, int] | None = None,
        seed: int | None = None,
    ):
        self.headline = headline
        self.program = program
        self.details = list(details)
        self.after = after
        self.after_label = after_label
        self.binding = None if binding is None else dict(binding)
        self.seed = seed
        super().__init__(self.report())

    def context_lines(self) -> list[str]:
        """The details, then the binding and the seed where known."""
        lines = list(self.details)
        if self.binding is not None:
            lines.append(f"binding: {self.binding}")
        if self.seed is not None:
            lines.append(
                f"inputs: seed {self.seed} (irc.testing.inputs(program, binding, "
                f"seed={self.seed}) recreates them)"
            )
        return lines

    def report(self) -> str:
        """The headline, the context, the program and the program after."""
        text = "\n".join([self.headline, *self.context_lines()])
        text += f"\nprogram:\n{self.program}"
        if self.after is not None:
            text += f"{self.after_label}:\n{self.after}"
        return text


# --------------------------------------------------------------------------
# Passes by name
# --------------------------------------------------------------------------

PassLike = ModulePass | str | Sequence[ModulePass]


def resolve_passes(p: PassLike) -> tuple[ModulePass, ...]:
    """The passes of a ``ModulePass``, a sequence of them, or a pipeline
    string as ``irc-opt -p`` takes it (``"canonicalize,cse"``)."""
    if isinstance(p, ModulePass):
        return (p,)
    if not isinstance(p, str):
        return tuple(p)
    try:
        return PassPipeline.parse_spec(get_all_passes(), p).passes
    except (ValueError, ArgSpecParseError) as error:  # BaseException, see XDSL-NOTES
        known = ", ".join(sorted(get_all_passes()))
        raise IrcError(
            f"invalid pass pipeline {p!r}: {str(error).strip()} (known passes: {known})"
        ) from None


def pass_name(p: PassLike) -> str:
    """How reports name ``p``: its pipeline text, options included."""
    if isinstance(p, str):
        return ",".join(str(spec) for spec in parse_pipeline(p))
    return ",".join(str(q.spec()) for q in resolve_passes(p))


def apply_checked(
    passes: Sequence[ModulePass], module: ModuleOp, ctx: Context, program: str
) -> None:
    """Apply ``passes`` to ``module`` in order, verifying after each; a
    crash or invalid IR raises :class:`PassCheckError` naming the pass."""
    for current in passes:
        name = str(current.spec())
        try:
            current.apply(ctx, module)
        except Exception as error:
            raise PassCheckError(
                f"pass '{name}' crashed: {type(error).__name__}: {error}", program
            ) from error
        try:
            verify_module(module)
        except Exception as error:
            raise PassCheckError(
                f"pass '{name}' produced IR that does not verify: {error}",
                program,
                after=_printable(module),
            ) from error


def _printable(module: ModuleOp) -> str:
    """The module's text, or why it cannot be printed (a broken module may
    crash the printer, which must not hide the original report)."""
    try:
        return print_module(module)
    except Exception as error:
        return f"<cannot print the module: {type(error).__name__}: {error}>\n"


# --------------------------------------------------------------------------
# Checking a pipeline pass by pass
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One call of the module: a binding, the seed of its inputs, and the
    inputs themselves."""

    binding: dict[str, int]
    seed: int
    inputs: list[np.ndarray]


MAX_LOOP_ITERATIONS = 100_000
"""The most loop iterations (graph.for and graph.while, nested ones
included) one run of the checked module may take; past them the run fails
with a ``LoopLimitError`` at the loop, so that a loop that never ends on the
drawn inputs (a graph.while whose predicate stays true, a graph.for of
length 2**31) is a diagnostic instead of a hang. The checker runs programs
on small inputs (symbols up to ``MAX_SYMBOL_VALUE``, small integers), where
an ordinary loop runs tens of iterations and a nest of them thousands, so
the bound is far above any of them. An iteration of tensor ops takes the
reference interpreter tens of microseconds or more (100,000 iterations of a
14-op graph.while took 17 seconds), so the loops of a call are also bounded
by the ops they run (``irc.interpreters.graph.MAX_LOOP_OPS``, about half a
second): a run past either stops with the error, once, as a run past them
stops the drawing of inputs."""


def run_bounded(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``run_module`` within :data:`MAX_LOOP_ITERATIONS` loop iterations."""
    with loop_limit(MAX_LOOP_ITERATIONS):
        return run_module(module, inputs)


def _bounded_rounding(
    module: ModuleOp, runs: Sequence[Run], outputs: list[list[np.ndarray]]
) -> list[float] | None:
    """``rounding_errors`` on ``runs``, within :data:`MAX_LOOP_ITERATIONS`
    loop iterations a run."""
    with loop_limit(MAX_LOOP_ITERATIONS):
        return rounding_errors(module, [run.inputs for run in runs], outputs)


class SemanticsChecker:
    """Runs a module on a few random bindings and inputs, and again each
    time a pass has transformed it, comparing with the previous results.

    Comparing with the results just before the pass (not with the
    original's) blames exactly the pass that changed them, and keeps the
    tolerance from accumulating over a long pipeline.
    """

    def __init__(
        self,
        module: ModuleOp,
        *,
        runs: int = 4,
        seed: int = 0,
        max_value: int = MAX_SYMBOL_VALUE,
        rtol: float | None = None,
        atol: float | None = None,
    ):
        if runs < 1:
            raise IrcError(f"checking semantics needs at least one run, not {runs}")
        self.rtol, self.atol = rtol, atol
        self.precision = working_precision(module)
        self.program = print_module(module)
        self.runs, self.outputs = _draw_runs(module, runs, seed, max_value)
        #: The program's own rounding error per output, which a reordering
        #: pass may change results by; not used under explicit tolerances.
        self.rounding = (
            _bounded_rounding(module, self.runs, self.outputs)
            if rtol is None and atol is None
            else None
        )

    def check(
        self,
        name: str,
        module: ModuleOp,
        appends_to_signature: bool = False,
        changes_precision: bool = False,
    ) -> None:
        """Compare ``module`` (just transformed by pass ``name``) with the
        results before it; raise :class:`PassCheckError` on a change.

        After a pass that ``appends_to_signature`` (``autodiff``), the
        appended arguments are drawn at random, the results that were
        there before are compared, and later passes are checked on every
        result, the appended ones included. After one that
        ``changes_precision`` (``auto-mixed-precision``), its own rounding
        error is allowed on top (see :func:`precision_slack`), and measured
        from then on."""
        after = print_module(module)
        runs = [
            with_appended_arguments(run, module) if appends_to_signature else run
            for run in self.runs
        ]
        outputs = [self._run(name, module, run, after) for run in runs]
        rounding = self.rounding
        if changes_precision and rounding is not None:
            measured = _bounded_rounding(module, runs, outputs)
            rounding = None if measured is None else _added(rounding, measured)
            self.rounding = measured
        for run, before, result in zip(runs, self.outputs, outputs):
            compared = result[: len(before)] if appends_to_signature else result
            problem = compare_outputs(
                before, compared, self.rtol, self.atol, self.precision, rounding
            )
            if problem is not None:
                raise self._failure(name, "changed the results", problem, after, run)
        self.program, self.outputs, self.runs = after, outputs, runs
        if appends_to_signature and self.rounding is not None:
            # The appended results (gradients) round as the rest of the
            # program does: measure them too.
            self.rounding = _bounded_rounding(module, runs, outputs)

    def _run(
        self, name: str, module: ModuleOp, run: Run, after: str
    ) -> list[np.ndarray]:
        """``module``'s results on ``run``; a failure is the pass's."""
        try:
            return run_bounded(module, run.inputs)
        except Exception as error:
            problem = f"{type(error).__name__}: {error}"
            failure = self._failure(name, "made the program fail", problem, after, run)
            raise failure from error

    def _failure(
        self, name: str, what: str, problem: str, after: str, run: Run
    ) -> PassCheckError:
        return PassCheckError(
            f"pass '{name}' {what}",
            self.program,
            details=[problem],
            after=after,
            binding=run.binding,
            seed=run.seed,
        )


def appends_to_signature(passes: Sequence[ModulePass]) -> bool:
    """Whether a pass declares (``appends_to_signature = True``, as
    ``autodiff`` does) that it may append arguments and results to the
    entry function: its original results must keep their meaning whatever
    the appended arguments are."""
    return any(getattr(p, "appends_to_signature", False) for p in passes)


def _added(lhs: Sequence[float], rhs: Sequence[float]) -> list[float]:
    """Per output, the sum of two rounding errors (the longer list's tail
    as it is: results a pass appended)."""
    longer, shorter = (lhs, rhs) if len(lhs) >= len(rhs) else (rhs, lhs)
    return [a + (shorter[i] if i < len(shorter) else 0.0) for i, a in enumerate(longer)]


def changes_precision(passes: Sequence[ModulePass]) -> bool:
    """Whether a pass declares (``changes_precision = True``, as
    ``auto-mixed-precision`` does) that it computes in a narrower float
    type: its results are then compared within :func:`precision_slack`."""
    return any(getattr(p, "changes_precision", False) for p in passes)


def precision_slack(
    before: ModuleOp,
    after: ModuleOp,
    inputs: Sequence[Sequence[np.ndarray]],
    before_outputs: Sequence[Sequence[np.ndarray]],
    after_outputs: Sequence[Sequence[np.ndarray]],
) -> list[float] | None:
    """Per output, how far a pass that narrows float types may move it: the
    rounding error of the program before the pass plus that of the program
    after it (:func:`rounding_errors`: each against its float64 twin, where
    a cast between floats is the identity, so both twins compute the same
    exact values). The second is the narrow type's epsilon as the program
    propagates it, through its chains of ops and the lengths of its
    reductions, on these inputs. A pass that keeps the exact meaning (only
    moves casts between floats) is within their sum by the triangle
    inequality; one that changes an operand, an op or an axis is not. None
    when either cannot be measured."""
    errors_before = rounding_errors(before, inputs, before_outputs)
    errors_after = rounding_errors(after, inputs, after_outputs)
    if errors_before is None or errors_after is None:
        return None
    return [b + a for b, a in zip(errors_before, errors_after)]


def with_appended_arguments(run: Run, module: ModuleOp) -> Run:
    """``run`` with random values (from its seed) for the arguments that
    ``module``'s entry function takes beyond ``run``'s inputs."""
    appended = entry_signature(module)[len(run.inputs) :]
    if not appended:
        return run
    rng = np.random.default_rng(run.seed)
    extra = [random_array(t, run.binding, rng) for t in appended]
    return Run(run.binding, run.seed, [*run.inputs, *extra])


def _draw_runs(
    module: ModuleOp, count: int, seed: int, max_value: int
) -> tuple[list[Run], list[list[np.ndarray]]]:
    """``count`` bindings and inputs on which ``module`` runs, with its
    outputs. Draws on which the module itself fails (an index argument out
    of range, say) are skipped; raises ``IrcError`` if every draw fails, or
    at once if one runs past :data:`MAX_LOOP_ITERATIONS` (each further draw
    could take as long). The ``IrcError`` is raised from the run's error,
    whose traceback holds the op that failed (irc-opt points at it)."""
    rng = np.random.default_rng(seed)
    bindings = module_bindings(module, max_value=max_value)
    runs: list[Run] = []
    outputs: list[list[np.ndarray]] = []
    failure: IrcError | None = None
    for _ in range(10 * count):
        if len(runs) == count:
            break
        binding = bindings[int(rng.integers(len(bindings)))]
        input_seed = int(rng.integers(2**31))
        arrays = inputs(module, binding, input_seed)
        try:
            outputs.append(run_bounded(module, arrays))
        except LoopLimitError as error:
            failure = error
            break
        except IrcError as error:
            failure = error
            continue
        runs.append(Run(binding, input_seed, arrays))
    if not runs or isinstance(failure, LoopLimitError):
        message = f"the input does not run on random arguments: {failure}"
        raise IrcError(message) from failure
    return runs, outputs


def check_semantics(
    module: ModuleOp,
    pipeline: PassLike,
    *,
    runs: int = 4,
    seed: int = 0,
    ctx: Context | None = None,
    rtol: float | None = None,
    atol: float | None = None,
) -> ModuleOp:
    """Apply ``pipeline`` to a copy of ``module`` pass by pass, interpreting
    it before and after each pass on ``runs`` random bindings and inputs
    (drawn from ``seed``); return the transformed copy.

    Raises :class:`PassCheckError` at the first pass that crashes, leaves
    invalid IR or changes the results, naming it; ``IrcError`` when the
    input itself cannot be run.
    """
    ctx = ctx or default_context()
    current = module.clone()
    checker = SemanticsChecker(current, runs=runs, seed=seed, rtol=rtol, atol=atol)
    for step in resolve_passes(pipeline):
        apply_checked([step], current, ctx, checker.program)
        checker.check(str(step.spec()), current, appends_to_signature([step]))
    return current


# --------------------------------------------------------------------------
# Specialisation to a binding
# --------------------------------------------------------------------------


def specialize(module: ModuleOp, binding: Mapping[str, int]) -> ModuleOp:
    """A copy of ``module`` with every symbol replaced by its value in
    ``binding``: types, offsets, ``graph.dim`` and guards become static,
    as if the program had been compiled for these sizes only."""
    values = {name: int(value) for name, value in binding.items()}
    result = module.clone()
    for op in result.walk():
        for name, attribute in op.properties.items():
            op.properties[name] = _substitute(attribute, values)
        for name, attribute in op.attributes.items():
            op.attributes[name] = _substitute(attribute, values)
        for value in list(op.results):
            _retype(value, values)
        for region in op.regions:
            for block in region.blocks:
                for arg in list(block.args):
                    _retype(arg, values)
    return result


def _retype(value: SSAValue, values: Mapping[str, int]) -> None:
    new_type = _substitute(value.type, values)
    if new_type != value.type:
        Rewriter.replace_value_with_new_type(value, new_type)


def _substitute(attribute: Attribute, values: Mapping[str, int]) -> Attribute:
    """``attribute`` with the symbols in every nested ``sym.expr``
    replaced by their values."""
    if isinstance(attribute, SymExprAttr):
        return SymExprAttr(attribute.data.substitute(values))
    if isinstance(attribute, ArrayAttr):
        return ArrayAttr(_substitute(a, values) for a in attribute.data)
    if isinstance(attribute, ParametrizedAttribute):
        parameters = tuple(_substitute(p, values) for p in attribute.parameters)
        if parameters != attribute.parameters:
            return type(attribute).new(parameters)
    return attribute
