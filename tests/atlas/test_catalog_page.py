"""The catalog page `/`: chrome, metrics, tabs, controls, table, paging."""

import datetime as dt
import re
from pathlib import Path

import pytest
from django.utils import timezone

from atlas.models import RefreshRun
from tests.atlas.test_catalog_helpers import (
    make_curator,
    make_open_issue,
    make_row,
    seed,
    set_state,
)

pytestmark = pytest.mark.django_db


def page(client, query: str = "") -> str:
    response = client.get("/" + query)
    assert response.status_code == 200
    return response.content.decode()


def text_of(html: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}"[^>]*>(.*?)</(?:p|span|div)>', html, re.S)
    assert match, element_id
    return re.sub(r"<[^>]+>", "", match.group(1)).strip()


@pytest.fixture
def catalog(write_catalog):
    rows = [
        make_row("MarinSkyRL:a", display_name="Alpha", task_count=1000),
        make_row("MarinSkyRL:gen", display_name="Gen", tags=["rlvr", "generator"], task_count=None),
        make_row("MarinSkyRL:unknown", display_name="Unknown count", task_count=None),
        make_row("Task Trove:x", display_name="Xray", tags=["agentic"], task_count=20),
        make_row("Task Trove:old", display_name="Old", tags=["excluded"], task_count=300),
        make_row("Task Trove:bad", display_name="Bad one", tags=["agentic"], task_count=4000),
    ]  # fmt: skip
    seed(write_catalog, rows)
    set_state("Task Trove:bad", effective_quality="bad")


def test_chrome_strings_and_public_view(client, catalog):
    html = page(client)
    assert "<title>RL Data Atlas</title>" in html
    for text in [
        "open athena / research tools", "RL DATA ATLAS • LIVE CATALOG",
        "POST-TRAINING / DATA INVENTORY",
        "RL Data Atlas.", "Find the right tasks for your next run.", "Field guide · definitions",
        "Counts have context.", "Know what is inferred.", "OPEN ATHENA / RL DATA ATLAS",
        "Current difficulty models: Small = Qwen3-Coder-30B-A3B-Instruct",
        'href="/admin/login/?next=%2F">Curator sign in', 'href="/api/docs/">API ↗',
        "Showing the latest saved catalog. The last catalog sync is shown above.",
        'placeholder="Search sources, families, environments…"', 'aria-label="Search sources"',
        "Click column titles to sort · Open a source for provenance",
    ]:  # fmt: skip
        assert text in html, text
    assert 'id="refresh"' not in html and 'method="post"' not in html
    assert text_of(html, "metric-status") == "Saved snapshot"
    assert '<script src="/static/atlas/catalog.js"' in html and "<script>" not in html


def test_the_title_names_the_view_and_the_filter_summary_counts_active_filters(client, catalog):
    html = page(client, "?q=al&origin=MarinSkyRL&type=RLVR&benchmark=false&show_bad=1&page=1")
    assert (
        "<title>Search: “al” · MarinSkyRL · Type: RLVR · Benchmark: Not designated · "
        "Bad quality shown · RL Data Atlas</title>"
    ) in html
    assert '<summary id="filter-summary">Filters · 3 active</summary>' in html
    # Quality "Bad" implies the bad rows: the title does not say it twice.
    html = page(client, "?quality=bad")
    assert "<title>Quality: Bad · RL Data Atlas</title>" in html
    # An ignored value names nothing; the page number does, past the first.
    html = page(client, "?type=bogus&page=2&page_size=25")
    assert "<title>RL Data Atlas</title>" in html  # one page only: page 2 shows page 1
    assert '<summary id="filter-summary">Filters</summary>' in html
    # The region answer the script swaps in carries the title too.
    region = client.get("/?type=agentic", HTTP_X_ATLAS_REGION="1").content.decode()
    assert region.startswith("<title>Type: Agentic · RL Data Atlas</title>")
    # The skip link comes first and targets the rows.
    skip = r'<body[^>]*>\s*<a class="skip-link" href="#catalog-rows">Skip to results</a>'
    assert re.search(skip, html)
    assert '<tbody id="catalog-rows" tabindex="-1">' in html


