"""What the application answers while a part around it is down: the task broker (Redis) or the
database. Never a 500: a 503 with ``Retry-After`` and the reason, JSON on the API.

- Work handed to a broker that cannot be reached raises ``BrokerUnavailable``
  (``atlas.services.broker``), answered here with its reason.
- A database error that reaches a view is a 503 (Django's or the driver's own, see
  ``DATABASE_DOWN_ERRORS``); so is one the CSV export meets before its first bytes, which it
  reads inside the view (``atlas.export.csv_export.csv_response``). A read (GET, HEAD) whose
  connection had dropped — a database restart closes every connection — is run once more on a
  new connection first: a restart that is over answers the read, one still under way answers
  503.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import psycopg
from django.db import DatabaseError, InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import escape

# BROKER_DOWN and send_task are re-exported: reviews.services.jobs and the hostile tests import
# them from here, where they lived before the broker's module moved below the pages.
from atlas.services.broker import BROKER_DOWN as BROKER_DOWN
from atlas.services.broker import BrokerUnavailable
from atlas.services.broker import send_task as send_task
from atlas.web.errors import API_PREFIX

logger = logging.getLogger(__name__)

# Django's wrapped errors, and the driver's own: the sync's bulk writes and the export's COPY talk
# to psycopg's cursor directly, and a connection lost there raises psycopg's error unwrapped.
DATABASE_DOWN_ERRORS = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)
RETRY_AFTER_SECONDS = 10
DATABASE_DOWN = "The database is unreachable; try again shortly."
IDEMPOTENT = frozenset({"GET", "HEAD"})
_RETRIED = "atlas_database_retried"


def unavailable_response(request: HttpRequest, *, reason: str) -> HttpResponse:
    if request.path.startswith(API_PREFIX):
        response: HttpResponse = JsonResponse({"detail": reason}, status=503)
    else:
        body = (
            "<!doctype html><title>Temporarily unavailable</title>"
            f"<h1>Temporarily unavailable</h1><p>{escape(reason)}</p>"
        )
        response = HttpResponse(body, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _drop_broken_connections() -> bool:
    """Close every connection an error left unusable; whether one was (a dropped connection)."""
    dropped = False
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None and not connection.is_usable():
            connection.close()
            dropped = True
    return dropped


class UnavailablePartsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, BrokerUnavailable):
            return unavailable_response(request, reason=str(exception))
        if not isinstance(exception, DATABASE_DOWN_ERRORS):
            return None
        dropped = _drop_broken_connections()
        if dropped and request.method in IDEMPOTENT and not getattr(request, _RETRIED, False):
            setattr(request, _RETRIED, True)
            retried = self._run_again(request)
            if retried is not None:
                return retried
        logger.warning(
            "Database unavailable for %s %s: %s", request.method, request.path, exception
        )
        return unavailable_response(request, reason=DATABASE_DOWN)

    @staticmethod
    def _run_again(request: HttpRequest) -> HttpResponse | None:
        match = request.resolver_match
        if match is None:
            return None
        try:
            response = match.func(request, *match.args, **match.kwargs)
            render = getattr(response, "render", None)
            return render() if callable(render) else response
        except DatabaseError:
            _drop_broken_connections()
            return None
