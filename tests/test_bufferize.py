"""``bufferize`` and the memory level's reference interpreter.

Hand-written loop-level programs (the ones of
``tests/filecheck/transforms/bufferize.mlir``, plus a few here) are run
with the loop interpreter and, after ``bufferize``, with the memory
interpreter, through ``check_pass``; the storage plan (alloc, reuse,
dealloc) is asserted op by op; and the memory interpreter's debugging
checks (unwritten reads, use after dealloc or reuse, unmasked
out-of-bounds accesses, broken guards) are shown to fire.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from irc import testing
from irc.dialects import memory
from irc.errors import BindingError, ExecutionError
from irc.interpreters.loop import run_loop
from irc.interpreters.memory import run_memory
from irc.ir import default_context, parse_module, print_module
from irc.lowering.loop_to_memory import BufferizePass
from irc.testing.interpreters import entry_signature, level_of

EXAMPLES = max(25, settings.default.max_examples // 4)

FILECHECK_PROGRAMS = Path(__file__).parent / "filecheck/transforms/bufferize.mlir"


def filecheck_programs() -> list[str]:
    """The loop-level programs of the FileCheck test, comments removed."""
    text = FILECHECK_PROGRAMS.read_text()
    chunks = [re.sub(r"^//.*$", "", c, flags=re.M) for c in text.split("// -----")]
    return [chunk for chunk in chunks if "func.func" in chunk]


def pointwise(name: str, source: str, kind: str, size: str = "N") -> str:
    """A loop kernel computing ``kind`` of a 1-D f32 tensor, 64 lanes per
    program, as ``tile`` writes one."""
    tensor = f"!graph.tensor<[{size}], f32>"
    tile = "!loop.tile<[64], f32>"
    index = "!loop.tile<[64], i64>"
    mask = "!loop.tile<[64], i1>"
    return f"""
  %{name} = loop.kernel @{name} pointwise (%{source}) grid [({size} + 63) floordiv 64] tiles {{B = 64}} symbols [{size}] reason "" : ({tensor}) -> ({tensor}) {{
  ^bb0(%a: {tensor}):
    %p = tile.program_id 0 : i64
    %r = tile.range "B" : {index}
    %c64 = tile.size 64 : i64
    %base = tile.binary mul %p, %c64 : (i64, i64) -> i64
    %i = tile.binary add %base, %r : (i64, {index}) -> {index}
    %n = tile.size {size} : i64
    %m = tile.cmp lt %i, %n : ({index}, i64) -> {mask}
    %v = loop.read %a[%i] mask %m : {tensor}[{index}] mask {mask} -> {tile}
    %e = tile.unary {kind} %v : {tile}
    loop.write %e to 0[%i] mask %m : {tile}[{index}] mask {mask}
  }}"""


def chain(kinds: list[str], returned: list[int]) -> str:
    """A function applying ``kinds`` one kernel after the other to ``%x``,
    returning the outputs of the kernels at positions ``returned``."""
    body, source = [], "x"
    for position, kind in enumerate(kinds):
        body.append(pointwise(f"t{position}", source, kind))
        source = f"t{position}"
    tensor = "!graph.tensor<[N], f32>"
    results = ", ".join(f"%t{p}" for p in returned)
    types = ", ".join([tensor] * len(returned))
    return (
        f"func.func @chain(%x: {tensor}) -> ({types}) {{{''.join(body)}\n"
        f"  func.return {results} : {types}\n}}\n"
    )


SIX_KERNELS = chain(["exp", "neg", "abs", "sqrt", "tanh", "sin"], [5, 2])


def bufferized(text: str) -> ModuleOp:
    module = parse_module(text)
    module.verify()
    BufferizePass().apply(default_context(), module)
    module.verify()
    return module


def host_ops(module: ModuleOp, name: str) -> list[Operation]:
    function = next(
        op
        for op in module.ops
        if isinstance(op, func.FuncOp) and op.sym_name.data == name
    )
    return list(function.body.ops)


def plan(module: ModuleOp) -> list[str]:
    """The host ops that decide storage, as printed up to their types."""
    lines = [line.strip() for line in print_module(module).splitlines()]
    pattern = r"(%\w+ = )?memory\.(alloc|reuse|dealloc|launch)\b"
    return [line.split(" :", 1)[0] for line in lines if re.match(pattern, line)]


# --------------------------------------------------------------------------
# Semantics: the loop interpreter before, the memory interpreter after
# --------------------------------------------------------------------------


@pytest.mark.parametrize("index", range(len(filecheck_programs())))
def test_filecheck_programs_keep_their_meaning(index: int) -> None:
    program = filecheck_programs()[index]
    # bufferize keeps a kernel's i32 index type, so the flat offset of an
    # i32 kernel (row * D) may wrap past 2**31 when the symbols are large:
    # the bounds checker rightly cannot prove such a kernel in bounds.
    narrow = ": i32" in program
    testing.check_pass(
        BufferizePass(),
        [program],
        max_examples=EXAMPLES,
        max_value=16,
        check_bounds=not narrow,
    )


def test_chains_keep_their_meaning() -> None:
    programs = [SIX_KERNELS, chain(["exp", "neg"], [0, 1]), chain(["exp"], [0, 0])]
    testing.check_pass(BufferizePass(), programs, max_examples=EXAMPLES, max_value=200)


@pytest.mark.slow  # 100 generated programs through three passes, each parsed back
def test_the_pipeline_from_graph_keeps_the_meaning() -> None:
    """fuse, tile and bufferize on generated graph programs: the memory
    interpreter on the result agrees with the graph interpreter."""
    testing.check_pass("fuse,tile,bufferize", max_examples=max(100, EXAMPLES))


def test_graph_functions_are_left_alone() -> None:
    """A function above the loop level is not bufferize's to change, as
    graph ops are not tile's."""
    text = """
    func.func @f(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
      %y = graph.exp %x : !graph.tensor<[N], f32>
      func.return %y : !graph.tensor<[N], f32>
    }
    """
    assert print_module(bufferized(text)) == print_module(parse_module(text))


