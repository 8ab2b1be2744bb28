"""The source page /sources/<id>/ and the details it gives the catalog's drawer."""

from __future__ import annotations

import re

import pytest

from tests.atlas.test_catalog_helpers import make_row, seed, set_state

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog(write_catalog):
    seed(write_catalog, [
        make_row("Task Trove:with space/x", display_name="Spaced", tags=["agentic", "multi-turn"],
                 notes="Why it exists", task_count=None,
                 pipeline={"name": "p1", "version": "2", "source": None, "revision": None,
                           "files": ["a/*.parquet"]}),
        make_row("MarinSkyRL:gen", display_name="Gen", tags=["rlvr", "generator"],
                 task_count=None),
    ])  # fmt: skip


def test_ids_with_colons_slashes_and_spaces_have_a_page(client, catalog):
    response = client.get("/sources/Task%20Trove:with%20space/x/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>Spaced · RL Data Atlas</title>" in html
    assert "<h1>Spaced</h1>" in html and "<code>Task Trove:with space/x</code>" in html
    for text in [
        "<dt>Source ID</dt><dd>Task Trove:with space/x</dd>",
        "<dt>Input rows</dt><dd>Unknown</dd>",
        "<dt>Pipeline version</dt><dd>2</dd>",
        "<dt>Input files</dt><dd>a/*.parquet</dd>",
        "<dt>Notes</dt><dd>Why it exists</dd>",
        "<dt>Dataset revision</dt><dd><code>" + "a" * 40 + "</code></dd>",
        "<dt>Quality</dt><dd>Unreviewed</dd>",
        "Catalog history",
        'href="/api/sources/Task%20Trove:with%20space/x/">JSON</a>',
    ]:
        assert text in html, text
    # Nobody reviewed it: the one term, and the pool says so.
    assert "Nobody has reviewed this source yet" in html
    assert "Not curated" not in html


def test_generators_and_retired_sources(client, catalog, write_catalog):
    html = client.get("/sources/MarinSkyRL:gen/").content.decode()
    assert "<dt>Input rows</dt><dd>No fixed count</dd>" in html
    seed(write_catalog, [make_row("Task Trove:with space/x")])
    html = client.get("/sources/MarinSkyRL:gen/").content.decode()
    assert "Retired" in html and "retired from the catalog" in html
    assert '<span class="change change-retired">Retired</span>' in html


def test_unknown_sources_are_a_404_page(client, catalog):
    response = client.get("/sources/MarinSkyRL:nope/")
    assert response.status_code == 404
    assert "Source not found" in response.content.decode()


def test_quality_and_difficulty_link_their_review(client, catalog):
    summary = {"status": "current", "models": [], "text": "Current: x 1/2 solved"}
    set_state("MarinSkyRL:gen", effective_quality="good", display_review_id="c" * 64,
              difficulty_summary=summary, difficulty_text="Current: x 1/2 solved",
              display_review_is_example=True, review_applicability="current")  # fmt: skip
    html = client.get("/sources/MarinSkyRL:gen/").content.decode()
    assert f'<a class="chip quality-good" href="/reviews/{"c" * 64}/"' in html
    assert '<span class="chip-mark">Example</span>' in html
    assert "Example review — not a real judgment." in html
    assert f'href="/reviews/{"c" * 64}/#difficulty"' in html
    assert "<dt>Difficulty</dt><dd>Current: x 1/2 solved</dd>" in html
    assert "<dt>Review applicability</dt><dd>Current</dd>" in html


def test_the_drawer_gets_only_the_body(client, catalog):
    response = client.get("/sources/MarinSkyRL:gen/", HTTP_X_ATLAS_REGION="details")
    html = response.content.decode()
    assert "X-Atlas-Region" in response["Vary"]
    # The drawer shows only answers marked as rendered for it; the full page is not one.
    assert response["X-Atlas-Region"] == "details"
    assert "X-Atlas-Region" not in client.get("/sources/MarinSkyRL:gen/")
    assert "<html" not in html and "masthead" not in html
    assert '<h2 class="drawer-title" id="drawer-title">Gen</h2>' in html
    assert "Definition" in html and "Pinned revisions" in html


def test_the_page_reads_in_a_bounded_number_of_queries(
    client, catalog, write_catalog, django_assert_max_num_queries
):
    for n in range(5):
        seed(write_catalog, [make_row("MarinSkyRL:gen", tags=["generator"], task_count=None,
                                      notes=f"v{n}")])  # fmt: skip
    # source, history, verifier issues, review pool
    with django_assert_max_num_queries(4):
        html = client.get("/sources/MarinSkyRL:gen/").content.decode()
    assert len(re.findall(r'class="change change-', html)) >= 5
