from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

from atlas.web.errors import API_PREFIX

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


# The longest request target (path and query) the application answers; gunicorn runs with its
# largest request line (--limit-request-line 8190, Makefile), so every URL up to it gets this
# documented JSON 414, and only beyond it gunicorn's own plain 414.
MAX_URL_BYTES = 8000
URL_TOO_LONG = f"The address is longer than {MAX_URL_BYTES} bytes; send fewer or shorter values."


class UrlLengthMiddleware:
    """Refuses an over-long request target with 414 before anything parses its query."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        environ = request.META
        length = len(environ.get("PATH_INFO", "").encode("utf-8", "surrogateescape")) + len(
            environ.get("QUERY_STRING", "")
        )
        if length > MAX_URL_BYTES:
            if request.path.startswith(API_PREFIX):
                return JsonResponse({"detail": URL_TOO_LONG}, status=414)
            return HttpResponse(URL_TOO_LONG, status=414, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class MethodNotAllowedFirstMiddleware:
    """An API route answers 405 (with ``Allow``) to a method it does not serve before anything
    checks credentials: DRF authenticates and checks permissions first, so ``DELETE`` on a
    curator's route answered 401 or 403 — a status its schema does not list for that method."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view_func: Callable[..., Any], args: Any, kwargs: Any
    ) -> HttpResponse | None:
        view_class = getattr(view_func, "cls", None)
        if view_class is None or not request.path.startswith(API_PREFIX):
            return None
        # A viewset's route serves the methods its action map names; a view, its handlers.
        actions = getattr(view_func, "actions", None)
        served = set(actions) if actions else set(view_class.http_method_names)
        served = {m for m in served if (actions and m in actions) or hasattr(view_class, m)}
        if "get" in served:
            served.add("head")
        served.add("options")
        allowed = sorted(method.upper() for method in served)
        if request.method in allowed:
            return None
        response = JsonResponse({"detail": f'Method "{request.method}" not allowed.'}, status=405)
        response["Allow"] = ", ".join(allowed)
        return response
