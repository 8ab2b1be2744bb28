"""What a notebook needs of the sources API: solve rates as numeric columns in the JSON rows and
in the CSV twin, filters named like the fields they filter, and answers a loop can stop on."""

from __future__ import annotations

import io

import pytest

from atlas.solve_rates import COLUMNS, solve_rate_columns
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
              difficulty_text=SUMMARY["text"], effective_quality="good")  # fmt: skip
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
