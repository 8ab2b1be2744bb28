"""What an API consumer relies on: the index, row links, filter values equal to returned values,
unknown parameters refused by name, and the CSV twin of the list."""

from __future__ import annotations

import csv
import io

import pytest

from tests.atlas.test_catalog_helpers import make_row, seed, set_state

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog(write_catalog):
    rows = [
        make_row("MarinSkyRL:a", display_name="Alpha", task_count=10),
        make_row("MarinSkyRL:b", display_name="Beta", tags=["alignment", "multi-turn"]),
        make_row("MarinSkyRL:u", display_name="Untyped", tags=[], family=""),
        make_row("Task Trove:with space/x", display_name="=Spaced", tags=["agentic", "multi-turn"]),
    ]
    seed(write_catalog, rows)
    set_state("MarinSkyRL:a", effective_quality="good", display_review_id="a" * 64,
              difficulty_status="current", difficulty_text="Current: m 1/2 solved")  # fmt: skip
    set_state("MarinSkyRL:b", effective_quality="some_issues", difficulty_status="historical")


def csv_rows(response) -> list[list[str]]:
    body = b"".join(response.streaming_content).decode("utf-8")
    return list(csv.reader(io.StringIO(body, newline="")))


def test_the_api_root_is_an_index_of_the_endpoints(client):
    response = client.get("/api/")
    assert response.status_code == 200
    body = response.json()
    by_name = {item["name"]: item for item in body["endpoints"]}
    assert by_name["api-sources"]["url"] == "http://testserver/api/sources/"
    assert by_name["api-source"]["url"] == "http://testserver/api/sources/{source_id}/"
    assert by_name["api-changes"]["url"] == "http://testserver/api/changes/"
    assert by_name["api-review-artifact"]["url"].endswith(
        "/api/reviews/{review_id}/artifacts/{path}"
    )
    assert by_name["api-review-publication"]["url"].endswith(
        "/api/reviews/publications/{publication_id}/"
    )
    assert by_name["api-refresh"]["methods"] == ["POST"]
    assert by_name["api-reviews"]["url"] == "http://testserver/api/reviews/?source={source}"
    assert body["schema"].endswith("/api/schema/") and body["docs"].endswith("/api/docs/")
    for item in body["endpoints"]:
        if "{" not in item["url"] and item["methods"] == ["GET"]:
            assert client.get(item["url"]).status_code == 200, item["name"]


def test_each_row_carries_its_own_links(client, catalog):
    row = client.get("/api/sources/MarinSkyRL:a/").json()
    assert row["url"] == "http://testserver/api/sources/MarinSkyRL:a/"
    assert row["source_page_url"] == "http://testserver/sources/MarinSkyRL:a/"
    assert row["review_page_url"] == f"http://testserver/reviews/{'a' * 64}/"
    assert row["dataset_url"] == "https://huggingface.co/datasets/example/a"
    assert client.get(row["url"]).json()["id"] == "MarinSkyRL:a"
    assert client.get(row["source_page_url"]).status_code == 200
    spaced = client.get("/api/sources/?q=spaced").json()["results"][0]
    assert spaced["url"] == "http://testserver/api/sources/Task%20Trove:with%20space/x/"
    assert client.get(spaced["url"]).json()["id"] == "Task Trove:with space/x"
    assert spaced["review_page_url"] is None


def test_labels_are_in_label_fields(client, catalog):
    rows = {row["id"]: row for row in client.get("/api/sources/?show_bad=1").json()["results"]}
    assert (rows["MarinSkyRL:a"]["type"], rows["MarinSkyRL:a"]["type_label"]) == ("RLVR", "RLVR")
    assert (rows["MarinSkyRL:u"]["type"], rows["MarinSkyRL:u"]["type_label"]) == (
        "",
        "Unclassified",
    )
    assert rows["MarinSkyRL:u"]["turns_label"] == "Unknown"
    assert rows["MarinSkyRL:a"]["quality_label"] == "Good"
    assert rows["MarinSkyRL:u"]["quality_label"] == "Unreviewed"
    assert rows["MarinSkyRL:a"]["difficulty_status"] == "current"


@pytest.mark.parametrize("field", ["type", "turns", "quality", "difficulty_status", "is_benchmark"])
def test_filters_accept_exactly_the_values_rows_return(client, catalog, field):
    # Each filter is named like the field it filters, but for the Benchmark column's.
    parameter = {"is_benchmark": "benchmark"}.get(field, field)
    rows = client.get("/api/sources/?show_bad=1&show_excluded=1").json()["results"]
    values = {row[field] for row in rows if row[field] not in ("", None)}
    assert values
    for value in values:
        text = str(value).lower() if isinstance(value, bool) else value
        response = client.get("/api/sources/", {parameter: text})
        assert response.status_code == 200, (parameter, text, response.json())
        returned = response.json()["results"]
        assert returned and {row[field] for row in returned} == {value}


def test_values_match_without_regard_to_case_and_unknown_selects_the_empty_one(client, catalog):
    assert [r["id"] for r in client.get("/api/sources/?type=rlvr").json()["results"]] == [
        "MarinSkyRL:a"
    ]
    empty = client.get("/api/sources/?type=unknown").json()["results"]
    assert [row["id"] for row in empty] == ["MarinSkyRL:u"]
    # The older spelling of the current difficulty still works.
    assert client.get("/api/sources/?difficulty=measured").json()["count"] == 1


