"""Display labels shared by the catalog page, the drawer and other pages."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.urls import reverse

from atlas.rules.example_notice import EXAMPLE_NOTICE
from atlas.rules.vocabularies import Applicability, MeasurementStatus, Quality

QUALITY_LABELS = dict(Quality.choices)
# The word of each measurement state (Current, Historical, Protocol mismatch), wherever one shows:
# bars, chips, summaries, the Difficulty filter, the review page, the change log, the admin.
MEASUREMENT_LABELS = dict(MeasurementStatus.choices)
DEFECT_TOOLTIP = (
    "Confirmed verifier defect remains unresolved. Open the source's review pool and GitHub issue."
)
STALE_TOOLTIP = "Source data or verifier changed since this review. Open the historical report."
REVIEW_TOOLTIP = "Sample-based review conclusion; open the report for coverage and limitations."
NO_DATED_REVIEW = "No dated review"
UNCLASSIFIED = "Unclassified"
# The one word for a source nobody has reviewed (chip, source page, drawer, API label).
UNREVIEWED = "Unreviewed"
# Example collections (make demo) say so wherever their rating shows (atlas.rules.example_notice).
EXAMPLE_MARK = "Example"


@dataclass(frozen=True)
class QualityChip:
    label: str
    css_class: str
    tooltip: str
    href: str | None
    example: bool = False


def quality_label(
    *, effective_quality: str | None, review_stale: bool, review_id: str | None
) -> str:
    """Good, Some issues, Bad; else Needs re-review, Unrated or Unreviewed."""
    if effective_quality in QUALITY_LABELS:
        return QUALITY_LABELS[effective_quality]
    if review_stale:
        return "Needs re-review"
    return "Unrated" if review_id else UNREVIEWED


def quality_chip(
    *,
    effective_quality: str | None,
    review_stale: bool,
    review_id: str | None,
    open_issue_count: int,
    review_url: str | None,
    example: bool = False,
) -> QualityChip:
    """The chip for one source's display state; an example review is marked as one."""
    label = quality_label(
        effective_quality=effective_quality, review_stale=review_stale, review_id=review_id
    )
    known = effective_quality in QUALITY_LABELS
    css_class = f"quality-{effective_quality}" if known else "quality-unknown"
    if open_issue_count:
        tooltip = DEFECT_TOOLTIP
    elif review_stale:
        tooltip = STALE_TOOLTIP
    else:
        tooltip = REVIEW_TOOLTIP
    href: str | None
    if review_id:
        href = review_page_url(review_id=review_id)
    elif is_https(review_url):
        href = review_url
    else:
        href = None
    if example:
        tooltip = f"{EXAMPLE_NOTICE}. {tooltip}"
    return QualityChip(
        label=label, css_class=css_class, tooltip=tooltip, href=href, example=example
    )


def difficulty_fallback_text(*, open_issue_count: int, review_stale: bool) -> str:
    """The muted difficulty cell when a source has no summary."""
    if open_issue_count:
        return "Withheld · verifier issues"
    if review_stale:
        return "Needs re-review"
    return "Not measured"


APPLICABILITY_LABELS = dict(Applicability.choices)


def review_date_label(value: dt.datetime | None) -> str | None:
    """'Mar 3, 2025' in UTC, or None when the review is undated."""
    if value is None:
        return None
    utc = value.astimezone(dt.UTC)
    return f"{utc:%b} {utc.day}, {utc.year}"


def last_checked_label(value: dt.datetime) -> str:
    utc = value.astimezone(dt.UTC)
    return f"Last checked {utc:%H:%M} · {utc:%b} {utc.day}, {utc.year}"


def type_label(value: str) -> str:
    return value or UNCLASSIFIED


def is_https(value: str | None) -> bool:
    return isinstance(value, str) and value.startswith("https://")


def is_web_link(value: object) -> bool:
    """Only http(s) URLs may become an ``href`` (never ``javascript:``, ``data:`` or others)."""
    return isinstance(value, str) and value.lower().startswith(("https://", "http://"))


def review_page_url(*, review_id: str) -> str:
    # The review page's route is part of the URL contract; the catalog links to it by name.
    return reverse("review-page", kwargs={"review_id": review_id})


def refresh_outcome_text(*, status: int, body: dict) -> tuple[str, bool]:
    """The sync banner text of a refresh outcome and whether it is a
    warning."""
    if status == 200 and body.get("busy"):
        return body["message"], False
    if status == 202:
        return "Refresh started; reload the page to see the synchronised catalog.", False
    if status == 200:
        # What changed, in words (``atlas.rules.sync_words``), never revision prefixes.
        return body["summary"], False
    if status == 422:
        return f"{body.get('detail', '')}. Keeping the last successful snapshot.", True
    return (
        f"Refresh failed ({status}). Saved sources remain available; retry with Refresh sources.",
        True,
    )
