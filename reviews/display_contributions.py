"""What reviews contribute to the catalog's display state (through ``atlas.contributions``): open
verifier defects, the validity of grading bindings and whether the current review is a labelled
example. Registered in ``ReviewsConfig.ready()``; at most three queries per batch of sources."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db.models import OuterRef, Subquery

from atlas.rules import timestamps
from atlas.rules.display_state import DisplayContext, SourceSnapshot
from reviews.applicability import BindingClaim, RowRevisions, binding_is_valid
from reviews.example_label import ExampleCollection
from reviews.models import GradingBinding, Review, ReviewArtifact, VerifierIssue


def open_issue_row(issue: VerifierIssue) -> dict[str, Any]:
    """An open defect as catalog rows and review reads list it."""
    return {
        "issue_url": issue.issue_url,
        "review_id": issue.review_id,
        "status": issue.status,
        "created_at": timestamps.format_utc(issue.created_at),
    }


def defects_and_grading(
    *, sources: Sequence[SourceSnapshot], contexts: Mapping[str, DisplayContext]
) -> dict[str, dict[str, Any]]:
    ids = [source.id for source in sources]
    open_issues: dict[str, list[dict[str, Any]]] = {}
    for issue in (
        VerifierIssue.objects.open().filter(source_id__among=ids).order_by("created_at", "id")
    ):
        open_issues.setdefault(issue.source_id, []).append(open_issue_row(issue))
    enrolled, valid = _grading_bindings(sources)
    examples = _example_reviews(sources)
    # Only the sources with something to say: the others keep the empty context's values (no
    # defect, no binding, not an example), and building then applying 1,000 updates of defaults
    # per batch was a tenth of a forced sync.
    return {
        source_id: {
            "open_issue_count": len(open_issues.get(source_id, ())),
            "open_issues": tuple(open_issues.get(source_id, ())),
            "has_grading_binding": source_id in enrolled,
            "valid_grading_binding": source_id in valid,
            "review_is_example": source_id in examples,
        }
        for source_id in open_issues.keys() | enrolled | examples
    }


def _example_reviews(sources: Sequence[SourceSnapshot]) -> set[str]:
    """Sources whose current (published) review is an example collection."""
    current = {
        source.curated.get("review_id"): source.id
        for source in sources
        if source.curated.get("review_id")
    }
    if not current:
        return set()
    found = (
        Review.objects.filter(id__among=list(current))
        .alias(example=ExampleCollection())
        .filter(example=True)
        .values_list("id", "source_id")
    )
    return {source_id for review_id, source_id in found if current.get(review_id) == source_id}


def _grading_bindings(sources: Sequence[SourceSnapshot]) -> tuple[set[str], set[str]]:
    """(sources with a binding, sources with a valid one) — binding validity compares against the
    snapshot's payload, which a sync has not written yet."""
    by_id = {source.id: source for source in sources}
    proof = ReviewArtifact.objects.filter(
        review_id=OuterRef("review_id"), path=OuterRef("evidence_path")
    )
    bindings = (
        GradingBinding.objects.filter(source_id__among=list(by_id))
        .annotate(
            proof_sha256=Subquery(proof.values("sha256")[:1]),
            proof_text=Subquery(proof.values("content")[:1]),
        )
        .only(
            "source_id",
            "review_id",
            "source_revision",
            "captured_verifier_revision",
            "grading_revision",
            "evidence_sha256",
        )
    )
    enrolled: set[str] = set()
    valid: set[str] = set()
    for binding in bindings:
        enrolled.add(binding.source_id)
        if binding.source_id in valid:
            continue
        if binding_is_valid(
            row=row_revisions(by_id[binding.source_id]),
            binding=BindingClaim(
                source_id=binding.source_id,
                review_id=binding.review_id,
                source_revision=binding.source_revision,
                captured_verifier_revision=binding.captured_verifier_revision,
                grading_revision=binding.grading_revision,
                evidence_sha256=binding.evidence_sha256,
            ),
            artifact_sha256=binding.proof_sha256,
            proof_text=binding.proof_text,
        ):
            valid.add(binding.source_id)
    return enrolled, valid


def row_revisions(source: SourceSnapshot) -> RowRevisions:
    return RowRevisions(
        source_id=source.id,
        review_id=source.curated.get("review_id"),
        review_source_revision=source.curated.get("review_source_revision"),
        review_verifier_revision=source.curated.get("review_verifier_revision"),
        current_data_revision=source.payload.get("dataset_revision"),
        grading_revision=source.payload.get("grading_revision"),
    )
