"""Confirmed verifier defects: confirmation, demotion and validated resolution.

The one place these rules live. Every entry point (command, API, admin) calls
``confirm_verifier_issue`` / ``resolve_verifier_issue``; ``refuse_good_while_open`` guards a
curator's quality edit (registered with ``atlas.contributions``). The database refuses every other
writer (``reviews.defect_invariant``): both services write inside ``defect_writer()``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from atlas.contributions import CuratedEditRefused
from atlas.models import Source
from atlas.rules.display_state import capped_for_open_defect
from atlas.rules.vocabularies import ChangeKind, Quality
from atlas.services.changes import curation_state, record_curation
from atlas.services.display import refresh_display_state
from reviews.defect_invariant import defect_writer
from reviews.links import REVIEW_NOT_FOUND
from reviews.models import Review, ReviewArtifact, VerifierIssue, VerifierIssueReproduction
from reviews.production.format import evidence_claims
from reviews.production.format.github_issues import is_github_issue_url, not_an_issue
from reviews.vocabularies import ReviewKind

RESOLUTION_PREFIX = (
    "Resolve verifier defects with a fresh native review and applicable fix evidence: "
)
CAP_MESSAGE = (
    "Open verifier defects cap this source at Some issues; resolve them with a fresh native "
    "review, then publish a new rating"
)


class DefectRuleError(Exception):
    """A defect rule refused the request; ``str(exc)`` is the message for the user."""


def has_open_defect(*, source_id: str) -> bool:
    return VerifierIssue.objects.open().filter(source_id=source_id).exists()


# --- confirmation ---------------------------------------------------------------------------


def validate_confirmation(
    *, source_id: str, issue_url: str, review_id: str
) -> tuple[Source, Review]:
    source = Source.objects.filter(id=source_id).first()
    if source is None:
        raise DefectRuleError(f"Source not found: {source_id}")
    if not is_github_issue_url(issue_url):
        raise DefectRuleError(not_an_issue(issue_url))
    review = Review.objects.filter(id=review_id).first()
    if review is None:
        raise DefectRuleError(REVIEW_NOT_FOUND)
    if review.source_id != source.id:
        raise DefectRuleError("The confirming review belongs to another source")
    reviews = _reviews_of(review)
    defect_reviews = [
        r
        for r in reviews
        if _attributes(r).get("review_pool_role") == "verifier_defect"
        and any(f.get("kind") == "issue" for f in r.get("findings") or [])
    ]
    if not defect_reviews:
        raise DefectRuleError(
            "A confirmed defect needs a verifier_defect review in the source's review pool"
        )
    named = [_attributes(r).get("issue_url") for r in defect_reviews]
    if all(url is not None and url != issue_url for url in named):
        raise DefectRuleError("The verifier_defect review names a different issue")
    if not any(
        r.get("method") == "runtime_execution" and r.get("tests_executed") is True for r in reviews
    ):
        raise DefectRuleError("A confirmed defect needs a native execution that reproduces it")
    try:
        archive = StoredArchive(review)
        evidence_claims.check_runtime_reviews(collection=review.collection, archive=archive)
        evidence_claims.check_reproductions(
            collection=review.collection, archive=archive, required=True
        )
    except evidence_claims.ClaimContradicted as exc:
        raise DefectRuleError(str(exc)) from None
    existing = VerifierIssue.objects.filter(source_id=source.id, issue_url=issue_url).first()
    if existing is not None and existing.status != VerifierIssue.Status.OPEN:
        raise DefectRuleError(
            "This issue was already resolved for the source; record a regression under a new "
            "GitHub issue"
        )
    if existing is not None and review.id in existing.reproduction_review_ids():
        raise DefectRuleError("This defect is already recorded for the source")
    return source, review


def confirm_verifier_issue(
    *, source_id: str, issue_url: str, review_id: str, user=None, actor: str = ""
) -> VerifierIssue:
    """Record an open defect and demote the source, in one transaction under a source row lock.
    An open defect already recorded under ``issue_url`` gets the collection as a further
    reproduction instead (``add_reproduction``). ``actor`` names who acted when ``user`` is no
    account (a command line: the operating-system user or ``--curator``)."""
    with transaction.atomic(), defect_writer():
        Source.objects.select_for_update().filter(id=source_id).first()
        source, review = validate_confirmation(
            source_id=source_id, issue_url=issue_url, review_id=review_id
        )
        before = curation_state(source_id=source.id)
        now = timezone.now()
        existing = VerifierIssue.objects.open().filter(source=source, issue_url=issue_url).first()
        if existing is not None:
            return _add_reproduction(
                issue=existing, review=review, before=before, user=user, actor=actor, now=now
            )
        issue = VerifierIssue.objects.create(
            source=source,
            issue_url=issue_url,
            review=review,
            status=VerifierIssue.Status.OPEN,
            created_at=now,
            updated_at=now,
            created_by=user if getattr(user, "pk", None) else None,
        )
        Source.objects.filter(id=source.id).update(
            quality=capped_for_open_defect(source.quality), difficulty=None
        )
        refresh_display_state(source_ids=[source.id])
        record_curation(
            kind=ChangeKind.DEFECT_CONFIRMED,
            source_id=source.id,
            before=before,
            user=user,
            actor=actor,
            review_id=review.id,
            issue_url=issue_url,
            note="Capped at Some issues and difficulty withheld until a validated fix",
        )
    return issue


ADDED_NOTE = (
    "Another reproduction added to the open defect; the fix is validated against the failing "
    "inputs of every reproduction"
)


def _add_reproduction(
    *, issue: VerifierIssue, review: Review, before: dict[str, Any], user, actor: str, now
) -> VerifierIssue:
    """A further reproduction of an open defect (validated as a confirmation is): recorded with
    it, in the history under the same kind as the confirmation it extends."""
    VerifierIssueReproduction.objects.create(
        issue=issue,
        review=review,
        added_at=now,
        added_by=user if getattr(user, "pk", None) else None,
    )
    record_curation(
        kind=ChangeKind.DEFECT_CONFIRMED,
        source_id=issue.source_id,
        before=before,
        user=user,
        actor=actor,
        review_id=review.id,
        issue_url=issue.issue_url,
        note=ADDED_NOTE,
    )
    return issue


# --- resolution -----------------------------------------------------------------------------


NOT_OPEN = "the issue is not open"


def _refuse(reason: str) -> DefectRuleError:
    return DefectRuleError(RESOLUTION_PREFIX + reason)


def validate_resolution(*, issue: VerifierIssue | None, resolution_review_id: str) -> Review:
    if issue is None or issue.status != VerifierIssue.Status.OPEN:
        raise _refuse(NOT_OPEN)
    review = Review.objects.filter(id=resolution_review_id).first()
    if review is None or review.source_id != issue.source_id or review.kind != ReviewKind.RATING:
        raise _refuse("the resolution review is not a published source review of this source")
    if review.id == issue.review_id:
        raise _refuse("the resolution review is the review that confirmed the defect")
    if review.updated_at is None or review.updated_at <= issue.created_at:
        raise _refuse("the resolution review is not newer than the defect")
    reviews = _reviews_of(review)
    artifact_paths = set(
        ReviewArtifact.objects.filter(review=review).values_list("path", flat=True)
    )
    if not any(_is_verified_native_run(r, artifact_paths) for r in reviews):
        raise _refuse("no verified native runtime_execution review with tests_executed true")
    source = Source.objects.get(id=issue.source_id)
    reason = _entry_failure(
        reviews,
        issue_url=issue.issue_url,
        dataset_revision=source.payload.get("dataset_revision"),
        verifier_revision=source.payload.get("verifier_revision"),
    )
    if reason:
        raise _refuse(reason)
    try:
        archive = StoredArchive(review)
        evidence_claims.check_runtime_reviews(collection=review.collection, archive=archive)
        evidence_claims.check_fix_validations(
            collection=review.collection,
            archive=archive,
            issue_url=issue.issue_url,
            resolving=True,
        )
    except evidence_claims.ClaimContradicted as exc:
        raise _refuse(str(exc)) from None
    return review


def resolve_verifier_issue(
    *, issue_id: int | None = None, source_id: str | None = None, issue_url: str | None = None,
    resolution_review_id: str, user=None, actor: str = "",
) -> VerifierIssue:  # fmt: skip
    """Resolve an open defect with a validated fix; never restores a rating by itself."""
    with transaction.atomic(), defect_writer():
        lookup = {"id": issue_id} if issue_id is not None else {
            "source_id": source_id, "issue_url": issue_url
        }  # fmt: skip
        issue = VerifierIssue.objects.filter(**lookup).first()
        if issue is None:
            raise _refuse(NOT_OPEN)
        Source.objects.select_for_update().filter(id=issue.source_id).first()
        issue = VerifierIssue.objects.select_for_update().get(pk=issue.pk)
        review = validate_resolution(issue=issue, resolution_review_id=resolution_review_id)
        before = curation_state(source_id=issue.source_id)
        issue.status = VerifierIssue.Status.RESOLVED
        issue.resolution_review = review
        issue.updated_at = timezone.now()
        issue.resolved_by = user if getattr(user, "pk", None) else None
        issue.save(update_fields=["status", "resolution_review", "updated_at", "resolved_by"])
        refresh_display_state(source_ids=[issue.source_id])
        record_curation(
            kind=ChangeKind.DEFECT_RESOLVED,
            source_id=issue.source_id,
            before=before,
            user=user,
            actor=actor,
            review_id=review.id,
            issue_url=issue.issue_url,
            note=after_resolution(source_id=issue.source_id),
        )
    return issue


RESTORE_GOOD = (
    "Good returns only with a new rating publication: publish the resolution's review again to "
    "restore Good"
)


def after_resolution(*, source_id: str) -> str:
    """What is left to do once a defect is resolved (resolution never restores a rating by
    itself): the history's note, the admin's message and the command's next step."""
    if has_open_defect(source_id=source_id):
        return "Other verifier defects of the source remain open"
    quality = Source.objects.filter(id=source_id).values_list("effective_quality", flat=True)
    if quality.first() == Quality.GOOD:
        return ""
    return RESTORE_GOOD


