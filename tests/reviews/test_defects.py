import datetime as dt
import json

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from atlas.contributions import CuratedEditRefused
from atlas.models import Source, SourceChange
from atlas.rules.display_state import CURATED_FIELDS, SourceSnapshot
from atlas.services.curation import edit_curated_quality
from atlas.services.display import display_states, refresh_display_state
from atlas.services.sync import sync_catalog
from reviews.models import VerifierIssue
from reviews.services.defects import (
    CAP_MESSAGE,
    RESOLUTION_PREFIX,
    DefectRuleError,
    confirm_verifier_issue,
    resolve_verifier_issue,
)
from tests.conftest import make_row
from tests.reviews.factories import (
    ISSUE_URL,
    confirming_collection,
    defect_review,
    fix_review,
    resolution_entry,
    runtime_review,
    store_collection,
)

pytestmark = pytest.mark.django_db
SOURCE_ID = "MarinSkyRL:gsm8k_example"


@pytest.fixture
def source(write_catalog):
    sync_catalog(
        catalog_path=write_catalog([make_row(SOURCE_ID), make_row("MarinSkyRL:other")]),
        force=False,
        trigger="command",
    )
    return rate(Source.objects.get(id=SOURCE_ID), "good")


def rate(source, quality, difficulty=None):
    """Give a source a current curated rating, as a rating publication would."""
    Source.objects.filter(id=source.id).update(
        quality=quality,
        difficulty=difficulty,
        review_id="c" * 64,
        review_source_revision=source.payload["dataset_revision"],
        review_verifier_revision=source.payload["verifier_revision"],
    )
    refresh_display_state(source_ids=[source.id])
    return Source.objects.get(id=source.id)


def confirm(source, review=None, url=ISSUE_URL):
    review = review or confirming_collection(source)
    return confirm_verifier_issue(source_id=source.id, issue_url=url, review_id=review.id)


def valid_resolution(source, issue, **entry_overrides):
    return store_collection(
        source,
        [runtime_review(), fix_review([resolution_entry(source, **entry_overrides)])],
        updated_at=issue.created_at + dt.timedelta(minutes=5),
    )


# --- confirmation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stored", "expected"), [("good", "some_issues"), ("bad", "bad"), (None, "some_issues")]
)
def test_confirmation_demotes_keeping_bad_and_clears_difficulty(source, stored, expected):
    source = rate(source, stored, difficulty="Current: x 1/2 solved")
    issue = confirm(source)
    source.refresh_from_db()
    assert issue.status == "open"
    assert (source.quality, source.difficulty) == (expected, None)
    assert (source.effective_quality, source.open_issue_count) == (expected, 1)
    assert source.review_id == "c" * 64  # the current review and its history stay


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"source_id": "MarinSkyRL:nope"}, "Source not found: MarinSkyRL:nope"),
        (
            {"issue_url": "https://gitlab.com/a/b/issues/1"},
            "Verifier issues must link a GitHub issue: https://gitlab.com/a/b/issues/1",
        ),
        (
            {"issue_url": "https://github.com/a/b/pull/1"},
            "Verifier issues must link a GitHub issue: https://github.com/a/b/pull/1",
        ),
        ({"review_id": "f" * 64}, "Review not found"),
    ],
)
def test_confirmation_input_failures(source, kwargs, message):
    review = confirming_collection(source)
    arguments = {"source_id": source.id, "issue_url": ISSUE_URL, "review_id": review.id, **kwargs}
    with pytest.raises(DefectRuleError) as caught:
        confirm_verifier_issue(**arguments)
    assert str(caught.value) == message
    assert not VerifierIssue.objects.exists()
    assert Source.objects.get(id=source.id).quality == "good"


def test_confirming_review_of_another_source_is_refused(source):
    other = Source.objects.get(id="MarinSkyRL:other")
    with pytest.raises(DefectRuleError, match=r"^The confirming review belongs to another source$"):
        confirm(source, review=confirming_collection(other))