def test_run_memory_matches_run_loop_around_block_boundaries() -> None:
    loop_module = parse_module(SIX_KERNELS)
    module = bufferized(SIX_KERNELS)
    for n in (1, 63, 64, 65, 200):
        x = np.random.default_rng(n).uniform(0.5, 2.0, n).astype(np.float32)
        expected = run_loop(loop_module, [x])
        actual = run_memory(module, [x])
        for want, got in zip(expected, actual, strict=True):
            np.testing.assert_array_equal(got, want)


def test_the_memory_level_is_registered() -> None:
    module = bufferized(SIX_KERNELS)
    assert level_of(module).name == "memory"
    assert [str(t) for t in entry_signature(module)] == ["!graph.tensor<[N], f32>"]


# --------------------------------------------------------------------------
# The storage plan
# --------------------------------------------------------------------------


def test_dead_intermediates_are_reused_then_deallocated() -> None:
    module = bufferized(SIX_KERNELS)
    assert plan(module) == [
        "%t0 = memory.alloc",
        "memory.launch @t0(%x, %t0)",
        "%t1 = memory.alloc",
        "memory.launch @t1(%t0, %t1)",
        # %t2 is returned: fresh, although %t0 is dead.
        "%t2 = memory.alloc",
        "memory.launch @t2(%t1, %t2)",
        # %t1 died last, so its storage is taken first.
        "%t3 = memory.reuse %t1",
        "memory.launch @t3(%t2, %t3)",
        "%t4 = memory.reuse %t0",
        "memory.launch @t4(%t3, %t4)",
        "memory.dealloc %t3",
        "%t5 = memory.alloc",
        "memory.launch @t5(%t4, %t5)",
        "memory.dealloc %t4",
    ]


def test_a_kernel_never_writes_where_it_reads() -> None:
    """An input dying at a kernel is free only after it: the kernel's own
    output gets other storage."""
    module = bufferized(chain(["exp", "neg", "abs"], [2]))
    reuses = [op for op in host_ops(module, "chain") if isinstance(op, memory.ReuseOp)]
    assert reuses == []


def test_returned_buffers_are_fresh_and_results_do_not_alias() -> None:
    module = bufferized(chain(["exp"], [0, 0]))
    x = np.ones(3, np.float32)
    first, second = run_memory(module, [x])
    first[0] = 7.0
    assert second[0] == np.exp(np.float32(1.0))


def test_returned_argument_is_a_copy() -> None:
    text = """
    func.func @identity(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
      func.return %x : !graph.tensor<[N], f32>
    }
    """
    module = bufferized(text)
    assert "!memory.buffer<[N], [1], f32>" in print_module(module)
    x = np.arange(3, dtype=np.float32)
    (y,) = run_memory(module, [x])
    y[0] = 5.0
    assert x[0] == 0.0


def test_bufferize_is_idempotent() -> None:
    module = bufferized(SIX_KERNELS)
    once = print_module(module)
    BufferizePass().apply(default_context(), module)
    assert print_module(module) == once


def test_a_splat_constant_among_kernels_is_an_error() -> None:
    text = """
    func.func @f(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
      %c = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
      %y = graph.add %x, %c : !graph.tensor<[N], f32>
    """
    text += pointwise("k", "y", "exp")
    text += """
      func.return %k : !graph.tensor<[N], f32>
    }
    """
    with pytest.raises(PassFailedException, match="splat constant at function level"):
        bufferized(text)


def test_a_graph_op_among_kernels_is_an_error() -> None:
    text = (
        "func.func @f(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {\n"
        "  %y = graph.exp %x : !graph.tensor<[N], f32>"
        + pointwise("k", "y", "exp")
        + "\n  func.return %k : !graph.tensor<[N], f32>\n}\n"
    )
    with pytest.raises(PassFailedException, match=r"graph\.exp in @f: .*tile"):
        bufferized(text)


