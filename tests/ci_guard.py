"""What the suite's end says about its own health (issue 38), without timing asserts: the tests that took longer
than :data:`SLOW_S` without the ``slow`` marker, and the skipped tests with their reasons. In CI (``CI`` set, as
``.ci/run``'s machine has it) a skip of a test that CI's machine can run fails the run: ``.ci/run`` installs every
engine and extra the tests session needs, so a skip there means a fixture lost its engine, not a missing option.

The reasons CI's machine cannot meet are listed in :data:`CANNOT_RUN_IN_CI`, each with why."""

from __future__ import annotations

import collections
import os
from typing import Any

import pytest

__all__ = ["CANNOT_RUN_IN_CI", "SLOW_S"]

#: A test that takes longer than this (setup, call and teardown together) is marked ``slow``, or it is named
#: (``TFCLOUD_TESTS_SLOW_S`` sets another bound: tests/test_ci_guard.py checks the listing with a short one).
SLOW_S = float(os.environ.get("TFCLOUD_TESTS_SLOW_S") or 20.0)

#: Skip reasons (patterns their beginnings match) that CI's sessions cannot meet, and why.
CANNOT_RUN_IN_CI = {
    "needs an environment without": "the missing-extra cases run in the base install (nox -s extras)",
    r"needs [a-z, ]+ installed; here: ": "the installed-extra cases run in the tests session; the base install "
                                        "(nox -s extras) has none of the extras",
    "root writes anywhere": "CI runs as root, for which no directory is unwritable",
    "root reads every directory": "CI runs as root (and unshare is missing there to drop that)",
    "set TFCLOUD_PRICE_SOURCES": "the pinned pricing sources are another project's data, not kept in this repository",
}


def _reason(report: Any) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def _skips(stats: dict[str, list[Any]]) -> list[tuple[str, str]]:
    return [(r.nodeid, _reason(r)) for r in stats.get("skipped", []) if getattr(r, "longrepr", None)]


def _ci_cannot_run(reason: str) -> bool:
    import re

    return any(re.match(head, reason) for head in CANNOT_RUN_IN_CI)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    stats = terminalreporter.stats
    took: dict[str, float] = collections.defaultdict(float)
    marked: dict[str, bool] = {}
    for reports in stats.values():
        for report in reports:
            if getattr(report, "when", None) in ("setup", "call", "teardown"):
                took[report.nodeid] += report.duration
                marked[report.nodeid] = "slow" in report.keywords
    unmarked = sorted(((s, n) for n, s in took.items() if s > SLOW_S and not marked.get(n)), reverse=True)
    write = terminalreporter.write_line
    terminalreporter.section(f"tests over {SLOW_S:g} s not marked slow: {len(unmarked)}")
    for seconds, nodeid in unmarked:
        write(f"{seconds:7.1f}s  {nodeid}")
    skips = _skips(stats)
    terminalreporter.section(f"skipped: {len(skips)}")
    for reason, count in collections.Counter(reason for _, reason in skips).most_common():
        write(f"{count:5d}  {reason}")
    if os.environ.get("CI"):
        runnable = [(n, r) for n, r in skips if not _ci_cannot_run(r)]
        if runnable:
            terminalreporter.section("skips CI's machine can run (a lost engine?): the run fails", red=True)
            for nodeid, reason in runnable:
                write(f"{nodeid}: {reason}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not os.environ.get("CI") or exitstatus not in (0, pytest.ExitCode.OK):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    if any(not _ci_cannot_run(reason) for _, reason in _skips(reporter.stats)):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
