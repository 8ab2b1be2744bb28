from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from atlas.models import Source
from atlas.selectors import refresh_state


def healthz(request: HttpRequest) -> JsonResponse:
    state = refresh_state()
    last_run = state["last_run"]
    return JsonResponse(
        {
            "status": "ok",
            "origins": [
                {
                    "origin": item.origin,
                    "revision": item.revision,
                    "checked_at": item.checked_at.isoformat(),
                    "synced_at": item.synced_at.isoformat(),
                    "row_count": item.row_count,
                }
                for item in state["refreshes"]
            ],
            "last_run": None
            if last_run is None
            else {
                "started_at": last_run.started_at.isoformat(),
                "trigger": last_run.trigger,
                "forced": last_run.forced,
                "outcome": last_run.outcome,
                "error": last_run.error,
            },
        }
    )


def catalog_page(request: HttpRequest) -> HttpResponse:
    sources = Source.objects.filter(active=True).order_by("display_name_key", "id")
    return render(request, "atlas/catalog_list.html", {"sources": sources})
