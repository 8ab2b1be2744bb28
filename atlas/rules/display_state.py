"""The display state of a source: the one definition of what the catalog shows.

``compute_display_state`` is pure: payload + curated columns + context in, the denormalised columns
out. The write services store its result on the source row so reads filter and sort in SQL.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from atlas.rules import formula_guard, timestamps
from atlas.rules.solve_rates import arm_rate
from atlas.rules.vocabularies import (
    Applicability,
    GradingTracking,
    MeasurementStatus,
    Quality,
    SourceKind,
    SourceStatus,
)

CURATED_FIELDS = (
    "quality", "difficulty", "traces", "review_date", "review_id",
    "review_source_revision", "review_verifier_revision",
)  # fmt: skip
# The whole source ID comes first, so a search for an ID (with its ":" and "/") finds it.
SEARCH_FIELDS = (
    "id", "display_name", "canonical_source", "name", "family", "dataset_id", "notes", "origin",
)  # fmt: skip

DISPLAY_COLUMNS = (
    "effective_quality", "review_applicability", "review_stale", "open_issue_count", "open_issues",
    "difficulty_status", "difficulty_text", "difficulty_summary", "large_solve_rate",
    "large_solved", "large_verified", "display_review_id", "display_review_date",
    "display_review_date_text", "display_traces", "grading_tracking", "review_grading_revision",
    "search_text", "display_name", "display_name_key", "task_count", "family", "type", "turns",
    "is_benchmark", "status", "kind", "canonical_source", "display_review_is_example",
    "export_tags",
)  # fmt: skip
# A display state's values in DISPLAY_COLUMNS order (a stored row's or a computed one's), to tell
# whether a recomputed state differs from the stored one.
display_of = operator.itemgetter(*DISPLAY_COLUMNS)


@dataclass(frozen=True)
class SourceSnapshot:
    """A source as the display state sees it: the payload about to be shown (a sync computes the
    state before it writes a new payload), its activity and its curated columns."""

    id: str
    payload: Mapping[str, Any]
    active: bool
    curated: Mapping[str, Any]
    # False for a row a sync is about to insert: nothing else can refer to it yet.
    stored: bool = True


@dataclass(frozen=True)
class DisplayContext:
    """What the display state needs beyond the row itself. The catalog defines these fields; the
    upper apps fill them through ``atlas.contributions`` (open defects and grading bindings from
    ``reviews``, the difficulty summary from ``difficulty``)."""

    open_issue_count: int = 0
    open_issues: tuple[dict[str, Any], ...] = ()
    has_grading_binding: bool = False
    valid_grading_binding: bool = False
    difficulty: dict[str, Any] | None = field(default=None)
    # The current review is a labelled example collection, not a real judgment.
    review_is_example: bool = False


EMPTY_CONTEXT = DisplayContext()


def capped_for_open_defect(quality: str | None) -> str:
    """The one open-defect cap: while a defect is open only Bad survives; anything
    else shows Some issues. The database triggers of ``reviews.defect_invariant`` apply the same
    mapping to raw writes (``OPEN_DEFECT_CAP``)."""
    return OPEN_DEFECT_CAP.get(quality or "", OPEN_DEFECT_DEFAULT)


OPEN_DEFECT_CAP: dict[str, str] = {
    Quality.BAD: Quality.BAD.value,
    Quality.SOME_ISSUES: Quality.SOME_ISSUES.value,
}
OPEN_DEFECT_DEFAULT = Quality.SOME_ISSUES.value


def overlay(*, payload: Mapping[str, Any], curated: Mapping[str, Any]) -> dict[str, Any]:
    """Curated values win when the row has a curated review or that column (``shown`` of every
    curated field, inline: a call per field was most of the overlay's cost)."""
    if curated.get("review_id") is not None:
        return {name: curated.get(name) for name in CURATED_FIELDS}
    return {
        name: value if (value := curated.get(name)) is not None else payload.get(name)
        for name in CURATED_FIELDS
    }


def shown(name: str, *, payload: Mapping[str, Any], curated: Mapping[str, Any]) -> Any:
    """One field of ``overlay()`` (for a caller that needs one or two of them per row)."""
    value = curated.get(name)
    if value is not None or curated.get("review_id") is not None:
        return value
    return payload.get(name)


def search_text(payload: Mapping[str, Any]) -> str:
    parts = [str(part) for name in SEARCH_FIELDS if (part := payload.get(name))]
    parts.extend(str(tag) for tag in payload.get("tags") or () if tag)
    return " ".join(parts).lower()


def compute_display_state(
    *,
    payload: Mapping[str, Any],
    curated: Mapping[str, Any],
    active: bool,
    context: DisplayContext = EMPTY_CONTEXT,
) -> dict[str, Any]:
    shown = overlay(payload=payload, curated=curated)
    current_data_revision = payload.get("dataset_revision")
    grading_revision = payload.get("grading_revision")

    tracking = (
        GradingTracking.SOURCE_SPECIFIC if context.has_grading_binding else GradingTracking.LEGACY
    ).value
    if tracking == GradingTracking.LEGACY:
        reviewed_verifier = shown["review_verifier_revision"]
        verifier_changed = reviewed_verifier is not None and reviewed_verifier != payload.get(
            "verifier_revision"
        )
    else:
        verifier_changed = not context.valid_grading_binding
    reviewed_data = shown["review_source_revision"]
    stale = (
        reviewed_data is not None and reviewed_data != current_data_revision
    ) or verifier_changed
    if stale:
        applicability = Applicability.STALE.value
    elif reviewed_data is None:
        applicability = Applicability.UNKNOWN.value
    else:
        applicability = Applicability.CURRENT.value

    quality = None if stale else shown["quality"]
    if context.open_issue_count:
        quality = capped_for_open_defect(curated.get("quality"))

    # The difficulty provider contributes a summary only for eligible sources
    # (difficulty.eligibility); the catalog shows what it was given.
    summary = context.difficulty
    summary_status = summary.get("status") if summary else None
    large = _current_large(summary)

    display_name = payload.get("display_name") or ""
    return {
        "effective_quality": quality,
        "review_applicability": applicability,
        "review_stale": stale,
        "open_issue_count": context.open_issue_count,
        "open_issues": list(context.open_issues),
        "difficulty_status": summary_status,
        "difficulty_text": summary.get("text") if summary else None,
        "difficulty_summary": summary,
        "large_solve_rate": large[0],
        "large_solved": large[1],
        "large_verified": large[2],
        "display_review_id": shown["review_id"],
        "display_review_date": timestamps.parse_date_or_datetime(shown["review_date"]),
        "display_review_date_text": timestamps.text_of(shown["review_date"]),
        "display_traces": shown["traces"],
        "grading_tracking": tracking,
        "review_grading_revision": grading_revision
        if tracking == GradingTracking.SOURCE_SPECIFIC and context.valid_grading_binding
        else None,
        "search_text": search_text(payload),
        "display_name": display_name,
        "display_name_key": display_name.lower(),
        "task_count": payload.get("task_count"),
        "family": payload.get("family") or "",
        "type": payload.get("type") or "",
        "turns": payload.get("turns") or "",
        "is_benchmark": bool(payload.get("is_benchmark")),
        "status": payload.get("status") or SourceStatus.AVAILABLE.value,
        "kind": payload.get("kind") or SourceKind.DATASET.value,
        "canonical_source": payload.get("canonical_source"),
        "display_review_is_example": bool(shown["review_id"]) and context.review_is_example,
        "export_tags": formula_guard.export_tags(payload.get("tags")),
    }


def _current_large(summary: dict[str, Any] | None) -> tuple[float | None, int | None, int | None]:
    """Only a current summary's current Large model feeds filters and sorts."""
    if not summary or summary.get("status") != MeasurementStatus.CURRENT:
        return None, None, None
    for model in summary.get("models", []):
        if (
            model.get("size") == "large"
            and model.get("measurement_status") == MeasurementStatus.CURRENT
        ):
            return arm_rate(model), model.get("solved"), model.get("verified")
    return None, None, None
