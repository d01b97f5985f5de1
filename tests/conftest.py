"""Test-wide settings: Hypothesis profiles.

``ci`` (chosen when the ``CI`` environment variable is set) is derandomised,
so a CI run is reproducible; ``dev`` explores new examples each run;
``extended`` (from ``irc.testing``) runs thousands of programs per pass check.
Choose one explicitly with ``IRC_HYPOTHESIS_PROFILE``.
"""

import json
import os
from typing import Any

# One process either interprets Triton kernels or compiles them, decided
# when triton is first imported (irc.runtime.triton_backend): the test
# process interprets, whatever module imports triton first; compiling for a
# GPU target happens in subprocesses that ask for it.
os.environ["TRITON_INTERPRET"] = "1"
# The on-disk compile cache is off in tests: they test the compiler (a hit
# would skip the passes whose logs and failures they check) and must not
# write to the user's cache; tests/test_compile_cache.py turns it on in
# temporary directories. Subprocesses inherit the setting.
os.environ["IRC_CACHE"] = "0"

import pytest
from hypothesis import HealthCheck, settings

from irc.testing import register_profiles

register_profiles()

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(
    os.environ.get("IRC_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
)


#: Session fixtures that must run once per test run, not once per
#: pytest-xdist worker: under ``-n`` with ``--dist loadgroup`` the tests that
#: read one share a worker. ``lit_results`` runs lit over files that share
#: lit's ``Output`` directories; ``fake_gpu_report`` takes minutes.
_RUN_ONCE_FIXTURES = ("fake_gpu_report", "lit_results")


# tryfirst: pytest-xdist reads the groups in its own hook of this name.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that read ``fake_gpu_report`` are ``slow``: the fixture compiles
    every suite program for an H100, minutes on a 2-core machine. Tests of a
    run-once fixture go to one xdist group."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        for fixture in _RUN_ONCE_FIXTURES:
            if fixture in fixtures:
                item.add_marker(pytest.mark.xdist_group(fixture))
        if "fake_gpu_report" in fixtures:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def fake_gpu_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report of ``tests/fake_gpu_suite.py``: every suite program called
    on the ``triton`` backend under the fake CUDA driver, in one subprocess
    (which compiles Triton kernels, as this process cannot)."""
    from fake_gpu_suite import __file__ as script
    from fake_gpu_suite import run_compiling

    out = tmp_path_factory.mktemp("fake_gpu") / "report.json"
    completed = run_compiling([script, str(out)], timeout=1200)
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(out.read_text())
