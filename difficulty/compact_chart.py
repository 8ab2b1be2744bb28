"""The compact difficulty chart of a catalog row and the legend of the bars, rendered in Python
(they are contributed to the catalog through ``atlas.contributions.CatalogCell``; a template
include per row would cost more than the whole row)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from difficulty.bars import COMPACT, ORDERING_WARNING_TOOLTIP, ROLE_TITLES, bars_for, status_chip
from difficulty.registry import current_protocol, model_name

ROW = (
    '<span class="difficulty-bar-row" title="{}"><span class="difficulty-bar-label">{}</span>'
    '<span class="difficulty-bar-track">{}</span><span class="difficulty-bar-score">{}</span>'
    "</span>"
)
BAR = '<span class="difficulty-bar {}" style="width: {}%"></span>'


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
                bar.tooltip,
                bar.label,
                format_html(BAR, bar.css_class, bar.width) if bar.has_score else "",
                bar.score_text,
            )
            for bar in bars
        ),
    )
    name = f"Difficulty attempts and verifier results for {display_name}"
    scores = "; ".join(f"{bar.label} {bar.score_text}" for bar in bars)
    return format_html(
        '<a class="difficulty-chart compact" href="{}#difficulty" aria-label="{}">{}{}</a>',
        reverse("review-page", kwargs={"review_id": review_id}),
        f"{name}: {scores}" if scores else name,
        head,
        rows,
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
            "A re-run that changed one setting (named on the bar, e.g. Follow-up · max_tokens) or "
            "a hosted checkpoint; always Historical, shown beside the comparison it follows.",
        )
    )
    return entries


def render_legend() -> SafeString:
    """The legend of the difficulty bars: roles and models, Current / Historical, follow-ups."""
    items = format_html_join(
        "",
        '<li><span class="legend-swatch {}" aria-hidden="true"></span>'
        "<strong>{}</strong> — {}</li>",
        legend_entries(),
    )
    return format_html(
        '<details class="difficulty-legend"><summary>Difficulty bars · legend</summary>'
        "<ul>{}</ul><p>Bar length is the share of verified tasks solved (longer = easier). "
        "<strong>Current</strong> bars come from the current protocol on the source's current "
        "revisions; a <strong>Historical</strong> chip marks earlier models, budgets or "
        "comparisons, which never feed the Large-model filter and sort. Hover or focus a bar for "
        "its counts and 95% interval.</p></details>",
        items,
    )
