"""Publication of a review run directory and curator grading bindings.

Validation and every write happen in one transaction holding a row lock on the source; the display
state is recomputed before the transaction ends.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from atlas.db.gc_pause import collector_paused
from atlas.models import Source
from atlas.rules import timestamps
from atlas.rules.display_state import capped_for_open_defect
from atlas.rules.vocabularies import ChangeKind
from atlas.services.changes import curation_state, record_curation
from atlas.services.display import refresh_display_state
from reviews.applicability import BindingClaim, RowRevisions, binding_is_valid
from reviews.identity import executed_commit
from reviews.models import (
    GradingBinding,
    Review,
    ReviewArtifact,
)
from reviews.production.format.evidence_set import GRADING_CLAIM_PATH
from reviews.rating import derive_rating
from reviews.services.defects import has_open_defect
from reviews.services.intake import store_new_artifacts
from reviews.services.validation import PublicationRejected, ValidatedRun, validate_run_directory
from reviews.vocabularies import ReviewKind

logger = logging.getLogger(__name__)

CONFLICT_MESSAGE = (
    "Atlas source changed during publication; evidence archived without changing its current rating"
)
CURATED_UPDATE_FIELDS = [
    "quality", "review_id", "review_date", "review_source_revision", "review_verifier_revision",
    "traces", "difficulty",
]  # fmt: skip
BINDING_REFUSED = (
    "Grading proof does not establish equivalence for this source, review and revision"
)


class PublicationConflict(Exception):
    """expected_review_id no longer names the current review: the collection was archived into the
    pool but the rating was left alone. ``result`` is what was stored."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__(CONFLICT_MESSAGE)
        self.result = result


def publish_run_directory(
    *,
    run_dir: Path,
    atlas_id: str,
    user: Any = None,
    expected_review_id: str | None = None,
) -> dict[str, Any]:
    """Validate and publish a run directory; returns the result.

    Raises ``PublicationRejected`` (nothing written) or ``PublicationConflict`` (pool evidence
    written, rating unchanged).
    """
    # Thousands of evidence files make as many records: see atlas.db.gc_pause.
    with collector_paused(), transaction.atomic():
        run = validate_run_directory(run_dir=Path(run_dir), atlas_id=atlas_id)
        before = curation_state(source_id=run.source.id)  # the source row is locked
        review, stored = _store_review(run, user)
        _store_artifacts(review, run)
        source = run.source
        conflict = (
            run.kind == ReviewKind.RATING
            and expected_review_id is not None
            and expected_review_id != source.review_id
        )
        capped = False
        if run.kind == ReviewKind.RATING and not conflict:
            capped = _apply_curated_update(source, run)
        if run.run_grading is not None:
            _bind_published_grading(source, run, user)
        refresh_display_state(source_ids=[source.id])
        # The catalog history: a new collection, or a re-publication that changed what shows.
        record_curation(
            kind=ChangeKind.REVIEW_PUBLISHED,
            source_id=source.id,
            before=before,
            user=user,
            review_id=run.review_id,
            note=_history_note(run, capped=capped, conflict=conflict),
            only_if_changed=not stored,
        )
        source.refresh_from_db()
        result = _result(
            run, source, capped=capped, rated=run.kind == ReviewKind.RATING and not conflict
        )
    if run.run_grading is not None:
        _write_grading_claim(run)
    if conflict:
        raise PublicationConflict(result)
    return result


def _store_review(run: ValidatedRun, user: Any) -> tuple[Review, bool]:
    """The collection's row and whether this publication stored it (an identical collection is
    stored once)."""
    review, created = Review.objects.get_or_create(
        id=run.review_id,
        defaults={
            "source": run.source,
            "collection": run.collection,
            "kind": run.kind,
            "updated_at": run.updated_at,
            "published_at": timezone.now(),
            "published_by": user if getattr(user, "pk", None) else None,
        },
    )
    if review.source_id != run.source.id:
        # The same bytes name one collection, stored once, in the pool of its first source.
        raise PublicationRejected(f"Review collection is already published for {review.source_id}")
    return review, created


HISTORY_NOTES: dict[str, str] = {
    ReviewKind.SUPPLEMENTAL: "Supplemental evidence in the review pool · no rating",
    ReviewKind.IMPORTED: "Imported audit in the review pool · no rating",
}


