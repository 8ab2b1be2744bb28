from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

from atlas.errors import API_PREFIX

POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; "
    "form-action 'self'"
)


class ContentSecurityPolicyMiddleware:
    """Pages run only the project's own static scripts (no inline scripts, no CDN)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", POLICY)
        return response


def _unstorable(text: str) -> bool:
    # PostgreSQL text cannot hold NUL, and lone surrogates cannot be encoded as UTF-8: a query
    # built from either fails inside the database instead of answering the client.
    return "\x00" in text or any("\ud800" <= char <= "\udfff" for char in text)


class UnstorableInputMiddleware:
    """Refuses a request whose path or query string holds text no database column can store.

    Request bodies are checked by the serializers and forms; the path and query parameters reach
    filters and lookups directly, so they are checked once here, before any view runs.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        values = [request.path]
        for key, given in request.GET.lists():
            values += [key, *given]
        if any(_unstorable(value) for value in values):
            message = (
                "The address or a query parameter holds a NUL or an unpaired surrogate character."
            )
            if request.path.startswith(API_PREFIX):
                return JsonResponse({"detail": message}, status=400)
            return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
