"""Published collections for defect tests, stored directly (publication is tested elsewhere)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from django.utils import timezone

from reviews.models import Review, ReviewArtifact

ISSUE_URL = "https://github.com/marin-community/MarinSkyRL/issues/4242"


def _review(review_id: str, method: str, **extra: Any) -> dict[str, Any]:
    body = {
        "id": review_id,
        "subject_id": "subject-source",
        "method": method,
        "tests_executed": None,
        "reviewed_at": "2026-11-01T00:00:00Z",
        "summary": f"{method} review",
        "verdict": "keep",
        "findings": [],
        "evidence": [],
        "attributes": {},
    }
    body.update(extra)
    return body


def runtime_review(*, verified: bool = True, tests_executed: Any = True, with_evidence: bool = True,
                   execution_path: str = "tasks/0/execution-1") -> dict[str, Any]:  # fmt: skip
    evidence = (
        [{"snapshot_path": "tasks/0/execution-1/attempt.json", "sha256": "0" * 64}]
        if with_evidence
        else []
    )
    return _review(
        "runtime-1",
        "runtime_execution",
        tests_executed=tests_executed,
        evidence=evidence,
        attributes={
            "verification": {"status": "verified" if verified else "error"},
            "execution_path": execution_path,
        },
    )


def defect_review(*, issue_url: str | None = ISSUE_URL, with_issue: bool = True) -> dict[str, Any]:
    attributes: dict[str, Any] = {"review_pool_role": "verifier_defect"}
    if issue_url is not None:
        attributes["issue_url"] = issue_url
    findings = (
        [{"id": "f1", "kind": "issue", "severity": "high", "text": "rejects valid answers"}]
        if with_issue
        else [{"id": "f1", "kind": "observation", "severity": None, "text": "note"}]
    )
    return _review("defect-1", "static_inspection", findings=findings, attributes=attributes)


def resolution_entry(source, **overrides: Any) -> dict[str, Any]:
    entry = {
        "issue_url": ISSUE_URL,
        "dataset_revision": source.payload["dataset_revision"],
        "verifier_revision": source.payload["verifier_revision"],
        "fix_validated": True,
        "validation_evidence": "tasks/0/execution-1/attempt.json",
    }
    entry.update(overrides)
    return entry


def fix_review(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return _review(
        "synthesis-1",
        "synthesis",
        evidence=[{"snapshot_path": "tasks/0/execution-1/attempt.json", "sha256": "0" * 64}],
        attributes={"resolved_verifier_issues": entries},
    )


def store_collection(
    source, reviews: list[dict[str, Any]], *, kind: str = "rating",
    updated_at: dt.datetime | None = None, artifacts: tuple[str, ...] = (
        "tasks/0/execution-1/attempt.json",
    ),
) -> Review:  # fmt: skip
    """Store a collection as a published review with the given artifact paths."""
    collection = {"schema_version": "0.3.0", "reviews": reviews, "salt": len(Review.objects.all())}
    raw = json.dumps(collection, sort_keys=True).encode()
    review = Review.objects.create(
        id=hashlib.sha256(raw).hexdigest(),
        source=source,
        collection=collection,
        kind=kind,
        updated_at=updated_at if updated_at is not None else timezone.now(),
        published_at=timezone.now(),
    )
    for path in ("quality-reviews.json", *artifacts):
        content = raw.decode() if path == "quality-reviews.json" else "{}"
        ReviewArtifact.objects.create(
            review=review,
            path=path,
            content=content,
            sha256=hashlib.sha256(content.encode()).hexdigest(),
            size=len(content.encode()),
        )
    return review


def confirming_collection(source, **kwargs: Any) -> Review:
    return store_collection(
        source, [defect_review(**kwargs), runtime_review()], kind="supplemental"
    )
