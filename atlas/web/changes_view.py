"""The view model of ``/changes/``: the timeline of the catalog revisions that changed something and
of curators' actions, one revision with all its changes (``?run=``), or one source's whole history
(``?source=``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.urls import reverse

from atlas.change_log import (
    CHANGES_PER_RUN,
    RUNS_PER_PAGE,
    change_line,
    changed_runs,
    parse_run_id,
    revision_entries,
    run_changes,
    source_history,
    timeline,
    timeline_count,
)
from atlas.pagination import page_window

CHANGES_PER_PAGE = 200


def _number(raw: str | None) -> int:
    text = (raw or "").strip()
    return int(text) if text.isascii() and text.isdecimal() and int(text) > 0 else 1


def changes_context(*, query: Mapping[str, str]) -> dict[str, Any] | None:
    """None when the asked revision does not exist."""
    base = reverse("changes")
    feed_url = reverse("changes-feed")
    run_id = (query.get("run") or "").strip()
    source_id = (query.get("source") or "").strip()
    if run_id:
        run_number = parse_run_id(run_id)
        if run_number is None:
            return None
        runs = list(changed_runs().filter(id=run_number))
        if not runs:
            return None
        run = runs[0]
        window = page_window(
            matching=getattr(run, "total", 0),
            number=_number(query.get("page")),
            size=CHANGES_PER_PAGE,
        )
        changes = run_changes(run_id=run.id)[window.offset : window.offset + window.size]
        entry = revision_entries(runs=[run], per_run=0)[0]
        return {
            "mode": "run",
            "entry": entry,
            "lines": [change_line(change) for change in changes],
            "window": window,
            "previous_url": f"{base}?run={run.id}&page={window.number - 1}"
            if window.has_previous
            else None,
            "next_url": f"{base}?run={run.id}&page={window.number + 1}"
            if window.has_next
            else None,
            "feed_url": feed_url,
        }
    if source_id:
        return {
            "mode": "source",
            "source_id": source_id,
            "source_url": reverse("source-page", kwargs={"source_id": source_id}),
            "lines": source_history(source_id=source_id, limit=1000),
            "feed_url": feed_url,
        }
    window = page_window(
        matching=timeline_count(), number=_number(query.get("page")), size=RUNS_PER_PAGE
    )
    return {
        "mode": "revisions",
        "entries": timeline(offset=window.offset, size=window.size, per_run=CHANGES_PER_RUN),
        "per_run": CHANGES_PER_RUN,
        "window": window,
        "previous_url": f"{base}?page={window.number - 1}" if window.has_previous else None,
        "next_url": f"{base}?page={window.number + 1}" if window.has_next else None,
        "feed_url": feed_url,
    }
