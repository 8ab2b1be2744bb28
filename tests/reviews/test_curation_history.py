"""The catalog history records what curators do: review publications (rating before → after),
defect confirmations and resolutions, difficulty publications — on /changes/, the source page,
/api/changes/ and the Atom feed, written through atlas.services.changes only."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from atlas.models import RefreshRun, SourceChange
from tests.reviews.builders import SOURCE_ID
from tests.reviews.defect_walk import ISSUE_URL

pytestmark = pytest.mark.django_db
ATOM = "{http://www.w3.org/2005/Atom}"


def curation() -> list[tuple[str, dict]]:
    """The curators' entries, oldest first: (kind, fields)."""
    return [
        (change.kind, change.fields)
        for change in SourceChange.objects.filter(run__isnull=True).order_by("at", "id")
    ]


def test_each_curator_action_is_recorded_with_what_it_changed(walked):
    good, defect, fix = walked["good"], walked["defect"], walked["fix"]
    assert curation() == [
        ("review_published", {"quality": [None, "good"], "review": [None, good]}),
        ("difficulty_published", {"difficulty": [None, "current"]}),
        ("review_published", {}),  # supplemental: nothing shown changed, the pool grew
        (
            "defect_confirmed",
            {
                "quality": ["good", "some_issues"],
                "difficulty": ["current", None],
                "open_issues": [0, 1],
            },
        ),
        ("review_published", {"review": [good, fix]}),  # capped: stays Some issues
        ("defect_resolved", {"open_issues": [1, 0]}),
        ("review_published", {"quality": ["some_issues", "good"]}),
    ]
    entries = list(SourceChange.objects.filter(run__isnull=True).order_by("at", "id"))
    assert {e.actor for e in entries} == {"alice"}
    assert [e.review_id for e in entries] == [good, good, defect, defect, fix, fix, fix]
    assert [e.issue_url for e in entries][3:6] == [ISSUE_URL, None, ISSUE_URL]
    assert "no rating" in entries[2].note
    assert "capped at Some issues" in entries[4].note
    assert entries[5].note.startswith("Good returns only with a new rating publication")
    assert entries[1].note.startswith("Current: ")  # the difficulty summary text


def test_the_history_pages_api_and_feed_show_them(walked, client):
    html = client.get("/changes/").content.decode()
    assert html.count('class="panel revision curation"') == 7
    # A first rating is neither; a demotion reads as one (never in green), a promotion too.
    assert "<li>Rating: <del>Unreviewed</del> → <ins>Good</ins></li>" in html
    worse = '<span class="visually-hidden">(demoted)</span>'
    better = '<span class="visually-hidden">(promoted)</span>'
    assert (
        f'<li class="field-worse">Rating: <del>Good</del> → <ins>Some issues</ins> {worse}' in html
    )
    assert (
        f'<li class="field-worse">Difficulty: <del>Current</del> → <ins>Not measured</ins> {worse}'
        in html
    )
    assert '<li class="field-worse">Open verifier defects: <del>0</del> → <ins>1</ins>' in html
    assert (
        f'<li class="field-better">Open verifier defects: <del>1</del> → <ins>0</ins> {better}'
        in html
    )
    assert "By alice" in html and f'href="{ISSUE_URL}"' in html
    assert f'href="/reviews/{walked["fix"]}/"' in html
    # Newest first, the sync that added the source last.
    assert html.index("Defect resolved") < html.index("Defect confirmed") < html.index('id="run-')

    source_page = client.get(f"/sources/{SOURCE_ID}/").content.decode()
    history = source_page[source_page.index("Catalog history") :]
    for label in (
        "Review published",
        "Defect confirmed",
        "Defect resolved",
        "Difficulty published",
    ):
        assert label in history
    assert "Rating: <del>Some issues</del> → <ins>Good</ins> " in history

    body = client.get("/api/changes/").json()
    assert body["count"] == 8  # 7 curator actions + the sync that added the source
    latest = body["results"][0]
    assert (latest["kind"], latest["run"], latest["catalog_revision"]) == (
        "review_published",
        None,
        None,
    )
    assert latest["fields"] == {"quality": ["some_issues", "good"]}
    assert latest["actor"] == "alice" and latest["review_id"] == walked["fix"]
    assert latest["review_page_url"] == f"http://testserver/reviews/{walked['fix']}/"
    confirmed = client.get("/api/changes/?kind=defect_confirmed").json()["results"]
    assert [c["issue_url"] for c in confirmed] == [ISSUE_URL]
    assert body["results"][-1]["kind"] == "added" and body["results"][-1]["run"] is not None

    feed = ET.fromstring(client.get("/changes/feed.atom").content)
    titles = [entry.find(f"{ATOM}title").text for entry in feed.iter(f"{ATOM}entry")]
    assert titles[0] == (
        f"Review published: example/example ({SOURCE_ID}) — Rating: Some issues → Good"
    )
    assert any(t.startswith("Defect confirmed:") for t in titles)
    assert titles[-1].startswith("Catalog ")


def test_the_timeline_pages_newest_first(walked, client, settings):
    from atlas import change_log

    pages = []
    for number in (1, 2, 3):
        entries = change_log.timeline(offset=(number - 1) * 3, size=3, per_run=5)
        pages.append([getattr(e, "line", None) and e.line.kind for e in entries])
    assert pages == [
        ["review_published", "defect_resolved", "review_published"],
        ["defect_confirmed", "review_published", "difficulty_published"],
        ["review_published", None],  # the sync run
    ]
    assert change_log.timeline_count() == 8


def test_the_database_keeps_sync_entries_and_curator_actions_apart(walked):
    run = RefreshRun.objects.first()
    for kind, run_id in (("review_published", run.id), ("added", None)):
        with pytest.raises(IntegrityError), transaction.atomic():
            SourceChange.objects.create(
                run_id=run_id,
                source_id=SOURCE_ID,
                kind=kind,
                origin="MarinSkyRL",
                at=timezone.now(),
            )
