"""The example verifier-defect walk of ``make demo``: one example source goes from Good to a
confirmed defect, is resolved by a fresh example review that validates the fix, and gets its
rating back — through the same publication and defect services a curator uses, so the demo shows
the whole flow on the review page, the source page, the admin and the catalog history.

Every collection is a labelled example (``reviews.examples``); the GitHub issue URL names an
examples repository, not a real defect.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from django.utils import timezone

from reviews.defects import confirm_verifier_issue, resolve_verifier_issue
from reviews.examples import FindingSpec, RunSpec, write_run_directory
from reviews.models import VerifierIssue
from reviews.publication import publish_run_directory

DEFECT_EXAMPLE_SOURCE = "MarinSkyRL:aime24"
DEFECT_EXAMPLE_ISSUE = "https://github.com/open-athena/rl-data-atlas-examples/issues/1"
DEFECT_FINDING = "Example finding: the verifier rejects a correct answer written as a fraction."


def _spec(row: dict[str, Any], *, started_at: dt.datetime, **overrides: Any) -> RunSpec:
    return RunSpec(
        source_id=row["id"],
        dataset_revision=row.get("dataset_revision"),
        repository=row.get("dataset_id") or row.get("canonical_source") or row["id"],
        population_count=row.get("task_count"),
        started_at=started_at,
        **overrides,
    )


def write_defect_run(*, output: Path, row: dict[str, Any], started_at: dt.datetime) -> Path:
    """A supplemental collection: a verifier_defect review naming the issue, with the native
    attempts that reproduce it."""
    return write_run_directory(
        output=output,
        spec=_spec(
            row,
            started_at=started_at,
            label="Verifier defect",
            source_findings=(FindingSpec("high", DEFECT_FINDING),),
            extra_attributes={
                "review_pool_role": "verifier_defect",
                "issue_url": DEFECT_EXAMPLE_ISSUE,
            },
        ),
    )


def write_fix_run(*, output: Path, row: dict[str, Any], started_at: dt.datetime) -> Path:
    """A fresh rating collection on the current revisions recording the validated fix."""
    return write_run_directory(
        output=output,
        spec=_spec(
            row,
            started_at=started_at,
            label="Good after the fix",
            extra_attributes={
                "resolved_verifier_issues": [
                    {
                        "issue_url": DEFECT_EXAMPLE_ISSUE,
                        "dataset_revision": row.get("dataset_revision"),
                        "verifier_revision": row.get("verifier_revision"),
                        "fix_validated": True,
                        "validation_evidence": "tasks/0000/execution-000/attempt.json",
                    }
                ]
            },
        ),
    )


def publish_defect_example(*, output: Path, row: dict[str, Any]) -> list[dict[str, Any]]:
    """Good → confirmed defect → validated resolution → Good again, for ``row``'s source.
    Already done (the issue is resolved) → nothing is written again."""
    existing = VerifierIssue.objects.filter(
        source_id=row["id"], issue_url=DEFECT_EXAMPLE_ISSUE
    ).first()
    if existing is not None and existing.status == VerifierIssue.Status.RESOLVED:
        return [{"atlas_id": row["id"], "verifier_issue": existing.issue_url, "status": "resolved"}]
    results = []
    now = timezone.now().replace(microsecond=0)
    if existing is None:
        good = write_run_directory(
            output=output / "good",
            spec=_spec(row, started_at=now - dt.timedelta(days=2), label="Good"),
        )
        results.append(publish_run_directory(run_dir=good, atlas_id=row["id"]))
        defect = write_defect_run(
            output=output / "defect", row=row, started_at=now - dt.timedelta(days=1)
        )
        confirming = publish_run_directory(run_dir=defect, atlas_id=row["id"])
        results.append(confirming)
        existing = confirm_verifier_issue(
            source_id=row["id"],
            issue_url=DEFECT_EXAMPLE_ISSUE,
            review_id=confirming["review_id"],
        )
        # The example's story spans a day: the defect was confirmed before the fix review's
        # judgments, which may not lie in the future.
        VerifierIssue.objects.filter(pk=existing.pk).update(
            created_at=now - dt.timedelta(hours=12), updated_at=now - dt.timedelta(hours=12)
        )
    fix = write_fix_run(output=output / "fix", row=row, started_at=now - dt.timedelta(hours=6))
    capped = publish_run_directory(run_dir=fix, atlas_id=row["id"])
    results.append(capped)
    resolved = resolve_verifier_issue(
        issue_id=existing.pk, resolution_review_id=capped["review_id"]
    )
    results.append(
        {"atlas_id": row["id"], "verifier_issue": resolved.issue_url, "status": resolved.status}
    )
    # Resolution never restores Good by itself: publishing the fix again, uncapped, does.
    results.append(publish_run_directory(run_dir=fix, atlas_id=row["id"]))
    return results