def test_metrics_follow_the_view_and_count_known_tasks_and_unknown_datasets_only(client, catalog):
    html = page(client)
    # The cards describe the rows of the view (every page): 4 shown, bad and excluded hidden.
    assert text_of(html, "metric-sources") == "4"
    assert text_of(html, "sources-context") == "In this view · 5 available across all catalogs"
    assert text_of(html, "metric-tasks") == "1,020"
    assert text_of(html, "task-count-context") == (
        "4 visible entries · 1 unknown dataset count · may overlap"
    )
    html = page(client, "?show_excluded=1&show_bad=1")
    assert text_of(html, "metric-tasks") == "5,320"
    assert text_of(html, "metric-sources") == "6"
    html = page(client, "?q=alpha")
    assert text_of(html, "metric-sources") == "1"
    assert text_of(html, "task-count-context") == (
        "1 visible entry · 0 unknown dataset counts · may overlap"
    )


def test_a_total_of_only_unknown_counts_says_unknown(client, catalog):
    html = page(client, "?q=unknown+count")
    assert text_of(html, "metric-tasks") == "Unknown"
    assert text_of(html, "metric-sources") == "1"
    assert text_of(page(client, "?q=nothing-matches"), "metric-tasks") == "0"


def test_footer_line_and_tab_badges_follow_the_filters(client, catalog):
    html = page(client)
    assert text_of(html, "result-count") == (
        "4 of 6 entries · 1 excluded sources hidden · bad quality hidden"
    )
    badges = re.findall(
        r'class="tab[^"]*" href="([^"]*)"[^>]*>([^<]+) <span class="badge">(\d+)', html
    )
    # Each badge counts the rows its tab would show: bad and excluded are hidden here.
    assert badges == [
        ("/", "All catalogs", "4"),
        ("/?origin=MarinSkyRL", "MarinSkyRL", "3"),
        ("/?origin=Task+Trove", "Task Trove", "1"),
    ]
    html = page(client, "?show_excluded=1&show_bad=1&origin=MarinSkyRL")
    badges = re.findall(r'([^>]+) <span class="badge">(\d+)', html)
    assert [count for _, count in badges] == ["6", "3", "3"]
    assert text_of(html, "metric-sources") == "3"  # the selected tab's rows
    html = page(client, "?show_excluded=1&origin=Task+Trove&q=zzz&page=3")
    badges = re.findall(r'([^>]+) <span class="badge">(\d+)', html)
    assert [count for _, count in badges] == ["0", "0", "0"]
    assert 'href="/?origin=Task+Trove&amp;q=zzz' not in html  # canonical parameter order
    current_tab = (
        '<a class="tab tab-current" href="/?q=zzz&amp;origin=Task+Trove&amp;show_excluded=1"'
        ' data-tab="Task Trove"'
    )
    assert current_tab + ' aria-current="page">' in html
    assert text_of(html, "result-count").endswith(
        "1 excluded sources included · bad quality hidden"
    )


def row_html(html: str, source_id: str) -> str:
    match = re.search(rf'<tr data-source-id="{re.escape(source_id)}">.*?</tr>', html, re.S)
    assert match, source_id
    return match.group(0)


def test_cells_print_each_value_once_and_link_the_source_page(client, write_catalog):
    seed(write_catalog, [
        make_row("MarinSkyRL:q a/b", display_name="Quoted", tags=["generator", "benchmark"],
                 task_count=None, family="", notes="Why it exists",
                 pipeline={"name": "p1", "version": "2", "source": None, "revision": None,
                           "files": ["a/*.parquet"]}),
        make_row("MarinSkyRL:plain", display_name="example/plain", task_count=1234, type="",
                 tags=[]),
    ])  # fmt: skip
    set_state("MarinSkyRL:q a/b", effective_quality="some_issues", open_issue_count=1,
              display_review_id="f" * 64,
              display_review_date=dt.datetime(2025, 3, 3, 12, tzinfo=dt.UTC),
              display_review_date_text="2025-03-03T12:00:00Z")  # fmt: skip
    make_open_issue("MarinSkyRL:q a/b", "https://github.com/o/r/issues/1")
    html = page(client)
    row = row_html(html, "MarinSkyRL:q a/b")
    # The name links the source page; the details control opens it (or the drawer).
    assert '<th scope="row"><a href="/sources/MarinSkyRL:q%20a/b/">Quoted</a>' in row
    assert (
        '<a class="info" href="/sources/MarinSkyRL:q%20a/b/" aria-label="Details for Quoted">i</a>'
        in row
    )
    assert "/api/sources/" not in row
    assert row.count(">Quoted<") == 1  # printed once (the dataset differs from the name)
    assert "<td>example/q a/b" not in row and ">example/q a/b</a>" in row  # the dataset cell
    assert '<td class="num">Generated</td>' in row
    assert '<span class="mark" title="Designated benchmark">✓' in row
    assert "True" not in row and "False" not in row
    assert (
        f'<a class="chip quality-some_issues" href="/reviews/{"f" * 64}/" title="Confirmed '
        "verifier defect remains unresolved. Open the source&#x27;s review pool and GitHub "
        'issue.">Some issues</a>'
    ) in row
    assert "<td>Withheld · verifier issues</td>" in row
    assert '<td title="2025-03-03T12:00:00Z">Mar 3, 2025</td>' in row
    assert "<td></td>" in row  # the empty family: a dash drawn by CSS
    # Details are not rendered into rows any more: they load from the source page.
    assert "<template" not in html and "Why it exists" not in html
    plain = row_html(html, "MarinSkyRL:plain")
    assert '<td class="num">1,234</td>' in plain
    assert '<span class="u">Unclassified</span>' in plain
    assert "<td><span>Available</span></td>" in plain


