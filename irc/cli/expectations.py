"""How ``--verify-diagnostics`` matches errors with ``expected-error`` notes.

As in MLIR, a test input states the errors it should produce in comments::

    // expected-error@+1 {{'graph.add' op}}
    %z = "graph.add"(%x, %y) : ...

``// expected-error {{text}}`` expects an error on its own line whose
message contains ``text``; ``@+N`` and ``@-N`` move that line down or up.
Each error must match one expectation and each expectation one error;
every mismatch becomes a report of its own. Internal errors (bugs) never
match: a test cannot expect irc to crash.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from xdsl.utils.lexer import Input, Span

from irc.cli.diagnostics import ErrorKind, Report

_EXPECTED_ERROR = re.compile(r"//\s*expected-error(?:@([+-]\d+))?\s*\{\{(.*)\}\}")
"""``// expected-error {{message}}``, optionally ``@+N`` / ``@-N`` lines away."""


@dataclass(frozen=True)
class Expectation:
    """One ``// expected-error`` annotation."""

    span: Span[str]  # the annotation itself, to report it when unmatched
    line: int  # the line the error is expected on
    message: str  # a substring of the expected message

    def matches(self, report: Report) -> bool:
        """Whether ``report`` is the error this annotation expects."""
        return (
            report.kind is not ErrorKind.INTERNAL
            and report.line == self.line
            and self.message in report.message
        )


def has_expectations(text: str) -> bool:
    """Whether ``text`` holds any ``expected-error`` annotation; an input
    without one keeps xdsl-opt's meaning of ``--verify-diagnostics``."""
    return _EXPECTED_ERROR.search(text) is not None


def find_expectations(text: str, name: str, line_offset: int) -> list[Expectation]:
    """The annotations in one input chunk, ``line_offset`` lines into file
    ``name``."""
    source = Input(text, name)
    found = []
    for match in _EXPECTED_ERROR.finditer(text):
        span = Span(match.start(), match.end(), source, line_offset)
        line = span.get_location().line + int(match.group(1) or 0)
        found.append(Expectation(span, line, match.group(2)))
    return found


def mismatches(expectations: list[Expectation], reports: list[Report]) -> list[Report]:
    """The errors that no annotation expects and the annotations that no
    error matches, each as a report (none when all match)."""
    pending = list(expectations)
    unexpected = []
    for report in reports:
        match = next((e for e in pending if e.matches(report)), None)
        if match is None:
            unexpected.append(
                dataclasses.replace(
                    report, message=f"unexpected error: {report.message}"
                )
            )
        else:
            pending.remove(match)
    return unexpected + [
        Report(f'expected error "{e.message}" was not produced', span=e.span)
        for e in pending
    ]
