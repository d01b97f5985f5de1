"""irc.testing.reduce: shrink a module to a small one that still fails.

``reduce(text, test)`` delta-debugs IR of any irc level (graph, fusion,
loop, memory, triton) to a small module on which an interestingness test
still holds, and gives the command that shows the failure on it; the
``irc-reduce`` console script (``irc.cli.irc_reduce``) is its command line.
The tests are ``Crash`` (an irc-opt pipeline crashes), ``Miscompile`` (its
``--check-semantics`` finds a pass changing the results), ``ErrorMatches``
(irc-opt's error output matches a regex) and ``Script`` (a user's command,
exit status 0 meaning "still interesting"). See docs/testing.md.
"""

from irc.testing.reduce.interestingness import (
    Crash,
    ErrorMatches,
    InterestingnessTest,
    IrcOptTest,
    Miscompile,
    Outcome,
    Script,
)
from irc.testing.reduce.reducer import ReduceError, ReduceResult, reduce
from irc.testing.reduce.reductions import REDUCTIONS, Reduction, count_ops

__all__ = [
    "REDUCTIONS",
    "Crash",
    "ErrorMatches",
    "InterestingnessTest",
    "IrcOptTest",
    "Miscompile",
    "Outcome",
    "ReduceError",
    "ReduceResult",
    "Reduction",
    "Script",
    "count_ops",
    "reduce",
]