def test_a_row_is_a_few_hundred_bytes(client, write_catalog):
    rows = [
        make_row(f"MarinSkyRL:source_{n:03}", display_name=f"org/dataset-{n:03}")
        for n in range(100)
    ]
    seed(write_catalog, rows)
    html = page(client, "?page_size=100")
    sizes = [len(row.encode()) for row in re.findall(r"<tr data-source-id=.*?</tr>", html, re.S)]
    assert len(sizes) == 100
    assert max(sizes) < 700, max(sizes)


def test_quality_chip_labels(client, write_catalog):
    seed(write_catalog, [make_row(f"MarinSkyRL:{n}", display_name=n) for n in "abc"])
    set_state("MarinSkyRL:a", review_stale=True, display_review_id="e" * 64)
    set_state("MarinSkyRL:b", display_review_id="d" * 64)
    html = page(client)
    assert re.search(
        r'quality-unknown" href="/reviews/e+/" title="Source data or verifier changed[^"]*">'
        r"Needs re-review",
        html,
    )
    assert re.search(
        r'quality-unknown" href="/reviews/d+/" title="Sample-based[^"]*">Unrated', html
    )
    # Nothing to open for a source nobody reviewed: the chip has no tooltip promising a report.
    assert '<span class="chip quality-unknown">Unreviewed</span>' in html
    assert html.count("<td>Not measured</td>") == 2
    assert html.count("<td>Needs re-review</td>") == 1


def test_difficulty_summary_uses_the_compact_chart(client, write_catalog):
    seed(write_catalog, [make_row("MarinSkyRL:a", display_name="Alpha")])
    summary = {"status": "current", "models": [], "text": "Current: x 1/2 solved"}
    set_state(
        "MarinSkyRL:a",
        effective_quality="good",
        display_review_id="c" * 64,
        difficulty_summary=summary,
    )
    html = page(client)
    assert (
        f'href="/reviews/{"c" * 64}/#difficulty" '
        'aria-label="Difficulty attempts and verifier results for Alpha"' in html
    )
    assert "<td>Not measured</td>" not in html
    details = client.get("/sources/MarinSkyRL:a/").content.decode()
    assert "Read difficulty attempts &amp; verifier results" in details


def test_sort_headers_toggle_and_reset_page(client, catalog):
    html = page(client, "?page=1&sort=rows")
    assert (
        '<th scope="col" class="col-rows" aria-sort="ascending" title="Selected input rows '
        'before conversion or curation"><a class="sort-link" href="/?sort=-rows" '
        'data-sort="rows">Input rows <span class="sort-icon" aria-hidden="true">↑</span>'
    ) in html
    assert (
        'aria-sort="none"><a class="sort-link" href="/" data-sort="name">Source name '
        '<span class="sort-icon" aria-hidden="true">↕</span>'
    ) in html
    html = page(client, "?sort=-rows")
    assert (
        'href="/?sort=rows" data-sort="rows">Input rows <span class="sort-icon" '
        'aria-hidden="true">↓' in html
    )
    assert "sorted by Input rows descending" in html


