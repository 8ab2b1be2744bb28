"""The curators' work queue: the admin page and `python manage.py review_queue [--json]`."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone

from atlas.models import Source
from atlas.services.display import refresh_display_state
from reviews.pages.work_queue import SourceFiles, difficulty_commands, review_commands, source_slug
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
        make_row("MarinSkyRL:excluded", display_name="Excluded", status="Excluded"),
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
    assert ids["first_review"] == ["MarinSkyRL:fresh one"]  # not the excluded source
    assert ids["measure_difficulty"] == ["MarinSkyRL:good"]
    day = timezone.now().date().isoformat()
    fix = f"runs/marinskyrl-defect/{day}-fix"
    issue = "https://github.com/marin-community/MarinSkyRL/issues/7"
    assert by_need["resolve_defect"]["sources"][0]["commands"] == [
        "python manage.py make_review --config review-configs/marinskyrl-defect.json --n 3 "
        f"--seed 42 --output {fix}-review",
        f"python manage.py validate_fix --issue-url {issue} --atlas {settings.ATLAS_PUBLIC_URL} "
        f"--review {fix}-review --output {fix}",
        f"python manage.py publish_review --run-dir {fix} --atlas-id MarinSkyRL:defect",
        f"python manage.py resolve_verifier_issue --atlas-id MarinSkyRL:defect --issue-url "
        f"{issue} --resolution-run-dir {fix}",
        # Good returns only with a rating published once nothing is open.
        f"python manage.py publish_review --run-dir {fix} --atlas-id MarinSkyRL:defect",
    ]
    fresh = by_need["first_review"]["sources"][0]
    assert fresh["commands"] == [
        "python manage.py make_review --config review-configs/marinskyrl-fresh-one.json "
        f"--n 3 --seed 42 --output runs/marinskyrl-fresh-one/{day}-review",
        f"python manage.py publish_review --run-dir runs/marinskyrl-fresh-one/{day}-review "
        "--atlas-id 'MarinSkyRL:fresh one'",  # quoted for a shell
    ]
    assert fresh["files"]["config"] == "review-configs/marinskyrl-fresh-one.json"
    synthesis = by_need["synthesise_imported"]["sources"][0]["commands"]
    assert synthesis[0].startswith("python manage.py synthesise_source --atlas-id ")
    assert synthesis[1].endswith(f"{day}-synthesis --atlas-id MarinSkyRL:imported")
    measure = by_need["measure_difficulty"]["sources"][0]
    assert measure["commands"][0] == (
        "python manage.py make_difficulty --config difficulty-configs/marinskyrl-good.json "
        "--atlas-id MarinSkyRL:good --n 30 --seed 42 "
        f"--output runs/marinskyrl-good/{day}-difficulty"
    )
    assert fresh["source_page_url"] == "/sources/MarinSkyRL:fresh%20one/"

    call_command("review_queue", "--need", "first_review")
    text = capsys.readouterr().out
    assert text.startswith("== Never reviewed (1)")
    assert (
        f"$ python manage.py publish_review --run-dir runs/marinskyrl-fresh-one/{day}-review "
        "--atlas-id 'MarinSkyRL:fresh one'" in text
    )
    assert "Config: source.source_id MarinSkyRL:fresh one, source.revision " in text


def test_a_sample_never_asks_for_more_tasks_than_the_source_has():
    files = SourceFiles(source_id="MarinSkyRL:tiny", day=dt.date(2026, 1, 2), task_count=2)
    assert "--n 2 --seed 42" in review_commands(files)[0]
    assert "--n 2 --seed 42" in difficulty_commands(files)[0]
    unknown = SourceFiles(source_id="MarinSkyRL:big", day=dt.date(2026, 1, 2))
    assert "--n 30 --seed 42" in difficulty_commands(unknown)[0]
    assert source_slug("Task Trove:a/b c") == "task-trove-a-b-c"


def test_the_admin_page_and_its_link(queue_sources, client):
    client.force_login(User.objects.create_superuser("root", password="admin-pass-1"))
    index = client.get("/admin/").content.decode()
    assert 'href="/admin/reviews/review/queue/">Curator work queue</a>' in index
    page = client.get("/admin/reviews/review/queue/").content.decode()
    assert "Open verifier defect awaiting a validated resolution (1)" in page
    assert "Never reviewed (1)" in page
    assert 'href="/sources/MarinSkyRL:good/">Good</a>' in page
    day = timezone.now().date().isoformat()
    assert (
        f"$ python manage.py publish_difficulty --run-dir runs/marinskyrl-good/{day}-difficulty"
        in page
    )
    assert "Config: source.source_id MarinSkyRL:good, the three protocol roles" in page


def test_the_queue_is_for_staff_only(queue_sources, client):
    assert client.get("/admin/reviews/review/queue/").status_code == 302  # to the login
