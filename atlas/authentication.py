"""API token authentication with the same brute-force lockout as the login forms.

django-axes counts failed sign-ins of the admin and the login page. A wrong API token is a failed
sign-in too: it is reported to axes under one name (``api-token``), so repeated guesses from one
address lock that address out of token authentication for the cool-off period, exactly like the
forms. A valid token from a locked-out address is refused as well until the period ends.
"""

from __future__ import annotations

from typing import Any

from axes.handlers.proxy import AxesProxyHandler
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import escape
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, Throttled

TOKEN_USERNAME = "api-token"
LOCKED_OUT = "Too many failed sign-in attempts from this address; try again later."


class LockingTokenAuthentication(TokenAuthentication):
    def authenticate(self, request: Any) -> Any:
        words = get_authorization_header(request).split()
        if not words or words[0].lower() != self.keyword.lower().encode():
            return None  # no token offered: another authenticator (or none) applies
        http_request = request._request
        credentials = {"username": TOKEN_USERNAME}
        if not AxesProxyHandler.is_allowed(http_request, credentials):
            raise Throttled(detail=LOCKED_OUT)
        try:
            return super().authenticate(request)
        except AuthenticationFailed:
            user_login_failed.send(sender=type(self), credentials=credentials, request=http_request)
            raise


def lockout_response(
    request: HttpRequest, credentials: Any = None, *args: Any, **kwargs: Any
) -> HttpResponse:
    """What a locked-out address gets (``AXES_LOCKOUT_CALLABLE``): JSON on the API, a short page
    elsewhere; 429 either way."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": LOCKED_OUT}, status=429)
    body = f"<!doctype html><title>Locked out</title><h1>Locked out</h1><p>{escape(LOCKED_OUT)}</p>"
    return HttpResponse(body, status=429)
