"""The packaged definitions against the real Marin inventory (README.md figures). The inventory
and the earlier listing snapshot are packaged under fixtures/reference/, so these tests run on
any machine; where ../shared/data is present, the packaged copies must equal it."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import ROOT, SHARED_DATA

REFERENCE = ROOT / "fixtures" / "reference"
INVENTORY = REFERENCE / "marin-source-inventory.json.gz"
LISTINGS = REFERENCE / "atlas_catalog.json.gz"


def packaged(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))


@pytest.fixture(scope="module")
def inventory() -> dict[str, dict]:
    sources = packaged(INVENTORY)["sources"]
    by_id = {source["id"]: source for source in sources}
    assert len(by_id) == len(sources)
    return by_id


@pytest.fixture(scope="module")
def listings() -> list[dict]:
    return packaged(LISTINGS)["listings"]


def test_the_packaged_reference_data_is_the_shared_data():
    for packaged_copy in (INVENTORY, LISTINGS):
        original = SHARED_DATA / packaged_copy.name.removesuffix(".gz")
        if original.is_file():  # present beside the repository (sessions and CI)
            assert gzip.decompress(packaged_copy.read_bytes()) == original.read_bytes()


@pytest.fixture(scope="module")
def rows(packaged_rows) -> dict[str, dict]:
    return {row["id"]: row for row in packaged_rows}


def test_every_inventory_source_is_packaged_and_nothing_else(inventory, rows):
    assert set(rows) == set(inventory)
    assert len(rows) == 206


def test_identity_and_classification_match_exactly(inventory, rows):
    mismatches = []
    for source_id, source in inventory.items():
        row = rows[source_id]
        expected = {
            "origin": source["origin"],
            "display_name": source["title"],
            "family": source["family"],
            "tags": source["tags"],  # same order
            "task_count": source["count"],  # null where none is declared
            "notes": source["notes"],
        }
        actual = {key: row[key] for key in expected}
        if actual != expected:
            mismatches.append((source_id, actual, expected))
    assert mismatches == []


def test_dataset_pins_match_exactly(inventory, rows):
    mismatches = []
    for source_id, source in inventory.items():
        row, dataset = rows[source_id], source["dataset"]
        actual = (row["dataset_id"], row["dataset_revision"], row["url"])
        actual_canonical = (row["canonical_source"], row["canonical_url"])
        expected = (dataset["name"], dataset["revision"], dataset["url"])
        if actual != expected or actual_canonical != (dataset["name"], dataset["url"]):
            mismatches.append(source_id)
    assert mismatches == []


def test_verifiers_and_grading_selection_match_exactly(inventory, rows):
    mismatches = []
    for source_id, source in inventory.items():
        row, verifier = rows[source_id], source["verifier"]
        if verifier is None:
            expected = (None, None, None)
            grading = None
        else:
            expected = (verifier["name"], verifier["revision"], verifier["url"])
            grading = verifier.get("grading")
        actual = (row["verifier_name"], row["verifier_revision"], row["verifier_url"])
        if actual != expected or row.get("grading_scope") != grading:
            mismatches.append((source_id, actual, expected, row.get("grading_scope"), grading))
        # The inventory declares no precomputed grading fingerprint.
        assert "grading_revision" not in row and "grading_manifest" not in row
    assert mismatches == []
    assert sum("grading_scope" in row for row in rows.values()) == 103


def test_pipelines_match_exactly(inventory, rows):
    mismatches = []
    for source_id, source in inventory.items():
        row, pipeline = rows[source_id], source["pipeline"]
        if pipeline is None:
            expected_pipeline, expected_name = None, source_id.partition(":")[2]
        else:
            expected_pipeline = {
                "name": pipeline["name"],
                "version": pipeline["version"],
                "source": source["dataset"]["name"],
                "revision": source["dataset"]["revision"],
                "files": pipeline["files"],
            }
            expected_name = pipeline["name"]
        if row["pipeline"] != expected_pipeline or row["name"] != expected_name:
            mismatches.append(source_id)
    assert mismatches == []
    assert sum(row["pipeline"] is not None for row in rows.values()) == 146


def test_readme_figures(rows):
    values = list(rows.values())
    assert Counter(row["origin"] for row in values) == {"MarinSkyRL": 103, "Task Trove": 103}
    assert sum("excluded" in row["tags"] for row in values) == 50
    assert sum(row["status"] == "Excluded" for row in values) == 50
    assert sum("benchmark" in row["tags"] for row in values) == 6
    assert sum(row["is_benchmark"] for row in values) == 6
    assert sum("generator" in row["tags"] for row in values) == 1
    assert sum(row["kind"] == "Generator" for row in values) == 1
    assert sum(row["task_count"] is not None for row in values) == 168


def test_task_trove_sources_are_agentic_multi_turn(rows):
    for row in rows.values():
        if row["origin"] == "Task Trove":
            assert {"agentic", "multi-turn"} <= set(row["tags"]), row["id"]
            assert (row["type"], row["turns"]) == ("Agentic", "Multi-turn"), row["id"]


def test_nemotron_blend_totals(rows):
    totals: Counter[str] = Counter()
    components: Counter[str] = Counter()
    for row in rows.values():
        if not row["id"].startswith("MarinSkyRL:nemotron_ultra_"):
            continue
        assert row["pipeline"] is not None and "gym/nemotron_ultra" in row["tags"], row["id"]
        assert row["dataset_id"] == "nvidia/Nemotron-RL-Ultra-Training-Blends"
        (blend_file,) = row["pipeline"]["files"]
        assert isinstance(row["task_count"], int), row["id"]
        totals[blend_file] += row["task_count"]
        components[blend_file] += 1
    assert totals == {"rlvr1.jsonl": 98_424, "rlvr2.jsonl": 99_116, "mopd.jsonl": 85_980}
    assert sum(components.values()) == 75


def test_nemotron_swe_partitions(rows):
    # SWE records split by SWE-Gym membership.
    split: Counter[tuple[str, str]] = Counter()
    for row in rows.values():
        if row["id"].startswith("MarinSkyRL:nemotron_ultra_") and "/swe" in row["id"].lower():
            blend = row["pipeline"]["files"][0]
            part = "gym" if row["id"].endswith("/SWE-Gym/SWE-Gym") else "rebench"
            split[(blend, part)] += row["task_count"]
    assert split[("rlvr1.jsonl", "gym")] + split[("rlvr1.jsonl", "rebench")] == 13_898
    assert split[("rlvr2.jsonl", "gym")] + split[("rlvr2.jsonl", "rebench")] == 13_898
    assert (split[("rlvr1.jsonl", "gym")], split[("rlvr1.jsonl", "rebench")]) == (2_838, 11_060)
    assert (split[("mopd.jsonl", "gym")], split[("mopd.jsonl", "rebench")]) == (2_990, 10_142)


def test_cross_check_with_the_earlier_listing_snapshot(rows, inventory, listings):
    """Assert what the README says agrees; record (in the assertion data) what disagrees."""
    listed = {listing["id"]: listing for listing in listings}
    assert len(listed) == 196
    assert set(listed) <= set(rows)
    assert {i for i, s in inventory.items() if s["in_listing_snapshot"]} == set(listed)

    disagreements: dict[str, list[str]] = {"family": [], "dataset_revision": [], "dataset_id": []}
    for source_id, listing in listed.items():
        row = rows[source_id]
        # Always agree: origin, benchmark designation and exclusion status.
        assert listing["origin"] == row["origin"], source_id
        assert listing["is_benchmark"] is row["is_benchmark"], source_id
        assert listing["atlas_status"] == row["status"], source_id
        if listing["family"] != row["family"]:
            disagreements["family"].append(source_id)
        if (
            listing["dataset_revision"] is not None
            and listing["dataset_revision"] != row["dataset_revision"]
        ):
            disagreements["dataset_revision"].append(source_id)
        if listing["dataset_id"] != row["dataset_id"]:
            disagreements["dataset_id"].append(source_id)

    # README: the listing disagrees on 10 Task Trove families; the inventory wins.
    assert len(disagreements["family"]) == 10
    assert all(source_id.startswith("Task Trove:") for source_id in disagreements["family"])
    # README: URL-source naming differs. Those inputs are pinned by a 64-hex content hash in the
    # inventory while the listing named the repository commit; every other listed revision agrees.
    assert sorted(disagreements["dataset_revision"]) == [
        "MarinSkyRL:asdiv",
        "MarinSkyRL:reasoning_gym",
    ]
    for source_id in disagreements["dataset_revision"]:
        assert len(rows[source_id]["dataset_revision"]) == 64
        assert len(listed[source_id]["dataset_revision"]) == 40
    # Dataset ids differ only for those URL inputs and for Task Trove release/archive naming.
    for source_id in disagreements["dataset_id"]:
        assert source_id in disagreements["dataset_revision"] or source_id.startswith("Task Trove:")
    # Benchmarks in the listing are exactly the inventory's benchmark sources that it lists.
    listed_benchmarks = {i for i, listing in listed.items() if listing["is_benchmark"]}
    assert listed_benchmarks == {i for i in listed if rows[i]["is_benchmark"]}
