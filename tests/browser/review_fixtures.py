"""Browser fixtures of the review-page tests: the system Chromium through Playwright, and a
published review to open in it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reviews import factories as f

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SOURCE_ID = "MarinSkyRL:example"


@pytest.fixture(scope="module")
def review_browser(request) -> Iterator:
    if not CHROMIUM.exists():
        if os.environ.get("ATLAS_REQUIRE_BROWSER") == "1":
            pytest.fail("ATLAS_REQUIRE_BROWSER=1 but /usr/bin/chromium is not installed")
        pytest.skip("/usr/bin/chromium is not installed")
    # Only one Playwright sync session can run in a thread: reuse the shared session browser when
    # tests/browser/conftest.py provides one, else start our own.
    try:
        yield request.getfixturevalue("browser")
        return
    except pytest.FixtureLookupError:
        pass
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the ORM calls of the test setup
    # are still synchronous, so Django's async guard must stand aside while the browser runs.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "1"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def review_tab(review_browser) -> Iterator:
    context = review_browser.new_context(
        accept_downloads=True, viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.script_errors = errors
    yield page
    context.close()


@pytest.fixture
def published_review(live_server):
    """A current native review with a supplemental defect collection and an open issue."""
    f.make_source(SOURCE_ID)
    collection, files = f.native_collection()
    review = f.publish(collection, files, make_current=True)
    defect, defect_files = f.supplemental_collection()
    f.record_issue(source_id=SOURCE_ID, confirming=f.publish(defect, defect_files))
    return review
