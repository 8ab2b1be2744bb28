"""The one Playwright session of the test run: the system Chromium (never downloaded) and one
page per test. Registered by the root conftest, so the browser tests of every folder
(tests/browser/, tests/hostile/) share it — Playwright's sync API runs one session per thread, and
a second folder's own session fixture failed at setup in a full run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

# Playwright's sync API runs an event loop in the test thread; the ORM calls the tests make
# between browser steps are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def require_browser() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("ATLAS_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{CHROMIUM} is missing and ATLAS_REQUIRE_BROWSER=1")
    pytest.skip(f"{CHROMIUM} is not installed")


@pytest.fixture(scope="session")
def browser(django_db_setup) -> Iterator[object]:
    """The worker's Chromium. Set up after the test database (so it ends before the database is
    dropped), and it closes the database connections its event loop kept apart: while Playwright
    runs, asyncio counts its loop as running in this thread, so Django's per-thread connections
    (asgiref's thread-critical ``Local``) hand the tests other connections than before, which
    the drop at the end of the run never sees. A database test run after a browser test in the
    same worker (each worker runs its share's slow tests first) left one of them open, and the
    drop failed: "being accessed by other users"."""
    require_browser()
    from django.db import connections
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            yield instance
        finally:
            instance.close()
            connections.close_all()  # the loop still runs: these are the connections it kept


@pytest.fixture
def page(browser) -> Iterator[object]:
    context = browser.new_context(accept_downloads=True, viewport={"width": 1440, "height": 1000})
    tab = context.new_page()
    yield tab
    context.close()
