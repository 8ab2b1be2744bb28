"""Solve-rate bars: order, width, score text, labels, tooltips, chip."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any

from atlas.vocabularies import MeasurementStatus
from difficulty.classification import CURRENT, HISTORICAL, INVALID
from difficulty.registry import ROLE_SIZES, Registry, get_registry, model_name
from difficulty.summary import entry_name
from difficulty.wilson import percent_range

FULL, COMPACT = "full", "compact"
# The chip and tooltips call an invalid report a protocol mismatch.
STATUS_LABELS = {**dict(MeasurementStatus.choices), INVALID: "Protocol mismatch"}
ROLE_TITLES = {"small": "Small", "large": "Large", "hosted": "Hosted", "followup": "Follow-up"}
BAR_CLASSES = {"small": "bar-small", "large": "bar-large", "hosted": "bar-hosted"}
COMPACT_TOOLTIP_END = "; open the review for attempts and verifier results"
ORDERING_WARNING_TOOLTIP = "Ordering warning; open the review for details"


@dataclass(frozen=True)
class Bar:
    label: str
    score_text: str
    width: str  # percent, for the inline width style
    has_score: bool
    css_class: str
    tooltip: str
    measurement_status: str


@dataclass(frozen=True)
class StatusChip:
    label: str
    tooltip: str


def ordered_entries(*, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Small, Large, Hosted, then follow-ups in report order."""
    models = [m for m in summary.get("models", []) if not m.get("followup_id")]
    extra = [m for m in summary.get("models", []) if m.get("followup_id")]
    rank = {size: index for index, size in enumerate(ROLE_SIZES)}
    return sorted(models, key=lambda m: rank.get(m.get("size"), len(rank))) + extra


def _verified(entry: dict[str, Any]) -> int:
    verified = entry.get("verified")
    return verified if isinstance(verified, int) and not isinstance(verified, bool) else 0


def width_percent(*, entry: dict[str, Any]) -> Fraction:
    verified = _verified(entry)
    solved = entry.get("solved")
    if verified <= 0 or not isinstance(solved, int):
        return Fraction(0)
    return min(max(Fraction(100 * solved, verified), Fraction(0)), Fraction(100))


def round_half_up(value: Fraction) -> int:
    return int(
        (Decimal(value.numerator) / Decimal(value.denominator)).quantize(
            Decimal(1), rounding=ROUND_HALF_UP
        )
    )


def score_text(*, entry: dict[str, Any], mode: str) -> str:
    if _verified(entry) <= 0:
        return "No scores"
    percent = round_half_up(width_percent(entry=entry))
    if mode == COMPACT:
        return f"{percent}%"
    return f"{percent}% · {entry.get('solved')}/{entry.get('verified')}"


def followup_label(*, entry: dict[str, Any], mode: str) -> str:
    """A follow-up never borrows the label of the current arm of the same model: it names what
    it changed (the changed setting of a generation-setting follow-up)."""
    changed = entry.get("changed_setting")
    if mode == COMPACT:
        if changed:
            return f"Follow-up · {changed.split(' ')[0]}"
        return entry.get("display_name") or ROLE_TITLES["followup"]
    name = model_name(entry.get("model")) or entry.get("display_name") or entry_name(entry)
    return f"{name} · {changed}" if changed else name


def label(*, entry: dict[str, Any], mode: str, registry: Registry | None = None) -> str:
    protocol = (registry or get_registry()).current
    model_id = entry.get("model")
    if entry.get("followup_id"):
        return followup_label(entry=entry, mode=mode)
    if mode == COMPACT:
        role = next((r for r in protocol.roles if model_id and r.model == model_id), None)
        if role is not None:
            return role.short_name
        return entry.get("display_name") or ROLE_TITLES.get(entry.get("size") or "", "Follow-up")
    role = protocol.role(entry.get("size") or "")
    if (
        entry.get("measurement_status") == CURRENT
        and not entry.get("followup_id")
        and role is not None
        and role.model == model_id
    ):
        return f"{role.title} · {model_name(model_id)}"
    return model_name(model_id) or entry.get("display_name") or entry_name(entry)


def interval_text(*, entry: dict[str, Any]) -> str:
    text = percent_range(entry.get("wilson_95"))
    return f"95% interval {text}" if text else "95% interval not recorded"


def tooltip(*, entry: dict[str, Any], mode: str) -> str:
    parts = [
        entry_name(entry),
        entry.get("provider") or "Provider recorded in run settings",
        STATUS_LABELS.get(entry.get("measurement_status") or "", "Historical"),
        *(
            [f"{entry.get('display_name') or 'Follow-up'}: {entry.get('changed_setting')}"]
            if entry.get("followup_id") and entry.get("changed_setting")
            else [entry["display_name"]]
            if entry.get("followup_id") and entry.get("display_name")
            else []
        ),
        f"{_text(entry.get('solved'))}/{_text(entry.get('verified'))} solved",
        f"{_text(entry.get('unverified'))} unverified",
        interval_text(entry=entry),
    ]
    text = " · ".join(parts)
    return text + COMPACT_TOOLTIP_END if mode == COMPACT else text


def _text(value: Any) -> str:
    return "?" if value is None else str(value)


def bar_class(*, entry: dict[str, Any]) -> str:
    if entry.get("followup_id"):
        return "bar-followup"
    return BAR_CLASSES.get(entry.get("size") or "", "bar-followup")


def bars_for(*, summary: dict[str, Any], mode: str) -> list[Bar]:
    registry = get_registry()
    bars = []
    for entry in ordered_entries(summary=summary):
        width = width_percent(entry=entry)
        bars.append(
            Bar(
                label=label(entry=entry, mode=mode, registry=registry),
                score_text=score_text(entry=entry, mode=mode),
                width=f"{float(width):.2f}".rstrip("0").rstrip("."),
                has_score=_verified(entry) > 0,
                css_class=bar_class(entry=entry),
                tooltip=tooltip(entry=entry, mode=mode),
                measurement_status=entry.get("measurement_status") or HISTORICAL,
            )
        )
    return bars


def status_chip(*, summary: dict[str, Any]) -> StatusChip | None:
    """Shown only when the summary is not current."""
    status = summary.get("status")
    if status == CURRENT:
        return None
    label_text = STATUS_LABELS[INVALID] if status == INVALID else STATUS_LABELS[HISTORICAL]
    return StatusChip(label=label_text, tooltip=summary.get("status_note") or "")
