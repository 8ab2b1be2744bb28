"""Claims held against their archived native evidence (``format/evidence_claims``), as an
adversary would attack them: a run the real gsm8k verifier graded, one archived file or one claim
edited and every ``sha256`` of ``quality-reviews.json`` recomputed so the hashes still hold.
Publication (here through the command; the upload job, the API and the admin share its service),
confirmation and resolution each refuse in one line naming the file, the field and both values,
with every table unchanged."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError

from atlas.services.sync import sync_catalog
from reviews.models import ReviewArtifact
from reviews.services.defects import DefectRuleError, resolve_verifier_issue
from tests.curation.conftest import ISSUE_URL, command
from tests.hostile.conftest import fingerprint
from tests.production.conftest import SOURCE_ID
from tests.production.helpers import load

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
PREFIX = "Claim contradicts its archived evidence: "


def rehash(run_dir: Path) -> None:
    """What an adversary does after an edit: every evidence hash made true again."""
    path = run_dir / "quality-reviews.json"
    collection = load(path)
    for review in collection["reviews"]:
        for item in review["evidence"]:
            data = (run_dir / item["snapshot_path"]).read_bytes()
            item["sha256"] = hashlib.sha256(data).hexdigest()
    path.write_text(json.dumps(collection, indent=2) + "\n", encoding="utf-8")


def forge(run_dir: Path, relative: str, edit: Callable[[dict[str, Any]], Any]) -> None:
    path = run_dir / relative
    document = load(path)
    edit(document)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    rehash(run_dir)


def refused_publication(run_dir: Path) -> str:
    """The refusal of publishing ``run_dir``, with every table unchanged."""
    before = fingerprint()
    with pytest.raises(CommandError) as failure:
        command("publish_review", "--run-dir", str(run_dir), "--atlas-id", SOURCE_ID)
    assert fingerprint() == before
    message = str(failure.value)
    assert "\n" not in message
    return message


def runtime_review(run_dir: Path, execution: str) -> dict[str, Any]:
    collection = load(run_dir / "quality-reviews.json")
    return next(
        review
        for review in collection["reviews"]
        if review["attributes"].get("execution_path") == execution
    )


def edit_runtime_claim(key: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    def edit(collection: dict[str, Any]) -> None:
        review = next(r for r in collection["reviews"] if r["method"] == "runtime_execution")
        if key == "tests_executed":
            review["tests_executed"] = value
        else:
            review["attributes"]["verification"][key] = value

    return edit


def set_attempt(**changes: Any) -> Callable[[dict[str, Any]], Any]:
    def edit(attempt: dict[str, Any]) -> None:
        for key, value in changes.items():
            if key == "verifier_executed":
                attempt[key] = value
            else:
                attempt["verification"][key] = value

    return edit


# --- runtime reviews --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "edit", "expected"),
    [
        # The native run failed; the review still claims verified.
        (
            "tasks/0000/execution-000/attempt.json",
            set_attempt(status="error"),
            'tasks/0000/execution-000/attempt.json verification.status is "error", '
            'review {review} says "verified"',
        ),
        # The review claims a score the native verifier never gave.
        (
            "quality-reviews.json",
            edit_runtime_claim("score", 1.0),
            "tasks/0000/execution-000/attempt.json verification.score is 0.0, "
            "review {review} says 1.0",
        ),
        # A verifier that never ran, claimed as executed.
        (
            "tasks/0000/execution-000/attempt.json",
            set_attempt(verifier_executed=False),
            "tasks/0000/execution-000/attempt.json verifier_executed is false, "
            "review {review} says true",
        ),
    ],
    ids=["attempt-status", "claimed-score", "verifier-not-run"],
)
def test_a_runtime_claim_its_native_attempt_contradicts_is_refused(
    buggy_run, packaged_catalog, relative, edit, expected
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    review = runtime_review(buggy_run, "tasks/0000/execution-000")["id"]
    forge(buggy_run, relative, edit)
    assert refused_publication(buggy_run) == PREFIX + expected.format(review=review)


# --- verifier-defect reproductions ------------------------------------------------------------


def test_a_reproduction_its_native_runs_do_not_bear_out_is_refused(validated_fix):
    reproduction = validated_fix.reproduction
    # Published and confirmed unchanged by the fixture; with the verifier accepting the first
    # case (no contradiction left there) and the hashes fixed, it is a new collection, refused.
    forge(reproduction, "tasks/0000/execution-000/attempt.json", set_attempt(passed=True))
    assert refused_publication(reproduction) == PREFIX + (
        'tasks/0000/execution-000/attempt.json verification is "accepted", '
        'reproduction.json cases[0].observed says "rejected"'
    )


def test_confirmation_holds_the_stored_reproduction_to_its_runs(validated_fix):
    """An archive stored before the rule (or written around publication) is held at confirmation:
    its reproduction record claims a case its native run does not show."""
    review_id = validated_fix.confirming_review_id
    record = ReviewArtifact.objects.get(review_id=review_id, path="reproduction.json")
    report = json.loads(record.content)
    report["cases"][1]["observed"] = "accepted"
    ReviewArtifact.objects.filter(pk=record.pk).update(content=json.dumps(report))
    before = fingerprint()
    with pytest.raises(CommandError) as failure:
        command(
            "confirm_verifier_issue", "--atlas-id", SOURCE_ID, "--review-id", review_id,
            "--issue-url", ISSUE_URL,
        )  # fmt: skip
    assert fingerprint() == before
    assert str(failure.value) == PREFIX + (
        'tasks/0001/execution-000/attempt.json verification is "rejected", '
        'reproduction.json cases[1].observed says "accepted"'
    )


# --- fix validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "edit", "expected"),
    [
        # The validation said the fix failed; the resolution entry says validated.
        (
            "validation/validation.json",
            lambda record: record.update(fix_validated=False),
            "validation/validation.json fix_validated is false, review {review} "
            "resolved_verifier_issues says true",
        ),
        # A saved failing input is still rejected by the repaired verifier.
        (
            "validation/tasks/0000/execution-000/attempt.json",
            set_attempt(passed=False),
            'validation/tasks/0000/execution-000/attempt.json verification is "rejected", '
            'validation/validation.json cases[0].observed says "accepted"',
        ),
        # The validation record and its entry agree, but the native run says rejected.
        (
            "validation/tasks/0002/execution-000/attempt.json",
            set_attempt(passed=True),
            'validation/tasks/0002/execution-000/attempt.json verification is "accepted", '
            'validation/validation.json cases[2].observed says "rejected"',
        ),
    ],
    ids=["fix-not-validated", "failing-input-still-rejected", "control-accepted"],
)
def test_a_fix_its_validation_record_does_not_bear_out_is_refused(
    validated_fix, relative, edit, expected
):
    fix = validated_fix.fix
    review = fix_validation_review(fix)
    forge(fix, relative, edit)
    assert refused_publication(fix) == PREFIX + expected.format(review=review)


def fix_validation_review(fix: Path) -> str:
    collection = load(fix / "quality-reviews.json")
    return next(
        r["id"] for r in collection["reviews"] if r["attributes"].get("resolved_verifier_issues")
    )


def test_every_native_run_failed_while_the_reviews_claim_verified(validated_fix):
    """The issue's own example: status error in every attempt of the fix, hashes recomputed."""
    fix = validated_fix.fix
    for attempt in sorted(fix.glob("**/execution-*/attempt.json")):
        forge(fix, attempt.relative_to(fix).as_posix(), set_attempt(status="error"))
    message = refused_publication(fix)
    assert message.startswith(PREFIX + "tasks/0000/execution-000/attempt.json verification.status")
    assert message.endswith(
        'is "error", review '
        + runtime_review(fix, "tasks/0000/execution-000")["id"]
        + ' says "verified"'
    )


def test_resolution_holds_the_stored_validation_to_its_record(walked_fix):
    """A resolution collection whose stored validation record no longer says validated (an
    archive from before the rule) is refused by resolve_verifier_issue; nothing changes."""
    published = json.loads(
        command("publish_review", "--run-dir", str(walked_fix.fix), "--atlas-id", SOURCE_ID)
    )
    record = ReviewArtifact.objects.get(
        review_id=published["review_id"], path="validation/validation.json"
    )
    ReviewArtifact.objects.filter(pk=record.pk).update(
        content=record.content.replace('"fix_validated": true', '"fix_validated": false')
    )
    before = fingerprint()
    with pytest.raises(DefectRuleError) as failure:
        resolve_verifier_issue(
            source_id=SOURCE_ID,
            issue_url=ISSUE_URL,
            resolution_review_id=published["review_id"],
        )
    assert fingerprint() == before
    review = fix_validation_review(walked_fix.fix)
    assert str(failure.value).endswith(
        PREFIX + f"validation/validation.json fix_validated is false, review {review} "
        "resolved_verifier_issues says true"
    )
