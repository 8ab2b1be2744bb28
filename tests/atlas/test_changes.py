"""The catalog history: every sync records per source what it added, retired, brought back and
which fields changed; /changes/, the source page, /api/changes/ and the Atom feed show it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from atlas.models import RefreshRun, SourceChange
from atlas.services.sync import sync_catalog
from tests.atlas.test_catalog_helpers import make_row, seed

pytestmark = pytest.mark.django_db
ATOM = "{http://www.w3.org/2005/Atom}"


def changes_of(run_id: int) -> dict[str, tuple[str, dict]]:
    return {
        change.source_id: (change.kind, change.fields)
        for change in SourceChange.objects.filter(run_id=run_id)
    }


def test_a_sync_records_added_changed_retired_and_returned(write_catalog):
    first = seed(write_catalog, [make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b")])
    assert changes_of(first["run"]) == {
        "MarinSkyRL:a": ("added", {}),
        "MarinSkyRL:b": ("added", {}),
    }
    second = seed(write_catalog, [make_row("MarinSkyRL:a", task_count=5)])
    assert changes_of(second["run"]) == {
        "MarinSkyRL:a": ("changed", {"task_count": [100, 5]}),
        "MarinSkyRL:b": ("retired", {}),
    }
    retired = SourceChange.objects.get(run_id=second["run"], source_id="MarinSkyRL:b")
    assert (retired.origin, retired.display_name) == ("MarinSkyRL", "example/b")
    third = seed(write_catalog, [make_row("MarinSkyRL:a", task_count=5), make_row("MarinSkyRL:b")])
    assert changes_of(third["run"]) == {"MarinSkyRL:b": ("returned", {})}
    # An unchanged or forced sync of the same rows records nothing.
    path = write_catalog([make_row("MarinSkyRL:a", task_count=5), make_row("MarinSkyRL:b")])
    forced = sync_catalog(catalog_path=path, force=True, trigger="command")
    assert changes_of(forced["run"]) == {}


def test_retired_sources_past_a_batch_are_each_named_by_one_bound_list(write_catalog):
    """Every retired source's history names its origin and display name, however many retire;
    each batch of them is read with its ids bound as one list (``atlas.db.lookups``), never a
    parameter per id."""
    rows = [make_row(f"MarinSkyRL:r{n:04d}") for n in range(1201)]
    seed(write_catalog, rows)
    with CaptureQueriesContext(connection) as queries:
        run = seed(write_catalog, rows[:1])["run"]
    named = SourceChange.objects.filter(run_id=run, kind="retired")
    assert named.count() == 1200
    assert set(named.values_list("origin", flat=True)) == {"MarinSkyRL"}
    assert named.get(source_id="MarinSkyRL:r0500").display_name == "example/r0500"
    selects = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert not [sql for sql in selects if "IN ('MarinSkyRL:r" in sql]


def test_a_whole_origin_retired_and_a_source_moving_origin(write_catalog):
    seed(write_catalog, [make_row("MarinSkyRL:a"), make_row("Gym:g", display_name="G")])
    moved = make_row("MarinSkyRL:a", origin="Zoo")
    run = seed(write_catalog, [moved])["run"]
    changes = changes_of(run)
    assert changes["Gym:g"] == ("retired", {})
    kind, fields = changes["MarinSkyRL:a"]
    assert kind == "changed" and fields["origin"] == ["MarinSkyRL", "Zoo"]


def test_recording_costs_no_query_per_source(write_catalog):
    seed(write_catalog, [make_row("MarinSkyRL:seed")])
    rows = [make_row(f"MarinSkyRL:s{n:04}") for n in range(400)]
    with CaptureQueriesContext(connection) as captured:
        run = seed(write_catalog, rows)["run"]
    assert SourceChange.objects.filter(run_id=run).count() == 401  # 400 added, 1 retired
    history = [q for q in captured if "catalog_source_changes" in q["sql"]]
    # One COPY on PostgreSQL; SQLite's bulk insert is bounded by its 999 parameters per query
    # (11 columns: 90 rows a statement).
    assert len(history) <= (1 if connection.vendor == "postgresql" else 5)


def test_the_changes_page_lists_revisions_with_their_diffs(client, write_catalog):
    seed(write_catalog, [make_row("MarinSkyRL:a", display_name="Alpha")])
    run = seed(write_catalog, [make_row("MarinSkyRL:a", display_name="Alpha", task_count=7)])["run"]
    html = client.get("/changes/").content.decode()
    assert "Catalog changes" in html
    assert "1 changed" in html and "1 added" in html
    assert "<code>task_count</code>: <del>100</del> → <ins>7</ins>" in html
    assert 'href="/sources/MarinSkyRL:a/">Alpha</a>' in html
    assert 'type="application/atom+xml"' in html
    one = client.get(f"/changes/?run={run}").content.decode()
    assert "1 changed" in one and "1 added" not in one
    assert client.get("/changes/?run=999999").status_code == 404
    assert client.get("/changes/?run=" + "9" * 40).status_code == 404  # no 64-bit key is that long
    history = client.get("/changes/?source=MarinSkyRL:a").content.decode()
    assert history.count('class="change change-') == 2


def test_the_source_page_shows_its_history(client, write_catalog):
    seed(write_catalog, [make_row("MarinSkyRL:a", display_name="Alpha")])
    seed(write_catalog, [make_row("MarinSkyRL:a", display_name="Alpha", family="tool-use")])
    html = client.get("/sources/MarinSkyRL:a/").content.decode()
    history = html[html.index("Catalog history") :]
    assert "<code>family</code>: <del>math-answer</del> → <ins>tool-use</ins>" in history
    assert '<span class="change change-added">Added</span>' in history


def test_the_changes_api(client, write_catalog):
    seed(write_catalog, [make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b")])
    run = seed(write_catalog, [make_row("MarinSkyRL:a", notes="new")])["run"]
    body = client.get("/api/changes/").json()
    assert body["count"] == 4
    latest = body["results"][0]
    assert latest["run"] == run and latest["kind"] in {"changed", "retired"}
    assert latest["catalog_revision"] == RefreshRun.objects.get(id=run).catalog_revision
    changed = client.get("/api/changes/?kind=changed").json()["results"]
    assert [(c["source_id"], c["fields"]) for c in changed] == [
        ("MarinSkyRL:a", {"notes": ["", "new"]})
    ]
    assert changed[0]["source_page_url"] == "http://testserver/sources/MarinSkyRL:a/"
    assert client.get("/api/changes/?source=MarinSkyRL:b").json()["count"] == 2
    assert client.get(f"/api/changes/?run={run}").json()["count"] == 2
    assert client.get("/api/changes/?kind=moved").status_code == 400
    for unusable in ("9223372036854775808", "9" * 40, "0", "-1", "1e3"):
        refused = client.get(f"/api/changes/?run={unusable}")
        assert refused.status_code == 400 and set(refused.json()) == {"run"}, unusable
    assert client.get("/api/changes/?run=9223372036854775807").json()["count"] == 0
    assert set(client.get("/api/changes/?since=1").json()) == {"since"}


def test_the_atom_feed(client, write_catalog):
    seed(write_catalog, [make_row("MarinSkyRL:a", display_name="Alpha")])
    seed(write_catalog, [make_row("MarinSkyRL:a", display_name="Alpha", task_count=3)])
    response = client.get("/changes/feed.atom")
    assert response["Content-Type"].startswith("application/atom+xml")
    feed = ET.fromstring(response.content)
    entries = feed.findall(f"{ATOM}entry")
    assert len(entries) == 2
    newest = entries[0]
    assert newest.find(f"{ATOM}title").text.endswith(": 1 changed")
    assert "task_count: 100 → 3" in newest.find(f"{ATOM}summary").text
    assert "/changes/?run=" in newest.find(f"{ATOM}link").get("href")


def test_history_rows_must_name_a_stored_source(write_catalog):
    """The reference is checked by triggers (per statement on PostgreSQL), as a foreign key was."""
    from django.db import IntegrityError, transaction

    run = seed(write_catalog, [make_row("MarinSkyRL:a")])["run"]
    missing = pytest.raises(IntegrityError, match="names a source that does not exist")
    with missing, transaction.atomic():
        SourceChange.objects.create(
            run_id=run,
            source_id="MarinSkyRL:nope",
            kind="added",
            origin="MarinSkyRL",
            at=timezone.now(),
        )
    with missing, transaction.atomic():
        SourceChange.objects.filter(run_id=run).update(source_id="MarinSkyRL:nope")
    with missing, transaction.atomic():  # a curator's action too (the triggers survived 0010)
        SourceChange.objects.create(
            source_id="MarinSkyRL:nope",
            kind="review_published",
            origin="MarinSkyRL",
            at=timezone.now(),
        )
    assert set(SourceChange.objects.values_list("source_id", flat=True)) == {"MarinSkyRL:a"}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the PostgreSQL delete guard")
def test_a_source_with_a_history_is_never_deleted(write_catalog):
    from django.db import IntegrityError, transaction

    from atlas.models import Source

    seed(write_catalog, [make_row("MarinSkyRL:a")])
    with (
        pytest.raises(IntegrityError, match="never deleted"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM catalog_sources WHERE id = %s", ["MarinSkyRL:a"])
    assert Source.objects.filter(id="MarinSkyRL:a").exists()
