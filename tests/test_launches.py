"""Kernel launches per call (``Compiled.launches``, ``irc.analysis.launches``):
the count irc states, evaluated at a call's sizes and at what its data
decided, is the number of kernels Triton's interpreter launched in that call.

The data's counts come from the programs' NumPy semantics: a host while
loop's iterations (``ceil(n / 8)`` host rounds for ``n`` iterations when
``fuse`` unrolled it by 8), how often a branch was taken.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
import triton.runtime.interpreter as interpreter
from control_flow_programs import PROGRAMS, sizes_of_call

import irc
from irc.analysis.launches import Launches

F32 = "float32"
#: ``unroll-while``'s factor in the default pipeline.
UNROLLED = 8


@contextmanager
def counted_launches() -> Iterator[list[int]]:
    """The kernels the interpreter launches while the block runs."""
    launches = [0]
    run = interpreter.InterpretedFunction.run

    def counting_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        launches[0] += 1
        return run(self, *args, **kwargs)

    interpreter.InterpretedFunction.run = counting_run  # type: ignore[method-assign]
    try:
        yield launches
    finally:
        interpreter.InterpretedFunction.run = run  # type: ignore[method-assign]


def launched(compiled: irc.Compiled, args: tuple[Any, ...]) -> int:
    compiled(*args, backend="interpret")  # Triton's first call compiles
    with counted_launches() as launches:
        compiled(*args, backend="interpret")
    return launches[0]


# ----- the control-flow programs ------------------------------------------------


def _newton_rounds(a: np.ndarray) -> dict[str, int]:
    _, iterations = PROGRAMS["newton_sqrt"].reference(a)
    return {"while_0": math.ceil(int(iterations) / UNROLLED)}


#: What the data decides in each program's call (its body is not cheap,
#: so decay_or_grow's loop is not unrolled).
DATA_COUNTS: dict[str, Callable[..., dict[str, int]]] = {
    "decay_or_grow": lambda x, steps: {"while_0": int(steps)},
    "newton_sqrt": _newton_rounds,
}

#: Each program's launches per call (newton_sqrt's two kernels that fill
#: its counter and its flag before the loop are one launch:
#: combine-launches).
EXPRESSIONS = {
    "decay_or_grow": "4*while_0 + 2",
    "rnn": "3*T",
    "newton_sqrt": "2*while_0 + 2",
    "greedy_decode": "20",
    "cumsum": "2",
    "row_update": "1",
    # Device while loops: the loop in one kernel, whatever its iterations
    # (newton's counter's initial 0 is filled by a kernel of its own).
    "halve_to_unit_norm": "1",
    "newton_sqrt_bounded": "2",
    # A device cond: the predicate's kernel, then the cond's.
    "halve_or_shift": "2",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_stated_launches_are_those_of_a_call(name: str) -> None:
    program = PROGRAMS[name]
    compiled = program.compile()
    assert str(compiled.launches) == EXPRESSIONS[name]
    for size in program.sizes[:3]:
        args = program.inputs(np.random.default_rng(size), size)
        values = sizes_of_call(compiled, args) | DATA_COUNTS.get(name, lambda *_: {})(
            *args
        )
        assert launched(compiled, args) == compiled.launches.evaluate(**values), size


def _halve_until_small(x: Any) -> Any:
    return irc.while_loop(lambda x: np.sqrt((x * x).sum()) >= 1.0, lambda x: x * 0.5, x)


@pytest.mark.parametrize("halvings", [0, 1, 8, 9, 20])
def test_an_unrolled_while_loop_launches_per_host_round(halvings: int) -> None:
    """Halving until the norm is below 1: the first kernel, then per host
    round the condition and the one kernel of 8 iterations (their norms,
    and the halved values, which read only that kernel's); one more
    condition ends the loop."""
    compiled = irc.compile(_halve_until_small, irc.TensorSpec(("N",), F32))
    x = np.full(4, 0.45 * 2.0**halvings, np.float32)
    rounds = math.ceil(halvings / UNROLLED)
    assert str(compiled.launches) == "2*while_0 + 2"
    assert launched(compiled, (x,)) == compiled.launches.evaluate(while_0=rounds)


# ----- branches whose sides launch different numbers of kernels -------------------


def _heavy(x: Any) -> Any:
    return np.tanh(x @ x.T).sum(axis=1) * x[:, 0]


def _light(x: Any) -> Any:
    return x[:, 0] + 1.0


def _branch(x: Any) -> Any:
    return irc.cond(x.sum() > 0, _heavy, _light, x)


def _branch_per_row(x: Any) -> Any:
    def step(i: Any, total: Any) -> Any:
        row = x[i]
        return total + irc.cond(
            row.sum() > 0,
            lambda r: np.tanh(np.outer(r, r) @ np.outer(r, r)).sum(),
            lambda r: r[0],
            row,
        )

    return irc.fori_loop(0, x.shape[0], step, np.float32(0.0))


def test_a_branch_counts_the_calls_that_take_it() -> None:
    spec = irc.TensorSpec(("N", 3), F32)
    compiled = irc.compile(_branch, spec)
    launches = compiled.launches
    assert launches.unknowns.keys() == {"cond_0"}
    assert "true side" in launches.unknowns["cond_0"]
    for sign in (1.0, -1.0):
        x = sign * np.abs(np.random.default_rng(2).standard_normal((5, 3)))
        x = x.astype(np.float32)
        taken = int(x.sum() > 0)
        assert launched(compiled, (x,)) == launches.evaluate(cond_0=taken, N=5)
    # The two sides differ: the count depends on the data.
    assert launches.evaluate(cond_0=1, N=5) != launches.evaluate(cond_0=0, N=5)


def test_a_branch_in_a_host_loop_counts_its_runs_over_the_call() -> None:
    spec = irc.TensorSpec(("N", 3), F32)
    compiled = irc.compile(_branch_per_row, spec)
    launches = compiled.launches
    assert launches.per_call.symbols == {"N", "cond_0"}
    x = np.random.default_rng(3).standard_normal((6, 3)).astype(np.float32)
    taken = int((x.sum(axis=1) > 0).sum())
    assert 0 < taken < 6
    assert launched(compiled, (x,)) == launches.evaluate(N=6, cond_0=taken)


# ----- num_kernels, launch_sites, and what is stored -----------------------------


def test_num_kernels_is_the_launches_per_call_or_an_error_that_says_why() -> None:
    straight = irc.compile(lambda x: np.exp(x) + 1.0, irc.TensorSpec(("N",), F32))
    assert straight.num_kernels == straight.launch_sites == 1
    rnn = PROGRAMS["rnn"].compile()
    with pytest.raises(irc.IrcError, match=r"@rnn launches 3\*T kernels per call"):
        _ = rnn.num_kernels
    assert rnn.launch_sites == 3
    with pytest.raises(irc.IrcError, match="need a value for T"):
        rnn.launches.evaluate()
    halving = irc.compile(_halve_until_small, irc.TensorSpec(("N",), F32))
    with pytest.raises(irc.IrcError, match="while_0: iterations of the host while"):
        halving.launches.evaluate(N=4)


def test_launches_survive_the_artefact_and_the_compile_cache(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = irc.TensorSpec(("N", 3), F32)
    fresh = irc.compile(_branch_per_row, spec)
    loaded = irc.load(fresh.save(tmp_path / "artefact"))
    assert loaded.launches == fresh.launches
    assert Launches.from_json(fresh.launches.to_json()) == fresh.launches
    monkeypatch.delenv("IRC_CACHE", raising=False)
    monkeypatch.setenv("IRC_CACHE_DIR", str(tmp_path / "cache"))
    first = irc.compile(_branch_per_row, spec)
    _ = first.triton_source  # writes the entry
    restored = irc.compile(_branch_per_row, spec)
    assert restored.restored and restored.launches == fresh.launches


# ----- invariant work leaves host loops ----------------------------------------------


def _scaled_rnn(h: Any, xs: Any, m: Any, w: Any) -> Any:
    def cell(h: Any, x: Any) -> Any:
        h = np.tanh(h @ m + x) * np.exp(w).sum()
        return h, h

    return irc.scan(cell, h, xs)[0]


def test_an_invariant_sum_is_computed_once_not_per_iteration() -> None:
    """``np.exp(w).sum()`` reads only what the loop does not change: one
    kernel before the loop, not one per iteration (a sum, unlike a max,
    has a value over an empty axis, so it may run before a loop of no
    iterations: tests/filecheck/transforms/canonicalize-control-flow.mlir)."""
    specs = (
        irc.TensorSpec((4,), F32),
        irc.TensorSpec(("T", 4), F32),
        irc.TensorSpec((4, 4), F32),
        irc.TensorSpec((4,), F32),
    )
    compiled = irc.compile(_scaled_rnn, *specs)
    assert str(compiled.launches) == "2*T + 1"
    rng = np.random.default_rng(4)
    for steps in (1, 3):
        h, m, w = (rng.standard_normal(s).astype(np.float32) for s in (4, (4, 4), 4))
        xs = rng.standard_normal((steps, 4)).astype(np.float32)
        expected = h
        for x in xs:
            expected = np.tanh(expected @ m + x) * np.exp(w).sum()
        args = (h, xs, m, w)
        np.testing.assert_allclose(
            compiled(*args, backend="interpret"), expected, rtol=1e-5, atol=1e-6
        )
        assert launched(compiled, args) == compiled.launches.evaluate(T=steps)


# ----- what the review found -------------------------------------------------------


def _two_whiles(x: Any, n: Any, m: Any) -> Any:
    """Two host while loops (their bodies hold a matmul: not unrolled)."""
    x = irc.while_loop(
        lambda s: s[0] < n, lambda s: (s[0] + 1, np.tanh(s[1] @ s[1])), (0, x)
    )[1]
    return irc.while_loop(
        lambda s: s[0] < m, lambda s: (s[0] + 1, s[1] @ s[1] * 0.5 + 1.0), (0, x)
    )[1]


def test_the_data_s_counts_are_named_apart_from_the_sizes_and_each_other() -> None:
    """A size may be called ``while_0``: the loops' counts take other names,
    one per loop."""
    spec = irc.TensorSpec(("while_0", "while_0"), F32)
    count = irc.TensorSpec((), "int64")
    compiled = irc.compile(_two_whiles, spec, count, count)
    launches = compiled.launches
    loops = sorted(launches.unknowns)
    assert len(loops) == 2 and "while_0" not in loops
    assert launches.per_call.symbols == set(loops)
    x = (0.1 * np.eye(3)).astype(np.float32)
    for n, m in ((1, 1), (4, 1), (1, 4)):
        args = (x, np.int64(n), np.int64(m))
        values = dict(zip(loops, (n, m), strict=True))
        assert launched(compiled, args) == launches.evaluate(**values), (n, m)


def test_a_kernel_whose_grid_is_always_empty_is_not_a_launch() -> None:
    compiled = irc.compile(lambda x: np.exp(x) + 1.0, irc.TensorSpec((0, 4), F32))
    assert "its grid is empty, nothing to launch" in compiled.triton_source
    assert compiled.num_kernels == compiled.launch_sites == 0
    assert launched(compiled, (np.zeros((0, 4), np.float32),)) == 0


def test_a_grid_empty_at_some_sizes_counts_where_it_has_programs() -> None:
    """``x[1:]`` has no element at N = 1: the launcher skips its kernel
    there, and the count, exact wherever every grid has programs, is one
    more (docs/lowering.md)."""
    compiled = irc.compile(lambda x: np.exp(x[1:]) + 1.0, irc.TensorSpec(("N",), F32))
    assert compiled.num_kernels == 1
    assert launched(compiled, (np.ones(2, np.float32),)) == 1
    assert launched(compiled, (np.ones(1, np.float32),)) == 0


def _nested_branches(x: Any, depth: int) -> Any:
    if depth == 0:
        return np.tanh(x @ x) @ x
    return irc.cond(
        x.sum() > depth, lambda x: _nested_branches(x, depth - 1) * 2.0, np.tanh, x
    )


def test_nested_branches_count_each_level_s_runs() -> None:
    compiled = irc.compile(
        lambda x: _nested_branches(x, 3), irc.TensorSpec(("N", "N"), F32)
    )
    launches = compiled.launches
    assert len(launches.unknowns) == 3
    for scale in (0.0, 1.0, 10.0):
        x = np.full((2, 2), scale, np.float32)
        # depth d's true side runs when every level above took its true side
        taken, runs = {}, True
        for level, depth in enumerate((3, 2, 1)):
            runs = runs and float(x.sum()) > depth
            taken[f"cond_{level}"] = int(runs)
        values = {"N": 2, **taken}
        assert launched(compiled, (x,)) == launches.evaluate(**values), scale
