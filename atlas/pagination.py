"""Paging of the catalog: 100 rows by default, page_size 25–500. A page beyond the last shows the
last page on the catalog page (read leniently, with a note); the API answers it with 404, so a
script that counts pages up stops there."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

DEFAULT_PAGE_SIZE = 100
MIN_PAGE_SIZE = 25
MAX_PAGE_SIZE = 500
LARGEST_OFFSET = 2**63 - 1


@dataclass(frozen=True)
class PageWindow:
    number: int
    size: int
    pages: int

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.number < self.pages


def page_window(*, matching: int, number: int, size: int) -> PageWindow:
    pages = max(1, -(-matching // size))
    return PageWindow(number=min(max(number, 1), pages), size=size, pages=pages)


def _positive_int(raw: str | None) -> int | None:
    if raw is None or raw.strip() == "":
        return None
    text = raw.strip()
    # isdigit() also accepts characters such as "²" that int() refuses.
    return int(text) if text.isascii() and text.isdecimal() else None


def lenient_paging(query: Mapping[str, str]) -> tuple[int, int]:
    """The page's reading: invalid values fall back to the defaults."""
    number = _positive_int(query.get("page")) or 1
    size = _positive_int(query.get("page_size"))
    if size is None or not MIN_PAGE_SIZE <= size <= MAX_PAGE_SIZE:
        size = DEFAULT_PAGE_SIZE
    return number, size


def exact_positive_int(raw: str) -> int | None:
    """A query value that is exactly a positive decimal integer (no blanks, no sign), else None:
    the API's reading, where a value the schema does not allow is a 400."""
    if not (raw.isascii() and raw.isdecimal()) or not raw.strip("0"):
        return None
    # A page far past the last is a 404, whatever its digits (int() refuses over 4,300 digits).
    return int(raw) if len(raw) <= 30 else 10**30


def strict_paging(query: Mapping[str, str]) -> tuple[int, int]:
    """The API's reading: invalid values (an empty one too) are a 400 naming the parameter."""
    errors: dict[str, list[str]] = {}
    number = exact_positive_int(query["page"]) if "page" in query else 1
    if number is None:
        errors["page"] = ["A page number is a positive integer."]
    size = exact_positive_int(query["page_size"]) if "page_size" in query else DEFAULT_PAGE_SIZE
    if size is None or not MIN_PAGE_SIZE <= size <= MAX_PAGE_SIZE:
        errors["page_size"] = [f"page_size is an integer from {MIN_PAGE_SIZE} to {MAX_PAGE_SIZE}."]
    if errors:
        raise ValidationError(errors)
    assert number is not None and size is not None
    return number, size


class CatalogPagination(BasePagination):
    """``{count, next, previous, results}`` with ``page`` and ``page_size``."""

    def paginate_queryset(
        self,
        queryset: QuerySet | Sequence[Any],
        request,
        view=None,
        *,
        count: Callable[[list[Any]], int] | None = None,
    ) -> list[Any]:
        """The page's rows. ``count``: how the list counts its rows when a page cannot tell,
        given the page's rows (``queryset.count()`` unless given)."""
        number, size = strict_paging(request.query_params)
        start = (number - 1) * size
        # An offset past a 64-bit integer has no rows (and the database refuses it).
        rows = list(queryset[start : start + size]) if start + size <= LARGEST_OFFSET else []
        # A page that is not full is the last one: its rows give the count. Only a full page, or
        # an empty one past the first, asks the database to count.
        if isinstance(queryset, Sequence):
            self.count = len(queryset)
        elif len(rows) < size and (rows or number == 1):
            self.count = start + len(rows)
        else:
            self.count = count(rows) if count is not None else queryset.count()
        self.window = page_window(matching=self.count, number=number, size=size)
        if number > self.window.pages:
            # An empty list still has its page 1 (count 0, no results).
            raise NotFound(
                f"Page {number} is past the last page ({self.window.pages}) of "
                f"{self.count} rows at {size} per page."
            )
        self.url = request.build_absolute_uri()
        return rows

    def _link(self, number: int) -> str:
        if number == 1:
            return remove_query_param(self.url, "page")
        return replace_query_param(self.url, "page", number)

    def get_paginated_response(self, data: list[Any]) -> Response:
        window = self.window
        return Response(
            {
                "count": self.count,
                "next": self._link(window.number + 1) if window.has_next else None,
                "previous": self._link(window.number - 1) if window.has_previous else None,
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "required": ["count", "results"],
            "properties": {
                "count": {"type": "integer", "example": 206},
                "next": {"type": "string", "nullable": True, "format": "uri"},
                "previous": {"type": "string", "nullable": True, "format": "uri"},
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view) -> list[dict[str, Any]]:
        return [
            {
                "name": "page",
                "required": False,
                "in": "query",
                "description": "Page number from 1; a page past the last answers 404 (an empty "
                "list has page 1).",
                "schema": {"type": "integer", "minimum": 1},
            },
            {
                "name": "page_size",
                "required": False,
                "in": "query",
                "description": f"Rows per page, {MIN_PAGE_SIZE}–{MAX_PAGE_SIZE} (default 100).",
                "schema": {
                    "type": "integer",
                    "minimum": MIN_PAGE_SIZE,
                    "maximum": MAX_PAGE_SIZE,
                    "default": DEFAULT_PAGE_SIZE,
                },
            },
        ]
