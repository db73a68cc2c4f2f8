"""Turns skipped tests into failures when RD_NO_SKIP=1 (which `make test`
sets): on a machine prepared by scripts/install-deps.sh --test every tool a
test needs is there, so a skip means an install step is missing, and that
must fail the run instead of hiding.

A test that cannot be measured on a loaded machine (not a missing tool)
skips with a reason starting with UNMEASURABLE; those stay skips.

Loaded by each suite's conftest.py (`from rd_noskip import *`)."""
import os

import pytest

UNMEASURABLE = "unmeasurable:"


def _strict() -> bool:
    return os.environ.get("RD_NO_SKIP") == "1"


def _reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not (_strict() and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = _reason(report)
    if reason.removeprefix("Skipped: ").startswith(UNMEASURABLE):
        return
    report.outcome = "failed"
    report.longrepr = (f"skipped under RD_NO_SKIP=1 ({reason}): every tool a test needs "
                       "is installed by scripts/install-deps.sh --test; add the missing one there")
