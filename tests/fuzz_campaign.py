"""Long fuzzing runs of irc's three generators, spread over the cores.

``python tests/fuzz_campaign.py KIND --minutes 60 --jobs 2`` runs one of

- ``irc-opt``: the mutation fuzzer of ``irc-opt`` (``tests/irc_opt_fuzz.py``):
  mutants of every level's FileCheck inputs must end in output or located
  diagnostics;
- ``programs``: ``irc.testing.check_pass`` over generated programs for every
  registered pass (with the pipelines of ``tests/test_check_pass.py``),
  ``canonicalize,cse`` and the metamorphic checks: no miscompile, no crash;
- ``oracle``: the JAX oracle's four generated tests
  (``tests/test_jax_oracle.py``): values and derivatives agree with JAX's;

for the given wall time, as batches of examples in ``--jobs`` processes at a
time. Each batch is a fresh process under a time limit: one that does not
end within it is a hang (killed, reported with its seed). A batch reports
its programs and each failure, classified: a disagreement (a miscompile, a
result unlike JAX's, a mutant ending wrongly), an access out of bounds
(``check_pass``'s bounds checker: an access it found out of bounds, or could
not prove inside, after a pass), a refusal (an irc error on a program the
generator means to be accepted), an internal error (any other exception). The summary goes to stdout and, as JSON, to ``--out``.

Hypothesis draws new examples in each batch (the ``oracle`` batches from
their seed; the others from fresh randomness) and prints a failure's
``@reproduce_failure`` blob, kept in the failure's text.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
KINDS = ("irc-opt", "programs", "oracle")
TITLES = {
    "irc-opt": "irc-opt mutants",
    "programs": "check_pass",
    "oracle": "JAX oracle",
}
#: Examples per batch (per check for ``programs``, per test for ``oracle``):
#: a batch takes a minute or two on one core.
BATCH_EXAMPLES = {"irc-opt": 1000, "programs": 10, "oracle": 5}
#: A batch that takes longer has hung.
BATCH_LIMIT = 1200.0


class Tally:
    """What a batch saw: its programs and its classified failures."""

    def __init__(self) -> None:
        self.programs = 0
        self.failures: list[dict[str, str]] = []

    def fail(self, kind: str, where: str, text: str) -> None:
        # The head says what failed, the tail (Hypothesis's report) on what.
        if len(text) > 8000:
            text = f"{text[:4000]}\n[...]\n{text[-4000:]}"
        self.failures.append({"kind": kind, "where": where, "text": text})

    def catch(self, where: str, run: Callable[[], object]) -> None:
        """Run one check, recording how it failed, if it did."""
        from irc.errors import IrcError

        try:
            run()
        except AssertionError as error:  # PassCheckError is one
            kind = "disagreement"
            if "made an access out of bounds" in str(error):
                kind = "access out of bounds"  # or not proven inside: the text says
            self.fail(kind, where, _report(error))
        except IrcError as error:
            self.fail("refusal", where, _report(error))
        except Exception as error:
            self.fail("internal error", where, _report(error))


def _report(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


def _load_campaign_profile() -> None:
    """New examples each batch, no example database (batches run side by
    side), a failure's reproduction blob printed."""
    from hypothesis import settings

    settings.register_profile(
        "campaign", deadline=None, derandomize=False, database=None, print_blob=True
    )
    settings.load_profile("campaign")


# Batches ----------------------------------------------------------------------


def irc_opt_batch(seed: int, examples: int, tally: Tally) -> None:
    import irc_opt_fuzz

    worker = irc_opt_fuzz.Worker(limit=20.0)
    try:
        for index, mutant in enumerate(irc_opt_fuzz.mutants(examples, seed)):
            outcome = worker.run(mutant.data, mutant.seed.args)
            tally.programs += 1
            if problems := outcome.problems():
                tally.fail(
                    _mutant_failure(outcome.hang, problems),
                    f"mutant {index} of seed {seed} ({mutant.seed.name}, "
                    f"irc-opt {' '.join(mutant.seed.args)}, {mutant.mutations})",
                    f"{'; '.join(problems)}\n{outcome.stderr[:2000]}\n"
                    f"input: {mutant.data[:2000]!r}",
                )
    finally:
        worker.close()


def _mutant_failure(hang: bool, problems: list[str]) -> str:
    """The kind of a mutant's failure, from ``irc_opt_fuzz``'s problems."""
    if hang:
        return "hang"
    crashed = ("internal error", "traceback", "escaped")
    if any(word in problem for problem in problems for word in crashed):
        return "internal error"
    return "disagreement"


