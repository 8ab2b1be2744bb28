"""The API documentation is served from local static files: no CDN, and the schema it loads
documents every public endpoint."""

import re

import pytest

pytestmark = pytest.mark.django_db


def test_docs_page_loads_only_local_assets(client):
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets, "the docs page references its scripts and styles"
    assert all(not asset.startswith(("http://", "https://", "//")) for asset in assets), assets
    for script in re.findall(r'<script[^>]*src="([^"]+)"', html):
        assert client.get(script).status_code == 200, script


def test_schema_documents_the_public_api(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = set(schema["paths"])
    for expected in (
        "/api/sources/",
        "/api/refreshes/",
        "/api/refresh/",
        "/api/reviews/publications/",
        "/api/verifier-issues/",
        "/api/verifier-issues/{id}/resolve/",
    ):
        assert expected in paths, expected
    assert any(path.startswith("/api/reviews/{") and "difficulty" in path for path in paths)


def test_free_text_parameters_refuse_what_the_api_refuses(client):
    """Every free-text parameter carries the storable-text pattern, and the pattern matches exactly
    what the middleware lets through (a NUL is refused with 400)."""
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    free_text = [
        parameter["schema"]
        for item in schema["paths"].values()
        for operation in item.values()
        for parameter in operation.get("parameters", [])
        if parameter["schema"].get("type") == "string"
        and not {"enum", "format"} & set(parameter["schema"])
    ]
    assert free_text and all("pattern" in parameter for parameter in free_text)
    pattern = re.compile(free_text[0]["pattern"])
    assert pattern.fullmatch("Task Trove:with space/x") and not pattern.fullmatch("a\x00b")
    assert client.get("/api/sources/", {"q": "a\x00b"}).status_code == 400
