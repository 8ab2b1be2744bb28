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


def test_the_catalog_pages_data_endpoints_are_documented_as_they_answer(client, write_catalog):
    from atlas.services.sync import sync_catalog
    from tests.conftest import make_row

    sync_catalog(
        catalog_path=write_catalog([make_row("MarinSkyRL:a"), make_row("Task Trove:b")]),
        force=False,
        trigger="command",
    )
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    export = schema["paths"]["/export.csv"]["get"]
    facets = schema["paths"]["/facets.json"]["get"]
    listed = {p["name"]: p for p in schema["paths"]["/api/sources/"]["get"]["parameters"]}
    exported = {p["name"]: p for p in export["parameters"]}
    # The export reads the sources list's filters (one FilterSet) and takes a page's paging.
    assert set(exported) == (set(listed) - {"format"}) | {"source"}
    # An empty choice is the filter unset: the page's form sends every field.
    assert exported["origin"]["schema"]["enum"] == ["MarinSkyRL", "Task Trove", ""]
    assert set(export["responses"]) == {"200", "400", "414", "503"}
    assert set(export["responses"]["200"]["content"]) == {"text/csv"}
    assert set(export["responses"]["400"]["content"]) == {"text/plain"}
    for name, parameter in exported.items():
        value = (parameter["schema"].get("enum") or ["2"])[0]
        response = client.get("/export.csv", {name: value})
        assert response.status_code == 200, (name, value, response.content[:200])
        if "" in parameter["schema"].get("enum", []):
            unset = b"".join(client.get("/export.csv", {name: ""}).streaming_content)
            assert unset == b"".join(client.get("/export.csv").streaming_content), name
    refused = client.get("/export.csv", {"origin": "Nowhere", "not_a_filter": "1"})
    assert refused.status_code == 400 and refused["Content-Type"].startswith("text/plain")
    # The facet counts read a query leniently: any text, each filter's counts in JSON.
    assert {p["name"] for p in facets["parameters"]} == set(listed) - {
        "format",
        "page",
        "page_size",
    }
    assert all("enum" not in p["schema"] for p in facets["parameters"])
    counts = client.get("/facets.json", {"origin": "Nowhere", "type": "RLVR"})
    assert counts.status_code == 200
    documented = facets["responses"]["200"]["content"]["application/json"]["schema"]
    assert documented["required"] == ["counts"] and set(counts.json()) == {"counts"}
    assert all(
        isinstance(n, int) for options in counts.json()["counts"].values() for n in options.values()
    )
