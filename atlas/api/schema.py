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

import copy
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
# Every 401 names the scheme to answer with (the first authenticator of the settings).
WWW_AUTHENTICATE = {
    "WWW-Authenticate": {
        "description": "The scheme to authenticate with: `Token` (an API token).",
        "schema": {"type": "string"},
    }
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
        if "401" in responses:
            responses["401"].setdefault("headers", {}).update(WWW_AUTHENTICATE)
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


def empty_means_unset(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """POSTPROCESSING_HOOKS: the sources list takes an empty value of a choice as that filter
    not set, because the catalog page's form (the same FilterSet) sends every field, chosen or
    not, and a page address pasted into the API must answer the same view. The schema says so
    by allowing ``""`` beside each choice; any other value outside the choices is refused."""
    sources = result.get("paths", {}).get("/api/sources/", {}).get("get") or {}
    for parameter in sources.get("parameters", []):
        schema = parameter.get("schema") or {}
        if parameter.get("in") == "query" and "" not in schema.get("enum", [""]):
            schema["enum"] = [*schema["enum"], ""]
            described = parameter.get("description", "")
            parameter["description"] = " ".join(
                part for part in (described, "An empty value leaves the filter unset.") if part
            )
    return result


# What the catalog page's own data endpoints answer outside /api/: plain text refusals
# (``atlas.web.middleware``) and an HTML page while a part is down (``atlas.web.unavailable``).
PLAIN = {"text/plain": {"schema": {"type": "string"}}}
UNSTORABLE = "The address or a query parameter holds a NUL or an unpaired surrogate."
PAGE_ERRORS = {
    "400": (UNSTORABLE, PLAIN),
    "414": (ERRORS["414"][0], {**PLAIN, **PLAIN_414}),
    "503": (ERRORS["503"][0], {"text/html": {"schema": {"type": "string"}}}),
}
FACET_COUNTS = {
    "type": "object",
    "properties": {
        "counts": {
            "type": "object",
            "description": "Per filter (type, turns, family, benchmark, quality, difficulty), "
            "how many sources each of its options would show with every other filter of the "
            "query as it is; the empty key counts the view without that filter.",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": {"type": "integer", "minimum": 0},
            },
        }
    },
    "required": ["counts"],
}


def _page_operation(
    *, operation_id: str, summary: str, description: str, parameters: list[dict[str, Any]],
    success: dict[str, Any], refused: str = UNSTORABLE,
) -> dict[str, Any]:  # fmt: skip
    responses = {"200": success}
    for code, (text, content) in PAGE_ERRORS.items():
        responses[code] = {"description": refused if code == "400" else text, "content": content}
    responses["503"]["headers"] = RETRY_AFTER
    return {
        "operationId": operation_id,
        "summary": summary,
        "description": description,
        "parameters": parameters,
        "tags": ["catalog page"],
        "security": [{}],
        "responses": responses,
    }


def catalog_page_endpoints(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """POSTPROCESSING_HOOKS: the catalog page's data endpoints, ``/export.csv`` and
    ``/facets.json``, are plain views beside the API, but they read the same query as the
    sources list (one FilterSet): their parameters are that list's filters, copied after their
    values became enumerations. The export refuses what the list refuses (in plain text); the
    facet counts read a query as leniently as the page does, so any text is taken there."""
    from atlas.filters import SourceFilterSet
    from atlas.web.views import EXPORT_IGNORED

    paths = result.setdefault("paths", {})
    sources = paths.get("/api/sources/", {}).get("get")
    if sources is None:
        return result
    filters = [
        parameter
        for parameter in sources.get("parameters", [])
        if parameter.get("in") == "query" and parameter.get("name") in SourceFilterSet.base_filters
    ]
    ignored = [
        {
            "name": name,
            "in": "query",
            "required": False,
            "description": "Taken and ignored, so a shared page address exports its view.",
            "schema": {"type": "string"},
        }
        for name in EXPORT_IGNORED
    ]
    paths["/export.csv"] = {
        "get": _page_operation(
            operation_id="catalog_export_csv",
            summary="The catalog view as CSV",
            description="Every source of the filtered, sorted view (not one page), with the "
            "columns of the catalog table; a download named for the view.",
            parameters=copy.deepcopy(filters) + ignored,
            success={
                "description": "The view's rows as CSV (UTF-8, a header row).",
                "headers": {
                    "Content-Disposition": {
                        "description": "attachment, with the view's file name",
                        "schema": {"type": "string"},
                    }
                },
                "content": {"text/csv": {"schema": {"type": "string"}}},
            },
            refused="The query names an unknown parameter or a value no filter takes (each on "
            "a line), or holds a NUL.",
        )
    }
    lenient = copy.deepcopy(filters)
    for parameter in lenient:
        if "enum" in parameter.get("schema", {}):
            described = parameter.get("description", "")
            parameter["description"] = " ".join(
                part for part in (described, "A value no option has is ignored.") if part
            )
        parameter["schema"] = {"type": "string"}
    paths["/facets.json"] = {
        "get": _page_operation(
            operation_id="catalog_facet_counts",
            summary="Counts of the catalog filters' options for a view",
            description="What the catalog page shows beside each filter option: how many "
            "sources the view would show with that option chosen.",
            parameters=lenient,
            success={
                "description": "The counts per filter and option.",
                "content": {"application/json": {"schema": FACET_COUNTS}},
            },
        )
    }
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
