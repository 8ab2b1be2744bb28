"""The curator's refresh: one forced or page-open sync, answered as the page and API show it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from celery.result import EagerResult
from django.conf import settings

from atlas import tasks
from atlas.services.sync import SyncRejected, sync_catalog

OK, QUEUED, INVALID = 200, 202, 422


@dataclass(frozen=True)
class RefreshOutcome:
    """``http_status``: 200 (a result or the busy object), 202 (queued), 422 (invalid artifact)."""

    http_status: int
    body: dict[str, Any]


def run_refresh(*, force: bool, trigger: str, user_id: int | None) -> RefreshOutcome:
    """Run one sync now: the result, the busy object, or the reason the artifact was refused."""
    try:
        result = sync_catalog(
            catalog_path=settings.ATLAS_CATALOG_PATH, force=force, trigger=trigger, user_id=user_id
        )
    except SyncRejected as exc:
        return RefreshOutcome(INVALID, {"detail": str(exc)})
    return RefreshOutcome(OK, result)


def queue_refresh(*, force: bool, trigger: str, user_id: int | None) -> RefreshOutcome:
    """A curator's sync from the page (opening it, or the Refresh button) as a Celery task, so a
    long forced sync never runs inside a web request; the page polls the refresh state. In-process
    (eager) runs answer at once."""
    pending = tasks.sync_catalog.delay(force=force, trigger=trigger, user_id=user_id)
    if not isinstance(pending, EagerResult):
        return RefreshOutcome(QUEUED, {"queued": True})
    result = pending.get()
    if result.get("error"):
        return RefreshOutcome(INVALID, {"detail": result["error"]})
    return RefreshOutcome(OK, result)
