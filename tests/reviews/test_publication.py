import datetime as dt
import hashlib
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import TestCase
from django.utils import timezone

from reviews.models import GradingBinding, Review, ReviewArtifact, VerifierIssue
from reviews.services.publication import BINDING_REFUSED, CONFLICT_MESSAGE, PublicationConflict
from tests.reviews.builders import (
    DATA_REVISION,
    GRADING_REVISION,
    SOURCE_ID,
    VERIFIER_REVISION,
    FindingSpec,
    build_run,
    database_state,
    grading_identity,
    make_row,
    publish,
    rewrite_collection,
    source_row,
    sync_rows,
    write_file,
)

pytestmark = pytest.mark.django_db

SOME_ISSUES = {
    "source_verdict": "conditional",
    "judge_findings": (FindingSpec("medium", "Accepts answers with units."),),
}


@pytest.fixture
def source(write_catalog):
    sync_rows(write_catalog, make_row(SOURCE_ID))
    return source_row()


def test_rating_publication_writes_review_artifacts_and_curated_columns(source, tmp_path):
    run_dir = build_run(tmp_path)
    raw = (run_dir / "quality-reviews.json").read_bytes()
    result = publish(run_dir)

    review = Review.objects.get()
    assert review.id == result["review_id"] == hashlib.sha256(raw).hexdigest()
    assert review.kind == "rating" and review.source_id == SOURCE_ID
    assert review.updated_at.isoformat() == "2025-03-03T09:11:00+00:00"
    paths = set(review.artifacts.values_list("path", flat=True))
    assert {
        "quality-reviews.json",
        "run.json",
        "quality-review.schema.json",
        "artifact-manifest.json",
        "coalescer/parsed.json",
        "tasks/0000/judges/1/parsed.json",
        "tasks/0000/execution-000/solver/turn-000/request.json",
        "tasks/0000/execution-000/solver/turn-000/response.json",
        "tasks/0000/execution-000/verifier-trace.jsonl",
        "tasks/0000/execution-000/verifier.stdout",
        "tasks/0000/execution-000/verifier.stderr",
        "tasks/0000/execution-000/input.json",
        "tasks/0000/execution-000/solver-trace.json",
    } <= paths
    collection_artifact = review.artifacts.get(path="quality-reviews.json")
    assert collection_artifact.sha256 == review.id and collection_artifact.size == len(raw)

    row = source_row()
    assert (row.quality, row.review_id, row.traces, row.difficulty) == ("good", review.id, 2, None)
    assert row.review_date == review.updated_at
    assert row.review_source_revision == DATA_REVISION
    assert row.review_verifier_revision == VERIFIER_REVISION
    assert (row.effective_quality, row.review_applicability, row.review_stale) == (
        "good",
        "current",
        False,
    )
    assert result == {
        "atlas_id": SOURCE_ID,
        "review_id": review.id,
        "kind": "rating",
        "quality": "good",
        "review_date": "2025-03-03T09:11:00Z",
        "marinskyrl_commit": review.collection["execution_provenance"]["marinskyrl_commit"],
        "url": f"http://atlas.test/reviews/{review.id}/",
        "capped_by_verifier_issues": False,
        # The row pins no MarinSkyRL commit: nothing to compare, the review is current.
        "identity_differences": [],
    }


def test_republishing_identical_bytes_stores_nothing_new_and_reapplies_the_rating(source, tmp_path):
    run_dir = build_run(tmp_path)
    first = publish(run_dir)
    artifacts = list(ReviewArtifact.objects.order_by("id").values_list("id", "path", "sha256"))
    type(source).objects.filter(id=SOURCE_ID).update(quality="bad", traces=99)

    second = publish(run_dir)

    assert second == first
    assert Review.objects.count() == 1
    assert (
        list(ReviewArtifact.objects.order_by("id").values_list("id", "path", "sha256")) == artifacts
    )
    assert (source_row().quality, source_row().traces) == ("good", 2)


def test_open_verifier_issue_caps_good_at_some_issues(source, tmp_path):
    earlier = build_run(tmp_path, "earlier", **SOME_ISSUES)
    publish(earlier)
    _open_issue(source)
    result = publish(build_run(tmp_path, "good", started_at=_later()))
    assert result["quality"] == "some_issues"
    assert result["capped_by_verifier_issues"] is True
    row = source_row()
    assert row.quality == "some_issues" and row.effective_quality == "some_issues"


