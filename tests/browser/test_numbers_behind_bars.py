"""The numbers behind the bars are visible, in the system Chromium at 1440×900 and
390×844: solved/verified beside every bar of the catalog, the interval where a row is opened
(source page, drawer, review page), bars with real widths on a phone's review page, one name per
follow-up everywhere with its Historical chip, and the measurement states explained where they
are offered."""

from __future__ import annotations

import pytest

from tests.browser import catalog_fixtures
from tests.browser.catalog_fixtures import PHONE, no_blocking_violations, open_filters
from tests.difficulty.conftest import ATLAS_ID, publish_example

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
sized = catalog_fixtures.sized

# The example report: Small 1/3, Large 2/3, Hosted 3/3, then its two complete follow-ups.
SCORES = ["33% · 1/3", "67% · 2/3", "100% · 3/3", "100% · 3/3", "67% · 2/3"]
FOLLOW_UPS = [
    "Large follow-up · Qwen 122B · max_tokens 16384 → 32768",
    "Hosted follow-up · GLM 5.3 · checkpoint example-alternate-checkpoint",
]
LABELS = "nodes => nodes.map(n => n.firstChild.textContent.trim())"


@pytest.fixture
def measured(live_server, tmp_path):
    return publish_example(tmp_path=tmp_path)


def bar_geometry(page, chart: str) -> list[dict]:
    return page.locator(f"{chart} .difficulty-bar-row").evaluate_all(
        """rows => rows.map(row => {
            const bar = row.querySelector('.difficulty-bar');
            const track = row.querySelector('.difficulty-bar-track');
            const score = row.querySelector('.difficulty-bar-score');
            return {
                bar: bar.getBoundingClientRect().width,
                track: track.getBoundingClientRect().width,
                style: parseFloat(bar.style.width),
                scoreRight: score.getBoundingClientRect().right,
                scoreText: score.textContent,
            };
        })"""
    )


def test_the_review_page_bars_have_widths_and_fit_a_phone(live_server, sized, measured):
    page = sized
    page.goto(f"{live_server.url}/reviews/{measured.id}/#difficulty")
    chart = "details#difficulty > .difficulty-chart"
    rows = bar_geometry(page, chart)
    assert [row["scoreText"] for row in rows] == SCORES
    panel_right = page.evaluate(
        "document.querySelector('details#difficulty').getBoundingClientRect().right"
    )
    for row in rows:
        # Each bar is as long as its share of its track (the 2/3 bar two thirds of it), and the
        # track is long enough to compare them at 390 px.
        assert row["track"] >= 120, row
        assert abs(row["bar"] - row["track"] * row["style"] / 100) <= 3, row
        assert row["scoreRight"] <= panel_right, row  # the scores stay inside the panel
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    # The interval, shown as text where the comparison is opened.
    details = page.locator(f"{chart} .difficulty-bar-detail")
    assert details.count() == 5 and details.first.is_visible()
    assert details.first.inner_text() == "95% interval 6.2–79.2% · 0 unverified"
    labels = page.locator(f"{chart} .difficulty-bar-label").evaluate_all(LABELS)
    assert labels[3:] == FOLLOW_UPS
    chips = page.locator(f"{chart} .difficulty-chip-arm")
    assert chips.count() == 2 and chips.first.is_visible()
    assert chips.all_inner_texts() == ["Historical", "Historical"]
    # The follow-up sections carry the same names.
    titles = page.locator("details.difficulty-followup > summary").all_inner_texts()
    assert titles == [
        f"Additional settings comparison · Complete · {FOLLOW_UPS[0]}",
        f"Hosted comparison · Complete · {FOLLOW_UPS[1]}",
    ]
    no_blocking_violations(page)


def test_the_catalog_shows_counts_and_the_opened_row_its_intervals(live_server, sized, measured):
    page = sized
    page.goto(live_server.url + "/")
    cell = page.locator(f'tr[data-source-id="{ATLAS_ID}"] .difficulty-chart')
    scores = cell.locator(".difficulty-bar-score")
    assert scores.all_inner_texts() == SCORES
    assert all(scores.nth(i).is_visible() for i in range(5))
    labels = cell.locator(".difficulty-bar-label").evaluate_all(LABELS)
    assert labels == ["Qwen 30B", "Qwen 122B", "GLM 5.3", *FOLLOW_UPS]
    assert cell.locator(".difficulty-chip-arm").all_inner_texts() == ["Historical", "Historical"]
    # Every bar is drawn in the cell, at both sizes.
    for row in bar_geometry(page, f'tr[data-source-id="{ATLAS_ID}"] .difficulty-chart'):
        assert row["track"] >= 30 and abs(row["bar"] - row["track"] * row["style"] / 100) <= 3
    # The drawer (the source page's body) names the follow-ups alike and adds the intervals.
    page.get_by_role("link", name="Details for example/difficulty-example").click()
    drawer = page.locator("#details-drawer .difficulty-chart.full")
    drawer.wait_for()
    assert drawer.locator(".difficulty-bar-label").evaluate_all(LABELS)[3:] == FOLLOW_UPS
    assert drawer.locator(".difficulty-bar-detail").first.inner_text().startswith("95% interval")
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    no_blocking_violations(page)
    page.keyboard.press("Escape")
    # The source page itself.
    page.goto(f"{live_server.url}/sources/{ATLAS_ID}/")
    chart = page.locator(".source-difficulty .difficulty-chart.full")
    assert chart.locator(".difficulty-bar-score").all_inner_texts() == SCORES
    assert chart.locator(".difficulty-bar-detail").nth(1).inner_text() == (
        "95% interval 20.8–93.9% · 0 unverified"
    )
    no_blocking_violations(page)


def test_measurement_states_are_explained_where_they_are_offered(live_server, sized, measured):
    page = sized
    page.goto(live_server.url + "/")
    if page.viewport == PHONE:
        assert not page.locator("#filter-difficulty-help").is_visible()
        open_filters(page)
    help_text = page.locator("#filter-difficulty-help")
    assert help_text.is_visible()
    assert "Protocol mismatch" in help_text.inner_text()
    assert page.locator("#filter-difficulty").get_attribute("aria-describedby") == (
        "filter-difficulty-help"
    )
    legend = page.locator(".page-help .difficulty-legend")
    legend.locator("summary").click()
    states = legend.locator(".difficulty-states dt").all_inner_texts()
    assert states == [
        "Current", "Historical", "Protocol mismatch", "Not measured", "Needs re-review",
        "Withheld · verifier issues",
    ]  # fmt: skip
    assert legend.locator(".difficulty-states").is_visible()
    no_blocking_violations(page)
