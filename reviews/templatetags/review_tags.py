"""Template helpers of the review and artifact pages."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import template
from django.utils.safestring import SafeString

from atlas.rules.labels import is_web_link
from reviews import labels
from reviews.links import artifact_api_url, artifact_page_url, review_page_url
from reviews.pages.trace_viewers import render_value_html

register = template.Library()


register.simple_tag(review_page_url, name="review_url")
register.simple_tag(artifact_page_url, name="artifact_url")
register.simple_tag(artifact_api_url, name="artifact_api_url")


@register.filter
def display_date(value: dt.datetime | None) -> str:
    return labels.display_date(value) or labels.DATE_UNKNOWN


@register.filter
def stored_timestamp(value: dt.datetime | None) -> str:
    return labels.stored_timestamp(value) or "No dated review"


@register.filter
def scalar(value: Any) -> str:
    """A recorded value as text: null "Not recorded", booleans "Yes"/"No"."""
    if value is None:
        return labels.NOT_RECORDED
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


@register.filter
def web_url(value: Any) -> str:
    """Only http(s) URLs from a collection become links."""
    text = str(value or "")
    return text if is_web_link(text) else ""


@register.filter
def json_value(value: Any) -> SafeString:
    return render_value_html(value)


@register.filter
def severity_label(value: str | None) -> str:
    return labels.severity_label(value)


@register.filter
def file_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


@register.filter
def plural_count(count: int, words: str) -> str:
    """``{{ n|plural_count:"review,reviews" }}`` → "1 review" / "3 reviews"."""
    singular, _, plural = words.partition(",")
    return labels.count_label(count, singular, plural or None)


@register.filter
def byte_size(size: float) -> str:
    for unit in ("bytes", "KiB", "MiB"):
        if size < 1024 or unit == "MiB":
            return f"{size:,} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} MiB"