@pytest.mark.parametrize("query", ["search=alpha", "ordering=-rows", "search=a&ordering=b&q=a"])
def test_unknown_parameters_are_refused_naming_them(client, catalog, query):
    response = client.get(f"/api/sources/?{query}")
    assert response.status_code == 400
    named = {pair.split("=")[0] for pair in query.split("&")} - {"q"}
    assert set(response.json()) == named


def test_the_detail_refuses_unknown_parameters_too(client, catalog):
    assert client.get("/api/sources/MarinSkyRL:a/?expand=1").status_code == 400


def test_multi_word_search_and_whole_ids(client, catalog):
    def found(q):
        return [row["id"] for row in client.get("/api/sources/", {"q": q}).json()["results"]]

    assert found("Task Trove:with space/x") == ["Task Trove:with space/x"]
    assert found("MarinSkyRL:a") == ["MarinSkyRL:a"]
    assert found("alpha marinskyrl") == ["MarinSkyRL:a"]
    assert found("alpha trove") == []


def test_the_csv_twin_has_the_json_field_names_and_rows(client, catalog):
    body = client.get("/api/sources/?show_bad=1").json()
    response = client.get("/api/sources/?show_bad=1&format=csv")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == (
        'attachment; filename="rl-data-atlas-api_show-bad.csv"'
    )
    rows = csv_rows(response)
    header, data = rows[0], rows[1:]
    assert header[0] == "id"
    assert header == list(body["results"][0])[: len(header)]
    assert [row[0] for row in data] == [item["id"] for item in body["results"]]
    first = dict(zip(header, data[0], strict=True))
    json_first = body["results"][0]
    assert first["url"] == json_first["url"]
    assert first["tags"] == ",".join(json_first["tags"])
    assert first["is_benchmark"] == "false" and first["active"] == "true"
    name = header.index("display_name")
    spaced = next(dict(zip(header, row, strict=True)) for row in data if "Spaced" in row[name])
    assert spaced["display_name"] == "'=Spaced"  # the same formula guard as /export.csv


def test_the_csv_twin_pages_only_when_asked(client, write_catalog):
    seed(
        write_catalog, [make_row(f"MarinSkyRL:s{n:03}", display_name=f"s{n:03}") for n in range(60)]
    )
    assert len(csv_rows(client.get("/api/sources/?format=csv"))) == 61
    paged = csv_rows(client.get("/api/sources/?format=csv&page=3&page_size=25"))
    assert [row[0] for row in paged[1:]] == [f"MarinSkyRL:s{n:03}" for n in range(50, 60)]


def test_the_csv_twin_refuses_invalid_filters(client, catalog):
    response = client.get("/api/sources/?format=csv&type=bogus")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/csv")
    assert b'"type"' in response.content


def test_the_schema_documents_the_index_values_and_csv(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    parameters = {p["name"]: p for p in schema["paths"]["/api/sources/"]["get"]["parameters"]}
    assert "RLVR" in parameters["type"]["schema"]["enum"]
    assert "current" in parameters["difficulty"]["schema"]["enum"]
    # An empty choice leaves it unset (JSON), as for every choice of the list.
    assert set(parameters["format"]["schema"]["enum"]) == {"json", "csv", ""}
    content = schema["paths"]["/api/sources/"]["get"]["responses"]["200"]["content"]
    assert {"application/json", "text/csv"} <= set(content)
    assert "/api/" in schema["paths"] and "/api/changes/" in schema["paths"]
    row = schema["components"]["schemas"]["SourceRow"]["properties"]
    assert {"url", "source_page_url", "review_page_url", "dataset_url", "type_label"} <= set(row)


def test_the_schema_and_the_rows_have_one_field_list(client, catalog):
    """api.ROW declares each field once: the OpenAPI row lists them in the rows' order, and
    every row answers each of them, in that order, with a value of the declared type."""
    from atlas.api.row_fields import ROW_FIELDS

    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    declared = schema["components"]["schemas"]["SourceRow"]["properties"]
    assert tuple(declared) == ROW_FIELDS
    types = {"string": str, "integer": int, "number": (int, float), "boolean": bool,
             "array": list, "object": dict}  # fmt: skip
    for row in client.get("/api/sources/").json()["results"]:
        assert tuple(row)[: len(ROW_FIELDS)] == ROW_FIELDS
        for name, spec in declared.items():
            value = row[name]
            if value is None:
                assert spec.get("nullable"), name
            elif "type" in spec:
                assert isinstance(value, types[spec["type"]]), name


def test_the_documented_list_parameters_are_the_filter_sets(client, catalog):
    """The OpenAPI parameters of /api/sources/ are written by hand beside the filter set: they
    name exactly its filters (plus paging and format), every documented value is accepted, and
    every value a filter takes is documented (directly, or as a spelling rewritten to it)."""
    from atlas.filters import SourceFilterSet, normalized_query

    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    documented = {
        parameter["name"]: parameter["schema"].get("enum")
        for parameter in schema["paths"]["/api/sources/"]["get"]["parameters"]
        if parameter["in"] == "query"
    }
    assert set(documented) == {*SourceFilterSet.base_filters, "page", "page_size", "format"}

    fields = SourceFilterSet({}).form.fields
    for name, enum in documented.items():
        if enum is None:
            continue
        for value in enum:
            response = client.get("/api/sources/", {name: value})
            assert response.status_code == 200, (name, value, response.content)
        taken = getattr(fields.get(name), "values", None)
        if taken:
            spelled = {normalized_query({name: value})[name] for value in enum}
            assert set(taken) <= spelled, (name, set(taken) - spelled)
