"""What the families of steps share.

A program is a sequence of steps, each taking one action of ``ACTIONS``. A
family of steps (:mod:`~irc.testing.strategies.elementwise`,
:mod:`~irc.testing.strategies.sources`, ...) is a :class:`Steps` whose
methods are named after their actions. :class:`StepMemory` remembers the
previous step, which a :data:`REPEAT` step takes again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.ir import Operation

from irc.testing.strategies.domains import Domains
from irc.testing.strategies.operands import Operands
from irc.testing.strategies.program import Choices, Program

#: A step that takes the previous step's action (and op) again.
REPEAT = "repeat"


class Steps:
    """A family of steps. Each public method is named after an action: it
    adds one op to ``program`` (with the casts, broadcasts, domain fixes and
    new arguments it needs) and returns whether the action applies here;
    when it does not, the step adds a binary op instead."""

    def __init__(self, program: Program, operands: Operands, domains: Domains) -> None:
        self.program = program
        self.choices = program.choices
        self.options = program.options
        self.operands = operands
        self.domains = domains


class StepMemory:
    """The previous step: its action, and the op each action added last."""

    def __init__(self) -> None:
        self.last_action = "binary"
        self.repeating = False
        self.last_op: dict[str, type[Operation]] = {}

    def begin(self, action: str) -> str:
        """The action a step of ``action`` takes: the previous step's again
        for :data:`REPEAT`."""
        self.repeating = action == REPEAT
        if self.repeating:
            action = self.last_action
        self.last_action = action
        return action

    def op_class(
        self, action: str, options: Sequence[type[Operation]], choices: Choices
    ) -> Any:
        """The op a step of ``action`` adds: the previous one's again in a
        repeated step (``neg(neg(x))``), else one of ``options``."""
        if self.repeating and action in self.last_op:
            return self.last_op[action]
        self.last_op[action] = choices.one_of(options)
        return self.last_op[action]
