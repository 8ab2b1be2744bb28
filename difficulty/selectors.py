"""Reads shared by the display state, the API and the review page (difficulty.md §8, §13–§15)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from atlas.display_state import DisplayContext, compute_display_state
from difficulty.classification import SourceContext, apply_source_context, classify_report
from difficulty.reports import REPORT_PATH, NotAReportError, parse_report
from difficulty.summary import build_summary
from reviews.defects import has_open_defect
from reviews.models import Review, ReviewArtifact, VerifierIssue


class ReportNotFoundError(LookupError):
    pass


def source_context(*, source: Any, review: Review) -> SourceContext:
    """§6.4 context of a report shown for ``source`` from ``review``."""
    return SourceContext(
        open_defect=has_open_defect(source_id=source.id),
        review_stale=bool(source.review_stale),
        review_is_current=source.review_id == review.id,
        source_good=source.effective_quality == "good",
    )


def summarise(
    *, text: str, path: str, context: SourceContext | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(report, summary) of a stored artifact; the context applies only to difficulty.json."""
    report = parse_report(text=text)
    classification = classify_report(report=report, path=path)
    if path == REPORT_PATH:
        classification = apply_source_context(classification=classification, context=context)
    return report, build_summary(report=report, classification=classification)


def report_summary(*, review_id: str, path: str = REPORT_PATH) -> dict[str, Any]:
    """§13: the summary of one stored report; ReportNotFoundError or NotAReportError otherwise."""
    artifact = (
        ReviewArtifact.objects.select_related("review__source")
        .filter(review_id=review_id, path=path)
        .first()
    )
    if artifact is None:
        raise ReportNotFoundError(path)
    review = artifact.review
    context = source_context(source=review.source, review=review)
    return summarise(text=artifact.content, path=path, context=context)[1]


def summaries_for_sources(
    *,
    sources: list,
    contexts: Mapping[str, DisplayContext] | None = None,
    payloads: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any] | None]:
    """§8.1 gate and §8.2 summary for many sources in two queries.

    ``contexts`` are the display contexts gathered so far (open defects, grading bindings) without
    the difficulty; when omitted, open defects are read here and verifier tracking is legacy.
    ``payloads`` replace stored payloads that are about to change (a sync in progress)."""
    review_ids = {s.review_id for s in sources if s.review_id and s.active and s.difficulty}
    reports = dict(
        ReviewArtifact.objects.filter(review_id__in=review_ids, path=REPORT_PATH).values_list(
            "review_id", "content"
        )
    )
    if contexts is None:
        open_ids = set(
            VerifierIssue.objects.filter(
                source_id__in=[s.id for s in sources], status=VerifierIssue.Status.OPEN
            ).values_list("source_id", flat=True)
        )
        contexts = {s.id: DisplayContext(open_issue_count=int(s.id in open_ids)) for s in sources}
    result: dict[str, dict[str, Any] | None] = {}
    for source in sources:
        text = reports.get(source.review_id) if source.active and source.difficulty else None
        result[source.id] = (
            None
            if text is None
            else _gated_summary(
                source=source,
                payload=(payloads or {}).get(source.id, source.payload),
                text=text,
                contexts=contexts,
            )
        )
    return result


def _gated_summary(
    *, source: Any, payload: dict[str, Any], text: str, contexts: Mapping[str, DisplayContext]
) -> dict[str, Any] | None:
    context = contexts.get(source.id) or DisplayContext()
    state = compute_display_state(
        payload=payload or {},
        curated={
            "quality": source.quality,
            "review_id": source.review_id,
            "review_source_revision": source.review_source_revision,
            "review_verifier_revision": source.review_verifier_revision,
        },
        active=source.active,
        context=DisplayContext(
            open_issue_count=context.open_issue_count,
            has_grading_binding=context.has_grading_binding,
            valid_grading_binding=context.valid_grading_binding,
        ),
    )
    if state["effective_quality"] != "good":
        return None
    situation = SourceContext(
        open_defect=context.open_issue_count > 0,
        review_stale=state["review_stale"],
        review_is_current=True,
        source_good=True,
    )
    try:
        return summarise(text=text, path=REPORT_PATH, context=situation)[1]
    except NotAReportError:
        return None


def review_difficulty_context(*, review: Review, source: Any) -> dict[str, Any]:
    """Everything the review page's difficulty sections render (§14, §15)."""
    from difficulty.review_sections import build_sections

    return build_sections(review=review, source=source)