@pytest.mark.parametrize(
    ("reviews", "message"),
    [
        (
            [runtime_review()],
            "A confirmed defect needs a verifier_defect review in the source's review pool",
        ),
        (
            [defect_review(with_issue=False), runtime_review()],
            "A confirmed defect needs a verifier_defect review in the source's review pool",
        ),
        (
            [defect_review(issue_url="https://github.com/a/b/issues/9"), runtime_review()],
            "The verifier_defect review names a different issue",
        ),
        ([defect_review()], "A confirmed defect needs a native execution that reproduces it"),
        (
            [defect_review(), runtime_review(tests_executed=None)],
            "A confirmed defect needs a native execution that reproduces it",
        ),
    ],
)
def test_confirmation_evidence_rules(source, reviews, message):
    review = store_collection(source, reviews, kind="supplemental")
    with pytest.raises(DefectRuleError) as caught:
        confirm(source, review=review)
    assert str(caught.value) == message
    assert Source.objects.get(id=source.id).quality == "good"


def test_defect_review_without_issue_url_is_accepted(source):
    review = store_collection(
        source, [defect_review(issue_url=None), runtime_review()], kind="supplemental"
    )
    assert confirm(source, review=review).status == "open"


def test_duplicate_open_and_resolved_defects_are_refused(source):
    review = confirming_collection(source)
    issue = confirm(source, review=review)
    with pytest.raises(DefectRuleError, match=r"^This defect is already recorded for the source$"):
        confirm(source, review=review)
    resolve_verifier_issue(
        issue_id=issue.id, resolution_review_id=valid_resolution(source, issue).id
    )
    with pytest.raises(DefectRuleError, match=r"record a regression under a new GitHub issue$"):
        confirm(source)


def test_a_further_reproduction_is_added_to_the_open_defect(source):
    """Another published reproduction of the same open issue is recorded with it (validate_fix
    re-runs the failing inputs of every one); the same one twice, or after resolution, is not."""
    issue = confirm(source)
    second = confirming_collection(source)
    added = confirm(source, review=second)
    assert added.pk == issue.pk and added.review_id == issue.review_id
    assert added.reproduction_review_ids() == [issue.review_id, second.id]
    with pytest.raises(DefectRuleError, match=r"^This defect is already recorded for the source$"):
        confirm(source, review=second)
    # Another issue's reproduction is no reproduction of this one.
    other = confirming_collection(source, issue_url=ISSUE_URL.replace("4242", "4243"))
    with pytest.raises(DefectRuleError, match=r"^The verifier_defect review names a different"):
        confirm(source, review=other)
    resolve_verifier_issue(
        issue_id=issue.id, resolution_review_id=valid_resolution(source, issue).id
    )
    with pytest.raises(DefectRuleError, match=r"record a regression under a new GitHub issue$"):
        confirm(source, review=confirming_collection(source))
    assert VerifierIssue.objects.get().reproduction_review_ids() == [issue.review_id, second.id]


# --- resolution -----------------------------------------------------------------------------------


def refused(issue, review_id):
    issue.refresh_from_db()
    before = (issue.status, issue.resolution_review_id, issue.updated_at)
    with pytest.raises(DefectRuleError) as caught:
        resolve_verifier_issue(issue_id=issue.id, resolution_review_id=review_id)
    issue.refresh_from_db()
    assert (issue.status, issue.resolution_review_id, issue.updated_at) == before
    message = str(caught.value)
    assert message.startswith(RESOLUTION_PREFIX)
    return message.removeprefix(RESOLUTION_PREFIX)


def test_valid_resolution_resolves_without_restoring_good(source):
    issue = confirm(source)
    review = valid_resolution(source, issue)
    assert list(VerifierIssue.objects.open()) == [issue]
    resolved = resolve_verifier_issue(issue_id=issue.id, resolution_review_id=review.id)
    assert (resolved.status, resolved.resolution_review_id) == ("resolved", review.id)
    assert not VerifierIssue.objects.open().exists()
    source.refresh_from_db()
    assert source.quality == "some_issues" and source.effective_quality == "some_issues"
    assert source.open_issue_count == 0
    # Good returns only through a new rating once nothing is open.
    edit_curated_quality(source_id=source.id, quality="good")
    assert Source.objects.get(id=source.id).effective_quality == "good"


