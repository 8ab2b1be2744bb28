"""What a notebook needs of the sources API: solve rates as numeric columns in the JSON rows and
in the CSV twin, filters named like the fields they filter, and answers a loop can stop on."""

from __future__ import annotations

import io

import pytest

from atlas.rules.solve_rates import COLUMNS, solve_rate_columns
from tests.atlas.test_catalog_helpers import make_row, seed, set_state

pytestmark = pytest.mark.django_db


def arm(size: str, solved: int, verified: int, **extra) -> dict:
    return {"size": size, "model": f"org/{size}-model", "solved": solved, "verified": verified,
            "measurement_status": "current", **extra}  # fmt: skip


SUMMARY = {
    "status": "current",
    "text": "Current: org/small-model 1/4 solved; …",
    "models": [
        arm("small", 1, 4),
        arm("large", 3, 4, solve_rate=0.75),
        arm("hosted", 2, 3),
        # A hosted follow-up is sized "hosted" too; the Hosted columns are the protocol's arm.
        arm("hosted", 3, 3, followup_id="f1", measurement_status="historical"),
        arm("followup", 0, 4, followup_id="f2", measurement_status="historical"),
    ],
}


@pytest.fixture
def catalog(write_catalog):
    seed(
        write_catalog,
        [
            make_row("MarinSkyRL:measured", display_name="Measured"),
            make_row("MarinSkyRL:old", display_name="Old"),
            make_row("MarinSkyRL:none", display_name="None"),
        ],
    )
    set_state("MarinSkyRL:measured", difficulty_status="current", difficulty_summary=SUMMARY,
              difficulty_text=SUMMARY["text"], effective_quality="good", large_solved=3,
              large_verified=4, large_solve_rate=0.75)  # fmt: skip
    historical = {
        "status": "historical",
        "models": [{"size": "large", "solved": 0, "verified": 0,
                    "measurement_status": "historical"}],
    }  # fmt: skip
    set_state("MarinSkyRL:old", difficulty_status="historical", difficulty_summary=historical)


def test_role_arms_become_columns_and_follow_ups_do_not():
    columns = solve_rate_columns(SUMMARY)
    assert tuple(columns) == COLUMNS
    assert (columns["difficulty_small_solved"], columns["difficulty_small_verified"]) == (1, 4)
    assert columns["difficulty_small_rate"] == 0.25  # solved / verified without a report rate
    assert columns["difficulty_large_rate"] == 0.75  # the report's own rate
    assert (columns["difficulty_hosted_solved"], columns["difficulty_hosted_verified"]) == (2, 3)
    assert solve_rate_columns(None) == dict.fromkeys(COLUMNS)
    nothing_verified = solve_rate_columns({"models": [arm("large", 0, 0)]})
    assert nothing_verified["difficulty_large_verified"] == 0
    assert nothing_verified["difficulty_large_rate"] is None


def test_json_rows_carry_the_solve_rates_as_numbers(client, catalog):
    rows = {row["id"]: row for row in client.get("/api/sources/").json()["results"]}
    measured = rows["MarinSkyRL:measured"]
    assert measured["difficulty_large_solved"] == 3 and measured["difficulty_large_rate"] == 0.75
    assert measured["difficulty_hosted_rate"] == pytest.approx(2 / 3)
    old = rows["MarinSkyRL:old"]
    assert old["difficulty_status"] == "historical" and old["difficulty_large_verified"] == 0
    assert old["difficulty_large_rate"] is None and old["difficulty_small_solved"] is None
    assert all(rows["MarinSkyRL:none"][name] is None for name in COLUMNS)
    # The single row answers the same columns.
    single = client.get("/api/sources/MarinSkyRL:measured/").json()
    assert {name: single[name] for name in COLUMNS} == {name: measured[name] for name in COLUMNS}


def test_pandas_reads_the_csv_twin_as_numbers(client, catalog):
    pandas = pytest.importorskip("pandas")
    response = client.get("/api/sources/?format=csv")
    frame = pandas.read_csv(io.BytesIO(b"".join(response.streaming_content)))
    frame = frame.set_index("id")
    for name in COLUMNS:
        assert pandas.api.types.is_numeric_dtype(frame[name]), (name, frame[name].dtype)
    assert frame.loc["MarinSkyRL:measured", "difficulty_large_rate"] == 0.75
    assert frame.loc["MarinSkyRL:measured", "difficulty_small_solved"] == 1
    assert pandas.isna(frame.loc["MarinSkyRL:none", "difficulty_large_rate"])
    # The mean solve rate of the measured sources, as a notebook would take it.
    assert frame["difficulty_large_rate"].mean() == 0.75
    assert frame["task_count"].dtype.kind in "if" and frame["is_benchmark"].dtype == bool


