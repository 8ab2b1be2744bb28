"""Protocol follow-ups: their kinds, names and summary entries."""

from __future__ import annotations

from typing import Any

HOSTED_KIND = "alternate_checkpoint"
HOSTED_NOTE = (
    "Changes the checkpoint, generation settings and configured verifier judges together; it does "
    "not isolate the effect of reasoning effort."
)
NO_ATTEMPTS_YET = "This comparison has no complete published attempts yet."
GENERATION_SETTING = "Generation setting follow-up"
HOSTED_FOLLOWUP = "Hosted model follow-up"
NATIVE_RECHECK = "Native verifier recheck"


def followups_of(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in report.get("protocol_followups") or [] if isinstance(item, dict)]


def is_hosted(followup: dict[str, Any]) -> bool:
    return followup.get("kind") == HOSTED_KIND


def is_generation_setting(followup: dict[str, Any]) -> bool:
    return "changed_parameter" in followup


def display_name(followup: dict[str, Any]) -> str:
    if is_generation_setting(followup):
        return GENERATION_SETTING
    if is_hosted(followup):
        return HOSTED_FOLLOWUP
    return NATIVE_RECHECK


def is_complete(followup: dict[str, Any]) -> bool:
    return followup.get("state") == "complete"


def section_title(followup: dict[str, Any]) -> str:
    """Title of a follow-up on the review page."""
    state = str(followup.get("state") or "unknown").replace("_", " ").capitalize()
    prefix = "Hosted comparison" if is_hosted(followup) else "Additional settings comparison"
    return f"{prefix} · {state}"


def changed_setting(followup: dict[str, Any]) -> str | None:
    """The changed generation setting as text, e.g. "max_tokens 16384 → 32768"."""
    changed = followup.get("changed_parameter")
    if isinstance(changed, dict):
        name = changed.get("name")
        if not name:
            return None
        if "earlier" in changed or "new" in changed:
            return f"{name} {changed.get('earlier')} → {changed.get('new')}"
        return str(name)
    if isinstance(changed, str) and changed:
        return changed
    return None


def changed_checkpoint(followup: dict[str, Any]) -> str | None:
    """The checkpoint a hosted follow-up moved to (``checkpoint_change.new``), when recorded."""
    change = followup.get("checkpoint_change")
    if isinstance(change, dict) and change.get("new"):
        return str(change["new"])
    return None
