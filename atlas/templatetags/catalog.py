"""Template filters of the catalog page."""

from django import template
from django.urls import reverse

register = template.Library()


@register.filter
def thousands(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


@register.filter
def source_api_url(source_id: str) -> str:
    """The sources API URL of one source; IDs keep ':' and '/' but percent-encode spaces."""
    return reverse("api-source", kwargs={"source_id": source_id})
