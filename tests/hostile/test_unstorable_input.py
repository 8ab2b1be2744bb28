"""A NUL or an unpaired surrogate in the address or a query parameter is refused with 400
before any view runs: PostgreSQL cannot compare text holding either, so a filter built from
one would otherwise fail inside the database with a 500."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/api/sources/?q=gsm%00",
        "/api/sources/?sort=name&q%00=x",
        "/api/sources/MarinSkyRL:gsm%00/",
        "/api/reviews/1/difficulty/?path=a%00",
    ],
)
def test_api_refuses_unstorable_text_with_json(client, url):
    response = client.get(url)
    assert response.status_code == 400
    assert "NUL" in response.json()["detail"]


def test_pages_refuse_unstorable_text_as_plain_text(client):
    response = client.get("/?q=gsm%00")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    assert b"NUL" in response.content


def test_ordinary_text_still_reaches_the_view(client):
    assert client.get("/api/sources/?q=gsm8k").status_code == 200
    # Undecodable bytes (an encoded surrogate here) arrive as U+FFFD, which any column stores.
    assert client.get("/api/sources/?q=%ED%A0%80").status_code == 200
