"""The end of a test run that used the browser and then the database: its test database is
dropped without "being accessed by other users" (PostgreSQL refuses to drop a database another
session is connected to; SQLite has no such check)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.browser.session import require_browser

ROOT = Path(__file__).resolve().parents[2]
CASE = Path(__file__).with_name("case_database_after_browser.py")

pytestmark = [pytest.mark.postgres_only, pytest.mark.browser, pytest.mark.slow]


def own_database_url() -> str:
    """The run's database URL naming a database of the case's own, so that its test database
    (``test_<name>``) is none of this run's."""
    url = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(url._replace(path=f"{url.path.rstrip('/')}_browser_teardown"))


def test_a_run_that_used_the_database_after_the_browser_drops_it_cleanly():
    require_browser()  # the case's browser test needs it, as every browser test does
    unset = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST")
    env = {key: value for key, value in os.environ.items() if key not in unset}
    env["DATABASE_URL"] = own_database_url()
    finished = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
         str(CASE.relative_to(ROOT))],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    output = finished.stdout + finished.stderr
    assert finished.returncode == 0, output[-3000:]
    assert "3 passed" in output
    assert "Error when trying to teardown test databases" not in output, output[-3000:]
