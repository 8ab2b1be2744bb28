"""Every write of the API, asked without credentials or with a wrong token, answers 401 with the
scheme to sign in with (``WWW-Authenticate: Token``), not 403: 403 is for a signed-in account
without the permission. The operations come from the OpenAPI schema, so a new write is checked
as soon as it is documented."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db
READS = {"get", "head", "options", "trace"}


def write_operations(client) -> list[tuple[str, str, dict]]:
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    return [
        (method, path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method not in READS and isinstance(operation, dict)
    ]


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "1", path)


def test_every_write_is_documented_and_answered_401_without_credentials(client):
    writes = write_operations(client)
    assert {(method, path) for method, path, _ in writes} >= {
        ("post", "/api/refresh/"),
        ("post", "/api/reviews/publications/"),
        ("post", "/api/verifier-issues/"),
        ("post", "/api/verifier-issues/{id}/resolve/"),
    }
    for method, path, operation in writes:
        documented = operation["responses"]["401"]
        assert "WWW-Authenticate" in documented["headers"], (method, path)
        for credentials in ({}, {"HTTP_AUTHORIZATION": "Token not-a-token"}):
            api = APIClient()
            api.credentials(**credentials)
            response = getattr(api, method)(concrete(path), {}, format="json")
            assert response.status_code == 401, (method, path, credentials, response.content)
            assert response["WWW-Authenticate"] == "Token", (method, path)
            assert "detail" in response.json()


def test_a_signed_in_account_without_the_permission_is_forbidden(client):
    staff = User.objects.create_user("staff", password="pw-staff-12", is_staff=True)
    for method, path, _ in write_operations(client):
        api = APIClient()
        api.force_authenticate(staff)
        response = getattr(api, method)(concrete(path), {}, format="json")
        assert response.status_code == 403, (method, path, response.content)
        assert "WWW-Authenticate" not in response
