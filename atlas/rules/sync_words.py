"""What a sync changed, in words, for the curator's banner: "MarinSkyRL: 2 added, 1 changed ·
Task Trove: unchanged" instead of revision prefixes nobody can read. The counts are the sync run's
entries in the catalog history, read by ``atlas.change_log.run_counts``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from atlas.rules.vocabularies import SYNC_CHANGE_KINDS, ChangeKind

KIND_WORDS = {kind: label.lower() for kind, label in ChangeKind.choices}
# No source of the origin was added, changed, retired or returned. (An origin's revision is the
# whole artifact's, so it moves whenever any origin changes: it says nothing about this one.)
UNCHANGED = "unchanged"
LOADED = "Packaged task-curation catalog loaded."
SEPARATOR = "  ·  "


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


def result_words(body: Mapping[str, Any], *, counts: Mapping[str, Mapping[str, int]]) -> str:
    """The words of a refresh answer (a sync result, or a skipped page-open check), with its
    run's ``counts``."""
    return outcome_words(
        results=body.get("results") or [],
        retired_origins=body.get("retired_origins") or [],
        counts=counts,
    )
