"""ONNX's backend node tests on irc: the pass count per covered operator,
and over the whole suite (``--every-operator``).

Every single-node test that ships with the ``onnx`` package for an operator
irc imports (``irc.onnx.converters.CONVERTERS``) is imported, compiled and
run, and its outputs are compared with the expected ones
(``irc.onnx.conformance``). Prints a Markdown table (the one in
docs/onnx.md) and, with ``--failures``, why each test that did not pass.

    python benchmarks/onnx_conformance.py                     # reference backend
    python benchmarks/onnx_conformance.py --backend interpret # Triton interpreter
    python benchmarks/onnx_conformance.py --only Gemm Softmax --failures
    python benchmarks/onnx_conformance.py --every-operator     # the whole suite
"""

from __future__ import annotations

import argparse

from irc.onnx.conformance import node_tests, run_node_test, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="reference")
    parser.add_argument("--only", nargs="*", help="operators to run (default: all)")
    parser.add_argument("--failures", action="store_true", help="list the failures")
    parser.add_argument(
        "--every-operator",
        action="store_true",
        help="also run the tests of the operators irc does not cover (refused)",
    )
    options = parser.parse_args()
    tests = node_tests(options.only, every_operator=options.every_operator)
    outcomes = [run_node_test(test, options.backend) for test in tests]
    print(table(outcomes))
    if options.failures:
        for outcome in outcomes:
            if outcome.outcome != "passed":
                print(f"{outcome.test.name}: {outcome.outcome}: {outcome.detail}")


if __name__ == "__main__":
    main()
