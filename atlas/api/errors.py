"""The one DRF exception handler: domain errors become ``{"detail": <message>}`` with a status.

Services raise their own exceptions (a refused defect confirmation, an unknown report, an invalid
artifact); no view translates them by hand. Each app registers its domain errors with the status
they answer (``register_domain_error``, from ``AppConfig.ready()``); anything else goes to DRF's
own handler (validation errors, 404s, permissions), or is a 500.
"""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

_domain_errors: dict[type[Exception], int] = {}


def register_domain_error(*, error: type[Exception], http_status: int) -> None:
    _domain_errors[error] = http_status


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    for error, http_status in _domain_errors.items():
        if isinstance(exc, error):
            return Response({"detail": str(exc)}, status=http_status)
    return drf_exception_handler(exc, context)
