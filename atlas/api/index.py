"""``/api/``: an index of the endpoints, so the API root answers what it offers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.urls import NoReverseMatch, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


@dataclass(frozen=True)
class Endpoint:
    name: str  # route name
    methods: tuple[str, ...]
    description: str
    # Placeholder route arguments, shown as {name} in the URL template.
    arguments: tuple[str, ...] = ()
    # Required query parameters, shown as ?name={name} in the URL template.
    query: tuple[str, ...] = ()


ZERO_UUID = "00000000-0000-0000-0000-000000000000"


def endpoint_url(endpoint: Endpoint) -> str:
    """The route with ``{argument}`` placeholders (a UUID route gets a sample UUID first)."""
    for sample in ("__{}__", ZERO_UUID):
        kwargs = {name: sample.format(name) for name in endpoint.arguments}
        try:
            path = reverse(endpoint.name, kwargs=kwargs or None)
        except NoReverseMatch:
            continue
        for name, value in kwargs.items():
            path = path.replace(value, "{" + name + "}")
        if endpoint.query:
            path += "?" + "&".join(f"{name}={{{name}}}" for name in endpoint.query)
        return path
    raise NoReverseMatch(endpoint.name)


class ApiIndexView(APIView):
    """Every endpoint with its URL (a template when it takes arguments) and methods."""

    endpoints: Sequence[Endpoint] = ()

    @extend_schema(summary="Index of the API endpoints", responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request) -> Response:
        listed: list[dict[str, Any]] = []
        for endpoint in self.endpoints:
            try:
                path = endpoint_url(endpoint)
            except NoReverseMatch:
                continue
            url = request.build_absolute_uri(path).replace("%7B", "{").replace("%7D", "}")
            listed.append(
                {
                    "name": endpoint.name,
                    "url": url,
                    "methods": list(endpoint.methods),
                    "description": endpoint.description,
                }
            )
        return Response(
            {
                "title": "RL Data Atlas API",
                "schema": request.build_absolute_uri(reverse("api-schema")),
                "docs": request.build_absolute_uri(reverse("api-docs")),
                "endpoints": listed,
            }
        )