def test_open_verifier_issue_keeps_bad(source, tmp_path):
    publish(build_run(tmp_path, "earlier"))
    _open_issue(source)
    bad = build_run(
        tmp_path,
        "bad",
        started_at=_later(),
        source_verdict="reject",
        judge_verdicts=("reject", "reject", "keep"),
        source_findings=(FindingSpec("critical", "Grades wrong answers correct."),),
    )
    result = publish(bad)
    assert (result["quality"], result["capped_by_verifier_issues"]) == ("bad", True)


def test_supplemental_collection_joins_the_pool_without_changing_the_rating(source, tmp_path):
    current = publish(build_run(tmp_path, "current"))
    pool = build_run(tmp_path, "pool", started_at=_later(), source_verdict="reject")
    rewrite_collection(
        pool,
        lambda c: c["reviews"][-1]["attributes"].update(review_pool_role="verifier_defect"),
    )
    result = publish(pool)
    assert result["kind"] == "supplemental" and result["quality"] == "good"
    assert source_row().review_id == current["review_id"]
    assert Review.objects.get(id=result["review_id"]).kind == "supplemental"


def test_imported_collection_never_changes_the_rating(source, tmp_path):
    publish(build_run(tmp_path, "current"))
    imported = build_run(tmp_path, "imported", started_at=_later(), native=False)

    def as_imported(collection):
        evidence = collection["reviews"][0]["evidence"][0]
        collection["source_mappings"] = [
            {
                "id": "mapping-1",
                "subject_id": collection["subjects"][0]["id"],
                "atlas_source_ids": [SOURCE_ID],
                "status": "confirmed",
                "applicability": "historical",
                "evidence": [evidence],
                "note": None,
            }
        ]

    rewrite_collection(imported, as_imported)
    before = source_row()
    result = publish(imported)
    after = source_row()
    assert result["kind"] == "imported"
    assert (after.quality, after.review_id) == (before.quality, before.review_id)


def test_expected_review_id_mismatch_archives_without_changing_the_rating(source, tmp_path):
    current = publish(build_run(tmp_path, "current"))
    newer = build_run(tmp_path, "newer", started_at=_later(), **SOME_ISSUES)
    with pytest.raises(PublicationConflict, match=CONFLICT_MESSAGE):
        publish(newer, expected_review_id="f" * 64)
    assert Review.objects.count() == 2
    row = source_row()
    assert (row.review_id, row.quality) == (current["review_id"], "good")


def test_expected_review_id_match_publishes(source, tmp_path):
    current = publish(build_run(tmp_path, "current"))
    newer = build_run(tmp_path, "newer", started_at=_later(), **SOME_ISSUES)
    result = publish(newer, expected_review_id=current["review_id"])
    assert source_row().review_id == result["review_id"] and result["quality"] == "some_issues"


def test_native_publication_with_grading_revision_binds_grading(write_catalog, tmp_path):
    sync_rows(write_catalog, make_row(SOURCE_ID, grading_revision=GRADING_REVISION))
    run_dir = build_run(tmp_path, grading=grading_identity())
    result = publish(run_dir)

    claim_text = (run_dir / "publication/grading-applicability.json").read_text()
    claim = json.loads(claim_text)
    assert claim == {
        "schema_version": 1,
        "equivalent": True,
        "source_id": SOURCE_ID,
        "review_id": result["review_id"],
        "source_revision": DATA_REVISION,
        "captured_verifier_revision": VERIFIER_REVISION,
        "grading_revision": GRADING_REVISION,
        "evidence_kind": "current_native_execution",
        "execution_grading": grading_identity(),
    }
    assert claim_text == json.dumps(claim, sort_keys=True, indent=2) + "\n"
    artifact = ReviewArtifact.objects.get(path="publication/grading-applicability.json")
    binding = GradingBinding.objects.get()
    assert binding.evidence_sha256 == artifact.sha256 and artifact.content == claim_text
    row = source_row()
    assert (
        row.grading_tracking == "source-specific"
        and row.review_grading_revision == GRADING_REVISION
    )
    assert row.effective_quality == "good" and not row.review_stale
    # Re-publishing reads back its own claim file and stores nothing new.
    assert publish(run_dir) == result
    assert GradingBinding.objects.count() == 1


