"""JSON routes answer JSON errors; pages answer HTML."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path", ["/api/nothing-here/", "/api/sources/MarinSkyRL:absent/", "/api/reviews/x/y/z"]
)
def test_unknown_api_paths_answer_json_404(client, path):
    answer = client.get(path)
    assert answer.status_code == 404
    assert answer["Content-Type"].startswith("application/json")
    assert "detail" in answer.json()


def test_unknown_pages_answer_html_404(client):
    answer = client.get("/no-such-page/")
    assert answer.status_code == 404 and answer["Content-Type"].startswith("text/html")


def test_an_api_failure_answers_json_500(client, settings, monkeypatch):
    from atlas.api import refresh as api

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(api, "refresh_state", broken)
    client.raise_request_exception = False
    answer = client.get("/api/refreshes/")
    assert answer.status_code == 500
    assert answer.json() == {"detail": "The server failed to answer this request."}
