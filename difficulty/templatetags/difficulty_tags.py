"""Template tags of the difficulty sections and charts."""

from __future__ import annotations

from typing import Any

from django import template

from difficulty.bars import COMPACT, FULL, bars_for, status_chip

register = template.Library()


@register.simple_tag
def difficulty_chart(summary: dict[str, Any] | None, mode: str = FULL) -> dict[str, Any] | None:
    """Bars and chip: ``{% difficulty_chart summary "compact" as chart %}``."""
    if not summary:
        return None
    mode = COMPACT if mode == COMPACT else FULL
    return {"bars": bars_for(summary=summary, mode=mode), "chip": status_chip(summary=summary)}
