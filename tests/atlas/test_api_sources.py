"""GET /api/sources/, /api/sources/<id>/ and /api/refreshes/."""

import datetime as dt
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.atlas.test_catalog_helpers import make_open_issue, make_row, seed, set_state

pytestmark = pytest.mark.django_db


def query_of(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


@pytest.fixture
def catalog(write_catalog):
    rows = [
        make_row(f"MarinSkyRL:s{n:02}", display_name=f"s{n:02}", task_count=n) for n in range(30)
    ]
    rows.append(make_row("Task Trove:with space/x", display_name="Spaced", tags=["agentic"]))
    seed(write_catalog, rows)


def test_list_uses_the_page_filters_and_ordering(client, catalog):
    body = client.get("/api/sources/?sort=-rows&origin=MarinSkyRL&page_size=25").json()
    assert body["count"] == 30
    assert [row["id"] for row in body["results"][:2]] == ["MarinSkyRL:s29", "MarinSkyRL:s28"]
    assert query_of(body["next"]) == {"sort": "-rows", "origin": "MarinSkyRL", "page_size": "25",
                                      "page": "2"}  # fmt: skip
    assert body["previous"] is None
    second = client.get(body["next"]).json()
    assert len(second["results"]) == 5 and second["next"] is None
    assert query_of(second["previous"]) == {
        "sort": "-rows",
        "origin": "MarinSkyRL",
        "page_size": "25",
    }


def test_the_last_page_and_one_past_it(client, catalog):
    last = client.get("/api/sources/?page=2&page_size=25").json()
    assert len(last["results"]) == 6 and last["next"] is None
    # A script counting pages up stops at a 404, never an endless repeat of the last page.
    past = client.get("/api/sources/?page=3&page_size=25")
    assert past.status_code == 404
    assert past.json() == {"detail": "Page 3 is past the last page (2) of 31 rows at 25 per page."}
    # An empty list still has its page 1.
    empty = client.get("/api/sources/?q=nothing-matches").json()
    assert empty["count"] == 0 and empty["results"] == []
    assert client.get("/api/sources/?q=nothing-matches&page=2").status_code == 404


def test_a_page_whose_offset_no_database_takes_is_past_the_last(client, catalog):
    """Rows are read before the count: an offset past a 64-bit integer is not sent (the database
    refuses it, a 500); the page is past the last, like any other."""
    for path in ("/api/sources/", "/api/changes/"):
        response = client.get(f"{path}?page={2**63 // 25 + 1}&page_size=25")
        assert response.status_code == 404, path
        assert " is past the last page (" in response.json()["detail"], path


@pytest.mark.parametrize(
    "query",
    ["type=rl", "turns=x", "origin=Elsewhere", "family=nope", "benchmark=yes", "quality=ok",
     "difficulty=1-2", "show_bad=yes", "show_excluded=2", "sort=-id", "page=0", "page=x",
     "page_size=10", "page_size=501"],
)  # fmt: skip
def test_invalid_values_answer_400_naming_the_parameter(client, catalog, query):
    response = client.get(f"/api/sources/?{query}")
    assert response.status_code == 400
    assert list(response.json()) == [query.split("=")[0]]


def test_row_is_the_payload_with_display_state(client, catalog):
    review = "a" * 64
    set_state("MarinSkyRL:s01", effective_quality="some_issues", open_issue_count=2,
              display_review_id=review, display_review_date_text="2025-03-03",
              review_applicability="current", display_traces=12,
              difficulty_text=None, review_stale=False)  # fmt: skip
    from atlas.models import Source

    Source.objects.filter(pk="MarinSkyRL:s01").update(
        review_source_revision="a" * 40, quality="good", review_id=review
    )
    later = make_open_issue("MarinSkyRL:s01", "https://github.com/o/r/issues/2",
                            created_at=dt.datetime(2025, 5, 1, tzinfo=dt.UTC))  # fmt: skip
    make_open_issue("MarinSkyRL:s01", "https://github.com/o/r/issues/1",
                    created_at=dt.datetime(2025, 4, 1, tzinfo=dt.UTC))  # fmt: skip
    row = client.get("/api/sources/MarinSkyRL:s01/").json()
    assert row["quality"] == "some_issues" and row["review_id"] == review
    assert row["review_date"] == "2025-03-03" and row["traces"] == 12
    assert row["review_source_revision"] == "a" * 40 and row["active"] is True
    assert row["dataset_revision"] == "a" * 40 and row["tags"] == ["rlvr", "single-turn"]
    assert [issue["issue_url"] for issue in row["verifier_issues"]] == [
        "https://github.com/o/r/issues/1",
        later["issue_url"],
    ]
    assert row["verifier_issues"][0]["status"] == "open"
    assert row["verifier_issues"][0]["created_at"] == "2025-04-01T00:00:00Z"


def test_detail_routes_ids_with_spaces_and_slashes(client, catalog):
    assert (
        client.get("/api/sources/Task%20Trove:with%20space/x/").json()["display_name"] == "Spaced"
    )


def test_detail_includes_retired_sources(client, catalog, write_catalog):
    seed(write_catalog, [make_row("MarinSkyRL:s00"), make_row("Task Trove:with space/x")])
    assert client.get("/api/sources/MarinSkyRL:s05/").json()["active"] is False
    listed = client.get("/api/sources/?show_excluded=1").json()
    assert listed["count"] == 2


def csv_lines(response) -> int:
    return b"".join(response.streaming_content).count(b"\r\n")


def test_each_list_reads_the_rows_of_its_moment(client, catalog, write_catalog):
    """The view's columns are resolved once, in a class-level query set: each request filters a
    copy, so none answers the rows an earlier request read (CSV twin included)."""
    assert client.get("/api/sources/?page_size=25").json()["count"] == 31
    assert csv_lines(client.get("/api/sources/?format=csv")) == 32
    seed(write_catalog, [make_row("MarinSkyRL:s00"), make_row("MarinSkyRL:new", task_count=7)])
    body = client.get("/api/sources/?page_size=25").json()
    assert body["count"] == 2
    assert [row["id"] for row in body["results"]] == ["MarinSkyRL:new", "MarinSkyRL:s00"]
    assert csv_lines(client.get("/api/sources/?format=csv")) == 3


def test_unknown_source_is_404(client, catalog):
    response = client.get("/api/sources/MarinSkyRL:nope/")
    assert response.status_code == 404
    assert response.json() == {"detail": "Source not found"}


@pytest.mark.parametrize("page_size", [25, 500])
def test_list_query_count_is_constant(client, write_catalog, django_assert_num_queries, page_size):
    rows = [make_row(f"MarinSkyRL:s{n:03}", display_name=f"s{n:03}") for n in range(520)]
    seed(write_catalog, rows)
    for n in range(0, 520, 40):
        make_open_issue(f"MarinSkyRL:s{n:03}", f"https://example.com/{n}")
    # rows (open issues are a display column; each row carries the catalog's display version)
    # and the count; no vocabulary without origin or family
    with django_assert_num_queries(2):
        body = client.get(f"/api/sources/?page_size={page_size}&q=s").json()
    assert len(body["results"]) == page_size
    # nor with one that has rows: they prove it is one
    with django_assert_num_queries(2):
        body = client.get(f"/api/sources/?page_size={page_size}&origin=MarinSkyRL").json()
    assert len(body["results"]) == page_size
    # the same view again: the rows alone, the count is kept for this version of the catalog
    with django_assert_num_queries(1):
        body = client.get(f"/api/sources/?page_size={page_size}&origin=MarinSkyRL").json()
    assert body["count"] == 520
    # and its next page, from the same kept filter set
    with django_assert_num_queries(1):
        body = client.get("/api/sources/?page_size=25&origin=MarinSkyRL&page=2").json()
    assert body["count"] == 520 and body["results"][0]["id"] == "MarinSkyRL:s025"


def test_a_page_that_is_not_full_is_counted_from_its_rows(
    client, write_catalog, django_assert_num_queries
):
    seed(
        write_catalog, [make_row(f"MarinSkyRL:s{n:02}", display_name=f"s{n:02}") for n in range(30)]
    )
    # the last page, or the only one: the rows alone (their number is the count)
    for path, count, shown in (("?page_size=25&page=2", 30, 5), ("?q=s0", 10, 10), ("?q=zz", 0, 0)):
        with django_assert_num_queries(1):
            body = client.get(f"/api/sources/{path}").json()
        assert (body["count"], len(body["results"])) == (count, shown)
    # a full page is counted by the database (its rows carry the display version), and a page
    # past the last reads the catalog's versions and the count kept for that version and view
    with django_assert_num_queries(2):
        body = client.get("/api/sources/?page_size=25").json()
    assert body["count"] == 30 and body["next"].endswith("page=2&page_size=25")
    with django_assert_num_queries(2):
        response = client.get("/api/sources/?page_size=25&page=3")
    assert response.status_code == 404
    assert "past the last page (2) of 30 rows" in response.json()["detail"]


def test_an_origin_or_family_no_source_has_is_refused(client, catalog):
    for parameter in ("origin", "family"):
        response = client.get(f"/api/sources/?{parameter}=Nowhere")
        assert response.status_code == 400
        assert parameter in response.json()


def test_an_origin_or_family_is_checked_when_its_rows_are_empty(
    client, catalog, django_assert_num_queries
):
    """A page with rows proves its origin and family; an empty page (or one past the last) names
    them against the vocabulary, and a refusal lists every refused value, as before."""
    families = "Valid: math-answer."  # every row of the catalog has this family
    origins = "Valid: MarinSkyRL, Task Trove."
    refusals = {
        "family=Nowhere": {"family": [f"“Nowhere” is not a valid value. {families}"]},
        "family=unknown&page=2&page_size=25": {
            "family": [f"“unknown” is not a valid value. {families}"]
        },
        "origin=marinskyrl": {"origin": [f"“marinskyrl” is not a valid value. {origins}"]},
        "origin=Nowhere&type=x": {
            "origin": [f"“Nowhere” is not a valid value. {origins}"],
            "type": ["“x” is not a valid value. Valid: RLVR, Alignment, Agentic, unknown."],
        },
    }
    client.get("/api/sources/?origin=Nowhere")  # caches the vocabulary of this version
    for query, errors in refusals.items():
        response = client.get(f"/api/sources/?{query}")
        assert (response.status_code, response.json()) == (400, errors), query
    # the rows alone: an origin with rows, or an empty page of known values
    for query, count in (("origin=MarinSkyRL&q=s0", 10), ("origin=MarinSkyRL&q=zz", 0)):
        with django_assert_num_queries(1 if count else 2):
            body = client.get(f"/api/sources/?{query}").json()
        assert body["count"] == count, query
    with django_assert_num_queries(2):  # the rows, then the catalog's version (the vocabulary's)
        assert client.get("/api/sources/?family=Nowhere").status_code == 400
    with django_assert_num_queries(3):  # rows, the catalog's version, the count
        response = client.get("/api/sources/?origin=MarinSkyRL&page=3&page_size=25")
    assert response.status_code == 404


def test_refreshes_list_rows_and_last_run(client, catalog):
    body = client.get("/api/refreshes/").json()
    assert [row["origin"] for row in body["results"]] == ["MarinSkyRL", "Task Trove"]
    assert set(body["last_run"]) == {"id", "started_at", "finished_at", "trigger", "forced",
                                     "outcome", "error", "summary"}  # fmt: skip
    assert body["last_run"]["trigger"] == "command" and body["last_run"]["outcome"] == "synced"
    # The packaged sync adds every source of both origins, said in words per origin.
    assert body["last_run"]["summary"].startswith("MarinSkyRL: ")
    assert "Task Trove: " in body["last_run"]["summary"]


def test_refreshes_without_runs(client):
    assert client.get("/api/refreshes/").json() == {"results": [], "last_run": None}


def test_schema_documents_the_sources_api(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    parameters = {p["name"] for p in schema["paths"]["/api/sources/"]["get"]["parameters"]}
    assert {"q", "origin", "type", "sort", "page", "page_size", "show_bad"} <= parameters
    assert "/api/sources/{source_id}/" in schema["paths"]
    assert "post" in schema["paths"]["/api/refresh/"]


def test_json_is_rendered_by_orjson_with_drf_fallbacks():
    import datetime as dt
    import decimal
    import json

    from django.utils.translation import gettext_lazy

    from atlas.api.renderers import FastJSONRenderer

    data = {"when": dt.datetime(2025, 3, 3, tzinfo=dt.UTC), "n": decimal.Decimal("1.5"),
            "label": gettext_lazy("Good"), "text": "é"}  # fmt: skip
    rendered = FastJSONRenderer().render(data, "application/json")
    assert json.loads(rendered) == {
        "when": "2025-03-03T00:00:00+00:00", "n": 1.5, "label": "Good", "text": "é",
    }  # fmt: skip
    pretty = FastJSONRenderer().render(data, "application/json; indent=2")
    assert b"\n  " in pretty


def test_list_rows_from_the_narrow_columns_equal_full_rows(
    client, write_catalog, django_assert_num_queries
):
    """The list reads only ``ROW_COLUMNS`` as values (its JSON as text it parses); every serialised
    field must come out as from a fully loaded source, in the same order, with no further query."""
    from atlas.api.row_fields import ROW_FIELDS
    from atlas.api.row_values import decoded, list_values, row_of_values, source_row
    from atlas.models import Source

    seed(write_catalog, [make_row(f"MarinSkyRL:s{n}", display_name=f"s{n}") for n in range(3)])
    set_state("MarinSkyRL:s1", review_id="r-1", display_review_id="r-1", quality="good")
    make_open_issue("MarinSkyRL:s2", "https://example.com/2")
    narrow = list(list_values(Source.objects.filter(active=True)))
    with django_assert_num_queries(0):
        rows = [row_of_values(decoded(values)) for values in narrow]
    full = [source_row(source) for source in Source.objects.filter(active=True)]
    assert [list(row.items()) for row in rows] == [list(row.items()) for row in full]
    assert all(tuple(row)[: len(ROW_FIELDS)] == ROW_FIELDS for row in rows)
    body = client.get("/api/sources/").json()
    assert [row["id"] for row in body["results"]] == [row["id"] for row in rows]


def test_each_row_field_is_read_from_where_row_names_it():
    """Rows are gathered by kind (columns, payload keys, solve rates, shaped values) and arranged
    in ROW's order: every field must still hold its own value, whatever its kind and place."""
    from atlas.api.row_fields import ROW, Column, Payload, Rate
    from atlas.api.row_values import ROW_COLUMNS, row_of_values
    from atlas.rules.solve_rates import ROLES

    summary = {"models": [{"size": role, "solved": 10 + n, "verified": 20 + n}
                          for n, role in enumerate(ROLES)]}  # fmt: skip
    values = {name: f"column:{name}" for name in ROW_COLUMNS}
    values.update(
        payload={
            f.value.key: f"payload:{f.value.key}" for f in ROW if isinstance(f.value, Payload)
        },
        difficulty_summary=summary,
        review_stale=False,
        display_review_id=None,
    )
    row = row_of_values(values)
    assert tuple(row) == tuple(field.name for field in ROW)
    for n, role in enumerate(ROLES):
        assert row[f"difficulty_{role}_solved"] == 10 + n
        assert row[f"difficulty_{role}_verified"] == 20 + n
        assert row[f"difficulty_{role}_rate"] == (10 + n) / (20 + n)
    for field in ROW:
        if isinstance(field.value, Column):
            assert row[field.name] == values[field.value.name], field.name
        elif isinstance(field.value, Payload):
            assert row[field.name] == f"payload:{field.value.key}", field.name
        elif not isinstance(field.value, Rate):
            assert callable(field.value), field.name
    assert row["url"] == "/api/sources/column:id/"
    assert row["review_page_url"] is None
    assert row["type_label"] == "payload:type"


def test_each_column_a_list_reads_is_one_its_rows_need():
    """The list reads ROW_COLUMNS and nothing else: changing any one of them changes the row, so
    none is read for nothing (and none a row needs is missing: it would raise KeyError)."""
    from atlas.api.row_fields import ROW, Payload
    from atlas.api.row_values import ROW_COLUMNS, row_of_values

    base = {name: f"column:{name}" for name in ROW_COLUMNS}
    base.update(
        payload={f.value.key: f"payload:{f.value.key}" for f in ROW if isinstance(f.value, Payload)}
        | {"review_source_revision": "p1", "review_verifier_revision": "p2"},
        difficulty_summary={"models": [{"size": "large", "solved": 1, "verified": 2}]},
        review_stale=False,
        display_review_id=None,
        # A curated review without curated revisions shows none (the payload's are not shown).
        review_id="curated-review",
        review_source_revision=None,
        review_verifier_revision=None,
    )
    other = {"payload": {}, "difficulty_summary": None, "review_stale": True,
             "display_review_id": "other-review", "review_id": None}  # fmt: skip
    row = row_of_values(base)
    for name in ROW_COLUMNS:
        changed = {**base, name: other.get(name, "changed")}
        assert row_of_values(changed) != row, name


LINKED_IDS = ["MarinSkyRL:s1", "Task Trove:with space/x", "o:a%2Fb?c#d", "o:é/ü", "o:a/./b",
              "o:a/../b", "o:a/.", "o:~x@y!$&'()*+,;=", "o:[x]", "no-origin id",
              "Task Trove:a b:c d", ":x", "o:"]  # fmt: skip


def test_one_list_links_ids_of_shared_origins_as_reverse_does():
    """A list quotes each origin once: IDs after the first of their origin link the same."""
    from django.urls import reverse

    from atlas.web.source_links import RowLinks

    links = RowLinks(request=None)
    for source_id in LINKED_IDS + [f"Task Trove:k{n} é" for n in range(3)] + LINKED_IDS:
        assert links.link("source-page", source_id) == reverse(
            "source-page", kwargs={"source_id": source_id}
        )


@pytest.mark.parametrize("source_id", LINKED_IDS)
def test_row_links_are_what_reverse_and_build_absolute_uri_make(rf, source_id):
    """The list builds its rows' links without reverse() per row; they must be the same links."""
    from django.urls import reverse

    from atlas.web.source_links import RowLinks

    for request in (rf.get("/api/sources/", HTTP_HOST="localhost:8000"), None):
        links = RowLinks(request=request)
        for name in ("api-source", "source-page"):
            path = reverse(name, kwargs={"source_id": source_id})
            expected = request.build_absolute_uri(path) if request is not None else path
            assert links.link(name, source_id) == expected
            assert links.link(name, source_id) == expected  # quoted once per list


@pytest.mark.parametrize(
    "text",
    ['{"a": [1, -2, 9223372036854775807, -9223372036854775808, 0.1, 1e16, -0.0, null, true]}',
     '{"s": "é\\u2028\\"\\\\", "n": {"x": []}}', '[]', 'null', '"x"', '{"inf": 1e400}',
     '{"lone": "\\ud800"}'],
)  # fmt: skip
def test_stored_json_is_read_as_the_json_module_reads_it(text):
    import json

    from atlas.jsonio.json_values import loads_stored

    assert json.dumps(loads_stored(text)) == json.dumps(json.loads(text))


def test_what_orjson_reads_differently_is_refused_at_intake():
    """Integers beyond 64 bits (orjson reads them as floats) never reach the database."""
    from atlas.jsonio.json_values import unstorable_path

    assert unstorable_path({"big": 2**64}) is not None
    assert unstorable_path({"small": -(2**63) - 1}) is not None
