"""The compact difficulty chart of a catalog row and the legend of the bars, rendered in Python
(they are contributed to the catalog through ``atlas.contributions.CatalogCell``; a template
include per row would cost more than the whole row)."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from difficulty.bars import (
    COMPACT,
    FULL,
    ORDERING_WARNING_TOOLTIP,
    ROLE_TITLES,
    STATE_EXPLANATIONS,
    Bar,
    bars_for,
    status_chip,
)
from difficulty.classification import CURRENT
from difficulty.registry import current_protocol, model_name

ROW = (
    '<span class="{}" title="{}"><span class="difficulty-bar-label">{}{}</span>'
    '<span class="difficulty-bar-track">{}</span><span class="difficulty-bar-score">{}</span>'
    "</span>"
)
BAR = '<span class="difficulty-bar {}" style="width: {}%"></span>'
ARM_CHIP = ' <span class="difficulty-chip difficulty-chip-arm">{}</span>'


def row_class(bar: Bar) -> str:
    """A follow-up's name is long (role, model and change): its row puts the name on a line of
    its own above the bar."""
    return "difficulty-bar-row followup" if bar.is_followup else "difficulty-bar-row"


def arm_chip(bar: Bar) -> SafeString:
    return format_html(ARM_CHIP, bar.status_label) if bar.status_label else SafeString("")


def render_compact_chart(
    *, summary: dict[str, Any] | None, review_id: str | None, display_name: str
) -> SafeString:
    """The linked chart (one thin bar per model); empty when there is no summary."""
    if not summary or not review_id:
        return SafeString("")
    bars = bars_for(summary=summary, mode=COMPACT)
    chip = status_chip(summary=summary)
    head = SafeString("")
    if chip is not None:
        head = format_html(
            '<span class="difficulty-chip difficulty-chip-{}" title="{}">{}</span>',
            summary.get("status"),
            chip.tooltip,
            chip.label,
        )
    if summary.get("ordering_warning"):
        head += format_html(
            '<span class="difficulty-ordering-warning" title="{}">⚠</span>',
            ORDERING_WARNING_TOOLTIP,
        )
    rows = format_html_join(
        "",
        ROW,
        (
            (
                row_class(bar),
                bar.tooltip,
                bar.label,
                arm_chip(bar),
                format_html(BAR, bar.css_class, bar.width) if bar.has_score else "",
                bar.score_text,
            )
            for bar in bars
        ),
    )
    name = f"Difficulty attempts and verifier results for {display_name}"
    scores = "; ".join(
        f"{bar.label}{f' ({bar.status_label})' if bar.status_label else ''} {bar.score_text}"
        for bar in bars
    )
    return format_html(
        '<a class="difficulty-chart compact" href="{}#difficulty" aria-label="{}">{}{}</a>',
        reverse("review-page", kwargs={"review_id": review_id}),
        f"{name}: {scores}" if scores else name,
        head,
        rows,
    )


def render_detail_chart(
    *, summary: dict[str, Any] | None, review_id: str | None, display_name: str
) -> SafeString:
    """The chart of an opened row (source page, details drawer): the review page's full chart,
    with every bar's counts, interval and status as text, and a link to the attempts."""
    if not summary or not review_id:
        return SafeString("")
    return render_to_string(
        "difficulty/full_chart.html",
        {
            "bars": bars_for(summary=summary, mode=FULL),
            "chip": status_chip(summary=summary),
            "status_note": summary.get("status_note") if summary.get("status") != CURRENT else "",
            "ordering_warning": summary.get("ordering_warning"),
            "details": True,
        },
    )


def legend_entries() -> list[tuple[str, str, str]]:
    """(swatch class, term, meaning) for every bar the charts can show."""
    protocol = current_protocol()
    entries = [
        (
            f"bar-{role.size}",
            f"{role.title} · {role.short_name}",
            f"{model_name(role.model)} ({role.reasoning_setting}); current protocol {protocol.id}.",
        )
        for role in protocol.roles
    ]
    entries.append(
        (
            "bar-followup",
            ROLE_TITLES["followup"],
            "A re-run of one role that changed one setting or the hosted checkpoint, named with "
            "its role, model and change (e.g. Large follow-up · Qwen 122B · max_tokens 16384 → "
            "32768); always Historical, shown beside the comparison it follows.",
        )
    )
    return entries


def render_legend() -> SafeString:
    """The legend of the difficulty bars: roles and models, follow-ups, what each bar's text says
    and what every measurement state means."""
    items = format_html_join(
        "",
        '<li><span class="legend-swatch {}" aria-hidden="true"></span>'
        "<strong>{}</strong> — {}</li>",
        legend_entries(),
    )
    states = format_html_join("", "<div><dt>{}</dt><dd>{}</dd></div>", STATE_EXPLANATIONS)
    return format_html(
        '<details class="difficulty-legend"><summary>Difficulty bars · legend</summary>'
        "<ul>{}</ul><p>Bar length is the share of verified tasks solved (longer = easier); the "
        "text beside it gives the percentage and solved/verified tasks. A source's page and its "
        "review add each bar's 95% interval.</p>"
        '<dl class="difficulty-states">{}</dl></details>',
        items,
        states,
    )
