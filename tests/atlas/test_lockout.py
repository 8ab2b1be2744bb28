"""Brute-force lockout (django-axes) on the login forms and the API token authentication."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from atlas.authentication import LOCKED_OUT

pytestmark = pytest.mark.django_db


@pytest.fixture
def curator(settings):
    settings.AXES_FAILURE_LIMIT = 3
    user = User.objects.create_user("curator", password="right-password-1", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="refresh_catalog"))
    return user


def test_the_admin_login_locks_out_after_repeated_failures(client, curator):
    for _ in range(2):
        answer = client.post(
            "/admin/login/", {"username": "curator", "password": "wrong"}, REMOTE_ADDR="10.0.0.7"
        )
        assert answer.status_code == 200  # the form again, with its error
    third = client.post(
        "/admin/login/", {"username": "curator", "password": "wrong"}, REMOTE_ADDR="10.0.0.7"
    )
    assert third.status_code == 429  # the limit is reached: locked out
    locked = client.post(
        "/admin/login/",
        {"username": "curator", "password": "right-password-1"},
        REMOTE_ADDR="10.0.0.7",
    )
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session
    # Another address is not affected by this one's guesses.
    other = client.post(
        "/admin/login/",
        {"username": "curator", "password": "right-password-1"},
        REMOTE_ADDR="10.0.0.8",
    )
    assert other.status_code == 302 and client.session["_auth_user_id"] == str(curator.pk)


def test_api_token_guesses_lock_the_address_out(curator):
    token = Token.objects.create(user=curator)
    guesser = APIClient(REMOTE_ADDR="10.0.0.9")
    for guess in range(2):
        guesser.credentials(HTTP_AUTHORIZATION=f"Token wrong-{guess:040d}")
        assert guesser.post("/api/refresh/").status_code == 403  # refused, as for anyone
    guesser.credentials(HTTP_AUTHORIZATION="Token wrong-third")
    third = guesser.post("/api/refresh/")
    assert third.status_code == 429 and third.json() == {"detail": LOCKED_OUT}
    guesser.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    refused = guesser.post("/api/refresh/")
    assert refused.status_code == 429 and refused.json() == {"detail": LOCKED_OUT}
    elsewhere = APIClient(REMOTE_ADDR="10.0.0.10")
    elsewhere.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert elsewhere.post("/api/refresh/").status_code in (200, 422)  # authenticated there


def test_requests_without_a_token_are_not_counted(client, curator):
    for _ in range(10):
        assert client.get("/api/sources/", REMOTE_ADDR="10.0.0.11").status_code == 200
