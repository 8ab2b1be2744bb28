"""Brute-force lockout (django-axes) on the login forms and the API token authentication."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import Permission, User
from django.test import RequestFactory
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from atlas.api.authentication import LOCKED_OUT
from atlas.web.client_address import client_address

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


def test_a_repeated_wrong_token_is_locked_out_but_never_a_valid_one(curator):
    token = Token.objects.create(user=curator)
    guesser = APIClient(REMOTE_ADDR="10.0.0.9")
    # Many different bogus tokens from one address: each refused, none locks the address out.
    for guess in range(10):
        guesser.credentials(HTTP_AUTHORIZATION=f"Token wrong-{guess:040d}")
        assert guesser.post("/api/refresh/").status_code == 401  # a wrong credential
    guesser.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert guesser.post("/api/refresh/").status_code in (200, 422)  # authenticated
    # The same wrong token again and again: that token is locked out (from that address).
    guesser.credentials(HTTP_AUTHORIZATION="Token wrong-repeated")
    answers = [guesser.post("/api/refresh/") for _ in range(3)]
    assert [a.status_code for a in answers] == [401, 401, 429]
    assert answers[-1].json() == {"detail": LOCKED_OUT}
    guesser.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert guesser.post("/api/refresh/").status_code in (200, 422)
    # What axes keeps names a digest, never the token.
    assert not AccessAttempt.objects.filter(username__contains="wrong-repeated").exists()


def test_a_wrong_token_with_a_malformed_body_is_counted_and_locked_out(curator):
    guesser = APIClient(REMOTE_ADDR="10.0.0.10")
    guesser.credentials(HTTP_AUTHORIZATION="Token wrong-malformed")
    answers = [
        guesser.post("/api/refresh/", data="{not json", content_type="application/json")
        for _ in range(3)
    ]
    assert [a.status_code for a in answers] == [401, 401, 429]
    assert AccessAttempt.objects.get().failures_since_start == 3


TRUSTED = "10.0.0.1"


@pytest.mark.parametrize(
    ("trusted", "forwarded", "counted"),
    [
        ([], "203.0.113.5", "10.0.0.1"),  # no trusted proxy: the header is the client's words
        ([TRUSTED], "203.0.113.5", "203.0.113.5"),
        ([TRUSTED], "198.51.100.1, 203.0.113.5", "203.0.113.5"),  # the first hop is spoofable
        (["10.0.0.0/24"], "203.0.113.5, 10.0.0.2", "203.0.113.5"),  # a chain of trusted proxies
        ([TRUSTED], "not-an-address", "10.0.0.1"),
        ([TRUSTED], "", "10.0.0.1"),
    ],
)
def test_the_client_address_comes_from_a_trusted_proxy_only(settings, trusted, forwarded, counted):
    settings.ATLAS_TRUSTED_PROXIES = trusted
    request = RequestFactory().get("/", REMOTE_ADDR=TRUSTED, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == counted


def test_behind_a_trusted_proxy_one_address_cannot_lock_a_curator_out(client, curator, settings):
    settings.ATLAS_TRUSTED_PROXIES = [TRUSTED]

    def sign_in(password: str, address: str, spoofed: str = "") -> int:
        forwarded = f"{spoofed}, {address}" if spoofed else address
        return client.post(
            "/admin/login/",
            {"username": "curator", "password": password},
            REMOTE_ADDR=TRUSTED,
            HTTP_X_FORWARDED_FOR=forwarded,
        ).status_code

    # The attacker varies the part of the header it writes; its address is what the proxy saw.
    assert [sign_in("wrong", "203.0.113.66", f"192.0.2.{n}") for n in range(3)] == [200, 200, 429]
    assert sign_in("right-password-1", "203.0.113.66") == 429
    assert sign_in("right-password-1", "198.51.100.7") == 302  # the curator, elsewhere


def test_requests_without_a_token_are_not_counted(client, curator):
    for _ in range(10):
        assert client.get("/api/sources/", REMOTE_ADDR="10.0.0.11").status_code == 200
