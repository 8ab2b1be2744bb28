"""Reads shared by the pages, the API and the CSV export."""

from __future__ import annotations

from typing import Any

from atlas.models import Refresh, RefreshRun


def refresh_state() -> dict[str, Any]:
    refreshes = list(Refresh.objects.order_by("origin"))
    last_run = RefreshRun.objects.order_by("-started_at", "-id").first()
    return {"refreshes": refreshes, "last_run": last_run}
