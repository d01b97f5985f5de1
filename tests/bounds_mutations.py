"""Index mutations of loop, memory and triton IR text that make an access
run out of bounds, for the bounds checker's tests (tests/test_bounds.py):
the four kinds of issue 16 (a dropped load or store mask, a grid axis one
too large, a ``lt`` bound turned into ``le``, swapped index operands).

Each mutation edits one line of the IR a suite program prints at a level
and returns the mutated text, or None when the program has no line it
applies to; the text still parses and verifies.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: The access ops of each level: (reads, writes).
ACCESS_OPS = {
    "loop": ("loop.read", "loop.write"),
    "memory": ("memory.load", "memory.store"),
    "triton": ("triton.load", "triton.store"),
}

_MASK_OPERAND = re.compile(r" mask %[\w.$-]+")
_MASK_TYPE = re.compile(r" mask (![\w.]+<\[[^\]]*\], i1>|i1)")
_GRID = re.compile(r"grid \[([^\]]*)\]")


def _replace_line(text: str, index: int, line: str) -> str:
    lines = text.splitlines()
    lines[index] = line
    return "\n".join(lines) + "\n"


def drop_mask(text: str, level: str, writes: bool) -> str | None:
    """The first masked load (or store) of ``level`` without its mask."""
    op = ACCESS_OPS[level][writes]
    for index, line in enumerate(text.splitlines()):
        if f"{op} " in line and _MASK_OPERAND.search(line):
            line = _MASK_TYPE.sub("", _MASK_OPERAND.sub("", line, count=1), count=1)
            return _replace_line(text, index, line)
    return None


def drop_load_mask(text: str, level: str) -> str | None:
    return drop_mask(text, level, writes=False)


def drop_store_mask(text: str, level: str) -> str | None:
    return drop_mask(text, level, writes=True)


def grow_grid(text: str, level: str) -> str | None:
    """The first kernel's grid axis 0 one program larger."""
    del level
    for index, line in enumerate(text.splitlines()):
        match = _GRID.search(line)
        if match and ".kernel @" in line:
            axes = match.group(1).split(", ")
            axes[0] = f"{axes[0]} + 1"
            grown = (
                line[: match.start()]
                + f"grid [{', '.join(axes)}]"
                + line[match.end() :]
            )
            return _replace_line(text, index, grown)
    return None


def loosen_bound(text: str, level: str) -> str | None:
    """The first ``cmp lt`` against a size (a mask's bound) made ``le``."""
    sizes = set(re.findall(r"(%[\w]+) = tile\.size ", text))
    for index, line in enumerate(text.splitlines()):
        match = re.search(r"\.cmp lt (%[\w]+), (%[\w]+) ", line)
        if match and match.group(2) in sizes:
            return _replace_line(text, index, line.replace(".cmp lt ", ".cmp le ", 1))
    return None


def swap_indices(text: str, level: str) -> str | None:
    """Two index operands exchanged: at the loop level the two indices of a
    read of a tensor whose dims differ (with their types); at the memory
    and triton levels the offsets of two loads of different buffers whose
    offsets have the same type."""
    if level == "loop":
        return _swap_loop_indices(text)
    return _swap_offsets(text, ACCESS_OPS[level][0])


_LOOP_READ = re.compile(
    r"loop\.read (%\w+)\[(%\w+), (%\w+)\](.*?) : !graph\.tensor<\[([^\]]*)\], \w+>"
    r"\[([^,\[]+(?:<[^>]*>)?), ([^\]\[]+(?:<[^>]*>)?)\]"
)


def _swap_loop_indices(text: str) -> str | None:
    for index, line in enumerate(text.splitlines()):
        match = _LOOP_READ.search(line)
        if not match or len(set(match.group(5).split(", "))) < 2:
            continue
        if match.group(2) == match.group(3):
            continue
        tensor, first, second = match.group(1), match.group(2), match.group(3)
        type_a, type_b = match.group(6), match.group(7)
        swapped = line.replace(
            f"{tensor}[{first}, {second}]", f"{tensor}[{second}, {first}]", 1
        )
        swapped = swapped.replace(f"[{type_a}, {type_b}]", f"[{type_b}, {type_a}]", 1)
        return _replace_line(text, index, swapped)
    return None


def _swap_offsets(text: str, load: str) -> str | None:
    # The offset's type: the first tile type after the operands.
    pattern = re.compile(
        rf"{re.escape(load)} (%\w+)\[(%\w+)\](.*?)"
        r"(!(?:loop\.tile|triton\.tensor)<\[[^\]]*\], \w+>)"
    )
    lines = text.splitlines()
    found = [(i, m) for i, line in enumerate(lines) if (m := pattern.search(line))]
    for (i, a), (j, b) in ((x, y) for x in found for y in found if x[0] < y[0]):
        different = a.group(1) != b.group(1) and a.group(2) != b.group(2)
        same_kernel = not any(".kernel @" in line for line in lines[i:j])
        defined_before = any(f"{b.group(2)} = " in line for line in lines[:i])
        if different and same_kernel and defined_before and a.group(4) == b.group(4):
            lines[i] = lines[i].replace(f"[{a.group(2)}]", f"[{b.group(2)}]", 1)
            lines[j] = lines[j].replace(f"[{b.group(2)}]", f"[{a.group(2)}]", 1)
            return "\n".join(lines) + "\n"
    return None


MUTATIONS: dict[str, Callable[[str, str], str | None]] = {
    "dropped load mask": drop_load_mask,
    "dropped store mask": drop_store_mask,
    "grid one too large": grow_grid,
    "lt turned into le": loosen_bound,
    "swapped index operands": swap_indices,
}
