"""Solve-rate bars: order, width, score text, labels, tooltips, chip."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any

from atlas.rules.labels import MEASUREMENT_LABELS
from difficulty.classification import CURRENT, HISTORICAL, INVALID
from difficulty.followups import GENERATION_SETTING, NATIVE_RECHECK
from difficulty.registry import ROLE_SIZES, Registry, get_registry, model_name
from difficulty.summary import entry_name
from difficulty.wilson import percent_range

FULL, COMPACT = "full", "compact"
ROLE_TITLES = {"small": "Small", "large": "Large", "hosted": "Hosted", "followup": "Follow-up"}
BAR_CLASSES = {"small": "bar-small", "large": "bar-large", "hosted": "bar-hosted"}
# What each measurement state means, said where the states are offered: the bar legend (catalog
# and review page), the catalog's Difficulty filter, an opened row.
STATE_EXPLANATIONS = (
    (MEASUREMENT_LABELS[CURRENT], "Measured under the current protocol on the source's current "
     "dataset and verifier revisions. Only these feed the Large-model filter and sort."),
    (MEASUREMENT_LABELS[HISTORICAL], "Earlier models, budgets or protocols, a follow-up, or a "
     "measurement whose source has changed since (new revisions, an open verifier defect, no "
     "longer Good); kept as evidence under its actual model names."),
    (MEASUREMENT_LABELS[INVALID], "The report names the current protocol but breaks one of its "
     "rules (token limits, role models, provider or generation settings); shown, never counted "
     "as current."),
    ("Not measured", "No difficulty report for the source's current review."),
    ("Needs re-review", "The dataset or verifier changed since the review; its rating and "
     "difficulty are hidden until a new review."),
    ("Withheld · verifier issues", "An open confirmed verifier defect withholds difficulty until "
     "a validated fix is reviewed."),
)  # fmt: skip
FILTER_HELP = (
    "Measured: the current protocol on current revisions. Historical: only earlier models, "
    "budgets or protocols. Not measured: none, Historical, or a Protocol mismatch (a report "
    "that breaks the current protocol)."
)
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
    # The status chip of an arm whose status differs from its comparison's (a historical
    # follow-up beside a current comparison): "Historical"; empty otherwise.
    status_label: str = ""
    # What the tooltip holds that the bar does not show: the interval and unverified attempts,
    # shown as text where a row is opened (source page, drawer, review page).
    detail: str = ""
    is_followup: bool = False


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
    """ "33% · 1/3" in every mode: the counts behind a bar are text beside it, not a tooltip
    (touch screens have none)."""
    if _verified(entry) <= 0:
        return "No scores"
    percent = round_half_up(width_percent(entry=entry))
    return f"{percent}% · {entry.get('solved')}/{entry.get('verified')}"


def short_model_name(*, model_id: Any, registry: Registry | None = None) -> str:
    """The registry's short name of a role's model ("Qwen 122B"), else the id's last segment."""
    protocol = (registry or get_registry()).current
    role = next((r for r in protocol.roles if model_id and r.model == model_id), None)
    return role.short_name if role is not None else model_name(model_id)


def followup_label(*, entry: dict[str, Any], registry: Registry | None = None) -> str:
    """One name for a follow-up wherever its bar appears (catalog, drawer, review page): its role,
    its model and what it changed — "Large follow-up · Qwen 122B · max_tokens 16384 → 32768",
    "Hosted follow-up · GLM 5.3 · checkpoint …" — so it never reads as the current arm of the
    same model."""
    protocol = (registry or get_registry()).current
    model_id = entry.get("model")
    if entry.get("size") == "hosted":
        kind = f"{ROLE_TITLES['hosted']} follow-up"
        checkpoint = entry.get("changed_checkpoint")
        change = f"checkpoint {checkpoint}" if checkpoint else "alternate checkpoint"
    elif entry.get("changed_setting") or entry.get("display_name") == GENERATION_SETTING:
        role = next((r for r in protocol.roles if model_id and r.model == model_id), None)
        kind = f"{role.title} follow-up" if role is not None else ROLE_TITLES["followup"]
        change = entry.get("changed_setting") or ""
    else:
        kind, change = NATIVE_RECHECK, ""
    model = short_model_name(model_id=model_id, registry=registry)
    return " · ".join(part for part in (kind, model, change) if part)


def label(*, entry: dict[str, Any], mode: str, registry: Registry | None = None) -> str:
    protocol = (registry or get_registry()).current
    model_id = entry.get("model")
    if entry.get("followup_id"):
        return followup_label(entry=entry, registry=registry)
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
        MEASUREMENT_LABELS.get(
            entry.get("measurement_status") or "", MEASUREMENT_LABELS[HISTORICAL]
        ),
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


def detail_text(*, entry: dict[str, Any]) -> str:
    """ "95% interval 6.1–79.2% · 0 unverified": the rest of a bar's numbers, as text."""
    return f"{interval_text(entry=entry)} · {_text(entry.get('unverified'))} unverified"


def bars_for(*, summary: dict[str, Any], mode: str) -> list[Bar]:
    registry = get_registry()
    overall = summary.get("status")
    bars = []
    for entry in ordered_entries(summary=summary):
        width = width_percent(entry=entry)
        status = entry.get("measurement_status") or HISTORICAL
        bars.append(
            Bar(
                label=label(entry=entry, mode=mode, registry=registry),
                score_text=score_text(entry=entry, mode=mode),
                width=f"{float(width):.2f}".rstrip("0").rstrip("."),
                has_score=_verified(entry) > 0,
                css_class=bar_class(entry=entry),
                tooltip=tooltip(entry=entry, mode=mode),
                measurement_status=status,
                status_label=MEASUREMENT_LABELS.get(status, MEASUREMENT_LABELS[HISTORICAL])
                if overall and status != overall
                else "",
                detail=detail_text(entry=entry),
                is_followup=bool(entry.get("followup_id")),
            )
        )
    return bars


def status_chip(*, summary: dict[str, Any]) -> StatusChip | None:
    """Shown only when the summary is not current."""
    status = summary.get("status")
    if status == CURRENT:
        return None
    label_text = MEASUREMENT_LABELS[INVALID if status == INVALID else HISTORICAL]
    return StatusChip(label=label_text, tooltip=summary.get("status_note") or "")
