"""Names and text that reach emitted source, made safe.

IR may be hostile, so nothing from it reaches the source as code: every
name becomes ``[A-Za-z_][A-Za-z0-9_]*`` behind a prefix that says what it
is (``identifier``), made unique within its scope by a ``Namer``; text
(reasons, locations, argument names in messages) becomes one line of
printable ASCII (``safe_text``), and reaches the source only inside a
comment (``comment_lines``) or a ``repr``-quoted literal (``text_literal``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xdsl.ir import Operation

from irc.source_locations import source_location

_UNSAFE_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")
_UNSAFE_TEXT = re.compile(r"[^\x20-\x7e]")
_MAX_NAME = 48
_MAX_LINE = 160
_MAX_LINES = 40


def identifier(prefix: str, text: str) -> str:
    """``prefix`` followed by ``text`` reduced to identifier characters:
    always a valid Python identifier, never a keyword (the prefixes start
    with a letter and none is a keyword prefix of anything)."""
    return prefix + _UNSAFE_IDENTIFIER.sub("_", text)[:_MAX_NAME]


def safe_text(text: str) -> str:
    """``text`` on one line of printable ASCII, shortened: what IR text may
    become inside a comment or a string literal."""
    flat = _UNSAFE_TEXT.sub("?", text.replace("\n", " | "))
    return flat if len(flat) <= _MAX_LINE else flat[: _MAX_LINE - 3] + "..."


def text_literal(text: str) -> str:
    """A Python string literal holding ``safe_text(text)``."""
    return repr(safe_text(text))


def comment_lines(text: str) -> list[str]:
    """``# ...`` lines holding ``text``, one per line of it, each reduced to
    printable ASCII so that nothing in it ends the comment."""
    lines = text.splitlines() or [""]
    if len(lines) > _MAX_LINES:
        lines = [
            *lines[: _MAX_LINES - 1],
            f"... ({len(lines) - _MAX_LINES + 1} more lines)",
        ]
    return [f"# {safe_text(line)}".rstrip() for line in lines]


@dataclass
class Namer:
    """Fresh, unique identifiers within one Python scope."""

    taken: set[str] = field(default_factory=set)

    def fresh(self, prefix: str, text: str = "") -> str:
        base = identifier(prefix, text)
        name, count = base, 1
        while name in self.taken:
            count += 1
            name = f"{base}_{count}"
        self.taken.add(name)
        return name


#: Names of the emitted module's scope that no generated name may take.
MODULE_NAMES = frozenset({"torch", "triton", "tl", "KERNELS", "ENTRY", "LaunchError"})


def location_comment(op: Operation) -> str:
    """A trailing comment naming ``op``'s source line, or nothing."""
    location = source_location(op)
    return f"  # {safe_text(location)}" if location else ""