def _history_note(run: ValidatedRun, *, capped: bool, conflict: bool) -> str:
    if conflict:
        return CONFLICT_MESSAGE
    if run.identity_differences:
        return "Published as covering the revisions it executed: " + ", ".join(
            f"{difference.pin} differs from the pin" for difference in run.identity_differences
        )
    if capped:
        return "The rating is capped at Some issues while verifier defects remain open"
    return HISTORY_NOTES.get(run.kind, "")


def _store_artifacts(review: Review, run: ValidatedRun) -> None:
    store_new_artifacts(review=review, files=run.files)


def _apply_curated_update(source: Source, run: ValidatedRun) -> bool:
    """Make the collection the source's current review; returns whether open defects capped it."""
    quality = derive_rating(run.collection)
    capped = has_open_defect(source_id=source.id)
    if capped:
        quality = capped_for_open_defect(quality)
    source.quality = quality
    source.review_id = run.review_id
    source.review_date = run.updated_at
    source.review_source_revision = run.reviewed_data_revision
    # A review that executed other revisions than the row pins covers what it executed: the
    # catalog then treats it as a changed revision (reviews.identity).
    source.review_verifier_revision = (
        executed_commit(run.collection)
        if run.identity_differences
        else (source.payload or {}).get("verifier_revision")
    )
    source.traces = sum(
        1 for review in run.collection["reviews"] if review["method"] == "runtime_execution"
    )
    source.difficulty = None
    source.save(update_fields=CURATED_UPDATE_FIELDS)
    return capped


def _bind_published_grading(source: Source, run: ValidatedRun, user: Any) -> None:
    claim = next(file for file in run.files if file.path == GRADING_CLAIM_PATH)
    GradingBinding.objects.get_or_create(
        source=source,
        review_id=run.review_id,
        source_revision=run.reviewed_data_revision,
        grading_revision=source.payload["grading_revision"],
        defaults={
            "captured_verifier_revision": source.payload.get("verifier_revision"),
            "evidence_path": GRADING_CLAIM_PATH,
            "evidence_sha256": claim.sha256,
            "created_by": user if getattr(user, "pk", None) else None,
        },
    )


def _write_grading_claim(run: ValidatedRun) -> None:
    claim = next(file for file in run.files if file.path == GRADING_CLAIM_PATH)
    target = run.run_dir / GRADING_CLAIM_PATH
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(claim.content, encoding="utf-8")


def _result(run: ValidatedRun, source: Source, *, capped: bool, rated: bool) -> dict[str, Any]:
    provenance = run.collection["execution_provenance"] or {}
    review_date = run.updated_at
    return {
        "atlas_id": source.id,
        "review_id": run.review_id,
        "kind": run.kind,
        "quality": source.quality if rated else source.effective_quality,
        "review_date": timestamps.format_utc(review_date) if review_date else None,
        "marinskyrl_commit": provenance.get("marinskyrl_commit"),
        "url": f"{settings.ATLAS_PUBLIC_URL.rstrip('/')}/reviews/{run.review_id}/",
        "capped_by_verifier_issues": capped,
        "identity_differences": [d.as_dict() for d in run.identity_differences],
    }


def bind_grading_review(*, review: Review, evidence_path: str, user: Any = None) -> GradingBinding:
    """A curator's binding of a review to the source's grading revision through a proof artifact;
    refused unless the binding would be valid."""
    with transaction.atomic():
        source = Source.objects.select_for_update().get(id=review.source_id)
        row = RowRevisions.of(source)
        artifact = ReviewArtifact.objects.filter(review=review, path=evidence_path).first()
        claim = BindingClaim(
            source_id=source.id,
            review_id=review.id,
            source_revision=source.review_source_revision,
            captured_verifier_revision=source.review_verifier_revision,
            grading_revision=row.grading_revision,
            evidence_sha256=artifact.sha256 if artifact else "",
        )
        if row.grading_revision is None or not binding_is_valid(
            row=row,
            binding=claim,
            artifact_sha256=artifact.sha256 if artifact else None,
            proof_text=artifact.content if artifact else None,
        ):
            raise PublicationRejected(BINDING_REFUSED)
        binding, _ = GradingBinding.objects.get_or_create(
            source=source,
            review=review,
            source_revision=claim.source_revision,
            grading_revision=claim.grading_revision,
            defaults={
                "captured_verifier_revision": claim.captured_verifier_revision,
                "evidence_path": evidence_path,
                "evidence_sha256": claim.evidence_sha256,
                "created_by": user if getattr(user, "pk", None) else None,
            },
        )
        refresh_display_state(source_ids=[source.id])
    return binding