def test_unknown_values_are_ignored_with_a_visible_note(client, catalog):
    html = page(client, "?type=bogus&sort=zzz&page=abc&page_size=7&quality=bad&colour=red")
    assert '<option value="" selected>All</option>' in html
    assert '<input type="checkbox" id="show-bad" name="show_bad" value="1" checked>' in html
    assert re.findall(r'data-source-id="([^"]+)"', html) == ["Task Trove:bad"]
    notes = re.search(r'<div class="param-notes" role="note"[^>]*>(.*?)</div>', html, re.S)
    assert notes, "a note names every ignored or changed parameter"
    text = re.sub(r"<[^>]+>", " ", notes.group(1))
    for expected in [
        "Unknown parameter “colour” was ignored.",
        "“type=bogus” is not a valid value and was ignored.",
        "“sort=zzz” is not a valid value and was ignored.",
        "“page_size=7” is not from 25 to 500; showing 100 rows per page.",
        "“page=abc” is not a page number; showing page 1.",
    ]:
        assert expected in text, expected
    assert 'id="param-notes"' not in page(client, "?type=RLVR&source=MarinSkyRL:a")


def test_values_match_without_regard_to_case_and_links_use_the_row_values(client, catalog):
    html = page(client, "?type=rlvr")
    assert '<option value="RLVR" selected>RLVR</option>' in html
    assert 'id="param-notes"' not in html
    assert 'href="/export.csv?type=RLVR"' in html


def test_filter_options_are_exact(client, catalog, write_catalog):
    html = page(client)
    for label in [">All<", "RLVR", "Alignment", "Agentic", "Unclassified",
                  "Single-turn", "Multi-turn", ">Any<", "Designated", "Not designated",
                  "Some issues", "Not rated (unreviewed, unrated, needs re-review)",
                  "Protocol mismatch",
                  "Measured (current)", "Historical", "Not measured", "Large model: 0–25% solved",
                  "Large model: &gt;75–100% solved", "Show bad quality",
                  "Show deprecated / excluded"]:  # fmt: skip
        assert label in html, label
    assert (
        'title="Solve-rate ranges use the larger model; lower solve rates indicate harder tasks."'
        in html
    )


def test_rows_per_page_and_the_filters_help(client, catalog):
    """The rows-per-page select marks the size shown (the default's value is empty); the
    Difficulty select names its help paragraph."""

    def sizes(html: str) -> str:
        return re.search(r'<select id="page-size" name="page_size">(.*?)</select>', html, re.S)[1]

    assert sizes(page(client)).strip() == (
        '<option value="25">25</option><option value="50">50</option><option value="" selected>'
        '100</option><option value="200">200</option><option value="500">500</option>'
    )
    assert '<option value="50" selected>50</option>' in sizes(page(client, "?page_size=50"))
    assert " selected" not in sizes(page(client, "?page_size=30"))  # a size the select lacks
    html = page(client)
    assert '<select id="filter-difficulty" name="difficulty" title="Solve-rate' in html
    assert 'aria-describedby="filter-difficulty-help"' in html
    assert html.count('<p class="filter-help" id="filter-difficulty-help">') == 1


def test_the_field_guide_follows_its_intro(client, catalog, monkeypatch):
    from atlas.web import views

    assert "Field guide · definitions" in page(client)
    monkeypatch.setattr("atlas.web.field_guide.intro_text", lambda: "Another <intro>")
    assert views.field_guide_html().count("Another &lt;intro&gt;") == 1
    assert "Another &lt;intro&gt;" in page(client)
    assert page(client).count("<dt>Quality</dt>") == 1


def test_pager_clamps_beyond_the_last_page(client, write_catalog):
    seed(
        write_catalog, [make_row(f"MarinSkyRL:s{n:03}", display_name=f"s{n:03}") for n in range(60)]
    )
    html = page(client, "?page_size=25&page=9")
    assert html.count("Page 3 of 3") == 2  # one pager above the table, one below
    assert 'id="pager-top" aria-label="Pages, above the table"' in html
    assert 'id="pager-bottom" aria-label="Pages, below the table"' in html
    assert len(re.findall(r"data-source-id=", html)) == 10
    assert 'href="/?page=2&amp;page_size=25" rel="prev" data-page="prev">← Previous' in html
    assert '<span class="disabled" aria-disabled="true">Next →</span>' in html
    assert "There is no page 9; showing page 3 of 3." in html
    assert 'href="/?page_size=25" data-page="1">« First' in html
    assert '<option value="25" selected>25</option>' in html
    html = page(client)
    assert "Page 1 of 1" in html and len(re.findall(r"data-source-id=", html)) == 60