def _is_verified_native_run(review: dict[str, Any], artifact_paths: set[str]) -> bool:
    attributes = _attributes(review)
    verification = attributes.get("verification")
    return (
        review.get("method") == "runtime_execution"
        and review.get("tests_executed") is True
        and isinstance(verification, dict)
        and verification.get("status") == "verified"
        and isinstance(attributes.get("execution_path"), str)
        and attributes["execution_path"] != ""
        and any(
            item.get("snapshot_path") in artifact_paths for item in review.get("evidence") or []
        )
    )


ENTRY_CHECKS = (
    ("verifier_revision_recorded", "the entry does not record verifier_revision"),
    ("dataset_revision", "the entry covers a different dataset revision"),
    ("verifier_revision", "the entry covers a different verifier revision"),
    ("fix_validated", "fix_validated is not true"),
)


def _entry_failure(
    reviews: list[dict[str, Any]], *, issue_url: str, dataset_revision, verifier_revision
) -> str | None:
    """None when one entry is fully valid, else the reason of the closest entry."""
    entries = [
        entry
        for review in reviews
        for entry in _attributes(review).get("resolved_verifier_issues") or []
        if isinstance(entry, dict) and entry.get("issue_url") == issue_url
    ]
    if not entries:
        return f"no resolved_verifier_issues entry for {issue_url}"
    best_index = -1
    for entry in entries:
        passed = {
            "verifier_revision_recorded": "verifier_revision" in entry,
            "dataset_revision": entry.get("dataset_revision") is not None
            and entry.get("dataset_revision") == dataset_revision,
            "verifier_revision": "verifier_revision" in entry
            and entry.get("verifier_revision") == verifier_revision,
            "fix_validated": entry.get("fix_validated") is True,
        }
        first_failure = next(
            (i for i, (key, _) in enumerate(ENTRY_CHECKS) if not passed[key]), None
        )
        if first_failure is None:
            return None
        best_index = max(best_index, first_failure)
    return ENTRY_CHECKS[best_index][1]


