"""The source page (``/sources/<id>/``) and the details drawer that shows its body: definition,
pinned revisions, counts, quality and difficulty with their review links, the sections the upper
apps contribute (verifier issues, review pool) and the source's catalog history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from django.urls import reverse

from atlas.change_log import ChangeLine, source_history
from atlas.contributions import BuiltSourceSection, build_source_sections, catalog_cells
from atlas.models import Source
from atlas.rules import labels
from atlas.rules.vocabularies import SourceKind
from atlas.web.catalog_rows import CatalogRow, row_of

DRAWER_HISTORY = 5


@dataclass(frozen=True)
class SourcePage:
    source: Source
    row: CatalogRow
    definition: list[tuple[str, str]]
    pinned: list[tuple[str, str, str | None]]  # (term, value, link)
    quality: list[tuple[str, str]]
    links: list[tuple[str, str]]
    sections: list[BuiltSourceSection]
    history: list[ChangeLine]
    history_more: bool
    difficulty_legend: str = ""
    # The opened row's chart: every bar's counts, interval and status as text.
    difficulty_detail: str = ""
    dataset_viewer: str | None = None

    @property
    def api_url(self) -> str:
        return reverse("api-source", kwargs={"source_id": self.source.id})


def input_rows_text(source: Source) -> str:
    if source.task_count is not None:
        return f"{source.task_count:,}"
    return "No fixed count" if source.kind == SourceKind.GENERATOR else "Unknown"


def _present(items: list[tuple[Any, ...]]) -> list[Any]:
    return [item for item in items if item[1] not in (None, "", [])]


def source_page(*, source: Source, history_limit: int | None = None) -> SourcePage:
    """The page of a loaded source; reads the contributed sections and the history."""
    payload = source.payload or {}
    pipeline = payload.get("pipeline") or {}
    cell = catalog_cells().get("difficulty")
    row = row_of(source, cell=cell)
    status = source.status if source.active else f"{source.status} · retired from the catalog"
    definition = _present(
        [
            ("Source ID", source.id),
            ("Title", source.display_name),
            ("Catalog", source.origin),
            ("Status", status),
            ("Type", labels.type_label(source.type)),
            ("Interaction", source.turns or "Unknown"),
            ("Benchmark", "Designated benchmark" if source.is_benchmark else "Not designated"),
            ("Kind", source.kind),
            ("Family", source.family or "Unknown / unclassified"),
            ("Input rows", input_rows_text(source)),
            ("Pipeline", pipeline.get("name")),
            ("Pipeline version", pipeline.get("version")),
            ("Input files", ", ".join(pipeline.get("files") or [])),
            ("Tags", ", ".join(payload.get("tags") or [])),
            ("Notes", payload.get("notes")),
        ]
    )
    pinned = _present(
        [
            ("Dataset", payload.get("dataset_id"), _https(payload.get("url"))),
            ("Dataset revision", payload.get("dataset_revision"), None),
            ("Verifier", payload.get("verifier_name"), _https(payload.get("verifier_url"))),
            ("Verifier revision", payload.get("verifier_revision"), None),
            ("Grading revision", payload.get("grading_revision"), None),
        ]
    )
    review_date = labels.review_date_label(source.display_review_date)
    quality = _present(
        [
            ("Quality", row.chip.label),
            ("Review date", review_date or ("Review date unknown" if row.chip.href else None)),
            (
                "Review applicability",
                labels.APPLICABILITY_LABELS.get(source.review_applicability or "")
                if source.display_review_id
                else None,
            ),
            ("Reviewed data revision", source.review_source_revision),
            ("Reviewed verifier revision", source.review_verifier_revision),
            ("Native task attempts", source.display_traces),
            ("Difficulty", source.difficulty_text or row.difficulty_fallback),
        ]
    )
    links = []
    if labels.is_https(payload.get("url")):
        links.append(("Pinned dataset ↗", payload["url"]))
    if labels.is_https(payload.get("verifier_url")):
        links.append(("Verifier code ↗", payload["verifier_url"]))
    if source.display_review_id:
        review_url = labels.review_page_url(review_id=source.display_review_id)
        links.append(("Read quality review", review_url))
        if source.difficulty_summary:
            links.append(
                ("Read difficulty attempts & verifier results", review_url + "#difficulty")
            )
    elif labels.is_https(payload.get("review_url")):
        links.append(("Authored review evidence ↗", payload["review_url"]))
    limit = history_limit or 100
    history = source_history(source_id=source.id, limit=limit + 1)
    return SourcePage(
        source=source,
        row=row,
        definition=[(term, str(value)) for term, value in definition],
        pinned=[(term, str(value), link) for term, value, link in pinned],
        quality=[(term, str(value)) for term, value in quality],
        links=links,
        sections=build_source_sections(source=source),
        history=history[:limit],
        history_more=len(history) > limit,
        difficulty_legend=cell.legend() if cell and cell.legend and row.difficulty else "",
        difficulty_detail=cell.render_detail(
            summary=source.difficulty_summary,
            review_id=source.display_review_id,
            display_name=row.name,
        )
        if cell and cell.render_detail and row.difficulty
        else "",
        dataset_viewer=dataset_viewer_url(payload),
    )


HF_DATASETS = "https://huggingface.co/datasets/"


def dataset_viewer_url(payload: dict[str, Any]) -> str | None:
    """The Hugging Face dataset viewer of a source pinned to a Hugging Face dataset. The viewer
    shows the repository's default branch, so the page says which revision the source pins."""
    url, dataset_id = payload.get("url"), payload.get("dataset_id")
    if not (isinstance(url, str) and url.startswith(HF_DATASETS) and isinstance(dataset_id, str)):
        return None
    repository = HF_DATASETS + dataset_id.strip("/")
    if not dataset_id.strip("/") or not (url == repository or url.startswith(repository + "/")):
        return None
    return f"{HF_DATASETS}{quote(dataset_id.strip('/'), safe='/')}/viewer"


def _https(value: Any) -> str | None:
    return value if labels.is_https(value) else None
