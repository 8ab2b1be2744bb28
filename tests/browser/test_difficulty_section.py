"""Lazy loading of the review page's difficulty section in the system Chromium."""

from __future__ import annotations

import pytest

from tests.difficulty.conftest import publish_example

pytestmark = pytest.mark.browser


@pytest.fixture
def page_url(live_server, tmp_path):
    review = publish_example(tmp_path=tmp_path)
    return f"{live_server.url}/reviews/{review.id}/#difficulty"


def test_attempts_and_traces_load_when_opened(page_url, page):
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(page_url)
    section = page.locator("details#difficulty")
    assert section.get_attribute("open") is not None
    run = section.locator("details.difficulty-run").first
    # A run's settings and attempts are not on the page until it opens: they load from the server.
    assert section.locator("details.difficulty-run-settings").count() == 0
    run.locator(":scope > summary").click()
    settings = run.locator("details.difficulty-run-settings")
    settings.locator(":scope > summary").click()
    settings.get_by_text("Total context window").wait_for()
    assert settings.get_by_text("Loading recorded run settings…").count() == 0
    attempts = run.locator("details.difficulty-attempts")
    assert attempts.locator(".difficulty-attempt").count() == 0
    attempts.locator(":scope > summary").click()
    attempt = attempts.locator("details.difficulty-attempt").first
    attempt.wait_for()
    assert "Task task-1" in attempt.locator(":scope > summary").inner_text()
    attempt.locator(":scope > summary").click()
    viewer = attempt.locator("details.artifact-viewer").first
    viewer.locator(":scope > summary").click()
    content = viewer.locator(".artifact-viewer-content")
    content.get_by_text("Example task task-1").first.wait_for()
    history = page.locator("details.difficulty-history")
    history.locator(":scope > summary").click()
    entry = history.locator("details.difficulty-history-entry").first
    entry.locator(":scope > summary").click()
    entry.get_by_text("Qwen/Qwen3.5-9B").wait_for()
    assert errors == []
