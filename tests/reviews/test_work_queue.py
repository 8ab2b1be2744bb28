"""The curators' work queue: the admin page and `python manage.py review_queue [--json]`."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from atlas.models import Source
from atlas.services.display import refresh_display_state
from tests.conftest import make_row
from tests.reviews import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue_sources():
    f.sync_sources(
        make_row("MarinSkyRL:defect", display_name="Defect"),
        make_row("MarinSkyRL:stale", display_name="Stale"),
        make_row("MarinSkyRL:imported", display_name="Imported"),
        make_row("MarinSkyRL:fresh one", display_name="Fresh"),
        make_row("MarinSkyRL:good", display_name="Good"),
    )
    defect_source = Source.objects.get(id="MarinSkyRL:defect")
    f.set_current(f.publish(*f.native_collection(), source_id="MarinSkyRL:defect"))
    f.record_issue(source_id=defect_source.id, confirming=f.confirming_collection(defect_source))
    stale, files = f.native_collection(dataset_revision="9" * 40, task_count=1)
    f.set_current(f.publish(stale, files, source_id="MarinSkyRL:stale"))
    imported, imported_files = f.imported_collection(source_id="MarinSkyRL:imported")
    f.publish(imported, imported_files, source_id="MarinSkyRL:imported")
    good, good_files = f.native_collection(reviewed_at="2025-05-01T00:00:00Z", task_count=1)
    f.set_current(f.publish(good, good_files, source_id="MarinSkyRL:good"))
    refresh_display_state()


def test_the_command_lists_each_need_with_its_next_command(queue_sources, capsys):
    call_command("review_queue", "--json")
    document = json.loads(capsys.readouterr().out)
    by_need = {item["need"]: item for item in document["needs"]}
    ids = {need: [s["source_id"] for s in item["sources"]] for need, item in by_need.items()}
    assert ids["resolve_defect"] == ["MarinSkyRL:defect"]
    assert ids["re_review"] == ["MarinSkyRL:stale"]
    assert ids["synthesise_imported"] == ["MarinSkyRL:imported"]
    assert ids["first_review"] == ["MarinSkyRL:fresh one"]
    assert ids["measure_difficulty"] == ["MarinSkyRL:good"]
    defect = by_need["resolve_defect"]["sources"][0]
    assert defect["commands"][-1] == (
        "python manage.py resolve_verifier_issue --atlas-id MarinSkyRL:defect --issue-url "
        "https://github.com/marin-community/MarinSkyRL/issues/7 --resolution-review-id REVIEW_ID"
    )
    fresh = by_need["first_review"]["sources"][0]
    assert fresh["commands"][-1].endswith("--atlas-id 'MarinSkyRL:fresh one'")  # quoted for a shell
    assert by_need["measure_difficulty"]["sources"][0]["commands"][0].startswith(
        "python manage.py make_difficulty "
    )
    assert fresh["source_page_url"] == "/sources/MarinSkyRL:fresh%20one/"

    call_command("review_queue", "--need", "first_review")
    text = capsys.readouterr().out
    assert text.startswith("== Never reviewed (1)")
    assert (
        "$ python manage.py publish_review --run-dir runs/review --atlas-id 'MarinSkyRL:fresh one'"
        in text
    )


def test_the_admin_page_and_its_link(queue_sources, client):
    client.force_login(User.objects.create_superuser("root", password="admin-pass-1"))
    index = client.get("/admin/").content.decode()
    assert 'href="/admin/reviews/review/queue/">Curator work queue</a>' in index
    page = client.get("/admin/reviews/review/queue/").content.decode()
    assert "Open verifier defect awaiting a validated resolution (1)" in page
    assert "Never reviewed (1)" in page
    assert 'href="/sources/MarinSkyRL:good/">Good</a>' in page
    assert "$ python manage.py publish_difficulty --run-dir runs/difficulty" in page


def test_the_queue_is_for_staff_only(queue_sources, client):
    assert client.get("/admin/reviews/review/queue/").status_code == 302  # to the login
