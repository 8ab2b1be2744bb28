"""The curators' work queue: the admin page and `python manage.py review_queue [--json]`."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command

from atlas.models import Source
from atlas.rules.vocabularies import ChangeKind
from atlas.services.changes import record_curation
from atlas.services.display import refresh_display_state
from reviews.models import Review
from reviews.pages.work_queue import (
    SourceFiles,
    difficulty_commands,
    resolution_commands,
    review_commands,
    source_slug,
    work_queue,
)
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
    # Run folders are named by what each step works on, never by the day.
    fix = "runs/marinskyrl-defect/fix-marinskyrl-7"
    issue = "https://github.com/marin-community/MarinSkyRL/issues/7"
    assert by_need["resolve_defect"]["sources"][0]["commands"] == [
        "python manage.py make_review --config review-configs/marinskyrl-defect.json --n 3 "
        "--seed 42 --output runs/marinskyrl-defect/fix-review-marinskyrl-7",
        f"python manage.py validate_fix --issue-url {issue} --atlas {settings.ATLAS_PUBLIC_URL} "
        f"--review runs/marinskyrl-defect/fix-review-marinskyrl-7 --output {fix}",
        f"python manage.py publish_review --run-dir {fix} --atlas-id MarinSkyRL:defect",
        f"python manage.py resolve_verifier_issue --atlas-id MarinSkyRL:defect --issue-url "
        f"{issue} --resolution-run-dir {fix}",
        # Good returns only with a rating published once nothing is open.
        f"python manage.py publish_review --run-dir {fix} --atlas-id MarinSkyRL:defect",
    ]
    fresh = by_need["first_review"]["sources"][0]
    reviewed = "runs/marinskyrl-fresh-one/review-aaaaaaaa-bbbbbbbb"  # dataset, verifier revision
    assert fresh["commands"] == [
        "python manage.py make_review --config review-configs/marinskyrl-fresh-one.json "
        f"--n 3 --seed 42 --output {reviewed}",
        f"python manage.py publish_review --run-dir {reviewed} "
        "--atlas-id 'MarinSkyRL:fresh one'",  # quoted for a shell
    ]
    assert fresh["files"]["config"] == "review-configs/marinskyrl-fresh-one.json"
    synthesis = by_need["synthesise_imported"]["sources"][0]["commands"]
    assert synthesis[0].startswith("python manage.py synthesise_source --atlas-id ")
    assert synthesis[1].endswith("/synthesis-aaaaaaaa --atlas-id MarinSkyRL:imported")
    measure = by_need["measure_difficulty"]["sources"][0]
    current = Source.objects.get(id="MarinSkyRL:good").review_id
    assert measure["commands"][0] == (
        "python manage.py make_difficulty --config difficulty-configs/marinskyrl-good.json "
        "--atlas-id MarinSkyRL:good --n 30 --seed 42 "
        f"--output runs/marinskyrl-good/difficulty-{current[:12]}"
    )
    assert fresh["source_page_url"] == "/sources/MarinSkyRL:fresh%20one/"

    call_command("review_queue", "--need", "first_review")
    text = capsys.readouterr().out
    assert "== Never reviewed (1)" in text
    assert (
        f"$ python manage.py publish_review --run-dir {reviewed} "
        "--atlas-id 'MarinSkyRL:fresh one'" in text
    )
    assert "Config: source.source_id MarinSkyRL:fresh one, source.revision " in text


def test_a_sample_never_asks_for_more_tasks_than_the_source_has():
    files = SourceFiles(source_id="MarinSkyRL:tiny", task_count=2)
    assert "--n 2 --seed 42" in review_commands(files)[0]
    assert "--n 2 --seed 42" in difficulty_commands(files)[0]
    unknown = SourceFiles(source_id="MarinSkyRL:big")
    assert "--n 30 --seed 42" in difficulty_commands(unknown)[0]
    # The catalog counts the whole dataset; the current review sampled a local input of 3 rows
    # (make demo's): the difficulty run reads that input too.
    local = SourceFiles(source_id="MarinSkyRL:gsm8k", task_count=7473, reviewed_tasks=3)
    assert "--n 3 --seed 42" in difficulty_commands(local)[0]
    assert source_slug("Task Trove:a/b c") == "task-trove-a-b-c"


def test_two_defects_of_one_day_get_their_own_folders():
    files = SourceFiles(source_id="MarinSkyRL:gsm8k")
    first = "https://github.com/marin-community/MarinSkyRL/issues/7"
    second = "https://github.com/marin-community/MarinSkyRL/issues/8"
    assert files.fix_run(first) != files.fix_run(second)
    both = resolution_commands(files, [first, second])
    outputs = [line.split("--output ")[1] for line in both if "--output " in line]
    assert outputs == [
        "runs/marinskyrl-gsm8k/fix-review-marinskyrl-7-marinskyrl-8",
        "runs/marinskyrl-gsm8k/fix-marinskyrl-7",
        "runs/marinskyrl-gsm8k/fix-marinskyrl-8",
    ]


def test_the_admin_page_and_its_link(queue_sources, client):
    client.force_login(User.objects.create_superuser("root", password="admin-pass-1"))
    index = client.get("/admin/").content.decode()
    assert 'href="/admin/reviews/review/queue/">Curator work queue</a>' in index
    page = client.get("/admin/reviews/review/queue/").content.decode()
    assert "Open verifier defect awaiting a validated resolution (1)" in page
    assert "Never reviewed (1)" in page
    assert 'href="/sources/MarinSkyRL:good/">Good</a>' in page
    current = Source.objects.get(id="MarinSkyRL:good").review_id
    assert (
        "$ python manage.py publish_difficulty --run-dir "
        f"runs/marinskyrl-good/difficulty-{current[:12]}" in page
    )
    assert "Config: source.source_id MarinSkyRL:good, the three protocol roles" in page


def test_the_queue_is_for_staff_only(queue_sources, client):
    assert client.get("/admin/reviews/review/queue/").status_code == 302  # to the login


def test_a_resolved_defect_waits_for_the_publication_that_restores_good(client):
    """Resolution never restores a rating by itself: the source stays in the queue, under its
    own need, with the command that publishes the resolution again, until a rating is published
    after the resolution (the history records it) or it is Good again."""
    f.sync_sources(make_row("MarinSkyRL:fixed", display_name="Fixed"))
    source = Source.objects.get(id="MarinSkyRL:fixed")
    capped = f.set_current(
        f.publish(*f.native_collection(), source_id=source.id), quality="some_issues"
    )
    issue = f.record_issue(
        source_id=source.id,
        confirming=f.confirming_collection(source),
        resolution=Review.objects.get(id=capped.review_id),
    )
    refresh_display_state(source_ids=[source.id])
    (section,) = work_queue(needs=["restore_good"])
    (entry,) = section.entries
    assert section.need.label == "Resolved verifier defect awaiting a new rating"
    assert entry.commands == (
        "python manage.py publish_review --run-dir runs/marinskyrl-fixed/fix-marinskyrl-7 "
        "--atlas-id MarinSkyRL:fixed",
    )
    assert entry.detail.startswith(f"{issue.issue_url} resolved by review {capped.review_id}")
    # A rating published after the resolution (recorded in the history) ends the wait.
    record_curation(
        kind=ChangeKind.REVIEW_PUBLISHED, source_id=source.id, before={}, review_id=capped.review_id
    )
    assert not work_queue(needs=["restore_good"])[0].entries


def test_the_printed_links_say_where_their_address_comes_from(
    queue_sources, capsys, settings, client
):
    """The links and --atlas URLs use ATLAS_PUBLIC_URL; left at its default (a command run by
    hand, not through make run), the queue and publish_review say so and how to set it."""
    settings.ATLAS_PUBLIC_URL = "http://atlas.test:9000"
    settings.ATLAS_PUBLIC_URL_SET = True
    call_command("review_queue", "--need", "resolve_defect")
    text = capsys.readouterr().out
    assert text.startswith("== Open verifier defect") and "--atlas http://atlas.test:9000 " in text
    settings.ATLAS_PUBLIC_URL_SET = False
    call_command("review_queue", "--need", "resolve_defect")
    assert capsys.readouterr().out.startswith(
        "Note: Links use ATLAS_PUBLIC_URL's default, http://atlas.test:9000: set "
        "ATLAS_PUBLIC_URL to the address the Atlas is served at (make run and make serve set it "
        "from HOST and PORT).\n"
    )
    call_command("review_queue", "--json", "--need", "resolve_defect")
    document = json.loads(capsys.readouterr().out)
    assert document["atlas_public_url"] == "http://atlas.test:9000"
    assert document["atlas_public_url_note"].startswith("Links use ATLAS_PUBLIC_URL's default")
    # The admin's queue shows the same commands: it says so too, and only then.
    client.force_login(User.objects.create_superuser("root", password="admin-pass-1"))
    page = client.get("/admin/reviews/review/queue/").content.decode()
    assert (
        '<p class="help" id="public-url-note">Note: Links use ATLAS_PUBLIC_URL&#x27;s default, '
        "http://atlas.test:9000: set ATLAS_PUBLIC_URL to the address" in page
    )
    settings.ATLAS_PUBLIC_URL_SET = True
    assert "public-url-note" not in client.get("/admin/reviews/review/queue/").content.decode()
