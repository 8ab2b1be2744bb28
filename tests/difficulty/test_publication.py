from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from atlas.models import Source
from atlas.services.display import refresh_display_state
from difficulty.attestation import ATTESTATION_PATH
from difficulty.publication import (
    RESULT_FILE,
    DifficultyPublicationError,
    archive_path,
    publish_difficulty_run,
)
from reviews.models import Review, ReviewArtifact, VerifierIssue
from tests.difficulty.conftest import ATLAS_ID, make_source
from tests.difficulty.example_reports import HISTORY_EXAMPLE, INVALID_EXAMPLE

pytestmark = pytest.mark.django_db


def edit_report(run_dir: Path, change) -> None:
    path = run_dir / "difficulty.json"
    report = json.loads(path.read_text())
    change(report)
    path.write_text(json.dumps(report))


def assert_nothing_written(review: Review) -> None:
    assert not ReviewArtifact.objects.filter(review=review).exists()
    assert Source.objects.get(id=ATLAS_ID).difficulty is None


def exactly(message: str) -> str:
    return f"^{re.escape(message)}$"


def publish(run_dir: Path) -> dict:
    return publish_difficulty_run(run_dir=run_dir, atlas_id=ATLAS_ID)


def test_publication_writes_evidence_and_denormalises_the_large_model(good_source, run_dir):
    _, review = good_source
    result = publish(run_dir)
    assert result == {
        "atlas_id": ATLAS_ID,
        "review_id": review.id,
        "status": "current",
        "difficulty": "Current: Qwen/Qwen3-Coder-30B-A3B-Instruct 1/3 solved; "
        "Qwen/Qwen3.5-122B-A10B 2/3 solved; zai-org/GLM-5.3 3/3 solved; "
        "Historical: Qwen/Qwen3.5-122B-A10B (max_tokens 16384 → 32768) 3/3 solved; "
        "zai-org/GLM-5.3 (Hosted model follow-up) 2/3 solved",
        "archived_previous_report": None,
        "url": f"http://atlas.test/reviews/{review.id}/#difficulty",
    }
    assert json.loads((run_dir / RESULT_FILE).read_text()) == result
    paths = set(ReviewArtifact.objects.filter(review=review).values_list("path", flat=True))
    assert {
        "difficulty.json",
        "difficulty/small/run.json",
        "difficulty/context.json",
        "difficulty/large/attempts/task-10/solver/turn-000/response.json",
        "difficulty/hosted/attempts/task-1/verifier-trace.jsonl",
        HISTORY_EXAMPLE,
        INVALID_EXAMPLE,
    } <= paths
    source = Source.objects.get(id=ATLAS_ID)
    assert source.difficulty == result["difficulty"]
    assert source.difficulty_status == "current"
    assert source.difficulty_text == result["difficulty"]
    assert (source.large_solved, source.large_verified) == (2, 3)
    assert source.large_solve_rate == pytest.approx(2 / 3)


def test_large_solve_rate_only_for_a_current_report_of_a_good_source(good_source, run_dir):
    publish(run_dir)
    Source.objects.filter(id=ATLAS_ID).update(quality="some_issues")
    refresh_display_state(source_ids=[ATLAS_ID])
    source = Source.objects.get(id=ATLAS_ID)
    assert source.difficulty_summary is None and source.large_solve_rate is None


def test_stale_review_hides_the_large_model(good_source, run_dir):
    publish(run_dir)
    source = Source.objects.get(id=ATLAS_ID)
    changed = {**source.payload, "dataset_revision": "c" * 40}
    Source.objects.filter(id=ATLAS_ID).update(payload=changed)
    refresh_display_state(source_ids=[ATLAS_ID])
    source = Source.objects.get(id=ATLAS_ID)
    assert source.review_stale and source.large_solve_rate is None


def test_command_prints_the_result(good_source, run_dir, capsys):
    call_command("publish_difficulty", "--run-dir", str(run_dir), "--atlas-id", ATLAS_ID)
    assert json.loads(capsys.readouterr().out)["status"] == "current"