def test_the_pages_split_issues_into_open_and_resolved_by_one_rule(source):
    """The source page and the review page read a source's issues in one query each and split
    them with ``VerifierIssue.objects.open_and_resolved`` (the rule ``open()`` filters by)."""
    first = confirm(source)
    resolved = resolve_verifier_issue(
        issue_id=first.id, resolution_review_id=valid_resolution(source, first).id
    )
    url = ISSUE_URL + "0"
    later = confirm(source, review=confirming_collection(source, issue_url=url), url=url)
    assert VerifierIssue.objects.order_by("id").open_and_resolved() == ([later], [resolved])
    assert list(VerifierIssue.objects.open()) == [later]


def test_resolving_a_resolved_issue_is_refused(source):
    issue = confirm(source)
    review = valid_resolution(source, issue)
    resolve_verifier_issue(issue_id=issue.id, resolution_review_id=review.id)
    assert refused(issue, review.id) == "the issue is not open"


def test_resolution_review_must_be_a_rating_of_the_same_source(source):
    issue = confirm(source)
    other = Source.objects.get(id="MarinSkyRL:other")
    foreign = store_collection(
        other, [runtime_review()], updated_at=timezone.now() + dt.timedelta(days=1)
    )
    supplemental = store_collection(
        source,
        [runtime_review(), fix_review([resolution_entry(source)])],
        kind="supplemental",
        updated_at=timezone.now() + dt.timedelta(days=1),
    )
    expected = "the resolution review is not a published source review of this source"
    assert refused(issue, foreign.id) == expected
    assert refused(issue, supplemental.id) == expected
    assert refused(issue, "0" * 64) == expected


def test_resolution_review_cannot_be_the_confirming_review(source):
    review = store_collection(source, [defect_review(), runtime_review()], kind="rating")
    issue = confirm(source, review=review)
    assert (
        refused(issue, review.id) == "the resolution review is the review that confirmed the defect"
    )


def test_resolution_review_must_be_newer_than_the_defect(source):
    issue = confirm(source)
    older = store_collection(
        source,
        [runtime_review(), fix_review([resolution_entry(source)])],
        updated_at=issue.created_at - dt.timedelta(minutes=1),
    )
    assert refused(issue, older.id) == "the resolution review is not newer than the defect"


@pytest.mark.parametrize(
    "runtime",
    [
        runtime_review(verified=False),
        runtime_review(tests_executed=None),
        runtime_review(tests_executed="true"),
        runtime_review(with_evidence=False),
        runtime_review(execution_path=""),
    ],
)
def test_resolution_needs_a_verified_native_run_with_archived_evidence(source, runtime):
    issue = confirm(source)
    review = store_collection(
        source,
        [runtime, fix_review([resolution_entry(source)])],
        updated_at=issue.created_at + dt.timedelta(minutes=5),
    )
    assert (
        refused(issue, review.id)
        == "no verified native runtime_execution review with tests_executed true"
    )


def test_runtime_evidence_must_be_an_artifact_of_the_resolution_review(source):
    issue = confirm(source)
    review = store_collection(
        source,
        [runtime_review(), fix_review([resolution_entry(source)])],
        updated_at=issue.created_at + dt.timedelta(minutes=5),
        artifacts=(),
    )
    assert (
        refused(issue, review.id)
        == "no verified native runtime_execution review with tests_executed true"
    )


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        (
            {"issue_url": "https://github.com/a/b/issues/1"},
            f"no resolved_verifier_issues entry for {ISSUE_URL}",
        ),
        ({"verifier_revision": "__absent__"}, "the entry does not record verifier_revision"),
        ({"dataset_revision": "d" * 40}, "the entry covers a different dataset revision"),
        ({"dataset_revision": None}, "the entry covers a different dataset revision"),
        ({"verifier_revision": "e" * 64}, "the entry covers a different verifier revision"),
        ({"fix_validated": "true"}, "fix_validated is not true"),
        ({"fix_validated": 1}, "fix_validated is not true"),
    ],
)
def test_each_resolution_entry_condition_fails_alone(source, overrides, reason):
    issue = confirm(source)
    entry = resolution_entry(source, **overrides)
    if entry.get("verifier_revision") == "__absent__":
        del entry["verifier_revision"]
    review = store_collection(
        source,
        [runtime_review(), fix_review([entry])],
        updated_at=issue.created_at + dt.timedelta(minutes=5),
    )
    assert refused(issue, review.id) == reason


