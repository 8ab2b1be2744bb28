"""Counts kept per version of the catalog and view (``atlas.selectors.kept``): the page's totals,
the API's count and the filter options' counts are read once per view until what the catalog
shows changes, and every write that changes it (a sync, a curated edit, any write of display
columns) makes the next request read them again."""

from __future__ import annotations

import pytest

from atlas.models import DisplayVersion
from atlas.selectors import catalog_versions
from atlas.services.curation import edit_curated_quality
from tests.atlas.test_catalog_helpers import make_row, seed

pytestmark = pytest.mark.django_db

ROWS = [make_row(f"MarinSkyRL:s{n:02}", display_name=f"s{n:02}") for n in range(30)]


def good_counts(client) -> tuple[int, int, int]:
    """The Good view's count on the page, in the API (a full page, so counted) and among the
    quality filter's options."""
    page = client.get("/?quality=good&page_size=25").context["matching"]
    api = client.get("/api/sources/?quality=good&page_size=25").json()["count"]
    facets = client.get("/facets.json").json()["counts"]["quality"].get("good", 0)
    return page, api, facets


def test_a_curated_edit_is_counted_at_once(client, write_catalog):
    seed(write_catalog, ROWS)
    for n in range(26):
        edit_curated_quality(source_id=f"MarinSkyRL:s{n:02}", quality="good")
    assert good_counts(client) == (26, 26, 26)
    before = catalog_versions()
    edit_curated_quality(source_id="MarinSkyRL:s26", quality="good")
    assert catalog_versions().shown != before.shown and catalog_versions().run == before.run
    assert good_counts(client) == (27, 27, 27)


def test_a_sync_is_counted_at_once(client, write_catalog):
    seed(write_catalog, ROWS)
    assert client.get("/api/sources/?page_size=25").json()["count"] == 30
    assert client.get("/").context["matching"] == 30
    seed(write_catalog, [*ROWS, make_row("MarinSkyRL:new", display_name="new")])
    assert client.get("/api/sources/?page_size=25").json()["count"] == 31
    assert client.get("/").context["matching"] == 31
    assert sum(client.get("/facets.json").json()["counts"]["type"].values()) == 2 * 31


def test_every_write_of_display_columns_changes_the_version(write_catalog):
    def version():
        # The row a migration made, or none: an earlier transactional test's flush deletes it.
        return DisplayVersion.objects.values_list("version", flat=True).first()

    assert version() is None  # nothing written yet
    seed(write_catalog, ROWS)
    seen = {version()}
    edit_curated_quality(source_id="MarinSkyRL:s01", quality="bad")
    assert version() not in seen
    seen.add(version())
    seed(write_catalog, ROWS[:20])  # retires ten
    assert version() not in seen
    seen.add(version())
    seed(write_catalog, ROWS[:20])  # writes nothing: what kept reads hold stays right
    assert version() in seen and None not in seen


def test_before_any_write_nothing_is_kept(client, django_assert_num_queries):
    assert catalog_versions().shown is None
    for _ in range(2):
        # versions (no run, then the display version), vocabulary (two), counts: every time
        with django_assert_num_queries(5):
            assert client.get("/facets.json").json()["counts"]["type"] == {"": 0}
