"""The CSV twin of the sources API (``/api/sources/?format=csv``): the JSON rows with the JSON field
names as header, streamed."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from django.http import StreamingHttpResponse
from rest_framework.renderers import BaseRenderer

from atlas.export.csv_writer import csv_text, streamed_csv
from atlas.rules.formula_guard import guarded

ROWS_PER_WRITE = 500


def cell(value: Any) -> str:
    """A JSON value as one CSV field: lists of strings joined by commas, other lists and objects
    as JSON, booleans ``true``/``false``, null empty; formula guard as in ``/export.csv``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        text = ",".join(value)
    elif isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    else:
        text = str(value)
    return guarded(text)


def csv_lines(*, rows: Iterable[Mapping[str, Any]], fields: tuple[str, ...]) -> Iterator[bytes]:
    cells = ([cell(row.get(name)) for name in fields] for row in rows)
    yield from streamed_csv(header=fields, rows=cells, rows_per_chunk=ROWS_PER_WRITE)


def csv_twin_response(
    *, rows: Iterable[Mapping[str, Any]], fields: tuple[str, ...], filename: str
) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        csv_lines(rows=rows, fields=fields), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class SourceCSVRenderer(BaseRenderer):
    """Selects the CSV twin (``?format=csv``); the view streams the rows itself. What DRF renders
    through it are error answers: one ``parameter,message`` line each."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        lines = [("parameter", "message")]
        for key, value in (data or {}).items() if isinstance(data, dict) else []:
            messages = value if isinstance(value, list) else [value]
            lines.extend((key, cell(str(message))) for message in messages)
        return csv_text(lines).encode("utf-8")
