"""Hostile text on the review pages in the system Chromium: a 200 KB unbroken line and nesting to
the viewers' depth wrap inside the window instead of widening the page."""

from __future__ import annotations

from urllib.parse import quote

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH = 1280


def overflow(page) -> int:
    """How far the page reaches past the window's width, in CSS pixels."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def test_long_lines_and_deep_nesting_stay_inside_the_window(live_server, page, hostile_review):
    page.set_viewport_size({"width": WIDTH, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/reviews/{hostile_review.id}/")
    page.locator("details").evaluate_all("nodes => nodes.forEach(n => { n.open = true; })")
    # Each task's reviews and the evidence index load when opened: open what they brought too.
    lazy = page.locator("details.lazy-section")
    assert lazy.count() >= 1
    page.wait_for_function(
        "() => [...document.querySelectorAll('details.lazy-section')]"
        ".every(n => n.dataset.state === 'loaded')"
    )
    page.locator("details").evaluate_all("nodes => nodes.forEach(n => { n.open = true; })")
    assert overflow(page) <= 0
    paths = [
        "quality-reviews.json",
        "publication/deep.json",
        "publication/deep-object.json",
        "publication/brackets.txt",
        "tasks/0000/execution-000/solver/turn-000/response.json",
    ]
    for path in paths:
        url = f"{live_server.url}/reviews/{hostile_review.id}/artifacts/{quote(path)}"
        response = page.goto(url)
        assert response.status == 200, path
        page.locator("details").evaluate_all("nodes => nodes.forEach(n => { n.open = true; })")
        assert overflow(page) <= 0, path
    assert errors == []
