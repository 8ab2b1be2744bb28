"""Display labels of the review page and API."""

from __future__ import annotations

from atlas.rules import timestamps
from atlas.rules.labels import review_date_label

METHOD_LABELS = {
    "runtime_execution": "Task attempt & verifier",
    "model_judgment": "Independent judge",
    "synthesis": "Combined review",
    "static_inspection": "Code / evidence inspection",
    "human_judgment": "Human review",
    "unknown": "Review",
}
IMPORTED_STATIC_INSPECTION_LABEL = "Imported audit"

VERDICT_LABELS = {
    "keep": "Keep",
    "reject": "Reject",
    "conditional": "Conditional",
    "inconclusive": "Inconclusive",
    "unrated": "Unrated",
}

SEVERITY_LABELS = {
    "info": "Info",
    "low": "Low",
    "medium": "Medium",
    "high": "High",
    "critical": "Critical",
}
SEVERITY_NOT_RECORDED = "Severity not recorded"


DATE_UNKNOWN = "Review date unknown"
NOT_RECORDED = "Not recorded"


def method_label(*, method: str, collection_kind: str) -> str:
    if method == "static_inspection" and collection_kind == "imported":
        return IMPORTED_STATIC_INSPECTION_LABEL
    return METHOD_LABELS.get(method, METHOD_LABELS["unknown"])


def verdict_label(verdict: str | None) -> str:
    return VERDICT_LABELS.get(verdict or "", (verdict or "Unrated").capitalize())


def severity_label(severity: str | None) -> str:
    return SEVERITY_LABELS.get(severity or "", SEVERITY_NOT_RECORDED)


def count_label(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


display_date = review_date_label  # "Mar 3, 2025" in UTC
stored_timestamp = timestamps.text_of
