"""Bulk readers of the display-state context: open verifier defects, grading bindings and the
difficulty summary of each source's current review. Apps that own those tables extend this."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from django.db.models import Count, OuterRef, Subquery

from atlas.display_state import DisplayContext


def contexts_for(
    *, source_ids: list[str], payloads: Mapping[str, dict[str, Any]] | None = None
) -> dict[str, DisplayContext]:
    """Contexts of the given sources. ``payloads`` are the rows about to be displayed when they
    differ from the stored ones (a sync computes the state before it writes the new payload):
    binding validity compares against the current data and grading revisions (reviews.md §11.3).
    """
    from reviews.applicability import BindingClaim, RowRevisions, binding_is_valid
    from reviews.models import GradingBinding, ReviewArtifact, VerifierIssue

    open_counts = Counter(
        dict(
            VerifierIssue.objects.filter(source_id__in=source_ids, status=VerifierIssue.Status.OPEN)
            .values("source_id")
            .annotate(n=Count("id"))
            .values_list("source_id", "n")
        )
    )
    proof = ReviewArtifact.objects.filter(
        review_id=OuterRef("review_id"), path=OuterRef("evidence_path")
    )
    bindings = (
        GradingBinding.objects.filter(source_id__in=source_ids)
        .annotate(
            proof_sha256=Subquery(proof.values("sha256")[:1]),
            proof_text=Subquery(proof.values("content")[:1]),
        )
        .select_related("source")
        .only(
            "source_id",
            "review_id",
            "source_revision",
            "captured_verifier_revision",
            "grading_revision",
            "evidence_sha256",
            "source__id",
            "source__payload",
            "source__review_id",
            "source__review_source_revision",
            "source__review_verifier_revision",
        )
    )
    enrolled: set[str] = set()
    valid: set[str] = set()
    for binding in bindings:
        enrolled.add(binding.source_id)
        if binding.source_id in valid:
            continue
        claim = BindingClaim(
            source_id=binding.source_id,
            review_id=binding.review_id,
            source_revision=binding.source_revision,
            captured_verifier_revision=binding.captured_verifier_revision,
            grading_revision=binding.grading_revision,
            evidence_sha256=binding.evidence_sha256,
        )
        if binding_is_valid(
            row=RowRevisions.of(binding.source, payload=(payloads or {}).get(binding.source_id)),
            binding=claim,
            artifact_sha256=binding.proof_sha256,
            proof_text=binding.proof_text,
        ):
            valid.add(binding.source_id)
    contexts = {
        source_id: DisplayContext(
            open_issue_count=open_counts[source_id],
            has_grading_binding=source_id in enrolled,
            valid_grading_binding=source_id in valid,
        )
        for source_id in source_ids
    }
    return _with_difficulty(contexts=contexts, payloads=payloads or {})


def _with_difficulty(
    *, contexts: dict[str, DisplayContext], payloads: Mapping[str, dict[str, Any]]
) -> dict[str, DisplayContext]:
    """Add each source's difficulty summary (difficulty.md §8) — two queries for all sources."""
    from atlas.display_state import CURATED_FIELDS
    from atlas.models import Source
    from difficulty.selectors import summaries_for_sources

    sources = list(
        Source.objects.filter(id__in=list(contexts), review_id__isnull=False).only(
            "id", "payload", "active", *CURATED_FIELDS
        )
    )
    if not sources:
        return contexts
    for source in sources:
        if source.id in payloads:
            # A sync is about to write this payload and make the row active again.
            source.active = True
    summaries = summaries_for_sources(sources=sources, contexts=contexts, payloads=payloads)
    return {
        source_id: replace(context, difficulty=summaries.get(source_id))
        for source_id, context in contexts.items()
    }
