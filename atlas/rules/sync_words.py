"""What a sync changed, in words, for the curator's banner: "MarinSkyRL: 2 added, 1 changed ·
Task Trove: unchanged" instead of revision prefixes nobody can read. The counts are the sync run's
entries in the catalog history (``catalog_source_changes``), one grouped query."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db.models import Count

from atlas.models import SourceChange
from atlas.rules.vocabularies import SYNC_CHANGE_KINDS, ChangeKind

KIND_WORDS = {kind: label.lower() for kind, label in ChangeKind.choices}
# No source of the origin was added, changed, retired or returned. (An origin's revision is the
# whole artifact's, so it moves whenever any origin changes: it says nothing about this one.)
UNCHANGED = "unchanged"
LOADED = "Packaged task-curation catalog loaded."
SEPARATOR = "  ·  "


def run_counts(*, run_id: int | None) -> dict[str, dict[str, int]]:
    """``{origin: {kind: count}}`` of one sync run's history entries."""
    if run_id is None:
        return {}
    counts: dict[str, dict[str, int]] = {}
    rows = (
        SourceChange.objects.filter(run_id=run_id, kind__in=SYNC_CHANGE_KINDS)
        .order_by()
        .values("origin", "kind")
        .annotate(count=Count("*"))
    )
    for row in rows:
        counts.setdefault(row["origin"], {})[row["kind"]] = row["count"]
    return counts


def origin_words(*, counts: Mapping[str, int]) -> str:
    parts = [
        f"{counts[kind]:,} {KIND_WORDS[kind]}" for kind in SYNC_CHANGE_KINDS if counts.get(kind)
    ]
    return ", ".join(parts) or UNCHANGED


def outcome_words(
    *,
    results: Iterable[Mapping[str, Any]],
    retired_origins: Iterable[str] = (),
    counts: Mapping[str, Mapping[str, int]],
) -> str:
    """The banner of a sync result: one "<origin>: <what changed>" per origin, then the loaded
    note."""
    parts = [
        f"{item['origin']}: {origin_words(counts=counts.get(item['origin'], {}))}"
        for item in results
    ]
    parts += [
        f"{origin}: {origin_words(counts=counts.get(origin, {}))} "
        "(no longer in the packaged catalog)"
        for origin in retired_origins
    ]
    return SEPARATOR.join([*parts, LOADED])


def result_words(body: Mapping[str, Any]) -> str:
    """The words of a refresh answer (a sync result, or a skipped page-open check)."""
    return outcome_words(
        results=body.get("results") or [],
        retired_origins=body.get("retired_origins") or [],
        counts=run_counts(run_id=body.get("run")),
    )
