"""Celery tasks: thin wrappers (flags in, one service call)."""

from celery import shared_task
from django.conf import settings

from atlas.services.sync import SyncRejected
from atlas.services.sync import sync_catalog as run_sync


@shared_task(name="atlas.tasks.sync_catalog")
def sync_catalog(force: bool = False, trigger: str = "task", user_id: int | None = None) -> dict:
    try:
        return run_sync(
            catalog_path=settings.ATLAS_CATALOG_PATH, force=force, trigger=trigger, user_id=user_id
        )
    except SyncRejected as exc:
        return {"busy": False, "error": str(exc), "run": exc.run_id}
