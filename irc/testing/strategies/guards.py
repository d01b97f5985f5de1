"""The ``guard`` step: a fact about the symbols bound so far.

``N <= max_value``, ``N >= 2``, ``N mod 2 == 0``, ``N == 1`` or ``N == M``,
provided some sizes satisfy it together with the earlier guards; later
broadcasts, slices and reductions rely on what the guards prove.
"""

from __future__ import annotations

from irc.errors import IrcError
from irc.shapes import Fact, SymExpr
from irc.testing.sampling import enumerate_bindings
from irc.testing.strategies.steps import Steps


class GuardSteps(Steps):
    """The guards of ``program``."""

    def guard(self) -> bool:
        if not self.program.bound:
            return False
        name = self.choices.one_of(self.program.bound)
        symbol = SymExpr.symbol(name)
        others = [SymExpr.symbol(s) for s in self.program.bound if s != name]
        forms = ["upper", "lower", "even", "one"] + (["equal"] if others else [])
        form = self.choices.one_of(forms)
        fact = {
            "upper": lambda: Fact(symbol, "<=", self.options.max_value),
            "lower": lambda: Fact(symbol, ">=", 2),
            "even": lambda: Fact(symbol % 2, "==", 0),
            "one": lambda: Fact(symbol, "==", 1),
            "equal": lambda: Fact(symbol, "==", self.choices.one_of(others)),
        }[form]()
        try:
            enumerate_bindings(
                self.program.bound,
                [*self.program.guards, fact],
                max_value=self.options.max_value,
            )
        except IrcError:
            return False  # no size satisfies it together with the earlier guards
        self.program.add_guard(fact, "generated" if self.choices.flag() else None)
        return True
