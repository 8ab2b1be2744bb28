"""The curator's refresh: one forced or page-open sync, answered as the page and API show it.

Opening the catalog as a curator does not write a sync run each time: the page-open sync is
skipped when the artifact's bytes are those of the last page-open sync and no other sync has run
since, and it is checked at most once per ``ATLAS_PAGE_OPEN_SYNC_SECONDS`` (default 300) between
successful checks. The button and API callers always sync.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from celery import shared_task
from celery.result import EagerResult
from django.conf import settings
from django.core.cache import cache

from atlas.change_log import run_counts
from atlas.models import Refresh, RefreshRun
from atlas.rules.sync_words import result_words
from atlas.services.broker import send_task
from atlas.services.sync import SyncRejected, sync_catalog

OK, QUEUED, INVALID = 200, 202, 422
PAGE_OPEN_STATE = "atlas:page-open-sync"
DEFAULT_PAGE_OPEN_SECONDS = 300
SKIPPED_UNCHANGED = "The packaged catalog is unchanged since the last check."
SKIPPED_RECENT = "The packaged catalog was checked moments ago."


@dataclass(frozen=True)
class RefreshOutcome:
    """``http_status``: 200 (a result or the busy object), 202 (queued), 422 (invalid artifact)."""

    http_status: int
    body: dict[str, Any]


def _answered(result: dict[str, Any]) -> RefreshOutcome:
    """A sync result (or the busy object), with what it changed in words for the banner."""
    if result.get("busy"):
        return RefreshOutcome(OK, result)
    summary = result_words(result, counts=run_counts(run_id=result.get("run")))
    return RefreshOutcome(OK, {**result, "summary": summary})


def run_refresh(*, force: bool, trigger: str, user_id: int | None) -> RefreshOutcome:
    """Run one sync now: the result, the busy object, or the reason the artifact was refused."""
    try:
        result = sync_catalog(
            catalog_path=settings.ATLAS_CATALOG_PATH, force=force, trigger=trigger, user_id=user_id
        )
    except SyncRejected as exc:
        return RefreshOutcome(INVALID, {"detail": str(exc)})
    return _answered(result)


# Defined beside the service that queues it; ``atlas.tasks`` names it for Celery's autodiscovery.
@shared_task(name="atlas.tasks.sync_catalog")
def sync_task(force: bool = False, trigger: str = "task", user_id: int | None = None) -> dict:
    """One sync of the configured artifact, in a worker (or in-process without a broker); an
    artifact the sync refused is an answer (its reason and the failed run), not an error."""
    try:
        return sync_catalog(
            catalog_path=settings.ATLAS_CATALOG_PATH, force=force, trigger=trigger, user_id=user_id
        )
    except SyncRejected as exc:
        return {"busy": False, "error": str(exc), "run": exc.run_id}


def queue_refresh(*, force: bool, trigger: str, user_id: int | None) -> RefreshOutcome:
    """A curator's sync from the page (opening it, or the Refresh button) as a Celery task, so a
    long forced sync never runs inside a web request; the page polls the refresh state. In-process
    (eager) runs answer at once."""
    # No broker: BrokerUnavailable (a 503 with its reason); no run was recorded, nothing waits.
    pending = send_task(sync_task, force=force, trigger=trigger, user_id=user_id)
    if not isinstance(pending, EagerResult):
        return RefreshOutcome(QUEUED, {"queued": True})
    result = pending.get()
    if result.get("error"):
        return RefreshOutcome(INVALID, {"detail": result["error"]})
    return _answered(result)


def page_open_interval() -> int:
    configured = os.environ.get("ATLAS_PAGE_OPEN_SYNC_SECONDS") or DEFAULT_PAGE_OPEN_SECONDS
    return int(getattr(settings, "ATLAS_PAGE_OPEN_SYNC_SECONDS", configured))


def artifact_digest(*, path: Path, known: dict[str, Any] | None) -> tuple[str | None, tuple]:
    """SHA-256 of the artifact's bytes (None when unreadable) and its stat signature; an
    unchanged signature reuses the known digest instead of reading the file again."""
    try:
        info = Path(path).stat()
    except OSError:
        return None, ()
    signature = (str(path), info.st_size, info.st_mtime_ns, info.st_ino)
    if known and tuple(known.get("signature") or ()) == signature:
        return known.get("digest"), signature
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as stream:
            for chunk in iter(lambda: stream.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None, ()
    return digest.hexdigest(), signature


def _latest_run_marker() -> str:
    latest = RefreshRun.objects.order_by("-id").values_list("id", "started_at").first()
    return "" if latest is None else f"{latest[0]}@{latest[1].isoformat()}"


def _skipped(reason: str) -> RefreshOutcome:
    results = [
        {"origin": origin, "revision": revision, "changed": False}
        for origin, revision in Refresh.objects.order_by("origin").values_list("origin", "revision")
    ]
    return _answered({"busy": False, "skipped": True, "reason": reason, "results": results})


def page_open_refresh(*, user_id: int | None) -> RefreshOutcome:
    """The curator's page-open sync, unless it would change nothing (see the module notes)."""
    state = cache.get(PAGE_OPEN_STATE) or {}
    now = time.time()
    marker = _latest_run_marker()
    if marker and state.get("marker") == marker and now - state.get("at", 0) < page_open_interval():
        return _skipped(SKIPPED_RECENT)
    digest, signature = artifact_digest(path=Path(settings.ATLAS_CATALOG_PATH), known=state)
    unchanged = digest is not None and state.get("digest") == digest
    if unchanged and marker and state.get("marker") == marker:
        cache.set(PAGE_OPEN_STATE, {**state, "at": now, "signature": signature}, None)
        return _skipped(SKIPPED_UNCHANGED)
    outcome = queue_refresh(force=False, trigger="page_open", user_id=user_id)
    if outcome.http_status == OK and not outcome.body.get("busy"):
        cache.set(
            PAGE_OPEN_STATE,
            {"marker": _latest_run_marker(), "digest": digest, "signature": signature, "at": now},
            None,
        )
    return outcome
