"""API token authentication with the same brute-force lockout as the login forms.

django-axes counts failed sign-ins of the admin and the login page per account and client address
(``atlas/web/client_address.py``). A wrong API token is a failed sign-in too, counted against the
token itself (a digest of it stands for the account) and the address: whoever repeats a token that
is not valid is locked out of that token, and no one can lock out a token they do not hold —
counting all wrong tokens of an address under one name let five bogus tokens shut every valid
token out of that address (and behind a proxy, out of everyone). Guessing a valid token (160 bits)
is not what a lockout could prevent.
"""

from __future__ import annotations

import hashlib
from typing import Any

from axes.handlers.proxy import AxesProxyHandler
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import escape
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, Throttled

TOKEN_USERNAME = "api-token"


def token_credentials(key: bytes) -> dict[str, str]:
    """The name a token's failures count under (never the token itself: axes stores the name)."""
    return {"username": f"{TOKEN_USERNAME}:{hashlib.sha256(key).hexdigest()[:32]}"}


LOCKED_OUT = "Too many failed sign-in attempts from this address; try again later."


class LockingTokenAuthentication(TokenAuthentication):
    def authenticate(self, request: Any) -> Any:
        words = get_authorization_header(request).split()
        if not words or words[0].lower() != self.keyword.lower().encode():
            return None  # no token offered: another authenticator (or none) applies
        # The Django HttpRequest DRF wraps: DRF's documentation names no public route to it, and
        # axes needs that object, not DRF's Request. AxesMiddleware reads the lockout mark from
        # the HttpRequest, and axes reads ``request.POST``, which on DRF's Request parses the body
        # inside authentication: a malformed body then answered 400 with no failure counted.
        http_request = request._request
        credentials = token_credentials(b" ".join(words[1:]))
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
