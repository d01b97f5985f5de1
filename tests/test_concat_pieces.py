"""Pointwise kernels tiled by the pieces of a concatenation (irc issue 13:
rotary embedding reads ``x`` once).

A pointwise kernel whose innermost axis is a ``graph.concat`` of operands
of one width is tiled by those pieces: each program holds an index within
a piece and writes every piece, and an input read at the same window by
several pieces (rotary's halves of ``x``) is read once. Each program is
checked against NumPy on the reference interpreters (graph, loop and
memory levels) and on Triton's interpreter at two or more bindings of its
symbolic dims (1, odd sizes, past a block); the kernels' reads and selects
are counted; a generated family of such programs goes through
``check_pass``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

import irc
from irc import testing
from irc.dialects import loop, tile
from irc.interpreters.loop import run_loop
from irc.interpreters.memory import run_memory
from irc.ir import parse_module

pytest.importorskip("torch")


def spec(*dims: int | str) -> irc.TensorSpec:
    return irc.TensorSpec(dims, "float32")


def rotary_halves(x: Any, cos: Any, sin: Any) -> Any:
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[:, half:], x[:, :half]], axis=-1)
    return x * cos + rotated * sin


def rotary_interleaved(x: Any, cos: Any, sin: Any) -> Any:
    """GPT-J's layout: the pairs rotated are the last axis, of 2."""
    rotated = np.concatenate([-x[..., 1:], x[..., :1]], axis=-1)
    return x * cos + rotated * sin