def test_closest_entry_reason_and_any_valid_entry_suffices(source):
    issue = confirm(source)
    far = resolution_entry(source, dataset_revision="d" * 40)
    close = resolution_entry(source, fix_validated=False)
    review = store_collection(
        source,
        [runtime_review(), fix_review([far, close])],
        updated_at=issue.created_at + dt.timedelta(minutes=5),
    )
    assert refused(issue, review.id) == "fix_validated is not true"
    good = store_collection(
        source,
        [runtime_review(), fix_review([far, resolution_entry(source)])],
        updated_at=issue.created_at + dt.timedelta(minutes=6),
    )
    assert (
        resolve_verifier_issue(issue_id=issue.id, resolution_review_id=good.id).status == "resolved"
    )


def test_null_verifier_revision_matches_a_null_current_revision(write_catalog):
    sync_catalog(
        catalog_path=write_catalog([make_row(SOURCE_ID, verifier_revision=None)]),
        force=False,
        trigger="command",
    )
    source = Source.objects.get(id=SOURCE_ID)
    issue = confirm(source)
    review = valid_resolution(source, issue, verifier_revision=None)
    assert (
        resolve_verifier_issue(issue_id=issue.id, resolution_review_id=review.id).status
        == "resolved"
    )


def test_every_open_defect_must_be_resolved_before_good(source):
    first = confirm(source)
    second_url = "https://github.com/marin-community/MarinSkyRL/issues/7"
    second = confirm(
        source, review=confirming_collection(source, issue_url=second_url), url=second_url
    )
    resolve_verifier_issue(
        issue_id=first.id, resolution_review_id=valid_resolution(source, first).id
    )
    with pytest.raises(CuratedEditRefused, match=CAP_MESSAGE):
        edit_curated_quality(source_id=source.id, quality="good")
    assert Source.objects.get(id=source.id).effective_quality == "some_issues"
    review = store_collection(
        source,
        [runtime_review(), fix_review([resolution_entry(source, issue_url=second.issue_url)])],
        updated_at=second.created_at + dt.timedelta(minutes=5),
    )
    resolve_verifier_issue(issue_id=second.id, resolution_review_id=review.id)
    edit_curated_quality(source_id=source.id, quality="good")
    assert Source.objects.get(id=source.id).effective_quality == "good"


# --- the invariant on every writer ----------------------------------------------------------------


def test_curated_edit_service_refuses_good_and_null(source):
    confirm(source)
    for quality in ("good", None):
        with pytest.raises(CuratedEditRefused, match=f"^{CAP_MESSAGE}$"):
            edit_curated_quality(source_id=source.id, quality=quality)
    edit_curated_quality(source_id=source.id, quality="some_issues")
    edit_curated_quality(source_id=source.id, quality="bad")
    assert Source.objects.get(id=source.id).effective_quality == "bad"


def test_sync_keeps_the_cap_even_when_the_review_turns_stale(source, write_catalog):
    confirm(source)
    changed = make_row(SOURCE_ID, dataset_revision="f" * 40)
    sync_catalog(
        catalog_path=write_catalog([changed, make_row("MarinSkyRL:other")]),
        force=True,
        trigger="command",
    )
    source.refresh_from_db()
    assert source.review_stale is True
    assert source.effective_quality == "some_issues" and source.quality == "some_issues"
    assert source.difficulty_summary is None and source.large_solve_rate is None


def test_database_trigger_guards_raw_writes(source):
    confirm(source)
    Source.objects.filter(id=source.id).update(quality="good", difficulty="Current: x 3/4 solved")
    assert Source.objects.filter(id=source.id).values_list("quality", "difficulty").get() == (
        "some_issues",
        None,
    )
    Source.objects.filter(id=source.id).update(quality="bad")
    Source.objects.filter(id=source.id).update(quality="good")
    assert Source.objects.get(id=source.id).quality == "bad"
    with connection.cursor() as cursor:
        cursor.execute("UPDATE catalog_sources SET quality = NULL WHERE id = %s", [source.id])
    assert Source.objects.get(id=source.id).quality == "bad"
    # Some issues is a legal value while a defect is open (a capped re-rating of a Bad source).
    Source.objects.filter(id=source.id).update(quality="some_issues")
    assert Source.objects.get(id=source.id).quality == "some_issues"


