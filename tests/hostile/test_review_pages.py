"""Hostile text on the review pages: any JSON the intake accepted renders (model text holds any
brackets), a legacy link with any id answers a page, never a 500."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.hostile.conftest import brackets

pytestmark = pytest.mark.django_db


def test_every_artifact_page_of_a_hostile_review_renders(client, hostile_review):
    paths = list(hostile_review.artifacts.values_list("path", flat=True))
    assert "quality-reviews.json" in paths and len(paths) >= 8
    for path in paths:
        response = client.get(f"/reviews/{hostile_review.id}/artifacts/{quote(path)}")
        assert response.status_code == 200, path
    page = client.get(f"/reviews/{hostile_review.id}/")
    assert page.status_code == 200
    collection = client.get(f"/reviews/{hostile_review.id}/artifacts/quality-reviews.json")
    assert brackets(750) in collection.content.decode()  # past the viewers' depth: as text


LEGACY_IDS = [
    "a/b", "../api/sources", "/", "%2F", "a" * 64 + "/x", "x\u202ey", "a" * 5000, " ", "..",
    "c" * 64, "C" * 64, "<script>", "a\\b",
]  # fmt: skip


@pytest.mark.parametrize("review_id", LEGACY_IDS)
def test_a_legacy_link_with_any_id_is_a_page(client, review_id, tables):
    tables.before()
    for query in (f"id={quote(review_id)}", f"id={quote(review_id)}&artifact=run.json"):
        response = client.get(f"/review.html?{query}")
        assert response.status_code in (301, 404), query
        if response.status_code == 404:
            assert "Review not found" in response.content.decode()
        else:
            assert response["Location"].startswith("/reviews/" + review_id)
    tables.assert_unchanged()


@pytest.mark.parametrize("review_id", ["a/b", "..", "a" * 64 + "/x"])
def test_review_routes_refuse_ids_that_are_not_review_ids(client, review_id):
    response = client.get(f"/reviews/{quote(review_id, safe='')}/")
    assert response.status_code == 404


@pytest.mark.parametrize("artifact", ["../../api/sources", "a/./b", "a//b", "x/..", "\\x"])
def test_a_legacy_artifact_link_names_only_a_stored_path(client, artifact):
    response = client.get(f"/review.html?id={'c' * 64}&artifact={quote(artifact)}")
    assert response.status_code == 404
    ok = client.get(f"/review.html?id={'c' * 64}&artifact=tasks/0000/run%20one.json")
    assert ok["Location"] == f"/reviews/{'c' * 64}/artifacts/tasks/0000/run%20one.json"