def rotary_gptj(x: Any, cos: Any, sin: Any) -> Any:
    """GPT-J's pairs in the ``[S, D]`` layout: stacked and reshaped back."""
    S, D = x.shape
    pairs = x.reshape(S, D // 2, 2)
    rotated = np.stack([-pairs[..., 1], pairs[..., 0]], axis=-1).reshape(S, D)
    return x * cos + rotated * sin


def rotary_gptj_strided(x: Any, cos: Any, sin: Any) -> Any:
    """The same pairs as strided slices, ``x[:, 1::2]`` and ``x[:, ::2]``."""
    S, D = x.shape
    rotated = np.stack([-x[:, 1::2], x[:, ::2]], axis=-1).reshape(S, D)
    return x * cos + rotated * sin


def rotary_llama(x: Any, cos: Any, sin: Any) -> Any:
    """Llama's complex product in real arithmetic (``tests/model_programs``):
    the pairs' real and imaginary parts, one angle per pair."""
    S, D = x.shape
    pairs = x.reshape(S, D // 2, 2)
    re, im = pairs[..., 0], pairs[..., 1]
    out = np.stack([re * cos - im * sin, re * sin + im * cos], axis=-1)
    return out.reshape(S, D)


def roll_quarters(x: Any) -> Any:
    """``np.roll(x, D // 4, axis=-1)`` as concatenated slices, plus ``x``:
    pieces of 2 and 6 columns, refused (no window in common)."""
    quarter = x.shape[-1] // 4
    rolled = np.concatenate([x[:, -quarter:], x[:, :-quarter]], axis=-1)
    return rolled + x


def rotate_quarters(x: Any) -> Any:
    """Four pieces: every quarter of ``x`` read once, each used twice."""
    q = x.shape[-1] // 4
    parts = [x[..., i * q : (i + 1) * q] for i in range(4)]
    return x * 2.0 - np.concatenate(parts[2:] + parts[:2], axis=-1)


def flip_halves(x: Any) -> Any:
    half = x.shape[-1] // 2
    return np.concatenate([np.flip(x[:, :half], -1), np.flip(x[:, half:], -1)], -1)


def slice_and_computed(x: Any, y: Any) -> Any:
    half = x.shape[-1] // 2
    return np.concatenate([x[:, :half], np.tanh(y[:, half:]) * 2.0], axis=-1) * x


def symbolic_pieces(a: Any, b: Any) -> Any:
    """Pieces of a symbolic width ``D``."""
    return np.concatenate([a, b], axis=-1) * np.concatenate([b, -a], axis=-1)


def vector_halves(x: Any) -> Any:
    half = x.shape[0] // 2
    return np.concatenate([x[half:], x[:half]]) - x


def outer_axis_halves(x: Any) -> Any:
    """A concat along rows: refused (only the innermost axis is split)."""
    half = x.shape[0] // 2
    return np.concatenate([x[half:], x[:half]], axis=0) + 1.0


Shapes = Callable[[int], list[tuple[int, ...]]]

#: name: (function, specs, the inputs' shapes at a binding of the symbol,
#: the symbol's bindings, whether the piecewise form applies).
PROGRAMS: dict[str, tuple[Callable[..., Any], tuple[Any, ...], Shapes, list[int], bool]]
PROGRAMS = {
    "rotary_16": (
        rotary_halves,
        (spec("S", 16),) * 3,
        lambda S: [(S, 16)] * 3,
        [1, 9, 70],
        True,
    ),
    "rotary_6": (
        rotary_halves,
        (spec("S", 6),) * 3,
        lambda S: [(S, 6)] * 3,
        [1, 5],
        True,
    ),
    "rotary_2": (
        rotary_halves,
        (spec("S", 2),) * 3,
        lambda S: [(S, 2)] * 3,
        [1, 7],
        True,
    ),
    "rotary_even_d": (
        rotary_halves,
        (spec("S", "D"),) * 3,
        lambda D: [(3, D)] * 3,
        [2, 10, 300],
        True,
    ),
    "rotary_any_d": (
        rotary_halves,
        (spec("S", "D"),) * 3,
        lambda D: [(4, D)] * 3,
        [1, 7, 8],
        False,
    ),
    "rotary_interleaved": (
        rotary_interleaved,
        (spec("S", 4, 2),) * 3,
        lambda S: [(S, 4, 2)] * 3,
        [1, 3, 40],
        True,
    ),
    "rotary_gptj": (
        rotary_gptj,
        (spec("S", 16),) * 3,
        lambda S: [(S, 16)] * 3,
        [1, 9, 70],
        True,
    ),
    "rotary_gptj_strided": (
        rotary_gptj_strided,
        (spec("S", 12),) * 3,
        lambda S: [(S, 12)] * 3,
        [1, 11],
        True,
    ),
    "rotary_llama": (
        rotary_llama,
        (spec("S", 16), spec("S", 8), spec("S", 8)),
        lambda S: [(S, 16), (S, 8), (S, 8)],
        [1, 5, 33],
        True,
    ),
    "roll_quarters": (
        roll_quarters,
        (spec("S", 8),),
        lambda S: [(S, 8)],
        [1, 11],
        False,
    ),
    "rotate_quarters": (
        rotate_quarters,
        (spec("S", 3, 20),),
        lambda S: [(S, 3, 20)],
        [1, 6],
        True,
    ),
    "flip_halves": (
        flip_halves,
        (spec("S", 10),),
        lambda S: [(S, 10)],
        [1, 13],
        True,
    ),
    "slice_and_computed": (
        slice_and_computed,
        (spec("S", 12),) * 2,
        lambda S: [(S, 12)] * 2,
        [1, 19],
        True,
    ),
    "symbolic_pieces": (
        symbolic_pieces,
        (spec(5, "D"),) * 2,
        lambda D: [(5, D)] * 2,
        [1, 7, 130],
        True,
    ),
    "vector_halves": (
        vector_halves,
        (spec(18),),
        lambda _: [(18,)],
        [0],
        True,
    ),
    "outer_axis_halves": (
        outer_axis_halves,
        (spec(6, "D"),),
        lambda D: [(6, D)],
        [1, 17],
        False,
    ),
}


#: Facts declared with a program: with ``D`` even, the halves ``D - D
#: floordiv 2`` and ``D floordiv 2`` are one width; without, they differ.
FACTS = {"rotary_even_d": ["D % 2 == 0"]}


def compiled(name: str) -> irc.Compiled:
    function, specs, *_ = PROGRAMS[name]
    return irc.compile(function, *specs, facts=FACTS.get(name, ()))


def inputs(name: str, size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(size)
    _, _, shapes, _, _ = PROGRAMS[name]
    return [rng.standard_normal(s).astype(np.float32) for s in shapes(size)]


def cases() -> list[tuple[str, int]]:
    return [(name, size) for name, p in PROGRAMS.items() for size in p[3]]


def the_kernel(program: irc.Compiled) -> loop.KernelOp:
    module = parse_module(program.ir("loop"))
    (kernel,) = [op for op in module.walk() if isinstance(op, loop.KernelOp)]
    return kernel


def ops_of(kernel: loop.KernelOp, kind: type) -> list[Any]:
    return [op for op in kernel.walk() if isinstance(op, kind)]


@pytest.mark.parametrize(("name", "size"), cases())
def test_matches_numpy_on_the_reference_interpreters(name: str, size: int) -> None:
    """The reference backend (the graph level), and the loop and memory
    levels' interpreters, where the pieces are tiled and bufferized."""
    program = compiled(name)
    args = inputs(name, size)
    expected = PROGRAMS[name][0](*args)
    graph = program(*args, backend="reference")
    (tiled,) = run_loop(parse_module(program.ir("loop")), args)
    (buffered,) = run_memory(parse_module(program.ir("memory")), args)
    for level, got in (("graph", graph), ("loop", tiled), ("memory", buffered)):
        np.testing.assert_allclose(
            got, expected, rtol=1e-6, atol=1e-6, err_msg=f"{name} at the {level} level"
        )


@pytest.mark.parametrize(("name", "size"), cases())
def test_matches_numpy_on_the_triton_interpreter(name: str, size: int) -> None:
    args = inputs(name, size)
    got = compiled(name)(*args, backend="interpret")
    np.testing.assert_allclose(got, PROGRAMS[name][0](*args), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_piecewise_kernels_select_nothing(name: str) -> None:
    """Tiled by pieces, a kernel writes its output once per piece and
    holds no select (each piece is one operand of the concat); refused, it
    writes once and selects between the concat's operands."""
    kernel = the_kernel(compiled(name))
    pieces = PROGRAMS[name][4]
    writes = ops_of(kernel, loop.WriteOp)
    selects = ops_of(kernel, tile.SelectOp)
    assert ("pieces of" in kernel.reason.data) == pieces, kernel.reason.data
    if pieces:
        assert len(writes) > 1 and not selects, str(kernel)
    else:
        assert len(writes) == 1 and selects, str(kernel)


@pytest.mark.parametrize(
    ("name", "reads"),
    [
        # x's two halves, cos and sin at each half.
        ("rotary_16", {0: 2, 1: 2, 2: 2}),
        ("rotary_even_d", {0: 2, 1: 2, 2: 2}),
        ("rotary_interleaved", {0: 2, 1: 2, 2: 2}),
        ("rotary_gptj", {0: 2, 1: 2, 2: 2}),
        ("rotary_gptj_strided", {0: 2, 1: 2, 2: 2}),
        # x's even and odd positions; one angle per pair, used by both.
        ("rotary_llama", {0: 2, 1: 1, 2: 1}),
        # Each quarter once, though each feeds two pieces.
        ("rotate_quarters", {0: 4}),
        # a and b are each one piece, used by both.
        ("symbolic_pieces", {0: 1, 1: 1}),
    ],
)
def test_each_window_is_read_once(name: str, reads: dict[int, int]) -> None:
    """A window of an input that several pieces use is one read: one per
    window of a piece's width, whatever the number of uses."""
    kernel = the_kernel(compiled(name))
    arguments = list(kernel.body.block.args)
    counted: dict[int, int] = {}
    for read in ops_of(kernel, loop.ReadOp):
        number = arguments.index(read.operands[0])
        counted[number] = counted.get(number, 0) + 1
    assert counted == reads, str(kernel)


def test_many_pieces_keep_blocks_a_vector_wide() -> None:
    """Twelve heads of 64 columns (GPT-2's head merge): each piece's block
    holds at least 4 warps' 4-element vectors (512 elements), not the one
    row that ``pointwise-block`` shared over twelve pieces would leave."""

    def merge_heads(*heads: Any) -> Any:
        return np.concatenate(heads, axis=-1)

    kernel = the_kernel(irc.compile(merge_heads, *[spec("S", 64)] * 12))
    tiles = kernel.tile_sizes
    assert tiles["BLOCK_C"] == 64 and tiles["BLOCK_R"] * 64 >= 512, tiles
    assert len(ops_of(kernel, loop.WriteOp)) == 12


#: Concatenations of windows of one value and fresh arguments, combined
#: elementwise with the value (every concat spans the output's shape).
_WINDOWS = ("window", "argument", "negated")


def _times(count: int, width: str) -> str:
    """``count * width`` as a dim's text."""
    if width != "W":
        return str(count * int(width))
    return {0: "0", 1: "W"}.get(count, f"{count}*W")


@st.composite
def piecewise_programs(draw: st.DrawFn) -> str:
    """Graph-level IR: ``x: [N, count*width]`` (``width`` static or the
    symbol ``W``), one or two concats of ``count`` pieces, each a window of
    ``x``, a fresh argument or a negated window, summed or multiplied with
    ``x``. Side by side, the concats are along the last axis of ``x``;
    interleaved, along the last axis of ``x`` reshaped to ``[N, width,
    count]``, the pieces of one column, and the concat reshaped back."""
    count = draw(st.integers(2, 4))
    width = draw(st.sampled_from(["1", "3", "8", "W"]))
    interleaved = draw(st.booleans())
    row = f"!graph.tensor<[N, {_times(count, width)}], f32>"
    arguments = [f"%x: {row}"]
    body: list[str] = []
    if interleaved:
        pairs = f"!graph.tensor<[N, {width}, {count}], f32>"
        body.append(f"%xr = graph.reshape %x : {row} -> {pairs}")
        source, whole, piece = "%xr", pairs, f"!graph.tensor<[N, {width}, 1], f32>"
    else:
        source, whole, piece = "%x", row, f"!graph.tensor<[N, {width}], f32>"
    results = ["%x"]
    for number in range(draw(st.integers(1, 2))):
        parts = []
        for k in range(count):
            name = f"%p{number}_{k}"
            # A symbolic width is read off an argument of the piece's shape.
            first = number == 0 and k == 0 and width == "W"
            kind = "argument" if first else draw(st.sampled_from(_WINDOWS))
            start = draw(st.integers(0, count - 1))
            if kind == "argument":
                arguments.append(f"{name}: {piece}")
            else:
                window = name if kind != "negated" else f"{name}w"
                offsets = (
                    f"0, 0, {start}" if interleaved else f"0, {_times(start, width)}"
                )
                strides = "1, 1, 1" if interleaved else "1, 1"
                body.append(
                    f"{window} = graph.slice {source} [{offsets}] [{strides}] : "
                    f"{whole} -> {piece}"
                )
                if kind == "negated":
                    body.append(f"{name} = graph.neg {window} : {piece}")
            parts.append(name)
        types = ", ".join([piece] * count)
        axis = 2 if interleaved else 1
        concat = f"%c{number}"
        body.append(
            f"{concat} = graph.concat {', '.join(parts)} [{axis}] : ({types}) -> {whole}"
        )
        if interleaved:
            body.append(f"{concat}r = graph.reshape {concat} : {whole} -> {row}")
            concat = f"{concat}r"
        combine = draw(st.sampled_from(["add", "mul", "sub"]))
        body.append(f"%r{number} = graph.{combine} {results[-1]}, {concat} : {row}")
        results.append(f"%r{number}")
    lines = "\n    ".join(body)
    return (
        f"func.func @main({', '.join(arguments)}) -> {row} {{\n    {lines}\n"
        f"    func.return {results[-1]} : {row}\n}}\n"
    )


def test_tile_preserves_meaning_of_piecewise_programs() -> None:
    testing.check_pass(
        "fuse,tile",
        piecewise_programs().map(parse_module),
        max_examples=60,
        require_change=["tile"],
    )


def test_tile_preserves_meaning_of_generated_concatenations() -> None:
    testing.check_pass(
        "fuse,tile",
        testing.programs(actions=("concat", "slice", "binary", "unary", "broadcast")),
        max_examples=60,
        require_change=["tile"],
    )
