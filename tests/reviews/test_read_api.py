"""Public review reads."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.reviews import factories as f

pytestmark = pytest.mark.django_db

SOURCE_ID = "MarinSkyRL:example"


@pytest.fixture
def review():
    f.make_source(SOURCE_ID)
    collection, files = f.native_collection(task_count=1)
    return f.publish(collection, files, make_current=True)


def test_review_detail(client, review):
    old_review, supplemental, imported_review = f.publish_pool()
    f.record_issue(source_id=SOURCE_ID, confirming=supplemental)
    f.record_issue(
        source_id=SOURCE_ID,
        confirming=supplemental,
        issue_url="https://github.com/o/r/issues/1",
        resolution=old_review,
    )

    response = client.get(f"/api/reviews/{review.id}/")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {
        "id", "source_id", "kind", "collection", "updated_at", "published_at", "artifacts",
        "supplemental_reviews", "verifier_issues", "resolved_verifier_issues", "review_pool",
        "identity_differences", "source",
    }  # fmt: skip
    assert body["identity_differences"] == []
    assert body["id"] == review.id and body["source_id"] == SOURCE_ID and body["kind"] == "rating"
    assert body["collection"] == review.collection
    assert body["updated_at"] == "2025-03-03T12:00:00Z"
    paths = [artifact["path"] for artifact in body["artifacts"]]
    assert paths == sorted(paths) and "quality-reviews.json" in paths
    first = body["artifacts"][0]
    assert set(first) == {"path", "sha256", "size", "url", "page_url"}
    # Each artifact says where to read it: its stored text in the API and its page.
    for artifact in body["artifacts"]:
        quoted = quote(artifact["path"], safe="/~:@!$&'()*+,;=")
        assert artifact["url"] == (
            f"http://testserver/api/reviews/{review.id}/artifacts/{quoted}"
        )  # fmt: skip
        assert artifact["page_url"] == f"http://testserver/reviews/{review.id}/artifacts/{quoted}"
    collection = next(a for a in body["artifacts"] if a["path"] == "quality-reviews.json")
    text = client.get(collection["url"])
    assert text.status_code == 200 and text["Content-Type"].startswith("text/plain")
    assert client.get(collection["page_url"]).status_code == 200
    assert body["supplemental_reviews"] == [
        {"id": supplemental.id, "collection": supplemental.collection}
    ]
    assert body["verifier_issues"] == [
        {
            "issue_url": "https://github.com/marin-community/MarinSkyRL/issues/7",
            "review_id": supplemental.id,
            "status": "open",
            "created_at": "2025-04-02T00:00:00Z",
        }
    ]
    assert body["resolved_verifier_issues"] == [
        {
            "issue_url": "https://github.com/o/r/issues/1",
            "review_id": supplemental.id,
            "resolution_review_id": old_review.id,
            "updated_at": "2025-05-02T00:00:00Z",
        }
    ]
    assert body["review_pool"] == [
        {"id": supplemental.id, "updated_at": "2025-04-01T08:00:00Z", "review_count": 1,
         "kind": "supplemental"},
        {"id": old_review.id, "updated_at": "2024-12-01T00:00:00Z", "review_count": 7,
         "kind": "rating"},
        {"id": imported_review.id, "updated_at": None, "review_count": 1, "kind": "imported"},
    ]  # fmt: skip
    assert body["source"] == {
        "id": SOURCE_ID,
        "active": True,
        "current_review_id": review.id,
        # The open issue caps the rating, whoever wrote the issue row: the stored rating is
        # never trusted to be capped already.
        "quality": "some_issues",
        "review_applicability": "current",
    }


def test_unknown_review(client):
    response = client.get("/api/reviews/" + "0" * 64 + "/")
    assert response.status_code == 404
    assert response.json() == {"detail": "Review not found"}
    assert client.get("/api/reviews/nope/").json() == {"detail": "Review not found"}


def test_review_detail_query_count(client, review, django_assert_num_queries):
    for index in range(3):
        defect, files = f.supplemental_collection(
            issue_url=f"https://github.com/o/r/issues/{index}"
        )
        defect["reviews"][0]["summary"] += f" ({index})"
        f.publish(defect, files)
    with django_assert_num_queries(4):
        assert client.get(f"/api/reviews/{review.id}/").status_code == 200


def test_artifact_text_and_cache_headers(client, review):
    artifact = review.artifacts.get(path="run.json")
    response = client.get(f"/api/reviews/{review.id}/artifacts/run.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == artifact.content
    assert response["ETag"] == f'"{artifact.sha256}"'
    assert response["Cache-Control"] == "public, max-age=31536000, immutable"


def test_collection_artifact_is_the_published_bytes(client, review):
    response = client.get(f"/api/reviews/{review.id}/artifacts/quality-reviews.json")
    assert f.sha256_text(response.content.decode()) == review.id


def test_artifact_is_plain_text_whatever_the_client_accepts(client, review):
    response = client.get(
        f"/api/reviews/{review.id}/artifacts/run.json", HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    response = client.get(f"/api/reviews/{review.id}/artifacts/run.json", HTTP_ACCEPT="text/html")
    assert response.status_code == 200


def test_if_none_match_answers_304(client, review, django_assert_num_queries):
    sha = review.artifacts.get(path="run.json").sha256
    url = f"/api/reviews/{review.id}/artifacts/run.json"
    with django_assert_num_queries(1):
        response = client.get(url, HTTP_IF_NONE_MATCH=f'"{sha}"')
    assert response.status_code == 304
    assert response["ETag"] == f'"{sha}"'
    assert response.content == b""
    assert client.get(url, HTTP_IF_NONE_MATCH=f'W/"{sha}", "other"').status_code == 304
    assert client.get(url, HTTP_IF_NONE_MATCH="*").status_code == 304
    stale = client.get(url, HTTP_IF_NONE_MATCH='"' + "0" * 64 + '"')
    assert stale.status_code == 200 and stale.content


def test_artifact_query_count(client, review, django_assert_num_queries):
    with django_assert_num_queries(1):
        client.get(f"/api/reviews/{review.id}/artifacts/run.json")


def test_difficulty_json_is_revalidated_not_immutable(client, review):
    review.artifacts.create(
        path="difficulty.json", content="{}", sha256=f.sha256_text("{}"), size=2
    )
    response = client.get(f"/api/reviews/{review.id}/artifacts/difficulty.json")
    assert response["Cache-Control"] == "public, no-cache"
    assert "immutable" not in response["Cache-Control"]
    nested = client.get(
        f"/api/reviews/{review.id}/artifacts/tasks/0000/execution-000/verifier.stdout"
    )
    assert "immutable" in nested["Cache-Control"]


def test_unknown_artifact(client, review):
    for url in (
        f"/api/reviews/{review.id}/artifacts/missing.json",
        "/api/reviews/" + "0" * 64 + "/artifacts/run.json",
    ):
        response = client.get(url)
        assert response.status_code == 404
        assert response.json() == {"detail": "Artifact not found"}


def test_reads_are_public_and_csrf_free_for_signed_in_users(client, review, django_user_model):
    user = django_user_model.objects.create_user("reader", password="pw-12345-long")
    client.force_login(user)
    assert client.get(f"/api/reviews/{review.id}/").status_code == 200


def test_openapi_schema_documents_the_review_reads(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    text = response.content.decode()
    assert "/api/reviews/{review_id}/artifacts/{path}" in text
    assert "ReviewDetail" in text
    artifact = response.json()["components"]["schemas"]["ArtifactIndex"]["properties"]
    assert {"url", "page_url"} <= set(artifact) and artifact["url"]["description"]


def test_source_pool_lists_every_collection_newest_judgment_first(
    client, review, django_assert_num_queries
):
    old_review, supplemental, imported_review = f.publish_pool()
    with django_assert_num_queries(2):  # the count and one page of rows
        response = client.get("/api/reviews/", {"source": SOURCE_ID})
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 4
    entries = body["results"]
    # Dated collections newest first, the undated imported audit last.
    assert [entry["id"] for entry in entries][-1] == imported_review.id
    dated = [entry["updated_at"] for entry in entries if entry["updated_at"]]
    assert dated == sorted(dated, reverse=True)
    by_id = {entry["id"]: entry for entry in entries}
    assert {by_id[r.id]["kind"] for r in (review, old_review, supplemental, imported_review)} == {
        "rating", "supplemental", "imported",
    }  # fmt: skip
    assert by_id[old_review.id]["review_count"] == len(old_review.collection["reviews"])
    assert by_id[review.id]["url"] == f"http://testserver/api/reviews/{review.id}/"
    assert by_id[review.id]["review_page_url"] == f"http://testserver/reviews/{review.id}/"
    assert client.get("/api/reviews/", {"source": "MarinSkyRL:none"}).json()["count"] == 0


def test_source_pool_needs_a_source(client):
    response = client.get("/api/reviews/")
    assert response.status_code == 400 and "source" in response.json()
    # Any value names a source; one nobody published has an empty pool.
    assert client.get("/api/reviews/", {"source": ""}).json()["count"] == 0