def test_the_schema_documents_the_solve_rate_columns(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    row = schema["components"]["schemas"]["SourceRow"]["properties"]
    for name in COLUMNS:
        kind = "number" if name.endswith("_rate") else "integer"
        assert row[name]["type"] == kind and row[name].get("nullable") is True, name
        assert row[name]["description"], name


def ids(response) -> list[str]:
    assert response.status_code == 200, response.json()
    return [row["id"] for row in response.json()["results"]]


def test_difficulty_status_filters_by_the_values_the_field_returns(client, catalog):
    assert ids(client.get("/api/sources/?difficulty_status=current")) == ["MarinSkyRL:measured"]
    assert ids(client.get("/api/sources/?difficulty_status=Historical")) == ["MarinSkyRL:old"]
    # `unknown` is the null status, as for the other filters.
    assert ids(client.get("/api/sources/?difficulty_status=unknown")) == ["MarinSkyRL:none"]
    # The page's Difficulty filter takes the same states (and the solve-rate ranges).
    assert ids(client.get("/api/sources/?difficulty=historical")) == ["MarinSkyRL:old"]
    assert ids(client.get("/api/sources/?difficulty=50-75")) == ["MarinSkyRL:measured"]
    refused = client.get("/api/sources/?difficulty_status=measured")
    assert refused.status_code == 400
    assert refused.json() == {
        "difficulty_status": [
            "“measured” is not a valid value. Valid: current, historical, invalid, unknown."
        ]
    }
    # The CSV twin and its download name follow the same filter.
    response = client.get("/api/sources/?difficulty_status=historical&format=csv")
    assert b"MarinSkyRL:old" in b"".join(response.streaming_content)
    assert "difficulty_status-historical" in response["Content-Disposition"]


def test_an_unknown_sort_lists_the_valid_keys(client, catalog):
    from atlas.filters import SORT_KEYS

    response = client.get("/api/sources/?sort=popularity")
    assert response.status_code == 400
    (message,) = response.json()["sort"]
    assert message == (
        "“popularity” is not a valid value. Valid: " + ", ".join(SORT_KEYS)
        + ". A - prefix sorts descending (-rows)."
    )  # fmt: skip
    # The catalog's own vocabulary too.
    assert client.get("/api/sources/?origin=Nowhere").json() == {
        "origin": ["“Nowhere” is not a valid value. Valid: MarinSkyRL."]
    }
    assert ids(client.get("/api/sources/?sort=-name")) == [
        "MarinSkyRL:old", "MarinSkyRL:none", "MarinSkyRL:measured",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("on", "off"), [("true", "false"), ("1", "0"), ("TRUE", "False")]
)  # fmt: skip
def test_boolean_parameters_take_true_false_and_1_0(client, catalog, on, off):
    set_state("MarinSkyRL:none", effective_quality="bad")
    set_state("MarinSkyRL:old", status="Excluded")
    assert ids(client.get(f"/api/sources/?show_bad={on}")) == [
        "MarinSkyRL:measured", "MarinSkyRL:none",
    ]  # fmt: skip
    assert ids(client.get(f"/api/sources/?show_bad={off}")) == ["MarinSkyRL:measured"]
    assert "MarinSkyRL:old" in ids(client.get(f"/api/sources/?show_excluded={on}"))
    assert "MarinSkyRL:old" not in ids(client.get(f"/api/sources/?show_excluded={off}"))
    assert ids(client.get(f"/api/sources/?benchmark={off}")) == ["MarinSkyRL:measured"]
    assert ids(client.get(f"/api/sources/?benchmark={on}")) == []


def test_a_boolean_parameter_refuses_other_words(client, catalog):
    response = client.get("/api/sources/?show_bad=yes")
    assert response.status_code == 400
    assert response.json()["show_bad"] == [
        "“yes” is not a valid value. Valid: 1. Also true, false, 0."
    ]


def test_the_page_keeps_the_status_filter_and_reads_booleans_alike(client, catalog):
    page = client.get("/?difficulty_status=historical&show_bad=true").content.decode()
    assert '<input type="hidden" name="difficulty_status" value="historical">' in page
    assert "Difficulty status: Historical" in page.split("<title>")[1].split("</title>")[0]
    # A sort link keeps the filter, with the toggle in its one spelling.
    assert "/?difficulty_status=historical&amp;show_bad=1&amp;sort=-name" in page


def test_the_schema_says_what_each_parameter_takes(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/sources/"]["get"]
    parameters = {p["name"]: p for p in operation["parameters"]}
    assert set(parameters["difficulty_status"]["schema"]["enum"]) == {
        "current", "historical", "invalid", "unknown", "",
    }  # fmt: skip
    for name in ("show_bad", "show_excluded", "benchmark"):
        assert set(parameters[name]["schema"]["enum"]) == {"true", "false", "1", "0", ""}, name
        assert "An empty value leaves the filter unset." in parameters[name]["description"]
    assert "400 listing them" in parameters["sort"]["description"]
    assert "404" in parameters["page"]["description"]
    assert "404" in operation["responses"]
    assert "difficulty_<small|large|hosted>_<solved|verified|rate>" in operation["description"]
    row = schema["components"]["schemas"]["SourceRow"]["properties"]
    assert "?difficulty_status=" in row["difficulty_status"]["description"]
    assert "review_page_url" in row["review_url"]["description"]
    assert row["review_page_url"]["description"].startswith("The review of this row")
    refresh = {p["name"]: p for p in schema["paths"]["/api/refresh/"]["post"]["parameters"]}
    assert set(refresh["force"]["schema"]["enum"]) == {"true", "false", "1", "0"}


def test_every_paged_list_answers_404_past_its_last_page(client, catalog):
    history = client.get("/api/changes/").json()
    assert history["count"] == 3 and history["next"] is None
    past = client.get("/api/changes/?page=2")
    assert past.status_code == 404 and "past the last page (1)" in past.json()["detail"]
    # The CSV twin too (its refusals are CSV).
    twin = client.get("/api/sources/?format=csv&page=2")
    assert twin.status_code == 404 and twin["Content-Type"].startswith("text/csv")