def test_publish_review_command_writes_the_result_file(source, tmp_path, capsys, settings):
    settings.ATLAS_PUBLIC_URL_SET = False  # run by hand: the link's address is a guess
    run_dir = build_run(tmp_path)
    call_command("publish_review", "--run-dir", str(run_dir), "--atlas-id", SOURCE_ID)
    text = (run_dir / "atlas-publication.json").read_text()
    assert text.endswith("}\n") and '\n  "atlas_id"' in text
    assert json.loads(text)["quality"] == "good"
    printed = capsys.readouterr()
    assert printed.out == text
    assert printed.err.startswith("Links use ATLAS_PUBLIC_URL's default, ")
    assert "atlas-publication.json" not in set(
        ReviewArtifact.objects.values_list("path", flat=True)
    )


def test_publish_review_command_fails_with_the_validation_message(source, tmp_path):
    run_dir = build_run(tmp_path)
    (run_dir / "quality-reviews.json").unlink()
    before = database_state()
    with pytest.raises(CommandError) as refused:
        call_command("publish_review", "--run-dir", str(run_dir), "--atlas-id", SOURCE_ID)
    assert str(refused.value) == "Run directory has no quality-reviews.json"
    assert database_state() == before
    assert not (run_dir / "atlas-publication.json").exists()


def _later():
    return dt.datetime(2025, 6, 1, 9, 0, tzinfo=dt.UTC)


def _open_issue(source):
    return VerifierIssue.objects.create(
        source=source,
        issue_url="https://github.com/example/repo/issues/1",
        review=Review.objects.first(),
        created_at=timezone.now(),
        updated_at=timezone.now(),
    )


def test_admin_publish_form_goes_through_the_service(source, tmp_path, admin_client):
    import io
    import tarfile

    run_dir = build_run(tmp_path)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        bundle.add(run_dir, arcname=".")
    buffer.seek(0)
    buffer.name = "run.tar.gz"
    assert admin_client.get("/admin/reviews/review/publish/").status_code == 200
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = admin_client.post(
            "/admin/reviews/review/publish/",
            {"atlas_id": SOURCE_ID, "archive": buffer, "type": "review"},
        )
    assert response.status_code == 302
    assert source_row().quality == "good"
    assert admin_client.get(response.url).status_code == 200


def test_admin_bind_grading_refuses_a_proof_that_does_not_hold(source, tmp_path, admin_client):
    run_dir = build_run(tmp_path)
    write_file(run_dir, "publication/proof.json", b'{"schema_version": 1, "equivalent": false}')
    review_id = publish(run_dir)["review_id"]
    url = f"/admin/reviews/review/{review_id}/bind-grading/"
    assert admin_client.get(url).status_code == 200
    response = admin_client.post(url, {"evidence_path": "publication/proof.json"})
    assert response.status_code == 200
    assert BINDING_REFUSED in response.content.decode()
    assert not GradingBinding.objects.exists()
    assert admin_client.get(f"/admin/reviews/review/{review_id}/change/").status_code == 200


def test_lowercase_rfc3339_dates_publish_and_display(client, write_catalog, tmp_path):
    """RFC 3339 allows "t" and "z"; the collection once published but its page said "Review
    date unknown" because the page parsed dates with a second, stricter parser."""
    sync_rows(write_catalog, make_row(SOURCE_ID))
    run_dir = build_run(tmp_path)

    def lowercase(collection):
        for review in collection["reviews"]:
            if review["reviewed_at"]:
                review["reviewed_at"] = review["reviewed_at"].replace("T", "t").replace("Z", "z")

    rewrite_collection(run_dir, lowercase)
    result = publish(run_dir)
    html = client.get(f"/reviews/{result['review_id']}/").content.decode()
    assert "Review date unknown" not in html
    assert f'Reviewed <time datetime="{result["review_date"]}"' in html
    assert source_row().display_review_date is not None