# --------------------------------------------------------------------------
# The memory interpreter's checks
# --------------------------------------------------------------------------

HOST = """
memory.kernel @copy pointwise (%a: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [{grid}] tiles {{}} symbols [N] reason "" {{
  %p = tile.program_id 0 : i64
  {load}
  memory.store %v, %out[%p] : f32, !memory.buffer<[N], [1], f32>[i64]
}}
func.func @f(%x: !memory.buffer<[N], [1], f32>) -> !memory.buffer<[N], [1], f32> {{
  sym.guard N <= 4, "small"
  {body}
}}
"""
BUF = "!memory.buffer<[N], [1], f32>"
LOAD = f"%v = memory.load %a[%p] : {BUF}[i64] -> f32"


def host(body: str, load: str = LOAD, grid: str = "N") -> ModuleOp:
    """A module whose kernel @copy copies element by element (``load``
    reads ``%v`` at ``%p``) and whose host function runs ``body``."""
    module = parse_module(HOST.format(body=body, load=load, grid=grid))
    module.verify()
    return module


def test_reading_unwritten_memory_is_an_error() -> None:
    module = host(
        f"""%t = memory.alloc : {BUF}
  %y = memory.alloc : {BUF}
  memory.launch @copy(%t, %y) : ({BUF}, {BUF})
  func.return %y : {BUF}"""
    )
    with pytest.raises(
        ExecutionError, match="reads offset 0 of a buffer .* that nothing wrote"
    ):
        run_memory(module, [np.ones(2, np.float32)])


def test_reading_a_reused_buffer_through_the_old_name_is_an_error() -> None:
    module = host(
        f"""%t = memory.alloc : {BUF}
  memory.launch @copy(%x, %t) : ({BUF}, {BUF})
  %u = memory.reuse %t : {BUF} -> {BUF}
  %y = memory.alloc : {BUF}
  memory.launch @copy(%t, %y) : ({BUF}, {BUF})
  func.return %y : {BUF}"""
    )
    with pytest.raises(ExecutionError, match="that nothing wrote"):
        run_memory(module, [np.ones(2, np.float32)])


def test_use_after_dealloc_is_an_error() -> None:
    module = host(
        f"""%t = memory.alloc : {BUF}
  memory.launch @copy(%x, %t) : ({BUF}, {BUF})
  memory.dealloc %t : {BUF}
  func.return %t : {BUF}"""
    )
    with pytest.raises(ExecutionError, match="was deallocated"):
        run_memory(module, [np.ones(2, np.float32)])


def test_an_output_left_unwritten_is_an_error() -> None:
    module = host(
        f"""%y = memory.alloc : {BUF}
  memory.launch @copy(%x, %y) : ({BUF}, {BUF})
  func.return %y : {BUF}""",
        grid="N - 1",
    )
    with pytest.raises(ExecutionError, match="output 0 of @copy has 1 element"):
        run_memory(module, [np.ones(3, np.float32)])


def test_an_unmasked_out_of_bounds_load_is_an_error() -> None:
    load = f"""%one = tile.size 1 : i64
  %q = tile.binary add %p, %one : (i64, i64) -> i64
  %v = memory.load %a[%q] : {BUF}[i64] -> f32"""
    module = host(
        f"""%y = memory.alloc : {BUF}
  memory.launch @copy(%x, %y) : ({BUF}, {BUF})
  func.return %y : {BUF}""",
        load,
    )
    with pytest.raises(
        ExecutionError, match=r"reads offset 2 of a buffer of shape \(2,\)"
    ):
        run_memory(module, [np.ones(2, np.float32)])


def test_masked_lanes_touch_no_memory() -> None:
    """Lanes past the end are masked off: they read 0 and never fault."""
    load = f"""%one = tile.size 1 : i64
  %q = tile.binary add %p, %one : (i64, i64) -> i64
  %n = tile.size N : i64
  %m = tile.cmp lt %q, %n : (i64, i64) -> i1
  %v = memory.load %a[%q] mask %m : {BUF}[i64] mask i1 -> f32"""
    module = host(
        f"""%y = memory.alloc : {BUF}
  memory.launch @copy(%x, %y) : ({BUF}, {BUF})
  func.return %y : {BUF}""",
        load,
    )
    (y,) = run_memory(module, [np.array([1.0, 2.0, 3.0], np.float32)])
    np.testing.assert_array_equal(y, [2.0, 3.0, 0.0])


def test_a_broken_guard_names_the_symbols() -> None:
    module = host(f"func.return %x : {BUF}")
    with pytest.raises(
        BindingError, match=r"guard `N <= 4` does not hold with N = 5: small"
    ):
        run_memory(module, [np.ones(5, np.float32)])


def test_wrong_dtype_is_a_binding_error() -> None:
    module = host(f"func.return %x : {BUF}")
    with pytest.raises(BindingError, match="has dtype float64"):
        run_memory(module, [np.ones(2, np.float64)])