def programs_batch(seed: int, examples: int, tally: Tally) -> None:
    del seed  # check_pass draws from Hypothesis's own randomness
    _load_campaign_profile()
    import test_check_pass as checks

    from irc import testing
    from irc.passes.registry import get_all_passes

    def counted(run: Callable[[], testing.PassReport]) -> Callable[[], None]:
        def call() -> None:
            tally.programs += run().examples

        return call

    for name in sorted(get_all_passes()):
        pipeline = checks.PIPELINES.get(name) or ",".join(
            filter(None, [checks.LOWERED_FROM.get(name), name])
        )
        count = max(1, examples // 5) if name in checks.TRITON_LEVEL else examples
        programs = checks.PROGRAMS[name]() if name in checks.PROGRAMS else None
        tally.catch(
            f"check_pass {pipeline}",
            counted(
                lambda p=pipeline, s=programs, n=count: testing.check_pass(
                    p, s, max_examples=n, require_change=False
                )
            ),
        )
    tally.catch(
        "check_pass canonicalize,cse",
        counted(
            lambda: testing.check_pass(
                "canonicalize,cse", max_examples=examples, require_change=False
            )
        ),
    )
    for pipeline in (None, "canonicalize,cse"):
        tally.catch(
            f"check_metamorphic {pipeline or ''}".strip(),
            counted(
                lambda p=pipeline: testing.check_metamorphic(p, max_examples=examples)
            ),
        )


def oracle_batch(seed: int, examples: int, tally: Tally) -> None:
    os.environ["IRC_ORACLE_EXAMPLES"] = str(examples)
    _load_campaign_profile()
    import test_jax_oracle as oracle
    from hypothesis import seed as hypothesis_seed

    checked = oracle.check

    def counted_check(*args: Any, **kwargs: Any) -> None:
        tally.programs += 1
        checked(*args, **kwargs)

    oracle.check = counted_check
    tests = [
        oracle.test_first_order_values_and_derivatives_agree_with_jax,
        oracle.test_control_flow_agrees_with_jax,
        oracle.test_second_order_derivatives_agree_with_jax,
        oracle.test_emitted_kernels_agree_with_jax,
    ]
    for number, test in enumerate(tests):
        tally.catch(
            f"{test.__name__} (hypothesis seed {seed * 10 + number})",
            hypothesis_seed(seed * 10 + number)(test),
        )


BATCHES = {"irc-opt": irc_opt_batch, "programs": programs_batch, "oracle": oracle_batch}


def run_batch(kind: str, seed: int, examples: int) -> None:
    """Run one batch in this process; its tally is the last line of stdout."""
    sys.path.insert(0, str(TESTS))
    tally = Tally()
    BATCHES[kind](seed, examples, tally)
    print(json.dumps({"programs": tally.programs, "failures": tally.failures}))


# The campaign -----------------------------------------------------------------


def _start(kind: str, seed: int, examples: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            __file__,
            kind,
            "--batch",
            str(seed),
            "--examples",
            str(examples),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def campaign(
    kind: str, minutes: float, jobs: int, first_seed: int, examples: int
) -> dict[str, Any]:
    """Batches of ``kind``, ``jobs`` at a time, started until ``minutes`` have
    passed; the running ones are waited for."""
    start = time.monotonic()
    deadline = start + 60.0 * minutes
    running: dict[int, tuple[subprocess.Popen[str], float]] = {}
    summary: dict[str, Any] = {
        "kind": kind,
        "batches": 0,
        "programs": 0,
        "failures": [],
    }
    next_seed = first_seed
    while running or time.monotonic() < deadline:
        while len(running) < jobs and time.monotonic() < deadline:
            running[next_seed] = (_start(kind, next_seed, examples), time.monotonic())
            next_seed += 1
        time.sleep(1.0)
        for seed, (process, began) in list(running.items()):
            if process.poll() is None and time.monotonic() - began < BATCH_LIMIT:
                continue
            del running[seed]
            _collect(summary, seed, process)
    summary["minutes"] = round((time.monotonic() - start) / 60.0, 1)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary["cpu_minutes"] = round((usage.ru_utime + usage.ru_stime) / 60.0, 1)
    return summary


def _collect(
    summary: dict[str, Any], seed: int, process: subprocess.Popen[str]
) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()
        summary["failures"].append(
            {"kind": "hang", "where": f"batch {seed}", "text": f"over {BATCH_LIMIT} s"}
        )
        return
    lines = (process.stdout.read() if process.stdout else "").strip().splitlines()
    try:
        tally = json.loads(lines[-1])
    except (IndexError, ValueError):
        summary["failures"].append(
            {
                "kind": "internal error",
                "where": f"batch {seed}",
                "text": f"the batch process ended with status {process.returncode} "
                "and no tally",
            }
        )
        return
    summary["batches"] += 1
    summary["programs"] += tally["programs"]
    summary["failures"].extend(tally["failures"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=0, help="the first batch's seed")
    parser.add_argument("--examples", type=int, help="examples per batch")
    parser.add_argument("--out", type=Path, help="write the summary here as JSON")
    parser.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    examples = arguments.examples or BATCH_EXAMPLES[arguments.kind]
    if arguments.batch is not None:
        run_batch(arguments.kind, arguments.batch, examples)
        return
    summary = campaign(
        arguments.kind, arguments.minutes, arguments.jobs, arguments.seed, examples
    )
    kinds = Counter(failure["kind"] for failure in summary["failures"])
    print(
        f"{TITLES[arguments.kind]}: {summary['programs']} programs in "
        f"{summary['batches']} batches, {summary['minutes']} min "
        f"({summary['cpu_minutes']} CPU min); failures: {dict(kinds) or 'none'}"
    )
    for failure in summary["failures"]:
        print(f"\n[{failure['kind']}] {failure['where']}\n{failure['text']}")
    if arguments.out:
        arguments.out.write_text(json.dumps(summary, indent=1))
    sys.exit(1 if summary["failures"] else 0)


if __name__ == "__main__":
    main()
