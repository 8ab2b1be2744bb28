"""What people notice first, in the system Chromium at 1440×900 and 390×844: the loading state,
focus kept on the control used, errors that clear, pagers and the page size, notes for ignored
parameters, a table that fits (mobile cards below 768 px, tap targets, bars that never vanish),
the details drawer and the source page — and axe-core finds no serious or critical violation on
the catalog, a source page, a review page or the admin lists."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User

from atlas.services.display import refresh_display_state
from tests.browser import catalog_fixtures, review_fixtures
from tests.browser.axe import describe, violations
from tests.browser.catalog_fixtures import (
    DESKTOP,
    MEASURED,
    PHONE,
    matching,
    no_blocking_violations,
    open_filters,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

inventory, sized = catalog_fixtures.inventory, catalog_fixtures.sized
published_review = review_fixtures.published_review


def hold_first_region_request(page) -> list:
    """Hold the next region request of the catalog until the test lets it go."""
    held: list = []

    def hold(route):
        if route.request.headers.get("x-atlas-region") == "1" and not held:
            held.append(route)
        else:
            route.continue_()

    page.route(re.compile(r".*/\?.*|.*/$"), hold)
    return held


def wait_until_loaded(page) -> None:
    page.wait_for_function(
        "() => document.getElementById('results-region').getAttribute('aria-busy') === 'false'"
    )


# --- loading, focus, errors, paging ------------------------------------------------------------


@pytest.mark.parametrize("size", [DESKTOP], ids=["1440x900"])
def test_the_table_says_it_is_loading_and_the_control_keeps_focus(
    live_server, browser, inventory, size
):
    context = browser.new_context(viewport=size)
    page = context.new_page()
    page.goto(live_server.url + "/")
    held = hold_first_region_request(page)
    page.locator("#filter-type").focus()
    page.select_option("#filter-type", "Agentic")
    page.wait_for_function(
        "() => document.getElementById('results-region').getAttribute('aria-busy') === 'true'"
    )
    assert "loading" in page.locator("#results-region").get_attribute("class")
    # Dimmed rows: the opacity eases in over a short transition, so wait for it to move.
    page.wait_for_function(
        "() => parseFloat(getComputedStyle("
        "document.querySelector('#results-region tbody')).opacity) < 1",
    )
    assert page.evaluate("document.activeElement.id") == "filter-type"
    assert len(held) == 1
    held[0].continue_()
    page.wait_for_function(
        "() => document.getElementById('results-region').getAttribute('aria-busy') === 'false'"
    )
    assert "loading" not in (page.locator("#results-region").get_attribute("class") or "")
    assert page.evaluate("document.activeElement.id") == "filter-type"
    assert matching(page) == inventory.filter(type="Agentic").exclude(status="Excluded").count()

    # A sort header used from the keyboard keeps focus after the table is replaced.
    page.locator('a.sort-link[data-sort="rows"]').focus()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"sort=rows"))
    page.wait_for_function(
        "() => document.getElementById('results-region').getAttribute('aria-busy') === 'false'"
    )
    assert page.evaluate("document.activeElement.getAttribute('data-sort')") == "rows"
    context.close()


def test_an_error_banner_clears_on_the_next_success(live_server, page, inventory):
    page.goto(live_server.url + "/")
    default = page.locator("#sync-banner").inner_text()
    failing = re.compile(r".*/\?type=Agentic.*")
    page.route(failing, lambda route: route.fulfill(status=503, body="down"))
    page.select_option("#filter-type", "Agentic")
    page.wait_for_function(
        "() => document.getElementById('sync-banner').textContent"
        ".startsWith('Catalog read failed (503)')"
    )
    assert "warning" in page.locator("#sync-banner").get_attribute("class")
    assert page.locator("#results-region").get_attribute("aria-busy") == "false"
    page.unroute(failing)
    page.select_option("#filter-type", "RLVR")
    page.wait_for_function(
        "text => document.getElementById('sync-banner').textContent === text", arg=default
    )
    assert "warning" not in page.locator("#sync-banner").get_attribute("class")


def test_pagers_above_and_below_page_size_and_back_to_the_table_top(live_server, sized, inventory):
    page = sized
    page.goto(live_server.url + "/?page_size=25")
    assert page.locator("#pager-top").is_visible() and page.locator("#pager-bottom").is_visible()
    assert page.locator("tbody tr[data-source-id]").count() == 25
    bottom_next = page.locator('#pager-bottom a[data-page="next"]')
    bottom_next.scroll_into_view_if_needed()
    bottom_next.click()
    page.wait_for_url(re.compile(r"page=2&page_size=25$"))
    page.wait_for_function(
        "() => document.getElementById('results-region').getAttribute('aria-busy') === 'false'"
    )
    assert "Page 2 of" in page.locator("#pager-top").inner_text()
    # The view returned to the top of the table, and the pager used still has focus.
    top = page.evaluate("document.getElementById('pager-top').getBoundingClientRect().top")
    assert 0 <= top < page.viewport["height"]
    assert (
        page.evaluate(
            "document.activeElement.closest('.pager') "
            "&& document.activeElement.closest('.pager').id"
        )
        == "pager-bottom"
    )

    open_filters(page)
    page.select_option("#page-size", "50")
    page.wait_for_url(re.compile(r"/\?page_size=50$"))
    page.wait_for_function(
        "() => document.querySelectorAll('tbody tr[data-source-id]').length === 50"
    )


def test_an_invalid_or_clamped_parameter_is_noted(live_server, sized, inventory):
    page = sized
    page.goto(live_server.url + "/?type=bogus&page=99&page_size=7")
    note = page.locator("#param-notes")
    assert note.is_visible()
    text = note.inner_text()
    assert "“type=bogus” is not a valid value and was ignored." in text
    assert "“page_size=7” is not from 25 to 500" in text
    assert "There is no page 99" in text


# --- a table that fits ------------------------------------------------------------------------


def test_the_table_fits_with_sticky_header_and_first_column(
    live_server, page, inventory, screenshot
):
    page.set_viewport_size(DESKTOP)
    page.goto(live_server.url + "/")
    wrap = page.locator("#table-wrap")
    sizes = wrap.evaluate("node => [node.scrollWidth, node.clientWidth]")
    assert sizes[0] <= sizes[1] + 1, sizes  # no horizontal scrolling at 1440 px
    header = page.locator("thead th").first
    assert header.evaluate("node => getComputedStyle(node).position") == "sticky"
    assert (
        page.locator("tbody th").first.evaluate("node => getComputedStyle(node).position")
        == "sticky"
    )
    first_row = page.locator("tbody tr").first
    before = first_row.bounding_box()["y"]
    wrap.evaluate("node => node.scrollBy(0, 600)")
    assert first_row.bounding_box()["y"] < before - 500  # the rows scrolled…
    wrap_top = wrap.bounding_box()["y"]
    assert abs(header.bounding_box()["y"] - wrap_top) < 2  # …the header stuck to the top
    screenshot(page, "catalog-1440")
    # Benchmark is a mark, not True/False; the details icon is drawn by CSS from a plain "i".
    page.goto(live_server.url + "/?q=gsm8k")
    row = page.locator(f'tr[data-source-id="{MEASURED}"]')
    assert "True" not in row.inner_text() and "False" not in row.inner_text()
    assert row.locator("a.info").inner_text() == "i"


def test_mobile_cards_below_768px(live_server, page, inventory, screenshot):
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + "/?q=gsm8k")
    row = page.locator(f'tr[data-source-id="{MEASURED}"]')
    assert row.evaluate("node => getComputedStyle(node).display") == "grid"
    label = row.locator("td").nth(8).evaluate("node => getComputedStyle(node, '::before').content")
    assert label == '"Quality"'
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths  # nothing wider than the phone
    screenshot(page, "catalog-390")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1440x900", "390x844"])
def test_tap_targets_are_at_least_24px(live_server, browser, inventory, size):
    context = browser.new_context(viewport=size)
    page = context.new_page()
    page.goto(live_server.url + "/?q=gsm8k")
    selectors = ["a.info", "a.sort-link", ".pager a", ".tabs a", "a.chip", "tbody th a"]
    small = []
    for selector in selectors:
        for box in page.locator(selector).evaluate_all(
            "nodes => nodes.filter(n => n.offsetParent).map(n => "
            "{ const r = n.getBoundingClientRect(); return [r.width, r.height, n.textContent]; })"
        ):
            if box[0] < 24 or box[1] < 24:
                small.append((selector, box))
    assert small == []
    context.close()


def test_difficulty_bars_never_collapse_and_have_a_legend(live_server, sized, inventory):
    page = sized
    page.goto(live_server.url + "/?q=gsm8k")
    bars = page.locator(f'tr[data-source-id="{MEASURED}"] .difficulty-bar')
    assert bars.count() == 2
    widths = bars.evaluate_all("nodes => nodes.map(n => n.getBoundingClientRect().width)")
    assert all(width >= 2 for width in widths), widths  # a 0/4 bar still shows a sliver
    tracks = page.locator(".difficulty-bar-track").evaluate_all(
        "nodes => nodes.map(n => n.getBoundingClientRect().width)"
    )
    assert all(width >= 30 for width in tracks), tracks
    legend = page.locator(".difficulty-legend")
    legend.locator("summary").click()
    assert "Large · Qwen 122B" in legend.inner_text() and "Historical" in legend.inner_text()
    assert "Follow-up" in legend.inner_text()
    chip = page.locator(f'tr[data-source-id="{MEASURED}"] a.chip')
    assert chip.locator(".chip-mark").inner_text() == "Example"


# --- details drawer and source page ------------------------------------------------------------


def test_the_drawer_loads_details_and_has_a_shareable_url(live_server, sized, inventory):
    page = sized
    page.goto(live_server.url + "/?q=gsm8k")
    source = inventory.get(pk=MEASURED)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.get_by_role("link", name=f"Details for {source.display_name}").click()
    page.locator("#drawer-title").wait_for()
    assert any("/sources/MarinSkyRL:gsm8k/" in url for url in requests)
    assert page.url.endswith("?q=gsm8k&source=MarinSkyRL%3Agsm8k")
    drawer = page.locator("#details-drawer")
    assert "Pinned revisions" in drawer.inner_text() and "Catalog history" in drawer.inner_text()
    assert page.locator("#drawer-page").get_attribute("href") == "/sources/MarinSkyRL:gsm8k/"
    no_blocking_violations(page)
    page.keyboard.press("Escape")
    drawer.wait_for(state="hidden")
    # The dialog's close event, which restores the URL, is dispatched after the dialog hides.
    page.wait_for_url(lambda url: url.endswith("/?q=gsm8k"))
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == (
        f"Details for {source.display_name}"
    )
    # The shared URL opens the drawer again.
    page.goto(live_server.url + "/?q=gsm8k&source=MarinSkyRL%3Agsm8k")
    page.locator("#drawer-title").wait_for()
    assert page.locator("#drawer-title").inner_text() == source.display_name
    assert sized.script_errors == []


def test_the_source_page(live_server, sized, inventory, screenshot):
    page = sized
    page.goto(live_server.url + "/sources/Task%20Trove:laion__codeforces-v3/")
    assert page.locator("h1").inner_text() == "laion/codeforces-v3"
    assert page.get_by_role("heading", name="Pinned revisions").is_visible()
    assert page.get_by_role("heading", name="Catalog history").is_visible()
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    no_blocking_violations(page)
    screenshot(page, f"source-page-{page.viewport['width']}")


# --- accessibility ------------------------------------------------------------------------------


def test_no_serious_violations_on_the_catalog(live_server, sized, inventory):
    page = sized
    page.goto(live_server.url + "/")
    no_blocking_violations(page)
    page.goto(live_server.url + "/?q=gsm8k&sort=-difficulty&show_bad=1")
    no_blocking_violations(page)


def test_no_serious_violations_on_a_review_page(live_server, sized, published_review):
    page = sized
    page.goto(f"{live_server.url}/reviews/{published_review.id}/")
    page.locator("h1").wait_for()
    no_blocking_violations(page)


def test_no_serious_violations_on_the_admin_lists(live_server, sized, inventory, published_review):
    page = sized
    User.objects.create_superuser("root", password="admin-pass-1")
    refresh_display_state()
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "admin-pass-1")
    page.get_by_role("button", name="Log in").click()
    for path in [
        "/admin/", "/admin/atlas/source/", "/admin/atlas/source/?open_defect=yes",
        "/admin/reviews/verifierissue/", "/admin/reviews/review/", "/admin/atlas/refreshrun/",
        "/admin/atlas/sourcechange/", "/admin/reviews/review/queue/",
        "/admin/reviews/verifierissue/add/",
    ]:  # fmt: skip
        page.goto(live_server.url + path)
        found = violations(page)
        assert found == [], f"{path}: {describe(found)}"