def test_database_trigger_demotes_on_raw_issue_insert(source):
    review = confirming_collection(source)
    Source.objects.filter(id=source.id).update(difficulty="Current: a 1/1 solved")
    now = timezone.now()
    VerifierIssue.objects.create(
        source=source,
        issue_url=ISSUE_URL,
        review=review,
        status="open",
        created_at=now,
        updated_at=now,
    )
    assert Source.objects.filter(id=source.id).values_list("quality", "difficulty").get() == (
        "some_issues",
        None,
    )


def test_raw_open_issue_on_a_good_source_shows_capped_everywhere(source, client):
    """The drift bug of the architecture issue: the triggers repaired ``quality`` but not the
    display columns the page, API and CSV read, so a raw open issue still showed Good."""
    review = confirming_collection(source)
    Source.objects.filter(id=source.id).update(large_solve_rate=0.5, difficulty_status="current")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO catalog_verifier_issues (source_id, issue_url, review_id, status, "
            "created_at, updated_at) VALUES (%s, %s, %s, 'open', %s, %s)",
            [source.id, ISSUE_URL, review.id, timezone.now(), timezone.now()],
        )
    row = Source.objects.get(id=source.id)
    assert (row.quality, row.effective_quality, row.open_issue_count) == (
        "some_issues", "some_issues", 1,
    )  # fmt: skip
    assert row.difficulty_status is None and row.large_solve_rate is None
    assert client.get(f"/api/sources/{source.id}/").json()["quality"] == "some_issues"
    csv = b"".join(client.get("/export.csv?show_bad=1").streaming_content).decode()
    line = next(line for line in csv.splitlines() if line.startswith(f'"{row.display_name}",'))
    assert '"some_issues"' in line and '"good"' not in line


@pytest.mark.parametrize(
    "column, value",
    [
        ("effective_quality", "good"),
        ("open_issue_count", 0),
        ("difficulty_status", "current"),
        ("large_solve_rate", 0.9),
        ("difficulty_summary", '{"status": "current"}'),
    ],
)
def test_raw_writes_of_display_columns_cannot_show_good(source, column, value):
    confirm(source)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE catalog_sources SET {column} = %s WHERE id = %s", [value, source.id]
        )
    row = Source.objects.get(id=source.id)
    assert row.effective_quality == "some_issues" and row.open_issue_count == 1
    assert row.difficulty_status is None and row.large_solve_rate is None
    assert row.difficulty_summary is None


@pytest.mark.parametrize(
    ("stored_quality", "open_issues"),
    [(q, n) for q in ("good", "some_issues", "bad", None) for n in (0, 1, 2)],
)
def test_the_database_repair_equals_the_display_rule(source, stored_quality, open_issues):
    """The trigger and compute_display_state must agree on what a source with open issues shows;
    a change to one without the other fails here."""

    Source.objects.filter(id=source.id).update(quality=stored_quality)
    for number in range(open_issues):
        url = f"https://github.com/marin-community/MarinSkyRL/issues/{100 + number}"
        confirm(source, review=confirming_collection(source, issue_url=url), url=url)
    Source.objects.filter(id=source.id).update(
        effective_quality="good", difficulty_text="x", open_issue_count=0
    )  # a raw writer: the trigger repairs when issues are open
    row = Source.objects.get(id=source.id)
    curated = {name: getattr(row, name) for name in CURATED_FIELDS}
    expected = display_states(
        snapshots=[SourceSnapshot(id=row.id, payload=row.payload, active=True, curated=curated)]
    )[row.id]
    if open_issues:
        assert row.effective_quality == expected["effective_quality"]
        assert row.open_issue_count == expected["open_issue_count"] == open_issues
        assert row.difficulty_status is None and row.difficulty is None


