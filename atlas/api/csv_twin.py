"""The CSV twin of the sources API (``/api/sources/?format=csv``): the JSON rows with the JSON field
names as header, streamed; and the download name of a filtered view (shared with
``/export.csv``)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from typing import Any

from django.http import StreamingHttpResponse
from rest_framework.renderers import BaseRenderer

from atlas.export.formula_guard import guarded

ROWS_PER_WRITE = 500
FILENAME_PART = re.compile(r"[^A-Za-z0-9._-]+")
# The filters a download name mentions, in this order (the sort and paging never change rows).
NAMED_FILTERS = (
    "origin", "type", "turns", "family", "benchmark", "quality", "difficulty", "difficulty_status",
    "q", "show_bad", "show_excluded",
)  # fmt: skip


def export_filename(*, choices: Mapping[str, str], prefix: str = "rl-data-atlas") -> str:
    """``rl-data-atlas.csv`` for the whole catalog, else one part per filter, e.g.
    ``rl-data-atlas_type-RLVR_quality-good.csv``."""
    parts = [prefix]
    for key in NAMED_FILTERS:
        value = str(choices.get(key) or "").strip()
        if not value:
            continue
        if key in ("show_bad", "show_excluded"):
            parts.append(key.replace("_", "-"))
            continue
        slug = FILENAME_PART.sub("-", value).strip("-.")[:40] or "value"
        parts.append(f"{key}-{slug}")
    return "_".join(parts)[:180] + ".csv"


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
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(fields)
    iterator = iter(rows)
    while True:
        batch = list(islice(iterator, ROWS_PER_WRITE))
        writer.writerows([cell(row.get(name)) for name in fields] for row in batch)
        yield buffer.getvalue().encode("utf-8")
        if len(batch) < ROWS_PER_WRITE:
            return
        buffer.seek(0)
        buffer.truncate()


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
        buffer = io.StringIO()
        writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
        writer.writerow(["parameter", "message"])
        for key, value in (data or {}).items() if isinstance(data, dict) else []:
            messages = value if isinstance(value, list) else [value]
            for message in messages:
                writer.writerow([key, cell(str(message))])
        return buffer.getvalue().encode("utf-8")
