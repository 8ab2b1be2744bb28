"""The summary object and its text."""

from __future__ import annotations

from typing import Any

from atlas.rules.labels import MEASUREMENT_LABELS
from difficulty import followups
from difficulty.classification import HISTORICAL, Classification
from difficulty.reports import models_of, protocol_of

MODEL_FIELDS = (
    "size", "model", "model_revision", "provider", "solved", "verified", "unverified",
    "attempted", "solve_rate", "wilson_95", "generation_parameters",
)  # fmt: skip
ORDERING_AUDIT_SUFFIX = "/ordering-audit.json"


def ordering_warning(*, report: dict[str, Any]) -> str | None:
    """The last limitation, when the protocol saved an ordering audit."""
    audited = any(
        isinstance(item, dict) and str(item.get("path", "")).endswith(ORDERING_AUDIT_SUFFIX)
        for item in protocol_of(report).get("artifacts") or []
    )
    limitations = report.get("limitations") or []
    return str(limitations[-1]) if audited and limitations else None


def build_summary(*, report: dict[str, Any], classification: Classification) -> dict[str, Any]:
    models = [
        {
            **{key: model.get(key) for key in MODEL_FIELDS},
            "measurement_status": classification.status,
        }
        for model in models_of(report)
    ]
    for followup in followups.followups_of(report):
        if followups.is_complete(followup):
            entry = {key: followup.get(key) for key in MODEL_FIELDS}
            entry.update(
                size="hosted" if followups.is_hosted(followup) else "followup",
                measurement_status=HISTORICAL,
                followup_id=followup.get("id"),
                display_name=followups.display_name(followup),
                changed_setting=followups.changed_setting(followup),
            )
            if followups.is_hosted(followup):
                entry["changed_checkpoint"] = followups.changed_checkpoint(followup)
            models.append(entry)
    summary = {
        "models": models,
        "estimated_at": report.get("estimated_at"),
        "sampling": report.get("sampling"),
        "status": classification.status,
        "status_note": classification.note,
        "ordering_warning": ordering_warning(report=report),
        "protocol": report.get("protocol"),
    }
    summary["text"] = summary_text(summary=summary)
    return summary


def entry_name(entry: dict[str, Any]) -> str:
    return entry.get("model") or entry.get("display_name") or followups.NATIVE_RECHECK


def entry_text_name(entry: dict[str, Any]) -> str:
    """The entry's name in texts: a follow-up also says what it changed, so it never reads as
    the current arm of the same model."""
    name = entry_name(entry)
    if not entry.get("followup_id"):
        return name
    what = entry.get("changed_setting") or entry.get("display_name")
    return f"{name} ({what})" if what and what != name else name


def summary_text(*, summary: dict[str, Any]) -> str:
    """ "<Status>: <name> <solved>/<verified> solved; …", each arm under its own status: a
    current comparison's historical follow-ups are listed after "Historical:", never as Current."""
    groups: list[tuple[str, list[str]]] = []
    for entry in summary["models"]:
        status = entry.get("measurement_status") or summary["status"]
        if status != summary["status"] and status not in MEASUREMENT_LABELS:
            status = HISTORICAL
        part = (
            f"{entry_text_name(entry)} "
            f"{_count(entry.get('solved'))}/{_count(entry.get('verified'))} solved"
        )
        if groups and groups[-1][0] == status:
            groups[-1][1].append(part)
        else:
            groups.append((status, [part]))
    if not groups:
        return f"{MEASUREMENT_LABELS[summary['status']]}: "
    return "; ".join(
        f"{MEASUREMENT_LABELS[status]}: " + "; ".join(parts) for status, parts in groups
    )


def _count(value: Any) -> str:
    return "?" if value is None else str(value)