# --- the invariant for curated edits ----------------------------------------------------


def refuse_good_while_open(*, source_id: str, quality: str | None) -> None:
    """The curated edit guard: a quality the open-defect cap would change is refused."""
    if capped_for_open_defect(quality) != quality and has_open_defect(source_id=source_id):
        raise CuratedEditRefused(CAP_MESSAGE)


class StoredArchive(Mapping[str, str]):
    """A published collection's artifacts as ``evidence_claims`` reads an archive: paths listed
    once, each file's text loaded only when a check opens it."""

    def __init__(self, review: Review) -> None:
        self._review = review
        self._paths = frozenset(
            ReviewArtifact.objects.filter(review=review).values_list("path", flat=True)
        )

    def __getitem__(self, path: str) -> str:
        if path not in self._paths:
            raise KeyError(path)
        return (
            ReviewArtifact.objects.filter(review=self._review, path=path)
            .values_list("content", flat=True)
            .get()
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def _reviews_of(review: Review) -> list[dict[str, Any]]:
    items = (review.collection or {}).get("reviews") or []
    return [item for item in items if isinstance(item, dict)]


def _attributes(review: dict[str, Any]) -> dict[str, Any]:
    attributes = review.get("attributes")
    return attributes if isinstance(attributes, dict) else {}