def test_raw_resolution_is_refused(source):
    issue = confirm(source)
    review = valid_resolution(source, issue)
    for statement, params in [
        ("UPDATE catalog_verifier_issues SET status = 'resolved', resolution_review_id = %s "
         "WHERE id = %s", [review.id, issue.id]),
        ("UPDATE catalog_verifier_issues SET resolution_review_id = %s WHERE id = %s",
         [review.id, issue.id]),
    ]:  # fmt: skip
        with (
            pytest.raises(IntegrityError, match="resolved only by resolve_verifier_issue"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement, params)
    with (
        pytest.raises(IntegrityError, match="resolved only by resolve_verifier_issue"),
        transaction.atomic(),
    ):
        VerifierIssue.objects.filter(id=issue.id).update(
            status="resolved", resolution_review=review
        )
    assert VerifierIssue.objects.get(id=issue.id).status == "open"
    # The service still resolves it.
    resolve_verifier_issue(issue_id=issue.id, resolution_review_id=review.id)
    assert VerifierIssue.objects.get(id=issue.id).status == "resolved"


def test_raw_insert_of_a_resolved_issue_is_refused(source):
    review = confirming_collection(source)
    other = store_collection(source, [runtime_review()])
    with (
        pytest.raises(IntegrityError, match="resolved only by resolve_verifier_issue"),
        transaction.atomic(),
    ):
        VerifierIssue.objects.create(
                source=source, issue_url=ISSUE_URL, review=review, status="resolved",
                resolution_review=other, created_at=timezone.now(), updated_at=timezone.now(),
            )  # fmt: skip


def test_deleting_or_moving_an_open_issue_is_refused(source):
    issue = confirm(source)
    with (
        pytest.raises(IntegrityError, match="cannot be deleted"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM catalog_verifier_issues WHERE id = %s", [issue.id])
    with pytest.raises(IntegrityError, match="cannot move to another source"), transaction.atomic():
        VerifierIssue.objects.filter(id=issue.id).update(source_id="MarinSkyRL:other")
    assert VerifierIssue.objects.filter(id=issue.id, source_id=source.id, status="open").exists()
    assert Source.objects.get(id=source.id).effective_quality == "some_issues"


# --- constraints ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "resolution"),
    [("resolved", None), ("open", "other"), ("closed", None), ("resolved", "same")],
)
def test_status_and_resolution_constraints(source, status, resolution):
    review = confirming_collection(source)
    other = store_collection(source, [runtime_review()])
    resolution_review = {"other": other, "same": review, None: None}[resolution]
    now = timezone.now()
    with pytest.raises(IntegrityError), transaction.atomic():
        VerifierIssue.objects.create(
            source=source,
            issue_url=ISSUE_URL,
            review=review,
            status=status,
            resolution_review=resolution_review,
            created_at=now,
            updated_at=now,
        )


def test_unique_issue_url_per_source(source):
    issue = confirm(source)
    with pytest.raises(IntegrityError), transaction.atomic():
        VerifierIssue.objects.create(
            source=source,
            issue_url=ISSUE_URL,
            review=issue.review,
            status="open",
            created_at=issue.created_at,
            updated_at=issue.created_at,
        )


# --- entry points ---------------------------------------------------------------------------------


def run_command(name: str, source, review_option: str, review_id: str) -> None:
    call_command(name, "--atlas-id", source.id, "--issue-url", ISSUE_URL, review_option, review_id)


def test_commands_print_the_row_and_fail_with_the_message(source, capsys):
    review = confirming_collection(source)
    run_command("confirm_verifier_issue", source, "--review-id", review.id)
    printed = json.loads(capsys.readouterr().out)
    assert printed["status"] == "open" and printed["source_id"] == source.id
    with pytest.raises(CommandError, match=r"^This defect is already recorded for the source$"):
        run_command("confirm_verifier_issue", source, "--review-id", review.id)
    issue = VerifierIssue.objects.get()
    with pytest.raises(
        CommandError, match=r"the resolution review is not a published source review"
    ):
        run_command("resolve_verifier_issue", source, "--resolution-review-id", review.id)
    fix = valid_resolution(source, issue)
    run_command("resolve_verifier_issue", source, "--resolution-review-id", fix.id)
    assert json.loads(capsys.readouterr().out)["resolution_review_id"] == fix.id


def test_the_commands_record_who_acted(source, capsys, monkeypatch):
    """A command line has no account: the history names --curator, else the login name."""
    monkeypatch.setenv("LOGNAME", "os-curator")
    monkeypatch.setenv("USER", "os-curator")
    review = confirming_collection(source)
    run_command("confirm_verifier_issue", source, "--review-id", review.id)
    issue = VerifierIssue.objects.get()
    fix = valid_resolution(source, issue)
    call_command(
        "resolve_verifier_issue", "--atlas-id", source.id, "--issue-url", ISSUE_URL,
        "--resolution-review-id", fix.id, "--curator", "alice",
    )  # fmt: skip
    err = capsys.readouterr().err
    assert "Next: Good returns only with a new rating publication: publish the resolution's " in err
    actors = [
        (entry.kind, entry.actor)
        for entry in SourceChange.objects.filter(source_id=source.id, run=None).order_by("id")
    ]
    assert actors == [("defect_confirmed", "os-curator"), ("defect_resolved", "alice")]


@pytest.fixture
def curator():
    user = User.objects.create_user("curator", password="pw-curator-1", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="manage_verifier_issues"))
    return user


def test_api_confirm_list_and_resolve(source, curator):
    client = APIClient()
    review = confirming_collection(source)
    body = {"source_id": source.id, "issue_url": ISSUE_URL, "review_id": review.id}
    assert client.post("/api/verifier-issues/", body, format="json").status_code == 401
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=curator).key}")
    created = client.post("/api/verifier-issues/", body, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["status"] == "open"
    again = client.post("/api/verifier-issues/", body, format="json")
    assert again.status_code == 400
    assert again.json() == {"detail": "This defect is already recorded for the source"}
    # A further reproduction of the open defect is added to it: 200, the same row.
    further = {**body, "review_id": confirming_collection(source).id}
    added = client.post("/api/verifier-issues/", further, format="json")
    assert added.status_code == 200, added.content
    assert added.json()["id"] == created.json()["id"]
    assert added.json()["reproduction_review_ids"] == [review.id, further["review_id"]]
    public = APIClient()
    listed = public.get("/api/verifier-issues/", {"source": source.id, "status": "open"}).json()
    assert [row["issue_url"] for row in listed["results"]] == [ISSUE_URL]
    assert public.get("/api/verifier-issues/", {"status": "resolved"}).json()["count"] == 0
    issue_id = created.json()["id"]
    bad = client.post(
        f"/api/verifier-issues/{issue_id}/resolve/",
        {"resolution_review_id": review.id},
        format="json",
    )
    assert bad.status_code == 400 and bad.json()["detail"].startswith(RESOLUTION_PREFIX)
    fix = valid_resolution(source, VerifierIssue.objects.get(id=issue_id))
    ok = client.post(
        f"/api/verifier-issues/{issue_id}/resolve/", {"resolution_review_id": fix.id}, format="json"
    )
    assert ok.status_code == 200 and ok.json()["status"] == "resolved"
    assert public.get(f"/api/verifier-issues/{issue_id}/").json()["resolution_review_id"] == fix.id


def test_api_refuses_users_without_the_permission(source):
    staff = User.objects.create_user("staff", password="pw-staff-12", is_staff=True)
    client = APIClient()
    client.force_authenticate(staff)
    review = confirming_collection(source)
    response = client.post(
        "/api/verifier-issues/",
        {"source_id": source.id, "issue_url": ISSUE_URL, "review_id": review.id},
        format="json",
    )
    assert response.status_code == 403
    assert not VerifierIssue.objects.exists()


def test_admin_confirm_form_shows_the_failed_rule_and_records_history(source, curator, client):
    from django.contrib.admin.models import LogEntry

    curator.is_superuser = True
    curator.save()
    client.force_login(curator)
    foreign = confirming_collection(Source.objects.get(id="MarinSkyRL:other"))
    page = client.post(
        "/admin/reviews/verifierissue/add/",
        {"source": source.id, "issue_url": ISSUE_URL, "confirming_review": foreign.id},
    )
    # Only the chosen source's verifier_defect collections are offered.
    assert page.status_code == 200
    assert "Select a valid choice" in page.content.decode()
    assert foreign.id not in page.content.decode()
    assert not VerifierIssue.objects.exists()
    review = confirming_collection(source)
    wrong_url = client.post(
        "/admin/reviews/verifierissue/add/",
        {"source": source.id, "issue_url": "https://example.com/x", "confirming_review": review.id},
    )
    assert "Verifier issues must link a GitHub issue" in wrong_url.content.decode()
    done = client.post(
        "/admin/reviews/verifierissue/add/",
        {"source": source.id, "issue_url": ISSUE_URL, "confirming_review": review.id},
    )
    assert done.status_code == 302
    issue = VerifierIssue.objects.get()
    assert issue.created_by == curator
    assert Source.objects.get(id=source.id).quality == "some_issues"
    resolve_url = f"/admin/reviews/verifierissue/{issue.id}/resolve/"
    refused_page = client.post(resolve_url, {"resolution_review_id": review.id})
    assert (
        "the resolution review is not a published source review of this source"
        in refused_page.content.decode()
    )
    fix = valid_resolution(source, issue)
    assert client.post(resolve_url, {"resolution_review_id": fix.id}).status_code == 302
    issue.refresh_from_db()
    assert issue.status == "resolved" and issue.resolved_by == curator
    assert LogEntry.objects.filter(object_id=str(issue.id)).count() == 2


def test_admin_source_edit_is_refused_while_a_defect_is_open(source, curator, client):
    curator.is_superuser = True
    curator.save()
    client.force_login(curator)
    confirm(source)
    url = f"/admin/atlas/source/{source.pk}/change/"
    page = client.post(url, {"quality": "good"})
    assert page.status_code == 200
    assert "Open verifier defects cap this source at Some issues" in page.content.decode()
    assert "difficulty" not in client.get(url).context["adminform"].form.fields
    assert client.post(url, {"quality": "bad"}).status_code == 302
    assert Source.objects.get(id=source.id).quality == "bad"


def test_resolving_an_unknown_or_malformed_id_is_not_found(source, curator):
    client = APIClient()
    client.force_authenticate(curator)
    for issue_id in ("abc", "999999"):
        answer = client.post(
            f"/api/verifier-issues/{issue_id}/resolve/", {"resolution_review_id": "0" * 64}
        )
        assert answer.status_code == 404


def test_admin_reports_a_repeated_defect_once_with_the_spec_message(source, curator, client):
    curator.is_superuser = True
    curator.save()
    client.force_login(curator)
    review = confirming_collection(source)
    form = {"source": source.id, "issue_url": ISSUE_URL, "confirming_review": review.id}
    assert client.post("/admin/reviews/verifierissue/add/", form).status_code == 302
    page = client.post("/admin/reviews/verifierissue/add/", form).content.decode()
    assert page.count("This defect is already recorded for the source") == 1
    assert "already exists" not in page


def test_admin_pickers_name_the_issue_and_the_verdict_and_a_reproduction_is_added(
    source, curator, client
):
    """Options that differ only in their hash read apart: the confirm picker names each
    collection's issue and verdict, the resolve picker its rating and the issue it fixes. A
    further reproduction of the open defect is added to it; resolving says what is left."""
    curator.is_superuser = True
    curator.save()
    client.force_login(curator)
    first = confirming_collection(source)
    second = confirming_collection(source)
    options = client.get(
        "/admin/reviews/verifierissue/defect-reviews/", {"source": source.id}
    ).json()["options"]
    labels = {option["id"]: option["label"] for option in options}
    for review in (first, second):
        assert labels[review.id].startswith("marin-community/MarinSkyRL#4242 · Keep · ")
        assert labels[review.id].endswith(f" · {review.id[:12]}")
    form = {"source": source.id, "issue_url": ISSUE_URL, "confirming_review": first.id}
    assert client.post("/admin/reviews/verifierissue/add/", form).status_code == 302
    added = client.post(
        "/admin/reviews/verifierissue/add/", {**form, "confirming_review": second.id}, follow=True
    )
    assert "Reproduction added to the open defect" in added.content.decode()
    issue = VerifierIssue.objects.get()
    assert issue.reproduction_review_ids() == [first.id, second.id]

    fix = valid_resolution(source, issue)
    page = client.get(f"/admin/reviews/verifierissue/{issue.id}/resolve/").content.decode()
    assert "Rating Some issues · fix validated for marin-community/MarinSkyRL#4242 · " in page
    done = client.post(
        f"/admin/reviews/verifierissue/{issue.id}/resolve/",
        {"resolution_review_id": fix.id},
        follow=True,
    ).content.decode()
    assert (
        "Verifier defect resolved. Good returns only with a new rating publication: publish the "
        "resolution&#x27;s review again to restore Good." in done
    )
