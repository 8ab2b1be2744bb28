"""Requests every API operation may get from anyone — an Accept nothing serves, an over-long
address, a method the route does not serve — answer a status the OpenAPI schema lists for that
operation (or 405 for the method), with JSON."""

from __future__ import annotations

import json

import pytest

from atlas.web.middleware import MAX_URL_BYTES, URL_TOO_LONG

pytestmark = pytest.mark.django_db
EXAMPLES = {
    "{source_id}": "MarinSkyRL:x",
    "{review_id}": "a" * 64,
    "{path}": "run.json",
    "{publication_id}": "e3e70682-c209-4cac-a29f-6fbed82c07cd",
    "{id}": "1",
    "{pk}": "1",
}
UNSERVED = ("delete", "put", "patch")


@pytest.fixture
def operations(client) -> list[tuple[str, str, set[str]]]:
    schema = json.loads(client.get("/api/schema/?format=json").content)
    found = []
    for path, item in schema["paths"].items():
        concrete = path
        for placeholder, value in EXAMPLES.items():
            concrete = concrete.replace(placeholder, value)
        for method, operation in item.items():
            found.append((concrete, method, set(operation["responses"])))
    assert len(found) >= 15
    return found


def test_an_accept_header_nothing_serves_is_a_documented_406(client, operations):
    for path, method, documented in operations:
        answer = getattr(client, method)(path, HTTP_ACCEPT="application/xml")
        assert str(answer.status_code) in documented, (method, path, answer.status_code)


@pytest.mark.parametrize("extra", [MAX_URL_BYTES, 4 * MAX_URL_BYTES])
def test_an_over_long_address_is_a_documented_414(client, operations, extra):
    """JSON on the API's routes; the catalog page's data endpoints (``/export.csv``,
    ``/facets.json``) answer as the pages do, in the plain text their schema documents."""
    for path, method, documented in operations:
        answer = getattr(client, method)(f"{path}?q={'x' * extra}")
        assert answer.status_code == 414 and "414" in documented, (method, path)
        if path.startswith("/api/"):
            assert answer.json() == {"detail": URL_TOO_LONG}
        else:
            assert answer["Content-Type"].startswith("text/plain"), (method, path)
            assert answer.content.decode() == URL_TOO_LONG
    assert client.get(f"/?q={'x' * MAX_URL_BYTES}").status_code == 414  # pages too, as text


def test_a_method_a_route_does_not_serve_is_405_before_credentials(client, operations):
    for path, method, _ in operations:
        served = {m for p, m, _ in operations if p == path}
        for unserved in UNSERVED:
            if unserved in served:
                continue
            answer = getattr(client, unserved)(path)
            assert answer.status_code == 405, (unserved, path, answer.status_code)
            assert method.upper() in answer["Allow"]


@pytest.mark.parametrize(
    ("query", "refused"),
    [
        ("/api/changes/?run=", "run"),
        ("/api/changes/?kind=", "kind"),
        ("/api/changes/?kind=ADDED", "kind"),
        ("/api/changes/?source=a&source=b", "source"),
        ("/api/changes/?page=", "page"),
        ("/api/changes/?page_size=%2030", "page_size"),
        ("/api/sources/?page=", "page"),
        ("/api/reviews/?source=a&source=b", "source"),
        ("/api/reviews/?source=a&page_size=", "page_size"),
        ("/api/reviews/?source=a&page_size=abc", "page_size"),
        ("/api/reviews/?source=a&page_size=1&page_size=2", "page_size"),
        ("/api/reviews/?source=a&page_size=501", "page_size"),
        ("/api/reviews/?source=a&page=0", "page"),
        ("/api/verifier-issues/?status=", "status"),
        ("/api/verifier-issues/?source=a&source=b", "source"),
        ("/api/verifier-issues/?page_size=0", "page_size"),
    ],
)
def test_a_query_value_the_schema_does_not_allow_is_a_400_naming_it(client, query, refused):
    """Schemathesis's invalid values: an empty integer or enum, a second value of a
    single-valued parameter, a number out of its documented range — never quietly the default
    or the last value."""
    answer = client.get(query)
    assert answer.status_code == 400, answer.content
    assert list(answer.json()) == [refused]
