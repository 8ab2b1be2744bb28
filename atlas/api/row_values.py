"""Building API rows: a list reads its columns as tuples (the JSON ones as text, parsed by orjson)
and turns each into its row without a serializer per row; a loaded source takes the same way."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast
from rest_framework import serializers
from rest_framework.request import Request

from atlas.api.row_fields import ROW, ROW_FIELDS, Column, Payload, Rate
from atlas.jsonio import json_values
from atlas.models import Source
from atlas.rules.solve_rates import solve_rate_columns
from atlas.web.source_links import RowLinks


def _reader(keys: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """The values of ``keys`` of a mapping, as a tuple (itemgetter of one key returns the value)."""
    if len(keys) == 1:
        getter = operator.itemgetter(keys[0])
        return lambda mapping: (getter(mapping),)
    return operator.itemgetter(*keys) if keys else lambda mapping: ()


# A row is gathered by kind, (columns…, payload values…, rates…, shaped values…), each kind in
# ROW's order, then arranged in ROW's order: the plain reads are one C call for the whole row, not
# one Python call per field.
_KINDS: dict[type, int] = {Column: 0, Payload: 1, Rate: 2}  # a function (shaped): last
_GATHERED = sorted(ROW, key=lambda field: _KINDS.get(type(field.value), len(_KINDS)))
_COLUMNS_READ = tuple(f.value.name for f in _GATHERED if isinstance(f.value, Column))
_PAYLOAD_READ = tuple(f.value.key for f in _GATHERED if isinstance(f.value, Payload))
_RATES_READ = tuple(f.value.name for f in _GATHERED if isinstance(f.value, Rate))
_SHAPED = tuple(f.value for f in _GATHERED if callable(f.value))
_read_columns = _reader(_COLUMNS_READ)
_read_rates = _reader(_RATES_READ)
_arrange = operator.itemgetter(*(_GATHERED.index(field) for field in ROW))


class _SourceRowSerializer(serializers.Serializer):
    def to_representation(self, instance: tuple[Any, ...] | Source) -> dict[str, Any]:
        # A list's rows are built by rows_of(); this serialises a single row.
        return _row_of(instance, request=self.context.get("request"), links=None)


# The fields of ROW, declared as DRF declares a serializer's fields (class attributes).
SourceRowSerializer = type(
    "SourceRowSerializer",
    (_SourceRowSerializer,),
    {
        "__module__": __name__,
        "__doc__": "The exported payload with the display state applied, plus the row's own "
        "links; ``ROW`` declares its fields.",
        **{field.name: field.declared for field in ROW},
    },
)


def rows_of(
    *, items: Iterable[tuple[Any, ...] | Source], request: Request | None
) -> list[dict[str, Any]]:
    """API rows of a list, with the list's one ``RowLinks``."""
    links = RowLinks(request=request)
    return [_row_of(item, request=request, links=links) for item in items]


def _row_of(
    item: tuple[Any, ...] | Source, *, request: Request | None, links: RowLinks | None
) -> dict[str, Any]:
    """A row of list_values() (its JSON as text) or a loaded source, as an API row."""
    values = decoded(item) if isinstance(item, tuple) else source_values(item)
    return row_of_values(values, request=request, links=links)


# A row's own keys, and the payload's `url` (shown as `dataset_url`): the payload keys not repeated.
_ROW_KEYS = frozenset(ROW_FIELDS)
# The columns a row is built from: a list reads only these as plain values (not the search text,
# the sort keys or the other display columns, and no model instance per row).
# The curated columns are the two revisions _shown() reads and the review ID that decides whether
# they are shown; the other curated values reach a row through their display columns.
ROW_COLUMNS = (
    "id", "payload", "review_id", "review_source_revision", "review_verifier_revision",
    "effective_quality", "review_stale", "display_review_id", "display_review_is_example",
    "difficulty_text", "difficulty_status", "difficulty_summary", "review_applicability",
    "open_issues", "grading_tracking", "review_grading_revision", "display_review_date_text",
    "display_traces", "active",
)  # fmt: skip


# JSON columns a list reads as text and parses itself (json_values.loads_stored): parsing is the
# largest part of a 500-row list, and Django's JSONField parses with the json module.
JSON_COLUMNS = ("payload", "open_issues", "difficulty_summary")


# A list reads the plain columns, then the JSON ones as text (``<name>_text``), as tuples: a
# row's mapping is built by decoded() in one step, not by the ORM and then again to parse.
_PLAIN_COLUMNS = tuple(name for name in ROW_COLUMNS if name not in JSON_COLUMNS)
_JSON_TEXTS = tuple(f"{name}_text" for name in JSON_COLUMNS)


def list_values(queryset: QuerySet[Source]) -> QuerySet:
    """The rows of a list: tuples of the plain ``ROW_COLUMNS``, then the JSON ones as text."""
    texts = {
        text: Cast(name, output_field=TextField())
        for name, text in zip(JSON_COLUMNS, _JSON_TEXTS, strict=True)
    }
    return queryset.annotate(**texts).values_list(*_PLAIN_COLUMNS, *_JSON_TEXTS)


_JSON_START = len(_PLAIN_COLUMNS)
_JSON_END = _JSON_START + len(JSON_COLUMNS)


def decoded(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row of list_values() as the ``ROW_COLUMNS`` mapping rows are built from, its JSON
    parsed (what a list annotates after them is left out)."""
    values = dict(zip(_PLAIN_COLUMNS, row, strict=False))  # the JSON texts follow
    for name, text in zip(JSON_COLUMNS, row[_JSON_START:_JSON_END], strict=True):
        values[name] = None if text is None else json_values.loads_stored(text)
    return values


def source_values(source: Source) -> dict[str, Any]:
    """A loaded source as the row of ``.values(*ROW_COLUMNS)`` a list reads."""
    return {name: getattr(source, name) for name in ROW_COLUMNS}


def source_row(source: Source, *, request: Request | None = None) -> dict[str, Any]:
    return row_of_values(source_values(source), request=request)


def row_of_values(
    values: Mapping[str, Any], *, request: Request | None = None, links: RowLinks | None = None
) -> dict[str, Any]:
    """The API row of one source from its ``ROW_COLUMNS`` values (``links``: the response's, for
    a list): each field of ``ROW`` in order, then the payload's undocumented keys."""
    links = links if links is not None else RowLinks(request=request)
    payload = values["payload"] or {}
    rates = solve_rate_columns(values["difficulty_summary"])
    gathered = (
        *_read_columns(values),
        *map(payload.get, _PAYLOAD_READ),
        *_read_rates(rates),
        *[value(values, payload, links, rates) for value in _SHAPED],
    )
    row = dict(zip(ROW_FIELDS, _arrange(gathered), strict=True))
    # Payload keys beyond the documented ones (grading_*) follow, in their stored order. Checked
    # without building a set of the keys per row (half the cost).
    if not _ROW_KEYS.issuperset(payload):
        row.update((key, value) for key, value in payload.items() if key not in _ROW_KEYS)
    return row
