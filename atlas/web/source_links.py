"""A source row's own links (the source page; the row in the API), for lists of many rows."""

from __future__ import annotations

import functools
from typing import Protocol
from urllib.parse import quote

from django.conf import settings
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.http import RFC3986_SUBDELIMS


class AbsoluteUris(Protocol):
    def build_absolute_uri(self, location: str) -> str: ...


class RowLinks:
    """The links of a list's rows, built from one reverse() of each route per list: reverse() (and
    the API's build_absolute_uri()) per row cost a third of a 500-row list. The result is theirs:
    the ID quoted as reverse() quotes it, after the absolute origin when there is a request; the
    rare ID for which they do more (a dot segment is resolved, a newline refused) takes them."""

    MARK = "source-id-mark"
    # The routes a row links to, by the name of their one argument.
    ROUTES = {"api-source": "source_id", "source-page": "source_id", "review-page": "review_id"}
    SAFE = RFC3986_SUBDELIMS + "/~:@"  # what reverse() leaves unquoted

    def __init__(self, *, request: AbsoluteUris | None) -> None:
        self.request = request
        self.origin = request.build_absolute_uri("/")[:-1] if request is not None else ""
        urlconf = get_urlconf() or settings.ROOT_URLCONF
        self.routes = _routes(prefix=get_script_prefix(), urlconf=urlconf)
        # A row links its ID more than once (the API row: itself and its page).
        self.quoted: dict[str, str] = {}
        self.quoted_origins: dict[str, str] = {}

    def link(self, name: str, source_id: str) -> str:
        head, tail = self.routes[name]
        quoted = self.quoted.get(source_id)
        if quoted is None:
            quoted = self.quoted[source_id] = self._quoted(source_id)
        path = head + quoted + tail
        if "\n" in source_id or "/./" in path or "/../" in path:
            path = reverse(name, kwargs={self.ROUTES[name]: source_id})
            return self.request.build_absolute_uri(path) if self.request is not None else path
        return self.origin + path

    def _quoted(self, source_id: str) -> str:
        """``quote(source_id)``, the origin quoted once per list: an ID is ``<origin>:<key>``, a
        list's rows share a few origins, and quoting goes character by character, so the parts
        can be quoted apart. A key is mostly its own quoted text, which quote() returns at
        once; an origin with a space ("Task Trove") is quoted once, not once per row."""
        origin, colon, key = source_id.partition(":")
        prefix = self.quoted_origins.get(origin)
        if prefix is None:
            prefix = self.quoted_origins[origin] = quote(origin, safe=self.SAFE)
        return prefix + colon + quote(key, safe=self.SAFE)


@functools.lru_cache(maxsize=16)
def _routes(*, prefix: str, urlconf: str) -> dict[str, tuple[str, ...]]:
    """Each route's path before and after the ID: what reverse() makes of them depends only on
    the URLconf and the script prefix, so they are reversed once per pair, not once per list."""
    return {
        name: tuple(reverse(name, kwargs={argument: RowLinks.MARK}).split(RowLinks.MARK))
        for name, argument in RowLinks.ROUTES.items()
    }