def test_command_fails_with_the_reason(good_source, run_dir):
    with pytest.raises(CommandError, match="Difficulty report names a different Atlas source"):
        call_command("publish_difficulty", "--run-dir", str(run_dir), "--atlas-id", "Other:x")


def test_replaced_report_is_archived(good_source, run_dir):
    _, review = good_source
    publish(run_dir)
    first = ReviewArtifact.objects.get(review=review, path="difficulty.json")
    edit_report(run_dir, lambda r: r.update(estimated_at="2026-02-01T08:30:00Z"))
    result = publish(run_dir)
    expected = f"difficulty/history/20260115T120000Z-{first.sha256[:12]}.json"
    assert result["archived_previous_report"] == expected
    archived = ReviewArtifact.objects.get(review=review, path=expected)
    assert archived.content == first.content
    current = ReviewArtifact.objects.get(review=review, path="difficulty.json")
    assert json.loads(current.content)["estimated_at"] == "2026-02-01T08:30:00Z"
    assert publish(run_dir)["archived_previous_report"] is None


def test_archive_path_format():
    assert (
        archive_path(estimated_at="2026-03-04T05:06:07+02:00", sha256="ab" * 32, fallback=None)
        == "difficulty/history/20260304T030607Z-abababababab.json"
    )


def test_not_good_source_is_refused(db, run_dir):
    _, review = make_source(quality="some_issues")
    with pytest.raises(DifficultyPublicationError, match=r"^Difficulty collection selects only"):
        publish(run_dir)
    assert_nothing_written(review)


def test_stale_source_is_refused(good_source, run_dir):
    source, review = good_source
    Source.objects.filter(id=ATLAS_ID).update(payload={**source.payload, "verifier_revision": "x"})
    refresh_display_state(source_ids=[ATLAS_ID])
    with pytest.raises(DifficultyPublicationError, match="not rated Good on its current revisions"):
        publish(run_dir)
    assert_nothing_written(review)


def test_open_defect_is_refused(good_source, run_dir):
    source, review = good_source
    VerifierIssue.objects.create(
        source=source, issue_url="https://github.com/example/issues/1", review=review,
        created_at="2026-01-02T00:00:00Z", updated_at="2026-01-02T00:00:00Z",
    )  # fmt: skip
    with pytest.raises(
        DifficultyPublicationError,
        match=exactly(
            "Open verifier defects withhold difficulty; resolve them and publish a new Good "
            "rating first"
        ),
    ):
        publish(run_dir)
    assert not ReviewArtifact.objects.filter(review=review).exists()


def test_inactive_source_is_refused(good_source, run_dir):
    _, review = good_source
    Source.objects.filter(id=ATLAS_ID).update(active=False)
    with pytest.raises(
        DifficultyPublicationError, match=exactly("Atlas source is absent or inactive")
    ):
        publish(run_dir)
    assert_nothing_written(review)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("sampling"), "Difficulty report lacks sampling"),
        (lambda r: r.update(source_revision="f" * 40),
         "Difficulty report covers a different data revision than the current Atlas source"),
        (lambda r: r["protocol"].update(id="atlas-difficulty-qwen35-9b"),
         "Difficulty report does not follow the current protocol: Earlier model identities or "
         "generation budgets; retained as historical evidence."),
        (lambda r: r["protocol"].update(max_output_tokens=8192),
         "Difficulty report does not follow the current protocol: The recorded context or output "
         "limits do not match the current protocol."),
        (lambda r: r["models"][0]["task_outcomes"][0].update(execution_path="difficulty/nowhere"),
         "Difficulty evidence missing: difficulty/nowhere"),
        (lambda r: r["protocol"]["run_identities"][1].update(run_identity_path="../run.json"),
         "Difficulty evidence path escapes the run directory: ../run.json"),
        (lambda r: r["protocol"]["artifacts"].append({"path": "/etc/passwd"}),
         "Difficulty evidence path escapes the run directory: /etc/passwd"),
    ],
)  # fmt: skip
def test_report_gates_write_nothing(good_source, run_dir, change, message):
    _, review = good_source
    edit_report(run_dir, change)
    with pytest.raises(DifficultyPublicationError) as error:
        publish(run_dir)
    assert str(error.value) == message
    assert_nothing_written(review)
    assert not (run_dir / RESULT_FILE).exists()


