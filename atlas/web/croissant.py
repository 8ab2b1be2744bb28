"""Croissant JSON-LD (MLCommons' metadata format for ML datasets, what the Hugging Face Hub serves)
of one source (``/sources/<id>/croissant.json``, linked and embedded on its page) and of the catalog
as a whole (``/croissant.json``), so notebooks and data tools read the catalog in the ecosystem's
vocabulary.

Only stored values go in; what is not known is left out, never guessed. A source's document names
the source, describes it from its definition, links its page, carries its licence when a
``license:<id>`` tag names one that SPDX knows, the pinned dataset revision and its URL
(``isBasedOn``), its declared input rows (``size``), and, through schema.org ``review`` entries, its
quality rating with its review link and date and the solve rate of each measured model. A
source's data lives upstream at a revision whose file checksums the Atlas does not hold, so its
document declares no distribution. The catalog's document is a live dataset (it changes with every
sync and publication): its distribution is ``/export.csv`` and its record set that file's columns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.db.models import Count, Q, Sum
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from atlas.export.csv_export import HEADER
from atlas.models import Source
from atlas.rules import labels
from atlas.rules.example_notice import EXAMPLE_NOTICE
from atlas.rules.solve_rates import ROLES, arm_rate

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
# Croissant 1.0's own @context, as its specification and mlcroissant write it.
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
CATALOG_NAME = "RL Data Atlas"
LICENSE_TAG = "license:"
# The licence ids of the inventory's tags (the Hugging Face Hub's) with their SPDX identifiers;
# ``license:other`` and an id not listed here name no licence anyone could look up.
SPDX = {
    "apache-2.0": "Apache-2.0",
    "mit": "MIT",
    "cc-by-4.0": "CC-BY-4.0",
    "cc-by-sa-4.0": "CC-BY-SA-4.0",
    "cc-by-nc-4.0": "CC-BY-NC-4.0",
    "cc0-1.0": "CC0-1.0",
    "odc-by": "ODC-By-1.0",
    "bsd-3-clause": "BSD-3-Clause",
}
SPDX_URL = "https://spdx.org/licenses/{id}.html"
ROLE_NAMES = {"small": "Small", "large": "Large", "hosted": "Hosted"}

Absolute = Callable[[str], str]


def licenses(tags: Iterable[str]) -> list[str]:
    """The SPDX licence URLs the source's ``license:<id>`` tags name."""
    found = []
    for tag in tags:
        if isinstance(tag, str) and tag.startswith(LICENSE_TAG):
            spdx = SPDX.get(tag[len(LICENSE_TAG) :].lower())
            if spdx and (url := SPDX_URL.format(id=spdx)) not in found:
                found.append(url)
    return found


def _description(source: Source, payload: Mapping[str, Any]) -> str:
    notes = (payload.get("notes") or "").strip()
    facts = [f"{source.kind} of the {CATALOG_NAME} inventory ({source.origin} catalog)"]
    if payload.get("dataset_id"):
        facts.append(
            f"input {payload['dataset_id']} pinned at revision {payload['dataset_revision']}"
        )
    if payload.get("verifier_name"):
        facts.append(f"graded by the {payload['verifier_name']} verifier")
    sentence = "; ".join(facts) + "."
    return f"{notes} {sentence}" if notes else sentence


def _reviews(source: Source, *, absolute: Absolute) -> list[dict[str, Any]]:
    """The quality rating with its review, then each measured model's solve rate."""
    if not source.display_review_id:
        return []
    review_url = absolute(labels.review_page_url(review_id=source.display_review_id))
    quality: dict[str, Any] = {
        "@type": "Review",
        "reviewAspect": "quality",
        # A labelled example (make demo) says so wherever its rating shows.
        "name": EXAMPLE_NOTICE
        if source.display_review_is_example
        else "Sample-based quality review",
        "url": review_url,
        "reviewRating": {
            "@type": "Rating",
            "ratingValue": labels.quality_label(
                effective_quality=source.effective_quality,
                review_stale=source.review_stale,
                review_id=source.display_review_id,
            ),
            "ratingExplanation": labels.REVIEW_TOOLTIP,
        },
    }
    if source.display_review_date is not None:
        quality["datePublished"] = source.display_review_date.isoformat()
    found = [quality]
    for entry in (source.difficulty_summary or {}).get("models") or []:
        rate = arm_rate(entry)
        if rate is None or entry.get("size") not in ROLES:
            continue
        status = labels.MEASUREMENT_LABELS.get(entry.get("measurement_status"), "Unknown")
        found.append(
            {
                "@type": "Review",
                "reviewAspect": "difficulty",
                "name": f"Solve rate of {entry.get('model')} ({ROLE_NAMES[entry['size']]} model)",
                "url": f"{review_url}#difficulty",
                "reviewRating": {
                    "@type": "Rating",
                    "ratingValue": rate,
                    "worstRating": 0,
                    "bestRating": 1,
                    "ratingExplanation": f"{entry.get('solved')} of {entry.get('verified')} "
                    f"verified tasks solved · {status}",
                },
            }
        )
    return found


