"""The OpenAPI schema describes every status code an endpoint can answer.

drf-spectacular documents the success response of each operation; the errors below are what the
project's own machinery adds to every view of a kind, so they are documented here once instead of
in every ``extend_schema``:

- 400 when the operation takes query parameters or a body (a value it cannot use, named);
- 401 and 403 when the operation needs a permission (no or wrong credentials; not allowed), and
  429 when API tokens are accepted (repeated failed sign-ins lock an address out);
- 404 when the path names an object, or for a page past the end of a paginated list;
- on every operation, 406 for an ``Accept`` header no renderer matches, 414 for an address
  longer than the application answers (``atlas.web.middleware.UrlLengthMiddleware``; beyond
  gunicorn's request line, gunicorn's own plain 414) and 503 with ``Retry-After`` while the
  database or the task broker is unreachable (``atlas.web.unavailable``).

Reads the project serves to anyone are marked so (``security`` includes the anonymous ``{}``) even
when writes on the same view need a permission (``permission_for_writes``).

A postprocessing hook also turns the free-text ``origin`` and ``family`` filters of the sources
list into the enumerations the catalog currently holds: the API refuses any other value, and the
schema says so. Another gives every free-text parameter the pattern of storable text (no NUL).
"""

from __future__ import annotations

from typing import Any, Literal

from drf_spectacular.openapi import AutoSchema
from rest_framework.permissions import SAFE_METHODS, AllowAny

from atlas.api.authentication import LockingTokenAuthentication

DETAIL = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
FIELD_ERRORS = {
    "type": "object",
    "additionalProperties": True,
    "description": "Each invalid input by name, with the reasons (or ``detail``).",
}
ERRORS = {
    "400": ("The request carries a value this operation cannot use.", FIELD_ERRORS),
    "401": ("No valid credentials were sent (an API token or a session).", DETAIL),
    "403": ("The credentials do not carry the permission this operation needs.", DETAIL),
    "404": ("Nothing with this identifier is published.", DETAIL),
    "429": ("Too many failed sign-ins from this address; try again later.", DETAIL),
    "406": ("No representation this operation serves matches the Accept header.", DETAIL),
    "414": ("The address is too long; send fewer or shorter parameters.", DETAIL),
    "503": ("The database or the task broker is unreachable; retry after the given delay.", DETAIL),
}
# Answered by the server in front of the application (gunicorn) for the longest addresses.
PLAIN_414 = {"text/html": {"schema": {"type": "string"}}}
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "integer", "minimum": 1},
    }
}


class AtlasAutoSchema(AutoSchema):
    def get_auth(self) -> list[Any]:
        auths = super().get_auth()
        if self._reads_are_public() and {} not in auths:
            auths.append({})
        return auths

    def _reads_are_public(self) -> bool:
        return self.method in SAFE_METHODS and all(
            isinstance(permission, AllowAny) or getattr(permission, "public_reads", False)
            for permission in self.view.get_permissions()
        )

    def _needs_permission(self) -> bool:
        return not self._reads_are_public() and not all(
            isinstance(permission, AllowAny) for permission in self.view.get_permissions()
        )

    def _get_response_bodies(self, direction: Literal["request", "response"] = "response") -> Any:
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        wanted = []
        if self._get_parameters() or self._get_request_body():
            wanted.append("400")
        if self._needs_permission():
            wanted += ["401", "403"]
            if any(
                isinstance(item, LockingTokenAuthentication)
                for item in self.view.get_authenticators()
            ):
                wanted.append("429")
        # A path naming an object, or a page past the last of a paginated list.
        if "{" in self.path or (self._is_list_view() and self._get_paginator()):
            wanted.append("404")
        # Any operation: an Accept nothing matches, an over-long address, a part that is down.
        wanted += ["406", "414", "503"]
        for code in wanted:
            if code not in responses:
                description, schema = ERRORS[code]
                responses[code] = {
                    "description": description,
                    "content": {"application/json": {"schema": schema}},
                }
        responses["414"]["content"].update(PLAIN_414)
        # An operation with a CSV twin (?format=csv) refuses in CSV too (parameter, message).
        success = responses.get("200", {}).get("content", {})
        if "text/csv" in success:
            for code in ("400", "404"):
                if code in responses:
                    responses[code].setdefault("content", {})["text/csv"] = {
                        "schema": {"type": "string"}
                    }
        responses["503"].setdefault("headers", {}).update(RETRY_AFTER)
        return responses


def catalog_vocabulary_enums(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """POSTPROCESSING_HOOKS: the sources list's ``origin`` and ``family`` take the values the
    catalog holds (``unknown`` for a family when some source has none)."""
    from django.db import DatabaseError, transaction

    from atlas.selectors import current_vocabulary

    try:
        # A savepoint, so a schema built where the catalog tables do not exist yet (``check
        # --deploy`` before ``migrate``) leaves any surrounding transaction usable.
        with transaction.atomic():
            vocabulary = current_vocabulary()
    except DatabaseError:
        return result  # no catalog yet: the parameters stay free strings
    values = {
        "origin": list(vocabulary.origin_names),
        "family": [*vocabulary.families, *(["unknown"] if vocabulary.has_unknown_family else [])],
    }
    for path, item in result.get("paths", {}).items():
        if not path.startswith("/api/sources/"):
            continue
        for operation in item.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                if parameter.get("in") == "query" and parameter.get("name") in values:
                    parameter["schema"] = {"type": "string", "enum": values[parameter["name"]]}
    return result


# What ``atlas.web.middleware.UnstorableInputMiddleware`` refuses: text PostgreSQL cannot store.
STORABLE_TEXT = "^[^\\x00]*$"


def storable_text_parameters(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """POSTPROCESSING_HOOKS: a free-text path or query parameter may not hold a NUL (every request
    carrying one is refused with 400), so the schema's pattern says so."""
    for item in result.get("paths", {}).values():
        for operation in item.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                schema = parameter.get("schema") or {}
                if schema.get("type") == "string" and not {"enum", "pattern", "format"} & set(
                    schema
                ):
                    schema["pattern"] = STORABLE_TEXT
    return result