def test_not_a_report_is_refused(good_source, run_dir):
    (run_dir / "difficulty.json").write_text("[]")
    with pytest.raises(
        DifficultyPublicationError, match=exactly("Artifact is not a model comparison report")
    ):
        publish(run_dir)


def test_missing_run_identity_is_refused(good_source, run_dir):
    (run_dir / "difficulty/large/run.json").unlink()
    with pytest.raises(DifficultyPublicationError, match=r"missing: difficulty/large/run\.json$"):
        publish(run_dir)


def test_symlink_escaping_the_run_directory_is_refused(good_source, run_dir, tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    target = run_dir / "difficulty/small/run.json"
    target.unlink()
    os.symlink(outside, target)
    with pytest.raises(DifficultyPublicationError, match="escapes the run directory"):
        publish(run_dir)


def test_non_utf8_cited_evidence_is_refused_and_uncited_is_skipped(good_source, run_dir):
    _, review = good_source
    (run_dir / "difficulty/notes.bin").write_bytes(b"\xff\xfe")
    attempt = run_dir / "difficulty/small/attempts/task-1/verifier.stderr"
    attempt.write_bytes(b"\xff")
    with pytest.raises(
        DifficultyPublicationError,
        match=exactly(
            "Review evidence must be UTF-8 text: difficulty/small/attempts/task-1/verifier.stderr"
        ),
    ):
        publish(run_dir)
    attempt.unlink()
    publish(run_dir)
    assert not ReviewArtifact.objects.filter(review=review, path="difficulty/notes.bin").exists()


def test_size_limit(good_source, run_dir, settings):
    settings.ATLAS_MAX_ARTIFACT_BYTES = 1000
    with pytest.raises(DifficultyPublicationError, match=r"^Review evidence exceeds 1000 bytes: "):
        publish(run_dir)


def test_existing_artifact_with_different_content_is_refused(good_source, run_dir):
    _, review = good_source
    ReviewArtifact.objects.create(
        review=review, path="difficulty/context.json", content="{}", sha256="0" * 64, size=2
    )
    with pytest.raises(
        DifficultyPublicationError,
        match=exactly("Artifact difficulty/context.json already exists with different content"),
    ):
        publish(run_dir)
    assert ReviewArtifact.objects.filter(review=review).count() == 1


def attestation(**overrides):
    document = {
        "schema_version": 1,
        "scope": ["load_tasks", "launch_worker", "check_code_identity"],
        "original": {"path": "a.py", "file_sha256": "1" * 64, "definitions_sha256": "d" * 64},
        "executed": {"path": "b.py", "file_sha256": "2" * 64, "definitions_sha256": "d" * 64},
        "definitions": [{"name": "load_tasks", "original_sha256": "e", "executed_sha256": "e"}],
        "imports": {"original": ["json"], "executed": ["json"]},
        "matching": True,
        "limitations": [],
    }
    document.update(overrides)
    return document


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (attestation(matching=False), "Execution implementation attestation is inconsistent"),
        (attestation(definitions=[{"name": "x", "original_sha256": "a", "executed_sha256": "b"}]),
         "Execution implementation attestation is inconsistent"),
        (attestation(matching=False, executed={"definitions_sha256": "f" * 64}),
         "Execution implementation differs from the original run; publish validation of the "
         "changed execution code"),
        (attestation(matching=False, executed={"definitions_sha256": "f" * 64},
                     changed_code_validation=[{"path": "validation.md", "description": "x"}]),
         "Execution implementation differs from the original run; publish validation of the "
         "changed execution code"),
    ],
)  # fmt: skip
def test_attestation_rules(good_source, run_dir, document, message):
    (run_dir / ATTESTATION_PATH).write_text(json.dumps(document))
    with pytest.raises(DifficultyPublicationError) as error:
        publish(run_dir)
    assert str(error.value) == message


