"""Template filters and tags of the catalog page."""

import functools
import os
from pathlib import Path

from django import template
from django.contrib.staticfiles import finders
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


@register.filter
def thousands(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


@register.filter
def source_api_url(source_id: str) -> str:
    """The sources API URL of one source; IDs keep ':' and '/' but percent-encode spaces."""
    return reverse("api-source", kwargs={"source_id": source_id})


@register.simple_tag
def inline_stylesheet(path: str) -> SafeString:
    """A stylesheet's rules in a ``<style>`` element: a page that is opened first (the catalog)
    then paints without waiting for another request; every other page links the same file."""
    found = finders.find(path)
    if not isinstance(found, str):
        raise FileNotFoundError(f"No static file {path}")
    return _style_element(found, os.stat(found).st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _style_element(found: str, _modified: int) -> SafeString:
    # Keyed by the file's modification time too, so an edited sheet shows without a restart.
    text = Path(found).read_text(encoding="utf-8")
    if "</" in text:  # would end the element early; the project's own sheets never hold it
        raise ValueError(f"{found} cannot be inlined: it contains '</'")
    return mark_safe(f"<style>{text}</style>")