def _catalog_reference(*, absolute: Absolute) -> dict[str, Any]:
    return {
        "@type": "DataCatalog",
        "name": CATALOG_NAME,
        "url": absolute(reverse("catalog")),
    }


def source_document(*, source: Source, absolute: Absolute) -> dict[str, Any]:
    """The Croissant metadata of one source; ``absolute`` makes a site path a full URL."""
    payload = source.payload or {}
    tags = payload.get("tags") or []
    document: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": source.display_name or source.id,
        "alternateName": source.id,
        "description": _description(source, payload),
        "url": absolute(reverse("source-page", kwargs={"source_id": source.id})),
        "keywords": list(tags),
        "includedInDataCatalog": _catalog_reference(absolute=absolute),
    }
    if found := licenses(tags):
        document["license"] = found
    dataset_url = payload.get("url")
    if payload.get("dataset_revision") or labels.is_web_link(dataset_url):
        based_on: dict[str, Any] = {"@type": "Dataset", "name": payload.get("dataset_id")}
        if labels.is_web_link(dataset_url):
            based_on["url"] = dataset_url
            document["sameAs"] = dataset_url
        if payload.get("dataset_revision"):
            based_on["version"] = payload["dataset_revision"]
        document["isBasedOn"] = based_on
    if source.task_count is not None:
        document["size"] = {
            "@type": "QuantitativeValue",
            "value": source.task_count,
            "unitText": "input rows",
        }
    if reviews := _reviews(source, absolute=absolute):
        document["review"] = reviews
    return document


EXPORT_ID = "export.csv"
RECORD_SET = "sources"


def _field_id(column: str) -> str:
    return f"{RECORD_SET}/" + "".join(c if c.isalnum() else "_" for c in column.lower()).strip("_")


def catalog_document(*, absolute: Absolute, synced_at: str | None) -> dict[str, Any]:
    """The Croissant metadata of the whole catalog: its counts, and its CSV export as the live
    distribution whose columns are the record set's fields."""
    active = Source.objects.active()
    totals = active.aggregate(
        sources=Count("id"), counted=Count("task_count"), rows=Sum("task_count")
    )
    rated = dict(
        active.filter(~Q(effective_quality=None))
        .values_list("effective_quality")
        .annotate(n=Count("id"))
        .order_by()
    )
    ratings = ", ".join(
        f"{count:,} {labels.QUALITY_LABELS[quality]}"
        for quality, count in sorted(rated.items())
        if quality in labels.QUALITY_LABELS
    )
    description = (
        f"The public catalog of data sources used to post-train language models with "
        f"reinforcement learning: {totals['sources']:,} active sources, each with a stable ID, "
        f"pinned dataset and verifier revisions, input-row counts, classifications and the "
        f"evidence gathered about it. {totals['counted']:,} sources declare their input rows "
        f"({totals['rows'] or 0:,} in all; populations can overlap, unknown counts are left out)."
    )
    if ratings:
        description += f" Quality ratings: {ratings}."
    export_url = absolute(reverse("catalog-export"))
    document: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": CATALOG_NAME,
        "description": description,
        "url": absolute(reverse("catalog")),
        "isLiveDataset": True,
        "size": {"@type": "QuantitativeValue", "value": totals["sources"], "unitText": "sources"},
        "distribution": [
            {
                "@type": "cr:FileObject",
                "@id": EXPORT_ID,
                "name": EXPORT_ID,
                "description": "Every active source of the catalog as CSV, one row each.",
                "contentUrl": export_url,
                "encodingFormat": "text/csv",
            }
        ],
        "recordSet": [
            {
                "@type": "cr:RecordSet",
                "@id": RECORD_SET,
                "name": RECORD_SET,
                "description": "One record per active source, the catalog table's columns.",
                "field": [
                    {
                        "@type": "cr:Field",
                        "@id": _field_id(column),
                        "name": column,
                        "dataType": "sc:Text",
                        "source": {"fileObject": {"@id": EXPORT_ID}, "extract": {"column": column}},
                    }
                    for column in HEADER
                ],
            }
        ],
    }
    if synced_at:
        document["dateModified"] = synced_at
    return document


# What json_script escapes, so no value can close the element or open a comment in the page.
_IN_HTML = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}


def embedded(document: Mapping[str, Any]) -> SafeString:
    """The document as a page's ``<script type="application/ld+json">`` (data, never run)."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":")).translate(_IN_HTML)
    return mark_safe(f'<script type="application/ld+json">{text}</script>')