def test_empty_states(client, catalog, write_catalog):
    assert "No matching sources" in page(client, "?q=nothing-matches")
    assert "Try another search or reset the filters." in page(client, "?q=nothing-matches")


def test_empty_inventory(client, django_user_model):
    html = page(client)
    assert "No sources have been synchronised yet." in html
    assert "Use Refresh sources" not in html
    assert text_of(html, "checked-at") == "No successful sync yet"
    client.force_login(make_curator())
    html = page(client)
    assert "Use Refresh sources to load the packaged catalog." in html
    assert text_of(html, "metric-status") == "Awaiting sync"


def test_last_sync_shows_the_earliest_checked_at(client, catalog):
    from atlas.models import Refresh

    Refresh.objects.filter(origin="MarinSkyRL").update(
        checked_at=dt.datetime(2025, 3, 3, 9, 5, tzinfo=dt.UTC)
    )
    html = page(client)
    assert (
        '<time datetime="2025-03-03T09:05:00+00:00">Last checked 09:05 · Mar 3, 2025</time>' in html
    )


def test_sync_status_with_and_without_a_recorded_run(django_assert_num_queries):
    from atlas.models import Refresh
    from atlas.selectors import sync_status

    empty = sync_status()
    assert not empty.has_refreshes and empty.earliest_checked_at is None and not empty.last_run
    early, late = (dt.datetime(2025, 3, day, tzinfo=dt.UTC) for day in (3, 4))
    for origin, checked_at in (("A", late), ("B", early)):
        Refresh.objects.create(
            origin=origin, revision="c" * 64, checked_at=checked_at, synced_at=checked_at
        )
    unrun = sync_status()  # refreshes without a run: the earliest check by its own query
    assert unrun.has_refreshes and unrun.earliest_checked_at == early and unrun.last_run is None
    run = RefreshRun.objects.create(started_at=late, finished_at=late, trigger="command",
                                    outcome="synced")  # fmt: skip
    with django_assert_num_queries(1):
        status = sync_status()
    assert status.has_refreshes and status.earliest_checked_at == early
    assert status.last_run == run and not status.last_run_failed
    # The last run carries what the banner reads; the rest stays unread (deferred).
    assert (status.last_run.started_at, status.last_run.outcome) == (late, "synced")
    assert status.last_run.get_deferred_fields() >= {"trigger", "results", "error"}


def test_sync_status_and_versions_follow_each_run(django_assert_num_queries):
    """The banner's and the versions' statements are built once per process: each read still
    asks the database, so a run recorded after a read is the next read's."""
    from atlas.selectors import catalog_versions, sync_status
    from atlas.services.display import bump_display_version

    now = timezone.now()
    first = RefreshRun.objects.create(started_at=now, finished_at=now, trigger="command",
                                      outcome="synced")  # fmt: skip
    before = catalog_versions()
    assert sync_status().last_run == first and before.run.startswith(f"{first.pk}:")
    bump_display_version()
    later = now + dt.timedelta(seconds=1)
    failed = RefreshRun.objects.create(started_at=later, finished_at=later, trigger="button",
                                       outcome="failed", error="boom")  # fmt: skip
    with django_assert_num_queries(1):
        status = sync_status()
    assert status.last_run == failed and status.last_run_failed
    with django_assert_num_queries(1):
        versions = catalog_versions()
    assert versions == status.versions and versions.shown not in (None, before.shown)
    assert versions.run is not None and versions.run.startswith(f"{failed.pk}:")


def test_curator_chrome_and_status(client, catalog):
    client.force_login(make_curator())
    html = page(client)
    assert "Signed in as <strong>curator</strong>" in html and "Sign out" in html
    assert 'id="refresh"' in html and 'data-curator="1"' in html
    assert text_of(html, "metric-status") == "Up to date"
    RefreshRun.objects.create(started_at=timezone.now(), finished_at=timezone.now(),
                              trigger="button", outcome="failed", error="boom")  # fmt: skip
    assert text_of(page(client), "metric-status") == "Needs attention"


def test_staff_without_permission_is_not_a_curator(client, catalog):
    client.force_login(make_curator("staff", permitted=False))
    html = page(client)
    assert "Signed in as <strong>staff</strong>" in html
    assert 'id="refresh"' not in html and 'data-curator="0"' in html