def test_changed_attestation_with_validation_evidence_is_published(good_source, run_dir):
    _, review = good_source
    (run_dir / "validation.md").write_text("Validated.")
    document = attestation(
        matching=False,
        executed={"definitions_sha256": "f" * 64},
        changed_code_validation=[{"path": "validation.md", "description": "rerun"}],
    )
    (run_dir / ATTESTATION_PATH).write_text(json.dumps(document))
    publish(run_dir)
    assert ReviewArtifact.objects.filter(review=review, path=ATTESTATION_PATH).exists()
    # The validation it names is archived with it, so the page's "evidence published" is true.
    assert ReviewArtifact.objects.get(review=review, path="validation.md").content == "Validated."


def test_plain_http_validation_links_do_not_count(good_source, run_dir):
    document = attestation(
        matching=False,
        executed={"definitions_sha256": "f" * 64},
        changed_code_validation=[{"url": "http://example.org/validation", "description": "x"}],
    )
    (run_dir / ATTESTATION_PATH).write_text(json.dumps(document))
    with pytest.raises(DifficultyPublicationError, match=r"^Execution implementation differs"):
        publish(run_dir)


def test_text_with_nul_bytes_is_not_text(good_source, run_dir):
    _, review = good_source
    attempt = run_dir / "difficulty/small/attempts/task-1/verifier.stderr"
    attempt.write_bytes(b"log\x00line")
    with pytest.raises(
        DifficultyPublicationError,
        match=exactly(
            "Review evidence must be UTF-8 text: difficulty/small/attempts/task-1/verifier.stderr"
        ),
    ):
        publish(run_dir)
    assert_nothing_written(review)


def test_source_revision_is_optional(good_source, run_dir):
    edit_report(run_dir, lambda r: r.pop("source_revision"))
    assert publish(run_dir)["status"] == "current"


def test_difficulty_evidence_with_a_hard_link_out_is_refused(good_source, run_dir, tmp_path):
    attempt = next(path for path in sorted(run_dir.rglob("*.json")) if "attempts" in path.parts)
    relative = attempt.relative_to(run_dir).as_posix()
    outside = tmp_path / "outside.json"
    outside.write_bytes(attempt.read_bytes())
    attempt.unlink()
    os.link(outside, attempt)
    with pytest.raises(
        DifficultyPublicationError,
        match=f"^Difficulty evidence path escapes the run directory: {relative}$",
    ):
        publish_difficulty_run(run_dir=run_dir, atlas_id=ATLAS_ID)
    assert not ReviewArtifact.objects.filter(path=relative).exists()


def test_a_report_counted_from_a_superseded_review_is_refused_naming_both(good_source, run_dir):
    """make_difficulty read the current review and the Atlas row from saved files
    (source.current_review, source.grading_snapshot); after a newer rating publication they
    name the superseded review, and the report would be attached to the new one as if counted
    from it. Publication refuses the mismatch, naming both reviews; nothing is written."""
    _, review = good_source
    superseded = "b" * 64
    context_path = run_dir / "difficulty" / "context.json"
    context = json.loads(context_path.read_text())
    context["reviewer_rollout_baseline"]["review_id"] = superseded
    context_path.write_text(json.dumps(context))
    expected = (
        f"Difficulty report was counted from review {superseded} (difficulty/context.json), but "
        f"the source's current review is {review.id}: run make_difficulty again with "
        f"source.current_review and source.grading_snapshot of review {review.id}"
    )
    with pytest.raises(DifficultyPublicationError, match=exactly(expected)):
        publish(run_dir)
    assert_nothing_written(review)
    # Each arm's run identity names the review its row came from, too.
    context["reviewer_rollout_baseline"]["review_id"] = review.id
    context_path.write_text(json.dumps(context))
    arm = run_dir / "difficulty" / "small" / "run.json"
    identity = json.loads(arm.read_text())
    arm.write_text(json.dumps({**identity, "atlas_review_id": superseded}))
    with pytest.raises(DifficultyPublicationError, match=re.escape("difficulty/small/run.json")):
        publish(run_dir)
    assert_nothing_written(review)
    # Counted from the current review: published.
    arm.write_text(json.dumps({**identity, "atlas_review_id": review.id}))
    assert publish(run_dir)["review_id"] == review.id
