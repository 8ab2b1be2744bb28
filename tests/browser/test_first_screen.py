"""The first screen shows data, in the system Chromium at 1440×900 and 390×844: the
search box and the first row are on it, a skip link reaches the first row in two Tab presses,
the filters fold into a disclosure on a phone only, the field guide is collapsed, and the
document title names the view (also after the script applies a filter)."""

from __future__ import annotations

import re

import pytest

from tests.browser import catalog_fixtures
from tests.browser.catalog_fixtures import PHONE, no_blocking_violations, open_filters

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
inventory, sized = catalog_fixtures.inventory, catalog_fixtures.sized

IN_FIRST_ROW = (
    "() => !!(document.activeElement && document.activeElement.closest("
    "'#catalog-rows tr[data-source-id]:first-child'))"
)


def box(page, selector: str) -> dict:
    """The element's box in page coordinates (not the viewport's)."""
    return page.evaluate(
        "s => { const r = document.querySelector(s).getBoundingClientRect();"
        " return {top: r.top + scrollY, bottom: r.bottom + scrollY, width: r.width}; }",
        selector,
    )


def test_search_and_the_first_row_are_on_the_first_screen(live_server, sized, inventory):
    page = sized
    page.goto(live_server.url + "/")
    height = page.viewport["height"]
    search = box(page, "#search")
    first = box(page, "#catalog-rows tr[data-source-id]")
    assert search["bottom"] <= height, search
    # The whole first row (a card on a phone) is visible without scrolling, with room to spare
    # on a desktop for several more rows.
    assert first["bottom"] <= height, first
    if page.viewport == PHONE:
        assert first["top"] < 600, first
    else:
        assert first["top"] < 520, first
        assert box(page, "#catalog-rows tr[data-source-id]:nth-child(5)")["bottom"] <= height
    # The metrics are there, compact: all three on the first screen, above the search box.
    for metric in ("#metric-sources", "#metric-tasks", "#metric-status"):
        assert box(page, metric)["bottom"] < search["top"], metric
    # The field guide starts collapsed, its definitions one click away.
    guide = page.locator("#field-guide")
    assert guide.evaluate("node => node.open") is False
    assert not page.locator(".field-guide-terms").is_visible()
    guide.locator("summary").click()
    assert page.locator(".field-guide-terms").is_visible()
    assert "Current difficulty models" in page.locator(".field-guide-intro").inner_text()
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    no_blocking_violations(page)


def test_a_skip_link_reaches_the_first_row_in_two_tab_presses(live_server, sized, inventory):
    page = sized
    page.goto(live_server.url + "/")
    page.keyboard.press("Tab")
    skip = page.evaluate("[document.activeElement.textContent, document.activeElement.href]")
    assert skip[0] == "Skip to results" and skip[1].endswith("#catalog-rows")
    # The skip link is hidden until focused, then visible.
    assert page.locator(".skip-link").first.is_visible()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate(IN_FIRST_ROW)
    assert page.evaluate("document.activeElement.closest('th') !== null")  # the source's link


def test_the_filters_fold_into_a_disclosure_on_a_phone_only(live_server, sized, inventory):
    page = sized
    page.goto(live_server.url + "/?type=RLVR&quality=good")
    summary = page.locator("#filter-summary")
    if page.viewport == PHONE:
        assert summary.is_visible()
        assert summary.inner_text() == "Filters · 2 active"
        assert not page.locator("#filter-type").is_visible()
        open_filters(page)
        assert page.locator("#filter-type").is_visible()
        # Open, the fields fit the phone.
        widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], widths
    else:
        assert not summary.is_visible()
        assert page.locator("#filter-type").is_visible()
        assert box(page, "#filter-difficulty")["bottom"] < page.viewport["height"] / 2
    page.select_option("#filter-quality", "")
    page.wait_for_url(re.compile(r"/\?type=RLVR$"))
    assert summary.text_content() == "Filters · 1 active"
    no_blocking_violations(page)


def test_the_title_names_the_view_and_follows_it(live_server, sized, inventory):
    page = sized
    page.goto(live_server.url + "/?q=math&type=RLVR&quality=good&show_excluded=1")
    assert page.title() == (
        "Search: “math” · Type: RLVR · Quality: Good · Excluded shown · RL Data Atlas"
    )
    open_filters(page)
    page.select_option("#filter-type", "")
    page.wait_for_function("() => document.title.startsWith('Search: “math” · Quality: Good')")
    assert page.title() == "Search: “math” · Quality: Good · Excluded shown · RL Data Atlas"
    page.goto(live_server.url + "/?page=2&page_size=25&origin=MarinSkyRL")
    assert page.title() == "MarinSkyRL · Page 2 · RL Data Atlas"
    page.go_back()
    page.wait_for_function("() => document.title.startsWith('Search')")
    page.goto(live_server.url + "/")
    assert page.title() == "RL Data Atlas"
