"""Facets with counts, in the system Chromium at 1440×900 and 390×844: every filter
option says how many sources it would show under the other filters — the number the API answers
for it, asked by the script after the page (/facets.json) — the counts follow the view when the
script applies a filter from the keyboard (focus stays on the control), the selects fit a phone,
and axe finds nothing serious."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from tests.browser import catalog_fixtures
from tests.browser.catalog_fixtures import PHONE, no_blocking_violations, open_filters

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
inventory, sized = catalog_fixtures.inventory, catalog_fixtures.sized

COUNT = re.compile(r" \((\d[\d,]*)\)$")
OPTIONS = "s => [...document.querySelector(s).options].map(o => [o.value, o.textContent])"


def counted(page, query: str) -> None:
    """Wait until the script has put the counts of the view ``query`` into the options."""
    page.wait_for_function(
        "q => document.getElementById('controls').getAttribute('data-facets-for') === q", arg=query
    )


def option_counts(page, select: str) -> dict[str, int]:
    counts = {}
    for value, text in page.evaluate(OPTIONS, select):
        found = COUNT.search(text)
        assert found, (select, text)
        counts[value] = int(found.group(1).replace(",", ""))
    return counts


def api_count(page, base: str, query: dict[str, str]) -> int:
    return page.request.get(f"{base}/api/sources/?{urlencode(query)}").json()["count"]


def test_each_option_shows_the_count_the_api_gives(live_server, sized, inventory):
    page = sized
    page.goto(live_server.url + "/?type=RLVR")
    open_filters(page)
    counted(page, "?type=RLVR")
    turns = option_counts(page, "#filter-turns")
    quality = option_counts(page, "#filter-quality")
    types = option_counts(page, "#filter-type")
    assert turns[""] == api_count(page, live_server.url, {"type": "RLVR"}) > 0
    for value, count in turns.items():
        chosen = {"type": "RLVR", **({"turns": value} if value else {})}
        assert count == api_count(page, live_server.url, chosen), value
    for value, count in quality.items():
        chosen = {"type": "RLVR", **({"quality": value} if value else {})}
        assert count == api_count(page, live_server.url, chosen), value
    # The type options ignore the chosen type: its "All" is the whole view.
    assert types[""] == api_count(page, live_server.url, {})
    assert types["RLVR"] == turns[""]
    # Readable on a phone: each select fits the screen, its text at a readable size.
    width = page.viewport["width"]
    for select in ("#filter-type", "#filter-turns", "#filter-family", "#filter-difficulty"):
        geometry = page.evaluate(
            "s => { const e = document.querySelector(s), r = e.getBoundingClientRect();"
            " return [r.left, r.right, parseFloat(getComputedStyle(e).fontSize)]; }",
            select,
        )
        assert geometry[0] >= 0 and geometry[1] <= width, (select, geometry)
        assert geometry[2] >= 14, (select, geometry)
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    no_blocking_violations(page)


def test_counts_follow_a_filter_chosen_from_the_keyboard(live_server, sized, inventory):
    page = sized
    page.goto(live_server.url + "/")
    open_filters(page)
    counted(page, "")
    before = option_counts(page, "#filter-type")
    page.focus("#filter-turns")
    chosen = page.evaluate("document.querySelector('#filter-turns').options[1].value")
    # Arrow keys move a closed select to the next option (and apply it) in Chromium; on a phone
    # the same select opens its picker, so the choice is made as a program would.
    if page.viewport == PHONE:
        page.select_option("#filter-turns", chosen)
    else:
        page.keyboard.press("ArrowDown")
    page.wait_for_url(re.compile(rf"turns={re.escape(chosen)}"))
    counted(page, f"?turns={chosen}")
    after = option_counts(page, "#filter-type")
    assert after != before
    assert after[""] == api_count(page, live_server.url, {"turns": chosen})
    for value in ("RLVR", "Agentic"):
        query = {"turns": chosen, "type": value}
        assert after[value] == api_count(page, live_server.url, query), value
    # The select the person used keeps focus and its value; its own counts stay those of the
    # view without it.
    assert page.evaluate("document.activeElement.id") == "filter-turns"
    assert page.evaluate("document.getElementById('filter-turns').value") == chosen
    assert option_counts(page, "#filter-turns")[""] == before[""]
    assert page.script_errors == []
    no_blocking_violations(page)