def test_vocabulary_follows_each_sync(client, write_catalog):
    seed(write_catalog, [make_row("MarinSkyRL:a", family="math-answer")])
    assert 'value="math-answer"' in page(client)
    seed(write_catalog, [make_row("MarinSkyRL:a", family="tool-use"), make_row("Gym:b", family="")])
    html = page(client)
    assert 'value="math-answer"' not in html and 'value="tool-use"' in html
    assert 'href="/?origin=Gym"' in html and "Unknown / unclassified" in html


def test_region_request_returns_only_the_regions(client, catalog):
    response = client.get("/?origin=MarinSkyRL", HTTP_X_ATLAS_REGION="1")
    html = response.content.decode()
    assert "X-Atlas-Region" in response["Vary"]
    assert html.count('data-region="') == 3 and "<html" not in html
    assert "masthead" not in html and 'id="result-count"' in html


def test_export_link_keeps_the_query_without_paging(client, catalog):
    html = page(client, "?q=a&sort=-rows&page=2&page_size=25")
    assert (
        'id="export" class="button button-secondary" href="/export.csv?q=a&amp;sort=-rows"' in html
    )


@pytest.mark.parametrize("page_size", [25, 500])
def test_page_query_count_is_constant_in_page_size(
    client, write_catalog, django_assert_num_queries, page_size
):
    rows = [make_row(f"MarinSkyRL:s{n:03}", display_name=f"s{n:03}") for n in range(600)]
    seed(write_catalog, rows)
    for n in range(0, 600, 50):
        make_open_issue(f"MarinSkyRL:s{n:03}", f"https://example.com/{n}")
    client.get("/")  # caches the vocabulary of this inventory version
    # the last run with the earliest check and the catalog's version, the view's counts, the
    # rows (the filter options' counts are asked for apart: /facets.json)
    with django_assert_num_queries(3):
        response = client.get(f"/?page_size={page_size}&show_bad=1")
    assert response.content.decode().count("data-source-id=") == page_size
    # the same view again, another page: its counts are kept for this version of the catalog
    with django_assert_num_queries(2):
        response = client.get(f"/?page_size={page_size}&show_bad=1&page=2")
    assert response.content.decode().count("data-source-id=") == min(page_size, 600 - page_size)


def test_signed_in_staff_see_links_to_the_admin_and_the_work_queue(client, catalog):
    client.force_login(make_curator())
    html = page(client)
    assert (
        '<nav class="curator-links" aria-label="Curator tools"><a href="/admin/">Admin</a>' in html
    )
    assert '<a href="/admin/reviews/review/queue/">Work queue</a>' in html
    client.force_login(make_curator("visitor", staff=False, permitted=False))
    assert "Curator tools" not in page(client)


def test_each_stylesheet_is_linked_once(client, catalog):
    # Issue 34: difficulty.css was linked by the base template and by the difficulty cell.
    for url in ("/sources/MarinSkyRL:a/", "/changes/"):
        sheets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', page(client, url[1:]))
        assert sheets and len(sheets) == len(set(sheets)), (url, sheets)


def test_the_catalog_paints_without_a_stylesheet_request(client, catalog):
    """Issue 34: the catalog's first paint waited for its stylesheets; it holds them, once each."""
    html = page(client)
    assert '<link rel="stylesheet"' not in html
    static = Path(__file__).resolve().parents[2] / "static"
    for sheet in ("atlas/catalog.css", "difficulty/difficulty.css"):
        rules = (static / sheet).read_text(encoding="utf-8")
        assert html.count(f"<style>{rules}</style>") == 1, sheet


def test_column_headers_are_made_once_per_view():
    """A view's headers depend on its query and page size only, never on its page."""
    from atlas.filters import CatalogQuery
    from atlas.web.catalog_view import column_headers_html

    params = {"type": "RLVR", "sort": "-rows"}
    headers = column_headers_html(query=CatalogQuery(params=params, page=3, page_size=50))
    assert column_headers_html(query=CatalogQuery(params=params, page=1, page_size=50)) is headers
    assert headers.count('aria-sort="descending"') == 1
    assert 'href="/?type=RLVR&amp;sort=rows&amp;page_size=50"' in headers
    other = column_headers_html(query=CatalogQuery(params={"type": "RLVR"}, page=1, page_size=100))
    assert other.count('aria-sort="ascending"') == 1
    assert 'href="/?type=RLVR&amp;sort=-name"' in other
