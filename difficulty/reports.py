"""Reading difficulty.json reports: parsing, required keys, counts."""

from __future__ import annotations

import re
from typing import Any

from atlas.jsonio import json_values

REPORT_PATH = "difficulty.json"
CONTEXT_PATH = "difficulty/context.json"
HISTORY_PREFIX = "difficulty/history/"
REQUIRED_KEYS = ("atlas_id", "estimated_at", "sampling", "protocol", "models")
COUNT_KEYS = ("solved", "verified", "unverified", "attempted")
NOT_A_REPORT = "Artifact is not a model comparison report"
INCONSISTENT_COUNTS = "The report's solve counts are inconsistent."


class NotAReportError(ValueError):
    def __init__(self) -> None:
        super().__init__(NOT_A_REPORT)


def parse_report(*, text: str | bytes) -> dict[str, Any]:
    """The report object, or NotAReportError when the text is not a model comparison report."""
    try:
        document = json_values.loads(text)
    except json_values.UnreadableJson as error:
        raise NotAReportError() from error
    if not isinstance(document, dict) or not isinstance(document.get("models"), list):
        raise NotAReportError()
    return document


def missing_key(*, report: dict[str, Any]) -> str | None:
    return next((key for key in REQUIRED_KEYS if key not in report), None)


def models_of(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [model for model in report.get("models", []) if isinstance(model, dict)]


def protocol_of(report: dict[str, Any]) -> dict[str, Any]:
    protocol = report.get("protocol")
    return protocol if isinstance(protocol, dict) else {}


def outcomes_of(model: dict[str, Any]) -> list[dict[str, Any]]:
    outcomes = model.get("task_outcomes", model.get("outcomes"))
    return [item for item in outcomes or [] if isinstance(item, dict)]


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def counts_consistent(*, entry: dict[str, Any]) -> bool:
    """Counts present are integers ≥ 0 and solved ≤ verified ≤ attempted."""
    values = {key: entry.get(key) for key in COUNT_KEYS if entry.get(key) is not None}
    if not all(_is_count(value) for value in values.values()):
        return False
    solved, verified, attempted = (values.get(k) for k in ("solved", "verified", "attempted"))
    if solved is not None and verified is not None and solved > verified:
        return False
    return not (verified is not None and attempted is not None and verified > attempted)


def report_counts_consistent(*, report: dict[str, Any]) -> bool:
    return all(counts_consistent(entry=model) for model in models_of(report))


def task_sort_key(task_id: Any) -> tuple:
    """Numeric collation: "task-2" sorts before "task-10"."""
    parts = re.split(r"(\d+)", str(task_id))
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in parts)


def referenced_paths(*, report: dict[str, Any]) -> list[str]:
    """Every run-relative path the report names (protocol artifacts, run identities, attempts,
    follow-up reports and verification follow-up artifacts), in report order, without repeats."""
    paths: list[str] = []
    protocol = protocol_of(report)
    paths.extend(_paths_in(protocol.get("artifacts"), "path"))
    paths.extend(_paths_in(protocol.get("run_identities"), "run_identity_path"))
    for model in models_of(report):
        for outcome in outcomes_of(model):
            if isinstance(outcome.get("execution_path"), str):
                paths.append(outcome["execution_path"])
            followup = outcome.get("verification_followup")
            if isinstance(followup, dict):
                paths.extend(_paths_in(followup.get("artifacts"), "path"))
    for followup in report.get("protocol_followups") or []:
        if isinstance(followup, dict):
            for key in ("report_path", "original_report_path"):
                if isinstance(followup.get(key), str):
                    paths.append(followup[key])
    return list(dict.fromkeys(path for path in paths if path))


def _paths_in(items: Any, key: str) -> list[str]:
    return [
        item[key]
        for item in items or []
        if isinstance(item, dict) and isinstance(item.get(key), str)
    ]


def run_identity_path(*, report: dict[str, Any], size: str) -> str:
    """The arm's run identity, from protocol.run_identities or difficulty/<size>/run.json."""
    for item in protocol_of(report).get("run_identities") or []:
        if isinstance(item, dict) and item.get("size") == size and item.get("run_identity_path"):
            return str(item["run_identity_path"])
    return f"difficulty/{size}/run.json"
