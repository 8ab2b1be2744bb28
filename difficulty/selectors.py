"""Reads shared by the display state, the API and the review page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from atlas.models import Source
from atlas.rules.display_state import DisplayContext, SourceSnapshot, compute_display_state
from difficulty.classification import apply_source_context, classify_report
from difficulty.eligibility import Standing, is_eligible
from difficulty.reports import REPORT_PATH, NotAReportError, parse_report
from difficulty.summary import build_summary
from reviews.models import Review, ReviewArtifact


class ReportNotFoundError(LookupError):
    def __init__(self, message: str = "Difficulty report not found") -> None:
        super().__init__(message)


def standing_of(*, source: Source, review_id: str) -> Standing:
    """Standing of a report of ``review_id`` shown for ``source``, from its display columns."""
    return Standing(
        active=source.active,
        effective_quality=source.effective_quality,
        review_stale=bool(source.review_stale),
        open_defect=source.open_issue_count > 0,
        review_is_current=source.review_id == review_id,
    )


def summarise(
    *, text: str, path: str, standing: Standing | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(report, summary) of a stored artifact; the standing applies only to difficulty.json."""
    report = parse_report(text=text)
    classification = classify_report(report=report, path=path)
    if path == REPORT_PATH:
        classification = apply_source_context(classification=classification, standing=standing)
    return report, build_summary(report=report, classification=classification)


def report_summary(*, review_id: str, path: str = REPORT_PATH) -> dict[str, Any]:
    """The summary of one stored report; ReportNotFoundError or NotAReportError otherwise.
    One query."""
    artifact = (
        ReviewArtifact.objects.select_related("review__source")
        .filter(review_id=review_id, path=path)
        .first()
    )
    if artifact is None:
        raise ReportNotFoundError()
    standing = standing_of(source=artifact.review.source, review_id=review_id)
    return summarise(text=artifact.content, path=path, standing=standing)[1]


@dataclass(frozen=True)
class StoredReport:
    """A review's ``difficulty.json`` with what its runs' details read besides it."""

    review: Review  # with its source
    text: str
    paths: list[str]  # every artifact of the review


def stored_report(*, review_id: str) -> StoredReport | None:
    """The review's difficulty.json, its source and its artifact paths (never their contents);
    None when the review holds no report. Two queries."""
    artifact = (
        ReviewArtifact.objects.select_related("review__source")
        .filter(review_id=review_id, path=REPORT_PATH)
        .only("content", "review")
        .first()
    )
    if artifact is None:
        return None
    paths = ReviewArtifact.objects.filter(review_id=review_id).values_list("path", flat=True)
    return StoredReport(review=artifact.review, text=artifact.content, paths=list(paths))


def summaries_for(
    *, sources: Sequence[SourceSnapshot], contexts: Mapping[str, DisplayContext]
) -> dict[str, dict[str, Any] | None]:
    """The catalog gate and the summary of each source's current report, in one query.

    ``contexts`` are the display contexts the lower apps contributed (open defects, grading
    bindings); the gate asks ``difficulty.eligibility`` about the state they produce."""
    candidates = [
        source
        for source in sources
        if source.active and source.curated.get("review_id") and source.curated.get("difficulty")
    ]
    reports = (
        dict(
            ReviewArtifact.objects.filter(
                review_id__among={source.curated["review_id"] for source in candidates},
                path=REPORT_PATH,
            ).values_list("review_id", "content")
        )
        if candidates
        else {}
    )
    result: dict[str, dict[str, Any] | None] = {source.id: None for source in sources}
    for source in candidates:
        text = reports.get(source.curated["review_id"])
        if text is not None:
            result[source.id] = _gated_summary(
                source=source, text=text, context=contexts.get(source.id) or DisplayContext()
            )
    return result


def _gated_summary(
    *, source: SourceSnapshot, text: str, context: DisplayContext
) -> dict[str, Any] | None:
    state = compute_display_state(
        payload=dict(source.payload), curated=dict(source.curated), active=True, context=context
    )
    standing = Standing(
        active=source.active,
        effective_quality=state["effective_quality"],
        review_stale=state["review_stale"],
        open_defect=context.open_issue_count > 0,
    )
    if not is_eligible(standing):
        return None
    try:
        return summarise(text=text, path=REPORT_PATH, standing=standing)[1]
    except NotAReportError:
        return None
