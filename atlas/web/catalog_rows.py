"""One catalog table row as the page shows it, built from the stored display state without queries.

A row carries only what its cells print; everything else about a source (revisions, pipeline,
tags, verifier, issues, history) is on its source page, which the details drawer loads when opened.
That keeps a row to a few hundred bytes of HTML.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet, TextField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from django.urls import reverse
from django.utils.safestring import SafeString

from atlas.contributions import CatalogCell
from atlas.jsonio import json_values
from atlas.models import Source
from atlas.rules import labels
from atlas.rules.vocabularies import SourceKind
from atlas.web.source_links import RowLinks

ROW_FIELDS = (
    "id", "display_name", "origin", "canonical_source", "task_count", "kind", "turns", "type",
    "is_benchmark", "family", "status", "effective_quality", "review_stale", "open_issue_count",
    "display_review_id", "display_review_date", "display_review_date_text",
    "display_review_is_example",
)  # fmt: skip
# Payload keys a row prints, read as SQL text (``->>``): no JSON decoding per value.
PAYLOAD_TEXTS = {"payload_url": "url", "payload_canonical_url": "canonical_url",
                 "payload_review_url": "review_url"}  # fmt: skip


def page_values(queryset: QuerySet[Source]) -> QuerySet:
    """The rows of a page as ``catalog_row()`` reads them. The difficulty summary comes as text
    and is parsed by ``json_values.loads_stored`` (Django's JSONField parses with the json
    module, the larger part of reading a row)."""
    texts = {name: KT(f"payload__{key}") for name, key in PAYLOAD_TEXTS.items()}
    summary = Cast("difficulty_summary", output_field=TextField())
    return queryset.values(*ROW_FIELDS, **texts, difficulty_summary_text=summary)


# A page's columns resolved once, here; each page filters a copy (``.all()``): resolving the
# names, payload texts and cast per request was a fortieth of the page's own work.
PAGE_ROWS = page_values(Source.objects.active())


def decoded_summary(values: dict) -> dict:
    """A row of ``page_values()`` with its difficulty summary parsed."""
    text = values.pop("difficulty_summary_text")
    values["difficulty_summary"] = None if text is None else json_values.loads_stored(text)
    return values


# Not frozen: a frozen dataclass sets each of its fields in __init__ through object.__setattr__,
# which made building a row 2.4× as long (about 10 µs against 4 µs for these 22 fields, a tenth
# of a 500-row page). A row is built once and only read (by catalog_html).
@dataclass
class CatalogRow:
    id: str
    name: str
    name_url: str | None
    page_url: str
    origin: str
    dataset: str | None
    dataset_url: str | None
    dataset_is_name: bool
    rows_text: str | None
    rows_note: str
    turns: str
    type_label: str
    type_known: bool
    is_benchmark: bool
    family: str
    difficulty: SafeString | None
    difficulty_fallback: str
    chip: labels.QualityChip
    example: bool
    review_date: str | None
    review_date_title: str
    status: str


def source_page_url(source_id: str) -> str:
    return reverse("source-page", kwargs={"source_id": source_id})


def catalog_row(
    values: dict, *, cell: CatalogCell | None, links: RowLinks | None = None
) -> CatalogRow:
    """``values``: one row of ``page_values()``, summary decoded; ``links``: the page's, for
    many rows."""
    name = values["display_name"] or values["id"]
    url = values["payload_url"]
    canonical_url = values["payload_canonical_url"]
    dataset = values["canonical_source"]
    count = values["task_count"]
    if count is not None:
        rows_text, rows_note = f"{count:,}", ""
    else:
        rows_text = None
        rows_note = "Generated" if values["kind"] == SourceKind.GENERATOR else ""
    summary = values["difficulty_summary"]
    difficulty = None
    if summary and cell is not None:
        difficulty = SafeString(
            cell.render(summary=summary, review_id=values["display_review_id"], display_name=name)
        )
    return CatalogRow(
        id=values["id"],
        name=name,
        name_url=url if labels.is_https(url) else None,
        page_url=links.link("source-page", values["id"])
        if links is not None
        else source_page_url(values["id"]),
        origin=values["origin"],
        dataset=dataset,
        dataset_url=canonical_url if labels.is_https(canonical_url) else None,
        dataset_is_name=bool(dataset) and dataset == name,
        rows_text=rows_text,
        rows_note=rows_note,
        turns=values["turns"],
        type_label=labels.type_label(values["type"]),
        type_known=bool(values["type"]),
        is_benchmark=values["is_benchmark"],
        family=values["family"],
        difficulty=difficulty or None,
        difficulty_fallback=labels.difficulty_fallback_text(
            open_issue_count=values["open_issue_count"], review_stale=values["review_stale"]
        ),
        chip=labels.quality_chip(
            effective_quality=values["effective_quality"],
            review_stale=values["review_stale"],
            review_id=values["display_review_id"],
            open_issue_count=values["open_issue_count"],
            review_url=values["payload_review_url"],
            example=values["display_review_is_example"],
        ),
        example=values["display_review_is_example"],
        review_date=labels.review_date_label(values["display_review_date"]),
        review_date_title=values["display_review_date_text"] or labels.NO_DATED_REVIEW,
        status=values["status"],
    )


def row_of(source: Source, *, cell: CatalogCell | None) -> CatalogRow:
    """The same row from a loaded model instance (the source page)."""
    payload = source.payload or {}
    values = {name: getattr(source, name) for name in ROW_FIELDS}
    values["difficulty_summary"] = source.difficulty_summary
    values.update({name: payload.get(key) for name, key in PAYLOAD_TEXTS.items()})
    return catalog_row(values, cell=cell)
